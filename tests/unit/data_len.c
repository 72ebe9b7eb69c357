/*
 * data_len.c - a caller's length for an array the library returned (issue 19): PmuDumpData
 * and PmuGetDevMetric refuse a length past the end of the array, a pointer into the middle
 * of a record, and an array freed already, instead of reading memory that is not theirs.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "kperf/kperf.h"
#include "pmu/pmu.h"

/* an array as PmuRead returns it, of <n> records */
static struct PmuData *array_of(int n)
{
	struct kp_data_builder *b = kp_data_builder_new();
	struct PmuData *d = NULL;
	int i;

	cr_assert_not_null(b);
	for (i = 0; i < n; i++) {
		struct PmuData r = { .evt = "cpu-clock",
				     .comm = "work",
				     .pid = 100 + i,
				     .tid = 100 + i,
				     .count = 1 };

		cr_assert_eq(kp_data_builder_add(b, &r, 0), 0);
	}
	cr_assert_eq(kp_data_builder_finish(b, &d), n);
	return d;
}

static char path[64];

static void setup(void)
{
	snprintf(path, sizeof(path), "/tmp/kperf-datalen-%d.txt", getpid());
	unlink(path);
}

static void teardown(void)
{
	unlink(path);
}

TestSuite(data_len, .init = setup, .fini = teardown);

Test(data_len, dump_refuses_a_length_past_the_end)
{
	struct PmuData *d = array_of(5);
	struct stat st;

	cr_assert_eq(PmuDumpData(d, 6, path, 0), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_PMU_DATA);
	cr_assert_str_eq(Perror(), "PmuDumpData: len 6 is more than the 5 records of pmuData");
	cr_assert_neq(stat(path, &st), 0, "nothing was written");
	cr_assert_eq(PmuDumpData(d + 2, 4, path, 0), -1);
	cr_assert_str_eq(Perror(), "PmuDumpData: len 4 goes past the end of the array pmuData "
				   "points into (3 records from there)");
	cr_assert_eq(PmuDumpData((struct PmuData *)((char *)d + 8), 1, path, 0), -1);
	cr_assert_str_eq(Perror(), "PmuDumpData: pmuData points into the middle of a record");
	/* what is there is fine */
	cr_assert_eq(PmuDumpData(d, 5, path, 0), 0, "%s", Perror());
	cr_assert_eq(PmuDumpData(d + 2, 3, path, 0), 0, "%s", Perror());
	PmuDataFree(d);
}

Test(data_len, dump_refuses_a_freed_array)
{
	struct PmuData *d = array_of(3), *to = NULL;

	PmuDataFree(d);
	cr_assert_eq(PmuDumpData(d, 3, path, 0), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_PMU_DATA);
	cr_assert_str_eq(Perror(), "PmuDumpData: pmuData was freed already (PmuDataFree)");
	cr_assert_eq(PmuDumpData(d + 1, 1, path, 0), -1);
	cr_assert_eq(PmuAppendData(d, &to), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_PMU_DATA);
}

Test(data_len, dev_metric_refuses_a_length_past_the_end)
{
	struct PmuDeviceAttr a = { .metric = PMU_DDR_READ_BW };
	struct PmuDeviceData *out = NULL;
	struct PmuData *d = array_of(4);

	cr_assert_eq(PmuGetDevMetric(d, 1000000, &a, 1, &out), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_PMU_DATA);
	cr_assert_str_eq(Perror(),
			 "PmuGetDevMetric: len 1000000 is more than the 4 records of pmuData");
	cr_assert_null(out);
	PmuDataFree(d);
	cr_assert_eq(PmuGetDevMetric(d, 4, &a, 1, &out), -1);
	cr_assert_str_eq(Perror(), "PmuGetDevMetric: pmuData was freed already (PmuDataFree)");
}

/* the kept blocks of freed arrays are bounded: many frees, each still recognised while kept */
Test(data_len, many_frees)
{
	struct PmuData *d[200];
	int i;

	for (i = 0; i < 200; i++)
		d[i] = array_of(1 + i % 7);
	for (i = 0; i < 200; i++)
		PmuDataFree(d[i]);
	cr_assert_eq(PmuDumpData(d[199], 1, path, 0), -1, "the last freed is known");
	cr_assert_eq(kp_data_check(d[199], 1, "x"), -EINVAL);
	/* a caller's own array is not checked, whatever its length */
	{
		struct PmuData own[2] = { { .evt = "e", .comm = "c" },
					  { .evt = "e", .comm = "c" } };

		cr_assert_eq(PmuDumpData(own, 2, path, 0), 0, "%s", Perror());
	}
}
