/*
 * target.c - which file provides a process's allocator, and where its functions start.
 *
 * The allocator a program calls is the first definition of malloc in its link map: the
 * executable, then LD_PRELOAD libraries, then its DT_NEEDED libraries breadth first (jemalloc
 * or tcmalloc linked in come before libc). For a command about to run, its dynamic loader
 * says that order (`ld.so --list PROGRAM`, what ldd does, without running the program); for
 * a running process, /proc/PID/maps gives its files but not their order, so the executable
 * comes first, libc last and the others between. mmap, munmap and brk are the C library's
 * system call wrappers whatever the allocator. Functions are found with the UTrace module's
 * ELF scan (defined STT_FUNC symbols of .symtab and .dynsym); two names at one address
 * (glibc's aliases) get one probe, named by the first.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "memscope.h"
#include "utrace/utrace.h"

static const char *const func_names[KP_MS_NFUNCS] = {
	[KP_MS_MALLOC] = "malloc",
	[KP_MS_CALLOC] = "calloc",
	[KP_MS_REALLOC] = "realloc",
	[KP_MS_FREE] = "free",
	[KP_MS_POSIX_MEMALIGN] = "posix_memalign",
	[KP_MS_ALIGNED_ALLOC] = "aligned_alloc",
	[KP_MS_MEMALIGN] = "memalign",
	[KP_MS_VALLOC] = "valloc",
	[KP_MS_PVALLOC] = "pvalloc",
	[KP_MS_MMAP] = "mmap",
	[KP_MS_MUNMAP] = "munmap",
	[KP_MS_BRK] = "brk",
	[KP_MS_ACCESS_MARK] = "kperf_mem_access",
};

/* the functions that belong to the allocator (prefixed); the others are libc's */
#define ALLOC_FUNCS (KP_MS_PVALLOC + 1)

