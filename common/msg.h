/*
 * Every message the three processes exchange, declared once.
 *
 * Numbering by direction: 100s control (managerd -> child and back),
 * 200s apid -> managerd, 300s managerd -> apid, 400s managerd -> proxy,
 * 500s proxy -> managerd, 600s apid -> archive-worker, 700s
 * archive-worker -> apid, 800s managerd -> netns-helper and
 * egress-proxy, 850s back, 900 errors (any reply direction).
 * The header's peerid is the request id chosen by the sender of a request
 * and echoed in its reply.  Payloads are built with msgw_* and read with
 * msgr_*: fixed-width fields, length-prefixed strings, exact length.
 */
#ifndef AS_MSG_H
#define AS_MSG_H

#include <stddef.h>
#include <stdint.h>

#include "imsg.h"

enum msg_type {
	/*
	 * managerd -> apid, fd = listening socket.
	 * str log_level, str seccomp_mode, str privsep_user, str chroot_dir,
	 * u8 insecure_no_auth, u32 nkeys, nkeys x str api_key,
	 * u64 max_file_bytes, u64 max_exec_output_bytes,
	 * double http header, body, idle and send timeouts (seconds),
	 * u32 http_max_connections, str metrics_key (NULL: none).
	 */
	MSG_APID_CONFIG = 100,
	/*
	 * managerd -> dockerd-proxy, no fd.
	 * str log_level, str seccomp_mode, str privsep_user, str chroot_dir,
	 * str docker_endpoint (DOCKER_HOST as checked by config_docker.c: an
	 * absolute unix socket path, or tcp://HOST:PORT with HOST a name, an
	 * IPv4 literal or a bracketed IPv6 literal; see common/docker_host.h),
	 * str instance_id, then the policy only the
	 * operator sets (struct proxy_policy): u32 sandbox uid, u32 sandbox
	 * gid, i64 tmp_size_mb, str runtime ("": Docker's default), str
	 * network_name, double max_cpus, i64 max_memory_mb, i64
	 * max_pids_limit, u8 allow_network, u8 allow_runtime_env.  Built by
	 * the spawner, from the configuration it read before managerd
	 * confined itself.
	 */
	MSG_PROXY_CONFIG = 101,
	/*
	 * managerd's spawner -> archive-worker, no fd.  The settings' common
	 * head (proc.h) and nothing more: str log_level, str seccomp_mode,
	 * str privsep_user, str chroot_dir.
	 */
	MSG_WORKER_CONFIG = 102,
	/*
	 * managerd -> archive-worker, empty, fd = the worker's end of a
	 * socketpair whose other end goes to apid (APID_WORKER_CHANNEL).
	 * Sent once the worker is READY, and again with a new pair when
	 * either of the two was started again.  A new one replaces the
	 * channel the worker had.  No reply.
	 */
	MSG_WORKER_APID_CHANNEL = 103,
	/*
	 * managerd -> apid, empty, fd = apid's end of that socketpair.  Sent
	 * once apid is READY, so before any reply that makes apid start an
	 * archive job, and again as above.  A new one replaces the channel
	 * apid had.  No reply.
	 */
	MSG_APID_WORKER_CHANNEL = 104,
	/*
	 * apid or archive-worker -> managerd, empty, no fd: the channel of
	 * the two came without its descriptor (the receiver was out of
	 * them; msg_fd_may_be_lost).  managerd makes a new pair and sends
	 * each end again, a second later and every second until descriptors
	 * allow.  No reply.
	 */
	MSG_CHANNEL_AGAIN = 105,
	/*
	 * managerd -> apid, no fd: the keys file's table (keys_file.h's
	 * chunks: names, tenants, admin flags, SHA-256 hashes, rates and
	 * quotas, never a plain key), in as many messages as it takes.
	 * Sent once apid is READY and after every reload; a whole table
	 * replaces the one apid had.  No reply.
	 */
	MSG_APID_KEYS = 106,
	/*
	 * managerd's spawner -> netns-helper, no fd: the common head
	 * (proc.h) and nothing more.  The helper keeps CAP_SYS_ADMIN and
	 * CAP_SYS_PTRACE, and only it (docs/architecture.md, "Egress").
	 */
	MSG_NETNS_CONFIG = 107,
	/*
	 * managerd's spawner -> egress-proxy, no fd: the common head, then
	 * str dns (AGENT_SANDBOX_EGRESS_DNS: nameserver addresses separated
	 * by commas; "": /etc/resolv.conf's, read before the jail), str
	 * public (AGENT_SANDBOX_EGRESS_PUBLIC: the ranges the operator
	 * counts as public besides the Internet, egress_extra_parse()'s
	 * form), u32 log_size (records kept per sandbox, 1-EGRESS_LOG_MAX).
	 */
	MSG_EGRESS_CONFIG = 108,
	/* child -> managerd: jailed and serving.  Empty. */
	MSG_READY = 110,
	/*
	 * managerd <-> its spawner (managerd/spawner.c), which starts and
	 * reaps the children.  A child is named by its index in managerd's
	 * child table (managerd/children.c); peerid is 0.
	 *
	 * SPAWN_START, managerd -> spawner: u32 child.  Start it (it must
	 * not be running) -> SPAWN_STARTED or SPAWN_FAILED.
	 */
	MSG_SPAWN_START = 120,
	/* managerd -> spawner: u32 child.  SIGKILL it if it runs; no reply. */
	MSG_SPAWN_KILL = 121,
	/*
	 * spawner -> managerd: u32 child, u32 pid; fd = managerd's end of
	 * the child's channel, the child's settings message already in it.
	 */
	MSG_SPAWN_STARTED = 122,
	/* spawner -> managerd: u32 child, u32 errno: it could not start. */
	MSG_SPAWN_FAILED = 123,
	/* spawner -> managerd: u32 child, u32 pid, u32 wait status: reaped. */
	MSG_SPAWN_EXIT = 124,
	/*
	 * managerd -> spawner, empty (SIGHUP): read the keys file again.
	 * -> SPAWN_KEYS, or nothing when it does not parse (the spawner logs
	 * why, and the table in use stays).
	 */
	MSG_SPAWN_KEYS_RELOAD = 125,
	/* spawner -> managerd: the new table in keys_file.h's chunks. */
	MSG_SPAWN_KEYS = 126,

