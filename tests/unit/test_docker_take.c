/*
 * docker_request_take() (dockerd-proxy/docker_http.c): a DOCKER_HTTP_RAW
 * request goes out as HTTP/1.0, and at the announce of its streamed 2xx
 * the connection and what was read with the head go to the caller, with
 * the body bytes still due; a chunked answer is not taken, a body longer
 * than its Content-Length is refused.  Against the fake Docker of
 * docker_fake.c, whole and dribbled.
 */
#include <sys/types.h>

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

#include "docker_fake.h"

struct taken {
	struct result	 res;
	int		 refused;	/* take said -1 */
	int		 errnum;
	int		 fd;
	struct evbuffer	*got;		/* rest, then what fd gave */
	long long	 left;
	int		 calls;
};

static void
take_cb(struct docker_request *req, int fd, struct evbuffer *rest,
    long long left, void *arg)
{
	struct taken	*t = arg;

	t->calls++;
	t->fd = fd;
	t->left = left;
	assert_int_equal(evbuffer_add_buffer(t->got, rest), 0);
	event_base_loopbreak(t->res.base);
}

/* At the announce, take the body; count the pieces otherwise. */
static int
announce_cb(struct docker_request *req, const unsigned char *data,
    size_t len, void *arg)
{
	struct taken	*t = arg;

	if (len == 0 && t->res.body_calls == 0) {
		t->res.body_calls++;
		if (docker_request_take(req, take_cb) == 0)
			return 0;
		t->refused = 1;
		t->errnum = errno;
		return 0;
	}
	return body_cb(req, data, len, &t->res);
}

static void
taken_done(struct docker_request *req, enum docker_http_error error,
    const struct docker_response *resp, void *arg)
{
	struct taken	*t = arg;

	done_cb(req, error, resp, &t->res);
}

static void
start_raw(struct taken *t, struct fake *fk, struct event_base *base)
{
	struct docker_request_spec	 spec;

	memset(t, 0, sizeof(*t));
	t->fd = -1;
	result_init(&t->res, base);
	assert_non_null(t->got = evbuffer_new());
	memset(&spec, 0, sizeof(spec));
	spec.method = "GET";
	spec.path = "/v1.41/containers/c/archive?path=%2Fworkspace%2F.";
	spec.max_body = 1024;
	spec.flags = DOCKER_HTTP_ANNOUNCE | DOCKER_HTTP_RAW;
	spec.on_body = announce_cb;
	spec.on_done = taken_done;
	spec.arg = t;
	assert_non_null(t->res.req = docker_request_new(base, fk->path,
	    &spec));
	run_loop(base);
}

/* The fake answers resp (whole, or dribble bytes at a time). */
static void
answer(struct event_base *base, const char *resp, size_t dribble,
    struct fake *fk, struct taken *t)
{
	fake_start(fk, base, resp, strlen(resp));
	fk->dribble = dribble;
	start_raw(t, fk, base);
}

/* Everything the taken connection still gives, after the fake sent it. */
static void
drain_taken(struct taken *t, struct event_base *base)
{
	char	 buf[4096];
	ssize_t	 n;

	run_for(base, 200000);
	assert_int_not_equal(t->fd, -1);
	assert_int_equal(fcntl(t->fd, F_SETFL, 0), 0);
	while ((n = read(t->fd, buf, sizeof(buf))) > 0)
		assert_int_equal(evbuffer_add(t->got, buf, (size_t)n), 0);
	assert_int_equal(n, 0);
	close(t->fd);
}

static void
taken_free(struct taken *t)
{
	evbuffer_free(t->got);
	result_free(&t->res);
}

#define TAR_BODY	"0123456789abcdefghijklmnopqrstuvwxyz"
static const char close_delimited[] = "HTTP/1.0 200 OK\r\n"
    "Content-Type: application/x-tar\r\n"
    "X-Docker-Container-Path-Stat: e30=\r\n\r\n" TAR_BODY;

static void
expect_body(struct taken *t, const char *body)
{
	assert_int_equal(evbuffer_get_length(t->got), strlen(body));
	assert_memory_equal(evbuffer_pullup(t->got, -1), body, strlen(body));
}

/* Until Docker closes: left -1, the whole body across rest and fd. */
static void
take_close_delimited(struct event_base *base, size_t dribble)
{
	struct fake	 fk;
	struct taken	 t;

	answer(base, close_delimited, dribble, &fk, &t);
	assert_int_equal(t.calls, 1);
	assert_int_equal(t.refused, 0);
	assert_int_equal(t.res.calls, 0);	/* no done callback */
	assert_true(t.left == -1);
	drain_taken(&t, base);
	expect_body(&t, TAR_BODY);
	assert_true(fake_request_is(&fk, "GET /v1.41/containers/c/archive?"
	    "path=%2Fworkspace%2F. HTTP/1.0\r\nHost: docker\r\n"
	    "User-Agent: agent-sandbox\r\nConnection: close\r\n\r\n", 0));
	taken_free(&t);
	fake_stop(&fk);
}

static void
test_take_whole(void **state)
{
	take_close_delimited(*state, 0);
}

static void
test_take_dribbled(void **state)
{
	/* The head alone first, then the body a few bytes at a time. */
	take_close_delimited(*state, 7);
}

