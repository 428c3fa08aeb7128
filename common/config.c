/*
 * Configuration from AGENT_SANDBOX_* environment variables (API.md §10).
 * Values are parsed the way the Python reference parses them (str.strip,
 * int(), float()), every variable is read in table order so the first bad
 * one is reported, and the cross-field checks follow in the order of §10.
 */
#include <sys/types.h>

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "config_internal.h"
#include "format.h"
#include "ids.h"
#include "sandbox_msg.h"

#ifndef LIBEXECDIR
#define LIBEXECDIR	"/usr/local/libexec/agent-sandbox"
#endif

#define API_KEY_MIN_CHARS	16

/* Bounds of our own: beyond them a setting makes no sense (see below). */
#define INT_SETTING_MAX		INT_MAX
#define BYTES_SETTING_MAX	(1LL << 53)
#define FLOAT_SETTING_MAX	1e6
/*
 * A process's ring: at least two of the largest events, at most what
 * managerd can hold for a few of them; and how many processes at most:
 * dockerd-proxy follows no more than that many at once, each with a
 * Docker request and its socket (PROXY_PROCESSES_MAX, dockerd-proxy/proxy.h).
 */
#define PROCESS_OUTPUT_MIN	(64 * 1024)
#define PROCESS_OUTPUT_MAX	(256LL * 1024 * 1024)
#define PROCESSES_MAX		256
/* A day; and what one process can hold with its descriptor reserve. */
#define HTTP_TIMEOUT_MAX	86400.0
#define HTTP_CONNECTIONS_MAX	65536

/* A uid or gid: decimal digits only, below (uid_t)-1. */
static int
parse_id(const char *s, size_t n, unsigned int *out)
{
	unsigned long long	 v = 0;
	size_t			 i;

	if (n == 0 || n > 10)
		return -1;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (unsigned int)(s[i] - '0');
	}
	if (v >= UINT32_MAX)
		return -1;
	*out = (unsigned int)v;
	return 0;
}

static int
get_sandbox_user(struct loader *ld)
{
	const char	*var = "AGENT_SANDBOX_SANDBOX_USER", *raw, *colon;
	struct config	*conf = ld->conf;

	if (cfg_get_str(ld, var, "1000:1000", &conf->sandbox_user) == -1)
		return -1;
	raw = conf->sandbox_user;
	if ((colon = strchr(raw, ':')) == NULL) {
		if (parse_id(raw, strlen(raw), &conf->sandbox_uid) == -1)
			return cfg_fail_raw(ld, RAW_USER, var, raw);
		conf->sandbox_gid = conf->sandbox_uid;
		return 0;
	}
	if (parse_id(raw, colon - raw, &conf->sandbox_uid) == -1 ||
	    parse_id(colon + 1, strlen(colon + 1), &conf->sandbox_gid) == -1)
		return cfg_fail_raw(ld, RAW_USER, var, raw);
	return 0;
}

/*
 * Not the reference's check: sandboxes never run as root, and dockerd-proxy
 * refuses to start with such a user (a gid of 0 reaches root-group files
 * in an image as surely as a uid of 0 reaches root's).
 */
static int
check_sandbox_user(struct loader *ld)
{
	if (ld->conf->sandbox_uid == 0 || ld->conf->sandbox_gid == 0)
		return cfg_fail(ld,
		    "AGENT_SANDBOX_SANDBOX_USER must not be root "
		    "(a uid or gid of 0)");
	return 0;
}

