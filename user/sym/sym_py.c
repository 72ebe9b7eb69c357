/*
 * sym_py.c - Python frames of stacks (bpf/pyframes.h: KP_PY_TAG | a code object's address)
 * named from what BPF copied out of each code object while the process ran (its qualname,
 * file and first line), handed over by the sampler with kp_sym_add_pycode: a process that has
 * exited by the time its stacks are resolved keeps its Python names. The Symbol of a frame is
 * "module.qualname" (the module: the file's name without ".py", a package's for its
 * __init__.py), its module and fileName the .py file, its lineNum the function's first line.
 * A frame whose code object was not handed over (yet) is "[unknown]" in module "[python]",
 * filled in place when it comes.
 */
#include <errno.h>
#include <linux/types.h>
#include <stdio.h>
#include <string.h>

#include "pyframes.h"
#include "sym.h"

#define PY_MODULE "[python]"

/* "dir/mod.py" -> "mod", "dir/pkg/__init__.py" -> "pkg": the module a file defines (the
 * script's own: its file's name) */
static size_t module_of(const char *file, const char **start)
{
	const char *base = strrchr(file, '/'), *dot, *dir;

	if (base && !strcmp(base + 1, "__init__.py")) {
		for (dir = base; dir > file && dir[-1] != '/'; dir--)
			;
		if (dir < base) {
			*start = dir;
			return (size_t)(base - dir);
		}
	}
	base = base ? base + 1 : file;
	dot = strrchr(base, '.');
	*start = base;
	return dot && dot != base ? (size_t)(dot - base) : strlen(base);
}

static struct Symbol *py_symbol(struct sym_proc *p, uint64_t code)
{
	struct Symbol *s = sym_hmap_get(&p->pycodes, code, 0);

	if (s)
		return s;
	s = sym_arena_alloc(&p->arena, sizeof(*s));
	if (!s)
		return NULL;
	s->addr = KP_PY_TAG | code;
	s->codeMapAddr = code;
	s->module = (char *)PY_MODULE;
	s->symbolName = sym_unknown_str;
	s->mangleName = sym_unknown_str;
	s->fileName = sym_empty_str;
	s->mntPoint = sym_empty_str;
	if (sym_hmap_put(&p->pycodes, code, 0, s))
		return NULL;
	sym_counters.symbols++;
	return s;
}

int kp_sym_add_pycode(pid_t pid, uint64_t code, const char *qualname, const char *filename,
		      unsigned line)
{
	char buf[512];
	const char *mod, *name, *file;
	struct sym_proc *p;
	struct Symbol *s;
	size_t n;
	int err = -ENOMEM;

	sym_lock();
	p = sym_proc_get(pid);
	if (!p)
		p = sym_proc_new(pid);
	if (!p || !(s = py_symbol(p, code & KP_PY_ADDR_MASK)))
		goto out;
	n = module_of(filename, &mod);
	if (n && qualname[0])
		snprintf(buf, sizeof(buf), "%.*s.%s", (int)n, mod, qualname);
	else
		snprintf(buf, sizeof(buf), "%s", qualname[0] ? qualname : "[unknown]");
	name = sym_intern(buf);
	file = sym_intern(filename[0] ? filename : PY_MODULE);
	qualname = sym_intern(qualname);
	if (!name || !file || !qualname)
		goto out;
	s->symbolName = (char *)name;
	s->mangleName = (char *)qualname;
	s->module = (char *)file;
	s->fileName = filename[0] ? (char *)file : sym_empty_str;
	s->lineNum = line;
	s->firstLine = line;
	err = 0;
out:
	sym_unlock();
	return err;
}

int sym_py_resolve(struct sym_proc *p, pid_t pid, uint64_t addr, struct Symbol **out)
{
	int err;

	if (!p) {
		err = sym_ensure_proc(pid, false, &p);
		if (err)
			return err;
	}
	*out = py_symbol(p, addr & KP_PY_ADDR_MASK);
	return *out ? 0 : -ENOMEM;
}
