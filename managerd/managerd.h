/*
 * managerd: the parent daemon.  It loads the configuration, has its
 * spawner start apid, dockerd-proxy and archive-worker (and start them
 * again when they die), holds the state, and relays between apid and the
 * proxy.
 */
#ifndef AS_MANAGERD_H
#define AS_MANAGERD_H

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/tree.h>

/* Ours, which includes libseccomp's (see the comment there). */
#include <seccomp.h>

#include "caller.h"
#include "config.h"
#include "egress_policy.h"
#include "ids.h"
#include "peer.h"
#include "sandbox_msg.h"
#include "file_msg.h"
#include "process_msg.h"

/* A sandbox as managerd keeps it and as its record file stores it. */
/* A tenant's name: keys_file.h's KEY_NAME_MAX. */
#define TENANT_MAX	64

struct sandbox_record {
	char			 id[SANDBOX_ID_LEN + 1];
	struct sandbox_spec	 spec;
	double			 created_at;
	double			 expires_at;
	char			*source_snapshot_id;	/* NULL: none */
	/* Whose (tenant.c); "": before tenants, or a flat key's. */
	char			 tenant[TENANT_MAX + 1];
	struct label_list	 labels;	/* labels.h: checked */
	/* Claimed from the warm pool: its env goes with every exec. */
	int			 pooled;
	/* Its egress policy (network.c); mode none: no way out. */
	struct egress_policy	 egress;
};

/*
 * The children, one line each in child_kinds[] (children.c): what the
 * spawner needs to start one, and what managerd does with it.  Adding a
 * child is adding a line (and its id here).
 */
enum child_id {
	CHILD_PROXY,
	CHILD_APID,
	CHILD_WORKER,
	CHILD_NETNS,		/* on demand: the first policy sandbox */
	CHILD_EGRESS,		/* on demand, likewise */
	CHILD_MAX
};

struct child_kind {
	const char	*name;		/* its binary in libexec_dir; the log's */
	uint32_t	 settings_type;
	/*
	 * In the spawner: its settings message into w, and *fd (-1 if none)
	 * a descriptor to go with it; -1 if they cannot be made.
	 */
	int		(*settings)(const struct config *, int listener,
			    struct msgw *w, int *fd);
	/* Its seccomp table, which the spawner's filter must include. */
	struct seccomp_table (*seccomp_table)(void);
	/* In managerd: its channel (a struct peer in struct managerd). */
	size_t		 peer_offset;
	peer_dispatch_cb dispatch;
	/* Started only once restart reconciliation is over (apid). */
	int		 after_recovery;
	/* Started by its first call (child_call.c), not at start-up. */
	int		 on_demand;
	/* Its MSG_READY; again is 0 the first time only. */
	void		(*ready)(int again);
	/* Its channel is gone: forget or fail what it had in flight. */
	void		(*lost)(void);
};
extern const struct child_kind child_kinds[CHILD_MAX];

/* When a child was started again lately (restart.c). */
#define RESTART_MAX	5		/* restarts of one child ... */
#define RESTART_WINDOW	60.0		/* ... in this many seconds */
/*
 * dockerd-proxy after Docker's socket died, or a child whose channel
 * managerd could not take: started again this often, outside the budget.
 */
#define CHILD_AGAIN_SECONDS	1
struct restart_budget {
	double		 at[RESTART_MAX];
	unsigned int	 count;
	unsigned int	 next;		/* the oldest, once count is full */
};

enum child_state {
	CHILD_DOWN,			/* not running, or gone */
	CHILD_STARTING,			/* asked the spawner */
	CHILD_UP			/* its channel is ours */
};

struct child {
	const struct child_kind	*kind;
	struct peer		*peer;
	enum child_state	 state;
	pid_t			 pid;		/* 0: none is running */
	int			 ready;		/* READY since it started */
	int			 was_ready;	/* ever: a READY is a restart */
	struct restart_budget	 restarts;
	int			 status;	/* of its last exit, -1: none */
	int			 starved;	/* killed: its channel was lost */
	struct event		*ev_again;	/* a delayed start */
};

/*
 * A call managerd made to dockerd-proxy, waiting for its replies.  Every
 * reply is handed to done(); the imsg is freed by the caller.  A reply of
 * type more_type (a list item, "exec started") keeps the call pending; one
 * of reply_type or MSG_ERROR ends it.  Any other type is fatal.
 */
struct proxy_call;
typedef void	(*proxy_done_cb)(struct imsg *, void *arg);

struct proxy_call {
	TAILQ_ENTRY(proxy_call)	 entry;
	uint32_t		 id;
	uint32_t		 more_type;	/* 0: a single reply */
	uint32_t		 reply_type;	/* expected on success */
	proxy_done_cb		 done;
	void			*arg;
	const char		*why;		/* failing without a proxy */
};
TAILQ_HEAD(proxy_calls, proxy_call);

