/*
 * test_sym.c - the symbol resolver on live workloads: functions of an executable, of a shared
 * library, of libc, C++ names, DWARF lines, kernel symbols, stacks; each result is compared
 * with what the workload printed, nm, kallsyms and the LINE: markers of the source.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <pthread.h>

#include "kperf/pcerrc.h"
#include "kperf/symbol.h"
#include "sym/sym.h"
#include "symtest.h"

#define HOT_SRC "tests/workloads/sym_hot.c"
#define LIB_SRC "tests/workloads/libwl.c"

static void fini(void)
{
	SymResolverDestroy();
}

TestSuite(sym, .fini = fini, .timeout = 60);

/* the path of a build artefact as /proc/PID/maps names it */
static const char *artefact(const char *rel, char *buf)
{
	return abs_of(tu_path(rel), buf);
}

Test(sym, executable_function_elf_only)
{
	char bin[PATH_MAX];
	struct sym_wl w;
	struct Symbol *s;
	unsigned long hot, link;

	artefact("workloads/sym_hot", bin);
	link = nm_addr(bin, "hot_loop");
	cr_assert_neq(link, 0, "nm finds hot_loop in %s", bin);
	cr_assert_eq(swl_start(&w, "sym_hot"), 0);
	hot = swl_addr(&w, "hot_loop");
	cr_assert_eq(SymResolverRecordModuleNoDwarf(w.p.pid), 0, "%s", Perror());
	s = SymResolverMapAddr(w.p.pid, hot);
	cr_assert_not_null(s, "%s", Perror());
	cr_assert_str_eq(s->symbolName, "hot_loop");
	cr_assert_str_eq(s->mangleName, "hot_loop");
	cr_assert_str_eq(s->module, bin);
	cr_assert_eq(s->addr, hot);
	cr_assert_eq(s->offset, 0);
	cr_assert_eq(s->codeMapAddr, link, "file address %#lx, nm says %#lx", s->codeMapAddr, link);
	cr_assert_gt(s->codeMapEndAddr, link);
	cr_assert_str_eq(s->fileName, "");
	cr_assert_eq(s->lineNum, 0);
	/* cached: the same pointer */
	cr_assert_eq(SymResolverMapAddr(w.p.pid, hot), s);
	/* 5 bytes into the function */
	s = SymResolverMapAddr(w.p.pid, hot + 5);
	cr_assert_str_eq(s->symbolName, "hot_loop");
	cr_assert_eq(s->offset, 5);
	cr_assert_eq(s->codeMapAddr, link + 5);
	swl_stop(&w);
}

Test(sym, executable_function_dwarf_line)
{
	char src[PATH_MAX], bin[PATH_MAX];
	struct sym_wl w;
	struct Symbol *s;
	unsigned long hot, ret;
	int line = src_line(HOT_SRC, "LINE:hot_loop");
	int call_line = src_line(HOT_SRC, "LINE:call_leaf");

	cr_assert_gt(line, 0);
	abs_of(HOT_SRC, src);
	artefact("workloads/sym_hot", bin);
	cr_assert_eq(swl_start(&w, "sym_hot"), 0);
	hot = swl_addr(&w, "hot_loop");
	ret = swl_addr(&w, "ret_in_hot_loop");
	cr_assert_eq(SymResolverRecordModule(w.p.pid), 0, "%s", Perror());
	s = SymResolverMapAddr(w.p.pid, hot);
	cr_assert_not_null(s, "%s", Perror());
	cr_assert_str_eq(s->symbolName, "hot_loop");
	cr_assert_str_eq(s->module, bin);
	cr_assert_str_eq(s->fileName, src);
	cr_assert_eq(s->lineNum, (unsigned)line, "line %u, the source says %d", s->lineNum, line);
	/* a return address inside hot_loop: still hot_loop, on the line of the call */
	s = SymResolverMapAddr(w.p.pid, ret);
	cr_assert_str_eq(s->symbolName, "hot_loop");
	cr_assert_eq(s->offset, ret - hot);
	cr_assert_eq(s->lineNum, (unsigned)call_line);
	swl_stop(&w);
}

