/*
 * dockerd-proxy's reading of Docker's one-shot stats answer and of the
 * workspace probe (dockerd-proxy/docker_stats_parse.c), and the stats
 * codec (common/stats_msg.c): real answers of Docker 20.10 (cgroup v1,
 * without and with a network), then odd ones: fields missing, negative,
 * huge, of the wrong type, nested too deep, too long, not JSON.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proxy.h"
#include "stats_msg.h"

/* Docker 20.10.24's answer for a sandbox without a network, cut down. */
#define CPU	"\"cpu_stats\": {\"cpu_usage\": {\"total_usage\": 44755087, " \
		"\"percpu_usage\": [2233959, 42521128]}, " \
		"\"system_cpu_usage\": 117578150000000, \"online_cpus\": 2}"
#define PRECPU	"\"precpu_stats\": {\"cpu_usage\": {\"total_usage\": 0}, " \
		"\"throttling_data\": {\"periods\": 0}}"
#define MEM	"\"memory_stats\": {\"usage\": 327680, \"stats\": " \
		"{\"total_inactive_file\": 8192, \"inactive_file\": 4096}, " \
		"\"limit\": 134217728}"
#define PIDS	"\"pids_stats\": {\"current\": 3, \"limit\": 256}"
#define NET	"\"networks\": {\"eth0\": {\"rx_bytes\": 486, " \
		"\"tx_bytes\": 10}, \"eth1\": {\"rx_bytes\": 14, " \
		"\"tx_bytes\": 0}}"

static int
parse(const char *json, struct sandbox_stats *s)
{
	const char	*why = NULL;
	int		 rc;

	rc = docker_stats_parse(json, strlen(json), s, &why);
	if (rc == -1)
		assert_non_null(why);
	return rc;
}

static void
test_real_answers(void **state)
{
	struct sandbox_stats	 s;

	assert_int_equal(parse("{\"read\": \"2026-12-02T01:10:33Z\", " CPU
	    ", " PRECPU ", " MEM ", " PIDS ", \"name\": \"/x\"}", &s), 0);
	assert_true(s.running);
	assert_true(s.has_cpu);
	assert_int_equal(s.cpu_ns, 44755087);
	/* One-shot: no previous sample, no percentage. */
	assert_false(s.has_cpu_percent);
	assert_true(s.has_memory);
	/* cgroup v1's total_inactive_file first. */
	assert_int_equal(s.memory_bytes, 327680 - 8192);
	assert_int_equal(s.memory_limit, 134217728);
	assert_true(s.has_pids && s.has_pids_limit);
	assert_int_equal(s.pids, 3);
	assert_int_equal(s.pids_limit, 256);
	assert_false(s.has_network);
	assert_false(s.has_workspace);
	assert_int_equal(parse("{" CPU ", " NET "}", &s), 0);
	assert_true(s.has_network);
	assert_int_equal(s.rx_bytes, 500);
	assert_int_equal(s.tx_bytes, 10);
	assert_false(s.has_memory);
	assert_false(s.has_pids);
}

static void
test_percent_with_a_previous_sample(void **state)
{
	struct sandbox_stats	 s;

	assert_int_equal(parse("{\"cpu_stats\": {\"cpu_usage\": "
	    "{\"total_usage\": 3000}, \"system_cpu_usage\": 20000, "
	    "\"online_cpus\": 4}, \"precpu_stats\": {\"cpu_usage\": "
	    "{\"total_usage\": 1000}, \"system_cpu_usage\": 10000}}", &s), 0);
	assert_true(s.has_cpu_percent);
	/* 2000 / 10000 of the host's 4 CPUs: 80% of one. */
	assert_true(s.cpu_percent > 79.99 && s.cpu_percent < 80.01);
	/* The system clock going back: no rate, not a negative one. */
	assert_int_equal(parse("{\"cpu_stats\": {\"cpu_usage\": "
	    "{\"total_usage\": 3000}, \"system_cpu_usage\": 100}, "
	    "\"precpu_stats\": {\"cpu_usage\": {\"total_usage\": 1000}, "
	    "\"system_cpu_usage\": 10000}}", &s), 0);
	assert_false(s.has_cpu_percent);
}