/*
 * An operation waiting for a sandbox's lock (API.md §8.4).  managerd is
 * single-threaded, so the lock is a busy flag and a queue: destroy,
 * timeout (and snapshot, rollback) on one sandbox run one at a time.
 */
struct sandbox;
typedef void	(*sandbox_op_cb)(struct sandbox *, void *arg);

struct sandbox_op {
	TAILQ_ENTRY(sandbox_op)	 entry;
	sandbox_op_cb		 run;
	void			*arg;
};
TAILQ_HEAD(sandbox_ops, sandbox_op);

/*
 * A sandbox in the table.  It is freed when it has left the table (gone)
 * and no pending call holds a reference to it.
 */
/*
 * What is known of a sandbox's container while Docker's events are
 * followed (events.c): known only in the epoch that set it.
 */
struct sandbox_state {
	uint64_t		 epoch;		/* 0: never set */
	uint64_t		 listed;	/* the stock-taking that saw it */
	int			 running;
	int			 reason;	/* enum sandbox_reason */
	int			 oom;		/* an OOM event since its start */
	int64_t			 floor_ns;	/* older events: older container */
	int64_t			 seen_ns;	/* the latest event applied */
};

struct sandbox {
	RB_ENTRY(sandbox)	 node;
	struct sandbox_record	 rec;
	uint64_t		 seq;		/* creation order: ties */
	unsigned int		 refs;
	int			 in_table;
	int			 gone;		/* destroyed */
	int			 busy;		/* an operation has the lock */
	int			 reaping;	/* a reap is queued */
	int			 replacing;	/* a rollback swaps its container */
	struct sandbox_state	 st;
	double			 retry_at;	/* reap not before */
	struct sandbox_ops	 ops;		/* waiting for it */
	/* Being created, counted for its tenant's quota (tenant.c). */
	TAILQ_ENTRY(sandbox)	 pending_entry;
	int			 pending;
	/* egress.c: the proxy serves its listener in the netns of pid. */
	int			 egress_attached;
	int			 egress_attaching;
	int			 egress_again;	/* a start came meanwhile */
	int			 egress_known;	/* the proxy was told of it */
	uint32_t		 egress_pid;
};

struct managerd {
	struct config		 conf;
	struct event_base	*base;
	struct child		 child[CHILD_MAX];
	struct peer		 apid_peer;
	struct peer		 proxy_peer;
	struct peer		 worker_peer;
	struct peer		 netns_peer;
	struct peer		 egress_peer;
	struct peer		 spawner_peer;
	/* apid <-> worker: an end made while its process was down. */
	int			 worker_channel_pending[CHILD_MAX];
	pid_t			 spawner_pid;
	int			 stopping;
	struct proxy_calls	 calls;
	uint32_t		 next_call_id;
	/* dockerd-proxy deaths: a call across one has an unknown outcome. */
	unsigned int		 proxy_deaths;
	int			 datadir_fd;
};

extern struct managerd	*env;

/* managerd.c: stop everything and exit with status. */
__attribute__((noreturn)) void shutdown_all(int status);

/*
 * children.c: starting the children through the spawner, their READY,
 * their deaths and restarts (at most RESTART_MAX in RESTART_WINDOW
 * seconds each, else managerd exits 1).
 */
void	children_init(void);
/* Their settings fit in a message (checked before anything starts). */
void	children_check_settings(const struct config *);
/* Ask for those started at boot, or (1) those after reconciliation. */
void	children_start(int after_recovery);
/* Its MSG_READY (checked here). */
void	child_ready(enum child_id, struct imsg *);
/* 1 if its channel is ours and it has said READY. */
int	child_up(enum child_id);
/* An on-demand child is wanted: start it unless it runs or is starting. */
void	child_demand(enum child_id);
/* It stopped answering: its channel closes, the spawner kills it. */
void	child_hung(enum child_id);
/* Close every child's channel (at shutdown). */
void	children_close(void);
void	dispatch_spawner(struct peer *, struct imsg *);

/*
 * keys.c: the keys file's table (keys_file.h): the start-up one, its
 * reload on SIGHUP through the spawner, and the copy apid gets.
 */
struct keys_table;
struct key_quota;
void	keys_startup(const struct keys_table *);	/* takes it */
const struct keys_table *keys_current(void);
/* The quotas of the key of that name; NULL: none (a flat key, no key). */
const struct key_quota *keys_quota(const char *key_name);
void	keys_send_apid(void);
void	keys_reload(void);
void	keys_spawner_chunk(struct peer *, struct imsg *);

/*
 * tenant.c: who sees what, and the quotas of a request's key (see
 * there).  The *_for lookups answer for another tenant's record exactly
 * as for none (NULL; -1 with errno ENOENT).
 */
