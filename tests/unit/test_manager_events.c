/*
 * managerd's sandbox states from Docker's event stream (managerd/events.c),
 * with the test playing apid and dockerd-proxy (manager_fixture.c): the
 * stock-taking after UP, gets and lists from memory while it is live and
 * from Docker otherwise, the reasons, an older container's late events,
 * and a proxy whose events lie.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "log.h"
#include "manager_fixture.h"

static void
event(const char *id, int action, int64_t time_ns, int64_t exit_code)
{
	struct docker_event	 ev;
	struct msgw		 w;

	memset(&ev, 0, sizeof(ev));
	strlcpy(ev.id, id, sizeof(ev.id));
	ev.action = action;
	ev.time_ns = time_ns;
	ev.exit_code = exit_code;
	msgw_init(&w);
	msg_put_docker_event(&w, &ev);
	from_proxy(MSG_DOCKER_EVENT, 0, &w);
}

/* UP, and the stock-taking list answered with these states. */
static void
go_live(const char *id, int container, int running)
{
	uint32_t	 call;

	from_proxy(MSG_DOCKER_EVENTS_UP, 0, NULL);
	call = expect_proxy(MSG_DOCKER_LIST, NULL);
	if (id != NULL)
		list_item(call, id, container, running);
	from_proxy(MSG_DOCKER_LIST_END, call, NULL);
	assert_true(events_live());
}

/* A get answered at once, from memory. */
static void
get_is(const char *id, int running, int reason)
{
	struct sandbox_info	 info;
	uint32_t		 req;

	req = send_id(MSG_SANDBOX_GET, id);
	no_proxy_message();
	expect_info(req, &info);
	assert_int_equal(info.running, running);
	assert_int_equal(info.reason, reason);
	sandbox_info_free(&info);
}

static int
setup_events(void **state)
{
	setup(state);
	events_down();
	return 0;
}

static void
test_live_states(void **state)
{
	char			 id[SANDBOX_ID_LEN + 1];
	struct sandbox_info	 info;
	uint32_t		 req;
	int64_t			 t;

	create_ok(0, id, sizeof(id));
	/* Not live: asked of Docker, which says why it does not run. */
	req = send_id(MSG_SANDBOX_GET, id);
	state_reply(expect_proxy_id(MSG_DOCKER_STATE, id), 1, 0);
	expect_info(req, &info);
	assert_false(info.running);
	assert_int_equal(info.reason, SANDBOX_REASON_EXITED);
	sandbox_info_free(&info);

	go_live(id, 1, 1);
	get_is(id, 1, SANDBOX_REASON_NONE);
	t = events_now_ns() + 1000;
	event(id, DOCKER_EVENT_DIE, t, 137);
	get_is(id, 0, SANDBOX_REASON_EXITED);
	event(id, DOCKER_EVENT_START, t + 1, 0);
	get_is(id, 1, SANDBOX_REASON_NONE);
	/* An OOM kill that leaves it running is not a reason. */
	event(id, DOCKER_EVENT_OOM, t + 2, 0);
	get_is(id, 1, SANDBOX_REASON_NONE);
	event(id, DOCKER_EVENT_DIE, t + 3, 137);
	get_is(id, 0, SANDBOX_REASON_OOM_KILLED);
	event(id, DOCKER_EVENT_DESTROY, t + 4, 0);
	get_is(id, 0, SANDBOX_REASON_REMOVED);
	/* A start forgets the OOM kill. */
	event(id, DOCKER_EVENT_START, t + 5, 0);
	event(id, DOCKER_EVENT_DIE, t + 6, 0);
	get_is(id, 0, SANDBOX_REASON_EXITED);
	/* Events of sandboxes managerd does not have are nothing. */
	event("sb_0000000000000000", DOCKER_EVENT_DIE, t, 1);
	no_apid_message();
	no_proxy_message();

	/* DOWN: Docker is asked again. */
	from_proxy(MSG_DOCKER_EVENTS_DOWN, 0, NULL);
	assert_false(events_live());
	req = send_id(MSG_SANDBOX_GET, id);
	state_reply(expect_proxy_id(MSG_DOCKER_STATE, id), 0, 0);
	expect_info(req, &info);
	assert_int_equal(info.reason, SANDBOX_REASON_REMOVED);
	sandbox_info_free(&info);
	destroy_ok(id);
}

/* The list answers from memory while live, with each one's reason. */
static void
test_list_from_memory(void **state)
{
	char			 id[2][SANDBOX_ID_LEN + 1];
	struct sandbox_info	 info;
	uint32_t		 req;
	int			 i;

	for (i = 0; i < 2; i++) {
		now += 1;
		create_ok(0, id[i], sizeof(id[i]));
	}
	/* The stock-taking saw only the first; the second has none. */
	go_live(id[0], 1, 1);
	req = send_sandbox_list(NULL);
	no_proxy_message();
	for (i = 0; i < 2; i++) {
		expect_info(req, &info);
		assert_string_equal(info.id, id[i]);
		assert_int_equal(info.running, i == 0);
		assert_int_equal(info.reason, i == 0 ? SANDBOX_REASON_NONE :
		    SANDBOX_REASON_REMOVED);
		sandbox_info_free(&info);
	}
	expect_apid(req, MSG_SANDBOX_LIST_END);
	/* A new sandbox is running, known from its create. */
	create_ok(0, id[1], sizeof(id[1]));
	get_is(id[1], 1, SANDBOX_REASON_NONE);
	for (i = 0; i < 2; i++)
		destroy_ok(id[i]);
	create_ok(0, id[0], sizeof(id[0]));
	destroy_ok(id[0]);
}

