/*
 * Payloads of the sandbox and exec messages (see msg.h for which message
 * carries which), as C structs with encode/decode pairs.  Decoders check
 * every field and the exact length; on failure they return -1 and leave
 * nothing allocated.  Strings from a decoder are malloc'd and freed by the
 * matching *_free function.
 */
#ifndef AS_SANDBOX_MSG_H
#define AS_SANDBOX_MSG_H

#include <stddef.h>
#include <stdint.h>

#include "ids.h"
#include "labels.h"
#include "msg.h"

/* Bounds every decoder enforces. */
#define MSG_MAX_ID		128	/* ids from clients, before checks */
#define MSG_MAX_IMAGE		1024
#define MSG_MAX_ENV		256	/* variables per request */
#define MSG_MAX_ENV_KEY		1024
#define MSG_MAX_ENV_VALUE	4096
#define MSG_MAX_ARGC		1024
#define MSG_MAX_ARG		8192
#define MSG_MAX_PATH		4096

struct env_list {
	size_t	  count;
	char	**keys;
	char	**values;
};

/*
 * The least CPU a sandbox can be limited to: Docker makes 0.01 CPU a CFS
 * quota of 1 ms per 100 ms, the kernel's least, and anything smaller no
 * limit at all (dockerd-proxy/hardening.c).
 */
#define SANDBOX_CPUS_MIN	0.01

/*
 * Under gVisor the sandbox's own kernel (runsc's sentry) runs inside that
 * limit: at 0.01 CPU it took 15 s to start on a 2-core host, and more than
 * Docker's 30 s deadline on a slower one; at 0.1 it starts in about 1 s.
 */
#define SANDBOX_CPUS_MIN_GVISOR	0.1

/* The spec of a sandbox: what it was created with. */
struct sandbox_spec {
	char		*image;
	double		 cpus;
	int64_t		 memory_mb;
	int64_t		 pids_limit;
	int		 network;
	int		 read_only_rootfs;
	struct env_list	 env;
};

/* POST /v1/sandboxes after schema validation; has_* = field given. */
struct create_request {
	char		*image;		/* NULL: not given (or null) */
	int		 has_cpus;
	double		 cpus;
	int		 has_memory_mb;
	int64_t		 memory_mb;
	int		 has_pids_limit;
	int64_t		 pids_limit;
	int		 network;
	/*
	 * NULL: network is the client's boolean.  Else the JSON text of the
	 * object the client gave (an egress policy, for managerd to parse),
	 * and network is 0.
	 */
	char		*network_policy;
	int		 read_only_rootfs;
	int		 has_timeout_seconds;
	int64_t		 timeout_seconds;
	struct env_list	 env;
	struct label_list labels;	/* checked: labels_check() */
};

/*
 * Why a sandbox is not running: its status_reason (docs/rest-api.md).
 * NONE while it runs, and when nothing more is known.
 */
enum sandbox_reason {
	SANDBOX_REASON_NONE = 0,
	SANDBOX_REASON_EXITED,		/* its main process ended */
	SANDBOX_REASON_OOM_KILLED,	/* ended after an out-of-memory kill */
	SANDBOX_REASON_REMOVED,		/* its container is gone */
	SANDBOX_REASON_COUNT
};

/* "exited", "oom_killed", "container_removed"; NULL for NONE. */
const char	*sandbox_reason_name(int);

/* What apid renders as a Sandbox object (API.md §3.3). */
struct sandbox_info {
	char		*id;
	int		 running;
	int		 reason;	/* enum sandbox_reason; NONE if running */
	char		*image;
	double		 cpus;
	int64_t		 memory_mb;
	int64_t		 pids_limit;
	int		 network;
	int		 read_only_rootfs;
	double		 created_at;
	double		 expires_at;
	char		*source_snapshot_id;	/* NULL: none */
	struct label_list labels;
};

/*
 * PATCH /v1/sandboxes/{id} (MSG_SANDBOX_PATCH): a JSON merge patch of the
 * labels, as a list of changes.  clear: the patch was {"labels": null},
 * and set and remove are empty.  A key is in at most one of set and
 * remove; remove's keys are sorted and unique like set's, at most
 * LABELS_MAX (what the result may hold is managerd's check).
 */
struct label_patch {
	char		*id;
	int		 clear;
	struct label_list set;
	size_t		 nremove;
	char		**remove;
};

/* POST .../exec and .../exec/stream after schema validation. */
struct exec_request {
	char		*sandbox_id;
	int		 shell;		/* argv[0] is a shell command line */
	size_t		 argc;
	char		**argv;		/* NULL-terminated */
	struct env_list	 env;
	char		*workdir;	/* NULL: not given */
	int		 has_timeout;
	double		 timeout_seconds;
};

/*
 * A sandbox for dockerd-proxy to make (managerd -> proxy): what a client
 * chose, within the limits managerd applies.  The sandbox user, /tmp's
 * size, the runtime and the network come from the proxy's own settings
 * (MSG_PROXY_CONFIG), never from this message.
 */
