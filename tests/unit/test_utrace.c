/*
 * test_utrace.c - where UTrace puts its probes, without loading BPF: functions found in the
 * workloads' ELF files by each of libkperf's name forms, at the file offsets binutils gives,
 * with exactly the return instructions objdump shows; libraries found by name in a process's
 * mappings; a probe address traced back to its function; and each unusable file or name
 * reported with its reason.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <errno.h>
#include <unistd.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "utrace/utrace.h"
#include "utrace_testutil.h"

TestSuite(utrace_elf, .timeout = 60);
TestSuite(utrace_plan, .timeout = 60);

static int cmp_ul(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;

	return (x > y) - (x < y);
}

/* f's entry and returns are where nm and objdump say, as file offsets */
static void assert_func(const char *bin, const char *sym, const char *dump_name,
			const struct kp_ut_func *f)
{
	unsigned long vaddr = ut_nm(bin, sym), delta = ut_text_delta(bin), rets[32], got[32];
	int n = ut_objdump_rets(bin, dump_name, rets, 32), i;

	cr_assert(f->found, "%s found", sym);
	cr_assert_neq(vaddr, 0, "nm knows %s", sym);
	cr_assert_eq(f->vaddr, vaddr, "%s at %#lx, nm says %#lx", sym, (unsigned long)f->vaddr,
		     vaddr);
	cr_assert_eq(f->entry, vaddr - delta, "%s entry at file offset %#lx", sym,
		     (unsigned long)f->entry);
	cr_assert_eq(f->nrets, (unsigned)n, "%s: %u returns, objdump shows %d", sym, f->nrets, n);
	for (i = 0; i < n; i++)
		got[i] = (unsigned long)f->rets[i];
	qsort(got, (size_t)n, sizeof(*got), cmp_ul);
	qsort(rets, (size_t)n, sizeof(*rets), cmp_ul);
	for (i = 0; i < n; i++)
		cr_assert_eq(got[i], rets[i] - delta, "%s return %d at %#lx, objdump %#lx", sym, i,
			     got[i], rets[i] - delta);
}

Test(utrace_elf, c_functions_and_their_returns)
{
	static const char *const names[] = {
		"ut_f",	   "ut_g",     "ut_rec", "ut_multi", "ut_bare",
		"ut_tail", "ut_clone", "nope",	 "ut_piece", "ut_clone.constprop.0"
	};
	struct kp_ut_func f[10];
	char bin[PATH_MAX], why[256];
	unsigned i;

	ut_artefact("workloads/utrace_wl", bin);
	cr_assert_eq(kp_ut_elf_scan(bin, names, 10, f, why, sizeof(why)), 0, "%s", why);
	for (i = 0; i < 6; i++)
		assert_func(bin, names[i], names[i], &f[i]);
	cr_assert_eq(f[2].nrets, 2, "ut_rec returns from its base case and after the call");
	cr_assert_eq(f[3].nrets, 2, "ut_multi has one return per path");
	cr_assert_eq(f[4].nrets, 1, "ut_bare is one return instruction");
	cr_assert_eq(f[4].rets[0], f[4].entry, "... at its entry");
	cr_assert_eq(f[5].nrets, 0, "ut_tail leaves by a jump");
	/* a compiler clone, by its base name and by its own */
	assert_func(bin, "ut_clone.constprop.0", "ut_clone.constprop.0", &f[6]);
	assert_func(bin, "ut_clone.constprop.0", "ut_clone.constprop.0", &f[9]);
	cr_assert(!f[7].found, "no function is named nope");
	cr_assert(!f[8].found, "a .cold piece is not the function's entry");
	kp_ut_funcs_free(f, 10);
}

Test(utrace_elf, cxx_names_mangled_demangled_and_bare)
{
	static const char *const names[] = { "_ZN2ns7Counter4stepEi",
					     "ns::Counter::step(int)",
					     "ns::Counter::step",
					     "twice",
					     "twice(int)",
					     "_ZL5twicei",
					     "ns::Counter",
					     "step" };
	struct kp_ut_func f[8];
	char bin[PATH_MAX], why[256];
	unsigned i;

	ut_artefact("workloads/utrace_cxx", bin);
	cr_assert_eq(kp_ut_elf_scan(bin, names, 8, f, why, sizeof(why)), 0, "%s", why);
	for (i = 0; i < 3; i++)
		assert_func(bin, "_ZN2ns7Counter4stepEi", "_ZN2ns7Counter4stepEi", &f[i]);
	for (i = 3; i < 6; i++)
		assert_func(bin, "_ZL5twicei", "_ZL5twicei", &f[i]);
	cr_assert(!f[6].found, "a class is not a function");
	cr_assert(!f[7].found, "a member's bare name without its scope is not its name");
	kp_ut_funcs_free(f, 8);
}

