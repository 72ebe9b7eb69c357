/*
 * sym_frames.c - the Symbols of one address of a file: the function's, and with inline frames
 * one more for each inlined call at that address; and the marks that tell inline frames apart.
 *
 * libkperf's struct Symbol has no room for "this frame was inlined", and kperf-bpf never adds
 * a field to it, so the inline frames are remembered by address in a registry of their own
 * (KperfSymbolGetInfo asks it): the resolver marks the ones it makes and unmarks them when
 * their memory goes; a PmuData array marks its copies the same way. A Symbol the library never
 * made is simply not there.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "sym.h"

/* ---- the registry ---- */

static pthread_mutex_t marks_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sym_hmap marks; /* Symbol* -> (void *)1 */

static int mark(const struct Symbol *s)
{
	int err;

	pthread_mutex_lock(&marks_lock);
	err = sym_hmap_put(&marks, (uint64_t)(uintptr_t)s, 0, (void *)1);
	pthread_mutex_unlock(&marks_lock);
	return err;
}

bool kp_sym_is_inline(const struct Symbol *s)
{
	bool r;

	if (!s)
		return false;
	pthread_mutex_lock(&marks_lock);
	r = sym_hmap_get(&marks, (uint64_t)(uintptr_t)s, 0) != NULL;
	pthread_mutex_unlock(&marks_lock);
	return r;
}

int kp_sym_mark_copy(const struct Symbol *src, const struct Symbol *copy)
{
	if (!kp_sym_is_inline(src))
		return 0;
	return mark(copy) ? -ENOMEM : 1;
}

void kp_sym_unmark(const struct Symbol *s)
{
	pthread_mutex_lock(&marks_lock);
	sym_hmap_del(&marks, (uint64_t)(uintptr_t)s, 0);
	if (!marks.n)
		sym_hmap_free(&marks);
	pthread_mutex_unlock(&marks_lock);
}

/* ---- clone suffixes ---- */

size_t kp_sym_base_len(const char *name)
{
	static const char *const clones[] = { ".isra.", ".constprop.", ".part.",
					      ".cold",	".lto_priv.",  ".localalias" };
	const char *p, *best = NULL;
	size_t i;

	if (!name)
		return 0;
	/* demangled C++: "f(int) [clone .isra.0] [clone .cold]" */
	p = strstr(name, " [clone .");
	if (p && p != name)
		return (size_t)(p - name);
	for (i = 0; i < sizeof(clones) / sizeof(clones[0]); i++) {
		size_t l = strlen(clones[i]);

		for (p = strstr(name + 1, clones[i]); p; p = strstr(p + 1, clones[i])) {
			/* ".cold" must end the name or be followed by ".N" */
			if (clones[i][l - 1] != '.' && p[l] && p[l] != '.')
				continue;
			if (!best || p < best)
				best = p;
			break;
		}
	}
	return best ? (size_t)(best - name) : strlen(name);
}

/* ---- a file address to Symbols ---- */

void sym_inl_store_free(struct sym_inl_store *st)
{
	size_t i;

	for (i = 0; i < st->nmarked; i++)
		kp_sym_unmark(st->marked[i]);
	free(st->marked);
	sym_hmap_free(&st->lists);
	memset(st, 0, sizeof(*st));
}

const struct sym_inl *sym_inl_get(const struct sym_inl_store *st, const struct Symbol *s)
{
	return sym_hmap_get(&st->lists, (uint64_t)(uintptr_t)s, 0);
}

static int make_inlines(const struct Symbol *fn, const struct sym_frame *fr, unsigned n,
			struct sym_arena *a, struct sym_inl_store *st)
{
	struct sym_inl *l;
	unsigned i;

	l = sym_arena_alloc(a, sizeof(*l) + n * sizeof(l->frames[0]));
	if (!l || kp_grow((void **)&st->marked, &st->cap, st->nmarked + n, sizeof(*st->marked)))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct Symbol *s = sym_arena_alloc(a, sizeof(*s));

		if (!s)
			return -ENOMEM;
		*s = *fn;
		s->symbolName = (char *)(fr[i].name ? fr[i].name : "[unknown]");
		s->mangleName = (char *)(fr[i].mangled ? fr[i].mangled : s->symbolName);
		s->fileName = fr[i].file ? (char *)fr[i].file : sym_empty_str;
		s->lineNum = fr[i].line;
		s->firstLine = fr[i].decl_line;
		/* where in the inlined code: from the start of its block holding the address */
		s->offset = fr[i].end ? s->codeMapAddr - fr[i].start : 0;
		s->codeMapEndAddr = fr[i].end ? fr[i].end : fn->codeMapEndAddr;
		if (mark(s))
			return -ENOMEM;
		st->marked[st->nmarked++] = s;
		l->frames[i] = s;
	}
	l->n = n;
	return sym_hmap_put(&st->lists, (uint64_t)(uintptr_t)fn, 0, l);
}

int sym_fill_from_file(struct Symbol *s, struct sym_file *f, uint64_t vaddr, uint64_t vlook,
		       unsigned flags, struct sym_arena *a, struct sym_inl_store *st,
		       unsigned *ninline)
{
	const struct sym_elf_sym *es = sym_file_find(f, vlook);
	struct sym_frame fr[SYM_MAX_INLINE];
	unsigned n = 0, line;
	const char *file;

	*ninline = 0;
	s->codeMapAddr = vaddr;
	if (es) {
		s->symbolName = (char *)sym_file_sym_demangled(f, es);
		s->mangleName = (char *)sym_file_sym_name(f, es);
		s->offset = vaddr - es->start;
		s->codeMapEndAddr = es->end;
	}
	if (!(flags & KP_SYM_DWARF))
		return 0;
	if (!f->dwarf_tried && sym_file_may_have_dwarf(f)) {
		/* first line asked of this file: open its DWARF now (a failure is remembered) */
		sym_file_dwarf(f);
		sym_demote_error();
	}
	if (!f->dw)
		return 0;
	if (!(flags & KP_SYM_INLINE)) {
		/* libkperf's answer: the line of the address, and where the innermost function
		 * around it (maybe an inlined one) starts */
		if (sym_dwarf_line(f, vlook, &file, &line) == 0) {
			s->fileName = file ? (char *)file : sym_empty_str;
			s->lineNum = line;
		}
		if (sym_dwarf_decl_line(f, vlook, &line) == 0)
			s->firstLine = line;
		return 0;
	}
	if (sym_dwarf_frames(f, vlook, fr, SYM_MAX_INLINE, &n) == -ENOMEM)
		return -ENOMEM;
	if (!n)
		return 0;
	/* the function keeps its name from the symbol table (its public one); its line is the
	 * call to the outermost inlined function, its first line its own */
	s->fileName = fr[n - 1].file ? (char *)fr[n - 1].file : sym_empty_str;
	s->lineNum = fr[n - 1].line;
	s->firstLine = fr[n - 1].decl_line;
	if (!es && fr[n - 1].name) {
		s->symbolName = (char *)fr[n - 1].name;
		s->mangleName = (char *)fr[n - 1].mangled;
	}
	if (n < 2)
		return 0;
	*ninline = n - 1;
	return make_inlines(s, fr, n - 1, a, st);
}
