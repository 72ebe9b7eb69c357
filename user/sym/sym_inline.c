/*
 * sym_inline.c - the functions at an address: the inlined calls around it and the function
 * they were inlined into, each with its name, line and the line where it starts (libdw).
 *
 * Read as little as an address needs. The first time an address falls in a unit, its
 * functions are listed (subprograms with code, with their ranges; the DIEs inside them are
 * skipped); the first time an address falls in a function, the scopes inside it (inlined
 * subroutines, through lexical blocks) are read. Each list is sorted by start, outer before
 * inner, each range knowing the range that contains it: the innermost scope around an
 * address is the last range starting at or before it, or the first of its containers that
 * reaches it - a binary search and a short walk up, where dwarf_getscopes would read the
 * unit's tree again for every address. The chain of DIEs from there up to the subprogram gives
 * the frames (DW_AT_call_file/call_line of each inlined call, DW_AT_decl_line of each
 * function); names are read when a chain first needs them. An address outside every listed
 * function (a GNU C nested function) makes the whole unit's tree be read once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <elfutils/libdw.h>
#include <dwarf.h>

#include "core/core.h"
#include "sym.h"

#define MAX_DEPTH 128 /* a corrupt or absurd tree */

struct scope_die {
	Dwarf_Off off;
	long parent; /* the enclosing subprogram or inlined call, -1 */
	unsigned decl_line;
	unsigned call_line, call_file; /* inlined: where it was called */
	bool inlined;
	bool decl_read; /* decl_line read (sym_dies.c's DIEs have it read when first needed) */
	bool named; /* name and mangled read */
	const char *name, *mangled;
};

struct scope_range {
	uint64_t start, end;
	long die;
	long parent; /* the range of the same list that contains it, -1 */
	unsigned depth;
};

/* ranges, sorted, with their containers */
struct scope_set {
	struct scope_range *r;
	size_t n, cap;
};

struct unit {
	struct scope_die *dies;
	size_t ndies, cap_dies;
	struct scope_set top; /* the functions, their DIEs not read inside */
	struct scope_set **inner; /* per DIE (of a function of top): its scopes, once read */
	size_t cap_inner;
	struct scope_set *all; /* the whole tree, when an address was in no function */
	Dwarf_Files *files; /* of the line program, for call_file; NULL until needed */
	size_t nfiles;
	bool files_tried;
	bool c; /* a C unit: its structs hold no functions */
	bool scanned; /* its DIEs read by sym_dies.c */
};

static unsigned units_parsed, units_scanned;

unsigned sym_inline_units_parsed(void)
{
	return units_parsed;
}

unsigned sym_inline_units_scanned(void)
{
	return units_scanned;
}

static unsigned udata(Dwarf_Die *die, int name)
{
	Dwarf_Attribute a;
	Dwarf_Word w;

	if (!dwarf_attr(die, name, &a) || dwarf_formudata(&a, &w) || w > UINT32_MAX)
		return 0;
	return (unsigned)w;
}

/* Scopes can hold functions (C++ classes and namespaces hold definitions; blocks hold inlined
 * calls); the other DIEs (variables, parameters, most types) are not walked into, nor C's
 * structs (u->c: a C unit). */
static bool may_hold_scopes(const struct unit *u, int tag)
{
	switch (tag) {
	case DW_TAG_structure_type:
	case DW_TAG_class_type:
	case DW_TAG_union_type:
		return !u->c;
	case DW_TAG_compile_unit:
	case DW_TAG_partial_unit:
	case DW_TAG_namespace:
	case DW_TAG_module:
	case DW_TAG_subprogram:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_lexical_block:
	case DW_TAG_try_block:
	case DW_TAG_catch_block:
		return true;
	default:
		return false;
	}
}

/* Record the scopes of the tree at <die> into <set>: with <lazy>, a subprogram's own DIEs
 * are not walked (its inner scopes are read when an address falls in it). */
/* Record a subprogram or inlined call <die> (its DIE into u->dies, its ranges into <set>),
 * unless it is a subprogram without code. 0 or -ENOMEM. */
static int add_one(Dwarf_Die *die, int tag, unsigned depth, long fn, struct unit *u,
		   struct scope_set *set)
{
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;
	struct scope_die *d;
	int line = 0;
	long idx;
	bool any = false;

