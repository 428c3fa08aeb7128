/*
 * apid: the HTTP front.  It parses and validates what clients send, checks
 * API keys, and forwards typed requests to managerd.  It holds no
 * privilege: no files, no Docker, no sockets but its listener.
 */
#ifndef AS_APID_H
#define AS_APID_H

#include <sys/queue.h>

#include <event2/buffer.h>
#include <json-c/json.h>

#include "msg.h"
#include "peer.h"
#include "sandbox_msg.h"
#include "process_msg.h"
#include "file_msg.h"
#include "archive_msg.h"
#include "bulk_pipe.h"
#include "utf8.h"
#include "http.h"

struct apid_request;
/*
 * Called with each message managerd sends for the request.  Returns
 * APID_REPLY_DONE when that was the last one (the request is forgotten
 * and freed), APID_REPLY_MORE when more will come (a list, an exec).
 */
typedef int	(*apid_reply_cb)(struct apid_request *, struct imsg *);
#define APID_REPLY_DONE	0
#define APID_REPLY_MORE	1

/* An HTTP request waiting for managerd's answer. */
struct apid_request {
	TAILQ_ENTRY(apid_request)	 entry;
	uint32_t			 id;
	/*
	 * Still valid after the client went away: a detached request is
	 * freed by its last reply call, so every request gets one.
	 */
	struct http_request		*req;
	int				 client_gone;
	apid_reply_cb			 reply;
	/* Optional: told at once when the client goes away. */
	void				(*gone)(struct apid_request *);
	void				*arg;
};
TAILQ_HEAD(apid_requests, apid_request);

struct apid {
	struct event_base	*base;
	struct http_server	 http;
	struct peer		 parent;
	struct apid_requests	 pending;
	uint32_t		 next_id;
	int			 insecure_no_auth;
	char			**api_keys;
	size_t			 api_keys_count;
	char			*metrics_key;	/* GET /metrics's; NULL: none */
	uint64_t		 max_file_bytes;
	uint64_t		 max_exec_output_bytes;
	/* POST .../stdin calls managerd has not answered, and their bytes. */
	size_t			 stdin_calls, stdin_calls_max;
	size_t			 stdin_bytes, stdin_bytes_max;
};

extern struct apid	*apid;

/* http.c */
struct apid_request *apid_request_send(struct http_request *, uint32_t type,
	    struct msgw *, int fd, apid_reply_cb, void *arg);
/* The same for a request of this caller's, req NULL or not. */
struct apid_request *apid_request_send_as(const struct caller *,
	    struct http_request *, uint32_t type, struct msgw *, int fd,
	    apid_reply_cb, void *arg);
/* Forget a request whose last reply already came (see route_exec.c). */
void	apid_request_release(struct apid_request *);
void	apid_dispatch_parent(struct peer *, struct imsg *);

/* respond.c */
void	respond_json(struct http_request *, int status, json_object *);
void	respond_buffer(struct http_request *, int status,
	    const char *content_type, struct evbuffer *);
void	respond_error(struct http_request *, enum error_kind,
	    const char *message);
void	respond_errno(struct http_request *, int errnum, const char *what);
void	respond_error_status(struct http_request *, int status,
	    const char *code, const char *message);
int	respond_error_imsg(struct http_request *, struct imsg *);
const char *respond_reason(int status);
/*
 * The last word of a reply: the end of the one under way, else a bare
 * 500 (all a request whose client left still needs, to be freed).
 */
void	respond_end(struct http_request *, int reply_started);

/* reply.c: forwarding, and the replies several routes answer alike. */
/* Forward, or answer why we cannot (w may be NULL). */
void	route_forward(struct http_request *, uint32_t type, struct msgw *,
	    apid_reply_cb, void *arg);
/* managerd's MSG_ERROR as the answer; a malformed one is a lie. */
void	reply_error_msg(struct http_request *, struct imsg *);
/* One SANDBOX_INFO (or MSG_ERROR) as the whole answer. */
int	reply_sandbox_200(struct apid_request *, struct imsg *);
int	reply_sandbox_201(struct apid_request *, struct imsg *);
/*
 * One item message per element, then an empty end message (or
 * MSG_ERROR): {key: [...]}.  ar->arg is the array so far, which the
 * list takes; item_json decodes one item, NULL if malformed.
 */