/* With a Content-Length: left counts what is still due on fd. */
static void
test_take_length(void **state)
{
	static const char resp[] = "HTTP/1.0 200 OK\r\n"
	    "Content-Length: 36\r\n\r\n" TAR_BODY;
	struct event_base	*base = *state;
	struct fake		 fk;
	struct taken		 t;

	answer(base, resp, 30, &fk, &t);
	assert_int_equal(t.calls, 1);
	assert_true(t.left == 36 - (long long)evbuffer_get_length(t.got));
	drain_taken(&t, base);
	expect_body(&t, TAR_BODY);
	taken_free(&t);
	fake_stop(&fk);
}

/* An empty body is taken with nothing left. */
static void
test_take_empty(void **state)
{
	static const char resp[] = "HTTP/1.0 200 OK\r\n"
	    "Content-Length: 0\r\n\r\n";
	struct event_base	*base = *state;
	struct fake		 fk;
	struct taken		 t;

	answer(base, resp, 0, &fk, &t);
	assert_int_equal(t.calls, 1);
	assert_true(t.left == 0);
	assert_int_equal(evbuffer_get_length(t.got), 0);
	close(t.fd);
	taken_free(&t);
	fake_stop(&fk);
}

/* Chunked all the same (a proxy in between): not taken, parsed. */
static void
test_take_chunked_refused(void **state)
{
	static const char resp[] = "HTTP/1.1 200 OK\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n"
	    "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n";
	struct event_base	*base = *state;
	struct fake		 fk;
	struct taken		 t;

	answer(base, resp, 0, &fk, &t);
	assert_int_equal(t.refused, 1);
	assert_int_equal(t.errnum, EINVAL);
	assert_int_equal(t.calls, 0);
	assert_int_equal(t.res.calls, 1);
	assert_int_equal(t.res.error, DOCKER_HTTP_OK);
	assert_int_equal(evbuffer_get_length(t.res.streamed), 11);
	assert_memory_equal(evbuffer_pullup(t.res.streamed, -1),
	    "hello world", 11);
	taken_free(&t);
	fake_stop(&fk);
}

/* Bytes past the Content-Length with the head: a lie, refused. */
static void
test_take_past_length(void **state)
{
	static const char resp[] = "HTTP/1.0 200 OK\r\n"
	    "Content-Length: 3\r\n\r\nabcdef";
	struct event_base	*base = *state;
	struct fake		 fk;
	struct taken		 t;

	answer(base, resp, 0, &fk, &t);
	assert_int_equal(t.calls, 0);
	assert_int_equal(t.res.calls, 1);
	assert_int_equal(t.res.error, DOCKER_HTTP_PROTOCOL);
	taken_free(&t);
	fake_stop(&fk);
}

/* Errors are buffered as always: nothing to take. */
static void
test_take_error_status(void **state)
{
	static const char resp[] = "HTTP/1.0 404 Not Found\r\n"
	    "Content-Type: application/json\r\n\r\n" DOCKER_404;
	struct event_base	*base = *state;
	struct fake		 fk;
	struct taken		 t;

	answer(base, resp, 0, &fk, &t);
	assert_int_equal(t.calls, 0);
	assert_int_equal(t.res.body_calls, 0);
	assert_int_equal(t.res.calls, 1);
	assert_int_equal(t.res.status, 404);
	taken_free(&t);
	fake_stop(&fk);
}

/* Not RAW, or not from a callback: take refuses; RAW refuses a body. */
static void
test_take_misuse(void **state)
{
	struct event_base		*base = *state;
	struct docker_request_spec	 spec;
	struct fake			 fk;
	struct result			 res;

	fake_start(&fk, base, close_delimited, sizeof(close_delimited) - 1);
	result_init(&res, base);
	res.req = docker_request_start(base, fk.path, "GET", "/v1.41/_ping",
	    NULL, NULL, 0, 1024, body_cb, done_cb, &res);
	assert_int_equal(docker_request_take(res.req, take_cb), -1);
	assert_int_equal(errno, EINVAL);
	docker_request_cancel(res.req);
	memset(&spec, 0, sizeof(spec));
	spec.method = "POST";
	spec.path = "/x";
	spec.content_type = "application/json";
	spec.body = "{}";
	spec.body_len = 2;
	spec.flags = DOCKER_HTTP_RAW;
	spec.on_done = done_cb;
	spec.arg = &res;
	assert_null(docker_request_new(base, fk.path, &spec));
	assert_int_equal(errno, EINVAL);
	spec.body = NULL;
	spec.body_len = 0;
	spec.content_type = NULL;
	spec.flags = DOCKER_HTTP_RAW | DOCKER_HTTP_UPGRADE;
	assert_null(docker_request_new(base, fk.path, &spec));
	result_free(&res);
	fake_stop(&fk);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_take_whole, setup_base,
		    teardown_base),
		cmocka_unit_test_setup_teardown(test_take_dribbled,
		    setup_base, teardown_base),
		cmocka_unit_test_setup_teardown(test_take_length, setup_base,
		    teardown_base),
		cmocka_unit_test_setup_teardown(test_take_empty, setup_base,
		    teardown_base),
		cmocka_unit_test_setup_teardown(test_take_chunked_refused,
		    setup_base, teardown_base),
		cmocka_unit_test_setup_teardown(test_take_past_length,
		    setup_base, teardown_base),
		cmocka_unit_test_setup_teardown(test_take_error_status,
		    setup_base, teardown_base),
		cmocka_unit_test_setup_teardown(test_take_misuse, setup_base,
		    teardown_base),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
