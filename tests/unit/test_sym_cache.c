/*
 * test_sym_cache.c - the bounds of the resolver's file cache: files no process holds are kept
 * up to a number of files and bytes (least recently released out), files a process holds are
 * never dropped, and an evicted file is parsed again when a process maps it. Exact counts of
 * kp_sym_get_stats, no timing.
 */
#include <criterion/criterion.h>

#include "kperf/kperf.h"
#include "kperf/pcerrc.h"
#include "kperf/symbol.h"
#include "sym/sym.h"
#include "symtest.h"

static void fini(void)
{
	SymResolverDestroy();
}

TestSuite(sym_cache, .fini = fini, .timeout = 60);

Test(sym_cache, idle_files_never_exceed_the_bounds)
{
	struct sym_wl w[2];
	struct kp_sym_stats held, idle, again;
	unsigned i;

	for (i = 0; i < 2; i++)
		cr_assert_eq(swl_start(&w[i], "sym_hot"), 0);
	for (i = 0; i < 2; i++)
		cr_assert_eq(SymResolverRecordModuleNoDwarf(w[i].p.pid), 0, "%s", Perror());
	/* held by both processes: a bound of one file drops none of them */
	kp_sym_file_cache_bounds(1, 0);
	kp_sym_get_stats(&held);
	cr_assert_geq(held.files_cached, 4, "sym_hot, libwl.so, libc, ld.so (+ vdso)");
	cr_assert_eq(held.files_idle, 0);
	cr_assert_eq(held.files_evicted, 0);
	/* one process forgotten: the other holds the same files */
	FreeModuleData(w[0].p.pid);
	kp_sym_get_stats(&idle);
	cr_assert_eq(idle.files_idle, 0);
	cr_assert_eq(idle.files_cached, held.files_cached);
	/* both forgotten: one idle file stays, the others go */
	FreeModuleData(w[1].p.pid);
	kp_sym_get_stats(&idle);
	cr_assert_eq(idle.procs, 0);
	cr_assert_eq(idle.files_idle, 1);
	cr_assert_eq(idle.files_cached, 1);
	cr_assert_eq(idle.files_evicted, held.files_cached - 1);
	/* recorded again: the evicted files are parsed again, and resolve */
	cr_assert_eq(SymResolverRecordModuleNoDwarf(w[1].p.pid), 0, "%s", Perror());
	kp_sym_get_stats(&again);
	cr_assert_eq(again.files_parsed, held.files_parsed + held.files_cached - 1);
	cr_assert_eq(again.files_cached, held.files_cached);
	cr_assert_eq(again.files_idle, 0);
	cr_assert_str_eq(SymResolverMapAddr(w[1].p.pid, swl_addr(&w[1], "hot_loop"))->symbolName,
			 "hot_loop");
	cr_assert_str_eq(SymResolverMapAddr(w[1].p.pid, swl_addr(&w[1], "wl_lib_work"))->symbolName,
			 "wl_lib_work");
	for (i = 0; i < 2; i++)
		swl_stop(&w[i]);
}

Test(sym_cache, a_byte_bound_drops_every_idle_file)
{
	struct sym_wl w;
	struct kp_sym_stats before, after;

	cr_assert_eq(swl_start(&w, "sym_hot"), 0);
	cr_assert_eq(SymResolverRecordModuleNoDwarf(w.p.pid), 0, "%s", Perror());
	kp_sym_get_stats(&before);
	kp_sym_file_cache_bounds(1000, 1);
	FreeModuleData(w.p.pid);
	kp_sym_get_stats(&after);
	cr_assert_eq(after.files_idle, 0);
	cr_assert_eq(after.files_idle_bytes, 0);
	cr_assert_eq(after.files_cached, 0);
	cr_assert_eq(after.files_evicted, before.files_cached);
	swl_stop(&w);
}

Test(sym_cache, the_default_bounds_keep_a_process_files)
{
	struct sym_wl w;
	struct kp_sym_stats before, after;

	cr_assert_eq(swl_start(&w, "sym_hot"), 0);
	cr_assert_eq(SymResolverRecordModuleNoDwarf(w.p.pid), 0, "%s", Perror());
	kp_sym_get_stats(&before);
	FreeModuleData(w.p.pid);
	kp_sym_get_stats(&after);
	cr_assert_eq(after.files_idle, before.files_cached);
	cr_assert_gt(after.files_idle_bytes, 0);
	cr_assert_eq(after.files_evicted, 0);
	/* a file recorded by name is kept for the resolver's life, whatever the bounds */
	cr_assert_eq(SymResolverRecordElf(tu_path("workloads/sym_hot")), SUCCESS, "%s", Perror());
	kp_sym_file_cache_bounds(1000, 1);
	kp_sym_get_stats(&after);
	cr_assert_eq(after.files_idle, 0);
	cr_assert_eq(after.files_cached, 1);
	swl_stop(&w);
}
