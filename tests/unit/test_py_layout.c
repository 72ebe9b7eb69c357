/*
 * test_py_layout.c - CPython layouts for the Python frame reader (user/runtime/python_debug.c,
 * python_layout.c): the _Py_DebugOffsets that Debian 13's python3.13 starts _PyRuntime with
 * give the offsets that 3.13.5's own headers give (offsetof() compiled against
 * libpython3.13-dev: the numbers below), those of Debian forky's python3.14 the offsets of
 * 3.14.8's record (read from the package's .PyRuntime bytes); a record that is not its
 * version's (no cookie, another version, free-threaded, an offset outside its structure) is
 * refused with its reason; 3.11 stays in the table, 3.12 and 3.15 are in neither.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <linux/types.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "runtime/python.h"

#define TRIXIE_PY "/var/cache/kperf-trixie/usr/bin/python3.13"
#define FORKY_PY "/var/cache/kperf-forky/usr/bin/python3.14"

TestSuite(py_layout, .timeout = 30);

/* the initial bytes of _PyRuntime in <path> (its .PyRuntime section) */
static size_t runtime_bytes(const char *path, unsigned char *out, size_t len)
{
	int fd = open(path, O_RDONLY);
	Elf_Scn *scn = NULL;
	size_t got = 0;
	Elf *elf;

	cr_assert_geq(fd, 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	cr_assert(elf);
	while (!got && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			GElf_Shdr ds;
			Elf_Scn *in;

			if (!gelf_getsym(d, (int)i, &sym) ||
			    strcmp(elf_strptr(elf, sh.sh_link, sym.st_name), "_PyRuntime"))
				continue;
			in = elf_getscn(elf, sym.st_shndx);
			cr_assert(in && gelf_getshdr(in, &ds) && ds.sh_type == SHT_PROGBITS);
			cr_assert_eq(pread(fd, out, len,
					   (off_t)(ds.sh_offset + sym.st_value - ds.sh_addr)),
				     (ssize_t)len);
			got = len;
			break;
		}
	}
	elf_end(elf);
	close(fd);
	return got;
}

/* 3.13.5's offsets (x86_64, offsetof() against Debian 13's libpython3.13-dev headers) */
static void expect_313(const struct kp_py_layout *l)
{
	cr_expect_eq(l->rt_interp_head, 632);
	cr_expect_eq(l->is_threads_head, 7344);
	cr_expect_eq(l->ts_next, 8);
	cr_expect_eq(l->ts_native_tid, 160);
	cr_expect_eq(l->ts_cframe, KP_PY_NONE);
	cr_expect_eq(l->cur_frame, 72);
	cr_expect_eq(l->fr_code, 0);
	cr_expect_eq(l->fr_previous, 8);
	cr_expect_eq(l->fr_owner, 70);
	cr_expect_eq(l->fr_is_entry, KP_PY_NONE);
	cr_expect_eq(l->co_filename, 112);
	cr_expect_eq(l->co_qualname, 128);
	cr_expect_eq(l->co_firstlineno, 68);
	cr_expect_eq(l->str_ascii, 40);
	cr_expect_eq(l->str_compact, 56);
	cr_expect_eq(l->str_state, 32);
	cr_expect_eq(l->owner_cstack, 3);
	cr_expect_eq(l->minor, 13);
}

Test(py_layout, debian13_python313_from_its_debug_offsets)
{
	unsigned char rec[584];
	struct kp_py_layout l;
	char why[256] = "";

	if (access(TRIXIE_PY, R_OK))
		cr_skip_test("no %s (make trixie-root makes it)", TRIXIE_PY);
	cr_assert_eq(kp_py_debug_offsets_size(13), sizeof(rec));
	cr_assert_eq(runtime_bytes(TRIXIE_PY, rec, sizeof(rec)), sizeof(rec));
	cr_assert_eq(kp_py_layout_from_debug(rec, sizeof(rec), 3, 13, &l, why, sizeof(why)), 0,
		     "%s", why);
	expect_313(&l);
}

/* a 3.13 record made of 3.13.5's numbers, <set> words changed */
static void record_313(unsigned char rec[584])
{
	static const uint64_t w[73] = {
		0,    0x30d05f0, 0,    283376, 608,  632, 194976, 7272, 7264, 7344, 7400,
		7656, 7640,	 7648, 16,     7752, 0,	  7768,	  7760, 304,  0,    8,
		16,   72,	 152,  160,    232,  32,  80,	  8,	0,    56,   72,
		70,   208,	 112,  120,    128,  136, 68,	  52,	96,   104,  200,
		16,   8,	 416,  24,     88,   168, 32,	  24,	16,   40,   24,
		16,   48,	 32,   40,     24,   16,  32,	  16,	24,   40,   16,
		32,   64,	 32,   16,     40,   240, 200,
	};

	memcpy(rec, w, sizeof(w));
	memcpy(rec, "xdebugpy", 8);
}

