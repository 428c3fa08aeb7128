/*
 * Tests for docker_http.c's uploads against the fake Docker
 * (docker_fake.c): chunked and with a length, backpressure on a big body,
 * an answer before the body is all sent, and no Docker at all.
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

/* Feed an upload until HIWAT; the drain callback goes on. */
static void
upload_pump(struct docker_request *req, struct result *res)
{
	size_t	 n, pending;

	while (res->upload_sent < res->upload_len &&
	    docker_request_pending(req) <= DOCKER_HTTP_UPLOAD_HIWAT) {
		n = res->upload_len - res->upload_sent;
		if (n > res->upload_piece)
			n = res->upload_piece;
		if (docker_request_write(req, res->upload + res->upload_sent,
		    n) == -1) {
			res->upload_errno = errno;
			return;
		}
		res->upload_sent += n;
		if ((pending = docker_request_pending(req)) > res->max_pending)
			res->max_pending = pending;
	}
	if (res->upload_sent == res->upload_len && !res->upload_ended) {
		if (docker_request_write_end(req) == -1)
			res->upload_errno = errno;
		else
			res->upload_ended = 1;
	}
}

static void
drain_cb(struct docker_request *req, void *arg)
{
	struct result	*res = arg;

	res->drains++;
	upload_pump(req, res);
}

static struct docker_request *
start_upload(struct event_base *base, const char *sock, struct result *res,
    long long upload_len)
{
	struct docker_request_spec	 spec;

	memset(&spec, 0, sizeof(spec));
	spec.method = "PUT";
	spec.path = "/v1.41/containers/abc/archive?path=%2Fworkspace";
	spec.content_type = "application/x-tar";
	spec.flags = DOCKER_HTTP_UPLOAD;
	spec.upload_len = upload_len;
	spec.max_body = 1024;
	spec.on_drain = drain_cb;
	spec.on_done = done_cb;
	spec.arg = res;
	return docker_request_new(base, sock, &spec);
}

/*
 * An upload's deadline starts when its body has all been sent: a client
 * that takes longer than the deadline to send a big file is not Docker
 * being silent.
 */
static void
test_e2e_upload_deadline(void **state)
{
	struct event_base		*base = *state;
	struct docker_request_spec	 spec;
	struct fake			 fk;
	struct result			 res;

	fake_start(&fk, base, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
	    0);
	fk.hold = 1;
	result_init(&res, base);
	memset(&spec, 0, sizeof(spec));
	spec.method = "PUT";
	spec.path = "/v1.41/containers/abc/archive?path=%2Fworkspace";
	spec.content_type = "application/x-tar";
	spec.flags = DOCKER_HTTP_UPLOAD;
	spec.upload_len = -1;
	spec.max_body = 1024;
	spec.on_done = done_cb;
	spec.arg = &res;
	spec.deadline_ms = 50;
	res.req = docker_request_new(base, fk.path, &spec);
	assert_non_null(res.req);
	assert_int_equal(docker_request_write(res.req, "abc", 3), 0);
	run_for(base, 150000);
	assert_int_equal(docker_request_write(res.req, "def", 3), 0);
	run_for(base, 150000);
	assert_int_equal(res.calls, 0);
	assert_int_equal(docker_request_write_end(res.req), 0);
	run_loop(base);
	assert_int_equal(res.calls, 1);
	assert_int_equal(res.error, DOCKER_HTTP_TIMEOUT);
	assert_int_equal(fk.answered, 1);
	result_free(&res);
	fake_stop(&fk);
}