/* Every variable, in the order of the table in API.md §10, then ours. */
static int
load_vars(struct loader *ld)
{
	static const char *const levels[] = { "warn", "warn",
	    "warning", "warn", "info", "info", "debug", "debug", NULL };
	static const char *const modes[] = { "kill", "kill", "trap", "trap",
	    "log", "log", NULL };
	static const char *const matches[] = { "glob", "glob", "parts",
	    "parts", NULL };
	struct config	*c = ld->conf;
	long long	 port;

	if (cfg_get_list(ld, "AGENT_SANDBOX_API_KEYS", "", &c->api_keys,
	    &c->api_keys_count) == -1 ||
	    cfg_get_bool(ld, "AGENT_SANDBOX_INSECURE_NO_AUTH", 0,
	    &c->insecure_no_auth) == -1 ||
	    cfg_get_str(ld, "AGENT_SANDBOX_HOST", "127.0.0.1",
	    &c->host) == -1 ||
	    cfg_get_llong(ld, "AGENT_SANDBOX_PORT", 8080, 0, 65535,
	    &port) == -1 ||
	    cfg_get_str(ld, "AGENT_SANDBOX_DATA_DIR", "./data",
	    &c->data_dir) == -1 ||
	    cfg_get_str(ld, "AGENT_SANDBOX_DEFAULT_IMAGE", "python:3.12-slim",
	    &c->default_image) == -1 ||
	    cfg_get_list(ld, "AGENT_SANDBOX_ALLOWED_IMAGES", "*",
	    &c->allowed_images, &c->allowed_images_count) == -1 ||
	    get_sandbox_user(ld) == -1 || check_sandbox_user(ld) == -1 ||
	    cfg_get_str(ld, "AGENT_SANDBOX_DOCKER_RUNTIME", "",
	    &c->docker_runtime) == -1 ||
	    cfg_get_str(ld, "AGENT_SANDBOX_NETWORK_NAME", "agent-sandbox-net",
	    &c->network_name) == -1 ||
	    cfg_get_bool(ld, "AGENT_SANDBOX_ALLOW_NETWORK", 1,
	    &c->allow_network) == -1 ||
	    cfg_get_bool(ld, "AGENT_SANDBOX_ALLOW_RUNTIME_ENV", 0,
	    &c->allow_runtime_env) == -1)
		return -1;
	c->port = (int)port;

	/*
	 * The reference takes any integer; we also refuse zero and negative
	 * limits (a 0 MiB limit means "unlimited" to Docker) and values too
	 * large to compute with.  max_sandboxes keeps the reference's own
	 * check and message.
	 */
	if (cfg_get_long(ld, "AGENT_SANDBOX_MAX_SANDBOXES", 20, LONG_MIN,
	    INT_SETTING_MAX, &c->max_sandboxes) == -1 ||
	    cfg_get_long(ld, "AGENT_SANDBOX_DEFAULT_TIMEOUT_SECONDS", 900, 1,
	    INT_SETTING_MAX, &c->default_timeout_seconds) == -1 ||
	    cfg_get_long(ld, "AGENT_SANDBOX_MAX_TIMEOUT_SECONDS", 86400, 1,
	    INT_SETTING_MAX, &c->max_timeout_seconds) == -1 ||
	    cfg_get_double(ld, "AGENT_SANDBOX_DEFAULT_CPUS", 1.0,
	    FLOAT_SETTING_MAX, &c->default_cpus) == -1 ||
	    cfg_get_double(ld, "AGENT_SANDBOX_MAX_CPUS", 4.0, FLOAT_SETTING_MAX,
	    &c->max_cpus) == -1 ||
	    cfg_get_long(ld, "AGENT_SANDBOX_DEFAULT_MEMORY_MB", 512, 1,
	    INT_SETTING_MAX, &c->default_memory_mb) == -1 ||
	    cfg_get_long(ld, "AGENT_SANDBOX_MAX_MEMORY_MB", 4096, 1,
	    INT_SETTING_MAX, &c->max_memory_mb) == -1 ||
	    cfg_get_long(ld, "AGENT_SANDBOX_DEFAULT_PIDS_LIMIT", 256, 1,
	    INT_SETTING_MAX, &c->default_pids_limit) == -1 ||
	    cfg_get_long(ld, "AGENT_SANDBOX_MAX_PIDS_LIMIT", 4096, 1,
	    INT_SETTING_MAX, &c->max_pids_limit) == -1 ||
	    cfg_get_long(ld, "AGENT_SANDBOX_TMP_SIZE_MB", 256, 1,
	    CONFIG_TMP_SIZE_MB_MAX, &c->tmp_size_mb) == -1 ||
	    cfg_get_long(ld, "AGENT_SANDBOX_DEFAULT_EXEC_TIMEOUT_SECONDS", 60,
	    1,
	    INT_SETTING_MAX, &c->default_exec_timeout_seconds) == -1 ||
	    cfg_get_long(ld, "AGENT_SANDBOX_MAX_EXEC_TIMEOUT_SECONDS", 3600, 1,
	    INT_SETTING_MAX, &c->max_exec_timeout_seconds) == -1 ||
	    cfg_get_llong(ld, "AGENT_SANDBOX_MAX_EXEC_OUTPUT_BYTES", 10485760,
	    1,
	    BYTES_SETTING_MAX, &c->max_exec_output_bytes) == -1 ||
	    cfg_get_llong(ld, "AGENT_SANDBOX_MAX_FILE_BYTES", 52428800, 1,
	    BYTES_SETTING_MAX, &c->max_file_bytes) == -1 ||
	    cfg_get_llong(ld, "AGENT_SANDBOX_MAX_SNAPSHOT_BYTES", 1073741824, 1,
	    BYTES_SETTING_MAX, &c->max_snapshot_bytes) == -1 ||
	    cfg_get_double(ld, "AGENT_SANDBOX_REAP_INTERVAL_SECONDS", 10.0,
	    FLOAT_SETTING_MAX, &c->reap_interval_seconds) == -1)
		return -1;

	if (config_load_docker(ld) == -1 ||
	    cfg_get_str(ld, "AGENT_SANDBOX_PRIVSEP_USER", "nobody",
	    &c->privsep_user) == -1)
		return -1;
	if (c->privsep_user[0] == '\0')
		return cfg_fail_raw(ld, RAW_VALUE, "AGENT_SANDBOX_PRIVSEP_USER",
		    "");
	if (cfg_get_str(ld, "AGENT_SANDBOX_MANAGERD_USER", "agent-sandbox",
	    &c->managerd_user) == -1)
		return -1;
	if (c->managerd_user[0] == '\0')
		return cfg_fail_raw(ld, RAW_VALUE,
		    "AGENT_SANDBOX_MANAGERD_USER",
		    "");
	if (cfg_get_abspath(ld, "AGENT_SANDBOX_CHROOT_DIR", "/var/empty",
	    &c->chroot_dir) == -1 ||
	    cfg_get_abspath(ld, "AGENT_SANDBOX_LIBEXEC_DIR", LIBEXECDIR,
	    &c->libexec_dir) == -1 ||
	    cfg_get_word(ld, "AGENT_SANDBOX_LOG_LEVEL", levels, "info",
	    RAW_LOG_LEVEL, &c->log_level) == -1 ||
	    cfg_get_word(ld, "AGENT_SANDBOX_SECCOMP", modes, "kill",
	    RAW_SECCOMP,
	    &c->seccomp_mode) == -1 ||
	    cfg_get_word(ld, "AGENT_SANDBOX_ALLOWED_IMAGES_MATCH", matches,
	    "glob",
	    RAW_IMAGE_MATCH, &c->allowed_images_match) == -1)
		return -1;
	return 0;
}

