/*
 * sym_dies.c - one pass over the DIEs of a unit, read here instead of through libdw's
 * dwarf_child/dwarf_siblingof/dwarf_attr: the tree of a unit in the order libdw gives it, with
 * the attributes the function scopes need (code ranges, call sites) of subprograms and inlined
 * calls.
 *
 * libdw looks each attribute up by walking the DIE's abbreviation again and, to reach a
 * sibling, reads every attribute of every DIE in between through generic calls; listing the
 * functions of a unit that way was a third of the cold time of a symbolizer run on libc. Here
 * the unit's abbreviations are decoded once into a table by code (with the size of each DIE's
 * attributes when it is fixed, so most DIEs are skipped in one step), and the DIEs are read in
 * order. A unit this reader does not know how to read in full (an attribute form it does not
 * size, DW_FORM_indirect, a split or type unit, codes too sparse for a table) is refused
 * before any DIE is visited (-ENOTSUP), and its caller asks libdw. Values in forms that need
 * other sections (addrx, rnglistx, ranges lists) are not decoded: the visitor is told to read
 * that DIE through libdw.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <elfutils/libdw.h>
#include <dwarf.h>

#include "core/core.h"
#include "sym.h"

struct aspec { /* 4 bytes: a thousand units' tables are kept, each page a fault */
	uint16_t name, form; /* DW_FORM_implicit_const's value is not kept: none is read */
};

struct abbrev {
	uint16_t tag;
	uint16_t sib_form;
	bool children;
	bool wanted; /* subprogram or inlined call: its attributes are read */
	uint16_t n; /* attributes, from first in the spec pool */
	int32_t fixed; /* bytes of all its attributes when their sizes do not vary, else -1 */
	int32_t sib_at; /* where DW_AT_sibling's value is among them (fixed before it), or -1 */
	uint32_t first;
};

static bool force_libdw;

void sym_dies_force_libdw(bool on)
{
	force_libdw = on;
}

struct unit_hdr {
	unsigned version, addrsz, offsz;
	const uint8_t *end; /* of the unit */
};

struct sym_dies_unit {
	struct unit_hdr h;
	const uint8_t *sec, *start, *die; /* .debug_info, the unit's header, its DIE */
	struct abbrev *tab;
	size_t ntab;
	struct aspec *pool;
	bool ok;
	/* its DIE's attributes (sym_dies_cu) */
	uint64_t stmt_list, lang;
	const char *comp_dir;
	bool stmt_list_known, comp_dir_known, lang_known;
	bool stmt_list_seen, comp_dir_seen, lang_seen;
};

/* The size of a value of <form> when fixed, -1 when it is read from the data, -2 when this
 * reader does not know the form. */
static int form_size(const struct unit_hdr *h, unsigned form)
{
	switch (form) {
	case DW_FORM_flag_present:
	case DW_FORM_implicit_const:
		return 0;
	case DW_FORM_data1:
	case DW_FORM_ref1:
	case DW_FORM_flag:
	case DW_FORM_strx1:
	case DW_FORM_addrx1:
		return 1;
	case DW_FORM_data2:
	case DW_FORM_ref2:
	case DW_FORM_strx2:
	case DW_FORM_addrx2:
		return 2;
	case DW_FORM_strx3:
	case DW_FORM_addrx3:
		return 3;
	case DW_FORM_data4:
	case DW_FORM_ref4:
	case DW_FORM_strx4:
	case DW_FORM_addrx4:
	case DW_FORM_ref_sup4:
		return 4;
	case DW_FORM_data8:
	case DW_FORM_ref8:
	case DW_FORM_ref_sig8:
	case DW_FORM_ref_sup8:
		return 8;
	case DW_FORM_data16:
		return 16;
	case DW_FORM_addr:
		return (int)h->addrsz;
	case DW_FORM_ref_addr:
		return (int)(h->version <= 2 ? h->addrsz : h->offsz);
	case DW_FORM_strp:
	case DW_FORM_line_strp:
	case DW_FORM_sec_offset:
	case DW_FORM_strp_sup:
	case DW_FORM_GNU_ref_alt:
	case DW_FORM_GNU_strp_alt:
		return (int)h->offsz;
	case DW_FORM_sdata:
	case DW_FORM_udata:
	case DW_FORM_ref_udata:
	case DW_FORM_strx:
	case DW_FORM_addrx:
	case DW_FORM_loclistx:
	case DW_FORM_rnglistx:
	case DW_FORM_GNU_addr_index:
	case DW_FORM_GNU_str_index:
	case DW_FORM_string:
	case DW_FORM_block:
	case DW_FORM_block1:
	case DW_FORM_block2:
	case DW_FORM_block4:
	case DW_FORM_exprloc:
		return -1;
	default:
		return -2; /* DW_FORM_indirect among them */
	}
}

