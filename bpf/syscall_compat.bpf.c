// SPDX-License-Identifier: GPL-2.0
/* syscall_compat.bpf.c - syscall.bpf.c for kernels without BTF (see there). */
#define KPERF_COMPAT 1
#include "syscall.bpf.c"
