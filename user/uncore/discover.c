/*
 * discover.c - which uncore PMUs this machine has (bus/event_source/devices) and which PCI
 * functions the PCIe and SMMU PMUs measure (bus/pci/devices, class/iommu), all under
 * kp_sysfs() so that fixture trees stand in for real hardware in tests.
 *
 * PCIe: a hisi_pcie PMU monitors the root ports on its "bus" (those within bdf_min..bdf_max
 * when the kernel exports them) and the endpoints below them; its "bdf" filter selects one
 * endpoint by requester id, its "port" filter root ports by a lane bitmap (the kernel's
 * hisi-pcie-pmu.rst: 00:00.0 is bit 0, 00:04.0 is bit 8, i.e. bit = 2 x device number).
 * SMMU: the SMMUv3 PMCG of an SMMU at physical address B is named smmuv3_pmcg_<(B +
 * 0x20000) >> 12> on HiSilicon parts (the TCU PMCG sits 128 KiB into the SMMU), and its
 * stream id filter takes the PCI requester id (identity ID mapping of the root complex).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"
#include "uncore.h"

#define SMMU_PMCG_OFFSET 0x20000ULL

/* "hisi_sccl" <n> <rest>: parse a decimal after <prefix>; returns the rest or NULL */
static const char *after_num(const char *s, const char *prefix, int *num)
{
	size_t len = strlen(prefix);
	char *end;
	long v;

	if (strncmp(s, prefix, len) || !isdigit((unsigned char)s[len]))
		return NULL;
	v = strtol(s + len, &end, 10);
	if (v > INT_MAX)
		return NULL;
	if (num)
		*num = (int)v;
	return end;
}

static bool all_hex(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isxdigit((unsigned char)*s))
			return false;
	return true;
}

enum kp_unc_kind kp_unc_kind(const char *name, int *index)
{
	const char *rest;
	int n;

	if (index)
		*index = -1;
	if (!name)
		return KP_UNC_OTHER;
	rest = after_num(name, "hisi_sccl", NULL);
	if (rest) {
		const char *tail;

		if ((tail = after_num(rest, "_ddrc", &n)) && (!*tail || *tail == '_')) {
			if (index)
				*index = n;
			return KP_UNC_HISI_DDRC;
		}
		if ((tail = after_num(rest, "_l3c", NULL)) && !*tail)
			return KP_UNC_HISI_L3C;
		if ((tail = after_num(rest, "_hha", NULL)) && !*tail)
			return KP_UNC_HISI_HHA;
		return KP_UNC_OTHER;
	}
	rest = after_num(name, "hisi_pcie", NULL);
	if (rest) {
		rest = after_num(rest, "_core", NULL);
		return rest && !*rest ? KP_UNC_HISI_PCIE : KP_UNC_OTHER;
	}
	rest = after_num(name, "uncore_imc_", &n);
	if (rest && !*rest) {
		if (index)
			*index = n;
		return KP_UNC_INTEL_IMC;
	}
	if (!strncmp(name, "smmuv3_pmcg_", 12) && all_hex(name + 12))
		return KP_UNC_SMMU_PMCG;
	if (!strncmp(name, "armv8_", 6) || !strncmp(name, "armv9_", 6))
		return KP_UNC_ARM_CORE;
	if (!strcmp(name, "cpu") || !strcmp(name, "cpu_core") || !strcmp(name, "cpu_atom"))
		return KP_UNC_INTEL_CORE;
	return KP_UNC_OTHER;
}

static int cmp_names(const void *a, const void *b)
{
	return strverscmp(*(char *const *)a, *(char *const *)b);
}