static inline bool uleb(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
	const uint8_t *p = *pp;
	unsigned shift = 0;

	if (p < end && *p < 0x80) { /* most are one byte */
		*v = *p;
		*pp = p + 1;
		return true;
	}
	*v = 0;
	while (p < end && shift < 64) {
		uint8_t b = *p++;

		*v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			*pp = p;
			return true;
		}
	}
	return false;
}

static bool sleb(const uint8_t **pp, const uint8_t *end, int64_t *v)
{
	const uint8_t *p = *pp;
	uint64_t u = 0;
	unsigned shift = 0;

	while (p < end && shift < 64) {
		uint8_t b = *p++;

		u |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			if (shift < 64 && (b & 0x40))
				u |= ~(uint64_t)0 << shift;
			*v = (int64_t)u;
			*pp = p;
			return true;
		}
	}
	return false;
}

static uint64_t fixed_le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	memcpy(&v, p, n); /* little-endian only (f->sec.little) */
	return v;
}

/* skip one value; false when it runs past <end> */
static bool skip_form(const struct unit_hdr *h, unsigned form, const uint8_t **pp,
		      const uint8_t *end)
{
	const uint8_t *p = *pp;
	uint64_t n;
	int64_t s;
	int sz = form_size(h, form);

	if (sz >= 0) {
		if ((size_t)(end - p) < (size_t)sz)
			return false;
		*pp = p + sz;
		return true;
	}
	switch (form) {
	case DW_FORM_sdata:
		return sleb(pp, end, &s);
	case DW_FORM_string: {
		const uint8_t *z = memchr(p, 0, (size_t)(end - p));

		if (!z)
			return false;
		*pp = z + 1;
		return true;
	}
	case DW_FORM_block1:
		if (end - p < 1)
			return false;
		n = *p++;
		break;
	case DW_FORM_block2:
		if (end - p < 2)
			return false;
		n = fixed_le(p, 2);
		p += 2;
		break;
	case DW_FORM_block4:
		if (end - p < 4)
			return false;
		n = fixed_le(p, 4);
		p += 4;
		break;
	case DW_FORM_block:
	case DW_FORM_exprloc:
		if (!uleb(&p, end, &n))
			return false;
		break;
	default: /* the other uleb forms */
		return uleb(pp, end, &n);
	}
	if (n > (size_t)(end - p))
		return false;
	*pp = p + n;
	return true;
}

/* The abbreviations at <off>: a table by code. -ENOTSUP for what this reader does not read. */
static int read_abbrevs(const struct sym_dwsec *sec, uint64_t off, const struct unit_hdr *h,
			struct abbrev **tab, size_t *ntab, struct aspec **pool)
{
	const uint8_t *p, *end = sec->p + sec->len;
	size_t cap = 0, pcap = 0, npool = 0, count = 0, top = 1;
	int err = -ENOTSUP;

