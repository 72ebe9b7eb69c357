/*
 * follow.c - the forked children of recorded processes, for every user of memscope's BPF
 * object (a memscope recording, the memory source of a timeline): a child with a memory of
 * its own stops itself at its start (bpf/memscope.bpf.c) until its probes are placed; the
 * caller places them, waits here until it has stopped, and lets it run, recorded.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"
#include "memscope.h"

/* /proc/PID/stat's state is T (stopped): 1; gone: -1; else 0 */
static int stopped(int pid)
{
	char path[64], *text, *p;
	int r = -1;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (kp_read_file(path, &text, NULL))
		return -1;
	p = strrchr(text, ')'); /* after the command name, which may hold anything */
	if (p && p[1] == ' ')
		r = p[2] == 'T' || p[2] == 't';
	free(text);
	return r;
}

bool kp_ms_child_wait(struct kp_ms_bpf *b, int pid)
{
	int i, st = 0;

	/* it stops before running any code of its own, at once: the bound is for a child
	 * killed meanwhile, not a timing */
	for (i = 0; i < 20000; i++) {
		st = stopped(pid);
		if (st != 0 || kp_ms_bpf_target_state(b, pid) == KP_MS_TARGET_ON)
			break;
		usleep(100);
	}
	return kp_ms_bpf_target_state(b, pid) != KP_MS_TARGET_STOPPED && st != -1;
}

void kp_ms_child_release(struct kp_ms_bpf *b, int pid)
{
	/* only while it is a target: one that exited meanwhile left the map (kp_ms_exit), and its
	 * pid may already be another process's */
	kp_ms_bpf_update_target(b, pid, KP_MS_TARGET_ON);
	kill(pid, SIGCONT);
}