Test(sym, shared_library_function)
{
	char lib[PATH_MAX], src[PATH_MAX];
	struct sym_wl w;
	struct Symbol *s;
	unsigned long fn, link;
	char cmd[PATH_MAX + 64], *oracle;

	artefact("workloads/libwl.so", lib);
	abs_of(LIB_SRC, src);
	link = nm_addr(lib, "wl_lib_work");
	cr_assert_neq(link, 0);
	cr_assert_eq(swl_start(&w, "sym_hot"), 0);
	fn = swl_addr(&w, "wl_lib_work");
	cr_assert_eq(SymResolverRecordModule(w.p.pid), 0, "%s", Perror());
	s = SymResolverMapAddr(w.p.pid, fn + 1);
	cr_assert_not_null(s, "%s", Perror());
	cr_assert_str_eq(s->symbolName, "wl_lib_work");
	cr_assert_str_eq(s->module, lib);
	cr_assert_eq(s->offset, 1);
	/* the load bias of a shared library comes out: the file address is nm's */
	cr_assert_eq(s->codeMapAddr, link + 1);
	/* addr2line (binutils) is the oracle for the line */
	snprintf(cmd, sizeof(cmd), "addr2line -e '%s' %#lx", lib, s->codeMapAddr);
	oracle = tu_run(cmd, NULL);
	cr_assert_not_null(oracle);
	oracle[strcspn(oracle, "\n")] = '\0';
	snprintf(cmd, sizeof(cmd), "%s:%u", s->fileName, s->lineNum);
	cr_assert_str_eq(cmd, oracle);
	cr_assert_str_eq(s->fileName, src);
	free(oracle);
	swl_stop(&w);
}

/* the libc path as the workload's maps name it */
static void libc_path(pid_t pid, char *out, size_t size)
{
	char cmd[128], *o, *p;

	snprintf(cmd, sizeof(cmd), "grep -m1 'libc.so.6' /proc/%d/maps", (int)pid);
	o = tu_run(cmd, NULL);
	out[0] = '\0';
	if (o && (p = strchr(o, '/'))) {
		p[strcspn(p, "\n")] = '\0';
		snprintf(out, size, "%s", p);
	}
	free(o);
}

Test(sym, libc_function)
{
	char libc[PATH_MAX];
	struct sym_wl w;
	struct Symbol *s;
	unsigned long fn;

	cr_assert_eq(swl_start(&w, "sym_hot"), 0);
	fn = swl_addr(&w, "getppid");
	libc_path(w.p.pid, libc, sizeof(libc));
	cr_assert_neq(libc[0], '\0');
	cr_assert_eq(SymResolverRecordModuleNoDwarf(w.p.pid), 0, "%s", Perror());
	s = SymResolverMapAddr(w.p.pid, fn);
	cr_assert_not_null(s, "%s", Perror());
	cr_assert_str_eq(s->module, libc);
	cr_assert(strstr(s->module, "libc.so.6"));
	cr_assert_str_eq(s->symbolName, "getppid");
	cr_assert_eq(s->offset, 0);
	swl_stop(&w);
}

Test(sym, cxx_demangled)
{
	struct sym_wl w;
	struct Symbol *s;
	unsigned long fn;

	cr_assert_eq(swl_start(&w, "sym_cxx"), 0);
	fn = swl_addr(&w, "method");
	cr_assert_neq(fn, 0);
	cr_assert_eq(SymResolverRecordModuleNoDwarf(w.p.pid), 0, "%s", Perror());
	s = SymResolverMapAddr(w.p.pid, fn);
	cr_assert_not_null(s, "%s", Perror());
	cr_assert_str_eq(s->symbolName, "ns::Klass::method(int)");
	cr_assert_str_eq(s->mangleName, "_ZN2ns5Klass6methodEi");
	swl_stop(&w);
}

Test(sym, plt_stub)
{
	char bin[PATH_MAX], cmd[PATH_MAX + 128], *out, *p;
	unsigned long hot, plt = 0;
	struct sym_wl w;
	struct Symbol *s;

	artefact("workloads/sym_hot", bin);
	snprintf(cmd, sizeof(cmd), "objdump -d -j .plt -j .plt.sec '%s' | grep '<printf@plt>:'",
		 bin);
	out = tu_run(cmd, NULL);
	cr_assert_not_null(out);
	plt = strtoul(out, &p, 16);
	free(out);
	cr_assert_neq(plt, 0, "objdump shows printf@plt");
	cr_assert_eq(swl_start(&w, "sym_hot"), 0);
	hot = swl_addr(&w, "hot_loop");
	s = SymResolverMapAddr(w.p.pid, hot - nm_addr(bin, "hot_loop") + plt + 4);
	cr_assert_not_null(s, "%s", Perror());
	cr_assert_str_eq(s->symbolName, "printf@plt");
	cr_assert_eq(s->offset, 4);
	swl_stop(&w);
}

