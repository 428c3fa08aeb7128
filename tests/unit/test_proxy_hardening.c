/*
 * Tests for dockerd-proxy/hardening.c: every body it builds equals its
 * golden file in tests/golden/docker/ byte for byte (pretty-printed, so a
 * change is a readable diff and the review point of any hardening
 * change); keys that must never appear do not; the checks on a create and
 * on users and environment keys.
 *
 * AGENT_SANDBOX_UPDATE_GOLDEN=1 rewrites the golden files instead of
 * comparing; review the diff before committing it.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proxy.h"

#ifndef GOLDEN_DIR
#define GOLDEN_DIR	"tests/golden/docker"
#endif

#define INSTANCE	"0123456789abcdef"
#define SANDBOX		"sb_00112233aabbccdd"

static char *
read_file(const char *path, size_t *lenp)
{
	FILE	*f;
	char	*buf;
	long	 len;

	if ((f = fopen(path, "rb")) == NULL)
		return NULL;
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	assert_true(len >= 0);
	rewind(f);
	buf = malloc((size_t)len + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
	buf[len] = '\0';
	fclose(f);
	*lenp = (size_t)len;
	return buf;
}

/* Compare (or, when asked, rewrite) one golden file; takes obj. */
static void
golden(const char *name, json_object *obj)
{
	const char	*text, *dir;
	char		 path[4096], *want;
	size_t		 len = 0;
	FILE		*f;

	assert_non_null(obj);
	text = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PRETTY |
	    JSON_C_TO_STRING_NOSLASHESCAPE);
	assert_non_null(text);
	if ((dir = getenv("AGENT_SANDBOX_GOLDEN_DIR")) == NULL)
		dir = GOLDEN_DIR;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (getenv("AGENT_SANDBOX_UPDATE_GOLDEN") != NULL) {
		f = fopen(path, "wb");
		assert_non_null(f);
		fprintf(f, "%s\n", text);
		fclose(f);
	}
	want = read_file(path, &len);
	if (want == NULL)
		fail_msg("missing golden file %s", path);
	if (len == 0 || want[len - 1] != '\n' ||
	    strlen(text) != len - 1 || memcmp(text, want, len - 1) != 0) {
		print_error("%s differs; the body is now:\n%s\n", path, text);
		fail_msg("golden file %s differs", path);
	}
	free(want);
	json_object_put(obj);
}

static void
env_add(struct env_list *env, const char *k, const char *v)
{
	assert_int_equal(env_list_add(env, k, v), 0);
}

/* A create as managerd sends it with the defaults of API.md §15. */
static void
create_default(struct docker_create *dc)
{
	memset(dc, 0, sizeof(*dc));
	dc->id = strdup(SANDBOX);
	dc->spec.image = strdup("agent-sandbox/busybox:test");
	dc->spec.cpus = 0.5;
	dc->spec.memory_mb = 128;
	dc->spec.pids_limit = 64;
	dc->spec.network = 0;
	dc->spec.read_only_rootfs = 1;
	env_add(&dc->spec.env, "FOO", "bar");
	env_add(&dc->spec.env, "QUOTE", "\"x\" \\ /tmp");
	dc->uid = 1000;
	dc->gid = 1000;
	dc->tmp_size_mb = 256;
	dc->runtime = strdup("");
	dc->network_name = strdup("agent-sandbox-net");
}

/* Keys that must never be in a body, whatever the input. */
static void
assert_no_forbidden_keys(json_object *obj)
{
	static const char *const	 forbidden[] = {
		"Privileged", "Binds", "CapAdd", "Devices", "PidMode",
		"UsernsMode", "Sysctls", "VolumesFrom", "VolumeDriver",
		"DriverOpts", "DeviceRequests", "DeviceCgroupRules",
		"CgroupParent", "Cgroup", "UTSMode", "Links", "PortBindings",
		"PublishAllPorts", "ExtraHosts", "Capabilities",
		"OomKillDisable",
		"MaskedPaths", "ReadonlyPaths", "Isolation",
	};
	const char	*text;
	char		 needle[64];
	size_t		 i;

	text = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN);
	for (i = 0; i < sizeof(forbidden) / sizeof(forbidden[0]); i++) {
		snprintf(needle, sizeof(needle), "\"%s\"", forbidden[i]);
		if (strcasestr(text, needle) != NULL)
			fail_msg("body has %s: %s", forbidden[i], text);
	}
}

