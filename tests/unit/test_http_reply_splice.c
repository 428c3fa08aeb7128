/*
 * Tests for a reply's bytes spliced from a pipe (apid/http_splice.c,
 * http_reply_splice), with the test as the client on a socketpair and as
 * the pipe's writer on the same loop: the head and the first bytes, then
 * the spliced ones, then the route's last byte arrive whole and in order,
 * and the connection is kept; a pipe that ends first; a client that
 * leaves or stops reading (the route hears it as gone, never as done),
 * and one that reads slowly but keeps reading (not cut off); a cancel;
 * and the replies that cannot be spliced.
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

#define FIRST		1000		/* bytes the route writes itself */

/* The route's state, and the test's end of the pipe. */
static struct {
	struct event_base	*base;
	struct http_request	*req;
	size_t			 len;		/* the reply's Content-Length */
	char			*body;
	int			 rfd;		/* the route's end */
	int			 wfd;		/* the test's end */
	struct event		*wev;
	size_t			 written;	/* into the pipe */
	size_t			 write_max;	/* then the writer stops */
	int			 close_at_max;	/* and closes its end */
	int			 dones;
	uint64_t		 moved;
	int			 gones;
} rs;

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
writer_close(void)
{
	if (rs.wev != NULL)
		event_free(rs.wev);
	rs.wev = NULL;
	if (rs.wfd != -1)
		close(rs.wfd);
	rs.wfd = -1;
}

/* The pipe's writer: the body after FIRST, up to write_max. */
static void
writer_cb(evutil_socket_t fd, short what, void *arg)
{
	size_t	 want = rs.write_max - rs.written;
	ssize_t	 n;

	if (want > 65536)
		want = 65536;
	if (want > 0) {
		n = write(fd, rs.body + FIRST + rs.written, want);
		if (n == -1 && errno != EAGAIN) {
			writer_close();		/* the route closed its end */
			return;
		}
		if (n > 0)
			rs.written += (size_t)n;
	}
	if (rs.written == rs.write_max) {
		if (rs.close_at_max)
			writer_close();
		else
			event_del(rs.wev);
	}
}

static void
reset(struct http_fixture *fx, size_t len)
{
	memset(&rs, 0, sizeof(rs));
	rs.base = fx->base;
	rs.len = len;
	rs.body = pattern(len);
	rs.rfd = rs.wfd = -1;
	rs.write_max = len - FIRST;
}

static void
route_close(void)
{
	if (rs.rfd != -1)
		close(rs.rfd);
	rs.rfd = -1;
}

static void
done(struct http_fixture *fx)
{
	/* A request whose client left still takes its last reply call. */
	if (rs.gones > 0 && rs.dones == 0)
		http_reply_abort(rs.req);
	writer_close();
	route_close();
	free(rs.body);
	fixture_free(fx);
}

/* The client left: the route closes its pipe, as route_file_read does. */
static void
gone(void *arg)
{
	rs.gones++;
	route_close();
}

/* All but the last byte came through the pipe: the route sends that. */
static void
spliced(void *arg, uint64_t moved)
{
	struct http_request	*req = arg;
	struct evbuffer		*last;
	char			 c;

	rs.dones++;
	rs.moved = moved;
	if (moved != rs.len - FIRST - 1 || read(rs.rfd, &c, 1) != 1) {
		route_close();
		http_reply_abort(req);
		return;
	}
	route_close();
	assert_non_null(last = evbuffer_new());
	evbuffer_add(last, &c, 1);
	http_reply_chunk(req, last);
	evbuffer_free(last);
	http_reply_end(req);
}

static void
reply_first(struct http_request *req, int64_t length)
{
	struct evbuffer	*first;

	http_reply_start(req, 200, "application/octet-stream", length);
	assert_non_null(first = evbuffer_new());
	evbuffer_add(first, rs.body, FIRST);
	http_reply_chunk(req, first);
	evbuffer_free(first);
}

/* What cannot be spliced is refused, and nothing is sent for it. */
static void
route_refusals(struct http_request *req)
{
	assert_int_equal(http_reply_splice(req, rs.rfd, 1, spliced, req), -1);
	reply_first(req, -1);		/* chunked */
	assert_int_equal(http_reply_splice(req, rs.rfd, 1, spliced, req), -1);
	http_reply_end(req);
}

/*
 * "/file": FIRST bytes from the route, all but the last byte of the rest
 * spliced, that last one from the route.  "/refuse": the refusals;
 * "/toolong": more than the reply has left.  Anything else: its path.
 */
