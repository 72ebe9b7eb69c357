/*
 * sym_stack.c - callchains to struct Stack lists, each distinct chain of a process resolved
 * once: the sampler asks for the same few thousand stacks millions of times.
 *
 * With inline frames (KP_SYM_INLINE) an address gives its inlined calls first, innermost
 * first, then its function: the list is longer than the chain, and each entry remembers the
 * function's Symbol of each address so that a chain with unknown frames can be looked at
 * again when code was loaded since.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "sym.h"

static uint64_t hash_keys(const uint64_t *keys, unsigned n, unsigned flags)
{
	uint64_t h = 0x84222325cbf29ce4ULL ^ flags;
	unsigned i;

	for (i = 0; i < n; i++)
		h = sym_hash64(h ^ keys[i]) + i;
	return h;
}

/* Does a cached stack with unknown frames have better answers now (code loaded since)? */
static bool unknowns_now_known(struct sym_proc *p, pid_t pid, const struct sym_stack_ent *e)
{
	unsigned i;

	for (i = 0; i < e->nr; i++) {
		struct Symbol *s;
		uint64_t addr;

		if (!sym_unresolved(p, e->fns[i]))
			continue;
		/* an arithmetic shift restores the top bit of a (canonical) kernel address */
		addr = (uint64_t)((int64_t)e->keys[i] >> 1);
		if (sym_resolve_one(p, pid, addr, e->flags | ((e->keys[i] & 1) ? 0 : SYM_F_RET),
				    &s) == 0 &&
		    s != e->fns[i])
			return true;
	}
	return false;
}

/* The keys of a chain: real addresses only, each << 1 | exact (the leaf, the first user frame
 * after kernel frames, a frame right after a context marker are exact ips; the others are
 * return addresses). Returns their number; *need_user when one is a user address. */
static unsigned chain_keys(const uint64_t *addrs, unsigned nr, uint64_t *keys, bool *need_user)
{
	bool prev_kernel = false, after_marker = true;
	unsigned i, n = 0;

	*need_user = false;
	for (i = 0; i < nr; i++) {
		uint64_t a = addrs[i];
		bool kernel = a >= KP_SYM_KERNEL_START, exact;

		if (a >= KP_SYM_CONTEXT_MAX) {
			after_marker = true;
			continue;
		}
		if (!a)
			continue;
		exact = after_marker || n == 0 || (prev_kernel && !kernel);
		keys[n++] = a << 1 | exact;
		after_marker = false;
		prev_kernel = kernel;
		*need_user |= !kernel;
	}
	return n;
}

/* Resolve the keys of <e> into its list (in p's arena). */
static int build_list(struct sym_proc *p, pid_t pid, struct sym_stack_ent *e)
{
	const struct sym_inl *inl;
	struct Stack *nodes;
	size_t total = 0, k = 0;
	unsigned i, j;
	int err;

	e->fns = sym_arena_alloc(&p->arena, e->nr * sizeof(*e->fns));
	if (!e->fns)
		return -ENOMEM;
	for (i = 0; i < e->nr; i++) {
		uint64_t addr = (uint64_t)((int64_t)e->keys[i] >> 1);

		err = sym_resolve_one(p, pid, addr, e->flags | ((e->keys[i] & 1) ? 0 : SYM_F_RET),
				      &e->fns[i]);
		if (err)
			return err;
		e->has_unknown |= sym_unresolved(p, e->fns[i]);
		inl = (e->flags & KP_SYM_INLINE) ? sym_inlines_of(p, e->fns[i]) : NULL;
		total += 1 + (inl ? inl->n : 0);
	}
	nodes = sym_arena_alloc_aligned(&p->arena, total * sizeof(*nodes), _Alignof(struct Stack));
	if (!nodes)
		return -ENOMEM;
	for (i = 0; i < e->nr; i++) {
		inl = (e->flags & KP_SYM_INLINE) ? sym_inlines_of(p, e->fns[i]) : NULL;
		for (j = 0; j <= (inl ? inl->n : 0); j++, k++) {
			nodes[k].symbol = inl && j < inl->n ? inl->frames[j] : e->fns[i];
			nodes[k].prev = k ? &nodes[k - 1] : NULL;
			if (k)
				nodes[k - 1].next = &nodes[k];
		}
	}
	e->head = nodes;
	return 0;
}

int sym_resolve_stack(pid_t pid, const uint64_t *addrs, unsigned nr, unsigned flags,
		      bool must_exist, struct Stack **out)
{
	struct sym_proc *p = NULL;
	struct sym_stack_ent *e;
	uint64_t *keys, h, k;
	bool need_user;
	unsigned n;
	int err;

	*out = NULL;
	flags &= KP_SYM_DWARF | KP_SYM_INLINE;
	if (!(flags & KP_SYM_DWARF))
		flags = 0; /* inline frames come from DWARF */
	if (!addrs || !nr)
		return kp_fail(KPERF_ERR_INVALID_ARG, -EINVAL,
			       "an empty stack (no addresses) cannot be resolved");
	keys = malloc(nr * sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	n = chain_keys(addrs, nr, keys, &need_user);
	if (!n) {
		free(keys);
		return kp_fail(KPERF_ERR_INVALID_ARG, -EINVAL,
			       "the stack holds no address (only context markers or zeros)");
	}
	err = sym_ensure_proc(pid, must_exist && need_user, &p);
	if (err)
		goto out;
	h = hash_keys(keys, n, flags);
	for (k = 0;; k++) {
		e = sym_hmap_get(&p->stacks, h, k);
		if (!e)
			break;
		if (e->nr == n && e->flags == flags && !memcmp(e->keys, keys, n * sizeof(*keys))) {
			if (!e->has_unknown || !unknowns_now_known(p, pid, e)) {
				*out = e->head;
				goto out;
			}
			break; /* resolved again below, in this slot */
		}
	}
	e = sym_arena_alloc(&p->arena, sizeof(*e));
	if (!e || !(e->keys = sym_arena_alloc(&p->arena, n * sizeof(*keys)))) {
		err = -ENOMEM;
		goto out;
	}
	memcpy(e->keys, keys, n * sizeof(*keys));
	e->hash = h;
	e->nr = n;
	e->flags = flags;
	err = build_list(p, pid, e);
	if (!err)
		err = sym_hmap_put(&p->stacks, h, k, e);
	if (err)
		goto out;
	sym_counters.stacks++;
	*out = e->head;
out:
	free(keys);
	return err;
}
