/*
 * dockerd-proxy's families for GET /metrics (docs/metrics.md): every
 * request to Docker, timed from its start to its end, by endpoint; and
 * the ones that failed, by endpoint and kind.  The endpoint label is a
 * template of the table below, the calls this proxy makes, matched
 * against the request's method and path (the API version and the query
 * cut off; each "{...}" one segment, which docker_path() always makes of
 * an id or a name): never an id.  A request matching none is "other".
 * managerd asks with DOCKER_METRICS; the answer is the text, then the
 * proxy's resident bytes, which managerd renders.
 */
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "metrics.h"
#include "metrics_msg.h"
#include "proxy.h"

static const char *const endpoints[] = {
	"GET /_ping",
	"POST /containers/create",
	"GET /containers/json",
	"GET /containers/{id}/json",
	"POST /containers/{id}/start",
	"DELETE /containers/{id}",
	"POST /containers/{id}/exec",
	"GET /containers/{id}/archive",
	"HEAD /containers/{id}/archive",
	"PUT /containers/{id}/archive",
	"POST /exec/{id}/start",
	"GET /exec/{id}/json",
	"POST /exec/{id}/resize",
	"POST /images/create",
	"GET /images/{name}/json",
	"POST /volumes/create",
	"GET /volumes",
	"GET /volumes/{name}",
	"DELETE /volumes/{name}",
	"POST /networks/create",
	"GET /networks/{name}",
	"GET /events",
	"POST /containers/{id}/update",
};
#define NENDPOINTS	((int)(sizeof(endpoints) / sizeof(endpoints[0])))
#define ENDPOINT_OTHER	NENDPOINTS

static struct metric_family durations = {
	.name = "agent_sandbox_docker_request_duration_seconds",
	.help = "Requests dockerd-proxy made to Docker, from the connect to "
	    "the end of the response (a stream's: to its end), by endpoint "
	    "template.",
	.type = METRIC_HISTOGRAM, .labels = { "endpoint", NULL },
	.bounds = metric_seconds_bounds, .nbounds = METRIC_SECONDS_NBOUNDS
};
static struct metric_family errors = {
	.name = "agent_sandbox_docker_errors_total",
	.help = "Requests to Docker that failed, by endpoint template and "
	    "kind: connect, io, protocol, too_large, timeout, nomem, busy, or "
	    "http_4xx and http_5xx for Docker's error statuses.",
	.type = METRIC_COUNTER, .labels = { "endpoint", "kind", NULL }
};

static int	 rss_fd = -1;

static const char *
endpoint_name(int tag)
{
	return tag >= 0 && tag < NENDPOINTS ? endpoints[tag] : "other";
}

/* The path without "/v1.41" (any version) and without the query. */
static size_t
path_core(const char **path)
{
	const char	*p = *path;

	if (p[0] == '/' && p[1] == 'v' && p[2] >= '0' && p[2] <= '9') {
		p += 2;
		p += strspn(p, "0123456789.");
		*path = p;
	}
	return strcspn(p, "?");
}

/* 1 if path (len bytes) fits the template's path, "{...}" one segment. */
static int
path_fits(const char *tmpl, const char *path, size_t len)
{
	const char	*end = path + len;
	size_t		 t, n;

	while (*tmpl != '\0' && path < end) {
		if (*tmpl++ != '/' || *path++ != '/')
			return 0;
		t = strcspn(tmpl, "/");
		n = strcspn(path, "/?");
		if (path + n > end)
			n = end - path;
		if (*tmpl == '{' ? n == 0 : (n != t ||
		    strncmp(tmpl, path, n) != 0))
			return 0;
		tmpl += t;
		path += n;
	}
	return *tmpl == '\0' && path == end;
}

static int
observe_start(const char *method, const char *path)
{
	size_t		 len, mlen;
	int		 i;

	len = path_core(&path);
	for (i = 0; i < NENDPOINTS; i++) {
		mlen = strcspn(endpoints[i], " ");
		if (strlen(method) == mlen &&
		    strncmp(endpoints[i], method, mlen) == 0 &&
		    path_fits(endpoints[i] + mlen + 1, path, len))
			return i;
	}
	return ENDPOINT_OTHER;
}

static const char *
error_kind(int status, enum docker_http_error e)
{
	switch (e) {
	case DOCKER_HTTP_OK:
		break;
	case DOCKER_HTTP_CONNECT:
		return "connect";
	case DOCKER_HTTP_IO:
		return "io";
	case DOCKER_HTTP_PROTOCOL:
		return "protocol";
	case DOCKER_HTTP_TOO_LARGE:
		return "too_large";
	case DOCKER_HTTP_TIMEOUT:
		return "timeout";
	case DOCKER_HTTP_NOMEM:
		return "nomem";
	case DOCKER_HTTP_BUSY:
		return "busy";
	case DOCKER_HTTP_CANCELLED:
		/* Ours, not Docker's: a stream that was stopped. */
		return NULL;
	}
	if (status >= 500)
		return "http_5xx";
	if (status >= 400)
		return "http_4xx";
	return NULL;
}

static void
observe_end(int tag, int status, enum docker_http_error e, double secs)
{
	const char	*labels[2];

	labels[0] = endpoint_name(tag);
	metric_observe(&durations, labels, secs);
	if ((labels[1] = error_kind(status, e)) != NULL)
		metric_add(&errors, labels, 1);
}

static const struct docker_http_observer observer = {
	observe_start, observe_end
};

/* Before the jail: /proc is not there after it. */
void
proxy_metrics_init(void)
{
	if ((rss_fd = metric_rss_open()) == -1)
		log_warn("/proc/self/statm: the proxy's memory goes "
		    "unreported");
	docker_http_observe(&observer);
}

struct text_sink {
	struct peer	*p;
	uint32_t	 peerid;
};

static int
send_text(void *arg, struct msgw *w)
{
	struct text_sink	*s = arg;

	return peer_send(s->p, MSG_DOCKER_METRICS_TEXT, s->peerid, -1, w);
}

void
proxy_metrics_send(struct peer *p, uint32_t peerid)
{
	struct text_sink	 sink = { p, peerid };
	struct metric_text	 t;
	struct metrics_rss	 rss;
	struct msgw		 w;

	metric_text_init(&t);
	metric_render(&t, &durations);
	metric_render(&t, &errors);
	if (t.error || metrics_text_send(t.buf, t.len, send_text, &sink) ==
	    -1) {
		metric_text_free(&t);
		(void)peer_send_error(p, peerid, ERR_INTERNAL,
		    "cannot render the proxy's metrics");
		return;
	}
	metric_text_free(&t);
	rss.rss_bytes = metric_rss_bytes(rss_fd);
	msgw_init(&w);
	msg_put_metrics_rss(&w, &rss);
	(void)peer_send(p, MSG_DOCKER_METRICS_END, peerid, -1, &w);
}
