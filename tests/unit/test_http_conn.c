/*
 * Tests for apid's connection state machine (apid/http_conn.c,
 * http_server.c, http_request.c, http_reply.c) with the test as the
 * client on a socketpair: keep-alive, pipelining, the timeouts, the
 * connection cap, lingering closes, a client that goes away, a reader
 * that is slow or stops, HTTP/1.0 and Upgrade.  Timeouts are tenths of a
 * second here (http_fixture.c).
 */
#include <sys/socket.h>

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "http_fixture.h"

/* What the test routes saw. */
static struct {
	int			 requests;
	int			 gone;
	int			 body_end;
	int			 body_ok;
	size_t			 body_bytes;
	struct http_request	*held;		/* a request left open */
} seen;

static void
reset(void)
{
	memset(&seen, 0, sizeof(seen));
}

static void
on_gone(void *arg)
{
	seen.gone++;
	seen.held = NULL;
	/* The last reply call of a detached request frees it. */
	http_reply_end(arg);
}

static void
collected(void *arg, int ok)
{
	struct http_request	*req = arg;
	size_t			 len;
	char			 text[64];

	seen.body_end++;
	seen.body_ok = ok;
	if (!ok && req->conn != NULL) {
		fixture_reply_text(req, 413, "too large");
		return;
	}
	if (!ok) {
		http_reply_abort(req);
		return;
	}
	(void)http_request_body(req, &len);
	snprintf(text, sizeof(text), "%zu", len);
	fixture_reply_text(req, 200, text);
}

static void
stream_data(void *arg, const char *data, size_t len)
{
	seen.body_bytes += len;
}

static void
stream_end(void *arg, int ok)
{
	struct http_request	*req = arg;

	seen.body_end++;
	seen.body_ok = ok;
	if (ok)
		fixture_reply_text(req, 200, "stored");
	else if (req->conn != NULL)
		fixture_reply_text(req, 413, "too large");
	else
		http_reply_abort(req);
}

static char	 upgrade_word[] = "hello";

static void
takeover_echo(struct bufferevent *bev, void *arg)
{
	evbuffer_add_printf(bufferevent_get_output(bev), "raw:%s",
	    (const char *)arg);
	/* The test reads it, then the pair's close frees it. */
	bufferevent_setcb(bev, NULL, NULL, NULL, NULL);
	bufferevent_enable(bev, EV_WRITE);
	seen.held = (void *)bev;
}

/* One router for every test: the path says what to do. */
static void
route(struct http_request *req)
{
	struct evbuffer	*b;

	seen.requests++;
	if (strcmp(req->path, "/hold") == 0) {
		seen.held = req;
		http_request_on_gone(req, on_gone, req);
	} else if (strcmp(req->path, "/json") == 0) {
		if (http_body_collect(req, 64, collected) == -1)
			fixture_reply_text(req, 413, "declared too large");
	} else if (strcmp(req->path, "/upload") == 0) {
		if (http_body_stream(req, 1 << 20, stream_data, stream_end,
		    req) == -1)
			fixture_reply_text(req, 413, "declared too large");
	} else if (strcmp(req->path, "/stream") == 0) {
		http_reply_start(req, 200, "text/plain", -1);
		b = evbuffer_new();
		evbuffer_add_printf(b, "part one;");
		http_reply_chunk(req, b);
		evbuffer_add_printf(b, "part two");
		http_reply_chunk(req, b);
		evbuffer_free(b);
		http_reply_end(req);
	} else if (strcmp(req->path, "/flood") == 0) {
		seen.held = req;
		http_request_on_gone(req, on_gone, req);
		http_reply_start(req, 200, "text/plain", -1);
	} else if (strcmp(req->path, "/upgrade") == 0) {
		http_reply_upgrade(req, "echo", takeover_echo, upgrade_word);
	} else
		fixture_reply_text(req, 200, req->path);
}

static const char *
get(const char *path)
{
	static char	 buf[512];

	snprintf(buf, sizeof(buf), "GET %s HTTP/1.1\r\nHost: t\r\n\r\n",
	    path);
	return buf;
}

