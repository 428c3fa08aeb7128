/*
 * Tests for common/config.c: every variable, default and message of
 * API.md §10, group G of REFERENCE-TESTS.md (items 36-40, including the
 * two property checks), and this implementation's own settings.
 */
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"

#define KEY_A		"aaaaaaaaaaaaaaaa"
#define KEY_B		"bbbbbbbbbbbbbbbb"
#define SECRET_KEY	"sk-Zq8fT3vLp0WmX9rB"
#define INSECURE	"AGENT_SANDBOX_INSECURE_NO_AUTH=true"
#define MSG_NO_KEYS	"set AGENT_SANDBOX_API_KEYS to one or more " \
	"comma-separated keys, or set AGENT_SANDBOX_INSECURE_NO_AUTH=true " \
	"for local development"
#define MSG_SHORT_KEY	"API keys must be at least 16 characters long"

#define MAX_ENV		64
#define ERRLEN		512

static char	 err[ERRLEN];

/* Load from a NULL-terminated list of "NAME=value" strings. */
static int
load_vars(struct config *c, const char *const *vars)
{
	char	*envp[MAX_ENV];
	size_t	 i;
	int	 r;

	for (i = 0; vars[i] != NULL; i++) {
		assert_true(i < MAX_ENV - 1);
		envp[i] = strdup(vars[i]);
		assert_non_null(envp[i]);
	}
	envp[i] = NULL;
	memset(err, 'x', sizeof(err) - 1);
	err[sizeof(err) - 1] = '\0';
	r = config_load(c, envp, err, sizeof(err));
	for (i = 0; envp[i] != NULL; i++)
		free(envp[i]);
	return r;
}

#define ENV(...)	((const char *const []){ __VA_ARGS__, NULL })
#define NOENV		((const char *const []){ NULL })

static void
expect_ok(struct config *c, const char *const *vars)
{
	if (load_vars(c, vars) != 0)
		fail_msg("config_load failed: %s", err);
	assert_string_equal(err, "");
}

/* The exact message; a failed load leaves nothing allocated. */
static void
expect_err(const char *const *vars, const char *want)
{
	struct config	 c;

	assert_int_equal(load_vars(&c, vars), -1);
	assert_string_equal(err, want);
	assert_null(c.api_keys);
	assert_null(c.host);
	assert_null(c.allowed_images);
	assert_null(c.seccomp_mode);
	config_free(&c);
}

/* Item 36: no configuration at all names AGENT_SANDBOX_API_KEYS. */
static void
test_no_env(void **state)
{
	struct config	 c;

	expect_err(NOENV, MSG_NO_KEYS);
	assert_non_null(strstr(err, "AGENT_SANDBOX_API_KEYS"));
	assert_int_equal(config_load(&c, NULL, err, sizeof(err)), -1);
	assert_string_equal(err, MSG_NO_KEYS);
	expect_err(ENV("AGENT_SANDBOX_INSECURE_NO_AUTH=false"), MSG_NO_KEYS);
	expect_err(ENV("AGENT_SANDBOX_API_KEYS=", "AGENT_SANDBOX_UNRELATED=1"),
	    MSG_NO_KEYS);
	expect_err(ENV("AGENT_SANDBOX_API_KEYS= , ,, "), MSG_NO_KEYS);
}

/* Item 36 and every default of §10. */
static void
test_defaults(void **state)
{
	struct config	 c;

	expect_ok(&c, ENV(INSECURE));
	assert_non_null(c.api_keys);
	assert_null(c.api_keys[0]);
	assert_int_equal(c.api_keys_count, 0);
	assert_int_equal(c.insecure_no_auth, 1);
	assert_string_equal(c.host, "127.0.0.1");
	assert_int_equal(c.port, 8080);
	assert_string_equal(c.data_dir, "./data");
	assert_string_equal(c.default_image, "python:3.12-slim");
	assert_int_equal(c.allowed_images_count, 1);
	assert_string_equal(c.allowed_images[0], "*");
	assert_null(c.allowed_images[1]);
	assert_string_equal(c.sandbox_user, "1000:1000");
	assert_int_equal(c.sandbox_uid, 1000);
	assert_int_equal(c.sandbox_gid, 1000);
	assert_string_equal(c.docker_runtime, "");
	assert_string_equal(c.network_name, "agent-sandbox-net");
	assert_int_equal(c.allow_network, 1);
	assert_int_equal(c.allow_runtime_env, 0);
	assert_int_equal(c.max_sandboxes, 20);
	assert_int_equal(c.default_timeout_seconds, 900);
	assert_int_equal(c.max_timeout_seconds, 86400);
	assert_true(c.default_cpus == 1.0);
	assert_true(c.max_cpus == 4.0);
	assert_int_equal(c.default_memory_mb, 512);
	assert_int_equal(c.max_memory_mb, 4096);
	assert_int_equal(c.default_pids_limit, 256);
	assert_int_equal(c.max_pids_limit, 4096);
	assert_int_equal(c.tmp_size_mb, 256);
	assert_int_equal(c.default_exec_timeout_seconds, 60);
	assert_int_equal(c.max_exec_timeout_seconds, 3600);
	assert_int_equal(c.max_exec_output_bytes, 10485760);
	assert_int_equal(c.max_file_bytes, 52428800);
	assert_int_equal(c.max_snapshot_bytes, 1073741824);
	assert_true(c.reap_interval_seconds == 10.0);
	assert_string_equal(c.docker_endpoint, "/var/run/docker.sock");
	assert_string_equal(c.privsep_user, "nobody");
	assert_string_equal(c.chroot_dir, "/var/empty");
#ifdef LIBEXECDIR
	assert_string_equal(c.libexec_dir, LIBEXECDIR);
#else
	assert_string_equal(c.libexec_dir, "/usr/local/libexec/agent-sandbox");
#endif
	assert_string_equal(c.log_level, "info");
	assert_string_equal(c.seccomp_mode, "kill");
	assert_null(c.instance_id);
	config_free(&c);

	/* Free wipes the structure, so a second free is harmless. */
	assert_null(c.api_keys);
	assert_null(c.host);
	assert_int_equal(c.port, 0);
	config_free(&c);
}

/* Item 37. */
static void
test_item37_values(void **state)
{
	struct config	 c;

	expect_ok(&c, ENV(
	    "AGENT_SANDBOX_API_KEYS=aaaaaaaaaaaaaaaa, bbbbbbbbbbbbbbbb ,",
	    "AGENT_SANDBOX_PORT=9000",
	    "AGENT_SANDBOX_DEFAULT_CPUS=0.5",
	    "AGENT_SANDBOX_ALLOW_NETWORK=no",
	    "AGENT_SANDBOX_ALLOW_RUNTIME_ENV=yes",
	    "AGENT_SANDBOX_DATA_DIR=/var/lib/sandbox",
	    "AGENT_SANDBOX_DEFAULT_IMAGE=alpine:3.20",
	    "AGENT_SANDBOX_URL=http://example:1",
	    "AGENT_SANDBOX_API_KEY=xyz",
	    "AGENT_SANDBOX_VERSION=1.2.3",
	    "AGENT_SANDBOX_BOGUS=whatever",
	    "PATH=/usr/bin:/bin",
	    "HOME=/root"));
	assert_int_equal(c.api_keys_count, 2);
	assert_string_equal(c.api_keys[0], KEY_A);
	assert_string_equal(c.api_keys[1], KEY_B);
	assert_null(c.api_keys[2]);
	assert_int_equal(c.insecure_no_auth, 0);
	assert_int_equal(c.port, 9000);
	assert_true(c.default_cpus == 0.5);
	assert_int_equal(c.allow_network, 0);
	assert_int_equal(c.allow_runtime_env, 1);
	assert_string_equal(c.data_dir, "/var/lib/sandbox");
	assert_string_equal(c.default_image, "alpine:3.20");
	/* The unrelated variables changed nothing. */
	assert_string_equal(c.host, "127.0.0.1");
	assert_int_equal(c.max_sandboxes, 20);
	config_free(&c);
}

