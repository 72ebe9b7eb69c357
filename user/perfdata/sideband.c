/*
 * sideband.c - the records perf needs besides the samples: PERF_RECORD_COMM to name each
 * thread, PERF_RECORD_MMAP2 for each executable mapping a sample's stack touches, and the
 * kernel's PERF_RECORD_MMAP, so that perf report and perf script resolve the addresses.
 *
 * The mappings are derived from the samples themselves, not from /proc/PID/maps, because a
 * PmuWriteData usually runs after the process has exited: each resolved frame names its file
 * (Symbol.module) and its address both at run time (addr) and in the file (codeMapAddr); the
 * difference is where the file was loaded. The file's executable PT_LOAD segments then give
 * the exact mappings the kernel made (start, length, file offset), the same ones perf record
 * would have written. Only the file has to be there when PmuWriteData runs - perf needs it to
 * read the symbols anyway; the build-id table (features.c) tells perf which file it was.
 * The kernel map spans _text.._etext of /proc/kallsyms with its build-id from
 * /sys/kernel/notes; [vdso] is described from this process's own vdso (the same kernel maps
 * the same image into every process); JIT code named by /tmp/perf-PID.map gets an anonymous
 * mapping, which perf resolves through that same perf map file. Only a frame without a file
 * (not resolved) falls back to /proc/PID/maps, which works while the process lives.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <elfutils/libdwelf.h>

#include "kperf/pcerrc.h"
#include "perfdata.h"
#include "pmu/pmu.h"
#include "sym/sym.h"

#define KERNEL_NAME "[kernel.kallsyms]"
#define KEY_MAX (PATH_MAX + 64)

bool kp_pf_kernel_addr(uint64_t addr)
{
	return addr >= KP_SYM_KERNEL_START && addr < KP_SYM_CONTEXT_MAX;
}

static uint64_t page_mask(void)
{
	return ~((uint64_t)sysconf(_SC_PAGESIZE) - 1);
}

/* ---- files ---- */

/* the executable PT_LOADs as the kernel maps them (whole pages), and the build-id */
static int read_elf(Elf *elf, struct kp_pf_module *m)
{
	uint64_t mask = page_mask();
	const void *id = NULL;
	size_t n, i;
	ssize_t idlen;

	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &n))
		return -ENOEXEC;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;
		struct kp_pf_seg *seg;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		if ((ph.p_vaddr ^ ph.p_offset) & ~mask)
			continue; /* not mappable page by page: nothing the kernel would map */
		seg = realloc(m->segs, (size_t)(m->nsegs + 1) * sizeof(*seg));
		if (!seg)
			return -ENOMEM;
		m->segs = seg;
		seg = &m->segs[m->nsegs++];
		seg->vaddr = ph.p_vaddr & mask;
		seg->offset = ph.p_offset & mask;
		seg->memsz = ((ph.p_vaddr + ph.p_memsz + ~mask) & mask) - seg->vaddr;
	}
	idlen = dwelf_elf_gnu_build_id(elf, &id);
	if (idlen > 0 && (size_t)idlen <= sizeof(m->build_id)) {
		memcpy(m->build_id, id, (size_t)idlen);
		m->build_id_len = (size_t)idlen;
	}
	return m->nsegs ? 0 : -ENOEXEC;
}