static void
test_container_golden(void **state)
{
	struct docker_create	 dc;
	json_object		*body;

	create_default(&dc);
	assert_null(hardening_check_create(&dc));
	body = hardening_container_body(&dc, INSTANCE);
	assert_no_forbidden_keys(body);
	golden("container_create.json", body);
	docker_create_free(&dc);
}

/*
 * network: true, a runtime, a writable root, HOME overridden, a key given
 * twice (first position, last value), odd numbers.
 */
static void
test_container_network_golden(void **state)
{
	struct docker_create	 dc;
	json_object		*body;

	create_default(&dc);
	dc.spec.network = 1;
	dc.spec.read_only_rootfs = 0;
	dc.spec.cpus = 0.25;
	dc.spec.memory_mb = 4096;
	dc.spec.pids_limit = 4096;
	dc.uid = 1234;
	dc.gid = 5678;
	dc.tmp_size_mb = 16;
	env_add(&dc.spec.env, "HOME", "/tmp/home");
	env_add(&dc.spec.env, "FOO", "baz");
	free(dc.runtime);
	dc.runtime = strdup("runsc");
	assert_null(hardening_check_create(&dc));
	body = hardening_container_body(&dc, INSTANCE);
	assert_no_forbidden_keys(body);
	golden("container_create_network.json", body);
	docker_create_free(&dc);
}

static void
test_prep_golden(void **state)
{
	struct docker_create	 dc;
	json_object		*body;

	create_default(&dc);
	body = hardening_prep_body(&dc, INSTANCE);
	assert_no_forbidden_keys(body);
	golden("container_prep.json", body);
	docker_create_free(&dc);
}

static void
test_volume_golden(void **state)
{
	json_object	*body;

	body = hardening_volume_body(SANDBOX, INSTANCE);
	assert_no_forbidden_keys(body);
	golden("volume_create.json", body);
}

static void
test_network_golden(void **state)
{
	json_object	*body;

	body = hardening_network_body("agent-sandbox-net");
	assert_no_forbidden_keys(body);
	golden("network_create.json", body);
}

static void
test_exec_golden(void **state)
{
	static const char *const	 argv[] = {
		"printf", "%s|", "a b", "$HOME"
	};
	struct docker_exec		 de;
	size_t				 i;

	memset(&de, 0, sizeof(de));
	de.id = strdup(SANDBOX);
	de.argc = 4;
	de.argv = calloc(5, sizeof(char *));
	assert_non_null(de.argv);
	for (i = 0; i < 4; i++)
		de.argv[i] = strdup(argv[i]);
	env_add(&de.env, "A", "1");
	env_add(&de.env, "B", "two words");
	env_add(&de.env, "A", "3");
	de.workdir = strdup("/workspace/sub dir");
	de.user = strdup("1000:1000");
	de.timeout_seconds = 60;
	golden("exec_create.json", hardening_exec_body(&de));
	docker_exec_free(&de);
	golden("exec_start.json", hardening_exec_start_body(0));
}

/* The kill script is part of the hardening: changes show as a diff. */
static void
test_kill_golden(void **state)
{
	json_object	*body;

	body = hardening_kill_body("1000:1000", 4242);
	golden("exec_kill.json", body);
}

/* Bodies are built from typed values only: no input reaches a key. */
static void
test_env_cannot_inject(void **state)
{
	struct docker_create	 dc;
	json_object		*body, *host, *v;

	create_default(&dc);
	env_add(&dc.spec.env, "X\",\"Privileged\":true,\"Y", "\"}");
	free(dc.spec.image);
	dc.spec.image = strdup("x\",\"HostConfig\":{\"Privileged\":true}}");
	body = hardening_container_body(&dc, INSTANCE);
	assert_true(json_object_object_get_ex(body, "HostConfig", &host));
	assert_false(json_object_object_get_ex(host, "Privileged", &v));
	assert_int_equal(json_object_object_length(body), 9);
	json_object_put(body);
	docker_create_free(&dc);
}