void kp_unc_names_free(char **names, int n)
{
	int i;

	if (!names)
		return;
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

int kp_unc_pmus(enum kp_unc_kind kind, char ***names)
{
	char path[PATH_MAX], **v = NULL;
	size_t cap = 0;
	struct dirent *de;
	int n = 0;
	DIR *d;

	*names = NULL;
	snprintf(path, sizeof(path), "%s/bus/event_source/devices", kp_sysfs());
	d = opendir(path);
	if (!d)
		return 0; /* no perf events at all: no PMU of any kind */
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || kp_unc_kind(de->d_name, NULL) != kind)
			continue;
		if (kp_grow((void **)&v, &cap, (size_t)n + 1, sizeof(*v)) ||
		    !(v[n] = strdup(de->d_name))) {
			closedir(d);
			kp_unc_names_free(v, n);
			return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
		}
		n++;
	}
	closedir(d);
	if (n)
		qsort(v, (size_t)n, sizeof(*v), cmp_names);
	*names = v;
	return n;
}

static bool pmu_file_exists(const char *pmu, const char *sub, const char *name)
{
	char path[PATH_MAX];

	if ((size_t)snprintf(path, sizeof(path), "%s/bus/event_source/devices/%s/%s/%s", kp_sysfs(),
			     pmu, sub, name) >= sizeof(path))
		return false;
	return access(path, F_OK) == 0;
}

bool kp_unc_has_event(const char *pmu, const char *alias)
{
	return pmu_file_exists(pmu, "events", alias);
}

bool kp_unc_has_format(const char *pmu, const char *term)
{
	return pmu_file_exists(pmu, "format", term);
}

char *kp_unc_event_terms(const char *pmu, const char *alias)
{
	char path[PATH_MAX], *buf;

	snprintf(path, sizeof(path), "%s/bus/event_source/devices/%s/events/%s", kp_sysfs(), pmu,
		 alias);
	if (kp_read_file(path, &buf, NULL))
		return NULL;
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

/* ---- bdf strings ---- */

static int hex_field(const char **p, char stop, unsigned max, unsigned *out)
{
	const char *s = *p;
	unsigned v = 0;
	int digits = 0;

	for (; isxdigit((unsigned char)*s); s++, digits++) {
		v = v * 16 + (unsigned)(isdigit((unsigned char)*s) ?
						*s - '0' :
						tolower((unsigned char)*s) - 'a' + 10);
		if (v > max || digits > 4)
			return -EINVAL;
	}
	if (!digits || *s != stop)
		return -EINVAL;
	*out = v;
	*p = stop ? s + 1 : s;
	return 0;
}

int kp_unc_parse_bdf(const char *s, unsigned *domain, unsigned *rid)
{
	unsigned dom = 0, bus, dev, fn;
	const char *p = s, *c1, *c2;

	if (!s)
		return -EINVAL;
	c1 = strchr(s, ':');
	c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	if (c2 && hex_field(&p, ':', 0xffff, &dom))
		return -EINVAL;
	if (hex_field(&p, ':', 0xff, &bus) || hex_field(&p, '.', 0x1f, &dev) ||
	    hex_field(&p, '\0', 7, &fn))
		return -EINVAL;
	*domain = dom;
	*rid = bus << 8 | dev << 3 | fn;
	return 0;
}

void kp_unc_format_bdf(unsigned domain, unsigned rid, char *buf, size_t size)
{
	if (domain)
		snprintf(buf, size, "%04x:%02x:%02x.%x", domain, rid >> 8, (rid >> 3) & 0x1f,
			 rid & 7);
	else
		snprintf(buf, size, "%02x:%02x.%x", rid >> 8, (rid >> 3) & 0x1f, rid & 7);
}

/* ---- PCI devices ---- */

struct pci_fn {
	unsigned domain, rid;
	unsigned cls; /* class code, 0xCCSSPP */
	bool has_root; /* below a function of a root bus */
	unsigned root_domain, root_rid;
};

static bool is_bridge(const struct pci_fn *f)
{
	return (f->cls >> 8) == 0x0604;
}

/* "dddd:bb:dd.f" (exactly that form, as sysfs names functions) */
static bool pci_name(const char *s, unsigned *domain, unsigned *rid)
{
	return strlen(s) == 12 && s[4] == ':' && s[7] == ':' && s[10] == '.' &&
	       kp_unc_parse_bdf(s, domain, rid) == 0;
}

/* the first PCI function in the real path of <path>: the one on the root bus */
static bool first_pci_component(const char *path, unsigned *domain, unsigned *rid)
{
	char real[PATH_MAX], *tok, *save = NULL;

	if (!realpath(path, real))
		return false;
	for (tok = strtok_r(real, "/", &save); tok; tok = strtok_r(NULL, "/", &save))
		if (pci_name(tok, domain, rid))
			return true;
	return false;
}

/* the last PCI function in the real path of <path> (a PMU that is a PCI device: its own
 * function), for the PMU's domain */
static bool last_pci_component(const char *path, unsigned *domain)
{
	char real[PATH_MAX], *tok, *save = NULL;
	unsigned rid;
	bool found = false;

	if (!realpath(path, real))
		return false;
	for (tok = strtok_r(real, "/", &save); tok; tok = strtok_r(NULL, "/", &save))
		found |= pci_name(tok, domain, &rid);
	return found;
}

static int pci_scan(struct pci_fn **out)
{
	char dir[PATH_MAX], path[PATH_MAX + 300];
	struct pci_fn *v = NULL;
	size_t cap = 0;
	struct dirent *de;
	int n = 0;
	DIR *d;

	*out = NULL;
	snprintf(dir, sizeof(dir), "%s/bus/pci/devices", kp_sysfs());
	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		struct pci_fn f = { 0 };
		long cls;

		if (!pci_name(de->d_name, &f.domain, &f.rid))
			continue;
		snprintf(path, sizeof(path), "%s/%s/class", dir, de->d_name);
		f.cls = kp_read_long(path, &cls) == 0 ? (unsigned)cls : 0;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		f.has_root = first_pci_component(path, &f.root_domain, &f.root_rid) &&
			     (f.root_domain != f.domain || f.root_rid != f.rid);
		if (kp_grow((void **)&v, &cap, (size_t)n + 1, sizeof(*v))) {
			closedir(d);
			free(v);
			return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
		}
		v[n++] = f;
	}
	closedir(d);
	*out = v;
	return n;
}

