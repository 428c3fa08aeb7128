/*
 * managerd's destroy, get and list (REFERENCE-TESTS.md H 47, manager
 * parts), with the test playing apid and dockerd-proxy
 * (manager_fixture.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "log.h"
#include "manager_fixture.h"

/* --- H 47: destroy, get, list --------------------------------------------- */

static void
test_destroy(void **state)
{
	char			 id[SANDBOX_ID_LEN + 1], msg[64];
	struct sandbox_info	 info;
	uint32_t		 req, call;

	create_ok(0, id, sizeof(id));
	req = send_id(MSG_SANDBOX_GET, id);
	call = expect_proxy_id(MSG_DOCKER_STATE, id);
	state_reply(call, 1, 1);
	expect_info(req, &info);
	assert_string_equal(info.id, id);
	assert_true(info.running);
	sandbox_info_free(&info);

	destroy_ok(id);
	assert_false(record_exists(id));
	assert_int_equal(sandbox_count(), 0);
	snprintf(msg, sizeof(msg), "sandbox %s not found", id);
	req = send_id(MSG_SANDBOX_GET, id);
	expect_apid_error(req, ERR_NOT_FOUND, msg);
	req = send_id(MSG_SANDBOX_DELETE, id);
	expect_apid_error(req, ERR_NOT_FOUND, msg);
	no_proxy_message();
	req = send_id(MSG_SANDBOX_GET, "../../etc/passwd");
	expect_apid_error(req, ERR_NOT_FOUND,
	    "sandbox ../../etc/passwd not found");
}

static void
test_destroy_error_keeps_record(void **state)
{
	char		 id[SANDBOX_ID_LEN + 1];
	uint32_t	 req, call;

	create_ok(0, id, sizeof(id));
	req = send_id(MSG_SANDBOX_DELETE, id);
	call = expect_proxy_id(MSG_DOCKER_DESTROY, id);
	error_reply(call, ERR_BACKEND, "sandbox x: Docker said 500");
	expect_apid_error(req, ERR_BACKEND, "sandbox x: Docker said 500");
	assert_true(record_exists(id));
	assert_int_equal(sandbox_count(), 1);
	destroy_ok(id);
}

/* Two destroys of one sandbox: the second waits, then gets 404. */
static void
test_destroy_serialized(void **state)
{
	char		 id[SANDBOX_ID_LEN + 1], msg[64];
	uint32_t	 req1, req2, req3, call;

	create_ok(0, id, sizeof(id));
	req1 = send_id(MSG_SANDBOX_DELETE, id);
	call = expect_proxy_id(MSG_DOCKER_DESTROY, id);
	req2 = send_id(MSG_SANDBOX_DELETE, id);
	req3 = send_timeout(id, 100);
	no_proxy_message();
	no_apid_message();
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	snprintf(msg, sizeof(msg), "sandbox %s not found", id);
	expect_apid(req1, MSG_OK);
	expect_apid_error(req2, ERR_NOT_FOUND, msg);
	expect_apid_error(req3, ERR_NOT_FOUND, msg);
	no_proxy_message();
	assert_int_equal(sandbox_count(), 0);
}

/* A get answered after its sandbox was destroyed still has the data. */
static void
test_get_during_destroy(void **state)
{
	char			 id[SANDBOX_ID_LEN + 1];
	struct sandbox_info	 info;
	uint32_t		 get, del, dcall, scall;

	create_ok(0, id, sizeof(id));
	get = send_id(MSG_SANDBOX_GET, id);
	scall = expect_proxy_id(MSG_DOCKER_STATE, id);
	del = send_id(MSG_SANDBOX_DELETE, id);
	dcall = expect_proxy_id(MSG_DOCKER_DESTROY, id);
	from_proxy(MSG_DOCKER_DONE, dcall, NULL);
	expect_apid(del, MSG_OK);
	state_reply(scall, 0, 0);
	expect_info(get, &info);
	assert_string_equal(info.id, id);
	assert_false(info.running);
	sandbox_info_free(&info);
}

static void
test_list(void **state)
{
	char			 id[3][SANDBOX_ID_LEN + 1];
	struct sandbox_info	 info;
	uint32_t		 req, call;
	int			 i;

	/* created_at order, whatever the ids. */
	for (i = 0; i < 3; i++) {
		now += 1;
		create_ok(0, id[i], sizeof(id[i]));
	}
	req = send_sandbox_list(NULL);
	call = expect_proxy(MSG_DOCKER_LIST, NULL);
	list_item(call, id[2], 1, 1);
	list_item(call, id[0], 1, 0);
	list_item(call, "sb_0000000000000000", 1, 1);	/* not ours */
	list_item(call, "weird/label", 0, 0);
	no_apid_message();
	from_proxy(MSG_DOCKER_LIST_END, call, NULL);
	for (i = 0; i < 3; i++) {
		expect_info(req, &info);
		assert_string_equal(info.id, id[i]);
		assert_int_equal(info.running, i == 2);
		sandbox_info_free(&info);
	}
	expect_apid(req, MSG_SANDBOX_LIST_END);

	/* Docker down: that error only. */
	req = send_sandbox_list(NULL);
	call = expect_proxy(MSG_DOCKER_LIST, NULL);
	list_item(call, id[2], 1, 1);
	error_reply(call, ERR_BACKEND, "Docker is unreachable: refused");
	expect_apid_error(req, ERR_BACKEND, "Docker is unreachable: refused");
	no_apid_message();

	/* No sandboxes: just the end. */
	for (i = 0; i < 3; i++)
		destroy_ok(id[i]);
	req = send_sandbox_list(NULL);
	call = expect_proxy(MSG_DOCKER_LIST, NULL);
	from_proxy(MSG_DOCKER_LIST_END, call, NULL);
	expect_apid(req, MSG_SANDBOX_LIST_END);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f)	cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(test_destroy),
		T(test_destroy_error_keeps_record),
		T(test_destroy_serialized),
		T(test_get_during_destroy),
		T(test_list),
#undef T
	};

	log_init(LOG_TO_STDERR, LOG_LEVEL_WARN, "test_manager_destroy");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
