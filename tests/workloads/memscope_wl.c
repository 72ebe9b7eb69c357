/* uses_kperf: linked with libkperf-bpf.so (mstx marks, kperf_mem_access)
 *
 * memscope_wl.c - workloads of known memory behaviour, for `kperf-bpf memscope` tests.
 *
 *   leaks    three mstxMarkA("test") marks; between the first two it allocates exactly five
 *            blocks it does not free before the third: leak_small (malloc 100), leak_calloc
 *            (calloc 10 x 30), leak_realloc (malloc 16 moved by realloc to 256 KiB),
 *            leak_memalign (posix_memalign 64, 512), leak_mmap (mmap 4 pages, 1 unmapped:
 *            12288 bytes left); and blocks that are not leaks: one freed by another thread,
 *            realloc(p, 0), realloc growth then free, aligned_alloc, memalign, valloc,
 *            pvalloc freed, one freed between the second and third marks, an mmap unmapped
 *            in two parts. After the third mark it frees the leaks, forks a child that execs
 *            /bin/true (uprobes in a forked child must not hurt it), and prints
 *            "leaks PTR PTR PTR PTR PTR" in the order above.
 *   ineff    glibc's mmap threshold fixed at 64 KiB so that 1 MiB blocks are fresh pages; one
 *            block of each kind, touched page by page (first-touch faults) from its second
 *            page on: "early" (another block is freed between its malloc and first use),
 *            "late" (another block is allocated between its last use and its free), "idle"
 *            (first use, 4000 malloc/free pairs, then use by write() and kperf_mem_access),
 *            "plain" (used right away, freed right after). Prints "ineff early=PTR late=PTR
 *            idle=PTR plain=PTR".
 *   sampled N  N blocks of sizes 64..8191 (a fixed sequence), each freed at once; prints
 *            "sampled total=BYTES count=N".
 *   loop N SIZE  N malloc/free pairs of SIZE bytes (the benchmark's loop), prints the ns
 *            per pair: "loop ns=..."
 *   forkleak  the parent: marks "parent" three times, leaking leak_parent (malloc 111)
 *            between the first two; after the second it forks a child which, at once,
 *            marks "child" three times, leaking child_leak_a (malloc 222) and child_leak_b
 *            (calloc 3 x 111) between the first two and freeing one block (malloc 50)
 *            there, then exits; the parent reaps it, marks, and prints "forkleak child=PID
 *            parent=PTR child_a=PTR child_b=PTR" (the child's pointers through a pipe).
 * Options before the mode: --wait (read one byte from stdin first, for -p tests).
 */
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <kperf/mstx.h>

#define PAGE 4096

/* gcc 12 takes the addresses kept to be printed for uses of the freed blocks */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#pragma GCC diagnostic ignored "-Wuse-after-free"
#endif

static int to_thread[2], from_thread[2];

/* <p>, opaque to the compiler: gcc drops a malloc whose block is only freed */
static void *keep(void *p)
{
	__asm__ volatile("" : "+r"(p) : : "memory");
	return p;
}

static void *freer(void *arg)
{
	void *p;

	(void)arg;
	while (read(to_thread[0], &p, sizeof(p)) == sizeof(p)) {
		free(p);
		if (write(from_thread[1], "k", 1) != 1)
			break;
	}
	return NULL;
}

void *leak_small(void)
{
	return malloc(100);
}

void *leak_calloc(void)
{
	return calloc(10, 30);
}

void *leak_realloc(void)
{
	void *p = malloc(16);

	return realloc(p, 256 * 1024); /* above the mmap threshold: a chunk of its own, a move */
}

void *leak_memalign(void)
{
	void *p = NULL;

	if (posix_memalign(&p, 64, 512))
		return NULL;
	return p;
}

void *leak_mmap(void)
{
	char *p = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	munmap(p + 3 * PAGE, PAGE); /* a partial unmap: 3 pages stay */
	return p;
}

void *handoff(void)
{
	return malloc(200);
}

void not_leaks(void)
{
	void *p;
	char *m;
	char c;

	p = handoff();
	if (write(to_thread[1], &p, sizeof(p)) != sizeof(p) || read(from_thread[0], &c, 1) != 1)
		exit(3);
	p = malloc(50);
	p = realloc(p, 0); /* frees it, returns NULL */
	free(p);
	p = malloc(32);
	p = realloc(p, 64);
	free(p);
	free(keep(aligned_alloc(256, 1024)));
	free(keep(memalign(128, 256)));
	free(keep(valloc(100)));
	free(keep(pvalloc(100)));
	m = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m != MAP_FAILED) {
		munmap(m + PAGE, PAGE);
		munmap(m, 3 * PAGE);
	}
}