int	 tenant_sees(const struct caller *, const char *tenant);
const char *tenant_of(uint32_t apid_id);
int	 tenant_sandbox_visible(uint32_t apid_id, const struct sandbox *);
struct sandbox *sandbox_find_for(uint32_t apid_id, const char *id);
struct snapshot_record;
int	 snapshot_load_for(uint32_t apid_id, const char *id,
	    struct snapshot_record *);
int	 tenant_quota_check(uint32_t apid_id, const struct sandbox_spec *);
/*
 * A snapshot being written counts as its bound until it is released, so
 * that snapshots made at the same time cannot together pass the quota.
 * The caller owns the hold (in its operation): nothing is allocated.
 */
struct snapshot_hold {
	TAILQ_ENTRY(snapshot_hold) entry;
	char			 tenant[TENANT_MAX + 1];
	uint64_t		 bytes;
	int			 held;
};
void	 tenant_pending_add(struct sandbox *);
void	 tenant_pending_end(struct sandbox *);
int64_t	 tenant_snapshot_room(uint32_t apid_id, const char *tenant);
int64_t	 tenant_snapshot_quota(uint32_t apid_id);
void	 tenant_snapshot_hold(struct snapshot_hold *, const char *tenant,
	    uint64_t bytes);
void	 tenant_snapshot_release(struct snapshot_hold *);

/* restart.c: 1 (and counted) if a restart at now is within budget. */
int	restart_allowed(struct restart_budget *, double now);

/*
 * spawner.c: the spawner process.  spawner_fork returns its pid and
 * managerd's end of its channel in *sock.  The rest is for the tests:
 * one message from managerd (a lie is fatal), and reaping.
 */
pid_t	spawner_fork(const struct config *, int listener, int *sock);
struct spawner {
	struct imsgbuf		 ibuf;		/* to managerd */
	const struct config	*conf;
	int			 listener;
	pid_t			 pid[CHILD_MAX];
};
void	spawner_dispatch(struct spawner *, struct imsg *);
void	spawner_reap(struct spawner *);

/*
 * store.c: records in the data directory (API.md §9), written atomically
 * (temp file, fsync, rename, fsync of the directory) before anyone hears of
 * success.  dirfd is the data directory.
 */
#define STORE_RECORD_MAX	(16 * 1024 * 1024)	/* bytes of a record file */
int	store_sandbox_write(int dirfd, const struct sandbox_record *);
int	store_sandbox_remove(int dirfd, const char *id);
/* fsync of sandboxes/, to make a removal durable. */
int	store_sandbox_sync_dir(int dirfd);
/* Calls cb for every parseable record in file-name order; a record that
 * cannot be parsed is deleted.  Returns -1 if the directory is unreadable.
 * cb owns the record: malloc'd, to be released with sandbox_record_free()
 * and free(). */
int	store_sandbox_load_all(int dirfd,
	    void (*cb)(struct sandbox_record *, void *), void *arg);
/* The same, and calls skipped (if not NULL) with the id of each record
 * left in place because it could not be read for now (EMFILE, EIO, ENOMEM,
 * a directory): that sandbox may still exist. */
int	store_sandbox_load(int dirfd,
	    void (*cb)(struct sandbox_record *, void *),
	    void (*skipped)(const char *id, void *), void *arg);

/*
 * store_file.c, for both kinds of record: text written to tmp, fsync'd,
 * renamed to dst and dir fsync'd (a failure leaves no tmp behind); a
 * whole regular file of at most STORE_RECORD_MAX bytes without NUL read
 * back, NUL-terminated.
 */
enum store_read {
	STORE_READ_OK,
	STORE_READ_BAD,		/* not such a file (or a symlink) */
	STORE_READ_FAILED	/* could not look (errno; EISDIR a directory) */
};
int	store_sync_dir(int dirfd, const char *dir);
int	store_write_file(int dirfd, const char *dir, const char *tmp,
	    const char *dst, const char *text);
enum store_read store_read_file(int dirfd, const char *name, char **textp);

/* store_json.c */
void	sandbox_record_free(struct sandbox_record *);
/* JSON text of a record (keys sorted, 2-space indent) and back. */
char	*store_sandbox_to_json(const struct sandbox_record *);
int	store_sandbox_from_json(const char *, struct sandbox_record *);

/*
 * store_json.c, the pieces snapshot records (store_snapshot.c) share with
 * sandbox records.  sbuf is a growing string; once an append fails
 * (EFBIG past STORE_RECORD_MAX, ENOMEM) it stays failed.
 */
struct sbuf {
	char	*p;
	size_t	 len;
	size_t	 cap;
	int	 failed;
};
struct json_object;
void	sbuf_add(struct sbuf *, const char *, size_t);
void	sbuf_puts(struct sbuf *, const char *);
/* A JSON string as json.dumps writes it (ensure_ascii). */
void	store_json_put_string(struct sbuf *, const char *);
/*
 * A record's "tenant" (tenant.c), last of its keys: written only when it
 * is not "", so records without one stay as they were; read the same
 * way (absent: ""), -1 if present and no tenant's name.
 */
