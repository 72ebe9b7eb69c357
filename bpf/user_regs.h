/*
 * user_regs.h - the user registers a uprobe program sees, per architecture: the layout the
 * kernel hands to BPF (bpf_user_pt_regs_t), so that reading them needs no CO-RE and no BTF.
 * The Go runtime keeps its current goroutine (g) in a register under its register ABI
 * (Go 1.17+): r14 on x86_64, x28 on arm64.
 */
#ifndef KPERF_BPF_USER_REGS_H
#define KPERF_BPF_USER_REGS_H

#if defined(__TARGET_ARCH_x86)

/* struct pt_regs of x86_64: the order of the kernel's entry code, part of its ABI */
struct kp_user_regs {
	__u64 r15, r14, r13, r12, bp, bx, r11, r10, r9, r8;
	__u64 ax, cx, dx, si, di, orig_ax, ip, cs, flags, sp, ss;
};
#define KP_REGS_IP(r) ((r)->ip)
#define KP_REGS_GO_G(r) ((r)->r14)

#elif defined(__TARGET_ARCH_arm64)

/* struct user_pt_regs of arm64 */
struct kp_user_regs {
	__u64 regs[31];
	__u64 sp, pc, pstate;
};
#define KP_REGS_IP(r) ((r)->pc)
#define KP_REGS_GO_G(r) ((r)->regs[28])

#else
#error "user_regs.h: unsupported architecture (x86 and arm64 only)"
#endif

#endif