static void
test_e2e_upload_chunked(void **state)
{
	static const char	 head[] =
	    "PUT /v1.41/containers/abc/archive"
	    "?path=%2Fworkspace HTTP/1.1\r\n"
	    "Host: docker\r\nUser-Agent: agent-sandbox\r\n"
	    "Connection: close\r\n"
	    "Content-Type: application/x-tar\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n";
	static const char	 data[] = "0123456789abcdefghijklmnopqrst";
	struct event_base	*base = *state;
	struct evbuffer		*got;
	struct fake		 fk;
	struct result		 res;
	const char		*req_bytes;

	fake_start(&fk, base, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
	    0);
	result_init(&res, base);
	res.upload = (const unsigned char *)data;
	res.upload_len = sizeof(data) - 1;
	res.upload_piece = 10;
	res.req = start_upload(base, fk.path, &res, -1);
	assert_non_null(res.req);
	upload_pump(res.req, &res);
	assert_int_equal(res.upload_errno, 0);
	assert_true(res.upload_ended);
	/* After the end nothing more goes in. */
	errno = 0;
	assert_int_equal(docker_request_write(res.req, "x", 1), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(docker_request_write_end(res.req), -1);
	assert_int_equal(errno, EINVAL);
	run_loop(base);
	assert_int_equal(res.calls, 1);
	assert_int_equal(res.error, DOCKER_HTTP_OK);
	assert_int_equal(res.status, 200);

	req_bytes = (const char *)evbuffer_pullup(fk.request, -1);
	assert_true(evbuffer_get_length(fk.request) > sizeof(head) - 1);
	assert_memory_equal(req_bytes, head, sizeof(head) - 1);
	got = evbuffer_new();
	assert_non_null(got);
	assert_true(dechunk(req_bytes + sizeof(head) - 1,
	    evbuffer_get_length(fk.request) - (sizeof(head) - 1), got) ==
	    (long)(evbuffer_get_length(fk.request) - (sizeof(head) - 1)));
	assert_int_equal(evbuffer_get_length(got), sizeof(data) - 1);
	assert_memory_equal(evbuffer_pullup(got, -1), data, sizeof(data) - 1);
	evbuffer_free(got);
	result_free(&res);
	fake_stop(&fk);
}

static void
test_e2e_upload_length(void **state)
{
	struct event_base	*base = *state;
	struct fake		 fk;
	struct result		 res;
	struct docker_request	*req;

	fake_start(&fk, base, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
	    0);
	result_init(&res, base);
	res.req = req = start_upload(base, fk.path, &res, 10);
	assert_non_null(req);
	assert_int_equal(docker_request_write(req, "abcd", 4), 0);
	errno = 0;
	assert_int_equal(docker_request_write(req, "efghijk", 7), -1);
	assert_int_equal(errno, EMSGSIZE);
	errno = 0;
	assert_int_equal(docker_request_write_end(req), -1);
	assert_int_equal(errno, EMSGSIZE);
	assert_int_equal(docker_request_write(req, "", 0), 0);
	assert_int_equal(docker_request_write(req, "efghij", 6), 0);
	assert_int_equal(docker_request_write_end(req), 0);
	run_loop(base);
	assert_int_equal(res.calls, 1);
	assert_int_equal(res.error, DOCKER_HTTP_OK);
	assert_true(fake_request_is(&fk, "PUT /v1.41/containers/abc/archive"
	    "?path=%2Fworkspace HTTP/1.1\r\nHost: docker\r\n"
	    "User-Agent: agent-sandbox\r\nConnection: close\r\n"
	    "Content-Type: application/x-tar\r\nContent-Length: 10\r\n\r\n"
	    "abcdefghij", 0));
	result_free(&res);
	fake_stop(&fk);
}

/* A big upload paced by the drain callback, and a non-upload refusing. */
static void
test_e2e_upload_big(void **state)
{
	struct event_base	*base = *state;
	struct fake		 fk;
	struct result		 res;
	unsigned char		*data;
	size_t			 i, total = 3 * 1024 * 1024 + 17, head;
	struct docker_request	*req;

	data = malloc(total);
	assert_non_null(data);
	for (i = 0; i < total; i++)
		data[i] = (unsigned char)(i * 7 + i / 4096);
	fake_start(&fk, base, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
	    0);
	result_init(&res, base);
	res.upload = data;
	res.upload_len = total;
	res.upload_piece = 8192;
	res.req = start_upload(base, fk.path, &res, (long long)total);
	assert_non_null(res.req);
	upload_pump(res.req, &res);
	assert_false(res.upload_ended);
	run_loop(base);
	assert_int_equal(res.calls, 1);
	assert_int_equal(res.error, DOCKER_HTTP_OK);
	assert_int_equal(res.upload_errno, 0);
	assert_true(res.upload_ended);
	assert_true(res.drains > 0);
	assert_true(res.max_pending <= DOCKER_HTTP_UPLOAD_HIWAT + 8192 +
	    1024);
	head = evbuffer_get_length(fk.request) - total;
	assert_memory_equal(evbuffer_pullup(fk.request, -1) + head, data,
	    total);
	result_free(&res);

	/* Upload calls on a plain request are refused. */
	result_init(&res, base);
	req = docker_request_start(base, fk.path, "GET", "/v1.41/_ping",
	    NULL, NULL, 0, 16, NULL, done_cb, &res);
	assert_non_null(req);
	errno = 0;
	assert_int_equal(docker_request_write(req, "x", 1), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(docker_request_write_end(req), -1);
	assert_int_equal(errno, EINVAL);
	docker_request_cancel(req);
	result_free(&res);
	fake_stop(&fk);
	free(data);
}

/* Docker answers (404) and closes while the upload is still going. */
static void
test_e2e_upload_answered_early(void **state)
{
	static const char	 answer[] =
	    "HTTP/1.1 404 Not Found\r\n"
	    "Content-Type: application/json\r\n"
	    "Content-Length: 37\r\n\r\n" DOCKER_404;
	struct event_base	*base = *state;
	struct fake		 fk;
	struct result		 res;
	unsigned char		*data;
	size_t			 total = 8 * 1024 * 1024;

	data = calloc(1, total);
	assert_non_null(data);
	fake_start(&fk, base, answer, 0);
	fk.answer_early = 1;
	result_init(&res, base);
	res.upload = data;
	res.upload_len = total;
	res.upload_piece = 65536;
	res.req = start_upload(base, fk.path, &res, -1);
	assert_non_null(res.req);
	upload_pump(res.req, &res);
	run_loop(base);
	assert_int_equal(res.calls, 1);
	assert_int_equal(res.error, DOCKER_HTTP_OK);
	assert_int_equal(res.status, 404);
	assert_int_equal(evbuffer_get_length(res.body), 37);
	assert_false(res.upload_ended);
	result_free(&res);
	fake_stop(&fk);
	free(data);
}

/* A failed connect: uploads are refused with EPIPE, then CONNECT. */
static void
test_e2e_upload_no_docker(void **state)
{
	struct event_base	*base = *state;
	struct result		 res;

	result_init(&res, base);
	res.req = start_upload(base, "/nonexistent/docker.sock", &res, -1);
	assert_non_null(res.req);
	errno = 0;
	assert_int_equal(docker_request_write(res.req, "x", 1), -1);
	assert_int_equal(errno, EPIPE);
	assert_int_equal(docker_request_pending(res.req), 0);
	run_loop(base);
	assert_int_equal(res.calls, 1);
	assert_int_equal(res.error, DOCKER_HTTP_CONNECT);
	result_free(&res);
}
int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_e2e_upload_deadline,
		    setup_base, teardown_base),
		cmocka_unit_test_setup_teardown(test_e2e_upload_chunked,
		    setup_base, teardown_base),
		cmocka_unit_test_setup_teardown(test_e2e_upload_length,
		    setup_base, teardown_base),
		cmocka_unit_test_setup_teardown(test_e2e_upload_big,
		    setup_base, teardown_base),
		cmocka_unit_test_setup_teardown(test_e2e_upload_answered_early,
		    setup_base, teardown_base),
		cmocka_unit_test_setup_teardown(test_e2e_upload_no_docker,
		    setup_base, teardown_base),
	};

	/* Writes to a daemon that went away must be errors, not signals. */
	signal(SIGPIPE, SIG_IGN);
	/* Fresh memory is never a lucky NUL: a byte not written shows. */
	mallopt(M_PERTURB, 0x5a);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
