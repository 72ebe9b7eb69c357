/*
 * pyframes.bpf.h - CPython frames read during the user-stack unwind (unwind.bpf.h), put in the
 * stack where the interpreter's frames are. For a process userspace described in kp_py_procs
 * (pyframes.h: where _PyRuntime is, the range of _PyEval_EvalFrameDefault, the version's
 * layout), the first time the native unwind reaches _PyEval_EvalFrameDefault the sampled
 * thread's PyThreadState is found (the runtime's interpreter -> its threads, matched by native
 * thread id, then cached per thread and checked by that id), and its current frame taken. Each
 * native _PyEval_EvalFrameDefault frame then takes the Python frames of its own activation, leaf
 * first: up to the frame marked is_entry (3.11), or up to the C-stack shim frame that each
 * activation pushes (3.12, 3.13: owner FRAME_OWNED_BY_CSTACK; 3.14: FRAME_OWNED_BY_INTERPRETER,
 * the same 3; not shown). A frame is one word, KP_PY_TAG | its code object's address (3.14's
 * tagged _PyStackRef masked); a code object seen for the first time is copied
 * (qualname, filename, first line) into kp_py_codes for userspace, which drains it.
 *
 * Anything unreadable (a process exiting, a layout that does not fit) ends the Python part:
 * the native frames go on. The interpreter's own frame is kept with kp_py_keep_interp.
 * Included by unwind.bpf.h after kp_uw_walks and kp_cap_scratch.
 */
#ifndef KPERF_BPF_PYFRAMES_BPF_H
#define KPERF_BPF_PYFRAMES_BPF_H

#include "pyframes.h"

/* set by the owner before load: keep _PyEval_EvalFrameDefault's own frames too */
const volatile bool kp_py_keep_interp = false;
/* set by the owner before load: the walks' bounds (KP_PY_MAX_THREADS, KP_PY_MAX_WALK), 0 when
 * Python frames are off. Read-only data is a constant to the verifier: at 0 the loops are
 * never entered, so an object that does not read Python frames is not refused for the
 * reader's size (the 5.10 verifier gives up on it: "BPF program is too large"). */
const volatile __u32 kp_py_max_threads = 0;
const volatile __u32 kp_py_max_walk = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1); /* resized by userspace */
	__type(key, __u32);
	__type(value, struct kp_py_proc);
} kp_py_procs SEC(".maps");

/* the thread state of a thread (key: the kernel's pid_tgid), checked at each use */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1); /* resized by userspace */
	__type(key, __u64);
	__type(value, __u64);
} kp_py_threads SEC(".maps");

/* code objects to name: written here once each, drained (read and deleted) by userspace */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1); /* resized by userspace */
	__type(key, struct kp_py_code_key);
	__type(value, struct kp_py_code);
} kp_py_codes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kp_py_code);
} kp_py_code_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, KP_PY_CNT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} kp_py_counters SEC(".maps");

static __always_inline void kp_py_count_n(__u32 idx, __u64 n)
{
	__u64 *c = bpf_map_lookup_elem(&kp_py_counters, &idx);

	if (c)
		*c += n;
}

#define kp_py_count(idx) kp_py_count_n(idx, 1)

static __always_inline bool kp_py_rd(__u64 *v, __u64 addr)
{
	return addr && bpf_probe_read_user(v, sizeof(*v), (const void *)addr) == 0;
}

static __always_inline bool kp_py_rd8(__u8 *v, __u64 addr)
{
	return addr && bpf_probe_read_user(v, sizeof(*v), (const void *)addr) == 0;
}

/* the current thread's id in its own PID namespace (what CPython's native_thread_id holds) */
static __always_inline __u64 kp_py_ns_tid(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct pid *pid = BPF_CORE_READ(task, thread_pid);
	unsigned int level = BPF_CORE_READ(pid, level);
	int nr = 0;

	bpf_probe_read_kernel(&nr, sizeof(nr),
			      (const char *)pid + bpf_core_field_offset(struct pid, numbers) +
				      (level & 31) * bpf_core_type_size(struct upid) +
				      bpf_core_field_offset(struct upid, nr));
	return (__u64)(__u32)nr;
}

