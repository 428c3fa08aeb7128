/*
 * Tests for what apid's process routes read and write without a
 * connection (docs/rest-api.md "Processes"): the bodies of start, signal
 * and resize with their 422 entries and 400s, the Process object, and
 * the event stream's NDJSON lines (and what a malformed stream does).
 * The routes themselves are test_apid_process.c's.
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
#include "process_fixture.h"

#define JSON		"application/json"

static struct apid	 the_apid;
struct apid		*apid = &the_apid;

static char *
to_text(json_object *o)
{
	char	*s;

	assert_non_null(s = strdup(json_object_to_json_string_ext(o,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)));
	return s;
}

/* --- the bodies ----------------------------------------------------------- */

static void
process_ok(const char *body, struct process_request *p)
{
	struct body_error	 e;

	if (body_parse_process(JSON, body, strlen(body), p, &e) == -1)
		fail_msg("body %s: status %d %s", body, e.status,
		    e.message != NULL ? e.message : "");
}

/* A refusal: a 422's detail, or "status code: message". */
static char *
process_refused(const char *body, size_t len)
{
	struct process_request	 p;
	struct body_error	 e;
	char			*s;

	assert_int_equal(body_parse_process(JSON, body, len, &p, &e), -1);
	assert_null(p.argv);
	assert_null(p.client_id);
	if (e.status == 422)
		s = to_text(e.detail);
	else
		assert_int_not_equal(asprintf(&s, "%d %s: %s", e.status,
		    e.code, e.message), -1);
	body_error_free(&e);
	return s;
}

static void
refused_is(const char *body, const char *want)
{
	char	*s = process_refused(body, strlen(body));

	if (strcmp(s, want) != 0)
		fail_msg("body %s\n got %s\nwant %s", body, s, want);
	free(s);
}

static void
test_process_body_full(void **state)
{
	struct process_request	 p;

	process_ok("{\"command\": [\"make\", \"test\"], \"env\": {\"A\": "
	    "\"1\"}, \"workdir\": \"/w\", \"timeout_seconds\": 2.5, "
	    "\"tty\": true, \"cols\": 120, \"rows\": 40, \"stdin\": false, "
	    "\"client_id\": \"build-1\"}", &p);
	assert_false(p.shell);
	assert_int_equal(p.argc, 2);
	assert_string_equal(p.argv[1], "test");
	assert_null(p.argv[2]);
	assert_int_equal(p.env.count, 1);
	assert_string_equal(p.workdir, "/w");
	assert_true(p.has_timeout);
	assert_true(p.timeout_seconds == 2.5);
	assert_true(p.tty);
	assert_int_equal(p.cols, 120);
	assert_int_equal(p.rows, 40);
	assert_false(p.stdin_open);
	assert_string_equal(p.client_id, "build-1");
	process_request_free(&p);
}

/* stdin defaults to tty; nulls are "not given". */
static void
test_process_body_defaults(void **state)
{
	struct process_request	 p;

	process_ok("{\"command\": \"make test\"}", &p);
	assert_true(p.shell);
	assert_int_equal(p.argc, 1);
	assert_string_equal(p.argv[0], "make test");
	assert_false(p.tty);
	assert_false(p.stdin_open);
	assert_int_equal(p.cols, 0);
	assert_null(p.workdir);
	assert_null(p.client_id);
	assert_false(p.has_timeout);
	process_request_free(&p);
	process_ok("{\"command\": \"sh\", \"tty\": true, \"cols\": null, "
	    "\"rows\": null, \"workdir\": null, \"timeout_seconds\": null, "
	    "\"client_id\": null}", &p);
	assert_true(p.stdin_open);
	assert_int_equal(p.cols, 0);
	assert_int_equal(p.rows, 0);
	process_request_free(&p);
	/* pydantic's lax bool and int from strings. */
	process_ok("{\"command\": \"sh\", \"tty\": \"yes\", \"cols\": \"80\", "
	    "\"stdin\": 0}", &p);
	assert_true(p.tty);
	assert_int_equal(p.cols, 80);
	assert_false(p.stdin_open);
	process_request_free(&p);
}

