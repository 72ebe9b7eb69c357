/*
 * sym_asm.c - disassembly of a range of file addresses of an ELF file (capstone), with the
 * source line of every instruction (DWARF): SymResolverAsmCode, GetAsmCodeByAddr.
 *
 * What libkperf returns is kept: SymResolverAsmCode's list holds, for each function the range
 * touches, a node naming it the way objdump labels it ("<hot_loop>", "<hot_loop+0x4>" when the
 * range starts inside it) with its file address and file offset, followed by one node per
 * instruction (funcName NULL, one AsmCode). GetAsmCodeByAddr is the same instructions as text,
 * one per line: "%8lx:\t<bytes>\t<mnemonic>\t<operands>". x86 is in AT&T syntax, as both
 * libkperf's backends (objdump, LLVM) print it; arm64 has only one. The architecture is the
 * file's (ELF e_machine), not the machine's, so an arm64 library disassembles on x86 too.
 *
 * Decoding restarts at every function start, as objdump's does: padding or data at the end
 * of a function cannot shift the next one's instructions.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "sym/capstone_dl.h"

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "kperf/symbol.h"
#include "sym.h"

struct asm_sec {
	uint64_t addr, size, offset;
	const uint8_t *bytes;
	const char *name;
};

struct asm_insn {
	uint64_t addr;
	const uint8_t *bytes;
	size_t size;
	const char *mnemonic, *ops;
	const char *target; /* " <sym+0x..>" after a branch to a known function, else "" */
	const char *file; /* "" when unknown */
	unsigned line;
};

/* where the output goes: a function label, then its instructions */
struct asm_sink {
	int (*label)(void *ctx, uint64_t addr, uint64_t file_off, const char *name);
	int (*insn)(void *ctx, const struct asm_insn *in);
	void *ctx;
};

struct asm_ctx {
	const char *module;
	Elf *elf;
	struct asm_sec *secs;
	size_t nsecs;
	struct sym_file *f; /* symbols and DWARF, NULL when the resolver cannot read the file */
	bool lines;
	csh cs;
	bool cs_open;
	bool aarch64; /* else x86: which member of capstone's detail union holds operands */
	/* the line of the function's last instruction that had one: code the compiler made up
	 * (DWARF line 0) belongs to it, as in objdump -l and libkperf */
	const char *last_file;
	unsigned last_line;
};

static int asm_fail(const char *fmt, const char *module, const char *why)
{
	return kp_fail(LIBSYM_ERR_ASM_RESOLVE_FAILED, -EINVAL, fmt, module, why);
}

static int cmp_sec(const void *a, const void *b)
{
	const struct asm_sec *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* the executable sections of the file that overlap [start, end) */
static int find_sections(struct asm_ctx *c, uint64_t start, uint64_t end)
{
	size_t shstrndx = 0;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(c->elf, &shstrndx))
		shstrndx = 0;
	while ((scn = elf_nextscn(c->elf, scn))) {
		struct asm_sec *s;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || !(sh.sh_flags & SHF_ALLOC) || !sh.sh_size ||
		    sh.sh_addr + sh.sh_size < sh.sh_addr)
			continue;
		if (sh.sh_addr >= end || sh.sh_addr + sh.sh_size <= start)
			continue;
		d = elf_rawdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size < sh.sh_size)
			return asm_fail("the code of %s cannot be read: %s", c->module,
					elf_errmsg(-1));
		s = realloc(c->secs, (c->nsecs + 1) * sizeof(*s));
		if (!s)
			return -ENOMEM;
		c->secs = s;
		s = &c->secs[c->nsecs++];
		s->addr = sh.sh_addr;
		s->size = sh.sh_size;
		s->offset = sh.sh_offset;
		s->bytes = d->d_buf;
		s->name = shstrndx ? elf_strptr(c->elf, shstrndx, sh.sh_name) : NULL;
		if (!s->name)
			s->name = "?";
	}
	if (c->nsecs > 1)
		qsort(c->secs, c->nsecs, sizeof(*c->secs), cmp_sec);
	return 0;
}