Test(sym, kernel_function)
{
	unsigned long addr, next;
	struct Symbol *s;

	/* schedule and the symbol after it, from kallsyms itself */
	addr = kallsyms_addr("schedule", &next);
	cr_assert_neq(addr, 0, "kallsyms shows schedule's address (run the tests as root)");
	cr_assert_gt(next, addr + 3);
	cr_assert_eq(SymResolverRecordKernel(), 0, "%s", Perror());
	s = SymResolverMapAddr(-1, addr + 3);
	cr_assert_not_null(s, "%s", Perror());
	cr_assert_str_eq(s->symbolName, "schedule");
	cr_assert_str_eq(s->module, "[kernel.kallsyms]");
	cr_assert_eq(s->offset, 3);
	cr_assert_eq(s->codeMapEndAddr, next);
	cr_assert_str_eq(s->fileName, "");
	/* kernel symbols do not need a pid, and are shared by every pid */
	cr_assert_eq(SymResolverMapAddr(getpid(), addr + 3), s);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
}

Test(sym, kernel_hidden_by_kptr_restrict)
{
	char dir[64], path[128];

	scratch_dir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/kallsyms", dir);
	write_file(path, "0000000000000000 T _stext\n0000000000000000 T schedule\n"
			 "0000000000000000 t helper\t[mymod]\n");
	sym_kallsyms_set_path(path, "/nonexistent");
	cr_assert_eq(SymResolverRecordKernel(), LIBSYM_ERR_KALLSYMS_INVALID);
	cr_assert_eq(Perrorno(), LIBSYM_ERR_KALLSYMS_INVALID);
	cr_assert(strstr(Perror(), "kptr_restrict"), "%s", Perror());
	cr_assert_null(SymResolverMapAddr(1, 0xffffffff81000010UL));
	cr_assert_eq(Perrorno(), LIBSYM_ERR_KALLSYMS_INVALID);
	sym_kallsyms_set_path(NULL, NULL);
	rm_tree(dir);
}

Test(sym, kernel_module_symbols)
{
	char dir[64], path[128], mods[128];
	struct Symbol *s;

	scratch_dir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/kallsyms", dir);
	snprintf(mods, sizeof(mods), "%s/modules", dir);
	write_file(path, "ffffffff81000000 T _stext\n"
			 "ffffffff81000100 T schedule\n"
			 "ffffffff81000200 d some_data\n"
			 "ffffffff81000300 T _etext\n"
			 "ffffffffc0001000 t mod_helper\t[mymod]\n"
			 "ffffffffc0001080 T mod_entry\t[mymod]\n");
	write_file(mods, "mymod 16384 0 - Live 0xffffffffc0001000\n");
	sym_kallsyms_set_path(path, mods);
	s = SymResolverMapAddr(0, 0xffffffffc0001010UL);
	cr_assert_not_null(s, "%s", Perror());
	cr_assert_str_eq(s->symbolName, "mod_helper");
	cr_assert_str_eq(s->module, "[mymod]");
	cr_assert_eq(s->offset, 0x10);
	cr_assert_eq(s->codeMapEndAddr, 0xffffffffc0001080UL);
	/* the last symbol of the module ends with the module */
	s = SymResolverMapAddr(0, 0xffffffffc0001100UL);
	cr_assert_str_eq(s->symbolName, "mod_entry");
	cr_assert_eq(s->codeMapEndAddr, 0xffffffffc0001000UL + 16384);
	/* data symbols are not functions: schedule runs up to _etext */
	s = SymResolverMapAddr(0, 0xffffffff81000250UL);
	cr_assert_str_eq(s->symbolName, "schedule");
	cr_assert_eq(s->codeMapEndAddr, 0xffffffff81000300UL);
	/* outside everything */
	s = SymResolverMapAddr(0, 0xffffffffd0000000UL);
	cr_assert_str_eq(s->symbolName, "[unknown]");
	cr_assert_str_eq(s->module, "[kernel.kallsyms]");
	sym_kallsyms_set_path(NULL, NULL);
	rm_tree(dir);
}

