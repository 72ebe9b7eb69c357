/*
 * test_sym_code.c - the resolver's file-level questions and the modules a caller announces:
 * SymGetBuildId (equal to readelf -n), SymResolverMapCodeAddr (file:line, firstLine), the
 * firstLine and mntPoint of every resolved Symbol, SymResolverUpdateModule(NoDwarf) on live
 * and exited processes, the mountinfo parser; every bad input with libkperf's code.
 */
#include <criterion/criterion.h>
#include <sys/stat.h>

#include "asmtest.h"
#include "kperf/pcerrc.h"
#include "kperf/symbol.h"
#include "sym/sym.h"

#define HOT_SRC "tests/workloads/sym_hot.c"

static void fini(void)
{
	SymResolverDestroy();
}

TestSuite(sym_code, .fini = fini, .timeout = 60);

/* readelf -n's "Build ID: ..." of <file>, "" when none */
static void readelf_build_id(const char *file, char *buf, size_t size)
{
	char cmd[PATH_MAX + 64], *out, *p;

	snprintf(cmd, sizeof(cmd), "readelf -n '%s' 2>/dev/null", file);
	out = tu_run(cmd, NULL);
	buf[0] = '\0';
	p = out ? strstr(out, "Build ID: ") : NULL;
	if (p)
		sscanf(p + 10, "%255s", buf);
	free(out);
}

Test(sym_code, build_id_equals_readelf_s)
{
	const char *rel[] = { "workloads/cpuburn", "workloads/libwl.so", "workloads/sym_cxx" };
	char path[PATH_MAX], want[256], *id;
	size_t i;

	for (i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		abs_of(tu_path(rel[i]), path);
		readelf_build_id(path, want, sizeof(want));
		cr_assert_eq(strlen(want), 40, "readelf: %s", want);
		cr_assert_eq(SymGetBuildId(path, &id), 0, "%s", Perror());
		cr_assert_str_eq(id, want, "%s", path);
		free(id);
	}
	readelf_build_id("/lib/x86_64-linux-gnu/libc.so.6", want, sizeof(want));
	cr_assert_eq(SymGetBuildId("/lib/x86_64-linux-gnu/libc.so.6", &id), 0, "%s", Perror());
	cr_assert_str_eq(id, want);
	free(id);
}

Test(sym_code, build_id_failures)
{
	char dir[PATH_MAX], f[PATH_MAX + 32], want[256], *id = (char *)1;
	char hex[2 * 68 + 1];
	int i;

	scratch_dir(dir, sizeof(dir));
	cr_assert_eq(SymGetBuildId("/bin/true", NULL), LIBPERF_ERR_NULL_POINTER);
	cr_assert(strstr(Perror(), "buildId is NULL"), "%s", Perror());
	cr_assert_eq(SymGetBuildId(NULL, &id), LIBSYM_ERR_OPEN_FILE_FAILED);
	cr_assert_null(id, "*buildId is NULL after a failure");
	cr_assert(strstr(Perror(), "moduleName is NULL"), "%s", Perror());
	cr_assert_eq(SymGetBuildId("/nonexistent/x.so", &id), LIBSYM_ERR_OPEN_FILE_FAILED);
	cr_assert_eq(Perrorno(), LIBSYM_ERR_OPEN_FILE_FAILED);
	cr_assert(strstr(Perror(), "cannot open /nonexistent/x.so: No such file"), "%s", Perror());
	cr_assert_eq(SymGetBuildId(dir, &id), LIBSYM_ERR_READ_BUILDID);
	cr_assert(strstr(Perror(), "is not a regular file"), "%s", Perror());
	snprintf(f, sizeof(f), "%s/empty", dir);
	cr_assert_eq(sh("touch '%s'", f), 0);
	cr_assert_eq(SymGetBuildId(f, &id), LIBSYM_ERR_READ_BUILDID);
	cr_assert(strstr(Perror(), "too short to be an ELF file"), "%s", Perror());
	cr_assert_eq(SymGetBuildId(abs_of("tests/workloads/cpuburn.c", f), &id),
		     LIBSYM_ERR_READ_BUILDID);
	cr_assert(strstr(Perror(), "cpuburn.c is not an ELF file"), "%s", Perror());
	/* an object file, an executable linked without a build-id, one of 68 bytes, one of 64 */
	cr_assert_eq(sh("cd '%s' && echo 'int main(void){return 0;}' > m.c && gcc -c m.c -o m.o && "
			"gcc m.c -Wl,--build-id=none -o nobid",
			dir),
		     0);
	snprintf(f, sizeof(f), "%s/m.o", dir);
	cr_assert_eq(SymGetBuildId(f, &id), LIBSYM_ERR_READ_BUILDID);
	cr_assert(strstr(Perror(), "neither an executable nor a shared library (ELF type 1)"), "%s",
		  Perror());
	snprintf(f, sizeof(f), "%s/nobid", dir);
	cr_assert_eq(SymGetBuildId(f, &id), LIBSYM_ERR_READ_BUILDID);
	cr_assert(strstr(Perror(), "has no GNU build-id"), "%s", Perror());
	for (i = 0; i < 68; i++)
		sprintf(hex + 2 * i, "%02x", 0xa0 + i % 16);
	cr_assert_eq(sh("cd '%s' && gcc m.c -Wl,--build-id=0x%s -o long68 && "
			"gcc m.c -Wl,--build-id=0x%.128s -o long64",
			dir, hex, hex),
		     0);
	snprintf(f, sizeof(f), "%s/long68", dir);
	cr_assert_eq(SymGetBuildId(f, &id), LIBSYM_ERR_BUILDID_TOO_LONG);
	cr_assert(strstr(Perror(), "is 68 bytes long"), "%s", Perror());
	cr_assert_null(id);
	snprintf(f, sizeof(f), "%s/long64", dir);
	readelf_build_id(f, want, sizeof(want));
	cr_assert_eq(strlen(want), 128);
	cr_assert_eq(SymGetBuildId(f, &id), 0, "%s", Perror());
	cr_assert_str_eq(id, want);
	free(id);
	rm_tree(dir);
}

