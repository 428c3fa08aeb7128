/*
 * dockerd-proxy: the only process that talks to the Docker socket.  It
 * takes typed requests from managerd, builds every Docker request itself,
 * and answers with typed results.
 */
#ifndef AS_PROXY_H
#define AS_PROXY_H

#include <sys/queue.h>
#include <sys/tree.h>

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "docker_http.h"
#include "ids.h"
#include "peer.h"
#include "proc.h"
#include "tar_header.h"
#include "sandbox_msg.h"
#include "file_msg.h"
#include "process_msg.h"

struct docker_response;

/*
 * What only the operator's configuration decides, from PROXY_CONFIG: no
 * message from managerd can change it, and every create and exec is held
 * to it (hardening.c).
 */
struct proxy_policy {
	uint32_t		 uid;		/* the sandbox user; never 0 */
	uint32_t		 gid;		/* never 0 */
	char			 user[24];	/* "uid:gid" */
	int64_t			 tmp_size_mb;
	char			*runtime;	/* "": Docker's default */
	char			*network_name;	/* for sandboxes with network */
	double			 max_cpus;
	int64_t			 max_memory_mb;
	int64_t			 max_pids_limit;
	int			 allow_network;
	int			 allow_runtime_env;
};

struct proxy_settings {
	struct proc_settings	 proc;		/* log, seccomp, user, jail */
	char			*docker_endpoint; /* path in the jail, or tcp:// numeric */
	char			*instance_id;	/* labels this server's objects */
	struct proxy_policy	 policy;
};

struct exec;
struct process;
struct network_wait;
struct archive_write;

struct proxy {
	struct event_base	*base;
	struct peer		 parent;
	struct proxy_settings	 settings;
	TAILQ_HEAD(, exec)	 execs;		/* running, for EXEC_CANCEL */
	TAILQ_HEAD(, process)	 processes;	/* started, not yet ended */
	size_t			 nprocesses;
	TAILQ_HEAD(, network_wait) network_queue; /* one ensure at a time */
	TAILQ_HEAD(, archive_write) puts;	/* for ARCHIVE_PUT_GO */
};

/* Docker API version, pinned in every path (Engine 20.10). */
#define DOCKER_API		"/v1.41"

/* Names and labels of API.md §11, plus our instance label. */
#define SANDBOX_NAME_PREFIX	"agent-sandbox-"
#define LABEL_MANAGED		"io.agent-sandbox.managed"
#define LABEL_ID		"io.agent-sandbox.id"
#define LABEL_INSTANCE		"io.agent-sandbox.instance"
#define LABEL_ROLE		"io.agent-sandbox.role"
#define WORKSPACE		"/workspace"

/* "agent-sandbox-sb_<16 hex>-workspace" and the like fit easily. */
#define DOCKER_NAME_MAX		64
/* A Docker object id: 64 lower-case hex digits. */
#define DOCKER_ID_LEN		64

/* proxy_dispatch.c */
void	proxy_dispatch_parent(struct peer *, struct imsg *);

/* proxy_metrics.c: GET /metrics's Docker families (docs/metrics.md). */
void	proxy_metrics_init(void);	/* before the jail */
void	proxy_metrics_send(struct peer *, uint32_t peerid);

/* docker_lines.c: a streamed answer of JSON lines, line by line. */
typedef void	(*docker_line_fn)(void *arg, const char *line, size_t len);
struct docker_lines {
	char		*buf;
	size_t		 len;
	size_t		 max;		/* longer lines are skipped */
	int		 skip;
	docker_line_fn	 fn;
	void		*arg;
};
void	docker_lines_init(struct docker_lines *, size_t max, docker_line_fn,
	    void *arg);
void	docker_lines_feed(struct docker_lines *, const unsigned char *,
	    size_t);
void	docker_lines_end(struct docker_lines *);
void	docker_lines_free(struct docker_lines *);

