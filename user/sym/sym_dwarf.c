/*
 * sym_dwarf.c - source file and line of an address, from the DWARF of a file (libdw).
 *
 * .debug_aranges is optional (clang does not emit it), so the address ranges of every
 * compile unit are read once into a sorted table; a lookup is then a binary search for the
 * unit and libdw's own search in that unit's line table (parsed once per unit, by libdw).
 * The line a function starts on (Symbol.firstLine) is the DW_AT_decl_line of the innermost
 * function scope around the address, as libkperf's symbolizer reports it; each unit's function
 * scopes are read once into a table.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <elfutils/libdw.h>
#include <dwarf.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "sym.h"

#define BACKWARD_SCAN 16 /* overlapping unit ranges are rare: look at a few before */

static int cmp_range(const void *a, const void *b)
{
	const struct sym_cu_range *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

int sym_dwarf_index(struct sym_file *f)
{
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Half version;
	uint8_t unit_type;
	Dwarf_Die cudie, subdie;
	struct sym_cu_range *v = NULL;
	size_t n = 0, cap = 0;
	int r;

	while ((r = dwarf_get_units(f->dw, cu, &next, &version, &unit_type, &cudie, &subdie)) ==
	       0) {
		Dwarf_Addr base, start, end;
		ptrdiff_t off = 0;

		cu = next;
		if (unit_type != DW_UT_compile && unit_type != DW_UT_skeleton &&
		    unit_type != DW_UT_partial)
			continue;
		while ((off = dwarf_ranges(&cudie, off, &base, &start, &end)) > 0) {
			if (end <= start)
				continue;
			if (kp_grow((void **)&v, &cap, n + 1, sizeof(*v))) {
				free(v);
				return -ENOMEM;
			}
			v[n].start = start;
			v[n].end = end;
			v[n].cu_off = dwarf_dieoffset(&cudie);
			n++;
		}
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_range);
	f->cus = v;
	f->ncus = n;
	return 0;
}

static bool find_cu(struct sym_file *f, uint64_t addr, Dwarf_Die *cudie)
{
	size_t lo = 0, hi = f->ncus, i, k;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->cus[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo, k = 0; i > 0 && k < BACKWARD_SCAN; i--, k++) {
		const struct sym_cu_range *c = &f->cus[i - 1];

		if (addr < c->end)
			return dwarf_offdie(f->dw, c->cu_off, cudie) != NULL;
	}
	/* no range covers it: maybe .debug_aranges knows better */
	return dwarf_addrdie(f->dw, addr, cudie) != NULL;
}

int sym_dwarf_line(struct sym_file *f, uint64_t vaddr, const char **file, unsigned *line)
{
	Dwarf_Die cudie;
	Dwarf_Line *l;
	const char *src;
	int lineno = 0;

	*file = NULL;
	*line = 0;
	if (!f->dw)
		return -ENOENT;
	if (!find_cu(f, vaddr, &cudie))
		return -ENOENT;
	l = dwarf_getsrc_die(&cudie, vaddr);
	if (!l || dwarf_lineno(l, &lineno) || lineno <= 0)
		return -ENOENT;
	src = dwarf_linesrc(l, NULL, NULL);
	if (src && src[0] != '/') {
		/* relative to the compilation directory: give the full path */
		Dwarf_Attribute attr;
		const char *dir = dwarf_formstring(dwarf_attr(&cudie, DW_AT_comp_dir, &attr));
		char *full;

		if (dir && *dir) {
			if (asprintf(&full, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/",
				     src) < 0)
				return -ENOMEM;
			src = sym_intern(full);
			free(full);
			if (!src)
				return -ENOMEM;
		}
	}
	if (src) {
		src = sym_intern(src);
		if (!src)
			return -ENOMEM;
	}
	*file = src;
	*line = (unsigned)lineno;
	return 0;
}

/*
 * The function scopes of one unit (subprograms and inlined calls, one entry per address
 * range), sorted by start, outer before inner, each knowing the entry that contains it. They
 * nest, so the innermost scope around an address is the last entry starting at or before it,
 * or the first of its containers that reaches the address: a binary search and a short walk
 * up, where dwarf_getscopes would read the unit's tree again for every address.
 */
struct fn_scope {
	uint64_t start, end;
	unsigned line;
	unsigned depth;
	long parent; /* index of the entry that contains it, -1 */
};

struct fn_table {
	struct fn_scope *v;
	size_t n, cap;
};

static int add_scopes(Dwarf_Die *die, unsigned depth, struct fn_table *t)
{
	Dwarf_Die child;
	int r, tag = dwarf_tag(die);

	if (depth > 64)
		return 0; /* a corrupt or absurd tree */
	if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
		Dwarf_Addr base, start, end;
		ptrdiff_t off = 0;
		int line = 0;

		if (dwarf_decl_line(die, &line) || line < 0)
			line = 0;
		while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0) {
			if (end <= start)
				continue;
			if (kp_grow((void **)&t->v, &t->cap, t->n + 1, sizeof(*t->v)))
				return -ENOMEM;
			t->v[t->n++] = (struct fn_scope){ start, end, (unsigned)line, depth, -1 };
		}
	}
	if (dwarf_child(die, &child) != 0)
		return 0;
	do {
		int err = add_scopes(&child, depth + 1, t);

		if (err)
			return err;
	} while ((r = dwarf_siblingof(&child, &child)) == 0);
	return 0;
}