	if (kp_grow((void **)&u->dies, &u->cap_dies, u->ndies + 1, sizeof(*u->dies)))
		return -ENOMEM;
	idx = (long)u->ndies++;
	d = &u->dies[idx];
	memset(d, 0, sizeof(*d));
	d->off = dwarf_dieoffset(die);
	d->parent = fn;
	if (dwarf_decl_line(die, &line) == 0 && line > 0)
		d->decl_line = (unsigned)line;
	d->decl_read = true;
	d->inlined = tag == DW_TAG_inlined_subroutine;
	if (d->inlined) {
		d->call_line = udata(die, DW_AT_call_line);
		d->call_file = udata(die, DW_AT_call_file);
	}
	while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0) {
		if (end <= start)
			continue;
		if (kp_grow((void **)&set->r, &set->cap, set->n + 1, sizeof(*set->r)))
			return -ENOMEM;
		set->r[set->n++] = (struct scope_range){ start, end, idx, -1, depth };
		any = true;
	}
	if (!any && tag == DW_TAG_subprogram)
		u->ndies--; /* a declaration, or an abstract instance: no code */
	return 0;
}

static int add_scopes(Dwarf_Die *die, unsigned depth, long fn, bool lazy, struct unit *u,
		      struct scope_set *set)
{
	Dwarf_Die child;
	int tag = dwarf_tag(die);

	if (depth > MAX_DEPTH)
		return 0;
	if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
		size_t before = u->ndies;