struct reply_list_kind {
	uint32_t	 item_type;
	uint32_t	 end_type;
	const char	*key;
	json_object	*(*item_json)(struct imsg *);
	const char	*malformed;
};
int	reply_list(struct apid_request *, struct imsg *,
	    const struct reply_list_kind *);
/* MSG_OK as 204 (or MSG_ERROR). */
int	reply_no_content(struct apid_request *, struct imsg *);

/* auth.c: API.md §2. */
#define AUTH_OK		1
#define AUTH_REJECT	0
int	auth_check(const char *authorization, const char *x_api_key,
	    char *const *keys, size_t nkeys);
/*
 * auth_keys.c: the keys file's table (MSG_APID_KEYS) and its token
 * buckets.  match: the entry a candidate key is, or -1 (constant time);
 * take: 0, or the seconds to wait for entry i's next request.
 */
struct keys_table;
/* 1 when the chunk completed a new table, now in use; else 0. */
int	auth_keys_chunk(struct peer *, struct imsg *);
const struct keys_table *auth_keys(void);
long	auth_keys_match(const char *candidate);
long	auth_keys_take(long i);
#define RETRY_AFTER_MAX		86400	/* seconds: what Retry-After says at most */
/* 1 if the key a caller names is still the same (its tenant, admin). */
int	auth_keys_same(const struct caller *);
/*
 * 0: go on, req->caller's key_name, tenant and admin set (also without
 * auth); -1: the 401 (or a key's 429) has been sent.
 */
int	auth_request(struct http_request *, char *const *keys,
	    size_t nkeys, int insecure_no_auth);
/* GET /metrics: with a key set, its bearer token; 0 or -1 (401 sent). */
int	auth_metrics(struct http_request *, const char *key);

/* jsonout.c: JSON text the way Python's json.dumps() writes it. */
int	jsonout_string(struct evbuffer *, const char *utf8, size_t len,
	    int ensure_ascii);
int	jsonout_stream_event(struct evbuffer *, const char *type,
	    const char *utf8, size_t len);
int	jsonout_stream_exit(struct evbuffer *, int64_t exit_code,
	    int timed_out, int64_t duration_ms);
int	jsonout_exec_result(struct evbuffer *, const char *out,
	    size_t outlen, const char *err, size_t errlen, int64_t exit_code,
	    int timed_out, int truncated, int64_t duration_ms);
int	jsonout_process_data(struct evbuffer *, uint64_t seq,
	    const char *type, const char *data, size_t len);
int	jsonout_process_gap(struct evbuffer *, uint64_t dropped);
int	jsonout_process_exit(struct evbuffer *, const char *status,
	    int has_code, int64_t code, int full, const char *ended_at,
	    uint64_t seq);

/* exec_output.c */
#define EXEC_STDOUT	0
#define EXEC_STDERR	1
#define FRAME_STDOUT	1	/* stream byte of a frame header */
#define FRAME_STDERR	2
/* Payload bytes of one frame; end is set on its last piece. */
typedef int	(*frame_cb)(void *arg, int stream, const unsigned char *,
	    size_t, int end);
struct frame_parser {
	unsigned char	 hdr[8];
	size_t		 hlen;
	uint32_t	 left;
	int		 stream;
};
void	frame_parser_init(struct frame_parser *);
int	frame_parser_feed(struct frame_parser *, const void *, size_t,
	    frame_cb, void *);

struct capture_buf {
	char	*data;
	size_t	 len;
	size_t	 size;
};
struct capture {
	struct capture_buf	 stream[2];
	uint64_t		 cap;
	uint64_t		 kept;
	int			 truncated;
};
void	capture_init(struct capture *, uint64_t cap);
int	capture_add(struct capture *, int which, const void *, size_t);
char	*capture_decode(const struct capture *, int which, size_t *len);
void	capture_free(struct capture *);

