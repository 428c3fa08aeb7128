/*
 * Tests for client/rest_process.c and rest_output.c: the request each
 * process call makes and the checks on its answer, against the fake
 * server (rest_fake.c); the checks on one output event, odd ones above
 * all; and the output stream: events in order, a bad line, a huge line,
 * a seq that goes back or overlaps, the end at the exit event, a follow
 * that waits for a while or as long as it takes.
 */
#include <sys/types.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "rest.h"
#include "rest_fake.h"

#define SB	"sb_0123456789abcdef"
#define PROC	"proc_0123456789abcdef"
#define OK_HEAD	"HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\n"

/* --- one event ------------------------------------------------------------ */

/* rest_event_parse on text: its result, the event in *ev. */
static int
parse(const char *text, int base64, struct rest_event *ev,
    json_object **keep, unsigned char **buf, size_t *cap)
{
	char	 why[160];
	int	 r;

	*keep = json_tokener_parse(text);
	why[0] = '\0';
	r = rest_event_parse(*keep, base64, ev, buf, cap, why, sizeof(why));
	if (r == -1)
		assert_true(why[0] != '\0');
	return r;
}

static void
test_event_good(void **state)
{
	struct rest_event	 ev;
	json_object		*o;
	unsigned char		*buf = NULL;
	size_t			 cap = 0;

	(void)state;
	assert_int_equal(parse("{\"seq\": 6, \"type\": \"stdout\", \"data\": "
	    "\"hello\\n\"}", 0, &ev, &o, &buf, &cap), 0);
	assert_int_equal(ev.type, REST_EVENT_STDOUT);
	assert_int_equal(ev.seq, 6);
	assert_int_equal(ev.len, 6);
	assert_memory_equal(ev.data, "hello\n", 6);
	json_object_put(o);

	/* base64: the exact bytes, a NUL and 0xff among them. */
	assert_int_equal(parse("{\"seq\": 9, \"type\": \"stderr\", \"data\": "
	    "\"AP9h\"}", 1, &ev, &o, &buf, &cap), 0);
	assert_int_equal(ev.type, REST_EVENT_STDERR);
	assert_int_equal(ev.len, 3);
	assert_memory_equal(ev.data, "\0\xff" "a", 3);
	json_object_put(o);
	assert_int_equal(parse("{\"seq\": 9, \"type\": \"stdout\", \"data\": "
	    "\"\"}", 1, &ev, &o, &buf, &cap), 0);
	assert_int_equal(ev.len, 0);
	json_object_put(o);

	assert_int_equal(parse("{\"type\": \"gap\", \"dropped_bytes\": "
	    "1048576}", 1, &ev, &o, &buf, &cap), 0);
	assert_int_equal(ev.type, REST_EVENT_GAP);
	assert_int_equal(ev.dropped, 1048576);
	json_object_put(o);

	assert_int_equal(parse("{\"type\": \"exit\", \"status\": \"exited\", "
	    "\"exit_code\": 3, \"ended_at\": \"2026-12-01T21:40:02Z\", "
	    "\"seq\": 12}", 0, &ev, &o, &buf, &cap), 0);
	assert_int_equal(ev.type, REST_EVENT_EXIT);
	assert_string_equal(ev.status, "exited");
	assert_true(ev.has_exit_code);
	assert_int_equal(ev.exit_code, 3);
	assert_string_equal(ev.ended_at, "2026-12-01T21:40:02Z");
	assert_int_equal(ev.seq, 12);
	json_object_put(o);

	/* The WebSocket's exit: no seq, no time, a null exit code. */
	assert_int_equal(parse("{\"type\": \"exit\", \"status\": \"lost\", "
	    "\"exit_code\": null}", 0, &ev, &o, &buf, &cap), 0);
	assert_false(ev.has_exit_code);
	assert_string_equal(ev.ended_at, "");
	assert_int_equal(ev.seq, 0);
	json_object_put(o);

	/* A type this client does not know is skipped. */
	assert_int_equal(parse("{\"type\": \"heartbeat\"}", 0, &ev, &o, &buf,
	    &cap), 1);
	json_object_put(o);
	free(buf);
}

