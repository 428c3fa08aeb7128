/*
 * Tests for a body spliced into a pipe (apid/http_splice.c), with the
 * test as the client on a socketpair and as the pipe's reader on the
 * same loop: the bytes arrive whole and in order, with what came with
 * the head first; keep-alive and pipelining after it; 100-continue; a
 * slow reader, a reader that goes away, a client that goes away, a body
 * that stops coming, a route that answers before the body; and the
 * bodies that are not spliced.
 */
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/buffer.h>
#include <event2/event.h>

#include "http_fixture.h"

#define MAX_BODY	(4 * 1024 * 1024)

/* What the route saw, and the test's end of the pipe. */
static struct {
	struct event_base	*base;
	int			 ends;
	int			 ok;
	int			 broken;
	uint64_t		 bytes;
	int			 rfd;
	struct event		*rev;
	struct evbuffer		*got;
	int			 got_eof;
	int			 hold;		/* the reader does not read */
	size_t			 close_after;	/* the reader leaves then */
	int			 pipe_size;	/* 0: the default */
} sp;

static void
reset(struct http_fixture *fx)
{
	memset(&sp, 0, sizeof(sp));
	sp.base = fx->base;
	sp.rfd = -1;
	assert_non_null(sp.got = evbuffer_new());
}

static void
reader_close(void)
{
	if (sp.rev != NULL)
		event_free(sp.rev);
	sp.rev = NULL;
	if (sp.rfd != -1)
		close(sp.rfd);
	sp.rfd = -1;
}

static void
done(struct http_fixture *fx)
{
	reader_close();
	evbuffer_free(sp.got);
	fixture_free(fx);
}

static void
reader_cb(evutil_socket_t fd, short what, void *arg)
{
	int	 n;

	n = evbuffer_read(sp.got, fd, 65536);
	if (n == 0) {
		sp.got_eof = 1;
		reader_close();
	} else if (sp.close_after > 0 &&
	    evbuffer_get_length(sp.got) >= sp.close_after)
		reader_close();
}

static void
spliced(void *arg, int ok)
{
	struct http_request	*req = arg;

	sp.ends++;
	sp.ok = ok;
	sp.broken = req->sink_broken;
	sp.bytes = req->head.body_bytes;
	if (ok)
		fixture_reply_text(req, 200, "spliced");
	else if (req->conn != NULL)
		fixture_reply_text(req, 502, "the reader went away");
	else
		http_reply_abort(req);
}

/* "/splice": the body into a pipe; "/early" also answers at once. */
static void
route(struct http_request *req)
{
	int	 p[2], rc, early = strcmp(req->path, "/early") == 0;

	if (strcmp(req->path, "/splice") != 0 && !early) {
		fixture_reply_text(req, 200, req->path);
		return;
	}
	assert_int_equal(pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
	if (sp.pipe_size > 0)
		assert_true(fcntl(p[1], F_SETPIPE_SZ, sp.pipe_size) > 0);
	sp.rfd = p[0];
	assert_non_null(sp.rev = event_new(sp.base, p[0], EV_READ |
	    EV_PERSIST, reader_cb, NULL));
	if (!sp.hold)
		event_add(sp.rev, NULL);
	/* A body that came whole may end (and free req) in the call. */
	rc = http_body_splice(req, MAX_BODY, p[1], spliced, req);
	if (rc != 0) {
		close(p[1]);
		fixture_reply_text(req, rc == 1 ? 400 : 413,
		    rc == 1 ? "not spliced" : "declared too large");
		return;
	}
	if (early)
		fixture_reply_text(req, 403, "not now");
}

/* A body of len bytes no two neighbours of which are alike. */
static char *
pattern(size_t len)
{
	char	*b;
	size_t	 i;

	assert_non_null(b = malloc(len));
	for (i = 0; i < len; i++)
		b[i] = (char)((i * 7) % 251);
	return b;
}

static void
send_head(struct http_fixture *fx, const char *path, size_t len,
    const char *extra)
{
	char	 head[256];

	snprintf(head, sizeof(head), "PUT %s HTTP/1.1\r\nHost: t\r\n%s"
	    "Content-Length: %zu\r\n\r\n", path, extra, len);
	fixture_send_str(fx, head);
}

/* What the reader has is body, exactly, and the pipe was closed. */
static void
assert_pipe_holds(struct http_fixture *fx, const char *body, size_t len)
{
	int	 i;

	for (i = 0; i < 100 && !sp.got_eof; i++)
		fixture_run(fx, 10);
	assert_true(sp.got_eof);
	assert_int_equal(evbuffer_get_length(sp.got), len);
	assert_memory_equal(evbuffer_pullup(sp.got, -1), body, len);
}

/*
 * Part of the body with the head, the rest as the socket takes it, and
 * a request pipelined right after it: the bytes are whole, the pipe is
 * closed before the route hears, the connection is kept.
 */
static void
test_whole_body_then_keep_alive(void **state)
{
	struct http_fixture	 fx;
	struct http_response	 r = { 0 };
	size_t			 len = 700 * 1024;
	char			*body = pattern(len);
	const char		*next = "GET /after HTTP/1.1\r\nHost: t\r\n\r\n";

	fixture_init(&fx, route, NULL);
	reset(&fx);
	send_head(&fx, "/splice", len, "");
	fixture_send(&fx, body, 1000);
	fixture_run(&fx, 20);
	fixture_send(&fx, body + 1000, len - 1000);
	fixture_send_str(&fx, next);
	assert_int_equal(fixture_response(&fx, &r, 2000), 0);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "spliced");
	assert_int_equal(sp.ends, 1);
	assert_true(sp.ok);
	assert_int_equal(sp.bytes, len);
	assert_pipe_holds(&fx, body, len);
	assert_int_equal(fixture_response(&fx, &r, 1000), 0);
	assert_string_equal(r.body, "/after");
	assert_false(fixture_closed(&fx, 100));
	response_free(&r);
	free(body);
	done(&fx);
}

