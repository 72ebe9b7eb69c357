/*
 * test_unwind.c - the unwind table compiler (user/unwind): every row readelf
 * --debug-dump=frames-interp prints for the -O2 -fomit-frame-pointer workload (nofp, its
 * .eh_frame; nofp_dbg, its .debug_frame) is the row kp_uw_lookup finds at that address; the
 * first instruction of each function, the big frame of path_a, _start's end, the PLT, gaps;
 * libc's signal trampoline (the kernel's sigcontext layout); arm64 rules (a fixture built with
 * the cross assembler); the build-id cache; every bad input with its sentence.
 */
#include <criterion/criterion.h>
#include <elf.h>
#include <limits.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/ucontext.h>

#include "testutil.h"
#include "unwind/unwind.h"

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"

TestSuite(unwind, .timeout = 60);

static struct kp_uw_table *compile(const char *path)
{
	struct kp_uw_table *t = NULL;
	char why[256];
	int err = kp_uw_compile_path(path, &t, why, sizeof(why));

	cr_assert_eq(err, 0, "%s: %s", path, why);
	return t;
}

/* the address of symbol <name> in <file> (nm), 0 when absent */
static uint64_t nm_addr(const char *file, const char *name)
{
	char cmd[PATH_MAX + 128], *out;
	uint64_t a = 0;

	snprintf(cmd, sizeof(cmd), "nm '%s' | awk '$3 == \"%s\" { print $1 }'", file, name);
	out = tu_run(cmd, NULL);
	if (out && *out)
		a = strtoull(out, NULL, 16);
	free(out);
	return a;
}

/* readelf's "rsp+8" / "x29+32" into rule and offset; false for "exp" and the like */
static bool parse_cfa(const char *s, const char *sp, const char *fp, uint8_t *rule, int *off)
{
	size_t n;

	if (!strncmp(s, sp, n = strlen(sp)) && (s[n] == '+' || s[n] == '-'))
		*rule = KP_UW_CFA_SP;
	else if (!strncmp(s, fp, n = strlen(fp)) && (s[n] == '+' || s[n] == '-'))
		*rule = KP_UW_CFA_FP;
	else
		return false;
	*off = atoi(s + n);
	return true;
}

/* the FP or RA column as our rule: "u" (no rule, or undefined) is <u>, "c-16" at CFA-16 */
static bool parse_reg(const char *s, uint8_t u, uint8_t *rule, int *off)
{
	*off = 0;
	if (!strcmp(s, "u")) {
		*rule = u;
		return true;
	}
	if (s[0] == 'c' && (s[1] == '-' || s[1] == '+')) {
		*rule = KP_UW_REG_AT_CFA;
		*off = atoi(s + 1);
		return true;
	}
	return false;
}

struct cmp_counts {
	unsigned rows, exp, fdes;
};

/* Every row of readelf's interpretation of <file> against the table: x86_64 registers. Rows
 * of a .debug_frame FDE that an .eh_frame FDE also covers are not compared (the table takes
 * .eh_frame's). */
static struct cmp_counts compare_readelf(const char *file, const struct kp_uw_table *t)
{
	char cmd[PATH_MAX + 64], *out, *line, *save = NULL;
	char cols[16][16];
	int ncols = 0, fp_col = -1, ra_col = -1;
	bool debug = false;
	uint64_t fde_start = 0, fde_end = 0;
	uint64_t eh_lo[4096], eh_hi[4096];
	unsigned neh = 0;
	struct cmp_counts c = { 0 };

	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=frames-interp '%s' 2>/dev/null", file);
	out = tu_run(cmd, NULL);
	cr_assert(out && strstr(out, "FDE"), "readelf printed no FDE for %s", file);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *p;
		uint64_t loc;

