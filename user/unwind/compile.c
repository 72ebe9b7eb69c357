/*
 * compile.c - an ELF's call-frame information compiled into unwind table rows.
 *
 * The rules come from libdw: for each FDE's range, dwarf_cfi_addrframe gives the row that
 * holds at an address and the range it holds over, dwarf_frame_cfa and dwarf_frame_register
 * its CFA, FP and RA rules as DWARF operations; those are matched against the few shapes the
 * BPF unwinder evaluates (register + offset, saved at CFA + offset, the x86_64 PLT expression,
 * the signal frame's "*(SP + off)"), anything else becomes an EXPR/UNSUP row. The only DWARF
 * this file decodes itself is where each FDE starts and ends (the pointer encoding of the
 * CIE's 'R' augmentation), to enumerate the ranges.
 *
 * .eh_frame wins over .debug_frame where both describe an address; PLT sections no FDE covers
 * get synthetic rows; a gap between ranges gets a NONE row, so a lookup never lands in the
 * previous function's rules. Equal consecutive rows are merged.
 */
#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <elfutils/libdw.h>

#include "core/core.h"
#include "sym/sym.h"
#include "unwind.h"

struct arch_regs {
	int sp, fp, ra, ip; /* DWARF numbers; ip -1 when the architecture has none */
	const char *sp_name, *fp_name;
};

static const struct arch_regs x86_64_regs = { 7, 6, 16, 16, "rsp", "rbp" };
static const struct arch_regs arm64_regs = { 31, 29, 30, -1, "sp", "x29" };

/* one FDE's address range, from which section */
struct range {
	uint64_t start, end;
	Dwarf_CFI *cfi; /* NULL: a synthetic PLT range */
	uint8_t flags; /* KP_UW_F_DEBUG, KP_UW_F_PLT */
	uint8_t plt_kind; /* synthetic: 0 .plt, 1 .plt.sec/.plt.got (one jump) */
};

struct builder {
	const struct arch_regs *regs;
	struct range *ranges;
	size_t nranges, cap;
	struct kp_uw_row *rows;
	uint64_t *pcs; /* the rows' absolute pcs while building */
	size_t nrows, rcap;
	struct kp_uw_stats st;
	char *why;
	size_t whylen;
};

static int fail(struct builder *b, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (b->why && b->whylen)
		vsnprintf(b->why, b->whylen, fmt, ap);
	va_end(ap);
	return err;
}

static int add_range(struct builder *b, uint64_t start, uint64_t end, Dwarf_CFI *cfi, uint8_t flags,
		     uint8_t plt_kind)
{
	if (b->nranges == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 256;
		struct range *r = realloc(b->ranges, cap * sizeof(*r));

		if (!r)
			return -ENOMEM;
		b->ranges = r;
		b->cap = cap;
	}
	b->ranges[b->nranges++] = (struct range){ start, end, cfi, flags, plt_kind };
	return 0;
}

/* ---- where FDEs start: the CIE's pointer encoding ---- */

struct cie_enc {
	uint64_t off;
	uint8_t enc;
	bool ok;
};

static size_t enc_size(uint8_t enc, bool elf64)
{
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
		return elf64 ? 8 : 4;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		return 2;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		return 4;
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		return 8;
	default:
		return 0; /* leb128: not used for FDE addresses by any toolchain we know */
	}
}

/* a pointer of encoding <enc> at <p> (<left> bytes there), whose own address is <at> */
static bool read_enc(const uint8_t *p, size_t left, uint8_t enc, bool elf64, bool msb, uint64_t at,
		     bool apply, uint64_t *val)
{
	size_t n = enc_size(enc, elf64), i;
	uint64_t v = 0;

	if (!n || n > left || (enc & DW_EH_PE_indirect))
		return false;
	for (i = 0; i < n; i++)
		v |= (uint64_t)p[msb ? n - 1 - i : i] << (8 * i);
	if ((enc & 0x0f) == DW_EH_PE_sdata2)
		v = (uint64_t)(int64_t)(int16_t)v;
	else if ((enc & 0x0f) == DW_EH_PE_sdata4 || ((enc & 0x0f) == DW_EH_PE_absptr && !elf64))
		v = (enc & 0x0f) == DW_EH_PE_sdata4 ? (uint64_t)(int64_t)(int32_t)v : v;
	if (apply) {
		switch (enc & 0x70) {
		case DW_EH_PE_absptr:
			break;
		case DW_EH_PE_pcrel:
			v += at;
			break;
		default:
			return false; /* textrel, datarel, funcrel: not in .eh_frame FDEs in practice */
		}
	}
	*val = v;
	return true;
}

