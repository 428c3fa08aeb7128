/*
 * Tests for client/cli_network.c against the fake server: the PUT each
 * policy's words make, the usage errors that make no request, the policy
 * and log as text, a log's odd bytes (control characters, an IPv6 host)
 * printed so that a terminal shows them rather than obeys them, and the
 * allowlist create's and fork's --allow make.
 */
#include <getopt.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli.h"
#include "rest_fake.h"

#define NARGS(a)	((int)(sizeof(a) / sizeof((a)[0])) - 1)
#define W(s)		((char []){ s })
#define OK_HEAD		"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"

static char	 out[64 * 1024];

/* The verbs' usage errors go here (agent-sandbox.c has it). */
int
cli_usage(const char *verb)
{
	(void)verb;
	return CLI_EXIT_USAGE;
}

/*
 * verb with argv, its stdout into out[]; returns its exit status.  A
 * request, if any, goes to the fake server started before.
 */
static int
run(int (*verb)(struct cli *, int, char **), int argc, char **argv,
    int json)
{
	struct cli	 cli;
	FILE		*tmp;
	size_t		 n;
	int		 saved, rc;

	memset(&cli, 0, sizeof(cli));
	cli.json = json;
	client(&cli.rc, "", KEY);
	optind = 0;
	opterr = 0;
	assert_non_null(tmp = tmpfile());
	fflush(stdout);
	assert_true((saved = dup(STDOUT_FILENO)) != -1);
	assert_true(dup2(fileno(tmp), STDOUT_FILENO) != -1);
	rc = verb(&cli, argc, argv);
	fflush(stdout);
	assert_true(dup2(saved, STDOUT_FILENO) != -1);
	close(saved);
	rewind(tmp);
	n = fread(out, 1, sizeof(out) - 1, tmp);
	out[n] = '\0';
	fclose(tmp);
	rest_client_free(&cli.rc);
	return rc;
}

/* The body of the request the fake got, as JSON. */
static json_object *
request_body(void)
{
	assert_true(fk.reqlen > fk.headlen);
	return json_tokener_parse((const char *)fk.req + fk.headlen);
}

static void
expect_put(char **argv, int argc, const char *body)
{
	json_object	*got, *want = json_tokener_parse(body);

	fake_start(ANSWER, with_length(OK_HEAD, body), 0);
	assert_int_equal(run(cli_network, argc, argv, 0), CLI_EXIT_OK);
	fake_stop();
	assert_true(starts_with("PUT /v1/sandboxes/sb_1/network HTTP/1.1"));
	assert_non_null(got = request_body());
	assert_true(json_object_equal(got, want));
	json_object_put(got);
	json_object_put(want);
	fake_free();
}

static void
test_policies_put(void **state)
{
	char *none[] = { W("network"), W("sb_1"), W("none"), NULL };
	char *pub[] = { W("network"), W("sb_1"), W("public"), NULL };
	char *list[] = { W("network"), W("sb_1"), W("allow"), W("a.test"),
	    W("[2606:4700::/32]:443"), NULL };

	(void)state;
	expect_put(none, NARGS(none), "{\"mode\": \"none\"}");
	assert_string_equal(out, "mode:  none\n");
	expect_put(pub, NARGS(pub), "{\"mode\": \"public\"}");
	assert_string_equal(out, "mode:  public\n");
	expect_put(list, NARGS(list), "{\"mode\": \"allowlist\", \"allow\": "
	    "[\"a.test\", \"[2606:4700::/32]:443\"]}");
	assert_string_equal(out, "mode:  allowlist\nallow: a.test\n"
	    "       [2606:4700::/32]:443\n");
}

