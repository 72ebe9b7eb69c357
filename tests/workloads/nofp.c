/*
 * nofp - a call tree built the way distributions build (-O2 -fomit-frame-pointer, .eh_frame
 * present; -fno-optimize-sibling-calls so every call below stays a call): the workload of the
 * .eh_frame unwinder's tests (user/unwind, the BPF unwinder). The Makefile builds it with
 * those flags, not the workloads' frame pointers.
 *
 *   main -> run_all -> path_a -> leaf_a          (about 4/10 of the work)
 *                   -> path_b -> mid_b -> leaf_b (about 3/10)
 *                   -> path_sort -> qsort (libc) -> sort_cmp -> leaf_cmp (about 3/10)
 *
 * Every function burns in its leaf; path_a keeps a large frame (an array on the stack) so its
 * CFA offset is big. With --signal, a SIGPROF handler (on_signal -> leaf_sig) also burns, so
 * stacks go through the signal frame. Prints "name=0xaddr" of each function, then "ready";
 * waits for a line on stdin (the go), runs for --ms N of CPU time, prints "done". With --dl, it
 * opens libnofpdl.so (next to it, also without frame pointers) after the go, prints "opened"
 * and waits for a second line on stdin (a profiler loads the new code's table meanwhile;
 * with --nowait it sleeps 300 ms instead), and burns in that library instead (main -> run_dl
 * -> dl_run -> dl_mid -> dl_leaf). With --clock, it reads the clock
 * in a loop instead (main -> run_clock -> clock_gettime: the vdso, and the kernel under it
 * where the clock source has no vdso reader).
 *
 * With --writes N, instead: main -> write_path, which writes a line to /dev/null N times
 * through stdio (fwrite, then fflush: libc's write() below, libc built as distributions build
 * it), the syscall stack tests' libc call path.
 *
 * With --naps N, instead: main -> nap_path -> nap_leaf, which sleeps 2 ms in nanosleep N times
 * (off the CPU in libc, built without frame pointers): the off-CPU stack tests' blocking call.
 * With --allocs N: main -> alloc_path -> alloc_leaf, which mallocs 4321 bytes and frees them N
 * times: memscope's allocation stacks (before the naps when both are given).
 *
 *   nofp [--ms N] [--signal] [--nowait] [--dl] [--clock] [--writes N] [--naps N] [--allocs N]
 */
#include <dlfcn.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static volatile unsigned long sink;

NOINLINE unsigned long leaf_a(unsigned long n)
{
	unsigned long x = 0, i;

	for (i = 0; i < n; i++)
		x += i * i ^ (x >> 3);
	return x;
}

NOINLINE unsigned long leaf_b(unsigned long n)
{
	unsigned long x = 1, i;

	for (i = 0; i < n; i++)
		x = x * 2862933555777941757ULL + i;
	return x;
}

NOINLINE unsigned long leaf_cmp(unsigned long a)
{
	unsigned long x = a, i;

	for (i = 0; i < 64; i++)
		x = (x << 1) ^ (x >> 7) ^ i;
	return x;
}

NOINLINE unsigned long leaf_sig(unsigned long n)
{
	unsigned long x = 3, i;

	for (i = 0; i < n; i++)
		x ^= (x << 5) + i;
	return x;
}

NOINLINE unsigned long path_a(unsigned long n)
{
	volatile unsigned long big[512]; /* a big frame: a CFA far from the stack pointer */
	unsigned long r;

	big[0] = n;
	big[511] = n;
	r = leaf_a(n);
	return r + big[0] + big[511];
}

NOINLINE unsigned long mid_b(unsigned long n)
{
	return leaf_b(n) + 1;
}

NOINLINE unsigned long path_b(unsigned long n)
{
	return mid_b(n) + 1;
}

NOINLINE int sort_cmp(const void *a, const void *b)
{
	unsigned long x = leaf_cmp(*(const unsigned long *)a);
	unsigned long y = leaf_cmp(*(const unsigned long *)b);

	sink += x ^ y;
	return *(const unsigned long *)a < *(const unsigned long *)b ?
		       -1 :
		       *(const unsigned long *)a > *(const unsigned long *)b;
}

NOINLINE unsigned long path_sort(unsigned n)
{
	unsigned long v[256];
	unsigned i;

	if (n > 256)
		n = 256;
	for (i = 0; i < n; i++)
		v[i] = (i * 2654435761u) % 1000;
	qsort(v, n, sizeof(v[0]), sort_cmp);
	return v[0];
}

NOINLINE void run_all(void)
{
	sink += path_a(400000);
	sink += path_b(300000);
	sink += path_sort(256);
}

