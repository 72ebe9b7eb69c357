/*
 * freq.c - the current frequency of a CPU: cpufreq when the kernel has a driver for this
 * machine, else the kernel's own figure in /proc/cpuinfo (see topo.h for why not the msr PMU).
 * Read on every call: the value is meant to be the frequency now, not at first use.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "topo.h"

/* "2096.001" (MHz) -> Hz, exactly: no floating point, at most 6 decimals (1 Hz) */
static int parse_mhz(const char *s, int64_t *hz)
{
	int64_t v = 0, scale = 1000000;
	bool digits = false;

	while (*s == ' ' || *s == '\t')
		s++;
	for (; isdigit((unsigned char)*s); s++) {
		if (v > INT64_MAX / 10 / 1000000)
			return -ERANGE;
		v = v * 10 + (*s - '0');
		digits = true;
	}
	v *= 1000000;
	if (*s == '.') {
		for (s++; isdigit((unsigned char)*s); s++) {
			scale /= 10;
			v += (*s - '0') * scale;
			digits = true;
		}
	}
	if (!digits)
		return -EINVAL;
	*hz = v;
	return 0;
}

int kp_topo_cpuinfo_hz(const char *cpuinfo, int cpu, int64_t *hz)
{
	const char *line = cpuinfo;
	bool in_cpu = false;

	while (line && *line) {
		const char *nl = strchr(line, '\n'), *colon = strchr(line, ':');

		if (colon && nl && colon > nl)
			colon = NULL;
		if (!strncmp(line, "processor", 9) && colon) {
			char *end;
			long n = strtol(colon + 1, &end, 10);

			in_cpu = end != colon + 1 && n == cpu;
		} else if (in_cpu && !strncmp(line, "cpu MHz", 7) && colon) {
			return parse_mhz(colon + 1, hz) ? -ENOENT : 0;
		}
		line = nl ? nl + 1 : NULL;
	}
	return -ENOENT;
}

int kp_topo_cpufreq_hz(int cpu, int64_t *hz)
{
	char path[PATH_MAX];
	long khz;

	snprintf(path, sizeof(path), "%s/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq",
		 kp_sysfs(), cpu);
	if (kp_read_long(path, &khz) || khz <= 0)
		return -ENOENT;
	*hz = (int64_t)khz * 1000;
	return 0;
}

int kp_topo_cpu_freq(int cpu, int64_t *hz, const char **source)
{
	struct CpuTopology topo;
	char *buf;
	int err;

	err = kp_topo_cpu(cpu, &topo);
	if (err == -ENOENT) /* libkperf: no cpufreq file for that core */
		return kp_fail_recode(LIBPERF_ERR_CPUFREQ_NOT_CONFIG, err);
	if (err)
		return err;
	if (kp_topo_cpufreq_hz(cpu, hz) == 0) {
		if (source)
			*source = "cpufreq";
		return 0;
	}
	err = kp_read_file("/proc/cpuinfo", &buf, NULL);
	if (!err) {
		err = kp_topo_cpuinfo_hz(buf, cpu, hz);
		free(buf);
		if (!err) {
			if (source)
				*source = "cpuinfo";
			return 0;
		}
	}
	return kp_fail(LIBPERF_ERR_CPUFREQ_NOT_CONFIG, -ENOTSUP,
		       "the frequency of cpu %d is unknown: %s has no cpufreq driver "
		       "(cpu%d/cpufreq/scaling_cur_freq) and /proc/cpuinfo gives no \"cpu MHz\" "
		       "for it",
		       cpu, kp_sysfs(), cpu);
}
