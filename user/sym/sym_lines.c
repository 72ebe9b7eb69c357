/*
 * sym_lines.c - a unit's line table read here instead of by libdw: the same rows, the same
 * answer for every address as dwarf_getsrc_die + dwarf_linesrc, at a fraction of the cost.
 *
 * libdw's dwarf_getsrclines allocates every row of the program (a linked list of 80-byte
 * records), sorts pointers to them with a comparison function and copies them out: half of
 * the cold time of a symbolizer run on libc went there. Here the program is run into an array
 * of 24-byte rows; rows come in sequences whose addresses ascend, so the array is usually
 * sorted already (checked in one pass) and qsort runs only when it is not. The order is
 * libdw's exactly (address, then an end of sequence before a row at the same address, then
 * program order), the last row is marked as an end of sequence as libdw marks it, and the
 * lookup is libdw's binary search, so both give the same row for any address.
 *
 * Only what is well-formed and common is handled here: DWARF 2 to 5 line programs, DWARF 5
 * entry formats whose strings are inline, in .debug_str or .debug_line_str. Anything else (an
 * unknown form, a value libdw would refuse, a split unit, a section left compressed) makes
 * the unit's table be read by libdw instead (-ENOTSUP), so the answer stays libdw's.
 * File names are built as libdw builds them (the directory joined to a relative name).
 */
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <elfutils/libdw.h>
#include <dwarf.h>

#include "core/core.h"
#include "sym.h"

struct row { /* 16 bytes: a thousand units' rows are kept */
	uint64_t addr;
	int32_t line;
	uint32_t file : 31;
	uint32_t end : 1; /* end of sequence */
};

struct lfile {
	const char *dir; /* NULL: none (no comp_dir), or the name is absolute */
	const char *name;
	const char *joined; /* dir/name, made when first asked */
};

struct table {
	struct row *rows;
	size_t nrows;
	struct lfile *files;
	size_t nfiles;
	bool bad; /* libdw finds no table (unreadable): no lines, no files */
	bool libdw; /* read by libdw */
};

struct sym_lines {
	const uint8_t *line, *line_str, *str;
	size_t line_len, line_str_len, str_len;
	bool usable; /* the sections are here, inflated */
	struct sym_hmap tables; /* .debug_line offset -> struct table */
};

static bool force_libdw, force_full_sort;

void sym_lines_force_libdw(bool on)
{
	force_libdw = on;
}

void sym_lines_force_full_sort(bool on)
{
	force_full_sort = on;
}

/* ---- reading ---- */

struct rd {
	const uint8_t *p, *end;
	bool bad;
};

static uint64_t rd_fixed(struct rd *r, unsigned n)
{
	uint64_t v = 0;

	if ((size_t)(r->end - r->p) < n) {
		r->bad = true;
		r->p = r->end;
		return 0;
	}
	memcpy(&v, r->p, n); /* little-endian hosts only: checked at open */
	r->p += n;
	return v;
}

static inline uint64_t rd_uleb(struct rd *r)
{
	uint64_t v = 0;
	unsigned shift = 0;

	if (r->p < r->end && *r->p < 0x80) /* most are one byte */
		return *r->p++;
	while (r->p < r->end) {
		uint8_t b = *r->p++;

		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return shift > 70 ? (r->bad = true, v) : v;
	}
	r->bad = true;
	return v;
}

static int64_t rd_sleb(struct rd *r)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (r->p < r->end) {
		uint8_t b = *r->p++;

		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			if (shift > 70)
				r->bad = true;
			if (shift < 64 && (b & 0x40))
				v |= ~(uint64_t)0 << shift;
			return (int64_t)v;
		}
	}
	r->bad = true;
	return (int64_t)v;
}

static const char *rd_cstr(struct rd *r)
{
	const uint8_t *z = memchr(r->p, 0, (size_t)(r->end - r->p));
	const char *s = (const char *)r->p;

	if (!z) {
		r->bad = true;
		r->p = r->end;
		return NULL;
	}
	r->p = z + 1;
	return s;
}

static const char *str_at(const uint8_t *sec, size_t len, uint64_t off)
{
	if (!sec || off >= len || !memchr(sec + off, 0, len - off))
		return NULL;
	return (const char *)sec + off;
}

/* One value of a DWARF 5 entry format: a string (*s) or a number (*u); false when the form
 * is not one read here. */