static void
test_process_body_422(void **state)
{
	refused_is("{}", "{\"detail\":[{\"type\":\"missing\",\"loc\":"
	    "[\"body\",\"command\"],\"msg\":\"Field required\",\"input\":"
	    "{}}]}");
	refused_is("{\"command\": [1]}", "{\"detail\":[{\"type\":"
	    "\"string_type\",\"loc\":[\"body\",\"command\",\"str\"],\"msg\":"
	    "\"Input should be a valid string\",\"input\":[1]},{\"type\":"
	    "\"string_type\",\"loc\":[\"body\",\"command\",\"list[str]\",0],"
	    "\"msg\":\"Input should be a valid string\",\"input\":1}]}");
	refused_is("{\"command\": \"x\", \"cols\": 0, \"rows\": 1001, \"tty\": "
	    "true}", "{\"detail\":[{\"type\":\"greater_than_equal\",\"loc\":"
	    "[\"body\",\"cols\"],\"msg\":\"Input should be greater than or "
	    "equal to 1\",\"input\":0,\"ctx\":{\"ge\":1}},{\"type\":"
	    "\"less_than_equal\",\"loc\":[\"body\",\"rows\"],\"msg\":\"Input "
	    "should be less than or equal to 1000\",\"input\":1001,\"ctx\":"
	    "{\"le\":1000}}]}");
	refused_is("{\"command\": \"x\", \"cols\": 80.5}", "{\"detail\":[{"
	    "\"type\":\"int_from_float\",\"loc\":[\"body\",\"cols\"],\"msg\":"
	    "\"Input should be a valid integer, got a number with a "
	    "fractional part\",\"input\":80.5}]}");
	refused_is("{\"command\": \"x\", \"tty\": null, \"stdin\": \"maybe\"}",
	    "{\"detail\":[{\"type\":\"bool_type\",\"loc\":[\"body\",\"tty\"],"
	    "\"msg\":\"Input should be a valid boolean\",\"input\":null},{"
	    "\"type\":\"bool_parsing\",\"loc\":[\"body\",\"stdin\"],\"msg\":"
	    "\"Input should be a valid boolean, unable to interpret input\","
	    "\"input\":\"maybe\"}]}");
	refused_is("{\"command\": \"x\", \"timeout_seconds\": 0}",
	    "{\"detail\":[{\"type\":\"greater_than\",\"loc\":[\"body\","
	    "\"timeout_seconds\"],\"msg\":\"Input should be greater than 0\","
	    "\"input\":0,\"ctx\":{\"gt\":0.0}}]}");
	refused_is("{\"command\": \"x\", \"client_id\": \"\"}", "{\"detail\":"
	    "[{\"type\":\"string_too_short\",\"loc\":[\"body\",\"client_id\"],"
	    "\"msg\":\"String should have at least 1 character\",\"input\":"
	    "\"\",\"ctx\":{\"min_length\":1}}]}");
	refused_is("{\"command\": \"x\", \"client_id\": 7, \"shell\": true}",
	    "{\"detail\":[{\"type\":\"string_type\",\"loc\":[\"body\","
	    "\"client_id\"],\"msg\":\"Input should be a valid string\","
	    "\"input\":7},{\"type\":\"extra_forbidden\",\"loc\":[\"body\","
	    "\"shell\"],\"msg\":\"Extra inputs are not permitted\",\"input\":"
	    "true}]}");
}

/* 128 bytes of client_id pass, 129 do not (bytes, not characters). */
static void
test_process_body_client_id(void **state)
{
	struct process_request	 p;
	char			 body[512], id[200];
	char			*s;

	memset(id, 'a', 128);
	id[128] = '\0';
	snprintf(body, sizeof(body), "{\"command\": \"x\", \"client_id\": "
	    "\"%s\"}", id);
	process_ok(body, &p);
	assert_int_equal(strlen(p.client_id), 128);
	process_request_free(&p);
	/* 64 two-byte characters: 128 bytes. */
	for (s = id; s < id + 128; s += 2)
		memcpy(s, "\303\251", 2);
	snprintf(body, sizeof(body), "{\"command\": \"x\", \"client_id\": "
	    "\"%se\"}", id);
	s = process_refused(body, strlen(body));
	assert_non_null(strstr(s, "\"type\":\"string_too_long\""));
	assert_non_null(strstr(s, "\"ctx\":{\"max_length\":128}"));
	free(s);
}

