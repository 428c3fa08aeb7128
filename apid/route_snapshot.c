/*
 * The snapshot routes (API.md §4.12-4.17): snapshot a sandbox's
 * workspace, roll a sandbox back to a snapshot, list, get and delete
 * snapshots, and fork a new sandbox from one.  apid validates bodies and
 * ids, managerd does the rest; its SNAPSHOT_INFO replies become Snapshot
 * objects (§3.4), its SANDBOX_INFO replies Sandbox objects (§3.3).
 *
 * Taking a snapshot moves bytes through apid: it makes a pipe and sends
 * its write end with SNAPSHOT_CREATE (the proxy writes Docker's tar of
 * /workspace into it).  managerd answers SNAPSHOT_SINK with the temporary
 * snapshot file; a tar job rewrites the pipe's tar into that file, and
 * when it ends apid reports SNAPSHOT_WRITTEN.  Only then does managerd
 * send its final reply (SNAPSHOT_INFO or MSG_ERROR), so the state lives
 * until that reply and the job's done callback never outlives it.  A
 * client that goes away changes nothing: the snapshot is still taken and
 * the reply goes to the detached request, which sending it frees.
 */
#include <sys/queue.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "apid.h"
#include "format.h"
#include "log.h"

json_object *
snapshot_info_json(const struct snapshot_info *si)
{
	json_object	*o;
	char		 ts[FORMAT_TIMESTAMP_LEN];

	o = json_object_new_object();
	json_object_object_add(o, "id", json_object_new_string(si->id));
	json_object_object_add(o, "sandbox_id",
	    json_object_new_string(si->sandbox_id));
	json_object_object_add(o, "name", si->name != NULL ?
	    json_object_new_string(si->name) : NULL);
	json_object_object_add(o, "image", json_object_new_string(si->image));
	json_object_object_add(o, "size_bytes",
	    json_object_new_uint64(si->size_bytes));
	format_timestamp(si->created_at, ts, sizeof(ts));
	json_object_object_add(o, "created_at", json_object_new_string(ts));
	return o;
}

/*
 * Whether a string could name a snapshot at all: one that could not is
 * answered here, as managerd would answer it (which checks the exact
 * shape again before an id comes near a file name).
 */
int
snapshot_id_plausible(const char *id)
{
	const unsigned char	*p;

	if (*id == '\0' || strlen(id) > MSG_MAX_ID)
		return 0;
	for (p = (const unsigned char *)id; *p != '\0'; p++)
		if (*p < 0x20 || *p == 0x7f || *p == '/')
			return 0;
	return 1;
}

/* 0 if the id can travel; else the 404 has been sent. */
static int
snapshot_id_check(struct http_request *req, const char *id)
{
	char	*msg;

	if (snapshot_id_plausible(id))
		return 0;
	if (asprintf(&msg, "snapshot %s not found", id) == -1) {
		respond_error(req, ERR_INTERNAL, "out of memory");
		return -1;
	}
	respond_error(req, ERR_NOT_FOUND, msg);
	free(msg);
	return -1;
}

/* Replies. */

/* One SNAPSHOT_INFO as the whole answer. */
static void
snapshot_reply(struct http_request *req, struct imsg *imsg, int status)
{
	struct snapshot_info	 si;
	json_object		*o;

	if (imsg->hdr.type != MSG_SNAPSHOT_INFO)
		peer_bad_message(&apid->parent, imsg, "wrong reply type");
	if (msg_get_snapshot_info(imsg, &si) == -1)
		peer_bad_message(&apid->parent, imsg, "malformed snapshot");
	o = snapshot_info_json(&si);
	respond_json(req, status, o);
	json_object_put(o);
	snapshot_info_free(&si);
}

static int
snapshot_reply_200(struct apid_request *ar, struct imsg *imsg)
{
	if (imsg->hdr.type == MSG_ERROR)
		reply_error_msg(ar->req, imsg);
	else
		snapshot_reply(ar->req, imsg, 200);
	return APID_REPLY_DONE;
}

/* POST /v1/sandboxes/{sb}/snapshots */