	/*
	 * apid -> managerd.  Layouts are the struct codecs of sandbox_msg.h.
	 * Every request is answered by MSG_ERROR or the reply named here.
	 */
	MSG_HEALTH_REQUEST = 200,	/* empty -> HEALTH_RESULT */
	MSG_SANDBOX_CREATE = 201,	/* create_request -> SANDBOX_INFO */
	/*
	 * label_filter (sandbox_msg.h; count 0: every sandbox) ->
	 * SANDBOX_INFO* LIST_END, only the sandboxes it matches.
	 */
	MSG_SANDBOX_LIST = 202,
	MSG_SANDBOX_GET = 203,		/* str id -> SANDBOX_INFO */
	MSG_SANDBOX_DELETE = 204,	/* str id -> OK */
	MSG_SANDBOX_TIMEOUT = 205,	/* str id, i64 secs -> SANDBOX_INFO */
	/*
	 * exec_request, fd = write end of the output pipe ->
	 * EXEC_STARTED, later EXEC_EXIT (or one MSG_ERROR instead of both).
	 */
	MSG_EXEC_START = 206,
	/* empty, peerid = the EXEC_START's id: the client went away. */
	MSG_EXEC_CANCEL = 207,
	/*
	 * Files and snapshots (API.md §4.9-4.17); payloads in file_msg.h.
	 * Bulk bytes never ride in messages: each of these passes a pipe or
	 * file descriptor and the bytes go through it.
	 *
	 * FILE_READ: file_request, fd = write end of a pipe that will carry
	 * Docker's tar of the file (or of its directory) -> FILE_READ_STARTED
	 * (send the 200 now, extract the file it names), then OK; or
	 * MSG_ERROR instead (after FILE_READ_STARTED an error means: abort
	 * the response).
	 */
	MSG_FILE_READ = 208,
	/* 209 was the one-step FILE_WRITE, which bypassed the walk. */
	/*
	 * FILE_LIST: file_request, fd = write end of an exec output pipe
	 * (frames as for EXEC_START; stdout holds file_list_entry records)
	 * -> FILE_LIST_STARTED, then EXEC_EXIT; or MSG_ERROR.
	 */
	MSG_FILE_LIST = 210,
	/*
	 * SNAPSHOT_CREATE: snapshot_create, fd = write end of a pipe that
	 * will carry Docker's tar of /workspace -> SNAPSHOT_SINK (fd = the
	 * temporary snapshot file: copy or rewrite the tar into it, at
	 * most max_bytes, then send SNAPSHOT_WRITTEN, or after a copy
	 * that needs the rewrite SNAPSHOT_RETRY), then SNAPSHOT_INFO; or
	 * MSG_ERROR (before SINK, after a RETRY, or after apid's
	 * SNAPSHOT_WRITTEN).
	 */
	MSG_SNAPSHOT_CREATE = 211,
	/* u8 has_filter, str sandbox_id -> SNAPSHOT_INFO* SNAPSHOT_LIST_END */
	MSG_SNAPSHOT_LIST = 212,
	MSG_SNAPSHOT_GET = 213,		/* str id -> SNAPSHOT_INFO */
	MSG_SNAPSHOT_DELETE = 214,	/* str id -> OK */
	MSG_SANDBOX_ROLLBACK = 215,	/* rollback_request -> SANDBOX_INFO */
	MSG_SNAPSHOT_FORK = 216,	/* fork_request -> SANDBOX_INFO */
	/*
	 * tar_result, peerid = the SNAPSHOT_CREATE's id: the rewrite into
	 * the SNAPSHOT_SINK file ended (and apid closed both descriptors).
	 * No reply of its own.
	 */
	MSG_SNAPSHOT_WRITTEN = 217,
	/* tar_result, peerid = the TAR_CHECK's id (managerd's). */
	MSG_TAR_CHECKED = 218,
	/*
	 * tar_result (errnum JOB_NEEDS_REWRITE, why), peerid = the
	 * SNAPSHOT_CREATE's id, fd = write end of a new pipe: the copy
	 * stopped at a member the rewrite would change (the tar cannot be
	 * stored as Docker made it).  managerd asks the proxy for the tar
	 * of /workspace again into this pipe and answers with a second
	 * SNAPSHOT_SINK (copy 0, the file truncated), or MSG_ERROR.
	 */
	MSG_SNAPSHOT_RETRY = 231,	/* after WRITTEN, in the gap */
	/*
	 * The two-phase upload; every message of one upload has the BEGIN's
	 * id.  FILE_WRITE_BEGIN: file_write (size FILE_WRITE_SIZE_UNKNOWN
	 * for a chunked body), no fd, after apid's 413 and 422 checks ->
	 * FILE_SPOOL (managerd resolved the path; read the body into the
	 * file it passes) or MSG_ERROR.  After FILE_SPOOL apid sends exactly
	 * one of COMMIT or ABORT, never before it and never both.
	 */
	MSG_FILE_WRITE_BEGIN = 219,
	/*
	 * u64 bytes of the body, no fd.  After a bare spool ->
	 * FILE_WRITE_READY (fd = write end of the upload's tar pipe: write
	 * the tar it describes from the spool into it, then close it), then
	 * FILE_INFO; after a tar spool (the tar is whole in the spool) ->
	 * FILE_INFO.  Or MSG_ERROR at any point.  bytes must be the BEGIN's
	 * size when it had one.
	 */
	MSG_FILE_WRITE_COMMIT = 220,
	/* empty: the body did not arrive whole.  No reply; nothing written. */
	MSG_FILE_WRITE_ABORT = 221,
	/*
	 * Processes that outlive a request (process_msg.h, payloads there).
	 * PROCESS_START: process_request -> PROCESS_INFO (existed set for a
	 * client_id retry of the same request) or MSG_ERROR (409 for a
	 * client_id already used by a different request).
	 */
	MSG_PROCESS_START = 222,
	/* str sandbox_id -> PROCESS_INFO* PROCESS_LIST_END */
	MSG_PROCESS_LIST = 223,
	MSG_PROCESS_GET = 224,		/* process_ref -> PROCESS_INFO */
	/*
	 * process_output, fd = write end of a pipe -> PROCESS_OUTPUT_STARTED
	 * (send the 200 now), the last reply; managerd then writes events
	 * (process_msg.h) into the pipe and closes it: after the exit event,
	 * at the end of the kept output when follow is 0, or when it gives
	 * up on the reader.  MSG_ERROR instead of STARTED: nothing written.
	 */
	MSG_PROCESS_OUTPUT = 225,
	/*
	 * process_stdin, fd = read end of a pipe -> OK once every byte up to
	 * its end of file went into the process's stdin (and that stdin was
	 * closed, if asked), or MSG_ERROR.  Several may be open at once (one
	 * per WebSocket): their bytes reach the process in arrival order.
	 */
	MSG_PROCESS_STDIN = 226,
	MSG_PROCESS_SIGNAL = 227,	/* process_signal -> OK */
	/* process_ref -> OK: the tree killed, the record gone */
	MSG_PROCESS_DELETE = 228,
	MSG_PROCESS_RESIZE = 229,	/* process_resize -> OK */
	/*
	 * caller (caller.h), peerid = the id of the request that follows:
	 * who makes it (the key's name and tenant, admin, the client's
	 * address, the route).  Sent immediately before every message that
	 * opens a request (managerd/apid_request.c's request_kinds[]), and
	 * before nothing else.  No reply.
	 */
	MSG_CALLER = 230,
	/*
	 * label_patch (sandbox_msg.h) -> SANDBOX_INFO, under the sandbox's
	 * lock, the record on disk before the answer.
	 */
	MSG_SANDBOX_PATCH = 235,
	/*
	 * GET /metrics (docs/metrics.md); payloads in metrics_msg.h.
	 * metrics_rss (apid's resident bytes, which managerd renders with
	 * the others') -> METRICS_TEXT* METRICS_END, or MSG_ERROR.  The
	 * text is managerd's families, then dockerd-proxy's when it is up;
	 * apid puts its own first.  No family comes from two daemons.
	 */
	MSG_METRICS_REQUEST = 240,
	/* str id -> SANDBOX_STATS_RESULT (sandbox_stats, stats_msg.h) */
	MSG_SANDBOX_STATS = 245,
	/*
	 * A sandbox's egress policy (docs/rest-api.md "Network").
	 * NETWORK_GET: str id -> NETWORK_INFO.
	 */
	MSG_NETWORK_GET = 250,
	/*
	 * str id, str policy (the body's JSON text, at most
	 * EGRESS_POLICY_TEXT_MAX bytes; apid checked only that it is an
	 * object) -> NETWORK_INFO once the egress proxy applies it to
	 * every new connection, or MSG_ERROR (ERR_INVALID_REQUEST, 400,
	 * for a policy that does not parse: "network: " and
	 * egress_policy_parse()'s text, as the other checks of a spec).
	 */
	MSG_NETWORK_PUT = 251,
	/* str id -> NETWORK_LOG_TEXT* NETWORK_LOG_END */
	MSG_NETWORK_LOG = 252,