static bool rd_form(struct sym_lines *L, struct rd *r, unsigned form, unsigned offsz,
		    const char **s, uint64_t *u)
{
	*s = NULL;
	*u = 0;
	switch (form) {
	case DW_FORM_string:
		*s = rd_cstr(r);
		return true;
	case DW_FORM_line_strp:
		*s = str_at(L->line_str, L->line_str_len, rd_fixed(r, offsz));
		return *s != NULL;
	case DW_FORM_strp:
		*s = str_at(L->str, L->str_len, rd_fixed(r, offsz));
		return *s != NULL;
	case DW_FORM_data1:
		*u = rd_fixed(r, 1);
		return true;
	case DW_FORM_data2:
		*u = rd_fixed(r, 2);
		return true;
	case DW_FORM_data4:
		*u = rd_fixed(r, 4);
		return true;
	case DW_FORM_data8:
		*u = rd_fixed(r, 8);
		return true;
	case DW_FORM_udata:
		*u = rd_uleb(r);
		return true;
	case DW_FORM_data16:
		rd_fixed(r, 8);
		rd_fixed(r, 8);
		return true;
	case DW_FORM_block: {
		uint64_t n = rd_uleb(r);

		if (n > (size_t)(r->end - r->p))
			return false;
		r->p += n;
		return true;
	}
	default:
		return false;
	}
}

/* ---- the program ---- */

struct hdr {
	unsigned version, offsz, addrsz;
	uint8_t min_len, max_ops, default_stmt, line_range, opcode_base;
	int8_t line_base;
	const uint8_t *std_len; /* indexed by opcode (entry 0 unused) */
	const char **dirs;
	size_t ndirs;
};

static int add_file(struct table *t, size_t *cap, const char *dir, const char *name)
{
	if (kp_grow((void **)&t->files, cap, t->nfiles + 1, sizeof(*t->files)))
		return -ENOMEM;
	t->files[t->nfiles++] = (struct lfile){ name[0] == '/' ? NULL : dir, name, NULL };
	return 0;
}

/* directories and files of the header; -ENOTSUP for what libdw alone should judge */
static int read_entries(struct sym_lines *L, struct rd *r, struct hdr *h, const char *comp_dir,
			struct table *t, size_t *fcap)
{
	size_t i, cap = 0;
	int err;

	if (h->version < 5) {
		if (kp_grow((void **)&h->dirs, &cap, 1, sizeof(*h->dirs)))
			return -ENOMEM;
		h->dirs[h->ndirs++] = comp_dir;
		while (r->p < r->end && *r->p) {
			const char *d = rd_cstr(r);

			if (!d || kp_grow((void **)&h->dirs, &cap, h->ndirs + 1, sizeof(*h->dirs)))
				return d ? -ENOMEM : -ENOTSUP;
			h->dirs[h->ndirs++] = d;
		}
		if (r->p >= r->end)
			return -ENOTSUP;
		r->p++;
		if ((err = add_file(t, fcap, NULL, "???")))
			return err;
		while (r->p < r->end && *r->p) {
			const char *name = rd_cstr(r);
			uint64_t di = rd_uleb(r);

			rd_uleb(r);
			rd_uleb(r);
			if (r->bad || !name || di >= h->ndirs)
				return -ENOTSUP;
			if ((err = add_file(t, fcap, h->dirs[di], name)))
				return err;
		}
		if (r->p >= r->end)
			return -ENOTSUP;
		r->p++;
		return 0;
	}
	for (int pass = 0; pass < 2; pass++) {
		unsigned nforms = (unsigned)rd_fixed(r, 1), desc[256], form[256];
		int path = -1, dir = -1;
		uint64_t n;

		for (i = 0; i < nforms; i++) {
			desc[i] = (unsigned)rd_uleb(r);
			form[i] = (unsigned)rd_uleb(r);
			if (desc[i] == DW_LNCT_path)
				path = (int)i;
			else if (pass && desc[i] == DW_LNCT_directory_index)
				dir = (int)i;
		}
		n = rd_uleb(r);
		if (r->bad || path < 0 || (pass && dir < 0) ||
		    n > (size_t)(r->end - r->p) / (nforms ? nforms : 1))
			return -ENOTSUP;
		if (!pass && n && kp_grow((void **)&h->dirs, &cap, n, sizeof(*h->dirs)))
			return -ENOMEM;
		for (; n; n--) {
			const char *name = NULL;
			uint64_t di = UINT64_MAX;

			for (i = 0; i < nforms; i++) {
				const char *s;
				uint64_t u;

				if (!rd_form(L, r, form[i], h->offsz, &s, &u) || r->bad)
					return -ENOTSUP;
				if ((int)i == path)
					name = s;
				else if ((int)i == dir)
					di = u;
			}
			if (!name)
				return -ENOTSUP;
			if (!pass) {
				h->dirs[h->ndirs++] = name;
				continue;
			}
			if (di >= h->ndirs)
				return -ENOTSUP;
			if ((err = add_file(t, fcap, h->dirs[di], name)))
				return err;
		}
	}
	if (!t->nfiles && (err = add_file(t, fcap, NULL, "???")))
		return err;
	return 0;
}

