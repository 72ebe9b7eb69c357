/*
 * test_sym_robust.c - the symbol resolver where things are not where they should be: stripped
 * binaries with separate debug files (debuglink with CRC, .debug/, a debug directory,
 * build-id), deleted and replaced files, another mount namespace, mappings learned from
 * MMAP2 records, and corrupted ELF files, which must give errors, never crashes.
 */
#include <criterion/criterion.h>
#include <sys/stat.h>

#include "kperf/pcerrc.h"
#include "kperf/kperf.h"
#include "sym/sym.h"
#include "symtest.h"

#define HOT_SRC "tests/workloads/sym_hot.c"

static char dir[64];

static void init(void)
{
	scratch_dir(dir, sizeof(dir));
	cr_assert_neq(dir[0], '\0');
	unsetenv("KPERF_BPF_DEBUG_DIRS");
}

static void fini(void)
{
	SymResolverDestroy();
	rm_tree(dir);
}

TestSuite(sym_robust, .init = init, .fini = fini, .timeout = 120);

/* copy libwl.so into the scratch dir (the workload finds it through its $ORIGIN rpath) */
static void copy_lib(void)
{
	cr_assert_eq(sh("cp '%s' '%s/'", tu_path("workloads/libwl.so"), dir), 0);
}

/* start <dir>/sym_hot, record it with DWARF, resolve hot_loop */
static struct Symbol *resolve_hot(struct sym_wl *w, const char *bin)
{
	char *argv[] = { (char *)bin, NULL };

	cr_assert_eq(swl_start_argv(w, argv), 0, "%s starts", bin);
	cr_assert_eq(SymResolverRecordModule(w->p.pid), 0, "%s", Perror());
	return SymResolverMapAddr(w->p.pid, swl_addr(w, "hot_loop"));
}

static void expect_hot(const struct Symbol *s)
{
	char src[PATH_MAX];

	cr_assert_not_null(s, "%s", Perror());
	cr_assert_str_eq(s->symbolName, "hot_loop");
	cr_assert_str_eq(s->fileName, abs_of(HOT_SRC, src));
	cr_assert_eq(s->lineNum, (unsigned)src_line(HOT_SRC, "LINE:hot_loop"));
}

/* objcopy --only-keep-debug into <debug>, then strip <how> into <dir>/sym_hot */
static void make_stripped(const char *debug, const char *how, bool link)
{
	const char *bin = tu_path("workloads/sym_hot");
	char tmpdbg[128];

	snprintf(tmpdbg, sizeof(tmpdbg), "%s/sym_hot.debug", dir);
	cr_assert_eq(sh("objcopy --only-keep-debug '%s' '%s'", bin, tmpdbg), 0);
	if (link)
		cr_assert_eq(sh("objcopy %s --add-gnu-debuglink='%s' '%s' '%s/sym_hot'", how,
				tmpdbg, bin, dir),
			     0);
	else
		cr_assert_eq(sh("objcopy %s '%s' '%s/sym_hot'", how, bin, dir), 0);
	if (strcmp(debug, tmpdbg)) {
		cr_assert_eq(sh("mkdir -p \"$(dirname '%s')\" && mv '%s' '%s'", debug, tmpdbg,
				debug),
			     0);
	}
	copy_lib();
}

Test(sym_robust, stripped_with_debuglink_next_to_it)
{
	char bin[128], debug[128];
	struct sym_wl w;
	struct Symbol *s;

	snprintf(bin, sizeof(bin), "%s/sym_hot", dir);
	snprintf(debug, sizeof(debug), "%s/sym_hot.debug", dir);
	make_stripped(debug, "--strip-all", true);
	cr_assert_neq(sh("readelf -S '%s' | grep -q '\\.symtab'", bin), 0, "no symbol table left");
	s = resolve_hot(&w, bin);
	expect_hot(s);
	cr_assert_str_eq(s->module, bin);
	swl_stop(&w);

	/* without the debug file, the stripped binary has no name for it */
	SymResolverDestroy();
	cr_assert_eq(unlink(debug), 0);
	s = resolve_hot(&w, bin);
	cr_assert_not_null(s, "%s", Perror());
	cr_assert_str_eq(s->symbolName, "[unknown]");
	cr_assert_str_eq(s->module, bin);
	swl_stop(&w);
}