static void
test_missing_fields(void **state)
{
	struct sandbox_stats	 s;

	assert_int_equal(parse("{}", &s), 0);
	assert_true(s.running);
	assert_false(s.has_cpu || s.has_memory || s.has_pids ||
	    s.has_network);
	/* A usage without its limit is no memory figure. */
	assert_int_equal(parse("{\"memory_stats\": {\"usage\": 5}}", &s), 0);
	assert_false(s.has_memory);
	/* Inactive cache larger than usage: usage as it is. */
	assert_int_equal(parse("{\"memory_stats\": {\"usage\": 5, "
	    "\"limit\": 9, \"stats\": {\"inactive_file\": 6}}}", &s), 0);
	assert_int_equal(s.memory_bytes, 5);
	/* Unlimited pids: no limit (v1 says 0, or leaves it out). */
	assert_int_equal(parse("{\"pids_stats\": {\"current\": 2, "
	    "\"limit\": 0}}", &s), 0);
	assert_true(s.has_pids);
	assert_false(s.has_pids_limit);
	assert_int_equal(parse("{\"pids_stats\": {}}", &s), 0);
	assert_false(s.has_pids);
	/* JSON null is as absent. */
	assert_int_equal(parse("{\"networks\": null, \"cpu_stats\": null}",
	    &s), 0);
	assert_false(s.has_network || s.has_cpu);
	assert_int_equal(parse("{\"networks\": {}}", &s), 0);
	assert_true(s.has_network);
	assert_int_equal(s.rx_bytes, 0);
}

static void
test_huge(void **state)
{
	struct sandbox_stats	 s;

	/* A limit past INT64_MAX (cgroup v2's max): no limit, saturated. */
	assert_int_equal(parse("{\"memory_stats\": {\"usage\": 1, "
	    "\"limit\": 18446744073709551615}}", &s), 0);
	assert_int_equal(s.memory_limit, INT64_MAX);
	assert_int_equal(parse("{\"pids_stats\": {\"current\": 1, "
	    "\"limit\": 18446744073709551615}}", &s), 0);
	assert_int_equal(s.pids_limit, INT64_MAX);
	/* A count past it is a lie. */
	assert_int_equal(parse("{\"memory_stats\": {\"usage\": "
	    "9223372036854775808, \"limit\": 1}}", &s), -1);
	assert_int_equal(parse("{\"pids_stats\": {\"current\": "
	    "99999999999999999999999}}", &s), -1);
	/* Interfaces whose sum overflows. */
	assert_int_equal(parse("{\"networks\": {\"a\": {\"rx_bytes\": "
	    "9223372036854775807, \"tx_bytes\": 0}, \"b\": {\"rx_bytes\": 1, "
	    "\"tx_bytes\": 0}}}", &s), -1);
	assert_false(s.running);
}

static void
test_wrong_types(void **state)
{
	static const char *const bad[] = {
		"[]", "1", "\"x\"", "null", "",
		"{\"cpu_stats\": []}",
		"{\"cpu_stats\": {\"cpu_usage\": 5}}",
		"{\"cpu_stats\": {\"cpu_usage\": {\"total_usage\": \"5\"}}}",
		"{\"cpu_stats\": {\"cpu_usage\": {\"total_usage\": 5.5}}}",
		"{\"cpu_stats\": {\"cpu_usage\": {\"total_usage\": -1}}}",
		"{\"cpu_stats\": {\"cpu_usage\": {\"total_usage\": true}}}",
		"{\"cpu_stats\": {\"online_cpus\": -2}}",
		"{\"precpu_stats\": 7}",
		"{\"memory_stats\": {\"usage\": -5, \"limit\": 1}}",
		"{\"memory_stats\": {\"usage\": 5, \"limit\": -1}}",
		"{\"memory_stats\": {\"usage\": 5, \"limit\": 1, \"stats\": 3}}",
		"{\"memory_stats\": {\"stats\": {\"inactive_file\": -3}}}",
		"{\"pids_stats\": {\"current\": \"3\"}}",
		"{\"pids_stats\": {\"current\": 3, \"limit\": -1}}",
		"{\"networks\": []}",
		"{\"networks\": {\"eth0\": 5}}",
		"{\"networks\": {\"eth0\": {\"rx_bytes\": 5}}}",
		"{\"networks\": {\"eth0\": {\"rx_bytes\": -5, \"tx_bytes\": 1}}}",
		"{\"networks\": {\"eth0\": {\"rx_bytes\": 1, \"tx_bytes\": 1.5}}}",
		"{\"a\": 1} trailing",
		"{\"a\": [[[[[[[[[[1]]]]]]]]]]}",
		"{\"a\": ",
	};
	struct sandbox_stats	 s;
	size_t			 i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (parse(bad[i], &s) != -1)
			fail_msg("accepted: %s", bad[i]);
	assert_false(s.running);
}