/* the first address of [s, s + size) that objdump -l puts on <line> */
static unsigned long addr_on_line(const char *bin, unsigned long s, unsigned long size,
				  unsigned line)
{
	static struct od o;
	int i;

	cr_assert_eq(od_run("objdump", NULL, bin, s, s + size, &o), 0);
	for (i = 0; i < o.n; i++)
		if (o.insn[i].line == line)
			return o.insn[i].addr;
	cr_assert_fail("objdump -l puts nothing of %#lx on line %u", s, line);
	return 0;
}

Test(sym_code, map_code_addr_gives_the_hot_line_and_the_declaration_line)
{
	char bin[PATH_MAX], src[PATH_MAX];
	unsigned long hot, size, a;
	unsigned hot_line = (unsigned)src_line("tests/workloads/cpuburn.c", "HOT_LINE");
	unsigned decl = (unsigned)src_line("tests/workloads/cpuburn.c", "unsigned long hot_loop(");
	struct Symbol *s;

	abs_of(tu_path("workloads/cpuburn"), bin);
	abs_of("tests/workloads/cpuburn.c", src);
	hot = nm_size("nm", bin, "hot_loop", &size);
	a = addr_on_line(bin, hot, size, hot_line);
	s = SymResolverMapCodeAddr(bin, a);
	cr_assert_not_null(s, "%d %s", Perrorno(), Perror());
	cr_assert_eq(Perrorno(), SUCCESS);
	cr_assert_str_eq(s->symbolName, "hot_loop");
	cr_assert_str_eq(s->mangleName, "hot_loop");
	cr_assert_str_eq(s->module, bin);
	cr_assert_str_eq(s->fileName, src);
	cr_assert_eq(s->lineNum, hot_line);
	cr_assert_eq(s->firstLine, decl, "firstLine %u, hot_loop is declared on %u", s->firstLine,
		     decl);
	cr_assert_eq(s->addr, a);
	cr_assert_eq(s->codeMapAddr, a);
	cr_assert_eq(s->offset, a - hot);
	cr_assert_eq(s->codeMapEndAddr, hot + size);
	cr_assert_str_eq(s->mntPoint, "");
	/* the resolver's: the same pointer again, FreeSymbolPtr harmless */
	cr_assert_eq(SymResolverMapCodeAddr(bin, a), s);
	FreeSymbolPtr(s);
	/* the entry is on the line of the brace, one after the declaration */
	s = SymResolverMapCodeAddr(bin, hot);
	cr_assert_eq(s->lineNum, decl + 1);
	cr_assert_eq(s->firstLine, decl);
	cr_assert_eq(s->offset, 0);
}

