// speedscope_import.mjs FILE - load FILE with speedscope's own importer, under Node, and print
// what it made of it as JSON: {"importer": the format speedscope recognised, "profiles":
// [{"name", "frames": [frame names]}]}. Exit status 1 when speedscope rejects the file.
//
// speedscope (npm) ships as a browser bundle, not as a library. Its import module keeps the
// names of its exports (importProfileGroupFromText, ...) and is initialised lazily; this
// finds that module and its initialiser in the bundle by those names, exposes them on
// globalThis before the bundle's own code runs, then evaluates the bundle (its user
// interface fails to start without a browser: expected) and imports FILE the way the
// speedscope app does when a file is dropped on it.
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const release = path.join(here, 'node_modules', 'speedscope', 'dist', 'release');
const bundle = fs.readdirSync(release).find(f => /^speedscope-.*\.js$/.test(f) &&
	fs.statSync(path.join(release, f)).size > 100000);
if (!bundle)
	throw new Error(`no speedscope bundle in ${release}: run npm ci in ${here}`);
const src = fs.readFileSync(path.join(release, bundle), 'utf8');

const exportsRe = /var ([\w$]+)=\{\};[\w$]+\(\1,\{[^}]*importProfileGroupFromText:/;
const exp = exportsRe.exec(src);
if (!exp)
	throw new Error('speedscope bundle: its import module was not found');
const esc = s => s.replace(/\$/g, '\\$');
const init = new RegExp(`\\(\\(\\)=>\\(([\\w$]+)\\(\\),${esc(exp[1])}\\)\\)`).exec(src);
if (!init)
	throw new Error('speedscope bundle: the initialiser of its import module was not found');
const head = '"use strict";(()=>{';
if (!src.startsWith(head))
	throw new Error('speedscope bundle: not the layout this script knows');
const patched = head + `globalThis.__kperfSpeedscope=()=>(${init[1]}(),${exp[1]});` +
	src.slice(head.length);

globalThis.window = globalThis;
const log = console.log;
let importer = '';
console.log = (...a) => { if (typeof a[0] === 'string' && a[0].startsWith('Importing as ')) importer = a[0].slice(13); };
try {
	vm.runInThisContext(patched, { filename: bundle });
} catch (e) {
	// the application part needs a browser; the import module is defined before it runs
}
if (typeof globalThis.__kperfSpeedscope !== 'function')
	throw new Error('speedscope bundle: evaluation stopped before its import module');
const mod = globalThis.__kperfSpeedscope();
const file = process.argv[2];
const group = await mod.importProfileGroupFromText(path.basename(file), fs.readFileSync(file, 'utf8'));
console.log = log;
if (!group) {
	console.error(`speedscope: unrecognised format: ${file}`);
	process.exit(1);
}
const profiles = group.profiles.map(p => {
	const frames = [];
	p.forEachFrame(f => frames.push(f.name));
	return { name: p.getName(), frames };
});
console.log(JSON.stringify({ importer, profiles }));