static void
test_show(void **state)
{
	const char	*bridge = "{\"mode\": \"bridge\"}";
	char		*argv[] = { W("network"), W("sb_1"), NULL };

	(void)state;
	fake_start(ANSWER, with_length(OK_HEAD, bridge), 0);
	assert_int_equal(run(cli_network, NARGS(argv), argv, 0), CLI_EXIT_OK);
	fake_stop();
	assert_true(starts_with("GET /v1/sandboxes/sb_1/network HTTP/1.1"));
	assert_string_equal(out, "mode:  bridge\n");
	fake_free();
	fake_start(ANSWER, with_length(OK_HEAD, bridge), 0);
	assert_int_equal(run(cli_network, NARGS(argv), argv, 1), CLI_EXIT_OK);
	fake_stop();
	assert_string_equal(out, "{\n  \"mode\": \"bridge\"\n}\n");
	fake_free();
	/* A server's odd policy: escaped, a null shown as "-". */
	fake_start(ANSWER, with_length(OK_HEAD, "{\"mode\": \"x\\u001b[2J\", "
	    "\"allow\": [\"a\\u0007.test\", null, 5]}"), 0);
	assert_int_equal(run(cli_network, NARGS(argv), argv, 0), CLI_EXIT_OK);
	fake_stop();
	assert_string_equal(out, "mode:  x\\x1b[2J\nallow: a\\x07.test\n"
	    "       -\n       5\n");
	fake_free();
}

/* Usage errors exit 2 before any request: no server is listening. */
static void
test_usage(void **state)
{
	char *words[][6] = {
		{ W("network"), NULL },
		{ W("network"), W("sb_1"), W("bridge"), NULL },
		{ W("network"), W("sb_1"), W("allow"), NULL },
		{ W("network"), W("sb_1"), W("none"), W("a.test"), NULL },
		{ W("network"), W("sb_1"), W("public"), W("a.test"), NULL },
		{ W("network"), W("sb_1"), W("allow"), W("a.test"),
		    W("caf\xc3.test"), NULL },
		{ W("network"), W("a/b"), NULL },
		{ W("network"), W("--all"), W("sb_1"), NULL },
		{ W("network-log"), NULL },
		{ W("network-log"), W("sb_1"), W("sb_2"), NULL },
	};
	size_t	 i;
	int	 argc;

	(void)state;
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		for (argc = 0; words[i][argc] != NULL; argc++)
			;
		assert_int_equal(run(strcmp(words[i][0], "network") == 0 ?
		    cli_network : cli_network_log, argc, words[i], 0),
		    CLI_EXIT_USAGE);
		assert_string_equal(out, "");
	}
}

static void
test_log_table(void **state)
{
	const char	*log = "{\"entries\": ["
	    "{\"time\": \"2026-12-04T01:00:00.000Z\", \"host\": \"a.test\", "
	    "\"port\": 443, \"address\": \"203.0.113.7\", \"allowed\": true, "
	    "\"reason\": null, \"bytes_sent\": 10, \"bytes_received\": 2000},"
	    "{\"time\": \"2026-12-04T01:00:01.000Z\", \"host\": "
	    "\"x\\u001b[2Jy\\u007f.test\", \"port\": 80, \"address\": null, "
	    "\"allowed\": false, \"reason\": \"not\\ton the allowlist\", "
	    "\"bytes_sent\": 0, \"bytes_received\": 0},"
	    "{\"time\": \"2026-12-04T01:00:02.000Z\", \"host\": "
	    "\"2606:4700::1\", \"port\": 443, \"address\": \"2606:4700::1\", "
	    "\"allowed\": false, \"reason\": \"private address\", "
	    "\"bytes_sent\": 0, \"bytes_received\": 0}], \"dropped\": 3}";
	char		*argv[] = { W("network-log"), W("sb_1"), NULL };

	(void)state;
	fake_start(ANSWER, with_length(OK_HEAD, log), 0);
	assert_int_equal(run(cli_network_log, NARGS(argv), argv, 0),
	    CLI_EXIT_OK);
	fake_stop();
	assert_true(starts_with("GET /v1/sandboxes/sb_1/network/log "));
	fake_free();
	assert_string_equal(out,
	    "TIME                      VERDICT  HOST:PORT              "
	    "ADDRESS       SENT  RECEIVED  REASON\n"
	    "2026-12-04T01:00:00.000Z  allowed  a.test:443             "
	    "203.0.113.7   10    2000      -\n"
	    "2026-12-04T01:00:01.000Z  refused  x\\x1b[2Jy\\x7f.test:80  "
	    "-             0     0         not\\x09on the allowlist\n"
	    "2026-12-04T01:00:02.000Z  refused  [2606:4700::1]:443     "
	    "2606:4700::1  0     0         private address\n"
	    "(3 older entries dropped)\n");
}

