/*
 * Tests for dockerd-proxy/docker_http.c: real requests against a fake
 * Docker on a unix socket (docker_fake.c): buffered and streamed bodies,
 * pauses and backpressure, cancel and abort, connect errors, upgrades.
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

static void
test_e2e_get(void **state)
{
	struct event_base	*base = *state;
	struct fake		 fk;
	struct result		 res;

	fake_start(&fk, base, ping_response, 0);
	result_init(&res, base);
	res.req = docker_request_start(base, fk.path, "GET", "/v1.41/_ping",
	    NULL, NULL, 0, 1024, NULL, done_cb, &res);
	assert_non_null(res.req);
	run_loop(base);
	assert_int_equal(res.calls, 1);
	assert_int_equal(res.error, DOCKER_HTTP_OK);
	assert_int_equal(res.status, 200);
	assert_string_equal(res.content_type, "text/plain; charset=utf-8");
	assert_null(res.path_stat);
	assert_int_equal(evbuffer_get_length(res.body), 2);
	assert_memory_equal(evbuffer_pullup(res.body, -1), "OK", 2);
	assert_true(fake_request_is(&fk, "GET /v1.41/_ping HTTP/1.1\r\n"
	    "Host: docker\r\nUser-Agent: agent-sandbox\r\n"
	    "Connection: close\r\n\r\n", 0));
	result_free(&res);
	fake_stop(&fk);
}

/* A JSON body out, a chunked answer back a few bytes at a time. */
static void
test_e2e_post_dribbled(void **state)
{
	static const char	 answer[] =
	    "HTTP/1.1 201 Created\r\n"
	    "Content-Type: application/json\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n"
	    "b\r\n{\"Id\":\"abc\"\r\n2\r\n}\n\r\n0\r\n\r\n";
	static const char	 body[] = "{\"Image\":\"python:3.12\"}";
	struct event_base	*base = *state;
	struct fake		 fk;
	struct result		 res;

	fake_start(&fk, base, answer, 0);
	fk.dribble = 3;
	result_init(&res, base);
	res.req = docker_request_start(base, fk.path, "POST",
	    "/v1.41/containers/create", "application/json", body,
	    sizeof(body) - 1, 1024, NULL, done_cb, &res);
	assert_non_null(res.req);
	run_loop(base);
	assert_int_equal(res.calls, 1);
	assert_int_equal(res.error, DOCKER_HTTP_OK);
	assert_int_equal(res.status, 201);
	assert_int_equal(evbuffer_get_length(res.body), 13);
	assert_memory_equal(evbuffer_pullup(res.body, -1),
	    "{\"Id\":\"abc\"}\n", 13);
	assert_true(fake_request_is(&fk, "POST /v1.41/containers/create "
	    "HTTP/1.1\r\nHost: docker\r\nUser-Agent: agent-sandbox\r\n"
	    "Connection: close\r\nContent-Type: application/json\r\n"
	    "Content-Length: 23\r\n\r\n{\"Image\":\"python:3.12\"}", 0));
	result_free(&res);
	fake_stop(&fk);
}

/* The client finishes at the end of the response, not at EOF. */
static void
test_e2e_head_kept_open(void **state)
{
	static const char	 answer[] =
	    "HTTP/1.1 200 OK\r\n"
	    "Content-Length: 100\r\n"
	    "X-Docker-Container-Path-Stat: e30=\r\n\r\n";
	struct event_base	*base = *state;
	struct fake		 fk;
	struct result		 res;

	fake_start(&fk, base, answer, 0);
	fk.keep_open = 1;
	result_init(&res, base);
	res.req = docker_request_start(base, fk.path, "HEAD",
	    "/v1.41/containers/abc/archive?path=%2Fworkspace", NULL, NULL, 0,
	    1024, NULL, done_cb, &res);
	assert_non_null(res.req);
	run_loop(base);
	assert_int_equal(res.calls, 1);
	assert_int_equal(res.error, DOCKER_HTTP_OK);
	assert_int_equal(res.status, 200);
	assert_string_equal(res.path_stat, "e30=");
	assert_false(res.body_null);
	assert_int_equal(evbuffer_get_length(res.body), 0);
	result_free(&res);
	fake_stop(&fk);
}

