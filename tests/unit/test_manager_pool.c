/*
 * managerd's warm pool (managerd/pool.c), with the test playing apid and
 * dockerd-proxy (manager_fixture.c): the fill, a claim with and without
 * the update call, a claim whose update Docker refused (its container
 * destroyed, the error answered, the slot back), a pooled container that
 * died, and no claim while Docker's events are not followed.  One test:
 * the pool's state lives for the process.
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

#define IMAGE	"agent-sandbox/busybox:test"

static char	 pool_setting[] = "AGENT_SANDBOX_WARM_POOL=" IMAGE "=1";

static void
go_live(void)
{
	uint32_t	 call;

	from_proxy(MSG_DOCKER_EVENTS_UP, 0, NULL);
	call = expect_proxy(MSG_DOCKER_LIST, NULL);
	from_proxy(MSG_DOCKER_LIST_END, call, NULL);
	assert_true(events_live());
}

/* The pool's next fill: answered, so one more is ready. */
static void
filled(char *id, size_t len)
{
	struct docker_create	 dc;
	uint32_t		 call;
	size_t			 before = pool_ready();

	call = expect_create(&dc);
	assert_string_equal(dc.spec.image, IMAGE);
	assert_false(dc.spec.network);
	assert_true(dc.spec.read_only_rootfs);
	assert_int_equal(dc.spec.env.count, 0);
	strlcpy(id, dc.id, len);
	docker_create_free(&dc);
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	assert_int_equal(pool_ready(), before + 1);
}

static uint32_t
send_pool_create(double cpus)
{
	struct create_request	 c;

	create_request_init(&c);
	c.image = strdup(IMAGE);
	assert_non_null(c.image);
	if (cpus > 0) {
		c.has_cpus = 1;
		c.cpus = cpus;
	}
	assert_int_equal(env_list_add(&c.env, "GREETING", "hi"), 0);
	return send_create(&c);
}

static void
test_pool(void **state)
{
	char			 pooled[SANDBOX_ID_LEN + 1], next[32], err[256];
	struct sandbox_info	 info;
	struct docker_create	 dc;
	struct docker_event	 ev;
	struct imsg		 imsg;
	struct msgw		 w;
	uint32_t		 req, call;

	assert_int_equal(pool_init(err, sizeof(err)), 0);
	go_live();
	pool_start();
	filled(pooled, sizeof(pooled));
	no_proxy_message();		/* one is all it keeps */
	assert_int_equal(quota_pending(), 1);	/* its slot */

	/* The defaults but for the env: no update, answered at once. */
	req = send_pool_create(0);
	filled(next, sizeof(next));		/* the refill goes first */
	expect_info(req, &info);
	assert_string_equal(info.id, pooled);
	assert_true(info.running);
	sandbox_info_free(&info);
	assert_true(record_exists(pooled));
	assert_true(sandbox_find(pooled)->rec.pooled);
	assert_int_equal(quota_pending(), 1);	/* the refill's */
	destroy_ok(pooled);
	strlcpy(pooled, next, sizeof(pooled));

	/* Other limits: the update call; Docker refuses it. */
	req = send_pool_create(0.5);
	filled(next, sizeof(next));
	call = expect_proxy(MSG_DOCKER_UPDATE, &imsg);
	assert_int_equal(msg_get_docker_create(&imsg, &dc), 0);
	imsg_free(&imsg);
	assert_string_equal(dc.id, pooled);
	assert_true(dc.spec.cpus == 0.5);
	assert_int_equal(dc.spec.env.count, 1);
	docker_create_free(&dc);
	error_reply(call, ERR_INVALID_REQUEST, "update sandbox: no");
	from_proxy(MSG_DOCKER_DONE, expect_proxy_id(MSG_DOCKER_DESTROY,
	    pooled), NULL);
	expect_apid_error(req, ERR_INVALID_REQUEST, "update sandbox: no");
	assert_false(record_exists(pooled));
	assert_null(sandbox_find(pooled));
	assert_int_equal(quota_pending(), 1);

	/* A pooled container that died goes, and is made again. */
	memset(&ev, 0, sizeof(ev));
	strlcpy(ev.id, next, sizeof(ev.id));
	ev.action = DOCKER_EVENT_DIE;
	ev.time_ns = events_now_ns();
	msgw_init(&w);
	msg_put_docker_event(&w, &ev);
	from_proxy(MSG_DOCKER_EVENT, 0, &w);
	from_proxy(MSG_DOCKER_DONE, expect_proxy_id(MSG_DOCKER_DESTROY, next),
	    NULL);
	assert_int_equal(pool_ready(), 0);
	filled(next, sizeof(next));

	/* Without the events, a create takes the usual path. */
	from_proxy(MSG_DOCKER_EVENTS_DOWN, 0, NULL);
	req = send_pool_create(0);
	call = expect_create(&dc);
	assert_string_not_equal(dc.id, next);
	assert_int_equal(dc.spec.env.count, 1);
	docker_create_free(&dc);
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	expect_info(req, &info);
	assert_false(sandbox_find(info.id)->rec.pooled);
	destroy_ok(info.id);
	sandbox_info_free(&info);
	assert_int_equal(pool_ready(), 1);
}

int
main(void)
{
	char		*settings[] = { pool_setting, NULL };
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_pool, teardown),
	};

	log_init(LOG_TO_STDERR, LOG_LEVEL_WARN, "test_manager_pool");
	setup_env(settings);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