static void
test_event_bad(void **state)
{
	static const char *const bad[] = {
		"[1, 2]",
		"\"stdout\"",
		"{\"seq\": 1, \"data\": \"x\"}",
		"{\"type\": 7, \"seq\": 1, \"data\": \"x\"}",
		"{\"type\": \"stdout\", \"data\": \"x\"}",
		"{\"type\": \"stdout\", \"seq\": -1, \"data\": \"x\"}",
		"{\"type\": \"stdout\", \"seq\": \"1\", \"data\": \"x\"}",
		"{\"type\": \"stdout\", \"seq\": 1.5, \"data\": \"x\"}",
		"{\"type\": \"stdout\", \"seq\": null, \"data\": \"x\"}",
		"{\"type\": \"stdout\", \"seq\": 1}",
		"{\"type\": \"stderr\", \"seq\": 1, \"data\": 5}",
		"{\"type\": \"stdout\", \"seq\": 3, \"data\": \"abc\"}",
		"{\"type\": \"stdout\", \"seq\": 3, \"data\": \"ab=c\"}",
		"{\"type\": \"stdout\", \"seq\": 3, \"data\": \"!!!!\"}",
		"{\"type\": \"stdout\", \"seq\": 3, \"data\": \"YW Jj\"}",
		"{\"type\": \"stdout\", \"seq\": 3, \"data\": \"YWJj\\n\"}",
		"{\"type\": \"gap\"}",
		"{\"type\": \"gap\", \"dropped_bytes\": -5}",
		"{\"type\": \"gap\", \"dropped_bytes\": \"5\"}",
		"{\"type\": \"exit\"}",
		"{\"type\": \"exit\", \"status\": \"dead\"}",
		"{\"type\": \"exit\", \"status\": 1}",
		"{\"type\": \"exit\", \"status\": \"exitedexitedexited\"}",
		"{\"type\": \"exit\", \"status\": \"exited\", \"exit_code\": "
		    "\"0\"}",
		"{\"type\": \"exit\", \"status\": \"exited\", \"exit_code\": "
		    "1099511627776}",
		"{\"type\": \"exit\", \"status\": \"exited\", \"ended_at\": "
		    "\"\\u001b[2J\"}",
		"{\"type\": \"exit\", \"status\": \"exited\", \"ended_at\": "
		    "\"2026-12-01T21:40:02.000000000000000000000000000000Z\"}",
		"{\"type\": \"exit\", \"status\": \"exited\", \"seq\": -1}",
		NULL
	};
	struct rest_event	 ev;
	json_object		*o;
	unsigned char		*buf = NULL;
	size_t			 cap = 0, i;

	(void)state;
	for (i = 0; bad[i] != NULL; i++) {
		if (parse(bad[i], 1, &ev, &o, &buf, &cap) != -1)
			fail_msg("accepted: %s", bad[i]);
		json_object_put(o);
	}
	free(buf);
}

/* --- the output stream ---------------------------------------------------- */

struct seen {
	char	 out[4096];	/* "o:<bytes>|e:..|g:<n>|x:<status>/<code>|" */
	size_t	 len;
	int	 count;
	int	 stop_after;
};

static int
on_event(const struct rest_event *ev, void *arg)
{
	struct seen	*s = arg;
	size_t		 room = sizeof(s->out) - s->len;

	switch (ev->type) {
	case REST_EVENT_STDOUT:
	case REST_EVENT_STDERR:
		s->len += snprintf(s->out + s->len, room, "%c:%.*s|",
		    ev->type == REST_EVENT_STDOUT ? 'o' : 'e', (int)ev->len,
		    (const char *)ev->data);
		break;
	case REST_EVENT_GAP:
		s->len += snprintf(s->out + s->len, room, "g:%llu|",
		    (unsigned long long)ev->dropped);
		break;
	case REST_EVENT_EXIT:
		s->len += snprintf(s->out + s->len, room, "x:%s/%d|",
		    ev->status, ev->has_exit_code ? ev->exit_code : -1);
		break;
	}
	return ++s->count == s->stop_after ? -1 : 0;
}

/* rest_process_output against an answer of these lines. */
static int
output(const char *const *lines, const struct rest_output_opts *o,
    struct seen *s, struct rest_error *err)
{
	struct rest_client	 rc;
	int			 r;

	memset(s, 0, sizeof(*s));
	fake_start(ANSWER, with_chunks(OK_HEAD, lines), 0);
	client(&rc, "", KEY);
	r = rest_process_output(&rc, SB, PROC, o, on_event, s, err);
	fake_stop();
	rest_client_free(&rc);
	return r;
}