static int cmp_scope(const void *a, const void *b)
{
	const struct fn_scope *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1; /* the container first */
	return x->depth < y->depth ? -1 : x->depth > y->depth;
}

static struct fn_table *fn_table_of(struct sym_file *f, Dwarf_Die *cudie)
{
	uint64_t key = dwarf_dieoffset(cudie);
	struct fn_table *t = sym_hmap_get(&f->fn_tables, key, 0);
	long *stack = NULL;
	size_t i, depth = 0;

	if (t)
		return t;
	t = calloc(1, sizeof(*t));
	if (!t || add_scopes(cudie, 0, t))
		goto fail;
	qsort(t->v, t->n, sizeof(*t->v), cmp_scope);
	stack = malloc((t->n + 1) * sizeof(*stack));
	if (!stack)
		goto fail;
	for (i = 0; i < t->n; i++) {
		while (depth && t->v[stack[depth - 1]].end <= t->v[i].start)
			depth--;
		/* a partial overlap (not nested): no container */
		t->v[i].parent =
			depth && t->v[stack[depth - 1]].end >= t->v[i].end ? stack[depth - 1] : -1;
		stack[depth++] = (long)i;
	}
	free(stack);
	if (sym_hmap_put(&f->fn_tables, key, 0, t))
		goto fail;
	return t;
fail:
	if (t)
		free(t->v);
	free(t);
	return NULL;
}

int sym_dwarf_decl_line(struct sym_file *f, uint64_t vaddr, unsigned *line)
{
	struct fn_table *t;
	Dwarf_Die cudie;
	size_t lo = 0, hi;
	long i;

	*line = 0;
	if (!f->dw || !find_cu(f, vaddr, &cudie))
		return -ENOENT;
	t = fn_table_of(f, &cudie);
	if (!t)
		return -ENOMEM;
	for (hi = t->n; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->v[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = (long)lo - 1; i >= 0 && t->v[i].end <= vaddr; i = t->v[i].parent)
		;
	if (i < 0 || !t->v[i].line)
		return -ENOENT;
	*line = t->v[i].line;
	return 0;
}

static bool free_table(void *val, void *ctx)
{
	struct fn_table *t = val;

	(void)ctx;
	free(t->v);
	free(t);
	return true;
}

void sym_dwarf_close(struct sym_file *f)
{
	if (f->dw)
		dwarf_end(f->dw);
	f->dw = NULL;
	free(f->cus);
	f->cus = NULL;
	f->ncus = 0;
	sym_hmap_filter(&f->fn_tables, free_table, NULL);
	sym_hmap_free(&f->fn_tables);
}