static void
test_e2e_connect_missing(void **state)
{
	struct event_base	*base = *state;
	struct result		 res;

	result_init(&res, base);
	res.req = docker_request_start(base,
	    "/nonexistent/test_docker_http/docker.sock", "GET", "/v1.41/_ping",
	    NULL, NULL, 0, 1024, NULL, done_cb, &res);
	assert_non_null(res.req);
	/* Never from inside docker_request_start. */
	assert_int_equal(res.calls, 0);
	run_loop(base);
	assert_int_equal(res.calls, 1);
	assert_int_equal(res.error, DOCKER_HTTP_CONNECT);
	assert_int_equal(res.sys_errno, ENOENT);
	assert_int_equal(res.status, 0);
	result_free(&res);
}

/* A request a done callback counts and nothing else. */
static void
count_cb(struct docker_request *req, enum docker_http_error error,
    const struct docker_response *resp, void *arg)
{
	int	*calls = arg;

	(*calls)++;
}

/*
 * At most DOCKER_HTTP_MAX_LIVE requests are out at once: one more fails
 * at once with EAGAIN, without a descriptor, and once those have ended
 * a new one starts again.
 */
static void
test_e2e_max_live(void **state)
{
	struct event_base	*base = *state;
	static const char	 sock[] = "/nonexistent/test_docker_http/s";
	int			 calls = 0, i;

	for (i = 0; i < DOCKER_HTTP_MAX_LIVE; i++)
		assert_non_null(docker_request_start(base, sock, "GET",
		    "/v1.41/_ping", NULL, NULL, 0, 1024, NULL, count_cb,
		    &calls));
	errno = 0;
	assert_null(docker_request_start(base, sock, "GET", "/v1.41/_ping",
	    NULL, NULL, 0, 1024, NULL, count_cb, &calls));
	assert_int_equal(errno, EAGAIN);
	run_for(base, 100000);
	assert_int_equal(calls, DOCKER_HTTP_MAX_LIVE);
	assert_non_null(docker_request_start(base, sock, "GET",
	    "/v1.41/_ping", NULL, NULL, 0, 1024, NULL, count_cb, &calls));
	run_for(base, 100000);
	assert_int_equal(calls, DOCKER_HTTP_MAX_LIVE + 1);
}

/*
 * A lasting request (a process's stream) never takes the last
 * DOCKER_HTTP_RESERVE slots: those stay for the calls that end processes.
 */
static void
test_e2e_lasting_reserve(void **state)
{
	struct event_base		*base = *state;
	static const char		 sock[] = "/nonexistent/test_docker_http/s";
	struct docker_request_spec	 spec;
	int				 calls = 0, i;

	memset(&spec, 0, sizeof(spec));
	spec.method = "POST";
	spec.path = "/v1.41/exec/x/start";
	spec.flags = DOCKER_HTTP_UPGRADE | DOCKER_HTTP_LASTING;
	spec.max_body = 1024;
	spec.on_done = count_cb;
	spec.arg = &calls;
	for (i = 0; i < DOCKER_HTTP_MAX_LIVE - DOCKER_HTTP_RESERVE; i++)
		assert_non_null(docker_request_new(base, sock, &spec));
	errno = 0;
	assert_null(docker_request_new(base, sock, &spec));
	assert_int_equal(errno, EAGAIN);
	/* The reserve is there for everything else, to the last slot. */
	for (i = 0; i < DOCKER_HTTP_RESERVE; i++)
		assert_non_null(docker_request_start(base, sock, "GET",
		    "/v1.41/_ping", NULL, NULL, 0, 1024, NULL, count_cb,
		    &calls));
	errno = 0;
	assert_null(docker_request_start(base, sock, "GET", "/v1.41/_ping",
	    NULL, NULL, 0, 1024, NULL, count_cb, &calls));
	assert_int_equal(errno, EAGAIN);
	run_for(base, 100000);
	assert_int_equal(calls, DOCKER_HTTP_MAX_LIVE);
	assert_non_null(docker_request_new(base, sock, &spec));
	run_for(base, 100000);
	assert_int_equal(calls, DOCKER_HTTP_MAX_LIVE + 1);
}