/* the sampled thread's PyThreadState, 0 when not found */
static __always_inline __u64 kp_py_tstate(const struct kp_py_proc *pp)
{
	__u64 key = bpf_get_current_pid_tgid(), tid = kp_py_ns_tid(), *c, v = 0, ts = 0, in = 0;
	__u32 i;

	c = bpf_map_lookup_elem(&kp_py_threads, &key);
	if (c && *c && kp_py_rd(&v, *c + pp->l.ts_native_tid) && v == tid)
		return *c;
	if (!kp_py_rd(&in, pp->runtime + pp->l.rt_interp_head) ||
	    !kp_py_rd(&ts, in + pp->l.is_threads_head))
		return 0;
	for (i = 0; i < KP_PY_MAX_THREADS && i < kp_py_max_threads; i++) {
		if (!ts)
			break;
		if (kp_py_rd(&v, ts + pp->l.ts_native_tid) && v == tid) {
			bpf_map_update_elem(&kp_py_threads, &key, &ts, BPF_ANY);
			return ts;
		}
		if (!kp_py_rd(&ts, ts + pp->l.ts_next))
			break;
	}
	return 0;
}

/* a str object's text into <dst> (compact ASCII or Latin-1 only): false when not copied */
static __always_inline bool kp_py_str(char *dst, __u32 size, __u64 field,
				      const struct kp_py_layout *l)
{
	__u64 obj = 0, data;
	__u32 state = 0;

	dst[0] = '\0';
	if (!kp_py_rd(&obj, field) || !obj ||
	    bpf_probe_read_user(&state, sizeof(state), (const void *)(obj + l->str_state)))
		return false;
	if (state & (1u << 6))
		data = obj + l->str_ascii;
	else if ((state & (1u << 5)) && ((state >> 2) & 7) == 1)
		data = obj + l->str_compact;
	else
		return false;
	return bpf_probe_read_user_str(dst, size, (const void *)data) > 0;
}

/* code object <code> of process <tgid> into kp_py_codes, unless there already. A global
 * function: verified once, whatever the number of frames that call it. */
__attribute__((noinline)) int kp_py_note_code(__u32 tgid, __u64 code)
{
	struct kp_py_code_key k = { .tgid = tgid, .code = code };
	const struct kp_py_proc *pp;
	struct kp_py_code *c;
	__u32 zero = 0;
	long err;

	if (bpf_map_lookup_elem(&kp_py_codes, &k))
		return 0;
	pp = bpf_map_lookup_elem(&kp_py_procs, &tgid);
	c = bpf_map_lookup_elem(&kp_py_code_scratch, &zero);
	if (!pp || !c)
		return 0;
	c->flags = 0;
	c->firstlineno = 0;
	bpf_probe_read_user(&c->firstlineno, sizeof(c->firstlineno),
			    (const void *)(code + pp->l.co_firstlineno));
	if (!kp_py_str(c->qualname, KP_PY_QUALNAME, code + pp->l.co_qualname, &pp->l))
		c->flags |= KP_PY_CODE_NAME_UNREADABLE;
	if (!kp_py_str(c->filename, KP_PY_FILENAME, code + pp->l.co_filename, &pp->l))
		c->flags |= KP_PY_CODE_FILE_UNREADABLE;
	err = bpf_map_update_elem(&kp_py_codes, &k, c, BPF_NOEXIST);
	if (!err)
		kp_py_count(KP_PY_CNT_CODES);
	else if (err != -17) /* EEXIST: another CPU copied it meanwhile */
		kp_py_count(KP_PY_CNT_CODES_FULL);
	return 0;
}

