/*
 * bpf_log.c - libbpf's messages. A library must not print on its caller's stderr, but a
 * program the verifier refuses has to say why: libbpf's output is kept per thread (the
 * tail of it) and quoted in the error message; KPERF_BPF_DEBUG=1 also prints it.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "core.h"

#define LOG_TAIL 2048

static __thread char tail[LOG_TAIL];
static __thread size_t tail_len;
static pthread_once_t log_once = PTHREAD_ONCE_INIT;
static bool debug;

static int print_fn(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char line[512];
	size_t n;
	va_list copy;

	va_copy(copy, ap);
	if (debug)
		vfprintf(stderr, fmt, copy);
	va_end(copy);
	if (level == LIBBPF_DEBUG)
		return 0;
	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	if (n >= LOG_TAIL)
		n = LOG_TAIL - 1;
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
}
