/*
 * Configuration from AGENT_SANDBOX_* environment variables (API.md §10):
 * parsing with Python's rules, defaults, and the reference's error
 * messages, plus the settings only this implementation has.
 */
#ifndef AS_CONFIG_H
#define AS_CONFIG_H

#include <stddef.h>

/*
 * 4 TiB of /tmp in MB: the most the configuration accepts, and what
 * dockerd-proxy holds its start-up settings to.
 */
#define CONFIG_TMP_SIZE_MB_MAX	(1LL << 22)

/* AGENT_SANDBOX_WARM_POOL (config_pool.c). */
#define POOL_IMAGES_MAX	16
#define POOL_IMAGE_MAX	64
struct config_pool {
	char		*images[POOL_IMAGES_MAX];
	long		 counts[POOL_IMAGES_MAX];
	size_t		 count;
	long		 total;
};

struct config {
	char		**api_keys;		/* NULL-terminated */
	size_t		  api_keys_count;
	int		  insecure_no_auth;
	char		 *host;
	int		  port;
	char		 *data_dir;
	char		 *default_image;
	char		**allowed_images;	/* NULL-terminated */
	size_t		  allowed_images_count;
	char		 *sandbox_user;		/* "uid[:gid]" */
	unsigned int	  sandbox_uid;
	unsigned int	  sandbox_gid;		/* default: uid */
	char		 *docker_runtime;	/* "": default */
	char		 *network_name;
	int		  allow_network;
	long		  max_sandboxes;
	long		  default_timeout_seconds;
	long		  max_timeout_seconds;
	double		  default_cpus;
	double		  max_cpus;
	long		  default_memory_mb;
	long		  max_memory_mb;
	long		  default_pids_limit;
	long		  max_pids_limit;
	long		  tmp_size_mb;
	long		  default_exec_timeout_seconds;
	long		  max_exec_timeout_seconds;
	long long	  max_exec_output_bytes;
	long long	  max_file_bytes;
	long long	  max_snapshot_bytes;
	double		  reap_interval_seconds;

	/* Settings of this implementation (not in the reference). */
	char		 *docker_endpoint;	/* DOCKER_HOST: path, tcp:// */
	char		 *privsep_user;		/* apid's user */
	char		 *managerd_user;	/* managerd's, once started */
	char		 *chroot_dir;		/* apid's chroot */
	char		 *libexec_dir;		/* apid, proxy */
	char		 *log_level;		/* warn|info|debug */
	char		 *seccomp_mode;		/* kill|trap|log */
	char		 *instance_id;		/* set by managerd */
	int		  allow_runtime_env;	/* env keys runtimes read */
	char		 *allowed_images_match;	/* glob|parts */
	/* apid's HTTP server (apid/http_server.c). */
	double		  http_header_timeout;	/* seconds */
	double		  http_body_timeout;
	double		  http_idle_timeout;
	double		  http_send_timeout;
	long		  http_max_connections;
	/* Processes that outlive a request (managerd/process*.c). */
	long long	  process_output_bytes;	/* the ring, per process */
	long		  max_processes_per_sandbox;
	long		  max_processes;
	/* The audit log (managerd/audit.c): file|syslog|off. */
	char		 *audit_log;
	/* Named keys of tenants (common/keys_file.h); "": none. */
	char		 *keys_file;
	/* GET /metrics: the bearer token it asks for; NULL: none. */
	char		 *metrics_key;
	/* Sandboxes created ahead, per image (managerd/pool.c). */
	struct config_pool pool;
	/* Egress policies (config_egress.c, docs/configuration.md). */
	char		 *network_true;		/* public|bridge */
	char		 *egress_dns;		/* addresses, "": resolv.conf */
	char		 *egress_public;	/* CIDRs counted public */
	long		  egress_log_size;	/* records per sandbox */
};

/*
 * Fill the config from envp (NULL-terminated "NAME=value" strings, like
 * environ).  On error returns -1, leaves the config empty (config_free is
 * still safe) and writes the message, without the "configuration error: "
 * prefix, into err.  No API key ever appears in err.
 */
int	config_load(struct config *, char *const *envp, char *err,
	    size_t errlen);
/* Free everything; API keys are wiped first. */
void	config_free(struct config *);

/* Parsing primitives (exported for the tests). */
/* Trim, lower-case; 1 true yes on / 0 false no off "".  0 ok, -1 bad. */
int	config_runs_gvisor(const struct config *);
double	config_cpus_min(const struct config *);

int	config_parse_bool(const char *raw, int *out);
/* Python int(): whitespace around, a sign, '_' between digits.  0 or -1. */
int	config_parse_long(const char *raw, long long *out);
/* Python float(): as int() plus '.', exponent, inf, infinity, nan. */
int	config_parse_double(const char *raw, double *out);
/*
 * Split on ',', trim each item, drop empty ones.  Returns a NULL-terminated
 * array (just NULL for no items) and its length in *count, or NULL with
 * errno set on failure.
 */
char	**config_parse_list(const char *raw, size_t *count);
void	config_list_free(char **);

#endif /* AS_CONFIG_H */
