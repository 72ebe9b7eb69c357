/*
 * syscall_names.c - syscall names and numbers.
 *
 * Numbers come from the table generated at build time (x86_64 numbers are stable); which
 * syscalls the running kernel implements comes from tracefs (events/syscalls/sys_enter_*):
 * a syscall compiled out of this kernel (no tracepoint) is not offered and is refused by
 * name. Without tracefs syscall events the whole table is used.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"
#include "gen/syscall_table.h"
#include "kperf/pcerrc.h"
#include "trace.h"

#define NR_TABLE ((int)KP_ARRAY_SIZE(kp_syscall_table))

/* table name -> the name of its tracepoint when they differ */
static const struct {
	const char *name, *tp;
} tp_alias[] = {
	{ "stat", "newstat" },	 { "fstat", "newfstat" },      { "lstat", "newlstat" },
	{ "uname", "newuname" }, { "sendfile", "sendfile64" }, { "umount2", "umount" },
};

static pthread_once_t exists_once = PTHREAD_ONCE_INIT;
static bool exists[NR_TABLE]; /* implemented by the running kernel */
static bool from_kernel; /* exists[] came from tracefs */

static const char *tp_name(const char *name)
{
	size_t i;

	for (i = 0; i < KP_ARRAY_SIZE(tp_alias); i++)
		if (!strcmp(tp_alias[i].name, name))
			return tp_alias[i].tp;
	return name;
}

static void scan_kernel(void)
{
	const char *tfs = kp_tracefs();
	char path[PATH_MAX];
	int nr;

	if (tfs) {
		snprintf(path, sizeof(path), "%s/events/syscalls", tfs);
		from_kernel = access(path, F_OK) == 0;
	}
	for (nr = 0; nr < NR_TABLE; nr++) {
		if (!kp_syscall_table[nr])
			continue;
		if (!from_kernel) {
			exists[nr] = true;
			continue;
		}
		snprintf(path, sizeof(path), "%s/events/syscalls/sys_enter_%s", tfs,
			 tp_name(kp_syscall_table[nr]));
		exists[nr] = access(path, F_OK) == 0;
	}
	/* entered only from a uprobe trampoline, never traced through sys_enter_* */
	for (nr = 0; nr < NR_TABLE; nr++)
		if (kp_syscall_table[nr] && !strncmp(kp_syscall_table[nr], "uprobe", 6))
			exists[nr] = exists[nr] || !from_kernel;
}

const char *kp_syscall_name(int nr)
{
	if (nr < 0 || nr >= NR_TABLE)
		return NULL;
	return kp_syscall_table[nr];
}

int kp_syscall_max(void)
{
	return NR_TABLE;
}

/* exact name, a tracepoint alias ("newstat"), or with a "sys_" prefix */
static int find_nr(const char *name)
{
	size_t i;
	int nr;

	if (!strncmp(name, "sys_", 4))
		name += 4;
	for (nr = 0; nr < NR_TABLE; nr++)
		if (kp_syscall_table[nr] && !strcmp(kp_syscall_table[nr], name))
			return nr;
	for (i = 0; i < KP_ARRAY_SIZE(tp_alias); i++)
		if (!strcmp(tp_alias[i].tp, name))
			return find_nr(tp_alias[i].name);
	return -1;
}

int kp_syscall_lookup(const char *name)
{
	char hint[256] = "";
	int nr, best = INT_MAX, d, shown = 0;
	size_t len = 0;

	pthread_once(&exists_once, scan_kernel);
	if (!name || !*name)
		return kp_fail(LIBPERF_ERR_INVALID_SYSCALL_FUN, -EINVAL, "empty syscall name");
	nr = find_nr(name);
	if (nr >= 0 && exists[nr])
		return nr;
	if (nr >= 0)
		return kp_fail(LIBPERF_ERR_INVALID_SYSCALL_FUN, -ENOENT,
			       "syscall '%s' (number %d) does not exist in this kernel "
			       "(no syscalls:sys_enter_%s tracepoint)",
			       name, nr, tp_name(kp_syscall_table[nr]));
	/* suggest the closest names */
	for (nr = 0; nr < NR_TABLE; nr++) {
		if (!kp_syscall_table[nr] || !exists[nr])
			continue;
		d = kp_edit_distance(name, kp_syscall_table[nr]);
		if (d < best)
			best = d;
	}
	if (best <= 3) {
		for (nr = 0; nr < NR_TABLE && shown < 4; nr++) {
			if (!kp_syscall_table[nr] || !exists[nr] ||
			    kp_edit_distance(name, kp_syscall_table[nr]) != best)
				continue;
			len += (size_t)snprintf(hint + len, sizeof(hint) - len, "%s%s",
						shown ? ", " : " (did you mean ",
						kp_syscall_table[nr]);
			if (len >= sizeof(hint))
				break;
			shown++;
		}
		if (shown && len + 2 < sizeof(hint))
			strcat(hint, "?)");
	}
	return kp_fail(LIBPERF_ERR_INVALID_SYSCALL_FUN, -ENOENT, "unknown syscall '%s'%s", name,
		       hint);
}

int kp_syscall_list(const char ***names)
{
	const char **out;
	int nr, n = 0;

	pthread_once(&exists_once, scan_kernel);
	out = calloc(NR_TABLE + 1, sizeof(*out));
	if (!out)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	for (nr = 0; nr < NR_TABLE; nr++)
		if (kp_syscall_table[nr] && exists[nr])
			out[n++] = kp_syscall_table[nr];
	*names = out;
	return n;
}

bool kp_syscall_names_from_kernel(void)
{
	pthread_once(&exists_once, scan_kernel);
	return from_kernel;
}
