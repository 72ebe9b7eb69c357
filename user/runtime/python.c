/*
 * python.c - which processes run CPython, and where the BPF frame reader finds their state
 * (python.h). A process's mappings name its interpreter: the executable (Debian's python3.11
 * links it in) or libpython3.X.so. That file's .dynsym (else .symtab) gives _PyRuntime (the
 * runtime state: its interpreters, their threads), _PyEval_EvalFrameDefault (the native frames
 * that stand for Python ones; with the part of it the compiler may have split off,
 * python_split.c) and Py_Version (3.11+: the version, read from the file). The
 * version picks a layout: 3.11's from a table (python_layout.c), 3.13 and 3.14's from the
 * process itself, the _Py_DebugOffsets its _PyRuntime starts with (python_debug.c; read from the
 * file when the process's memory cannot be). What a file gave is kept by (device, inode): a
 * process that maps new code is looked at again without parsing the interpreter again.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "core/core.h"
#include "python.h"
#include "sym/sym.h"

#define NOTES_MAX 16

/* what an interpreter file gives */
struct py_file {
	dev_t dev;
	ino_t ino;
	int err; /* 0, or why it cannot be read: -ENOENT no _PyRuntime, -ENOTSUP version */
	unsigned major, minor;
	uint64_t runtime, eval, eval_size; /* ELF addresses */
	uint64_t part_lo, part_hi; /* the part of _PyEval_EvalFrameDefault split off; 0, 0: none */
	uint64_t runtime_off; /* where _PyRuntime's initial bytes are in the file; 0: nowhere */
	uint64_t first_vaddr; /* the first PT_LOAD's page: where the file's first page maps */
	struct py_file *next;
};

struct kp_py {
	int procs_fd, codes_fd, counters_fd;
	struct py_file *files;
	char *said[64]; /* reasons already noted: "file\nreason" */
	unsigned nsaid;
	char *notes[NOTES_MAX];
	unsigned nnotes, next_note;
	char *note_out;
};

/* where the verifier is known to take the reader: 6.12 (Debian 12's, kernel matrix of
 * 2026-11-29: pyframes 4/4, every sampling program loads) and 6.18 (this project's machine).
 * 5.10's gives up on it ("BPF program is too large"), 6.1's too ("Argument list too long",
 * 2026-11-28); 6.2-6.11 are not tried: off there until they are. */
bool kp_py_kernel_reads(void)
{
	int major = 0, minor = 0;

	sscanf(kp_kernel_release(), "%d.%d", &major, &minor);
	return major > 6 || (major == 6 && minor >= 12);
}

struct kp_py *kp_py_new(int procs_fd, int codes_fd, int counters_fd)
{
	struct kp_py *py = calloc(1, sizeof(*py));

	if (!py)
		return NULL;
	py->procs_fd = procs_fd;
	py->codes_fd = codes_fd;
	py->counters_fd = counters_fd;
	return py;
}

void kp_py_free(struct kp_py *py)
{
	struct py_file *f, *n;
	unsigned i;

	if (!py)
		return;
	for (f = py->files; f; f = n) {
		n = f->next;
		free(f);
	}
	for (i = 0; i < py->nsaid; i++)
		free(py->said[i]);
	for (i = 0; i < py->nnotes; i++)
		free(py->notes[i]);
	free(py->note_out);
	free(py);
}

/* a reason a process gets native frames only, noted once per (file, reason) */
static void note(struct kp_py *py, const char *file, const char *fmt, ...) KP_PRINTF(3, 4);
static void note(struct kp_py *py, const char *file, const char *fmt, ...)
{
	char buf[512], key[600];
	va_list ap;
	unsigned i;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	snprintf(key, sizeof(key), "%s\n%s", file, strchr(buf, ':') ? strchr(buf, ':') : buf);
	for (i = 0; i < py->nsaid; i++)
		if (!strcmp(py->said[i], key))
			return;
	if (py->nsaid < sizeof(py->said) / sizeof(py->said[0]))
		py->said[py->nsaid++] = strdup(key);
	if (py->nnotes < NOTES_MAX)
		py->notes[py->nnotes++] = strdup(buf);
}

const char *kp_py_next_note(struct kp_py *py)
{
	free(py->note_out);
	py->note_out = NULL;
	if (py->next_note >= py->nnotes)
		return NULL;
	py->note_out = py->notes[py->next_note];
	py->notes[py->next_note++] = NULL;
	if (py->next_note == py->nnotes)
		py->next_note = py->nnotes = 0;
	return py->note_out;
}

/* the 4 bytes of Py_Version in the file */
static bool read_version(Elf *elf, const GElf_Sym *sym, uint32_t *v)
{
	Elf_Scn *scn = elf_getscn(elf, sym->st_shndx);
	GElf_Shdr sh;
	Elf_Data *d;
	uint64_t off;

	if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
		return false;
	d = elf_getdata(scn, NULL);
	off = sym->st_value - sh.sh_addr;
	if (!d || off + 4 > d->d_size)
		return false;
	memcpy(v, (const char *)d->d_buf + off, 4);
	return true;
}