/* the FDE pointer encoding of a CIE ('R' of its 'z' augmentation; absptr without one) */
static bool cie_fde_enc(const Dwarf_CIE *cie, bool elf64, uint8_t *enc)
{
	const char *a = cie->augmentation;
	const uint8_t *p = cie->augmentation_data;
	const uint8_t *e = p ? p + cie->augmentation_data_size : NULL;

	*enc = DW_EH_PE_absptr;
	if (!a || a[0] != 'z')
		return !a || !a[0];
	for (a++; *a; a++) {
		switch (*a) {
		case 'R':
			if (!p || p >= e)
				return false;
			*enc = *p++;
			break;
		case 'L':
			if (!p || p >= e)
				return false;
			p++;
			break;
		case 'P': {
			size_t n;

			if (!p || p >= e)
				return false;
			n = enc_size(*p, elf64);
			if (!n || (size_t)(e - p) < 1 + n)
				return false;
			p += 1 + n;
			break;
		}
		case 'S':
		case 'B':
		case 'G':
			break;
		default:
			return false;
		}
	}
	return true;
}

/* every FDE of section <scn> (.eh_frame when <eh>) as a range of <cfi> */
static int scan_fdes(struct builder *b, Elf *elf, Elf_Scn *scn, bool eh, Dwarf_CFI *cfi)
{
	const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
	bool elf64 = ident && ident[EI_CLASS] == ELFCLASS64;
	bool msb = ident && ident[EI_DATA] == ELFDATA2MSB;
	struct cie_enc *cies = NULL;
	size_t ncies = 0, ccap = 0, i;
	Elf_Data *data = elf_getdata(scn, NULL);
	GElf_Shdr sh;
	int pass, err = 0;

	if (!data || !data->d_buf || !gelf_getshdr(scn, &sh) || !ident)
		return 0;
	/* pass 0: CIEs and their encodings; pass 1: FDEs */
	for (pass = 0; pass < 2 && !err; pass++) {
		Dwarf_Off off = 0, next;

		while (off < data->d_size) {
			Dwarf_CFI_Entry ent;
			int rc = dwarf_next_cfi(ident, data, eh, off, &next, &ent);

			if (rc)
				break; /* 1: the end; -1: a malformed entry, the rest cannot be found */
			if (dwarf_cfi_cie_p(&ent)) {
				if (pass == 0) {
					if (ncies == ccap) {
						size_t cap = ccap ? ccap * 2 : 16;
						struct cie_enc *c = realloc(cies, cap * sizeof(*c));

						if (!c) {
							err = -ENOMEM;
							break;
						}
						cies = c;
						ccap = cap;
					}
					cies[ncies].off = off;
					cies[ncies].ok =
						cie_fde_enc(&ent.cie, elf64, &cies[ncies].enc);
					ncies++;
				}
			} else if (pass == 1) {
				const uint8_t *p = ent.fde.start;
				size_t left = (size_t)(ent.fde.end - p), n;
				uint64_t start, len, at;
				struct cie_enc *c = NULL;

				for (i = 0; i < ncies; i++)
					if (cies[i].off == ent.fde.CIE_pointer)
						c = &cies[i];
				at = sh.sh_addr + (uint64_t)(p - (const uint8_t *)data->d_buf);
				n = c ? enc_size(c->enc, elf64) : 0;
				if (!c || !c->ok || !n ||
				    !read_enc(p, left, c->enc, elf64, msb, at, true, &start) ||
				    !read_enc(p + n, left - n, c->enc & 0x0f, elf64, msb, 0, false,
					      &len)) {
					b->st.fdes_skipped++;
				} else if (len == 0 || start + len < start) {
					b->st.fdes_skipped++;
				} else {
					err = add_range(b, start, start + len, cfi,
							eh ? 0 : KP_UW_F_DEBUG, 0);
					if (err)
						break;
				}
			}
			if (next <= off || next == (Dwarf_Off)-1)
				break;
			off = next;
		}
	}
	free(cies);
	return err;
}