static void
test_keep_alive_and_pipelining(void **state)
{
	struct http_fixture	 fx;
	struct http_response	 r = { 0 };

	reset();
	fixture_init(&fx, route, NULL);
	fixture_send_str(&fx, get("/a"));
	assert_int_equal(fixture_response(&fx, &r, 1000), 0);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "/a");
	assert_true(r.keep_alive);
	/* Three at once, answered in order. */
	fixture_send_str(&fx, "GET /b HTTP/1.1\r\nHost: t\r\n\r\n"
	    "GET /stream HTTP/1.1\r\nHost: t\r\n\r\n"
	    "GET /c HTTP/1.1\r\nHost: t\r\n\r\n");
	assert_int_equal(fixture_response(&fx, &r, 1000), 0);
	assert_string_equal(r.body, "/b");
	assert_int_equal(fixture_response(&fx, &r, 1000), 0);
	assert_true(r.chunked);
	assert_string_equal(r.body, "part one;part two");
	assert_int_equal(fixture_response(&fx, &r, 1000), 0);
	assert_string_equal(r.body, "/c");
	assert_int_equal(seen.requests, 4);
	assert_false(fixture_closed(&fx, 100));
	response_free(&r);
	fixture_free(&fx);
}

static void
test_http_1_0(void **state)
{
	struct http_fixture	 fx;
	struct http_response	 r = { 0 };

	reset();
	fixture_init(&fx, route, NULL);
	fixture_send_str(&fx, "GET /stream HTTP/1.0\r\n"
	    "Connection: keep-alive\r\n\r\n");
	/* No chunks for 1.0: the body ends with the connection. */
	assert_int_equal(fixture_response(&fx, &r, 1000), 0);
	assert_false(r.chunked);
	assert_string_equal(r.body, "part one;part two");
	assert_true(fixture_closed(&fx, 500));
	response_free(&r);
	fixture_free(&fx);
}

static void
test_refused_head_closes(void **state)
{
	struct http_fixture	 fx;
	struct http_response	 r = { 0 };

	reset();
	fixture_init(&fx, route, NULL);
	fixture_send_str(&fx, "GET /a HTTP/1.1\r\nHost : t\r\n\r\n"
	    "GET /b HTTP/1.1\r\nHost: t\r\n\r\n");
	assert_int_equal(fixture_response(&fx, &r, 1000), 0);
	assert_int_equal(r.status, 400);
	assert_string_equal(response_field(&r, "connection"), "close");
	assert_string_equal(response_field(&r, "content-type"),
	    "application/json");
	assert_non_null(strstr(r.body, "\"code\":\"http_error\""));
	assert_true(fixture_closed(&fx, 3000));
	assert_int_equal(seen.requests, 0);
	response_free(&r);
	fixture_free(&fx);
}

/* A head must be whole within head_timeout of its first byte. */
static void
test_head_timeout_is_not_reset_by_trickling(void **state)
{
	struct http_fixture	 fx;
	struct http_response	 r = { 0 };
	const char		*head = "GET /slow HTTP/1.1\r\nHost: t\r\nX: y";
	size_t			 i;

	reset();
	fixture_init(&fx, route, NULL);
	for (i = 0; i < strlen(head) && !fx.eof && fx.inlen == 0; i++) {
		fixture_send(&fx, head + i, 1);
		fixture_run(&fx, 50);
	}
	assert_true(i < strlen(head));
	assert_int_equal(fixture_response(&fx, &r, 1000), 0);
	assert_int_equal(r.status, 408);
	assert_true(fixture_closed(&fx, 3000));
	response_free(&r);
	fixture_free(&fx);
}

static void
test_idle_connection_closes_silently(void **state)
{
	struct http_fixture	 fx;
	struct http_response	 r = { 0 };

	reset();
	fixture_init(&fx, route, NULL);
	fixture_send_str(&fx, get("/a"));
	assert_int_equal(fixture_response(&fx, &r, 1000), 0);
	assert_false(fixture_closed(&fx, 500));
	assert_true(fixture_closed(&fx, 1500));
	assert_int_equal(fx.inlen, 0);
	response_free(&r);
	fixture_free(&fx);
}

/* A body that stops: 408, and the route learns its client is gone. */
static void
test_body_timeout(void **state)
{
	struct http_fixture	 fx;
	struct http_response	 r = { 0 };

	reset();
	fixture_init(&fx, route, NULL);
	fixture_send_str(&fx, "PUT /upload HTTP/1.1\r\nHost: t\r\n"
	    "Content-Length: 10\r\n\r\n12345");
	assert_int_equal(fixture_response(&fx, &r, 2000), 0);
	assert_int_equal(r.status, 408);
	assert_int_equal(seen.body_end, 1);
	assert_false(seen.body_ok);
	assert_int_equal(seen.body_bytes, 5);
	assert_true(fixture_closed(&fx, 3000));
	response_free(&r);
	fixture_free(&fx);
}

