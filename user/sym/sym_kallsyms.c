/*
 * sym_kallsyms.c - kernel symbols from /proc/kallsyms, read once and sorted.
 *
 * kallsyms has no sizes: a symbol ends where the next one starts, and the last one of the
 * core kernel at _etext (of a module, at its end from /proc/modules). Only text symbols are
 * kept. Modules and BPF programs come and go, so an address outside the core kernel that is
 * not found makes us read the file again, at most once a second; a reload that changes
 * nothing is thrown away.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "sym.h"

#define KERNEL_MODULE "[kernel.kallsyms]"
#define RELOAD_MIN_MS 1000
#define GUESSED_SIZE 4096 /* the last symbol of a module whose size is unknown */

struct ktable {
	char *raw; /* the file as read and cut into names */
	size_t raw_len;
	struct sym_ksym *syms;
	size_t n;
	uint64_t stext, etext; /* the core kernel's text */
};

struct kmod {
	const char *name; /* "[name]", interned */
	uint64_t start, end;
};

static struct ktable *table;
static uint64_t loaded_ms;
static unsigned loads;
static const char *kallsyms_path_override;
static const char *modules_path_override;

void sym_kallsyms_set_path(const char *kallsyms, const char *modules)
{
	kallsyms_path_override = kallsyms;
	modules_path_override = modules;
}

static const char *kallsyms_path(void)
{
	return kallsyms_path_override ? kallsyms_path_override : "/proc/kallsyms";
}

static void ktable_free(struct ktable *t)
{
	if (!t)
		return;
	free(t->raw);
	free(t->syms);
	free(t);
}

static int rank(char type, const char *name)
{
	int r = 0;

	/* prefer global over weak over local, then fewer leading underscores */
	if (type == 'T')
		r += 200;
	else if (type == 'W' || type == 'w')
		r += 100;
	while (*name == '_' && r > -50) {
		r--;
		name++;
	}
	return r;
}

static int cmp_ksym(const void *a, const void *b)
{
	const struct sym_ksym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	/* keep the best name first among aliases (rank stored in end for the sort) */
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* /proc/modules: "name size refs deps state addr"; absent on kernels without modules */
static int read_modules(struct kmod **out, size_t *nout)
{
	const char *path = modules_path_override ? modules_path_override : "/proc/modules";
	struct kmod *mods = NULL;
	size_t n = 0, cap = 0;
	char line[4096];
	FILE *f;

	*out = NULL;
	*nout = 0;
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char name[256], bracket[260];
		unsigned long size;
		unsigned long long addr;

		if (sscanf(line, "%255s %lu %*s %*s %*s %llx", name, &size, &addr) != 3 || !addr)
			continue;
		if (kp_grow((void **)&mods, &cap, n + 1, sizeof(*mods))) {
			fclose(f);
			free(mods);
			return -ENOMEM;
		}
		snprintf(bracket, sizeof(bracket), "[%s]", name);
		mods[n].name = sym_intern(bracket);
		if (!mods[n].name) {
			fclose(f);
			free(mods);
			return -ENOMEM;
		}
		mods[n].start = addr;
		mods[n].end = addr + size;
		n++;
	}
	fclose(f);
	*out = mods;
	*nout = n;
	return 0;
}