Test(sym, process_exits_after_record)
{
	char src[PATH_MAX];
	struct sym_wl w;
	struct Symbol *s;
	unsigned long hot, lib;
	pid_t pid;

	abs_of(HOT_SRC, src);
	cr_assert_eq(swl_start(&w, "sym_hot"), 0);
	pid = w.p.pid;
	hot = swl_addr(&w, "hot_loop");
	lib = swl_addr(&w, "wl_lib_work");
	cr_assert_eq(SymResolverRecordModule(pid), 0, "%s", Perror());
	cr_assert_eq(swl_stop(&w), 0);
	cr_assert(kill(pid, 0) && errno == ESRCH, "the workload is gone");
	s = SymResolverMapAddr(pid, hot);
	cr_assert_not_null(s, "%s", Perror());
	cr_assert_str_eq(s->symbolName, "hot_loop");
	cr_assert_str_eq(s->fileName, src);
	cr_assert_eq(s->lineNum, (unsigned)src_line(HOT_SRC, "LINE:hot_loop"));
	s = SymResolverMapAddr(pid, lib);
	cr_assert_str_eq(s->symbolName, "wl_lib_work");
	/* recording it again keeps what was known, with a warning */
	cr_assert_eq(SymResolverRecordModule(pid), 0, "%s", Perror());
	cr_assert_eq(GetWarn(), KPERF_WARN_PROC_EXITED);
	cr_assert_str_eq(SymResolverMapAddr(pid, hot)->symbolName, "hot_loop");
}

Test(sym, bad_pids)
{
	pid_t pid = unused_pid();
	char want[64];
	unsigned long st[2] = { 0x1000, 0x2000 };

	snprintf(want, sizeof(want), "process %d", (int)pid);
	/* libkperf: a record returns its code, OPEN_FILE_FAILED when /proc/<pid>/maps cannot
	 * be opened; resolving for a pid never recorded is NOT_FIND_PID */
	cr_assert_eq(SymResolverRecordModule(pid), LIBSYM_ERR_OPEN_FILE_FAILED);
	cr_assert_eq(Perrorno(), LIBSYM_ERR_OPEN_FILE_FAILED);
	cr_assert(strstr(Perror(), want), "%s", Perror());
	cr_assert_eq(SymResolverRecordModuleNoDwarf(pid), LIBSYM_ERR_OPEN_FILE_FAILED);
	cr_assert_eq(Perrorno(), LIBSYM_ERR_OPEN_FILE_FAILED);
	cr_assert_eq(SymResolverIncrUpdateModule(pid), LIBSYM_ERR_OPEN_FILE_FAILED);
	cr_assert_null(SymResolverMapAddr(pid, 0x401000));
	cr_assert_eq(Perrorno(), LIBSYM_ERR_NOT_FIND_PID);
	cr_assert_null(StackToHash(pid, st, 2));
	cr_assert_eq(Perrorno(), LIBSYM_ERR_NOT_FIND_PID);
	cr_assert_eq(SymResolverRecordModule(-5), LIBSYM_ERR_PARAM_PID_INVALID);
	cr_assert_eq(Perrorno(), LIBSYM_ERR_PARAM_PID_INVALID);
	cr_assert_eq(SymResolverRecordModule(0), LIBSYM_ERR_OPEN_FILE_FAILED);
	cr_assert_str_eq(Perror(),
			 "pid 0 is no process (there is no /proc/0/maps): give a process id");
	cr_assert_null(SymResolverMapAddr(-3, 0x401000));
	cr_assert_eq(Perrorno(), LIBSYM_ERR_PARAM_PID_INVALID);
	cr_assert_null(StackToHash(1, NULL, 3));
	cr_assert_eq(Perrorno(), LIBPERF_ERR_NULL_POINTER);
	cr_assert_str_eq(Perror(), "stack is NULL but nr is 3");
	/* no frames: no list and no error, as libkperf */
	cr_assert_null(StackToHash(1, st, 0));
	cr_assert_eq(Perrorno(), SUCCESS);
	cr_assert_null(StackToHash(1, NULL, 0));
	cr_assert_eq(Perrorno(), SUCCESS);
	/* a never recorded pid: FreeModuleData is harmless */
	FreeModuleData(pid);
	cr_assert_eq(Perrorno(), SUCCESS);
}

