/*
 * Tests for apid's process routes (docs/rest-api.md "Processes") over
 * apid's real HTTP layer against a stand-in for managerd
 * (apid_standin.c): what each sends managerd, how each answers its
 * replies, output's query and its chunked stream, stdin's pipe, attach
 * tokens, and the lies that are fatal.  What the routes read and write
 * without a connection is test_apid_process_body.c's.
 */
#include <sys/queue.h>

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
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/buffer.h>
#include <event2/event.h>

#include "apid.h"
#include "apid_standin.h"
#include "assert_fatal.h"
#include "http_fixture.h"
#include "process_fixture.h"

/* Who asked for the tests' tokens. */
static char			 tok_name[] = "key-1", tok_tenant[] = "t";
static const struct caller	 tok_caller = { tok_name, tok_tenant, 0,
				    NULL, NULL };

#define JSON		"application/json"

static struct apid	 the_apid;
struct apid		*apid = &the_apid;

/* Linked with --wrap=clock_gettime: tokens age without waiting. */
static time_t		 clock_shift;
int	__real_clock_gettime(clockid_t, struct timespec *);
int	__wrap_clock_gettime(clockid_t, struct timespec *);

int
__wrap_clock_gettime(clockid_t clk, struct timespec *ts)
{
	int	 rc = __real_clock_gettime(clk, ts);

	if (rc == 0 && clk == CLOCK_MONOTONIC)
		ts->tv_sec += clock_shift;
	return rc;
}

/* --- the routes ----------------------------------------------------------- */

static const struct standin_route routes[] = {
	{ "POST", "/v1/sandboxes/*/processes", route_process_create },
	{ "GET", "/v1/sandboxes/*/processes", route_process_list },
	{ "GET", "/v1/sandboxes/*/processes/*", route_process_get },
	{ "DELETE", "/v1/sandboxes/*/processes/*", route_process_delete },
	{ "POST", "/v1/sandboxes/*/processes/*/signal", route_process_signal },
	{ "POST", "/v1/sandboxes/*/processes/*/resize", route_process_resize },
	{ "POST", "/v1/sandboxes/*/processes/*/stdin", route_process_stdin },
	{ "GET", "/v1/sandboxes/*/processes/*/output", route_process_output },
	{ "POST", "/v1/sandboxes/*/processes/*/attach-token",
	    route_process_attach_token },
};

static struct http_fixture	 fx;
static struct http_response	 resp;

static void
router(struct http_request *req)
{
	standin_route(req, routes, sizeof(routes) / sizeof(routes[0]));
}

static int
setup(void **state)
{
	signal(SIGPIPE, SIG_IGN);
	standin_reset();
	fixture_init(&fx, router, NULL);
	apid->base = fx.base;
	apid->parent.name = "managerd";
	apid->stdin_calls = apid->stdin_bytes = 0;
	apid->stdin_calls_max = STDIN_CALLS_MAX;
	apid->stdin_bytes_max = STDIN_BYTES_MAX;
	memset(&resp, 0, sizeof(resp));
	return 0;
}

static int
teardown(void **state)
{
	response_free(&resp);
	standin_reset();
	fixture_free(&fx);
	attach_tokens_clear();
	return 0;
}

static void
request(const char *method, const char *target, const char *body)
{
	char	 head[1024];

	snprintf(head, sizeof(head), "%s %s HTTP/1.1\r\nHost: t\r\n"
	    "Content-Length: %zu\r\n\r\n", method, target,
	    body != NULL ? strlen(body) : 0);
	fixture_send_str(&fx, head);
	if (body != NULL)
		fixture_send_str(&fx, body);
	fixture_run(&fx, 5);
}

/* The one call the request made, of this type. */
static struct standin_call *
sent(uint32_t type)
{
	struct standin_call	*c = standin_find(type);

	if (c == NULL)
		fail_msg("no %s sent", msg_type_name(type));
	return c;
}

static void
answer_is(int status, const char *body)
{
	assert_int_equal(fixture_response(&fx, &resp, 2000), 0);
	assert_int_equal(resp.status, status);
	if (body != NULL && strcmp(resp.body != NULL ? resp.body : "",
	    body) != 0)
		fail_msg(" got %s\nwant %s", resp.body, body);
}

