/*
 * Tests for dockerd-proxy/hardening.c: every body it builds equals its
 * golden file in tests/golden/docker/ byte for byte (pretty-printed, so a
 * change is a readable diff and the review point of any hardening
 * change); keys that must never appear do not; the checks on the
 * operator's policy, on a create against it, and on environment keys.
 *
 * AGENT_SANDBOX_UPDATE_GOLDEN=1 rewrites the golden files instead of
 * comparing; review the diff before committing it.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
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

/* The operator's settings as the spawner sends them: API.md §15's defaults. */
static void
policy_default(struct proxy_policy *p)
{
	static char	 runtime[] = "", network[] = "agent-sandbox-net";

	memset(p, 0, sizeof(*p));
	p->uid = 1000;
	p->gid = 1000;
	p->tmp_size_mb = 256;
	p->runtime = runtime;
	p->network_name = network;
	p->max_cpus = 4;
	p->max_memory_mb = 4096;
	p->max_pids_limit = 4096;
	p->allow_network = 1;
	assert_null(hardening_check_policy(p));
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
	struct proxy_policy	 p;
	struct docker_create	 dc;
	json_object		*body;

	policy_default(&p);
	create_default(&dc);
	assert_null(hardening_check_create(&p, &dc));
	body = hardening_container_body(&p, &dc, INSTANCE);
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
	static char		 runsc[] = "runsc";
	struct proxy_policy	 p;
	struct docker_create	 dc;
	json_object		*body;

	policy_default(&p);
	p.uid = 1234;
	p.gid = 5678;
	p.tmp_size_mb = 16;
	p.runtime = runsc;
	assert_null(hardening_check_policy(&p));
	create_default(&dc);
	dc.spec.network = 1;
	dc.spec.read_only_rootfs = 0;
	dc.spec.cpus = 0.25;
	dc.spec.memory_mb = 4096;
	dc.spec.pids_limit = 4096;
	env_add(&dc.spec.env, "HOME", "/tmp/home");
	env_add(&dc.spec.env, "FOO", "baz");
	assert_null(hardening_check_create(&p, &dc));
	body = hardening_container_body(&p, &dc, INSTANCE);
	assert_no_forbidden_keys(body);
	golden("container_create_network.json", body);
	docker_create_free(&dc);
}