/*
 * docker_events.c: Docker's event stream for managerd
 * (MSG_DOCKER_EVENTS_FOLLOW); docker_events_parse.c reads one event.
 * parse: 1 and *ev filled for a sandbox container of this instance, 0
 * for anything else (another object, action or container, bad JSON).
 */
void	docker_events_follow(struct proxy *);
struct docker_event;
int	docker_event_parse(const char *line, size_t len,
	    const char *instance_id, struct docker_event *ev);

/*
 * docker_owner.c: the workspace-owner image.  ensure: look it up (or
 * import it) if that is not done nor under way; id: "sha256:<hex>" once
 * it is known, else NULL; lost: a create found that id gone.
 */
#define IMAGE_ID_MAX		(7 + DOCKER_ID_LEN + 1)	/* "sha256:<hex>" */
void		 owner_image_ensure(struct proxy *);
const char	*owner_image_id(void);
void		 owner_image_lost(const char *id);

/* docker_update.c: MSG_DOCKER_UPDATE; takes the payload's contents. */
void	docker_update(struct proxy *, uint32_t peerid, struct docker_create *);

/* docker_ping.c */
void	docker_ping(struct proxy *, uint32_t peerid);

/* docker_watch.c: exit once the confined Docker socket is dead. */
void	docker_watch_start(struct proxy *);

/*
 * docker_names.c: everything that may go into a Docker path or query
 * (sandbox ids: id_is_sandbox() of common/ids.c).  Validators return 1
 * when the value is acceptable.
 */
int	valid_instance_id(const char *);
int	valid_docker_id(const char *);
/* An image reference in Docker's grammar (name[:tag][@digest]). */
int	valid_image_ref(const char *);
/*
 * Split a reference for POST /images/create as API.md §11.1 says: with a
 * digest, repo is the whole reference and tag is ""; otherwise the tag is
 * after the last ':' of the last '/'-segment, "latest" if none.  -1 if a
 * part does not fit.
 */
int	image_ref_split(const char *ref, char *repo, size_t repolen,
	    char *tag, size_t taglen);
/* agent-sandbox-<id>, agent-sandbox-<id>-init, agent-sandbox-<id>-workspace */
void	sandbox_container_name(const char *id, char *, size_t);
void	sandbox_prep_name(const char *id, char *, size_t);
void	sandbox_volume_name(const char *id, char *, size_t);
/*
 * Format a path or query: fmt holds only literal text and %s, and every
 * %s argument is percent-encoded (all but RFC 3986 unreserved bytes).
 * -1 if it does not fit.
 */
int	docker_path(char *buf, size_t len, const char *fmt, ...);
size_t	percent_encode(char *dst, size_t dstlen, const char *src);

/* docker_json.c: reading Docker's answers, with size caps. */
json_object	*docker_json_parse(const struct docker_response *);
/* Docker's {"message": ...}, else the body's first line, else "HTTP n". */
void		 docker_error_message(const struct docker_response *,
		    char *, size_t);
/* A string member, or NULL. */
const char	*json_get_string(json_object *, const char *key);
/* The error a line of a streamed answer (pull, import) reports, or NULL. */
const char	*docker_stream_error(json_object *);
/* 1 when labels mark an object of sandbox id made by this server. */
int		 labels_are_ours(json_object *labels, const char *id,
		    const char *instance_id);

/*
 * docker_call.c: one buffered request with an optional JSON body.  The
 * callback runs exactly once, from the event loop, also when the request
 * could not even be started.  resp is never NULL.
 */
struct docker_result {
	int				 error;	/* enum docker_http_error */
	int				 errnum;
	int				 status;
	const struct docker_response	*resp;
};
typedef void	(*docker_call_cb)(const struct docker_result *, void *arg);
void	docker_call(struct proxy *, const char *method, const char *path,
	    json_object *body, size_t max_body, docker_call_cb, void *arg);
void	docker_call_raw(struct proxy *, const char *method, const char *path,
	    const char *content_type, const void *body, size_t len,
	    size_t max_body, docker_call_cb, void *arg);