		if (strstr(line, "Contents of the .debug_frame")) {
			debug = true;
			continue;
		}
		if ((p = strstr(line, " FDE cie=")) && (p = strstr(p, "pc="))) {
			fde_start = strtoull(p + 3, &p, 16);
			fde_end = strtoull(p + 2, NULL, 16);
			ncols = 0;
			if (!debug && neh < 4096) {
				eh_lo[neh] = fde_start;
				eh_hi[neh++] = fde_end;
			}
			c.fdes++;
			continue;
		}
		if (strstr(line, " CIE ")) {
			fde_start = fde_end = 0; /* the CIE's own rows are not code */
			continue;
		}
		if (strstr(line, "LOC")) {
			char *tok, *s2 = NULL, copy[512];

			snprintf(copy, sizeof(copy), "%s", line);
			ncols = 0;
			fp_col = ra_col = -1;
			for (tok = strtok_r(copy, " ", &s2); tok && ncols < 16;
			     tok = strtok_r(NULL, " ", &s2)) {
				snprintf(cols[ncols], sizeof(cols[0]), "%s", tok);
				if (!strcmp(tok, "rbp"))
					fp_col = ncols;
				if (!strcmp(tok, "ra"))
					ra_col = ncols;
				ncols++;
			}
			continue;
		}
		if (!ncols || !fde_end || strlen(line) < 17 || line[16] != ' ')
			continue;
		loc = strtoull(line, &p, 16);
		if (p != line + 16 || loc < fde_start || loc >= fde_end)
			continue;
		{
			char vals[16][32], *tok, *s2 = NULL;
			int n = 0, off, want_off;
			const struct kp_uw_row *r = kp_uw_lookup(t, loc);
			uint8_t rule;
			bool covered = false;
			unsigned i;

			for (tok = strtok_r(line, " ", &s2); tok && n < 16;
			     tok = strtok_r(NULL, " ", &s2))
				snprintf(vals[n++], sizeof(vals[0]), "%s", tok);
			if (debug)
				for (i = 0; i < neh; i++)
					if (loc >= eh_lo[i] && loc < eh_hi[i])
						covered = true;
			if (covered)
				continue;
			cr_assert(r, "%s: no row at %#lx", file, (unsigned long)loc);
			cr_assert_eq(!!(r->flags & KP_UW_F_DEBUG), debug, "%#lx: from %s",
				     (unsigned long)loc, debug ? ".debug_frame" : ".eh_frame");
			c.rows++;
			/* the RA first: "u" there is the outermost frame */
			cr_assert(ra_col > 0 && ra_col < n);
			if (!strcmp(vals[ra_col], "u")) {
				cr_assert_eq(r->cfa, KP_UW_CFA_END,
					     "%#lx: RA undefined, not the end", (unsigned long)loc);
				continue;
			}
			cr_assert(parse_reg(vals[ra_col], KP_UW_REG_SAME, &rule, &want_off));
			cr_assert_eq(r->ra, rule, "%#lx: RA rule %d, readelf %s",
				     (unsigned long)loc, r->ra, vals[ra_col]);
			cr_assert_eq(r->ra_off, want_off, "%#lx", (unsigned long)loc);
			if (parse_cfa(vals[1], "rsp", "rbp", &rule, &off)) {
				cr_assert_eq(r->cfa, rule, "%#lx: CFA rule %d, readelf %s",
					     (unsigned long)loc, r->cfa, vals[1]);
				cr_assert_eq(r->cfa_off, off, "%#lx: CFA %d, readelf %s",
					     (unsigned long)loc, r->cfa_off, vals[1]);
			} else {
				cr_assert_str_eq(vals[1], "exp", "%#lx", (unsigned long)loc);
				cr_assert(r->cfa != KP_UW_CFA_SP && r->cfa != KP_UW_CFA_FP &&
						  r->cfa != KP_UW_CFA_NONE,
					  "%#lx: readelf exp, table rule %d", (unsigned long)loc,
					  r->cfa);
				c.exp++;
			}
			/* rbp: no column or "u" is unchanged (libdw: callee-saved, same value) */
			if (r->cfa != KP_UW_CFA_PLT) {
				if (fp_col > 0 && fp_col < n) {
					cr_assert(parse_reg(vals[fp_col], KP_UW_REG_SAME, &rule,
							    &want_off),
						  "%#lx: rbp %s", (unsigned long)loc, vals[fp_col]);
				} else {
					rule = KP_UW_REG_SAME;
					want_off = 0;
				}
				cr_assert_eq(r->fp, rule, "%#lx: rbp rule %d", (unsigned long)loc,
					     r->fp);
				cr_assert_eq(r->fp_off, want_off, "%#lx", (unsigned long)loc);
			}
		}
	}
	free(out);
	return c;
}

