/*
 * test_sym_asm.c - SymResolverAsmCode, GetAsmCodeByAddr, FreeAsmStack against objdump: the
 * same function labels (address, "<name+0xoff>", file offset), the same instructions (address,
 * bytes, mnemonic) and the same source line for each, on x86_64 workloads and on an arm64
 * library built here (the architecture comes from the file); and every bad input with
 * libkperf's code.
 */
#include <criterion/criterion.h>

#include "asmtest.h"
#include "kperf/pcerrc.h"
#include "kperf/symbol.h"

static void fini(void)
{
	SymResolverDestroy();
}

TestSuite(sym_asm, .fini = fini, .timeout = 60);

static struct od od, od_sfx; /* large: not on the stack */

/* the mnemonic of code "movq -8(%rbp), %rax" */
static void mnemonic_of(const char *code, char *buf, size_t size)
{
	snprintf(buf, size, "%.*s", (int)strcspn(code, " "), code);
}

/* Compare the list for [s, e) of <bin> with <tool>'s output; <sfx>: objdump with -M suffix,
 * whose AT&T mnemonics carry the size ("pushq"), as capstone's mostly do. Returns the number
 * of instructions. */
static int check_against_objdump(const char *bin, unsigned long s, unsigned long e,
				 const char *tool, bool x86)
{
	struct StackAsm *list = SymResolverAsmCode(bin, s, e), *n;
	int h = 0, i = 0;

	cr_assert_not_null(list, "%d %s", Perrorno(), Perror());
	cr_assert_eq(od_run(tool, NULL, bin, s, e, &od), 0);
	if (x86)
		cr_assert_eq(od_run(tool, "suffix", bin, s, e, &od_sfx), 0);
	cr_assert_gt(od.n, 0, "%s printed no instruction of %s", tool, bin);
	for (n = list; n; n = n->next) {
		if (n->funcName) {
			cr_assert_null(n->asmCode);
			cr_assert_lt(h, od.nhdr, "more labels than %s's %d", tool, od.nhdr);
			cr_assert_str_eq(n->funcName, od.hdr[h].name);
			cr_assert_eq(n->funcStartAddr, od.hdr[h].addr, "%s", n->funcName);
			cr_assert_eq(n->functFileOffset, od.hdr[h].off, "%s", n->funcName);
			h++;
			continue;
		}
		cr_assert_not_null(n->asmCode);
		cr_assert_lt(i, od.n, "more instructions than %s's %d", tool, od.n);
		{
			const struct od_insn *o = &od.insn[i];
			char mn[64];

			mnemonic_of(n->asmCode->code, mn, sizeof(mn));
			cr_assert_eq(n->asmCode->addr, o->addr,
				     "instruction %d: %#lx, %s says %#lx", i, n->asmCode->addr,
				     tool, o->addr);
			cr_assert(!strcmp(mn, o->mnemonic) ||
					  (x86 && !strcmp(mn, od_sfx.insn[i].mnemonic)),
				  "%#lx: '%s', %s says '%s'%s%s", o->addr, n->asmCode->code, tool,
				  o->mnemonic, x86 ? " or " : "",
				  x86 ? od_sfx.insn[i].mnemonic : "");
			cr_assert_eq(n->asmCode->lineNum, o->line,
				     "%#lx (%s): line %u, %s -l says %u", o->addr, n->asmCode->code,
				     n->asmCode->lineNum, tool, o->line);
			cr_assert(o->line == 0 || n->asmCode->fileName[0] == '/', "%s",
				  n->asmCode->fileName);
		}
		i++;
	}
	cr_assert_eq(h, od.nhdr, "%d labels, %s has %d", h, tool, od.nhdr);
	cr_assert_eq(i, od.n, "%d instructions, %s has %d", i, tool, od.n);
	FreeAsmStack(list);
	return i;
}

