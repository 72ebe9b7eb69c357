/*
 * test_sym_inline.c - inline frames and public names (kperf.h's symbol additions).
 *
 * The workload inline_cxx (tests/workloads/inline_cxx.cpp, built -O2 -g) has always_inline
 * chains, a template and a lambda; the INL_* markers of its source are the lines expected, and
 * the addresses are found in its line table (readelf), at rows no other row shares. libc's
 * fork, puts and calloc must be named so (not __fork, _IO_puts, __libc_calloc), their other
 * names reachable. The whole chain of names and lines agrees with `llvm-symbolizer --inlining`
 * (Debian's llvm) on a few hundred addresses of the workload and of libc (with its debug
 * file, libc6-dbg): every disagreement is printed.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stddef.h>

#include "kperf/kperf.h"
#include "sym/sym.h"
#include "symtest.h"

#define SRC KPERF_SRCDIR "/tests/workloads/inline_cxx.cpp"

static const struct KperfSymOpts inline_on = { sizeof(struct KperfSymOpts), 1, 1 };

/* a line-table address of <line> of inline_cxx.cpp that no other row has (0 when none) */
static unsigned long row_addr(const char *bin, int line)
{
	char cmd[PATH_MAX + 64], *out, *p;
	unsigned long addrs[4096], found = 0;
	int lines[4096], n = 0, i, j;

	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=decodedline '%s' 2>/dev/null", bin);
	out = tu_run(cmd, NULL);
	cr_assert_not_null(out);
	for (p = out; p && *p && n < 4096; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		unsigned long a;
		int l;

		if (sscanf(p, "inline_cxx.cpp %d %lx", &l, &a) == 2) {
			lines[n] = l;
			addrs[n++] = a;
		}
	}
	free(out);
	for (i = 0; i < n && !found; i++) {
		bool alone = lines[i] == line;

		for (j = 0; j < n && alone; j++)
			alone = j == i || addrs[j] != addrs[i];
		if (alone)
			found = addrs[i];
	}
	return found;
}

struct want {
	const char *name;
	int line; /* its line */
	int first; /* where it starts, -1: not checked */
	unsigned inlined;
};

static void check_frames(const struct Stack *st, const struct want *w, int n, const char *what)
{
	int i;

	for (i = 0; i < n; i++, st = st->next) {
		struct KperfSymbolInfo info = { sizeof(info) };

		cr_assert_not_null(st, "%s: frame %d missing", what, i);
		cr_assert_str_eq(st->symbol->symbolName, w[i].name, "%s: frame %d", what, i);
		cr_assert_eq(st->symbol->lineNum, (unsigned)w[i].line, "%s: %s", what, w[i].name);
		cr_assert(strstr(st->symbol->fileName, "tests/workloads/inline_cxx.cpp"), "%s",
			  st->symbol->fileName);
		if (w[i].first >= 0)
			cr_assert_eq(st->symbol->firstLine, (unsigned)w[i].first, "%s: %s", what,
				     w[i].name);
		cr_assert_eq(KperfSymbolGetInfo(st->symbol, &info), 0, "%s", Perror());
		cr_assert_eq(info.inlined, w[i].inlined, "%s: %s", what, w[i].name);
		if (i)
			cr_assert_eq(st->prev->next, st);
	}
	cr_assert_null(st, "%s: more than %d frames", what, n);
}

static const char *wl(void)
{
	static char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s", tu_path("workloads/inline_cxx"));
	return path;
}