Test(sym_code, map_code_addr_without_dwarf_and_without_a_symbol)
{
	char dir[PATH_MAX], bin[PATH_MAX], copy[PATH_MAX + 16];
	unsigned long hot, size;
	struct Symbol *s;

	abs_of(tu_path("workloads/cpuburn"), bin);
	hot = nm_size("nm", bin, "hot_loop", &size);
	scratch_dir(dir, sizeof(dir));
	snprintf(copy, sizeof(copy), "%s/nodebug", dir);
	cr_assert_eq(sh("objcopy --strip-debug '%s' '%s'", bin, copy), 0);
	s = SymResolverMapCodeAddr(copy, hot + 4);
	cr_assert_not_null(s, "%s", Perror());
	cr_assert_str_eq(s->symbolName, "hot_loop");
	cr_assert_eq(s->offset, 4);
	cr_assert_str_eq(s->fileName, "");
	cr_assert_eq(s->lineNum, 0);
	cr_assert_eq(s->firstLine, 0);
	/* no symbol there (the ELF header): unknown, not an error */
	s = SymResolverMapCodeAddr(bin, 0x10);
	cr_assert_not_null(s, "%s", Perror());
	cr_assert_str_eq(s->symbolName, "[unknown]");
	cr_assert_eq(s->codeMapAddr, 0x10);
	rm_tree(dir);
}

Test(sym_code, map_code_addr_failures)
{
	char src[PATH_MAX], bin[PATH_MAX];

	abs_of("tests/workloads/cpuburn.c", src);
	abs_of(tu_path("workloads/cpuburn"), bin);
	cr_assert_null(SymResolverMapCodeAddr(NULL, 0x1000));
	cr_assert_eq(Perrorno(), LIBSYM_ERR_FILE_NOT_RGE);
	cr_assert(strstr(Perror(), "the module (NULL) is not a regular file"), "%s", Perror());
	cr_assert_null(SymResolverMapCodeAddr("/nonexistent/x", 0x1000));
	cr_assert_eq(Perrorno(), LIBSYM_ERR_FILE_NOT_RGE);
	cr_assert(strstr(Perror(), "module /nonexistent/x is not a regular file"), "%s", Perror());
	cr_assert_null(SymResolverMapCodeAddr("/tmp", 0x1000));
	cr_assert_eq(Perrorno(), LIBSYM_ERR_FILE_NOT_RGE);
	cr_assert_null(SymResolverMapCodeAddr(bin, 0xffffffff81000000UL));
	cr_assert_eq(Perrorno(), LIBSYM_ERR_MAP_CODE_KERNEL_NOT_SUPPORT);
	cr_assert(strstr(Perror(), "0xffffffff81000000 is a kernel address"), "%s", Perror());
	cr_assert_null(SymResolverMapCodeAddr(src, 0x1000));
	cr_assert_eq(Perrorno(), LIBSYM_ERR_ELFIN_FOMAT_FAILED);
	cr_assert(strstr(Perror(), "is not an ELF file"), "%s", Perror());
}

Test(sym_code, resolved_symbols_carry_first_line_and_mnt_point)
{
	struct sym_wl w;
	struct Symbol *s;
	unsigned long hot, ret;
	unsigned decl = (unsigned)src_line(HOT_SRC, "long hot_loop(long n)");
	unsigned leaf = (unsigned)src_line(HOT_SRC, "long leaf(long x)");

	cr_assert_eq(swl_start(&w, "sym_hot"), 0);
	hot = swl_addr(&w, "hot_loop");
	ret = swl_addr(&w, "ret_in_hot_loop");
	cr_assert_eq(SymResolverRecordModule(w.p.pid), 0, "%s", Perror());
	s = SymResolverMapAddr(w.p.pid, hot);
	cr_assert_eq(s->firstLine, decl, "firstLine %u, declared on %u", s->firstLine, decl);
	cr_assert_str_eq(s->mntPoint, "", "the caller's own mount namespace");
	s = SymResolverMapAddr(w.p.pid, ret);
	cr_assert_eq(s->firstLine, decl);
	s = SymResolverMapAddr(w.p.pid, swl_addr(&w, "leaf"));
	cr_assert_eq(s->firstLine, leaf);
	/* a kernel symbol, an unknown address: no line, an empty mount point */
	s = SymResolverMapAddr(w.p.pid, swl_addr(&w, "anon"));
	cr_assert_eq(s->firstLine, 0);
	cr_assert_str_eq(s->mntPoint, "");
	swl_stop(&w);
	/* without DWARF: no firstLine */
	cr_assert_eq(swl_start(&w, "sym_hot"), 0);
	cr_assert_eq(SymResolverRecordModuleNoDwarf(w.p.pid), 0, "%s", Perror());
	s = SymResolverMapAddr(w.p.pid, swl_addr(&w, "hot_loop"));
	cr_assert_str_eq(s->symbolName, "hot_loop");
	cr_assert_eq(s->firstLine, 0);
	swl_stop(&w);
}

