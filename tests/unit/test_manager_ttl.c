/*
 * Time to live in managerd (REFERENCE-TESTS.md H 48-49): the reaper's
 * timer and its retries, and the timeout request, which outlives a
 * restart.  The test plays apid and dockerd-proxy (manager_fixture.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>
#include <event2/event.h>

#include "log.h"
#include "manager_fixture.h"

/* --- H 48-49: TTL --------------------------------------------------------- */

static void
test_reaper(void **state)
{
	char			 s[SANDBOX_ID_LEN + 1], l[SANDBOX_ID_LEN + 1];
	struct sandbox_info	 info;
	double			 t0 = now;
	uint32_t		 req, call;

	assert_true(reaper_next() == -1);
	create_ok(1000, l, sizeof(l));
	assert_true(reaper_next() == t0 + 1000);
	create_ok(10, s, sizeof(s));
	/* The timer follows the next expiry, not a polling period. */
	assert_true(reaper_next() == t0 + 10);

	now += 9;
	reaper_run();
	no_proxy_message();
	now += 2;
	reaper_run();
	call = expect_proxy_id(MSG_DOCKER_DESTROY, s);
	no_proxy_message();
	/* While it goes, the timer waits for the next one, not for it. */
	assert_true(reaper_next() == t0 + 1000);
	/* A second run does not queue another destroy behind it. */
	reaper_run();
	no_proxy_message();
	assert_true(TAILQ_EMPTY(&sandbox_find(s)->ops));
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	no_apid_message();
	assert_false(record_exists(s));
	assert_true(record_exists(l));
	assert_true(reaper_next() == t0 + 1000);

	req = send_sandbox_list(NULL);
	call = expect_proxy(MSG_DOCKER_LIST, NULL);
	list_item(call, l, 1, 1);
	from_proxy(MSG_DOCKER_LIST_END, call, NULL);
	expect_info(req, &info);
	assert_string_equal(info.id, l);
	sandbox_info_free(&info);
	expect_apid(req, MSG_SANDBOX_LIST_END);
}

/* The timer is armed for real: once due, the event loop reaps. */
static void
test_reaper_timer_fires(void **state)
{
	char		 id[SANDBOX_ID_LEN + 1];
	uint32_t	 call;

	create_ok(1, id, sizeof(id));
	now += 1;
	reaper_schedule();	/* due now: the timer is set to 0 */
	assert_int_equal(event_base_loop(env->base, EVLOOP_ONCE), 0);
	call = expect_proxy_id(MSG_DOCKER_DESTROY, id);
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	assert_true(reaper_next() == -1);
}

/* A failed reap is tried again reap_interval_seconds later. */
static void
test_reaper_retries(void **state)
{
	char		 id[SANDBOX_ID_LEN + 1];
	uint32_t	 call;

	create_ok(5, id, sizeof(id));
	now += 6;
	reaper_run();
	call = expect_proxy_id(MSG_DOCKER_DESTROY, id);
	error_reply(call, ERR_BACKEND, "Docker is unreachable: gone");
	no_apid_message();
	assert_true(record_exists(id));
	assert_true(reaper_next() == now + 10.0);
	now += 5;
	reaper_run();
	no_proxy_message();
	now += 5;
	reaper_run();
	call = expect_proxy_id(MSG_DOCKER_DESTROY, id);
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	assert_int_equal(sandbox_count(), 0);
}

static void
test_timeout_extends_life(void **state)
{
	char			 id[SANDBOX_ID_LEN + 1];
	struct sandbox_info	 info;
	uint32_t		 req, call;

	create_ok(10, id, sizeof(id));
	now += 9;
	req = send_timeout(id, 100);
	call = expect_proxy_id(MSG_DOCKER_STATE, id);
	/* On disk before the answer. */
	assert_true(reaper_next() == now + 100);
	state_reply(call, 1, 1);
	expect_info(req, &info);
	assert_true(info.expires_at == now + 100);
	assert_true(info.running);
	sandbox_info_free(&info);
	now += 50;
	reaper_run();
	no_proxy_message();
	assert_int_equal(sandbox_count(), 1);

	/* The bound is checked before the sandbox's existence. */
	req = send_timeout("sb_nope", 86401);
	expect_apid_error(req, ERR_INVALID_REQUEST,
	    "timeout_seconds must be in [1, 86400]");
	req = send_timeout("sb_nope", 60);
	expect_apid_error(req, ERR_NOT_FOUND, "sandbox sb_nope not found");
	req = send_timeout(id, 0);
	expect_apid_error(req, ERR_INVALID_REQUEST,
	    "timeout_seconds must be in [1, 86400]");
	no_proxy_message();
}

/*
 * A reap that waited for the lock behind a timeout finds the sandbox no
 * longer expired: it must leave it alone, not destroy what the client was
 * just told lives on.
 */
static void
test_reap_rechecks_expiry_under_lock(void **state)
{
	char			 id[SANDBOX_ID_LEN + 1];
	struct sandbox_info	 info;
	uint32_t		 del, tmo, call;

	create_ok(10, id, sizeof(id));
	now += 11;
	/* A DELETE holds the lock; a timeout, then the reap wait for it. */
	del = send_id(MSG_SANDBOX_DELETE, id);
	call = expect_proxy_id(MSG_DOCKER_DESTROY, id);
	tmo = send_timeout(id, 100);
	reaper_run();
	no_proxy_message();
	error_reply(call, ERR_BACKEND, "Docker is unreachable: gone");
	expect_apid_error(del, ERR_BACKEND, "Docker is unreachable: gone");
	call = expect_proxy_id(MSG_DOCKER_STATE, id);
	state_reply(call, 1, 1);
	expect_info(tmo, &info);
	assert_true(info.expires_at == now + 100);
	sandbox_info_free(&info);
	/* The queued reap runs now and must see the new expiry. */
	no_proxy_message();
	assert_int_equal(sandbox_count(), 1);
	assert_true(record_exists(id));
	assert_true(reaper_next() == now + 100);
}

/* The new expiry survives a restart: it is what the record says. */
static void
record_expiry_cb(struct sandbox_record *rec, void *arg)
{
	*(double *)arg = rec->expires_at;
	sandbox_record_free(rec);
	free(rec);
}

static void
test_timeout_is_persisted(void **state)
{
	char			 id[SANDBOX_ID_LEN + 1];
	struct sandbox_info	 info;
	double			 expires = 0;
	uint32_t		 req, call;

	create_ok(10, id, sizeof(id));
	req = send_timeout(id, 3600);
	call = expect_proxy_id(MSG_DOCKER_STATE, id);
	assert_int_equal(store_sandbox_load_all(env->datadir_fd,
	    record_expiry_cb, &expires), 0);
	assert_true(expires == now + 3600);
	/* Docker's state is unknown, the new expiry holds all the same. */
	error_reply(call, ERR_BACKEND, "Docker is unreachable: gone");
	expect_apid_error(req, ERR_BACKEND, "Docker is unreachable: gone");
	req = send_id(MSG_SANDBOX_GET, id);
	call = expect_proxy_id(MSG_DOCKER_STATE, id);
	state_reply(call, 1, 0);
	expect_info(req, &info);
	assert_true(info.expires_at == now + 3600);
	assert_false(info.running);
	sandbox_info_free(&info);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f)	cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(test_reaper),
		T(test_reaper_timer_fires),
		T(test_reaper_retries),
		T(test_timeout_extends_life),
		T(test_timeout_is_persisted),
		T(test_reap_rechecks_expiry_under_lock),
#undef T
	};

	log_init(LOG_TO_STDERR, LOG_LEVEL_WARN, "test_manager_ttl");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