/*
 * At a native frame of the walk in the interpreter's span (w->py_lo, w->py_hi): -1 when it is
 * in neither part of _PyEval_EvalFrameDefault (the span holds other functions when the compiler
 * split it), else its activation's Python frames into kp_cap_scratch from w->n on (the walk's
 * frame count advanced) and how many were put.
 */
__attribute__((noinline)) int kp_py_emit(__u32 unused)
{
	__u32 zero = 0, i, put = 0;
	struct kp_uw_walk *w = bpf_map_lookup_elem(&kp_uw_walks, &zero);
	struct kp_cap_stack *s = bpf_map_lookup_elem(&kp_cap_scratch, &zero);
	const struct kp_py_proc *pp;
	/* cf holds the byte fields too (dead by then): the verifier of 5.10 to 6.5 sums the
	 * stacks of the program, kp_uw_step and this function (each rounded up to 32 bytes) and
	 * refuses more than 512; at 72 bytes here the sum was 544 */
	__u64 fr = 0, code, prev, ts, cf;

	if (!w || !s)
		return 0;
	pp = bpf_map_lookup_elem(&kp_py_procs, &w->tgid);
	if (!pp)
		return 0;
	code = w->exact ? w->pc : w->pc - 1;
	if (code - pp->code_lo[0] >= pp->code_hi[0] - pp->code_lo[0] &&
	    code - pp->code_lo[1] >= pp->code_hi[1] - pp->code_lo[1])
		return -1; /* not the interpreter: (__u32)-1 + 1, the walk's 0 */
	if (w->py_state == 0) {
		w->py_state = 2; /* no Python frames for the rest of this stack, unless found */
		ts = kp_py_tstate(pp);
		if (!ts) {
			kp_py_count(KP_PY_CNT_NO_TSTATE);
			return 0;
		}
		cf = ts;
		if (pp->l.ts_cframe != KP_PY_NONE && !kp_py_rd(&cf, ts + pp->l.ts_cframe))
			return 0;
		if (!kp_py_rd(&fr, cf + pp->l.cur_frame))
			return 0;
		w->py_frame = fr;
		w->py_state = 1;
		kp_py_count(KP_PY_CNT_STACKS);
	}
	if (w->py_state != 1)
		return 0;
	fr = w->py_frame;
	for (i = 0; i < KP_PY_MAX_WALK && i < kp_py_max_walk; i++) {
		bool entry = false;

		if (!fr)
			break;
		if (pp->l.owner_cstack != 0xff) {
			cf = 0;
			if (!kp_py_rd8((__u8 *)&cf, fr + pp->l.fr_owner))
				goto fault;
			if ((__u8)cf ==
			    pp->l.owner_cstack) { /* this activation's start: consumed */
				if (!kp_py_rd(&fr, fr + pp->l.fr_previous))
					goto fault;
				break;
			}
		}
		if (!kp_py_rd(&code, fr + pp->l.fr_code) ||
		    !kp_py_rd(&prev, fr + pp->l.fr_previous))
			goto fault;
		code &= KP_PY_CODE_MASK; /* 3.14: a tagged _PyStackRef */
		if (pp->l.fr_is_entry != KP_PY_NONE) {
			cf = 0;
			if (!kp_py_rd8((__u8 *)&cf, fr + pp->l.fr_is_entry))
				goto fault;
			entry = (__u8)cf != 0;
		}
		if (w->n < w->max && w->n < KP_CAP_MAX_FRAMES && code) {
			s->ip[KP_BOUND(w->n, KP_CAP_MAX_FRAMES)] = KP_PY_TAG | code;
			w->n += 1;
			put++;
			kp_py_note_code(w->tgid, code);
		}
		fr = prev;
		if (entry)
			break;
	}
	w->py_frame = fr;
	kp_py_count_n(KP_PY_CNT_FRAMES, put);
	return (int)put;
fault:
	kp_py_count(KP_PY_CNT_READ_FAULT);
	w->py_state = 2;
	return (int)put;
}

#endif