static void
reply_info(struct standin_call *c, int existed)
{
	struct process_info	 pi;
	struct msgw		 w;
	char			 a0[] = "make test", *argv[] = { a0, NULL };

	info_init(&pi, argv, 1);
	pi.existed = existed;
	msgw_init(&w);
	msg_put_process_info(&w, &pi);
	assert_int_equal(standin_reply(c, MSG_PROCESS_INFO, &w, -1),
	    APID_REPLY_DONE);
}

static void
test_route_create(void **state)
{
	struct process_request	 p;
	struct standin_call	*c;
	struct imsg		 m;

	request("POST", "/v1/sandboxes/" SB "/processes",
	    "{\"command\": \"make test\", \"client_id\": \"build-1\"}");
	c = sent(MSG_PROCESS_START);
	m = standin_imsg(c);
	assert_int_equal(msg_get_process_request(&m, &p), 0);
	assert_string_equal(p.sandbox_id, SB);
	assert_string_equal(p.client_id, "build-1");
	process_request_free(&p);
	reply_info(c, 0);
	answer_is(201, RUNNING_JSON("\"make test\""));
	/* The same client_id again: managerd says it existed. */
	request("POST", "/v1/sandboxes/" SB "/processes",
	    "{\"command\": \"make test\", \"client_id\": \"build-1\"}");
	reply_info(sent(MSG_PROCESS_START), 1);
	answer_is(200, RUNNING_JSON("\"make test\""));
	request("POST", "/v1/sandboxes/" SB "/processes",
	    "{\"command\": \"make\", \"client_id\": \"build-1\"}");
	standin_reply_error(sent(MSG_PROCESS_START), ERR_CONFLICT, "used");
	answer_is(409, "{\"error\":{\"code\":\"conflict\",\"message\":"
	    "\"used\"}}");
	/* 422s and ids that cannot travel never reach managerd. */
	request("POST", "/v1/sandboxes/" SB "/processes", "{}");
	answer_is(422, NULL);
	assert_int_equal(standin_count(), 3);
}

/* Ids too long for a message are a 404 here; any other string goes. */
static void
test_route_ids(void **state)
{
	char	 target[512], id[200];

	memset(id, 'p', 129);
	id[129] = '\0';
	snprintf(target, sizeof(target), "/v1/sandboxes/" SB "/processes/%s",
	    id);
	request("GET", target, NULL);
	answer_is(404, NULL);
	assert_non_null(strstr(resp.body, "not found"));
	snprintf(target, sizeof(target), "/v1/sandboxes/%s/processes", id);
	request("GET", target, NULL);
	answer_is(404, NULL);
	assert_int_equal(standin_count(), 0);
	request("GET", "/v1/sandboxes/" SB "/processes/anything", NULL);
	standin_reply_error(sent(MSG_PROCESS_GET), ERR_NOT_FOUND,
	    "process anything not found");
	answer_is(404, NULL);
}

static void
test_route_list(void **state)
{
	struct standin_call	*c;
	struct process_info	 pi;
	struct msgw		 w;
	struct imsg		 m;
	char			 a0[] = "make test", *argv[] = { a0, NULL };
	char			*sb;

	request("GET", "/v1/sandboxes/" SB "/processes", NULL);
	c = sent(MSG_PROCESS_LIST);
	m = standin_imsg(c);
	assert_non_null(sb = msg_get_string(&m, MSG_MAX_ID));
	assert_string_equal(sb, SB);
	free(sb);
	info_init(&pi, argv, 1);
	msgw_init(&w);
	msg_put_process_info(&w, &pi);
	assert_int_equal(standin_reply(c, MSG_PROCESS_INFO, &w, -1),
	    APID_REPLY_MORE);
	assert_int_equal(standin_reply(c, MSG_PROCESS_LIST_END, NULL, -1),
	    APID_REPLY_DONE);
	answer_is(200, "{\"processes\":[" RUNNING_JSON("\"make test\"") "]}");
}

