/*
 * test_sym_dies.c - function scopes read in one pass by sym_dies.c give the frames libdw's
 * walk gave: for addresses every few bytes of every unit of libc (its debug file), kperf-bpf
 * and the C++ workload, the inline frames (names, files, lines, first lines, ranges) and the
 * first line of the innermost function are the same both ways; and every unit of these files
 * is read by sym_dies.c (none left to libdw).
 */
#include <criterion/criterion.h>
#include <errno.h>

#include "sym/sym.h"
#include "symtest.h"

/* every frame of every <step>-th byte of the units of <path>, as text */
static char *frames_text(const char *path, unsigned step, size_t *naddr, unsigned *scanned,
			 unsigned *parsed)
{
	struct sym_file_ref ref = { .path = path, .open_path = path };
	struct sym_file *f = NULL;
	unsigned before, before_parsed;
	size_t len = 0, cap = 1 << 20, c;
	char *out = malloc(cap);

	cr_assert_not_null(out);
	*naddr = 0;
	SymResolverDestroy();
	sym_lock();
	cr_assert_eq(sym_file_get(&ref, KP_SYM_DWARF, &f), 0, "%s", path);
	cr_assert_eq(sym_file_dwarf(f), 0, "%s has DWARF", path);
	before = sym_inline_units_scanned();
	before_parsed = sym_inline_units_parsed();
	for (c = 0; c < f->ncus; c++) {
		uint64_t a;

		for (a = f->cus[c].start; a < f->cus[c].end; a += step) {
			struct sym_frame fr[SYM_MAX_INLINE];
			unsigned n = 0, i, decl = 0;
			int r = sym_dwarf_frames(f, a, fr, SYM_MAX_INLINE, &n);
			int rd = sym_dwarf_decl_line(f, a, &decl);

			cr_assert_neq(r, -ENOMEM);
			if (cap - len < 64 * 1024) {
				cap *= 2;
				out = realloc(out, cap);
				cr_assert_not_null(out);
			}
			len += (size_t)snprintf(out + len, cap - len, "%#lx %d %u %d %u",
						(unsigned long)a, r, n, rd, decl);
			for (i = 0; !r && i < n && cap - len > 2048; i++)
				len += (size_t)snprintf(out + len, cap - len,
							" | %s %s %s:%u %u [%#lx,%#lx)",
							fr[i].name ? fr[i].name : "-",
							fr[i].mangled ? fr[i].mangled : "-",
							fr[i].file ? fr[i].file : "-", fr[i].line,
							fr[i].decl_line, (unsigned long)fr[i].start,
							(unsigned long)fr[i].end);
			out[len++] = '\n';
			out[len] = '\0';
			(*naddr)++;
		}
	}
	*scanned = sym_inline_units_scanned() - before;
	*parsed = sym_inline_units_parsed() - before_parsed;
	sym_unlock();
	SymResolverDestroy();
	return out;
}

/* the lines of <a> and <b> that differ (the first few logged) */
static size_t differences(const char *a, const char *b)
{
	size_t d = 0;

	while (*a || *b) {
		size_t la = strcspn(a, "\n"), lb = strcspn(b, "\n");

		if (la != lb || memcmp(a, b, la)) {
			if (d++ < 5)
				cr_log_error("ours: %.*s\nlibdw: %.*s", (int)la, a, (int)lb, b);
		}
		a += la + (a[la] == '\n');
		b += lb + (b[lb] == '\n');
	}
	return d;
}

static void compare(const char *path, unsigned step, size_t min_addrs, unsigned min_units)
{
	size_t n1, n2;
	unsigned s1, s2, p1, p2;
	char *ours = frames_text(path, step, &n1, &s1, &p1), *theirs;

	sym_dies_force_libdw(true);
	theirs = frames_text(path, step, &n2, &s2, &p2);
	sym_dies_force_libdw(false);
	cr_log_info("%s: %zu addresses, %u units read in one pass", path, n1, s1);
	cr_assert_eq(n1, n2);
	cr_assert_geq(n1, min_addrs);
	cr_assert_geq(p1, min_units);
	cr_assert_eq(s1, p1, "every unit read by sym_dies.c");
	cr_assert_eq(p2, p1);
	cr_assert_eq(s2, 0, "none read by sym_dies.c when forced to libdw");
	cr_assert_eq(differences(ours, theirs), 0, "frames differ from libdw's walk");
	free(ours);
	free(theirs);
}

Test(sym_dies, inline_workload)
{
	compare(tu_path("workloads/inline_cxx"), 1, 500, 1);
}

Test(sym_dies, kperf_bpf_itself)
{
	compare(tu_path("bin/kperf-bpf"), 7, 20000, 90);
}

Test(sym_dies, libc_debug_file)
{
	const char *libc = own_libc_path();

	if (!has_debug_file(libc))
		cr_skip_test("libc's debug file is not installed (apt-get install libc6-dbg)");
	compare(libc, 13, 50000, 1900);
}