/*
 * The error reply for a failed call, API.md §11.9: 404 -> ERR_NOT_FOUND
 * "<what>: not found", other 4xx -> ERR_INVALID_REQUEST, 5xx and no answer
 * -> ERR_BACKEND (ERR_TIMEOUT past the request's deadline), each
 * "<what>: <Docker's explanation>".
 */
enum error_kind	docker_result_error(const struct docker_result *,
		    const char *what, char *text, size_t len);
/* The same, except that a 404 is a 4xx like the others. */
enum error_kind	docker_result_error_plain(const struct docker_result *,
		    const char *what, char *text, size_t len);
/* What a request that got no answer is to the client: 504, 503 or 502. */
enum error_kind	docker_http_error_kind(int error);
/* The same for a request that could not start (errno of docker_request_new). */
enum error_kind	docker_start_error_kind(int errnum);
/* 1 when Docker answered with an HTTP status (of any value). */
int	docker_result_answered(const struct docker_result *);

/*
 * hardening.c: the only place where the bodies that shape a sandbox are
 * built.  Every value is typed; nothing is copied from a request body.
 * The returned objects belong to the caller (json_object_put).
 */
#define HARDENING_KEEPALIVE \
	"trap 'exit 0' TERM INT; while :; do sleep 3600 & wait $!; done"
json_object	*hardening_container_body(const struct proxy_policy *,
		    const struct docker_create *, const char *instance_id);
/*
 * The never-started sibling through which the volume's root is given to
 * the sandbox user: copied from the workspace-owner image (an image id),
 * or, with owner_image NULL, uploaded through it (docker_create.c).
 */
json_object	*hardening_prep_body(const struct proxy_policy *,
		    const struct docker_create *, const char *instance_id,
		    const char *owner_image);
json_object	*hardening_volume_body(const char *id, const char *instance_id);
/* POST /containers/{id}/update: the spec's CPU, memory and pids limits. */
json_object	*hardening_update_body(const struct sandbox_spec *);
json_object	*hardening_network_body(const char *name);
json_object	*hardening_exec_body(const struct proxy_policy *,
		    const struct docker_exec *);
/*
 * A process: as an exec, with the tty it asks for.  Its wrapper waits,
 * after the PID line, on its stdin (always attached) before it runs the
 * command: for a newline, or on a tty the terminal's end-of-file
 * character; it exits if its stdin ends first.
 */
json_object	*hardening_process_body(const struct proxy_policy *,
		    const struct docker_process *);
json_object	*hardening_kill_body(const struct proxy_policy *, long long pid);
/* du -sk /workspace as the sandbox user (GET .../stats). */
json_object	*hardening_workspace_du_body(const struct proxy_policy *);
/*
 * The exit status of the signal and kill scripts when the PID they were
 * given is not the leader of a session, as a wrapper is: nothing was
 * signalled.
 */
#define HARDENING_SCRIPT_REFUSED	100
#define HARDENING_SCRIPT_REFUSED_TEXT	"100"
/* signo: one of process_signal_name()'s (anything else is fatal). */
json_object	*hardening_signal_body(const struct proxy_policy *,
		    long long pid, int signo);
json_object	*hardening_exec_start_body(int detach, int tty);
/*
 * The operator's policy, checked once at start-up (and its "uid:gid"
 * made); NULL if fine, else why not.
 */
const char	*hardening_check_policy(struct proxy_policy *);
/*
 * Checks on a docker_create a codec cannot make, against the policy:
 * NULL if fine, else why it is refused.
 */
const char	*hardening_check_create(const struct proxy_policy *,
		    const struct docker_create *);
/* 1 when an env key may be passed to Docker as KEY=value. */
int		 valid_env_key(const char *);

/* docker_tar.c: a ustar archive holding one directory entry. */
#define TAR_DIR_ARCHIVE_LEN	(3 * TAR_BLOCK)
int	tar_dir_archive(unsigned char out[TAR_DIR_ARCHIVE_LEN],
	    const char *name, unsigned int mode, uint32_t uid, uint32_t gid,
	    long long mtime);