static void
test_bodies(void **state)
{
	struct http_fixture	 fx;
	struct http_response	 r = { 0 };

	reset();
	fixture_init(&fx, route, NULL);
	fixture_send_str(&fx, "POST /json HTTP/1.1\r\nHost: t\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"
	    "POST /json HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\n"
	    "abc");
	assert_int_equal(fixture_response(&fx, &r, 1000), 0);
	assert_string_equal(r.body, "5");
	assert_int_equal(fixture_response(&fx, &r, 1000), 0);
	assert_string_equal(r.body, "3");
	/* Streamed with Expect: the 100 first, then the final answer. */
	fixture_send_str(&fx, "PUT /upload HTTP/1.1\r\nHost: t\r\n"
	    "Expect: 100-continue\r\nContent-Length: 4\r\n\r\n");
	assert_int_equal(fixture_response(&fx, &r, 1000), 0);
	assert_int_equal(r.status, 100);
	fixture_send_str(&fx, "data");
	assert_int_equal(fixture_response(&fx, &r, 1000), 0);
	assert_string_equal(r.body, "stored");
	assert_int_equal(seen.body_bytes, 4);
	assert_false(fixture_closed(&fx, 100));
	response_free(&r);
	fixture_free(&fx);
}

/*
 * A body whose chunk framing breaks: the route is told (its end, not
 * ok, with the client gone) and gives its last reply there, which frees
 * the request; the client still reads a 400 and the connection closes.
 * Found by fuzz_http_conn (tests/fuzz/regressions/http_conn/): the layer
 * read the freed request after the route's end returned.
 */
static void
test_broken_body_ends_the_route(void **state)
{
	struct http_fixture	 fx;
	struct http_response	 r = { 0 };
	const char		*paths[] = { "/upload", "/json" };
	size_t			 i;

	for (i = 0; i < 2; i++) {
		reset();
		fixture_init(&fx, route, NULL);
		fixture_send_str(&fx, "PUT ");
		fixture_send_str(&fx, paths[i]);
		fixture_send_str(&fx, " HTTP/1.1\r\nHost: t\r\n"
		    "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n"
		    "\r\n\r\nEx3\r\nabc\r\n0\r\n\r\n");
		assert_int_equal(fixture_response(&fx, &r, 1000), 0);
		assert_int_equal(r.status, 400);
		assert_string_equal(r.body, "{\"error\":{\"code\":\"http_error\",\"message\":\"malformed chunk size\"}}");
		assert_int_equal(seen.body_end, 1);
		assert_false(seen.body_ok);
		assert_int_equal(seen.gone, 0);
		assert_true(fixture_closed(&fx, 1000));
		response_free(&r);
		fixture_free(&fx);
	}
}

/*
 * An answer before the body is read: the connection closes after it,
 * and lingers so that a client still sending reads it.
 */
static void
test_early_answer_lingers(void **state)
{
	struct http_fixture	 fx;
	struct http_response	 r = { 0 };
	char			 junk[65536];
	int			 i;

	reset();
	fixture_init(&fx, route, NULL);
	fixture_send_str(&fx, "POST /json HTTP/1.1\r\nHost: t\r\n"
	    "Content-Length: 10000000\r\n\r\n");
	memset(junk, 'x', sizeof(junk));
	for (i = 0; i < 20; i++)
		fixture_send(&fx, junk, sizeof(junk));
	assert_int_equal(fixture_response(&fx, &r, 1000), 0);
	assert_int_equal(r.status, 413);
	assert_string_equal(response_field(&r, "connection"), "close");
	/* Too large while chunked: the same, found while reading. */
	response_free(&r);
	fixture_free(&fx);
	fixture_init(&fx, route, NULL);
	fixture_send_str(&fx, "POST /json HTTP/1.1\r\nHost: t\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n100\r\n");
	fixture_send(&fx, junk, 256);
	fixture_send_str(&fx, "\r\n");
	assert_int_equal(fixture_response(&fx, &r, 1000), 0);
	assert_int_equal(r.status, 413);
	assert_string_equal(response_field(&r, "connection"), "close");
	assert_true(fixture_closed(&fx, 3000));
	response_free(&r);
	fixture_free(&fx);
}

static void
test_client_gone_is_told(void **state)
{
	struct http_fixture	 fx;

	reset();
	fixture_init(&fx, route, NULL);
	fixture_send_str(&fx, get("/hold"));
	fixture_run(&fx, 50);
	assert_non_null(seen.held);
	assert_int_equal(seen.gone, 0);
	close(fx.client);
	fx.client = -1;
	fixture_run(&fx, 50);
	assert_int_equal(seen.gone, 1);
	assert_null(seen.held);
	fixture_free(&fx);
}

/*
 * A reader that stops is cut off after send_timeout; the route learns
 * of it.  One that keeps reading, however slowly, is not.
 */