Test(sym_asm, hot_loop_as_objdump_sees_it)
{
	char bin[PATH_MAX];
	unsigned long s, size;
	unsigned hot = (unsigned)src_line("tests/workloads/cpuburn.c", "HOT_LINE");
	struct StackAsm *list, *n;
	int hot_insns = 0, jumps = 0;

	abs_of(tu_path("workloads/cpuburn"), bin);
	s = nm_size("nm", bin, "hot_loop", &size);
	cr_assert_gt(size, 0);
	cr_assert_gt(check_against_objdump(bin, s, s + size, "objdump", true), 10);
	/* the loop is on HOT_LINE; its branches name their target inside hot_loop */
	list = SymResolverAsmCode(bin, s, s + size);
	cr_assert_str_eq(list->funcName, "<hot_loop>");
	for (n = list->next; n; n = n->next) {
		cr_assert_null(n->funcName);
		cr_assert(strstr(n->asmCode->fileName, "tests/workloads/cpuburn.c"), "%s",
			  n->asmCode->fileName);
		hot_insns += n->asmCode->lineNum == hot;
		if (n->asmCode->code[0] == 'j') {
			cr_assert(strstr(n->asmCode->code, " <hot_loop+0x"), "%s",
				  n->asmCode->code);
			jumps++;
		}
	}
	cr_assert_gt(hot_insns, 5, "%d instructions on line %u", hot_insns, hot);
	cr_assert_eq(jumps, 2);
	FreeAsmStack(list);
}

Test(sym_asm, a_range_over_three_functions_has_their_three_labels)
{
	char bin[PATH_MAX];
	unsigned long hot, size, main_addr, main_size;

	abs_of(tu_path("workloads/cpuburn"), bin);
	hot = nm_size("nm", bin, "hot_loop", &size);
	main_addr = nm_size("nm", bin, "main", &main_size);
	cr_assert_gt(main_addr, hot);
	check_against_objdump(bin, hot, main_addr + main_size, "objdump", true);
	cr_assert_eq(od.nhdr, 3);
	cr_assert_str_eq(od.hdr[0].name, "<hot_loop>");
	cr_assert_str_eq(od.hdr[1].name, "<burn>");
	cr_assert_str_eq(od.hdr[2].name, "<main>");
}

Test(sym_asm, a_range_starting_inside_a_function_is_labelled_with_the_offset)
{
	char bin[PATH_MAX];
	unsigned long hot, size, third;
	struct StackAsm *list;

	abs_of(tu_path("workloads/cpuburn"), bin);
	hot = nm_size("nm", bin, "hot_loop", &size);
	cr_assert_eq(od_run("objdump", NULL, bin, hot, hot + size, &od), 0);
	third = od.insn[2].addr;
	check_against_objdump(bin, third, hot + size, "objdump", true);
	list = SymResolverAsmCode(bin, third, hot + size);
	cr_assert_not_null(list);
	cr_assert_eq(list->funcStartAddr, third);
	cr_assert_eq(strncmp(list->funcName, "<hot_loop+0x", 12), 0, "%s", list->funcName);
	cr_assert_eq(list->next->asmCode->addr, third);
	FreeAsmStack(list);
}

Test(sym_asm, shared_library_and_cxx_workload)
{
	char lib[PATH_MAX], cxx[PATH_MAX];
	unsigned long s, size;

	abs_of(tu_path("workloads/libwl.so"), lib);
	s = nm_size("nm", lib, "wl_lib_work", &size);
	cr_assert_gt(size, 0);
	check_against_objdump(lib, s, s + size, "objdump", true);
	/* a C++ function: labels keep the mangled name, as objdump prints it */
	abs_of(tu_path("workloads/sym_cxx"), cxx);
	s = nm_size("nm", cxx, "main", &size);
	cr_assert_gt(size, 0);
	check_against_objdump(cxx, s, s + size, "objdump", true);
}