	/* managerd -> apid */
	MSG_HEALTH_RESULT = 300,	/* str backend (e.g. "docker") */
	MSG_SANDBOX_INFO = 301,		/* sandbox_info */
	MSG_SANDBOX_LIST_END = 302,	/* empty */
	MSG_OK = 303,			/* empty */
	MSG_EXEC_STARTED = 304,		/* empty: send the 200 now */
	MSG_EXEC_EXIT = 305,		/* exec_exit */
	MSG_FILE_READ_STARTED = 306,	/* file_read_started */
	/* file_write_ready, fd = the tar pipe (see FILE_WRITE_COMMIT) */
	MSG_FILE_WRITE_READY = 307,
	MSG_FILE_INFO = 308,		/* file_info */
	MSG_FILE_LIST_STARTED = 309,	/* str normalized directory */
	/*
	 * u64 max_bytes, u8 copy, fd = the temporary snapshot file.  copy
	 * 1: the pipe holds Docker's tar of "/workspace/.", for a
	 * SNAPSHOT_COPY job; 0: of "/workspace", for the rewrite
	 * (SNAPSHOT).  After it, managerd's final reply to the
	 * SNAPSHOT_CREATE (SNAPSHOT_INFO or MSG_ERROR) comes only once
	 * apid has sent SNAPSHOT_WRITTEN or SNAPSHOT_RETRY.
	 */
	MSG_SNAPSHOT_SINK = 310,
	MSG_SNAPSHOT_INFO = 311,	/* snapshot_info */
	MSG_SNAPSHOT_LIST_END = 312,	/* empty */
	/*
	 * managerd -> apid request (peerid chosen by managerd), fd = a stored
	 * snapshot opened read-only: check every member before it is
	 * imported -> TAR_CHECKED.
	 */
	MSG_TAR_CHECK = 313,
	/*
	 * file_spool, fd = an empty spool file, unlinked, open for reading
	 * and writing.  A bare spool (a chunked body): the body goes there,
	 * at most max_bytes (max_file_bytes), and the same descriptor is
	 * read for the tar at READY, from offset 0.  A tar spool (the
	 * BEGIN's size, max_bytes, was declared): an UPLOAD job writes the
	 * plan's tar there with the body as its file, which must be
	 * exactly max_bytes long; managerd hands that file to the proxy.
	 */
	MSG_FILE_SPOOL = 314,
	MSG_PROCESS_INFO = 315,		/* process_info */
	MSG_PROCESS_LIST_END = 316,	/* empty */
	MSG_PROCESS_OUTPUT_STARTED = 317,	/* empty */
	/* metrics_text: whole lines of the exposition format */
	MSG_METRICS_TEXT = 320,
	MSG_METRICS_END = 321,		/* empty: the text is complete */
	MSG_SANDBOX_STATS_RESULT = 325,	/* sandbox_stats */
	/*
	 * str policy: the canonical JSON object of the sandbox's policy
	 * (egress_policy_to_json()), or {"mode": "bridge"} for a sandbox
	 * on the shared bridge (AGENT_SANDBOX_NETWORK_TRUE=bridge).
	 */
	MSG_NETWORK_INFO = 330,
	/*
	 * str text: the next piece of the JSON object of the sandbox's
	 * recent connections (egress_log_to_json()); the pieces in order
	 * make it whole at NETWORK_LOG_END (empty).
	 */
	MSG_NETWORK_LOG_TEXT = 331,
	MSG_NETWORK_LOG_END = 332,