Test(sym, stack_to_hash)
{
	struct sym_wl w;
	unsigned long st[2], other[2];
	struct Stack *a, *b, *c;
	int leaf_line, call_line = src_line(HOT_SRC, "LINE:call_leaf");

	leaf_line = src_line(HOT_SRC, "long leaf(long x)") + 1;
	cr_assert_eq(swl_start(&w, "sym_hot"), 0);
	st[0] = swl_addr(&w, "leaf") + 2; /* the sampled ip */
	st[1] = swl_addr(&w, "ret_in_hot_loop");
	cr_assert_eq(SymResolverRecordModule(w.p.pid), 0, "%s", Perror());
	a = StackToHash(w.p.pid, st, 2);
	cr_assert_not_null(a, "%s", Perror());
	cr_assert_null(a->prev);
	cr_assert_str_eq(a->symbol->symbolName, "leaf");
	cr_assert_eq(a->symbol->offset, 2);
	cr_assert_eq(a->symbol->lineNum, (unsigned)leaf_line);
	cr_assert_not_null(a->next);
	cr_assert_eq(a->next->prev, a);
	cr_assert_null(a->next->next);
	cr_assert_str_eq(a->next->symbol->symbolName, "hot_loop");
	/* the caller's return address is looked up at ret - 1: the line of the call */
	cr_assert_eq(a->next->symbol->addr, st[1]);
	cr_assert_eq(a->next->symbol->lineNum, (unsigned)call_line);
	/* the same stack: the same list */
	b = StackToHash(w.p.pid, st, 2);
	cr_assert_eq(a, b);
	/* another stack: another list */
	other[0] = st[0] + 1;
	other[1] = st[1];
	c = StackToHash(w.p.pid, other, 2);
	cr_assert_neq(c, a);
	cr_assert_eq(c->symbol->offset, 3);
	/* FreeSymbolPtr on a resolver symbol changes nothing */
	FreeSymbolPtr(a->symbol);
	cr_assert_str_eq(a->symbol->symbolName, "leaf");
	swl_stop(&w);
}

Test(sym, stack_mixed_kernel_user)
{
	struct sym_wl w;
	uint64_t st[6];
	struct Stack *s;
	unsigned long sched = kallsyms_addr("schedule", NULL);
	int n = 0;

	cr_assert_eq(swl_start(&w, "sym_hot"), 0);
	st[0] = (uint64_t)-128; /* PERF_CONTEXT_KERNEL */
	st[1] = sched + 8;
	st[2] = (uint64_t)-512; /* PERF_CONTEXT_USER */
	st[3] = swl_addr(&w, "hot_loop");
	st[4] = swl_addr(&w, "ret_in_hot_loop");
	st[5] = 0;
	cr_assert_eq(kp_sym_resolve_stack(w.p.pid, st, 6, KP_SYM_DWARF, &s), 0, "%s", Perror());
	for (struct Stack *i = s; i; i = i->next)
		n++;
	cr_assert_eq(n, 3, "markers and zeros are skipped");
	cr_assert_str_eq(s->symbol->symbolName, "schedule");
	cr_assert_str_eq(s->symbol->module, "[kernel.kallsyms]");
	cr_assert_eq(s->symbol->offset, 8);
	/* the first user frame is the exact user ip, not a return address */
	cr_assert_str_eq(s->next->symbol->symbolName, "hot_loop");
	cr_assert_eq(s->next->symbol->offset, 0);
	cr_assert_eq(s->next->symbol->lineNum, (unsigned)src_line(HOT_SRC, "LINE:hot_loop"));
	cr_assert_eq(s->next->next->symbol->lineNum, (unsigned)src_line(HOT_SRC, "LINE:call_leaf"));
	swl_stop(&w);
}

Test(sym, unknown_addresses)
{
	struct sym_wl w;
	struct Symbol *s;
	char bin[PATH_MAX];

	artefact("workloads/sym_hot", bin);
	cr_assert_eq(swl_start(&w, "sym_hot"), 0);
	cr_assert_eq(SymResolverRecordModuleNoDwarf(w.p.pid), 0, "%s", Perror());
	/* nothing is mapped at 0x1000 */
	s = SymResolverMapAddr(w.p.pid, 0x1000);
	cr_assert_not_null(s, "%s", Perror());
	cr_assert_str_eq(s->symbolName, "[unknown]");
	cr_assert_str_eq(s->module, "[unknown]");
	/* anonymous memory without a JIT map */
	s = SymResolverMapAddr(w.p.pid, swl_addr(&w, "anon") + 16);
	cr_assert_str_eq(s->symbolName, "[unknown]");
	swl_stop(&w);
}