const char *kp_ms_func_name(int func)
{
	return func >= 0 && func < KP_MS_NFUNCS ? func_names[func] : "?";
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static bool is_libc(const char *path)
{
	const char *b = base_name(path);

	return !strncmp(b, "libc.so", 7) || !strncmp(b, "libc-", 5);
}

static bool is_libkperf(const char *path)
{
	return !strncmp(base_name(path), "libkperf-bpf", 12);
}

static int add_site(struct kp_ms_plan *p, const char *path, uint64_t off, int func)
{
	struct kp_ms_site *s;
	unsigned i;

	for (i = 0; i < p->nsites; i++)
		if (p->sites[i].off == off && !strcmp(p->sites[i].path, path))
			return 0; /* an alias of a function already probed */
	s = realloc(p->sites, (p->nsites + 1) * sizeof(*s));
	if (!s)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	p->sites = s;
	s[p->nsites].path = strdup(path);
	if (!s[p->nsites].path)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	s[p->nsites].off = off;
	s[p->nsites].func = func;
	p->nsites++;
	return 0;
}

/* Look functions [from, to) (with <prefix> for the allocator's) up in <path>; add those found.
 * The number found, or a negative errno when the file cannot be read (not fatal for the
 * callers: they try the next file). */
static int scan(struct kp_ms_plan *p, const char *path, const char *prefix, int from, int to)
{
	char names[KP_MS_NFUNCS][128], why[256];
	const char *np[KP_MS_NFUNCS] = { 0 };
	struct kp_ut_func f[KP_MS_NFUNCS] = { 0 };
	int i, n = to - from, found = 0, err;

	for (i = 0; i < n; i++) {
		snprintf(names[i], sizeof(names[i]), "%s%s", from + i < ALLOC_FUNCS ? prefix : "",
			 func_names[from + i]);
		np[i] = names[i];
	}
	err = kp_ut_elf_scan(path, np, (unsigned)n, f, why, sizeof(why));
	if (err)
		return err;
	for (i = 0; i < n && !err; i++) {
		if (!f[i].found)
			continue;
		err = add_site(p, path, f[i].entry, from + i);
		found++;
	}
	kp_ut_funcs_free(f, (unsigned)n);
	return err ? err : found;
}

/* Does <path> define <prefix>malloc? */
static bool defines_malloc(const char *path, const char *prefix)
{
	struct kp_ms_plan tmp = { 0 };
	bool yes = scan(&tmp, path, prefix, KP_MS_MALLOC, KP_MS_MALLOC + 1) > 0;

	kp_ms_plan_free(&tmp);
	return yes;
}

/* <files> in link order (files[0] the program): the plan */
static int plan_files(char **files, unsigned n, const char *what, const char *prefix,
		      struct kp_ms_plan *p)
{
	int alloc = -1, libc = -1, err;
	unsigned i;

	for (i = 0; i < n && alloc < 0; i++)
		if (defines_malloc(files[i], prefix))
			alloc = (int)i;
	if (alloc < 0)
		return kp_fail(KPERF_ERR_INVALID_ARG, -ENOENT,
			       "%s has no allocator to trace: no %smalloc symbol in %s%s (a static "
			       "program without symbols, or an allocator with another prefix: "
			       "--prefix)",
			       what, prefix, files[0], n > 1 ? " or the libraries it loads" : "");
	p->owner = strdup(base_name(files[alloc]));
	if (!p->owner)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	err = scan(p, files[alloc], prefix, KP_MS_MALLOC, ALLOC_FUNCS);
	if (err < 0)
		return kp_fail(KPERF_ERR_INVALID_ARG, err, "cannot read %s: %s", files[alloc],
			       strerror(-err));
	for (i = 0; i < n; i++)
		if (is_libc(files[i]))
			libc = (int)i;
	/* a static program has its own wrappers; otherwise libc's */
	err = scan(p, files[libc >= 0 ? libc : alloc], "", KP_MS_MMAP, KP_MS_BRK + 1);
	if (err < 0)
		return err;
	for (i = 0; i < n; i++)
		if (is_libkperf(files[i]) || (int)i == 0)
			scan(p, files[i], "", KP_MS_ACCESS_MARK, KP_MS_ACCESS_MARK + 1);
	return 0;
}

static void free_list(char **l, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		free(l[i]);
	free(l);
}

static int push(char ***l, unsigned *n, const char *s)
{
	char **t;
	unsigned i;

	for (i = 0; i < *n; i++)
		if (!strcmp((*l)[i], s))
			return 0;
	t = realloc(*l, (*n + 1) * sizeof(*t));
	if (!t)
		return -ENOMEM;
	*l = t;
	t[*n] = strdup(s);
	if (!t[*n])
		return -ENOMEM;
	(*n)++;
	return 0;
}

int kp_ms_plan_pid(int pid, const char *prefix, struct kp_ms_plan *out)
{
	struct kp_ut_map *maps = NULL;
	size_t nmaps = 0, i;
	char **files = NULL, exe[PATH_MAX], link[64], path[PATH_MAX + 64];
	unsigned n = 0;
	ssize_t len;
	int err, pass;

	memset(out, 0, sizeof(*out));
	snprintf(link, sizeof(link), "/proc/%d/exe", pid);
	len = readlink(link, exe, sizeof(exe) - 1);
	if (len < 0)
		return kp_fail(LIBPERF_ERR_INVALID_PID, -errno,
			       "cannot read /proc/%d/exe: %s (a kernel thread has no allocator)",
			       pid, strerror(errno));
	exe[len] = '\0';
	err = kp_ut_maps_read(pid, &maps, &nmaps);
	if (err)
		return kp_fail(LIBPERF_ERR_INVALID_PID, err, "cannot read /proc/%d/maps: %s", pid,
			       strerror(-err));
	/* the files as this process opens them: through the target's root */
	snprintf(path, sizeof(path), "/proc/%d/root%s", pid, exe);
	err = push(&files, &n, path);
	for (pass = 0; pass < 2 && !err; pass++) {
		for (i = 0; i < nmaps && !err; i++) {
			if (!maps[i].exec || !maps[i].path || maps[i].path[0] != '/' ||
			    is_libc(maps[i].path) != (pass == 1))
				continue;
			snprintf(path, sizeof(path), "/proc/%d/root%s", pid, maps[i].path);
			err = push(&files, &n, path);
		}
	}
	kp_ut_maps_free(maps, nmaps);
	if (err) {
		free_list(files, n);
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	}
	snprintf(link, sizeof(link), "process %d", pid);
	err = plan_files(files, n, link, prefix ? prefix : "", out);
	free_list(files, n);
	if (err)
		kp_ms_plan_free(out);
	return err;
}

/* the PT_INTERP of <exe> into <buf>; 0 when there is none (a static program) */
static int interp_of(const char *exe, char *buf, size_t size, bool *has)
{
	Elf *elf;
	size_t i, nph;
	int fd, err = 0;

	*has = false;
	elf_version(EV_CURRENT);
	fd = open(exe, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &nph)) {
		err = -ENOEXEC;
		goto out;
	}
	for (i = 0; i < nph; i++) {
		GElf_Phdr ph;
		Elf_Data *d;
		size_t n;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_INTERP)
			continue;
		d = elf_getdata_rawchunk(elf, ph.p_offset, ph.p_filesz, ELF_T_BYTE);
		if (!d || !d->d_size)
			break;
		n = d->d_size < size - 1 ? d->d_size : size - 1;
		memcpy(buf, d->d_buf, n);
		buf[n] = '\0';
		*has = true;
		break;
	}
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

