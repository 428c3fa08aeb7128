/*
 * managerd's creates (REFERENCE-TESTS.md H 41-46, manager parts): the
 * defaults, the checks and their order, the image allowlist, the network
 * and CPU limits, the quota, a record that cannot be written; and the
 * ids sandboxes get.  The test plays apid and dockerd-proxy
 * (manager_fixture.c).
 */
#include <sys/stat.h>

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "log.h"
#include "manager_fixture.h"

/* --- H 41-46: create ------------------------------------------------------ */

static void
test_create_defaults(void **state)
{
	struct create_request	 c;
	struct docker_create	 dc;
	struct sandbox_info	 info;
	uint32_t		 req, call;

	create_request_init(&c);
	req = send_create(&c);
	call = expect_create(&dc);
	assert_int_equal(strlen(dc.id), SANDBOX_ID_LEN);
	assert_true(id_is_sandbox(dc.id));
	assert_string_equal(dc.spec.image, "python:3.12-slim");
	assert_true(dc.spec.cpus == 1.0);
	assert_int_equal(dc.spec.memory_mb, 512);
	assert_int_equal(dc.spec.pids_limit, 256);
	assert_false(dc.spec.network);
	assert_true(dc.spec.read_only_rootfs);
	assert_int_equal(dc.spec.env.count, 0);
	/* Nothing is recorded, and nobody answered, before Docker is done. */
	assert_false(record_exists(dc.id));
	no_apid_message();

	now += 5;	/* pulling and starting take time */
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	expect_info(req, &info);
	assert_string_equal(info.id, dc.id);
	assert_true(info.running);
	assert_string_equal(info.image, "python:3.12-slim");
	assert_true(info.cpus == 1.0);
	assert_false(info.network);
	assert_true(info.read_only_rootfs);
	assert_true(info.created_at == now);
	assert_true(info.expires_at == now + 900);
	assert_null(info.source_snapshot_id);
	assert_true(record_exists(dc.id));
	assert_true(reaper_next() == now + 900);
	assert_int_equal(sandbox_count(), 1);
	assert_int_equal(quota_pending(), 0);
	sandbox_info_free(&info);
	docker_create_free(&dc);

	/* "" means the default image too; the request's values go through. */
	create_request_init(&c);
	c.image = strdup("");
	c.has_cpus = 1;
	c.cpus = 0.5;
	c.has_memory_mb = 1;
	c.memory_mb = 256;
	c.network = 1;
	c.read_only_rootfs = 0;
	assert_int_equal(env_list_add(&c.env, "MODE", "test"), 0);
	req = send_create(&c);
	call = expect_create(&dc);
	assert_string_equal(dc.spec.image, "python:3.12-slim");
	assert_true(dc.spec.cpus == 0.5);
	assert_int_equal(dc.spec.memory_mb, 256);
	assert_true(dc.spec.network);
	assert_false(dc.spec.read_only_rootfs);
	assert_int_equal(dc.spec.env.count, 1);
	assert_string_equal(dc.spec.env.keys[0], "MODE");
	assert_string_equal(dc.spec.env.values[0], "test");
	docker_create_free(&dc);
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	expect_info(req, &info);
	assert_true(info.cpus == 0.5);
	assert_true(info.network);
	sandbox_info_free(&info);
}

static void
expect_create_refused(struct create_request *c, enum error_kind kind,
    const char *text)
{
	uint32_t	 req;

	req = send_create(c);
	expect_apid_error(req, kind, text);
	no_proxy_message();
}