struct snap_state {
	struct http_request	*req;
	uint32_t		 id;	/* the SNAPSHOT_CREATE's */
	int			 rfd;	/* pipe read end until the job */
	int			 sink;	/* SNAPSHOT_SINK came (since a RETRY) */
	int			 copy;	/* that sink's job is SNAPSHOT_COPY */
	int			 retried; /* SNAPSHOT_RETRY went out */
	int			 written; /* SNAPSHOT_WRITTEN went out */
};

static void
snap_free(struct snap_state *st)
{
	if (st->rfd != -1)
		close(st->rfd);
	free(st);
}

/* A job's result to managerd, the text left out if it does not fit. */
static int
snap_report(struct snap_state *st, uint32_t type, const struct tar_result *res,
    int fd)
{
	struct tar_result	 r = *res;
	struct msgw		 w;

	msgw_init(&w);
	msg_put_tar_result(&w, &r);
	if (w.overflow) {
		/* The numbers are what counts; the text only explains. */
		r.message = NULL;
		msgw_init(&w);
		msg_put_tar_result(&w, &r);
	}
	return peer_send(&apid->parent, type, st->id, fd, &w);
}

static void
snap_written(struct snap_state *st, const struct tar_result *res)
{
	st->written = 1;
	if (snap_report(st, MSG_SNAPSHOT_WRITTEN, res, -1) == -1)
		log_warnx("snapshot: cannot report the written snapshot");
}

/*
 * The copy stopped at a member the rewrite would change: a new pipe for
 * the tar managerd asks for again, its write end to managerd with the
 * reason; the next SINK starts the rewrite.
 */
static void
snap_retry(struct snap_state *st, const struct tar_result *res)
{
	struct tar_result	 fail;
	int			 fds[2];

	if (bulk_pipe(fds, 0) == -1) {
		memset(&fail, 0, sizeof(fail));
		fail.errnum = errno;
		snap_written(st, &fail);
		return;
	}
	st->rfd = fds[0];
	st->sink = 0;
	st->retried = 1;
	if (snap_report(st, MSG_SNAPSHOT_RETRY, res, fds[1]) == -1)
		log_warnx("snapshot: cannot ask for the rewrite");
}

static void
snap_job_done(const struct tar_result *res, void *arg)
{
	struct snap_state	*st = arg;

	if (st->copy && !st->retried && res->errnum == JOB_NEEDS_REWRITE)
		snap_retry(st, res);
	else
		snap_written(st, res);
}

/*
 * The sink was dropped on its way in (apid out of descriptors): nothing
 * was written.  Closing the pipe stops the proxy; managerd answers 503.
 */
static void
snap_sink_lost(struct snap_state *st)
{
	struct tar_result	 res;
	char			 text[] = "apid is out of descriptors";

	close(st->rfd);
	st->rfd = -1;
	memset(&res, 0, sizeof(res));
	res.errnum = EMFILE;
	res.message = text;
	snap_written(st, &res);
}

static void
snap_sink(struct snap_state *st, struct imsg *imsg)
{
	struct tar_job_spec	 spec;
	struct tar_result	 res;
	uint64_t		 max_bytes;
	int			 copy;
	char			 text[128];

	if (st->sink || (imsg->fd == -1 && !imsg->fd_lost))
		peer_bad_message(&apid->parent, imsg, "unexpected sink");
	if (msg_get_snapshot_sink(imsg, &max_bytes, &copy) == -1 ||
	    (copy && st->retried))
		peer_bad_message(&apid->parent, imsg, "malformed sink");
	st->sink = 1;
	st->copy = copy;
	if (imsg->fd_lost) {
		snap_sink_lost(st);
		return;
	}
	memset(&spec, 0, sizeof(spec));
	spec.kind = copy ? TAR_JOB_SNAPSHOT_COPY : TAR_JOB_SNAPSHOT;
	spec.in_fd = st->rfd;
	spec.out_fd = imsg_take_fd(imsg);
	spec.max_bytes = max_bytes;
	spec.done = snap_job_done;
	spec.arg = st;
	/* The job owns both descriptors from here on, even if it fails. */
	st->rfd = -1;
	if (tar_job_start(&spec) == 0)
		return;
	memset(&res, 0, sizeof(res));
	res.errnum = errno != 0 ? errno : EIO;
	log_warnx("snapshot: cannot start the tar job: %s",
	    strerror(res.errnum));
	snprintf(text, sizeof(text), "cannot start the snapshot writer: %s",
	    strerror(res.errnum));
	res.message = text;
	snap_written(st, &res);
}