/* A body that came whole with its head, and the next head with it. */
static void
test_body_in_the_first_read(void **state)
{
	struct http_fixture	 fx;
	struct http_response	 r = { 0 };

	fixture_init(&fx, route, NULL);
	reset(&fx);
	fixture_send_str(&fx, "PUT /splice HTTP/1.1\r\nHost: t\r\n"
	    "Content-Length: 5\r\n\r\nhelloGET /x HTTP/1.1\r\nHost: t\r\n\r\n");
	assert_int_equal(fixture_response(&fx, &r, 1000), 0);
	assert_string_equal(r.body, "spliced");
	assert_pipe_holds(&fx, "hello", 5);
	assert_int_equal(fixture_response(&fx, &r, 1000), 0);
	assert_string_equal(r.body, "/x");
	response_free(&r);
	done(&fx);
}

static void
test_expect_continue(void **state)
{
	struct http_fixture	 fx;
	struct http_response	 r = { 0 };

	fixture_init(&fx, route, NULL);
	reset(&fx);
	send_head(&fx, "/splice", 4, "Expect: 100-continue\r\n");
	assert_int_equal(fixture_response(&fx, &r, 1000), 0);
	assert_int_equal(r.status, 100);
	fixture_send_str(&fx, "data");
	assert_int_equal(fixture_response(&fx, &r, 1000), 0);
	assert_string_equal(r.body, "spliced");
	assert_pipe_holds(&fx, "data", 4);
	response_free(&r);
	done(&fx);
}

/*
 * A one-page pipe whose reader waits: the body waits with it (nothing
 * ends, nothing is lost), then moves once the reader reads.
 */
static void
test_slow_reader(void **state)
{
	struct http_fixture	 fx;
	struct http_response	 r = { 0 };
	size_t			 len = 100 * 1024;
	char			*body = pattern(len);

	fixture_init(&fx, route, NULL);
	reset(&fx);
	sp.hold = 1;
	sp.pipe_size = 4096;
	send_head(&fx, "/splice", len, "");
	fixture_send(&fx, body, len);
	fixture_run(&fx, 100);
	assert_int_equal(sp.ends, 0);
	event_add(sp.rev, NULL);
	assert_int_equal(fixture_response(&fx, &r, 2000), 0);
	assert_string_equal(r.body, "spliced");
	assert_pipe_holds(&fx, body, len);
	response_free(&r);
	free(body);
	done(&fx);
}