static void
test_route_delete_signal_resize(void **state)
{
	struct process_signal	 s;
	struct process_resize	 r;
	struct process_ref	 ref;
	struct imsg		 m;

	request("DELETE", "/v1/sandboxes/" SB "/processes/" PROC, NULL);
	m = standin_imsg(sent(MSG_PROCESS_DELETE));
	assert_int_equal(msg_get_process_ref(&m, &ref), 0);
	assert_string_equal(ref.process_id, PROC);
	process_ref_free(&ref);
	standin_reply(sent(MSG_PROCESS_DELETE), MSG_OK, NULL, -1);
	answer_is(204, NULL);

	request("POST", "/v1/sandboxes/" SB "/processes/" PROC "/signal",
	    "{\"signal\": \"KILL\"}");
	m = standin_imsg(sent(MSG_PROCESS_SIGNAL));
	assert_int_equal(msg_get_process_signal(&m, &s), 0);
	assert_int_equal(s.signo, SIGKILL);
	process_ref_free(&s.ref);
	standin_reply_error(sent(MSG_PROCESS_SIGNAL), ERR_CONFLICT,
	    "not running");
	answer_is(409, NULL);
	request("POST", "/v1/sandboxes/" SB "/processes/" PROC "/signal",
	    NULL);
	m = standin_imsg(sent(MSG_PROCESS_SIGNAL));
	assert_int_equal(msg_get_process_signal(&m, &s), 0);
	assert_int_equal(s.signo, SIGTERM);
	process_ref_free(&s.ref);
	standin_reply(sent(MSG_PROCESS_SIGNAL), MSG_OK, NULL, -1);
	answer_is(204, NULL);

	request("POST", "/v1/sandboxes/" SB "/processes/" PROC "/resize",
	    "{\"cols\": 132, \"rows\": 43}");
	m = standin_imsg(sent(MSG_PROCESS_RESIZE));
	assert_int_equal(msg_get_process_resize(&m, &r), 0);
	assert_int_equal(r.cols, 132);
	assert_int_equal(r.rows, 43);
	process_ref_free(&r.ref);
	standin_reply(sent(MSG_PROCESS_RESIZE), MSG_OK, NULL, -1);
	answer_is(204, NULL);
}

#define OUTPUT	"/v1/sandboxes/" SB "/processes/" PROC "/output"

static void
refused_at(const char *method, const char *path, const char *query,
    int status, const char *needle)
{
	char	 target[256];

	snprintf(target, sizeof(target), "%s?%s", path, query);
	request(method, target, NULL);
	answer_is(status, NULL);
	if (strstr(resp.body, needle) == NULL)
		fail_msg("query %s: %s", query, resp.body);
}

static void
query_refused(const char *query, int status, const char *needle)
{
	refused_at("GET", OUTPUT, query, status, needle);
}

static void
test_output_query(void **state)
{
	struct process_output	 o;
	struct imsg		 m;

	query_refused("after=-1", 400, "after must be a non-negative integer");
	query_refused("after=1.5", 400, "non-negative");
	query_refused("after=abc", 400, "non-negative");
	query_refused("after=", 400, "non-negative");
	query_refused("after=18446744073709551616", 400, "non-negative");
	query_refused("after=1%002", 400, "non-negative");
	query_refused("encoding=base64%00", 422, "literal_error");
	query_refused("follow=maybe", 422, "\"type\":\"bool_parsing\","
	    "\"loc\":[\"query\",\"follow\"]");
	query_refused("encoding=hex&follow=2", 422, "{\"detail\":[{\"type\":"
	    "\"bool_parsing\",\"loc\":[\"query\",\"follow\"],\"msg\":\"Input "
	    "should be a valid boolean, unable to interpret input\",\"input\":"
	    "\"2\"},{\"type\":\"literal_error\",\"loc\":[\"query\","
	    "\"encoding\"],\"msg\":\"Input should be 'utf8' or 'base64'\","
	    "\"input\":\"hex\",\"ctx\":{\"expected\":\"'utf8' or "
	    "'base64'\"}}]}");
	assert_int_equal(standin_count(), 0);
	request("GET", OUTPUT "?after=18446744073709551615&follow=TRUE&"
	    "encoding=base64", NULL);
	m = standin_imsg(sent(MSG_PROCESS_OUTPUT));
	assert_int_equal(msg_get_process_output(&m, &o), 0);
	assert_true(o.after == UINT64_MAX);
	assert_true(o.follow);
	process_ref_free(&o.ref);
	assert_int_not_equal(sent(MSG_PROCESS_OUTPUT)->fd, -1);
	standin_reply_error(sent(MSG_PROCESS_OUTPUT), ERR_INVALID_REQUEST,
	    "after is beyond the output");
	answer_is(400, NULL);
}

