/*
 * A request as routes see it: its target split into a decoded path and
 * a raw query, its fields, its body (collected whole for JSON routes,
 * streamed with backpressure for uploads) and the callbacks that tell a
 * route its client went away or its output drained.
 */
#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "apid.h"
#include "format.h"
#include "log.h"

#define CONTINUE_LINE	"HTTP/1.1 100 Continue\r\n\r\n"

struct http_request *
http_request_new(struct http_conn *c)
{
	struct http_request	*req;

	if ((req = calloc(1, sizeof(*req))) == NULL)
		return NULL;
	req->conn = c;
	/* Route and key come later: NULL travels as "" (caller.h). */
	if (c != NULL && (req->caller.client_addr = strdup(c->addr)) == NULL) {
		free(req);
		return NULL;
	}
	req->srv = c != NULL ? c->srv : NULL;
	if (clock_gettime(CLOCK_MONOTONIC, &req->started) == -1)
		memset(&req->started, 0, sizeof(req->started));
	return req;
}

void
http_request_free(struct http_request *req)
{
	if (req == NULL)
		return;
	if (req->holds > 0) {
		req->free_pending = 1;
		return;
	}
	if (req->srv != NULL && req->srv->request_done != NULL)
		req->srv->request_done(req);
	http_head_free(&req->head);
	if (req->body != NULL)
		evbuffer_free(req->body);
	if (req->out_fields != NULL)
		evbuffer_free(req->out_fields);
	free(req->path);
	caller_free(&req->caller);
	free(req);
}

/* %XX decoded, anything else (a bad escape, '+') kept as it is. */
static char *
path_decode(const char *s, size_t len, size_t *outlen)
{
	char	*out;

	if ((out = malloc(len + 1)) == NULL)
		return NULL;
	*outlen = format_percent_decode(s, len, 0, out);
	out[*outlen] = '\0';
	return out;
}

/*
 * The origin-form path and query of the target; an absolute-form target
 * (RFC 9112 §3.2.2) loses its scheme and authority.  A path that decodes
 * to a NUL names no route: it becomes "" (a 404).
 */
int
http_request_prepare(struct http_request *req)
{
	const char	*t = req->head.target, *q, *p;
	size_t		 len;

	if ((p = strstr(t, "://")) != NULL && p == strpbrk(t, "/?:")) {
		p += 3;
		t = p + strcspn(p, "/?");
	}
	q = strchr(t, '?');
	len = q != NULL ? (size_t)(q - t) : strlen(t);
	req->query = q != NULL ? q + 1 : NULL;
	if (len == 0) {
		t = "/";
		len = 1;
	}
	if ((req->path = path_decode(t, len, &len)) == NULL)
		return -1;
	if (strlen(req->path) != len)
		req->path[0] = '\0';
	req->body_state = (req->head.chunked || req->head.length > 0) ?
	    BODY_UNREAD : BODY_DONE;
	return 0;
}

const char *
http_request_field(const struct http_request *req, const char *name)
{
	return http_head_field(&req->head, name);
}

const char *
http_request_method(const struct http_request *req)
{
	return req->head.method;
}

const void *
http_request_body(struct http_request *req, size_t *len)
{
	*len = req->body != NULL ? evbuffer_get_length(req->body) : 0;
	if (*len == 0)
		return NULL;
	return evbuffer_pullup(req->body, -1);
}

void
http_request_on_gone(struct http_request *req, http_notify_cb cb, void *arg)
{
	req->gone = cb;
	req->gone_arg = arg;
}

void
http_request_on_drained(struct http_request *req, http_notify_cb cb,
    void *arg)
{
	req->drained = cb;
	req->drained_arg = arg;
}

size_t
http_request_backlog(const struct http_request *req)
{
	if (req->conn == NULL)
		return 0;
	return evbuffer_get_length(bufferevent_get_output(req->conn->bev));
}

/* A client that waits for our word before it sends its body gets it. */
static void
send_continue(struct http_request *req)
{
	struct http_conn	*c = req->conn;

	if (!req->head.expect_continue || req->continue_sent ||
	    req->head.minor == 0)
		return;
	req->continue_sent = 1;
	if (evbuffer_get_length(bufferevent_get_input(c->bev)) == 0)
		http_conn_write(c, CONTINUE_LINE, sizeof(CONTINUE_LINE) - 1);
}

/* The body is being read for (data, end, arg), streamed or spliced. */
static void
body_claim(struct http_request *req, uint64_t max, http_bytes_cb data,
    http_end_cb end, void *arg)
{
	req->body_max = max;
	req->body_data = data;
	req->body_end = end;
	req->body_arg = arg;
	req->body_state = BODY_READING;
	send_continue(req);
}

static int
body_start(struct http_request *req, uint64_t max, http_bytes_cb data,
    http_end_cb end, void *arg)
{
	if (req->conn == NULL || req->body_state != BODY_UNREAD) {
		end(arg, req->conn != NULL && req->body_state == BODY_DONE);
		return 0;
	}
	if (req->head.has_length && req->head.length > max)
		return -1;
	body_claim(req, max, data, end, arg);
	http_conn_feed_body(req->conn);
	return 0;
}

int
http_body_stream(struct http_request *req, uint64_t max, http_bytes_cb data,
    http_end_cb end, void *arg)
{
	return body_start(req, max, data, end, arg);
}

int
http_body_splice(struct http_request *req, uint64_t max, int fd,
    http_end_cb end, void *arg)
{
	if (req->conn == NULL || req->body_state != BODY_UNREAD ||
	    req->head.chunked || !req->head.has_length)
		return 1;
	if (req->head.length > max)
		return -1;
	body_claim(req, max, NULL, end, arg);
	if (http_conn_splice(req->conn, fd) == -1) {
		req->body_state = BODY_UNREAD;
		return 1;
	}
	return 0;
}

static void
collect_data(void *arg, const char *data, size_t len)
{
	struct http_request	*req = arg;

	if (evbuffer_add(req->body, data, len) == -1) {
		log_warnx("out of memory for a request body");
		req->body_state = BODY_FAILED;
	}
}

/*
 * JSON routes: the whole body, at most max, into req->body; done(req, 1)
 * when it is here (at once if there is none).  -1: the declared length
 * is over max.
 */
int
http_body_collect(struct http_request *req, uint64_t max, http_end_cb done)
{
	if (req->body == NULL && (req->body = evbuffer_new()) == NULL)
		return -1;
	return body_start(req, max, collect_data, done, req);
}

void
http_body_pause(struct http_request *req)
{
	req->body_paused = 1;
}

void
http_body_resume(struct http_request *req)
{
	if (!req->body_paused)
		return;
	req->body_paused = 0;
	if (req->conn != NULL)
		http_conn_kick(req->conn);
}