/*
 * tar_check.c: every archive written into a sandbox, checked as it
 * streams to Docker (see the file for the rules).  Bytes go out in
 * order, as many as came in; a member's header blocks are held until
 * the member is found safe, and the uid and gid of each are rewritten.
 */
#define TAR_CHECK_NAME_MAX	4096		/* PATH_MAX */
#define TAR_CHECK_EXT_MAX	(32 * 1024)	/* one extended header */
#define TAR_CHECK_HELD_MAX	(64 * 1024)	/* all before one member */
#define TAR_CHECK_NAMES_MAX	(16 * 1024 * 1024) /* dirs', symlinks' names */

enum tar_check_state {
	TC_HEADER,		/* a header block, or the end */
	TC_EXT,			/* an extended header's data and padding */
	TC_DATA,		/* a member's data and padding: passed */
	TC_END1,		/* after one zero block */
	TC_END,			/* after two: only zeros may follow */
	TC_REFUSED
};

struct tar_link;
RB_HEAD(tar_links, tar_link);

struct tar_check {
	uint32_t		 uid;
	uint32_t		 gid;
	enum tar_check_state	 state;
	unsigned char		 blk[TAR_BLOCK];
	size_t			 have;		/* of blk */
	unsigned char		*held;		/* blocks not yet passed */
	size_t			 held_len;
	size_t			 ext_at;	/* its data in held */
	uint64_t		 ext_left;	/* data and padding to come */
	uint64_t		 ext_size;
	char			 ext_type;
	uint64_t		 data_left;
	struct tar_ext		 ext;
	struct tar_member	 m;
	struct tar_links	 links;		/* symlinks, directories made */
	size_t			 links_bytes;
	uint64_t		 members;
	int			 forbidden;	/* well-formed, not allowed */
	int			 cut;		/* stopped before its end */
	char			 err[256];
};

/* Hands checked bytes on: 0, or -1 with errno. */
typedef int	(*tar_check_out)(void *, const void *, size_t);

void	tar_check_init(struct tar_check *, uint32_t uid, uint32_t gid);
void	tar_check_free(struct tar_check *);
/*
 * 0, or -1: refused (state TC_REFUSED, err says why, forbidden set when
 * the archive is well-formed but holds what may not be written; nothing
 * of the refused member went out) or out failed (errno).
 */
int	tar_check_feed(struct tar_check *, const void *, size_t,
	    tar_check_out, void *);
/*
 * The input ended: 0 after the end-of-archive block, else -1 (err, and
 * cut set: what stops early was cut off, not malformed).
 */
int	tar_check_end(struct tar_check *);

/*
 * docker_frames.c: Docker's multiplexed stream (8-byte header: stream 1
 * or 2, three zero bytes, big-endian length; then the payload), and the
 * PID our exec wrapper prints as its first stdout line.  Pure: bytes in,
 * whole frames of at most FRAME_MAX_PAYLOAD out, whatever the splits.
 */
#define FRAME_HEADER_LEN	8
#define FRAME_MAX_PAYLOAD	(32 * 1024)
#define FRAME_STDOUT		1
#define FRAME_STDERR		2
#define FRAME_PID_DIGITS	12
/* Highest pid Linux hands out (PID_MAX_LIMIT). */
#define FRAME_PID_MAX		4194304

typedef void	(*frame_emit_fn)(void *arg, int stream,
		    const unsigned char *, size_t);

struct frame_parser {
	unsigned char	 head[FRAME_HEADER_LEN];
	size_t		 head_len;
	int		 stream;
	uint32_t	 left;		/* payload bytes still to come */
	int		 in_frame;
	unsigned char	 buf[FRAME_MAX_PAYLOAD];
	size_t		 buf_len;
	int		 raw;		/* a tty's: no frames, all stdout */
	int		 want_pid;	/* still reading the first line */
	char		 pid_text[FRAME_PID_DIGITS + 1];	/* and a '\r' */
	size_t		 pid_len;	/* digits in pid_text */
	int		 pid_cr;	/* raw: a '\r' came after them */
	long long	 pid;		/* 0 until found; -1 if none */
	int		 error;
};

