/*
 * test_pidwatch.c - the end of a -p process is told by the process, not by its number: once
 * it has exited, a new process given the same pid (forced through ns_last_pid) does not
 * keep the collection going, with pidfds and with the start-time fallback of old kernels.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <sys/wait.h>

#include "core/core.h"
#include "testutil.h"

static pid_t sleeper(void)
{
	pid_t p = fork();

	if (p == 0) {
		pause();
		_exit(0);
	}
	return p;
}

/* a new sleeping process with pid <want>, or -1 when other forks keep taking it */
static pid_t sleeper_at(pid_t want)
{
	int i;

	for (i = 0; i < 50; i++) {
		FILE *f = fopen("/proc/sys/kernel/ns_last_pid", "w");
		pid_t p;

		if (!f)
			return -1;
		fprintf(f, "%d", (int)want - 1);
		if (fclose(f))
			return -1;
		p = sleeper();
		if (p == want)
			return p;
		kill(p, SIGKILL);
		waitpid(p, NULL, 0);
	}
	return -1;
}

static void reused_pid_is_not_the_process(bool pidfd)
{
	struct kp_pidwatch *w;
	pid_t a = sleeper(), b;
	int pids[1] = { a };

	kp_pidwatch_test_no_pidfd(!pidfd);
	cr_assert_gt(a, 0);
	cr_assert_eq(kp_pidwatch_open(pids, 1, &w), 0);
	cr_assert_eq(kp_pidwatch_fallback(w), !pidfd);
	cr_assert(kp_pidwatch_any_alive(w));
	cr_assert(kp_pidwatch_any_alive(w), "asking twice changes nothing");
	/* start times count clock ticks: a pid reused within the same tick would fool the
	 * fallback (pid_max forks within one tick, outside this test) */
	if (!pidfd)
		tu_sleep_ms(3000 / sysconf(_SC_CLK_TCK));
	kill(a, SIGKILL);
	waitpid(a, NULL, 0);
	b = sleeper_at(a);
	if (b < 0) {
		kp_pidwatch_free(w);
		cr_skip_test("pid %d could not be given to a new process", (int)a);
	}
	/* the pid is alive again: only the watch can tell it is someone else */
	cr_assert(kp_pid_alive(a));
	cr_expect_not(kp_pidwatch_any_alive(w), "pid %d was reused, the process is gone", (int)a);
	kill(b, SIGKILL);
	waitpid(b, NULL, 0);
	kp_pidwatch_free(w);
	kp_pidwatch_test_no_pidfd(false);
}

Test(pidwatch, a_reused_pid_does_not_keep_the_watch_going)
{
	reused_pid_is_not_the_process(true);
}

Test(pidwatch, the_fallback_tells_by_start_time)
{
	reused_pid_is_not_the_process(false);
}

Test(pidwatch, the_last_of_several_ends_it)
{
	struct kp_pidwatch *w;
	pid_t a = sleeper(), b = sleeper();
	int pids[3] = { a, b, 999999999 }; /* the last never existed */
	int i;

	cr_assert_eq(kp_pidwatch_open(pids, 3, &w), 0);
	cr_assert(kp_pidwatch_any_alive(w));
	kill(a, SIGKILL);
	waitpid(a, NULL, 0);
	cr_assert(kp_pidwatch_any_alive(w), "b still runs");
	/* a zombie has exited: not reaped, it no longer counts (bounded wait for the kill) */
	kill(b, SIGKILL);
	for (i = 0; i < 500 && kp_pidwatch_any_alive(w); i++)
		tu_sleep_ms(10);
	cr_expect_not(kp_pidwatch_any_alive(w));
	waitpid(b, NULL, 0);
	kp_pidwatch_free(w);
}