#define STREAM_EVENT_MAX	(32 * 1024)
/* Gets one NDJSON line in line and must drain it (a chunk of its own). */
typedef int	(*stream_emit_cb)(void *arg, struct evbuffer *line);
struct stream_events {
	struct utf8_decoder	 dec[2];
	char			 buf[STREAM_EVENT_MAX];
	size_t			 len;
	int			 which;
	struct evbuffer		*line;
	stream_emit_cb		 emit;
	void			*arg;
};
int	stream_events_init(struct stream_events *, stream_emit_cb, void *);
void	stream_events_free(struct stream_events *);
int	stream_events_add(struct stream_events *, int which, const void *,
	    size_t, int end);
int	stream_events_flush(struct stream_events *, int which);
int	stream_events_exit(struct stream_events *, int64_t exit_code,
	    int timed_out, int64_t duration_ms);

/*
 * process_events.c: a PROCESS_OUTPUT pipe's events (process_msg.h) as
 * .../output's NDJSON lines, each given to emit (which drains it).
 */
struct process_events {
	struct pev_parser	 pev;
	int			 base64;	/* data as base64, not text */
	struct evbuffer		*line;
	stream_emit_cb		 emit;
	void			*arg;
};
int	process_events_init(struct process_events *, int base64,
	    stream_emit_cb, void *);
void	process_events_free(struct process_events *);
int	process_events_feed(struct process_events *, const unsigned char *,
	    size_t);
int	process_events_clean(const struct process_events *);
int	process_events_ended(const struct process_events *);

/* pyjson.c: Python's json.loads() on a request body. */
enum jv_type {
	JV_NULL = 0,
	JV_FALSE,
	JV_TRUE,
	JV_INT,
	JV_FLOAT,
	JV_STRING,
	JV_ARRAY,
	JV_OBJECT
};
struct jv_member;
struct jv {
	enum jv_type	 type;
	union {
		struct {
			int64_t	 v;	/* saturated */
			double	 f;
			char	*big;	/* digits, when beyond int64 */
		} i;
		double	 f;
		struct {
			char	*s;	/* NUL-ended; may hold NULs */
			size_t	 len;
		} s;
		struct {
			struct jv	*items;
			size_t		 n;
		} a;
		struct {
			struct jv_member *m;
			size_t		 n;
		} o;
	} u;
};
struct jv_member {
	char		*key;
	size_t		 klen;
	struct jv	 val;
};
struct pyjson_error {
	const char	*msg;	/* Python's JSONDecodeError.msg */
	size_t		 pos;	/* in characters */
};
#define PYJSON_OK	0
#define PYJSON_ERROR	(-1)	/* a JSONDecodeError */
#define PYJSON_FATAL	(-2)	/* anything else Python fails with */
int	pyjson_parse(const void *, size_t, struct jv *,
	    struct pyjson_error *);
void	jv_free(struct jv *);
json_object *jv_to_json(const struct jv *);

/* body.c: JSON bodies to request structs, with FastAPI's 422s. */
#define BODY_MAX_JSON	(1024 * 1024)
struct body_error {
	int		 status;	/* 400, 413 or 422 */
	const char	*code;		/* envelope code (400, 413) */
	char		*message;	/* envelope message (400, 413) */
	json_object	*detail;	/* 422: {"detail": [...]} */
};
void	body_error_free(struct body_error *);
/* One FastAPI 422 entry: type, loc, msg, input, ctx (if any). */
void	detail_add(json_object *errors, const char *type, json_object *loc,
	    const char *msg, json_object *input, json_object *ctx);
/* The body as one contiguous piece (NULL, 0 when empty or too large). */
const void *body_bytes(struct http_request *, size_t *len);
const char *body_ctype(struct http_request *);
/* Answer a body's error, and free it. */
void	body_respond_error(struct http_request *, struct body_error *);
/* Python repr() of a string that may hold NULs. */
char	*body_pyrepr(const char *, size_t);
/* Reads the request body and answers any error; 0 if the struct is set. */
int	body_read_create(struct http_request *, struct create_request *);
int	body_read_exec(struct http_request *, struct exec_request *);
int	body_read_timeout(struct http_request *, int64_t *);
int	body_read_patch(struct http_request *, struct label_patch *);