/* A socket file nobody listens on. */
static void
test_e2e_connect_refused(void **state)
{
	struct event_base	*base = *state;
	struct sockaddr_un	 sun;
	struct result		 res;
	char			 dir[] = "/tmp/test_docker_http.XXXXXX";
	int			 fd;

	assert_non_null(mkdtemp(dir));
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/docker.sock", dir);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	close(fd);

	result_init(&res, base);
	res.req = docker_request_start(base, sun.sun_path, "GET",
	    "/v1.41/_ping", NULL, NULL, 0, 1024, NULL, done_cb, &res);
	assert_non_null(res.req);
	run_loop(base);
	assert_int_equal(res.calls, 1);
	assert_int_equal(res.error, DOCKER_HTTP_CONNECT);
	assert_int_equal(res.sys_errno, ECONNREFUSED);
	result_free(&res);
	unlink(sun.sun_path);
	rmdir(dir);
}

static void
test_e2e_closed_early(void **state)
{
	struct event_base	*base = *state;
	struct fake		 fk;
	struct result		 res;

	fake_start(&fk, base, ping_response, 0);
	fk.close_early = 1;
	result_init(&res, base);
	res.req = docker_request_start(base, fk.path, "GET", "/v1.41/_ping",
	    NULL, NULL, 0, 1024, NULL, done_cb, &res);
	assert_non_null(res.req);
	run_loop(base);
	assert_int_equal(res.calls, 1);
	assert_int_equal(res.error, DOCKER_HTTP_IO);
	assert_int_equal(res.status, 0);
	result_free(&res);
	fake_stop(&fk);
}

static void
test_e2e_too_large(void **state)
{
	struct event_base	*base = *state;
	struct fake		 fk;
	struct result		 res;

	fake_start(&fk, base, ping_response, 0);
	result_init(&res, base);
	res.req = docker_request_start(base, fk.path, "GET", "/v1.41/_ping",
	    NULL, NULL, 0, 1, NULL, done_cb, &res);
	assert_non_null(res.req);
	run_loop(base);
	assert_int_equal(res.calls, 1);
	assert_int_equal(res.error, DOCKER_HTTP_TOO_LARGE);
	assert_int_equal(res.status, 200);
	result_free(&res);
	fake_stop(&fk);
}


/*
 * An upgraded stream has its deadline only until the 101: after it the
 * command may be silent for as long as it runs.  Before it, silence
 * fails the request like any other.
 */
static void
upgrade_spec(struct docker_request_spec *spec, struct result *res)
{
	memset(spec, 0, sizeof(*spec));
	spec->method = "POST";
	spec->path = "/v1.41/exec/abc/start";
	spec->flags = DOCKER_HTTP_UPGRADE;
	spec->max_body = 1024;
	spec->on_body = body_cb;
	spec->on_done = done_cb;
	spec->arg = res;
	spec->deadline_ms = 50;
}

