/*
 * Tests for client/mcp_process.c through tools_call, against the fake
 * server of rest_fake.c playing each request's answer in turn: the
 * output's slices (runs of one stream joined, a character split between
 * two events kept whole, a gap, the 64 KiB bound cut at a character's
 * boundary with the exact next_after, the status from the exit event or
 * from the process), the arguments refused before any request, and the
 * bodies the other tools send.
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

#include <cmocka.h>

#include "mcp.h"
#include "rest_fake.h"
#include "websocket.h"

#define SB	"sb_0123456789abcdef"
#define PROC	"proc_0123456789abcdef"

static const char	 sandbox_ok[] = "HTTP/1.1 200 OK\r\nContent-Length: 2"
    "\r\n\r\n{}";
static const char	 no_content[] = "HTTP/1.1 204 No Content\r\n\r\n";

/* The answer of call()'s script (from 1) held open, or 0. */
static size_t	 hold_answer;

/* An answer with this status line and JSON body, malloc'd. */
static char *
http(const char *status, const char *body)
{
	char	*s;

	assert_true(asprintf(&s, "HTTP/1.1 %s\r\nContent-Type: "
	    "application/json\r\nContent-Length: %zu\r\n\r\n%s", status,
	    strlen(body), body) != -1);
	return s;
}

/* {"seq": seq, "type": type, "data": base64 of len bytes}\n, appended. */
static void
event(char **ndjson, uint64_t seq, const char *type, const void *p,
    size_t len)
{
	char	*b64, *s;
	size_t	 n = (len + 2) / 3 * 4 + 1;

	assert_non_null(b64 = malloc(n));
	b64_encode(p, len, b64, n);
	assert_true(asprintf(&s, "%s{\"seq\": %llu, \"type\": \"%s\", "
	    "\"data\": \"%s\"}\n", *ndjson != NULL ? *ndjson : "",
	    (unsigned long long)seq, type, b64) != -1);
	free(b64);
	free(*ndjson);
	*ndjson = s;
}

static void
line(char **ndjson, const char *text)
{
	char	*s;

	assert_true(asprintf(&s, "%s%s\n", *ndjson != NULL ? *ndjson : "",
	    text) != -1);
	free(*ndjson);
	*ndjson = s;
}

/* An NDJSON answer with its length, malloc'd. */
static char *
answer(const char *ndjson)
{
	char	*s;

	assert_true(asprintf(&s, "HTTP/1.1 200 OK\r\nContent-Type: "
	    "application/x-ndjson\r\nContent-Length: %zu\r\n\r\n%s",
	    strlen(ndjson), ndjson) != -1);
	return s;
}

/*
 * tools_call against answers played in turn (none: no server): whether
 * it is an error, its text in *text (malloc'd).
 */
static int
call(const char *tool, const char *args, const char *const *answers,
    char **text)
{
	struct mcp_server	 srv;
	json_object		*a, *res, *content;
	int			 error;

	memset(&srv, 0, sizeof(srv));
	if (answers != NULL) {
		fake_script(answers);
		fk.hold = hold_answer;
		client(&srv.rest, "", KEY);
	} else
		assert_int_equal(rest_client_init(&srv.rest,
		    "http://127.0.0.1:9", KEY, srv.rest_err,
		    sizeof(srv.rest_err)), 0);
	srv.rest_ok = 1;
	a = json_tokener_parse(args);
	assert_non_null(res = tools_call(&srv, tool, a));
	if (answers != NULL)
		fake_stop();
	error = json_object_get_boolean(json_object_object_get(res,
	    "isError"));
	content = json_object_array_get_idx(json_object_object_get(res,
	    "content"), 0);
	*text = strdup(json_object_get_string(json_object_object_get(content,
	    "text")));
	json_object_put(res);
	json_object_put(a);
	rest_client_free(&srv.rest);
	return error;
}