static void
route(struct http_request *req)
{
	int	 p[2];

	if (strncmp(req->path, "/file", 5) != 0 &&
	    strcmp(req->path, "/refuse") != 0 &&
	    strcmp(req->path, "/toolong") != 0) {
		fixture_reply_text(req, 200, req->path);
		return;
	}
	assert_int_equal(pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
	rs.rfd = p[0];
	rs.wfd = p[1];
	rs.req = req;
	if (strcmp(req->path, "/refuse") == 0) {
		route_refusals(req);
		return;
	}
	http_request_on_gone(req, gone, NULL);
	reply_first(req, (int64_t)rs.len);
	if (strcmp(req->path, "/toolong") == 0) {
		assert_int_equal(http_reply_splice(req, rs.rfd, rs.len - FIRST +
		    1, spliced, req), -1);
		http_reply_abort(req);
		return;
	}
	/* "/file-full": the pipe full when the splice starts. */
	if (strcmp(req->path, "/file-full") == 0)
		while (rs.written < 65536 && write(rs.wfd, rs.body + FIRST +
		    rs.written, 4096) == 4096)
			rs.written += 4096;
	assert_int_equal(http_reply_splice(req, rs.rfd, rs.len - FIRST - 1,
	    spliced, req), 0);
	/* Never before the call returns. */
	assert_int_equal(rs.dones, 0);
	assert_non_null(rs.wev = event_new(rs.base, rs.wfd, EV_WRITE |
	    EV_PERSIST, writer_cb, NULL));
	event_add(rs.wev, NULL);
}

/* The loop for ms, with a client that reads nothing (fixture_run reads). */
static void
run_unread(struct http_fixture *fx, int ms)
{
	int	 i;

	i = 0;
	do {
		event_base_loop(fx->base, EVLOOP_NONBLOCK);
		if (ms > 0)
			usleep(1000);
	} while (++i < ms);
}

static void
assert_body(const struct http_response *r)
{
	assert_int_equal(r->status, 200);
	assert_int_equal(r->body_len, rs.len);
	assert_memory_equal(r->body, rs.body, rs.len);
}

/*
 * 5 MiB, more than one turn of the loop moves, then a request pipelined
 * after it: whole and in order, the connection kept.
 */
static void
test_spliced_then_keep_alive(void **state)
{
	struct http_fixture	 fx;
	struct http_response	 r = { 0 };

	fixture_init(&fx, route, NULL);
	reset(&fx, 5 * 1024 * 1024);
	fixture_send_str(&fx, "GET /file HTTP/1.1\r\nHost: t\r\n\r\n"
	    "GET /after HTTP/1.1\r\nHost: t\r\n\r\n");
	assert_int_equal(fixture_response(&fx, &r, 5000), 0);
	assert_body(&r);
	assert_int_equal(rs.dones, 1);
	assert_int_equal(rs.moved, rs.len - FIRST - 1);
	assert_int_equal(rs.gones, 0);
	assert_int_equal(fixture_response(&fx, &r, 1000), 0);
	assert_string_equal(r.body, "/after");
	assert_false(fixture_closed(&fx, 100));
	response_free(&r);
	done(&fx);
}

/* A pipe that stops short: done says how much came; the reply is cut. */
static void
test_pipe_ends_first(void **state)
{
	struct http_fixture	 fx;
	struct http_response	 r = { 0 };

	fixture_init(&fx, route, NULL);
	reset(&fx, 600 * 1024);
	rs.write_max = 300 * 1024;
	rs.close_at_max = 1;
	fixture_send_str(&fx, "GET /file HTTP/1.1\r\nHost: t\r\n\r\n");
	assert_int_equal(fixture_response(&fx, &r, 3000), -1);
	assert_int_equal(rs.dones, 1);
	assert_int_equal(rs.moved, 300 * 1024);
	assert_true(fixture_closed(&fx, 1000));
	response_free(&r);
	done(&fx);
}

/* A client that goes while the socket is full: gone, never done. */
static void
test_client_gone(void **state)
{
	struct http_fixture	 fx;
	int			 i;

	fixture_init(&fx, route, NULL);
	reset(&fx, 4 * 1024 * 1024);
	fixture_send_str(&fx, "GET /file HTTP/1.1\r\nHost: t\r\n\r\n");
	run_unread(&fx, 200);
	assert_true(rs.written > 0);
	assert_true(rs.written < rs.write_max);
	close(fx.client);
	fx.client = -1;
	for (i = 0; i < 100 && rs.gones == 0; i++)
		run_unread(&fx, 10);
	assert_int_equal(rs.gones, 1);
	assert_int_equal(rs.dones, 0);
	assert_int_equal(rs.rfd, -1);
	done(&fx);
}

/* A client that reads nothing for send_timeout (1 s here) is let go. */
static void
test_send_timeout(void **state)
{
	struct http_fixture	 fx;
	int			 i;

	fixture_init(&fx, route, NULL);
	reset(&fx, 4 * 1024 * 1024);
	fixture_send_str(&fx, "GET /file HTTP/1.1\r\nHost: t\r\n\r\n");
	run_unread(&fx, 500);
	assert_int_equal(rs.gones, 0);
	assert_true(rs.written < rs.write_max);
	for (i = 0; i < 300 && rs.gones == 0; i++)
		run_unread(&fx, 10);
	assert_int_equal(rs.gones, 1);
	assert_int_equal(rs.dones, 0);
	assert_true(fixture_closed(&fx, 1000));
	done(&fx);
}

/* What the client has read by hand, into got; 0 once the server closed. */
static int
read_some(struct http_fixture *fx, struct evbuffer *got, size_t max)
{
	char	 buf[16384];
	ssize_t	 n;

	if (max > sizeof(buf))
		max = sizeof(buf);
	n = read(fx->client, buf, max);
	if (n > 0)
		evbuffer_add(got, buf, (size_t)n);
	return n != 0;
}

/*
 * A reader that keeps reading, 16 KiB every 100 ms for 1.5 s, is never
 * cut off by the 1 s timeout, although the socket it fills is reported
 * writable only once most of it is free; then it reads the rest fast.
 * Both ways: the pipe empty when the splice starts, and full, when the
 * socket fills before the bufferevent's own write timer (armed by the
 * head) has gone.
 */
static void
slow_reader(const char *path)
{
	struct http_fixture	 fx;
	struct evbuffer		*got;
	struct evbuffer_ptr	 end;
	char			 req[128];
	int			 i;

	fixture_init(&fx, route, NULL);
	reset(&fx, 4 * 1024 * 1024);
	assert_non_null(got = evbuffer_new());
	snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: t\r\n\r\n",
	    path);
	fixture_send_str(&fx, req);
	for (i = 0; i < 15; i++) {
		run_unread(&fx, 100);
		assert_true(read_some(&fx, got, 16384));
	}
	assert_int_equal(rs.gones, 0);
	end = evbuffer_search(got, "\r\n\r\n", 4, NULL);
	assert_true(end.pos > 0);
	evbuffer_drain(got, (size_t)end.pos + 4);
	for (i = 0; i < 20000 && evbuffer_get_length(got) < rs.len; i++) {
		run_unread(&fx, 0);
		(void)read_some(&fx, got, 16384);
	}
	assert_int_equal(rs.dones, 1);
	assert_int_equal(rs.gones, 0);
	assert_int_equal(evbuffer_get_length(got), rs.len);
	assert_memory_equal(evbuffer_pullup(got, -1), rs.body, rs.len);
	evbuffer_free(got);
	done(&fx);
}