Test(sym_inline, chain_of_always_inline_functions)
{
	unsigned long a = row_addr(wl(), src_line(SRC, "INL_LEAF"));
	const struct want w[] = {
		{ "leaf", src_line(SRC, "INL_LEAF"), src_line(SRC, "inline unsigned leaf("), 1 },
		{ "mid", src_line(SRC, "INL_MID_CALL"), src_line(SRC, "inline unsigned mid("), 1 },
		{ "top", src_line(SRC, "INL_TOP_CALL"), src_line(SRC, "inline unsigned top("), 1 },
		{ "chain(unsigned int)", src_line(SRC, "INL_CHAIN_CALL"),
		  src_line(SRC, "unsigned chain("), 0 },
	};
	struct Stack *st;

	cr_assert_neq(a, 0, "no line-table row of leaf() in %s", wl());
	st = KperfMapCodeFrames(wl(), a, &inline_on);
	cr_assert_not_null(st, "%s", Perror());
	check_frames(st, w, 4, "leaf");
	/* the same pointers on the next call (cached) */
	cr_assert_eq(KperfMapCodeFrames(wl(), a, &inline_on), st);
	/* without inline frames: libkperf's one Symbol, the innermost line and first line */
	st = KperfMapCodeFrames(wl(), a, NULL);
	cr_assert_not_null(st, "%s", Perror());
	cr_assert_str_eq(st->symbol->symbolName, "chain(unsigned int)");
	cr_assert_eq(st->symbol->lineNum, (unsigned)src_line(SRC, "INL_LEAF"));
	cr_assert_eq(st->symbol->firstLine, (unsigned)src_line(SRC, "inline unsigned leaf("));
	cr_assert_null(st->next);
	cr_assert_eq(SymResolverMapCodeAddr(wl(), a), st->symbol);
}

Test(sym_inline, template_method_in_a_lambda_in_a_template)
{
	unsigned long a = row_addr(wl(), src_line(SRC, "INL_ADD"));
	const struct want w[] = {
		{ "ns::Acc<long>::add(long)", src_line(SRC, "INL_ADD"), -1, 1 },
		{ "operator()", src_line(SRC, "INL_LAMBDA_CALL"), -1, 1 },
		{ "apply<with_lambda(int)::<lambda(int)> >", src_line(SRC, "INL_APPLY_CALL"),
		  src_line(SRC, "inline long apply("), 1 },
		{ "with_lambda(int)", src_line(SRC, "INL_WITH_CALL"),
		  src_line(SRC, "with_lambda(int n)"), 0 },
	};
	struct Stack *st;

	cr_assert_neq(a, 0, "no line-table row of Acc::add in %s", wl());
	st = KperfMapCodeFrames(wl(), a, &inline_on);
	cr_assert_not_null(st, "%s", Perror());
	check_frames(st, w, 4, "Acc::add");
	cr_assert_str_eq(st->symbol->mangleName, "_ZN2ns3AccIlE3addEl");
}

/* a process: KperfStackToHash gives the frames, StackToHash libkperf's list */
Test(sym_inline, stacks_of_a_process)
{
	unsigned long a = row_addr(wl(), src_line(SRC, "INL_LEAF")), chain_file, base;
	unsigned long addrs[1];
	const struct want w[] = {
		{ "leaf", src_line(SRC, "INL_LEAF"), -1, 1 },
		{ "mid", src_line(SRC, "INL_MID_CALL"), -1, 1 },
		{ "top", src_line(SRC, "INL_TOP_CALL"), -1, 1 },
		{ "chain(unsigned int)", src_line(SRC, "INL_CHAIN_CALL"), -1, 0 },
	};
	struct KperfSymOpts dwarf_only = { sizeof(dwarf_only), 1, 0 };
	struct kp_sym_stats before, after;
	struct Stack *st;
	struct sym_wl p;

	cr_assert_eq(swl_start(&p, wl()), 0);
	chain_file = nm_addr(wl(), "_Z5chainj");
	cr_assert_neq(chain_file, 0);
	base = swl_addr(&p, "chain") - chain_file;
	addrs[0] = base + a;
	cr_assert_eq(SymResolverRecordModule(p.p.pid), 0, "%s", Perror());
	kp_sym_get_stats(&before);
	st = KperfStackToHash(p.p.pid, addrs, 1, &inline_on);
	cr_assert_not_null(st, "%s", Perror());
	check_frames(st, w, 4, "process");
	kp_sym_get_stats(&after);
	cr_assert_eq(after.inline_frames - before.inline_frames, 3);
	cr_assert_eq(KperfStackToHash(p.p.pid, addrs, 1, &inline_on), st, "resolved once");
	st = StackToHash(p.p.pid, addrs, 1);
	cr_assert_not_null(st, "%s", Perror());
	cr_assert_str_eq(st->symbol->symbolName, "chain(unsigned int)");
	cr_assert_eq(st->symbol->lineNum, (unsigned)src_line(SRC, "INL_LEAF"));
	cr_assert_null(st->next);
	cr_assert_eq(KperfStackToHash(p.p.pid, addrs, 1, &dwarf_only), st);
	swl_stop(&p);
	FreeModuleData(p.p.pid);
}