/* What cannot travel to managerd, and bodies that are not UTF-8. */
static void
test_process_body_400(void **state)
{
	refused_is("{\"command\": \"x\", \"client_id\": \"a\\u0000b\"}",
	    "400 invalid_request: client_id must not contain NUL characters");
	refused_is("{\"command\": [\"a\\u0000\"]}",
	    "400 invalid_request: command must not contain NUL characters");
	refused_is("{\"command\": \"x\", \"cols\": 80}",
	    "400 invalid_request: cols and rows are only for a process with "
	    "a tty");
	refused_is("{\"command\": \"x\", \"tty\": false, \"rows\": 24}",
	    "400 invalid_request: cols and rows are only for a process with "
	    "a tty");
	refused_is("{\"command\": \"x\", \"client_id\": \"\377\"}",
	    "400 http_error: There was an error parsing the body");
	refused_is("{\"command\": [\"\300\200\"]}",
	    "400 http_error: There was an error parsing the body");
	refused_is("{\"command\": \"x\", \"workdir\": \"/a\\u0000\"}",
	    "400 invalid_request: path must be a non-empty string");
}

/* Python's json.loads(): the last of duplicate keys wins. */
static void
test_process_body_duplicates(void **state)
{
	struct process_request	 p;

	process_ok("{\"command\": 5, \"command\": \"b\", \"tty\": true, "
	    "\"tty\": false}", &p);
	assert_string_equal(p.argv[0], "b");
	assert_false(p.tty);
	process_request_free(&p);
}

static void
signal_is(const char *body, int want)
{
	struct body_error	 e;
	uint32_t		 signo;

	if (body_parse_signal(JSON, body, body != NULL ? strlen(body) : 0,
	    &signo, &e) == -1)
		fail_msg("body %s: status %d", body, e.status);
	assert_int_equal(signo, want);
}

static void
signal_refused(const char *body, const char *want)
{
	struct body_error	 e;
	uint32_t		 signo;
	char			*s;

	assert_int_equal(body_parse_signal(JSON, body, strlen(body), &signo,
	    &e), -1);
	assert_int_equal(e.status, 422);
	s = to_text(e.detail);
	if (strcmp(s, want) != 0)
		fail_msg("body %s\n got %s\nwant %s", body, s, want);
	free(s);
	body_error_free(&e);
}

static void
test_signal_body(void **state)
{
	signal_is(NULL, SIGTERM);
	signal_is("null", SIGTERM);
	signal_is("{}", SIGTERM);
	signal_is("{\"signal\": \"KILL\"}", SIGKILL);
	signal_is("{\"signal\": \"HUP\"}", SIGHUP);
	signal_is("{\"signal\": \"INT\"}", SIGINT);
	signal_refused("{\"signal\": \"kill\"}", "{\"detail\":[{\"type\":"
	    "\"literal_error\",\"loc\":[\"body\",\"signal\"],\"msg\":\"Input "
	    "should be 'TERM', 'INT', 'KILL' or 'HUP'\",\"input\":\"kill\","
	    "\"ctx\":{\"expected\":\"'TERM', 'INT', 'KILL' or 'HUP'\"}}]}");
	signal_refused("{\"signal\": 9, \"x\": 1}", "{\"detail\":[{\"type\":"
	    "\"literal_error\",\"loc\":[\"body\",\"signal\"],\"msg\":\"Input "
	    "should be 'TERM', 'INT', 'KILL' or 'HUP'\",\"input\":9,\"ctx\":"
	    "{\"expected\":\"'TERM', 'INT', 'KILL' or 'HUP'\"}},{\"type\":"
	    "\"extra_forbidden\",\"loc\":[\"body\",\"x\"],\"msg\":\"Extra "
	    "inputs are not permitted\",\"input\":1}]}");
	signal_refused("{\"signal\": \"TERM\\u0000\"}", "{\"detail\":[{"
	    "\"type\":\"literal_error\",\"loc\":[\"body\",\"signal\"],\"msg\":"
	    "\"Input should be 'TERM', 'INT', 'KILL' or 'HUP'\",\"input\":"
	    "\"TERM\\u0000\",\"ctx\":{\"expected\":\"'TERM', 'INT', 'KILL' or "
	    "'HUP'\"}}]}");
}