static void
test_e2e_deadline_upgrade(void **state)
{
	static const char		 head[] = "HTTP/1.1 101 UPGRADED\r\n"
					    "Connection: Upgrade\r\n"
					    "Upgrade: tcp\r\n\r\n";
	struct event_base		*base = *state;
	struct docker_request_spec	 spec;
	struct fake			 fk;
	struct result			 res;

	fake_start(&fk, base, head, sizeof(head) - 1);
	fk.keep_open = 1;
	result_init(&res, base);
	upgrade_spec(&spec, &res);
	res.req = docker_request_new(base, fk.path, &spec);
	assert_non_null(res.req);
	run_for(base, 300000);
	assert_int_equal(fk.answered, 1);
	assert_int_equal(res.calls, 0);
	docker_request_cancel(res.req);
	result_free(&res);
	fake_stop(&fk);

	fake_start(&fk, base, head, sizeof(head) - 1);
	fk.hold = 1;
	result_init(&res, base);
	upgrade_spec(&spec, &res);
	res.req = docker_request_new(base, fk.path, &spec);
	assert_non_null(res.req);
	run_loop(base);
	assert_int_equal(res.calls, 1);
	assert_int_equal(res.error, DOCKER_HTTP_TIMEOUT);
	result_free(&res);
	fake_stop(&fk);
}

/* A hold-forever GET with the given deadline (0: the default). */
static void
hold_request(struct event_base *base, struct fake *fk, struct result *res,
    unsigned int deadline_ms)
{
	struct docker_request_spec	 spec;

	fake_start(fk, base, ping_response, 0);
	fk->hold = 1;
	result_init(res, base);
	memset(&spec, 0, sizeof(spec));
	spec.method = "GET";
	spec.path = "/v1.41/containers/abc/json";
	spec.max_body = 1024;
	spec.on_done = done_cb;
	spec.arg = res;
	spec.deadline_ms = deadline_ms;
	res->req = docker_request_new(base, fk->path, &spec);
	assert_non_null(res->req);
}

static void
test_e2e_timeout(void **state)
{
	struct event_base	*base = *state;
	struct fake		 fk;
	struct result		 res;

	hold_request(base, &fk, &res, 50);
	run_loop(base);
	assert_int_equal(res.calls, 1);
	assert_int_equal(res.error, DOCKER_HTTP_TIMEOUT);
	assert_int_equal(fk.answered, 1);
	result_free(&res);
	fake_stop(&fk);
}

/*
 * Once a deadline of a second or more has passed, Docker counts as hung:
 * a new request gets DOCKER_DEADLINE_HUNG_MS instead of its own 30 s,
 * until Docker sends a byte again.  A ping's short deadline does not
 * count: a loaded Docker may miss it.
 */
static void
test_e2e_deadline_hung(void **state)
{
	struct event_base	*base = *state;
	struct fake		 fk;
	struct result		 res;

	hold_request(base, &fk, &res, 50);
	run_loop(base);
	assert_int_equal(res.error, DOCKER_HTTP_TIMEOUT);
	assert_int_equal(docker_http_hung(), 0);
	result_free(&res);
	fake_stop(&fk);

	hold_request(base, &fk, &res, DOCKER_DEADLINE_HUNG_MS);
	run_loop(base);
	assert_int_equal(res.error, DOCKER_HTTP_TIMEOUT);
	assert_int_equal(docker_http_hung(), 1);
	result_free(&res);
	fake_stop(&fk);

	/* run_loop gives up after 10 s, long before DOCKER_DEADLINE_MS. */
	hold_request(base, &fk, &res, 0);
	run_loop(base);
	assert_int_equal(res.calls, 1);
	assert_int_equal(res.error, DOCKER_HTTP_TIMEOUT);
	result_free(&res);
	fake_stop(&fk);

	fake_start(&fk, base, ping_response, 0);
	result_init(&res, base);
	res.req = docker_request_start(base, fk.path, "GET", "/v1.41/_ping",
	    NULL, NULL, 0, 1024, NULL, done_cb, &res);
	run_loop(base);
	assert_int_equal(res.error, DOCKER_HTTP_OK);
	assert_int_equal(docker_http_hung(), 0);
	result_free(&res);
	fake_stop(&fk);
}

