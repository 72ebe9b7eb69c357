/*
 * http.c - the agent's HTTP server (libmicrohttpd, a thread per connection):
 *
 *   GET /metrics                 Prometheus text 0.0.4; OpenMetrics 1.0 when Accept asks
 *   GET /debug/pprof/profile     ?seconds=N: a gzipped pprof CPU profile (default 30)
 *   GET /debug/pprof/offcpu      ?seconds=N: the same of the time spent blocked
 *   GET /healthz, /readyz        alive; ready once the programs are attached
 *
 * Bounds: --max-connections at once (more are closed on accept), 16 KiB per request
 * (request line and headers: a longer one gets 414 or 431 from the library), an idle
 * connection closed after 10 s, one profile at a time (429 for the next), N at most
 * --max-profile-seconds (400 beyond, as Go answers a profile longer than its write timeout;
 * unlike Go, a malformed N is refused, not replaced by the default).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <microhttpd.h>

#include "agent.h"

#define REQUEST_MEMORY (16 * 1024)
#define IDLE_TIMEOUT_S 10
#define THREAD_STACK (512 * 1024)
#define MAX_RESPONSE (64u << 20)
#define DEFAULT_PROFILE_S 30

struct agent_http {
	struct MHD_Daemon *d;
};

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status, const char *type,
			     char *body, size_t len, bool owned)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, body,
					    owned ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_MUST_COPY);
	if (!r) {
		if (owned)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_TOO_MANY_REQUESTS)
		MHD_add_response_header(r, "Retry-After", "1");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result text(struct MHD_Connection *conn, unsigned status, const char *msg)
{
	return reply(conn, status, "text/plain; charset=utf-8", (char *)msg, strlen(msg), false);
}

static enum MHD_Result serve_metrics(struct agent *a, struct MHD_Connection *conn)
{
	const char *accept = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Accept");
	bool om = accept && strstr(accept, "application/openmetrics-text");
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int rc;

	if (!f)
		return text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	pthread_mutex_lock(&a->lock);
	rc = a->col ? agent_collect_render(a->col, f, om) : -1;
	pthread_mutex_unlock(&a->lock);
	if (fclose(f) || rc || len > MAX_RESPONSE) {
		free(buf);
		return text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
			    "the metrics could not be written\n");
	}
	return reply(conn, MHD_HTTP_OK,
		     om ? "application/openmetrics-text; version=1.0.0; charset=utf-8" :
			  "text/plain; version=0.0.4; charset=utf-8",
		     buf, len, true);
}

/* ?seconds=N: 0 with *out set, else a message for a 400. */
static const char *profile_seconds(const char *v, unsigned max, unsigned *out)
{
	unsigned long n = 0;
	const char *p;

	if (!v) {
		*out = DEFAULT_PROFILE_S < max ? DEFAULT_PROFILE_S : max;
		return NULL;
	}
	if (!*v)
		return "seconds wants a whole number of seconds, not an empty value\n";
	for (p = v; *p; p++) {
		if (*p < '0' || *p > '9' || p - v > 9)
			return "seconds wants a whole number of seconds from 1 to the agent's "
			       "--max-profile-seconds\n";
		n = n * 10 + (unsigned long)(*p - '0');
	}
	if (n == 0)
		return "seconds must be at least 1\n";
	if (n > max)
		return "profile duration exceeds the agent's --max-profile-seconds\n";
	*out = (unsigned)n;
	return NULL;
}

