/*
 * stack.c - reading captured stacks (stack.h). A kernel stack taken by a tracepoint program
 * starts in the program and in the kernel's runner of BPF tracepoint programs
 * (bpf_trace_run<N>, __bpf_trace_<event>, and __traceiter_<event> when several probes share
 * the tracepoint) before it reaches the code that hit the tracepoint: those frames are the collector's own and are cut, found by name once per
 * distinct stack (the resolver caches kernel symbols).
 */
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "core/core.h"
#include "stack.h"
#include "stack_capture.h"
#include "sym/sym.h"

#define BPF_FRAMES_MAX 6 /* the runner sits this close to the top, or not at all */

static bool bpf_runner(const char *name)
{
	return name && (!strncmp(name, "bpf_trace_run", 13) || !strncmp(name, "__bpf_trace_", 12) ||
			!strncmp(name, "__traceiter_", 12));
}

unsigned kp_stack_bpf_frames(const uint64_t *ips, unsigned n)
{
	unsigned i, cut = 0;

	for (i = 0; i < n && i < BPF_FRAMES_MAX; i++) {
		struct Symbol *s;

		if (kp_sym_resolve_addr(0, ips[i], 0, &s)) {
			kp_clear_error();
			break;
		}
		if (bpf_runner(s->symbolName))
			cut = i + 1;
	}
	return cut;
}

unsigned kp_stack_read(int fd, uint64_t id, bool kernel, uint64_t *ips, unsigned max)
{
	struct kp_cap_stack s;
	unsigned i, n, skip;

	if (id == KP_CAP_NONE || bpf_map_lookup_elem(fd, &id, &s))
		return 0;
	n = s.n < KP_CAP_MAX_FRAMES ? s.n : KP_CAP_MAX_FRAMES;
	skip = kernel ? kp_stack_bpf_frames((const uint64_t *)s.ip, n) : 0;
	for (i = 0; skip + i < n && i < max; i++)
		ips[i] = s.ip[skip + i];
	return i;
}

unsigned kp_stack_clear(int fd)
{
	uint64_t *ids = NULL, key, last, *prev = NULL;
	size_t n = 0, cap = 0, i;
	unsigned removed = 0;

	/* the keys first, then the deletes: a walk that deletes as it goes starts again at the
	 * first bucket for each key */
	while (bpf_map_get_next_key(fd, prev, &key) == 0) {
		if (kp_grow((void **)&ids, &cap, n + 1, sizeof(*ids)))
			break;
		ids[n++] = key;
		last = key;
		prev = &last;
	}
	for (i = 0; i < n; i++)
		removed += bpf_map_delete_elem(fd, &ids[i]) == 0;
	free(ids);
	return removed;
}
