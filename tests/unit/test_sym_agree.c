/*
 * test_sym_agree.c - the resolver against `llvm-symbolizer --inlining` (Debian's llvm): the
 * whole chain of frames of a few hundred addresses, names and lines, must agree for at least
 * 99% of them, and each disagreement is printed (stderr).
 *
 * Addresses: every byte of the workload inline_cxx's functions chain, with_lambda and main
 * (built -O2: inlining everywhere), and 300 addresses inside libc's functions (a fixed
 * sequence; libc's debug file from libc6-dbg, found by build-id by both). Frames are compared
 * innermost first: the same number, the same file:line each, the same name for each inlined
 * call; the function's own name is compared after alias normalisation (llvm-symbolizer shows
 * the DWARF or .dynsym name, kperf-bpf the public one: __fork against fork), since both are
 * names of the same symbol. "??" is kperf-bpf's [unknown], "??:0" no line.
 */
#include <criterion/criterion.h>

#include "kperf/kperf.h"
#include "symtest.h"

#define MAX_FRAMES 32

struct frame {
	char name[2048];
	char file[2048];
	unsigned line;
};

struct answer {
	struct frame f[MAX_FRAMES];
	int n;
};

/* llvm-symbolizer's blocks: "name\nfile:line:col\n" per frame, a blank line per address */
static int run_llvm(const char *module, const unsigned long *addrs, int n, struct answer *out)
{
	char in[] = "/tmp/kperf-agree-XXXXXX", cmd[PATH_MAX * 2], line[2048];
	FILE *f;
	int fd = mkstemp(in), i = 0;

	cr_assert_geq(fd, 0);
	f = fdopen(fd, "w");
	for (i = 0; i < n; i++)
		fprintf(f, "%#lx\n", addrs[i]);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "llvm-symbolizer --inlining --obj='%s' < %s 2>/dev/null", module,
		 in);
	f = popen(cmd, "r");
	cr_assert_not_null(f);
	i = 0;
	memset(out, 0, n * sizeof(*out));
	while (i < n && fgets(line, sizeof(line), f)) {
		struct answer *a = &out[i];
		char *colon;

		line[strcspn(line, "\n")] = '\0';
		if (!line[0]) {
			i++;
			continue;
		}
		if (a->n >= MAX_FRAMES)
			continue;
		snprintf(a->f[a->n].name, sizeof(a->f[0].name), "%s", line);
		if (!fgets(line, sizeof(line), f))
			break;
		line[strcspn(line, "\n")] = '\0';
		/* file:line:col */
		colon = strrchr(line, ':');
		if (colon)
			*colon = '\0';
		colon = strrchr(line, ':');
		if (colon) {
			*colon = '\0';
			a->f[a->n].line = (unsigned)strtoul(colon + 1, NULL, 10);
		}
		snprintf(a->f[a->n].file, sizeof(a->f[0].file), "%s", line);
		a->n++;
	}
	pclose(f);
	unlink(in);
	return i;
}

static void ours(const char *module, unsigned long addr, struct answer *a, const struct Symbol **fn)
{
	struct KperfSymOpts o = { sizeof(o), 1, 1 };
	const struct Stack *st = KperfMapCodeFrames(module, addr, &o);

	memset(a, 0, sizeof(*a));
	*fn = NULL;
	cr_assert_not_null(st, "%s %#lx: %s", module, addr, Perror());
	for (; st && a->n < MAX_FRAMES; st = st->next, a->n++) {
		const struct Symbol *s = st->symbol;

		snprintf(a->f[a->n].name, sizeof(a->f[0].name), "%s",
			 strcmp(s->symbolName, "[unknown]") ? s->symbolName : "??");
		snprintf(a->f[a->n].file, sizeof(a->f[0].file), "%s",
			 *s->fileName ? s->fileName : "??");
		a->f[a->n].line = s->lineNum;
		*fn = s;
	}
}

/* llvm's name of the function is one of the names of ours (its aliases, version cut) */
static bool same_function(const struct Symbol *fn, const char *theirs)
{
	char **al;
	int n, i;
	bool same = false;

	if (!strcmp(fn->symbolName, theirs))
		return true;
	n = KperfSymbolAliases(fn, &al);
	for (i = 0; i < n && !same; i++)
		same = !strncmp(al[i], theirs, strlen(theirs)) &&
		       (!al[i][strlen(theirs)] || al[i][strlen(theirs)] == '@');
	if (n >= 0)
		free(al);
	return same;
}