void	frame_parser_init(struct frame_parser *, int want_pid);
/* A tty's stream: raw bytes; the PID line may end in "\r\n". */
void	frame_parser_init_tty(struct frame_parser *, int want_pid);
/* 0, or -1 on a malformed header (and on every call after one). */
int	frame_parser_feed(struct frame_parser *, const void *, size_t,
	    frame_emit_fn, void *);
/* End of stream: flush what is held; -1 if it ended inside a frame. */
int	frame_parser_finish(struct frame_parser *, frame_emit_fn, void *);
void	frame_header(unsigned char out[FRAME_HEADER_LEN], int stream,
	    uint32_t len);

/* docker_network.c: ensure the bridge for network: true, one at a time. */
typedef void	(*network_cb)(void *arg, enum error_kind, const char *text);
void	network_ensure(struct proxy *, const char *name, network_cb,
	    void *arg);

/*
 * docker_destroy.c: remove a sandbox's containers and volume, each only
 * after checking it is ours.  kind 0 when all went (or never existed).
 */
typedef void	(*teardown_cb)(void *arg, enum error_kind, const char *text);
void	sandbox_teardown(struct proxy *, const char *id, teardown_cb,
	    void *arg);
void	docker_destroy(struct proxy *, uint32_t peerid, const char *id);

/*
 * docker_exec_run.c: the pieces of every exec of ours.  Each callback runs
 * once, from the event loop; on an error its id is NULL and kind is not 0.
 *
 * exec_container: the sandbox's container, found by its name and made by
 * this server (else ERR_FORBIDDEN, logged as "refusing to <op> <name>");
 * with need_running, also running (else ERR_INVALID_REQUEST "sandbox <id>
 * is not running").  A failed inspect is docker_result_error()'s, about
 * "sandbox <id>" (so its 404 is ERR_NOT_FOUND "sandbox <id>: not found").
 */
typedef void	(*exec_container_cb)(void *arg, const char *cid, int running,
		    enum error_kind, const char *text);
void	exec_container(struct proxy *, const char *id, const char *op,
	    int need_running, exec_container_cb, void *arg);
/* POST /containers/<cid>/exec with body (not taken); 409: not running. */
typedef void	(*exec_created_cb)(void *arg, const char *eid,
		    enum error_kind, const char *text);
void	exec_create(struct proxy *, const char *id, const char *cid,
	    json_object *body, exec_created_cb, void *arg);
/*
 * Start it attached, Tty as it was made: docker_request_new()'s request
 * (NULL with errno).  A body not streamed is buffered up to this.
 */
#define EXEC_ATTACH_MAX_BODY	(64 * 1024)
struct exec_attach_cbs {
	docker_body_cb		 on_body;	/* NULL: buffered */
	docker_drain_cb		 on_drain;	/* stdin written, may be NULL */
	docker_done_cb		 on_done;
	int			 lasting;	/* DOCKER_HTTP_LASTING */
	int			 bounded;	/* DOCKER_HTTP_BOUNDED */
};
struct docker_request	*exec_attach(struct proxy *, const char *eid, int tty,
			    const struct exec_attach_cbs *, void *arg);
/* Running and ExitCode of GET /exec/<id>/json; -1 when Running is not. */
int	exec_state_parse(json_object *, int *running, int *has_exit_code,
	    int64_t *exit_code);
/*
 * Once its stream ended: its exit code, -1 if Docker did not say in time;
 * running is 1 when Docker last said it still runs.
 */
typedef void	(*exec_exit_cb)(void *arg, int64_t exit_code, int running);
void	exec_wait(struct proxy *, const char *eid, exec_exit_cb, void *arg);
/* POST /exec/<eid>/resize; a 409 is ERR_CONFLICT. */
typedef void	(*exec_resized_cb)(void *arg, enum error_kind,
		    const char *text);