/* STARTED, then the 200 and a line per event, to the pipe's end. */
static void
test_output_stream(void **state)
{
	struct stream		 s = { { 0 }, 0 };
	struct standin_call	*c;
	int			 fd;

	request("GET", OUTPUT, NULL);
	c = sent(MSG_PROCESS_OUTPUT);
	fd = standin_take_fd(c);
	assert_int_equal(standin_reply(c, MSG_PROCESS_OUTPUT_STARTED, NULL,
	    -1), APID_REPLY_MORE);
	put_data(&s, PEV_STDOUT, 6, "hello\n", 6);
	put_exit(&s, 6, PROCESS_EXITED, 1, 3, 0);
	assert_int_equal(write(fd, s.b, 10), 10);
	fixture_run(&fx, 10);
	assert_int_equal(write(fd, s.b + 10, s.len - 10), (ssize_t)(s.len -
	    10));
	close(fd);
	answer_is(200, "{\"seq\": 6, \"type\": \"stdout\", \"data\": "
	    "\"hello\\n\"}\n{\"type\": \"exit\", \"status\": \"exited\", "
	    "\"exit_code\": 3, \"ended_at\": null, \"seq\": 6}\n");
	assert_true(resp.chunked);
	assert_string_equal(response_field(&resp, "content-type"),
	    "application/x-ndjson");
	assert_false(standin_find(MSG_PROCESS_OUTPUT) != NULL);
}

/* A cut or malformed stream aborts the reply: no last chunk. */
static void
output_aborted(const char *query, const struct stream *s)
{
	struct standin_call	*c;
	char			 target[256];
	int			 fd;

	snprintf(target, sizeof(target), OUTPUT "%s", query);
	request("GET", target, NULL);
	c = sent(MSG_PROCESS_OUTPUT);
	fd = standin_take_fd(c);
	standin_reply(c, MSG_PROCESS_OUTPUT_STARTED, NULL, -1);
	assert_int_equal(write(fd, s->b, s->len), (ssize_t)s->len);
	close(fd);
	assert_true(fixture_closed(&fx, 2000));
	assert_int_not_equal(fixture_response(&fx, &resp, 100), 0);
}

static void
test_output_cut(void **state)
{
	struct stream	 s = { { 0 }, 0 };

	/* Without follow, no exit line is a whole answer. */
	put_data(&s, PEV_STDOUT, 2, "ok", 2);
	request("GET", OUTPUT "?follow=false", NULL);
	standin_reply(sent(MSG_PROCESS_OUTPUT), MSG_PROCESS_OUTPUT_STARTED,
	    NULL, -1);
	assert_int_equal(write(sent(MSG_PROCESS_OUTPUT)->fd, s.b, s.len),
	    (ssize_t)s.len);
	close(standin_take_fd(sent(MSG_PROCESS_OUTPUT)));
	answer_is(200, "{\"seq\": 2, \"type\": \"stdout\", \"data\": "
	    "\"ok\"}\n");
	/* With follow it is cut. */
	output_aborted("?follow=1", &s);
}

static void
test_output_malformed(void **state)
{
	struct stream	 s = { { 0 }, 0 };

	put_data(&s, PEV_STDOUT, 2, "ok", 2);
	s.b[0] = 7;
	output_aborted("", &s);
}

static void
test_output_cut_mid_event(void **state)
{
	struct stream	 s = { { 0 }, 0 };

	put_data(&s, PEV_STDOUT, 2, "ok", 2);
	s.len--;
	output_aborted("", &s);
}

/* The client leaves: the pipe is closed, which managerd sees. */
static void
test_output_gone(void **state)
{
	struct standin_call	*c;
	int			 fd;

	request("GET", OUTPUT "?follow=true", NULL);
	c = sent(MSG_PROCESS_OUTPUT);
	fd = standin_take_fd(c);
	standin_reply(c, MSG_PROCESS_OUTPUT_STARTED, NULL, -1);
	fixture_run(&fx, 10);
	assert_non_null(fx.in);
	assert_memory_equal(fx.in, "HTTP/1.1 200 OK\r\n", 17);
	close(fx.client);
	fx.client = -1;
	fixture_run(&fx, 20);
	assert_int_equal(write(fd, "x", 1), -1);
	assert_int_equal(errno, EPIPE);
	close(fd);
	assert_null(standin_find(MSG_PROCESS_OUTPUT));
}

#define STDIN	"/v1/sandboxes/" SB "/processes/" PROC "/stdin"