/* Processes: each one's output ring, and how many (docs/configuration.md). */
static int
load_process_vars(struct loader *ld)
{
	struct config	*c = ld->conf;

	return cfg_get_llong(ld, "AGENT_SANDBOX_PROCESS_OUTPUT_BYTES", 1048576,
	    PROCESS_OUTPUT_MIN, PROCESS_OUTPUT_MAX,
	    &c->process_output_bytes) == -1 ||
	    cfg_get_long(ld, "AGENT_SANDBOX_MAX_PROCESSES_PER_SANDBOX", 16, 1,
	    PROCESSES_MAX, &c->max_processes_per_sandbox) == -1 ||
	    cfg_get_long(ld, "AGENT_SANDBOX_MAX_PROCESSES", 256, 1,
	    PROCESSES_MAX,
	    &c->max_processes) == -1 ? -1 : 0;
}

/* apid's HTTP timeouts and connection cap (docs/configuration.md). */
static int
load_http_vars(struct loader *ld)
{
	struct config	*c = ld->conf;

	if (cfg_get_double(ld, "AGENT_SANDBOX_HTTP_HEADER_TIMEOUT_SECONDS",
	    10.0,
	    HTTP_TIMEOUT_MAX, &c->http_header_timeout) == -1 ||
	    cfg_get_double(ld, "AGENT_SANDBOX_HTTP_BODY_TIMEOUT_SECONDS", 30.0,
	    HTTP_TIMEOUT_MAX, &c->http_body_timeout) == -1 ||
	    cfg_get_double(ld, "AGENT_SANDBOX_HTTP_IDLE_TIMEOUT_SECONDS", 60.0,
	    HTTP_TIMEOUT_MAX, &c->http_idle_timeout) == -1 ||
	    cfg_get_double(ld, "AGENT_SANDBOX_HTTP_SEND_TIMEOUT_SECONDS", 60.0,
	    HTTP_TIMEOUT_MAX, &c->http_send_timeout) == -1 ||
	    cfg_get_long(ld, "AGENT_SANDBOX_HTTP_MAX_CONNECTIONS", 1024, 16,
	    HTTP_CONNECTIONS_MAX, &c->http_max_connections) == -1)
		return -1;
	return 0;
}