/* The pipe's reader leaves mid-body: the route hears it, and answers. */
static void
test_reader_gone(void **state)
{
	struct http_fixture	 fx;
	struct http_response	 r = { 0 };
	size_t			 len = 600 * 1024;
	char			*body = pattern(len);

	fixture_init(&fx, route, NULL);
	reset(&fx);
	sp.close_after = 10000;
	send_head(&fx, "/splice", len, "");
	fixture_send(&fx, body, 200 * 1024);
	assert_int_equal(fixture_response(&fx, &r, 2000), 0);
	assert_int_equal(r.status, 502);
	assert_int_equal(sp.ends, 1);
	assert_false(sp.ok);
	assert_true(sp.broken);
	assert_true(sp.bytes < len);
	assert_true(fixture_closed(&fx, 3000));
	response_free(&r);
	free(body);
	done(&fx);
}

/* The client leaves mid-body: the pipe closes, the route is told. */
static void
test_client_gone(void **state)
{
	struct http_fixture	 fx;
	size_t			 len = 100 * 1024;
	char			*body = pattern(len);
	int			 i;

	fixture_init(&fx, route, NULL);
	reset(&fx);
	send_head(&fx, "/splice", len, "");
	fixture_send(&fx, body, len / 2);
	fixture_run(&fx, 50);
	close(fx.client);
	fx.client = -1;
	for (i = 0; i < 100 && sp.ends == 0; i++)
		fixture_run(&fx, 10);
	assert_int_equal(sp.ends, 1);
	assert_false(sp.ok);
	assert_false(sp.broken);
	assert_int_equal(sp.bytes, len / 2);
	assert_pipe_holds(&fx, body, len / 2);
	free(body);
	done(&fx);
}

/* A body that stops coming is answered 408, as a streamed one is. */
static void
test_body_timeout(void **state)
{
	struct http_fixture	 fx;
	struct http_response	 r = { 0 };

	fixture_init(&fx, route, NULL);
	reset(&fx);
	send_head(&fx, "/splice", 100, "");
	fixture_send_str(&fx, "0123456789");
	assert_int_equal(fixture_response(&fx, &r, 2000), 0);
	assert_int_equal(r.status, 408);
	assert_int_equal(sp.ends, 1);
	assert_false(sp.ok);
	assert_false(sp.broken);
	assert_pipe_holds(&fx, "0123456789", 10);
	assert_true(fixture_closed(&fx, 3000));
	response_free(&r);
	done(&fx);
}

/*
 * The route answers before the body is whole: the rest is not wanted,
 * the pipe closes, the route is not called back, the connection closes.
 */
static void
test_answered_early(void **state)
{
	struct http_fixture	 fx;
	struct http_response	 r = { 0 };

	fixture_init(&fx, route, NULL);
	reset(&fx);
	send_head(&fx, "/early", 1000, "");
	fixture_send_str(&fx, "abc");
	assert_int_equal(fixture_response(&fx, &r, 1000), 0);
	assert_int_equal(r.status, 403);
	assert_pipe_holds(&fx, "abc", 3);
	assert_int_equal(sp.ends, 0);
	assert_true(fixture_closed(&fx, 3000));
	response_free(&r);
	done(&fx);
}

/* Chunked bodies are streamed, not spliced; too large ones refused. */
static void
test_not_spliced(void **state)
{
	struct http_fixture	 fx;
	struct http_response	 r = { 0 };

	fixture_init(&fx, route, NULL);
	reset(&fx);
	fixture_send_str(&fx, "PUT /splice HTTP/1.1\r\nHost: t\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n");
	assert_int_equal(fixture_response(&fx, &r, 1000), 0);
	assert_int_equal(r.status, 400);
	assert_string_equal(r.body, "not spliced");
	reader_close();
	done(&fx);

	fixture_init(&fx, route, NULL);
	reset(&fx);
	send_head(&fx, "/splice", MAX_BODY + 1, "");
	assert_int_equal(fixture_response(&fx, &r, 1000), 0);
	assert_int_equal(r.status, 413);
	assert_int_equal(sp.ends, 0);
	response_free(&r);
	done(&fx);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_whole_body_then_keep_alive),
		cmocka_unit_test(test_body_in_the_first_read),
		cmocka_unit_test(test_expect_continue),
		cmocka_unit_test(test_slow_reader),
		cmocka_unit_test(test_reader_gone),
		cmocka_unit_test(test_client_gone),
		cmocka_unit_test(test_body_timeout),
		cmocka_unit_test(test_answered_early),
		cmocka_unit_test(test_not_spliced),
	};

	/* As every daemon runs (common/proc.c): EPIPE, not a signal. */
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