static void
test_e2e_cancel(void **state)
{
	struct event_base	*base = *state;
	struct fake		 fk;
	struct result		 res;
	struct docker_request	*req;

	fake_start(&fk, base, ping_response, 0);
	result_init(&res, base);
	req = docker_request_start(base, fk.path, "GET", "/v1.41/_ping",
	    NULL, NULL, 0, 1024, NULL, done_cb, &res);
	assert_non_null(req);
	docker_request_cancel(req);
	run_for(base, 50000);
	assert_int_equal(res.calls, 0);

	/* A cancelled connect failure does not call back either. */
	req = docker_request_start(base, "/nonexistent/docker.sock", "GET",
	    "/v1.41/_ping", NULL, NULL, 0, 1024, NULL, done_cb, &res);
	assert_non_null(req);
	docker_request_cancel(req);
	run_for(base, 20000);
	assert_int_equal(res.calls, 0);
	docker_request_cancel(NULL);
	result_free(&res);
	fake_stop(&fk);
}

static void
test_e2e_invalid(void **state)
{
	struct event_base	*base = *state;
	struct docker_request_spec spec;
	struct result		 res;
	char			 longsock[200];

	result_init(&res, base);
	errno = 0;
	assert_null(docker_request_start(base, "/run/docker.sock", "GE T",
	    "/v1.41/_ping", NULL, NULL, 0, 1024, NULL, done_cb, &res));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(docker_request_start(base, "/run/docker.sock", "GET",
	    "/v1.41/_ping\r\nX: y", NULL, NULL, 0, 1024, NULL, done_cb, &res));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(docker_request_start(base, "/run/docker.sock", "POST",
	    "/v1.41/x", NULL, "{}", 2, 1024, NULL, done_cb, &res));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(docker_request_start(base, "/run/docker.sock", "POST",
	    "/v1.41/x", "application/json", NULL, 2, 1024, NULL, done_cb,
	    &res));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(docker_request_start(base, "/run/docker.sock", "GET",
	    "/v1.41/_ping", NULL, NULL, 0, 1024, NULL, NULL, &res));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(docker_request_start(base, "", "GET", "/v1.41/_ping",
	    NULL, NULL, 0, 1024, NULL, done_cb, &res));
	assert_int_equal(errno, EINVAL);
	memset(longsock, 'a', sizeof(longsock) - 1);
	longsock[0] = '/';
	longsock[sizeof(longsock) - 1] = '\0';
	errno = 0;
	assert_null(docker_request_start(base, longsock, "GET",
	    "/v1.41/_ping", NULL, NULL, 0, 1024, NULL, done_cb, &res));
	assert_int_equal(errno, ENAMETOOLONG);

	/* Uploads: a content type, and no inline body. */
	memset(&spec, 0, sizeof(spec));
	spec.method = "PUT";
	spec.path = "/v1.41/containers/abc/archive?path=%2F";
	spec.flags = DOCKER_HTTP_UPLOAD;
	spec.upload_len = -1;
	spec.on_done = done_cb;
	spec.arg = &res;
	errno = 0;
	assert_null(docker_request_new(base, "/run/docker.sock", &spec));
	assert_int_equal(errno, EINVAL);
	spec.content_type = "application/x-tar";
	spec.body = "x";
	spec.body_len = 1;
	errno = 0;
	assert_null(docker_request_new(base, "/run/docker.sock", &spec));
	assert_int_equal(errno, EINVAL);
	spec.body = NULL;
	spec.body_len = 0;
	spec.upload_len = -2;
	errno = 0;
	assert_null(docker_request_new(base, "/run/docker.sock", &spec));
	assert_int_equal(errno, EINVAL);
	spec.upload_len = -1;
	spec.flags = 0x40;
	errno = 0;
	assert_null(docker_request_new(base, "/run/docker.sock", &spec));
	assert_int_equal(errno, EINVAL);

	/* Nothing ran. */
	run_for(base, 10000);
	assert_int_equal(res.calls, 0);
	result_free(&res);
}