Test(unwind, eh_frame_rows_are_readelfs)
{
	struct kp_uw_table *t = compile(tu_path("workloads/nofp"));
	struct cmp_counts c = compare_readelf(tu_path("workloads/nofp"), t);

	/* its twelve functions, main, the crt files' and the PLT's FDEs */
	cr_assert_geq(c.fdes, 14, "%u FDEs", c.fdes);
	cr_assert_geq(c.rows, 40, "%u rows compared", c.rows);
	cr_assert_geq(c.exp, 1, "the PLT's expression row");
	cr_assert_eq(t->machine, EM_X86_64);
	cr_assert_eq(sizeof(struct kp_uw_row), 16);
	cr_assert_eq(t->stats.fdes_debug, 0);
	kp_uw_table_free(t);
}

Test(unwind, debug_frame_rows_are_readelfs)
{
	const char *f = tu_path("workloads/nofp_dbg");
	struct kp_uw_table *t = compile(f);
	struct cmp_counts c = compare_readelf(f, t);
	const struct kp_uw_row *r = kp_uw_lookup(t, nm_addr(f, "leaf_a"));

	cr_assert_geq(t->stats.fdes_debug, 12, "%u FDEs from .debug_frame", t->stats.fdes_debug);
	cr_assert_geq(c.rows, 40, "%u rows compared", c.rows);
	cr_assert(r && (r->flags & KP_UW_F_DEBUG) && r->cfa == KP_UW_CFA_SP && r->cfa_off == 8);
	kp_uw_table_free(t);
}

Test(unwind, first_instruction_big_frame_start_plt_and_gaps)
{
	const char *f = tu_path("workloads/nofp");
	struct kp_uw_table *t = compile(f);
	static const char *fns[] = { "main",   "run_all", "path_a",    "leaf_a",
				     "path_b", "mid_b",	  "path_sort", "sort_cmp" };
	const struct kp_uw_row *r;
	uint64_t a, plt;
	unsigned i;
	char buf[96];

	/* at a function's first instruction the call has just pushed the return address */
	for (i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		a = nm_addr(f, fns[i]);
		cr_assert(a, "%s not in nm", fns[i]);
		r = kp_uw_lookup(t, a);
		cr_assert(r, "%s", fns[i]);
		cr_assert_str_eq(kp_uw_row_str(t, r, buf, sizeof(buf)), "rsp+8 s c-8", "%s: %s",
				 fns[i], buf);
	}
	/* path_a's 4 KiB array: a row with the CFA more than 4096 bytes above rsp */
	a = nm_addr(f, "path_a");
	for (i = 0, r = NULL; i < 64; i++) {
		const struct kp_uw_row *x = kp_uw_lookup(t, a + i);

		if (x && x->cfa == KP_UW_CFA_SP && x->cfa_off > 4096)
			r = x;
	}
	cr_assert(r, "no row of path_a with its big frame");
	/* _start: the return address is undefined, the end of every stack */
	r = kp_uw_lookup(t, nm_addr(f, "_start"));
	cr_assert(r && r->cfa == KP_UW_CFA_END);
	/* the PLT: its first bytes run with the index pushed, then the binutils expression */
	{
		char cmd[PATH_MAX + 96], *out;

		snprintf(cmd, sizeof(cmd), "readelf -SW '%s' | awk '$2 == \".plt\" { print $4 }'",
			 f);
		out = tu_run(cmd, NULL);
		plt = strtoull(out, NULL, 16);
		free(out);
	}
	cr_assert(plt, "no .plt in %s", f);
	cr_assert_str_eq(kp_uw_row_str(t, kp_uw_lookup(t, plt), buf, sizeof(buf)), "rsp+16 s c-8");
	cr_assert_str_eq(kp_uw_row_str(t, kp_uw_lookup(t, plt + 6), buf, sizeof(buf)),
			 "rsp+24 s c-8");
	cr_assert_str_eq(kp_uw_row_str(t, kp_uw_lookup(t, plt + 16 + 11), buf, sizeof(buf)),
			 "plt(rsp+8,11) s c-8");
	/* outside every FDE: nothing, or a NONE row */
	cr_assert_null(kp_uw_lookup(t, 0));
	cr_assert_null(kp_uw_lookup(t, t->end));
	r = kp_uw_lookup(t, nm_addr(f, "_init"));
	cr_assert(!r || r->cfa == KP_UW_CFA_NONE, "_init has no FDE: %s",
		  r ? kp_uw_row_str(t, r, buf, sizeof(buf)) : "");
	/* merged: no two neighbours with the same rules, pcs strictly increasing */
	for (i = 1; i < t->nrows; i++) {
		cr_assert_gt(t->rows[i].pc, t->rows[i - 1].pc);
		cr_assert(memcmp((const char *)&t->rows[i] + 4, (const char *)&t->rows[i - 1] + 4,
				 12),
			  "rows %u and %u are equal", i - 1, i);
	}
	cr_assert_lt(t->nrows, t->stats.rows_raw + 1);
	kp_uw_table_free(t);
}