Test(sym_asm, text_has_the_bytes_of_the_file_and_the_list_s_instructions)
{
	char bin[PATH_MAX], *text = NULL, *line, *next;
	unsigned long s, size;
	struct StackAsm *list, *n;
	unsigned char file[4096];
	int fd, lines = 0;

	abs_of(tu_path("workloads/cpuburn"), bin);
	s = nm_size("nm", bin, "hot_loop", &size);
	cr_assert_eq(GetAsmCodeByAddr(bin, s, s + size, &text), 0, "%s", Perror());
	cr_assert_not_null(text);
	list = SymResolverAsmCode(bin, s, s + size);
	cr_assert_not_null(list);
	/* a PIE's text: file offset == address */
	fd = open(bin, O_RDONLY);
	cr_assert_eq(pread(fd, file, size, (off_t)list->functFileOffset), (ssize_t)size);
	close(fd);
	for (n = list->next, line = text; line && *line; line = next, n = n->next) {
		unsigned long addr;
		char bytes[128] = "", want[128] = "", mn[64], code[256];
		int pos = 0, k;

		next = strchr(line, '\n');
		cr_assert_not_null(next, "every line ends with a newline");
		*next++ = '\0';
		cr_assert_not_null(n, "more lines than instructions");
		cr_assert_eq(sscanf(line, "%lx:\t%127[^\t]\t%n", &addr, bytes, &pos), 2, "%s",
			     line);
		cr_assert_eq(line[8], ':', "the address is right-aligned on 8 columns: '%s'", line);
		cr_assert_eq(addr, n->asmCode->addr);
		k = 0;
		for (unsigned long a = addr; a < (n->next ? n->next->asmCode->addr : s + size); a++)
			k += snprintf(want + k, sizeof(want) - (size_t)k, "%s%02x", k ? " " : "",
				      file[a - s]);
		cr_assert_str_eq(bytes, want, "%#lx", addr);
		/* then "mnemonic\toperands", the list's "mnemonic operands" */
		snprintf(code, sizeof(code), "%s", line + pos);
		mnemonic_of(n->asmCode->code, mn, sizeof(mn));
		cr_assert_eq(strncmp(code, mn, strlen(mn)), 0, "'%s' vs '%s'", code,
			     n->asmCode->code);
		cr_assert(code[strlen(mn)] == '\t' || code[strlen(mn)] == '\0', "'%s'", code);
		if (code[strlen(mn)] == '\t')
			code[strlen(mn)] = ' ';
		cr_assert_str_eq(code, n->asmCode->code);
		lines++;
	}
	cr_assert_null(n, "fewer lines than instructions");
	cr_assert_gt(lines, 10);
	free(text);
	FreeAsmStack(list);
}

static const char a64_src[] = "static int helper(int x)\n"
			      "{\n"
			      "	return x * 7 + 3;\n"
			      "}\n"
			      "\n"
			      "int a64_sum(const int *v, int n)\n"
			      "{\n"
			      "	int s = 0;\n"
			      "\n"
			      "	for (int i = 0; i < n; i++)\n"
			      "		s += helper(v[i]);\n"
			      "	return s;\n"
			      "}\n";

Test(sym_asm, arm64_library_disassembles_by_its_elf_machine)
{
	char dir[PATH_MAX], src[PATH_MAX + 16], lib[PATH_MAX + 16];
	unsigned long s, size, hs, hsize;
	struct StackAsm *list, *n;
	bool bl = false;
	FILE *f;

	scratch_dir(dir, sizeof(dir));
	snprintf(src, sizeof(src), "%s/a64.c", dir);
	snprintf(lib, sizeof(lib), "%s/liba64.so", dir);
	f = fopen(src, "w");
	cr_assert_not_null(f);
	fputs(a64_src, f);
	fclose(f);
	cr_assert_eq(sh("cd '%s' && clang --target=aarch64-linux-gnu -g -O1 -fPIC -fno-inline -c "
			"a64.c -o a64.o && aarch64-linux-gnu-ld -shared --build-id -o liba64.so "
			"a64.o",
			dir),
		     0, "clang for aarch64 and aarch64-linux-gnu-ld (binutils-aarch64-linux-gnu)");
	s = nm_size("aarch64-linux-gnu-nm", lib, "a64_sum", &size);
	hs = nm_size("aarch64-linux-gnu-nm", lib, "helper", &hsize);
	cr_assert_gt(size, 0);
	cr_assert_gt(check_against_objdump(lib, s, hs + hsize, "aarch64-linux-gnu-objdump", false),
		     15);
	cr_assert_eq(od.nhdr, 2);
	list = SymResolverAsmCode(lib, s, hs + hsize);
	for (n = list; n; n = n->next)
		if (n->asmCode && !strncmp(n->asmCode->code, "bl ", 3)) {
			cr_assert(strstr(n->asmCode->code, " <helper>"), "%s", n->asmCode->code);
			cr_assert_eq(n->asmCode->lineNum, 11);
			bl = true;
		}
	cr_assert(bl, "a64_sum calls helper");
	FreeAsmStack(list);
	rm_tree(dir);
}