	/* managerd -> proxy */
	MSG_DOCKER_PING = 400,		/* empty -> DOCKER_PONG */
	MSG_DOCKER_CREATE = 401,	/* docker_create -> DOCKER_DONE */
	MSG_DOCKER_DESTROY = 402,	/* str id -> DOCKER_DONE */
	MSG_DOCKER_STATE = 403,		/* str id -> DOCKER_STATE_RESULT */
	MSG_DOCKER_LIST = 404,		/* empty -> LIST_ITEM* LIST_END */
	/*
	 * docker_exec, fd = write end of the output pipe ->
	 * DOCKER_EXEC_STARTED, later DOCKER_EXEC_EXIT (or one MSG_ERROR).
	 * The pipe carries only frames: 8-byte header (u8 stream 1 stdout or
	 * 2 stderr, 3 zero bytes, u32 big-endian length), then at most 32 KiB
	 * of payload.  The proxy closes it before DOCKER_EXEC_EXIT.
	 */
	MSG_DOCKER_EXEC = 405,
	/*
	 * empty, peerid = the DOCKER_EXEC's id: kill the command, close the
	 * pipe.  No reply of its own: the exec still ends with its usual
	 * DOCKER_EXEC_EXIT (or MSG_ERROR if it had not started).  Ignored
	 * when no such exec runs.
	 */
	MSG_DOCKER_EXEC_CANCEL = 406,
	/*
	 * archive_get, fd = write end of a pipe -> DOCKER_ARCHIVE_STAT, then
	 * DOCKER_DONE (or MSG_ERROR at any point; a 404 is ERR_NOT_FOUND
	 * "<path>: not found" with no STAT before it).  The body (Docker's
	 * tar) goes into the pipe only when the stat says it should (see
	 * archive_get in file_msg.h); the proxy closes the pipe before DONE.
	 */
	MSG_DOCKER_ARCHIVE_GET = 407,
	/*
	 * archive_put, fd = the tar to upload (a pipe or a regular file),
	 * read to its end -> DOCKER_DONE or MSG_ERROR.
	 */
	MSG_DOCKER_ARCHIVE_PUT = 408,
	/*
	 * archive_head (HEAD /containers/<id>/archive) -> DOCKER_ARCHIVE_STAT
	 * of the path (Docker resolves the directories on the way inside the
	 * container, not the last name; a symlink it cannot resolve, a loop,
	 * comes as ARCHIVE_KIND_SYMLINK with an empty target), or MSG_ERROR:
	 * ERR_NOT_FOUND "<path>: not found" when the path does not exist.
	 */
	MSG_DOCKER_ARCHIVE_HEAD = 409,
	/*
	 * docker_process, fd = managerd's end of a socketpair ->
	 * DOCKER_PROCESS_STARTED, later DOCKER_EXEC_EXIT (or one MSG_ERROR
	 * instead of both).  The proxy writes the output into the socket as
	 * DOCKER_EXEC's pipe (frames; a tty's bytes all as stream 1); when
	 * stdin_open, what it reads from the socket is the command's stdin,
	 * and the socket's end of file (managerd's shutdown) closes that
	 * stdin.  No timeout: the process runs until it ends, a signal or
	 * the sandbox's end.  A reader that went away does not kill it:
	 * its output is then read and dropped.
	 */
	MSG_DOCKER_PROCESS_START = 410,
	/* docker_process_signal -> DOCKER_DONE */
	MSG_DOCKER_PROCESS_SIGNAL = 411,
	/* docker_process_exec (cols, rows) -> DOCKER_DONE */
	MSG_DOCKER_PROCESS_RESIZE = 412,
	/* docker_process_exec -> DOCKER_PROCESS_STATE */
	MSG_DOCKER_PROCESS_INSPECT = 413,
	/*
	 * u64 length, peerid = an ARCHIVE_PUT_WAIT's id: its tar is whole in
	 * its file, length bytes from offset 0 (0: none; the body ends with
	 * the prime alone, which Docker unpacks as nothing).  No reply of
	 * its own: the PUT ends as it does.  Ignored when no such PUT runs
	 * (it ended while this was on its way); a second one is a lie.
	 */
	MSG_DOCKER_ARCHIVE_PUT_GO = 414,
	/*
	 * empty -> DOCKER_METRICS_TEXT* DOCKER_METRICS_END: the proxy's
	 * families (Docker calls), counted as they happened; no Docker
	 * call is made for it.
	 */
	MSG_DOCKER_METRICS = 420,
	/*
	 * str id -> DOCKER_STATS_RESULT: Docker's one-shot stats of the
	 * sandbox's container and the bytes under its /workspace.
	 */
	MSG_DOCKER_STATS = 425,
	/*
	 * empty, no reply: follow Docker's event stream of this server's
	 * sandbox containers from now on (docker_events.c); what it says
	 * comes as DOCKER_EVENTS_UP, DOCKER_EVENT and DOCKER_EVENTS_DOWN.
	 * Sent again after the proxy's READY; a second one is ignored.
	 */
	MSG_DOCKER_EVENTS_FOLLOW = 430,
	/*
	 * docker_create -> DOCKER_DONE: the spec's cpus, memory_mb and
	 * pids_limit put on the sandbox's running container (a claimed
	 * pooled one, managerd/pool.c); the rest of the spec is checked as
	 * a create's and otherwise unused.
	 */
	MSG_DOCKER_UPDATE = 435,