/* the file offset of <sym>'s initial bytes, 0 when the file has none (.bss) */
static uint64_t file_offset(Elf *elf, const GElf_Sym *sym)
{
	Elf_Scn *scn = elf_getscn(elf, sym->st_shndx);
	GElf_Shdr sh;

	if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
	    sym->st_value < sh.sh_addr || sym->st_value - sh.sh_addr >= sh.sh_size)
		return 0;
	return sh.sh_offset + (sym->st_value - sh.sh_addr);
}

/* _PyRuntime, _PyEval_EvalFrameDefault, Py_Version of one symbol table */
static void scan_symbols(Elf *elf, Elf_Scn *scn, struct py_file *f, bool *have_version)
{
	GElf_Shdr sh;
	Elf_Data *d;
	size_t i, n;

	if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
		return;
	n = sh.sh_size / sh.sh_entsize;
	for (i = 0; i < n; i++) {
		GElf_Sym sym;
		const char *name;
		uint32_t v;

		if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		name = elf_strptr(elf, sh.sh_link, sym.st_name);
		if (!name || (name[0] != '_' && name[0] != 'P'))
			continue;
		if (!strcmp(name, "_PyRuntime")) {
			f->runtime = sym.st_value;
			f->runtime_off = file_offset(elf, &sym);
		} else if (!strcmp(name, "_PyEval_EvalFrameDefault")) {
			f->eval = sym.st_value;
			f->eval_size = sym.st_size;
		} else if (!strcmp(name, "Py_Version") && !*have_version &&
			   read_version(elf, &sym, &v)) {
			f->major = v >> 24;
			f->minor = (v >> 16) & 0xff;
			*have_version = true;
		}
	}
}

/* the version from a file name: "python3.11", "libpython3.12.so.1.0" */
static bool version_of_name(const char *path, unsigned *major, unsigned *minor)
{
	const char *base = strrchr(path, '/'), *p;

	base = base ? base + 1 : path;
	p = strstr(base, "python");
	return p && sscanf(p + 6, "%u.%u", major, minor) == 2;
}

static void read_file(struct py_file *f, const char *open_path, const char *name)
{
	bool have_version = false;
	Elf_Scn *scn = NULL;
	size_t i, nph;
	Elf *elf;
	int fd;

	f->err = -ENOENT;
	fd = open(open_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		f->err = -errno;
		return;
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		goto out;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) &&
		    (sh.sh_type == SHT_DYNSYM || sh.sh_type == SHT_SYMTAB))
			scan_symbols(elf, scn, f, &have_version);
	}
	f->first_vaddr = UINT64_MAX;
	if (!elf_getphdrnum(elf, &nph))
		for (i = 0; i < nph; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
			    ph.p_offset == 0) {
				f->first_vaddr = ph.p_vaddr & ~(uint64_t)0xfff;
				break;
			}
		}
	if (!have_version)
		version_of_name(name, &f->major, &f->minor);
	if (!f->runtime || !f->eval || !f->eval_size || f->first_vaddr == UINT64_MAX)
		f->err = -ENOENT;
	else
		f->err = 0;
	if (!f->err && !kp_py_eval_split(elf, f->eval, f->eval_size, &f->part_lo, &f->part_hi))
		f->part_lo = f->part_hi = 0;
	elf_end(elf);
out:
	close(fd);
}

static struct py_file *file_of(struct kp_py *py, const char *open_path, const char *name)
{
	struct py_file *f;
	struct stat st;

	if (stat(open_path, &st))
		return NULL;
	for (f = py->files; f; f = f->next)
		if (f->dev == st.st_dev && f->ino == st.st_ino)
			return f;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	read_file(f, open_path, name);
	f->next = py->files;
	py->files = f;
	return f;
}

/* a file that may be a CPython interpreter: python3.X or libpython3.X.so */
static bool interpreter_name(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "python", 6) || !strncmp(base, "libpython", 9);
}

/* 3.13, 3.14: the layout from the _Py_DebugOffsets at <runtime> in process <pid>, or at the same
 * place in its interpreter's file <fpath> when the process cannot be read */
static int debug_layout(int pid, const char *fpath, const struct py_file *f, uint64_t runtime,
			struct kp_py_layout *l, char *why, size_t why_len)
{
	unsigned char rec[1024];
	size_t len = kp_py_debug_offsets_size(f->minor);
	char mem[64];
	ssize_t got = -1;
	int fd;

	if (len > sizeof(rec))
		len = 0;
	snprintf(mem, sizeof(mem), "/proc/%d/mem", pid);
	fd = len ? open(mem, O_RDONLY | O_CLOEXEC) : -1;
	if (fd >= 0) {
		got = pread(fd, rec, len, (off_t)runtime);
		close(fd);
	}
	if (len && got != (ssize_t)len && f->runtime_off) {
		fd = open(fpath, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			got = pread(fd, rec, len, (off_t)f->runtime_off);
			close(fd);
		}
	}
	if (len && got != (ssize_t)len) {
		snprintf(why, why_len, "its _Py_DebugOffsets cannot be read");
		return -EIO;
	}
	return kp_py_layout_from_debug(rec, len, f->major, f->minor, l, why, why_len);
}