static void
test_create_rejects(void **state)
{
	struct create_request	 c;

	create_request_init(&c);
	c.has_cpus = 1;
	c.cpus = 100;
	expect_create_refused(&c, ERR_INVALID_REQUEST,
	    "cpus must be in (0, 4.0]");
	create_request_init(&c);
	c.has_cpus = 1;
	c.cpus = 0;
	expect_create_refused(&c, ERR_INVALID_REQUEST,
	    "cpus must be in (0, 4.0]");
	/* In range for the reference, but no limit at all to Docker. */
	create_request_init(&c);
	c.has_cpus = 1;
	c.cpus = 0.000001;
	expect_create_refused(&c, ERR_INVALID_REQUEST,
	    "cpus must be at least 0.01: Docker cannot limit a sandbox to less");
	create_request_init(&c);
	c.has_cpus = 1;
	c.cpus = 0.0099999;
	expect_create_refused(&c, ERR_INVALID_REQUEST,
	    "cpus must be at least 0.01: Docker cannot limit a sandbox to less");
	create_request_init(&c);
	c.has_memory_mb = 1;
	c.memory_mb = 8;
	expect_create_refused(&c, ERR_INVALID_REQUEST,
	    "memory_mb must be in [16, 4096]");
	create_request_init(&c);
	c.has_memory_mb = 1;
	c.memory_mb = 1000000;
	expect_create_refused(&c, ERR_INVALID_REQUEST,
	    "memory_mb must be in [16, 4096]");
	create_request_init(&c);
	c.has_pids_limit = 1;
	c.pids_limit = 2;
	expect_create_refused(&c, ERR_INVALID_REQUEST,
	    "pids_limit must be in [8, 4096]");
	create_request_init(&c);
	c.has_timeout_seconds = 1;
	c.timeout_seconds = 0;
	expect_create_refused(&c, ERR_INVALID_REQUEST,
	    "timeout_seconds must be in [1, 86400]");
	create_request_init(&c);
	c.has_timeout_seconds = 1;
	c.timeout_seconds = 86401;
	expect_create_refused(&c, ERR_INVALID_REQUEST,
	    "timeout_seconds must be in [1, 86400]");
	create_request_init(&c);
	assert_int_equal(env_list_add(&c.env, "OK", "1"), 0);
	assert_int_equal(env_list_add(&c.env, "NVIDIA_VISIBLE_DEVICES", "all"),
	    0);
	expect_create_refused(&c, ERR_FORBIDDEN, "this server does not allow "
	    "the environment key NVIDIA_VISIBLE_DEVICES: container runtimes "
	    "read it (AGENT_SANDBOX_ALLOW_RUNTIME_ENV)");
	create_request_init(&c);
	assert_int_equal(env_list_add(&c.env, "AMD_VISIBLE_DEVICES", "0"), 0);
	expect_create_refused(&c, ERR_FORBIDDEN, "this server does not allow "
	    "the environment key AMD_VISIBLE_DEVICES: container runtimes "
	    "read it (AGENT_SANDBOX_ALLOW_RUNTIME_ENV)");
	create_request_init(&c);
	assert_int_equal(env_list_add(&c.env, "OK", "1"), 0);
	assert_int_equal(env_list_add(&c.env, "A=B", "1"), 0);
	expect_create_refused(&c, ERR_INVALID_REQUEST,
	    "invalid environment variable name 'A=B'");
	create_request_init(&c);
	assert_int_equal(env_list_add(&c.env, "", "1"), 0);
	expect_create_refused(&c, ERR_INVALID_REQUEST,
	    "invalid environment variable name ''");

	/* The first failing check wins: §4.2's order. */
	create_request_init(&c);
	c.has_cpus = 1;
	c.cpus = 100;
	c.has_memory_mb = 1;
	c.memory_mb = 8;
	expect_create_refused(&c, ERR_INVALID_REQUEST,
	    "cpus must be in (0, 4.0]");
	create_request_init(&c);
	c.has_pids_limit = 1;
	c.pids_limit = 2;
	c.network = 1;
	c.has_timeout_seconds = 1;
	c.timeout_seconds = 0;
	expect_create_refused(&c, ERR_INVALID_REQUEST,
	    "pids_limit must be in [8, 4096]");
	assert_int_equal(sandbox_count(), 0);
	assert_int_equal(quota_pending(), 0);
}