static void
test_output_stream(void **state)
{
	static const char *const lines[] = {
		"{\"seq\": 3, \"type\": \"stdout\", \"data\": \"YWJj\"}\n",
		"{\"type\": \"gap\", \"dropped_bytes\": 10}\n{\"seq\": 14, ",
		"\"type\": \"stderr\", \"data\": \"ZA==\"}\n\n",
		"{\"type\": \"exit\", \"status\": \"exited\", \"exit_code\": "
		"0, \"seq\": 14}\n",
		/* Nothing after the exit is read. */
		"{\"seq\": 15, \"type\": \"stdout\", \"data\": \"eA==\"}\n",
		NULL
	};
	struct rest_output_opts	 o = { 0, 0, 0, 1 };
	struct rest_error	 err;
	struct seen		 s;

	(void)state;
	assert_int_equal(output(lines, &o, &s, &err), 0);
	assert_string_equal(s.out, "o:abc|g:10|e:d|x:exited/0|");
	assert_true(starts_with("GET /v1/sandboxes/" SB "/processes/" PROC
	    "/output?after=0&follow=false&encoding=base64 HTTP/1.1\r\n"));
	assert_true(has_header("Authorization: Bearer " KEY));
	fake_free();

	/* The callback can stop it. */
	memset(&s, 0, sizeof(s));
	o.after = 0;
	fake_start(ANSWER, with_chunks(OK_HEAD, lines), 0);
	{
		struct rest_client	 rc;

		client(&rc, "", KEY);
		s.stop_after = 2;
		assert_int_equal(rest_process_output(&rc, SB, PROC, &o,
		    on_event, &s, &err), 0);
		rest_client_free(&rc);
	}
	fake_stop();
	assert_string_equal(s.out, "o:abc|g:10|");
	fake_free();
}

static void
test_output_text(void **state)
{
	static const char *const lines[] = {
		"{\"seq\": 106, \"type\": \"stdout\", \"data\": "
		    "\"h\\u00e9\\n\"}\n",
		NULL
	};
	struct rest_output_opts	 o = { 102, 1, 0, 0 };
	struct rest_error	 err;
	struct seen		 s;

	(void)state;
	assert_int_equal(output(lines, &o, &s, &err), 0);
	assert_string_equal(s.out, "o:h\xc3\xa9\n|");
	assert_true(starts_with("GET /v1/sandboxes/" SB "/processes/" PROC
	    "/output?after=102&follow=true HTTP/1.1\r\n"));
	fake_free();
}

/* One stream that must fail, with this in its message. */
static void
output_fails(const char *const *lines, uint64_t after, const char *why)
{
	struct rest_output_opts	 o = { after, 0, 0, 1 };
	struct rest_error	 err;
	struct seen		 s;

	assert_int_equal(output(lines, &o, &s, &err), -1);
	assert_string_equal(err.code, "http_error");
	assert_int_equal(err.status, 200);
	if (strstr(err.message, why) == NULL)
		fail_msg("'%s' does not say '%s'", err.message, why);
	fake_free();
}

static void
test_output_bad(void **state)
{
	static const char *const not_json[] = {
		"{\"seq\": 1, \"type\": \"stdout\", \"data\": \"eA==\"}\n",
		"{\"seq\": 2, \"type\": \"stdout\", \"data\"\n", NULL };
	static const char *const no_seq[] = {
		"{\"type\": \"stdout\", \"data\": \"eA==\"}\n",
		NULL };
	static const char *const bad_b64[] = {
		"{\"seq\": 1, \"type\": \"stdout\", \"data\": \"e===\"}\n",
		NULL };
	static const char *const back[] = {
		"{\"seq\": 1, \"type\": \"stdout\", \"data\": \"eA==\"}\n",
		"{\"seq\": 1, \"type\": \"stdout\", \"data\": \"eA==\"}\n",
		NULL };
	static const char *const short_seq[] = {
		"{\"seq\": 1, \"type\": \"stdout\", \"data\": \"eHg=\"}\n",
		NULL };
	static const char *const exit_back[] = {
		"{\"seq\": 5, \"type\": \"stdout\", \"data\": \"eHh4eHg=\"}\n",
		"{\"type\": \"exit\", \"status\": \"killed\", \"seq\": 4}\n",
		NULL };
	static const char *const before_after[] = {
		"{\"seq\": 3, \"type\": \"stdout\", \"data\": \"eA==\"}\n",
		NULL };

	(void)state;
	output_fails(not_json, 0, "not JSON");
	output_fails(no_seq, 0, "seq");
	output_fails(bad_b64, 0, "base64");
	output_fails(back, 0, "goes back");
	output_fails(short_seq, 0, "goes back");
	output_fails(exit_back, 0, "goes back");
	output_fails(before_after, 10, "goes back");
}

