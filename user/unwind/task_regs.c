/*
 * task_regs.c - where the unwinder finds a task's user registers on kernels without
 * bpf_task_pt_regs (before 5.15): at the top of the task's kernel stack (the kernel's own
 * task_pt_regs(): task->stack + THREAD_SIZE - sizeof(struct pt_regs), no padding on x86_64
 * before FRED, 6.9, nor on arm64). The offset of task_struct.stack and the size of pt_regs are
 * read from the kernel's BTF, THREAD_SIZE is 16 KiB on both architectures (4 KiB pages, no
 * KASAN: Debian's kernels). Written into the object's read-only data (kp_uw_stack_off and
 * kp_uw_regs_off of unwind.bpf.h) before load, so that samples taken in the kernel (a syscall)
 * and the syscall programs unwind from the tables there too, instead of frame pointers. The BPF side checks
 * that what it read are user registers (x86_64 cs, arm64 pstate) before it uses them.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "core/core.h"

#include "unwind.h"

#define KP_THREAD_SIZE 16384

static pthread_once_t once = PTHREAD_ONCE_INIT;
static __u32 stack_off, regs_off; /* regs_off 0: not known */

static void read_layout(void)
{
	const char *path = kp_btf_path();
	const struct btf_member *m;
	const struct btf_type *t;
	struct btf *btf;
	__s32 task, regs;
	__s64 regs_size;
	int i;

	if (!path)
		return;
	btf = btf__parse(path, NULL);
	if (!btf)
		return;
	task = btf__find_by_name_kind(btf, "task_struct", BTF_KIND_STRUCT);
	regs = btf__find_by_name_kind(btf, "pt_regs", BTF_KIND_STRUCT);
	regs_size = regs > 0 ? btf__resolve_size(btf, (__u32)regs) : -1;
	t = task > 0 ? btf__type_by_id(btf, (__u32)task) : NULL;
	if (t && regs_size > 0 && regs_size < KP_THREAD_SIZE) {
		m = btf_members(t);
		for (i = 0; i < btf_vlen(t); i++, m++) {
			if (strcmp(btf__name_by_offset(btf, m->name_off), "stack"))
				continue;
			stack_off = btf_member_bit_offset(t, (__u32)i) / 8;
			regs_off = (__u32)(KP_THREAD_SIZE - regs_size);
			break;
		}
	}
	btf__free(btf);
}

/* the object's read-only data map (".rodata", not ".rodata.str1.1") */
static struct bpf_map *rodata_of(struct bpf_object *obj)
{
	struct bpf_map *m;

	bpf_object__for_each_map(m, obj)
	{
		const char *name = bpf_map__name(m), *dot = strrchr(name, '.');

		if (bpf_map__is_internal(m) && dot && !strcmp(dot, ".rodata"))
			return m;
	}
	return NULL;
}

/* <name>, a __u32 of the read-only data <sec> (size <size>) of <btf>, set to <v> in <data> */
static int set_u32(const struct btf *btf, const struct btf_type *sec, void *data, size_t size,
		   const char *name, __u32 v)
{
	const struct btf_var_secinfo *vs = btf_var_secinfos(sec);
	int i;

	for (i = 0; i < btf_vlen(sec); i++, vs++) {
		const struct btf_type *var = btf__type_by_id(btf, vs->type);

		if (strcmp(btf__name_by_offset(btf, var->name_off), name))
			continue;
		if (vs->offset + sizeof(v) > size || vs->size != sizeof(v))
			return -EINVAL;
		memcpy((char *)data + vs->offset, &v, sizeof(v));
		return 0;
	}
	return -ENOENT;
}

int kp_uw_set_task_layout(struct bpf_object *obj)
{
	struct btf *btf = bpf_object__btf(obj);
	struct bpf_map *map;
	const void *init;
	size_t size = 0;
	void *copy;
	__s32 id;
	int err;

	if (kp_have(KP_FEAT_TASK_PT_REGS))
		return 0; /* the BPF side uses the helper */
	pthread_once(&once, read_layout);
	if (!regs_off || !btf)
		return 0; /* frame pointers where the registers are not given */
	map = rodata_of(obj);
	id = btf__find_by_name_kind(btf, ".rodata", BTF_KIND_DATASEC);
	init = map ? bpf_map__initial_value(map, &size) : NULL;
	if (!init || id <= 0)
		return -ENOENT;
	copy = malloc(size);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, init, size);
	err = set_u32(btf, btf__type_by_id(btf, (__u32)id), copy, size, "kp_uw_stack_off",
		      stack_off);
	if (!err)
		err = set_u32(btf, btf__type_by_id(btf, (__u32)id), copy, size, "kp_uw_regs_off",
			      regs_off);
	if (!err)
		err = bpf_map__set_initial_value(map, copy, size);
	free(copy);
	return err;
}