static void load_module(struct kp_pf_module *m, const char *mnt)
{
	char full[PATH_MAX];
	struct stat st;
	int fd = -1, err;
	Elf *elf;

	/* a process in another mount namespace names files of its own root */
	if (mnt && *mnt && snprintf(full, sizeof(full), "%s%s", mnt, m->path) < (int)sizeof(full))
		fd = open(full, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fd = open(m->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		kp_warn(KPERF_WARN_SYM_INCOMPLETE,
			"perf will not resolve the addresses in %s: cannot open it: %s", m->path,
			strerror(errno));
		return;
	}
	if (fstat(fd, &st) == 0) {
		m->maj = major(st.st_dev);
		m->min = minor(st.st_dev);
		m->ino = st.st_ino;
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	err = read_elf(elf, m);
	elf_end(elf);
	close(fd);
	m->usable = !err;
	if (err)
		kp_warn(KPERF_WARN_SYM_INCOMPLETE,
			"perf will not resolve the addresses in %s: it is not an ELF file with "
			"executable segments",
			m->path);
}

static int module_get(struct kp_pf_side *s, const char *path, const char *mnt,
		      struct kp_pf_module **out)
{
	struct kp_map_slot *slot = kp_map_slot(&s->modules, path, NULL);
	struct kp_pf_module *m;

	if (!slot)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	if (slot->val) {
		*out = slot->val;
		return 0;
	}
	m = calloc(1, sizeof(*m));
	if (m)
		m->path = strdup(path);
	if (!m || !m->path) {
		free(m);
		slot->val = NULL;
		slot->key = NULL; /* nothing else was inserted since: the slot is free again */
		s->modules.len--;
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	}
	slot->key = m->path; /* the caller's string lives only as long as its PmuData */
	slot->val = m;
	load_module(m, mnt);
	*out = m;
	return 0;
}

/* the GNU build-id note in the notes of a loaded image */
static size_t note_build_id(const unsigned char *p, size_t len, uint8_t *out, size_t cap)
{
	size_t off = 0;

	while (off + 12 <= len) {
		uint32_t nsz, dsz, type;
		size_t name, desc, next;

		memcpy(&nsz, p + off, 4);
		memcpy(&dsz, p + off + 4, 4);
		memcpy(&type, p + off + 8, 4);
		name = off + 12;
		desc = name + ((nsz + 3) & ~3U);
		next = desc + ((dsz + 3) & ~3U);
		if (next > len || next <= off)
			break;
		if (type == NT_GNU_BUILD_ID && nsz == 4 && !memcmp(p + name, "GNU", 4) && dsz &&
		    dsz <= cap) {
			memcpy(out, p + desc, dsz);
			return dsz;
		}
		off = next;
	}
	return 0;
}

static void kernel_look(struct kp_pf_side *s)
{
	char line[512], name[256], path[PATH_MAX], *notes;
	unsigned long long a;
	size_t len;
	char t;
	FILE *fp;

	s->kernel_looked = true;
	s->kernel.kernel = true;
	s->kernel.path = strdup(KERNEL_NAME);
	fp = fopen("/proc/kallsyms", "re");
	while (fp && fgets(line, sizeof(line), fp) && !(s->ktext && s->ketext)) {
		if (sscanf(line, "%llx %c %255s", &a, &t, name) != 3)
			continue;
		if (!strcmp(name, "_text"))
			s->ktext = a;
		else if (!strcmp(name, "_etext"))
			s->ketext = a;
	}
	if (fp)
		fclose(fp);
	snprintf(path, sizeof(path), "%s/kernel/notes", kp_sysfs());
	if (kp_read_file(path, &notes, &len) == 0) {
		s->kernel.build_id_len = note_build_id((unsigned char *)notes, len,
						       s->kernel.build_id,
						       sizeof(s->kernel.build_id));
		free(notes);
	}
	s->kernel.usable = s->kernel.path && s->ktext && s->ketext > s->ktext;
	if (!s->kernel.usable)
		kp_warn(KPERF_WARN_SYM_INCOMPLETE,
			"perf will not resolve kernel addresses: /proc/kallsyms gives no address "
			"for _text and _etext (kernel.kptr_restrict?)");
}

static void vdso_look(struct kp_pf_side *s)
{
	const unsigned char *img = (const void *)getauxval(AT_SYSINFO_EHDR);
	const GElf_Ehdr *eh = (const void *)img;
	size_t size;
	Elf *elf;

	s->vdso_looked = true;
	s->vdso.path = strdup("[vdso]");
	if (!img || !s->vdso.path || memcmp(img, ELFMAG, SELFMAG) || img[EI_CLASS] != ELFCLASS64)
		return;
	/* the section headers come last in the image */
	size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	if (size > (1U << 20))
		return;
	elf_version(EV_CURRENT);
	elf = elf_memory((char *)img, size);
	s->vdso.usable = read_elf(elf, &s->vdso) == 0;
	elf_end(elf);
}

/* ---- records ---- */

struct batch {
	struct kp_pf *f;
	struct kp_pf_buf *out;
	struct kp_map *added;
	const struct PmuData *d; /* the record that needs what is being added */
	uint64_t id;
	uint64_t time; /* of the batch's earliest sample: perf sorts by time, and a mapping must
			* come before every sample that needs it */
};

/* Is <key> in the file or in this batch? If not, it is added to the batch (true: write it). */
static int claim(struct batch *b, const char *key, bool *fresh)
{
	struct kp_map_slot *slot;
	char *copy;

	*fresh = false;
	if (kp_map_get(&b->f->side.written, key) || kp_map_get(b->added, key))
		return 0;
	copy = strdup(key);
	slot = copy ? kp_map_slot(b->added, copy, NULL) : NULL;
	if (!slot) {
		free(copy);
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	}
	slot->val = (void *)1;
	*fresh = true;
	return 0;
}

static void set_size(struct kp_pf_buf *out, size_t at)
{
	if (!out->oom)
		((struct perf_event_header *)(out->p + at))->size = (uint16_t)(out->len - at);
}

static void put_comm(struct batch *b)
{
	const struct PmuData *d = b->d;
	size_t at = b->out->len;
	struct {
		struct perf_event_header h;
		uint32_t pid, tid;
	} r = { { PERF_RECORD_COMM, 0, 0 }, (uint32_t)d->pid, (uint32_t)d->tid };

	kp_pf_buf_put(b->out, &r, sizeof(r));
	kp_pf_buf_put_str(b->out, d->comm ? d->comm : "", 8);
	kp_pf_put_sample_id(b->f, b->out, d->pid, d->tid, b->time, d->cpu, b->id);
	set_size(b->out, at);
}

static void put_mmap2(struct batch *b, uint64_t start, uint64_t len, uint64_t pgoff,
		      const struct kp_pf_module *m, const char *name)
{
	const struct PmuData *d = b->d;
	size_t at = b->out->len;
	struct {
		struct perf_event_header h;
		uint32_t pid, tid;
		uint64_t start, len, pgoff;
		uint32_t maj, min;
		uint64_t ino, ino_generation;
		uint32_t prot, flags;
	} r = { .h = { PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, 0 },
		.pid = (uint32_t)d->pid,
		.tid = (uint32_t)d->pid,
		.start = start,
		.len = len,
		.pgoff = pgoff,
		.maj = m ? m->maj : 0,
		.min = m ? m->min : 0,
		.ino = m ? m->ino : 0,
		.prot = PROT_READ | PROT_EXEC,
		.flags = MAP_PRIVATE };

	kp_pf_buf_put(b->out, &r, sizeof(r));
	kp_pf_buf_put_str(b->out, name, 8);
	kp_pf_put_sample_id(b->f, b->out, d->pid, d->pid, b->time, d->cpu, b->id);
	set_size(b->out, at);
}

static int kernel_map(struct batch *b)
{
	struct kp_pf_side *s = &b->f->side;
	size_t at = b->out->len;
	bool fresh;
	struct {
		struct perf_event_header h;
		uint32_t pid, tid;
		uint64_t start, len, pgoff;
	} r;
	int err;

	if (!s->kernel_looked)
		kernel_look(s);
	if (!s->kernel.usable)
		return 0;
	err = claim(b, "k", &fresh);
	if (err || !fresh)
		return err;
	/* perf's own kernel map: pid -1 (the host), named after its reference symbol */
	r = (typeof(r)){ .h = { PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL, 0 },
			 .pid = (uint32_t)-1,
			 .start = s->ktext,
			 .len = s->ketext - s->ktext,
			 .pgoff = s->ktext };
	kp_pf_buf_put(b->out, &r, sizeof(r));
	kp_pf_buf_put_str(b->out, KERNEL_NAME "_text", 8);
	kp_pf_put_sample_id(b->f, b->out, -1, 0, b->time, b->d->cpu, b->id);
	set_size(b->out, at);
	s->kernel.in_file = true;
	return 0;
}

/* JIT code named by a perf map: an anonymous mapping around the symbol */
static bool is_perf_map(const char *path)
{
	size_t n = strlen(path);

	return !strncmp(path, "/tmp/perf-", 10) && n > 4 && !strcmp(path + n - 4, ".map");
}

static int jit_map(struct batch *b, const struct Symbol *sym)
{
	uint64_t mask = page_mask(), start = (sym->addr - sym->offset) & mask, end;
	char key[KEY_MAX];
	bool fresh;
	int err;

	end = sym->codeMapEndAddr > sym->addr ? sym->codeMapEndAddr : sym->addr + 1;
	end = (end + ~mask) & mask;
	snprintf(key, sizeof(key), "j %d %llx %llx", b->d->pid, (unsigned long long)start,
		 (unsigned long long)end);
	err = claim(b, key, &fresh);
	if (!err && fresh)
		put_mmap2(b, start, end - start, 0, NULL, "//anon");
	return err;
}

static int user_map(struct batch *b, const struct Symbol *sym)
{
	struct kp_pf_module *m = NULL;
	char key[KEY_MAX];
	uint64_t bias;
	bool fresh;
	int err, i;

	if (!strcmp(sym->module, "[vdso]")) {
		if (!b->f->side.vdso_looked)
			vdso_look(&b->f->side);
		m = &b->f->side.vdso;
	} else if (sym->module[0] != '/') {
		return 0; /* [heap], [anon], //anon: no file to read symbols from */
	} else if (is_perf_map(sym->module)) {
		return jit_map(b, sym);
	} else {
		err = module_get(&b->f->side, sym->module, sym->mntPoint, &m);
		if (err)
			return err;
	}
	if (!m->usable || sym->codeMapAddr > sym->addr)
		return 0;
	bias = sym->addr - sym->codeMapAddr;
	if (bias & ~page_mask())
		return 0; /* not a load address: codeMapAddr is not an address in this file */
	snprintf(key, sizeof(key), "m %d %llx %s", b->d->pid, (unsigned long long)bias, m->path);
	err = claim(b, key, &fresh);
	if (err || !fresh)
		return err;
	for (i = 0; i < m->nsegs; i++)
		put_mmap2(b, bias + m->segs[i].vaddr, m->segs[i].memsz, m->segs[i].offset, m,
			  m->path);
	m->in_file = true;
	return 0;
}

/*
 * A frame the resolver left without a file (RESOLVE_DELAY_*, or resolution stopped): only a
 * process that is still alive can tell what was mapped there, through its maps, read once
 * per PmuWriteData call.
 */
static int live_maps(struct batch *b)
{
	char key[KEY_MAX], line[PATH_MAX + 128], maps[64], root[64];
	bool fresh;
	FILE *fp;
	int err;

	snprintf(key, sizeof(key), "p %d", b->d->pid);
	err = claim(b, key, &fresh);
	if (err || !fresh || b->d->pid <= 0)
		return err;
	snprintf(maps, sizeof(maps), "/proc/%d/maps", b->d->pid);
	snprintf(root, sizeof(root), "/proc/%d/root", b->d->pid);
	fp = fopen(maps, "re");
	while (!err && fp && fgets(line, sizeof(line), fp)) {
		unsigned long long start, end, off, ino;
		unsigned maj, min;
		struct kp_pf_module *m = NULL;
		char perms[8], *name;
		int at = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &off,
			   &maj, &min, &ino, &at) < 7 ||
		    !at || perms[2] != 'x')
			continue;
		name = line + at;
		name[strcspn(name, "\n")] = '\0';
		if (!strcmp(name, "[vdso]")) {
			if (!b->f->side.vdso_looked)
				vdso_look(&b->f->side);
			m = &b->f->side.vdso;
		} else if (name[0] == '/') {
			err = module_get(&b->f->side, name, root, &m);
		}
		if (err || !m)
			continue;
		snprintf(key, sizeof(key), "M %d %llx %s", b->d->pid, start, name);
		err = claim(b, key, &fresh);
		if (err || !fresh)
			continue;
		put_mmap2(b, start, end - start, off, m, name);
		m->in_file = true;
	}
	if (fp)
		fclose(fp);
	return err;
}