Test(unwind, libc_signal_trampoline)
{
	struct kp_uw_table *t = compile(LIBC);
	const struct kp_uw_row *sig = NULL;
	unsigned i, n = 0;

	for (i = 0; i < t->nrows; i++)
		if (t->rows[i].flags & KP_UW_F_SIGNAL) {
			sig = &t->rows[i];
			n++;
		}
#if defined(__x86_64__)
	cr_assert_eq(n, 1, "%u signal rows in libc (__restore_rt)", n);
	/* the interrupted rsp, rbp and rip are in the ucontext at rsp */
	cr_assert_eq(sig->cfa, KP_UW_CFA_SP_DEREF);
	cr_assert_eq(sig->cfa_off, offsetof(ucontext_t, uc_mcontext.gregs[REG_RSP]));
	cr_assert_eq(sig->fp, KP_UW_REG_AT_SP);
	cr_assert_eq(sig->fp_off, offsetof(ucontext_t, uc_mcontext.gregs[REG_RBP]));
	cr_assert_eq(sig->ra, KP_UW_REG_AT_SP);
	cr_assert_eq(sig->ra_off, offsetof(ucontext_t, uc_mcontext.gregs[REG_RIP]));
	cr_assert_eq(t->stats.rows_signal, 1);
#else
	/* arm64's glibc has no restorer of its own: the kernel returns through the vDSO's
	 * __kernel_rt_sigreturn, so libc carries no signal frame */
	(void)sig;
	cr_assert_eq(n, 0, "%u signal rows in arm64 libc", n);
	cr_assert_eq(t->stats.rows_signal, 0);
#endif
	cr_assert_gt(t->stats.fdes_eh, 1000);
	cr_assert_gt(t->build_id_len, 0);
	kp_uw_table_free(t);
}

Test(unwind, arm64_rules)
{
	const char *f = tu_path("tests/unwind_arm64.so");
	struct kp_uw_table *t;
	uint64_t leaf, framed;
	char buf[96];

	if (access(f, R_OK))
		cr_skip_test("%s not built (no aarch64-linux-gnu-as)", f);
	t = compile(f);
	leaf = nm_addr(f, "leaf");
	framed = nm_addr(f, "framed");
	cr_assert_eq(t->machine, EM_AARCH64);
	/* a leaf: the return address still in x30 */
	cr_assert_str_eq(kp_uw_row_str(t, kp_uw_lookup(t, leaf), buf, sizeof(buf)), "sp+0 s s");
	cr_assert_str_eq(kp_uw_row_str(t, kp_uw_lookup(t, framed), buf, sizeof(buf)), "sp+0 s s");
	cr_assert_str_eq(kp_uw_row_str(t, kp_uw_lookup(t, framed + 4), buf, sizeof(buf)),
			 "sp+32 c-32 c-24");
	cr_assert_str_eq(kp_uw_row_str(t, kp_uw_lookup(t, framed + 8), buf, sizeof(buf)),
			 "x29+32 c-32 c-24");
	cr_assert_str_eq(kp_uw_row_str(t, kp_uw_lookup(t, framed + 16), buf, sizeof(buf)),
			 "sp+0 s s");
	/* the PLT no FDE covers: synthetic, SP and x30 untouched by a stub */
	cr_assert_eq(t->stats.plt_synth, 1);
	cr_assert_str_eq(kp_uw_row_str(t, &t->rows[0], buf, sizeof(buf)), "sp+0 s s");
	cr_assert(t->rows[0].flags & KP_UW_F_PLT);
	kp_uw_table_free(t);
}