/* libdw's order: by address, an end of sequence before a row at the same address, then in
 * the program's order (0 here: the sorts below are stable) */
static int cmp_row(const struct row *x, const struct row *y)
{
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->end != y->end)
		return x->end ? -1 : 1;
	return 0;
}

/* a stable merge sort of the rows by cmp_row (rows of equal keys stay in program order) */
static int sort_rows(struct table *t)
{
	struct row *a = t->rows, *b = malloc(t->nrows * sizeof(*b)), *x;
	size_t w, i, n = t->nrows;

	if (!b)
		return -ENOMEM;
	for (w = 1; w < n; w *= 2) {
		for (i = 0; i < n; i += 2 * w) {
			size_t l = i, m = i + w < n ? i + w : n, r = m,
			       e = i + 2 * w < n ? i + 2 * w : n, o = i;

			while (l < m && r < e)
				b[o++] = cmp_row(&a[r], &a[l]) < 0 ? a[r++] : a[l++];
			while (l < m)
				b[o++] = a[l++];
			while (r < e)
				b[o++] = a[r++];
		}
		x = a;
		a = b;
		b = x;
	}
	if (a != t->rows) {
		free(t->rows);
		t->rows = a;
	} else {
		free(b);
	}
	return 0;
}

struct seq {
	const struct row *head;
	size_t first, n;
};

static int cmp_seq(const void *a, const void *b)
{
	const struct seq *x = a, *y = b;
	int c = cmp_row(x->head, y->head);

	return c ? c : x->first < y->first ? -1 : x->first > y->first;
}

/* Rows that are in order inside each sequence (the usual out-of-order table: one sequence per
 * function, in source order): sort the sequences by their first rows. Nonzero when the result
 * is still not in order (sequences that overlap), or on ENOMEM: then sort the rows. */
static int sort_sequences(struct table *t, const size_t *starts, size_t n)
{
	struct seq *v = malloc(n * sizeof(*v));
	struct row *out;
	size_t i, k = 0;

	if (!v)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		v[i] = (struct seq){ &t->rows[starts[i]], starts[i], 0 };
	for (i = 0; i < n; i++)
		v[i].n = (i + 1 < n ? v[i + 1].first : t->nrows) - v[i].first;
	out = malloc(t->nrows * sizeof(*out));
	if (!out) {
		free(v);
		return -ENOMEM;
	}
	qsort(v, n, sizeof(*v), cmp_seq);
	for (i = 0; i < n; i++) {
		int c = k ? cmp_row(&out[k - 1], &t->rows[v[i].first]) : -1;

		/* sequences that overlap, or rows of equal keys out of program order */
		if (c > 0 || (c == 0 && v[i - 1].first > v[i].first))
			break;
		memcpy(out + k, t->rows + v[i].first, v[i].n * sizeof(*out));
		k += v[i].n;
	}
	free(v);
	if (i < n) {
		free(out);
		return 1;
	}
	free(t->rows);
	t->rows = out;
	return 0;
}

static int push_start(size_t **v, size_t *n, size_t *cap, size_t at)
{
	if (*n == *cap && kp_grow((void **)v, cap, *n + 1, sizeof(**v)))
		return -ENOMEM;
	(*v)[(*n)++] = at;
	return 0;
}

/* Run the program of the unit at <off> into <t>. -ENOTSUP: leave it to libdw. */
static int run(struct sym_lines *L, uint64_t off, const char *comp_dir, unsigned addrsz,
	       struct table *t)
{
	struct hdr h = { .addrsz = addrsz };
	struct rd r = { L->line + off, L->line + L->line_len, false };
	const uint8_t *hdr_start;
	uint64_t len, hlen, addr = 0;
	int64_t line = 1;
	unsigned file = 1, op_index = 0, isa = 0, disc = 0, column = 0;
	size_t cap = 0, fcap = 0, i;
	bool sorted = true, inner_sorted = true;
	size_t seq_start = 0, *starts = NULL, nstarts = 0, scap = 0, k;
	int err;

