/*
 * unwind_table.h - one row of a compiled unwind table, as user/unwind builds it from an ELF's
 * call-frame information (.eh_frame, .debug_frame) and as the BPF unwinder reads it: from the
 * row's pc on (up to the next row's), how to find the caller's frame; and the per-process
 * mappings that lead a pc to its table. Shared by BPF and userspace: fixed-width types only,
 * 16 bytes a row.
 *
 * Registers by role, not by number: SP (x86_64 rsp, arm64 sp), FP (rbp, x29), RA (the return
 * address: x86_64 the word the call pushed, arm64 x30).
 *
 *   CFA (the caller's SP before the call):
 *     SP, FP         reg + cfa_off
 *     SP_DEREF       *(SP + cfa_off) (signal frames: the interrupted SP saved in the frame)
 *     FP_DEREF       *(FP + cfa_off) (functions that realign their stack)
 *     PLT            x86_64 PLT stubs: SP + cfa_off, + 8 when (pc & 15) >= fp_off (the FP
 *                    is unchanged in a stub, so fp_off holds that threshold)
 *     NONE           no call-frame information here: the unwinder may try frame pointers
 *     EXPR           a rule the unwinder cannot evaluate (DWARF expression, other register)
 *     END            the outermost frame (the return address is undefined): stop here
 *   FP and RA:
 *     SAME           unchanged (RA SAME: arm64's leaf state, the return address is in x30)
 *     AT_CFA         saved at CFA + off
 *     AT_SP          saved at SP + off (signal frames)
 *     VAL_CFA        is CFA + off
 *     UNDEF          undefined (callee-clobbered): unknown in the caller
 *     UNSUP          a rule the unwinder cannot evaluate
 */
#ifndef KPERF_BPF_UNWIND_TABLE_H
#define KPERF_BPF_UNWIND_TABLE_H

enum kp_uw_cfa_rule {
	KP_UW_CFA_NONE = 0,
	KP_UW_CFA_SP = 1,
	KP_UW_CFA_FP = 2,
	KP_UW_CFA_SP_DEREF = 3,
	KP_UW_CFA_FP_DEREF = 4,
	KP_UW_CFA_PLT = 5,
	KP_UW_CFA_EXPR = 6,
	KP_UW_CFA_END = 7,
};

enum kp_uw_reg_rule {
	KP_UW_REG_SAME = 0,
	KP_UW_REG_AT_CFA = 1,
	KP_UW_REG_AT_SP = 2,
	KP_UW_REG_VAL_CFA = 3,
	KP_UW_REG_UNDEF = 4,
	KP_UW_REG_UNSUP = 5,
};

/* row flags */
#define KP_UW_F_SIGNAL 0x01 /* a signal trampoline: the caller's pc is exact, not after a call */
#define KP_UW_F_PLT 0x02 /* a synthetic row of a PLT section no CFI covered */
#define KP_UW_F_DEBUG 0x04 /* from .debug_frame (no .eh_frame covered this pc) */

struct kp_uw_row {
	__u32 pc; /* offset from the table's base address */
	__s32 cfa_off;
	__s16 fp_off;
	__s16 ra_off;
	__u8 cfa; /* enum kp_uw_cfa_rule */
	__u8 fp; /* enum kp_uw_reg_rule */
	__u8 ra; /* enum kp_uw_reg_rule */
	__u8 flags; /* KP_UW_F_* */
};

/* One executable mapping of a process: its pcs in [start, end) find their row among
 * rows[row_off, row_off + nrows) of the shared row array by pc - adj (adj: the mapping's load
 * bias plus its table's base). nrows 0: no table (JIT, no call-frame information): frame
 * pointers there. */
struct kp_uw_map {
	__u64 start;
	__u64 end;
	__u64 adj;
	__u32 row_off;
	__u32 nrows;
};

#define KP_UW_MAX_MAPS 64 /* executable mappings of one process with a table, sorted by start */

/* the value of the per-process map (key: the tgid as the caller sees it) */
struct kp_uw_proc {
	__u32 n;
	__u32 pad;
	struct kp_uw_map m[KP_UW_MAX_MAPS];
};

/* what the unwinder counts (its own per-CPU array, per program) */
enum kp_uw_counter {
	KP_UW_CNT_STACKS = 0, /* user stacks unwound from tables */
	KP_UW_CNT_FRAMES = 1, /* frames found by a table row */
	KP_UW_CNT_FP_FRAMES = 2, /* frames found by frame pointers (no table there) */
	KP_UW_CNT_NO_PROC = 3, /* samples of a process whose tables are not loaded (yet) */
	KP_UW_CNT_UNKNOWN_MAP = 4, /* stacks that stopped at a pc in no known mapping */
	KP_UW_CNT_EXPR = 5, /* stacks that stopped at a rule BPF cannot evaluate */
	KP_UW_CNT_READ_FAULT = 6, /* stacks that stopped where user memory could not be read */
	KP_UW_CNT_TRUNCATED = 7, /* stacks cut at the frame limit */
	KP_UW_CNT_NO_REGS = 8, /* no user registers (kernels before 5.15, in the kernel): fp */
	KP_UW_CNT_PLT_FRAMES = 9, /* of KP_UW_CNT_FRAMES: by a synthetic PLT row */
	KP_UW_CNT_DEBUG_FRAMES = 10, /* of KP_UW_CNT_FRAMES: by a .debug_frame row */
	KP_UW_CNT_SIGNAL_FRAMES = 11, /* of KP_UW_CNT_FRAMES: through a signal frame */
	KP_UW_CNT_MAX
};

/* kp_cap_stack.flags of a user stack */
#define KP_CAP_F_DWARF 0x1 /* unwound from tables */
#define KP_CAP_F_FP 0x2 /* some frames from frame pointers (see fp_mask) */
#define KP_CAP_F_UNKNOWN_MAP 0x4 /* stopped at a pc in no known mapping */
#define KP_CAP_F_TRUNCATED 0x8 /* stopped at the frame limit */
#define KP_CAP_F_STOPPED 0x10 /* stopped early: a rule, a fault, an address no code has */

#endif