void	exec_resize(struct proxy *, const char *id, const char *eid,
	    uint32_t cols, uint32_t rows, exec_resized_cb, void *arg);

/*
 * docker_process.c: MSG_DOCKER_PROCESS_START; takes over d and fd (see
 * msg.h and the file for what managerd may rely on).  Each process holds
 * a Docker request and its socket for as long as it runs: past
 * PROXY_PROCESSES_MAX at once, whatever managerd's own limit says, a
 * start is refused (ERR_LIMIT_EXCEEDED), so that they cannot take the
 * requests and descriptors the kills and destroys that end them need.
 * AGENT_SANDBOX_MAX_PROCESSES is held to the same bound (common/config.c).
 */
#define PROXY_PROCESSES_MAX	256
void	docker_process_start(struct proxy *, uint32_t peerid,
	    struct docker_process *d, int fd);
/*
 * docker_process_exec.c: MSG_DOCKER_PROCESS_INSPECT and _RESIZE, once
 * Docker says the exec is one in the container of that sandbox of ours.
 */
void	docker_process_inspect(struct proxy *, uint32_t peerid,
	    const struct docker_process_exec *);
void	docker_process_resize(struct proxy *, uint32_t peerid,
	    const struct docker_process_exec *);

/*
 * docker_signal.c: a short exec of ours (body not taken) in the container
 * cid, attached; cb gets kind 0 and what it printed (stdout and stderr,
 * printable bytes only, as one line of at most 1023), or an error.
 */
typedef void	(*helper_cb)(void *arg, enum error_kind, const char *text);
void	helper_run(struct proxy *, const char *id, const char *cid,
	    json_object *body, helper_cb, void *arg);
/*
 * docker_signal.c: stop and kill the group and every descendant of pid in
 * the container cid, in the background (only its log lines tell how it
 * went); and MSG_DOCKER_PROCESS_SIGNAL.
 */
void	sandbox_kill(struct proxy *, const char *id, const char *cid,
	    long long pid);
void	docker_process_signal(struct proxy *, uint32_t peerid,
	    const struct docker_process_signal *);

/* docker_create.c, docker_state.c, docker_list.c, docker_exec.c */
void	docker_create(struct proxy *, uint32_t peerid, struct docker_create *);
void	docker_state(struct proxy *, uint32_t peerid, const char *id);
/*
 * docker_stats.c: MSG_DOCKER_STATS.  docker_stats_parse.c: Docker's
 * one-shot stats answer (at most STATS_MAX_BODY bytes) into s, every
 * field checked: 0, or -1 with *why.  du_said_parse: the workspace
 * probe's output ("<KiB>/workspace": du's line without its tab) as
 * bytes, 0 or -1.
 */
#define STATS_MAX_BODY	(256 * 1024)
struct sandbox_stats;
void	docker_stats(struct proxy *, uint32_t peerid, const char *id);
int	docker_stats_parse(const void *, size_t, struct sandbox_stats *,
	    const char **why);
int	du_said_parse(const char *, uint64_t *bytes);
void	docker_list(struct proxy *, uint32_t peerid);
void	docker_exec(struct proxy *, uint32_t peerid, struct docker_exec *,
	    int fd);
void	docker_exec_cancel(struct proxy *, uint32_t peerid);

/*
 * docker_archive.c: MSG_DOCKER_ARCHIVE_GET and _PUT.  Both take over the
 * request (freed with archive_*_free) and the descriptor.
 */
void	docker_archive_get(struct proxy *, uint32_t peerid,
	    struct archive_get *, int fd);
void	docker_archive_put(struct proxy *, uint32_t peerid,
	    struct archive_put *, int fd);
/* MSG_DOCKER_ARCHIVE_PUT_GO; -1 if that PUT waits for no GO (a lie). */
int	docker_archive_put_go(struct proxy *, uint32_t peerid,
	    uint64_t length);
/* docker_archive_prime.c: what an ARCHIVE_PUT_PRIME write opens with. */
void	archive_prime(unsigned char blk[2 * TAR_BLOCK]);
/* docker_archive_head.c: MSG_DOCKER_ARCHIVE_HEAD; takes over ah. */
void	docker_archive_head(struct proxy *, uint32_t peerid,
	    struct archive_head *ah);

