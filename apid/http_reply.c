/*
 * Replies: a status line and fields, then a body with a Content-Length,
 * chunked (HTTP/1.1), or until the connection closes (an HTTP/1.0
 * stream).  The last reply call of a request frees it; on a request
 * whose client went away every call is a no-op but that last one.
 *
 * Whether the connection is kept after a reply is decided when its head
 * is written: never after a body that was not read whole (what is left
 * of it must not be taken for the next request), never for a client
 * that did not ask (HTTP/1.0 without keep-alive, "Connection: close").
 */
#include <sys/queue.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "apid.h"
#include "log.h"

const char *
http_reason(int status)
{
	switch (status) {
	case 100: return "Continue";
	case 101: return "Switching Protocols";
	case 200: return "OK";
	case 201: return "Created";
	case 204: return "No Content";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 409: return "Conflict";
	case 413: return "Payload Too Large";
	case 414: return "URI Too Long";
	case 417: return "Expectation Failed";
	case 422: return "Unprocessable Entity";
	case 426: return "Upgrade Required";
	case 429: return "Too Many Requests";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 501: return "Not Implemented";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 505: return "HTTP Version Not Supported";
	case 507: return "Insufficient Storage";
	default: return "Unknown";
	}
}

/* The Date field (RFC 9110 §6.6.1), made once a second. */
static const char *
date_field(void)
{
	static char	 buf[64];
	static time_t	 made;
	time_t		 now = time(NULL);
	struct tm	 tm;

	if (now != made && gmtime_r(&now, &tm) != NULL) {
		strftime(buf, sizeof(buf), "%a, %d %b %Y %H:%M:%S GMT", &tm);
		made = now;
	}
	return buf;
}

void
http_add_field(struct http_request *req, const char *name, const char *value)
{
	if (req->out_fields == NULL &&
	    (req->out_fields = evbuffer_new()) == NULL)
		return;
	evbuffer_add_printf(req->out_fields, "%s: %s\r\n", name, value);
}

static int
reply_keeps(const struct http_request *req)
{
	return req->head.keep_alive && !req->close_after &&
	    !req->until_close && req->body_state == BODY_DONE;
}

/* length -1: none (chunked, until close, or a 204). */
static void
reply_head(struct http_request *req, int status, const char *ctype,
    int64_t length, int keep)
{
	struct evbuffer	*out = bufferevent_get_output(req->conn->bev);

	req->status = status;
	evbuffer_add_printf(out, "HTTP/1.1 %d %s\r\nDate: %s\r\n", status,
	    http_reason(status), date_field());
	if (ctype != NULL)
		evbuffer_add_printf(out, "Content-Type: %s\r\n", ctype);
	if (length >= 0)
		evbuffer_add_printf(out, "Content-Length: %" PRId64 "\r\n",
		    length);
	if (req->chunked)
		evbuffer_add_printf(out, "Transfer-Encoding: chunked\r\n");
	if (req->out_fields != NULL)
		evbuffer_add_buffer(out, req->out_fields);
	if (!keep)
		evbuffer_add_printf(out, "Connection: close\r\n");
	else if (req->head.minor == 0)
		evbuffer_add_printf(out, "Connection: keep-alive\r\n");
	evbuffer_add(out, "\r\n", 2);
}

/* The request is over for the connection; then it is freed. */
static void
reply_finish(struct http_request *req, int keep)
{
	struct http_conn	*c = req->conn;

	req->conn = NULL;
	if (c != NULL && c->req == req) {
		http_conn_flush(c);
		http_conn_request_done(c, keep);
	}
	http_request_free(req);
}

void
http_reply(struct http_request *req, int status, const char *ctype,
    struct evbuffer *body)
{
	size_t	 len = body != NULL ? evbuffer_get_length(body) : 0;
	int	 keep;

	if (req->conn == NULL) {
		http_request_free(req);
		return;
	}
	keep = reply_keeps(req);
	reply_head(req, status, status == 204 ? NULL : ctype,
	    status == 204 ? -1 : (int64_t)len, keep);
	if (len > 0 && status != 204) {
		req->out_bytes += len;
		http_conn_write_buffer(req->conn, body);
	}
	reply_finish(req, keep);
}

void
http_reply_start(struct http_request *req, int status, const char *ctype,
    int64_t length)
{
	req->reply_started = 1;
	req->length_left = length;
	if (req->conn == NULL)
		return;
	if (length < 0) {
		if (req->head.minor >= 1)
			req->chunked = 1;
		else
			req->until_close = 1;
	}
	req->close_after = !reply_keeps(req);
	reply_head(req, status, ctype, length, !req->close_after);
}

