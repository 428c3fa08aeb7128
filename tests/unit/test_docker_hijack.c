/*
 * Tests for docker_http.c's upgraded connections against the fake Docker
 * (docker_fake.c): raw bytes written after the 101 (an exec's stdin),
 * the half-close that ends them only once they are all out, reading on
 * after it, and the refusals before the 101 and after the half-close.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <limits.h>
#include <malloc.h>
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
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "docker_fake.h"

#define UPGRADED	"HTTP/1.1 101 UPGRADED\r\n" \
			"Content-Type: application/vnd.docker.raw-stream\r\n" \
			"Connection: Upgrade\r\nUpgrade: tcp\r\n\r\n"
#define START_BODY	"{\"Detach\":false,\"Tty\":true}"
#define START_HEAD	"POST /v1.41/exec/abc/start HTTP/1.1\r\n" \
			"Host: docker\r\nUser-Agent: agent-sandbox\r\n" \
			"Connection: Upgrade, close\r\nUpgrade: tcp\r\n" \
			"Content-Type: application/json\r\n" \
			"Content-Length: 27\r\n\r\n" START_BODY

/* What the test writes once the stream is up, and how that went. */
struct hijack {
	struct result		 res;
	const unsigned char	*in;
	size_t			 in_len;
	size_t			 in_sent;
	size_t			 piece;		/* 0: all at once */
	int			 shut;		/* half-close after it */
	int			 shut_done;
	int			 errnum;	/* of the first failure */
	size_t			 pending_at_shut;
	int			 after_shut_write;	/* errno */
	int			 after_shut_shut;	/* errno */
	int			 drains;
	size_t			 max_pending;
};

static void
hijack_fail(struct hijack *h)
{
	if (h->errnum == 0)
		h->errnum = errno;
}

/* Write until HIWAT, as a producer should; half-close at the end. */
static void
hijack_pump(struct docker_request *req, struct hijack *h)
{
	size_t	 n;

	while (h->in_sent < h->in_len &&
	    docker_request_pending(req) <= DOCKER_HTTP_UPLOAD_HIWAT) {
		n = h->in_len - h->in_sent;
		if (h->piece != 0 && n > h->piece)
			n = h->piece;
		if (docker_request_write_raw(req, h->in + h->in_sent, n) ==
		    -1) {
			hijack_fail(h);
			return;
		}
		h->in_sent += n;
		if (docker_request_pending(req) > h->max_pending)
			h->max_pending = docker_request_pending(req);
	}
	if (h->in_sent < h->in_len || !h->shut || h->shut_done)
		return;
	h->pending_at_shut = docker_request_pending(req);
	if (docker_request_shutdown_write(req) == -1) {
		hijack_fail(h);
		return;
	}
	h->shut_done = 1;
	/* Nothing more goes out after the half-close. */
	if (docker_request_write_raw(req, "x", 1) == -1)
		h->after_shut_write = errno;
	if (docker_request_shutdown_write(req) == -1)
		h->after_shut_shut = errno;
}

static int
hijack_body(struct docker_request *req, const unsigned char *data,
    size_t len, void *arg)
{
	struct hijack	*h = arg;

	if (body_cb(req, data, len, &h->res) == -1)
		return -1;
	hijack_pump(req, h);
	return 0;
}

static void
hijack_drain(struct docker_request *req, void *arg)
{
	struct hijack	*h = arg;

	assert_false(h->shut_done);
	h->drains++;
	hijack_pump(req, h);
}

static void
hijack_done(struct docker_request *req, enum docker_http_error error,
    const struct docker_response *resp, void *arg)
{
	struct hijack	*h = arg;

	done_cb(req, error, resp, &h->res);
}

/* Run the loop until the 101 is in; fail after a while. */
static void
wait_upgraded(struct event_base *base, struct docker_request *req)
{
	int	 i;

	for (i = 0; i < 5000 && docker_request_response(req)->status != 101;
	    i++)
		run_for(base, 1000);
	assert_int_equal(docker_request_response(req)->status, 101);
}