Test(py_layout, debug_offsets_refused_with_their_reason)
{
	unsigned char rec[584];
	struct kp_py_layout l;
	char why[256];
	uint64_t v;

	record_313(rec);
	cr_assert_eq(kp_py_layout_from_debug(rec, sizeof(rec), 3, 13, &l, why, sizeof(why)), 0);
	expect_313(&l);

	memcpy(rec, "xdebugpX", 8);
	cr_expect_eq(kp_py_layout_from_debug(rec, sizeof(rec), 3, 13, &l, why, sizeof(why)),
		     -EINVAL);
	cr_expect_str_eq(why, "its _PyRuntime does not start with _Py_DebugOffsets (no "
			      "\"xdebugpy\" cookie)");

	record_313(rec);
	v = 0x030e00f0; /* 3.14.0 */
	memcpy(rec + 8, &v, 8);
	cr_expect_eq(kp_py_layout_from_debug(rec, sizeof(rec), 3, 13, &l, why, sizeof(why)),
		     -EINVAL);
	cr_expect_str_eq(why, "its _Py_DebugOffsets are those of version 3.14, the file says 3.13");

	record_313(rec);
	v = 1;
	memcpy(rec + 16, &v, 8);
	cr_expect_eq(kp_py_layout_from_debug(rec, sizeof(rec), 3, 13, &l, why, sizeof(why)),
		     -ENOTSUP);
	cr_expect_str_eq(why, "it is a free-threaded build (not read: its objects differ, and no "
			      "Debian suite has one to verify a reader on)");

	record_313(rec);
	v = 304; /* native_thread_id at the thread state's size: not 3.13's shape */
	memcpy(rec + 25 * 8, &v, 8);
	cr_expect_eq(kp_py_layout_from_debug(rec, sizeof(rec), 3, 13, &l, why, sizeof(why)),
		     -EINVAL);
	cr_expect_str_eq(why, "its _Py_DebugOffsets hold an offset outside its structure (not "
			      "the shape of 3.13's)");

	record_313(rec);
	cr_expect_eq(kp_py_layout_from_debug(rec, sizeof(rec) - 1, 3, 13, &l, why, sizeof(why)),
		     -ENOTSUP);
	cr_expect_eq(kp_py_layout_from_debug(rec, sizeof(rec), 3, 14, &l, why, sizeof(why)),
		     -ENOTSUP); /* 3.14's record is longer */
	cr_expect_eq(kp_py_layout_from_debug(rec, sizeof(rec), 3, 15, &l, why, sizeof(why)),
		     -ENOTSUP);
	cr_expect_str_eq(why, "no _Py_DebugOffsets reader for Python 3.15");
}

Test(py_layout, which_versions_are_read_how)
{
	struct kp_py_layout l;

	cr_expect(kp_py_layout_of(11, &l));
	cr_expect_eq(l.minor, 11);
	cr_expect_eq(kp_py_debug_offsets_size(11), 0);
	/* 3.12: no debug offsets, and no layout proven on a real 3.12 */
	cr_expect_not(kp_py_layout_of(12, &l));
	cr_expect_eq(kp_py_debug_offsets_size(12), 0);
	cr_expect_not(kp_py_layout_of(13, &l));
	cr_expect_eq(kp_py_debug_offsets_size(13), 584);
	cr_expect_eq(kp_py_debug_offsets_size(14), 760);
	cr_expect_eq(kp_py_debug_offsets_size(15), 0);
}

/* 3.14.8's offsets (x86_64, Debian forky's python3.14: its .PyRuntime bytes) */
static void expect_314(const struct kp_py_layout *l)
{
	cr_expect_eq(l->rt_interp_head, 808);
	cr_expect_eq(l->is_threads_head, 7344);
	cr_expect_eq(l->ts_next, 8);
	cr_expect_eq(l->ts_native_tid, 160);
	cr_expect_eq(l->ts_cframe, KP_PY_NONE);
	cr_expect_eq(l->cur_frame, 72);
	cr_expect_eq(l->fr_code, 0);
	cr_expect_eq(l->fr_previous, 8);
	cr_expect_eq(l->fr_owner, 74);
	cr_expect_eq(l->fr_is_entry, KP_PY_NONE);
	cr_expect_eq(l->co_filename, 112);
	cr_expect_eq(l->co_qualname, 128);
	cr_expect_eq(l->co_firstlineno, 68);
	cr_expect_eq(l->str_ascii, 40);
	cr_expect_eq(l->str_compact, 56);
	cr_expect_eq(l->str_state, 32);
	cr_expect_eq(l->owner_cstack, 3); /* FRAME_OWNED_BY_INTERPRETER */
	cr_expect_eq(l->minor, 14);
}