	/* proxy -> managerd */
	MSG_DOCKER_PONG = 500,		/* str backend name */
	MSG_DOCKER_DONE = 501,		/* empty */
	/*
	 * u8 exists, u8 running, u32 pid (State.Pid: 0 unless running),
	 * str container (the 64-hex container id; "" unless it exists).
	 */
	MSG_DOCKER_STATE_RESULT = 502,
	MSG_DOCKER_LIST_ITEM = 503,	/* str id, u8 container, u8 running */
	MSG_DOCKER_LIST_END = 504,	/* empty */
	MSG_DOCKER_EXEC_STARTED = 505,	/* empty */
	MSG_DOCKER_EXEC_EXIT = 506,	/* exec_exit */
	/* archive_stat, for ARCHIVE_GET and ARCHIVE_HEAD */
	MSG_DOCKER_ARCHIVE_STAT = 507,
	MSG_DOCKER_PROCESS_STARTED = 508,	/* docker_process_started */
	MSG_DOCKER_PROCESS_STATE = 509,	/* docker_process_state */
	MSG_DOCKER_METRICS_TEXT = 510,	/* metrics_text */
	/* metrics_rss: the proxy's resident bytes (managerd renders them) */
	MSG_DOCKER_METRICS_END = 511,
	MSG_DOCKER_STATS_RESULT = 515,	/* sandbox_stats (stats_msg.h) */
	/*
	 * Unasked (peerid 0), once DOCKER_EVENTS_FOLLOW came.  UP: every
	 * event from about now on will come, in Docker's order, until a
	 * DOWN (managerd takes stock once with a DOCKER_LIST); DOWN: the
	 * stream broke, events may be lost, an UP follows when it is back.
	 * EVENT: docker_event (sandbox_msg.h), a sandbox container's.
	 */
	MSG_DOCKER_EVENTS_UP = 520,	/* empty */
	MSG_DOCKER_EVENTS_DOWN = 521,	/* empty */
	MSG_DOCKER_EVENT = 522,		/* docker_event */

