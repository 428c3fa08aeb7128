/*
 * GET /metrics (docs/metrics.md): apid's own families, counted as each
 * request is freed (metrics_request_done, the HTTP server's hook), then
 * managerd's and dockerd-proxy's, which managerd sends as text.  Labels
 * are the route table's patterns ("other" for a path that matched none),
 * a method of a fixed set and the status: never a path as the client
 * gave it, never an id.  The answer goes out like any other: a slow
 * scraper holds its own connection's buffer, not the loop.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "apid.h"
#include "log.h"
#include "metrics.h"
#include "metrics_msg.h"

#define METRICS_CTYPE	"text/plain; version=0.0.4; charset=utf-8"
/* managerd's families and the proxy's, each at most METRIC_TEXT_MAX. */
#define METRICS_PEER_MAX	(2 * METRIC_TEXT_MAX)

static struct metric_family requests = {
	.name = "agent_sandbox_http_requests_total",
	.help = "HTTP requests answered (or given up) by apid, by route, "
	    "method and status (\"none\": the client left before any "
	    "answer).",
	.type = METRIC_COUNTER, .labels = { "route", "method", "status", NULL }
};
static struct metric_family durations = {
	.name = "agent_sandbox_http_request_duration_seconds",
	.help = "Time from a request's head to the end of its answer, by "
	    "route.",
	.type = METRIC_HISTOGRAM, .labels = { "route", NULL },
	.bounds = metric_seconds_bounds, .nbounds = METRIC_SECONDS_NBOUNDS
};
static struct metric_family in_bytes = {
	.name = "agent_sandbox_http_request_body_bytes_total",
	.help = "Request body bytes read (decoded), by route.",
	.type = METRIC_COUNTER, .labels = { "route", NULL }
};
static struct metric_family out_bytes = {
	.name = "agent_sandbox_http_response_body_bytes_total",
	.help = "Response body bytes queued for clients, by route.",
	.type = METRIC_COUNTER, .labels = { "route", NULL }
};
static struct metric_family connections = {
	.name = "agent_sandbox_http_connections",
	.help = "Client connections open: \"http\" served by the HTTP server, "
	    "\"taken\" by a route (WebSockets, and requests whose client "
	    "left but which still hold a descriptor).",
	.type = METRIC_GAUGE, .labels = { "state", NULL }
};

static int	 rss_fd = -1;

/* Before the jail: /proc is not there after it. */
void
route_metrics_init(void)
{
	if ((rss_fd = metric_rss_open()) == -1)
		log_warn("/proc/self/statm: apid's memory goes unreported");
}

/* A method of the fixed set, else "other": a client's token is no label. */
static const char *
method_label(const char *method)
{
	static const char *const known[] = {
		"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"
	};
	size_t	 i;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (method != NULL && strcmp(method, known[i]) == 0)
			return known[i];
	return "other";
}

void
metrics_request_done(struct http_request *req)
{
	const char	*route = req->route != NULL ? req->route : "other";
	const char	*labels[3];
	char		 status[16];

	if (req->status > 0)
		snprintf(status, sizeof(status), "%d", req->status);
	else
		strlcpy(status, "none", sizeof(status));
	labels[0] = route;
	labels[1] = method_label(req->head.method);
	labels[2] = status;
	metric_add(&requests, labels, 1);
	metric_observe(&durations, &route, metric_since(&req->started));
	metric_add(&in_bytes, &route, (double)req->head.body_bytes);
	metric_add(&out_bytes, &route, (double)req->out_bytes);
}

static void
render_own(struct metric_text *t)
{
	static const char *const http_state[] = { "http" };
	static const char *const taken_state[] = { "taken" };

	metric_set(&connections, http_state, (double)apid->http.nconns);
	metric_set(&connections, taken_state, (double)apid->http.taken);
	metric_render(t, &requests);
	metric_render(t, &durations);
	metric_render(t, &in_bytes);
	metric_render(t, &out_bytes);
	metric_render(t, &connections);
}

/* One scrape: what managerd has sent of its text so far. */
struct scrape {
	struct evbuffer	*peers;
};

static void
scrape_free(struct scrape *s)
{
	if (s->peers != NULL)
		evbuffer_free(s->peers);
	free(s);
}

static void
scrape_answer(struct http_request *req, struct scrape *s)
{
	struct metric_text	 t;
	struct evbuffer		*b;

	metric_text_init(&t);
	render_own(&t);
	if (t.error || (b = evbuffer_new()) == NULL) {
		metric_text_free(&t);
		respond_error(req, ERR_INTERNAL, "cannot render the metrics");
		return;
	}
	if (evbuffer_add(b, t.buf, t.len) == -1 ||
	    evbuffer_add_buffer(b, s->peers) == -1)
		respond_error(req, ERR_INTERNAL, "out of memory");
	else
		respond_buffer(req, 200, METRICS_CTYPE, b);
	evbuffer_free(b);
	metric_text_free(&t);
}

static int
scrape_reply(struct apid_request *ar, struct imsg *imsg)
{
	struct scrape		*s = ar->arg;
	struct metrics_text	 mt;

	switch (imsg->hdr.type) {
	case MSG_METRICS_TEXT:
		if (msg_get_metrics_text(imsg, &mt) == -1 ||
		    evbuffer_get_length(s->peers) + mt.len > METRICS_PEER_MAX)
			peer_bad_message(&apid->parent, imsg,
			    "malformed metrics");
		if (evbuffer_add(s->peers, mt.text, mt.len) == -1)
			fatal("evbuffer_add");
		metrics_text_free(&mt);
		return APID_REPLY_MORE;
	case MSG_METRICS_END:
		if (imsg->len != 0)
			peer_bad_message(&apid->parent, imsg,
			    "unexpected payload");
		scrape_answer(ar->req, s);
		break;
	case MSG_ERROR:
		reply_error_msg(ar->req, imsg);
		break;
	default:
		peer_bad_message(&apid->parent, imsg, "wrong reply type");
	}
	scrape_free(s);
	return APID_REPLY_DONE;
}

void
route_metrics(struct http_request *req, char **params)
{
	struct metrics_rss	 rss;
	struct scrape		*s;
	struct msgw		 w;

	(void)params;
	if (auth_metrics(req, apid->metrics_key) == -1)
		return;
	if ((s = calloc(1, sizeof(*s))) == NULL ||
	    (s->peers = evbuffer_new()) == NULL) {
		free(s);
		respond_error(req, ERR_INTERNAL, "out of memory");
		return;
	}
	rss.rss_bytes = metric_rss_bytes(rss_fd);
	msgw_init(&w);
	msg_put_metrics_rss(&w, &rss);
	if (apid_request_send(req, MSG_METRICS_REQUEST, &w, -1, scrape_reply,
	    s) == NULL) {
		scrape_free(s);
		respond_error(req, ERR_INTERNAL, "cannot reach managerd");
	}
}
