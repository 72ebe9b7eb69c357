/*
 * plan.c - what to probe: the caller's (module, symbol) pairs resolved to files and file
 * offsets, and the way back from a hit's (process, address) to the function and role probed
 * there.
 *
 * A module given as a path is probed in every traced process (a process that maps it later,
 * through dlopen, gets the probes then). A bare library name is looked for in each traced
 * process's mappings, so two processes may resolve it to two different files.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "utrace.h"

#define WHY_LEN 256
#define REFRESH_NS 20000000ULL /* read a process's maps again at most every 20 ms */

/* the symbols asked for in one module name */
struct request {
	const char *module;
	const char **names; /* distinct */
	unsigned nnames;
};

/* a growing "; "-separated list of what could not be resolved */
struct failures {
	char *text;
	size_t len, cap;
};

static void fail_add(struct failures *f, const char *fmt, ...) KP_PRINTF(2, 3);

static void fail_add(struct failures *f, const char *fmt, ...)
{
	char buf[1024];
	size_t n;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	n = strlen(buf);
	if (kp_grow((void **)&f->text, &f->cap, f->len + n + 3, 1))
		return; /* the report is shorter, nothing else is lost */
	if (f->len) {
		memcpy(f->text + f->len, "; ", 2);
		f->len += 2;
	}
	memcpy(f->text + f->len, buf, n + 1);
	f->len += n;
}

/* ---- requests ---- */

static int add_name(const char ***names, unsigned *n, const char *name)
{
	const char **nn;
	unsigned j;

	for (j = 0; j < *n; j++)
		if (!strcmp((*names)[j], name))
			return 0; /* asked twice: traced once */
	nn = realloc(*names, (*n + 1) * sizeof(*nn));
	if (!nn)
		return -ENOMEM;
	*names = nn;
	nn[(*n)++] = name;
	return 0;
}

static int add_request(struct request **reqs, size_t *nreqs, size_t *cap, const char *module,
		       const char *name)
{
	struct request *r = NULL;
	size_t i;

	for (i = 0; i < *nreqs && !r; i++)
		if (!strcmp((*reqs)[i].module, module))
			r = &(*reqs)[i];
	if (!r) {
		if (kp_grow((void **)reqs, cap, *nreqs + 1, sizeof(**reqs)))
			return -ENOMEM;
		r = &(*reqs)[(*nreqs)++];
		memset(r, 0, sizeof(*r));
		r->module = module;
	}
	return add_name(&r->names, &r->nnames, name);
}

static void free_requests(struct request *reqs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(reqs[i].names);
	free(reqs);
}

/* ---- modules: one per file, whatever names led to it ---- */

struct builder {
	struct kp_ut_plan *p;
	size_t mcap;
	struct request *modnames; /* per module: the union of the names asked for in it */
	struct failures fails;
};

static int add_tgid(struct kp_ut_module *m, int tgid)
{
	int *nt;
	unsigned i;

	for (i = 0; i < m->ntgids; i++)
		if (m->tgids[i] == tgid)
			return 0;
	nt = realloc(m->tgids, (m->ntgids + 1) * sizeof(*nt));
	if (!nt)
		return -ENOMEM;
	m->tgids = nt;
	nt[m->ntgids++] = tgid;
	return 0;
}

