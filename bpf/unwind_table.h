/*
 * unwind_table.h - one row of a compiled unwind table, as user/unwind builds it from an ELF's
 * call-frame information (.eh_frame, .debug_frame) and as the BPF unwinder reads it: from the
 * row's pc on (up to the next row's), how to find the caller's frame. Shared by BPF and
 * userspace: fixed-width types only, 16 bytes a row.
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

#endif