Test(sym_robust, stripped_with_debuglink_in_dot_debug)
{
	char bin[128], debug[128];
	struct sym_wl w;

	snprintf(bin, sizeof(bin), "%s/sym_hot", dir);
	snprintf(debug, sizeof(debug), "%s/.debug/sym_hot.debug", dir);
	make_stripped(debug, "--strip-all", true);
	expect_hot(resolve_hot(&w, bin));
	swl_stop(&w);
}

Test(sym_robust, stripped_with_debuglink_in_debug_dir)
{
	char bin[128], debug[256], root[128];
	struct sym_wl w;

	snprintf(bin, sizeof(bin), "%s/sym_hot", dir);
	snprintf(root, sizeof(root), "%s/debugroot", dir);
	/* <debug dir>/<directory of the binary>/<debuglink> */
	snprintf(debug, sizeof(debug), "%s%s/sym_hot.debug", root, dir);
	make_stripped(debug, "--strip-all", true);
	setenv("KPERF_BPF_DEBUG_DIRS", root, 1);
	expect_hot(resolve_hot(&w, bin));
	swl_stop(&w);
}

/* the build-id of a file, as hex */
static void build_id_of(const char *file, char *out, size_t size)
{
	char cmd[PATH_MAX + 64], *o, *p;

	snprintf(cmd, sizeof(cmd), "readelf -n '%s' | grep 'Build ID'", file);
	o = tu_run(cmd, NULL);
	out[0] = '\0';
	if (o && (p = strstr(o, "Build ID: "))) {
		p += 10;
		p[strcspn(p, "\n ")] = '\0';
		snprintf(out, size, "%s", p);
	}
	free(o);
}

Test(sym_robust, stripped_with_build_id)
{
	char bin[128], debug[512], root[128], id[128];
	struct sym_wl w;

	snprintf(bin, sizeof(bin), "%s/sym_hot", dir);
	snprintf(root, sizeof(root), "%s/debugroot", dir);
	build_id_of(tu_path("workloads/sym_hot"), id, sizeof(id));
	cr_assert_gt(strlen(id), 2, "the workload has a build-id");
	snprintf(debug, sizeof(debug), "%s/.build-id/%.2s/%s.debug", root, id, id + 2);
	make_stripped(debug, "--strip-all", false);
	setenv("KPERF_BPF_DEBUG_DIRS", root, 1);
	expect_hot(resolve_hot(&w, bin));
	swl_stop(&w);
}

Test(sym_robust, strip_debug_keeps_names_lines_from_debug_file)
{
	char bin[128], debug[128];
	struct sym_wl w;
	struct Symbol *s;

	snprintf(bin, sizeof(bin), "%s/sym_hot", dir);
	snprintf(debug, sizeof(debug), "%s/sym_hot.debug", dir);
	make_stripped(debug, "--strip-debug", true);
	expect_hot(resolve_hot(&w, bin));
	swl_stop(&w);
	/* without the debug file: the name from .symtab, no line */
	SymResolverDestroy();
	cr_assert_eq(unlink(debug), 0);
	s = resolve_hot(&w, bin);
	cr_assert_str_eq(s->symbolName, "hot_loop");
	cr_assert_eq(s->lineNum, 0);
	cr_assert_str_eq(s->fileName, "");
	swl_stop(&w);
}

Test(sym_robust, debuglink_with_wrong_crc_is_ignored)
{
	char bin[128], debug[128];
	struct sym_wl w;
	struct Symbol *s;

	snprintf(bin, sizeof(bin), "%s/sym_hot", dir);
	snprintf(debug, sizeof(debug), "%s/sym_hot.debug", dir);
	make_stripped(debug, "--strip-all", true);
	/* another build's debug file: same name, other content */
	cr_assert_eq(sh("printf 'x' >> '%s'", debug), 0);
	s = resolve_hot(&w, bin);
	cr_assert_not_null(s, "%s", Perror());
	cr_assert_str_eq(s->symbolName, "[unknown]");
	cr_assert_eq(s->lineNum, 0);
	swl_stop(&w);
}

Test(sym_robust, deleted_executable)
{
	char bin[128], deleted[160];
	struct sym_wl w;
	char *argv[] = { bin, NULL };
	struct Symbol *s;

	snprintf(bin, sizeof(bin), "%s/sym_hot", dir);
	cr_assert_eq(sh("cp '%s' '%s'", tu_path("workloads/sym_hot"), bin), 0);
	copy_lib();
	cr_assert_eq(swl_start_argv(&w, argv), 0);
	cr_assert_eq(unlink(bin), 0);
	snprintf(deleted, sizeof(deleted), "%s (deleted)", bin);
	cr_assert_eq(SymResolverRecordModule(w.p.pid), 0, "%s", Perror());
	s = SymResolverMapAddr(w.p.pid, swl_addr(&w, "hot_loop"));
	expect_hot(s);
	cr_assert_str_eq(s->module, deleted);
	swl_stop(&w);
}

