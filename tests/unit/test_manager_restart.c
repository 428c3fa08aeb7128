/*
 * managerd when a child dies and comes back (children.c's hooks, the
 * restart budget in restart.c): apid's requests become orphans whose
 * replies go nowhere (and never to the next apid, which numbers its
 * requests from the start again), what served only the dead client stops,
 * what was acknowledged or in flight stays; the proxy's calls fail with
 * 502, new ones too until it is back, the records stay, and the creations
 * it cut off are destroyed once it is back, nothing else.  The test plays
 * both children (manager_fixture.c).  Snapshots and rollbacks cut off by
 * apid's death: test_manager_snapshot.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "manager_fixture.h"

/* --- the restart budget ----------------------------------------------------- */

static void
test_restart_budget(void **state)
{
	struct restart_budget	 b;
	int			 i;

	(void)state;
	memset(&b, 0, sizeof(b));
	for (i = 0; i < RESTART_MAX; i++)
		assert_true(restart_allowed(&b, 100.0 + i));
	/* A sixth within the window of the first is refused, uncounted. */
	assert_false(restart_allowed(&b, 105.0));
	assert_false(restart_allowed(&b, 100.0 + RESTART_WINDOW - 0.1));
	/* The window slides: the first has left it. */
	assert_true(restart_allowed(&b, 100.0 + RESTART_WINDOW));
	/* Now the oldest is the second (101): not yet. */
	assert_false(restart_allowed(&b, 100.5 + RESTART_WINDOW));
	assert_true(restart_allowed(&b, 101.0 + RESTART_WINDOW));
	/* Long quiet: the whole budget again. */
	for (i = 0; i < RESTART_MAX; i++)
		assert_true(restart_allowed(&b, 1000.0 + i));
	assert_false(restart_allowed(&b, 1000.0 + RESTART_MAX));
}

/* --- apid dies ---------------------------------------------------------------- */

/* A create already with the proxy completes, and its record stays. */
static void
test_apid_death_keeps_a_create_in_flight(void **state)
{
	struct docker_create	 dc;
	struct sandbox_info	 info;
	uint32_t		 req, call;

	(void)state;
	req = send_create_ttl(0);
	call = expect_create(&dc);
	apid_dies();
	apid_back();
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	/* Its client is gone: no answer, to the new apid least of all. */
	no_apid_message();
	assert_true(record_exists(dc.id));
	assert_non_null(sandbox_find(dc.id));
	/* The new apid numbers from where the old one did: no confusion. */
	next_apid_id = req;
	assert_int_equal(send_id(MSG_SANDBOX_GET, dc.id), req);
	call = expect_proxy_id(MSG_DOCKER_STATE, dc.id);
	state_reply(call, 1, 1);
	expect_info(req, &info);
	assert_string_equal(info.id, dc.id);
	sandbox_info_free(&info);
	destroy_ok(dc.id);
	docker_create_free(&dc);
	assert_int_equal(apid_request_count(), 0);
}

/* A command for a client that is gone is cancelled. */
static void
test_apid_death_cancels_execs(void **state)
{
	struct exec_request	 e;
	struct exec_sent	 x;
	struct exec_exit	 ex;
	struct msgw		 w;
	char			 sb[SANDBOX_ID_LEN + 1];

	(void)state;
	create_ok(0, sb, sizeof(sb));
	exec_request_init(&e, sb);
	exec_set_shell(&e, "sleep 600");
	exec_sent(&e, &x);
	from_proxy(MSG_DOCKER_EXEC_STARTED, x.call, NULL);
	expect_apid(x.req, MSG_EXEC_STARTED);
	apid_dies();
	assert_int_equal(expect_proxy(MSG_DOCKER_EXEC_CANCEL, NULL), x.call);
	apid_back();
	/* The proxy killed it; the exit goes nowhere. */
	ex.exit_code = 137;
	ex.timed_out = 0;
	msgw_init(&w);
	msg_put_exec_exit(&w, &ex);
	from_proxy(MSG_DOCKER_EXEC_EXIT, x.call, &w);
	no_apid_message();
	assert_int_equal(exec_count(), 0);
	assert_int_equal(apid_request_count(), 0);
	docker_exec_free(&x.dx);
	close(x.passed);
	close(x.rfd);
	destroy_ok(sb);
}