/*
 * A record read under RESOLVE_DELAY_* and not resolved yet has no stack, only its callchain;
 * the array holds its process's symbols in the resolver (what the process mapped, recorded
 * while it ran), so each address still finds its file and load address, after the exit too.
 */
static int chain_maps(struct batch *b, const struct PmuData *data, size_t i)
{
	const struct kp_data_chain *c = kp_data_chain_of(data, i);
	unsigned k;
	int err = 0;

	for (k = 0; c && c->pending && k < c->n && !err; k++) {
		struct Symbol *sym;

		if (!c->ips[k] || c->ips[k] >= KP_SYM_CONTEXT_MAX)
			continue;
		if (kp_pf_kernel_addr(c->ips[k])) {
			err = kernel_map(b);
			continue;
		}
		if (kp_sym_resolve_addr(b->d->pid, c->ips[k], 0, &sym)) {
			kp_clear_error(); /* an address without a file: perf shows it as it is */
			continue;
		}
		if (sym->module && sym->module[0])
			err = user_map(b, sym);
	}
	return err;
}

int kp_pf_side_build(struct kp_pf *f, const struct PmuData *data, const uint64_t *ids, int n,
		     struct kp_pf_buf *out, struct kp_map *added)
{
	struct batch b = { .f = f, .out = out, .added = added };
	char key[KEY_MAX];
	int i, err = 0;

