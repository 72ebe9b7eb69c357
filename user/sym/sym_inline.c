/*
 * sym_inline.c - the functions at an address: the inlined calls around it and the function
 * they were inlined into, each with its name, line and the line where it starts (libdw).
 *
 * A unit's function scopes (subprograms and inlined subroutines) are read once, the first time
 * an address falls in that unit: one entry per DIE (its enclosing scope in the DIE tree, its
 * DW_AT_call_file/call_line, its DW_AT_decl_line) and one per address range, sorted by start,
 * outer before inner, each range knowing the range that contains it. The innermost scope
 * around an address is then the last range starting at or before it, or the first of its
 * containers that reaches it: a binary search and a short walk up, where dwarf_getscopes would
 * read the unit's tree again for every address. The chain of DIEs from there up to the
 * subprogram gives the frames; names are read when a chain first needs them.
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
	bool named; /* name and mangled read */
	const char *name, *mangled;
};

struct scope_range {
	uint64_t start, end;
	long die;
	long parent; /* the range that contains it, -1 */
	unsigned depth;
};

struct unit {
	struct scope_die *dies;
	size_t ndies, cap_dies;
	struct scope_range *r;
	size_t nr, cap_r;
	Dwarf_Files *files; /* of the line program, for call_file; NULL until needed */
	size_t nfiles;
	bool files_tried;
};

static unsigned units_parsed;

unsigned sym_inline_units_parsed(void)
{
	return units_parsed;
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
 * calls); the other DIEs (variables, parameters, most types) are not walked into. */
static bool may_hold_scopes(int tag)
{
	switch (tag) {
	case DW_TAG_compile_unit:
	case DW_TAG_partial_unit:
	case DW_TAG_namespace:
	case DW_TAG_module:
	case DW_TAG_subprogram:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_lexical_block:
	case DW_TAG_try_block:
	case DW_TAG_catch_block:
	case DW_TAG_structure_type:
	case DW_TAG_class_type:
	case DW_TAG_union_type:
		return true;
	default:
		return false;
	}
}

static int add_scopes(Dwarf_Die *die, unsigned depth, long fn, struct unit *u)
{
	Dwarf_Die child;
	int tag = dwarf_tag(die);

	if (depth > MAX_DEPTH)
		return 0;
	if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
		Dwarf_Addr base, start, end;
		ptrdiff_t off = 0;
		struct scope_die *d;
		int line = 0;
		long idx;

		if (kp_grow((void **)&u->dies, &u->cap_dies, u->ndies + 1, sizeof(*u->dies)))
			return -ENOMEM;
		idx = (long)u->ndies++;
		d = &u->dies[idx];
		memset(d, 0, sizeof(*d));
		d->off = dwarf_dieoffset(die);
		d->parent = fn;
		if (dwarf_decl_line(die, &line) == 0 && line > 0)
			d->decl_line = (unsigned)line;
		d->inlined = tag == DW_TAG_inlined_subroutine;
		if (d->inlined) {
			d->call_line = udata(die, DW_AT_call_line);
			d->call_file = udata(die, DW_AT_call_file);
		}
		while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0) {
			if (end <= start)
				continue;
			if (kp_grow((void **)&u->r, &u->cap_r, u->nr + 1, sizeof(*u->r)))
				return -ENOMEM;
			u->r[u->nr++] = (struct scope_range){ start, end, idx, -1, depth };
		}
		fn = idx;
	} else if (!may_hold_scopes(tag)) {
		return 0;
	}
	if (dwarf_child(die, &child) != 0)
		return 0;
	do {
		int err = add_scopes(&child, depth + 1, fn, u);

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

static void unit_free(struct unit *u)
{
	if (!u)
		return;
	free(u->dies);
	free(u->r);
	free(u);
}

static struct unit *unit_of(struct sym_file *f, Dwarf_Die *cudie)
{
	uint64_t key = dwarf_dieoffset(cudie);
	struct unit *u = sym_hmap_get(&f->units, key, 0);
	long *stack = NULL;
	size_t i, depth = 0;

	if (u)
		return u;
	u = calloc(1, sizeof(*u));
	if (!u || add_scopes(cudie, 0, -1, u))
		goto fail;
	if (u->nr)
		qsort(u->r, u->nr, sizeof(*u->r), cmp_range);
	stack = malloc((u->nr + 1) * sizeof(*stack));
	if (!stack)
		goto fail;
	for (i = 0; i < u->nr; i++) {
		while (depth && u->r[stack[depth - 1]].end <= u->r[i].start)
			depth--;
		/* a partial overlap (not nested): no container */
		u->r[i].parent =
			depth && u->r[stack[depth - 1]].end >= u->r[i].end ? stack[depth - 1] : -1;
		stack[depth++] = (long)i;
	}
	free(stack);
	stack = NULL;
	if (sym_hmap_put(&f->units, key, 0, u))
		goto fail;
	units_parsed++;
	return u;
fail:
	free(stack);
	unit_free(u);
	return NULL;
}

/* the innermost range around <vaddr>, -1 when none */
static long innermost(const struct unit *u, uint64_t vaddr)
{
	size_t lo = 0, hi = u->nr;
	long i;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (u->r[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = (long)lo - 1; i >= 0 && u->r[i].end <= vaddr; i = u->r[i].parent)
		;
	return i;
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
static const char *call_file(struct unit *u, Dwarf_Die *cudie, unsigned idx)
{
	const char *src;

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

int sym_dwarf_frames(struct sym_file *f, uint64_t vaddr, struct sym_frame *out, unsigned max,
		     unsigned *n)
{
	Dwarf_Die cudie;
	struct unit *u;
	long r, d, prev = -1, fdie[SYM_MAX_INLINE];
	unsigned i, k = 0;
	int err;

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
	r = innermost(u, vaddr);
	if (r < 0) {
		if (err)
			return err;
		*n = 1; /* a line but no function scope */
		return 0;
	}
	for (d = u->r[r].die; d >= 0 && k < max; prev = d, d = u->dies[d].parent) {
		struct scope_die *sd = &u->dies[d];
		struct sym_frame *fr = &out[k];

		if (k) {
			memset(fr, 0, sizeof(*fr));
			fr->line = u->dies[prev].call_line;
			fr->file = u->dies[prev].call_line ?
					   call_file(u, &cudie, u->dies[prev].call_file) :
					   NULL;
		}
		if (name_die(f, sd))
			return -ENOMEM;
		fr->name = sd->name;
		fr->mangled = sd->mangled;
		fr->decl_line = sd->decl_line;
		fdie[k++] = d;
		if (!sd->inlined)
			break;
	}
	/* the range of each frame's DIE that holds the address: the chain of ranges from the
	 * innermost one up holds it */
	for (; r >= 0; r = u->r[r].parent)
		for (i = 0; i < k; i++)
			if (fdie[i] == u->r[r].die && !out[i].end && u->r[r].start <= vaddr &&
			    vaddr < u->r[r].end) {
				out[i].start = u->r[r].start;
				out[i].end = u->r[r].end;
			}
	*n = k;
	return 0;
}

int sym_dwarf_decl_line(struct sym_file *f, uint64_t vaddr, unsigned *line)
{
	Dwarf_Die cudie;
	struct unit *u;
	long r;

	*line = 0;
	if (!sym_dwarf_find_cu(f, vaddr, &cudie))
		return -ENOENT;
	u = unit_of(f, &cudie);
	if (!u)
		return -ENOMEM;
	r = innermost(u, vaddr);
	if (r < 0 || !u->dies[u->r[r].die].decl_line)
		return -ENOENT;
	*line = u->dies[u->r[r].die].decl_line;
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