		if (add_one(die, tag, depth, fn, u, set))
			return -ENOMEM;
		if (u->ndies == before)
			return 0; /* no code: not walked into */
		if (lazy && tag == DW_TAG_subprogram)
			return 0;
		fn = (long)before;
	} else if (!may_hold_scopes(u, tag)) {
		return 0;
	}
	if (dwarf_child(die, &child) != 0)
		return 0;
	do {
		int err = add_scopes(&child, depth + 1, fn, lazy, u, set);

		if (err)
			return err;
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

static int cmp_range(const void *a, const void *b)
{
	const struct scope_range *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1; /* the container first */
	return x->depth < y->depth ? -1 : x->depth > y->depth;
}

static void set_free(struct scope_set *set)
{
	if (set) {
		free(set->r);
		free(set);
	}
}

static void unit_free(struct unit *u)
{
	size_t i;

	if (!u)
		return;
	for (i = 0; i < u->cap_inner; i++)
		set_free(u->inner[i]);
	free(u->inner);
	set_free(u->all);
	free(u->top.r);
	free(u->dies);
	free(u);
}

/* sort a list and link each range to the one that contains it */
static int finish_set(struct scope_set *set)
{
	long *stack;
	size_t i, depth = 0;

	if (!set->n)
		return 0;
	qsort(set->r, set->n, sizeof(*set->r), cmp_range);
	stack = malloc(set->n * sizeof(*stack));
	if (!stack)
		return -ENOMEM;
	for (i = 0; i < set->n; i++) {
		while (depth && set->r[stack[depth - 1]].end <= set->r[i].start)
			depth--;
		/* a partial overlap (not nested): no container */
		set->r[i].parent = depth && set->r[stack[depth - 1]].end >= set->r[i].end ?
					   stack[depth - 1] :
					   -1;
		stack[depth++] = (long)i;
	}
	free(stack);
	return 0;
}

/* ---- the whole unit in one pass (sym_dies.c), the same scopes add_scopes would list ---- */

struct walk {
	struct sym_file *f;
	struct unit *u;
	struct scope_set *set;
	bool lazy; /* subprograms not walked into (listing a unit's functions) */
	long fn[MAX_DEPTH + 2]; /* per depth: the function its DIEs are in */
};

/* a subprogram or inlined call whose attributes sym_dies.c read: its DIE and range as
 * add_scopes records them; the DIE's index, -1 for a subprogram without code */
static long add_plain(struct walk *w, const struct sym_die_attrs *a, long fn)
{
	struct unit *u = w->u;
	struct scope_die *d;
	uint64_t end = a->high_is_offset ? a->low + a->high : a->high;
	long idx;

	if (a->tag == DW_TAG_subprogram && !(a->has_low && a->has_high && end > a->low))
		return -1;
	if (u->ndies == u->cap_dies &&
	    kp_grow((void **)&u->dies, &u->cap_dies, u->ndies + 1, sizeof(*u->dies)))
		return -ENOMEM;
	idx = (long)u->ndies++;
	d = &u->dies[idx];
	memset(d, 0, sizeof(*d));
	d->off = a->off;
	d->parent = fn;
	d->inlined = a->tag == DW_TAG_inlined_subroutine;
	if (d->inlined) {
		d->call_line = a->call_line > UINT32_MAX ? 0 : (unsigned)a->call_line;
		d->call_file = a->call_file > UINT32_MAX ? 0 : (unsigned)a->call_file;
	}
	if (a->has_low && a->has_high && end > a->low) {
		struct scope_set *set = w->set;

		if (set->n == set->cap &&
		    kp_grow((void **)&set->r, &set->cap, set->n + 1, sizeof(*set->r)))
			return -ENOMEM;
		set->r[set->n++] = (struct scope_range){ a->low, end, idx, -1, a->depth };
	}
	return idx;
}

static int visit_die(void *ctx, const struct sym_die_attrs *a)
{
	struct walk *w = ctx;
	long fn = a->depth ? w->fn[a->depth] : -1, idx;

	if (a->depth > MAX_DEPTH)
		return 0;
	if (!a->wanted) {
		if (!may_hold_scopes(w->u, a->tag))
			return 0;
		w->fn[a->depth + 1] = fn;
		return 1;
	}
	if (a->odd || (a->has_ranges && !(a->has_low && a->has_high))) {
		/* forms read by libdw: this DIE as add_scopes reads it */
		size_t before = w->u->ndies;
		Dwarf_Die die;

		if (!dwarf_offdie(w->f->dw, a->off, &die))
			return -EINVAL;
		if (add_one(&die, a->tag, a->depth, fn, w->u, w->set))
			return -ENOMEM;
		idx = w->u->ndies > before ? (long)before : -1;
	} else {
		idx = add_plain(w, a, fn);
		if (idx == -ENOMEM)
			return -ENOMEM;
	}
	if (idx < 0 || (w->lazy && a->tag == DW_TAG_subprogram))
		return 0; /* without code, or read when an address falls in it */
	w->fn[a->depth + 1] = idx;
	return 1;
}

/* Walk (sym_dies.c) the unit's top (lazy: its functions) or the children of function <d> at
 * depth 1 into <set>. -ENOTSUP/-EINVAL (the DIEs recorded taken back): ask libdw. */
static int scan(struct sym_file *f, Dwarf_Die *cudie, struct unit *u, long d, struct scope_set *set)
{
	struct walk *w = malloc(sizeof(*w));
	size_t before = u->ndies;
	int err;

	if (!w)
		return -ENOMEM;
	w->f = f;
	w->u = u;
	w->set = set;
	w->lazy = d < 0;
	if (d < 0) {
		err = sym_dies_walk(f, cudie, visit_die, w);
	} else {
		w->fn[1] = d;
		err = sym_dies_walk_children(f, cudie, u->dies[d].off, 1, visit_die, w);
	}
	free(w);
	if (!err)
		err = finish_set(set);
	if (err) {
		free(set->r);
		memset(set, 0, sizeof(*set));
		u->ndies = before;
	}
	return err;
}

static struct unit *unit_of(struct sym_file *f, Dwarf_Die *cudie)
{
	uint64_t key = dwarf_dieoffset(cudie);
	struct unit *u = sym_hmap_get(&f->units, key, 0);
	int err = -ENOMEM;

	if (u)
		return u;
	u = calloc(1, sizeof(*u));
	if (u) {
		int lang;

		if (sym_dies_cu_lang(f, cudie, &lang) < 0)
			lang = dwarf_srclang(cudie);

		u->c = lang == DW_LANG_C89 || lang == DW_LANG_C || lang == DW_LANG_C99 ||
		       lang == DW_LANG_C11;
		err = scan(f, cudie, u, -1, &u->top);
		u->scanned = !err;
		units_scanned += u->scanned;
		if (err == -ENOTSUP || err == -EINVAL) /* libdw lists its functions */
			err = add_scopes(cudie, 0, -1, true, u, &u->top) || finish_set(&u->top) ?
				      -ENOMEM :
				      0;
	}
	if (err || sym_hmap_put(&f->units, key, 0, u)) {
		unit_free(u);
		return NULL;
	}
	units_parsed++;
	return u;
}

/* the innermost range of <set> around <vaddr>, -1 when none */
static long search(const struct scope_set *set, uint64_t vaddr)
{
	size_t lo = 0, hi = set->n;
	long i;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (set->r[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = (long)lo - 1; i >= 0 && set->r[i].end <= vaddr; i = set->r[i].parent)
		;
	return i;
}

/* the scopes inside function <d> (a DIE of u->top), read now if not yet */
static struct scope_set *inner_of(struct sym_file *f, Dwarf_Die *cudie, struct unit *u, long d)
{
	struct scope_set *set;
	Dwarf_Die die, child;
	size_t need = (size_t)d + 1;

	if (need > u->cap_inner) {
		struct scope_set **v = realloc(u->inner, need * 2 * sizeof(*v));

		if (!v)
			return NULL;
		memset(v + u->cap_inner, 0, (need * 2 - u->cap_inner) * sizeof(*v));
		u->inner = v;
		u->cap_inner = need * 2;
	}
	if (u->inner[d])
		return u->inner[d];
	set = calloc(1, sizeof(*set));
	if (!set)
		return NULL;
	if (u->scanned) {
		int err = scan(f, cudie, u, d, set);

		if (!err) {
			u->inner[d] = set;
			return set;
		}
		if (err == -ENOMEM)
			goto fail;
	}
	if (!dwarf_offdie(f->dw, u->dies[d].off, &die))
		goto fail;
	if (dwarf_child(&die, &child) == 0) {
		do {
			if (add_scopes(&child, 1, d, false, u, set))
				goto fail;
		} while (dwarf_siblingof(&child, &child) == 0);
	}
	if (finish_set(set))
		goto fail;
	u->inner[d] = set;
	return set;
fail:
	set_free(set);
	return NULL;
}

/* The scopes around <vaddr>, innermost first: *chain gets up to <max> ranges (of the sets
 * they belong to, copied), the last of them a function's. 0 with *n, -ENOENT, -ENOMEM. */
static int around(struct sym_file *f, Dwarf_Die *cudie, struct unit *u, uint64_t vaddr,
		  struct scope_range *chain, unsigned max, unsigned *n)
{
	const struct scope_set *set;
	long r, top;

	*n = 0;
	top = search(&u->top, vaddr);
	if (top < 0) {
		/* in no function listed: the whole tree, once */
		if (!u->all) {
			u->all = calloc(1, sizeof(*u->all));
			if (!u->all || add_scopes(cudie, 0, -1, false, u, u->all) ||
			    finish_set(u->all))
				return -ENOMEM;
		}
		set = u->all;
		r = search(set, vaddr);
	} else {
		set = inner_of(f, cudie, u, u->top.r[top].die);
		if (!set)
			return -ENOMEM;
		r = search(set, vaddr);
	}
	for (; r >= 0 && *n < max; r = set->r[r].parent)
		chain[(*n)++] = set->r[r];
	if (top >= 0 && *n < max)
		chain[(*n)++] = u->top.r[top];
	return *n ? 0 : -ENOENT;
}

/* DW_AT_decl_line of <d> (through its abstract origin), read now if not yet */
static unsigned decl_of(struct sym_file *f, struct scope_die *d)
{
	Dwarf_Die die;
	int line = 0;

	if (!d->decl_read) {
		d->decl_read = true;
		if (dwarf_offdie(f->dw, d->off, &die) && dwarf_decl_line(&die, &line) == 0 &&
		    line > 0)
			d->decl_line = (unsigned)line;
	}
	return d->decl_line;
}

static int name_die(struct sym_file *f, struct scope_die *d)
{
	Dwarf_Attribute a;
	Dwarf_Die die;
	const char *link = NULL, *name = NULL;
	char *shown;

	if (d->named)
		return 0;
	d->named = true;
	if (!dwarf_offdie(f->dw, d->off, &die))
		return 0;
	if (dwarf_attr_integrate(&die, DW_AT_linkage_name, &a) ||
	    dwarf_attr_integrate(&die, DW_AT_MIPS_linkage_name, &a))
		link = dwarf_formstring(&a);
	name = dwarf_diename(&die);
	if (!link && !name)
		return 0;
	d->mangled = sym_intern(link ? link : name);
	if (!d->mangled)
		return -ENOMEM;
	shown = link ? sym_display_name(link) : NULL;
	d->name = shown ? sym_intern(shown) : link ? d->mangled : sym_intern(name);
	free(shown);
	return d->name ? 0 : -ENOMEM;
}

/* the source file of a DW_AT_call_file index of the unit, NULL when unknown */
static const char *call_file(struct sym_file *f, struct unit *u, Dwarf_Die *cudie, unsigned idx)
{
	const char *src;

	switch (sym_lines_file(f, cudie, idx, &src)) {
	case 0:
		return sym_dwarf_full_path(cudie, src);
	case -ENOTSUP:
		break; /* libdw reads this table */
	default:
		return NULL;
	}
	if (!u->files_tried) {
		u->files_tried = true;
		if (dwarf_getsrcfiles(cudie, &u->files, &u->nfiles))
			u->files = NULL;
	}
	if (!u->files || idx >= u->nfiles)
		return NULL;
	src = dwarf_filesrc(u->files, idx, NULL, NULL);
	return src ? sym_dwarf_full_path(cudie, src) : NULL;
}

#define MAX_CHAIN (2 * SYM_MAX_INLINE) /* ranges around an address: scopes and blocks */

int sym_dwarf_frames(struct sym_file *f, uint64_t vaddr, struct sym_frame *out, unsigned max,
		     unsigned *n)
{
	struct scope_range chain[MAX_CHAIN];
	long d, prev = -1, fdie[SYM_MAX_INLINE];
	unsigned i, c, nchain, k = 0;
	Dwarf_Die cudie;
	struct unit *u;
	int err, r;

	*n = 0;
	if (max > SYM_MAX_INLINE)
		max = SYM_MAX_INLINE;
	if (!max || !sym_dwarf_find_cu(f, vaddr, &cudie))
		return -ENOENT;
	memset(&out[0], 0, sizeof(out[0]));
	err = sym_dwarf_line(f, vaddr, &out[0].file, &out[0].line);
	if (err == -ENOMEM)
		return err;
	u = unit_of(f, &cudie);
	if (!u)
		return -ENOMEM;
	r = around(f, &cudie, u, vaddr, chain, MAX_CHAIN, &nchain);
	if (r == -ENOMEM)
		return r;
	if (r) {
		if (err)
			return err;
		*n = 1; /* a line but no function scope */
		return 0;
	}
	for (d = chain[0].die; d >= 0 && k < max; prev = d, d = u->dies[d].parent) {
		struct scope_die *sd = &u->dies[d];
		struct sym_frame *fr = &out[k];

		if (k) {
			memset(fr, 0, sizeof(*fr));
			fr->line = u->dies[prev].call_line;
			fr->file = u->dies[prev].call_line ?
					   call_file(f, u, &cudie, u->dies[prev].call_file) :
					   NULL;
		}
		if (name_die(f, sd))
			return -ENOMEM;
		fr->name = sd->name;
		fr->mangled = sd->mangled;
		fr->decl_line = decl_of(f, sd);
		fdie[k++] = d;
		if (!sd->inlined)
			break;
	}
	/* the range of each frame's DIE that holds the address: in the chain around it */
	for (c = 0; c < nchain; c++)
		for (i = 0; i < k; i++)
			if (fdie[i] == chain[c].die && !out[i].end) {
				out[i].start = chain[c].start;
				out[i].end = chain[c].end;
			}
	*n = k;
	return 0;
}

int sym_dwarf_decl_line(struct sym_file *f, uint64_t vaddr, unsigned *line)
{
	struct scope_range chain[MAX_CHAIN];
	Dwarf_Die cudie;
	struct unit *u;
	unsigned n;
	int err;

	*line = 0;
	if (!sym_dwarf_find_cu(f, vaddr, &cudie))
		return -ENOENT;
	u = unit_of(f, &cudie);
	if (!u)
		return -ENOMEM;
	err = around(f, &cudie, u, vaddr, chain, 1, &n);
	if (err)
		return err;
	*line = decl_of(f, &u->dies[chain[0].die]);
	if (!*line)
		return -ENOENT;
	return 0;
}

static bool free_unit(void *val, void *ctx)
{
	(void)ctx;
	unit_free(val);
	return true;
}

void sym_inline_free(struct sym_file *f)
{
	sym_hmap_filter(&f->units, free_unit, NULL);
	sym_hmap_free(&f->units);
}
