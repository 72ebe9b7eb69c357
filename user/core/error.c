/*
 * error.c - the per-thread error and warning state behind Perrorno/Perror/GetWarn.
 *
 * Each thread has its own last error, so two threads collecting at once do not see each
 * other's failures. Messages are formatted where the failure is understood (which pid,
 * which event) and kept until the next public call of the same thread.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core.h"
#include "kperf/pcerrc.h"

#define KP_MSG_MAX 2048 /* room for the last lines of a verifier log, or a few warnings */

static __thread int err_code;
static __thread char err_msg[KP_MSG_MAX];
static __thread int warn_code;
static __thread char warn_msg[KP_MSG_MAX];

int kp_fail(int code, int neg_errno, const char *fmt, ...)
{
	va_list ap;

	err_code = code;
	va_start(ap, fmt);
	vsnprintf(err_msg, sizeof(err_msg), fmt, ap);
	va_end(ap);
	return neg_errno < 0 ? neg_errno : -EINVAL;
}

/* <line> is one of the lines of warn_msg */
static bool warned(const char *line)
{
	size_t len = strlen(line);
	const char *p;

	for (p = warn_msg; (p = strstr(p, line)); p++)
		if ((p == warn_msg || p[-1] == '\n') && (p[len] == '\n' || !p[len]))
			return true;
	return false;
}

/* Every warning of a call reaches the caller: a second one (records dropped, say) must not
 * hide the first (calls in an overflow row). Each is a line of the message, once; when they
 * fill it, the oldest lines go first. The code is the latest warning's. */
void kp_warn(int code, const char *fmt, ...)
{
	char line[KP_MSG_MAX];
	size_t have, len;
	va_list ap;

	warn_code = code;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (!warn_msg[0] || warned(line)) {
		if (!warn_msg[0])
			memcpy(warn_msg, line, sizeof(warn_msg));
		return;
	}
	len = strlen(line);
	have = strlen(warn_msg);
	while (have && have + 1 + len >= sizeof(warn_msg)) {
		char *nl = strchr(warn_msg, '\n');

		if (!nl) {
			have = 0;
			break;
		}
		have -= (size_t)(nl + 1 - warn_msg);
		memmove(warn_msg, nl + 1, have + 1);
	}
	if (!have) {
		memcpy(warn_msg, line, sizeof(warn_msg));
		return;
	}
	warn_msg[have] = '\n';
	memcpy(warn_msg + have + 1, line, len + 1);
}

void kp_clear(void)
{
	err_code = SUCCESS;
	err_msg[0] = '\0';
	warn_code = SUCCESS;
	warn_msg[0] = '\0';
}

void kp_clear_error(void)
{
	err_code = SUCCESS;
	err_msg[0] = '\0';
}

int kp_fail_recode(int code, int neg_errno)
{
	err_code = code;
	return neg_errno < 0 ? neg_errno : -EINVAL;
}

int kp_perf_errno_code(int err)
{
	switch (err < 0 ? -err : err) {
	case ENOENT:
		return LIBPERF_ERR_OPEN_INVALID_FILE;
	case EOPNOTSUPP:
		return LIBPERF_ERR_INVALID_EVENT;
	case EINVAL:
		return LIBPERF_ERR_DEVICE_INVAL;
	case EACCES:
	case EPERM:
		/* libkperf gives EPERM its "file not found" code; it is a permission refusal
		 * (LSM, paranoid), and the code says so */
		return LIBPERF_ERR_NO_PERMISSION;
	case EBUSY:
		return LIBPERF_ERR_DEVICE_BUSY;
	case ESRCH:
		return LIBPERF_ERR_NO_PROC;
	case EMFILE:
	case ENFILE:
		return LIBPERF_ERR_TOO_MANY_FD;
	default:
		return UNKNOWN_ERROR;
	}
}

bool kp_failed(void)
{
	return err_code != SUCCESS;
}

int kp_public_fail(int neg_errno)
{
	if (err_code != SUCCESS)
		return -1;
	switch (neg_errno) {
	case -ENOMEM:
		kp_fail(COMMON_ERR_NOMEM, neg_errno, "out of memory");
		break;
	case -EPERM:
	case -EACCES:
		kp_fail(LIBPERF_ERR_NO_PERMISSION, neg_errno,
			"permission denied (%s): run as root or grant CAP_BPF and CAP_PERFMON",
			strerror(-neg_errno));
		break;
	default:
		kp_fail(UNKNOWN_ERROR, neg_errno, "unexpected failure: %s",
			strerror(neg_errno < 0 ? -neg_errno : EINVAL));
		break;
	}
	return -1;
}

KP_EXPORT int Perrorno(void)
{
	return err_code;
}

KP_EXPORT const char *Perror(void)
{
	if (err_code == SUCCESS)
		return "success";
	return err_msg;
}

KP_EXPORT int GetWarn(void)
{
	return warn_code;
}

KP_EXPORT const char *GetWarnMsg(void)
{
	return warn_msg;
}