	if (off >= L->line_len)
		return -ENOTSUP;
	len = rd_fixed(&r, 4);
	h.offsz = 4;
	if (len == 0xffffffff) {
		len = rd_fixed(&r, 8);
		h.offsz = 8;
	} else if (len >= 0xfffffff0) {
		return -ENOTSUP;
	}
	if (r.bad || len > (size_t)(r.end - r.p))
		return -ENOTSUP;
	r.end = r.p + len;
	h.version = (unsigned)rd_fixed(&r, 2);
	if (h.version < 2 || h.version > 5)
		return -ENOTSUP;
	if (h.version >= 5 && (rd_fixed(&r, 1) != addrsz || rd_fixed(&r, 1) != 0))
		return -ENOTSUP;
	hlen = rd_fixed(&r, h.offsz);
	hdr_start = r.p;
	h.min_len = (uint8_t)rd_fixed(&r, 1);
	h.max_ops = h.version >= 4 ? (uint8_t)rd_fixed(&r, 1) : 1;
	h.default_stmt = (uint8_t)rd_fixed(&r, 1);
	h.line_base = (int8_t)rd_fixed(&r, 1);
	h.line_range = (uint8_t)rd_fixed(&r, 1);
	h.opcode_base = (uint8_t)rd_fixed(&r, 1);
	if (r.bad || !h.max_ops || !h.line_range || h.opcode_base <= DW_LNE_set_discriminator ||
	    (size_t)(r.end - r.p) < (size_t)h.opcode_base - 1 || hlen > (size_t)(r.end - hdr_start))
		return -ENOTSUP;
	h.std_len = r.p - 1;
	r.p += h.opcode_base - 1;
	err = read_entries(L, &r, &h, comp_dir, t, &fcap);
	free(h.dirs);
	if (err)
		return err;
	if (r.bad || r.p != hdr_start + hlen) /* a CUBIN's extra word, or a bad header */
		return -ENOTSUP;
	(void)h.default_stmt;

#define STD_LEN(op, n)                    \
	do {                              \
		if (h.std_len[op] != (n)) \
			goto bad;         \
	} while (0)
#define ADVANCE(adv)                                                             \
	do {                                                                     \
		unsigned adv_ = (adv); /* 32-bit arithmetic, as libdw's */       \
		addr += (unsigned)(h.min_len * ((op_index + adv_) / h.max_ops)); \
		op_index = (op_index + adv_) % h.max_ops;                        \
	} while (0)