void	store_json_put_tenant(struct sbuf *, const char *tenant);
int	store_json_get_tenant(struct json_object *, char *out);
/* The spec object as it stands in a record, "{" to "  }"; -1 with errno. */
int	store_json_put_spec(struct sbuf *, const struct sandbox_spec *);
/* Text of at most STORE_RECORD_MAX bytes parsed as strictly as
 * json.loads and handed to get; -1 with EINVAL if it is not one JSON
 * value or get returned -1. */
int	store_json_read(const char *,
	    int (*get)(struct json_object *, void *), void *arg);
/* Members of an object: a string of at most max bytes without NUL
 * (copied; NULL if absent or not one), a finite number, an int64 that
 * fits, the "spec" object (what it holds so far is left to be freed). */
char	*store_json_get_string(struct json_object *, const char *key,
	    size_t max);
int	store_json_get_double(struct json_object *, const char *key,
	    double *);
int	store_json_get_int(struct json_object *, const char *key, int64_t *);
int	store_json_get_spec(struct json_object *, struct sandbox_spec *);

/* paths.c: API.md §6.1.  0 on success, -1 for an empty path. */
int	path_normalize(const char *in, char *out, size_t outlen);
/* The same for a path of inlen bytes; -1 (EINVAL) if it holds a NUL. */
int	path_normalize_len(const char *in, size_t inlen, char *out,
	    size_t outlen);
/* 1 if the normalized path lies strictly below /workspace. */
int	path_in_workspace(const char *normalized);
/*
 * Where a symlink at the normalized path link that holds target points:
 * posixpath.join(dirname(link), target) normalized, so an absolute
 * target replaces the directory (out may be link).  Bytes are bytes:
 * only NUL is special.
 */
int	path_join_link(const char *link, const char *target, char *out,
	    size_t outlen);

/* allowlist.c: Python fnmatchcase semantics (API.md §8.6). */
int	glob_match(const char *pattern, const char *string);
int	image_allowed(char *const *patterns, size_t count, const char *image);
/*
 * AGENT_SANDBOX_ALLOWED_IMAGES_MATCH=parts: each pattern and the image
 * split into path components, tag and digest, matched part by part with
 * the same globs, so that "python:*" admits "python:3.12" and not
 * "python:5000/x/y".
 */
int	image_allowed_parts(char *const *patterns, size_t count,
	    const char *image);

/* clock.c: wall and monotonic time in seconds; replaceable by tests. */
extern double	(*clock_wall)(void);
extern double	(*clock_monotonic)(void);

/* spawn.c */
int	listener_open(const char *host, int port, char *err, size_t errlen);

/* dispatch_apid.c */
void	dispatch_apid(struct peer *, struct imsg *);

/* dispatch_proxy.c */
void	dispatch_proxy(struct peer *, struct imsg *);

/*
 * dispatch_worker.c: the archive worker (READY), and the channel between
 * it and apid: a new socketpair whenever one of the two comes (back) up,
 * each end to its process once that one is ready.
 */
void	dispatch_worker(struct peer *, struct imsg *);
void	worker_channel_init(void);
/* c (CHILD_APID or CHILD_WORKER) is ready: its end, and maybe a pair. */
void	worker_channel_ready(enum child_id);
/* One of them is gone: an end held for the other is of no use now. */
void	worker_channel_lost(void);
/* MSG_CHANNEL_AGAIN from apid or the worker: a new pair, soon. */
void	worker_channel_again(struct peer *, struct imsg *);
/*
 * Ask dockerd-proxy for something.  fd (-1: none) goes with the request
 * and is consumed either way.  Returns the call's id, or 0 on failure.
 */
uint32_t proxy_call(uint32_t type, int fd, struct msgw *, uint32_t more_type,
	    uint32_t reply_type, proxy_done_cb, void *arg);
/* A message that expects no reply (a cancellation). */
int	proxy_send(uint32_t type, uint32_t peerid, struct msgw *);
/* Destroy a sandbox's container and volume: MSG_DOCKER_DESTROY. */
uint32_t proxy_destroy(const char *id, proxy_done_cb, void *arg);
/* The reply to a best-effort destroy (NULL: not sent) checked, a failure
 * logged as "cannot destroy <what> <id> (...)". */
void	proxy_destroy_logged(struct imsg *reply, const char *what,
	    const char *id);
void	relay_error(struct imsg *, uint32_t apid_id);
/* A DOCKER_LIST_ITEM read (fatal if malformed): 1 for a sandbox id. */
int	docker_list_item(struct imsg *, char *id, size_t len, int *container,
	    int *running);