Test(sym_robust, other_mount_namespace)
{
	char mnt[128], script[PATH_MAX * 3];
	char *argv[] = {
		"/usr/bin/unshare", "-m", "--propagation", "private", "sh", "-c", script, NULL
	};
	struct sym_wl w;
	struct Symbol *s;
	char bin[160];

	/* the binary exists only in the workload's mount namespace: a tmpfs over an empty dir */
	snprintf(mnt, sizeof(mnt), "%s/mnt", dir);
	cr_assert_eq(mkdir(mnt, 0755), 0);
	snprintf(script, sizeof(script),
		 "mount -t tmpfs none '%s' && cp '%s' '%s' '%s/' && exec '%s/sym_hot'", mnt,
		 tu_path("workloads/sym_hot"), abs_of(tu_path("workloads/libwl.so"), bin), mnt,
		 mnt);
	cr_assert_eq(swl_start_argv(&w, argv), 0, "unshare runs the workload");
	snprintf(bin, sizeof(bin), "%s/sym_hot", mnt);
	cr_assert_neq(access(bin, F_OK), 0, "not visible from here");
	cr_assert_eq(SymResolverRecordModule(w.p.pid), 0, "%s", Perror());
	s = SymResolverMapAddr(w.p.pid, swl_addr(&w, "hot_loop"));
	expect_hot(s);
	cr_assert_str_eq(s->module, bin);
	s = SymResolverMapAddr(w.p.pid, swl_addr(&w, "wl_lib_work"));
	cr_assert_str_eq(s->symbolName, "wl_lib_work");
	swl_stop(&w);
}

/* the text mapping of <file> in /proc/<pid>/maps */
static int text_mapping(pid_t pid, const char *file, unsigned long *start, unsigned long *end,
			unsigned long *pgoff, unsigned *maj, unsigned *min, unsigned long *ino)
{
	char path[64], line[1024];
	FILE *f;
	int found = -1;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char perms[8], name[512] = "";

		if (sscanf(line, "%lx-%lx %7s %lx %x:%x %lu %511s", start, end, perms, pgoff, maj,
			   min, ino, name) == 8 &&
		    perms[2] == 'x' && !strcmp(name, file)) {
			found = 0;
			break;
		}
	}
	fclose(f);
	return found;
}

Test(sym_robust, mmap2_mappings_after_exit)
{
	char bin[PATH_MAX];
	unsigned long start, end, pgoff, ino, hot;
	unsigned maj, min;
	struct sym_wl w;
	struct Symbol *s;
	pid_t pid;

	abs_of(tu_path("workloads/sym_hot"), bin);
	cr_assert_eq(swl_start(&w, "sym_hot"), 0);
	pid = w.p.pid;
	hot = swl_addr(&w, "hot_loop");
	cr_assert_eq(text_mapping(pid, bin, &start, &end, &pgoff, &maj, &min, &ino), 0);
	/* what a PERF_RECORD_MMAP2 says, told while the process lives */
	cr_assert_eq(kp_sym_add_mapping_id(pid, start, end, pgoff, bin, maj, min, ino), 0, "%s",
		     Perror());
	swl_stop(&w);
	cr_assert_eq(kp_sym_resolve_addr(pid, hot, KP_SYM_DWARF, &s), 0, "%s", Perror());
	expect_hot(s);
	cr_assert_str_eq(s->module, bin);
}