Test(sym_asm, bad_inputs_have_libkperf_s_codes)
{
	char bin[PATH_MAX], src[PATH_MAX], dir[PATH_MAX], obj[PATH_MAX + 16], *text;
	unsigned long s, size;
	struct StackAsm *list;

	abs_of(tu_path("workloads/cpuburn"), bin);
	abs_of("tests/workloads/cpuburn.c", src);
	s = nm_size("nm", bin, "hot_loop", &size);

	cr_assert_null(SymResolverAsmCode(NULL, s, s + size));
	cr_assert_eq(Perrorno(), LIBSYM_ERR_FILE_INVALID);
	cr_assert(strstr(Perror(), "does not exist"), "%s", Perror());
	cr_assert_null(SymResolverAsmCode("/nonexistent/libfoo.so", s, s + size));
	cr_assert_eq(Perrorno(), LIBSYM_ERR_FILE_INVALID);
	cr_assert(strstr(Perror(), "/nonexistent/libfoo.so does not exist"), "%s", Perror());
	cr_assert_null(SymResolverAsmCode(src, 0, 100));
	cr_assert_eq(Perrorno(), LIBSYM_ERR_ASM_RESOLVE_FAILED);
	cr_assert(strstr(Perror(), "is not an ELF file"), "%s", Perror());
	cr_assert_null(SymResolverAsmCode("/tmp", 0, 100));
	cr_assert_eq(Perrorno(), LIBSYM_ERR_ASM_RESOLVE_FAILED);
	cr_assert(strstr(Perror(), "/tmp is not a regular file"), "%s", Perror());
	cr_assert_null(SymResolverAsmCode(bin, s + size, s));
	cr_assert_eq(Perrorno(), LIBSYM_ERR_START_SMALLER_END);
	cr_assert(strstr(Perror(), "must be above the start address"), "%s", Perror());
	cr_assert_null(SymResolverAsmCode(bin, s, s));
	cr_assert_eq(Perrorno(), LIBSYM_ERR_START_SMALLER_END);
	/* below the first section, and the ELF header's own bytes */
	cr_assert_null(SymResolverAsmCode(bin, 0x10, 0x20));
	cr_assert_eq(Perrorno(), LIBSYM_ERR_ASM_RESOLVE_FAILED);
	cr_assert(strstr(Perror(), "outside its executable sections"), "%s", Perror());
	/* a run-time address instead of a file address */
	cr_assert_null(SymResolverAsmCode(bin, 0x7f0000000000, 0x7f0000000100));
	cr_assert_eq(Perrorno(), LIBSYM_ERR_ASM_RESOLVE_FAILED);

	text = (char *)1;
	cr_assert_eq(GetAsmCodeByAddr(NULL, s, s + size, &text), LIBSYM_ERR_FILE_INVALID);
	cr_assert_eq(Perrorno(), LIBSYM_ERR_FILE_INVALID);
	cr_assert_eq(GetAsmCodeByAddr(bin, s, s + size, NULL), LIBPERF_ERR_NULL_POINTER);
	cr_assert(strstr(Perror(), "asmCode is NULL"), "%s", Perror());
	cr_assert_eq(GetAsmCodeByAddr(bin, s + 1, s, &text), LIBSYM_ERR_START_SMALLER_END);
	cr_assert(strstr(Perror(), "is above the end address"), "%s", Perror());
	cr_assert_eq(GetAsmCodeByAddr(src, 0, 100, &text), LIBSYM_ERR_ASM_RESOLVE_FAILED);
	cr_assert_null(text, "no text on failure");
	cr_assert_eq(GetAsmCodeByAddr(bin, 0x10, 0x20, &text), LIBSYM_ERR_ASM_RESOLVE_FAILED);
	/* an empty range is empty text, as in libkperf */
	cr_assert_eq(GetAsmCodeByAddr(bin, s, s, &text), 0, "%s", Perror());
	cr_assert_str_eq(text, "");
	free(text);

	/* code for a machine without a disassembler here: RISC-V */
	scratch_dir(dir, sizeof(dir));
	snprintf(obj, sizeof(obj), "%s/rv.o", dir);
	cr_assert_eq(sh("echo 'int f(int x) { return x + 1; }' | clang --target=riscv64-linux-gnu "
			"-x c -c - -o '%s'",
			obj),
		     0);
	cr_assert_null(SymResolverAsmCode(obj, 0, 16));
	cr_assert_eq(Perrorno(), LIBSYM_ERR_ASM_RESOLVE_FAILED);
	cr_assert(strstr(Perror(), "ELF machine 243"), "%s", Perror());
	rm_tree(dir);

	/* freeing: NULL, twice, and a list that is not one */
	FreeAsmStack(NULL);
	list = SymResolverAsmCode(bin, s, s + size);
	cr_assert_not_null(list);
	FreeAsmStack(list);
	FreeAsmStack(list);
	{
		struct StackAsm fake = { 0 };

		FreeAsmStack(&fake);
	}
}