/* public names first; the others reachable */
Test(sym_inline, fork_puts_calloc_named_so)
{
	static const struct {
		const char *name;
		const char *aliases[4];
	} cases[] = {
		{ "fork", { "__fork", "__libc_fork", "__GI___fork", NULL } },
		{ "puts", { "_IO_puts", "__GI__IO_puts", NULL } },
		{ "calloc", { "__libc_calloc", "__calloc", NULL } },
		{ "sysconf", { "__sysconf", "__GI___sysconf", NULL } },
	};
	/* libc's own definitions (under ASan, the default lookup finds its interceptors) */
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	size_t i;

	bool debug = has_debug_file(own_libc_path());

	cr_assert_not_null(libc, "%s", dlerror());
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		void *fn = dlsym(libc, cases[i].name);
		struct Symbol *s;
		char **al = NULL;
		int n, k;

		cr_assert_not_null(fn, "%s", cases[i].name);
		/* in this process, and in libc's file */
		s = SymResolverMapAddr(getpid(), (unsigned long)fn);
		cr_assert_not_null(s, "%s", Perror());
		cr_assert_str_eq(s->symbolName, cases[i].name);
		cr_assert(strstr(s->module, "libc.so.6"), "%s", s->module);
		cr_assert_eq(s->offset, 0);
		cr_assert_str_eq(SymResolverMapCodeAddr(s->module, s->codeMapAddr)->symbolName,
				 cases[i].name);
		n = KperfSymbolAliases(s, &al);
		cr_assert_geq(n, 0, "%s", Perror());
		if (!debug) {
			/* .dynsym only: the exported ones, without glibc's hidden __GI_ names */
			cr_assert(n >= 1 && !strcmp(al[0], cases[i].aliases[0]), "%s: %s",
				  cases[i].name, n ? al[0] : "no alias");
			free(al);
			continue;
		}
		for (k = 0; cases[i].aliases[k]; k++)
			cr_assert(k < n && !strcmp(al[k], cases[i].aliases[k]),
				  "%s: alias %d is %s, not %s", cases[i].name, k,
				  k < n ? al[k] : "missing", cases[i].aliases[k]);
		cr_assert_eq(n, k, "%s has %d aliases", cases[i].name, n);
		cr_assert_null(al[n]);
		free(al);
	}
	dlclose(libc);
	FreeModuleData(getpid());
}

Test(sym_inline, aliases_of_what_has_none)
{
	struct Symbol own = { .module = "[kernel.kallsyms]", .symbolName = "schedule" };
	unsigned long a = row_addr(wl(), src_line(SRC, "INL_LEAF"));
	struct Stack *st = KperfMapCodeFrames(wl(), a, &inline_on);
	char **al = (char **)1;

	cr_assert_eq(KperfSymbolAliases(&own, &al), 0, "%s", Perror());
	cr_assert_not_null(al);
	cr_assert_null(al[0]);
	free(al);
	cr_assert_not_null(st);
	cr_assert_eq(KperfSymbolAliases(st->symbol, &al), 0, "an inline frame has no aliases");
	free(al);
}

Test(sym_inline, info_of_any_symbol)
{
	static const struct {
		const char *name;
		unsigned base;
	} cases[] = {
		{ "foo", 3 },
		{ "foo.isra.0", 3 },
		{ "foo.constprop.1.isra.0", 3 },
		{ "foo.part.2", 3 },
		{ "foo.cold", 3 },
		{ "foo.cold.12", 3 },
		{ "foo.coldish", 11 },
		{ "f(int) [clone .isra.0] [clone .cold]", 6 },
		{ ".isra.0", 7 },
	};
	struct KperfSymbolInfo info;
	struct {
		size_t sz;
		unsigned inlined;
	} older;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct Symbol s = { .symbolName = (char *)cases[i].name };

		memset(&info, 0xff, sizeof(info));
		info.sz = sizeof(info);
		cr_assert_eq(KperfSymbolGetInfo(&s, &info), 0, "%s", Perror());
		cr_assert_eq(info.inlined, 0);
		cr_assert_eq(info.baseNameLen, cases[i].base, "%s", cases[i].name);
		cr_assert_eq(info.sz, sizeof(info));
	}
	/* a caller built against an older kperf.h: only what its struct holds is written */
	{
		struct Symbol s = { .symbolName = "x" };
		unsigned char buf[sizeof(older) + 8];

		memset(buf, 0xab, sizeof(buf));
		older.sz = sizeof(older);
		memcpy(buf, &older, sizeof(older));
		cr_assert_eq(KperfSymbolGetInfo(&s, (struct KperfSymbolInfo *)buf), 0);
		memcpy(&older, buf, sizeof(older));
		cr_assert_eq(older.inlined, 0);
		cr_assert_eq(buf[sizeof(older)], 0xab);
	}
}