/* The checks between settings, in the order API.md §10 lists them. */
static int
check_vars(struct loader *ld)
{
	struct config	*c = ld->conf;
	size_t		 i;

	if (c->api_keys_count == 0 && c->keys_file[0] == '\0' &&
	    !c->insecure_no_auth)
		return cfg_fail(ld, "set AGENT_SANDBOX_API_KEYS to one or more "
		    "comma-separated keys, or set "
		    "AGENT_SANDBOX_INSECURE_NO_AUTH=true "
		    "for local development");
	/* Python's len() counts characters, not bytes. */
	for (i = 0; i < c->api_keys_count; i++)
		if (format_pystrlen(c->api_keys[i]) < API_KEY_MIN_CHARS)
			return cfg_fail(ld,
			    "API keys must be at least 16 characters long");
	if (c->default_cpus > c->max_cpus)
		return cfg_fail(ld, "default_cpus exceeds max_cpus");
	/* Not the reference's: less is no limit, or no start in time. */
	if (c->default_cpus < config_cpus_min(c))
		return cfg_fail(ld, config_runs_gvisor(c) ?
		    "default_cpus must be at least 0.1 under gVisor (runsc)" :
		    "default_cpus must be at least 0.01");
	/*
	 * Not the reference's either: names dockerd-proxy would refuse
	 * (ids.h), so that they stop the start here, not the proxy later.
	 */
	if (!valid_sandbox_network_name(c->network_name))
		return cfg_fail_raw(ld, RAW_VALUE, "AGENT_SANDBOX_NETWORK_NAME",
		    c->network_name);
	if (c->docker_runtime[0] != '\0' &&
	    !valid_docker_name(c->docker_runtime))
		return cfg_fail_raw(ld, RAW_VALUE,
		    "AGENT_SANDBOX_DOCKER_RUNTIME",
		    c->docker_runtime);
	if (c->default_memory_mb > c->max_memory_mb)
		return cfg_fail(ld, "default_memory_mb exceeds max_memory_mb");
	if (c->default_timeout_seconds > c->max_timeout_seconds)
		return cfg_fail(ld,
		    "default_timeout_seconds exceeds max_timeout_seconds");
	if (c->default_exec_timeout_seconds > c->max_exec_timeout_seconds)
		return cfg_fail(ld, "default_exec_timeout_seconds exceeds "
		    "max_exec_timeout_seconds");
	if (c->default_pids_limit > c->max_pids_limit)
		return cfg_fail(ld,
		    "default_pids_limit exceeds max_pids_limit");
	if (c->max_sandboxes < 1)
		return cfg_fail(ld, "max_sandboxes must be at least 1");
	return 0;
}

int
config_load(struct config *conf, char *const *envp, char *err, size_t errlen)
{
	struct loader	 ld;

	memset(conf, 0, sizeof(*conf));
	ld.envp = envp;
	ld.conf = conf;
	ld.err = err;
	ld.errlen = err != NULL ? errlen : 0;
	if (ld.errlen > 0)
		err[0] = '\0';
	if (load_vars(&ld) == -1 || load_http_vars(&ld) == -1 ||
	    load_process_vars(&ld) == -1 || config_load_keys(&ld) == -1 ||
	    config_load_audit(&ld) == -1 || config_load_metrics(&ld) == -1 ||
	    check_vars(&ld) == -1 || config_load_pool(&ld) == -1 ||
	    config_load_egress(&ld) == -1) {
		config_free(conf);
		return -1;
	}
	return 0;
}

/* 1 if sandboxes run under gVisor, whose kernel shares their limits. */
int
config_runs_gvisor(const struct config *c)
{
	return strcmp(c->docker_runtime, "runsc") == 0;
}

/* The least CPU a sandbox can be given under this server's runtime. */
double
config_cpus_min(const struct config *c)
{
	return config_runs_gvisor(c) ? SANDBOX_CPUS_MIN_GVISOR :
	    SANDBOX_CPUS_MIN;
}

void
config_free(struct config *conf)
{
	config_list_free(conf->api_keys);
	config_list_free(conf->allowed_images);
	config_free_metrics(conf);
	config_free_pool(conf);
	config_free_egress(conf);
	free(conf->host);
	free(conf->data_dir);
	free(conf->default_image);
	free(conf->sandbox_user);
	free(conf->docker_runtime);
	free(conf->network_name);
	free(conf->docker_endpoint);
	free(conf->privsep_user);
	free(conf->chroot_dir);
	free(conf->libexec_dir);
	free(conf->log_level);
	free(conf->seccomp_mode);
	free(conf->managerd_user);
	free(conf->allowed_images_match);
	free(conf->instance_id);
	free(conf->audit_log);
	free(conf->keys_file);
	explicit_bzero(conf, sizeof(*conf));
}