/* ---- rules ---- */

/* the CFA of <frame> */
static void cfa_rule(const struct arch_regs *rg, Dwarf_Frame *frame, struct kp_uw_row *r)
{
	Dwarf_Op *ops;
	size_t n;

	r->cfa = KP_UW_CFA_EXPR;
	if (dwarf_frame_cfa(frame, &ops, &n) || n == 0)
		return;
	if (n == 1 && (ops[0].atom == DW_OP_bregx ||
		       (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31))) {
		int reg = ops[0].atom == DW_OP_bregx ? (int)ops[0].number :
						       ops[0].atom - DW_OP_breg0;
		int64_t off = ops[0].atom == DW_OP_bregx ? (int64_t)ops[0].number2 :
							   (int64_t)ops[0].number;

		if (off < INT32_MIN || off > INT32_MAX)
			return;
		if (reg == rg->sp)
			r->cfa = KP_UW_CFA_SP;
		else if (reg == rg->fp)
			r->cfa = KP_UW_CFA_FP;
		else
			return;
		r->cfa_off = (int32_t)off;
		return;
	}
	/* *(reg + off): the interrupted SP of a signal frame, the saved SP of a realigned frame */
	if (n == 2 && ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31 &&
	    ops[1].atom == DW_OP_deref) {
		int reg = ops[0].atom - DW_OP_breg0;
		int64_t off = (int64_t)ops[0].number;

		if (off < INT32_MIN || off > INT32_MAX)
			return;
		if (reg == rg->sp)
			r->cfa = KP_UW_CFA_SP_DEREF;
		else if (reg == rg->fp)
			r->cfa = KP_UW_CFA_FP_DEREF;
		else
			return;
		r->cfa_off = (int32_t)off;
		return;
	}
	/* the x86_64 PLT stub (binutils): rsp + K + ((rip & 15) >= T) << 3 */
	if (rg->ip >= 0 && n == 9 && ops[0].atom == DW_OP_breg0 + rg->sp &&
	    ops[1].atom == DW_OP_breg0 + rg->ip && ops[1].number == 0 &&
	    ops[2].atom == DW_OP_lit15 && ops[3].atom == DW_OP_and && ops[4].atom >= DW_OP_lit0 &&
	    ops[4].atom <= DW_OP_lit15 && ops[5].atom == DW_OP_ge && ops[6].atom == DW_OP_lit3 &&
	    ops[7].atom == DW_OP_shl && ops[8].atom == DW_OP_plus && (int64_t)ops[0].number >= 0 &&
	    (int64_t)ops[0].number < 1024) {
		r->cfa = KP_UW_CFA_PLT;
		r->cfa_off = (int32_t)ops[0].number;
		r->fp_off = (int16_t)(ops[4].atom - DW_OP_lit0);
	}
}

/* The rule of register <reg> into *rule and *off: libdw gives "same value" as no operations and a
 * null pointer, "undefined" as no operations into ops_mem, offset(N) as call_frame_cfa and
 * plus_uconst N or consts N + plus, val_offset(N) the same ending in stack_value, and a
 * DW_CFA_expression as its own operations (signal frames: breg<sp> N). */
