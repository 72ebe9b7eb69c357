/*
 * probes.c - where the kperf USDT probes of a set of processes are: the files they map (or
 * will map) whose ELF notes hold provider "kperf".
 *
 * A uprobe sits on a file (an inode), so the question is which copies of libkperf-bpf a
 * process runs: the ones /proc/PID/maps shows for a running process, and for a program not
 * started yet, the copy its dynamic loader will find, which is looked for where the loader
 * looks. The executable itself is a candidate too (linked with libkperf-bpf.a). Every
 * candidate is opened through /proc/PID/root when it comes from a process, so a file in
 * another mount namespace is that namespace's file.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "activity.h"
#include "core/core.h"
#include "kperf/pcerrc.h"

struct file_id {
	dev_t dev;
	ino_t ino;
};

/* the file offset of virtual address <addr>, from the PT_LOAD segment holding it */
static uint64_t addr_to_off(Elf *elf, uint64_t addr)
{
	size_t n, i;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n))
		return 0;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (addr >= ph.p_vaddr && addr < ph.p_vaddr + ph.p_memsz)
			return addr - ph.p_vaddr + ph.p_offset;
	}
	return 0;
}

static int parse_notes(Elf *elf, const char *provider, struct kp_usdt_note **out)
{
	uint64_t base_addr = 0;
	Elf_Scn *scn = NULL, *notes = NULL;
	struct kp_usdt_note *arr = NULL;
	size_t shstrndx, cap = 0, n = 0, off, name_off, desc_off;
	int wide = gelf_getclass(elf) == ELFCLASS64;
	GElf_Shdr sh;
	GElf_Nhdr nh;
	Elf_Data *data;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return -EINVAL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name)
			continue;
		if (sh.sh_type == SHT_NOTE && !strcmp(name, ".note.stapsdt"))
			notes = scn;
		else if (!strcmp(name, ".stapsdt.base"))
			base_addr = sh.sh_addr;
	}
	if (!notes)
		return 0;
	data = elf_getdata(notes, NULL);
	if (!data)
		return -EINVAL;
	for (off = 0; (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0;) {
		const char *desc = (const char *)data->d_buf + desc_off, *end = desc + nh.n_descsz;
		const char *prov, *pname;
		size_t asz = wide ? 8 : 4;
		struct kp_usdt_note *note;
		uint64_t v[3] = { 0 };
		int k;

		if (nh.n_type != 3 || nh.n_namesz != 8 ||
		    memcmp((const char *)data->d_buf + name_off, "stapsdt", 8) ||
		    nh.n_descsz < 3 * asz + 2)
			continue;
		for (k = 0; k < 3; k++) {
			if (wide)
				memcpy(&v[k], desc + 8 * k, 8);
			else {
				uint32_t w;

				memcpy(&w, desc + 4 * k, 4);
				v[k] = w;
			}
		}
		prov = desc + 3 * asz;
		pname = memchr(prov, '\0', (size_t)(end - prov));
		if (!pname || ++pname >= end || !memchr(pname, '\0', (size_t)(end - pname)))
			continue;
		if (provider && strcmp(prov, provider))
			continue;
		if (kp_grow((void **)&arr, &cap, n + 1, sizeof(*arr))) {
			free(arr);
			return -ENOMEM;
		}
		note = &arr[n++];
		memset(note, 0, sizeof(*note));
		snprintf(note->provider, sizeof(note->provider), "%s", prov);
		snprintf(note->name, sizeof(note->name), "%s", pname);
		note->base = v[1];
		note->pc = v[0];
		note->sema = v[2];
		/* a file relinked (prelink) after the notes were written moved its code: the
		 * .stapsdt.base section says by how much, as libbpf corrects it */
		if (base_addr && note->base)
			note->pc += base_addr - note->base;
		note->file_off = addr_to_off(elf, note->pc);
		note->sema_off = note->sema ? addr_to_off(elf, note->sema) : 0;
	}
	*out = arr;
	return (int)n;
}

int kp_usdt_notes(const char *path, const char *provider, struct kp_usdt_note **out)
{
	Elf *elf;
	int fd, n;

	*out = NULL;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	fd = kp_open_path(path, O_RDONLY);
	if (fd < 0)
		return fd;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		if (elf)
			elf_end(elf);
		close(fd);
		return -ENOEXEC;
	}
	n = parse_notes(elf, provider, out);
	elf_end(elf);
	close(fd);
	return n;
}