#define BASE 0x7e0000000000UL /* where nothing is mapped in the workloads */

Test(sym_code, update_module_maps_a_module_the_process_never_showed)
{
	char cpuburn[PATH_MAX], src[PATH_MAX];
	unsigned long hot, size, a;
	unsigned decl = (unsigned)src_line("tests/workloads/cpuburn.c", "unsigned long hot_loop(");
	unsigned hot_line = (unsigned)src_line("tests/workloads/cpuburn.c", "HOT_LINE");
	struct sym_wl w;
	struct Symbol *s;
	pid_t pid;

	abs_of(tu_path("workloads/cpuburn"), cpuburn);
	abs_of("tests/workloads/cpuburn.c", src);
	hot = nm_size("nm", cpuburn, "hot_loop", &size);
	a = addr_on_line(cpuburn, hot, size, hot_line);
	cr_assert_eq(swl_start(&w, "sym_hot"), 0);
	pid = w.p.pid;
	/* never recorded: recorded now, as libkperf does */
	cr_assert_eq(SymResolverUpdateModule(pid, cpuburn, BASE), 0, "%s", Perror());
	cr_assert_str_eq(SymResolverMapAddr(pid, swl_addr(&w, "hot_loop"))->symbolName, "hot_loop");
	s = SymResolverMapAddr(pid, BASE + a);
	cr_assert_str_eq(s->symbolName, "hot_loop");
	cr_assert_str_eq(s->module, cpuburn);
	cr_assert_eq(s->codeMapAddr, a);
	cr_assert_eq(s->offset, a - hot);
	cr_assert_str_eq(s->fileName, src);
	cr_assert_eq(s->lineNum, hot_line);
	cr_assert_eq(s->firstLine, decl);
	/* a module the process maps already stays where it is */
	{
		char lib[PATH_MAX];
		unsigned long fn = swl_addr(&w, "wl_lib_work");

		abs_of(tu_path("workloads/libwl.so"), lib);
		cr_assert_eq(SymResolverUpdateModule(pid, lib, BASE + 0x100000000UL), 0, "%s",
			     Perror());
		cr_assert_str_eq(SymResolverMapAddr(pid, fn)->symbolName, "wl_lib_work");
		cr_assert_str_eq(
			SymResolverMapAddr(pid, BASE + 0x100000000UL + nm_addr(lib, "wl_lib_work"))
				->symbolName,
			"[unknown]");
	}
	/* after the process exited: added to what was recorded */
	cr_assert_eq(swl_stop(&w), 0);
	cr_assert(kill(pid, 0) && errno == ESRCH);
	{
		char cxx[PATH_MAX];
		unsigned long m = nm_addr(abs_of(tu_path("workloads/sym_cxx"), cxx), "main");

		cr_assert_eq(SymResolverUpdateModuleNoDwarf(pid, cxx, BASE + 0x200000000UL), 0,
			     "%s", Perror());
		s = SymResolverMapAddr(pid, BASE + 0x200000000UL + m + 1);
		cr_assert_str_eq(s->symbolName, "main");
		cr_assert_str_eq(s->module, cxx);
		cr_assert_eq(s->codeMapAddr, m + 1);
	}
	/* cpuburn is known already: not mapped a second time */
	cr_assert_eq(SymResolverUpdateModule(pid, cpuburn, BASE + 0x300000000UL), 0, "%s",
		     Perror());
	cr_assert_str_eq(SymResolverMapAddr(pid, BASE + 0x300000000UL + a)->symbolName,
			 "[unknown]");
	cr_assert_str_eq(SymResolverMapAddr(pid, BASE + a)->symbolName, "hot_loop");
}

Test(sym_code, update_module_without_dwarf_has_no_lines)
{
	char cpuburn[PATH_MAX];
	struct sym_wl w;
	struct Symbol *s;

	abs_of(tu_path("workloads/cpuburn"), cpuburn);
	cr_assert_eq(swl_start(&w, "sym_hot"), 0);
	cr_assert_eq(SymResolverUpdateModuleNoDwarf(w.p.pid, cpuburn, BASE), 0, "%s", Perror());
	s = SymResolverMapAddr(w.p.pid, BASE + nm_addr(cpuburn, "hot_loop") + 4);
	cr_assert_str_eq(s->symbolName, "hot_loop");
	cr_assert_eq(s->offset, 4);
	cr_assert_eq(s->lineNum, 0);
	cr_assert_str_eq(s->fileName, "");
	swl_stop(&w);
}