Test(utrace_elf, shared_library_function)
{
	static const char *const names[] = { "wl_lib_work" };
	struct kp_ut_func f[1];
	char lib[PATH_MAX], why[256];

	ut_artefact("workloads/libwl.so", lib);
	cr_assert_eq(kp_ut_elf_scan(lib, names, 1, f, why, sizeof(why)), 0, "%s", why);
	assert_func(lib, "wl_lib_work", "wl_lib_work", &f[0]);
	cr_assert_geq(f[0].nrets, 1);
	kp_ut_funcs_free(f, 1);
}

Test(utrace_elf, unusable_files_say_why)
{
	static const char *const names[] = { "main" };
	struct kp_ut_func f[1];
	char obj[PATH_MAX], why[256];

	cr_assert_eq(kp_ut_elf_scan("/nonexistent/utrace/bin", names, 1, f, why, sizeof(why)),
		     -ENOENT);
	cr_assert_str_eq(why, "cannot open it: No such file or directory");
	cr_assert_eq(kp_ut_elf_scan(KPERF_SRCDIR "/Makefile", names, 1, f, why, sizeof(why)),
		     -ENOEXEC);
	cr_assert_str_eq(why, "not an ELF file");
	ut_artefact("obj/user/core/map.o", obj);
	cr_assert_eq(kp_ut_elf_scan(obj, names, 1, f, why, sizeof(why)), -ENOEXEC);
	cr_assert_str_eq(why, "neither an executable nor a shared library (ELF type 1)");
}

/* the plan for <n> (module, symbol) pairs, traced in this process */
static int plan_for(const struct SymbolSource *src, unsigned n, struct kp_ut_plan **p)
{
	const struct SymbolSource *ptrs[16];
	int self = getpid();
	unsigned i;

	for (i = 0; i < n; i++)
		ptrs[i] = &src[i];
	kp_clear();
	return kp_ut_plan_build(ptrs, n, &self, 1, p);
}

static const struct kp_ut_site *find_site(const struct kp_ut_plan *p, unsigned module, uint64_t off)
{
	size_t i;

	for (i = 0; i < p->nsites; i++)
		if (p->sites[i].module == module && p->sites[i].off == off)
			return &p->sites[i];
	return NULL;
}

Test(utrace_plan, sites_of_an_executable)
{
	char bin[PATH_MAX], warn[512];
	struct SymbolSource src[3];
	const struct kp_ut_site *s;
	struct kp_ut_func f[2];
	static const char *const names[] = { "ut_multi", "ut_bare" };
	struct kp_ut_plan *p;
	char why[256];

	ut_artefact("workloads/utrace_wl", bin);
	src[0] = (struct SymbolSource){ bin, "ut_multi" };
	src[1] = (struct SymbolSource){ bin, "ut_bare" };
	src[2] = (struct SymbolSource){ bin, "nope" };
	cr_assert_eq(plan_for(src, 3, &p), 0, "%s", Perror());
	cr_assert_eq(GetWarn(), LIBPERF_WARN_UTRACE_ELF_SCAN_FAILED);
	snprintf(warn, sizeof(warn), "not traced: %s: no function named \"nope\"", bin);
	cr_assert_str_eq(GetWarnMsg(), warn);
	cr_assert_eq(p->nmodules, 1);
	cr_assert_str_eq(p->modules[0].path, bin);
	cr_assert(p->modules[0].all_targets);
	/* ut_multi: entry + 2 returns; ut_bare: entry and return at one address */
	cr_assert_eq(p->nsites, 4);
	kp_ut_elf_scan(bin, names, 2, f, why, sizeof(why));
	s = find_site(p, 0, f[1].entry);
	cr_assert_not_null(s);
	cr_assert_eq(s->nroles, 2);
	cr_assert_str_eq(s->roles[0].func, "ut_bare");
	cr_assert(!s->roles[0].is_ret, "the entry comes first");
	cr_assert(s->roles[1].is_ret);
	s = find_site(p, 0, f[0].rets[1]);
	cr_assert_not_null(s);
	cr_assert_eq(s->nroles, 1);
	cr_assert_str_eq(s->roles[0].func, "ut_multi");
	cr_assert(s->roles[0].is_ret);
	kp_ut_funcs_free(f, 2);
	kp_ut_plan_free(p);
}