/* --- the proxy dies ----------------------------------------------------------- */

static void
test_proxy_death_fails_calls_and_keeps_records(void **state)
{
	struct docker_create	 dc;
	uint32_t		 req, call, h;
	char			 sb[SANDBOX_ID_LEN + 1];

	(void)state;
	create_orphan_delays[0] = create_orphan_delays[1] = 0;
	create_ok(0, sb, sizeof(sb));
	req = send_create_ttl(0);
	call = expect_create(&dc);
	proxy_dies();
	/* From the event loop, not from inside the death. */
	no_apid_message();
	run_deferred();
	expect_apid_error(req, ERR_BACKEND, "dockerd-proxy restarted");
	/* Until it is back, a request fails at once. */
	h = from_apid(MSG_HEALTH_REQUEST, -1, NULL);
	run_deferred();
	expect_apid_error(h, ERR_BACKEND, "dockerd-proxy is restarting");
	no_proxy_message();
	/* A late reply of the dead proxy's is nobody's now. */
	(void)call;
	/* The record stays; nothing was reconciled or destroyed. */
	assert_true(record_exists(sb));
	assert_non_null(sandbox_find(sb));
	assert_false(record_exists(dc.id));

	/* Back: it follows Docker's events again; the cut-off creation
	 * is destroyed, nothing else. */
	proxy_back();
	(void)expect_proxy(MSG_DOCKER_EVENTS_FOLLOW, NULL);
	no_proxy_message();
	run_deferred();
	from_proxy(MSG_DOCKER_DONE, expect_proxy_id(MSG_DOCKER_DESTROY,
	    dc.id), NULL);
	run_deferred();
	from_proxy(MSG_DOCKER_DONE, expect_proxy_id(MSG_DOCKER_DESTROY,
	    dc.id), NULL);
	run_deferred();
	no_proxy_message();
	no_apid_message();
	assert_true(record_exists(sb));
	destroy_ok(sb);
	docker_create_free(&dc);
}

/* A cut-off creation's destroy that the next death cuts off goes on. */
static void
test_proxy_dies_again(void **state)
{
	struct docker_create	 dc;
	uint32_t		 req;

	(void)state;
	create_orphan_delays[0] = create_orphan_delays[1] = 0;
	req = send_create_ttl(0);
	(void)expect_create(&dc);
	proxy_dies();
	run_deferred();
	expect_apid_error(req, ERR_BACKEND, "dockerd-proxy restarted");
	proxy_back();
	(void)expect_proxy(MSG_DOCKER_EVENTS_FOLLOW, NULL);
	run_deferred();
	(void)expect_proxy_id(MSG_DOCKER_DESTROY, dc.id);
	proxy_dies();
	run_deferred();
	proxy_back();
	(void)expect_proxy(MSG_DOCKER_EVENTS_FOLLOW, NULL);
	run_deferred();
	from_proxy(MSG_DOCKER_DONE, expect_proxy_id(MSG_DOCKER_DESTROY,
	    dc.id), NULL);
	run_deferred();
	from_proxy(MSG_DOCKER_DONE, expect_proxy_id(MSG_DOCKER_DESTROY,
	    dc.id), NULL);
	run_deferred();
	no_proxy_message();
	docker_create_free(&dc);
}

int
main(void)
{
	const struct CMUnitTest	 tests[] = {
		cmocka_unit_test(test_restart_budget),
		cmocka_unit_test_setup_teardown(
		    test_apid_death_keeps_a_create_in_flight, setup, teardown),
		cmocka_unit_test_setup_teardown(test_apid_death_cancels_execs,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_proxy_death_fails_calls_and_keeps_records, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_proxy_dies_again, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
