/*
 * syscalls - a workload with exactly known syscalls, for the tracing tests and the demo.
 *
 * Each worker makes exactly <getppid> getppid, <writes> write of 1 byte to /dev/null and
 * <fails> openat of a path that does not exist (each fails with ENOENT). Workers are
 * threads of this process (--threads, started after --wait releases it) and/or child
 * processes (--children, each with the same threads). Totals are therefore
 * (children + 1) * threads * counts.
 *
 *   syscalls [--getppid N] [--writes N] [--fails N] [--threads T] [--children C]
 *            [--one-at-a-time] [--wait] [--hold-workers] [--sleep-ms MS] [--rename]
 * --one-at-a-time forks each child once the previous one is reaped (many short-lived
 * processes, however many C is).
 * --wait blocks on reading one byte from stdin before any counted call, so a tracer can
 * attach to the pid first. --sleep-ms sleeps before exiting (a target that lives on).
 * --hold-workers: each worker thread, after its calls, reads one more byte from stdin before
 * it ends (its thread id stays valid until the test lets it go: a tracer of that thread id
 * attaches before the process's calls after the workers, however slow the machine).
 * --rename: worker K names its thread wK-getppid, wK-write, wK-openat (prctl PR_SET_NAME, one
 * more call each) before each of its three kinds of calls.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long n_getppid = 50000, n_writes = 2000, n_fails = 300;
static int devnull, rename_threads, hold_workers;

static void name_thread(long k, const char *what)
{
	char name[16];

	if (!rename_threads)
		return;
	snprintf(name, sizeof(name), "w%ld-%s", k, what);
	prctl(PR_SET_NAME, name);
}

static void *worker(void *arg)
{
	long i, k = (long)arg;
	char c = 'x';

	name_thread(k, "getppid");
	for (i = 0; i < n_getppid; i++)
		syscall(SYS_getppid);
	name_thread(k, "write");
	for (i = 0; i < n_writes; i++)
		syscall(SYS_write, devnull, &c, 1);
	name_thread(k, "openat");
	for (i = 0; i < n_fails; i++)
		syscall(SYS_openat, AT_FDCWD, "/nonexistent/kperf-bpf-workload", O_RDONLY);
	if (hold_workers && read(0, &c, 1) != 1) {
		/* stdin closed: the test is gone, end anyway */
	}
	return NULL;
}

static void run(int threads)
{
	pthread_t *tids = calloc((size_t)threads, sizeof(*tids));
	int i;

	if (threads == 1) {
		worker(NULL);
	} else {
		for (i = 0; i < threads; i++)
			pthread_create(&tids[i], NULL, worker, (void *)(long)i);
		for (i = 0; i < threads; i++)
			pthread_join(tids[i], NULL);
	}
	free(tids);
}

int main(int argc, char **argv)
{
	int threads = 1, children = 0, wait_go = 0, sleep_ms = 0, serial = 0, i;
	pid_t *kids;
	char go;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "0";

		if (!strcmp(a, "--getppid"))
			n_getppid = atol(v), i++;
		else if (!strcmp(a, "--writes"))
			n_writes = atol(v), i++;
		else if (!strcmp(a, "--fails"))
			n_fails = atol(v), i++;
		else if (!strcmp(a, "--threads"))
			threads = atoi(v), i++;
		else if (!strcmp(a, "--children"))
			children = atoi(v), i++;
		else if (!strcmp(a, "--sleep-ms"))
			sleep_ms = atoi(v), i++;
		else if (!strcmp(a, "--wait"))
			wait_go = 1;
		else if (!strcmp(a, "--one-at-a-time"))
			serial = 1;
		else if (!strcmp(a, "--rename"))
			rename_threads = 1;
		else if (!strcmp(a, "--hold-workers"))
			hold_workers = 1;
		else {
			fprintf(stderr, "syscalls: unknown argument %s\n", a);
			return 2;
		}
	}
	devnull = open("/dev/null", O_WRONLY);
	if (devnull < 0 || threads < 1 || children < 0)
		return 2;
	if (wait_go && read(0, &go, 1) != 1)
		return 3;
	kids = calloc((size_t)children + 1, sizeof(*kids));
	for (i = 0; i < children; i++) {
		kids[i] = fork();
		if (kids[i] == 0) {
			run(threads);
			_exit(0);
		}
		if (serial && kids[i] > 0)
			waitpid(kids[i], NULL, 0), kids[i] = 0;
	}
	run(threads);
	for (i = 0; i < children; i++)
		if (kids[i] > 0)
			waitpid(kids[i], NULL, 0);
	if (sleep_ms) {
		struct timespec ts = { sleep_ms / 1000, (sleep_ms % 1000) * 1000000L };

		nanosleep(&ts, NULL);
	}
	free(kids);
	return 0;
}