static enum MHD_Result serve_profile(struct agent *a, struct MHD_Connection *conn,
				     enum agent_profile_kind kind)
{
	const char *v = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "seconds");
	struct agent_config cfg;
	char err[512], *buf = NULL;
	const char *bad;
	unsigned secs;
	size_t len = 0;
	uint64_t lost = 0;
	int status;

	pthread_mutex_lock(&a->lock);
	cfg = a->cfg; /* the numbers; the strings stay valid: only a restart changes them */
	pthread_mutex_unlock(&a->lock);
	bad = profile_seconds(v, cfg.max_profile_s, &secs);
	if (bad)
		return text(conn, MHD_HTTP_BAD_REQUEST, bad);
	if (pthread_mutex_trylock(&a->profile_lock))
		return text(conn, MHD_HTTP_TOO_MANY_REQUESTS,
			    "a profile is being taken: one at a time\n");
	status = agent_profile_take(&a->profiler, &cfg, kind, secs, &a->stopping, &buf, &len, &lost,
				    err, sizeof(err));
	pthread_mutex_unlock(&a->profile_lock);
	pthread_mutex_lock(&a->lock);
	a->profile_lost += lost;
	pthread_mutex_unlock(&a->lock);
	if (status) {
		strncat(err, "\n", sizeof(err) - strlen(err) - 1);
		return reply(conn, (unsigned)status, "text/plain; charset=utf-8", err, strlen(err),
			     false);
	}
	if (len > MAX_RESPONSE) {
		free(buf);
		return text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "the profile is too large\n");
	}
	return reply(conn, MHD_HTTP_OK, "application/octet-stream", buf, len, true);
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *conn, const char *url,
			       const char *method, const char *version, const char *upload_data,
			       size_t *upload_data_size, void **con_cls)
{
	struct agent *a = cls;

	(void)version;
	(void)upload_data;
	if (!*con_cls) {
		/* the first call sees the headers; a body, if any, is not read */
		*con_cls = a;
		if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
			return text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n");
		if (*upload_data_size)
			return text(conn, MHD_HTTP_BAD_REQUEST, "a GET has no body\n");
	} else {
		*upload_data_size = 0;
	}
	if (!strcmp(url, "/metrics"))
		return serve_metrics(a, conn);
	if (!strcmp(url, "/healthz"))
		return text(conn, MHD_HTTP_OK, "ok\n");
	if (!strcmp(url, "/readyz"))
		return a->ready ? text(conn, MHD_HTTP_OK, "ready\n") :
				  text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "not ready\n");
	if (!strcmp(url, "/debug/pprof/profile"))
		return serve_profile(a, conn, PROFILE_CPU);
	if (!strcmp(url, "/debug/pprof/offcpu"))
		return serve_profile(a, conn, PROFILE_OFFCPU);
	if (!strcmp(url, "/"))
		return text(conn, MHD_HTTP_OK,
			    "kperf-bpf agent: /metrics /debug/pprof/profile?seconds=N "
			    "/debug/pprof/offcpu?seconds=N /healthz /readyz\n");
	return text(conn, MHD_HTTP_NOT_FOUND,
		    "not found: the agent serves /metrics, /debug/pprof/profile, "
		    "/debug/pprof/offcpu, /healthz and /readyz\n");
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	fputs("kperf-bpf agent: http: ", stderr);
	vfprintf(stderr, fmt, ap);
}

int agent_http_start(struct agent *a, const char *listen, unsigned max_conn,
		     struct agent_http **out, char *err, size_t errsz)
{
	struct addrinfo hints = { .ai_flags = AI_PASSIVE | AI_NUMERICSERV,
				  .ai_socktype = SOCK_STREAM },
			*ai = NULL;
	char host[128];
	const char *colon = strrchr(listen, ':'), *port;
	struct agent_http *h;
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_AUTO_INTERNAL_THREAD |
			 MHD_USE_ERROR_LOG;
	int rc;

	*out = NULL;
	if (!colon || (size_t)(colon - listen) >= sizeof(host)) {
		snprintf(err, errsz, "--listen wants ADDRESS:PORT, not '%s'", listen);
		return -1;
	}
	snprintf(host, sizeof(host), "%.*s", (int)(colon - listen), listen);
	port = colon + 1;
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = 0;
	}
	rc = getaddrinfo(host[0] ? host : NULL, port, &hints, &ai);
	if (rc) {
		snprintf(err, errsz, "--listen %s: %s", listen, gai_strerror(rc));
		return -1;
	}
	if (ai->ai_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	h = calloc(1, sizeof(*h));
	if (!h) {
		freeaddrinfo(ai);
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	h->d = MHD_start_daemon(flags, 0, NULL, NULL, handler, a, MHD_OPTION_EXTERNAL_LOGGER,
				mhd_log, NULL, MHD_OPTION_SOCK_ADDR, ai->ai_addr,
				MHD_OPTION_CONNECTION_LIMIT, max_conn,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)IDLE_TIMEOUT_S,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)REQUEST_MEMORY,
				MHD_OPTION_THREAD_STACK_SIZE, (size_t)THREAD_STACK, MHD_OPTION_END);
	rc = errno;
	freeaddrinfo(ai);
	if (!h->d) {
		snprintf(err, errsz, "cannot listen on %s: %s", listen, strerror(rc));
		free(h);
		return -1;
	}
	*out = h;
	return 0;
}

unsigned agent_http_port(struct agent_http *h)
{
	const union MHD_DaemonInfo *i = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);

	return i ? i->port : 0;
}

void agent_http_stop(struct agent_http *h)
{
	if (!h)
		return;
	MHD_stop_daemon(h->d);
	free(h);
}