/*
 * What the models (body_sandbox.c, body_exec.c) share.  The v_*()
 * validators add any 422 entry to the vctx's errors; those returning an
 * int return -1 when they did.
 */
/* Where an error is: ["body", field, sub, key or index]. */
struct loc {
	const char	*field;
	const char	*sub;		/* union member ("str"...) */
	const char	*key;		/* dict key */
	size_t		 keylen;
	long		 idx;		/* list index, or -1 */
};

struct vctx {
	json_object	*errors;	/* the detail array */
	const struct jv	*body;		/* the whole object */
};

int	add_error(struct vctx *, const char *type, const struct loc *,
	    const char *msg, const struct jv *input, json_object *ctx);
int	v_string(struct vctx *, const struct loc *, const struct jv *);
int	v_bool(struct vctx *, const struct loc *, const struct jv *, int *);
int	v_float_gt0(struct vctx *, const struct loc *, const struct jv *,
	    double *);
int	v_int_ge(struct vctx *, const struct loc *, const struct jv *,
	    int64_t min, int64_t *);
int	v_env(struct vctx *, const struct jv *);
void	v_extras(struct vctx *, const struct jv *obj,
	    const char *const *known);
void	v_missing(struct vctx *, const char *field);
const struct jv *member(const struct jv *obj, const char *name);
int	set_error(struct body_error *, int status, const char *code,
	    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
int	set_detail(struct body_error *, json_object *errors);
int	body_object(const char *ctype, const void *, size_t, struct jv *,
	    struct body_error *);
int	has_nul(const struct jv *);
int	env_take(const struct jv *, struct env_list *, struct body_error *);

/* body_sandbox.c */
int	body_parse_create(const char *ctype, const void *, size_t,
	    struct create_request *, struct body_error *);
int	body_parse_timeout(const char *ctype, const void *, size_t,
	    int64_t *seconds, struct body_error *);

/* body_labels.c: labels in create and fork, and the PATCH body. */
int	v_labels(struct vctx *, const struct jv *, int nulls);
int	labels_take(const struct jv *, struct label_list *,
	    struct body_error *);
int	body_parse_patch(const char *ctype, const void *, size_t,
	    struct label_patch *, struct body_error *);

/*
 * body_network.c: egress policies, "network" in create and fork
 * (v_network, then network_take once the schema held) and the body of
 * PUT .../network.
 */
int	v_network(struct vctx *, const struct loc *, const struct jv *,
	    int *network, const struct jv **policy);
int	network_take(const struct jv *policy, char **out,
	    struct body_error *);
int	body_parse_network(const char *ctype, const void *, size_t,
	    char **policy, struct body_error *);

/* body_exec.c */
int	body_parse_exec(const char *ctype, const void *, size_t,
	    struct exec_request *, struct body_error *);
int	v_command(struct vctx *, const struct jv *);
int	command_take(const struct jv *cmd, int *shell, size_t *argc,
	    char ***argv, struct body_error *);
int	workdir_take(const struct jv *workdir, char **out,
	    struct body_error *);

/* body_process.c: the bodies of the process routes. */
int	body_parse_process(const char *ctype, const void *, size_t,
	    struct process_request *, struct body_error *);
int	body_parse_signal(const char *ctype, const void *, size_t,
	    uint32_t *signo, struct body_error *);
int	body_parse_resize(const char *ctype, const void *, size_t,
	    uint32_t *cols, uint32_t *rows, struct body_error *);

/* route_health.c */
void	route_health(struct http_request *, char **params);

/* route_metrics.c: GET /metrics (docs/metrics.md). */
void	route_metrics_init(void);	/* before the jail */
void	route_metrics(struct http_request *, char **params);
/* Told of every request as it is freed (http_server's request_done). */
void	metrics_request_done(struct http_request *);

/* route_openapi.c */
void	route_openapi_init(void);
void	route_openapi(struct http_request *, char **params);

/* route_sandbox.c */
void	route_sandbox_create(struct http_request *, char **params);
void	route_sandbox_list(struct http_request *, char **params);
void	route_sandbox_get(struct http_request *, char **params);
void	route_sandbox_delete(struct http_request *, char **params);
void	route_sandbox_timeout(struct http_request *, char **params);
void	route_sandbox_patch(struct http_request *, char **params);
/* route_stats.c */
void	route_sandbox_stats(struct http_request *, char **params);
json_object *sandbox_info_json(const struct sandbox_info *);
/* 0 if the id can travel; else the 404 has been sent. */
int	sandbox_id_check(struct http_request *, const char *id);

/* route_network.c: a sandbox's egress policy and its log. */
void	route_network_get(struct http_request *, char **params);
void	route_network_put(struct http_request *, char **params);
void	route_network_log(struct http_request *, char **params);

/* route_exec.c */
void	route_exec(struct http_request *, char **params);
void	route_exec_stream(struct http_request *, char **params);

/* route_process.c: processes (docs/rest-api.md "Processes"). */
void	route_process_create(struct http_request *, char **params);
void	route_process_list(struct http_request *, char **params);
void	route_process_get(struct http_request *, char **params);
void	route_process_delete(struct http_request *, char **params);
void	route_process_signal(struct http_request *, char **params);
void	route_process_resize(struct http_request *, char **params);
json_object *process_info_json(const struct process_info *);
/* params {sandbox, process}: 0 if they can travel, else the 404 sent. */
int	process_ref_check(struct http_request *, char **params);
/* msgw_init, then the process_ref of params. */
void	process_ref_put(struct msgw *, char **params);

/* route_process_output.c, route_process_stdin.c */
#define STDIN_CALLS_MAX		256		/* waiting for managerd */
#define STDIN_BYTES_MAX		(32 << 20)	/* not yet written */
void	route_process_output(struct http_request *, char **params);
void	route_process_stdin(struct http_request *, char **params);

/* attach_token.c: the tokens of .../attach-token, in memory only. */
#define ATTACH_TOKENS_MAX	1024
#define ATTACH_TOKENS_TENANT	128	/* of those, live for one tenant */
#define ATTACH_TOKEN_TTL	30	/* seconds */
#define ATTACH_TOKEN_LEN	43	/* base64url of 32 bytes */
/* The token remembers the caller's key (its name, tenant, admin). */
int	attach_token_make(const struct caller *, const char *sandbox_id,
	    const char *process_id, char out[ATTACH_TOKEN_LEN + 1]);
/* On success, caller (if not NULL) gets the token's key, tenant, admin. */
int	attach_token_take(const char *sandbox_id, const char *process_id,
	    const char *token, size_t len, struct caller *);
void	attach_tokens_clear(void);
/* Drop every token whose caller keep() says is no longer its key's. */
void	attach_tokens_keep(int (*keep)(const struct caller *));
void	route_process_attach_token(struct http_request *, char **params);

/* route_attach.c: .../attach's handshake; attach.c: its WebSocket. */
#define ATTACH_MSG_MAX		(64 * 1024)	/* a client's message */
/*
 * Its frames.  wslay bounds a message's bytes only, and keeps each
 * frame's piece apart (two allocations and a queue entry): 65,000
 * fragments of a byte would cost it some 6 MB.
 */
#define ATTACH_MSG_FRAMES	128
#define ATTACH_OUT_HIGH		HTTP_BACKLOG_HIGH
void	route_process_attach(struct http_request *, char **params);
struct bufferevent;
int	attach_start(struct bufferevent *, struct http_server *,
	    struct process_ref *, const struct caller *, int out_fd);

/*
 * tar_job.c: apid parses no tar; each job runs in the archive worker
 * (archive_msg.h says what each kind does), and done is called from the
 * loop exactly once.  From tar_job_start() on, the job owns its
 * descriptors and closes them when it ends (also when it fails to
 * start).  A job ends early when a descriptor breaks: closing the other
 * end of its pipe is how it is stopped.
 */
enum tar_job_kind {
	TAR_JOB_FIRST_FILE = ARCHIVE_JOB_FIRST_FILE,
	TAR_JOB_SNAPSHOT = ARCHIVE_JOB_SNAPSHOT,
	TAR_JOB_SNAPSHOT_COPY = ARCHIVE_JOB_SNAPSHOT_COPY,
	TAR_JOB_CHECK = ARCHIVE_JOB_CHECK,
	TAR_JOB_SPOOL = ARCHIVE_JOB_SPOOL,
	TAR_JOB_UPLOAD = ARCHIVE_JOB_UPLOAD
};
struct tar_job_spec {
	enum tar_job_kind		 kind;
	/* FIRST_FILE, SNAPSHOT: Docker's tar in, out; CHECK: in only. */
	int				 in_fd;
	int				 out_fd;	/* -1: CHECK */
	/*
	 * SPOOL: the body pipe, the spool file; UPLOAD: the spool file,
	 * the tar pipe, or for a tar spool the body pipe (exactly size
	 * bytes), the spool file.  Each kind uses its pair only: the
	 * other is not looked at.
	 */
	int				 fds[2];
	uint64_t			 max_bytes;	/* FIRST_FILE, SNAPSHOT, SPOOL */
	uint64_t			 size;		/* UPLOAD: the file's bytes */
	/* FIRST_FILE: the member of this name (copied), not the first. */
	const char			*member;
	/* UPLOAD, copied: the file and its parents' dirs. */
	const struct file_write_ready	*upload;
	/*
	 * result->bytes: file bytes (FIRST_FILE), tar bytes written
	 * (SNAPSHOT, UPLOAD), archive bytes read (CHECK), body bytes
	 * (SPOOL).  errnum EPIPE: the worker, or its job, died.
	 */
	void	(*done)(const struct tar_result *, void *arg);
	void				*arg;
};
int	tar_jobs_init(struct event_base *);
/* managerd's APID_WORKER_CHANNEL: the channel to the archive worker. */
void	tar_jobs_channel(struct peer *, struct imsg *);
/*
 * 0; or -1 with errno (ENXIO: no archive worker, EINVAL: a bad spec),
 * and done is never called.
 */
int	tar_job_start(const struct tar_job_spec *);


/*
 * upload_body.c: an upload's body, as it comes, into a pipe (a SPOOL
 * job's input), pausing the body while the pipe is full.
 */
struct upload_body {
	struct http_request	*req;
	int			 fd;		/* the pipe's write end, or -1 */
	struct evbuffer		*pend;		/* not yet in the pipe */
	struct event		*ev;		/* the pipe is writable */
	int			 ended;		/* the whole body came */
	int			 broken;	/* the pipe's reader went away */
	uint64_t		 bytes;		/* body bytes taken */
	void			(*done)(void *arg, int ok);
	void			*arg;
};
int	upload_body_start(struct upload_body *, struct http_request *, int fd,
	    uint64_t max, void (*done)(void *, int), void *arg);
void	upload_body_free(struct upload_body *);


/* tar_check.c: managerd's MSG_TAR_CHECK, answered with TAR_CHECKED. */
void	tar_check_request(struct peer *, struct imsg *);

/*
 * pipe_reader.c: a non-blocking pipe read from the loop.  data gets what
 * came (-1 stops reading); at EOF, a read error or a stop the reader
 * closes the pipe and calls end, its last touch of the reader.  With a
 * client, reading pauses while the client's output buffer is full and
 * resumes when it drains.
 * failed tells an end that was not EOF: what came is not all there was.
 */
typedef int	(*pipe_data_cb)(void *arg, const unsigned char *, size_t);
struct pipe_reader {
	int			 fd;		/* read end, or -1 */
	struct event		*ev;
	int			 reading;	/* ev is added */
	int			 failed;	/* ended other than at EOF */
	const char		*what;		/* for logs */
	struct http_request	*client;	/* or NULL: never paused */
	pipe_data_cb		 data;
	void			(*end)(void *arg);
	void			*arg;
};
void	pipe_reader_init(struct pipe_reader *, const char *what,
	    struct http_request *client, pipe_data_cb, void (*end)(void *),
	    void *arg);
/* Takes fd (closed on failure too); reading starts at resume.  0 or -1. */
int	pipe_reader_open(struct pipe_reader *, int fd);
/*
 * -1 if the pipe could not be watched: it is closed and failed set, end
 * not called (the caller may be in the middle of its own work).
 */
int	pipe_reader_resume(struct pipe_reader *);
/* Also from the data callback: no more reads until resume. */
void	pipe_reader_pause(struct pipe_reader *);
void	pipe_reader_close(struct pipe_reader *);

/*
 * pipe_writer.c: a non-blocking pipe written from the loop, its backlog
 * in pend.  Callbacks only from the loop: drained when pend is in the
 * pipe, end (once, its last touch) when the reader left (ok 0) or,
 * after finish, when all was written and the pipe closed (ok 1).
 */
struct pipe_writer {
	int			 fd;		/* write end, or -1 */
	struct event		*ev;
	struct evbuffer		*pend;		/* not yet in the pipe */
	int			 finishing;	/* close when pend is empty */
	int			 broken;	/* out of memory for pend */
	const char		*what;		/* for logs */
	void			(*drained)(void *arg);
	void			(*end)(void *arg, int ok);
	void			*arg;
};
void	pipe_writer_init(struct pipe_writer *, const char *what,
	    void (*drained)(void *), void (*end)(void *, int), void *arg);
/* Takes fd (closed on failure too): 0 or -1. */
int	pipe_writer_open(struct pipe_writer *, int fd);
int	pipe_writer_is_open(const struct pipe_writer *);
int	pipe_writer_add(struct pipe_writer *, const void *, size_t);
int	pipe_writer_add_buffer(struct pipe_writer *, struct evbuffer *);
size_t	pipe_writer_backlog(const struct pipe_writer *);
void	pipe_writer_finish(struct pipe_writer *);
void	pipe_writer_close(struct pipe_writer *);

/*
 * piped.c: a request to managerd whose bytes come back through a pipe
 * (exec, listing, download); its route's finish runs once every part
 * (the pipe, managerd's last message, an archive job) has ended.
 */
#define PIPED_PIPE	0x1
#define PIPED_BACKEND	0x2	/* always a part */
#define PIPED_JOB	0x4
struct piped_ops {
	const char	*what;		/* for logs */
	pipe_data_cb	 data;		/* the pipe's bytes */
	void		(*finish)(void *arg);
	void		(*gone)(void *arg);	/* the client left, or NULL */
};
struct piped {
	struct apid_request	*ar;
	struct http_request	*req;
	struct pipe_reader	 pipe;
	unsigned int		 pending;	/* parts not yet ended */
	int			 gone;
	const struct piped_ops	*ops;
	void			*arg;
};
/* paced: the pipe is read only as fast as the client takes the reply. */
void	piped_init(struct piped *, struct http_request *, int paced,
	    unsigned int parts, const struct piped_ops *, void *arg);
int	piped_pipe(struct piped *, int bulk);
int	piped_send(struct piped *, uint32_t type, struct msgw *, int fd,
	    apid_reply_cb);
void	*piped_arg(struct apid_request *);
void	piped_resume(struct piped *);
void	piped_close(struct piped *);
int	piped_done(struct piped *, unsigned int part);
int	piped_pending(const struct piped *, unsigned int part);

/* query.c: query strings as Starlette reads them; FastAPI's 422s. */
/* The last value of key, decoded: 1 and *val (malloc'd), 0, -1 ENOMEM. */
int	query_value(const char *query, const char *key, char **val,
	    size_t *vlen);
int	query_get(struct http_request *, const char *key, char **val,
	    size_t *vlen);
/*
 * Every value of key (a repeated parameter): cb(value, len, arg) owns
 * each malloc'd value; 1 if any, 0 if none, -1 ENOMEM or cb's -1.
 */
int	query_each(const char *query, const char *key, int utf8,
	    int (*cb)(char *, size_t, void *), void *arg);
/* The same, the value as bytes: %XX is a byte, never a character. */
int	query_get_bytes(struct http_request *, const char *key, char **val,
	    size_t *vlen);
/*
 * A value holding a NUL becomes "", which names nothing either: a path
 * travels so (file_msg.h), and a filter matches no sandbox.
 */
void	query_refuse_nul(char *value, size_t len);
void	query_error(json_object *errors, const char *type, const char *field,
	    const char *msg, json_object *input, json_object *ctx);
void	query_missing(json_object *errors, const char *field);
/* 1 with the 422 sent if errors holds any, else 0; takes errors. */
int	query_respond(struct http_request *, json_object *errors);
/* pydantic's bool from a string: 0, or -1 with the 422 entry added. */
int	query_bool(json_object *errors, const char *field, const char *val,
	    size_t len, int *out);
/* The same for key if present (*out untouched if not): 0, -1 ENOMEM. */
int	query_get_bool(struct http_request *, json_object *errors,
	    const char *key, int *out);

/* route_file_read.c, route_file_write.c, route_file_list.c: §4.9-4.11. */
void	route_file_read(struct http_request *, char **params);
void	route_file_write(struct http_request *, char **params);
void	route_file_list(struct http_request *, char **params);

/* body_snapshot.c: the bodies of snapshot, rollback and fork. */
#define SNAPSHOT_NAME_MAX	128	/* characters */
/* An optional body: 1 when there is none (empty, null), 0, or -1 and e. */
int	body_optional(const char *ctype, const void *, size_t, struct jv *,
	    struct body_error *);
int	body_parse_snapshot_create(const char *ctype, const void *, size_t,
	    char **name, struct body_error *);
int	body_parse_rollback(const char *ctype, const void *, size_t,
	    char **snapshot_id, struct body_error *);
int	body_parse_fork(const char *ctype, const void *, size_t,
	    struct fork_request *, struct body_error *);

/* route_snapshot.c: API.md §4.12-4.17. */
void	route_snapshot_create(struct http_request *, char **params);
void	route_sandbox_rollback(struct http_request *, char **params);
void	route_snapshot_list(struct http_request *, char **params);
void	route_snapshot_get(struct http_request *, char **params);
void	route_snapshot_delete(struct http_request *, char **params);
void	route_snapshot_fork(struct http_request *, char **params);

/* route_snapshot.c: its pure parts, for the tests. */
json_object *snapshot_info_json(const struct snapshot_info *);
/* 0 if no snapshot id can look like this (too long, '/', controls). */
int	snapshot_id_plausible(const char *id);
/* ?sandbox_id= of a query: 1 and *value malloc'd, 0 absent, -1 ENOMEM. */
int	snapshot_list_filter(const char *query, char **value);

/* Files (API.md §3.7, §4.9-4.11, §6): the listing. */

/* file_list.c */
struct file_entry {
	char		*name;
	uint32_t	 mode;		/* st_mode */
	uint64_t	 size;
	int64_t		 mtime;
};
struct file_entries {
	struct file_entry	*v;
	size_t			 n;
};
/*
 * Every well-formed record of a listing's stdout, sorted by name; -1 with
 * ENOMEM, or E2BIG past FILE_LIST_MAX_ENTRIES (a sandbox can make a
 * directory of millions of one-letter names, and each entry becomes a
 * JSON object of a few hundred bytes).
 */
#define FILE_LIST_MAX_ENTRIES	100000
int	file_list_parse(const char *, size_t, struct file_entries *);
void	file_entries_free(struct file_entries *);
const char *file_type_name(uint32_t st_mode);
/* FileInfo: exactly the five keys of §3.7; NULL on failure. */
json_object *file_info_json(const char *name, const char *path,
	    const char *type, uint64_t size, double modified_at);
/* FileList: {"path": dir, "entries": [...]}. */
json_object *file_list_json(const char *dir, const struct file_entries *);
#endif /* AS_APID_H */