/* 3.14.8's record (its 95 words as Debian forky's python3.14 holds them), <set> words changed */
static void record_314(unsigned char rec[760])
{
	static const uint64_t w[95] = {
		0,    0x30e08f0, 0,    316616, 784,  808, 225864, 7280, 7272, 7344, 7360, 7408,
		7688, 7672,	 7680, 16,     7784, 0,	  7800,	  7792, 7992, 0,    832,  0,
		8,    16,	 72,   152,    160,  232, 32,	  88,	8,    0,    56,	  80,
		74,   64,	 0,    216,    112,  120, 128,	  136,	68,   52,   96,	  104,
		208,  0,	 16,   8,      416,  24,  88,	  168,	40,   32,   16,	  40,
		24,   16,	 200,  24,     40,   32,  48,	  32,	40,   24,   16,	  32,
		16,   24,	 40,   16,     32,   64,  32,	  16,	40,   264,  192,  160,
		24,   72,	 67,   0,      8,    24,  304,	  8076, 0,    4,    512,
	};

	memcpy(rec, w, sizeof(w));
	memcpy(rec, "xdebugpy", 8);
}

Test(py_layout, python314_record_read_and_refused)
{
	unsigned char rec[760];
	struct kp_py_layout l;
	char why[256];
	uint64_t v;

	record_314(rec);
	cr_assert_eq(kp_py_layout_from_debug(rec, sizeof(rec), 3, 14, &l, why, sizeof(why)), 0,
		     "%s", why);
	expect_314(&l);
	/* read as 3.13's shape it is refused: its version says 3.14 */
	cr_expect_eq(kp_py_layout_from_debug(rec, sizeof(rec), 3, 13, &l, why, sizeof(why)),
		     -EINVAL);
	cr_expect_str_eq(why, "its _Py_DebugOffsets are those of version 3.14, the file says 3.13");
	v = 88; /* the frame's owner at the frame's size: not 3.14's shape */
	memcpy(rec + 36 * 8, &v, 8);
	cr_expect_eq(kp_py_layout_from_debug(rec, sizeof(rec), 3, 14, &l, why, sizeof(why)),
		     -EINVAL);
	cr_expect_str_eq(why, "its _Py_DebugOffsets hold an offset outside its structure (not "
			      "the shape of 3.14's)");
	record_314(rec);
	v = 1;
	memcpy(rec + 16, &v, 8);
	cr_expect_eq(kp_py_layout_from_debug(rec, sizeof(rec), 3, 14, &l, why, sizeof(why)),
		     -ENOTSUP);
}

Test(py_layout, debian_forky_python314_from_its_debug_offsets)
{
	unsigned char rec[760];
	struct kp_py_layout l;
	char why[256] = "";

	if (access(FORKY_PY, R_OK))
		cr_skip_test("no %s (make forky-root makes it)", FORKY_PY);
	cr_assert_eq(runtime_bytes(FORKY_PY, rec, sizeof(rec)), sizeof(rec));
	cr_assert_eq(kp_py_layout_from_debug(rec, sizeof(rec), 3, 14, &l, why, sizeof(why)), 0,
		     "%s", why);
	expect_314(&l);
}

/* the part of _PyEval_EvalFrameDefault at [<lo>, <hi>) in <path>, false when it is whole */
static bool split_of(const char *path, uint64_t *lo, uint64_t *hi)
{
	uint64_t eval = 0, size = 0;
	int fd = open(path, O_RDONLY);
	Elf_Scn *scn = NULL;
	bool split;
	Elf *elf;

	cr_assert_geq(fd, 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	cr_assert(elf);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;

			if (gelf_getsym(d, (int)i, &sym) && sym.st_value &&
			    !strcmp(elf_strptr(elf, sh.sh_link, sym.st_name),
				    "_PyEval_EvalFrameDefault")) {
				eval = sym.st_value;
				size = sym.st_size;
			}
		}
	}
	cr_assert(eval && size, "no _PyEval_EvalFrameDefault in %s", path);
	split = kp_py_eval_split(elf, eval, size, lo, hi);
	elf_end(elf);
	close(fd);
	return split;
}

/* Debian forky's 3.14.8 keeps 1 196 bytes at the symbol and its loop in a part of its own (its
 * FDE: 0x43e429..0x452dce, readelf --debug-dump=frames); 3.11 and 3.13 are whole */
Test(py_layout, interpreter_loop_split_off_by_the_compiler)
{
	uint64_t lo = 0, hi = 0;

	if (!access("/usr/bin/python3.11", R_OK))
		cr_expect_not(split_of("/usr/bin/python3.11", &lo, &hi), "%#lx-%#lx",
			      (unsigned long)lo, (unsigned long)hi);
	if (!access(TRIXIE_PY, R_OK))
		cr_expect_not(split_of(TRIXIE_PY, &lo, &hi), "%#lx-%#lx", (unsigned long)lo,
			      (unsigned long)hi);
	if (access(FORKY_PY, R_OK))
		cr_skip_test("no %s (make forky-root makes it)", FORKY_PY);
	cr_assert(split_of(FORKY_PY, &lo, &hi));
	cr_expect_eq(lo, 0x43e429);
	cr_expect(hi >= 0x452dce && hi < 0x452dce + 64, "%#lx", (unsigned long)hi);
}
