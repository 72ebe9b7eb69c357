/*
 * bpf_log.c - libbpf's messages. A library must not print on its caller's stderr, but a
 * program the verifier refuses has to say why: libbpf's output is kept per thread (the
 * tail of it, and the verifier log of a rejected program) and quoted in the error message;
 * KPERF_BPF_DEBUG=1 also prints it.
 *
 * A verifier rejection comes back from the kernel as EACCES (or EINVAL), like a missing
 * privilege: kp_bpf_load_error() tells them apart, because the privileges were checked
 * before loading (kp_check_bpf_load) and libbpf names the program whose log it prints.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "core.h"
#include "kperf/pcerrc.h"

#define LOG_TAIL 2048
#define REJECT_LINES 6 /* lines of the verifier log quoted: the failing instructions */
#define REJECT_LINE_MAX 120 /* and at most this much of each */
#define REJECT_LOG 1024

static __thread char tail[LOG_TAIL];
static __thread size_t tail_len;
static __thread char rejected_prog[128];
static __thread char rejected_log[REJECT_LOG];
static pthread_once_t log_once = PTHREAD_ONCE_INIT;
static bool debug;

static void append_tail(const char *line)
{
	size_t n = strlen(line);

	if (n >= LOG_TAIL) {
		line += n - (LOG_TAIL - 1);
		n = LOG_TAIL - 1;
	}
	if (tail_len + n >= LOG_TAIL) {
		/* keep the newest text: drop from the front */
		size_t drop = tail_len + n - (LOG_TAIL - 1);

		if (drop > tail_len)
			drop = tail_len;
		memmove(tail, tail + drop, tail_len - drop);
		tail_len -= drop;
	}
	memcpy(tail + tail_len, line, n);
	tail_len += n;
	tail[tail_len] = '\0';
}

/* "prog 'NAME': ..." -> NAME */
static void take_prog_name(const char *msg)
{
	const char *p = strstr(msg, "prog '"), *e;

	if (!p)
		return;
	p += 6;
	e = strchr(p, '\'');
	if (e)
		snprintf(rejected_prog, sizeof(rejected_prog), "%.*s", (int)(e - p), p);
}

/* is this line of a verifier log a statistic, which says nothing about the reason? */
static bool stats_line(const char *line)
{
	return !strncmp(line, "processed ", 10) || !strncmp(line, "verification time", 17) ||
	       !strncmp(line, "stack depth", 11);
}

/* is this line the verifier's precision tracking (5.10 prints it before the complaint:
 * "regs=80 stack=0 before 4: ..."), which says nothing about the reason either? */
static bool noise_line(const char *line)
{
	return !strncmp(line, "regs=", 5) || !strncmp(line, "parent didn't have regs", 23) ||
	       !strncmp(line, "parent already had regs", 23) || !strncmp(line, "last_idx ", 9);
}

/* copy the lines [from, end) into rejected_log, but the precision tracking, each without the register states that new
 * verifiers print after an instruction ("10: (67) r7 <<= 32   ; R7=scalar(...)") and cut
 * to REJECT_LINE_MAX: what is left is the instruction and the verifier's complaint */
static void compact_lines(const char *from, const char *end)
{
	size_t len = 0;

	while (from < end) {
		const char *eol = memchr(from, '\n', (size_t)(end - from)), *cut;
		size_t n;

		if (!eol)
			eol = end;
		if (noise_line(from)) {
			from = eol + 1;
			continue;
		}
		cut = eol;
		for (const char *p = from; p + 2 < eol; p++)
			if (p[0] == ' ' && p[1] == ';' && p[2] == ' ' && p > from && p[-1] == ' ' &&
			    strchr(from, ':') < p) {
				cut = p;
				break;
			}
		while (cut > from && cut[-1] == ' ')
			cut--;
		n = (size_t)(cut - from);
		if (n > REJECT_LINE_MAX)
			n = REJECT_LINE_MAX;
		if (len + n + 2 >= sizeof(rejected_log))
			break;
		memcpy(rejected_log + len, from, n);
		len += n;
		rejected_log[len++] = '\n';
		from = eol + 1;
	}
	if (len)
		len--; /* no newline after the last line */
	rejected_log[len] = '\0';
}