NOINLINE void write_path(long n)
{
	FILE *f = fopen("/dev/null", "w");
	long i;

	if (!f)
		exit(2);
	for (i = 0; i < n; i++) {
		fwrite("nofp\n", 1, 5, f);
		fflush(f);
	}
	fclose(f);
}

NOINLINE void nap_leaf(void)
{
	struct timespec nap = { 0, 2 * 1000000L };

	nanosleep(&nap, NULL);
	sink++;
}

NOINLINE void nap_path(long n)
{
	long i;

	for (i = 0; i < n; i++)
		nap_leaf();
}

static void *volatile kept;

NOINLINE void alloc_leaf(void)
{
	kept = malloc(4321);
	free(kept);
	sink++;
}

NOINLINE void alloc_path(long n)
{
	long i;

	for (i = 0; i < n; i++)
		alloc_leaf();
}

NOINLINE void run_clock(void)
{
	struct timespec ts;
	int i;

	for (i = 0; i < 20000; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		sink += (unsigned long)ts.tv_nsec;
	}
}

NOINLINE void run_dl(unsigned long (*fn)(unsigned long))
{
	sink += fn(300000);
}

/* dl_run of libnofpdl.so, the library next to this program */
static unsigned long (*open_dl(void))(unsigned long)
{
	char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 32);
	char *slash;
	void *h;

	if (n <= 0)
		return NULL;
	path[n] = '\0';
	slash = strrchr(path, '/');
	if (!slash)
		return NULL;
	strcpy(slash + 1, "libnofpdl.so");
	h = dlopen(path, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "nofp: %s\n", dlerror());
		return NULL;
	}
	return (unsigned long (*)(unsigned long))dlsym(h, "dl_run");
}

NOINLINE void on_signal(int sig)
{
	(void)sig;
	sink += leaf_sig(20000);
}

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	long ms = 1000, writes = -1, naps = -1, allocs = -1;
	int i, sig = 0, wait_go = 1, dl = 0, clk = 0;
	unsigned long (*dl_run)(unsigned long) = NULL;
	double t0;
	char go[8];

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--ms") && i + 1 < argc)
			ms = atol(argv[++i]);
		else if (!strcmp(argv[i], "--signal"))
			sig = 1;
		else if (!strcmp(argv[i], "--nowait"))
			wait_go = 0;
		else if (!strcmp(argv[i], "--writes") && i + 1 < argc)
			writes = atol(argv[++i]);
		else if (!strcmp(argv[i], "--naps") && i + 1 < argc)
			naps = atol(argv[++i]);
		else if (!strcmp(argv[i], "--allocs") && i + 1 < argc)
			allocs = atol(argv[++i]);
		else if (!strcmp(argv[i], "--dl"))
			dl = 1;
		else if (!strcmp(argv[i], "--clock"))
			clk = 1;
	}
	printf("main=%p\nrun_all=%p\npath_a=%p\nleaf_a=%p\npath_b=%p\nmid_b=%p\nleaf_b=%p\n"
	       "path_sort=%p\nsort_cmp=%p\nleaf_cmp=%p\non_signal=%p\nleaf_sig=%p\nready\n",
	       (void *)main, (void *)run_all, (void *)path_a, (void *)leaf_a, (void *)path_b,
	       (void *)mid_b, (void *)leaf_b, (void *)path_sort, (void *)sort_cmp, (void *)leaf_cmp,
	       (void *)on_signal, (void *)leaf_sig);
	fflush(stdout);
	if (wait_go && !fgets(go, sizeof(go), stdin))
		return 1;
	if (writes >= 0 || naps >= 0 || allocs >= 0) {
		if (writes >= 0)
			write_path(writes);
		if (allocs >= 0)
			alloc_path(allocs);
		if (naps >= 0)
			nap_path(naps);
		printf("done\n");
		return 0;
	}
	if (sig) {
		struct itimerval it = { { 0, 2000 }, { 0, 2000 } };

		signal(SIGPROF, on_signal);
		setitimer(ITIMER_PROF, &it, NULL);
	}
	if (dl) {
		struct timespec nap = { 0, 300 * 1000000L };

		dl_run = open_dl();
		if (!dl_run)
			return 1;
		printf("opened\n");
		fflush(stdout);
		if (!wait_go)
			nanosleep(&nap, NULL);
		else if (!fgets(go, sizeof(go), stdin))
			return 1;
	}
	t0 = cpu_ms();
	while (cpu_ms() - t0 < ms) {
		if (dl_run)
			run_dl(dl_run);
		else if (clk)
			run_clock();
		else
			run_all();
	}
	if (sig) {
		struct itimerval off = { 0 };

		setitimer(ITIMER_PROF, &off, NULL);
	}
	printf("done\n");
	return 0;
}