/* Item 38: the substrings the reference tests look for, then exactly. */
static void
test_item38_errors(void **state)
{
	expect_err(ENV("AGENT_SANDBOX_API_KEYS=short"), MSG_SHORT_KEY);
	assert_non_null(strstr(err, "at least 16"));

	expect_err(ENV(INSECURE, "AGENT_SANDBOX_PORT=eighty"),
	    "invalid value for AGENT_SANDBOX_PORT: 'eighty'");
	assert_non_null(strstr(err, "AGENT_SANDBOX_PORT"));

	expect_err(ENV(INSECURE, "AGENT_SANDBOX_ALLOW_NETWORK=maybe"),
	    "AGENT_SANDBOX_ALLOW_NETWORK must be a boolean, got 'maybe'");
	assert_non_null(strstr(err, "boolean"));

	expect_err(ENV(INSECURE, "AGENT_SANDBOX_DEFAULT_CPUS=8"),
	    "default_cpus exceeds max_cpus");
	expect_err(ENV(INSECURE, "AGENT_SANDBOX_DEFAULT_MEMORY_MB=999999"),
	    "default_memory_mb exceeds max_memory_mb");
	expect_err(ENV(INSECURE, "AGENT_SANDBOX_MAX_SANDBOXES=0"),
	    "max_sandboxes must be at least 1");
	expect_err(ENV(INSECURE,
	    "AGENT_SANDBOX_DEFAULT_TIMEOUT_SECONDS=999999"),
	    "default_timeout_seconds exceeds max_timeout_seconds");
}

static const char *const bool_vars[] = {
	"AGENT_SANDBOX_INSECURE_NO_AUTH",
	"AGENT_SANDBOX_ALLOW_NETWORK",
};

static const char *const int_vars[] = {
	"AGENT_SANDBOX_PORT",
	"AGENT_SANDBOX_MAX_SANDBOXES",
	"AGENT_SANDBOX_DEFAULT_TIMEOUT_SECONDS",
	"AGENT_SANDBOX_MAX_TIMEOUT_SECONDS",
	"AGENT_SANDBOX_DEFAULT_MEMORY_MB",
	"AGENT_SANDBOX_MAX_MEMORY_MB",
	"AGENT_SANDBOX_DEFAULT_PIDS_LIMIT",
	"AGENT_SANDBOX_MAX_PIDS_LIMIT",
	"AGENT_SANDBOX_TMP_SIZE_MB",
	"AGENT_SANDBOX_DEFAULT_EXEC_TIMEOUT_SECONDS",
	"AGENT_SANDBOX_MAX_EXEC_TIMEOUT_SECONDS",
	"AGENT_SANDBOX_MAX_EXEC_OUTPUT_BYTES",
	"AGENT_SANDBOX_MAX_FILE_BYTES",
	"AGENT_SANDBOX_MAX_SNAPSHOT_BYTES",
	"AGENT_SANDBOX_MAX_PROCESSES_PER_SANDBOX",
	"AGENT_SANDBOX_MAX_PROCESSES",
};

static const char *const float_vars[] = {
	"AGENT_SANDBOX_DEFAULT_CPUS",
	"AGENT_SANDBOX_MAX_CPUS",
	"AGENT_SANDBOX_REAP_INTERVAL_SECONDS",
};

#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

static void
expect_var_err(const char *var, const char *value, const char *want)
{
	char	 setting[256];

	snprintf(setting, sizeof(setting), "%s=%s", var, value);
	/* The first entry wins, so INSECURE must not come before it. */
	expect_err(ENV(setting, INSECURE), want);
}

static void
test_bool_var_errors(void **state)
{
	static const char *const bad[] = { "maybe", "2", "tru", "y", "nope",
	    "-1", "truefalse", "o n" };
	char	 want[256];
	size_t	 i, j;

	for (i = 0; i < NELEM(bool_vars); i++)
		for (j = 0; j < NELEM(bad); j++) {
			snprintf(want, sizeof(want),
			    "%s must be a boolean, got '%s'", bool_vars[i],
			    bad[j]);
			expect_var_err(bool_vars[i], bad[j], want);
		}
	/* The raw value is quoted as Python's repr() would. */
	expect_var_err("AGENT_SANDBOX_ALLOW_NETWORK", " it's ",
	    "AGENT_SANDBOX_ALLOW_NETWORK must be a boolean, got \" it's \"");
	expect_var_err("AGENT_SANDBOX_ALLOW_NETWORK", "a\tb\\",
	    "AGENT_SANDBOX_ALLOW_NETWORK must be a boolean, got 'a\\tb\\\\'");
}

static void
test_bool_var_values(void **state)
{
	struct config	 c;

	expect_ok(&c, ENV(INSECURE, "AGENT_SANDBOX_ALLOW_NETWORK= OFF "));
	assert_int_equal(c.allow_network, 0);
	config_free(&c);
	expect_ok(&c, ENV(INSECURE, "AGENT_SANDBOX_ALLOW_NETWORK="));
	assert_int_equal(c.allow_network, 0);
	config_free(&c);
	expect_ok(&c, ENV(INSECURE, "AGENT_SANDBOX_ALLOW_NETWORK=Yes"));
	assert_int_equal(c.allow_network, 1);
	config_free(&c);
	expect_ok(&c, ENV("AGENT_SANDBOX_INSECURE_NO_AUTH=1"));
	assert_int_equal(c.insecure_no_auth, 1);
	config_free(&c);
	expect_ok(&c, ENV("AGENT_SANDBOX_INSECURE_NO_AUTH=\tON\n"));
	assert_int_equal(c.insecure_no_auth, 1);
	config_free(&c);
	/* Empty is false, and then keys are required. */
	expect_err(ENV("AGENT_SANDBOX_INSECURE_NO_AUTH="), MSG_NO_KEYS);
}

static void
test_int_var_errors(void **state)
{
	static const char *const bad[] = { "eighty", "", " ", "1.5", "1e3",
	    "0x10", "_1", "1_", "1__0", "1 0", "+", "--1", "ten", "nan",
	    "99999999999999999999" };
	char	 want[256];
	size_t	 i, j;

	for (i = 0; i < NELEM(int_vars); i++)
		for (j = 0; j < NELEM(bad); j++) {
			snprintf(want, sizeof(want),
			    "invalid value for %s: '%s'", int_vars[i], bad[j]);
			expect_var_err(int_vars[i], bad[j], want);
		}
}

static void
test_float_var_errors(void **state)
{
	/* Nonsense for a CPU count or a period: not finite, or not > 0. */
	static const char *const bad[] = { "abc", "", "0x1p1", "1,5", "1.5.",
	    "1e", ".", "e5", "1_.5", "inf", "-inf", "nan", "infinity", "0",
	    "0.0", "-1", "-0.5", "1e400", "1e7" };
	char	 want[256];
	size_t	 i, j;

	for (i = 0; i < NELEM(float_vars); i++)
		for (j = 0; j < NELEM(bad); j++) {
			snprintf(want, sizeof(want),
			    "invalid value for %s: '%s'", float_vars[i],
			    bad[j]);
			expect_var_err(float_vars[i], bad[j], want);
		}
}