static void
test_check_create(void **state)
{
	struct docker_create	 dc;

	create_default(&dc);
	assert_null(hardening_check_create(&dc));
	dc.spec.cpus = 0;
	assert_non_null(hardening_check_create(&dc));
	dc.spec.cpus = NAN;
	assert_non_null(hardening_check_create(&dc));
	dc.spec.cpus = 2000;
	assert_non_null(hardening_check_create(&dc));
	dc.spec.cpus = 1;
	dc.spec.memory_mb = 5;
	assert_non_null(hardening_check_create(&dc));
	dc.spec.memory_mb = 16;
	dc.spec.pids_limit = 0;
	assert_non_null(hardening_check_create(&dc));
	dc.spec.pids_limit = 8;
	dc.tmp_size_mb = 0;
	assert_non_null(hardening_check_create(&dc));
	dc.tmp_size_mb = 1;
	assert_null(hardening_check_create(&dc));
	dc.uid = 0;
	assert_string_equal(hardening_check_create(&dc),
	    "the sandbox user must not be root");
	dc.uid = 1;
	free(dc.runtime);
	dc.runtime = strdup("run/sc");
	assert_non_null(hardening_check_create(&dc));
	free(dc.runtime);
	dc.runtime = strdup("");
	/* The network name only matters with network: true. */
	free(dc.network_name);
	dc.network_name = strdup("host");
	assert_null(hardening_check_create(&dc));
	dc.spec.network = 1;
	assert_non_null(hardening_check_create(&dc));
	free(dc.network_name);
	dc.network_name = strdup("container:abc");
	assert_non_null(hardening_check_create(&dc));
	free(dc.network_name);
	dc.network_name = strdup("bridge");
	assert_non_null(hardening_check_create(&dc));
	free(dc.network_name);
	dc.network_name = strdup("none");
	assert_non_null(hardening_check_create(&dc));
	free(dc.network_name);
	dc.network_name = strdup("my-net_1.x");
	assert_null(hardening_check_create(&dc));
	docker_create_free(&dc);
}

static void
test_valid_user(void **state)
{
	static const struct {
		const char	*user;
		int		 ok;
		int		 root;
	} cases[] = {
		{ "1000:1000", 1, 0 },
		{ "1000", 1, 0 },
		{ "0:1000", 1, 1 },
		{ "00:0", 1, 1 },
		{ "0", 1, 1 },
		{ "1000:0", 1, 0 },
		{ "4294967295:1", 1, 0 },
		{ "", 0, 0 },
		{ ":", 0, 0 },
		{ "1000:", 0, 0 },
		{ ":1000", 0, 0 },
		{ "root", 0, 0 },
		{ "1000:1000:1", 0, 0 },
		{ "12345678901", 0, 0 },
		{ "-1", 0, 0 },
		{ "1000 ", 0, 0 },
	};
	size_t	 i;
	int	 root;

	assert_int_equal(valid_user(NULL, &root), 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		root = -1;
		if (valid_user(cases[i].user, &root) != cases[i].ok)
			fail_msg("valid_user(\"%s\")", cases[i].user);
		if (cases[i].ok && root != cases[i].root)
			fail_msg("valid_user(\"%s\") root", cases[i].user);
	}
}

static void
test_valid_env_key(void **state)
{
	assert_true(valid_env_key("PATH"));
	assert_true(valid_env_key("lower_case.1"));
	assert_false(valid_env_key(""));
	assert_false(valid_env_key("A=B"));
	assert_false(valid_env_key("="));
	assert_false(valid_env_key(NULL));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_container_golden),
		cmocka_unit_test(test_container_network_golden),
		cmocka_unit_test(test_prep_golden),
		cmocka_unit_test(test_volume_golden),
		cmocka_unit_test(test_network_golden),
		cmocka_unit_test(test_exec_golden),
		cmocka_unit_test(test_kill_golden),
		cmocka_unit_test(test_env_cannot_inject),
		cmocka_unit_test(test_check_create),
		cmocka_unit_test(test_valid_user),
		cmocka_unit_test(test_valid_env_key),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