static void
test_stdin(void **state)
{
	struct process_stdin	 s;
	struct standin_call	*c;
	struct imsg		 m;
	char			 buf[64];
	ssize_t			 n;
	int			 fd;

	request("POST", STDIN "?close=true", "print(6*7)\n");
	c = sent(MSG_PROCESS_STDIN);
	m = standin_imsg(c);
	assert_int_equal(msg_get_process_stdin(&m, &s), 0);
	assert_true(s.close_at_end);
	process_ref_free(&s.ref);
	fd = standin_take_fd(c);
	fixture_run(&fx, 10);
	n = read(fd, buf, sizeof(buf));
	assert_int_equal(n, 11);
	assert_memory_equal(buf, "print(6*7)\n", 11);
	assert_int_equal(read(fd, buf, sizeof(buf)), 0);	/* the end */
	close(fd);
	standin_reply(c, MSG_OK, NULL, -1);
	answer_is(204, NULL);
	/* No body, close absent: nothing to write, the end of the pipe. */
	request("POST", STDIN, NULL);
	c = sent(MSG_PROCESS_STDIN);
	m = standin_imsg(c);
	assert_int_equal(msg_get_process_stdin(&m, &s), 0);
	assert_false(s.close_at_end);
	process_ref_free(&s.ref);
	fixture_run(&fx, 10);
	assert_int_equal(read(c->fd, buf, sizeof(buf)), 0);
	standin_reply_error(c, ERR_CONFLICT, "the process has no stdin");
	answer_is(409, NULL);
	refused_at("POST", STDIN, "close=sometimes", 422, "bool_parsing");
}

/* A body larger than a pipe holds goes through as managerd reads it. */
static void
test_stdin_large(void **state)
{
	struct standin_call	*c;
	char			*body, buf[65536];
	size_t			 got = 0, len = 300 * 1024;
	ssize_t			 n;
	int			 fd;

	assert_non_null(body = malloc(len + 1));
	memset(body, 'z', len);
	body[len] = '\0';
	request("POST", STDIN, body);
	c = sent(MSG_PROCESS_STDIN);
	fd = standin_take_fd(c);
	for (;;) {
		fixture_run(&fx, 1);
		n = read(fd, buf, sizeof(buf));
		if (n == 0)
			break;
		if (n > 0)
			got += (size_t)n;
	}
	assert_int_equal(got, len);
	close(fd);
	standin_reply(c, MSG_OK, NULL, -1);
	answer_is(204, NULL);
	free(body);
}

/* Reads fd (non-blocking) to its end, the loop run: how many bytes. */
static size_t
drain_fd(int fd)
{
	char	 buf[65536];
	size_t	 got = 0;
	ssize_t	 n;
	int	 i;

	assert_int_equal(fcntl(fd, F_SETFL, O_NONBLOCK), 0);
	for (i = 0; i < 5000; i++) {
		fixture_run(&fx, 1);
		if ((n = read(fd, buf, sizeof(buf))) == 0)
			return got;
		if (n > 0)
			got += (size_t)n;
	}
	fail_msg("the pipe did not end");
	return got;
}

static char *
body_of(size_t len)
{
	char	*b;

	assert_non_null(b = malloc(len + 1));
	memset(b, 'b', len);
	b[len] = '\0';
	return b;
}

/* Another client, now fx's: the one before is returned. */
static int
next_client(void)
{
	int	 before = fx.client;

	fx.client = fixture_connect(&fx);
	fx.inlen = 0;
	fx.eof = 0;
	return before;
}

/* managerd may never answer: the calls waiting for it are bounded. */
static void
test_stdin_calls_bounded(void **state)
{
	struct standin_call	*a, *b;
	int			 c1, c2;

	apid->stdin_calls_max = 2;
	request("POST", STDIN, "one");
	a = sent(MSG_PROCESS_STDIN);
	c1 = next_client();
	request("POST", STDIN, "two");
	b = sent(MSG_PROCESS_STDIN);
	assert_ptr_not_equal(a, b);
	c2 = next_client();
	request("POST", STDIN, "three");
	answer_is(503, NULL);
	assert_non_null(strstr(resp.body, "\"unavailable\""));
	assert_string_equal(response_field(&resp, "retry-after"), "1");
	assert_int_equal(standin_count(), 2);
	/* One answered: room for the next. */
	assert_int_equal(drain_fd(standin_take_fd(a)), 3);
	standin_reply(a, MSG_OK, NULL, -1);
	request("POST", STDIN, "four");
	a = sent(MSG_PROCESS_STDIN);
	assert_int_equal(standin_count(), 3);
	assert_int_equal(drain_fd(standin_take_fd(a)), 4);
	standin_reply(a, MSG_OK, NULL, -1);
	answer_is(204, NULL);
	assert_int_equal(drain_fd(standin_take_fd(b)), 3);
	standin_reply(b, MSG_OK, NULL, -1);
	assert_int_equal(apid->stdin_calls, 0);
	close(c1);
	close(c2);
}