struct docker_create {
	char		*id;
	struct sandbox_spec spec;
};

/* A command for dockerd-proxy to run (managerd -> proxy). */
struct docker_exec {
	char		*id;		/* sandbox id */
	size_t		 argc;
	char		**argv;		/* final argv, NULL-terminated */
	struct env_list	 env;
	char		*workdir;	/* normalized, absolute */
	double		 timeout_seconds;
};

struct exec_exit {
	int64_t		 exit_code;	/* -1: Docker never reported one */
	int		 timed_out;
};

void	env_list_free(struct env_list *);
int	env_list_add(struct env_list *, const char *key, const char *value);
/* 1 if the list sets key. */
int	env_list_has(const struct env_list *, const char *key);
/*
 * The first key of the list that container runtimes or their hooks read
 * from a container's environment to change what the container gets
 * (NVIDIA_VISIBLE_DEVICES and the rest of NVIDIA_*, AMD_VISIBLE_DEVICES,
 * HABANA_VISIBLE_DEVICES, ASCEND_VISIBLE_DEVICES), or NULL.
 */
const char *env_list_reserved_key(const struct env_list *);

void	msg_put_create_request(struct msgw *, const struct create_request *);
int	msg_get_create_request(const struct imsg *, struct create_request *);
void	create_request_free(struct create_request *);

void	msg_put_sandbox_info(struct msgw *, const struct sandbox_info *);
int	msg_get_sandbox_info(const struct imsg *, struct sandbox_info *);
void	sandbox_info_free(struct sandbox_info *);

/*
 * MSG_DOCKER_EVENT: what Docker's event stream said of a sandbox's own
 * container (not its -init one).  time_ns is Docker's (the host's clock).
 */
enum docker_event_action {
	DOCKER_EVENT_START = 1,
	DOCKER_EVENT_DIE,
	DOCKER_EVENT_OOM,
	DOCKER_EVENT_DESTROY,
	DOCKER_EVENT_ACTION_MAX = DOCKER_EVENT_DESTROY
};

struct docker_event {
	char		 id[SANDBOX_ID_LEN + 1];	/* id_is_sandbox() */
	int		 action;	/* enum docker_event_action */
	int64_t		 time_ns;	/* > 0 */
	int64_t		 exit_code;	/* DIE: 0-255; else 0 */
};

void	msg_put_docker_event(struct msgw *, const struct docker_event *);
int	msg_get_docker_event(const struct imsg *, struct docker_event *);

void	msg_put_label_patch(struct msgw *, const struct label_patch *);
int	msg_get_label_patch(const struct imsg *, struct label_patch *);
void	label_patch_free(struct label_patch *);

/* MSG_SANDBOX_LIST: u32 count, count x (str key, u8 has_value, str value). */
void	msg_put_label_filter(struct msgw *, const struct label_filter *);
int	msg_get_label_filter(const struct imsg *, struct label_filter *);

void	msg_put_exec_request(struct msgw *, const struct exec_request *);
int	msg_get_exec_request(const struct imsg *, struct exec_request *);
void	exec_request_free(struct exec_request *);

void	msg_put_docker_create(struct msgw *, const struct docker_create *);
int	msg_get_docker_create(const struct imsg *, struct docker_create *);
void	docker_create_free(struct docker_create *);

void	msg_put_docker_exec(struct msgw *, const struct docker_exec *);
int	msg_get_docker_exec(const struct imsg *, struct docker_exec *);
void	docker_exec_free(struct docker_exec *);

void	msg_put_exec_exit(struct msgw *, const struct exec_exit *);
int	msg_get_exec_exit(const struct imsg *, struct exec_exit *);

/*
 * Fields the codecs of sandbox_msg.c and process_msg.c share: an env list
 * and an argv (u32 count, then strings; at most MSG_MAX_ENV and
 * MSG_MAX_ARGC), and a boolean (a u8 that must be 0 or 1).  A get that
 * fails sets r->error and leaves nothing to free.
 */
struct msgw;
struct msgr;
void	msg_put_env(struct msgw *, const struct env_list *);
int	msg_get_env(struct msgr *, struct env_list *);
void	msg_put_argv(struct msgw *, size_t argc, char **argv);
int	msg_get_argv(struct msgr *, size_t *argcp, char ***argvp);
void	msg_free_argv(char **argv);	/* NULL-terminated; NULL allowed */
int	msg_get_bool(struct msgr *);
/*
 * Labels: u32 count (at most LABELS_MAX), then key and value strings,
 * keys in ascending byte order; every key and value valid (labels.h).
 */
void	msg_put_labels(struct msgw *, const struct label_list *);
int	msg_get_labels(struct msgr *, struct label_list *);

/* A message whose whole payload is one string (ids): NULL if malformed. */
void	msg_put_string(struct msgw *, const char *);
char	*msg_get_string(const struct imsg *, size_t maxlen);

void	sandbox_spec_free(struct sandbox_spec *);

#endif /* AS_SANDBOX_MSG_H */
