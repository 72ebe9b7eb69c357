/*
 * python_split.c - where the interpreter loop is when the compiler split
 * _PyEval_EvalFrameDefault in two (python.h: kp_py_eval_split). GCC's hot/cold partitioning
 * under profile-guided optimization moves part of a function to another place in .text under
 * no exported symbol: Debian forky's python3.14 (3.14.8, x86_64) keeps 1 196 bytes at the
 * symbol and its 84 KB loop, where every call out of the interpreter is made from, in a part
 * of its own 1.4 MB below. That part has its own FDE in .eh_frame; the function's direct
 * branches (jmp/jcc on x86_64, b/b.cond on arm64) go there. Found here: the FDE (from the
 * .eh_frame_hdr search table) that most of those branches land in, at least MIN_BRANCHES of
 * them, with no other function's symbol starting inside it; looked for only when the symbol is
 * smaller than any interpreter loop (SPLIT_BELOW; 3.11 and 3.13's are whole, 40-60 KB).
 */
#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "python.h"

#define MIN_BRANCHES 2
/* an interpreter loop is tens of KB: a symbol this small is only the part left at the entry */
#define SPLIT_BELOW 8192
#define MAX_PARTS 64 /* distinct FDEs branched to that are counted */

/* the .eh_frame_hdr search table (ld, gold and lld write it so: datarel sdata4 pairs) */
struct hdr {
	const uint8_t *table;
	uint64_t count, addr;
};

static int32_t s32(const uint8_t *p)
{
	int32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static bool read_hdr(Elf *elf, struct hdr *h)
{
	Elf_Scn *scn = NULL;
	size_t shstr;

	if (elf_getshdrstrndx(elf, &shstr))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		const uint8_t *p;
		const char *name;
		uint32_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(name = elf_strptr(elf, shstr, sh.sh_name)) || strcmp(name, ".eh_frame_hdr"))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size < 12)
			return false;
		p = d->d_buf;
		/* version 1, eh_frame_ptr pcrel|sdata4, fde_count udata4, table datarel|sdata4 */
		if (p[0] != 1 || p[1] != 0x1b || p[2] != 0x03 || p[3] != 0x3b)
			return false;
		memcpy(&n, p + 8, sizeof(n));
		if (12 + (uint64_t)n * 8 > d->d_size)
			return false;
		h->table = p + 12;
		h->count = n;
		h->addr = sh.sh_addr;
		return true;
	}
	return false;
}

static uint64_t fde_start(const struct hdr *h, uint64_t i)
{
	return h->addr + (uint64_t)(int64_t)s32(h->table + i * 8);
}

/* the index of the FDE whose range may hold <pc> (the last starting at or before it), or -1 */
static int64_t fde_of(const struct hdr *h, uint64_t pc)
{
	uint64_t lo = 0, hi = h->count;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (fde_start(h, mid) <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? (int64_t)lo - 1 : -1;
}

/* the bytes of the code at [addr, addr + size) in the file */
static const uint8_t *code_bytes(Elf *elf, uint64_t addr, uint64_t size)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || addr < sh.sh_addr ||
		    addr + size > sh.sh_addr + sh.sh_size)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || addr + size - sh.sh_addr > d->d_size)
			return NULL;
		return (const uint8_t *)d->d_buf + (addr - sh.sh_addr);
	}
	return NULL;
}

/* does a function symbol other than _PyEval_EvalFrameDefault's parts start in [lo, hi)? */
static bool other_function_in(Elf *elf, uint64_t lo, uint64_t hi)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB) || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(d, (int)i, &sym) ||
			    GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_value < lo ||
			    sym.st_value >= hi)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name || strncmp(name, "_PyEval_EvalFrameDefault", 24))
				return true;
		}
	}
	return false;
}

/* the target of the direct branch at <p> (address <pc>), false when it is not one */
static bool branch(Elf64_Half machine, const uint8_t *p, uint64_t left, uint64_t pc, uint64_t *to)
{
	uint32_t w;

	if (machine == EM_X86_64) {
		if (left >= 5 && p[0] == 0xe9) { /* jmp rel32 */
			*to = pc + 5 + (uint64_t)(int64_t)s32(p + 1);
			return true;
		}
		if (left >= 6 && p[0] == 0x0f && (p[1] & 0xf0) == 0x80) { /* jcc rel32 */
			*to = pc + 6 + (uint64_t)(int64_t)s32(p + 2);
			return true;
		}
		return false;
	}
	if (machine != EM_AARCH64 || left < 4 || (pc & 3))
		return false;
	memcpy(&w, p, sizeof(w));
	if ((w & 0xfc000000u) == 0x14000000u) { /* b imm26 */
		*to = pc + (uint64_t)((int64_t)((int32_t)(w << 6) >> 6) * 4);
		return true;
	}
	if ((w & 0xff000010u) == 0x54000000u) { /* b.cond imm19 */
		*to = pc + (uint64_t)((int64_t)((int32_t)(w << 8) >> 13) * 4);
		return true;
	}
	return false;
}

bool kp_py_eval_split(Elf *elf, uint64_t eval, uint64_t size, uint64_t *lo, uint64_t *hi)
{
	struct {
		int64_t fde;
		unsigned hits;
	} parts[MAX_PARTS];
	unsigned nparts = 0, i, best = 0;
	const uint8_t *code;
	GElf_Ehdr eh;
	struct hdr h;
	uint64_t at, step;

	if (size >= SPLIT_BELOW || !gelf_getehdr(elf, &eh) ||
	    (eh.e_machine != EM_X86_64 && eh.e_machine != EM_AARCH64) || !read_hdr(elf, &h) ||
	    !(code = code_bytes(elf, eval, size)))
		return false;
	step = eh.e_machine == EM_AARCH64 ? 4 :
					    1; /* x86: every byte, as a branch may start there */
	for (at = 0; at < size; at += step) {
		uint64_t to;
		int64_t k;

		if (!branch(eh.e_machine, code + at, size - at, eval + at, &to) ||
		    (to >= eval && to < eval + size) || (k = fde_of(&h, to)) < 0)
			continue;
		for (i = 0; i < nparts && parts[i].fde != k; i++)
			;
		if (i == nparts) {
			if (nparts == MAX_PARTS)
				continue;
			parts[nparts].fde = k;
			parts[nparts++].hits = 0;
		}
		parts[i].hits++;
	}
	for (i = 1; i < nparts; i++)
		if (parts[i].hits > parts[best].hits)
			best = i;
	if (!nparts || parts[best].hits < MIN_BRANCHES || (uint64_t)parts[best].fde + 1 >= h.count)
		return false;
	*lo = fde_start(&h, (uint64_t)parts[best].fde);
	*hi = fde_start(&h, (uint64_t)parts[best].fde + 1); /* its end, or the padding after */
	if (*lo == eval || *hi <= *lo || other_function_in(elf, *lo, *hi))
		return false;
	return true;
}