/* keep the last lines of the log libbpf prints between BEGIN and END PROG LOAD LOG */
static void take_verifier_log(const char *msg)
{
	static const char mark[] = "-- BEGIN PROG LOAD LOG --\n";
	const char *begin = strstr(msg, mark), *end, *from, *line;
	int lines = 0;

	if (!begin)
		return;
	begin += sizeof(mark) - 1;
	end = strstr(begin, "-- END PROG LOAD LOG --");
	if (!end)
		end = begin + strlen(begin);
	/* walk back over the lines: skip statistics at the end, keep REJECT_LINES */
	from = end;
	while (from > begin && lines < REJECT_LINES) {
		const char *stop = from;

		while (stop > begin && stop[-1] == '\n')
			stop--;
		line = stop;
		while (line > begin && line[-1] != '\n')
			line--;
		if (line == stop)
			break;
		if (lines == 0 && stats_line(line))
			end = line;
		else if (!noise_line(line))
			lines++;
		from = line;
	}
	while (end > from && end[-1] == '\n')
		end--;
	compact_lines(from, end);
	take_prog_name(msg);
}

static int print_fn(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char *msg = NULL;
	va_list copy;

	va_copy(copy, ap);
	if (debug)
		vfprintf(stderr, fmt, copy);
	va_end(copy);
	if (level == LIBBPF_DEBUG)
		return 0;
	if (vasprintf(&msg, fmt, ap) < 0)
		return 0;
	if (strstr(msg, "BPF program load failed"))
		take_prog_name(msg);
	take_verifier_log(msg);
	append_tail(msg);
	free(msg);
	return 0;
}

static void init_once(void)
{
	const char *d = secure_getenv("KPERF_BPF_DEBUG");

	debug = d && *d && strcmp(d, "0");
	libbpf_set_print(print_fn);
}

void kp_bpf_log_init(void)
{
	pthread_once(&log_once, init_once);
}

const char *kp_bpf_log_tail(void)
{
	return tail;
}

void kp_bpf_log_clear(void)
{
	tail_len = 0;
	tail[0] = '\0';
	rejected_prog[0] = '\0';
	rejected_log[0] = '\0';
}

const char *kp_bpf_rejected_prog(void)
{
	return rejected_prog;
}

const char *kp_bpf_rejected_log(void)
{
	return rejected_log;
}

int kp_bpf_load_error(const char *what, int err)
{
	if (kp_failed())
		return err;
	if (rejected_prog[0])
		return kp_fail(
			LIBPERF_ERR_BPF_ACT_FAILED, err,
			"the verifier of kernel %s rejected the BPF program %s (%s "
			"programs, %s):\n%s\nkperf-bpf's programs are meant to load on every "
			"kernel from 5.10 on: please report this, with the whole log that "
			"KPERF_BPF_DEBUG=1 prints",
			kp_kernel_release(), rejected_prog, what, strerror(-err),
			rejected_log[0] ? rejected_log : "(the kernel gave no log)");
	/* not the verifier: privileges were checked before loading, but a security module
	 * or a container's seccomp profile can still say no */
	if (err == -EPERM || err == -EACCES)
		return kp_fail(LIBPERF_ERR_NO_PERMISSION, err,
			       "the kernel refused to load the %s BPF programs (%s) although this "
			       "process has the capabilities: a security policy (LSM, seccomp, "
			       "lockdown) forbids it. %s",
			       what, strerror(-err), tail);
	return kp_fail(LIBPERF_ERR_BPF_ACT_FAILED, err,
		       "the %s BPF programs failed to load on kernel %s: %s %s", what,
		       kp_kernel_release(), strerror(-err), tail);
}