/* Streaming, paused after every piece and resumed from a timer. */
static void
test_e2e_stream_pause(void **state)
{
	static const char	 answer[] =
	    "HTTP/1.1 200 OK\r\n"
	    "Content-Type: application/x-tar\r\n"
	    "X-Docker-Container-Path-Stat: e30=\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n"
	    "5\r\nhello\r\n1\r\n \r\n5\r\nworld\r\n"
	    "0\r\n\r\n";
	struct event_base	*base = *state;
	struct fake		 fk;
	struct result		 res;

	fake_start(&fk, base, answer, 0);
	fk.dribble = 5;
	result_init(&res, base);
	res.pause_each = 1;
	res.resume = evtimer_new(base, resume_cb, &res);
	assert_non_null(res.resume);
	res.req = docker_request_start(base, fk.path, "GET",
	    "/v1.41/containers/abc/archive?path=%2Fworkspace", NULL, NULL, 0,
	    64, body_cb, done_cb, &res);
	assert_non_null(res.req);
	run_loop(base);
	assert_int_equal(res.calls, 1);
	assert_int_equal(res.error, DOCKER_HTTP_OK);
	assert_int_equal(res.status, 200);
	assert_string_equal(res.path_stat, "e30=");
	assert_true(res.body_null);
	assert_true(res.body_calls >= 3);
	assert_int_equal(res.calls_while_paused, 0);
	assert_int_equal(evbuffer_get_length(res.streamed), 11);
	assert_memory_equal(evbuffer_pullup(res.streamed, -1), "hello world",
	    11);
	result_free(&res);
	fake_stop(&fk);
}

/* While paused, Docker's writes back up: backpressure reaches it. */
#define BIG_BODY	(4 * 1024 * 1024)

static void
stop_cb(evutil_socket_t fd, short what, void *arg)
{
	event_base_loopbreak(arg);
}

static void
test_e2e_stream_backpressure(void **state)
{
	struct event_base	*base = *state;
	struct fake		 fk;
	struct result		 res;
	struct event		*stop;
	struct timeval		 tv = { 0, 100000 };
	char			*answer;
	size_t			 head, i;
	int			 n;

	answer = malloc(BIG_BODY + 128);
	assert_non_null(answer);
	n = snprintf(answer, 128, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n"
	    "\r\n", BIG_BODY);
	head = (size_t)n;
	for (i = 0; i < BIG_BODY; i++)
		answer[head + i] = (char)('a' + i % 26);
	fake_start(&fk, base, answer, head + BIG_BODY);
	result_init(&res, base);
	res.pause_each = 1;
	res.resume_after.tv_sec = 3600;	/* resumed by hand below */
	res.resume = evtimer_new(base, resume_cb, &res);
	assert_non_null(res.resume);
	res.req = docker_request_start(base, fk.path, "GET",
	    "/v1.41/containers/abc/archive?path=%2Fworkspace", NULL, NULL, 0,
	    0, body_cb, done_cb, &res);
	assert_non_null(res.req);

	stop = evtimer_new(base, stop_cb, base);
	assert_non_null(stop);
	for (i = 0; i < 100 && res.body_calls == 0; i++) {
		evtimer_add(stop, &tv);
		event_base_dispatch(base);
	}
	/* Give Docker time to push all it can. */
	evtimer_add(stop, &tv);
	event_base_dispatch(base);
	/* One piece arrived, then nothing more was read. */
	assert_int_equal(res.calls, 0);
	assert_int_equal(res.body_calls, 1);
	assert_true(res.paused);
	assert_non_null(fk.conn);
	assert_true(evbuffer_get_length(bufferevent_get_output(fk.conn)) >
	    BIG_BODY / 2);

	/* Resume for good. */
	res.pause_each = 0;
	event_del(res.resume);
	res.paused = 0;
	docker_request_resume(res.req);
	run_loop(base);
	assert_int_equal(res.calls, 1);
	assert_int_equal(res.error, DOCKER_HTTP_OK);
	assert_int_equal(res.calls_while_paused, 0);
	assert_int_equal(evbuffer_get_length(res.streamed), BIG_BODY);
	assert_memory_equal(evbuffer_pullup(res.streamed, -1), answer + head,
	    BIG_BODY);
	event_free(stop);
	result_free(&res);
	fake_stop(&fk);
	free(answer);
}