static struct docker_request *
hijack_start_at(struct event_base *base, const char *path, struct hijack *h)
{
	struct docker_request_spec	 spec;

	memset(&spec, 0, sizeof(spec));
	spec.method = "POST";
	spec.path = "/v1.41/exec/abc/start";
	spec.content_type = "application/json";
	spec.body = START_BODY;
	spec.body_len = strlen(START_BODY);
	spec.flags = DOCKER_HTTP_UPGRADE;
	spec.max_body = 1024;
	spec.on_body = hijack_body;
	spec.on_drain = hijack_drain;
	spec.on_done = hijack_done;
	spec.arg = h;
	h->res.req = docker_request_new(base, path, &spec);
	assert_non_null(h->res.req);
	return h->res.req;
}

static struct docker_request *
hijack_start(struct event_base *base, struct fake *fk, struct hijack *h)
{
	return hijack_start_at(base, fk->path, h);
}

/*
 * stdin in, half-closed; the command's last words still come back.  On
 * Docker's unix socket (family 0) or over TCP, as through a socket proxy.
 */
static void
write_then_half_close(struct event_base *base, int family)
{
	struct fake		 fk;
	struct hijack		 h;

	if (family == 0)
		fake_start(&fk, base, UPGRADED "$ ", 0);
	else
		fake_start_tcp(&fk, base, family, UPGRADED "$ ", 0);
	fk.keep_open = 1;
	fk.after_eof = "bye\r\n";
	memset(&h, 0, sizeof(h));
	result_init(&h.res, base);
	h.in = (const unsigned char *)"hello\n";
	h.in_len = 6;
	h.shut = 1;
	hijack_start(base, &fk, &h);
	run_loop(base);
	assert_int_equal(h.res.calls, 1);
	assert_int_equal(h.res.error, DOCKER_HTTP_OK);
	assert_int_equal(h.res.status, 101);
	assert_int_equal(h.errnum, 0);
	assert_true(h.shut_done);
	assert_int_equal(h.after_shut_write, EINVAL);
	assert_int_equal(h.after_shut_shut, EINVAL);
	assert_true(fk.got_eof);
	assert_true(fake_request_is(&fk, START_HEAD "hello\n", 0));
	/* What Docker sent after the half-close was read to its end. */
	assert_int_equal(evbuffer_get_length(h.res.streamed), 7);
	assert_memory_equal(evbuffer_pullup(h.res.streamed, -1), "$ bye\r\n",
	    7);
	result_free(&h.res);
	fake_stop(&fk);
}

static void
test_write_then_half_close(void **state)
{
	write_then_half_close(*state, 0);
}

static void
test_write_then_half_close_tcp(void **state)
{
	write_then_half_close(*state, AF_INET);
}

static void
test_write_then_half_close_tcp6(void **state)
{
	write_then_half_close(*state, AF_INET6);
}

/*
 * 8 MiB paced by the drain callback, then the half-close while much is
 * still queued: it waits for the last byte, and nothing is lost.
 */
static void
test_half_close_after_queued(void **state)
{
	struct event_base	*base = *state;
	struct fake		 fk;
	struct hijack		 h;
	unsigned char		*big;
	const unsigned char	*got;
	size_t			 n = 8 * 1024 * 1024, i, head;

	big = malloc(n);
	assert_non_null(big);
	for (i = 0; i < n; i++)
		big[i] = (unsigned char)(i * 7 + i / 4096);
	fake_start(&fk, base, UPGRADED, 0);
	fk.keep_open = 1;
	fk.after_eof = "done";
	memset(&h, 0, sizeof(h));
	result_init(&h.res, base);
	h.in = big;
	h.in_len = n;
	h.piece = 100000;
	h.shut = 1;
	hijack_start(base, &fk, &h);
	/* No body comes before the stdin: start the pump by hand. */
	wait_upgraded(base, h.res.req);
	hijack_pump(h.res.req, &h);
	run_loop(base);
	assert_int_equal(h.res.calls, 1);
	assert_int_equal(h.res.error, DOCKER_HTTP_OK);
	assert_int_equal(h.errnum, 0);
	assert_true(h.shut_done);
	assert_true(h.drains > 0);
	assert_true(h.pending_at_shut > 0);
	assert_true(h.max_pending <= DOCKER_HTTP_UPLOAD_HIWAT + h.piece);
	assert_true(fk.got_eof);
	head = strlen(START_HEAD);
	assert_int_equal(evbuffer_get_length(fk.request), head + n);
	got = evbuffer_pullup(fk.request, -1);
	assert_memory_equal(got, START_HEAD, head);
	assert_memory_equal(got + head, big, n);
	assert_int_equal(evbuffer_get_length(h.res.streamed), 4);
	result_free(&h.res);
	fake_stop(&fk);
	free(big);
}