Test(sym_robust, mmap2_told_after_exit_and_replaced_file)
{
	char bin[128];
	unsigned long start, end, pgoff, ino, hot;
	unsigned maj, min;
	char *argv[] = { bin, NULL };
	struct sym_wl w;
	struct Symbol *s;
	pid_t pid;

	snprintf(bin, sizeof(bin), "%s/sym_hot", dir);
	cr_assert_eq(sh("cp '%s' '%s'", tu_path("workloads/sym_hot"), bin), 0);
	copy_lib();
	cr_assert_eq(swl_start_argv(&w, argv), 0);
	pid = w.p.pid;
	hot = swl_addr(&w, "hot_loop");
	cr_assert_eq(text_mapping(pid, bin, &start, &end, &pgoff, &maj, &min, &ino), 0);
	swl_stop(&w);
	/* told after the exit, the file still there: opened by its path */
	cr_assert_eq(kp_sym_add_mapping_id(pid, start, end, pgoff, bin, maj, min, ino), 0, "%s",
		     Perror());
	cr_assert_eq(kp_sym_resolve_addr(pid, hot, 0, &s), 0, "%s", Perror());
	cr_assert_str_eq(s->symbolName, "hot_loop");

	/* another process whose binary was replaced (a new inode) before we were told */
	SymResolverDestroy();
	cr_assert_eq(sh("cp '%s' '%s.new' && mv '%s.new' '%s'", tu_path("workloads/sym_cxx"), bin,
			bin, bin),
		     0);
	cr_assert_eq(kp_sym_add_mapping_id(pid, start, end, pgoff, bin, maj, min, ino), 0, "%s",
		     Perror());
	cr_assert_eq(GetWarn(), KPERF_WARN_SYM_INCOMPLETE);
	cr_assert(strstr(GetWarnMsg(), "was replaced"), "%s", GetWarnMsg());
	cr_assert_eq(kp_sym_resolve_addr(pid, hot, 0, &s), 0, "%s", Perror());
	cr_assert_str_eq(s->symbolName, "[unknown]");
	cr_assert_str_eq(s->module, bin);

	/* and one whose binary vanished */
	SymResolverDestroy();
	cr_assert_eq(unlink(bin), 0);
	cr_assert_eq(kp_sym_add_mapping_id(pid, start, end, pgoff, bin, maj, min, ino), 0, "%s",
		     Perror());
	cr_assert_eq(GetWarn(), KPERF_WARN_SYM_INCOMPLETE);
	cr_assert(strstr(GetWarnMsg(), bin), "%s", GetWarnMsg());
	cr_assert_eq(kp_sym_resolve_addr(pid, hot, 0, &s), 0, "%s", Perror());
	cr_assert_str_eq(s->symbolName, "[unknown]");
	cr_assert_str_eq(s->module, bin);
}

Test(sym_robust, mapping_overlaps_are_cut)
{
	char lib[PATH_MAX], bin[PATH_MAX];
	unsigned long wl = nm_addr(abs_of(tu_path("workloads/libwl.so"), lib), "wl_lib_work");
	unsigned long hot = nm_addr(abs_of(tu_path("workloads/sym_hot"), bin), "hot_loop");
	pid_t pid = unused_pid();
	struct Symbol *s;

	/* libwl.so mapped over 0x10000-0x20000 with its file start at 0x10000 */
	cr_assert_eq(kp_sym_add_mapping(pid, 0x10000, 0x20000, 0, lib), 0, "%s", Perror());
	cr_assert_eq(kp_sym_resolve_addr(pid, 0x10000 + wl, 0, &s), 0, "%s", Perror());
	cr_assert_str_eq(s->symbolName, "wl_lib_work");
	cr_assert_eq(s->codeMapAddr, wl);
	/* sym_hot mapped over the middle, page 0x12000-0x13000 at file offset 0x1000 */
	cr_assert_eq(kp_sym_add_mapping(pid, 0x12000, 0x13000, 0x1000, bin), 0, "%s", Perror());
	cr_assert_eq(kp_sym_resolve_addr(pid, 0x11000 + hot, 0, &s), 0, "%s", Perror());
	cr_assert_str_eq(s->symbolName, "hot_loop");
	cr_assert_str_eq(s->module, bin);
	cr_assert_eq(s->codeMapAddr, hot);
	/* the part of libwl.so before it is still libwl.so */
	cr_assert_eq(kp_sym_resolve_addr(pid, 0x10000 + wl, 0, &s), 0, "%s", Perror());
	cr_assert_str_eq(s->module, lib);
	/* and after it too, at the right file offset */
	cr_assert_eq(kp_sym_resolve_addr(pid, 0x13010, 0, &s), 0, "%s", Perror());
	cr_assert_str_eq(s->module, lib);
	cr_assert_eq(s->codeMapAddr, 0x3010);
	/* a forked child sees the same; after exec it sees nothing of it */
	cr_assert_eq(kp_sym_fork(pid, pid + 1), 0);
	cr_assert_eq(kp_sym_resolve_addr(pid + 1, 0x11000 + hot, 0, &s), 0, "%s", Perror());
	cr_assert_str_eq(s->symbolName, "hot_loop");
	kp_sym_exec(pid + 1, NULL);
	cr_assert_eq(kp_sym_resolve_addr(pid + 1, 0x11000 + hot, 0, &s), 0, "%s", Perror());
	cr_assert_str_eq(s->symbolName, "[unknown]");
	/* bad mappings */
	cr_assert_lt(kp_sym_add_mapping(pid, 0x5000, 0x5000, 0, lib), 0);
	cr_assert_eq(Perrorno(), LIBSYM_ERR_START_SMALLER_END);
	cr_assert_lt(kp_sym_add_mapping(-1, 0x5000, 0x6000, 0, lib), 0);
	cr_assert_eq(Perrorno(), LIBSYM_ERR_PARAM_PID_INVALID);
}

