/*
 * arm64_cfi.S - an arm64 shared object whose call-frame information the unwind table tests
 * know exactly (tests/unit/test_unwind.c; built with binutils-aarch64-linux-gnu, on any host):
 *   leaf      no frame: CFA sp+0, the return address in x30
 *   framed    stp x29, x30, [sp, #-32]!  -> CFA sp+32, x29 at c-32, x30 at c-24
 *             mov x29, sp                -> CFA x29+32
 *             bl ext (through the PLT, which no FDE covers)
 *             ldp x29, x30, [sp], #32    -> CFA sp+0, x29 and x30 restored
 */
	.text
	.globl	leaf
	.type	leaf, %function
leaf:
	.cfi_startproc
	add	x0, x0, #1
	ret
	.cfi_endproc
	.size	leaf, .-leaf

	.globl	framed
	.type	framed, %function
framed:
	.cfi_startproc
	stp	x29, x30, [sp, #-32]!
	.cfi_def_cfa_offset 32
	.cfi_offset 29, -32
	.cfi_offset 30, -24
	mov	x29, sp
	.cfi_def_cfa_register 29
	bl	ext
	ldp	x29, x30, [sp], #32
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa 31, 0
	ret
	.cfi_endproc
	.size	framed, .-framed
	.section .note.GNU-stack,"",%progbits