static void
test_slow_reader_keeps_it(void **state)
{
	slow_reader("/file");
	slow_reader("/file-full");
}

/*
 * A pipe with nothing in it is not timed (the job's pace), and a cancel
 * leaves the pipe alone: no done, the bytes still in the pipe.
 */
static void
test_cancel(void **state)
{
	struct http_fixture	 fx;
	struct http_response	 r = { 0 };
	char			 buf[16];

	fixture_init(&fx, route, NULL);
	reset(&fx, 300 * 1024);
	rs.write_max = 0;
	fixture_send_str(&fx, "GET /file HTTP/1.1\r\nHost: t\r\n\r\n");
	fixture_run(&fx, 1500);
	assert_int_equal(rs.gones, 0);
	assert_int_equal(rs.dones, 0);
	http_reply_splice_cancel(rs.req);
	assert_int_equal(write(rs.wfd, "0123456789", 10), 10);
	fixture_run(&fx, 100);
	assert_int_equal(rs.dones, 0);
	assert_int_equal(read(rs.rfd, buf, sizeof(buf)), 10);
	/* The route may go on another way: here it gives up. */
	route_close();
	http_reply_abort(rs.req);
	assert_int_equal(fixture_response(&fx, &r, 1000), -1);
	assert_true(fixture_closed(&fx, 1000));
	response_free(&r);
	done(&fx);
}

/* Before the head, a chunked reply, more than is left: all refused. */
static void
test_refused(void **state)
{
	struct http_fixture	 fx;
	struct http_response	 r = { 0 };

	fixture_init(&fx, route, NULL);
	reset(&fx, 300 * 1024);
	fixture_send_str(&fx, "GET /refuse HTTP/1.1\r\nHost: t\r\n\r\n");
	assert_int_equal(fixture_response(&fx, &r, 1000), 0);
	assert_int_equal(r.status, 200);
	assert_true(r.chunked);
	assert_int_equal(r.body_len, FIRST);
	route_close();
	writer_close();
	fixture_send_str(&fx, "GET /toolong HTTP/1.1\r\nHost: t\r\n\r\n");
	assert_int_equal(fixture_response(&fx, &r, 1000), -1);
	assert_int_equal(rs.dones, 0);
	response_free(&r);
	done(&fx);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spliced_then_keep_alive),
		cmocka_unit_test(test_pipe_ends_first),
		cmocka_unit_test(test_client_gone),
		cmocka_unit_test(test_send_timeout),
		cmocka_unit_test(test_slow_reader_keeps_it),
		cmocka_unit_test(test_cancel),
		cmocka_unit_test(test_refused),
	};

	/* As every daemon runs (common/proc.c): EPIPE, not a signal. */
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
