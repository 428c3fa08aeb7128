/*
 * One line of Docker's event stream as dockerd-proxy reads it
 * (dockerd-proxy/docker_events_parse.c), and MSG_DOCKER_EVENT's codec:
 * only a sandbox container's own events of this instance pass, whole.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "proxy.h"
#include "sandbox_msg.h"

#define INSTANCE	"0123456789abcdef"
#define SB		"sb_00112233aabbccdd"

/* An event line with these parts; NULL leaves a part out. */
static int
parse(const char *type, const char *action, const char *id,
    const char *role, const char *instance, const char *tail,
    struct docker_event *ev)
{
	char	 line[4096];
	int	 n;

	n = snprintf(line, sizeof(line),
	    "{\"status\":\"%s\",\"id\":\"%s\",\"Type\":\"%s\","
	    "\"Action\":\"%s\",\"Actor\":{\"ID\":\"%s\",\"Attributes\":{"
	    "\"exitCode\":\"137\",\"image\":\"busybox\","
	    "\"io.agent-sandbox.managed\":\"true\","
	    "\"io.agent-sandbox.id\":\"%s\","
	    "\"io.agent-sandbox.role\":\"%s\","
	    "\"io.agent-sandbox.instance\":\"%s\"}},"
	    "\"scope\":\"local\",\"time\":1764650000,%s",
	    action, "c0ffee", type, action, "c0ffee", id, role, instance,
	    tail);
	assert_true(n > 0 && (size_t)n < sizeof(line));
	return docker_event_parse(line, (size_t)n, INSTANCE, ev);
}

#define TIME	"\"timeNano\":1764650000123456789}"

static void
test_accepted(void **state)
{
	struct docker_event	 ev, back;
	struct msgw		 w;
	struct imsg		 m;

	assert_int_equal(parse("container", "die", SB, "sandbox", INSTANCE,
	    TIME, &ev), 1);
	assert_string_equal(ev.id, SB);
	assert_int_equal(ev.action, DOCKER_EVENT_DIE);
	assert_true(ev.time_ns == 1764650000123456789LL);
	assert_int_equal(ev.exit_code, 137);
	msgw_init(&w);
	msg_put_docker_event(&w, &ev);
	memset(&m, 0, sizeof(m));
	m.fd = -1;
	m.data = w.buf;
	m.len = w.len;
	assert_int_equal(msg_get_docker_event(&m, &back), 0);
	assert_memory_equal(&ev, &back, sizeof(ev));

	assert_int_equal(parse("container", "start", SB, "sandbox", INSTANCE,
	    TIME, &ev), 1);
	assert_int_equal(ev.action, DOCKER_EVENT_START);
	assert_int_equal(ev.exit_code, 0);	/* only a die has one */
	assert_int_equal(parse("container", "oom", SB, "sandbox", INSTANCE,
	    TIME, &ev), 1);
	assert_int_equal(ev.action, DOCKER_EVENT_OOM);
	assert_int_equal(parse("container", "destroy", SB, "sandbox",
	    INSTANCE, TIME, &ev), 1);
	assert_int_equal(ev.action, DOCKER_EVENT_DESTROY);
}

static void
test_not_ours(void **state)
{
	static const char *const tails[] = {
		"\"timeNano\":\"1764650000123456789\"}",	/* a string */
		"\"timeNano\":0}",
		"\"timeNano\":-1}",
		"\"timeNano\":1.5}",
		"\"timeNano\":99999999999999999999999}",
		"\"other\":1}",					/* none */
		TIME "{}",					/* two */
		TIME " x",
		"\"timeNano\":1764650000123456789",		/* cut */
	};
	struct docker_event	 ev;
	size_t			 i;

	assert_int_equal(parse("network", "die", SB, "sandbox", INSTANCE,
	    TIME, &ev), 0);
	assert_int_equal(parse("container", "exec_die", SB, "sandbox",
	    INSTANCE, TIME, &ev), 0);
	assert_int_equal(parse("container", "kill", SB, "sandbox", INSTANCE,
	    TIME, &ev), 0);
	/* The -init container, another server's, a forged id. */
	assert_int_equal(parse("container", "die", SB, "init", INSTANCE,
	    TIME, &ev), 0);
	assert_int_equal(parse("container", "die", SB, "sandbox",
	    "fedcba9876543210", TIME, &ev), 0);
	assert_int_equal(parse("container", "die", "sb_../../x", "sandbox",
	    INSTANCE, TIME, &ev), 0);
	assert_int_equal(parse("container", "die", "sb_00112233AABBCCDD",
	    "sandbox", INSTANCE, TIME, &ev), 0);
	assert_int_equal(parse("container", "die", "sb_\xff\xfe", "sandbox",
	    INSTANCE, TIME, &ev), 0);
	for (i = 0; i < sizeof(tails) / sizeof(tails[0]); i++)
		assert_int_equal(parse("container", "die", SB, "sandbox",
		    INSTANCE, tails[i], &ev), 0);
	/* Not an object at all, and nothing filled. */
	assert_int_equal(docker_event_parse("[1,2]", 5, INSTANCE, &ev), 0);
	assert_int_equal(docker_event_parse("", 0, INSTANCE, &ev), 0);
	assert_int_equal(docker_event_parse("{\"Type\":", 8, INSTANCE, &ev),
	    0);
	assert_int_equal(ev.action, 0);
	assert_int_equal(ev.id[0], '\0');
}

/* Docker's exitCode is a string; one that is not 0-255 reads 0. */
static void
test_exit_codes(void **state)
{
	static const char *const bad[] = { "256", "-1", "x", "", "1e2",
	    "99999999999999999999" };
	struct docker_event	 ev;
	char			 line[1024];
	size_t			 i;
	int			 n;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		n = snprintf(line, sizeof(line), "{\"Type\":\"container\","
		    "\"Action\":\"die\",\"Actor\":{\"Attributes\":{"
		    "\"exitCode\":\"%s\",\"io.agent-sandbox.managed\":\"true\","
		    "\"io.agent-sandbox.id\":\"" SB "\","
		    "\"io.agent-sandbox.role\":\"sandbox\","
		    "\"io.agent-sandbox.instance\":\"" INSTANCE "\"}},"
		    TIME, bad[i]);
		assert_int_equal(docker_event_parse(line, (size_t)n, INSTANCE,
		    &ev), 1);
		assert_int_equal(ev.exit_code, 0);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accepted),
		cmocka_unit_test(test_not_ours),
		cmocka_unit_test(test_exit_codes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