/* The text of a MSG_ERROR reply (malloc'd); fatal if malformed. */
char	*proxy_error_text(struct imsg *, uint32_t *kind);
char	*error_text(struct peer *from, struct imsg *, uint32_t *kind);
/* A MSG_ERROR reply of our own making, for a call its peer cannot answer
 * (imsg points into w). */
void	error_imsg(struct imsg *, struct msgw *w, uint32_t peerid,
	    enum error_kind, const char *text);
/* The proxy is gone: its calls fail (502), from the event loop. */
void	proxy_calls_fail(void);

/*
 * apid_request.c: apid's requests under ids of managerd's own (the
 * apid_id of every handler), unique across apid's restarts.  open: a new
 * request (fatal if apid reuses the id of one in flight, or if its type
 * has no line in request_kinds[]; 0 when there was no memory for it,
 * and it was answered 500 already); find: the request a follow-up
 * (EXEC_CANCEL, SNAPSHOT_WRITTEN) names, 0 if it is over; reply: apid's
 * id for a message to send, ending the request with its last reply, -1
 * (drop it) if it is over or its apid died (w, NULL for none, is the
 * payload: the audit log reads the outcome and new ids from the last
 * reply); close: a request that ends without a reply; orphan: apid died.
 */
uint32_t apid_request_open(struct peer *, struct imsg *);
uint32_t apid_request_find(uint32_t peerid);
int	 apid_request_reply(uint32_t id, uint32_t type, const struct msgw *w,
	    uint32_t *peerid);
void	 apid_request_close(uint32_t id);
void	 apid_requests_orphan(void);
size_t	 apid_request_count(void);
/* 1 if a message of this type opens a request (request_kinds[]). */
int	 apid_request_opens(uint32_t type);
/* MSG_CALLER, for the next request; any other message while one waits. */
void	 apid_request_caller_take(struct peer *, struct imsg *);
void	 apid_request_no_caller(struct peer *, struct imsg *);
/* Who made request id (managerd's id); NULL if there is no such one. */
const struct caller *apid_request_caller(uint32_t id);

