/*
 * Tenants in managerd (tenant.c): another tenant's sandbox is answered
 * as one that does not exist, on every kind of lookup; admins see all;
 * lists are filtered; quotas count the tenant's sandboxes, those being
 * created too; records keep their tenant, and records without one read
 * as "".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "keys_file.h"
#include "log.h"
#include "manager_fixture.h"

static char	 n_a[] = "a", n_a2[] = "a2", n_b[] = "b", n_ops[] = "ops",
		 t_a[] = "team-a", t_b[] = "team-b", t_ops[] = "ops",
		 addr[] = "192.0.2.1:1", route[] = "POST /test";
static struct caller	 alice = { n_a, t_a, 0, addr, route };
static struct caller	 alice2 = { n_a2, t_a, 0, addr, route };
static struct caller	 bob = { n_b, t_b, 0, addr, route };
static struct caller	 ops = { n_ops, t_ops, 1, addr, route };

/* "a" may have 1 sandbox and 1 cpu; "a2" 2 sandboxes; others none. */
static int
setup_keys(void **state)
{
	static const char	 text[] = "{\"keys\": ["
	    "{\"name\": \"a\", \"tenant\": \"team-a\", \"sha256\": \""
	    "0000000000000000000000000000000000000000000000000000000000000001\","
	    " \"quotas\": {\"sandboxes\": 1, \"cpus\": 1}},"
	    "{\"name\": \"a2\", \"tenant\": \"team-a\", \"sha256\": \""
	    "0000000000000000000000000000000000000000000000000000000000000002\","
	    " \"quotas\": {\"sandboxes\": 2}},"
	    "{\"name\": \"b\", \"tenant\": \"team-b\", \"sha256\": \""
	    "0000000000000000000000000000000000000000000000000000000000000003\"},"
	    "{\"name\": \"ops\", \"tenant\": \"ops\", \"admin\": true, "
	    "\"sha256\": \""
	    "0000000000000000000000000000000000000000000000000000000000000004\"}"
	    "]}";
	struct keys_table	 t;
	char			 err[256];

	setup(state);
	assert_int_equal(keys_file_parse(text, strlen(text), &t, err,
	    sizeof(err)), 0);
	keys_startup(&t);
	return 0;
}

static void
create_as(const struct caller *c, char *id, size_t len)
{
	test_caller = *c;
	create_ok(0, id, len);
}

static void
get_ok(const char *id)
{
	struct sandbox_info	 info;
	uint32_t		 req, call;

	req = send_id(MSG_SANDBOX_GET, id);
	call = expect_proxy_id(MSG_DOCKER_STATE, id);
	state_reply(call, 1, 1);
	expect_info(req, &info);
	sandbox_info_free(&info);
}

static void
test_visibility(void **state)
{
	char		 id[SANDBOX_ID_LEN + 1], text[128];
	uint32_t	 req;

	(void)state;
	create_as(&alice, id, sizeof(id));
	snprintf(text, sizeof(text), "sandbox %s not found", id);
	test_caller = bob;
	req = send_id(MSG_SANDBOX_GET, id);
	expect_apid_error(req, ERR_NOT_FOUND, text);
	req = send_id(MSG_SANDBOX_DELETE, id);
	expect_apid_error(req, ERR_NOT_FOUND, text);
	req = send_timeout(id, 60);
	expect_apid_error(req, ERR_NOT_FOUND, text);
	no_proxy_message();
	assert_true(record_exists(id));
	/* The same tenant's other key, and an admin, see it. */
	test_caller = alice2;
	get_ok(id);
	test_caller = ops;
	get_ok(id);
	destroy_ok(id);
}

/* A process is its sandbox's: another tenant's is the sandbox's 404. */
static void
test_process_lookup(void **state)
{
	char			 id[SANDBOX_ID_LEN + 1], text[128];
	struct process_ref	 ref;
	struct msgw		 w;
	uint32_t		 req;

	(void)state;
	create_as(&alice, id, sizeof(id));
	snprintf(text, sizeof(text), "sandbox %s not found", id);
	test_caller = bob;
	ref.sandbox_id = id;
	ref.process_id = (char *)(uintptr_t)"proc_0000000000000000";
	msgw_init(&w);
	msg_put_process_ref(&w, &ref);
	req = from_apid(MSG_PROCESS_GET, -1, &w);
	expect_apid_error(req, ERR_NOT_FOUND, text);
	req = send_id(MSG_PROCESS_LIST, id);
	expect_apid_error(req, ERR_NOT_FOUND, text);
	test_caller = alice;
	destroy_ok(id);
}