static void
test_prep_golden(void **state)
{
	struct proxy_policy	 p;
	struct docker_create	 dc;
	json_object		*body;

	policy_default(&p);
	create_default(&dc);
	body = hardening_prep_body(&p, &dc, INSTANCE, NULL);
	assert_no_forbidden_keys(body);
	golden("container_prep.json", body);
	/* From the workspace-owner image: read-only, the image's copy in. */
	body = hardening_prep_body(&p, &dc, INSTANCE, "sha256:"
	    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
	assert_no_forbidden_keys(body);
	golden("container_prep_owner.json", body);
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
	struct proxy_policy		 p;
	struct docker_exec		 de;
	size_t				 i;

	policy_default(&p);
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
	de.timeout_seconds = 60;
	golden("exec_create.json", hardening_exec_body(&p, &de));
	docker_exec_free(&de);
	golden("exec_start.json", hardening_exec_start_body(0, 0));
	golden("exec_start_tty.json", hardening_exec_start_body(0, 1));
}

/* A process: the exec's body with its tty and stdin. */
static void
test_process_golden(void **state)
{
	static const char *const	 argv[] = { "python3", "-i" };
	struct proxy_policy		 p;
	struct docker_process		 d;
	json_object			*body, *v;
	size_t				 i;

	policy_default(&p);
	memset(&d, 0, sizeof(d));
	d.id = strdup(SANDBOX);
	d.argc = 2;
	d.argv = calloc(3, sizeof(char *));
	assert_non_null(d.argv);
	for (i = 0; i < 2; i++)
		d.argv[i] = strdup(argv[i]);
	env_add(&d.env, "TERM", "xterm");
	d.workdir = strdup("/workspace");
	d.tty = 1;
	d.stdin_open = 1;
	d.cols = 120;
	d.rows = 40;
	golden("process_create_tty.json", hardening_process_body(&p, &d));
	/* A tty's wrapper waits on its stdin: attached even when not open. */
	d.stdin_open = 0;
	body = hardening_process_body(&p, &d);
	assert_true(json_object_object_get_ex(body, "AttachStdin", &v));
	assert_true(json_object_get_boolean(v));
	json_object_put(body);
	/*
	 * Without a tty too: the wrapper runs the command only once a newline
	 * lets it go, and exits if its stdin ends first.
	 */
	d.tty = 0;
	d.stdin_open = 0;
	body = hardening_process_body(&p, &d);
	assert_true(json_object_object_get_ex(body, "Tty", &v));
	assert_false(json_object_get_boolean(v));
	assert_true(json_object_object_get_ex(body, "AttachStdin", &v));
	assert_true(json_object_get_boolean(v));
	assert_true(json_object_object_get_ex(body, "Cmd", &v));
	assert_string_equal(json_object_get_string(
	    json_object_array_get_idx(v, 2)),
	    "echo $$; read -r _ || exit; exec \"$@\"");
	assert_no_forbidden_keys(body);
	json_object_put(body);
	docker_process_free(&d);
}

/* The signal goes to the group, by a name from our own table only. */
static void
test_signal_golden(void **state)
{
	struct proxy_policy	 p;
	json_object		*body, *cmd;
	const char		*last;

	policy_default(&p);
	golden("exec_signal.json", hardening_signal_body(&p, 4242, SIGTERM));
	body = hardening_signal_body(&p, 77, SIGKILL);
	assert_true(json_object_object_get_ex(body, "Cmd", &cmd));
	assert_int_equal(json_object_array_length(cmd), 6);
	last = json_object_get_string(json_object_array_get_idx(cmd, 5));
	assert_string_equal(last, "KILL");
	json_object_put(body);
}

/* The stats' workspace probe: the sandbox user, no stdin, no env. */
static void
test_workspace_du_golden(void **state)
{
	struct proxy_policy	 p;

	policy_default(&p);
	golden("exec_workspace_du.json", hardening_workspace_du_body(&p));
}

/* The kill script is part of the hardening: changes show as a diff. */
static void
test_kill_golden(void **state)
{
	struct proxy_policy	 p;
	json_object		*body;

	policy_default(&p);
	body = hardening_kill_body(&p, 4242);
	golden("exec_kill.json", body);
}

/* Bodies are built from typed values only: no input reaches a key. */
static void
test_env_cannot_inject(void **state)
{
	struct proxy_policy	 p;
	struct docker_create	 dc;
	json_object		*body, *host, *v;

	policy_default(&p);
	create_default(&dc);
	env_add(&dc.spec.env, "X\",\"Privileged\":true,\"Y", "\"}");
	free(dc.spec.image);
	dc.spec.image = strdup("x\",\"HostConfig\":{\"Privileged\":true}}");
	body = hardening_container_body(&p, &dc, INSTANCE);
	assert_true(json_object_object_get_ex(body, "HostConfig", &host));
	assert_false(json_object_object_get_ex(host, "Privileged", &v));
	assert_int_equal(json_object_object_length(body), 9);
	json_object_put(body);
	docker_create_free(&dc);
}

/* NanoCpus as Docker gets it: never a quota it would round to nothing. */
static int64_t
nano_cpus_of(const struct proxy_policy *p, const struct docker_create *dc)
{
	json_object	*body, *host, *v;
	int64_t		 nano;

	body = hardening_container_body(p, dc, INSTANCE);
	assert_true(json_object_object_get_ex(body, "HostConfig", &host));
	assert_true(json_object_object_get_ex(host, "NanoCpus", &v));
	nano = json_object_get_int64(v);
	json_object_put(body);
	return nano;
}

/* What a lying managerd may send: each is refused whatever else holds. */
static void
test_check_create(void **state)
{
	static const double	 bad_cpus[] = {
		0, -1, 0.000001, 0.0099999999, NAN, INFINITY, -INFINITY, 4.01,
		2000, 1e300
	};
	struct proxy_policy	 p;
	struct docker_create	 dc;
	size_t			 i;

	policy_default(&p);
	create_default(&dc);
	assert_null(hardening_check_create(&p, &dc));
	for (i = 0; i < sizeof(bad_cpus) / sizeof(bad_cpus[0]); i++) {
		dc.spec.cpus = bad_cpus[i];
		if (hardening_check_create(&p, &dc) == NULL)
			fail_msg("cpus %g accepted", bad_cpus[i]);
	}
	/* The least CPU is a 1 ms quota: 10^7 NanoCpus. */
	dc.spec.cpus = SANDBOX_CPUS_MIN;
	assert_null(hardening_check_create(&p, &dc));
	assert_int_equal(nano_cpus_of(&p, &dc), 10000000);
	dc.spec.cpus = 4;
	assert_null(hardening_check_create(&p, &dc));
	assert_int_equal(nano_cpus_of(&p, &dc), 4000000000LL);
	dc.spec.cpus = 1;
	dc.spec.memory_mb = 5;
	assert_non_null(hardening_check_create(&p, &dc));
	dc.spec.memory_mb = 4097;
	assert_non_null(hardening_check_create(&p, &dc));
	dc.spec.memory_mb = 16;
	dc.spec.pids_limit = 0;
	assert_non_null(hardening_check_create(&p, &dc));
	dc.spec.pids_limit = 4097;
	assert_non_null(hardening_check_create(&p, &dc));
	dc.spec.pids_limit = 8;
	assert_null(hardening_check_create(&p, &dc));
	/* Network only when the operator allows it. */
	dc.spec.network = 1;
	assert_null(hardening_check_create(&p, &dc));
	p.allow_network = 0;
	assert_string_equal(hardening_check_create(&p, &dc),
	    "sandboxes with network access are not allowed");
	dc.spec.network = 0;
	assert_null(hardening_check_create(&p, &dc));
	/* Keys runtimes read, unless the operator allows them. */
	env_add(&dc.spec.env, "NVIDIA_VISIBLE_DEVICES", "all");
	assert_string_equal(hardening_check_create(&p, &dc),
	    "an environment key that container runtimes read");
	p.allow_runtime_env = 1;
	assert_null(hardening_check_create(&p, &dc));
	docker_create_free(&dc);
}

/* The operator's settings, checked once: a bad one stops the proxy. */
static void
test_check_policy(void **state)
{
	static char		 bad_runtime[] = "run/sc", host[] = "host";
	static char		 bridge[] = "bridge", none[] = "none";
	static char		 container[] = "container:abc";
	static char		 ok_net[] = "my-net_1.x";
	struct proxy_policy	 p;

	policy_default(&p);
	assert_string_equal(p.user, "1000:1000");
	p.uid = 0;
	assert_string_equal(hardening_check_policy(&p),
	    "the sandbox user must not be root (uid or gid 0)");
	p.uid = 1000;
	p.gid = 0;
	assert_string_equal(hardening_check_policy(&p),
	    "the sandbox user must not be root (uid or gid 0)");
	p.gid = UINT32_MAX;
	assert_non_null(hardening_check_policy(&p));
	p.gid = 5;
	assert_null(hardening_check_policy(&p));
	assert_string_equal(p.user, "1000:5");
	p.tmp_size_mb = 0;
	assert_non_null(hardening_check_policy(&p));
	p.tmp_size_mb = 1;
	p.runtime = bad_runtime;
	assert_non_null(hardening_check_policy(&p));
	policy_default(&p);
	p.network_name = host;
	assert_non_null(hardening_check_policy(&p));
	p.network_name = bridge;
	assert_non_null(hardening_check_policy(&p));
	p.network_name = none;
	assert_non_null(hardening_check_policy(&p));
	p.network_name = container;
	assert_non_null(hardening_check_policy(&p));
	p.network_name = ok_net;
	assert_null(hardening_check_policy(&p));
	p.max_cpus = 0.001;
	assert_non_null(hardening_check_policy(&p));
	p.max_cpus = NAN;
	assert_non_null(hardening_check_policy(&p));
	p.max_cpus = 1e6;
	assert_null(hardening_check_policy(&p));
	p.max_memory_mb = 5;
	assert_non_null(hardening_check_policy(&p));
	p.max_memory_mb = 6;
	p.max_pids_limit = 0;
	assert_non_null(hardening_check_policy(&p));
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
		cmocka_unit_test(test_process_golden),
		cmocka_unit_test(test_signal_golden),
		cmocka_unit_test(test_kill_golden),
		cmocka_unit_test(test_workspace_du_golden),
		cmocka_unit_test(test_env_cannot_inject),
		cmocka_unit_test(test_check_create),
		cmocka_unit_test(test_check_policy),
		cmocka_unit_test(test_valid_env_key),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