	*tab = NULL;
	*ntab = 0;
	*pool = NULL;
	if (off >= sec->len)
		return -ENOTSUP;
	cap = 64;
	pcap = 256;
	*tab = calloc(cap, sizeof(**tab));
	*pool = malloc(pcap * sizeof(**pool)); /* written before read: not zeroed */
	if (!*tab || !*pool) {
		err = -ENOMEM;
		goto out;
	}
	*ntab = cap;
	for (p = sec->p + off;;) {
		uint64_t code, tag, name, form;
		struct abbrev *a;
		int64_t implicit = 0;
		int fixed = 0;

		if (!uleb(&p, end, &code))
			goto out;
		if (!code)
			break;
		if (!uleb(&p, end, &tag) || p >= end || code > 4 * count + 1024 || tag > 0xffff)
			goto out;
		if (code >= *ntab) {
			if (kp_grow((void **)tab, &cap, code + 1, sizeof(**tab))) {
				err = -ENOMEM;
				goto out;
			}
			*ntab = cap; /* kp_grow zeroed the new codes */
		}
		a = &(*tab)[code];
		if (a->tag) /* the same code twice */
			goto out;
		a->tag = (uint16_t)tag;
		a->children = *p++ != 0;
		a->wanted = tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine;
		a->first = (uint32_t)npool;
		a->sib_at = -1;
		for (;;) {
			int sz;

			if (!uleb(&p, end, &name) || !uleb(&p, end, &form))
				goto out;
			if (!name && !form)
				break;
			if (form == DW_FORM_implicit_const && !sleb(&p, end, &implicit))
				goto out;
			sz = form_size(h, (unsigned)form);
			if (sz == -2 || name > 0xffff)
				goto out;
			if (name == DW_AT_sibling && fixed >= 0 &&
			    (form == DW_FORM_ref1 || form == DW_FORM_ref2 || form == DW_FORM_ref4 ||
			     form == DW_FORM_ref8 || form == DW_FORM_ref_udata)) {
				a->sib_at = fixed;
				a->sib_form = (uint16_t)form;
			}
			fixed = sz < 0 || fixed < 0 ? -1 : fixed + sz;
			if (npool == pcap) {
				struct aspec *np = realloc(*pool, 2 * pcap * sizeof(**pool));

				if (!np) {
					err = -ENOMEM;
					goto out;
				}
				*pool = np;
				pcap *= 2;
			}
			(*pool)[npool++] = (struct aspec){ (uint16_t)name, (uint16_t)form };
		}
		if (npool - a->first > UINT16_MAX)
			goto out;
		a->n = (uint16_t)(npool - a->first);
		a->fixed = fixed;
		count++;
		if (code + 1 > top)
			top = code + 1;
	}
	/* kept while the file is: give back the room not used (a unit's tables are small,
	 * but a thousand units' spare room is megabytes of pages to fault in) */
	{
		struct abbrev *t = realloc(*tab, top * sizeof(**tab));
		struct aspec *q = realloc(*pool, (npool ? npool : 1) * sizeof(**pool));

		if (t)
			*tab = t;
		if (q)
			*pool = q;
		*ntab = top;
	}
	return 0;
out:
	free(*tab);
	free(*pool);
	*tab = NULL;
	*pool = NULL;
	*ntab = 0;
	return err;
}

/* the attributes a visitor of a subprogram or inlined call gets */
static bool read_wanted(const struct unit_hdr *h, const struct abbrev *a, const struct aspec *sp,
			const uint8_t **pp, struct sym_die_attrs *out)
{
	const uint8_t *p = *pp, *end = h->end;
	uint32_t i;

	for (i = 0; i < a->n; i++) {
		unsigned form = sp[i].form;
		const uint8_t *v = p;
		uint64_t val = 0;
		bool plain = true;

		if (!skip_form(h, form, &p, end))
			return false;
		switch (form) { /* the value, for the plain forms */
		case DW_FORM_addr:
		case DW_FORM_data1:
		case DW_FORM_data2:
		case DW_FORM_data4:
		case DW_FORM_data8:
			val = fixed_le(v, (unsigned)(p - v));
			break;
		case DW_FORM_udata:
			uleb(&v, end, &val);
			break;
		default:
			plain = false;
		}
		switch (sp[i].name) {
		case DW_AT_low_pc:
			out->has_low = true;
			out->low = val;
			out->odd |= form != DW_FORM_addr;
			break;
		case DW_AT_high_pc:
			out->has_high = true;
			out->high = val;
			out->high_is_offset = form != DW_FORM_addr;
			out->odd |= !plain;
			break;
		case DW_AT_ranges:
			out->has_ranges = true;
			break;
		case DW_AT_call_line:
			out->call_line = val;
			out->odd |= !plain || form == DW_FORM_addr;
			break;
		case DW_AT_call_file:
			out->call_file = val;
			out->odd |= !plain || form == DW_FORM_addr;
			break;
		default:
			break;
		}
	}
	*pp = p;
	return true;
}