/* as libkperf's int calls of symbol.h, these return the code itself */
Test(sym_robust, record_file_errors)
{
	char path[128], lib[PATH_MAX];

	abs_of(tu_path("workloads/libwl.so"), lib);
	cr_assert_eq(SymResolverRecordElf(lib), 0, "%s", Perror());
	cr_assert_eq(SymResolverRecordDwarf(lib), 0, "%s", Perror());

	cr_assert_eq(SymResolverRecordElf("/nonexistent/libx.so"), LIBSYM_ERR_OPEN_FILE_FAILED);
	cr_assert_eq(Perrorno(), LIBSYM_ERR_OPEN_FILE_FAILED);
	cr_assert(strstr(Perror(), "/nonexistent/libx.so"), "%s", Perror());

	cr_assert_eq(SymResolverRecordElf(dir), LIBSYM_ERR_FILE_NOT_RGE);
	cr_assert_eq(Perrorno(), LIBSYM_ERR_FILE_NOT_RGE);

	snprintf(path, sizeof(path), "%s/empty", dir);
	cr_assert_eq(sh(": > '%s'", path), 0);
	cr_assert_eq(SymResolverRecordElf(path), LIBSYM_ERR_ELFIN_FOMAT_FAILED);
	cr_assert_eq(Perrorno(), LIBSYM_ERR_ELFIN_FOMAT_FAILED);
	cr_assert(strstr(Perror(), path), "%s", Perror());

	snprintf(path, sizeof(path), "%s/text", dir);
	cr_assert_eq(sh("echo 'not an ELF at all' > '%s'", path), 0);
	cr_assert_eq(SymResolverRecordElf(path), LIBSYM_ERR_ELFIN_FOMAT_FAILED);
	cr_assert_eq(Perrorno(), LIBSYM_ERR_ELFIN_FOMAT_FAILED);

	/* a copy without DWARF: it has the build-id of libwl.so, which has DWARF: the same build */
	snprintf(path, sizeof(path), "%s/stripped.so", dir);
	cr_assert_eq(sh("objcopy --strip-debug '%s' '%s'", lib, path), 0);
	cr_assert_eq(SymResolverRecordDwarf(path), 0, "%s", Perror());
	/* alone, without DWARF and no debug file */
	SymResolverDestroy();
	cr_assert_eq(SymResolverRecordElf(path), 0, "%s", Perror());
	cr_assert_eq(SymResolverRecordDwarf(path), LIBSYM_ERR_DWARF_FORMAT_FAILED);
	cr_assert_eq(Perrorno(), LIBSYM_ERR_DWARF_FORMAT_FAILED);
	cr_assert(strstr(Perror(), "no DWARF"), "%s", Perror());

	/* an object file is not an executable or a library */
	snprintf(path, sizeof(path), "%s/x.o", dir);
	cr_assert_eq(sh("echo 'int f(void){return 1;}' | cc -x c -c -o '%s' -", path), 0);
	cr_assert_eq(SymResolverRecordElf(path), LIBSYM_ERR_ELFIN_FOMAT_FAILED);
	cr_assert_eq(Perrorno(), LIBSYM_ERR_ELFIN_FOMAT_FAILED);

	cr_assert_eq(SymResolverRecordElf(NULL), LIBSYM_ERR_OPEN_FILE_FAILED);
	cr_assert_eq(Perrorno(), LIBSYM_ERR_OPEN_FILE_FAILED);
}

static uint64_t rng_state;