/* `<interp> --list <exe>`: the libraries in load order, appended to <files> */
static int loader_list(const char *interp, const char *exe, char ***files, unsigned *n)
{
	int pfd[2], status, err = 0;
	char *buf = NULL, *line, *save = NULL;
	size_t len = 0, cap = 0;
	pid_t pid;
	ssize_t r;

	if (pipe2(pfd, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -errno;
	}
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);

		dup2(pfd[1], 1);
		if (devnull >= 0)
			dup2(devnull, 2);
		execl(interp, interp, "--list", exe, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	for (;;) {
		if (len + 4096 + 1 > cap && kp_grow((void **)&buf, &cap, len + 4096 + 1, 1)) {
			err = -ENOMEM;
			break;
		}
		r = read(pfd[0], buf + len, 4096);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!err && (!WIFEXITED(status) || WEXITSTATUS(status) != 0))
		err = -ENOEXEC;
	if (err) {
		free(buf);
		return err;
	}
	buf[len] = '\0';
	/* "\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)" or "\t/lib64/ld... (0x...)" */
	for (line = strtok_r(buf, "\n", &save); line && !err; line = strtok_r(NULL, "\n", &save)) {
		char *arrow = strstr(line, "=> "), *p = arrow ? arrow + 3 : line, *end;

		while (*p == ' ' || *p == '\t')
			p++;
		if (*p != '/')
			continue;
		end = strstr(p, " (");
		if (end)
			*end = '\0';
		err = push(files, n, p);
	}
	free(buf);
	return err;
}

int kp_ms_plan_command(const char *exe, const char *prefix, struct kp_ms_plan *out)
{
	char interp[PATH_MAX], what[PATH_MAX + 16];
	char **files = NULL;
	unsigned n = 0;
	bool dynamic;
	int err;

	memset(out, 0, sizeof(*out));
	err = interp_of(exe, interp, sizeof(interp), &dynamic);
	if (err)
		return kp_fail(KPERF_ERR_INVALID_ARG, err,
			       "%s is not a program kperf-bpf can read: %s", exe,
			       err == -ENOEXEC ? "not an ELF file" : strerror(-err));
	err = push(&files, &n, exe);
	if (!err && dynamic) {
		err = loader_list(interp, exe, &files, &n);
		if (err == -ENOEXEC)
			err = kp_fail(KPERF_ERR_INVALID_ARG, err,
				      "the dynamic loader %s cannot list the libraries of %s",
				      interp, exe);
	}
	if (err) {
		free_list(files, n);
		return err == -ENOMEM ? kp_fail(COMMON_ERR_NOMEM, err, "out of memory") : err;
	}
	snprintf(what, sizeof(what), "%s", exe);
	err = plan_files(files, n, what, prefix ? prefix : "", out);
	free_list(files, n);
	if (err)
		kp_ms_plan_free(out);
	return err;
}

void kp_ms_plan_free(struct kp_ms_plan *p)
{
	unsigned i;

	for (i = 0; i < p->nsites; i++)
		free(p->sites[i].path);
	free(p->sites);
	free(p->owner);
	memset(p, 0, sizeof(*p));
}