static void
test_quota_counts_creations_in_flight(void **state)
{
	char			 id[SANDBOX_ID_LEN + 1];
	struct sandbox_info	 info;
	uint32_t		 r1, r2, call;

	(void)state;
	test_caller = alice;
	r1 = send_create_ttl(0);
	call = expect_create(NULL);
	/* The first is still with the proxy: it counts already. */
	r2 = send_create_ttl(0);
	expect_apid_error(r2, ERR_QUOTA_EXCEEDED, "quota exceeded: the "
	    "tenant has 1 sandboxes and its key may have 1");
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	expect_info(r1, &info);
	strlcpy(id, info.id, sizeof(id));
	sandbox_info_free(&info);
	/* Per tenant: a2 (quota 2) may add one to team-a's, no more. */
	test_caller = alice2;
	create_ok(0, id, sizeof(id));
	r2 = send_create_ttl(0);
	expect_apid_error(r2, ERR_QUOTA_EXCEEDED, "quota exceeded: the "
	    "tenant has 2 sandboxes and its key may have 2");
	/* Another tenant, and a key without quotas, are not held back. */
	test_caller = bob;
	create_ok(0, id, sizeof(id));
}

/*
 * A keys file's key managerd's table does not have (apid checked it
 * against the table a reload just replaced) may create nothing: the
 * quotas fail closed, not open.
 */
static void
test_unknown_key_has_no_room(void **state)
{
	static char		 n_gone[] = "gone";
	struct caller		 gone = alice;
	uint32_t		 req;

	(void)state;
	gone.key_name = n_gone;
	test_caller = gone;
	req = send_create_ttl(0);
	expect_apid_error(req, ERR_QUOTA_EXCEEDED, "quota exceeded: the "
	    "tenant has 0 sandboxes and its key may have 0");
}

static void
test_cpu_quota(void **state)
{
	struct create_request	 c;
	uint32_t		 req;

	(void)state;
	test_caller = alice;
	create_request_init(&c);
	c.has_cpus = 1;
	c.cpus = 1.5;
	req = send_create(&c);
	expect_apid_error(req, ERR_QUOTA_EXCEEDED, "quota exceeded: the "
	    "tenant's sandboxes would have 1.5 cpus, and its key may have 1");
	no_proxy_message();
}

/* A record keeps its tenant; one without reads as "" (admins only). */
static void
test_record_tenant(void **state)
{
	struct sandbox_record	 r, back;
	char			*json;

	(void)state;
	memset(&r, 0, sizeof(r));
	strlcpy(r.id, "sb_0123456789abcdef", sizeof(r.id));
	r.spec.image = (char *)(uintptr_t)"busybox";
	r.spec.cpus = 1;
	r.spec.memory_mb = 128;
	r.spec.pids_limit = 64;
	strlcpy(r.tenant, "team-a", sizeof(r.tenant));
	assert_non_null(json = store_sandbox_to_json(&r));
	assert_non_null(strstr(json, "\"tenant\": \"team-a\""));
	assert_int_equal(store_sandbox_from_json(json, &back), 0);
	assert_string_equal(back.tenant, "team-a");
	sandbox_record_free(&back);
	free(json);
	r.tenant[0] = '\0';
	assert_non_null(json = store_sandbox_to_json(&r));
	assert_null(strstr(json, "tenant"));
	assert_int_equal(store_sandbox_from_json(json, &back), 0);
	assert_string_equal(back.tenant, "");
	sandbox_record_free(&back);
	free(json);
	/* A tenant no keys file could name is a damaged record. */
	assert_int_equal(store_sandbox_from_json("{\"created_at\": 1.0, "
	    "\"expires_at\": 0.0, \"id\": \"sb_0123456789abcdef\", "
	    "\"source_snapshot_id\": null, \"spec\": {\"cpus\": 1.0, \"env\": "
	    "{}, \"image\": \"b\", \"memory_mb\": 128, \"network\": false, "
	    "\"pids_limit\": 64, \"read_only_rootfs\": true}, \"tenant\": "
	    "\"../x\"}", &back), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f)	cmocka_unit_test_setup_teardown(f, setup_keys, teardown)
		T(test_visibility),
		T(test_process_lookup),
		T(test_quota_counts_creations_in_flight),
		T(test_cpu_quota),
		T(test_unknown_key_has_no_room),
		T(test_record_tenant),
#undef T
	};

	log_init(LOG_TO_STDERR, LOG_LEVEL_WARN, "test_manager_tenant");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
