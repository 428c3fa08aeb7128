/*
 * See http_fixture.h.  Responses are read with http-parser in response
 * mode, so the client side does not trust the code under test.
 */
#include <sys/socket.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/buffer.h>
#include <event2/event.h>

#include "http_fixture.h"

static int64_t
now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void
fixture_init(struct http_fixture *fx, http_request_cb cb,
    const struct http_settings *settings)
{
	struct http_settings	 s;

	memset(fx, 0, sizeof(*fx));
	if (settings != NULL)
		s = *settings;
	else {
		http_settings_default(&s);
		s.head_timeout.tv_sec = 0;
		s.head_timeout.tv_usec = 300000;
		s.body_timeout = s.head_timeout;
		s.idle_timeout.tv_sec = 1;
		s.send_timeout.tv_sec = 1;
		s.max_connections = 8;
	}
	assert_non_null(fx->base = event_base_new());
	assert_int_equal(http_server_init(&fx->srv, fx->base, &s, cb), 0);
	fx->client = fixture_connect(fx);
}

int
fixture_connect(struct http_fixture *fx)
{
	int	 sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
	    sv), 0);
	assert_int_equal(fcntl(sv[1], F_SETFL, O_NONBLOCK), 0);
	assert_int_equal(fcntl(sv[0], F_SETFL, O_NONBLOCK), 0);
	assert_int_equal(http_server_adopt(&fx->srv, sv[1]), 0);
	return sv[0];
}

void
fixture_free(struct http_fixture *fx)
{
	http_server_close(&fx->srv);
	if (fx->client != -1)
		close(fx->client);
	event_base_free(fx->base);
	free(fx->in);
	memset(fx, 0, sizeof(*fx));
}

void
fixture_send(struct http_fixture *fx, const void *data, size_t len)
{
	const char	*p = data;
	ssize_t		 n;

	while (len > 0) {
		n = write(fx->client, p, len);
		if (n == -1 && errno == EAGAIN) {
			fixture_run(fx, 10);
			continue;
		}
		assert_true(n > 0);
		p += n;
		len -= (size_t)n;
	}
}

void
fixture_send_str(struct http_fixture *fx, const char *s)
{
	fixture_send(fx, s, strlen(s));
}

/* Take what the server wrote; 0 when nothing (more) came. */
static int
fixture_read(struct http_fixture *fx)
{
	char	 buf[65536];
	ssize_t	 n;

	n = read(fx->client, buf, sizeof(buf));
	if (n == 0 || (n == -1 && errno == ECONNRESET)) {
		fx->eof = 1;
		return 0;
	}
	if (n == -1)
		return 0;
	assert_non_null(fx->in = realloc(fx->in, fx->inlen + (size_t)n + 1));
	memcpy(fx->in + fx->inlen, buf, (size_t)n);
	fx->inlen += (size_t)n;
	return 1;
}

void
fixture_run(struct http_fixture *fx, int ms)
{
	int64_t	 end = now_ms() + ms;

	do {
		event_base_loop(fx->base, EVLOOP_NONBLOCK);
		while (fixture_read(fx))
			;
		if (ms > 0)
			poll(NULL, 0, 1);
	} while (now_ms() < end);
}

/* The response parser's callbacks fill a struct http_response. */
struct reader {
	struct http_response	*r;
	int			 done;
	int			 in_value;
};

static int
on_status(http_parser *p, const char *at, size_t len)
{
	return 0;
}

static int
on_field(http_parser *p, const char *at, size_t len)
{
	struct reader	*rd = p->data;
	size_t		 n = strlen(rd->r->fields), i;

	assert_true(n + len + 3 < sizeof(rd->r->fields));
	for (i = 0; i < len; i++)
		rd->r->fields[n + i] = (char)tolower((unsigned char)at[i]);
	memcpy(rd->r->fields + n + len, ": ", 3);
	return 0;
}

static int
on_value(http_parser *p, const char *at, size_t len)
{
	struct reader	*rd = p->data;
	size_t		 n = strlen(rd->r->fields);

	assert_true(n + len + 2 < sizeof(rd->r->fields));
	memcpy(rd->r->fields + n, at, len);
	memcpy(rd->r->fields + n + len, "\n", 2);
	return 0;
}