/*
 * A container's late events, from before its sandbox asked for a new
 * one (a rollback's replaced container), are nothing.
 */
static void
test_older_container_ignored(void **state)
{
	char		 id[SANDBOX_ID_LEN + 1];
	int64_t		 before;

	before = events_now_ns();
	go_live(NULL, 0, 0);
	create_ok(0, id, sizeof(id));
	event(id, DOCKER_EVENT_DIE, before, 137);
	event(id, DOCKER_EVENT_DESTROY, before + 1, 0);
	get_is(id, 1, SANDBOX_REASON_NONE);
	destroy_ok(id);
}

/* An UP's list that a DOWN overtook makes nothing live. */
static void
test_stale_stock(void **state)
{
	char			 id[SANDBOX_ID_LEN + 1];
	struct sandbox_info	 info;
	uint32_t		 call, req;

	create_ok(0, id, sizeof(id));
	from_proxy(MSG_DOCKER_EVENTS_UP, 0, NULL);
	call = expect_proxy(MSG_DOCKER_LIST, NULL);
	from_proxy(MSG_DOCKER_EVENTS_DOWN, 0, NULL);
	list_item(call, id, 1, 1);
	from_proxy(MSG_DOCKER_LIST_END, call, NULL);
	assert_false(events_live());
	req = send_id(MSG_SANDBOX_GET, id);
	state_reply(expect_proxy_id(MSG_DOCKER_STATE, id), 1, 1);
	expect_info(req, &info);
	sandbox_info_free(&info);
	/* A failed stock-taking leaves it asking Docker. */
	from_proxy(MSG_DOCKER_EVENTS_UP, 0, NULL);
	error_reply(expect_proxy(MSG_DOCKER_LIST, NULL), ERR_BACKEND,
	    "Docker is unreachable");
	assert_false(events_live());
	destroy_ok(id);
}

/* --- a lying proxy -------------------------------------------------------- */

static struct docker_event	 lie;

static void
lie_event(void)
{
	struct msgw	 w;

	msgw_init(&w);
	msgw_str(&w, lie.id);
	msgw_u8(&w, (uint8_t)lie.action);
	msgw_i64(&w, lie.time_ns);
	msgw_i64(&w, lie.exit_code);
	from_proxy(MSG_DOCKER_EVENT, 0, &w);
}

static void
lie_event_with_call_id(void)
{
	from_proxy(MSG_DOCKER_EVENTS_DOWN, 7, NULL);
}

static void
lie_up_with_payload(void)
{
	struct msgw	 w;

	msgw_init(&w);
	msgw_u8(&w, 0);
	from_proxy(MSG_DOCKER_EVENTS_UP, 0, &w);
}

static void
test_event_lies(void **state)
{
	static const struct docker_event lies[] = {
		{ "sb_../../etc/pass", DOCKER_EVENT_DIE, 1, 0 },
		{ "sb_0000000000000000", 0, 1, 0 },
		{ "sb_0000000000000000", DOCKER_EVENT_ACTION_MAX + 1, 1, 0 },
		{ "sb_0000000000000000", DOCKER_EVENT_DIE, 0, 0 },
		{ "sb_0000000000000000", DOCKER_EVENT_DIE, -5, 0 },
		{ "sb_0000000000000000", DOCKER_EVENT_DIE, 1, 256 },
		{ "sb_0000000000000000", DOCKER_EVENT_DIE, 1, -1 },
		{ "sb_0000000000000000", DOCKER_EVENT_START, 1, 3 },
		{ "", DOCKER_EVENT_DIE, 1, 0 },
	};
	size_t	 i;

	for (i = 0; i < sizeof(lies) / sizeof(lies[0]); i++) {
		lie = lies[i];
		expect_fatal(lie_event, "bad DOCKER_EVENT message from "
		    "dockerd-proxy: malformed event");
	}
	expect_fatal(lie_event_with_call_id, "bad DOCKER_EVENTS_DOWN message "
	    "from dockerd-proxy: an event with a call's id");
	expect_fatal(lie_up_with_payload, "bad DOCKER_EVENTS_UP message from "
	    "dockerd-proxy: unexpected payload");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup_events, teardown)
		T(test_live_states),
		T(test_list_from_memory),
		T(test_older_container_ignored),
		T(test_stale_stock),
		T(test_event_lies),
#undef T
	};

	log_init(LOG_TO_STDERR, LOG_LEVEL_WARN, "test_manager_events");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