Test(sym, jit_perf_map)
{
	char path[64], text[256];
	struct sym_wl w;
	struct Symbol *s;
	unsigned long anon;

	cr_assert_eq(swl_start(&w, "sym_hot"), 0);
	anon = swl_addr(&w, "anon");
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)w.p.pid);
	snprintf(text, sizeof(text),
		 "%lx 40 jitted_one\n0x%lx 0x20 _ZN2ns5Klass6methodEi\nnot a line\n", anon + 0x100,
		 anon + 0x200);
	write_file(path, text);
	cr_assert_eq(SymResolverRecordModuleNoDwarf(w.p.pid), 0, "%s", Perror());
	s = SymResolverMapAddr(w.p.pid, anon + 0x110);
	cr_assert_not_null(s, "%s", Perror());
	cr_assert_str_eq(s->symbolName, "jitted_one");
	cr_assert_str_eq(s->module, path);
	cr_assert_eq(s->offset, 0x10);
	cr_assert_eq(s->codeMapEndAddr, anon + 0x140);
	s = SymResolverMapAddr(w.p.pid, anon + 0x21f);
	cr_assert_str_eq(s->symbolName, "ns::Klass::method(int)");
	cr_assert_str_eq(s->mangleName, "_ZN2ns5Klass6methodEi");
	/* past the end of the last one */
	s = SymResolverMapAddr(w.p.pid, anon + 0x220);
	cr_assert_str_eq(s->symbolName, "[unknown]");
	unlink(path);
	swl_stop(&w);
}

/* the [vdso] mapping of <pid> */
static unsigned long vdso_start(pid_t pid, unsigned long *end)
{
	char cmd[128], *out, *dash;
	unsigned long a;

	snprintf(cmd, sizeof(cmd), "grep '\\[vdso\\]' /proc/%d/maps", (int)pid);
	out = tu_run(cmd, NULL);
	a = out ? strtoul(out, &dash, 16) : 0;
	if (end)
		*end = a && *dash == '-' ? strtoul(dash + 1, NULL, 16) : 0;
	free(out);
	return a;
}

/* the address of <name> in our own vDSO, as an offset from its start: the same kernel gives
 * every 64-bit process the same image, so dump ours and ask nm */
static unsigned long vdso_offset_of(const char *name)
{
	char cmd[256], *out;
	unsigned long off, end, start = vdso_start(getpid(), &end);
	FILE *f;

	if (!start || end <= start)
		return 0;
	f = fopen("/tmp/kperf-symtest-vdso.so", "w");
	if (!f)
		return 0;
	fwrite((void *)start, 1, end - start, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "nm -D /tmp/kperf-symtest-vdso.so | grep -E ' %s(@|$)' | cut -d' ' -f1; "
		 "rm -f /tmp/kperf-symtest-vdso.so",
		 name);
	out = tu_run(cmd, NULL);
	off = out ? strtoul(out, NULL, 16) : 0;
	free(out);
	return off;
}

Test(sym, vdso)
{
	struct sym_wl w;
	struct Symbol *s;
	unsigned long off = vdso_offset_of("__vdso_clock_gettime"), base;
	pid_t pid;

	cr_assert_neq(off, 0, "nm finds __vdso_clock_gettime in the vDSO");
	cr_assert_eq(swl_start(&w, "sym_hot"), 0);
	pid = w.p.pid;
	base = vdso_start(pid, NULL);
	cr_assert_neq(base, 0);
	cr_assert_eq(SymResolverRecordModuleNoDwarf(pid), 0, "%s", Perror());
	s = SymResolverMapAddr(pid, base + off + 1);
	cr_assert_not_null(s, "%s", Perror());
	cr_assert_str_eq(s->module, "[vdso]");
	/* the vDSO exports both names: the public one is shown (fewest underscores) */
	cr_assert_str_eq(s->symbolName, "clock_gettime");
	cr_assert_eq(s->offset, 1);
	cr_assert_eq(s->codeMapAddr, off + 1);
	/* after the process is gone, from the recorded image */
	swl_stop(&w);
	s = SymResolverMapAddr(pid, base + off + 2);
	cr_assert_str_eq(s->symbolName, "clock_gettime");
}