/* Error bodies are buffered even in streaming mode. */
static void
test_e2e_stream_error_buffered(void **state)
{
	static const char	 answer[] =
	    "HTTP/1.1 404 Not Found\r\n"
	    "Content-Type: application/json\r\n"
	    "Content-Length: 37\r\n\r\n" DOCKER_404;
	struct event_base	*base = *state;
	struct fake		 fk;
	struct result		 res;

	fake_start(&fk, base, answer, 0);
	result_init(&res, base);
	res.req = docker_request_start(base, fk.path, "GET",
	    "/v1.41/containers/abc/archive?path=%2Fnope", NULL, NULL, 0, 1024,
	    body_cb, done_cb, &res);
	assert_non_null(res.req);
	run_loop(base);
	assert_int_equal(res.calls, 1);
	assert_int_equal(res.error, DOCKER_HTTP_OK);
	assert_int_equal(res.status, 404);
	assert_int_equal(res.body_calls, 0);
	assert_int_equal(evbuffer_get_length(res.body), 37);
	assert_memory_equal(evbuffer_pullup(res.body, -1), DOCKER_404, 37);
	result_free(&res);
	fake_stop(&fk);
}

static void
test_e2e_stream_cancel_inside(void **state)
{
	static const char	 answer[] =
	    "HTTP/1.1 200 OK\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n"
	    "5\r\nhello\r\n5\r\nworld\r\n0\r\n\r\n";
	struct event_base	*base = *state;
	struct fake		 fk;
	struct result		 res;

	fake_start(&fk, base, answer, 0);
	result_init(&res, base);
	res.cancel_at = 1;
	res.req = docker_request_start(base, fk.path, "GET", "/v1.41/x",
	    NULL, NULL, 0, 1024, body_cb, done_cb, &res);
	assert_non_null(res.req);
	run_loop(base);
	assert_int_equal(res.body_calls, 1);
	run_for(base, 20000);
	assert_int_equal(res.body_calls, 1);
	assert_int_equal(res.calls, 0);
	result_free(&res);
	fake_stop(&fk);
}

static void
test_e2e_stream_abort(void **state)
{
	static const char	 answer[] =
	    "HTTP/1.1 200 OK\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n"
	    "5\r\nhello\r\n5\r\nworld\r\n0\r\n\r\n";
	struct event_base	*base = *state;
	struct fake		 fk;
	struct result		 res;

	fake_start(&fk, base, answer, 0);
	result_init(&res, base);
	res.abort_at = 1;
	res.req = docker_request_start(base, fk.path, "GET", "/v1.41/x",
	    NULL, NULL, 0, 1024, body_cb, done_cb, &res);
	assert_non_null(res.req);
	run_loop(base);
	assert_int_equal(res.calls, 1);
	assert_int_equal(res.error, DOCKER_HTTP_CANCELLED);
	assert_int_equal(res.body_calls, 1);
	result_free(&res);
	fake_stop(&fk);
}