static void reg_rule(const struct arch_regs *rg, Dwarf_Frame *frame, int reg, uint8_t *rule,
		     int16_t *off)
{
	Dwarf_Op mem[3], *ops = NULL;
	size_t n = 0, i = 0;
	int64_t v = 0;
	bool val = false;

	*off = 0;
	*rule = KP_UW_REG_UNSUP;
	if (dwarf_frame_register(frame, reg, mem, &ops, &n))
		return;
	if (n == 0) {
		*rule = ops ? KP_UW_REG_UNDEF : KP_UW_REG_SAME;
		return;
	}
	if (ops[n - 1].atom == DW_OP_stack_value) {
		val = true;
		n--;
	}
	if (n == 2 && ops[0].atom == DW_OP_call_frame_cfa && ops[1].atom == DW_OP_breg0 + rg->sp &&
	    !val) {
		v = (int64_t)ops[1].number;
		if (v < INT16_MIN || v > INT16_MAX)
			return;
		*rule = KP_UW_REG_AT_SP; /* a DW_CFA_expression: the CFA pushed first, then SP + v */
		*off = (int16_t)v;
		return;
	}
	if (n >= 1 && ops[0].atom == DW_OP_call_frame_cfa) {
		i = 1;
		if (n == 2 && ops[1].atom == DW_OP_plus_uconst)
			v = (int64_t)ops[1].number, i = 2;
		else if (n == 3 && ops[1].atom == DW_OP_consts && ops[2].atom == DW_OP_plus)
			v = (int64_t)ops[1].number, i = 3;
		if (i != n || v < INT16_MIN || v > INT16_MAX)
			return;
		*rule = val ? KP_UW_REG_VAL_CFA : KP_UW_REG_AT_CFA;
		*off = (int16_t)v;
		return;
	}
	if (!val && n == 1 && ops[0].atom == DW_OP_breg0 + rg->sp) {
		v = (int64_t)ops[0].number;
		if (v < INT16_MIN || v > INT16_MAX)
			return;
		*rule = KP_UW_REG_AT_SP;
		*off = (int16_t)v;
	}
}

static int push_row(struct builder *b, uint64_t pc, const struct kp_uw_row *r)
{
	if (b->nrows == b->rcap) {
		size_t cap = b->rcap ? b->rcap * 2 : 1024;
		struct kp_uw_row *rows = realloc(b->rows, cap * sizeof(*rows));
		uint64_t *pcs;

		if (!rows)
			return -ENOMEM;
		b->rows = rows;
		pcs = realloc(b->pcs, cap * sizeof(*pcs));
		if (!pcs)
			return -ENOMEM;
		b->pcs = pcs;
		b->rcap = cap;
	}
	b->rows[b->nrows] = *r;
	b->pcs[b->nrows++] = pc;
	b->st.rows_raw++;
	if (r->cfa == KP_UW_CFA_EXPR)
		b->st.rows_expr++;
	if (r->flags & KP_UW_F_SIGNAL)
		b->st.rows_signal++;
	return 0;
}

/* the rows of one FDE range, row by row as libdw interprets it */
static int compile_range(struct builder *b, const struct range *rg)
{
	uint64_t addr = rg->start;
	int err = 0;

	while (addr < rg->end) {
		Dwarf_Frame *frame = NULL;
		Dwarf_Addr s, e;
		bool signal = false;
		struct kp_uw_row r = { 0 };
		int ra_reg;

		if (dwarf_cfi_addrframe(rg->cfi, addr, &frame) || !frame)
			break;
		ra_reg = dwarf_frame_info(frame, &s, &e, &signal);
		r.flags = rg->flags | (signal ? KP_UW_F_SIGNAL : 0);
		cfa_rule(b->regs, frame, &r);
		if (r.cfa != KP_UW_CFA_PLT)
			reg_rule(b->regs, frame, b->regs->fp, &r.fp, &r.fp_off);
		reg_rule(b->regs, frame, ra_reg >= 0 ? ra_reg : b->regs->ra, &r.ra, &r.ra_off);
		if (r.ra == KP_UW_REG_UNDEF)
			r.cfa = KP_UW_CFA_END; /* the outermost frame (_start, thread starts) */
		free(frame);
		err = push_row(b, addr, &r);
		if (err || e <= addr)
			break;
		addr = e < rg->end ? e : rg->end;
	}
	return err;
}