	for (i = 0; i < n; i++)
		if (!i || (uint64_t)data[i].ts < b.time)
			b.time = (uint64_t)data[i].ts;
	for (i = 0; i < n && !err; i++) {
		const struct Stack *st;
		bool fresh;

		b.d = &data[i];
		b.id = ids[i];
		/* pid 0 is the idle task: perf names it swapper itself */
		if (b.d->tid > 0) {
			snprintf(key, sizeof(key), "c %d %d %s", b.d->pid, b.d->tid,
				 b.d->comm ? b.d->comm : "");
			err = claim(&b, key, &fresh);
			if (!err && fresh)
				put_comm(&b);
		}
		if (!b.d->stack)
			err = chain_maps(&b, data, (size_t)i);
		for (st = b.d->stack; st && !err; st = st->next) {
			const struct Symbol *sym = st->symbol;

			if (!sym)
				continue;
			if (kp_pf_kernel_addr(sym->addr))
				err = kernel_map(&b);
			else if (sym->module && sym->module[0])
				err = user_map(&b, sym);
			else
				err = live_maps(&b);
		}
	}
	return err;
}

void kp_pf_side_commit(struct kp_pf *f, struct kp_map *added)
{
	size_t i;

	for (i = 0; i < added->cap; i++) {
		struct kp_map_slot *slot;
		bool created = false;

		if (!added->slots[i].key)
			continue;
		if (((const char *)added->slots[i].key)[0] == 'p') {
			/* maps were read for this call; a later call reads them again */
			free((void *)added->slots[i].key);
			continue;
		}
		slot = kp_map_slot(&f->side.written, added->slots[i].key, &created);
		if (slot)
			slot->val = (void *)1;
		if (!created)
			free((void *)added->slots[i].key);
		/* out of memory: the record is in the file, so at worst it is written again */
	}
	kp_map_free(added);
}