static int
setup_allowlist(void **state)
{
	static char	 images[] =
	    "AGENT_SANDBOX_ALLOWED_IMAGES=python:*,docker.io/library/*";
	static char	 network[] = "AGENT_SANDBOX_ALLOW_NETWORK=false";
	static char	 cpus[] = "AGENT_SANDBOX_MAX_CPUS=2";
	static char	 image[] = "AGENT_SANDBOX_DEFAULT_IMAGE=alpine:3.20";
	char		*settings[] = { images, network, cpus, image, NULL };

	setup_env(settings);
	return 0;
}

static void
test_create_allowlist(void **state)
{
	struct create_request	 c;
	struct docker_create	 dc;
	uint32_t		 call;

	create_request_init(&c);
	c.image = strdup("python:3.12-slim");
	send_create(&c);
	call = expect_create(&dc);
	assert_string_equal(dc.spec.image, "python:3.12-slim");
	docker_create_free(&dc);
	error_reply(call, ERR_BACKEND, "no Docker today");
	expect_apid_error(next_apid_id - 1, ERR_BACKEND, "no Docker today");

	create_request_init(&c);
	c.image = strdup("evil/miner:latest");
	expect_create_refused(&c, ERR_FORBIDDEN, "image 'evil/miner:latest' "
	    "is not in the server's allowed_images list");
	/* Python's repr() picks its quotes. */
	create_request_init(&c);
	c.image = strdup("it's");
	expect_create_refused(&c, ERR_FORBIDDEN, "image \"it's\" is not in "
	    "the server's allowed_images list");
	/* The default image is subject to the list too. */
	create_request_init(&c);
	expect_create_refused(&c, ERR_FORBIDDEN, "image 'alpine:3.20' "
	    "is not in the server's allowed_images list");
}

static void
test_create_network_forbidden(void **state)
{
	struct create_request	 c;

	create_request_init(&c);
	c.image = strdup("python:3");
	c.network = 1;
	expect_create_refused(&c, ERR_FORBIDDEN,
	    "this server does not allow sandboxes with network access");
	/* The maximum is printed as a Python float. */
	create_request_init(&c);
	c.image = strdup("python:3");
	c.has_cpus = 1;
	c.cpus = 2.5;
	expect_create_refused(&c, ERR_INVALID_REQUEST,
	    "cpus must be in (0, 2.0]");
}

static int
setup_parts(void **state)
{
	static char	 images[] = "AGENT_SANDBOX_ALLOWED_IMAGES=python:*";
	static char	 match[] = "AGENT_SANDBOX_ALLOWED_IMAGES_MATCH=parts";
	static char	 image[] = "AGENT_SANDBOX_DEFAULT_IMAGE=python:3";
	char		*settings[] = { images, match, image, NULL };

	setup_env(settings);
	return 0;
}

/* python:* by parts: a tag, never a registry port and a path. */
static void
test_create_allowlist_parts(void **state)
{
	struct create_request	 c;
	struct docker_create	 dc;
	uint32_t		 call;

	create_request_init(&c);
	c.image = strdup("python:5000/x/y");
	expect_create_refused(&c, ERR_FORBIDDEN, "image 'python:5000/x/y' "
	    "is not in the server's allowed_images list");
	create_request_init(&c);
	c.image = strdup("python:3.12-slim");
	send_create(&c);
	call = expect_create(&dc);
	assert_string_equal(dc.spec.image, "python:3.12-slim");
	docker_create_free(&dc);
	error_reply(call, ERR_BACKEND, "no Docker today");
	expect_apid_error(next_apid_id - 1, ERR_BACKEND, "no Docker today");
}

/*
 * Under gVisor the floor is 0.1: its kernel shares the limit and did not
 * start within Docker's deadline at 0.01.  At the floor it is asked for.
 */