struct cover_list {
	struct kp_cover *v;
	size_t cap;
	int n;
};

static int cover_add(struct cover_list *l, unsigned domain, unsigned rid, const char *pmu,
		     unsigned bit)
{
	struct kp_cover *c;

	if (kp_grow((void **)&l->v, &l->cap, (size_t)l->n + 1, sizeof(*l->v)))
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	c = &l->v[l->n++];
	c->domain = domain;
	c->rid = rid;
	c->portBit = bit;
	kp_unc_format_bdf(domain, rid, c->bdf, sizeof(c->bdf));
	snprintf(c->pmu, sizeof(c->pmu), "%s", pmu);
	return 0;
}

static int cmp_cover(const void *a, const void *b)
{
	const struct kp_cover *x = a, *y = b;

	if (x->domain != y->domain)
		return x->domain < y->domain ? -1 : 1;
	return (x->rid > y->rid) - (x->rid < y->rid);
}

static int read_hex_attr(const char *pmu, const char *attr, long *val)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/bus/event_source/devices/%s/%s", kp_sysfs(), pmu, attr);
	return kp_read_long(path, val);
}

static int cover_pcie(bool ports, struct cover_list *l)
{
	struct pci_fn *fns = NULL;
	char **pmus, path[PATH_MAX];
	int npmu, nfn, i, j, k, err = 0;

	npmu = kp_unc_pmus(KP_UNC_HISI_PCIE, &pmus);
	if (npmu < 0)
		return npmu;
	if (npmu == 0)
		return kp_fail(LIBPERF_ERR_NOT_SUPPORT_PCIE_COUNTING, -ENODEV,
			       "this machine has no HiSilicon PCIe PMU (hisi_pcie*_core* in "
			       "%s/bus/event_source/devices)",
			       kp_sysfs());
	nfn = pci_scan(&fns);
	if (nfn < 0) {
		kp_unc_names_free(pmus, npmu);
		return nfn;
	}
	for (i = 0; i < npmu && !err; i++) {
		long bus, lo = -1, hi = -1;
		unsigned domain = 0;

		if (read_hex_attr(pmus[i], "bus", &bus) || bus < 0 || bus > 0xff)
			continue; /* not a PCIe core PMU we understand */
		if (read_hex_attr(pmus[i], "bdf_min", &lo) ||
		    read_hex_attr(pmus[i], "bdf_max", &hi))
			lo = hi = -1;
		snprintf(path, sizeof(path), "%s/bus/event_source/devices/%s", kp_sysfs(), pmus[i]);
		last_pci_component(path, &domain);
		for (j = 0; j < nfn && !err; j++) {
			const struct pci_fn *rp = &fns[j];

			/* a root port this PMU monitors */
			if (rp->domain != domain || (rp->rid >> 8) != (unsigned)bus ||
			    !is_bridge(rp) || rp->has_root ||
			    (lo >= 0 && ((long)rp->rid < lo || (long)rp->rid > hi)))
				continue;
			if (ports) {
				unsigned bit = ((rp->rid >> 3) & 0x1f) * 2;

				if (bit < 16)
					err = cover_add(l, rp->domain, rp->rid, pmus[i], bit);
				continue;
			}
			for (k = 0; k < nfn && !err; k++) {
				const struct pci_fn *ep = &fns[k];

				if (ep->has_root && !is_bridge(ep) &&
				    ep->root_domain == rp->domain && ep->root_rid == rp->rid)
					err = cover_add(l, ep->domain, ep->rid, pmus[i], 0);
			}
		}
	}
	free(fns);
	kp_unc_names_free(pmus, npmu);
	return err;
}