static void
test_output_slice(void **state)
{
	const char	*script[4] = { sandbox_ok, NULL, NULL, NULL };
	char		*nd = NULL, *text, *out;
	json_object	*res, *want;

	(void)state;
	/* "é" split between two events; two runs of stdout around stderr. */
	event(&nd, 12, "stdout", "ab", 2);
	event(&nd, 14, "stdout", "c\xc3", 2);
	event(&nd, 16, "stdout", "\xa9" "d", 2);
	event(&nd, 17, "stderr", "\xff", 1);
	line(&nd, "{\"type\": \"gap\", \"dropped_bytes\": 3}");
	event(&nd, 21, "stdout", "y", 1);
	line(&nd, "{\"type\": \"exit\", \"status\": \"exited\", \"exit_code\": "
	    "0, \"seq\": 21}");
	script[1] = out = answer(nd);
	assert_false(call("sandbox_process_output", "{\"sandbox_id\": \"" SB
	    "\", \"process_id\": \"" PROC "\", \"after\": 10, "
	    "\"wait_seconds\": 2.5}", script, &text));
	res = json_tokener_parse(text);
	want = json_tokener_parse("{\"events\": [{\"type\": \"stdout\", "
	    "\"text\": \"abc\\u00e9d\"}, {\"type\": \"stderr\", \"text\": "
	    "\"\\ufffd\"}, {\"type\": \"gap\", \"dropped_bytes\": 3}, "
	    "{\"type\": \"stdout\", \"text\": \"y\"}], \"next_after\": 21, "
	    "\"truncated\": false, \"status\": \"exited\", \"exit_code\": 0}");
	if (!json_object_equal(res, want))
		fail_msg("got %s", text);
	assert_non_null(strstr(fk.log, "GET /v1/sandboxes/" SB "/processes/"
	    PROC "/output?after=10&follow=true&encoding=base64 HTTP/1.1"));
	json_object_put(res);
	json_object_put(want);
	free(text);
	free(out);
	free(nd);
	fake_free();
}

/* More than the bound: cut before a character it would split. */
static void
test_output_bound(void **state)
{
	const char	*script[4] = { sandbox_ok, NULL, NULL, NULL };
	unsigned char	*big;
	char		*nd = NULL, *text, *out, *proc;
	json_object	*res, *v, *ev;
	size_t		 n = MCP_MAX_OUTPUT + 100;

	(void)state;
	assert_non_null(big = malloc(n));
	memset(big, 'a', n);
	/* "é" across the bound: it goes to the next call. */
	big[MCP_MAX_OUTPUT - 1] = 0xc3;
	big[MCP_MAX_OUTPUT] = 0xa9;
	event(&nd, n, "stdout", big, n);
	event(&nd, n + 1, "stdout", "z", 1);
	script[1] = out = answer(nd);
	script[2] = proc = http("200 OK", "{\"id\": \"" PROC "\", \"status\": "
	    "\"running\", \"exit_code\": null}");
	assert_false(call("sandbox_process_output", "{\"sandbox_id\": \"" SB
	    "\", \"process_id\": \"" PROC "\"}", script, &text));
	assert_non_null(res = json_tokener_parse(text));
	assert_int_equal(json_object_get_int64(json_object_object_get(res,
	    "next_after")), MCP_MAX_OUTPUT - 1);
	assert_true(json_object_get_boolean(json_object_object_get(res,
	    "truncated")));
	v = json_object_object_get(res, "events");
	assert_int_equal(json_object_array_length(v), 1);
	ev = json_object_array_get_idx(v, 0);
	assert_int_equal(json_object_get_string_len(json_object_object_get(ev,
	    "text")), MCP_MAX_OUTPUT - 1);
	/* Not ended: the status is the process's, asked for. */
	assert_string_equal(json_object_get_string(json_object_object_get(res,
	    "status")), "running");
	assert_non_null(strstr(fk.log, "?after=0&follow=false&encoding="
	    "base64 HTTP/1.1"));
	assert_non_null(strstr(fk.log, "GET /v1/sandboxes/" SB "/processes/"
	    PROC " HTTP/1.1"));
	json_object_put(res);
	free(text);
	free(out);
	free(proc);
	free(nd);
	free(big);
	fake_free();
}

/*
 * A wait below a millisecond is a wait of one, not a follow with no end:
 * the answer stays open (a running process), and the call comes back
 * at once with what came, the status asked for.
 */
static void
test_output_short_wait(void **state)
{
	static const char	 ev[] = "{\"seq\": 1, \"type\": \"stdout\", "
	    "\"data\": \"eA==\"}\n";
	const char	*script[4] = { sandbox_ok, NULL, NULL, NULL };
	struct timespec	 t0, t1;
	char		*text, *proc, *open_answer;

	(void)state;
	/* Its first chunk and no end. */
	assert_true(asprintf(&open_answer, "HTTP/1.1 200 OK\r\nContent-Type: "
	    "application/x-ndjson\r\nTransfer-Encoding: chunked\r\n\r\n"
	    "%zx\r\n%s\r\n", strlen(ev), ev) != -1);
	script[1] = open_answer;
	script[2] = proc = http("200 OK", "{\"id\": \"" PROC "\", "
	    "\"status\": \"running\", \"exit_code\": null}");
	hold_answer = 2;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (call("sandbox_process_output", "{\"sandbox_id\": \"" SB "\", "
	    "\"process_id\": \"" PROC "\", \"wait_seconds\": 0.0004}", script,
	    &text))
		fail_msg("an error: %s", text);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	hold_answer = 0;
	assert_true(t1.tv_sec - t0.tv_sec < 2);
	assert_non_null(strstr(fk.log, "?after=0&follow=true&encoding="
	    "base64 HTTP/1.1"));
	if (strstr(text, "\"status\":\"running\"") == NULL)
		fail_msg("got %s", text);
	free(text);
	free(proc);
	free(open_answer);
	fake_free();
}