/* Keep <path> when it holds kperf probes and is not in the list yet. 1 added, 0 not. */
static int consider(struct kp_probe_files *f, const char *path)
{
	struct kp_usdt_note *notes;
	struct file_id *ids = f->ids;
	struct stat st;
	size_t i, cap;
	int n;

	if (kp_stat_path(path, &st) || !S_ISREG(st.st_mode))
		return 0;
	for (i = 0; i < f->n; i++)
		if (ids[i].dev == st.st_dev && ids[i].ino == st.st_ino)
			return 0;
	for (i = 0; i < f->nwithout; i++)
		if (((struct file_id *)f->without)[i].dev == st.st_dev &&
		    ((struct file_id *)f->without)[i].ino == st.st_ino)
			return 0;
	n = kp_usdt_notes(path, KP_MSTX_PROVIDER, &notes);
	free(notes);
	if (n == -ENOMEM)
		return -ENOMEM;
	if (n <= 0) {
		/* remembered, so that the executable of a hundred shells is read once */
		if (kp_grow(&f->without, &f->without_cap, f->nwithout + 1, sizeof(struct file_id)))
			return -ENOMEM;
		((struct file_id *)f->without)[f->nwithout++] =
			(struct file_id){ st.st_dev, st.st_ino };
		return 0;
	}
	cap = f->cap;
	if (kp_grow((void **)&f->paths, &f->cap, f->n + 1, sizeof(*f->paths)) ||
	    kp_grow(&f->ids, &cap, f->n + 1, sizeof(struct file_id)))
		return -ENOMEM;
	f->paths[f->n] = strdup(path);
	if (!f->paths[f->n])
		return -ENOMEM;
	((struct file_id *)f->ids)[f->n] = (struct file_id){ st.st_dev, st.st_ino };
	f->n++;
	return 1;
}

/* the executable of <pid> and its mapped files named libkperf-bpf* */
static int from_process(struct kp_probe_files *f, int pid)
{
	char path[PATH_MAX + 64], *text, *line, *save = NULL;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	err = consider(f, path);
	if (err < 0)
		return err;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	if (kp_read_file(path, &text, NULL))
		return 0; /* gone: nothing to look at */
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *file = strchr(line, '/'), *base;

		if (!file)
			continue;
		base = strrchr(file, '/') + 1;
		if (strncmp(base, "libkperf-bpf", 12) || strstr(file, " (deleted)"))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/root%s", pid, file);
		err = consider(f, path);
		if (err < 0)
			break;
	}
	free(text);
	return err < 0 ? err : 0;
}

/* <dir>/libkperf-bpf.so.0 */
static int from_dir(struct kp_probe_files *f, const char *dir, size_t len)
{
	char path[PATH_MAX];

	if (!len || len + sizeof("/libkperf-bpf.so.0") > sizeof(path))
		return 0;
	snprintf(path, sizeof(path), "%.*s/libkperf-bpf.so.0", (int)len, dir);
	return consider(f, path) < 0 ? -ENOMEM : 0;
}

/* where the dynamic loader of a program about to start would find libkperf-bpf.so.0, and
 * the program itself */
static int for_command(struct kp_probe_files *f, const char *command)
{
	static const char *const sys_dirs[] = {
		"/usr/local/lib",
		"/usr/lib",
		"/lib",
		"/usr/lib64",
		"/lib64",
#if defined(__x86_64__)
		"/usr/lib/x86_64-linux-gnu",
		"/lib/x86_64-linux-gnu",
#elif defined(__aarch64__)
		"/usr/lib/aarch64-linux-gnu",
		"/lib/aarch64-linux-gnu",
#endif
	};
	const char *env, *p, *q;
	char exe[PATH_MAX];
	ssize_t n;
	size_t i;

	if (command && consider(f, command) < 0)
		return -ENOMEM;
	env = secure_getenv("KPERF_BPF_LIB");
	if (env && *env && consider(f, env) < 0)
		return -ENOMEM;
	env = secure_getenv("LD_LIBRARY_PATH");
	for (p = env; p && *p; p = *q ? q + 1 : q) {
		q = strchrnul(p, ':');
		if (from_dir(f, p, (size_t)(q - p)))
			return -ENOMEM;
	}
	/* the build tree: build/bin/kperf-bpf next to build/lib */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		char *slash;

		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			snprintf(exe + strlen(exe), sizeof(exe) - strlen(exe), "/../lib");
			if (from_dir(f, exe, strlen(exe)))
				return -ENOMEM;
		}
	}
	for (i = 0; i < KP_ARRAY_SIZE(sys_dirs); i++)
		if (from_dir(f, sys_dirs[i], strlen(sys_dirs[i])))
			return -ENOMEM;
	return 0;
}