Test(sym_code, update_module_failures)
{
	char cpuburn[PATH_MAX], src[PATH_MAX], want[64];
	pid_t gone = unused_pid();

	abs_of(tu_path("workloads/cpuburn"), cpuburn);
	abs_of("tests/workloads/cpuburn.c", src);
	cr_assert_eq(SymResolverUpdateModule(-1, cpuburn, BASE), LIBSYM_ERR_PARAM_PID_INVALID);
	cr_assert_eq(Perrorno(), LIBSYM_ERR_PARAM_PID_INVALID);
	cr_assert(strstr(Perror(), "pid -1 is not valid"), "%s", Perror());
	cr_assert_eq(SymResolverUpdateModuleNoDwarf(0, cpuburn, BASE),
		     LIBSYM_ERR_PARAM_PID_INVALID);
	cr_assert_eq(SymResolverUpdateModule(getpid(), NULL, BASE), LIBSYM_ERR_FILE_NOT_RGE);
	cr_assert(strstr(Perror(), "moduleName is NULL"), "%s", Perror());
	cr_assert_eq(SymResolverUpdateModule(getpid(), "/nonexistent/lib.so", BASE),
		     LIBSYM_ERR_FILE_NOT_RGE);
	cr_assert(strstr(Perror(), "module /nonexistent/lib.so: No such file"), "%s", Perror());
	cr_assert_eq(SymResolverUpdateModule(getpid(), "/tmp", BASE), LIBSYM_ERR_FILE_NOT_RGE);
	cr_assert(strstr(Perror(), "module /tmp is not a regular file"), "%s", Perror());
	cr_assert_eq(SymResolverUpdateModule(getpid(), src, BASE), LIBSYM_ERR_READ_BUILDID);
	cr_assert(strstr(Perror(), "cpuburn.c is not an ELF file"), "%s", Perror());
	snprintf(want, sizeof(want), "process %d does not exist", (int)gone);
	cr_assert_eq(SymResolverUpdateModule(gone, cpuburn, BASE), LIBSYM_ERR_NOT_FIND_PID);
	cr_assert(strstr(Perror(), want), "%s", Perror());
}

Test(sym_code, mountinfo_lines)
{
	char buf[512];
	struct sym_mnt_entry e;

	cr_assert_eq(sym_mnt_parse("36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root "
				   "rw,errors=continue",
				   buf, sizeof(buf), &e),
		     0);
	cr_assert_eq(e.major, 98);
	cr_assert_eq(e.minor, 0);
	cr_assert_str_eq(e.root, "/mnt1");
	cr_assert_str_eq(e.mount_point, "/mnt2");
	cr_assert_str_eq(e.fstype, "ext3");
	/* no optional field; escaped spaces and backslashes */
	cr_assert_eq(sym_mnt_parse("600 500 0:51 /a\\040dir/x\\134y /var/lib/my\\040root rw - "
				   "overlay overlay rw,lowerdir=/l",
				   buf, sizeof(buf), &e),
		     0);
	cr_assert_str_eq(e.root, "/a dir/x\\y");
	cr_assert_str_eq(e.mount_point, "/var/lib/my root");
	cr_assert_str_eq(e.fstype, "overlay");
	cr_assert_eq(e.major, 0);
	cr_assert_eq(e.minor, 51);
	/* malformed: too few fields, no separator, a bad device, relative paths, no room */
	cr_assert_eq(sym_mnt_parse("36 35 98:0 /", buf, sizeof(buf), &e), -EINVAL);
	cr_assert_eq(sym_mnt_parse("36 35 98:0 / / rw shared:1 ext4", buf, sizeof(buf), &e),
		     -EINVAL);
	cr_assert_eq(sym_mnt_parse("36 35 98 / / rw - ext4 /dev/x rw", buf, sizeof(buf), &e),
		     -EINVAL);
	cr_assert_eq(sym_mnt_parse("36 35 98:0 a / rw - ext4 /dev/x rw", buf, sizeof(buf), &e),
		     -EINVAL);
	cr_assert_eq(sym_mnt_parse("36 35 98:0 / / rw - ext4 /dev/x rw", buf, 4, &e), -EINVAL);
	cr_assert_eq(sym_mnt_parse("", buf, sizeof(buf), &e), -EINVAL);
	/* our own pid: the same namespace */
	{
		struct sym_arena a = { 0 };

		cr_assert_str_eq(sym_mnt_point(getpid(), &a), "");
		sym_arena_free(&a);
	}
	sym_intern_free();
}