Test(unwind, cache_by_build_id)
{
	char dir[] = "/tmp/kperf-unwind-XXXXXX", copy[PATH_MAX], cmd[2 * PATH_MAX], why[256];
	struct kp_uw_cache_stats before, after;
	struct kp_uw_table *a, *b, *c;
	int err;

	cr_assert(mkdtemp(dir));
	snprintf(copy, sizeof(copy), "%s/libc-copy.so", dir);
	snprintf(cmd, sizeof(cmd), "cp %s %s", LIBC, copy);
	cr_assert_eq(system(cmd), 0);
	kp_uw_cache_stats(&before);
	a = kp_uw_get(LIBC, &err, why, sizeof(why));
	cr_assert(a, "%s", why);
	b = kp_uw_get(LIBC, &err, why, sizeof(why));
	c = kp_uw_get(copy, &err, why, sizeof(why)); /* another path, the same build-id */
	kp_uw_cache_stats(&after);
	cr_assert_eq(a, b);
	cr_assert_eq(a, c);
	cr_assert_leq(after.compiled - before.compiled, 1);
	cr_assert_geq(after.hits - before.hits, 2);
	cr_assert_geq(after.bytes, (uint64_t)a->nrows * 16);
	kp_uw_put(a);
	kp_uw_put(b);
	kp_uw_put(c);
	kp_uw_cache_trim();
	kp_uw_cache_stats(&after);
	cr_assert_eq(after.tables, 0);
	unlink(copy);
	rmdir(dir);
}

/* a library rebuilt at the same path (rewritten in place: the same inode; or replaced: a new
 * one) gets its new table, never the old one's; a file unchanged since long is found again
 * from its stat() alone */