int kp_probe_files_find(const int *pids, unsigned npids, bool self, const char *command,
			const char *const *extra, unsigned nextra, struct kp_probe_files *out)
{
	char path[PATH_MAX];
	unsigned i;
	int err = 0;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < nextra; i++) {
		err = extra[i] ? consider(out, extra[i]) : 0;
		if (err < 0)
			goto nomem;
		if (err == 0 && extra[i]) {
			struct stat st;

			/* a duplicate of one already kept is fine; anything else is a mistake */
			if (kp_stat_path(extra[i], &st) == 0 && out->n) {
				size_t k;

				for (k = 0; k < out->n; k++)
					if (((struct file_id *)out->ids)[k].dev == st.st_dev &&
					    ((struct file_id *)out->ids)[k].ino == st.st_ino)
						break;
				if (k < out->n)
					continue;
			}
			kp_probe_files_free(out);
			return kp_fail(KPERF_ERR_INVALID_ARG, -EINVAL,
				       "%s holds no kperf USDT probes (the mstx markers of "
				       "libkperf-bpf): give a libkperf-bpf.so or a program "
				       "linked with libkperf-bpf.a",
				       extra[i]);
		}
	}
	for (i = 0; i < npids; i++) {
		if (pids[i] == getpid())
			self = true;
		else if (from_process(out, pids[i]) < 0)
			goto nomem;
	}
	if (self && kp_mstx_self_path(path, sizeof(path)) == 0 && consider(out, path) < 0)
		goto nomem;
	if (command && for_command(out, command))
		goto nomem;
	return 0;
nomem:
	kp_probe_files_free(out);
	return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
}

int kp_probe_files_every(const char *const *extra, unsigned nextra, struct kp_probe_files *out,
			 int **pids, unsigned *npids)
{
	size_t cap = 0;
	struct dirent *de;
	unsigned n = 0;
	int *p = NULL, err;
	DIR *d;

	*pids = NULL;
	*npids = 0;
	/* the extra files first: one that holds no probes is refused there */
	err = kp_probe_files_find(NULL, 0, false, "", extra, nextra, out);
	if (err)
		return err;
	d = opendir("/proc");
	if (!d) {
		err = -errno;
		kp_probe_files_free(out);
		return kp_fail(UNKNOWN_ERROR, err, "cannot list the processes in /proc: %s",
			       strerror(-err));
	}
	while ((de = readdir(d))) {
		int pid;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = atoi(de->d_name);
		if (kp_grow((void **)&p, &cap, n + 1, sizeof(*p)) || from_process(out, pid) < 0) {
			closedir(d);
			free(p);
			kp_probe_files_free(out);
			return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
		}
		p[n++] = pid;
	}
	closedir(d);
	*pids = p;
	*npids = n;
	return 0;
}

bool kp_probe_file_mapped(const struct kp_probe_files *f, size_t i, int pid)
{
	const struct file_id *id = &((const struct file_id *)f->ids)[i];
	char path[64], *text, *line, *save = NULL;
	bool found = false;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	if (kp_read_file(path, &text, NULL))
		return false; /* gone */
	/* "start-end perms offset major:minor inode path" */
	for (line = strtok_r(text, "\n", &save); line && !found;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned maj, min;
		unsigned long long ino;

		if (sscanf(line, "%*s %*s %*s %x:%x %llu", &maj, &min, &ino) == 3)
			found = ino == (unsigned long long)id->ino && maj == major(id->dev) &&
				min == minor(id->dev);
	}
	free(text);
	return found;
}

void kp_probe_files_free(struct kp_probe_files *f)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		free(f->paths[i]);
	free(f->paths);
	free(f->ids);
	free(f->without);
	memset(f, 0, sizeof(*f));
}
