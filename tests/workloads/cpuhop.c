/*
 * cpuhop - execs itself on CPU 1, then moves to CPU 0, maps libwl.so (dlopen) there and burns
 * CPU in its wl_lib_work for --ms N (default 300). The exec's COMM record and the library's
 * MMAP2 record land in the side-band buffers of two different CPUs: a reader that applies
 * them CPU by CPU instead of in time order drops the library's mapping (the exec, applied
 * after it, clears the process's mappings), and wl_lib_work resolves to [unknown].
 *
 *   cpuhop [--ms N]       (needs CPUs 0 and 1; exits 4 when it cannot pin itself)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static unsigned long long cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	char self[PATH_MAX], lib[PATH_MAX + 16], *slash;
	const char *ms = argc > 2 && !strcmp(argv[1], "--ms") ? argv[2] : "300";
	unsigned long long start;
	long (*work)(long);
	ssize_t n;
	void *h;

	if (!getenv("CPUHOP_HOPPED")) {
		if (pin(1))
			return 4;
		setenv("CPUHOP_HOPPED", "1", 1);
		execv("/proc/self/exe", (char *[]){ argv[0], "--ms", (char *)ms, NULL });
		return 5;
	}
	if (pin(0))
		return 4;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return 1;
	self[n] = '\0';
	slash = strrchr(self, '/');
	*slash = '\0';
	snprintf(lib, sizeof(lib), "%s/libwl.so", self);
	h = dlopen(lib, RTLD_NOW);
	if (!h)
		return 2;
	work = (long (*)(long))dlsym(h, "wl_lib_work");
	if (!work)
		return 3;
	start = cpu_ns();
	while (cpu_ns() - start < strtoull(ms, NULL, 10) * 1000000ULL)
		work(200000);
	return 0;
}