static int leaks(void)
{
	void *l[5], *late;
	pthread_t t;
	pid_t child;
	int i, status = -1;

	if (pipe(to_thread) || pipe(from_thread) || pthread_create(&t, NULL, freer, NULL))
		return 2;
	mstxMarkA("test", NULL);
	l[0] = leak_small();
	l[1] = leak_calloc();
	l[2] = leak_realloc();
	l[3] = leak_memalign();
	l[4] = leak_mmap();
	not_leaks();
	late = keep(malloc(700));
	mstxMarkA("test", NULL);
	free(late);
	mstxMarkA("test", NULL);
	for (i = 0; i < 4; i++)
		free(l[i]);
	munmap(l[4], 3 * PAGE);
	close(to_thread[1]);
	pthread_join(t, NULL);
	child = fork();
	if (child == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	if (child > 0)
		waitpid(child, &status, 0);
	if (status != 0) {
		fprintf(stderr, "memscope_wl: the forked child ended with status %d\n", status);
		return 4;
	}
	printf("leaks %#lx %#lx %#lx %#lx %#lx\n", (unsigned long)l[0], (unsigned long)l[1],
	       (unsigned long)l[2], (unsigned long)l[3], (unsigned long)l[4]);
	fflush(stdout);
	return 0;
}

/* touch every page of [p + PAGE, p + size): a first-touch fault each */
static void use(char *p, size_t size)
{
	char *from = (char *)(((uintptr_t)p + PAGE) & ~(uintptr_t)(PAGE - 1));

	memset(from, 1, (size_t)(p + size - from));
}

#define BIG (1 << 20)

static int ineff(void)
{
	char *early, *late, *idle, *plain, *x, *y;
	unsigned long at[4]; /* the blocks' addresses, printed after they are freed */
	int fd = open("/dev/null", O_WRONLY), i;

	if (fd < 0 || !mallopt(M_MMAP_THRESHOLD, 64 * 1024))
		return 2;
	mstxMarkA("ineff start", NULL);
	/* early: a block freed between its allocation and its first use */
	x = keep(malloc(64));
	early = malloc(BIG);
	at[0] = (unsigned long)early;
	free(x);
	use(early, BIG);
	free(early);
	/* late: a block allocated between its last use and its free */
	late = malloc(BIG);
	at[1] = (unsigned long)late;
	use(late, BIG);
	y = keep(malloc(64));
	free(late);
	free(y);
	/* idle: 8000 allocator calls between two uses */
	idle = malloc(BIG);
	at[2] = (unsigned long)idle;
	use(idle, 2 * PAGE);
	for (i = 0; i < 4000; i++)
		free(keep(malloc(16)));
	if (write(fd, idle + 2 * PAGE, 64) != 64)
		return 3;
	kperf_mem_access(idle + 3 * PAGE, 8);
	free(idle);
	/* plain: none of these */
	plain = malloc(BIG);
	at[3] = (unsigned long)plain;
	use(plain, BIG);
	free(plain);
	mstxMarkA("ineff end", NULL);
	close(fd);
	printf("ineff early=%#lx late=%#lx idle=%#lx plain=%#lx\n", at[0], at[1], at[2], at[3]);
	/* stdout's buffer is used now, not at exit after the library destructors' frees */
	fflush(stdout);
	return 0;
}

void *leak_parent(void)
{
	return malloc(111);
}

void *child_leak_a(void)
{
	return malloc(222);
}

void *child_leak_b(void)
{
	return calloc(3, 111);
}

static int forkleak(void)
{
	void *p, *c[2];
	int fds[2], status = -1;
	pid_t child;

	if (pipe(fds))
		return 2;
	mstxMarkA("parent", NULL);
	p = keep(leak_parent());
	mstxMarkA("parent", NULL);
	child = fork();
	if (child == 0) {
		/* no pause: its first calls come before any tracer could react */
		mstxMarkA("child", NULL);
		c[0] = keep(child_leak_a());
		c[1] = keep(child_leak_b());
		free(keep(malloc(50)));
		mstxMarkA("child", NULL);
		mstxMarkA("child", NULL);
		_exit(write(fds[1], c, sizeof(c)) == sizeof(c) ? 0 : 3);
	}
	if (child < 0 || waitpid(child, &status, 0) != child || status != 0 ||
	    read(fds[0], c, sizeof(c)) != sizeof(c)) {
		fprintf(stderr, "memscope_wl: the forked child ended with status %d\n", status);
		return 4;
	}
	mstxMarkA("parent", NULL);
	free(p);
	printf("forkleak child=%d parent=%#lx child_a=%#lx child_b=%#lx\n", (int)child,
	       (unsigned long)p, (unsigned long)c[0], (unsigned long)c[1]);
	fflush(stdout);
	return 0;
}

static int sampled(long n)
{
	unsigned long long total = 0;
	uint32_t x = 12345;
	long i;
	size_t size;

	for (i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		size = 64 + (x >> 8) % (8192 - 64);
		free(keep(malloc(size)));
		total += size;
	}
	printf("sampled total=%llu count=%ld\n", total, n);
	return 0;
}

static int loop(long n, size_t size)
{
	struct timespec a, b;
	long i;
	void *volatile p;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++) {
		p = malloc(size);
		free(p);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("loop ns=%.1f\n",
	       ((b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / (double)n);
	return 0;
}

int main(int argc, char **argv)
{
	int a = 1;
	char c;

	if (a < argc && !strcmp(argv[a], "--wait")) {
		if (read(0, &c, 1) < 0)
			return 2;
		a++;
	}
	if (a < argc && !strcmp(argv[a], "leaks"))
		return leaks();
	if (a < argc && !strcmp(argv[a], "ineff"))
		return ineff();
	if (a < argc && !strcmp(argv[a], "forkleak"))
		return forkleak();
	if (a + 1 < argc && !strcmp(argv[a], "sampled"))
		return sampled(atol(argv[a + 1]));
	if (a + 2 < argc && !strcmp(argv[a], "loop"))
		return loop(atol(argv[a + 1]), (size_t)atol(argv[a + 2]));
	fprintf(stderr, "usage: memscope_wl [--wait] leaks|ineff|forkleak|sampled N|loop N SIZE\n");
	return 2;
}