/* synthetic rows of a PLT section no FDE describes */
static int compile_plt(struct builder *b, const struct range *rg, uint16_t machine)
{
	struct kp_uw_row r = { .flags = KP_UW_F_PLT, .ra = KP_UW_REG_AT_CFA, .ra_off = -8 };
	int err;

	b->st.plt_synth++;
	if (machine == EM_AARCH64) {
		/* stubs load and branch through x16/x17: SP and x30 untouched */
		r.cfa = KP_UW_CFA_SP;
		r.ra = KP_UW_REG_SAME;
		r.ra_off = 0;
		return push_row(b, rg->start, &r);
	}
	r.cfa = KP_UW_CFA_SP;
	r.cfa_off = 8;
	if (rg->plt_kind == 1 || rg->end - rg->start < 32)
		return push_row(b, rg->start, &r); /* .plt.sec/.plt.got: endbr64; jmp *GOT */
	/* .plt: PLT0 runs with the entry's pushed index (rsp+16), then pushes GOT[1] (rsp+24) */
	r.cfa_off = 16;
	err = push_row(b, rg->start, &r);
	r.cfa_off = 24;
	if (!err)
		err = push_row(b, rg->start + 6, &r);
	r.cfa = KP_UW_CFA_PLT;
	r.cfa_off = 8;
	r.fp_off = 11; /* jmp *GOT (6 bytes), push $index (5), then rsp+16 */
	if (!err)
		err = push_row(b, rg->start + 16, &r);
	return err;
}

static int range_cmp(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	/* .eh_frame before .debug_frame before synthetic */
	return (int)(x->flags & (KP_UW_F_DEBUG | KP_UW_F_PLT)) -
	       (int)(y->flags & (KP_UW_F_DEBUG | KP_UW_F_PLT));
}

static int add_plt_sections(struct builder *b, Elf *elf, size_t shstrndx)
{
	Elf_Scn *scn = NULL;
	int err = 0;

	while (!err && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_EXECINSTR) || !sh.sh_size)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name)
			continue;
		if (!strcmp(name, ".plt"))
			err = add_range(b, sh.sh_addr, sh.sh_addr + sh.sh_size, NULL, KP_UW_F_PLT,
					0);
		else if (!strcmp(name, ".plt.sec") || !strcmp(name, ".plt.got") ||
			 !strcmp(name, ".plt.bnd"))
			err = add_range(b, sh.sh_addr, sh.sh_addr + sh.sh_size, NULL, KP_UW_F_PLT,
					1);
	}
	return err;
}

static bool same_rules(const struct kp_uw_row *a, const struct kp_uw_row *b)
{
	return a->cfa == b->cfa && a->cfa_off == b->cfa_off && a->fp == b->fp &&
	       a->fp_off == b->fp_off && a->ra == b->ra && a->ra_off == b->ra_off &&
	       a->flags == b->flags;
}

static int build_rows(struct builder *b, uint16_t machine)
{
	uint64_t covered = 0; /* the end of the last accepted range */
	size_t i;
	int err = 0;

	qsort(b->ranges, b->nranges, sizeof(*b->ranges), range_cmp);
	for (i = 0; i < b->nranges && !err; i++) {
		struct range *rg = &b->ranges[i];
		struct kp_uw_row none = { 0 };

		if (i && rg->start < covered) {
			/* overlapped: an .eh_frame FDE already says; a synthetic PLT row never wins */
			if (rg->cfi)
				b->st.fdes_skipped++;
			continue;
		}
		if (i && rg->start > covered)
			err = push_row(b, covered, &none); /* a gap: no information there */
		if (err)
			break;
		if (!rg->cfi) {
			err = compile_plt(b, rg, machine);
		} else {
			if (rg->flags & KP_UW_F_DEBUG)
				b->st.fdes_debug++;
			else
				b->st.fdes_eh++;
			err = compile_range(b, rg);
		}
		covered = rg->end;
	}
	if (!err && b->nranges)
		err = push_row(b, covered, &(struct kp_uw_row){ 0 });
	return err;
}

/* the executable PT_LOAD segments: a mapping's file offset to ELF addresses */
static void read_segments(Elf *elf, struct kp_uw_table *t)
{
	size_t i, n;

	if (elf_getphdrnum(elf, &n))
		return;
	for (i = 0; i < n && t->nsegs < sizeof(t->segs) / sizeof(t->segs[0]); i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		t->segs[t->nsegs].vaddr = ph.p_vaddr;
		t->segs[t->nsegs].off = ph.p_offset;
		t->segs[t->nsegs].filesz = ph.p_filesz;
		t->nsegs++;
	}
}