/*
 * A log with no entries: the header only, no "dropped" line for 0; entries
 * that are no objects: rows of "-"; no entries list: a failure.
 */
static void
test_log_empty_and_odd(void **state)
{
	const char	*empty = "{\"entries\": [], \"dropped\": 0}";
	const char	*odd = "{\"dropped\": 0}";
	char		*argv[] = { W("network-log"), W("sb_1"), NULL };

	(void)state;
	fake_start(ANSWER, with_length(OK_HEAD, empty), 0);
	assert_int_equal(run(cli_network_log, NARGS(argv), argv, 0),
	    CLI_EXIT_OK);
	fake_stop();
	fake_free();
	assert_string_equal(out, "TIME  VERDICT  HOST:PORT  ADDRESS  SENT  "
	    "RECEIVED  REASON\n");
	fake_start(ANSWER, with_length(OK_HEAD, "{\"entries\": [null, 7]}"), 0);
	assert_int_equal(run(cli_network_log, NARGS(argv), argv, 0),
	    CLI_EXIT_OK);
	fake_stop();
	fake_free();
	assert_string_equal(out, "TIME  VERDICT  HOST:PORT  ADDRESS  SENT  "
	    "RECEIVED  REASON\n"
	    "-     refused  -:-        -        -     -         -\n"
	    "-     refused  -:-        -        -     -         -\n");
	fake_start(ANSWER, with_length(OK_HEAD, odd), 0);
	assert_int_equal(run(cli_network_log, NARGS(argv), argv, 0),
	    CLI_EXIT_FAIL);
	fake_stop();
	fake_free();
	assert_string_equal(out, "");
}

/*
 * Non-ASCII that is well-formed stays (a terminal shows it); a C1 control
 * (U+009B is CSI) and bytes of ill-formed UTF-8 are escaped byte by byte.
 */
static void
test_log_odd_bytes(void **state)
{
	const char	*log = "{\"entries\": [{\"time\": \"t\", "
	    "\"host\": \"caf\\u00e9\\u009b2J\xff\xc3.test\", \"port\": 80, "
	    "\"address\": null, \"allowed\": false, \"reason\": "
	    "\"\\u00e9\\u0085\"}], \"dropped\": 0}";
	char		*argv[] = { W("network-log"), W("sb_1"), NULL };
	int		 rc;

	(void)state;
	fake_start(ANSWER, with_length(OK_HEAD, log), 0);
	rc = run(cli_network_log, NARGS(argv), argv, 0);
	fake_stop();
	fake_free();
	/* json-c keeps the ill-formed bytes of the text as they came. */
	assert_int_equal(rc, CLI_EXIT_OK);
	assert_non_null(strstr(out, "caf\xc3\xa9\\xc2\\x9b2J\\xff\\xc3.test:80"));
	assert_non_null(strstr(out, "\xc3\xa9\\xc2\\x85\n"));
	assert_null(strchr(out, 0x1b));
}

/* create's and fork's --allow: an allowlist made at the first entry. */
static void
test_allow_add(void **state)
{
	json_object	*policy = NULL, *want;

	(void)state;
	assert_int_equal(cli_allow_add(&policy, "\xff.test"), -1);
	assert_null(policy);
	assert_int_equal(cli_allow_add(&policy, "a.test"), 0);
	assert_non_null(policy);
	assert_int_equal(cli_allow_add(&policy, "b.test:443"), 0);
	want = json_tokener_parse("{\"mode\": \"allowlist\", \"allow\": "
	    "[\"a.test\", \"b.test:443\"]}");
	assert_true(json_object_equal(policy, want));
	json_object_put(want);
	json_object_put(policy);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_policies_put),
		cmocka_unit_test(test_show),
		cmocka_unit_test(test_usage),
		cmocka_unit_test(test_log_table),
		cmocka_unit_test(test_log_empty_and_odd),
		cmocka_unit_test(test_log_odd_bytes),
		cmocka_unit_test(test_allow_add),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