/* Python's int() and float() syntax reaches the settings. */
static void
test_number_syntax(void **state)
{
	struct config	 c;

	expect_ok(&c, ENV(INSECURE,
	    "AGENT_SANDBOX_PORT= 9_000 ",
	    "AGENT_SANDBOX_MAX_SANDBOXES=+007",
	    "AGENT_SANDBOX_MAX_MEMORY_MB=\t8_192\n",
	    "AGENT_SANDBOX_MAX_SNAPSHOT_BYTES=2_147_483_648",
	    "AGENT_SANDBOX_MAX_CPUS= 1_6.0_0 ",
	    "AGENT_SANDBOX_DEFAULT_CPUS=.25",
	    "AGENT_SANDBOX_REAP_INTERVAL_SECONDS=5e-1"));
	assert_int_equal(c.port, 9000);
	assert_int_equal(c.max_sandboxes, 7);
	assert_int_equal(c.max_memory_mb, 8192);
	assert_int_equal(c.max_snapshot_bytes, 2147483648LL);
	assert_true(c.max_cpus == 16.0);
	assert_true(c.default_cpus == 0.25);
	assert_true(c.reap_interval_seconds == 0.5);
	config_free(&c);
}

/* Processes: their defaults, and the bounds dockerd-proxy can follow. */
static void
test_process_settings(void **state)
{
	struct config	 c;

	expect_ok(&c, ENV(INSECURE));
	assert_int_equal(c.process_output_bytes, 1048576);
	assert_int_equal(c.max_processes_per_sandbox, 16);
	assert_int_equal(c.max_processes, 256);
	config_free(&c);
	expect_ok(&c, ENV(INSECURE, "AGENT_SANDBOX_MAX_PROCESSES=256",
	    "AGENT_SANDBOX_PROCESS_OUTPUT_BYTES=65536"));
	assert_int_equal(c.max_processes, 256);
	assert_int_equal(c.process_output_bytes, 65536);
	config_free(&c);
	expect_var_err("AGENT_SANDBOX_MAX_PROCESSES", "257",
	    "invalid value for AGENT_SANDBOX_MAX_PROCESSES: '257'");
	expect_var_err("AGENT_SANDBOX_MAX_PROCESSES_PER_SANDBOX", "257",
	    "invalid value for AGENT_SANDBOX_MAX_PROCESSES_PER_SANDBOX: '257'");
	expect_var_err("AGENT_SANDBOX_PROCESS_OUTPUT_BYTES", "65535",
	    "invalid value for AGENT_SANDBOX_PROCESS_OUTPUT_BYTES: '65535'");
	expect_var_err("AGENT_SANDBOX_PROCESS_OUTPUT_BYTES", "268435457",
	    "invalid value for AGENT_SANDBOX_PROCESS_OUTPUT_BYTES: "
	    "'268435457'");
}

static void
test_int_ranges(void **state)
{
	struct config	 c;
	size_t		 i;

	expect_ok(&c, ENV(INSECURE, "AGENT_SANDBOX_PORT=0"));
	assert_int_equal(c.port, 0);
	config_free(&c);
	expect_ok(&c, ENV(INSECURE, "AGENT_SANDBOX_PORT=65535"));
	assert_int_equal(c.port, 65535);
	config_free(&c);
	expect_var_err("AGENT_SANDBOX_PORT", "65536",
	    "invalid value for AGENT_SANDBOX_PORT: '65536'");
	expect_var_err("AGENT_SANDBOX_PORT", "-1",
	    "invalid value for AGENT_SANDBOX_PORT: '-1'");

	/* Zero and negative limits are refused (not in the reference). */
	for (i = 0; i < NELEM(int_vars); i++) {
		char	 want[256];

		if (strcmp(int_vars[i], "AGENT_SANDBOX_PORT") == 0 ||
		    strcmp(int_vars[i], "AGENT_SANDBOX_MAX_SANDBOXES") == 0)
			continue;
		snprintf(want, sizeof(want), "invalid value for %s: '0'",
		    int_vars[i]);
		expect_var_err(int_vars[i], "0", want);
		snprintf(want, sizeof(want), "invalid value for %s: '-5'",
		    int_vars[i]);
		expect_var_err(int_vars[i], "-5", want);
	}
	/* max_sandboxes keeps the reference's check and message. */
	expect_var_err("AGENT_SANDBOX_MAX_SANDBOXES", "-3",
	    "max_sandboxes must be at least 1");
	expect_ok(&c, ENV(INSECURE, "AGENT_SANDBOX_MAX_SANDBOXES=1"));
	assert_int_equal(c.max_sandboxes, 1);
	config_free(&c);

	/* Upper bounds: INT_MAX for counts, 2^53 for byte caps. */
	expect_ok(&c, ENV(INSECURE,
	    "AGENT_SANDBOX_MAX_MEMORY_MB=2147483647",
	    "AGENT_SANDBOX_MAX_FILE_BYTES=9007199254740992",
	    "AGENT_SANDBOX_MAX_CPUS=1e6"));
	assert_int_equal(c.max_memory_mb, 2147483647);
	assert_int_equal(c.max_file_bytes, 9007199254740992LL);
	assert_true(c.max_cpus == 1e6);
	config_free(&c);
	expect_var_err("AGENT_SANDBOX_MAX_MEMORY_MB", "2147483648",
	    "invalid value for AGENT_SANDBOX_MAX_MEMORY_MB: '2147483648'");
	expect_var_err("AGENT_SANDBOX_MAX_FILE_BYTES", "9007199254740993",
	    "invalid value for AGENT_SANDBOX_MAX_FILE_BYTES: "
	    "'9007199254740993'");
	expect_var_err("AGENT_SANDBOX_MAX_SANDBOXES", "2147483648",
	    "invalid value for AGENT_SANDBOX_MAX_SANDBOXES: '2147483648'");
}