static int open_disassembler(struct asm_ctx *c)
{
	GElf_Ehdr eh;
	cs_arch arch;
	cs_mode mode;
	bool x86 = false;

	if (!gelf_getehdr(c->elf, &eh))
		return asm_fail("%s has a malformed ELF header%s", c->module, "");
	switch (eh.e_machine) {
	case EM_X86_64:
		arch = CS_ARCH_X86;
		mode = CS_MODE_64;
		x86 = true;
		break;
	case EM_386:
		arch = CS_ARCH_X86;
		mode = CS_MODE_32;
		x86 = true;
		break;
	case EM_AARCH64:
		arch = CS_ARCH_ARM64;
		c->aarch64 = true;
		mode = eh.e_ident[EI_DATA] == ELFDATA2MSB ? CS_MODE_BIG_ENDIAN : CS_MODE_ARM;
		break;
	default:
		return kp_fail(LIBSYM_ERR_ASM_RESOLVE_FAILED, -EOPNOTSUPP,
			       "%s is code for ELF machine %u: only x86_64, i386 and aarch64 are "
			       "disassembled",
			       c->module, (unsigned)eh.e_machine);
	}
	if (cs_open(arch, mode, &c->cs) != CS_ERR_OK)
		return asm_fail("the disassembler for %s cannot start: %s", c->module,
				cs_strerror(cs_errno(c->cs)));
	c->cs_open = true;
	cs_option(c->cs, CS_OPT_DETAIL, CS_OPT_ON);
	/* bytes that are no instruction come out as ".byte", and decoding goes on */
	cs_option(c->cs, CS_OPT_SKIPDATA, CS_OPT_ON);
	if (x86)
		cs_option(c->cs, CS_OPT_SYNTAX, CS_OPT_SYNTAX_ATT);
	return 0;
}

/* the index of the last symbol starting at or before <addr>, or -1 */
static long sym_before(const struct sym_file *f, uint64_t addr)
{
	size_t lo = 0, hi = f ? f->nsyms : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (long)lo - 1;
}

/* objdump's label of <addr>: the symbol at or before it in the section, else the section */
static void label_of(const struct asm_ctx *c, const struct asm_sec *s, uint64_t addr, char *buf,
		     size_t size)
{
	long i = sym_before(c->f, addr);
	const char *name = s->name;
	uint64_t base = s->addr;

	if (i >= 0 && c->f->syms[i].start >= s->addr) {
		name = sym_file_sym_name(c->f, &c->f->syms[i]);
		base = c->f->syms[i].start;
	}
	if (addr == base)
		snprintf(buf, size, "<%s>", name);
	else
		snprintf(buf, size, "<%s+0x%llx>", name, (unsigned long long)(addr - base));
}

/* " <name+0xoff>" for a relative branch or call into a known function */
static void branch_target(const struct asm_ctx *c, const cs_insn *in, char *buf, size_t size)
{
	const struct sym_elf_sym *es;
	const cs_detail *d = in->detail;
	uint64_t target = 0;
	bool found = false;
	int i;

	buf[0] = '\0';
	if (!c->f || !d || !cs_insn_group(c->cs, in, CS_GRP_BRANCH_RELATIVE))
		return;
	/* the target is the immediate operand (the last one: cbz x0, target) */
	if (c->aarch64) {
		for (i = d->arm64.op_count - 1; i >= 0 && !found; i--)
			if (d->arm64.operands[i].type == ARM64_OP_IMM) {
				target = (uint64_t)d->arm64.operands[i].imm;
				found = true;
			}
	} else {
		for (i = d->x86.op_count - 1; i >= 0 && !found; i--)
			if (d->x86.operands[i].type == X86_OP_IMM) {
				target = (uint64_t)d->x86.operands[i].imm;
				found = true;
			}
	}
	if (!found || !(es = sym_file_find(c->f, target)))
		return;
	if (target == es->start)
		snprintf(buf, size, " <%s>", sym_file_sym_name(c->f, es));
	else
		snprintf(buf, size, " <%s+0x%llx>", sym_file_sym_name(c->f, es),
			 (unsigned long long)(target - es->start));
}