int kp_py_add_pid(struct kp_py *py, int pid)
{
	char path[64], *text, *line, *save = NULL, stripped[4096] = "";
	struct kp_py_proc proc = { 0 };
	__u32 key = (__u32)pid;
	bool found = false;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	err = kp_read_file(path, &text, NULL);
	if (err)
		return err;
	for (line = strtok_r(text, "\n", &save); line && !found;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long long start, end, off;
		char perms[8], fpath[4200];
		const char *file;
		struct py_file *f;
		int n = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &off, &n) <
			    4 ||
		    !n || off != 0)
			continue;
		file = line + n;
		if (file[0] != '/' || !interpreter_name(file))
			continue;
		snprintf(fpath, sizeof(fpath), "/proc/%d/map_files/%llx-%llx", pid, start, end);
		f = file_of(py, fpath, file);
		if (!f) {
			snprintf(fpath, sizeof(fpath), "/proc/%d/root%s", pid, file);
			f = file_of(py, fpath, file);
		}
		if (!f)
			continue;
		if (f->err) {
			snprintf(stripped, sizeof(stripped), "%s", file);
			continue;
		}
		proc.runtime = start - f->first_vaddr + f->runtime;
		if (f->major == 3 && kp_py_debug_offsets_size(f->minor)) {
			char why[256];

			if (debug_layout(pid, fpath, f, proc.runtime, &proc.l, why, sizeof(why))) {
				note(py, file,
				     "process %d runs Python %u.%u (%s): %s: native frames only",
				     pid, f->major, f->minor, file, why);
				free(text);
				bpf_map_delete_elem(py->procs_fd, &key);
				return 0;
			}
		} else if (f->major != 3 || !kp_py_layout_of(f->minor, &proc.l)) {
			/* 3.12: no _Py_DebugOffsets, and no layout verified on a real 3.12 */
			note(py, file,
			     "process %d runs Python %u.%u (%s): its frame layout is not known to "
			     "kperf-bpf (it reads 3.11, 3.13 and 3.14): native frames only",
			     pid, f->major, f->minor, file);
			free(text);
			bpf_map_delete_elem(py->procs_fd, &key);
			return 0;
		}
		proc.code_lo[0] = start - f->first_vaddr + f->eval;
		proc.code_hi[0] = proc.code_lo[0] + f->eval_size;
		proc.eval_lo = proc.code_lo[0];
		proc.eval_hi = proc.code_hi[0];
		if (f->part_hi) {
			proc.code_lo[1] = start - f->first_vaddr + f->part_lo;
			proc.code_hi[1] = start - f->first_vaddr + f->part_hi;
			if (proc.code_lo[1] < proc.eval_lo)
				proc.eval_lo = proc.code_lo[1];
			if (proc.code_hi[1] > proc.eval_hi)
				proc.eval_hi = proc.code_hi[1];
		}
		found = true;
	}
	free(text);
	if (!found) {
		if (stripped[0])
			note(py, stripped,
			     "process %d runs the Python interpreter %s, which has no _PyRuntime or "
			     "_PyEval_EvalFrameDefault symbol (stripped): native frames only",
			     pid, stripped);
		bpf_map_delete_elem(py->procs_fd, &key);
		return 0;
	}
	if (bpf_map_update_elem(py->procs_fd, &key, &proc, BPF_ANY))
		return -errno;
	return 1;
}

int kp_py_drain_codes(struct kp_py *py)
{
	struct kp_py_code_key key, next;
	struct kp_py_code c;
	int n = 0;

	while (!bpf_map_get_next_key(py->codes_fd, NULL, &next)) {
		key = next;
		if (!bpf_map_lookup_elem(py->codes_fd, &key, &c)) {
			c.qualname[KP_PY_QUALNAME - 1] = '\0';
			c.filename[KP_PY_FILENAME - 1] = '\0';
			if (kp_sym_add_pycode((pid_t)key.tgid, key.code, c.qualname, c.filename,
					      c.firstlineno) == 0)
				n++;
		}
		if (bpf_map_delete_elem(py->codes_fd, &key))
			break;
	}
	return n;
}

void kp_py_counters(const struct kp_py *py, uint64_t out[KP_PY_CNT_MAX])
{
	int ncpu = libbpf_num_possible_cpus(), c;
	__u64 *vals;
	__u32 k;

	memset(out, 0, sizeof(uint64_t) * KP_PY_CNT_MAX);
	if (ncpu <= 0 || !(vals = calloc((size_t)ncpu, sizeof(*vals))))
		return;
	for (k = 0; k < KP_PY_CNT_MAX; k++) {
		if (bpf_map_lookup_elem(py->counters_fd, &k, vals))
			continue;
		for (c = 0; c < ncpu; c++)
			out[k] += vals[c];
	}
	free(vals);
}