/* reply.c: answers to apid (apid_id is managerd's, apid_request.c). */
int	apid_reply(uint32_t apid_id, uint32_t type, struct msgw *);
/* The same with a descriptor, consumed either way. */
int	apid_reply_fd(uint32_t apid_id, uint32_t type, int fd, struct msgw *);
int	apid_error(uint32_t apid_id, enum error_kind, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
int	apid_not_found(uint32_t apid_id, const char *sandbox_id);
int	apid_reply_info(uint32_t apid_id, struct sandbox *, int running,
	    int reason);
/* The same from the proxy's DOCKER_STATE_RESULT, or its error relayed. */
void	apid_reply_state(uint32_t apid_id, struct sandbox *, struct imsg *);

/* sandbox.c: the table, per-sandbox locks, the quota (API.md §8.3-8.4). */
struct sandbox	*sandbox_new(void);
struct sandbox	*sandbox_find(const char *id);
void	 sandbox_insert(struct sandbox *);
void	 sandbox_remove(struct sandbox *);	/* destroyed: gone */
void	 sandbox_hold(struct sandbox *);
void	 sandbox_release(struct sandbox *);
/* Run op now, or when the operations queued before it are done. */
int	 sandbox_lock(struct sandbox *, sandbox_op_cb, void *arg);
void	 sandbox_unlock(struct sandbox *);
/* Walk the table in id order (not while it changes). */
struct sandbox	*sandbox_first(void);
struct sandbox	*sandbox_next(struct sandbox *);
/* Sandboxes in the table by created_at (malloc'd; NULL and 0 if none). */
struct sandbox	**sandbox_sorted(size_t *count);
size_t	 sandbox_count(void);
void	 sandbox_make_id(char *buf, size_t len);
/* held + in flight < max: take a slot (0), or refuse (-1). */
int	 quota_reserve(void);
void	 quota_release(void);
size_t	 quota_pending(void);
/* Drop everything (shutdown, tests). */
void	 sandbox_table_clear(void);

/* validate.c: request checks shared by create and exec. */
const char *env_invalid_key(const struct env_list *);
int	 reply_bad_env(uint32_t apid_id, const char *key);
/* A pooled sandbox's env under the request's (borrowed strings). */
int	 exec_env(const struct sandbox *, const struct env_list *req,
	    struct env_list *out);
void	 exec_env_free(const struct sandbox *, struct env_list *);
int	 command_blank(const char *);
/* An exec's workdir: /workspace when not given; -1 once answered. */
#define WORKSPACE_DIR	"/workspace"
int	 workdir_resolve(uint32_t apid_id, const char *in, char *out,
	    size_t len);
/* The argv to run: a shell line under /bin/sh -c (in shell_argv). */
void	 command_argv(int shell, size_t argc, char **argv,
	    char *shell_argv[4], size_t *argcp, char ***argvp);

/* create.c, query.c, destroy.c, timeout.c, exec.c: apid's requests. */
void	 sandbox_create(uint32_t apid_id, struct create_request *);
void	 sandbox_get(uint32_t apid_id, const char *id);
/* Takes the filter's contents. */
void	 sandbox_list(uint32_t apid_id, struct label_filter *);
/* stats.c: GET .../stats. */
void	 sandbox_stats(uint32_t apid_id, const char *id);
/* labels.c: PATCH of the labels; takes the patch's contents. */
void	 sandbox_patch(uint32_t apid_id, struct label_patch *);
void	 sandbox_delete(uint32_t apid_id, const char *id);
void	 sandbox_set_timeout(uint32_t apid_id, const char *id,
	    int64_t secs);
void	 exec_start(uint32_t apid_id, struct exec_request *, int fd);
void	 exec_cancel(uint32_t apid_id);
size_t	 exec_count(void);
/* STATE_RESULT: 1 if running; *reason why not (may be NULL). */
int	 docker_state_running(struct imsg *, int *reason);
/* The whole of a MSG_DOCKER_STATE_RESULT; a lie is fatal. */
struct docker_state {
	int		 exists;
	int		 running;
	uint32_t	 pid;		/* 0 unless running */
	char		 container[CONTAINER_ID_LEN + 1];	/* "": none */
};
void	 docker_state_parse(struct imsg *, struct docker_state *);

/* pool.c: the warm pool (AGENT_SANDBOX_WARM_POOL). */
int	 pool_init(char *err, size_t len);	/* at start-up */
void	 pool_start(void);			/* after reconciliation */
int	 pool_create(uint32_t apid_id, struct create_request *,
	    struct sandbox_spec *, int64_t ttl);
int	 pool_evict(void);
size_t	 pool_ready(void);
size_t	 pool_slots(void);
void	 pool_event(const struct docker_event *);
void	 pool_stock_begin(void);
void	 pool_stock_item(const char *id, int running);
void	 pool_stock_end(int64_t list_ns);

/* events.c: sandbox states from Docker's event stream. */
int64_t	 events_now_ns(void);
void	 events_follow(void);		/* the proxy is READY */
void	 events_down(void);		/* the proxy died */
void	 events_dispatch(struct peer *, struct imsg *);
int	 events_live(void);		/* states are known */
int	 sandbox_state_known(const struct sandbox *);
void	 sandbox_state_replacing(struct sandbox *);
void	 sandbox_state_started(struct sandbox *);
/*
 * process.c, process_ops.c, process_recover.c: processes that outlive a
 * request (process.h has the rest).  payload is the START's as apid sent
 * it: its digest tells a client_id retry from a different request.
 */
void	 process_start(uint32_t apid_id, struct process_request *,
	    const void *payload, size_t len);
void	 process_get(uint32_t apid_id, const struct process_ref *);
void	 process_list(uint32_t apid_id, const char *sandbox_id);
void	 process_output(uint32_t apid_id, const struct process_output *,
	    int fd);
void	 process_stdin(uint32_t apid_id, const struct process_stdin *, int fd);
void	 process_signal(uint32_t apid_id, const struct process_signal *);
void	 process_resize(uint32_t apid_id, const struct process_resize *);
void	 process_delete(uint32_t apid_id, const struct process_ref *);
size_t	 process_count(void);
/* Its container is gone or replaced: its processes and records too. */
void	 processes_sandbox_gone(const char *sandbox_id);
void	 processes_recover(void);
void	 processes_clear(void);	/* tests: the records stay */
/*
 * metrics.c: managerd's families for GET /metrics (docs/metrics.md),
 * and apid's METRICS_REQUEST.  The counters' one call each, where the
 * thing counted ends.
 */
void	 metrics_init(void);		/* before the chroot */
void	 metrics_scrape(struct peer *, struct imsg *);
/* kind: "create" or "fork" */
void	 metrics_sandbox_created(const char *kind, int ok);
void	 metrics_sandbox_destroyed(int reaped, int ok);
void	 metrics_exec_done(double seconds, int timed_out);
void	 metrics_child_restarted(enum child_id);
void	 metrics_snapshot_stored(uint64_t bytes);
/* The reaper's destroy, through the same lock; done(sb, ok) at the end. */
int	 sandbox_destroy(struct sandbox *,
	    void (*done)(struct sandbox *, int));

/*
 * files.c, file_write.c: API.md §4.9-4.11 and §6.  Handlers may take
 * (and set to NULL) fields of the request they keep; the caller frees
 * the rest.  fd is consumed either way.
 */
void	 file_read(uint32_t apid_id, struct file_request *, int fd);
void	 file_list(uint32_t apid_id, struct file_request *, int fd);
/*
 * A client's path normalized into out (MSG_MAX_PATH + 1 bytes); -1 once
 * apid has heard why it cannot be.
 */
int	 file_path(uint32_t apid_id, const char *in, char *out);
/*
 * The two-phase upload: apid's FILE_WRITE_BEGIN, _COMMIT and _ABORT,
 * decoded here; one out of turn is fatal.
 */
void	 file_write_begin(struct peer *, struct imsg *);
void	 file_write_commit(struct peer *, struct imsg *);
void	 file_write_abort(struct peer *, struct imsg *);
void	 file_write_orphaned(uint32_t apid_id);
/* Uploads not finished, and those that wait for an abandoned PUT. */
size_t	 upload_count(void);
/*
 * A spool in <data_dir>/uploads/ (made if missing): O_TMPFILE when asked
 * and the file system has it, else a new name unlinked at once; -1 with
 * errno.
 */
int	 upload_spool_open(int tmpfile);
/* At start: uploads/ made if missing, and emptied of leftovers. */
void	 upload_leftovers_remove(void);

/*
 * file_walk.c: where an upload of the normalized path lands inside the
 * sandbox (API.md §4.10 step 7).  done gets kind 0 and the plan in the
 * walk, or the error to answer; it may run before file_walk_start
 * returns, and the walk must live until it has run.  The plan: phys is
 * the path with its symlinks resolved, under /workspace; dirs[0..ndirs)
 * are its parents below /workspace, of which the first nexisting exist
 * (their mode and mtime filled in) and the others are to be made.
 */
struct file_walk;
typedef void	(*file_walk_cb)(struct file_walk *, enum error_kind,
		    const char *text);
struct file_walk {
	char			 id[SANDBOX_ID_LEN + 1];
	char			 requested[MSG_MAX_PATH + 1];
	char			 phys[MSG_MAX_PATH + 1];
	size_t			 done;		/* phys[0..done): a directory */
	size_t			 end;		/* the component asked about */
	size_t			 target_end;	/* phys[0..it): a target */
	size_t			 requested_rest; /* where the rest starts */
	int			 links;
	uint32_t		 ndirs;
	uint32_t		 nexisting;
	struct file_write_dir	 dirs[FILE_WRITE_MAX_DIRS];
	file_walk_cb		 done_cb;
	void			*arg;
};
void	 file_walk_start(struct file_walk *, const char *sandbox_id,
	    const char *path, file_walk_cb, void *arg);

/*
 * exec.c, for files.c: run dx with apid's output pipe fd (consumed); at
 * the start apid hears started_type (with the string started_str if not
 * NULL), then MSG_EXEC_EXIT; MSG_EXEC_CANCEL with apid_id stops it.
 * Failures are answered to apid here.
 */
int	 exec_run(uint32_t apid_id, const struct docker_exec *, int fd,
	    uint32_t started_type, const char *started_str);

/* snapshot.c: API.md §4.12, §4.14-4.16, §7.1 (same conventions). */
void	 snapshot_create(uint32_t apid_id, struct snapshot_create *, int fd);
/* apid's MSG_SNAPSHOT_WRITTEN for the SNAPSHOT_CREATE apid_id. */
void	 snapshot_written(uint32_t apid_id, struct tar_result *);
/* SNAPSHOT_RETRY: fd, the pipe for the rewrite's tar, is taken. */
void	 snapshot_retry(uint32_t apid_id, const struct tar_result *, int fd);
void	 snapshot_retry_lost(uint32_t apid_id);
/* The apid writing it died: it fails (if it had got that far). */
void	 snapshot_abandoned(uint32_t apid_id);
void	 snapshot_list(uint32_t apid_id, const char *sandbox_id);
void	 snapshot_get(uint32_t apid_id, const char *id);
void	 snapshot_delete(uint32_t apid_id, const char *id);

/* rollback.c, fork.c: API.md §4.13, §4.17, §7.2-7.4. */
void	 sandbox_rollback(uint32_t apid_id, struct rollback_request *);
void	 snapshot_fork(uint32_t apid_id, struct fork_request *);

/*
 * apid_call.c: managerd's own requests to apid (MSG_TAR_CHECK).  done
 * gets the reply (the imsg is freed by the caller) exactly once, or a
 * MSG_ERROR if no apid can answer; fd goes with the request and is
 * consumed either way.  0 on failure.
 */
uint32_t apid_call(uint32_t type, int fd, struct msgw *,
	    uint32_t reply_type, proxy_done_cb done, void *arg);
/* A reply to one of our calls (MSG_TAR_CHECKED). */
void	 apid_call_reply(struct peer *, struct imsg *);
/* apid is gone: our calls to it fail (MSG_ERROR, 502), from the loop. */
void	 apid_calls_fail(void);

/*
 * reaper.c: a timer that fires at the next expiry (API.md §8.2), not a
 * polling loop.  reap_interval_seconds is only the delay before a failed
 * destroy is tried again.
 */
void	 reaper_init(struct event_base *);
void	 reaper_schedule(void);
void	 reaper_run(void);
double	 reaper_next(void);	/* when it runs next; -1: never */
void	 reaper_stop(void);

/*
 * recover.c: restart reconciliation (API.md §8.5) before apid serves.
 * done(1) when finished, done(0) if Docker cannot be reached.
 */
void	 recover_start(void (*done)(int ok));

/*
 * Snapshots, rollback and fork: the store, the shared create and import
 * steps (API.md §4.12-4.17, §7, §9).
 */

/* A snapshot as its record file stores it (snapshots/<id>.json). */
struct snapshot_record {
	char			 id[SNAPSHOT_ID_LEN + 1];
	char			*name;		/* NULL: none */
	char			*sandbox_id;	/* may no longer exist */
	uint64_t		 size_bytes;
	double			 created_at;
	struct sandbox_spec	 spec;		/* the source sandbox's */
	char			 tenant[TENANT_MAX + 1];	/* as a sandbox's */
	struct egress_policy	 egress;	/* the source's: forks' */
};

/* store_snapshot.c.  "snapshots/" + id + ".json.tmp" fits. */
#define SNAPSHOT_PATH_MAX	64
/* snapshots/<id><suffix>; -1 (ENOENT) for a malformed id. */
int	 snapshot_path(char *buf, size_t len, const char *id,
	    const char *suffix);
void	 snapshot_record_free(struct snapshot_record *);
char	*store_snapshot_to_json(const struct snapshot_record *);
int	 store_snapshot_from_json(const char *, struct snapshot_record *);
/* The record, atomically (<id>.json.tmp, fsync, rename, fsync dir). */
int	 store_snapshot_write(int dirfd, const struct snapshot_record *);
/* -1 with ENOENT if no such snapshot (record and tar both needed). */
int	 store_snapshot_load(int dirfd, const char *id,
	    struct snapshot_record *);
/* Every snapshot of sandbox_id (NULL: all) that reads back, in no
 * order, corrupt ones skipped; the records lack their spec's env. */
int	 store_snapshot_load_all(int dirfd, const char *sandbox_id,
	    struct snapshot_record **, size_t *count);
int	 store_snapshot_remove(int dirfd, const char *id);
int	 store_snapshot_sync_dir(int dirfd);

/*
 * create.c, shared with fork and rollback: the checks of §4.2 (answered
 * here on failure; the env moves from the request into the spec), a
 * quota slot (429 answered here), and the proxy's DOCKER_CREATE.
 * sandbox_docker_create returns -1 with E2BIG if the spec does not fit
 * in a message.
 */
/*
 * inherited: a fork's snapshot's policy when the fork names no network
 * (NULL for a create); *egress: the policy chosen (network.c).
 */
int	 create_check(uint32_t apid_id, struct create_request *,
	    const struct egress_policy *inherited, struct sandbox_spec *,
	    struct egress_policy *egress, int64_t *ttl);
int	 create_reserve(uint32_t apid_id);
int	 sandbox_docker_create(struct sandbox *, proxy_done_cb, void *arg);
/* The proxy died (creates it had are cut off) or is back (what they may
 * have left in Docker is destroyed). */
void	 create_proxy_lost(void);
void	 create_proxy_ready(void);
/* When those destroys happen, in seconds after it is back (tests: 0). */
extern unsigned int create_orphan_delays[2];

/*
 * import.c (§7.3): a stored snapshot opened twice, one descriptor for
 * apid's TAR_CHECK and one for the proxy's ARCHIVE_PUT.  done(arg, 0,
 * NULL) on success, else the error's kind and text; each call returns -1
 * (done not called) if it could not be sent.  Each descriptor is consumed
 * by its call; snapshot_tar_close closes what is left.
 */
struct snapshot_tar {
	char		 id[SNAPSHOT_ID_LEN + 1];
	int		 check_fd;
	int		 put_fd;
	int64_t		 size;
};
typedef void	(*import_cb)(void *arg, enum error_kind, const char *text);
/* -1 with ENOENT if there is no such snapshot. */
int	 snapshot_tar_open(const char *id, struct snapshot_tar *);
void	 snapshot_tar_close(struct snapshot_tar *);
int	 snapshot_tar_check(struct snapshot_tar *, import_cb, void *arg);
int	 snapshot_tar_put(struct snapshot_tar *, const char *sandbox_id,
	    import_cb, void *arg);
/* 404 "snapshot <id> not found". */
int	 reply_snapshot_not_found(uint32_t apid_id, const char *id);
/* After store_snapshot_load or snapshot_tar_open failed: that 404 for
 * ENOENT, else 500 "cannot read snapshot <id>: <errno>". */
int	 reply_snapshot_error(uint32_t apid_id, const char *id);

/* The egress wiring: child_call.c, egress.c, network.c. */
#include "egress_wiring.h"

#endif /* AS_MANAGERD_H */