int kp_uw_compile(Elf *elf, struct kp_uw_table **out, char *why, size_t whylen)
{
	struct builder b = { .why = why, .whylen = whylen };
	struct kp_uw_table *t = NULL;
	Dwarf_CFI *eh = NULL, *dbg_cfi = NULL;
	Dwarf *dbg = NULL;
	Elf_Scn *scn = NULL, *eh_scn = NULL, *dbg_scn = NULL;
	GElf_Ehdr eh_hdr;
	size_t shstrndx, i, n;
	int err = 0;

	*out = NULL;
	if (why && whylen)
		why[0] = 0;
	if (!gelf_getehdr(elf, &eh_hdr) || elf_getshdrstrndx(elf, &shstrndx))
		return fail(&b, -EINVAL, "not a readable ELF file: %s", elf_errmsg(-1));
	{
		size_t size = 0, nsec = 0;

		elf_rawfile(elf, &size);
		if (elf_getshdrnum(elf, &nsec) || !nsec || !eh_hdr.e_shoff ||
		    eh_hdr.e_shoff + (uint64_t)nsec * eh_hdr.e_shentsize > size)
			return fail(&b, -EINVAL,
				    "truncated or stripped of its section headers (%zu bytes)",
				    size);
	}
	if (eh_hdr.e_machine == EM_X86_64)
		b.regs = &x86_64_regs;
	else if (eh_hdr.e_machine == EM_AARCH64)
		b.regs = &arm64_regs;
	else
		return fail(&b, -ENOTSUP, "ELF machine %u: unwind tables are for x86_64 and arm64",
			    eh_hdr.e_machine);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, ".eh_frame"))
			eh_scn = scn;
		else if (name && !strcmp(name, ".debug_frame"))
			dbg_scn = scn;
	}
	if (!eh_scn && !dbg_scn)
		return fail(&b, -ENOENT, "no .eh_frame and no .debug_frame");
	if (eh_scn && (eh = dwarf_getcfi_elf(elf)))
		err = scan_fdes(&b, elf, eh_scn, true, eh);
	if (!err && dbg_scn && (dbg = dwarf_begin_elf(elf, DWARF_C_READ, NULL)) &&
	    (dbg_cfi = dwarf_getcfi(dbg)))
		err = scan_fdes(&b, elf, dbg_scn, false, dbg_cfi);
	if (!err && !b.nranges)
		err = fail(&b, -ENOENT, "its call-frame information describes no code");
	if (!err)
		err = add_plt_sections(&b, elf, shstrndx);
	if (!err)
		err = build_rows(&b, eh_hdr.e_machine);
	if (err)
		goto out;
	if (b.pcs[b.nrows - 1] - b.pcs[0] > UINT32_MAX) {
		err = fail(&b, -EFBIG, "its code spans more than 4 GiB");
		goto out;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		err = -ENOMEM;
		goto out;
	}
	/* merge equal neighbours, make pcs offsets */
	t->base = b.pcs[0];
	t->end = b.pcs[b.nrows - 1];
	for (i = 0, n = 0; i < b.nrows; i++) {
		/* a later row at the same pc replaces the one before (an empty row range) */
		if (n && b.pcs[i] == t->base + b.rows[n - 1].pc) {
			b.rows[n - 1] = b.rows[i];
			b.rows[n - 1].pc = (uint32_t)(b.pcs[i] - t->base);
			if (n >= 2 && same_rules(&b.rows[n - 2], &b.rows[n - 1]))
				n--;
			continue;
		}
		if (n && same_rules(&b.rows[n - 1], &b.rows[i]))
			continue;
		b.rows[n] = b.rows[i];
		b.rows[n].pc = (uint32_t)(b.pcs[i] - t->base);
		n++;
	}
	t->nrows = (uint32_t)n;
	t->rows = realloc(b.rows, n * sizeof(*b.rows));
	if (!t->rows)
		t->rows = b.rows;
	b.rows = NULL;
	t->machine = eh_hdr.e_machine;
	t->stats = b.st;
	t->refs = 1;
	t->build_id_len = sym_elf_build_id(elf, t->build_id, sizeof(t->build_id));
	read_segments(elf, t);
	*out = t;