Test(sym, files_parsed_once)
{
	struct sym_wl w[3];
	struct kp_sym_stats st1, st3;
	int i;

	for (i = 0; i < 3; i++)
		cr_assert_eq(swl_start(&w[i], "sym_hot"), 0);
	cr_assert_eq(SymResolverRecordModuleNoDwarf(w[0].p.pid), 0, "%s", Perror());
	kp_sym_get_stats(&st1);
	cr_assert_geq(st1.files_parsed, 4, "sym_hot, libwl.so, libc, ld.so (+ vdso)");
	for (i = 1; i < 3; i++)
		cr_assert_eq(SymResolverRecordModuleNoDwarf(w[i].p.pid), 0, "%s", Perror());
	kp_sym_get_stats(&st3);
	cr_assert_eq(st3.files_parsed, st1.files_parsed, "nothing is parsed twice");
	cr_assert_eq(st3.procs, 3);
	for (i = 0; i < 3; i++)
		cr_assert_str_eq(
			SymResolverMapAddr(w[i].p.pid, swl_addr(&w[i], "hot_loop"))->symbolName,
			"hot_loop");
	/* FreeModuleData drops one process; the others keep resolving */
	FreeModuleData(w[0].p.pid);
	kp_sym_get_stats(&st3);
	cr_assert_eq(st3.procs, 2);
	cr_assert_str_eq(SymResolverMapAddr(w[1].p.pid, swl_addr(&w[1], "wl_lib_work"))->symbolName,
			 "wl_lib_work");
	/* a live pid that was freed is recorded again on demand */
	cr_assert_str_eq(SymResolverMapAddr(w[0].p.pid, swl_addr(&w[0], "hot_loop"))->symbolName,
			 "hot_loop");
	kp_sym_get_stats(&st3);
	cr_assert_eq(st3.files_parsed, st1.files_parsed);
	for (i = 0; i < 3; i++)
		swl_stop(&w[i]);
}

struct thread_arg {
	pid_t pid;
	unsigned long addrs[3];
	struct Symbol *out[3];
	struct Stack *stack;
};

static void *resolve_thread(void *p)
{
	struct thread_arg *a = p;
	int i, k;

	for (k = 0; k < 200; k++) {
		for (i = 0; i < 3; i++)
			a->out[i] =
				SymResolverMapAddr(a->pid, a->addrs[i] + (unsigned long)(k % 7));
		a->stack = StackToHash(a->pid, a->addrs, 3);
	}
	for (i = 0; i < 3; i++)
		a->out[i] = SymResolverMapAddr(a->pid, a->addrs[i]);
	return NULL;
}

Test(sym, threads_share_results)
{
	struct thread_arg args[4];
	pthread_t th[4];
	struct sym_wl w;
	int i;

	cr_assert_eq(swl_start(&w, "sym_hot"), 0);
	for (i = 0; i < 4; i++) {
		args[i].pid = w.p.pid;
		args[i].addrs[0] = swl_addr(&w, "leaf");
		args[i].addrs[1] = swl_addr(&w, "ret_in_hot_loop");
		args[i].addrs[2] = swl_addr(&w, "getppid");
		pthread_create(&th[i], NULL, resolve_thread, &args[i]);
	}
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < 4; i++) {
		cr_assert_not_null(args[i].out[0]);
		cr_assert_str_eq(args[i].out[0]->symbolName, "leaf");
		cr_assert_str_eq(args[i].out[2]->symbolName, "getppid");
		cr_assert_eq(args[i].out[1], args[0].out[1]);
		cr_assert_eq(args[i].stack, args[0].stack);
	}
	swl_stop(&w);
}