/* the module of a file (tgid 0: every target), with the names of <r> to look for in it */
static int add_module(struct builder *b, const struct request *r, const char *path,
		      const char *open_path, dev_t dev, ino_t ino, int tgid)
{
	struct kp_ut_plan *p = b->p;
	struct kp_ut_module *m = NULL;
	unsigned i;
	int err = 0;

	for (i = 0; i < p->nmodules && !m; i++)
		if (p->modules[i].dev == dev && p->modules[i].ino == ino)
			m = &p->modules[i];
	if (!m) {
		if (kp_grow((void **)&p->modules, &b->mcap, p->nmodules + 1, sizeof(*p->modules)))
			return -ENOMEM;
		struct request *mn = realloc(b->modnames, b->mcap * sizeof(*mn));

		if (!mn)
			return -ENOMEM;
		b->modnames = mn;
		i = p->nmodules;
		m = &p->modules[i];
		memset(m, 0, sizeof(*m));
		memset(&b->modnames[i], 0, sizeof(b->modnames[i]));
		m->path = strdup(path);
		m->open_path = strdup(open_path);
		m->dev = dev;
		m->ino = ino;
		p->nmodules++;
		if (!m->path || !m->open_path)
			return -ENOMEM;
	} else {
		i = (unsigned)(m - p->modules);
	}
	if (!tgid)
		m->all_targets = true;
	else
		err = add_tgid(m, tgid);
	for (unsigned j = 0; j < r->nnames && !err; j++)
		err = add_name(&b->modnames[i].names, &b->modnames[i].nnames, r->names[j]);
	return err;
}

/* "libc.so" names /usr/lib/x86_64-linux-gnu/libc.so.6; "libwl.so" names .../libwl.so */
static bool name_matches(const char *path, const char *name)
{
	const char *base = strrchr(path, '/');
	size_t n = strlen(name);

	base = base ? base + 1 : path;
	return !strncmp(base, name, n) && (base[n] == '\0' || base[n] == '.');
}

/* a bare name: the file each traced process maps under it */
static int find_by_name(struct builder *b, const struct request *r)
{
	struct kp_ut_plan *p = b->p;
	bool found = false, reported = false;
	unsigned t;
	int err = 0;

	for (t = 0; t < p->ntgids && !err; t++) {
		struct kp_ut_map *maps, *hit = NULL;
		char open_path[PATH_MAX + 32];
		size_t n, i;

		if (kp_ut_maps_read(p->tgids[t], &maps, &n))
			continue; /* gone meanwhile: the pid check says so later */
		for (i = 0; i < n; i++) {
			if (!maps[i].exec || !maps[i].path ||
			    !name_matches(maps[i].path, r->module))
				continue;
			if (hit && (hit->dev != maps[i].dev || hit->ino != maps[i].ino)) {
				fail_add(&b->fails, "%s: ambiguous in pid %d, which maps %s and %s",
					 r->module, p->tgids[t], hit->path, maps[i].path);
				reported = true;
				hit = NULL;
				break;
			}
			hit = &maps[i];
		}
		if (hit) {
			snprintf(open_path, sizeof(open_path), "/proc/%d/root%s", p->tgids[t],
				 hit->path);
			err = add_module(b, r, hit->path, open_path, hit->dev, hit->ino,
					 p->tgids[t]);
			found = true;
		}
		kp_ut_maps_free(maps, n);
	}
	if (!err && !found && !reported)
		fail_add(&b->fails,
			 "%s: no such file, and no process of pidList maps a file of that name",
			 r->module);
	return err;
}

/* the file of a request given as a path, or the files found by name */
static int resolve_module(struct builder *b, const struct request *r)
{
	char real[PATH_MAX];
	struct stat st;

	if (!strchr(r->module, '/') && access(r->module, F_OK))
		return find_by_name(b, r);
	if (!realpath(r->module, real) || stat(real, &st)) {
		fail_add(&b->fails, "%s: cannot open it: %s", r->module, strerror(errno));
		return 0;
	}
	return add_module(b, r, real, real, st.st_dev, st.st_ino, 0);
}

/* ---- sites ---- */

struct pending {
	unsigned module;
	uint64_t off;
	const char *func;
	bool is_ret;
	unsigned seq;
};

static int cmp_pending(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;

	if (x->module != y->module)
		return x->module < y->module ? -1 : 1;
	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	if (x->is_ret != y->is_ret)
		return x->is_ret ? 1 : -1; /* an entry before a return at the same address */
	return (x->seq > y->seq) - (x->seq < y->seq);
}