	while (r.p < r.end) {
		unsigned op = *r.p++;
		bool emit = false, end = false;

		if (op >= h.opcode_base) {
			line += h.line_base + (int)((op - h.opcode_base) % h.line_range);
			ADVANCE((op - h.opcode_base) / h.line_range);
			emit = true;
		} else if (op == 0) {
			unsigned elen, sub;

			if (r.end - r.p < 2)
				goto bad;
			elen = *r.p++;
			if ((size_t)(r.end - r.p) < elen)
				goto bad;
			sub = *r.p++;
			switch (sub) {
			case DW_LNE_end_sequence:
				emit = end = true;
				break;
			case DW_LNE_set_address:
				if (elen != addrsz + 1)
					goto bad;
				op_index = 0;
				addr = rd_fixed(&r, addrsz);
				break;
			case DW_LNE_define_file: {
				const char *name = rd_cstr(&r);

				(void)name;
				goto bad; /* DWARF 2 era: leave it to libdw */
			}
			case DW_LNE_set_discriminator:
				STD_LEN(DW_LNE_set_discriminator, 1);
				disc = (unsigned)rd_uleb(&r);
				break;
			case DW_LNE_NVIDIA_inlined_call:
			case DW_LNE_NVIDIA_set_function_name:
				goto bad;
			default:
				if (!elen)
					goto bad;
				r.p += elen - 1;
				break;
			}
		} else if (op <= DW_LNS_set_isa) {
			switch (op) {
			case DW_LNS_copy:
				STD_LEN(op, 0);
				emit = true;
				break;
			case DW_LNS_advance_pc:
				STD_LEN(op, 1);
				ADVANCE((unsigned)rd_uleb(&r));
				break;
			case DW_LNS_advance_line:
				STD_LEN(op, 1);
				line += (int)rd_sleb(&r);
				break;
			case DW_LNS_set_file:
				STD_LEN(op, 1);
				file = (unsigned)rd_uleb(&r);
				break;
			case DW_LNS_set_column:
				STD_LEN(op, 1);
				column = (unsigned)rd_uleb(&r);
				break;
			case DW_LNS_negate_stmt:
			case DW_LNS_set_basic_block:
			case DW_LNS_set_prologue_end:
			case DW_LNS_set_epilogue_begin:
				STD_LEN(op, 0);
				break;
			case DW_LNS_const_add_pc:
				STD_LEN(op, 0);
				ADVANCE((255u - h.opcode_base) / h.line_range);
				break;
			case DW_LNS_fixed_advance_pc:
				STD_LEN(op, 1);
				addr += rd_fixed(&r, 2);
				op_index = 0;
				break;
			case DW_LNS_set_isa:
				STD_LEN(op, 1);
				isa = (unsigned)rd_uleb(&r);
				break;
			}
		} else {
			for (i = h.std_len[op]; i > 0; i--)
				rd_uleb(&r);
		}
		if (r.bad)
			goto bad;
		if (!emit)
			continue;
		/* libdw refuses a table whose values do not fit its fields */
		if (line != (int32_t)line || column > 0xffff || isa > 0xff || disc >= (1u << 24))
			goto bad;
		if (t->nrows == cap) {
			/* a row takes at least one byte of the program: a third of its length
			 * is room for most (gcc's take 4 to 5), without zeroing what is not
			 * written yet */
			size_t want = cap ? cap * 2 : (size_t)(r.end - r.p) / 3 + 16;
			struct row *v = realloc(t->rows, want * sizeof(*v));

			if (!v)
				goto nomem;
			t->rows = v;
			cap = want;
		}
		if (file > 0x7fffffff)
			goto bad;
		t->rows[t->nrows] = (struct row){ addr, (int32_t)line, file, end };
		t->nrows++;
		if (end) {
			/* rows at the end's address (gcc writes some) come after the end in libdw's
			 * order: move the end before them, keeping the sequence in order */
			for (i = t->nrows - 1; i > seq_start && t->rows[i - 1].addr == addr; i--) {
				struct row tmp = t->rows[i - 1];

				t->rows[i - 1] = t->rows[i];
				t->rows[i] = tmp;
			}
			if (push_start(&starts, &nstarts, &scap, seq_start))
				goto nomem;
			seq_start = t->nrows;
		}
		disc = 0;
		if (end) {
			addr = 0;
			op_index = 0;
			file = 1;
			line = 1;
			column = 0;
			isa = 0;
		}
	}
#undef STD_LEN
#undef ADVANCE
	if (seq_start < t->nrows && push_start(&starts, &nstarts, &scap, seq_start)) {
		free(starts);
		return -ENOMEM;
	}
	for (i = 1, k = 1; i < t->nrows; i++) {
		bool head = k < nstarts && starts[k] == i;

		k += head;
		if (cmp_row(&t->rows[i - 1], &t->rows[i]) > 0) {
			sorted = false;
			/* out of order inside a sequence: only a full sort will do */
			inner_sorted &= head;
		}
	}
	if (force_full_sort ? sort_rows(t) :
			      !sorted && (!inner_sorted || sort_sequences(t, starts, nstarts)) &&
				      sort_rows(t))
		goto nomem;
	free(starts);
	if (t->nrows)
		t->rows[t->nrows - 1].end = 1; /* as libdw makes sure */
	return 0;
bad:
	free(starts);
	return -ENOTSUP;
nomem:
	free(starts);
	return -ENOMEM;
}

/* ---- tables ---- */

static struct sym_lines *lines_of(struct sym_file *f)
{
	struct sym_lines *L = f->lines;

	if (L)
		return L;
	L = calloc(1, sizeof(*L));
	if (!L)
		return NULL;
	f->lines = L;
	L->line = f->sec.line.p;
	L->line_len = f->sec.line.len;
	L->line_str = f->sec.line_str.p;
	L->line_str_len = f->sec.line_str.len;
	L->str = f->sec.str.p;
	L->str_len = f->sec.str.len;
	L->usable = L->line && f->sec.little;
	return L;
}

static void table_free(struct table *t)
{
	if (t) {
		free(t->rows);
		free(t->files);
		free(t);
	}
}