Test(utrace_plan, library_by_name_and_back_from_an_address)
{
	struct SymbolSource src[3] = { { "libc.so", "getppid" } };
	void *addr = dlsym(RTLD_DEFAULT, "getppid");
	char libc[PATH_MAX] = "", warn[512];
	struct kp_ut_resolver *r;
	const struct kp_ut_site *s;
	const char *path;
	struct kp_ut_plan *p;
	Dl_info info;

	cr_assert(dladdr(addr, &info) && realpath(info.dli_fname, libc));
	cr_assert_eq(plan_for(src, 1, &p), 0, "%s", Perror());
	cr_assert_eq(GetWarn(), SUCCESS, "%s", GetWarnMsg());
	cr_assert_eq(p->nmodules, 1);
	cr_assert_str_eq(p->modules[0].path, libc, "libc.so is this process's %s", libc);
	cr_assert(!p->modules[0].all_targets);
	cr_assert_eq(p->modules[0].ntgids, 1);
	cr_assert_eq(p->modules[0].tgids[0], getpid());
	cr_assert_eq(kp_ut_resolver_new(p, &r), 0);
	s = kp_ut_resolve(r, (uint32_t)getpid(), (uint64_t)(uintptr_t)addr, true, &path);
	cr_assert_not_null(s, "getppid's entry at %p is a probe site", addr);
	cr_assert_str_eq(s->roles[0].func, "getppid");
	cr_assert(!s->roles[0].is_ret);
	cr_assert_str_eq(path, libc);
	cr_assert_null(
		kp_ut_resolve(r, (uint32_t)getpid(), (uint64_t)(uintptr_t)addr + 1, true, &path));
	cr_assert_null(kp_ut_resolve(r, 1, (uint64_t)(uintptr_t)addr, true, &path), "not a target");
	kp_ut_resolver_free(r);
	kp_ut_plan_free(p);

	/* the same file by path and by name: one module, probed everywhere */
	src[0] = (struct SymbolSource){ libc, "getpid" };
	src[1] = (struct SymbolSource){ "libc.so", "getppid" };
	cr_assert_eq(plan_for(src, 2, &p), 0, "%s", Perror());
	cr_assert_eq(p->nmodules, 1);
	cr_assert(p->modules[0].all_targets);
	kp_ut_plan_free(p);

	/* a name nothing maps, next to one that resolves */
	src[0] = (struct SymbolSource){ "libnope.so", "f" };
	src[1] = (struct SymbolSource){ "libc.so", "getppid" };
	cr_assert_eq(plan_for(src, 2, &p), 0, "%s", Perror());
	cr_assert_eq(GetWarn(), LIBPERF_WARN_UTRACE_ELF_SCAN_FAILED);
	snprintf(warn, sizeof(warn),
		 "not traced: libnope.so: no such file, and no process of pidList maps a file of "
		 "that name");
	cr_assert_str_eq(GetWarnMsg(), warn);
	kp_ut_plan_free(p);
}

Test(utrace_plan, nothing_resolves)
{
	struct SymbolSource src[2] = { { "/nonexistent/bin", "f" }, { "libnope.so", "g" } };
	struct kp_ut_plan *p = (void *)1;
	const char *msg = "/nonexistent/bin: cannot open it: No such file or directory; "
			  "libnope.so: no such file, and no process of pidList maps a file of "
			  "that name";
	char want[512];

	cr_assert_eq(plan_for(src, 2, &p), -ENOENT);
	cr_assert_null(p);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_UTRACE_ELF_SCAN_FAILED);
	snprintf(want, sizeof(want), "none of the functions asked for can be traced: %s", msg);
	cr_assert_str_eq(Perror(), want);
	cr_assert_eq(GetWarn(), LIBPERF_WARN_UTRACE_ELF_SCAN_FAILED);
	snprintf(want, sizeof(want), "not traced: %s", msg);
	cr_assert_str_eq(GetWarnMsg(), want);
}