Test(sym_inline, bad_arguments)
{
	struct KperfSymbolInfo info = { 0 };
	struct Symbol s = { .symbolName = "x" };
	unsigned char big[sizeof(struct KperfSymOpts) + 8] = { 0 };
	struct KperfSymOpts o = { sizeof(o), 1, 2 };
	unsigned long addr = 0x1000;
	char **al;

	cr_assert_eq(KperfSymbolGetInfo(NULL, &info), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_NULL_POINTER);
	cr_assert_str_eq(Perror(), "KperfSymbolGetInfo: sym is NULL");
	cr_assert_eq(KperfSymbolGetInfo(&s, NULL), -1);
	cr_assert_str_eq(Perror(), "KperfSymbolGetInfo: info is NULL");
	cr_assert_eq(KperfSymbolGetInfo(&s, &info), -1);
	cr_assert_eq(Perrorno(), KPERF_ERR_INVALID_ATTR);
	cr_assert_str_eq(Perror(),
			 "KperfSymbolInfo.sz is 0: set it to sizeof(struct KperfSymbolInfo)");
	cr_assert_eq(KperfSymbolAliases(NULL, &al), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_NULL_POINTER);
	cr_assert_str_eq(Perror(), "KperfSymbolAliases: sym is NULL");
	cr_assert_eq(KperfSymbolAliases(&s, NULL), -1);
	cr_assert_str_eq(Perror(), "KperfSymbolAliases: aliases is NULL");

	cr_assert_null(KperfMapCodeFrames(wl(), 0x1000, &o));
	cr_assert_eq(Perrorno(), KPERF_ERR_INVALID_ATTR);
	cr_assert_str_eq(
		Perror(),
		"KperfSymOpts: dwarf and inlineFrames are 0 or 1 (dwarf 1, inlineFrames 2)");
	o = (struct KperfSymOpts){ 1 };
	cr_assert_null(KperfStackToHash(getpid(), &addr, 1, &o));
	cr_assert_eq(Perrorno(), KPERF_ERR_INVALID_ATTR);
	cr_assert_str_eq(Perror(), "KperfSymOpts.sz is 1: set it to sizeof(struct KperfSymOpts)");
	*(size_t *)big = sizeof(big);
	big[sizeof(big) - 1] = 1;
	cr_assert_null(KperfMapCodeFrames(wl(), 0x1000, (struct KperfSymOpts *)big));
	cr_assert_eq(Perrorno(), KPERF_ERR_INVALID_ATTR);
	cr_assert(strstr(Perror(), "KperfSymOpts has fields this library does not know"), "%s",
		  Perror());
	cr_assert_null(KperfMapCodeFrames("/nonexistent/x.so", 0x1000, &inline_on));
	cr_assert_eq(Perrorno(), LIBSYM_ERR_FILE_NOT_RGE);
	cr_assert_str_eq(Perror(), "module /nonexistent/x.so is not a regular file");
	cr_assert_null(KperfMapCodeFrames(wl(), 0xffff800000001000UL, &inline_on));
	cr_assert_eq(Perrorno(), LIBSYM_ERR_MAP_CODE_KERNEL_NOT_SUPPORT);
	cr_assert_null(KperfStackToHash(-1, &addr, 1, &inline_on));
	cr_assert_eq(Perrorno(), LIBSYM_ERR_PARAM_PID_INVALID);
}