/* The log line and error text of a refused operation. */
void	refuse_not_ours(const char *op, const char *name, char *text,
	    size_t len);

/*
 * proxy_jail.c: when root, enter a private mount (and network) namespace
 * whose root is a read-only tmpfs on chroot_dir holding only the Docker
 * socket, bind-mounted at /docker.sock; then drop to privsep_user with the
 * socket's group, or, if the socket is not group-accessible, keep uid 0
 * with no capabilities.  Writes the socket path to use afterwards into
 * jailed_path.  When not root, changes nothing and returns 1 (the caller
 * warns); 0 on success; -1 with a reason in err.
 */
int	proxy_jail(const char *docker_socket, const char *chroot_dir,
	    const char *privsep_user, char *jailed_path, size_t pathlen,
	    char *err, size_t errlen);
/*
 * The same for DOCKER_HOST=tcp://: a private mount namespace (not a
 * network one: the socket proxy is on the host's network) whose root is
 * an empty read-only tmpfs, as privsep_user.  1 when not root, 0, -1.
 */
int	proxy_jail_tcp(const char *chroot_dir, const char *privsep_user,
	    char *err, size_t errlen);

/*
 * docker_archive_parse.c: Docker's archive answers, pure.  The path stat
 * header is base64 of {"name","size","mode","mtime","linkTarget"}; it is
 * read into st (link_target malloc'd, "" unless a symlink) or refused
 * with -1 and a reason in *why.  Every field must be there and valid.
 */
/* The whole response head is capped at 16 KiB (DOCKER_HTTP_MAX_HEAD). */
#define ARCHIVE_STAT_HEADER_MAX	16384
#define ARCHIVE_STAT_JSON_MAX	(ARCHIVE_STAT_HEADER_MAX / 4 * 3)
int	archive_path_stat_parse(const char *header, struct archive_stat *st,
	    const char **why);
/*
 * Go's time.Time in JSON (RFC 3339 with up to nine fraction digits, a
 * "Z" or "+hh:mm" zone, years 0000-9999) as seconds since the epoch and
 * nanoseconds; -1 if it is not exactly that.
 */
int	archive_mtime_parse(const char *, int64_t *sec, uint32_t *nsec);
/* What Docker's error message for an archive path says. */
enum archive_error {
	ARCHIVE_ERROR_OTHER,
	ARCHIVE_ERROR_LOOP,	/* a symlink chain that does not end */
	ARCHIVE_ERROR_NOTDIR	/* a component on the way is not a directory */
};
enum archive_error	archive_error_class(const char *message);
/*
 * Docker's refusal of a PUT with noOverwriteDirNonDir, as an error that
 * names the path: ERR_INVALID_REQUEST with text; 0 for other messages.
 */
enum error_kind	archive_put_error(const char *message, char *text,
		    size_t len);

/*
 * docker_archive.c: look up a sandbox's container for an archive
 * operation and check it is ours; cb gets its Docker id, or kind != 0
 * and the error text.  op names the operation in a refusal.
 */
typedef void	(*archive_container_cb)(void *arg, const char *cid,
		    enum error_kind kind, const char *text);
void	archive_container(struct proxy *, const char *id, const char *op,
	    archive_container_cb, void *arg);
/* The same without the cache: every call inspects (a HEAD's 404 is bare). */
void	archive_container_inspect(struct proxy *, const char *id,
	    const char *op, archive_container_cb, void *arg);

/* container_cache.c: the containers archive calls found ours. */
const char *container_cache_get(const char *id);
uint64_t container_cache_epoch(void);
/* Kept only if nothing was forgotten since asked (container_cache_epoch). */
void	container_cache_put(const char *id, const char *cid, uint64_t asked);
void	container_cache_forget(const char *id);
int	container_gone_message(const char *message);

#endif /* AS_PROXY_H */