/* Refused before any request: nothing listens at port 9. */
static void
test_refused(void **state)
{
	static const char *const bad[][3] = {
		{ "sandbox_process_output", "{\"sandbox_id\": \"s\", "
		    "\"process_id\": \"p\", \"wait_seconds\": 10.5}",
		    "0 to 10" },
		{ "sandbox_process_output", "{\"sandbox_id\": \"s\", "
		    "\"process_id\": \"p\", \"wait_seconds\": -1}", "0 to 10" },
		{ "sandbox_process_output", "{\"sandbox_id\": \"s\", "
		    "\"process_id\": \"p\", \"after\": -1}", "negative" },
		{ "sandbox_process_output", "{\"sandbox_id\": \"s\", "
		    "\"process_id\": \"p\", \"after\": 1.5}", "integer" },
		{ "sandbox_process_kill", "{\"sandbox_id\": \"s\", "
		    "\"process_id\": \"p\", \"signal\": \"USR1\"}",
		    "unknown signal" },
		{ "sandbox_process_start", "{\"sandbox_id\": \"s\", "
		    "\"command\": \"x\", \"env\": {\"A\": 1}}", "object of" },
		{ "sandbox_process_start", "{\"sandbox_id\": \"s\", "
		    "\"command\": \"x\", \"env\": [\"A=1\"]}", "object of" },
		{ "sandbox_process_start", "{\"sandbox_id\": \"s\"}",
		    "missing" },
		{ "sandbox_process_list", "{}", "missing" },
	};
	char	*text;
	size_t	 i;

	(void)state;
	for (i = 0; i < NITEMS(bad); i++) {
		assert_true(call(bad[i][0], bad[i][1], NULL, &text));
		if (strstr(text, bad[i][2]) == NULL)
			fail_msg("%s %s: '%s'", bad[i][0], bad[i][1], text);
		free(text);
	}
}

static void
test_start_kill_list(void **state)
{
	const char	*script[3] = { sandbox_ok, NULL, NULL };
	char		*text, *created, *listed;

	created = http("201 Created", "{\"id\": \"" PROC "\", \"status\": "
	    "\"running\", \"x\": 1}");
	listed = http("200 OK", "{\"processes\": [{\"id\": \"" PROC "\"}]}");
	script[1] = created;
	(void)state;
	assert_false(call("sandbox_process_start", "{\"sandbox_id\": \"" SB
	    "\", \"command\": \"make\", \"env\": {\"A\": \"b\"}, "
	    "\"timeout_seconds\": 60, \"client_id\": \"c1\"}", script, &text));
	assert_non_null(strstr(fk.log, "\r\n\r\n{\"command\":\"make\",\"env\":"
	    "{\"A\":\"b\"},\"timeout_seconds\":60.0,\"client_id\":\"c1\"}"));
	/* The process's keys, not the server's others. */
	assert_non_null(strstr(text, "\"id\":\"" PROC "\""));
	assert_null(strstr(text, "\"x\""));
	free(text);
	fake_free();

	script[1] = no_content;
	assert_false(call("sandbox_process_kill", "{\"sandbox_id\": \"" SB
	    "\", \"process_id\": \"" PROC "\", \"signal\": \"sigkill\"}",
	    script, &text));
	assert_string_equal(text, "sent KILL to " PROC);
	assert_non_null(strstr(fk.log, "{\"signal\":\"KILL\"}"));
	free(text);
	fake_free();
	assert_false(call("sandbox_process_kill", "{\"sandbox_id\": \"" SB
	    "\", \"process_id\": \"" PROC "\", \"delete\": true}", script,
	    &text));
	assert_string_equal(text, "deleted " PROC);
	assert_non_null(strstr(fk.log, "DELETE /v1/sandboxes/" SB
	    "/processes/" PROC " HTTP/1.1"));
	free(text);
	fake_free();

	script[1] = listed;
	assert_false(call("sandbox_process_list", "{\"sandbox_id\": \"" SB
	    "\"}", script, &text));
	assert_int_equal(strncmp(text, "[{\"id\":\"" PROC "\"",
	    strlen("[{\"id\":\"" PROC "\"")), 0);
	free(text);
	fake_free();
	free(created);
	free(listed);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_output_slice),
		cmocka_unit_test(test_output_bound),
		cmocka_unit_test(test_output_short_wait),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_start_kill_list),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