static uint64_t rng(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static bool code_ok(int code)
{
	return code == LIBSYM_ERR_ELFIN_FOMAT_FAILED || code == LIBSYM_ERR_DWARF_FORMAT_FAILED ||
	       code == LIBSYM_ERR_FILE_INVALID;
}

Test(sym_robust, corrupted_elf_files)
{
	char src[PATH_MAX], path[160];
	unsigned char *orig, *buf;
	size_t size, n;
	FILE *f;
	pid_t pid = unused_pid();
	int i, k, ok = 0, refused = 0;

	abs_of(tu_path("workloads/sym_hot"), src);
	f = fopen(src, "rb");
	cr_assert_not_null(f);
	fseek(f, 0, SEEK_END);
	size = (size_t)ftell(f);
	rewind(f);
	orig = malloc(size);
	buf = malloc(size);
	cr_assert_eq(fread(orig, 1, size, f), size);
	fclose(f);
	rng_state = 42;
	for (i = 0; i < 400; i++) {
		struct Symbol *s;
		int r;

		memcpy(buf, orig, size);
		n = size;
		switch (i % 5) {
		case 0: /* truncated */
			n = rng() % size;
			break;
		case 1: /* a few bytes anywhere */
			for (k = 0; k < 1 + (int)(rng() % 8); k++)
				buf[rng() % size] ^= (unsigned char)(1 + rng() % 255);
			break;
		case 2: /* the ELF and program headers */
			for (k = 0; k < 1 + (int)(rng() % 4); k++)
				buf[rng() % 512] = (unsigned char)rng();
			break;
		case 3: /* the section headers and what follows them */
			for (k = 0; k < 16; k++)
				buf[size - 1 - rng() % 2048] = (unsigned char)rng();
			break;
		default: /* a whole random block, e.g. in .symtab or .debug_info */
		{
			size_t at = rng() % size, len = 1 + rng() % 256;

			for (; len && at < size; len--, at++)
				buf[at] = (unsigned char)rng();
		}
		}
		snprintf(path, sizeof(path), "%s/fuzz-%d", dir, i);
		f = fopen(path, "wb");
		cr_assert_not_null(f);
		fwrite(buf, 1, n, f);
		fclose(f);
		r = SymResolverRecordElf(path);
		if (r) {
			cr_assert(code_ok(Perrorno()), "case %d: code %d: %s", i, Perrorno(),
				  Perror());
			refused++;
		} else {
			ok++;
		}
		r = SymResolverRecordDwarf(path);
		if (r)
			cr_assert(code_ok(Perrorno()), "case %d: code %d: %s", i, Perrorno(),
				  Perror());
		/* resolving in it, with lines, must not crash either */
		cr_assert_eq(kp_sym_add_mapping(pid, 0x100000, 0x100000 + 0x4000, 0, path), 0);
		for (k = 0; k < 8; k++) {
			cr_assert_eq(kp_sym_resolve_addr(pid, 0x100000 + rng() % 0x4000,
							 KP_SYM_DWARF, &s),
				     0, "%s", Perror());
			cr_assert_not_null(s->symbolName);
			cr_assert_not_null(s->fileName);
		}
		kp_sym_forget_pid(pid);
		unlink(path);
	}
	cr_assert_gt(ok, 0);
	cr_assert_gt(refused, 0);
	free(orig);
	free(buf);
}

Test(sym_robust, versioned_symbol_names)
{
	char src[128], map[128], lib[128];
	unsigned long impl;
	struct Symbol *s;
	pid_t pid = unused_pid();

	snprintf(src, sizeof(src), "%s/v.c", dir);
	snprintf(map, sizeof(map), "%s/v.map", dir);
	snprintf(lib, sizeof(lib), "%s/libv.so", dir);
	cr_assert_eq(sh("printf 'int foo_impl(int x) { return x + 1; }\\n"
			"__asm__(\".symver foo_impl, foo@@VERS_2\");\\n' > '%s' && "
			"printf 'VERS_2 { global: foo; local: *; };\\n' > '%s' && "
			"cc -shared -fPIC -o '%s' '%s' -Wl,--version-script='%s'",
			src, map, lib, src, map),
		     0);
	impl = nm_addr(lib, "foo@@VERS_2");
	cr_assert_neq(impl, 0, "the library has a versioned symbol");
	cr_assert_eq(kp_sym_add_mapping(pid, 0x200000, 0x200000 + 0x10000, 0, lib), 0, "%s",
		     Perror());
	cr_assert_eq(kp_sym_resolve_addr(pid, 0x200000 + impl, 0, &s), 0, "%s", Perror());
	/* the global versioned name wins over the local alias; shown without its version */
	cr_assert_str_eq(s->symbolName, "foo");
	cr_assert_str_eq(s->mangleName, "foo@@VERS_2");
}