static int parse(char *raw, struct ktable *t)
{
	struct sym_ksym *syms = NULL;
	size_t n = 0, cap = 0, nonzero = 0, lines = 0, i, j;
	char *p = raw, *nl;
	struct kmod *mods = NULL;
	size_t nmods = 0;
	int err;

	for (; *p; p = nl ? nl + 1 : p + strlen(p)) {
		char *end, type, *name, *tab;
		const char *mod;
		unsigned long long addr;

		nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		addr = strtoull(p, &end, 16);
		if (end == p || *end != ' ' || !end[1] || end[2] != ' ')
			continue;
		lines++;
		if (addr)
			nonzero++;
		type = end[1];
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		name = end + 3;
		tab = strchr(name, '\t');
		if (tab) {
			*tab++ = '\0';
			mod = sym_intern(tab);
		} else {
			mod = sym_intern(KERNEL_MODULE);
		}
		if (!mod) {
			free(syms);
			return -ENOMEM;
		}
		if (strcmp(name, "_stext") == 0 && !strcmp(mod, KERNEL_MODULE))
			t->stext = addr;
		if (strcmp(name, "_etext") == 0 && !strcmp(mod, KERNEL_MODULE))
			t->etext = addr;
		if (!addr)
			continue;
		if (kp_grow((void **)&syms, &cap, n + 1, sizeof(*syms))) {
			free(syms);
			return -ENOMEM;
		}
		syms[n].start = addr;
		syms[n].end = (uint64_t)(rank(type, name) + 1000); /* sort key, fixed below */
		syms[n].name = name;
		syms[n].module = mod;
		n++;
	}
	if (lines == 0) {
		free(syms);
		return kp_fail(LIBSYM_ERR_KALLSYMS_INVALID, -EINVAL,
			       "%s holds no symbols: is it a kallsyms file?", kallsyms_path());
	}
	if (nonzero == 0) {
		long restrict_level = -1;

		free(syms);
		kp_read_long("/proc/sys/kernel/kptr_restrict", &restrict_level);
		return kp_fail(
			LIBSYM_ERR_KALLSYMS_INVALID, -EPERM,
			"every address in %s is 0: the kernel hides them (kernel.kptr_restrict=%ld); "
			"run as root with CAP_SYSLOG, or set `sysctl kernel.kptr_restrict=0`",
			kallsyms_path(), restrict_level);
	}
	qsort(syms, n, sizeof(*syms), cmp_ksym);
	/* drop aliases: the best-ranked one of each address came first */
	for (i = 0, j = 0; i < n; i++)
		if (j == 0 || syms[j - 1].start != syms[i].start)
			syms[j++] = syms[i];
	n = j;
	err = read_modules(&mods, &nmods);
	if (err) {
		free(syms);
		return err;
	}
	for (i = 0; i < n; i++) {
		uint64_t end = i + 1 < n ? syms[i + 1].start : syms[i].start + GUESSED_SIZE;
		bool core = syms[i].module[0] == '[' && !strcmp(syms[i].module, KERNEL_MODULE);

		if (core && t->etext && syms[i].start < t->etext && end > t->etext)
			end = t->etext;
		if (!core) {
			size_t k;

			for (k = 0; k < nmods; k++) {
				if (syms[i].start >= mods[k].start && syms[i].start < mods[k].end) {
					/* the module's last symbol runs to the module's end */
					if (i + 1 == n || end > mods[k].end ||
					    syms[i + 1].module != syms[i].module)
						end = mods[k].end;
					break;
				}
			}
			/* the next symbol is of another module: the size is unknown */
			if (k == nmods && (i + 1 == n || syms[i + 1].module != syms[i].module) &&
			    end - syms[i].start > GUESSED_SIZE)
				end = syms[i].start + GUESSED_SIZE;
		}
		syms[i].end = end;
	}
	free(mods);
	t->syms = syms;
	t->n = n;
	return 0;
}

static int load(struct ktable **out)
{
	struct ktable *t = calloc(1, sizeof(*t));
	char *raw = NULL;
	size_t len = 0;
	int err;

	if (!t)
		return -ENOMEM;
	err = kp_read_file(kallsyms_path(), &raw, &len);
	if (err) {
		free(t);
		return kp_fail(LIBSYM_ERR_KALLSYMS_INVALID, err, "cannot read %s: %s",
			       kallsyms_path(), strerror(-err));
	}
	t->raw = raw;
	t->raw_len = len;
	err = parse(raw, t);
	if (err) {
		ktable_free(t);
		return err;
	}
	loads++;
	*out = t;
	return 0;
}

int sym_kallsyms_load(void)
{
	int err;

	if (table)
		return 0;
	err = load(&table);
	if (!err)
		loaded_ms = sym_now_ms();
	return err;
}

static const struct sym_ksym *find(const struct ktable *t, uint64_t addr)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	if (addr < t->syms[lo - 1].end)
		return &t->syms[lo - 1];
	return NULL;
}

static bool same_symbols(const struct ktable *a, const struct ktable *b)
{
	size_t i;

	if (a->n != b->n)
		return false;
	for (i = 0; i < a->n; i++)
		if (a->syms[i].start != b->syms[i].start || a->syms[i].end != b->syms[i].end ||
		    a->syms[i].module != b->syms[i].module ||
		    strcmp(a->syms[i].name, b->syms[i].name))
			return false;
	return true;
}

const struct sym_ksym *sym_kallsyms_find(uint64_t addr, bool may_reload, bool *changed)
{
	const struct sym_ksym *s;
	struct ktable *t;
	uint64_t now;

	if (changed)
		*changed = false;
	if (!table)
		return NULL;
	s = find(table, addr);
	if (s || !may_reload)
		return s;
	if (table->stext && table->etext && addr >= table->stext && addr < table->etext)
		return NULL; /* inside the core kernel: reading again cannot help */
	now = sym_now_ms();
	if (now - loaded_ms < RELOAD_MIN_MS)
		return NULL;
	loaded_ms = now;
	if (load(&t))
		return NULL; /* keep the old table; the failure is recorded for the caller */
	if (same_symbols(t, table)) {
		ktable_free(t);
		return NULL;
	}
	/* callers copy names out (interned), so the old table can go */
	ktable_free(table);
	table = t;
	if (changed)
		*changed = true;
	return find(table, addr);
}

void sym_kallsyms_free(void)
{
	ktable_free(table);
	table = NULL;
	loaded_ms = 0;
}

unsigned sym_kallsyms_loads(void)
{
	return loads;
}
