// SPDX-License-Identifier: GPL-2.0
/*
 * reject.bpf.c - a program every verifier must reject, for the test that a rejection is
 * reported as what it is (tests/integration/test_bpf_load.c): it indexes a map value with
 * a number it never bounds.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64[4]);
} table SEC(".maps");

SEC("tracepoint/syscalls/sys_enter_getppid")
int kp_unbounded_index(void *ctx)
{
	__u32 zero = 0, i = bpf_get_prandom_u32();
	__u64 *v = bpf_map_lookup_elem(&table, &zero);

	if (!v)
		return 0;
	return (int)v[i];
}