static int add_pending(struct pending **v, size_t *n, size_t *cap, unsigned module, uint64_t off,
		       const char *func, bool is_ret)
{
	if (kp_grow((void **)v, cap, *n + 1, sizeof(**v)))
		return -ENOMEM;
	(*v)[*n] = (struct pending){ module, off, func, is_ret, (unsigned)*n };
	(*n)++;
	return 0;
}

/* one copy of each function name, owned by the plan */
static const char *own_name(struct kp_ut_plan *p, size_t *cap, const char *name)
{
	size_t i;

	for (i = 0; i < p->nnames; i++)
		if (!strcmp(p->names[i], name))
			return p->names[i];
	if (kp_grow((void **)&p->names, cap, p->nnames + 1, sizeof(*p->names)))
		return NULL;
	p->names[p->nnames] = strdup(name);
	return p->names[p->nnames] ? p->names[p->nnames++] : NULL;
}

static int build_sites(struct kp_ut_plan *p, struct pending *v, size_t n)
{
	size_t i, s;

	if (n)
		qsort(v, n, sizeof(*v), cmp_pending);
	p->sites = calloc(n ? n : 1, sizeof(*p->sites));
	if (!p->sites)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct kp_ut_site *site;
		struct kp_ut_role *r;
		unsigned k;

		s = p->nsites;
		if (!s || p->sites[s - 1].module != v[i].module || p->sites[s - 1].off != v[i].off)
			p->sites[p->nsites++] = (struct kp_ut_site){ v[i].module, v[i].off };
		site = &p->sites[p->nsites - 1];
		for (k = 0; k < site->nroles; k++)
			if (site->roles[k].func == v[i].func &&
			    site->roles[k].is_ret == v[i].is_ret)
				break;
		if (k < site->nroles)
			continue; /* the same function found twice in a module */
		r = realloc(site->roles, (site->nroles + 1) * sizeof(*r));
		if (!r)
			return -ENOMEM;
		site->roles = r;
		r[site->nroles++] = (struct kp_ut_role){ v[i].func, v[i].is_ret };
	}
	return 0;
}

/* scan each module for the names asked for in it */
static int scan_modules(struct builder *b, struct pending **v, size_t *nv)
{
	struct kp_ut_plan *p = b->p;
	size_t vcap = 0, ncap = 0;
	unsigned m, i, k;
	int err;

	for (m = 0; m < p->nmodules; m++) {
		const struct request *r = &b->modnames[m];
		struct kp_ut_func *f = calloc(r->nnames ? r->nnames : 1, sizeof(*f));
		char why[WHY_LEN], *missing = NULL;
		size_t mlen = 0, mcap = 0;

		if (!f)
			return -ENOMEM;
		err = kp_ut_elf_scan(p->modules[m].open_path, r->names, r->nnames, f, why,
				     sizeof(why));
		if (err == -ENOMEM) {
			free(f);
			return err;
		}
		if (err) {
			fail_add(&b->fails, "%s: %s", p->modules[m].path, why);
			free(f);
			continue;
		}
		for (i = 0; i < r->nnames && !err; i++) {
			const char *name;

			if (!f[i].found) {
				size_t len = strlen(r->names[i]);

				if (!kp_grow((void **)&missing, &mcap, mlen + len + 5, 1))
					mlen += (size_t)sprintf(missing + mlen, "%s\"%s\"",
								mlen ? ", " : "", r->names[i]);
				continue;
			}
			name = own_name(p, &ncap, r->names[i]);
			if (!name) {
				err = -ENOMEM;
				break;
			}
			err = add_pending(v, nv, &vcap, m, f[i].entry, name, false);
			for (k = 0; k < f[i].nrets && !err; k++)
				err = add_pending(v, nv, &vcap, m, f[i].rets[k], name, true);
		}
		if (missing)
			fail_add(&b->fails, "%s: no function named %s", p->modules[m].path,
				 missing);
		free(missing);
		kp_ut_funcs_free(f, r->nnames);
		free(f);
		if (err)
			return err;
	}
	return 0;
}