/* And so are the bytes they hold that are not yet in their pipes. */
static void
test_stdin_bytes_bounded(void **state)
{
	struct standin_call	*a, *b;
	char			*big, *more;
	int			 c1, fd;

	big = body_of(80 * 1024);
	more = body_of(30000);

	apid->stdin_bytes_max = 100 * 1024;
	request("POST", STDIN, big);
	a = sent(MSG_PROCESS_STDIN);
	fd = standin_take_fd(a);
	assert_int_equal(apid->stdin_bytes, 80 * 1024);
	c1 = next_client();
	request("POST", STDIN, more);
	answer_is(503, NULL);
	assert_int_equal(standin_count(), 1);
	/* Written: the bytes no longer count, the call still does. */
	assert_int_equal(drain_fd(fd), 80 * 1024);
	close(fd);
	assert_int_equal(apid->stdin_bytes, 0);
	assert_int_equal(apid->stdin_calls, 1);
	request("POST", STDIN, more);
	b = sent(MSG_PROCESS_STDIN);
	assert_int_equal(drain_fd(standin_take_fd(b)), 30000);
	standin_reply(b, MSG_OK, NULL, -1);
	answer_is(204, NULL);
	standin_reply(a, MSG_OK, NULL, -1);
	assert_int_equal(apid->stdin_calls, 0);
	close(c1);
	free(big);
	free(more);
}

/*
 * The client left while its body was still being written: the pipe's
 * descriptor counts against the connection cap until it is closed.
 */
static void
test_stdin_detached(void **state)
{
	struct standin_call	*a;
	char			*big = body_of(80 * 1024);
	int			 fd;

	request("POST", STDIN, big);
	a = sent(MSG_PROCESS_STDIN);
	fd = standin_take_fd(a);
	close(fx.client);
	fx.client = -1;
	fixture_run(&fx, 20);
	assert_int_equal(fx.srv.nconns, 0);
	assert_int_equal(fx.srv.taken, 1);
	assert_int_equal(drain_fd(fd), 80 * 1024);
	close(fd);
	assert_int_equal(fx.srv.taken, 0);
	assert_int_equal(standin_reply(a, MSG_OK, NULL, -1), APID_REPLY_DONE);
	assert_int_equal(apid->stdin_calls, 0);
	free(big);
}

/* --- lies ----------------------------------------------------------------- */

static void
lie_setup(const char *method, const char *target, const char *body)
{
	setup(NULL);
	request(method, target, body);
}

static void
lie_ok_before_eof(void)
{
	static char	 body[256 * 1024];

	/* More than the pipe holds: its end cannot have been read. */
	memset(body, 'x', sizeof(body) - 1);
	lie_setup("POST", STDIN, body);
	standin_reply(sent(MSG_PROCESS_STDIN), MSG_OK, NULL, -1);
}

static void
lie_ok_after_broken(void)
{
	static char		 body[256 * 1024];
	struct standin_call	*c;

	memset(body, 'x', sizeof(body) - 1);
	lie_setup("POST", STDIN, body);
	c = sent(MSG_PROCESS_STDIN);
	/* managerd's end closed before the body was in: no EOF read. */
	close(standin_take_fd(c));
	fixture_run(&fx, 20);
	standin_reply(c, MSG_OK, NULL, -1);
}

static void
lie_malformed_info(void)
{
	struct msgw	 w;

	lie_setup("GET", "/v1/sandboxes/" SB "/processes/" PROC, NULL);
	msgw_init(&w);
	msgw_str(&w, "proc_x");
	standin_reply(sent(MSG_PROCESS_GET), MSG_PROCESS_INFO, &w, -1);
}

static void
lie_second_started(void)
{
	struct standin_call	*c;

	lie_setup("GET", OUTPUT, NULL);
	c = sent(MSG_PROCESS_OUTPUT);
	standin_reply(c, MSG_PROCESS_OUTPUT_STARTED, NULL, -1);
	standin_reply(c, MSG_PROCESS_OUTPUT_STARTED, NULL, -1);
}

static void
lie_error_after_started(void)
{
	struct standin_call	*c;

	lie_setup("GET", OUTPUT, NULL);
	c = sent(MSG_PROCESS_OUTPUT);
	standin_reply(c, MSG_PROCESS_OUTPUT_STARTED, NULL, -1);
	standin_reply_error(c, ERR_BACKEND, "late");
}

