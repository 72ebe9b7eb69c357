/*
 * test_sym_lines.c - the line tables read by sym_lines.c give libdw's answer for every row:
 * each row address of every unit, the byte before it and the byte after it, resolved both
 * ways (file name and line, or no row), and every file of every table; and every unit of
 * these files is read by sym_lines.c itself (none left to libdw). Also with every table
 * merge-sorted (the path of sequences that overlap, which these files rarely take).
 */
#include <criterion/criterion.h>
#include <elfutils/libdw.h>
#include <errno.h>

#include "sym/sym.h"
#include "symtest.h"

struct tally {
	size_t units, rows, checked, ours, differ;
};

/* libdw's answer at <addr>: 0 with file/line, or -ENOENT */
static int libdw_line(Dwarf_Die *cu, uint64_t addr, const char **file, int *line)
{
	Dwarf_Line *l = dwarf_getsrc_die(cu, addr);

	*file = NULL;
	*line = 0;
	if (!l || dwarf_lineno(l, line))
		return -ENOENT;
	*file = dwarf_linesrc(l, NULL, NULL);
	return 0;
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static void compare_unit(struct sym_file *f, Dwarf_Die *cu, struct tally *t)
{
	Dwarf_Lines *lines;
	Dwarf_Files *files;
	size_t nl, nf, i, k;
	const char *ours_file;
	int r;

	t->units++;
	r = sym_lines_find(f, cu, 0, &ours_file, &(int){ 0 });
	cr_assert_neq(r, -ENOMEM);
	if (r != -ENOTSUP)
		t->ours++;
	if (dwarf_getsrclines(cu, &lines, &nl)) {
		cr_assert(r == -ENOENT || r == -ENOTSUP, "unit %#lx: no table for libdw",
			  (unsigned long)dwarf_dieoffset(cu));
		return;
	}
	for (i = 0; i < nl; i++) {
		Dwarf_Addr a;

		cr_assert_eq(dwarf_lineaddr(dwarf_onesrcline(lines, i), &a), 0);
		t->rows++;
		for (k = 0; k < 3; k++) {
			uint64_t addr = a + k - 1;
			const char *lf, *of;
			int ll, ol, lr = libdw_line(cu, addr, &lf, &ll);
			int orr = sym_lines_find(f, cu, addr, &of, &ol);

			if (orr == -ENOTSUP)
				continue;
			t->checked++;
			if ((lr == 0) != (orr == 0) || (!lr && (ll != ol || !same_str(lf, of)))) {
				if (t->differ++ < 10)
					cr_log_error("%#lx: libdw %s:%d (%d), ours %s:%d (%d)",
						     (unsigned long)addr, lf ? lf : "-", ll, lr,
						     of ? of : "-", ol, orr);
			}
		}
	}
	if (dwarf_getsrcfiles(cu, &files, &nf) == 0)
		for (i = 0; i < nf + 2; i++) {
			const char *lf = dwarf_filesrc(files, i, NULL, NULL), *of;
			int orr = sym_lines_file(f, cu, i, &of);

			if (orr == -ENOTSUP)
				continue;
			if (!same_str(lf, of) && t->differ++ < 10)
				cr_log_error("file %zu: libdw %s, ours %s", i, lf ? lf : "-",
					     of ? of : "-");
		}
}

static void compare_file(const char *path, struct tally *t)
{
	struct sym_file_ref ref = { .path = path, .open_path = path };
	struct sym_file *f = NULL;
	Dwarf_Off off = 0, next;
	size_t hsize;

	memset(t, 0, sizeof(*t));
	SymResolverDestroy();
	sym_lock();
	cr_assert_eq(sym_file_get(&ref, KP_SYM_DWARF, &f), 0, "%s", path);
	cr_assert_eq(sym_file_dwarf(f), 0, "%s has DWARF", path);
	while (dwarf_nextcu(f->dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;

		if (dwarf_offdie(f->dw, off + hsize, &cu))
			compare_unit(f, &cu, t);
		off = next;
	}
	sym_unlock();
	SymResolverDestroy();
	cr_log_info("%s: %zu units (%zu read here), %zu rows, %zu lookups compared", path, t->units,
		    t->ours, t->rows, t->checked);
}

Test(sym_lines, inline_workload_in_place)
{
	struct tally t;

	compare_file(tu_path("workloads/inline_cxx"), &t);
	cr_assert_gt(t.rows, 100);
	cr_assert_eq(t.ours, t.units, "every unit read by sym_lines.c");
	cr_assert_eq(t.checked, 3 * t.rows);
	cr_assert_eq(t.differ, 0, "%zu lookups differ from libdw's", t.differ);
}

Test(sym_lines, kperf_bpf_itself)
{
	struct tally t;

	compare_file(tu_path("bin/kperf-bpf"), &t);
	cr_assert_gt(t.units, 50);
	cr_assert_eq(t.ours, t.units, "every unit read by sym_lines.c");
	cr_assert_eq(t.differ, 0, "%zu lookups differ from libdw's", t.differ);
}

Test(sym_lines, libc_debug_file_inflated_both_ways)
{
	const char *libc = own_libc_path();
	struct tally t;

	if (!has_debug_file(libc))
		cr_skip_test("libc's debug file is not installed (apt-get install libc6-dbg)");
	compare_file(libc, &t);
	cr_assert_gt(t.units, 1000);
	cr_assert_eq(t.ours, t.units, "every unit read by sym_lines.c");
	cr_assert_eq(t.checked, 3 * t.rows);
	cr_assert_eq(t.differ, 0, "%zu lookups differ from libdw's", t.differ);
	sym_dwarf_set_slow_inflate(true); /* the image inflated by libelf's zlib */
	compare_file(libc, &t);
	sym_dwarf_set_slow_inflate(false);
	cr_assert_eq(t.differ, 0, "%zu lookups differ from libdw's (zlib)", t.differ);
}

Test(sym_lines, every_table_merge_sorted)
{
	const char *libc = own_libc_path();
	struct tally t;

	sym_lines_force_full_sort(true);
	compare_file(tu_path("bin/kperf-bpf"), &t);
	cr_assert_eq(t.ours, t.units);
	cr_assert_eq(t.differ, 0, "%zu lookups differ from libdw's", t.differ);
	if (has_debug_file(libc)) {
		compare_file(libc, &t);
		cr_assert_eq(t.ours, t.units);
		cr_assert_eq(t.differ, 0, "%zu lookups differ from libdw's (libc)", t.differ);
	}
	sym_lines_force_full_sort(false);
}

Test(sym_lines, forced_to_libdw)
{
	struct tally t;

	sym_lines_force_libdw(true);
	compare_file(tu_path("workloads/inline_cxx"), &t);
	sym_lines_force_libdw(false);
	cr_assert_gt(t.units, 0);
	cr_assert_eq(t.ours, 0, "no unit read by sym_lines.c");
	cr_assert_eq(t.checked, 0);
}