static void
test_create_gvisor_cpu_floor(void **state)
{
	static char		 runsc[] = "AGENT_SANDBOX_DOCKER_RUNTIME=runsc";
	char			*settings[] = { runsc, NULL };
	struct create_request	 c;
	struct docker_create	 dc;
	uint32_t		 call;

	teardown(state);
	setup_env(settings);
	create_request_init(&c);
	c.has_cpus = 1;
	c.cpus = 0.0999;
	expect_create_refused(&c, ERR_INVALID_REQUEST, "cpus must be at least "
	    "0.1 on this server: its runtime is gVisor (runsc), whose kernel "
	    "runs inside the sandbox's CPU limit and would not start in time "
	    "with less");
	create_request_init(&c);
	c.has_cpus = 1;
	c.cpus = SANDBOX_CPUS_MIN_GVISOR;
	send_create(&c);
	call = expect_create(&dc);
	assert_true(dc.spec.cpus == 0.1);
	docker_create_free(&dc);
	error_reply(call, ERR_BACKEND, "no gVisor today");
	expect_apid_error(next_apid_id - 1, ERR_BACKEND, "no gVisor today");
}

static int
setup_runtime_env(void **state)
{
	static char	 allow[] = "AGENT_SANDBOX_ALLOW_RUNTIME_ENV=true";
	char		*settings[] = { allow, NULL };

	setup_env(settings);
	return 0;
}

/* The operator allows them; the least CPU is allowed too. */
static void
test_create_runtime_env_allowed(void **state)
{
	struct create_request	 c;
	struct docker_create	 dc;
	uint32_t		 call;

	create_request_init(&c);
	c.has_cpus = 1;
	c.cpus = SANDBOX_CPUS_MIN;
	assert_int_equal(env_list_add(&c.env, "NVIDIA_VISIBLE_DEVICES", "0"),
	    0);
	send_create(&c);
	call = expect_create(&dc);
	assert_true(dc.spec.cpus == 0.01);
	assert_string_equal(dc.spec.env.keys[0], "NVIDIA_VISIBLE_DEVICES");
	docker_create_free(&dc);
	error_reply(call, ERR_BACKEND, "no GPU today");
	expect_apid_error(next_apid_id - 1, ERR_BACKEND, "no GPU today");
}

static void
test_quota(void **state)
{
	char		 id[3][SANDBOX_ID_LEN + 1];
	uint32_t	 req;
	int		 i;

	for (i = 0; i < 3; i++)
		create_ok(0, id[i], sizeof(id[i]));
	req = send_create_ttl(0);
	expect_apid_error(req, ERR_LIMIT_EXCEEDED,
	    "the server already runs the maximum of 3 sandboxes");
	no_proxy_message();
	/* A destroyed sandbox frees its slot. */
	destroy_ok(id[1]);
	create_ok(0, id[1], sizeof(id[1]));
	assert_int_equal(sandbox_count(), 3);
}

static void
test_quota_failures_do_not_leak(void **state)
{
	char		 id[SANDBOX_ID_LEN + 1];
	uint32_t	 req, call;
	int		 i;

	for (i = 0; i < 5; i++) {
		req = send_create_ttl(0);
		call = expect_create(NULL);
		error_reply(call, ERR_INVALID_REQUEST,
		    "cannot pull image python:3.12-slim: not found");
		expect_apid_error(req, ERR_INVALID_REQUEST,
		    "cannot pull image python:3.12-slim: not found");
		assert_int_equal(quota_pending(), 0);
	}
	assert_int_equal(sandbox_count(), 0);
	create_ok(0, id, sizeof(id));
	assert_int_equal(sandbox_count(), 1);
}