int kp_ut_plan_build(const struct SymbolSource *const *src, unsigned n, const int *tgids,
		     unsigned ntgids, struct kp_ut_plan **out)
{
	struct builder b = { 0 };
	struct request *reqs = NULL;
	size_t nreqs = 0, rcap = 0, nv = 0, i;
	struct pending *v = NULL;
	int err = 0;

	*out = NULL;
	b.p = calloc(1, sizeof(*b.p));
	if (!b.p)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	b.p->tgids = malloc((ntgids ? ntgids : 1) * sizeof(*b.p->tgids));
	if (!b.p->tgids) {
		err = -ENOMEM;
		goto out;
	}
	if (ntgids)
		memcpy(b.p->tgids, tgids, ntgids * sizeof(*tgids));
	b.p->ntgids = ntgids;
	for (i = 0; i < n && !err; i++)
		err = add_request(&reqs, &nreqs, &rcap, src[i]->moduleName, src[i]->symbolName);
	for (i = 0; i < nreqs && !err; i++)
		err = resolve_module(&b, &reqs[i]);
	if (!err)
		err = scan_modules(&b, &v, &nv);
	if (!err)
		err = build_sites(b.p, v, nv);
	if (err)
		goto out;
	if (b.fails.len)
		kp_warn(LIBPERF_WARN_UTRACE_ELF_SCAN_FAILED, "not traced: %s", b.fails.text);
	if (!b.p->nsites)
		err = kp_fail(LIBPERF_ERR_UTRACE_ELF_SCAN_FAILED, -ENOENT,
			      "none of the functions asked for can be traced: %s",
			      b.fails.len ? b.fails.text : "no symbol given");
out:
	if (err == -ENOMEM && !kp_failed())
		err = kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	free(b.fails.text);
	free(v);
	if (b.modnames) {
		for (i = 0; i < b.p->nmodules; i++)
			free(b.modnames[i].names);
		free(b.modnames);
	}
	free_requests(reqs, nreqs);
	if (err) {
		kp_ut_plan_free(b.p);
		return err;
	}
	*out = b.p;
	return 0;
}

void kp_ut_plan_free(struct kp_ut_plan *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->nmodules; i++) {
		free(p->modules[i].path);
		free(p->modules[i].open_path);
		free(p->modules[i].tgids);
	}
	for (i = 0; i < p->nsites; i++)
		free(p->sites[i].roles);
	for (i = 0; i < p->nnames; i++)
		free(p->names[i]);
	free(p->modules);
	free(p->sites);
	free(p->names);
	free(p->tgids);
	free(p);
}

/* ---- from a hit back to its site ---- */

struct hit_addr {
	uint64_t addr;
	const struct kp_ut_site *site;
	const char *path; /* interned */
};

struct proc_sites {
	uint32_t tgid;
	struct hit_addr *addrs; /* sorted by addr */
	size_t n;
	uint64_t read_ns; /* when its maps were last read, 0: never */
};

struct kp_ut_resolver {
	const struct kp_ut_plan *plan;
	struct proc_sites *procs;
	size_t nprocs, cap;
	struct kp_map paths; /* interned module paths */
};

static const char *intern(struct kp_ut_resolver *r, const char *s)
{
	struct kp_map_slot *slot;
	char *copy = kp_map_get(&r->paths, s);
	bool created;

	if (copy)
		return copy;
	copy = strdup(s);
	slot = copy ? kp_map_slot(&r->paths, copy, &created) : NULL;
	if (!slot) {
		free(copy);
		return NULL;
	}
	slot->val = copy;
	return copy;
}

static int cmp_hit(const void *a, const void *b)
{
	const struct hit_addr *x = a, *y = b;

	return (x->addr > y->addr) - (x->addr < y->addr);
}

static bool module_in(const struct kp_ut_module *mod, uint32_t tgid, const struct kp_ut_map *m)
{
	unsigned i;

	if (!mod->all_targets) {
		for (i = 0; i < mod->ntgids && (uint32_t)mod->tgids[i] != tgid; i++)
			;
		if (i == mod->ntgids)
			return false;
	}
	/* the path too: overlayfs shows a file's real inode in maps, its own to stat() */
	return (mod->dev == m->dev && mod->ino == m->ino) || !strcmp(mod->path, m->path);
}

