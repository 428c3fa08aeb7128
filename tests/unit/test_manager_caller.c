/*
 * managerd's callers (apid_request.c): every request comes right after
 * its MSG_CALLER, keeps it while it lives (apid_request_caller), and
 * drops it with its last reply.  apid breaking that order is lying.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "assert_fatal.h"
#include "keys_file.h"
#include "log.h"
#include "manager_fixture.h"

static char	 c_name[] = "ci", c_tenant[] = "team-a",
		 c_addr[] = "192.0.2.7:5555",
		 c_route[] = "POST /v1/sandboxes";

/* The create waits for the proxy: its caller is there meanwhile. */
static void
test_request_keeps_its_caller(void **state)
{
	struct caller		 c = { c_name, c_tenant, 0, c_addr, c_route };
	const struct caller	*got;
	struct sandbox_info	 info;
	uint32_t		 req, id, call;

	(void)state;
	test_caller = c;
	req = send_create_ttl(0);
	assert_int_not_equal(id = apid_request_find(req), 0);
	assert_non_null(got = apid_request_caller(id));
	assert_string_equal(got->key_name, "ci");
	assert_string_equal(got->tenant, "team-a");
	assert_int_equal(got->admin, 0);
	assert_string_equal(got->client_addr, "192.0.2.7:5555");
	assert_string_equal(got->route, "POST /v1/sandboxes");
	call = expect_create(NULL);
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	expect_info(req, &info);
	sandbox_info_free(&info);
	/* The last reply ended it, and its caller with it. */
	assert_null(apid_request_caller(id));
	assert_int_equal(apid_request_find(req), 0);
}

/* Each request has its own, also when two are open at once. */
static void
test_two_requests_two_callers(void **state)
{
	static char		 other[] = "team-b";
	struct caller		 a = { c_name, c_tenant, 0, c_addr, c_route };
	struct caller		 b = { c_name, other, 1, c_addr, c_route };
	uint32_t		 ra, rb, ca, cb;
	struct sandbox_info	 info;

	(void)state;
	test_caller = a;
	ra = send_create_ttl(0);
	ca = expect_create(NULL);
	test_caller = b;
	rb = send_create_ttl(0);
	cb = expect_create(NULL);
	assert_string_equal(apid_request_caller(apid_request_find(ra))->tenant,
	    "team-a");
	assert_string_equal(apid_request_caller(apid_request_find(rb))->tenant,
	    "team-b");
	assert_int_equal(apid_request_caller(apid_request_find(rb))->admin, 1);
	from_proxy(MSG_DOCKER_DONE, ca, NULL);
	expect_info(ra, &info);
	sandbox_info_free(&info);
	from_proxy(MSG_DOCKER_DONE, cb, NULL);
	expect_info(rb, &info);
	sandbox_info_free(&info);
}

/* A caller whose request never came goes with its apid. */
static void
test_apid_death_drops_a_waiting_caller(void **state)
{
	struct sandbox_info	 info;
	uint32_t		 req, call;

	(void)state;
	send_caller(next_apid_id, &test_caller);
	apid_dies();
	apid_back();
	run_deferred();
	req = send_create_ttl(0);
	call = expect_create(NULL);
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	expect_info(req, &info);
	sandbox_info_free(&info);
}

/* --- lies --------------------------------------------------------------- */

static void
dispatch_raw(uint32_t type, uint32_t peerid, struct msgw *w)
{
	struct imsg	 imsg;

	fake_imsg(&imsg, type, peerid, -1, w);
	dispatch_apid(&env->apid_peer, &imsg);
	imsg_free(&imsg);
}

static void
lie_request_without_caller(void)
{
	dispatch_raw(MSG_SANDBOX_LIST, next_apid_id++, NULL);
}

static void
lie_caller_for_another_request(void)
{
	send_caller(7, &test_caller);
	dispatch_raw(MSG_SANDBOX_LIST, 8, NULL);
}

static void
lie_two_callers(void)
{
	send_caller(7, &test_caller);
	send_caller(7, &test_caller);
}