/*
 * Data without bytes, or whose bytes start past the last one accounted
 * with no gap between: refused, whatever its seq (an empty one below the
 * after once had its "bytes before the after" cut off its length).
 */
static void
test_output_empty_hole(void **state)
{
	static const char *const empty_below[] = {
		"{\"seq\": 5, \"type\": \"stdout\", \"data\": \"\"}\n",
		NULL };
	static const char *const empty_above[] = {
		"{\"seq\": 200, \"type\": \"stderr\", \"data\": \"\"}\n",
		NULL };
	static const char *const hole[] = {
		"{\"seq\": 1, \"type\": \"stdout\", \"data\": \"eA==\"}\n",
		"{\"seq\": 3, \"type\": \"stdout\", \"data\": \"eA==\"}\n",
		NULL };
	static const char *const hole_after_gap[] = {
		"{\"type\": \"gap\", \"dropped_bytes\": 4}\n",
		"{\"seq\": 106, \"type\": \"stdout\", \"data\": \"eA==\"}\n",
		NULL };
	static const char *const text_empty[] = {
		"{\"seq\": 101, \"type\": \"stdout\", \"data\": \"\"}\n",
		NULL };
	static const char *const text_back[] = {
		"{\"seq\": 100, \"type\": \"stdout\", \"data\": \"x\"}\n",
		NULL };
	static const char *const gap_then[] = {
		"{\"type\": \"gap\", \"dropped_bytes\": 4}\n",
		"{\"seq\": 105, \"type\": \"stdout\", \"data\": \"eA==\"}\n",
		NULL };
	struct rest_output_opts	 o = { 100, 0, 0, 0 };
	struct rest_error	 err;
	struct seen		 s;

	(void)state;
	output_fails(empty_below, 100, "without bytes");
	output_fails(empty_above, 100, "without bytes");
	output_fails(hole, 0, "a hole");
	output_fails(hole_after_gap, 100, "a hole");

	/* Text counts no bytes: only an empty one or one that goes back. */
	assert_int_equal(output(text_empty, &o, &s, &err), -1);
	assert_non_null(strstr(err.message, "without bytes"));
	fake_free();
	assert_int_equal(output(text_back, &o, &s, &err), -1);
	assert_non_null(strstr(err.message, "goes back"));
	fake_free();

	/* A gap accounts for the bytes it dropped. */
	o.base64 = 1;
	assert_int_equal(output(gap_then, &o, &s, &err), 0);
	assert_string_equal(s.out, "g:4|o:x|");
	fake_free();
}

/* An after in the middle of an event: the bytes before it are cut off. */
static void
test_output_overlap(void **state)
{
	static const char *const lines[] = {
		"{\"seq\": 6, \"type\": \"stdout\", \"data\": \"YWJjZGVm\"}\n",
		"{\"seq\": 8, \"type\": \"stderr\", \"data\": \"Z2g=\"}\n",
		NULL
	};
	struct rest_output_opts	 o = { 4, 0, 0, 1 };
	struct rest_error	 err;
	struct seen		 s;

	(void)state;
	assert_int_equal(output(lines, &o, &s, &err), 0);
	assert_string_equal(s.out, "o:ef|e:gh|");
	fake_free();
}

static void
test_output_huge_line(void **state)
{
	struct rest_output_opts	 o = { 0, 0, 0, 1 };
	struct rest_client	 rc;
	struct rest_error	 err;
	struct seen		 s;

	(void)state;
	memset(&s, 0, sizeof(s));
	/* 17 MiB without a newline. */
	fake_big(17 * 1024 * 1024, 'x');
	client(&rc, "", KEY);
	assert_int_equal(rest_process_output(&rc, SB, PROC, &o, on_event, &s,
	    &err), -1);
	fake_stop();
	assert_int_equal(s.count, 0);
	assert_non_null(strstr(err.message, "longer than"));
	rest_client_free(&rc);
	fake_free();
}