/* The table of <cudie>, read now if not yet; NULL on ENOMEM; t->libdw when libdw reads it */
static struct table *table_of(struct sym_file *f, Dwarf_Die *cudie)
{
	struct sym_lines *L = lines_of(f);
	Dwarf_Attribute a;
	Dwarf_Word off;
	uint8_t addrsz = 0;
	Dwarf_Half version;
	uint8_t unit_type = 0;
	struct table *t;
	int err;

	if (!L)
		return NULL;
	switch (sym_dies_cu_stmt_list(f, cudie, &off)) {
	case 1:
		break;
	case 0:
		off = UINT64_MAX; /* libdw finds no table */
		break;
	default:
		if (!dwarf_attr(cudie, DW_AT_stmt_list, &a) || dwarf_formudata(&a, &off))
			off = UINT64_MAX;
	}
	t = sym_hmap_get(&L->tables, off, 1);
	if (t)
		return t;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	if (off == UINT64_MAX) {
		t->bad = true;
	} else if (force_libdw || !L->usable ||
		   dwarf_cu_info(cudie->cu, &version, &unit_type, NULL, NULL, NULL, &addrsz,
				 NULL) ||
		   (unit_type != DW_UT_compile && unit_type != DW_UT_partial) ||
		   (addrsz != 4 && addrsz != 8)) {
		t->libdw = true;
	} else {
		const char *dir;

		if (sym_dies_cu_comp_dir(f, cudie, &dir) < 0)
			dir = dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &a));
		err = run(L, off, dir, addrsz, t);
		if (err == -ENOMEM) {
			table_free(t);
			return NULL;
		}
		if (err) {
			free(t->rows);
			free(t->files);
			memset(t, 0, sizeof(*t));
			t->libdw = true;
		}
	}
	if (sym_hmap_put(&L->tables, off, 1, t)) {
		table_free(t);
		return NULL;
	}
	return t;
}

/* the name libdw gives file <i>, NULL when there is none; *oom on ENOMEM */
static const char *file_name(struct table *t, size_t i, bool *oom)
{
	struct lfile *lf;
	char *s;

	if (i >= t->nfiles)
		return NULL;
	lf = &t->files[i];
	if (lf->joined || !lf->dir)
		return lf->joined ? lf->joined : lf->name;
	if (asprintf(&s, "%s/%s", lf->dir, lf->name) < 0) {
		*oom = true;
		return NULL;
	}
	lf->joined = sym_intern(s);
	free(s);
	if (!lf->joined)
		*oom = true;
	return lf->joined;
}

int sym_lines_find(struct sym_file *f, Dwarf_Die *cudie, uint64_t vaddr, const char **file,
		   int *line)
{
	struct table *t = table_of(f, cudie);
	size_t l = 0, u;
	bool oom = false;
	const struct row *r;

	*file = NULL;
	*line = 0;
	if (!t)
		return -ENOMEM;
	if (t->libdw)
		return -ENOTSUP;
	if (t->bad || !t->nrows)
		return -ENOENT;
	u = t->nrows - 1;
	while (l < u) { /* libdw's search: the last row at or below vaddr */
		size_t idx = u - (u - l) / 2;

		if (vaddr < t->rows[idx].addr)
			u = idx - 1;
		else
			l = idx;
	}
	r = &t->rows[l];
	if (r->end || r->addr > vaddr)
		return -ENOENT;
	*line = r->line;
	*file = file_name(t, r->file, &oom);
	return oom ? -ENOMEM : 0;
}

int sym_lines_file(struct sym_file *f, Dwarf_Die *cudie, size_t idx, const char **file)
{
	struct table *t = table_of(f, cudie);
	bool oom = false;

	*file = NULL;
	if (!t)
		return -ENOMEM;
	if (t->libdw)
		return -ENOTSUP;
	if (t->bad)
		return -ENOENT;
	*file = file_name(t, idx, &oom);
	return oom ? -ENOMEM : *file ? 0 : -ENOENT;
}

static bool drop_table(void *val, void *ctx)
{
	(void)ctx;
	table_free(val);
	return true;
}

void sym_lines_free(struct sym_file *f)
{
	struct sym_lines *L = f->lines;

	if (!L)
		return;
	sym_hmap_filter(&L->tables, drop_table, NULL);
	sym_hmap_free(&L->tables);
	free(L);
	f->lines = NULL;
}