/* the DIE after the children of a DIE whose attributes start at <attrs>, from its
 * DW_AT_sibling; NULL when it has none this reader finds at once */
static const uint8_t *sibling(const struct unit_hdr *h, const struct abbrev *ab,
			      const uint8_t *attrs, const uint8_t *unit)
{
	const uint8_t *v;
	uint64_t off;

	if (ab->sib_at < 0)
		return NULL;
	v = attrs + ab->sib_at;
	switch (ab->sib_form) {
	case DW_FORM_ref1:
		off = *v;
		break;
	case DW_FORM_ref2:
		off = fixed_le(v, 2);
		break;
	case DW_FORM_ref4:
		off = fixed_le(v, 4);
		break;
	case DW_FORM_ref8:
		off = fixed_le(v, 8);
		break;
	default:
		if (!uleb(&v, h->end, &off))
			return NULL;
	}
	return off < (uint64_t)(h->end - unit) ? unit + off : NULL;
}

static void unit_free(struct sym_dies_unit *u)
{
	if (u) {
		free(u->tab);
		free(u->pool);
		free(u);
	}
}

static const char *str_of(const struct sym_dwsec *sec, uint64_t off)
{
	if (!sec->p || off >= sec->len || !memchr(sec->p + off, 0, sec->len - off))
		return NULL;
	return (const char *)sec->p + off;
}

/* DW_AT_stmt_list, DW_AT_comp_dir and DW_AT_language of the unit's DIE, where their forms
 * are ones libdw would read the same way; the others are left for libdw to read */
static int cu_attrs(struct sym_file *f, struct sym_dies_unit *u)
{
	const struct unit_hdr *h = &u->h;
	const uint8_t *p = u->die, *v;
	const struct abbrev *ab;
	uint64_t code, val;
	uint32_t i;

	if (!uleb(&p, h->end, &code) || !code || code >= u->ntab || !u->tab[code].tag)
		return -ENOTSUP;
	ab = &u->tab[code];
	for (i = 0; i < ab->n; i++) {
		unsigned form = u->pool[ab->first + i].form;

		v = p;
		if (!skip_form(h, form, &p, h->end))
			return -ENOTSUP;
		switch (form) {
		case DW_FORM_data1:
		case DW_FORM_data2:
		case DW_FORM_data4:
		case DW_FORM_data8:
		case DW_FORM_sec_offset:
		case DW_FORM_strp:
		case DW_FORM_line_strp:
			val = fixed_le(v, (unsigned)(p - v));
			break;
		case DW_FORM_udata:
			uleb(&v, h->end, &val);
			break;
		default:
			val = 0;
		}
		switch (u->pool[ab->first + i].name) {
		case DW_AT_stmt_list:
			u->stmt_list = val;
			u->stmt_list_known = form == DW_FORM_sec_offset || form == DW_FORM_data4 ||
					     form == DW_FORM_data8;
			u->stmt_list_seen = true;
			break;
		case DW_AT_comp_dir:
			u->comp_dir_known = true;
			if (form == DW_FORM_string)
				u->comp_dir = (const char *)v;
			else if (form == DW_FORM_strp)
				u->comp_dir = str_of(&f->sec.str, val);
			else if (form == DW_FORM_line_strp)
				u->comp_dir = str_of(&f->sec.line_str, val);
			else
				u->comp_dir_known = false;
			u->comp_dir_seen = true;
			break;
		case DW_AT_language:
			u->lang = val;
			u->lang_known = form == DW_FORM_data1 || form == DW_FORM_data2 ||
					form == DW_FORM_udata;
			u->lang_seen = true;
			break;
		default:
			break;
		}
	}
	return 0;
}