static int
snap_reply(struct apid_request *ar, struct imsg *imsg)
{
	struct snap_state	*st = ar->arg;

	switch (imsg->hdr.type) {
	case MSG_SNAPSHOT_SINK:
		snap_sink(st, imsg);
		return APID_REPLY_MORE;
	case MSG_ERROR:
	case MSG_SNAPSHOT_INFO:
		/*
		 * After SINK the final reply must wait for our WRITTEN: the
		 * tar job's done callback still holds st until then.
		 */
		if (st->sink && !st->written)
			peer_bad_message(&apid->parent, imsg,
			    "reply before SNAPSHOT_WRITTEN");
		if (imsg->hdr.type == MSG_ERROR)
			reply_error_msg(st->req, imsg);
		else if (!st->sink)
			peer_bad_message(&apid->parent, imsg,
			    "snapshot without a sink");
		else
			snapshot_reply(st->req, imsg, 201);
		snap_free(st);
		return APID_REPLY_DONE;
	default:
		peer_bad_message(&apid->parent, imsg, "wrong reply type");
	}
}

void
route_snapshot_create(struct http_request *req, char **params)
{
	struct snapshot_create	 sc;
	struct snap_state	*st;
	struct apid_request	*ar;
	struct body_error	 e;
	struct msgw		 w;
	const void		*data;
	size_t			 len;
	int			 fds[2];

	memset(&sc, 0, sizeof(sc));
	data = body_bytes(req, &len);
	if (body_parse_snapshot_create(body_ctype(req), data, len, &sc.name,
	    &e) == -1) {
		body_respond_error(req, &e);
		return;
	}
	if (sandbox_id_check(req, params[0]) == -1) {
		snapshot_create_free(&sc);
		return;
	}
	sc.sandbox_id = params[0];
	msgw_init(&w);
	msg_put_snapshot_create(&w, &sc);
	sc.sandbox_id = NULL;
	snapshot_create_free(&sc);
	if (w.overflow) {
		respond_error(req, ERR_INVALID_REQUEST,
		    "request too large to forward");
		return;
	}
	if ((st = calloc(1, sizeof(*st))) == NULL) {
		respond_error(req, ERR_INTERNAL, "out of memory");
		return;
	}
	st->req = req;
	/* Blocking: the tar job reads it on a thread of its own. */
	if (bulk_pipe(fds, 0) == -1) {
		log_warn("snapshot: pipe2");
		respond_errno(req, errno, "cannot make a pipe");
		free(st);
		return;
	}
	st->rfd = fds[0];
	/* The write end goes with the message, ours no more. */
	if ((ar = apid_request_send(req, MSG_SNAPSHOT_CREATE, &w, fds[1],
	    snap_reply, st)) == NULL) {
		respond_error(req, ERR_INTERNAL, "cannot reach managerd");
		snap_free(st);
		return;
	}
	st->id = ar->id;
}

/* POST /v1/sandboxes/{sb}/rollback */
void
route_sandbox_rollback(struct http_request *req, char **params)
{
	struct rollback_request	 rq;
	struct body_error	 e;
	struct msgw		 w;
	const void		*data;
	size_t			 len;

	memset(&rq, 0, sizeof(rq));
	data = body_bytes(req, &len);
	if (body_parse_rollback(body_ctype(req), data, len, &rq.snapshot_id,
	    &e) == -1) {
		body_respond_error(req, &e);
		return;
	}
	/* The snapshot is looked up before the sandbox (§4.13). */
	if (snapshot_id_check(req, rq.snapshot_id) == -1 ||
	    sandbox_id_check(req, params[0]) == -1) {
		rollback_request_free(&rq);
		return;
	}
	rq.sandbox_id = params[0];
	msgw_init(&w);
	msg_put_rollback_request(&w, &rq);
	rq.sandbox_id = NULL;
	rollback_request_free(&rq);
	route_forward(req, MSG_SANDBOX_ROLLBACK, &w, reply_sandbox_200, NULL);
}