static void
lie_started_with_payload(void)
{
	struct msgw	 w;

	lie_setup("GET", OUTPUT, NULL);
	msgw_init(&w);
	msgw_u8(&w, 1);
	standin_reply(sent(MSG_PROCESS_OUTPUT), MSG_PROCESS_OUTPUT_STARTED, &w,
	    -1);
}

static void
lie_delete_info(void)
{
	lie_setup("DELETE", "/v1/sandboxes/" SB "/processes/" PROC, NULL);
	standin_reply(sent(MSG_PROCESS_DELETE), MSG_PROCESS_LIST_END, NULL,
	    -1);
}

/* The token would be minted for another process than the route's. */
static void
lie_token_for_another(int which)
{
	struct process_info	 pi;
	struct msgw		 w;
	char			 a0[] = "sh", *argv[] = { a0, NULL };
	char			 other[] = "proc_fedcba9876543210";
	char			 sb[] = "sb_fedcba9876543210";

	lie_setup("POST", "/v1/sandboxes/" SB "/processes/" PROC
	    "/attach-token", NULL);
	info_init(&pi, argv, 1);
	if (which == 0)
		pi.id = other;
	else
		pi.sandbox_id = sb;
	msgw_init(&w);
	msg_put_process_info(&w, &pi);
	standin_reply(sent(MSG_PROCESS_GET), MSG_PROCESS_INFO, &w, -1);
}

static void
lie_token_process(void)
{
	lie_token_for_another(0);
}

static void
lie_token_sandbox(void)
{
	lie_token_for_another(1);
}

static void
test_lies(void **state)
{
	assert_fatal(lie_ok_before_eof, "bad OK message from managerd: before "
	    "the end");
	assert_fatal(lie_ok_after_broken, "bad OK message from managerd: "
	    "after its pipe broke");
	assert_fatal(lie_token_process, "bad PROCESS_INFO message from "
	    "managerd: another process");
	assert_fatal(lie_token_sandbox, "bad PROCESS_INFO message from "
	    "managerd: another process");
	assert_fatal(lie_malformed_info, "bad PROCESS_INFO message from "
	    "managerd: malformed process");
	assert_fatal(lie_second_started, "bad PROCESS_OUTPUT_STARTED message "
	    "from managerd: unexpected");
	assert_fatal(lie_error_after_started, "bad ERROR message from "
	    "managerd: unexpected");
	assert_fatal(lie_started_with_payload, "bad PROCESS_OUTPUT_STARTED "
	    "message from managerd: unexpected");
	assert_fatal(lie_delete_info, "bad PROCESS_LIST_END message from "
	    "managerd: wrong reply");
}

/* --- attach tokens -------------------------------------------------------- */

#define TOKEN	"/v1/sandboxes/" SB "/processes/" PROC "/attach-token"

static void
test_attach_token_route(void **state)
{
	json_object	*o, *v;
	const char	*tok;
	size_t		 i;

	request("POST", TOKEN, NULL);
	reply_info(sent(MSG_PROCESS_GET), 0);
	answer_is(201, NULL);
	assert_non_null(o = json_tokener_parse(resp.body));
	assert_true(json_object_object_get_ex(o, "token", &v));
	tok = json_object_get_string(v);
	assert_int_equal(strlen(tok), ATTACH_TOKEN_LEN);
	for (i = 0; tok[i] != '\0'; i++)
		assert_non_null(strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklm"
		    "nopqrstuvwxyz0123456789-_", tok[i]));
	assert_true(json_object_object_get_ex(o, "expires_at", &v));
	assert_int_equal(json_object_get_string(v)[strlen(
	    json_object_get_string(v)) - 1], 'Z');
	/* Good once, for this process only. */
	assert_false(attach_token_take(SB,
	    "proc_other", tok, strlen(tok), NULL));
	assert_false(attach_token_take(SB, PROC, tok, strlen(tok) - 1, NULL));
	assert_true(attach_token_take(SB, PROC, tok, strlen(tok), NULL));
	assert_false(attach_token_take(SB, PROC, tok, strlen(tok), NULL));
	json_object_put(o);
	request("POST", TOKEN, NULL);
	standin_reply_error(sent(MSG_PROCESS_GET), ERR_NOT_FOUND, "no");
	answer_is(404, NULL);
}