/* the instructions of section <s> that start in [pos, stop) */
static int walk_section(struct asm_ctx *c, const struct asm_sec *s, uint64_t pos, uint64_t stop,
			const struct asm_sink *sink)
{
	uint64_t sec_end = s->addr + s->size;
	cs_insn *in = cs_malloc(c->cs);
	char label[512], target[512];
	bool first = true;
	int err = 0;

	if (!in)
		return -ENOMEM;
	while (!err && pos < stop) {
		long i = sym_before(c->f, pos);
		uint64_t chunk_end = sec_end, a = pos;
		const uint8_t *code = s->bytes + (pos - s->addr);
		size_t left;

		if (i + 1 < (long)(c->f ? c->f->nsyms : 0) && c->f->syms[i + 1].start < chunk_end)
			chunk_end = c->f->syms[i + 1].start;
		if (first || (i >= 0 && c->f->syms[i].start == pos)) {
			label_of(c, s, pos, label, sizeof(label));
			err = sink->label(sink->ctx, pos, pos - s->addr + s->offset, label);
			first = false;
			c->last_file = "";
			c->last_line = 0;
		}
		left = (size_t)(chunk_end - pos);
		while (!err && a < stop && cs_disasm_iter(c->cs, &code, &left, &a, in)) {
			struct asm_insn out = {
				.addr = in->address,
				.bytes = in->bytes,
				.size = in->size,
				.mnemonic = in->mnemonic,
				.ops = in->op_str,
				.target = target,
			};
			const char *file;
			unsigned line;

			branch_target(c, in, target, sizeof(target));
			if (c->lines && sym_dwarf_line(c->f, in->address, &file, &line) == 0) {
				c->last_file = file ? file : "";
				c->last_line = line;
			}
			out.file = c->last_file;
			out.line = c->last_line;
			err = sink->insn(sink->ctx, &out);
		}
		pos = chunk_end;
	}
	cs_free(in, 1);
	return err;
}

static void ctx_close(struct asm_ctx *c)
{
	if (c->cs_open)
		cs_close(&c->cs);
	free(c->secs);
	if (c->elf)
		elf_end(c->elf);
}