static void
test_cross_field(void **state)
{
	struct config	 c;

	expect_err(ENV(INSECURE, "AGENT_SANDBOX_DEFAULT_CPUS=4.5"),
	    "default_cpus exceeds max_cpus");
	expect_err(ENV(INSECURE, "AGENT_SANDBOX_MAX_CPUS=0.5"),
	    "default_cpus exceeds max_cpus");
	expect_err(ENV(INSECURE, "AGENT_SANDBOX_DEFAULT_MEMORY_MB=4097"),
	    "default_memory_mb exceeds max_memory_mb");
	expect_err(ENV(INSECURE, "AGENT_SANDBOX_MAX_TIMEOUT_SECONDS=899"),
	    "default_timeout_seconds exceeds max_timeout_seconds");
	expect_err(ENV(INSECURE,
	    "AGENT_SANDBOX_DEFAULT_EXEC_TIMEOUT_SECONDS=3601"),
	    "default_exec_timeout_seconds exceeds max_exec_timeout_seconds");
	expect_err(ENV(INSECURE, "AGENT_SANDBOX_MAX_PIDS_LIMIT=255"),
	    "default_pids_limit exceeds max_pids_limit");
	/* Ours: names dockerd-proxy would refuse stop the start. */
	expect_err(ENV(INSECURE, "AGENT_SANDBOX_NETWORK_NAME=a=b"),
	    "invalid value for AGENT_SANDBOX_NETWORK_NAME: 'a=b'");
	expect_err(ENV(INSECURE, "AGENT_SANDBOX_NETWORK_NAME=host"),
	    "invalid value for AGENT_SANDBOX_NETWORK_NAME: 'host'");
	expect_err(ENV(INSECURE, "AGENT_SANDBOX_NETWORK_NAME=container:x"),
	    "invalid value for AGENT_SANDBOX_NETWORK_NAME: 'container:x'");
	expect_err(ENV(INSECURE, "AGENT_SANDBOX_NETWORK_NAME="),
	    "invalid value for AGENT_SANDBOX_NETWORK_NAME: ''");
	expect_err(ENV(INSECURE, "AGENT_SANDBOX_DOCKER_RUNTIME=run/sc"),
	    "invalid value for AGENT_SANDBOX_DOCKER_RUNTIME: 'run/sc'");
	/* Ours: less CPU than Docker can enforce, as default or maximum. */
	expect_err(ENV(INSECURE, "AGENT_SANDBOX_DEFAULT_CPUS=0.005"),
	    "default_cpus must be at least 0.01");
	expect_err(ENV(INSECURE, "AGENT_SANDBOX_DEFAULT_CPUS=0.001",
	    "AGENT_SANDBOX_MAX_CPUS=0.001"),
	    "default_cpus must be at least 0.01");
	expect_ok(&c, ENV(INSECURE, "AGENT_SANDBOX_DEFAULT_CPUS=0.01",
	    "AGENT_SANDBOX_MAX_CPUS=0.01"));
	assert_true(config_cpus_min(&c) == 0.01);
	config_free(&c);
	/* Under gVisor, less than its kernel needs to start in time. */
	expect_err(ENV(INSECURE, "AGENT_SANDBOX_DOCKER_RUNTIME=runsc",
	    "AGENT_SANDBOX_DEFAULT_CPUS=0.05"),
	    "default_cpus must be at least 0.1 under gVisor (runsc)");
	expect_ok(&c, ENV(INSECURE, "AGENT_SANDBOX_DOCKER_RUNTIME=runsc",
	    "AGENT_SANDBOX_DEFAULT_CPUS=0.1"));
	assert_true(config_cpus_min(&c) == 0.1);
	config_free(&c);

	/* Equal is fine. */
	expect_ok(&c, ENV(INSECURE,
	    "AGENT_SANDBOX_DEFAULT_CPUS=4",
	    "AGENT_SANDBOX_DEFAULT_MEMORY_MB=4096",
	    "AGENT_SANDBOX_DEFAULT_TIMEOUT_SECONDS=86400",
	    "AGENT_SANDBOX_DEFAULT_EXEC_TIMEOUT_SECONDS=3600",
	    "AGENT_SANDBOX_DEFAULT_PIDS_LIMIT=4096"));
	assert_true(c.default_cpus == 4.0);
	assert_int_equal(c.default_memory_mb, 4096);
	assert_int_equal(c.default_timeout_seconds, 86400);
	assert_int_equal(c.default_exec_timeout_seconds, 3600);
	assert_int_equal(c.default_pids_limit, 4096);
	config_free(&c);
}

/* Parse errors first, in table order; then the checks in §10's order. */
static void
test_check_order(void **state)
{
	expect_err(ENV("AGENT_SANDBOX_PORT=eighty"),
	    "invalid value for AGENT_SANDBOX_PORT: 'eighty'");
	expect_err(ENV("AGENT_SANDBOX_ALLOW_NETWORK=maybe",
	    "AGENT_SANDBOX_PORT=eighty"),
	    "invalid value for AGENT_SANDBOX_PORT: 'eighty'");
	expect_err(ENV("AGENT_SANDBOX_INSECURE_NO_AUTH=maybe",
	    "AGENT_SANDBOX_PORT=eighty"),
	    "AGENT_SANDBOX_INSECURE_NO_AUTH must be a boolean, got 'maybe'");
	expect_err(ENV(INSECURE, "AGENT_SANDBOX_REAP_INTERVAL_SECONDS=x",
	    "AGENT_SANDBOX_ALLOW_NETWORK=maybe"),
	    "AGENT_SANDBOX_ALLOW_NETWORK must be a boolean, got 'maybe'");
	expect_err(ENV(INSECURE, "AGENT_SANDBOX_SANDBOX_USER=abc",
	    "AGENT_SANDBOX_MAX_SANDBOXES=x"),
	    "AGENT_SANDBOX_SANDBOX_USER must be a numeric uid or uid:gid, "
	    "got 'abc'");
	expect_err(ENV(INSECURE, "AGENT_SANDBOX_MAX_SNAPSHOT_BYTES=x",
	    "AGENT_SANDBOX_REAP_INTERVAL_SECONDS=y"),
	    "invalid value for AGENT_SANDBOX_MAX_SNAPSHOT_BYTES: 'x'");
	/* The settings of this implementation come after the table. */
	expect_err(ENV(INSECURE, "DOCKER_HOST=tcp://x:1",
	    "AGENT_SANDBOX_REAP_INTERVAL_SECONDS=y"),
	    "invalid value for AGENT_SANDBOX_REAP_INTERVAL_SECONDS: 'y'");
	expect_err(ENV("DOCKER_HOST=ssh://x"),
	    "DOCKER_HOST must be unix:///PATH or tcp://HOST:PORT, "
	    "got 'ssh://x'");

	expect_err(ENV("AGENT_SANDBOX_DEFAULT_CPUS=8",
	    "AGENT_SANDBOX_MAX_SANDBOXES=0"), MSG_NO_KEYS);
	expect_err(ENV("AGENT_SANDBOX_API_KEYS=short",
	    "AGENT_SANDBOX_DEFAULT_CPUS=8"), MSG_SHORT_KEY);
	expect_err(ENV(INSECURE, "AGENT_SANDBOX_DEFAULT_CPUS=8",
	    "AGENT_SANDBOX_DEFAULT_MEMORY_MB=999999"),
	    "default_cpus exceeds max_cpus");
	expect_err(ENV(INSECURE, "AGENT_SANDBOX_DEFAULT_MEMORY_MB=999999",
	    "AGENT_SANDBOX_DEFAULT_TIMEOUT_SECONDS=999999"),
	    "default_memory_mb exceeds max_memory_mb");
	expect_err(ENV(INSECURE, "AGENT_SANDBOX_DEFAULT_TIMEOUT_SECONDS=999999",
	    "AGENT_SANDBOX_DEFAULT_EXEC_TIMEOUT_SECONDS=9999"),
	    "default_timeout_seconds exceeds max_timeout_seconds");
	expect_err(ENV(INSECURE,
	    "AGENT_SANDBOX_DEFAULT_EXEC_TIMEOUT_SECONDS=9999",
	    "AGENT_SANDBOX_DEFAULT_PIDS_LIMIT=9999"),
	    "default_exec_timeout_seconds exceeds max_exec_timeout_seconds");
	expect_err(ENV(INSECURE, "AGENT_SANDBOX_DEFAULT_PIDS_LIMIT=9999",
	    "AGENT_SANDBOX_MAX_SANDBOXES=0"),
	    "default_pids_limit exceeds max_pids_limit");
}