void kp_pf_side_abort(struct kp_map *added)
{
	size_t i;

	for (i = 0; i < added->cap; i++)
		free((void *)added->slots[i].key);
	kp_map_free(added);
}

static void module_free(struct kp_pf_module *m)
{
	free(m->path);
	free(m->segs);
}

void kp_pf_side_free(struct kp_pf_side *s)
{
	size_t i;

	for (i = 0; i < s->modules.cap; i++) {
		if (s->modules.slots[i].val) {
			module_free(s->modules.slots[i].val);
			free(s->modules.slots[i].val);
		}
	}
	kp_map_free(&s->modules);
	for (i = 0; i < s->written.cap; i++)
		free((void *)s->written.slots[i].key);
	kp_map_free(&s->written);
	module_free(&s->kernel);
	module_free(&s->vdso);
}

/* for features.c: every module with an MMAP in the file, kernel and vdso included */
void kp_pf_side_each(struct kp_pf_side *s, void (*fn)(const struct kp_pf_module *m, void *ctx),
		     void *ctx)
{
	size_t i;

	if (s->kernel.in_file)
		fn(&s->kernel, ctx);
	if (s->vdso.in_file)
		fn(&s->vdso, ctx);
	for (i = 0; i < s->modules.cap; i++) {
		const struct kp_pf_module *m = s->modules.slots[i].val;

		if (m && m->in_file)
			fn(m, ctx);
	}
}