/* Disassemble [start, end) of <module> into <sink>; the resolver's lock is held by the caller. */
static int asm_walk(const char *module, uint64_t start, uint64_t end, const struct asm_sink *sink)
{
	struct asm_ctx c = { .module = module };
	struct sym_file_ref ref = { .path = module, .open_path = module };
	struct stat st;
	size_t i;
	int fd, err;

	fd = open(module, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return asm_fail("cannot open %s: %s", module, strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return asm_fail("%s is not a regular file%s", module, "");
	}
	elf_version(EV_CURRENT);
	c.elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (c.elf && elf_cntl(c.elf, ELF_C_FDREAD)) {
		elf_end(c.elf);
		c.elf = NULL;
	}
	close(fd);
	if (!c.elf || elf_kind(c.elf) != ELF_K_ELF) {
		ctx_close(&c);
		return asm_fail("%s is not an ELF file%s", module, "");
	}
	err = open_disassembler(&c);
	if (!err)
		err = find_sections(&c, start, end);
	if (!err && !c.nsecs)
		err = kp_fail(
			LIBSYM_ERR_ASM_RESOLVE_FAILED, -ENOENT,
			"[%#llx, %#llx) holds no code of %s: it is outside its executable "
			"sections (file addresses are expected, as nm and objdump print them)",
			(unsigned long long)start, (unsigned long long)end, module);
	if (err) {
		ctx_close(&c);
		return err;
	}
	/* names and lines are a bonus: a file the resolver cannot read still disassembles */
	if (sym_file_get(&ref, KP_SYM_DWARF, &c.f) == 0)
		c.lines = sym_file_dwarf(c.f) == 0;
	sym_drop_error();
	for (i = 0; i < c.nsecs && !err; i++) {
		const struct asm_sec *s = &c.secs[i];

		err = walk_section(&c, s, start > s->addr ? start : s->addr,
				   end < s->addr + s->size ? end : s->addr + s->size, sink);
	}
	ctx_close(&c);
	return err;
}

/* ---- SymResolverAsmCode: a StackAsm list ---- */

struct list_out {
	struct StackAsm *head, *tail;
};

static struct StackAsm *append(struct list_out *o)
{
	struct StackAsm *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	if (o->tail)
		o->tail->next = n;
	else
		o->head = n;
	o->tail = n;
	return n;
}

static int list_label(void *ctx, uint64_t addr, uint64_t file_off, const char *name)
{
	struct StackAsm *n = append(ctx);

	if (!n || !(n->funcName = strdup(name)))
		return -ENOMEM;
	n->funcStartAddr = addr;
	n->functFileOffset = file_off;
	return 0;
}

static char *code_text(const struct asm_insn *in)
{
	char *s;

	if (asprintf(&s, "%s%s%s%s", in->mnemonic, in->ops[0] ? " " : "", in->ops, in->target) < 0)
		return NULL;
	return s;
}

static int list_insn(void *ctx, const struct asm_insn *in)
{
	struct StackAsm *n = append(ctx);
	struct AsmCode *a;

	if (!n || !(a = n->asmCode = calloc(1, sizeof(*a))))
		return -ENOMEM;
	a->addr = in->addr;
	a->lineNum = in->line;
	a->code = code_text(in);
	a->fileName = strdup(in->file);
	return a->code && a->fileName ? 0 : -ENOMEM;
}

static void free_list(struct StackAsm *n)
{
	while (n) {
		struct StackAsm *next = n->next;

		if (n->asmCode) {
			free(n->asmCode->code);
			free(n->asmCode->fileName);
			free(n->asmCode);
		}
		free(n->funcName);
		free(n);
		n = next;
	}
}

static void release_list(void *p)
{
	free_list(p);
}

static int check_module(const char *module)
{
	struct stat st;

	if (!module || !*module || stat(module, &st))
		return kp_fail(LIBSYM_ERR_FILE_INVALID, -ENOENT, "%s%s does not exist",
			       module ? "module " : "the module (NULL)", module ? module : "");
	return 0;
}

KP_EXPORT struct StackAsm *SymResolverAsmCode(const char *moduleName, unsigned long startAddr,
					      unsigned long endAddr)
{
	struct list_out out = { 0 };
	struct asm_sink sink = { list_label, list_insn, &out };
	int err;

	kp_clear();
	err = check_module(moduleName);
	if (!err && startAddr >= endAddr)
		err = kp_fail(LIBSYM_ERR_START_SMALLER_END, -EINVAL,
			      "the end address %#lx must be above the start address %#lx", endAddr,
			      startAddr);
	if (!err) {
		sym_lock();
		err = asm_walk(moduleName, startAddr, endAddr, &sink);
		sym_unlock();
	}
	if (!err && !out.head)
		err = kp_fail(LIBSYM_ERR_ASM_RESOLVE_FAILED, -ENOENT,
			      "no instruction of %s starts in [%#lx, %#lx)", moduleName, startAddr,
			      endAddr);
	if (!err)
		err = kp_registry_add(out.head, release_list);
	if (err) {
		free_list(out.head);
		kp_public_fail(err);
		return NULL;
	}
	return out.head;
}

KP_EXPORT void FreeAsmStack(struct StackAsm *stackAsm)
{
	/* only a list SymResolverAsmCode returned, once: a double free is ignored */
	if (stackAsm)
		kp_registry_release(stackAsm);
}

/* ---- GetAsmCodeByAddr: text ---- */

static int text_label(void *ctx, uint64_t addr, uint64_t file_off, const char *name)
{
	(void)ctx;
	(void)addr;
	(void)file_off;
	(void)name;
	return 0; /* the text has instructions only, as libkperf's */
}

static int text_insn(void *ctx, const struct asm_insn *in)
{
	FILE *f = ctx;
	size_t i;

	fprintf(f, "%8llx:\t", (unsigned long long)in->addr);
	for (i = 0; i < in->size; i++)
		fprintf(f, "%s%02x", i ? " " : "", in->bytes[i]);
	fprintf(f, "\t%s%s%s%s\n", in->mnemonic, in->ops[0] ? "\t" : "", in->ops, in->target);
	return ferror(f) ? -ENOMEM : 0;
}

KP_EXPORT int GetAsmCodeByAddr(const char *moduleName, unsigned long startAddr,
			       unsigned long endAddr, char **asmCode)
{
	struct asm_sink sink = { text_label, text_insn, NULL };
	size_t len = 0;
	char *text = NULL;
	FILE *f;
	int err;

	kp_clear();
	if (!asmCode)
		err = kp_fail(LIBPERF_ERR_NULL_POINTER, -EINVAL,
			      "GetAsmCodeByAddr needs a place for the text (asmCode is NULL)");
	else
		err = check_module(moduleName);
	if (!err && startAddr > endAddr)
		err = kp_fail(LIBSYM_ERR_START_SMALLER_END, -EINVAL,
			      "the start address %#lx is above the end address %#lx", startAddr,
			      endAddr);
	if (err) {
		kp_public_fail(err);
		return Perrorno();
	}
	*asmCode = NULL;
	f = open_memstream(&text, &len);
	if (!f)
		return kp_public_fail(-ENOMEM), Perrorno();
	sink.ctx = f;
	/* an empty range is empty text, as in libkperf */
	if (startAddr < endAddr) {
		sym_lock();
		err = asm_walk(moduleName, startAddr, endAddr, &sink);
		sym_unlock();
	}
	if (fclose(f) && !err)
		err = -ENOMEM;
	if (!err && startAddr < endAddr && !len)
		err = kp_fail(LIBSYM_ERR_ASM_RESOLVE_FAILED, -ENOENT,
			      "no instruction of %s starts in [%#lx, %#lx)", moduleName, startAddr,
			      endAddr);
	if (err) {
		free(text);
		kp_public_fail(err);
		return Perrorno();
	}
	*asmCode = text;
	return 0;
}