/* A follow-up is no request: it cannot come between the two. */
static void
lie_caller_then_follow_up(void)
{
	send_caller(7, &test_caller);
	dispatch_raw(MSG_EXEC_CANCEL, 3, NULL);
}

static void
lie_caller_malformed(void)
{
	struct msgw	 w;

	msgw_init(&w);
	msgw_str(&w, "k");
	dispatch_raw(MSG_CALLER, 7, &w);
}

static void
lie_caller_with_admin_2(void)
{
	struct msgw	 w;

	msgw_init(&w);
	msgw_str(&w, "k");
	msgw_str(&w, "t");
	msgw_u8(&w, 2);
	msgw_str(&w, "a");
	msgw_str(&w, "r");
	dispatch_raw(MSG_CALLER, 7, &w);
}

/* A caller managerd could not keep in a record or a log line as it is. */
static void
send_odd_caller(const char *name, const char *tenant, const char *addr)
{
	struct msgw	 w;

	msgw_init(&w);
	msgw_str(&w, name);
	msgw_str(&w, tenant);
	msgw_u8(&w, 0);
	msgw_str(&w, addr);
	msgw_str(&w, "POST /v1/sandboxes");
	dispatch_raw(MSG_CALLER, 7, &w);
}

static void
lie_caller_tenant_path(void)
{
	send_odd_caller("ci", "../x", "127.0.0.1:1");
}

static void
lie_caller_name_newline(void)
{
	send_odd_caller("ci\nforged line", "team-a", "127.0.0.1:1");
}

static void
lie_caller_addr_utf8(void)
{
	send_odd_caller("ci", "team-a", "caf\xc3\xa9:1");
}

static void
lie_caller_tenant_65(void)
{
	char	 t[66];

	memset(t, 't', 65);
	t[65] = '\0';
	send_odd_caller("ci", t, "127.0.0.1:1");
}

static void
test_lies_are_fatal(void **state)
{
	(void)state;
	assert_fatal(lie_request_without_caller,
	    "bad SANDBOX_LIST message from apid: a request without its "
	    "caller");
	assert_fatal(lie_caller_for_another_request,
	    "bad SANDBOX_LIST message from apid: its caller was for another "
	    "request");
	assert_fatal(lie_two_callers,
	    "bad CALLER message from apid: two callers in a row");
	assert_fatal(lie_caller_then_follow_up,
	    "bad EXEC_CANCEL message from apid: a caller not followed by its "
	    "request");
	assert_fatal(lie_caller_malformed,
	    "bad CALLER message from apid: malformed caller");
	assert_fatal(lie_caller_with_admin_2,
	    "bad CALLER message from apid: malformed caller");
	assert_fatal(lie_caller_tenant_path,
	    "bad CALLER message from apid: malformed caller");
	assert_fatal(lie_caller_name_newline,
	    "bad CALLER message from apid: malformed caller");
	assert_fatal(lie_caller_addr_utf8,
	    "bad CALLER message from apid: malformed caller");
	assert_fatal(lie_caller_tenant_65,
	    "bad CALLER message from apid: malformed caller");
}

/* "ci" of team-a, without quotas, in managerd's table. */
static int
setup_keys(void **state)
{
	static const char	 text[] = "{\"keys\": [{\"name\": \"ci\", "
	    "\"tenant\": \"team-a\", \"sha256\": \""
	    "0000000000000000000000000000000000000000000000000000000000000001"
	    "\"}]}";
	struct keys_table	 t;
	char			 err[256];

	setup(state);
	assert_int_equal(keys_file_parse(text, strlen(text), &t, err,
	    sizeof(err)), 0);
	keys_startup(&t);
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f)	cmocka_unit_test_setup_teardown(f, setup_keys, teardown)
		T(test_request_keeps_its_caller),
		T(test_two_requests_two_callers),
		T(test_apid_death_drops_a_waiting_caller),
		T(test_lies_are_fatal),
#undef T
	};

	log_init(LOG_TO_STDERR, LOG_LEVEL_WARN, "test_manager_caller");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