Test(sym, dlopen_after_record_and_dlclose)
{
	char lib[PATH_MAX];
	long (*fn)(long);
	struct Symbol *s;
	void *h;

	artefact("workloads/libwl.so", lib);
	cr_assert_eq(SymResolverRecordModuleNoDwarf(getpid()), 0, "%s", Perror());
	h = dlopen(lib, RTLD_NOW);
	cr_assert_not_null(h, "%s", dlerror());
	fn = (long (*)(long))dlsym(h, "wl_lib_work");
	cr_assert_not_null(fn);
	/* loaded after the snapshot: an incremental update finds it */
	cr_assert_eq(SymResolverIncrUpdateModuleNoDwarf(getpid()), 0, "%s", Perror());
	s = SymResolverMapAddr(getpid(), (unsigned long)fn);
	cr_assert_str_eq(s->symbolName, "wl_lib_work");
	cr_assert_str_eq(s->module, lib);
	/* unloaded: samples taken before still resolve, nothing was mapped over it */
	cr_assert_eq(dlclose(h), 0);
	cr_assert_eq(SymResolverIncrUpdateModuleNoDwarf(getpid()), 0, "%s", Perror());
	s = SymResolverMapAddr(getpid(), (unsigned long)fn + 1);
	cr_assert_str_eq(s->symbolName, "wl_lib_work");
	cr_assert_eq(s->offset, 1);
}

Test(sym, jit_perf_map_grows)
{
	char path[64], text[256];
	struct sym_wl w;
	struct Symbol *s;
	unsigned long anon;
	FILE *f;

	cr_assert_eq(swl_start(&w, "sym_hot"), 0);
	anon = swl_addr(&w, "anon");
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)w.p.pid);
	snprintf(text, sizeof(text), "%lx 10 first\n", anon);
	write_file(path, text);
	cr_assert_eq(SymResolverRecordModuleNoDwarf(w.p.pid), 0, "%s", Perror());
	cr_assert_str_eq(SymResolverMapAddr(w.p.pid, anon + 4)->symbolName, "first");
	/* the runtime compiles more code and appends it to its map */
	f = fopen(path, "a");
	cr_assert_not_null(f);
	fprintf(f, "%lx 10 second\n", anon + 0x40);
	fclose(f);
	s = SymResolverMapAddr(w.p.pid, anon + 0x44);
	cr_assert_str_eq(s->symbolName, "second");
	cr_assert_eq(s->offset, 4);
	/* the first one's symbol is still valid */
	cr_assert_str_eq(SymResolverMapAddr(w.p.pid, anon + 4)->symbolName, "first");
	unlink(path);
	swl_stop(&w);
}

Test(sym, kernel_code_loaded_later)
{
	char dir[64], path[128];
	unsigned long stack[2] = { 0xffffffffc0002010UL, 0xffffffff81000108UL };
	struct Stack *st;
	struct Symbol *s;
	FILE *f;

	scratch_dir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/kallsyms", dir);
	write_file(path, "ffffffff81000000 T _stext\nffffffff81000100 T schedule\n"
			 "ffffffff81000300 T _etext\n");
	sym_kallsyms_set_path(path, "/nonexistent");
	s = SymResolverMapAddr(0, 0xffffffffc0002010UL);
	cr_assert_not_null(s, "%s", Perror());
	cr_assert_str_eq(s->symbolName, "[unknown]");
	st = StackToHash(0, stack, 2);
	cr_assert_not_null(st, "%s", Perror());
	cr_assert_str_eq(st->symbol->symbolName, "[unknown]");
	cr_assert_str_eq(st->next->symbol->symbolName, "schedule");
	/* a BPF program appears; kallsyms is read again (at most once a second) */
	f = fopen(path, "a");
	cr_assert_not_null(f);
	fprintf(f, "ffffffffc0002000 t bpf_prog_6deef7357e7b4530_handler\t[bpf]\n");
	fclose(f);
	tu_sleep_ms(1100);
	s = SymResolverMapAddr(0, 0xffffffffc0002010UL);
	cr_assert_str_eq(s->symbolName, "bpf_prog_6deef7357e7b4530_handler");
	cr_assert_str_eq(s->module, "[bpf]");
	cr_assert_eq(s->offset, 0x10);
	/* a stack seen before with the unknown frame gets it right too */
	st = StackToHash(0, stack, 2);
	cr_assert_str_eq(st->symbol->symbolName, "bpf_prog_6deef7357e7b4530_handler");
	cr_assert_eq(st->next->symbol->addr, 0xffffffff81000108UL);
	cr_assert_eq(st, StackToHash(0, stack, 2));
	/* core kernel addresses never cause a reload */
	cr_assert_str_eq(SymResolverMapAddr(0, 0xffffffff81000104UL)->symbolName, "schedule");
	sym_kallsyms_set_path(NULL, NULL);
	rm_tree(dir);
}