static void
test_output_error(void **state)
{
	struct rest_output_opts	 o = { 99, 0, 0, 1 };
	struct rest_client	 rc;
	struct rest_error	 err;
	struct seen		 s;

	(void)state;
	memset(&s, 0, sizeof(s));
	fake_start(ANSWER, with_length("HTTP/1.1 400 Bad Request\r\n",
	    "{\"error\":{\"code\":\"invalid_request\",\"message\":\"after is "
	    "beyond output_bytes\"}}"), 0);
	client(&rc, "", KEY);
	assert_int_equal(rest_process_output(&rc, SB, PROC, &o, on_event, &s,
	    &err), -1);
	fake_stop();
	assert_int_equal(err.status, 400);
	assert_string_equal(err.code, "invalid_request");
	assert_int_equal(s.count, 0);
	rest_client_free(&rc);
	fake_free();
}

/* The rest of a chunked body: one chunk of text and the last chunk. */
static void
tail_chunk(char *buf, size_t len, const char *text)
{
	snprintf(buf, len, "%zx\r\n%s\r\n0\r\n\r\n", strlen(text), text);
}

static long long
ms_since(const struct timespec *t0)
{
	struct timespec	 now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t0->tv_sec) * 1000LL +
	    (now.tv_nsec - t0->tv_nsec) / 1000000;
}

/* A follow with a wait returns when it runs out, with what came. */
static void
test_output_wait(void **state)
{
	static char		 first[512], second[128];
	static const char	*one[] = {
		"{\"seq\": 1, \"type\": \"stdout\", \"data\": \"eA==\"}\n",
		NULL };
	struct rest_output_opts	 o = { 0, 1, 400, 1 };
	struct rest_client	 rc;
	struct rest_error	 err;
	struct timespec		 t0;
	struct seen		 s;

	(void)state;
	/* The first chunk now, the rest (never read) after 2 s. */
	tail_chunk(second, sizeof(second), "{\"type\":\"gap\"}\n");
	strlcpy(first, with_chunks(OK_HEAD, one), sizeof(first));
	first[strlen(first) - 5] = '\0';
	memset(&s, 0, sizeof(s));
	fake_paced(first, second, 2000);
	client(&rc, "", KEY);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(rest_process_output(&rc, SB, PROC, &o, on_event, &s,
	    &err), 1);
	assert_true(ms_since(&t0) < 1500);
	assert_string_equal(s.out, "o:x|");
	fake_stop();
	assert_true(starts_with("GET /v1/sandboxes/" SB "/processes/" PROC
	    "/output?after=0&follow=true&encoding=base64 HTTP/1.1\r\n"));
	rest_client_free(&rc);
	fake_free();
}

/* A follow without a wait outlasts the client's timeout. */
static void
test_output_follow(void **state)
{
	static char		 first[512], second[128];
	static const char	*one[] = {
		"{\"seq\": 1, \"type\": \"stdout\", \"data\": \"eA==\"}\n",
		NULL };
	struct rest_output_opts	 o = { 0, 1, 0, 1 };
	struct rest_client	 rc;
	struct rest_error	 err;
	struct seen		 s;

	(void)state;
	tail_chunk(second, sizeof(second), "{\"type\": \"exit\", \"status\": "
	    "\"exited\", \"exit_code\": 2}\n");
	strlcpy(first, with_chunks(OK_HEAD, one), sizeof(first));
	first[strlen(first) - 5] = '\0';
	memset(&s, 0, sizeof(s));
	fake_paced(first, second, 2200);
	client(&rc, "", KEY);
	rc.timeout = 1;
	assert_int_equal(rest_process_output(&rc, SB, PROC, &o, on_event, &s,
	    &err), 0);
	fake_stop();
	assert_string_equal(s.out, "o:x|x:exited/2|");
	rest_client_free(&rc);
	fake_free();
}

/* --- the other calls ------------------------------------------------------ */

static const char	 proc_json[] = "{\"id\":\"" PROC "\",\"status\":"
    "\"running\"}";