Test(unwind, cache_follows_a_rebuilt_library)
{
	char dir[] = "/tmp/kperf-unwind-XXXXXX", lib[PATH_MAX], cmd[6 * PATH_MAX], why[256];
	char a_path[PATH_MAX], b_path[PATH_MAX];
	struct kp_uw_cache_stats before, after;
	struct kp_uw_table *a, *b, *t1, *t2, *t3;
	struct stat st1, st2;
	int err;

	snprintf(a_path, sizeof(a_path), "%s", tu_path("workloads/libnofpdl.so"));
	snprintf(b_path, sizeof(b_path), "%s", tu_path("workloads/libwl.so"));
	a = kp_uw_get(a_path, &err, why, sizeof(why));
	b = kp_uw_get(b_path, &err, why, sizeof(why));
	cr_assert(a && b, "%s", why);
	cr_assert(a->build_id_len && b->build_id_len);
	cr_assert(a->build_id_len != b->build_id_len ||
		  memcmp(a->build_id, b->build_id, a->build_id_len));
	cr_assert(mkdtemp(dir));
	snprintf(lib, sizeof(lib), "%s/libx.so", dir);
	snprintf(cmd, sizeof(cmd), "cp %s %s", a_path, lib);
	cr_assert_eq(system(cmd), 0);
	t1 = kp_uw_get(lib, &err, why, sizeof(why));
	cr_assert_eq(t1, a, "%s", why); /* its build-id: a's table */
	cr_assert_eq(stat(lib, &st1), 0);
	/* rebuilt in place, at once (the same inode; its times maybe within one tick) */
	snprintf(cmd, sizeof(cmd), "cat %s > %s", b_path, lib);
	cr_assert_eq(system(cmd), 0);
	cr_assert_eq(stat(lib, &st2), 0);
	cr_assert_eq(st1.st_ino, st2.st_ino);
	t2 = kp_uw_get(lib, &err, why, sizeof(why));
	cr_assert_eq(t2, b, "the library rewritten in place got %s table",
		     t2 == a ? "its old" : "another");
	/* replaced by a new file (a new inode) holding the first build again */
	snprintf(cmd, sizeof(cmd), "cp %s %s.new && mv %s.new %s", a_path, lib, lib, lib);
	cr_assert_eq(system(cmd), 0);
	kp_uw_cache_stats(&before);
	t3 = kp_uw_get(lib, &err, why, sizeof(why));
	kp_uw_cache_stats(&after);
	cr_assert_eq(t3, a);
	cr_assert_eq(after.compiled, before.compiled, "a build seen before is not compiled again");
	cr_assert_eq(after.stat_hits, before.stat_hits, "a new file is read, not trusted");
	/* libc, unchanged for long: the second time from its stat() */
	kp_uw_put(kp_uw_get(LIBC, &err, why, sizeof(why)));
	kp_uw_cache_stats(&before);
	kp_uw_put(kp_uw_get(LIBC, &err, why, sizeof(why)));
	kp_uw_cache_stats(&after);
	cr_assert_eq(after.stat_hits - before.stat_hits, 1);
	cr_assert_eq(after.compiled, before.compiled);
	kp_uw_put(t1);
	kp_uw_put(t2);
	kp_uw_put(t3);
	kp_uw_put(a);
	kp_uw_put(b);
	unlink(lib);
	rmdir(dir);
	kp_uw_cache_trim();
}

/* the tables no one holds are bounded: the least recently used go first; held ones stay */
Test(unwind, cache_is_bounded)
{
	char why[256];
	struct kp_uw_cache_stats st;
	struct kp_uw_table *a, *b, *c;
	int err;

	kp_uw_cache_trim();
	kp_uw_cache_bounds(1, 0);
	a = kp_uw_get(tu_path("workloads/libnofpdl.so"), &err, why, sizeof(why));
	b = kp_uw_get(tu_path("workloads/libwl.so"), &err, why, sizeof(why));
	c = kp_uw_get(tu_path("workloads/nofp"), &err, why, sizeof(why));
	cr_assert(a && b && c, "%s", why);
	kp_uw_cache_stats(&st);
	cr_assert_eq(st.tables, 3, "held tables are never dropped");
	kp_uw_put(a); /* the oldest */
	kp_uw_put(c);
	kp_uw_cache_stats(&st);
	cr_assert_eq(st.idle, 1);
	cr_assert_eq(st.tables, 2);
	cr_assert_eq(st.evicted, 1);
	/* the one kept is the one used last */
	c = kp_uw_get(tu_path("workloads/nofp"), &err, why, sizeof(why));
	kp_uw_cache_stats(&st);
	cr_assert_eq(st.evicted, 1, "nofp's table was kept");
	kp_uw_put(c);
	kp_uw_put(b);
	kp_uw_cache_stats(&st);
	cr_assert_eq(st.tables, 1);
	kp_uw_cache_bounds(0, 0);
	kp_uw_cache_trim();
	kp_uw_cache_stats(&st);
	cr_assert_eq(st.tables, 0);
	cr_assert_eq(st.idents, 0, "identities go with their tables");
}

/* the key of a file (what the loader finds a placed table by) is the key of its table, had
 * without compiling: from its build-id, from a stat() once the file is known */