/* The table is bounded: past it, a 429 until tokens expire or go. */
static void
test_attach_token_table(void **state)
{
	char	 tok[ATTACH_TOKEN_LEN + 1], first[ATTACH_TOKEN_LEN + 1];

	assert_int_equal(attach_token_make(&tok_caller, SB, PROC, first), 0);
	standin_fill_tokens(SB, PROC, ATTACH_TOKENS_MAX - 1);
	assert_int_equal(attach_token_make(&tok_caller, SB, PROC, tok), -1);
	assert_int_equal(errno, ENOSPC);
	request("POST", TOKEN, NULL);
	reply_info(sent(MSG_PROCESS_GET), 0);
	answer_is(429, NULL);
	assert_true(attach_token_take(SB, PROC, first, strlen(first), NULL));
	assert_int_equal(attach_token_make(&tok_caller, SB, PROC, tok), 0);
	assert_string_not_equal(tok, first);
}

/*
 * One tenant holds at most ATTACH_TOKENS_TENANT live tokens: the others
 * still get theirs; and a reload that removes or changes a key takes its
 * tokens (attach_tokens_keep, as apid calls it with the new table).
 */
static int
keep_all_but_tok_tenant(const struct caller *c)
{
	return strcmp(c->tenant, tok_tenant) != 0;
}

static void
test_attach_tokens_per_tenant(void **state)
{
	static char	 o_name[] = "other", o_tenant[] = "o";
	struct caller	 other = { o_name, o_tenant, 0, NULL, NULL };
	char		 tok[ATTACH_TOKEN_LEN + 1], kept[ATTACH_TOKEN_LEN + 1];
	char		 first[ATTACH_TOKEN_LEN + 1];
	size_t		 i;

	(void)state;
	attach_tokens_clear();
	assert_int_equal(attach_token_make(&tok_caller, SB, PROC, first), 0);
	for (i = 1; i < ATTACH_TOKENS_TENANT; i++)
		assert_int_equal(attach_token_make(&tok_caller, SB, PROC,
		    tok), 0);
	assert_int_equal(attach_token_make(&tok_caller, SB, PROC, tok), -1);
	assert_int_equal(errno, ENOSPC);
	assert_int_equal(attach_token_make(&other, SB, PROC, kept), 0);
	attach_tokens_keep(keep_all_but_tok_tenant);
	assert_false(attach_token_take(SB, PROC, first, strlen(first), NULL));
	assert_true(attach_token_take(SB, PROC, kept, strlen(kept), NULL));
	assert_int_equal(attach_token_make(&tok_caller, SB, PROC, tok), 0);
}

/* 30 seconds, then a token is gone, and its place in the table. */
static void
test_attach_token_expiry(void **state)
{
	char	 tok[ATTACH_TOKEN_LEN + 1], old[ATTACH_TOKEN_LEN + 1];

	/*
	 * The shifts leave half a lifetime of slack for the real clock: the
	 * filling is slow under valgrind, and old must outlive it, the
	 * filling tokens the next step.
	 */
	assert_int_equal(attach_token_make(&tok_caller, SB, PROC, old), 0);
	clock_shift = ATTACH_TOKEN_TTL / 2;
	assert_int_equal(attach_token_make(&tok_caller, SB, PROC, tok), 0);
	assert_true(attach_token_take(SB, PROC, tok, strlen(tok), NULL));
	standin_fill_tokens(SB, PROC, ATTACH_TOKENS_MAX - 1);
	assert_int_equal(attach_token_make(&tok_caller, SB, PROC, tok), -1);
	clock_shift = ATTACH_TOKEN_TTL + 1;
	assert_false(attach_token_take(SB, PROC, old, strlen(old), NULL));
	assert_int_equal(attach_token_make(&tok_caller, SB, PROC, tok), 0);
	clock_shift = 2 * ATTACH_TOKEN_TTL + 2;
	assert_false(attach_token_take(SB, PROC, tok, strlen(tok), NULL));
	clock_shift = 0;
	attach_tokens_clear();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_route_create, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_route_ids, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_route_list, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_route_delete_signal_resize,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_output_query, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_output_stream, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_output_cut, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_output_malformed, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_output_cut_mid_event,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_output_gone, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_stdin, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stdin_large, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_stdin_calls_bounded,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_stdin_bytes_bounded,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_stdin_detached, setup,
		    teardown),
		cmocka_unit_test(test_lies),
		cmocka_unit_test_setup_teardown(test_attach_token_route, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_attach_token_table, setup,
		    teardown),
		cmocka_unit_test(test_attach_token_expiry),
		cmocka_unit_test_setup_teardown(test_attach_tokens_per_tenant,
		    setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