/* The header, abbreviations and unit DIE attributes of the unit at <cu_off>; -ENOTSUP */
static int unit_open(struct sym_file *f, uint64_t cu_off, uint64_t die_off, struct sym_dies_unit *u)
{
	const struct sym_dwsec *info = &f->sec.info;
	struct unit_hdr *h = &u->h;
	const uint8_t *p;
	uint64_t len, abbrev_off;
	int err;

	if (cu_off >= info->len || info->len - cu_off < 11)
		return -ENOTSUP;
	u->sec = info->p;
	u->start = p = info->p + cu_off;
	len = fixed_le(p, 4);
	p += 4;
	h->offsz = 4;
	if (len == 0xffffffff) {
		if (info->len - cu_off < 23)
			return -ENOTSUP;
		len = fixed_le(p, 8);
		p += 8;
		h->offsz = 8;
	} else if (len >= 0xfffffff0) {
		return -ENOTSUP;
	}
	if (len > (size_t)(info->p + info->len - p))
		return -ENOTSUP;
	h->end = p + len;
	h->version = (unsigned)fixed_le(p, 2);
	p += 2;
	if (h->version < 2 || h->version > 5)
		return -ENOTSUP;
	if (h->version == 5) {
		unsigned type = *p++;

		if (type != DW_UT_compile && type != DW_UT_partial)
			return -ENOTSUP;
		h->addrsz = *p++;
		abbrev_off = fixed_le(p, h->offsz);
		p += h->offsz;
	} else {
		abbrev_off = fixed_le(p, h->offsz);
		p += h->offsz;
		h->addrsz = *p++;
	}
	if ((h->addrsz != 4 && h->addrsz != 8) || p != info->p + die_off || p >= h->end)
		return -ENOTSUP;
	u->die = p;
	err = read_abbrevs(&f->sec.abbrev, abbrev_off, h, &u->tab, &u->ntab, &u->pool);
	if (err)
		return err;
	return cu_attrs(f, u);
}

/* the unit of <cudie>, read now if not yet; NULL when this reader cannot read it (or ENOMEM) */
static struct sym_dies_unit *unit_of(struct sym_file *f, Dwarf_Die *cudie)
{
	uint64_t die_off = dwarf_dieoffset(cudie);
	struct sym_dies_unit *u = sym_hmap_get(&f->dies_units, die_off, 0);

	if (u)
		return u->ok ? u : NULL;
	if (!f->sec.info.p || !f->sec.abbrev.p || !f->sec.little || force_libdw)
		return NULL;
	u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	u->ok = unit_open(f, die_off - dwarf_cuoffset(cudie), die_off, u) == 0;
	if (!u->ok) {
		free(u->tab);
		free(u->pool);
		u->tab = NULL;
		u->pool = NULL;
	}
	if (sym_hmap_put(&f->dies_units, die_off, 0, u)) {
		unit_free(u);
		return NULL;
	}
	return u->ok ? u : NULL;
}

int sym_dies_cu_stmt_list(struct sym_file *f, Dwarf_Die *cudie, uint64_t *off)
{
	struct sym_dies_unit *u = unit_of(f, cudie);

	if (!u || (u->stmt_list_seen && !u->stmt_list_known))
		return -ENOTSUP;
	*off = u->stmt_list;
	return u->stmt_list_seen;
}

int sym_dies_cu_comp_dir(struct sym_file *f, Dwarf_Die *cudie, const char **dir)
{
	struct sym_dies_unit *u = unit_of(f, cudie);

	if (!u || (u->comp_dir_seen && !u->comp_dir_known))
		return -ENOTSUP;
	*dir = u->comp_dir_seen ? u->comp_dir : NULL;
	return u->comp_dir_seen;
}

int sym_dies_cu_lang(struct sym_file *f, Dwarf_Die *cudie, int *lang)
{
	struct sym_dies_unit *u = unit_of(f, cudie);

	if (!u || (u->lang_seen && !u->lang_known))
		return -ENOTSUP;
	*lang = u->lang_seen && u->lang <= INT32_MAX ? (int)u->lang : -1;
	return u->lang_seen;
}