out:
	if (err == -ENOMEM)
		fail(&b, err, "out of memory");
	if (eh)
		dwarf_cfi_end(eh);
	if (dbg)
		dwarf_end(dbg);
	free(b.ranges);
	free(b.rows);
	free(b.pcs);
	return err;
}

int kp_uw_compile_path(const char *path, struct kp_uw_table **out, char *why, size_t whylen)
{
	struct stat st;
	Elf *elf;
	int err = 0;

	*out = NULL;
	elf_version(EV_CURRENT);
	elf = sym_elf_open(path, &st, &err);
	if (!elf) {
		if (why && whylen)
			snprintf(why, whylen, "%s",
				 err == -ENOEXEC ? "not an ELF file" :
				 err == -EISDIR	 ? "not a regular file" :
						   strerror(-err));
		return err;
	}
	err = kp_uw_compile(elf, out, why, whylen);
	elf_end(elf);
	return err;
}

void kp_uw_table_free(struct kp_uw_table *t)
{
	if (!t)
		return;
	free(t->rows);
	free(t);
}

const struct kp_uw_row *kp_uw_lookup(const struct kp_uw_table *t, uint64_t pc)
{
	uint64_t off;
	uint32_t lo = 0, hi;

	if (!t || !t->nrows || pc < t->base || pc >= t->end)
		return NULL;
	off = pc - t->base;
	hi = t->nrows; /* the answer is in [lo, hi): the last row with row.pc <= off */
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (t->rows[mid].pc <= off)
			lo = mid;
		else
			hi = mid;
	}
	return &t->rows[lo];
}

static const char *reg_str(uint8_t rule, int16_t off, const char *sp, char *buf, size_t len)
{
	switch (rule) {
	case KP_UW_REG_SAME:
		return "s";
	case KP_UW_REG_AT_CFA:
		snprintf(buf, len, "c%+d", off);
		return buf;
	case KP_UW_REG_AT_SP:
		snprintf(buf, len, "exp(%s%+d)", sp, off);
		return buf;
	case KP_UW_REG_VAL_CFA:
		snprintf(buf, len, "v%+d", off);
		return buf;
	case KP_UW_REG_UNDEF:
		return "u";
	default:
		return "exp";
	}
}

const char *kp_uw_row_str(const struct kp_uw_table *t, const struct kp_uw_row *r, char *buf,
			  size_t len)
{
	const struct arch_regs *rg = t->machine == EM_AARCH64 ? &arm64_regs : &x86_64_regs;
	char cfa[48], fp[32], ra[32];

	switch (r->cfa) {
	case KP_UW_CFA_NONE:
		snprintf(cfa, sizeof(cfa), "none");
		break;
	case KP_UW_CFA_SP:
	case KP_UW_CFA_FP:
		snprintf(cfa, sizeof(cfa), "%s%+d",
			 r->cfa == KP_UW_CFA_SP ? rg->sp_name : rg->fp_name, r->cfa_off);
		break;
	case KP_UW_CFA_SP_DEREF:
	case KP_UW_CFA_FP_DEREF:
		snprintf(cfa, sizeof(cfa), "*(%s%+d)",
			 r->cfa == KP_UW_CFA_SP_DEREF ? rg->sp_name : rg->fp_name, r->cfa_off);
		break;
	case KP_UW_CFA_PLT:
		snprintf(cfa, sizeof(cfa), "plt(%s%+d,%d)", rg->sp_name, r->cfa_off, r->fp_off);
		break;
	case KP_UW_CFA_END:
		snprintf(cfa, sizeof(cfa), "end");
		break;
	default:
		snprintf(cfa, sizeof(cfa), "exp");
	}
	snprintf(buf, len, "%s %s %s%s", cfa,
		 r->cfa == KP_UW_CFA_PLT ? "s" :
					   reg_str(r->fp, r->fp_off, rg->sp_name, fp, sizeof(fp)),
		 reg_str(r->ra, r->ra_off, rg->sp_name, ra, sizeof(ra)),
		 r->flags & KP_UW_F_SIGNAL ? " signal" : "");
	return buf;
}
