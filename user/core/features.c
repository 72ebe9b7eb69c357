/*
 * features.c - what the running kernel's BPF can do, probed once per process and asked by
 * every BPF owner before it picks a program variant, so the choice is explicit and the same
 * everywhere (and `kperf-bpf features` prints it). Also the checks that must come before a
 * load: privileges and kernel lockdown, so that a refusal for those reasons is said as such
 * and not mistaken for a verifier rejection (both come back as EPERM/EACCES).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "core.h"
#include "kperf/pcerrc.h"

static const struct {
	const char *name;
	const char *since;
} feature_info[KP_FEAT_MAX] = {
	[KP_FEAT_BTF] = { "kernel BTF (CO-RE, tp_btf)", "5.5, CONFIG_DEBUG_INFO_BTF" },
	[KP_FEAT_RINGBUF] = { "BPF ring buffer", "5.8" },
	[KP_FEAT_BATCH_OPS] = { "batched map operations", "5.6" },
	[KP_FEAT_TASK_STORAGE] = { "task storage in tracing programs", "5.11" },
	[KP_FEAT_ATTACH_COOKIE] = { "bpf_get_attach_cookie, perf event links", "5.15" },
	[KP_FEAT_FUNC_IP] = { "bpf_get_func_ip in kprobes", "5.15" },
	[KP_FEAT_BPF_LOOP] = { "bpf_loop", "5.17" },
	[KP_FEAT_TASK_PT_REGS] = { "bpf_task_pt_regs", "5.15" },
};

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static bool have[KP_FEAT_MAX];

static bool env_set(const char *name)
{
	const char *v = secure_getenv(name);

	return v && *v && strcmp(v, "0");
}

/* batched operations: a kernel without them does not know the command (EINVAL) */
static bool probe_batch(void)
{
	__u32 keys[1], vals[1], count = 1;
	bool ok;
	int fd;

	fd = bpf_map_create(BPF_MAP_TYPE_HASH, NULL, sizeof(__u32), sizeof(__u32), 1, NULL);
	if (fd < 0)
		return false;
	ok = bpf_map_lookup_batch(fd, NULL, keys, keys, vals, &count, NULL) == 0 || errno == ENOENT;
	close(fd);
	return ok;
}

static void probe(void)
{
	kp_bpf_log_init(); /* libbpf's probe messages go to the quiet log */
	have[KP_FEAT_RINGBUF] = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) == 1 &&
				!env_set("KPERF_BPF_NO_RINGBUF");
	have[KP_FEAT_BATCH_OPS] = probe_batch() && !env_set("KPERF_BPF_NO_BATCH");
	/* the map type and its use from tracing programs came in the same release (5.11) */
	have[KP_FEAT_TASK_STORAGE] = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, NULL) ==
				     1;
	have[KP_FEAT_ATTACH_COOKIE] = libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT,
							      BPF_FUNC_get_attach_cookie,
							      NULL) == 1 &&
				      !env_set("KPERF_BPF_NO_COOKIE");
	have[KP_FEAT_FUNC_IP] =
		libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_get_func_ip, NULL) == 1;
	have[KP_FEAT_BPF_LOOP] =
		libbpf_probe_bpf_helper(BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_loop, NULL) == 1;
	have[KP_FEAT_TASK_PT_REGS] =
		libbpf_probe_bpf_helper(BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_task_pt_regs, NULL) == 1;
	kp_bpf_log_clear();
}

bool kp_have(enum kp_feature f)
{
	if (f < 0 || f >= KP_FEAT_MAX)
		return false;
	if (f == KP_FEAT_BTF)
		return kp_btf_path() != NULL; /* KPERF_BPF_BTF may change: not cached */
	pthread_once(&probe_once, probe);
	return have[f];
}

const char *kp_feature_name(enum kp_feature f)
{
	return f >= 0 && f < KP_FEAT_MAX ? feature_info[f].name : "?";
}

const char *kp_feature_since(enum kp_feature f)
{
	return f >= 0 && f < KP_FEAT_MAX ? feature_info[f].since : "?";
}

const char *kp_kernel_release(void)
{
	static char release[sizeof(((struct utsname *)0)->release)];
	struct utsname u;

	if (!release[0] && uname(&u) == 0)
		snprintf(release, sizeof(release), "%s", u.release);
	return release[0] ? release : "(unknown)";
}

int kp_lockdown_mode(char *buf, size_t size)
{
	char *text, *open, *close;
	int err;

	buf[0] = '\0';
	err = kp_read_file("/sys/kernel/security/lockdown", &text, NULL);
	if (err)
		return err;
	/* "none [integrity] confidentiality": the selected mode is in brackets */
	open = strchr(text, '[');
	close = open ? strchr(open, ']') : NULL;
	if (open && close)
		snprintf(buf, size, "%.*s", (int)(close - open - 1), open + 1);
	free(text);
	return buf[0] ? 0 : -ENOENT;
}

int kp_check_bpf_load(void)
{
	char mode[32];
	int err = kp_check_bpf_privileges();

	if (err)
		return err;
	/* confidentiality takes the helpers that read kernel memory away from BPF (the
	 * verifier then rejects every program that uses them): a policy, not a bug */
	if (kp_lockdown_mode(mode, sizeof(mode)) == 0 && !strcmp(mode, "confidentiality"))
		return kp_fail(LIBPERF_ERR_NO_PERMISSION, -EPERM,
			       "the kernel is locked down (lockdown=confidentiality): it does not "
			       "let BPF programs read kernel memory, which kperf-bpf needs; boot "
			       "with lockdown=integrity or none");
	return 0;
}