	/*
	 * apid -> archive-worker, on the channel managerd made.  A job is
	 * its descriptors, each in an ARCHIVE_FD, then one ARCHIVE_JOB, all
	 * with the job's id (apid's) as peerid; archive_job_nfds() says how
	 * many descriptors each kind takes, in what order (archive_msg.h).
	 * At most ARCHIVE_JOBS_MAX jobs are in flight on one channel.
	 */
	MSG_ARCHIVE_FD = 600,		/* empty, fd = the job's next one */
	MSG_ARCHIVE_JOB = 601,		/* archive_job -> ARCHIVE_DONE */

	/*
	 * archive-worker -> apid: tar_result (file_msg.h), peerid = the job
	 * id.  Exactly one per ARCHIVE_JOB, also when the job's process died
	 * (errnum EPIPE, message "the archive worker died: ...").
	 */
	MSG_ARCHIVE_DONE = 700,

	/*
	 * managerd -> netns-helper: u32 pid, str container (64 hex), u32
	 * port -> NETNS_SOCKET, or MSG_ERROR (the pid is gone, or is not
	 * that container's any more).  The helper opens a pidfd of pid,
	 * checks that /proc/<pid>/cgroup names the container
	 * (netns_cgroup.h), and in a child that enters the pidfd's network
	 * namespace makes a TCP socket listening on 127.0.0.1:port.
	 */
	MSG_NETNS_LISTEN = 800,
	/*
	 * managerd -> egress-proxy.  EGRESS_LISTEN: str sandbox id, fd = a
	 * listening socket in the sandbox's network namespace; every
	 * connection accepted on it is that sandbox's.  It replaces the
	 * listener the sandbox had.  -> EGRESS_DONE, or MSG_ERROR
	 * (ERR_UNAVAILABLE: the descriptor was lost on the way).  A
	 * listener whose sandbox has no EGRESS_POLICY yet refuses every
	 * request (mode none).
	 */
	MSG_EGRESS_LISTEN = 810,
	/*
	 * str sandbox id, then the policy's byte form (egress_policy.h)
	 * -> EGRESS_DONE once every connection accepted from now on is
	 * checked against it (ones already established keep theirs).
	 */
	MSG_EGRESS_POLICY = 811,
	/*
	 * str sandbox id: close its listener and its connections, drop its
	 * policy and its log (the sandbox is gone, or has no network any
	 * more).  No reply; unknown ids are no lie.
	 */
	MSG_EGRESS_FORGET = 812,
	/*
	 * str sandbox id -> EGRESS_LOG_TEXT* EGRESS_LOG_END: the JSON of its
	 * log (egress_log_to_json(); an unknown sandbox's is empty), in
	 * pieces of at most EGRESS_LOG_PIECE bytes.
	 */
	MSG_EGRESS_LOG = 813,