static void
test_api_keys(void **state)
{
	struct config	 c;

	/* Exactly 16 characters is enough; 15 is not. */
	expect_ok(&c, ENV("AGENT_SANDBOX_API_KEYS=0123456789abcdef"));
	assert_int_equal(c.api_keys_count, 1);
	assert_string_equal(c.api_keys[0], "0123456789abcdef");
	assert_null(c.api_keys[1]);
	assert_int_equal(c.insecure_no_auth, 0);
	config_free(&c);
	expect_err(ENV("AGENT_SANDBOX_API_KEYS=0123456789abcde"),
	    MSG_SHORT_KEY);
	/* One short key among good ones fails it all. */
	expect_err(ENV("AGENT_SANDBOX_API_KEYS=" KEY_A ",tiny," KEY_B),
	    MSG_SHORT_KEY);
	/* Characters, not bytes: 15 two-byte characters are too few. */
	expect_err(ENV("AGENT_SANDBOX_API_KEYS="
	    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
	    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"),
	    MSG_SHORT_KEY);
	expect_ok(&c, ENV("AGENT_SANDBOX_API_KEYS="
	    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
	    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
	    "\xc3\xa9"));
	assert_int_equal(c.api_keys_count, 1);
	config_free(&c);
	/* Keys are checked even when auth is off. */
	expect_err(ENV(INSECURE, "AGENT_SANDBOX_API_KEYS=short"),
	    MSG_SHORT_KEY);
	expect_ok(&c, ENV(INSECURE, "AGENT_SANDBOX_API_KEYS=" KEY_A));
	assert_int_equal(c.insecure_no_auth, 1);
	assert_int_equal(c.api_keys_count, 1);
	config_free(&c);
	/* Trimmed, inner spaces kept, empty items dropped. */
	expect_ok(&c, ENV("AGENT_SANDBOX_API_KEYS=,, \t" KEY_A " ,,"
	    "key with spaces inside\xc2\xa0,"));
	assert_int_equal(c.api_keys_count, 2);
	assert_string_equal(c.api_keys[0], KEY_A);
	assert_string_equal(c.api_keys[1], "key with spaces inside");
	assert_null(c.api_keys[2]);
	config_free(&c);
}

/* No API key ever shows up in an error message. */
static void
test_api_key_never_in_error(void **state)
{
	static const char *const settings[] = {
		"AGENT_SANDBOX_PORT=eighty",
		"AGENT_SANDBOX_ALLOW_NETWORK=maybe",
		"AGENT_SANDBOX_DEFAULT_CPUS=8",
		"AGENT_SANDBOX_MAX_SANDBOXES=0",
		"AGENT_SANDBOX_SANDBOX_USER=abc",
		"DOCKER_HOST=tcp://127.0.0.1:0",
		"AGENT_SANDBOX_LOG_LEVEL=loud",
		"AGENT_SANDBOX_SECCOMP=off",
		"AGENT_SANDBOX_CHROOT_DIR=relative",
		/* A key pasted into the wrong variable is not echoed. */
		"AGENT_SANDBOX_PORT=" SECRET_KEY,
		"AGENT_SANDBOX_ALLOW_NETWORK= " SECRET_KEY " ",
		"AGENT_SANDBOX_SANDBOX_USER=" SECRET_KEY,
		"DOCKER_HOST=tcp://" SECRET_KEY,
		"AGENT_SANDBOX_DEFAULT_CPUS=x" SECRET_KEY "x",
		"AGENT_SANDBOX_LOG_LEVEL=" SECRET_KEY,
	};
	struct config	 c;
	size_t		 i;

	for (i = 0; i < NELEM(settings); i++) {
		assert_int_equal(load_vars(&c, ENV("AGENT_SANDBOX_API_KEYS="
		    KEY_A "," SECRET_KEY, settings[i])), -1);
		assert_true(strlen(err) > 0);
		assert_null(strstr(err, SECRET_KEY));
		assert_null(strstr(err, KEY_A));
	}
	expect_err(ENV("AGENT_SANDBOX_API_KEYS=" SECRET_KEY,
	    "AGENT_SANDBOX_PORT=" SECRET_KEY),
	    "invalid value for AGENT_SANDBOX_PORT: <redacted>");
	expect_err(ENV("AGENT_SANDBOX_API_KEYS=" SECRET_KEY,
	    "AGENT_SANDBOX_ALLOW_NETWORK=no " SECRET_KEY),
	    "AGENT_SANDBOX_ALLOW_NETWORK must be a boolean, got <redacted>");

	/* A short key is not quoted either. */
	expect_err(ENV("AGENT_SANDBOX_API_KEYS=Xy9_secret"), MSG_SHORT_KEY);
	assert_null(strstr(err, "Xy9_secret"));
}

static void
test_sandbox_user(void **state)
{
	static const char *const bad[] = { "abc", "", ":", "1000:", ":1000",
	    "1000:abc", "abc:1000", "1000:1001:1002", "-1", "+1000", " 1000",
	    "1000 ", "1_000", "10.5", "4294967295", "1:4294967295",
	    "99999999999", "0x3e8", "root" };
	struct config	 c;
	char		 want[256];
	size_t		 i;

	expect_ok(&c, ENV(INSECURE, "AGENT_SANDBOX_SANDBOX_USER=1000"));
	assert_string_equal(c.sandbox_user, "1000");
	assert_int_equal(c.sandbox_uid, 1000);
	assert_int_equal(c.sandbox_gid, 1000);
	config_free(&c);
	expect_ok(&c, ENV(INSECURE, "AGENT_SANDBOX_SANDBOX_USER=1000:1001"));
	assert_string_equal(c.sandbox_user, "1000:1001");
	assert_int_equal(c.sandbox_uid, 1000);
	assert_int_equal(c.sandbox_gid, 1001);
	config_free(&c);
	/* Root in any spelling, as uid or as gid. */
	expect_var_err("AGENT_SANDBOX_SANDBOX_USER", "0", "AGENT_SANDBOX_"
	    "SANDBOX_USER must not be root (a uid or gid of 0)");
	expect_var_err("AGENT_SANDBOX_SANDBOX_USER", "00", "AGENT_SANDBOX_"
	    "SANDBOX_USER must not be root (a uid or gid of 0)");
	expect_var_err("AGENT_SANDBOX_SANDBOX_USER", "0:0", "AGENT_SANDBOX_"
	    "SANDBOX_USER must not be root (a uid or gid of 0)");
	expect_var_err("AGENT_SANDBOX_SANDBOX_USER", "1000:0", "AGENT_SANDBOX_"
	    "SANDBOX_USER must not be root (a uid or gid of 0)");
	expect_var_err("AGENT_SANDBOX_SANDBOX_USER", "0:1000", "AGENT_SANDBOX_"
	    "SANDBOX_USER must not be root (a uid or gid of 0)");
	expect_var_err("AGENT_SANDBOX_SANDBOX_USER", "1000:000",
	    "AGENT_SANDBOX_SANDBOX_USER must not be root (a uid or gid of 0)");
	expect_ok(&c, ENV(INSECURE,
	    "AGENT_SANDBOX_SANDBOX_USER=4294967294:65534"));
	assert_int_equal(c.sandbox_uid, 4294967294U);
	assert_int_equal(c.sandbox_gid, 65534);
	config_free(&c);

	for (i = 0; i < NELEM(bad); i++) {
		snprintf(want, sizeof(want), "AGENT_SANDBOX_SANDBOX_USER must "
		    "be a numeric uid or uid:gid, got '%s'", bad[i]);
		expect_var_err("AGENT_SANDBOX_SANDBOX_USER", bad[i], want);
	}
}

static void
test_docker_host(void **state)
{
	static const char *const bad[] = { "ssh://user@host", "unix://",
	    "unix://relative.sock", "UNIX:///var/run/docker.sock",
	    "/var/run/docker.sock", "npipe:////./pipe/docker_engine",
	    "unix:/var/run/docker.sock", " unix:///x" };
	struct config	 c;
	char		 setting[256], want[256], path[200];
	size_t		 i;

	expect_ok(&c, ENV(INSECURE, "DOCKER_HOST="));
	assert_string_equal(c.docker_endpoint, "/var/run/docker.sock");
	config_free(&c);
	expect_ok(&c, ENV(INSECURE,
	    "DOCKER_HOST=unix:///run/user/1000/docker.sock"));
	assert_string_equal(c.docker_endpoint, "/run/user/1000/docker.sock");
	config_free(&c);

	for (i = 0; i < NELEM(bad); i++) {
		snprintf(setting, sizeof(setting), "DOCKER_HOST=%s", bad[i]);
		snprintf(want, sizeof(want),
		    "DOCKER_HOST must be unix:///PATH or tcp://HOST:PORT, "
		    "got '%s'", bad[i]);
		expect_err(ENV(INSECURE, setting), want);
	}

	/* The path must fit in sun_path (108 bytes with its NUL). */
	memset(path, 'p', sizeof(path));
	path[0] = '/';
	path[107] = '\0';
	snprintf(setting, sizeof(setting), "DOCKER_HOST=unix://%s", path);
	expect_ok(&c, ENV(INSECURE, setting));
	assert_string_equal(c.docker_endpoint, path);
	config_free(&c);
	path[107] = 'p';
	path[108] = '\0';
	snprintf(setting, sizeof(setting), "DOCKER_HOST=unix://%s", path);
	assert_int_equal(load_vars(&c, ENV(INSECURE, setting)), -1);
	assert_non_null(strstr(err,
	    "DOCKER_HOST must be unix:///PATH or tcp://HOST:PORT, "
	    "got 'unix:///ppp"));
}

static void
test_own_settings(void **state)
{
	struct config	 c;

	expect_ok(&c, ENV(INSECURE,
	    "AGENT_SANDBOX_PRIVSEP_USER=_sandbox",
	    "AGENT_SANDBOX_CHROOT_DIR=/run/agent-sandbox/empty",
	    "AGENT_SANDBOX_LIBEXEC_DIR=/tmp/build",
	    "AGENT_SANDBOX_LOG_LEVEL=debug",
	    "AGENT_SANDBOX_SECCOMP=trap"));
	assert_string_equal(c.privsep_user, "_sandbox");
	assert_string_equal(c.chroot_dir, "/run/agent-sandbox/empty");
	assert_string_equal(c.libexec_dir, "/tmp/build");
	assert_string_equal(c.log_level, "debug");
	assert_string_equal(c.seccomp_mode, "trap");
	config_free(&c);

	/* Words are case-insensitive and stored lower-case; "" = default. */
	expect_ok(&c, ENV(INSECURE, "AGENT_SANDBOX_LOG_LEVEL=WARN",
	    "AGENT_SANDBOX_SECCOMP=Log"));
	assert_string_equal(c.log_level, "warn");
	assert_string_equal(c.seccomp_mode, "log");
	config_free(&c);
	expect_ok(&c, ENV(INSECURE, "AGENT_SANDBOX_LOG_LEVEL=warning",
	    "AGENT_SANDBOX_SECCOMP=kill"));
	assert_string_equal(c.log_level, "warn");
	assert_string_equal(c.seccomp_mode, "kill");
	config_free(&c);
	expect_ok(&c, ENV(INSECURE, "AGENT_SANDBOX_LOG_LEVEL=Info",
	    "AGENT_SANDBOX_SECCOMP="));
	assert_string_equal(c.log_level, "info");
	assert_string_equal(c.seccomp_mode, "kill");
	config_free(&c);
	expect_ok(&c, ENV(INSECURE, "AGENT_SANDBOX_LOG_LEVEL="));
	assert_string_equal(c.log_level, "info");
	config_free(&c);

	expect_err(ENV(INSECURE, "AGENT_SANDBOX_LOG_LEVEL=verbose"),
	    "AGENT_SANDBOX_LOG_LEVEL must be one of warn, info, debug, "
	    "got 'verbose'");
	expect_err(ENV(INSECURE, "AGENT_SANDBOX_LOG_LEVEL= debug"),
	    "AGENT_SANDBOX_LOG_LEVEL must be one of warn, info, debug, "
	    "got ' debug'");
	expect_err(ENV(INSECURE, "AGENT_SANDBOX_SECCOMP=allow"),
	    "AGENT_SANDBOX_SECCOMP must be one of kill, trap, log, "
	    "got 'allow'");
	expect_err(ENV(INSECURE, "AGENT_SANDBOX_SECCOMP=0"),
	    "AGENT_SANDBOX_SECCOMP must be one of kill, trap, log, got '0'");
	expect_ok(&c, ENV(INSECURE));
	assert_string_equal(c.allowed_images_match, "glob");
	config_free(&c);
	expect_ok(&c, ENV(INSECURE, "AGENT_SANDBOX_ALLOWED_IMAGES_MATCH=Parts"));
	assert_string_equal(c.allowed_images_match, "parts");
	config_free(&c);
	expect_err(ENV(INSECURE, "AGENT_SANDBOX_ALLOWED_IMAGES_MATCH=regex"),
	    "AGENT_SANDBOX_ALLOWED_IMAGES_MATCH must be one of glob, parts, "
	    "got 'regex'");
	expect_err(ENV(INSECURE, "AGENT_SANDBOX_PRIVSEP_USER="),
	    "invalid value for AGENT_SANDBOX_PRIVSEP_USER: ''");
	expect_err(ENV(INSECURE, "AGENT_SANDBOX_MANAGERD_USER="),
	    "invalid value for AGENT_SANDBOX_MANAGERD_USER: ''");
	expect_ok(&c, ENV(INSECURE));
	assert_string_equal(c.managerd_user, "agent-sandbox");
	config_free(&c);
	expect_ok(&c, ENV(INSECURE, "AGENT_SANDBOX_MANAGERD_USER=asd"));
	assert_string_equal(c.managerd_user, "asd");
	config_free(&c);
	expect_err(ENV(INSECURE, "AGENT_SANDBOX_CHROOT_DIR=var/empty"),
	    "AGENT_SANDBOX_CHROOT_DIR must be an absolute path, "
	    "got 'var/empty'");
	expect_err(ENV(INSECURE, "AGENT_SANDBOX_CHROOT_DIR="),
	    "AGENT_SANDBOX_CHROOT_DIR must be an absolute path, got ''");
	expect_err(ENV(INSECURE, "AGENT_SANDBOX_LIBEXEC_DIR=./build"),
	    "AGENT_SANDBOX_LIBEXEC_DIR must be an absolute path, "
	    "got './build'");
}

/* Strings are taken verbatim; lists are split and trimmed. */
static void
test_strings_and_lists(void **state)
{
	struct config	 c;

	expect_ok(&c, ENV(INSECURE,
	    "AGENT_SANDBOX_HOST= 0.0.0.0 ",
	    "AGENT_SANDBOX_DATA_DIR=",
	    "AGENT_SANDBOX_DEFAULT_IMAGE=alpine:3.20",
	    "AGENT_SANDBOX_DOCKER_RUNTIME=runsc",
	    "AGENT_SANDBOX_NETWORK_NAME=my-net_1.x",
	    "AGENT_SANDBOX_ALLOWED_IMAGES= python:* , ,alpine:3.20,\t,"));
	assert_string_equal(c.host, " 0.0.0.0 ");
	assert_string_equal(c.data_dir, "");
	assert_string_equal(c.default_image, "alpine:3.20");
	assert_string_equal(c.docker_runtime, "runsc");
	assert_string_equal(c.network_name, "my-net_1.x");
	assert_int_equal(c.allowed_images_count, 2);
	assert_string_equal(c.allowed_images[0], "python:*");
	assert_string_equal(c.allowed_images[1], "alpine:3.20");
	assert_null(c.allowed_images[2]);
	config_free(&c);

	/* An empty allowlist stays empty (nothing allowed). */
	expect_ok(&c, ENV(INSECURE, "AGENT_SANDBOX_ALLOWED_IMAGES="));
	assert_int_equal(c.allowed_images_count, 0);
	assert_non_null(c.allowed_images);
	assert_null(c.allowed_images[0]);
	config_free(&c);
}

static void
test_environment_handling(void **state)
{
	struct config	 c;

	/* The first of two entries wins, as getenv() has it. */
	expect_ok(&c, ENV(INSECURE, "AGENT_SANDBOX_PORT=1234",
	    "AGENT_SANDBOX_PORT=eighty"));
	assert_int_equal(c.port, 1234);
	config_free(&c);
	/* Names match exactly: no prefixes, no other case, no bare names. */
	expect_ok(&c, ENV(INSECURE, "AGENT_SANDBOX_PORTX=1",
	    "AGENT_SANDBOX_POR=2", "agent_sandbox_port=3",
	    "AGENT_SANDBOX_PORT", "X_AGENT_SANDBOX_PORT=4", "=5", "",
	    "AGENT_SANDBOX_HOST"));
	assert_int_equal(c.port, 8080);
	assert_string_equal(c.host, "127.0.0.1");
	config_free(&c);
}

static void
test_error_buffer(void **state)
{
	char		*envp[] = { NULL };
	char		 small[16];
	struct config	 c;

	memset(small, 'x', sizeof(small));
	assert_int_equal(config_load(&c, envp, small, sizeof(small)), -1);
	assert_int_equal(strlen(small), sizeof(small) - 1);
	assert_memory_equal(small, MSG_NO_KEYS, sizeof(small) - 1);
	assert_int_equal(config_load(&c, envp, NULL, 0), -1);
	assert_null(c.api_keys);
	small[0] = 'x';
	assert_int_equal(config_load(&c, envp, small, 0), -1);
	assert_int_equal(small[0], 'x');
}

struct long_case {
	const char	*raw;
	long long	 want;
};

static void
test_parse_long(void **state)
{
	static const struct long_case good[] = {
		{ "0", 0 }, { "42", 42 }, { "+5", 5 }, { "-5", -5 },
		{ " -5 ", -5 }, { "007", 7 }, { "1_000", 1000 },
		{ "1_2_3", 123 }, { "\t\n\v\f\r 9 \r\n", 9 },
		{ "\xc2\xa0" "5\xe3\x80\x80", 5 }, { "\xe2\x80\x83" "6", 6 },
		{ "9223372036854775807", LLONG_MAX },
		{ "-9223372036854775808", LLONG_MIN },
		{ "-0", 0 },
	};
	static const char *const bad[] = { "", " ", "+", "-", "_1", "1_",
	    "1__0", "1 0", "0x10", "1.0", "1e3", "1,000", "one", "+-1",
	    "- 1", "9223372036854775808", "-9223372036854775809",
	    "99999999999999999999999", "\xc2\x85", "1\xe2\x80\x8b",
	    "\xc2" "5", "5_\xc2\xa0", "\x1c" "5", "5\x1f" };
	long long	 v;
	size_t		 i;

	for (i = 0; i < NELEM(good); i++) {
		v = 12345;
		if (config_parse_long(good[i].raw, &v) != 0)
			fail_msg("rejected '%s'", good[i].raw);
		assert_int_equal(v, good[i].want);
	}
	for (i = 0; i < NELEM(bad); i++)
		if (config_parse_long(bad[i], &v) != -1)
			fail_msg("accepted '%s'", bad[i]);
}

struct double_case {
	const char	*raw;
	double		 want;
};

static void
test_parse_double(void **state)
{
	static const struct double_case good[] = {
		{ "0.5", 0.5 }, { "1", 1.0 }, { "-2", -2.0 }, { "+.5", 0.5 },
		{ "5.", 5.0 }, { ".5", 0.5 }, { "1e5", 1e5 }, { "1E+5", 1e5 },
		{ "2.5e-3", 2.5e-3 }, { "1_0.5", 10.5 }, { "1_0e1_0", 1e11 },
		{ "1.5e-3_0", 1.5e-30 }, { " 8 ", 8.0 },
		{ "\xc2\xa0" "3.25\n", 3.25 }, { "1e400", INFINITY },
		{ "-1e400", -INFINITY }, { "1e-400", 0.0 },
		{ "infinity", INFINITY }, { "-InF", -INFINITY },
		{ "+iNfInItY", INFINITY }, { "0.1", 0.1 },
		{ "123456789.125", 123456789.125 },
	};
	static const char *const nans[] = { "nan", " NaN ", "+nan", "-nAn" };
	static const char *const bad[] = { "", " ", ".", "e5", "1e", "1e+",
	    "1._5", "1_.5", "1e_5", "1_e5", "_1", "1_", "inf_", "i_nf",
	    "0x1p3", "0x10", "nan(1)", "infinit", "infinityy", "1.5.", "1,5",
	    "--1", "+-1", "- 1", "1 .5", "1d", "1f", "abc", "\xc2\x85",
	    "\x1c" "1.5", "1.5\x1f" };
	double	 v;
	size_t	 i;

	for (i = 0; i < NELEM(good); i++) {
		v = 12345;
		if (config_parse_double(good[i].raw, &v) != 0)
			fail_msg("rejected '%s'", good[i].raw);
		if (!(v == good[i].want))
			fail_msg("'%s' gave %g", good[i].raw, v);
	}
	for (i = 0; i < NELEM(nans); i++) {
		v = 0;
		assert_int_equal(config_parse_double(nans[i], &v), 0);
		assert_true(isnan(v));
	}
	for (i = 0; i < NELEM(bad); i++)
		if (config_parse_double(bad[i], &v) != -1)
			fail_msg("accepted '%s'", bad[i]);
}

/* Python's whitespace, for building test input. */
static const char *const white[] = { " ", "\t", "\n", "\r", "\v", "\f",
    "\x1c", "\x1f", "\xc2\x85", "\xc2\xa0", "\xe2\x80\x83", "\xe2\x80\xa8",
    "\xe3\x80\x80" };

static void
add_white(char *buf, size_t len, int max)
{
	int	 n;

	for (n = random() % (max + 1); n > 0; n--)
		strlcat(buf, white[random() % NELEM(white)], len);
}

static void
test_parse_bool_words(void **state)
{
	static const struct {
		const char	*word;
		int		 value;
	} words[] = {
		{ "1", 1 }, { "true", 1 }, { "yes", 1 }, { "on", 1 },
		{ "0", 0 }, { "false", 0 }, { "no", 0 }, { "off", 0 },
		{ "", 0 },
	};
	static const char *const bad[] = { "maybe", "2", "-1", "+1", "01",
	    "1.0", "tru", "truee", "t", "y", "n", "f", "ye", "yess", "o n",
	    "o", "of", "offf", "none", "null", "enabled", "disabled",
	    "true false", "\"true\"", "'on'", "ON!", "\xe2\x80\x8b",
	    "tr\xc3\xbc" "e", "\xef\xbd\x94rue" };
	char	 buf[64];
	size_t	 i, j, len;
	unsigned int mask;
	int	 v;

	srandom(40);
	/* Every upper/lower-case spelling, with whitespace around. */
	for (i = 0; i < NELEM(words); i++) {
		len = strlen(words[i].word);
		for (mask = 0; mask < (1U << len); mask++) {
			buf[0] = '\0';
			add_white(buf, sizeof(buf), 3);
			for (j = 0; j < len; j++) {
				char	 ch[2] = { words[i].word[j], '\0' };

				if (mask & (1U << j) && ch[0] >= 'a' &&
				    ch[0] <= 'z')
					ch[0] -= 'a' - 'A';
				strlcat(buf, ch, sizeof(buf));
			}
			add_white(buf, sizeof(buf), 3);
			v = -1;
			if (config_parse_bool(buf, &v) != 0)
				fail_msg("rejected '%s'", buf);
			assert_int_equal(v, words[i].value);
		}
	}
	/* U+0085 is whitespace to Python: stripped, it leaves "". */
	v = -1;
	assert_int_equal(config_parse_bool("\xc2\x85", &v), 0);
	assert_int_equal(v, 0);
	for (i = 0; i < NELEM(bad); i++) {
		v = 7;
		if (config_parse_bool(bad[i], &v) != -1)
			fail_msg("accepted '%s'", bad[i]);
		assert_int_equal(v, 7);
	}
}

/* Item 40: accepted exactly when the trimmed lower-cased word is listed. */
static void
test_parse_bool_property(void **state)
{
	static const char alphabet[] = "01tTrRuUeEyYsSoOnNfFaAlLxX2 \t";
	static const char *const truthy[] = { "1", "true", "yes", "on" };
	static const char *const falsy[] = { "0", "false", "no", "off", "" };
	char	 raw[16], norm[16];
	size_t	 len, i, a, b;
	int	 n, want, got, v, accepted = 0, rejected = 0;

	srandom(4040);
	for (n = 0; n < 50000; n++) {
		len = random() % 7;
		for (i = 0; i < len; i++)
			raw[i] = alphabet[random() % (sizeof(alphabet) - 1)];
		raw[len] = '\0';

		/* ASCII str.strip().lower(), enough for this alphabet. */
		for (a = 0; a < len && (raw[a] == ' ' || raw[a] == '\t'); a++)
			;
		for (b = len; b > a && (raw[b - 1] == ' ' ||
		    raw[b - 1] == '\t'); b--)
			;
		for (i = a; i < b; i++)
			norm[i - a] = (raw[i] >= 'A' && raw[i] <= 'Z') ?
			    raw[i] + ('a' - 'A') : raw[i];
		norm[b - a] = '\0';
		want = -1;
		for (i = 0; i < NELEM(truthy); i++)
			if (strcmp(norm, truthy[i]) == 0)
				want = 1;
		for (i = 0; i < NELEM(falsy); i++)
			if (strcmp(norm, falsy[i]) == 0)
				want = 0;

		v = -1;
		got = config_parse_bool(raw, &v);
		if (want == -1) {
			if (got != -1)
				fail_msg("accepted '%s'", raw);
			rejected++;
		} else {
			if (got != 0)
				fail_msg("rejected '%s'", raw);
			assert_int_equal(v, want);
			accepted++;
		}
	}
	/* Both outcomes were exercised plenty. */
	assert_true(accepted > 1000);
	assert_true(rejected > 1000);
}

static void
test_parse_list_examples(void **state)
{
	char	**l;
	size_t	  n;

	l = config_parse_list("a, b ,", &n);
	assert_non_null(l);
	assert_int_equal(n, 2);
	assert_string_equal(l[0], "a");
	assert_string_equal(l[1], "b");
	assert_null(l[2]);
	config_list_free(l);

	l = config_parse_list("", &n);
	assert_non_null(l);
	assert_int_equal(n, 0);
	assert_null(l[0]);
	config_list_free(l);

	l = config_parse_list(" , ,,\t,", &n);
	assert_non_null(l);
	assert_int_equal(n, 0);
	assert_null(l[0]);
	config_list_free(l);

	l = config_parse_list("*", &n);
	assert_non_null(l);
	assert_int_equal(n, 1);
	assert_string_equal(l[0], "*");
	config_list_free(l);

	l = config_parse_list("\xc2\xa0x y\xe3\x80\x80,\xe2\x80\x8bz", &n);
	assert_non_null(l);
	assert_int_equal(n, 2);
	assert_string_equal(l[0], "x y");
	/* U+200B is not whitespace to Python. */
	assert_string_equal(l[1], "\xe2\x80\x8bz");
	config_list_free(l);

	config_list_free(NULL);
}

/* Item 39: comma-free items joined by "," or " , " parse back stripped. */
static void
test_parse_list_property(void **state)
{
	static const char *const core[] = { "a", "Z", "7", "-", "_", ":",
	    "/", ".", "*", "?", "[", "]", "@", "=", "'", "\"", "\\",
	    "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xe2\x80\x8b",
	    "\xff" };
	char	  joined[4096], items[8][256], **l;
	size_t	  nitems, nwant, n, i, k, clen;
	int	  iter, nonempty = 0, blank = 0;

	srandom(39);
	for (iter = 0; iter < 500; iter++) {
		joined[0] = '\0';
		nitems = 1 + random() % 8;
		nwant = 0;
		for (i = 0; i < nitems; i++) {
			/* Whitespace, a core whose ends are not, whitespace. */
			items[nwant][0] = '\0';
			clen = random() % 4 == 0 ? 0 : 1 + random() % 6;
			for (k = 0; k < clen; k++) {
				if (k > 0 && k + 1 < clen && random() % 4 == 0)
					add_white(items[nwant],
					    sizeof(items[nwant]), 2);
				strlcat(items[nwant],
				    core[random() % NELEM(core)],
				    sizeof(items[nwant]));
			}
			if (i > 0)
				strlcat(joined, random() % 2 ? "," : " , ",
				    sizeof(joined));
			add_white(joined, sizeof(joined), 3);
			strlcat(joined, items[nwant], sizeof(joined));
			add_white(joined, sizeof(joined), 3);
			if (clen > 0) {
				nwant++;
				nonempty++;
			} else
				blank++;
		}
		assert_true(strlen(joined) < sizeof(joined) - 1);

		l = config_parse_list(joined, &n);
		assert_non_null(l);
		assert_int_equal(n, nwant);
		for (i = 0; i < nwant; i++) {
			assert_non_null(l[i]);
			assert_string_equal(l[i], items[i]);
		}
		assert_null(l[nwant]);
		config_list_free(l);
	}
	assert_true(nonempty > 1000);
	assert_true(blank > 100);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_env),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_item37_values),
		cmocka_unit_test(test_item38_errors),
		cmocka_unit_test(test_bool_var_errors),
		cmocka_unit_test(test_bool_var_values),
		cmocka_unit_test(test_int_var_errors),
		cmocka_unit_test(test_float_var_errors),
		cmocka_unit_test(test_number_syntax),
		cmocka_unit_test(test_int_ranges),
		cmocka_unit_test(test_process_settings),
		cmocka_unit_test(test_cross_field),
		cmocka_unit_test(test_check_order),
		cmocka_unit_test(test_api_keys),
		cmocka_unit_test(test_api_key_never_in_error),
		cmocka_unit_test(test_sandbox_user),
		cmocka_unit_test(test_docker_host),
		cmocka_unit_test(test_own_settings),
		cmocka_unit_test(test_strings_and_lists),
		cmocka_unit_test(test_environment_handling),
		cmocka_unit_test(test_error_buffer),
		cmocka_unit_test(test_parse_long),
		cmocka_unit_test(test_parse_double),
		cmocka_unit_test(test_parse_bool_words),
		cmocka_unit_test(test_parse_bool_property),
		cmocka_unit_test(test_parse_list_examples),
		cmocka_unit_test(test_parse_list_property),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