static int
on_headers(http_parser *p)
{
	struct reader	*rd = p->data;

	rd->r->status = (int)p->status_code;
	rd->r->chunked = (p->flags & F_CHUNKED) != 0;
	/* A 100 or 101 has no body; a response to a request we never sent. */
	return p->status_code < 200 ? 1 : 0;
}

static int
on_body(http_parser *p, const char *at, size_t len)
{
	struct reader	*rd = p->data;

	assert_non_null(rd->r->body = realloc(rd->r->body,
	    rd->r->body_len + len + 1));
	memcpy(rd->r->body + rd->r->body_len, at, len);
	rd->r->body_len += len;
	rd->r->body[rd->r->body_len] = '\0';
	return 0;
}

static int
on_complete(http_parser *p)
{
	struct reader	*rd = p->data;

	rd->done = 1;
	rd->r->keep_alive = http_should_keep_alive(p);
	http_parser_pause(p, 1);
	return 0;
}

static const http_parser_settings response_settings = {
	.on_status = on_status,
	.on_header_field = on_field,
	.on_header_value = on_value,
	.on_headers_complete = on_headers,
	.on_body = on_body,
	.on_message_complete = on_complete,
};

/* One response from fx->in; its bytes leave fx->in.  1 if whole. */
static int
parse_one(struct http_fixture *fx, struct http_response *r, int eof)
{
	struct reader	 rd = { r, 0, 0 };
	http_parser	 p;
	size_t		 n;

	response_free(r);
	http_parser_init(&p, HTTP_RESPONSE);
	p.data = &rd;
	n = http_parser_execute(&p, &response_settings, fx->in, fx->inlen);
	if (!rd.done && eof && HTTP_PARSER_ERRNO(&p) == HPE_OK) {
		/* A body that ends with the connection. */
		http_parser_execute(&p, &response_settings, NULL, 0);
		n = fx->inlen;
	}
	if (!rd.done)
		return 0;
	memmove(fx->in, fx->in + n, fx->inlen - n);
	fx->inlen -= n;
	return 1;
}

int
fixture_response(struct http_fixture *fx, struct http_response *r, int ms)
{
	int64_t	 end = now_ms() + ms;

	/* r is zeroed or holds the last response, whose body goes now. */
	response_free(r);
	for (;;) {
		if (fx->inlen > 0 && parse_one(fx, r, fx->eof))
			return 0;
		if (fx->eof)
			return -1;
		if (now_ms() >= end)
			return -2;
		fixture_run(fx, 1);
	}
}

void
response_free(struct http_response *r)
{
	free(r->body);
	memset(r, 0, sizeof(*r));
}

const char *
response_field(const struct http_response *r, const char *name)
{
	static char	 value[1024];
	const char	*p = r->fields, *nl;
	size_t		 len = strlen(name);

	while ((nl = strchr(p, '\n')) != NULL) {
		if (strncmp(p, name, len) == 0 && p[len] == ':') {
			p += len + 2;
			snprintf(value, sizeof(value), "%.*s", (int)(nl - p),
			    p);
			return value;
		}
		p = nl + 1;
	}
	return "";
}

int
fixture_closed(struct http_fixture *fx, int ms)
{
	int64_t	 end = now_ms() + ms;

	while (!fx->eof && now_ms() < end)
		fixture_run(fx, 1);
	return fx->eof;
}

struct http_request *
fixture_request(const char *head, const char *body)
{
	struct http_request	*req;
	char			*raw;
	size_t			 len = 0;
	const char		*s;

	assert_non_null(raw = malloc(strlen(head) * 2 + 8));
	for (s = head; *s != '\0'; s++) {
		if (*s == '\n')
			raw[len++] = '\r';
		raw[len++] = *s;
	}
	memcpy(raw + len, "\r\n", 3);
	len += 2;
	assert_non_null(req = http_request_new(NULL));
	assert_int_equal(http_head_parse(&req->head, raw, len), 0);
	assert_int_equal(http_request_prepare(req), 0);
	assert_non_null(req->body = evbuffer_new());
	if (body != NULL)
		evbuffer_add(req->body, body, strlen(body));
	req->body_state = BODY_DONE;
	return req;
}

void
fixture_reply_text(struct http_request *req, int status, const char *text)
{
	struct evbuffer	*b = evbuffer_new();

	assert_non_null(b);
	evbuffer_add(b, text, strlen(text));
	http_reply(req, status, "text/plain", b);
	evbuffer_free(b);
}