/* exec start: Upgrade: tcp, a 101, then raw frames until Docker closes. */
static void
test_e2e_upgrade(void **state)
{
	static const char	 answer[] =
	    "HTTP/1.1 101 UPGRADED\r\n"
	    "Content-Type: "
	    "application/vnd.docker.raw-stream\r\n"
	    "Connection: Upgrade\r\nUpgrade: tcp\r\n\r\n"
	    RAW_STREAM;
	struct event_base	*base = *state;
	struct docker_request_spec spec;
	struct fake		 fk;
	struct result		 res;

	fake_start(&fk, base, answer, sizeof(answer) - 1);
	fk.dribble = 7;
	result_init(&res, base);
	memset(&spec, 0, sizeof(spec));
	spec.method = "POST";
	spec.path = "/v1.41/exec/abc/start";
	spec.content_type = "application/json";
	spec.body = "{\"Detach\":false,\"Tty\":false}";
	spec.body_len = strlen(spec.body);
	spec.flags = DOCKER_HTTP_UPGRADE;
	spec.max_body = 1024;
	spec.on_body = body_cb;
	spec.on_done = done_cb;
	spec.arg = &res;
	res.req = docker_request_new(base, fk.path, &spec);
	assert_non_null(res.req);
	run_loop(base);
	assert_int_equal(res.calls, 1);
	assert_int_equal(res.error, DOCKER_HTTP_OK);
	assert_int_equal(res.status, 101);
	assert_int_equal(evbuffer_get_length(res.streamed),
	    sizeof(RAW_STREAM) - 1);
	assert_memory_equal(evbuffer_pullup(res.streamed, -1), RAW_STREAM,
	    sizeof(RAW_STREAM) - 1);
	assert_true(fake_request_is(&fk, "POST /v1.41/exec/abc/start "
	    "HTTP/1.1\r\nHost: docker\r\nUser-Agent: agent-sandbox\r\n"
	    "Connection: Upgrade, close\r\nUpgrade: tcp\r\n"
	    "Content-Type: application/json\r\nContent-Length: 28\r\n\r\n"
	    "{\"Detach\":false,\"Tty\":false}", 0));
	result_free(&res);
	fake_stop(&fk);
}int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_e2e_get, setup_base,
		    teardown_base),
		cmocka_unit_test_setup_teardown(test_e2e_post_dribbled,
		    setup_base, teardown_base),
		cmocka_unit_test_setup_teardown(test_e2e_head_kept_open,
		    setup_base, teardown_base),
		cmocka_unit_test_setup_teardown(test_e2e_connect_missing,
		    setup_base, teardown_base),
		cmocka_unit_test_setup_teardown(test_e2e_max_live,
		    setup_base, teardown_base),
		cmocka_unit_test_setup_teardown(test_e2e_lasting_reserve,
		    setup_base, teardown_base),
		cmocka_unit_test_setup_teardown(test_e2e_connect_refused,
		    setup_base, teardown_base),
		cmocka_unit_test_setup_teardown(test_e2e_closed_early,
		    setup_base, teardown_base),
		cmocka_unit_test_setup_teardown(test_e2e_too_large,
		    setup_base, teardown_base),
		cmocka_unit_test_setup_teardown(test_e2e_timeout, setup_base,
		    teardown_base),
		cmocka_unit_test_setup_teardown(test_e2e_deadline_upgrade,
		    setup_base, teardown_base),
		cmocka_unit_test_setup_teardown(test_e2e_deadline_hung,
		    setup_base, teardown_base),
		cmocka_unit_test_setup_teardown(test_e2e_cancel, setup_base,
		    teardown_base),
		cmocka_unit_test_setup_teardown(test_e2e_invalid, setup_base,
		    teardown_base),
		cmocka_unit_test_setup_teardown(test_e2e_stream_pause,
		    setup_base, teardown_base),
		cmocka_unit_test_setup_teardown(test_e2e_stream_backpressure,
		    setup_base, teardown_base),
		cmocka_unit_test_setup_teardown(test_e2e_stream_error_buffered,
		    setup_base, teardown_base),
		cmocka_unit_test_setup_teardown(test_e2e_stream_cancel_inside,
		    setup_base, teardown_base),
		cmocka_unit_test_setup_teardown(test_e2e_stream_abort,
		    setup_base, teardown_base),
		cmocka_unit_test_setup_teardown(test_e2e_upgrade, setup_base,
		    teardown_base),
	};

	/* Writes to a daemon that went away must be errors, not signals. */
	signal(SIGPIPE, SIG_IGN);
	/* Fresh memory is never a lucky NUL: a byte not written shows. */
	mallopt(M_PERTURB, 0x5a);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