Test(unwind, key_of_a_file_without_compiling)
{
	struct kp_uw_key k1, k2, kt, other;
	struct kp_uw_cache_stats st0, st;
	struct kp_uw_table *t;
	char why[256];
	int err;

	kp_uw_cache_trim();
	kp_uw_cache_stats(&st0);
	cr_assert_eq(kp_uw_key_of(tu_path("workloads/libwl.so"), &k1), 0);
	kp_uw_cache_stats(&st);
	cr_assert_eq(st.compiled, st0.compiled, "no compile for a key");
	cr_assert_gt(k1.idlen, 0, "the workloads are linked with a build-id");
	t = kp_uw_get(tu_path("workloads/libwl.so"), &err, why, sizeof(why));
	cr_assert_not_null(t, "%s", why);
	kp_uw_key_of_table(t, &kt);
	cr_assert(kp_uw_key_eq(&k1, &kt));
	cr_assert_eq(kp_uw_key_of(tu_path("workloads/libwl.so"), &k2), 0);
	cr_assert(kp_uw_key_eq(&k2, &kt));
	cr_assert_eq(kp_uw_key_of(tu_path("workloads/nofp"), &other), 0);
	cr_assert_not(kp_uw_key_eq(&other, &kt));
	cr_assert_eq(kp_uw_key_of("/nonexistent/libx.so", &other), -ENOENT);
	kp_uw_put(t);
}

/* <path> must fail with <err> and a sentence containing <want> */
static void bad(const char *path, int want_err, const char *want)
{
	struct kp_uw_table *t = NULL;
	char why[256];
	int err = kp_uw_compile_path(path, &t, why, sizeof(why));

	cr_assert_eq(err, want_err, "%s: %d (%s)", path, err, why);
	cr_assert_null(t);
	cr_assert(strstr(why, want), "%s: \"%s\" lacks \"%s\"", path, why, want);
	t = kp_uw_get(path, &err, why, sizeof(why));
	cr_assert_null(t);
	cr_assert_eq(err, want_err);
	cr_assert(strstr(why, want), "kp_uw_get %s: \"%s\"", path, why);
}

Test(unwind, bad_input)
{
	char dir[] = "/tmp/kperf-unwind-XXXXXX", p[PATH_MAX], cmd[3 * PATH_MAX];
	char wl[PATH_MAX];
	struct kp_uw_table *t, *s;

	snprintf(wl, sizeof(wl), "%s", tu_path("workloads/nofp"));
	cr_assert(mkdtemp(dir));
	bad("/nonexistent/libfoo.so", -ENOENT, "No such file");
	bad(dir, -EISDIR, "not a regular file");
	snprintf(p, sizeof(p), "%s/text", dir);
	snprintf(cmd, sizeof(cmd), "echo 'not an ELF' > %s", p);
	cr_assert_eq(system(cmd), 0);
	bad(p, -ENOEXEC, "not an ELF file");
	/* no call-frame information at all */
	snprintf(p, sizeof(p), "%s/noeh", dir);
	snprintf(cmd, sizeof(cmd),
		 "objcopy --remove-section .eh_frame --remove-section .eh_frame_hdr "
		 "--remove-section .debug_frame %s %s",
		 wl, p);
	cr_assert_eq(system(cmd), 0);
	bad(p, -ENOENT, "no .eh_frame and no .debug_frame");
	/* truncated in the middle: the section headers are gone */
	snprintf(p, sizeof(p), "%s/trunc", dir);
	snprintf(cmd, sizeof(cmd), "head -c 4000 %s > %s", wl, p);
	cr_assert_eq(system(cmd), 0);
	bad(p, -EINVAL, "truncated or stripped of its section headers (4000 bytes)");
	/* another machine: a BPF object */
	bad(tu_path("bpf/sample.bpf.o"), -ENOTSUP, "unwind tables are for x86_64 and arm64");
	/* stripped: .eh_frame stays, the same table */
	snprintf(p, sizeof(p), "%s/stripped", dir);
	snprintf(cmd, sizeof(cmd), "strip --strip-all -o %s %s", p, wl);
	cr_assert_eq(system(cmd), 0);
	t = compile(wl);
	s = compile(p);
	cr_assert_eq(t->nrows, s->nrows);
	cr_assert_eq(memcmp(t->rows, s->rows, t->nrows * sizeof(*t->rows)), 0);
	kp_uw_table_free(t);
	kp_uw_table_free(s);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}