static void
test_too_long(void **state)
{
	struct sandbox_stats	 s;
	const char		*why;
	char			*big;

	big = malloc(STATS_MAX_BODY + 2);
	memset(big, ' ', STATS_MAX_BODY + 1);
	big[0] = '{';
	big[STATS_MAX_BODY] = '}';
	big[STATS_MAX_BODY + 1] = '\0';
	assert_int_equal(docker_stats_parse(big, STATS_MAX_BODY + 1, &s,
	    &why), -1);
	assert_int_equal(docker_stats_parse(big + 1, STATS_MAX_BODY, &s,
	    &why), -1);	/* "   ...}" is no JSON either */
	big[STATS_MAX_BODY - 1] = '}';
	assert_int_equal(docker_stats_parse(big, STATS_MAX_BODY, &s, &why), 0);
	free(big);
}

/* More interfaces than any container has: refused. */
static void
test_many_networks(void **state)
{
	struct sandbox_stats	 s;
	char			 buf[8192], *p = buf;
	int			 i;

	p += sprintf(p, "{\"networks\": {");
	for (i = 0; i < 65; i++)
		p += sprintf(p, "%s\"e%d\": {\"rx_bytes\": 1, \"tx_bytes\": 1}",
		    i ? ", " : "", i);
	strcpy(p, "}}");
	assert_int_equal(parse(buf, &s), -1);
}

static void
test_du_line(void **state)
{
	uint64_t	 b;

	assert_int_equal(du_said_parse("5124/workspace", &b), 0);
	assert_int_equal(b, 5124 * 1024);
	assert_int_equal(du_said_parse("0/workspace", &b), 0);
	assert_int_equal(b, 0);
	assert_int_equal(du_said_parse("", &b), -1);
	assert_int_equal(du_said_parse("/workspace", &b), -1);
	assert_int_equal(du_said_parse("12", &b), -1);
	assert_int_equal(du_said_parse("12/workspace/x", &b), -1);
	assert_int_equal(du_said_parse("du: not found", &b), -1);
	assert_int_equal(du_said_parse("-5/workspace", &b), -1);
	assert_int_equal(du_said_parse("1 2/workspace", &b), -1);
	assert_int_equal(du_said_parse("99999999999999999999/workspace", &b),
	    -1);
	/* The largest KiB count whose bytes an int64 holds, and one more. */
	assert_int_equal(du_said_parse("9007199254740991/workspace", &b), 0);
	assert_int_equal(du_said_parse("9007199254740992/workspace", &b), -1);
}

static int
decode(struct msgw *w, struct sandbox_stats *s)
{
	struct imsg	 m;

	memset(&m, 0, sizeof(m));
	m.fd = -1;
	m.data = w->buf;
	m.len = w->len;
	return msg_get_sandbox_stats(&m, s);
}

static void
test_codec(void **state)
{
	struct sandbox_stats	 s, back;
	struct msgw		 w;

	memset(&s, 0, sizeof(s));
	s.running = 1;
	s.has_cpu = 1;
	s.cpu_ns = 7;
	s.has_workspace = 1;
	s.workspace_bytes = 5 << 20;
	msgw_init(&w);
	msg_put_sandbox_stats(&w, &s);
	assert_int_equal(decode(&w, &back), 0);
	assert_int_equal(back.workspace_bytes, 5 << 20);
	assert_false(back.has_memory);
	/* Figures of a stopped sandbox: a lie. */
	s.running = 0;
	msgw_init(&w);
	msg_put_sandbox_stats(&w, &s);
	assert_int_equal(decode(&w, &back), -1);
	/* A percentage that is not finite, or too large. */
	s.running = 1;
	s.has_cpu_percent = 1;
	s.cpu_percent = 1.0 / 0.0;
	msgw_init(&w);
	msg_put_sandbox_stats(&w, &s);
	assert_int_equal(decode(&w, &back), -1);
	s.cpu_percent = STATS_PERCENT_MAX * 2;
	msgw_init(&w);
	msg_put_sandbox_stats(&w, &s);
	assert_int_equal(decode(&w, &back), -1);
	/* A count past INT64_MAX; one byte short. */
	s.cpu_percent = 1;
	s.cpu_ns = UINT64_MAX;
	msgw_init(&w);
	msg_put_sandbox_stats(&w, &s);
	assert_int_equal(decode(&w, &back), -1);
	s.cpu_ns = 1;
	msgw_init(&w);
	msg_put_sandbox_stats(&w, &s);
	w.len--;
	assert_int_equal(decode(&w, &back), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_answers),
		cmocka_unit_test(test_percent_with_a_previous_sample),
		cmocka_unit_test(test_missing_fields),
		cmocka_unit_test(test_huge),
		cmocka_unit_test(test_wrong_types),
		cmocka_unit_test(test_too_long),
		cmocka_unit_test(test_many_networks),
		cmocka_unit_test(test_du_line),
		cmocka_unit_test(test_codec),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