static void
test_resize_body(void **state)
{
	struct body_error	 e;
	uint32_t		 cols, rows;
	char			*s;
	const char		*b;

	b = "{\"cols\": 100, \"rows\": \"30\"}";
	assert_int_equal(body_parse_resize(JSON, b, strlen(b), &cols, &rows,
	    &e), 0);
	assert_int_equal(cols, 100);
	assert_int_equal(rows, 30);
	b = "{\"cols\": null}";
	assert_int_equal(body_parse_resize(JSON, b, strlen(b), &cols, &rows,
	    &e), -1);
	s = to_text(e.detail);
	assert_string_equal(s, "{\"detail\":[{\"type\":\"int_type\",\"loc\":"
	    "[\"body\",\"cols\"],\"msg\":\"Input should be a valid integer\","
	    "\"input\":null},{\"type\":\"missing\",\"loc\":[\"body\",\"rows\"],"
	    "\"msg\":\"Field required\",\"input\":{\"cols\":null}}]}");
	free(s);
	body_error_free(&e);
	assert_int_equal(body_parse_resize(JSON, "", 0, &cols, &rows, &e), -1);
	assert_int_equal(e.status, 422);
	body_error_free(&e);
}

/* --- the Process object --------------------------------------------------- */

static void
json_is(const struct process_info *pi, const char *want)
{
	json_object	*o = process_info_json(pi);
	char		*s = to_text(o);

	if (strcmp(s, want) != 0)
		fail_msg(" got %s\nwant %s", s, want);
	free(s);
	json_object_put(o);
}

static void
test_process_json(void **state)
{
	struct process_info	 pi;
	char			 a0[] = "make test", a1[] = "-j";
	char			 bad[] = "x\377", cid[] = "c\300";
	char			*shell[] = { a0, NULL };
	char			*list[] = { a0, a1, NULL };

	info_init(&pi, shell, 1);
	json_is(&pi, RUNNING_JSON("\"make test\""));
	info_init(&pi, list, 0);
	json_is(&pi, RUNNING_JSON("[\"make test\",\"-j\"]"));
	/* Ended, with a tty, a timeout and a client id. */
	pi.status = PROCESS_KILLED;
	pi.running = 0;
	pi.has_exit_code = 1;
	pi.exit_code = 137;
	pi.has_ended_at = 1;
	pi.ended_at = 1764625202.0;
	pi.has_timeout = 1;
	pi.timeout_seconds = 30;
	pi.tty = 1;
	pi.stdin_open = 1;
	pi.cols = 80;
	pi.rows = 24;
	list[1] = bad;
	pi.client_id = cid;
	pi.dropped_bytes = 3;
	json_is(&pi, "{\"id\":\"" PROC "\",\"sandbox_id\":\"" SB "\","
	    "\"command\":[\"make test\",\"x\357\277\275\"],\"workdir\":"
	    "\"/workspace\",\"status\":\"killed\",\"running\":false,"
	    "\"exit_code\":137,\"started_at\":\"2025-12-01T21:40:00.500000Z\","
	    "\"ended_at\":\"2025-12-01T21:40:02Z\",\"timeout_seconds\":30.0,"
	    "\"tty\":true,\"stdin\":true,\"cols\":80,\"rows\":24,\"client_id\":"
	    "\"c\357\277\275\",\"output_bytes\":10,\"kept_bytes\":10,"
	    "\"dropped_bytes\":3}");
}

/* --- the event stream ----------------------------------------------------- */

struct lines {
	char	 text[65536];
	size_t	 len;
	int	 n;
};

static int
collect(void *arg, struct evbuffer *line)
{
	struct lines	*l = arg;
	size_t		 n = evbuffer_get_length(line);

	assert_true(l->len + n < sizeof(l->text));
	evbuffer_remove(line, l->text + l->len, n);
	l->len += n;
	l->text[l->len] = '\0';
	l->n++;
	return 0;
}

/* Fed in pieces of every size from 1 up: the lines must not change. */
static int
feed(const struct stream *s, int base64, struct lines *l, int *clean)
{
	struct process_events	*pe;
	size_t			 off, step, n;
	int			 rc = 0;

	assert_non_null(pe = malloc(sizeof(*pe)));
	for (step = 1; step <= 17; step += 16) {
		memset(l, 0, sizeof(*l));
		assert_int_equal(process_events_init(pe, base64, collect, l),
		    0);
		for (off = 0, rc = 0; off < s->len && rc == 0; off += n) {
			n = s->len - off < step ? s->len - off : step;
			rc = process_events_feed(pe, s->b + off, n);
		}
		*clean = process_events_clean(pe) && process_events_ended(pe);
		process_events_free(pe);
	}
	free(pe);
	return rc;
}

