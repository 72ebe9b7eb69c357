/*
 * unwind_table.c - the unwind table compiler (user/unwind) on real files: for each file, the
 * time to compile its table cold (CPU time, the best and the median of R runs, the file in the
 * page cache), rows, bytes, rows before merging, FDEs used, rows the BPF unwinder cannot
 * evaluate, signal rows; then a second kp_uw_get of the same file (answered from the cache).
 * Default files: libc, Debian's python3 (libpython linked in), libstdc++.
 *
 *   unwind_table [-r RUNS] [FILE...]
 *   unwind_table --dump FILE [FROM [TO]]   the rows between ELF addresses FROM and TO (hex)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "unwind/unwind.h"

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int dump(const char *path, uint64_t from, uint64_t to)
{
	struct kp_uw_table *t;
	char why[256], buf[96];
	uint32_t i;
	int err = kp_uw_compile_path(path, &t, why, sizeof(why));

	if (err) {
		fprintf(stderr, "%s: %s\n", path, why);
		return 1;
	}
	for (i = 0; i < t->nrows; i++) {
		uint64_t pc = t->base + t->rows[i].pc;

		if (pc < from || pc > to)
			continue;
		printf("%016llx %s%s%s\n", (unsigned long long)pc,
		       kp_uw_row_str(t, &t->rows[i], buf, sizeof(buf)),
		       t->rows[i].flags & KP_UW_F_PLT ? " plt" : "",
		       t->rows[i].flags & KP_UW_F_DEBUG ? " debug_frame" : "");
	}
	kp_uw_table_free(t);
	return 0;
}

static void bench_file(const char *path, int runs)
{
	double *ms = calloc((size_t)runs, sizeof(double)), t0, hit;
	struct kp_uw_table *t = NULL, *a, *b;
	char why[256];
	int i, err = 0;

	for (i = 0; i < runs && !err; i++) {
		kp_uw_table_free(t);
		t0 = cpu_ms();
		err = kp_uw_compile_path(path, &t, why, sizeof(why));
		ms[i] = cpu_ms() - t0;
	}
	if (err) {
		printf("%-40s cannot compile: %s\n", path, why);
		free(ms);
		return;
	}
	qsort(ms, (size_t)runs, sizeof(double), cmp_double);
	printf("%-40s cold %6.1f ms (best) %6.1f ms (median)  rows %7u  bytes %8zu (%zu/row)  "
	       "raw rows %7u  FDEs %5u+%u  not evaluable %u  signal %u  synthetic PLT %u\n",
	       path, ms[0], ms[runs / 2], t->nrows, (size_t)t->nrows * sizeof(*t->rows),
	       sizeof(*t->rows), t->stats.rows_raw, t->stats.fdes_eh, t->stats.fdes_debug,
	       t->stats.rows_expr, t->stats.rows_signal, t->stats.plt_synth);
	kp_uw_table_free(t);
	/* through the cache: the first get compiles, the second is a hit */
	a = kp_uw_get(path, &err, why, sizeof(why));
	t0 = cpu_ms();
	b = kp_uw_get(path, &err, why, sizeof(why));
	hit = cpu_ms() - t0;
	printf("%-40s cached: second get %.3f ms, same table: %s\n", "", hit,
	       a && a == b ? "yes" : "no");
	kp_uw_put(a);
	kp_uw_put(b);
	free(ms);
}

int main(int argc, char **argv)
{
	static const char *defaults[] = { "/lib/x86_64-linux-gnu/libc.so.6", "/usr/bin/python3",
					  "/lib/x86_64-linux-gnu/libstdc++.so.6", NULL };
	struct kp_uw_cache_stats cs;
	int runs = 11, i = 1;

	if (argc >= 3 && !strcmp(argv[1], "--dump"))
		return dump(argv[2], argc > 3 ? strtoull(argv[3], NULL, 16) : 0,
			    argc > 4 ? strtoull(argv[4], NULL, 16) : UINT64_MAX);
	if (argc >= 3 && !strcmp(argv[1], "-r")) {
		runs = atoi(argv[2]);
		if (runs < 1)
			runs = 1;
		i = 3;
	}
	printf("unwind tables: compile time (CPU) and size; target libc <= 50 ms, <= 16 bytes/row\n");
	if (i >= argc) {
		for (const char **p = defaults; *p; p++)
			if (access(*p, R_OK) == 0)
				bench_file(*p, runs);
	}
	for (; i < argc; i++)
		bench_file(argv[i], runs);
	kp_uw_cache_stats(&cs);
	printf("cache: %llu tables compiled, %llu hits, %llu rows, %llu bytes held\n",
	       (unsigned long long)cs.compiled, (unsigned long long)cs.hits,
	       (unsigned long long)cs.rows, (unsigned long long)cs.bytes);
	kp_uw_cache_trim();
	return 0;
}