static void
test_quota_counts_creates_in_flight(void **state)
{
	uint32_t	 req[4], call[3];
	struct sandbox_info info;
	int		 i;

	for (i = 0; i < 3; i++) {
		req[i] = send_create_ttl(0);
		call[i] = expect_create(NULL);
	}
	assert_int_equal(quota_pending(), 3);
	req[3] = send_create_ttl(0);
	expect_apid_error(req[3], ERR_LIMIT_EXCEEDED,
	    "the server already runs the maximum of 3 sandboxes");
	no_proxy_message();

	/* One fails: its slot is free for the next. */
	error_reply(call[1], ERR_BACKEND, "Docker is unreachable: gone");
	expect_apid_error(req[1], ERR_BACKEND, "Docker is unreachable: gone");
	req[1] = send_create_ttl(0);
	call[1] = expect_create(NULL);
	req[3] = send_create_ttl(0);
	expect_apid_error(req[3], ERR_LIMIT_EXCEEDED,
	    "the server already runs the maximum of 3 sandboxes");

	for (i = 0; i < 3; i++) {
		from_proxy(MSG_DOCKER_DONE, call[i], NULL);
		expect_info(req[i], &info);
		sandbox_info_free(&info);
	}
	assert_int_equal(sandbox_count(), 3);
	assert_int_equal(quota_pending(), 0);
	req[3] = send_create_ttl(0);
	expect_apid_error(req[3], ERR_LIMIT_EXCEEDED,
	    "the server already runs the maximum of 3 sandboxes");
}

/* A record that cannot be written: the container goes, nothing is held. */
static void
test_create_record_failure(void **state)
{
	struct docker_create	 dc;
	uint32_t		 req, call;
	int			 fd;

	assert_int_equal(unlinkat(env->datadir_fd, "sandboxes",
	    AT_REMOVEDIR), 0);
	fd = openat(env->datadir_fd, "sandboxes", O_CREAT | O_WRONLY, 0600);
	assert_true(fd != -1);
	close(fd);

	req = send_create_ttl(0);
	call = expect_create(&dc);
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	call = expect_proxy_id(MSG_DOCKER_DESTROY, dc.id);
	/* The slot stays taken until the container is gone. */
	assert_int_equal(quota_pending(), 1);
	no_apid_message();
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	assert_int_equal(quota_pending(), 0);
	assert_int_equal(sandbox_count(), 0);
	{
		struct imsg	 imsg;
		struct msgr	 r;
		char		*s;

		assert_int_equal(to_apid(&imsg), 1);
		assert_int_equal(imsg.hdr.type, MSG_ERROR);
		assert_int_equal(imsg.hdr.peerid, req);
		msgr_init(&r, &imsg);
		assert_int_equal(msgr_u32(&r), ERR_INTERNAL);
		s = msgr_str(&r, MSG_MAX_STRING);
		assert_non_null(s);
		assert_non_null(strstr(s, "cannot record sandbox"));
		assert_non_null(strstr(s, dc.id));
		free(s);
		imsg_free(&imsg);
	}
	docker_create_free(&dc);
	assert_int_equal(unlinkat(env->datadir_fd, "sandboxes", 0), 0);
	assert_int_equal(mkdirat(env->datadir_fd, "sandboxes", 0700), 0);
}

/* --- small pieces --------------------------------------------------------- */

static void
test_sandbox_ids(void **state)
{
	char	 a[SANDBOX_ID_LEN + 1], b[SANDBOX_ID_LEN + 1];

	sandbox_make_id(a, sizeof(a));
	sandbox_make_id(b, sizeof(b));
	assert_true(id_is_sandbox(a));
	assert_true(id_is_sandbox(b));
	assert_string_not_equal(a, b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f)	cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(test_create_defaults),
		T(test_create_rejects),
		T(test_create_gvisor_cpu_floor),
		cmocka_unit_test_setup_teardown(test_create_allowlist,
		    setup_allowlist, teardown),
		cmocka_unit_test_setup_teardown(test_create_network_forbidden,
		    setup_allowlist, teardown),
		cmocka_unit_test_setup_teardown(
		    test_create_runtime_env_allowed, setup_runtime_env,
		    teardown),
		cmocka_unit_test_setup_teardown(test_create_allowlist_parts,
		    setup_parts, teardown),
		T(test_quota),
		T(test_quota_failures_do_not_leak),
		T(test_quota_counts_creates_in_flight),
		T(test_create_record_failure),
		T(test_sandbox_ids),
#undef T
	};

	log_init(LOG_TO_STDERR, LOG_LEVEL_WARN, "test_manager_create");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
