/*
 * api.c - the public calls ProcDataRead and ProcDataFree.
 *
 * As in libkperf, ProcDataRead is best effort: it returns every source it could read and
 * leaves out the others (a file this kernel lacks, one only root may read, a process that
 * does not exist). It fails only on bad arguments or when memory runs out. What it returns
 * is one allocation (the records and an arena for their contents), put in the registry so
 * that a second ProcDataFree, or one of a pointer it did not return, is ignored.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "kperf/pmu.h"
#include "proc.h"

struct proc_result {
	struct kp_proc_arena arena;
	struct ProcData data[MAX_PROC_SOURCE];
};

static void release_result(void *data)
{
	struct proc_result *r = (void *)((char *)data - offsetof(struct proc_result, data));

	kp_proc_arena_free(&r->arena);
	free(r);
}

/* libkperf says nothing when the pid does not exist; a warning costs nothing and tells. */
static void warn_missing_pid(const char *root, int pid)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%d", root, pid);
	if (stat(path, &st))
		kp_warn(LIBPERF_WARN_FAIL_GET_PROC,
			"pid %d does not exist (no %s): only the system sources were read", pid,
			path);
}

KP_EXPORT int ProcDataRead(int pid, struct ProcData **data, unsigned *numData)
{
	const char *root = kp_proc_root();
	struct proc_result *r;
	unsigned n = 0;
	int src, err;

	kp_clear();
	if (!data || !numData) {
		kp_fail(LIBPERF_ERR_PROC_DATA_NULL, -EINVAL, "ProcDataRead: %s is NULL",
			data ? "numData" : "data");
		return -1;
	}
	*data = NULL;
	*numData = 0;
	r = calloc(1, sizeof(*r));
	if (!r)
		goto nomem;
	for (src = 0; src < MAX_PROC_SOURCE; src++) {
		struct kp_proc_mark mark;

		if (kp_proc_is_pid_source(src) && pid <= 0)
			continue;
		kp_proc_mark(&r->arena, &mark);
		err = kp_proc_read_source(&r->arena, root, src, pid, &r->data[n]);
		if (err == -ENOMEM)
			goto nomem;
		if (err) {
			/* left out, as libkperf does: the caller sees which sources came back */
			kp_proc_rollback(&r->arena, &mark);
			memset(&r->data[n], 0, sizeof(r->data[n]));
			kp_clear_error();
			continue;
		}
		n++;
	}
	if (pid > 0)
		warn_missing_pid(root, pid);
	if (!n) {
		release_result(r->data);
		return 0;
	}
	if (kp_registry_add(r->data, release_result))
		goto nomem;
	*data = r->data;
	*numData = n;
	return 0;
nomem:
	if (r)
		release_result(r->data);
	kp_clear_error();
	kp_fail(LIBPERF_ERR_PROC_DATA_NULL, -ENOMEM, "ProcDataRead: out of memory");
	return -1;
}

KP_EXPORT void ProcDataFree(struct ProcData *data, unsigned numData)
{
	(void)numData;
	kp_registry_release(data);
}