static void
test_events_lines(void **state)
{
	struct stream	 s = { { 0 }, 0 };
	struct lines	 l;
	int		 clean;

	put_data(&s, PEV_STDOUT, 6, "hello\n", 6);
	put_gap(&s, 1048576);
	put_data(&s, PEV_STDERR, 1048600, "warn \"\303\251\"\377\n", 11);
	put_exit(&s, 1048600, PROCESS_EXITED, 1, 0, 1764625202000ULL);
	assert_int_equal(feed(&s, 0, &l, &clean), 0);
	assert_true(clean);
	assert_int_equal(l.n, 4);
	assert_string_equal(l.text,
	    "{\"seq\": 6, \"type\": \"stdout\", \"data\": \"hello\\n\"}\n"
	    "{\"type\": \"gap\", \"dropped_bytes\": 1048576}\n"
	    "{\"seq\": 1048600, \"type\": \"stderr\", \"data\": \"warn "
	    "\\\"\\u00e9\\\"\\ufffd\\n\"}\n"
	    "{\"type\": \"exit\", \"status\": \"exited\", \"exit_code\": 0, "
	    "\"ended_at\": \"2025-12-01T21:40:02Z\", \"seq\": 1048600}\n");
	/* base64, and an exit with nothing known of its end. */
	s.len = 0;
	put_data(&s, PEV_STDOUT, 3, "\000\377a", 3);
	put_exit(&s, 3, PROCESS_LOST, 0, 0, 0);
	assert_int_equal(feed(&s, 1, &l, &clean), 0);
	assert_string_equal(l.text,
	    "{\"seq\": 3, \"type\": \"stdout\", \"data\": \"AP9h\"}\n"
	    "{\"type\": \"exit\", \"status\": \"lost\", \"exit_code\": null, "
	    "\"ended_at\": null, \"seq\": 3}\n");
}

/* Every way managerd's stream can be malformed fails the feed. */
static void
test_events_malformed(void **state)
{
	struct stream	 s;
	struct lines	 l;
	int		 clean;

	memset(&s, 0, sizeof(s));
	s.len = pev_header(s.b, (enum pev_type)9, 0, 1);
	assert_int_equal(feed(&s, 0, &l, &clean), -1);
	memset(&s, 0, sizeof(s));
	put_data(&s, PEV_STDOUT, 4, "abcd", 4);
	s.b[2] = 1;			/* padding */
	assert_int_equal(feed(&s, 0, &l, &clean), -1);
	memset(&s, 0, sizeof(s));
	put_data(&s, PEV_STDOUT, 4, "abcd", 4);
	put_data(&s, PEV_STDOUT, 6, "abcd", 4);	/* starts before 4 */
	assert_int_equal(feed(&s, 0, &l, &clean), -1);
	assert_int_equal(l.n, 1);
	memset(&s, 0, sizeof(s));
	s.len = pev_header(s.b, PEV_STDOUT, 0, 0);	/* empty data */
	assert_int_equal(feed(&s, 0, &l, &clean), -1);
	memset(&s, 0, sizeof(s));
	s.len = pev_header(s.b, PEV_STDOUT, PEV_DATA_MAX + 1, 1 << 20);
	assert_int_equal(feed(&s, 0, &l, &clean), -1);
	memset(&s, 0, sizeof(s));
	put_exit(&s, 0, PROCESS_EXITED, 1, 0, 0);
	put_gap(&s, 1);			/* after the exit */
	assert_int_equal(feed(&s, 0, &l, &clean), -1);
	memset(&s, 0, sizeof(s));
	put_exit(&s, 0, (enum process_status)7, 1, 0, 0);
	assert_int_equal(feed(&s, 0, &l, &clean), -1);
	/* Cut inside an event: fine so far, but not clean. */
	memset(&s, 0, sizeof(s));
	put_data(&s, PEV_STDOUT, 4, "abcd", 4);
	s.len -= 2;
	assert_int_equal(feed(&s, 0, &l, &clean), 0);
	assert_false(clean);
	assert_int_equal(l.n, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_process_body_full),
		cmocka_unit_test(test_process_body_defaults),
		cmocka_unit_test(test_process_body_422),
		cmocka_unit_test(test_process_body_client_id),
		cmocka_unit_test(test_process_body_400),
		cmocka_unit_test(test_process_body_duplicates),
		cmocka_unit_test(test_signal_body),
		cmocka_unit_test(test_resize_body),
		cmocka_unit_test(test_process_json),
		cmocka_unit_test(test_events_lines),
		cmocka_unit_test(test_events_malformed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