void
http_reply_chunk(struct http_request *req, struct evbuffer *buf)
{
	size_t	 n = evbuffer_get_length(buf);
	char	 size[32];
	int	 len;

	if (req->conn == NULL || n == 0 || req->broken) {
		evbuffer_drain(buf, n);
		return;
	}
	if (req->chunked) {
		len = snprintf(size, sizeof(size), "%zx\r\n", n);
		http_conn_write(req->conn, size, len);
	} else if (req->length_left >= 0) {
		if ((uint64_t)n > (uint64_t)req->length_left) {
			/* More than announced: the reply cannot be right. */
			log_warnx("a reply longer than its Content-Length");
			evbuffer_drain(buf, n);
			req->broken = 1;
			req->close_after = 1;
			return;
		}
		req->length_left -= n;
	}
	req->out_bytes += n;
	http_conn_write_buffer(req->conn, buf);
	if (req->chunked)
		http_conn_write(req->conn, "\r\n", 2);
	http_conn_flush(req->conn);
}

void
http_reply_end(struct http_request *req)
{
	if (req->conn == NULL) {
		http_request_free(req);
		return;
	}
	if (req->chunked && !req->broken)
		http_conn_write(req->conn, "0\r\n\r\n", 5);
	/* A body shorter than announced tells the client by the close. */
	if (req->length_left > 0)
		req->close_after = 1;
	reply_finish(req, !req->close_after);
}

void
http_reply_abort(struct http_request *req)
{
	if (req->conn == NULL) {
		http_request_free(req);
		return;
	}
	if (!req->reply_started) {
		req->close_after = 1;
		http_reply_error(req, 500, "internal_error",
		    "the reply could not be made");
		return;
	}
	reply_finish(req, 0);
}

void
http_reply_upgrade(struct http_request *req, const char *protocol,
    http_takeover_cb cb, void *arg)
{
	struct http_conn	*c = req->conn;
	struct evbuffer		*out;

	if (c == NULL) {
		http_request_free(req);
		return;
	}
	out = bufferevent_get_output(c->bev);
	req->status = 101;
	evbuffer_add_printf(out, "HTTP/1.1 101 %s\r\nConnection: Upgrade\r\n"
	    "Upgrade: %s\r\n", http_reason(101), protocol);
	if (req->out_fields != NULL)
		evbuffer_add_buffer(out, req->out_fields);
	evbuffer_add(out, "\r\n", 2);
	req->conn = NULL;
	http_request_free(req);
	cb(http_conn_take(c), arg);
}

/* A JSON string of our own text: quotes, backslashes and controls. */
static void
add_json_string(struct evbuffer *b, const char *s)
{
	evbuffer_add(b, "\"", 1);
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\')
			evbuffer_add_printf(b, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			evbuffer_add_printf(b, "\\u%04x", (unsigned char)*s);
		else
			evbuffer_add(b, s, 1);
	}
	evbuffer_add(b, "\"", 1);
}

static struct evbuffer *
error_envelope(const char *code, const char *message)
{
	struct evbuffer	*b;

	if ((b = evbuffer_new()) == NULL)
		return NULL;
	evbuffer_add_printf(b, "{\"error\":{\"code\":\"%s\",\"message\":", code);
	add_json_string(b, message);
	evbuffer_add(b, "}}", 2);
	return b;
}

/* The error envelope of API.md §1.2 with our own code and text. */
void
http_reply_error(struct http_request *req, int status, const char *code,
    const char *message)
{
	struct evbuffer	*b;

	if ((b = error_envelope(code, message)) == NULL) {
		req->close_after = 1;
		http_reply(req, status, NULL, NULL);
		return;
	}
	http_reply(req, status, "application/json", b);
	evbuffer_free(b);
}

static const char *
refusal_code(int status)
{
	switch (status) {
	case 413: return "payload_too_large";
	case 500: return "internal_error";
	default: return "http_error";
	}
}

/*
 * A head we would not take, a body that broke or stopped: the envelope,
 * and the connection closes (lingering) after it.  No request is being
 * answered on c: it was never made, or it is detached.
 */
void
http_reply_refusal(struct http_conn *c, int status, const char *why)
{
	struct evbuffer	*b, *out = bufferevent_get_output(c->bev);

	log_debug("connection %d: %d %s", c->fd, status, why);
	if ((b = error_envelope(refusal_code(status), why)) != NULL) {
		evbuffer_add_printf(out, "HTTP/1.1 %d %s\r\nDate: %s\r\n"
		    "Content-Type: application/json\r\nContent-Length: %zu\r\n"
		    "Connection: close\r\n\r\n", status, http_reason(status),
		    date_field(), evbuffer_get_length(b));
		evbuffer_add_buffer(out, b);
		evbuffer_free(b);
	}
	http_conn_close(c);
}
