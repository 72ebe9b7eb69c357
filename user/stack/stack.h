/*
 * stack.h - the userspace side of bpf/stack_capture.bpf.h: reading the stacks the programs
 * that aggregate by stack (off-CPU, syscall stacks) keep by id in their maps. The owner of
 * each map passes its fd; nothing here owns a BPF object.
 */
#ifndef KPERF_STACK_H
#define KPERF_STACK_H

#include <stdbool.h>
#include <stdint.h>

/* The frames of stack <id> of the map <fd>, leaf first, into <ips> (at most <max>); their
 * number, 0 when the map has no such stack. A kernel stack (<kernel>) comes without the
 * frames of the BPF program that took it and of the kernel's tracepoint glue that ran it. */
unsigned kp_stack_read(int fd, uint64_t id, bool kernel, uint64_t *ips, unsigned max);

/* Remove every stack of the map <fd> (no program may be storing into it): a task that is
 * enabled again after its samples were read starts from an empty map, not from the stacks of
 * every collection before. The number removed. */
unsigned kp_stack_clear(int fd);

/* How many frames at the top of the kernel stack <ips> belong to the BPF program that took
 * it (the program, the tracepoint runner): 0 when none can be told. */
unsigned kp_stack_bpf_frames(const uint64_t *ips, unsigned n);

#endif