static void
test_send_timeout(void **state)
{
	struct http_fixture	 fx;
	struct evbuffer		*b;
	char			 buf[4096];
	int			 i;

	reset();
	fixture_init(&fx, route, NULL);
	fixture_send_str(&fx, get("/flood"));
	fixture_run(&fx, 50);
	assert_non_null(seen.held);
	b = evbuffer_new();
	memset(buf, 'x', sizeof(buf));
	for (i = 0; i < 64; i++)
		evbuffer_add(b, buf, sizeof(buf));
	http_reply_chunk(seen.held, b);
	/* Slowly: 4 KiB every 100 ms for 1.5 s, past the 1 s timeout. */
	for (i = 0; i < 15; i++) {
		event_base_loop(fx.base, EVLOOP_NONBLOCK);
		usleep(100000);
		assert_int_equal(read(fx.client, buf, sizeof(buf)) > 0, 1);
	}
	assert_int_equal(seen.gone, 0);
	/* Now not at all: the kernel's buffers fill, then the timeout. */
	for (i = 0; i < 64 && seen.held != NULL; i++)
		http_reply_chunk(seen.held, b), evbuffer_add(b, buf,
		    sizeof(buf));
	evbuffer_free(b);
	for (i = 0; i < 300 && seen.gone == 0; i++) {
		event_base_loop(fx.base, EVLOOP_NONBLOCK);
		usleep(10000);
	}
	assert_int_equal(seen.gone, 1);
	fixture_free(&fx);
}

/* At the cap, the oldest connection without a request makes room. */
static void
test_cap_sheds_the_oldest_idle(void **state)
{
	struct http_fixture	 fx;
	struct http_response	 r = { 0 };
	int			 busy, idle[7], extra, i;
	char			 c;

	reset();
	fixture_init(&fx, route, NULL);		/* at most 8 */
	busy = fx.client;
	fixture_send_str(&fx, get("/hold"));	/* busy, not sheddable */
	fixture_run(&fx, 20);
	for (i = 0; i < 7; i++)
		idle[i] = fixture_connect(&fx);
	assert_int_equal(fx.srv.nconns, 8);
	extra = fixture_connect(&fx);
	assert_int_equal(fx.srv.nconns, 8);
	fixture_run(&fx, 20);
	/* The first idle one was shed: EOF; the busy one lives on. */
	assert_int_equal(read(idle[0], &c, 1), 0);
	assert_int_equal(read(idle[1], &c, 1), -1);
	assert_int_equal(errno, EAGAIN);
	assert_non_null(seen.held);
	/* The newcomer is served. */
	fx.client = extra;
	fixture_send_str(&fx, get("/new"));
	assert_int_equal(fixture_response(&fx, &r, 1000), 0);
	assert_string_equal(r.body, "/new");
	response_free(&r);
	for (i = 0; i < 7; i++)
		close(idle[i]);
	close(busy);
	fixture_free(&fx);
}

static void
test_upgrade_hands_over_the_socket(void **state)
{
	struct http_fixture	 fx;
	struct http_response	 r = { 0 };

	reset();
	fixture_init(&fx, route, NULL);
	fixture_send_str(&fx, "GET /upgrade HTTP/1.1\r\nHost: t\r\n"
	    "Connection: Upgrade\r\nUpgrade: echo\r\n\r\n");
	assert_int_equal(fixture_response(&fx, &r, 1000), 0);
	assert_int_equal(r.status, 101);
	assert_string_equal(response_field(&r, "upgrade"), "echo");
	fixture_run(&fx, 50);
	assert_int_equal(fx.inlen, strlen("raw:hello"));
	assert_memory_equal(fx.in, "raw:hello", fx.inlen);
	assert_int_equal(fx.srv.nconns, 0);
	bufferevent_free((struct bufferevent *)seen.held);
	response_free(&r);
	fixture_free(&fx);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keep_alive_and_pipelining),
		cmocka_unit_test(test_http_1_0),
		cmocka_unit_test(test_refused_head_closes),
		cmocka_unit_test(test_head_timeout_is_not_reset_by_trickling),
		cmocka_unit_test(test_idle_connection_closes_silently),
		cmocka_unit_test(test_body_timeout),
		cmocka_unit_test(test_bodies),
		cmocka_unit_test(test_early_answer_lingers),
		cmocka_unit_test(test_client_gone_is_told),
		cmocka_unit_test(test_broken_body_ends_the_route),
		cmocka_unit_test(test_send_timeout),
		cmocka_unit_test(test_cap_sheds_the_oldest_idle),
		cmocka_unit_test(test_upgrade_hands_over_the_socket),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