	/* netns-helper -> managerd: empty, fd = the listening socket. */
	MSG_NETNS_SOCKET = 850,
	/* egress-proxy -> managerd */
	MSG_EGRESS_DONE = 860,		/* empty */
	MSG_EGRESS_LOG_TEXT = 861,	/* str text */
	MSG_EGRESS_LOG_END = 862,	/* empty */
	/*
	 * Unasked (peerid 0), one per connection, when it was refused or
	 * has ended: str sandbox id, str host (as the client gave it, valid
	 * UTF-8), u32 port, str address ("" if none), u8 allowed, str reason
	 * ("" when allowed), u64 bytes sent, u64 bytes received.  For the
	 * audit log; no reply.
	 */
	MSG_EGRESS_AUDIT = 870,

	/* Any reply direction: u32 enum error_kind, str message. */
	MSG_ERROR = 900,
};

/* Error classes that travel between processes; apid maps them to HTTP. */
enum error_kind {
	ERR_INVALID_REQUEST = 1,	/* 400 invalid_request */
	ERR_UNAUTHORIZED,		/* 401 unauthorized */
	ERR_FORBIDDEN,			/* 403 forbidden */
	ERR_NOT_FOUND,			/* 404 not_found */
	ERR_CONFLICT,			/* 409 conflict */
	ERR_PAYLOAD_TOO_LARGE,		/* 413 payload_too_large */
	ERR_LIMIT_EXCEEDED,		/* 429 limit_exceeded */
	ERR_INTERNAL,			/* 500 internal_error */
	ERR_BACKEND,			/* 502 backend_error */
	ERR_INSUFFICIENT_STORAGE,	/* 507 insufficient_storage */
	ERR_UNAVAILABLE,		/* 503 unavailable */
	ERR_TIMEOUT,			/* 504 backend_timeout */
	ERR_QUOTA_EXCEEDED,		/* 403 quota_exceeded */
	ERR_KIND_MAX = ERR_QUOTA_EXCEEDED
};
/*
 * What a failed write to the data directory or a spool is to a client:
 * a full disk (or quota) is ERR_INSUFFICIENT_STORAGE (507), for the
 * operator to free space; running out of descriptors as below; anything
 * else is other.
 */