/* (re)build the addresses of <ps> from its process's maps */
static int read_proc(struct kp_ut_resolver *r, struct proc_sites *ps)
{
	const struct kp_ut_plan *p = r->plan;
	struct hit_addr *addrs = NULL;
	size_t n = 0, cap = 0, nm, i, s;
	struct kp_ut_map *maps;
	int err;

	ps->read_ns = kp_now_ns();
	err = kp_ut_maps_read((pid_t)ps->tgid, &maps, &nm);
	if (err)
		return err; /* gone: what was known stays */
	for (i = 0; i < nm && !err; i++) {
		const struct kp_ut_map *m = &maps[i];
		const char *path = NULL;

		if (!m->exec || !m->path)
			continue;
		for (s = 0; s < p->nsites && !err; s++) {
			const struct kp_ut_site *site = &p->sites[s];

			if (site->off < m->pgoff || site->off - m->pgoff >= m->end - m->start ||
			    !module_in(&p->modules[site->module], ps->tgid, m))
				continue;
			if (!path)
				path = intern(r, m->path);
			if (!path || kp_grow((void **)&addrs, &cap, n + 1, sizeof(*addrs)))
				err = -ENOMEM;
			else
				addrs[n++] = (struct hit_addr){ m->start + site->off - m->pgoff,
								site, path };
		}
	}
	kp_ut_maps_free(maps, nm);
	if (err) {
		free(addrs);
		return err;
	}
	if (n)
		qsort(addrs, n, sizeof(*addrs), cmp_hit);
	free(ps->addrs);
	ps->addrs = addrs;
	ps->n = n;
	return 0;
}

int kp_ut_resolver_new(const struct kp_ut_plan *p, struct kp_ut_resolver **out)
{
	struct kp_ut_resolver *r = calloc(1, sizeof(*r));
	unsigned t;

	*out = NULL;
	if (!r)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	r->plan = p;
	kp_map_init(&r->paths, true);
	r->procs = calloc(p->ntgids ? p->ntgids : 1, sizeof(*r->procs));
	if (!r->procs) {
		free(r);
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	}
	for (t = 0; t < p->ntgids; t++) {
		r->procs[t].tgid = (uint32_t)p->tgids[t];
		if (read_proc(r, &r->procs[t]) == -ENOMEM) {
			kp_ut_resolver_free(r);
			return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
		}
	}
	r->nprocs = p->ntgids;
	*out = r;
	return 0;
}

static const struct hit_addr *find_addr(const struct proc_sites *ps, uint64_t ip)
{
	size_t lo = 0, hi = ps->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ps->addrs[mid].addr < ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ps->n && ps->addrs[lo].addr == ip ? &ps->addrs[lo] : NULL;
}

const struct kp_ut_site *kp_ut_resolve(struct kp_ut_resolver *r, uint32_t tgid, uint64_t ip,
				       bool refresh, const char **path)
{
	struct proc_sites *ps = NULL;
	const struct hit_addr *h;
	size_t i;

	*path = NULL;
	for (i = 0; i < r->nprocs && !ps; i++)
		if (r->procs[i].tgid == tgid)
			ps = &r->procs[i];
	if (!ps)
		return NULL;
	h = find_addr(ps, ip);
	/* unknown: a library mapped since the maps were read */
	if (!h && refresh && kp_now_ns() - ps->read_ns >= REFRESH_NS && !read_proc(r, ps))
		h = find_addr(ps, ip);
	if (!h)
		return NULL;
	*path = h->path;
	return h->site;
}

void kp_ut_resolver_free(struct kp_ut_resolver *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->nprocs; i++)
		free(r->procs[i].addrs);
	for (i = 0; i < r->paths.cap; i++)
		free(r->paths.slots[i].val);
	kp_map_free(&r->paths);
	free(r->procs);
	free(r);
}