/* compare; on a disagreement, describe it in <why> */
static bool agree(const struct answer *o, const struct Symbol *fn, const struct answer *l,
		  char *why, size_t size)
{
	int i;

	if (o->n != l->n) {
		snprintf(why, size, "%d frames, llvm-symbolizer %d (innermost: ours %s, llvm %s)",
			 o->n, l->n, o->f[0].name, l->f[0].name);
		return false;
	}
	for (i = 0; i < o->n; i++) {
		const struct frame *a = &o->f[i], *b = &l->f[i];
		bool last = i == o->n - 1;
		bool name_ok = last && fn ? same_function(fn, b->name) : !strcmp(a->name, b->name);

		if (!name_ok || a->line != b->line || strcmp(a->file, b->file)) {
			snprintf(why, size, "frame %d: ours %s %s:%u, llvm-symbolizer %s %s:%u", i,
				 a->name, a->file, a->line, b->name, b->file, b->line);
			return false;
		}
	}
	return true;
}

static double agreement(const char *module, const unsigned long *addrs, int n, int *inlined)
{
	struct answer *l = calloc((size_t)n, sizeof(*l)), o;
	const struct Symbol *fn;
	char why[4096];
	int i, ok = 0, got;

	cr_assert_not_null(l);
	got = run_llvm(module, addrs, n, l);
	cr_assert_eq(got, n, "llvm-symbolizer answered %d of %d addresses (is llvm installed?)",
		     got, n);
	*inlined = 0;
	for (i = 0; i < n; i++) {
		ours(module, addrs[i], &o, &fn);
		*inlined += o.n > 1;
		if (agree(&o, fn, &l[i], why, sizeof(why)))
			ok++;
		else
			fprintf(stderr, "disagreement %s %#lx: %s\n", module, addrs[i], why);
	}
	free(l);
	fprintf(stderr,
		"agreement with llvm-symbolizer --inlining on %s: %d of %d (%.1f%%), %d "
		"with inlined frames\n",
		module, ok, n, 100.0 * ok / n, *inlined);
	return (double)ok / n;
}

/* [start, end) of the function <sym> of <bin> (nm -S) */
static void fn_range(const char *bin, const char *sym, unsigned long *start, unsigned long *end)
{
	char cmd[PATH_MAX + 64], *out, *p;
	unsigned long a, s;
	char name[512];

	*start = *end = 0;
	snprintf(cmd, sizeof(cmd), "nm -S '%s'", bin);
	out = tu_run(cmd, NULL);
	cr_assert_not_null(out);
	for (p = out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (sscanf(p, "%lx %lx %*c %511s", &a, &s, name) == 3 && !strcmp(name, sym)) {
			*start = a;
			*end = a + s;
		}
	free(out);
	cr_assert_gt(*end, *start, "%s not in %s", sym, bin);
}

Test(sym_agree, inline_workload_with_llvm_symbolizer)
{
	static const char *const fns[] = { "_Z5chainj", "_Z11with_lambdai", "main" };
	unsigned long *addrs = malloc(4096 * sizeof(*addrs)), s, e, a;
	char bin[PATH_MAX];
	int n = 0, inl;
	size_t i;

	if (system("command -v llvm-symbolizer >/dev/null 2>&1"))
		cr_skip_test("llvm-symbolizer is not installed (apt-get install llvm)");
	snprintf(bin, sizeof(bin), "%s", tu_path("workloads/inline_cxx"));
	for (i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		fn_range(bin, fns[i], &s, &e);
		for (a = s; a < e && n < 4096; a++)
			addrs[n++] = a;
	}
	cr_assert_gt(n, 200);
	cr_assert_geq(agreement(bin, addrs, n, &inl), 0.99);
	cr_assert_gt(inl, 50, "chain and with_lambda are mostly inlined code");
	free(addrs);
}

Test(sym_agree, libc_with_llvm_symbolizer)
{
	struct {
		unsigned long start, size;
	} *f = malloc(20000 * sizeof(*f));
	unsigned long addrs[300], a, sz;
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	char cmd[PATH_MAX + 64], *out, *p, type;
	int n = 0, i, inl;

	/* the functions of libc's symbol table (its debug file's, as nm finds it by build-id
	 * only through its path: read the dynamic one when it is not there) */
	const char *libc = own_libc_path();

	if (system("command -v llvm-symbolizer >/dev/null 2>&1"))
		cr_skip_test("llvm-symbolizer is not installed (apt-get install llvm)");
	if (!has_debug_file(libc))
		cr_skip_test("libc's debug file is not installed (apt-get install libc6-dbg)");
	snprintf(cmd, sizeof(cmd), "nm -S --defined-only -D %s", libc);
	out = tu_run(cmd, NULL);
	cr_assert_not_null(out);
	for (p = out; p && *p && n < 20000; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (sscanf(p, "%lx %lx %c", &a, &sz, &type) == 3 && (type == 'T' || type == 'W') &&
		    sz > 0) {
			f[n].start = a;
			f[n++].size = sz;
		}
	free(out);
	cr_assert_gt(n, 1000);
	for (i = 0; i < 300; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		addrs[i] = f[x % (uint64_t)n].start + (x >> 32) % f[x % (uint64_t)n].size;
	}
	free(f);
	cr_assert_geq(agreement(libc, addrs, 300, &inl), 0.99);
	cr_assert_gt(inl, 0);
}