/* visit the DIEs from <p> at <depth> on, until the list of children at depth floor + 1 ends */
static int walk(const struct sym_dies_unit *u, const uint8_t *p, unsigned depth, unsigned floor,
		sym_die_visit visit, void *ctx)
{
	const struct unit_hdr *h = &u->h;
	const uint8_t *attrs;
	unsigned skip_below = UINT32_MAX; /* DIEs deeper are not visited */
	int err = 0;

	while (p < h->end) {
		struct sym_die_attrs a;
		const struct abbrev *ab;
		uint64_t code;
		int r;

		a.off = (uint64_t)(p - u->sec);
		if (!uleb(&p, h->end, &code)) {
			err = -EINVAL;
			break;
		}
		if (!code) { /* the end of a list of children (or padding after the unit) */
			if (depth <= floor)
				break;
			if (--depth <= skip_below)
				skip_below = UINT32_MAX;
			if (depth <= floor)
				break;
			continue;
		}
		if (code >= u->ntab || !u->tab[code].tag) {
			err = -EINVAL;
			break;
		}
		ab = &u->tab[code];
		attrs = p;
		memset(&a.has_low, 0, sizeof(a) - offsetof(struct sym_die_attrs, has_low));
		if (ab->wanted && depth <= skip_below) {
			if (!read_wanted(h, ab, u->pool + ab->first, &p, &a)) {
				err = -EINVAL;
				break;
			}
		} else if (ab->fixed >= 0) {
			if ((size_t)(h->end - p) < (size_t)ab->fixed) {
				err = -EINVAL;
				break;
			}
			p += ab->fixed;
		} else {
			uint32_t i;

			for (i = 0; i < ab->n; i++)
				if (!skip_form(h, u->pool[ab->first + i].form, &p, h->end))
					break;
			if (i < ab->n) {
				err = -EINVAL;
				break;
			}
		}
		if (depth > skip_below) { /* inside a DIE whose children were refused */
			depth += ab->children;
			continue;
		}
		a.tag = (int)ab->tag;
		a.depth = depth;
		a.children = ab->children;
		a.wanted = ab->wanted;
		r = visit(ctx, &a);
		if (r < 0) {
			err = r;
			break;
		}
		if (ab->children) {
			const uint8_t *sib = r ? NULL : sibling(h, ab, attrs, u->start);

			if (sib && sib >= p && sib <= h->end) {
				p = sib; /* past its children at once */
				continue;
			}
			if (!r)
				skip_below = depth;
			depth++;
		}
	}
	return err;
}

int sym_dies_walk(struct sym_file *f, Dwarf_Die *cudie, sym_die_visit visit, void *ctx)
{
	struct sym_dies_unit *u = unit_of(f, cudie);

	if (!u)
		return -ENOTSUP;
	return walk(u, u->die, 0, 0, visit, ctx);
}

int sym_dies_walk_children(struct sym_file *f, Dwarf_Die *cudie, uint64_t die_off, unsigned depth,
			   sym_die_visit visit, void *ctx)
{
	struct sym_dies_unit *u = unit_of(f, cudie);
	const struct abbrev *ab;
	const uint8_t *p;
	uint64_t code;
	uint32_t i;

	if (!u)
		return -ENOTSUP;
	if (die_off < (uint64_t)(u->die - u->sec) || die_off >= (uint64_t)(u->h.end - u->sec))
		return -EINVAL;
	p = u->sec + die_off;
	if (!uleb(&p, u->h.end, &code) || !code || code >= u->ntab || !u->tab[code].tag)
		return -EINVAL;
	ab = &u->tab[code];
	for (i = 0; i < ab->n; i++)
		if (!skip_form(&u->h, u->pool[ab->first + i].form, &p, u->h.end))
			return -EINVAL;
	if (!ab->children)
		return 0;
	return walk(u, p, depth, depth - 1, visit, ctx);
}

static bool drop_unit(void *val, void *ctx)
{
	(void)ctx;
	unit_free(val);
	return true;
}

void sym_dies_free(struct sym_file *f)
{
	sym_hmap_filter(&f->dies_units, drop_unit, NULL);
	sym_hmap_free(&f->dies_units);
}