/* the PMCG of the SMMU called <smmu> ("smmu3.0x0000000148000000") among <pmus> */
static const char *smmu_pmcg(const char *smmu, char **pmus, int npmu)
{
	unsigned long long base, page;
	char *end;
	int i;

	if (strncmp(smmu, "smmu3.0x", 8))
		return NULL;
	errno = 0;
	base = strtoull(smmu + 8, &end, 16);
	if (errno || *end || end == smmu + 8)
		return NULL;
	page = (base + SMMU_PMCG_OFFSET) >> 12;
	for (i = 0; i < npmu; i++)
		if (strtoull(pmus[i] + 12, NULL, 16) == page)
			return pmus[i];
	return NULL;
}

static int cover_smmu(struct cover_list *l)
{
	char dir[PATH_MAX], path[PATH_MAX + 300], **pmus;
	struct dirent *de, *fe;
	int npmu, err = 0;
	DIR *d, *fd;

	npmu = kp_unc_pmus(KP_UNC_SMMU_PMCG, &pmus);
	if (npmu < 0)
		return npmu;
	if (npmu == 0)
		return kp_fail(LIBPERF_ERR_NOT_SUPPORT_METRIC, -ENODEV,
			       "this machine has no SMMUv3 PMCG (smmuv3_pmcg_* in %s/bus/"
			       "event_source/devices)",
			       kp_sysfs());
	snprintf(dir, sizeof(dir), "%s/class/iommu", kp_sysfs());
	d = opendir(dir);
	while (d && !err && (de = readdir(d))) {
		const char *pmcg = smmu_pmcg(de->d_name, pmus, npmu);

		if (!pmcg)
			continue;
		snprintf(path, sizeof(path), "%s/%s/devices", dir, de->d_name);
		fd = opendir(path);
		while (fd && !err && (fe = readdir(fd))) {
			unsigned domain, rid;

			if (pci_name(fe->d_name, &domain, &rid))
				err = cover_add(l, domain, rid, pmcg, 0);
		}
		if (fd)
			closedir(fd);
	}
	if (d)
		closedir(d);
	kp_unc_names_free(pmus, npmu);
	return err;
}

int kp_unc_cover(enum kp_cover_kind kind, struct kp_cover **out)
{
	struct cover_list l = { 0 };
	int err;

	*out = NULL;
	err = kind == KP_COVER_SMMU ? cover_smmu(&l) : cover_pcie(kind == KP_COVER_PCIE_PORT, &l);
	if (err) {
		free(l.v);
		return err;
	}
	if (l.n)
		qsort(l.v, (size_t)l.n, sizeof(*l.v), cmp_cover);
	*out = l.v;
	return l.n;
}