/* Before the 101 there is no stream to write to. */
static void
test_refused_before_upgrade(void **state)
{
	struct event_base	*base = *state;
	struct fake		 fk;
	struct hijack		 h;
	struct result		 res;

	fake_start(&fk, base, UPGRADED "x", 0);
	memset(&h, 0, sizeof(h));
	result_init(&h.res, base);
	hijack_start(base, &fk, &h);
	errno = 0;
	assert_int_equal(docker_request_write_raw(h.res.req, "a", 1), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(docker_request_shutdown_write(h.res.req), -1);
	assert_int_equal(errno, EINVAL);
	run_loop(base);
	assert_int_equal(h.res.calls, 1);
	assert_int_equal(h.res.error, DOCKER_HTTP_OK);
	assert_false(fk.got_eof);
	assert_true(fake_request_is(&fk, START_HEAD, 0));
	result_free(&h.res);
	fake_stop(&fk);

	/* A request that asked for no upgrade never gets one. */
	fake_start(&fk, base, ping_response, 0);
	result_init(&res, base);
	res.req = docker_request_start(base, fk.path, "GET", "/v1.41/_ping",
	    NULL, NULL, 0, 1024, NULL, done_cb, &res);
	assert_non_null(res.req);
	assert_int_equal(docker_request_write_raw(res.req, "a", 1), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(docker_request_shutdown_write(res.req), -1);
	assert_int_equal(errno, EINVAL);
	run_loop(base);
	assert_int_equal(res.status, 200);
	result_free(&res);
	fake_stop(&fk);
}

/*
 * Docker's end closes after the 101 with our request unread: the kernel
 * reports a reset (ECONNRESET), which is an error, DOCKER_HTTP_IO, not
 * the end of the stream, though docker_http's own large reads find it.
 */
static void
test_reset_after_upgrade(void **state)
{
	struct event_base	*base = *state;
	struct hijack		 h;
	struct sockaddr_un	 sun;
	char			 dir[] = "/tmp/test_docker_hijack.XXXXXX";
	static const char	 answer[] = UPGRADED "\001\000\000\000\000\000"
				    "\000\005hello";
	size_t			 len;
	int			 lfd, cfd;

	assert_non_null(mkdtemp(dir));
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/docker.sock", dir);
	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(lfd >= 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	assert_int_equal(listen(lfd, 1), 0);

	memset(&h, 0, sizeof(h));
	result_init(&h.res, base);
	hijack_start_at(base, sun.sun_path, &h);
	/* The request goes out; nobody reads it. */
	run_for(base, 20000);
	cfd = accept(lfd, NULL, NULL);
	assert_true(cfd >= 0);
	len = sizeof(answer) - 1;
	assert_int_equal(write(cfd, answer, len), (ssize_t)len);
	close(cfd);
	run_loop(base);
	assert_int_equal(h.res.calls, 1);
	assert_int_equal(h.res.status, 101);
	assert_int_equal(h.res.error, DOCKER_HTTP_IO);
	assert_int_equal(h.res.sys_errno, ECONNRESET);
	/* What came before the reset was handed over first. */
	len = evbuffer_get_length(h.res.streamed);
	assert_int_equal(len, 13);
	assert_memory_equal(evbuffer_pullup(h.res.streamed, -1),
	    "\001\000\000\000\000\000\000\005hello", 13);
	result_free(&h.res);
	close(lfd);
	unlink(sun.sun_path);
	rmdir(dir);
}

/*
 * After the 101 a command may be silent for ever; one of our own short
 * execs (DOCKER_HTTP_BOUNDED) may not: a sandbox that stops it gets a
 * timeout, not a request held for good.
 */
static void
silent_after_upgrade(struct event_base *base, int flags, int *calls,
    enum docker_http_error *error)
{
	struct docker_request_spec	 spec;
	struct hijack			 h;
	struct sockaddr_un		 sun;
	char				 dir[] = "/tmp/test_docker_hijack.XXXXXX";
	size_t				 len = sizeof(UPGRADED) - 1;
	int				 lfd, cfd;

	assert_non_null(mkdtemp(dir));
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/docker.sock", dir);
	assert_true((lfd = socket(AF_UNIX, SOCK_STREAM, 0)) >= 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	assert_int_equal(listen(lfd, 1), 0);
	memset(&h, 0, sizeof(h));
	result_init(&h.res, base);
	memset(&spec, 0, sizeof(spec));
	spec.method = "POST";
	spec.path = "/v1.41/exec/abc/start";
	spec.content_type = "application/json";
	spec.body = START_BODY;
	spec.body_len = strlen(START_BODY);
	spec.flags = DOCKER_HTTP_UPGRADE | flags;
	spec.max_body = 1024;
	spec.deadline_ms = 200;
	spec.on_body = hijack_body;
	spec.on_done = hijack_done;
	spec.arg = &h;
	assert_non_null(h.res.req = docker_request_new(base, sun.sun_path,
	    &spec));
	run_for(base, 20000);
	assert_true((cfd = accept(lfd, NULL, NULL)) >= 0);
	assert_int_equal(write(cfd, UPGRADED, len), (ssize_t)len);
	run_for(base, 600000);
	*calls = h.res.calls;
	*error = h.res.error;
	if (h.res.calls == 0)
		docker_request_cancel(h.res.req);
	close(cfd);
	run_for(base, 20000);
	result_free(&h.res);
	close(lfd);
	unlink(sun.sun_path);
	rmdir(dir);
}

static void
test_bounded_after_upgrade(void **state)
{
	enum docker_http_error	 error = DOCKER_HTTP_OK;
	int			 calls = 0;

	silent_after_upgrade(*state, DOCKER_HTTP_BOUNDED, &calls, &error);
	assert_int_equal(calls, 1);
	assert_int_equal(error, DOCKER_HTTP_TIMEOUT);
	calls = 0;
	silent_after_upgrade(*state, 0, &calls, &error);
	assert_int_equal(calls, 0);
}

/* More than the cap at once is a producer ignoring HIWAT. */
static void
test_too_much_queued(void **state)
{
	struct event_base	*base = *state;
	struct fake		 fk;
	struct hijack		 h;
	unsigned char		*big;
	size_t			 n = 16 * DOCKER_HTTP_UPLOAD_HIWAT + 1;

	big = calloc(1, n);
	assert_non_null(big);
	fake_start(&fk, base, UPGRADED, 0);
	fk.keep_open = 1;
	fk.after_eof = "!";
	memset(&h, 0, sizeof(h));
	result_init(&h.res, base);
	h.in = big;
	h.in_len = n;
	h.shut = 1;
	hijack_start(base, &fk, &h);
	wait_upgraded(base, h.res.req);
	hijack_pump(h.res.req, &h);
	assert_int_equal(h.errnum, ENOBUFS);
	assert_int_equal(h.in_sent, 0);
	/* A refused write leaves the stream as it was: it still ends well. */
	assert_int_equal(docker_request_shutdown_write(h.res.req), 0);
	run_loop(base);
	assert_int_equal(h.res.error, DOCKER_HTTP_OK);
	assert_true(fake_request_is(&fk, START_HEAD, 0));
	assert_true(fk.got_eof);
	result_free(&h.res);
	fake_stop(&fk);
	free(big);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_write_then_half_close,
		    setup_base, teardown_base),
		cmocka_unit_test_setup_teardown(test_write_then_half_close_tcp,
		    setup_base, teardown_base),
		cmocka_unit_test_setup_teardown(test_write_then_half_close_tcp6,
		    setup_base, teardown_base),
		cmocka_unit_test_setup_teardown(test_half_close_after_queued,
		    setup_base, teardown_base),
		cmocka_unit_test_setup_teardown(test_refused_before_upgrade,
		    setup_base, teardown_base),
		cmocka_unit_test_setup_teardown(test_reset_after_upgrade,
		    setup_base, teardown_base),
		cmocka_unit_test_setup_teardown(test_bounded_after_upgrade,
		    setup_base, teardown_base),
		cmocka_unit_test_setup_teardown(test_too_much_queued,
		    setup_base, teardown_base),
	};

	/* Writes to a daemon that went away must be errors, not signals. */
	signal(SIGPIPE, SIG_IGN);
	mallopt(M_PERTURB, 0x5a);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