enum error_kind	 storage_error(int errnum, enum error_kind other);
/*
 * What a descriptor a request needed and could not get is to a client:
 * the process or the system out of them (EMFILE, ENFILE) is
 * ERR_UNAVAILABLE (503), for a moment, not a fault of the request or of
 * Docker; anything else is other.
 */
enum error_kind	 descriptor_error(int errnum, enum error_kind other);
/*
 * A descriptor passed to a process that is out of them is dropped by the
 * kernel; its message arrives with fd_lost (imsg.h).  For the types this
 * names, all of them requests or replies on a request's path, the
 * receiver fails that request with ERR_UNAVAILABLE (a reply: it answers
 * the client 503 and ends the exchange as the type's failure does) and
 * serves on.  For any other type, or a message marked for a descriptor
 * its type does not carry, a lost one is fatal like any other lie.  The
 * two ends of apid's channel to the archive worker may be lost too: the
 * receiver asks for them again (MSG_CHANNEL_AGAIN); so may a child's
 * channel on its way to managerd (SPAWN_STARTED): managerd has the child
 * killed and starts it again a second later.  The start-up settings are
 * not a request's to fail.
 */
int		 msg_fd_may_be_lost(uint32_t type);


/* Longest string field a message may carry (an error text, a path...). */
#define MSG_MAX_STRING	8192
/*
 * The longest egress policy a client may send as JSON text (a create's
 * or a fork's "network", a PUT's body): what fits in one message, so
 * that the byte form of any policy that parses fits in one too.
 */
#define EGRESS_POLICY_TEXT_MAX	8192
/* The most text one EGRESS_LOG_TEXT or NETWORK_LOG_TEXT carries. */
#define EGRESS_LOG_PIECE	8000

const char	*msg_type_name(uint32_t);

/* Payload writer: fields append; an overflow is remembered, not ignored. */
struct msgw {
	unsigned char	 buf[IMSG_MAX_PAYLOAD];
	size_t		 len;
	int		 overflow;
};

void	msgw_init(struct msgw *);
void	msgw_u8(struct msgw *, uint8_t);
void	msgw_u32(struct msgw *, uint32_t);
void	msgw_u64(struct msgw *, uint64_t);
void	msgw_i64(struct msgw *, int64_t);
void	msgw_double(struct msgw *, double);
void	msgw_str(struct msgw *, const char *);	/* NULL allowed */
void	msgw_bytes(struct msgw *, const void *, size_t);
void	msgw_clear(struct msgw *);		/* wipe: may hold keys */

/* Payload reader: a short or malformed field sets error; check msgr_end. */
struct msgr {
	const unsigned char	*p;
	size_t			 len;
	size_t			 off;
	int			 error;
};

void		 msgr_init(struct msgr *, const struct imsg *);
uint8_t		 msgr_u8(struct msgr *);
uint32_t	 msgr_u32(struct msgr *);
uint64_t	 msgr_u64(struct msgr *);
int64_t		 msgr_i64(struct msgr *);
double		 msgr_double(struct msgr *);
/* A malloc'd copy; NULL for a NULL string or on error (see ->error). */
char		*msgr_str(struct msgr *, size_t maxlen);
int		 msgr_end(struct msgr *);	/* 0 iff no error, no leftovers */

#endif /* AS_MSG_H */