static json_object *
list_item(struct imsg *imsg)
{
	struct snapshot_info	 si;
	json_object		*o;

	if (msg_get_snapshot_info(imsg, &si) == -1)
		return NULL;
	o = snapshot_info_json(&si);
	snapshot_info_free(&si);
	return o;
}

/* SNAPSHOT_INFO per snapshot, then LIST_END. */
static int
list_reply(struct apid_request *ar, struct imsg *imsg)
{
	static const struct reply_list_kind	 k = { MSG_SNAPSHOT_INFO,
	    MSG_SNAPSHOT_LIST_END, "snapshots", list_item,
	    "malformed snapshot" };

	return reply_list(ar, imsg, &k);
}

/* The sandbox_id query parameter (query.c). */
int
snapshot_list_filter(const char *query, char **value)
{
	size_t	 len;
	int	 rc;

	if ((rc = query_value(query, "sandbox_id", value, &len)) == 1)
		query_refuse_nul(*value, len);
	return rc;
}

/* GET /v1/snapshots?sandbox_id= */
void
route_snapshot_list(struct http_request *req, char **params)
{
	json_object		*list;
	struct msgw		 w;
	char			*filter;

	if (snapshot_list_filter(req->query, &filter) == -1) {
		respond_error(req, ERR_INTERNAL, "out of memory");
		return;
	}
	/*
	 * The filter is an exact match: one too long for any sandbox id
	 * matches nothing, as "" does.
	 */
	if (filter != NULL && strlen(filter) > MSG_MAX_ID)
		filter[0] = '\0';
	msgw_init(&w);
	msg_put_snapshot_list(&w, filter);
	free(filter);
	list = json_object_new_array();
	if (apid_request_send(req, MSG_SNAPSHOT_LIST, &w, -1, list_reply,
	    list) == NULL) {
		json_object_put(list);
		respond_error(req, ERR_INTERNAL, "cannot reach managerd");
	}
}

/* GET /v1/snapshots/{snap} */
void
route_snapshot_get(struct http_request *req, char **params)
{
	struct msgw	 w;

	if (snapshot_id_check(req, params[0]) == -1)
		return;
	msgw_init(&w);
	msg_put_string(&w, params[0]);
	route_forward(req, MSG_SNAPSHOT_GET, &w, snapshot_reply_200, NULL);
}

/* DELETE /v1/snapshots/{snap} */
void
route_snapshot_delete(struct http_request *req, char **params)
{
	struct msgw	 w;

	if (snapshot_id_check(req, params[0]) == -1)
		return;
	msgw_init(&w);
	msg_put_string(&w, params[0]);
	route_forward(req, MSG_SNAPSHOT_DELETE, &w, reply_no_content, NULL);
}

/* POST /v1/snapshots/{snap}/fork */
void
route_snapshot_fork(struct http_request *req, char **params)
{
	struct fork_request	 fr;
	struct body_error	 e;
	struct msgw		 w;
	const void		*data;
	size_t			 len;

	data = body_bytes(req, &len);
	/* FastAPI validates the body before the handler looks at the id. */
	if (body_parse_fork(body_ctype(req), data, len, &fr, &e) == -1) {
		body_respond_error(req, &e);
		return;
	}
	if (snapshot_id_check(req, params[0]) == -1) {
		fork_request_free(&fr);
		return;
	}
	fr.snapshot_id = params[0];
	msgw_init(&w);
	msg_put_fork_request(&w, &fr);
	fr.snapshot_id = NULL;		/* the route's parameter */
	fork_request_free(&fr);
	route_forward(req, MSG_SNAPSHOT_FORK, &w, reply_sandbox_201, NULL);
}