static void
test_start(void **state)
{
	struct rest_process_spec spec;
	struct rest_client	 rc;
	struct rest_error	 err;
	json_object		*out, *argv, *env, *sent, *want;

	(void)state;
	argv = json_tokener_parse("[\"/bin/sh\", \"-i\"]");
	env = json_tokener_parse("{\"TERM\": \"xterm\"}");
	memset(&spec, 0, sizeof(spec));
	spec.command = argv;
	spec.env = env;
	spec.workdir = "/tmp";
	spec.has_timeout = 1;
	spec.timeout = 2.5;
	spec.tty = 1;
	spec.cols = 132;
	spec.rows = 43;
	spec.stdin_open = 1;
	spec.client_id = "build-1";
	fake_start(ANSWER, with_length("HTTP/1.1 201 Created\r\n",
	    proc_json), 0);
	client(&rc, "", KEY);
	assert_int_equal(rest_process_start(&rc, SB, &spec, &out, &err), 0);
	fake_stop();
	assert_string_equal(json_object_get_string(json_object_object_get(out,
	    "id")), PROC);
	json_object_put(out);
	assert_true(starts_with("POST /v1/sandboxes/" SB "/processes "
	    "HTTP/1.1\r\n"));
	assert_true(has_header("Content-Type: application/json"));
	sent = json_tokener_parse((char *)fk.req + fk.headlen);
	want = json_tokener_parse("{\"command\": [\"/bin/sh\", \"-i\"], "
	    "\"env\": {\"TERM\": \"xterm\"}, \"workdir\": \"/tmp\", "
	    "\"timeout_seconds\": 2.5, \"tty\": true, \"cols\": 132, "
	    "\"rows\": 43, \"stdin\": true, \"client_id\": \"build-1\"}");
	assert_true(json_object_equal(sent, want));
	json_object_put(sent);
	json_object_put(want);
	fake_free();

	/* The least: the command alone; and an answer that is no process. */
	memset(&spec, 0, sizeof(spec));
	spec.command = argv;
	fake_start(ANSWER, with_length("HTTP/1.1 201 Created\r\n",
	    "{\"id\":\"sb_0123456789abcdef\"}"), 0);
	rest_client_free(&rc);
	client(&rc, "", KEY);
	assert_int_equal(rest_process_start(&rc, SB, &spec, &out, &err), -1);
	fake_stop();
	assert_null(out);
	assert_int_equal(err.status, 201);
	assert_non_null(strstr(err.message, "not a process"));
	assert_string_equal((char *)fk.req + fk.headlen,
	    "{\"command\":[\"/bin/sh\",\"-i\"]}");
	fake_free();
	json_object_put(argv);
	json_object_put(env);
	rest_client_free(&rc);
}

/* rest_process_list's answer: 0 or -1. */
static int
list(const char *body, json_object **out, struct rest_error *err)
{
	struct rest_client	 rc;
	int			 r;

	fake_start(ANSWER, with_length("HTTP/1.1 200 OK\r\n", body), 0);
	client(&rc, "", KEY);
	r = rest_process_list(&rc, SB, out, err);
	fake_stop();
	rest_client_free(&rc);
	return r;
}

static void
test_list_get(void **state)
{
	struct rest_client	 rc;
	struct rest_error	 err;
	json_object		*out;
	char			 body[256];

	(void)state;
	snprintf(body, sizeof(body), "{\"processes\": [%s, %s]}", proc_json,
	    proc_json);
	assert_int_equal(list(body, &out, &err), 0);
	assert_true(starts_with("GET /v1/sandboxes/" SB "/processes "
	    "HTTP/1.1\r\n"));
	assert_int_equal(json_object_array_length(json_object_object_get(out,
	    "processes")), 2);
	json_object_put(out);
	fake_free();
	snprintf(body, sizeof(body), "{\"processes\": [%s, {\"id\": 5}]}",
	    proc_json);
	assert_int_equal(list(body, &out, &err), -1);
	assert_null(out);
	fake_free();
	assert_int_equal(list("{\"processes\": {}}", &out, &err), -1);
	fake_free();

	fake_start(ANSWER, with_length("HTTP/1.1 200 OK\r\n", proc_json), 0);
	client(&rc, "", KEY);
	assert_int_equal(rest_process_get(&rc, SB, "proc_a/b", &out, &err),
	    0);
	fake_stop();
	json_object_put(out);
	assert_true(starts_with("GET /v1/sandboxes/" SB "/processes/"
	    "proc_a%2Fb HTTP/1.1\r\n"));
	fake_free();
	rest_client_free(&rc);
}

static void
test_signal_names(void **state)
{
	(void)state;
	assert_string_equal(rest_signal_name("TERM"), "TERM");
	assert_string_equal(rest_signal_name("term"), "TERM");
	assert_string_equal(rest_signal_name("SIGKILL"), "KILL");
	assert_string_equal(rest_signal_name("sigint"), "INT");
	assert_string_equal(rest_signal_name("1"), "HUP");
	assert_string_equal(rest_signal_name("9"), "KILL");
	assert_null(rest_signal_name("USR1"));
	assert_null(rest_signal_name("SIGSIGTERM"));
	assert_null(rest_signal_name("10"));
	assert_null(rest_signal_name("0"));
	assert_null(rest_signal_name("99999999999999999999"));
	assert_null(rest_signal_name(""));
	assert_null(rest_signal_name("SIG"));
}

/* A new fake server with this answer, and rc (freed first) its client. */
static void
answer(struct rest_client *rc, const char *resp)
{
	rest_client_free(rc);
	fake_start(ANSWER, resp, 0);
	client(rc, "", KEY);
}

static void
test_small_calls(void **state)
{
	static const char	 no_content[] =
	    "HTTP/1.1 204 No Content\r\n\r\n";
	struct rest_client	 rc;
	struct rest_error	 err;

	(void)state;
	memset(&rc, 0, sizeof(rc));
	answer(&rc, no_content);
	assert_int_equal(rest_process_signal(&rc, SB, PROC, "sigint", &err),
	    0);
	fake_stop();
	assert_true(starts_with("POST /v1/sandboxes/" SB "/processes/" PROC
	    "/signal HTTP/1.1\r\n"));
	assert_string_equal((char *)fk.req + fk.headlen,
	    "{\"signal\":\"INT\"}");
	fake_free();

	/* An unknown signal is refused before any request. */
	assert_int_equal(rest_process_signal(&rc, SB, PROC, "USR1", &err), -1);
	assert_string_equal(err.code, "invalid_request");

	answer(&rc, no_content);
	assert_int_equal(rest_process_resize(&rc, SB, PROC, 100, 30, &err), 0);
	fake_stop();
	assert_string_equal((char *)fk.req + fk.headlen,
	    "{\"cols\":100,\"rows\":30}");
	fake_free();

	answer(&rc, no_content);
	assert_int_equal(rest_process_stdin(&rc, SB, PROC, "a\0b", 3, 1, &err),
	    0);
	fake_stop();
	assert_true(starts_with("POST /v1/sandboxes/" SB "/processes/" PROC
	    "/stdin?close=true HTTP/1.1\r\n"));
	assert_true(has_header("Content-Type: application/octet-stream"));
	assert_int_equal(fk.reqlen - fk.headlen, 3);
	assert_memory_equal(fk.req + fk.headlen, "a\0b", 3);
	fake_free();

	answer(&rc, with_length("HTTP/1.1 409 Conflict\r\n",
	    "{\"error\":{\"code\":\"conflict\",\"message\":\"stdin is "
	    "closed\"}}"));
	assert_int_equal(rest_process_stdin(&rc, SB, PROC, "x", 1, 0, &err),
	    -1);
	fake_stop();
	assert_int_equal(err.status, 409);
	assert_true(starts_with("POST /v1/sandboxes/" SB "/processes/" PROC
	    "/stdin HTTP/1.1\r\n"));
	fake_free();

	answer(&rc, no_content);
	assert_int_equal(rest_process_delete(&rc, SB, PROC, &err), 0);
	fake_stop();
	assert_true(starts_with("DELETE /v1/sandboxes/" SB "/processes/" PROC
	    " HTTP/1.1\r\n"));
	fake_free();
	rest_client_free(&rc);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_event_good),
		cmocka_unit_test(test_event_bad),
		cmocka_unit_test(test_output_stream),
		cmocka_unit_test(test_output_text),
		cmocka_unit_test(test_output_bad),
		cmocka_unit_test(test_output_empty_hole),
		cmocka_unit_test(test_output_overlap),
		cmocka_unit_test(test_output_huge_line),
		cmocka_unit_test(test_output_error),
		cmocka_unit_test(test_output_wait),
		cmocka_unit_test(test_output_follow),
		cmocka_unit_test(test_start),
		cmocka_unit_test(test_list_get),
		cmocka_unit_test(test_signal_names),
		cmocka_unit_test(test_small_calls),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
