/*
 * PUT /v1/sandboxes/{sb}/files?path=&mode= (API.md §4.10): an upload, in
 * two phases, so that the body is read only once managerd has checked
 * the request, and never reaches Docker half-way.
 *
 *	FILE_WRITE_BEGIN ->			managerd checks the sandbox and
 *						the path, resolves the parent
 *	<- FILE_SPOOL (fd: a spool file)	inside the sandbox
 *	the body, as it comes, through a pipe into a SPOOL job that writes
 *	the spool (the 100 Continue goes now, not before); then
 *	FILE_WRITE_COMMIT ->			or FILE_WRITE_ABORT, if the
 *	<- FILE_WRITE_READY (fd: the tar pipe)	body did not come whole
 *	an UPLOAD job writes the tar from the spool into the tar pipe
 *	<- FILE_INFO (or MSG_ERROR)
 *
 * A body of a declared size gets a tar spool instead: FILE_SPOOL carries
 * the tar's plan, and the body goes through its pipe into an UPLOAD job
 * that writes the whole tar into the spool; COMMIT follows the job's
 * end, and FILE_INFO (or MSG_ERROR) answers it, with no READY between.
 *
 * A client that goes away before its body is whole, or a body over the
 * limit, ends with ABORT: Docker got no byte of the file (managerd's
 * primed PUT ends empty), the old file is untouched.  The 200 waits for
 * the UPLOAD job's end as well as for FILE_INFO: a job that did not
 * write the whole tar makes the answer an error whatever managerd says.
 * The state lives until managerd's call is over, no job runs and the
 * client has its answer.
 */
#include <sys/queue.h>

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "apid.h"
#include "log.h"

#define MODE_PATTERN		"^[0-7]{3,4}$"

enum upload_phase {
	UPLOAD_BEGUN,		/* BEGIN sent: SPOOL or MSG_ERROR next */
	UPLOAD_SPOOLING,	/* the body is being spooled */
	UPLOAD_COMMITTED,	/* COMMIT sent: READY or MSG_ERROR next */
	UPLOAD_WRITING		/* the UPLOAD job runs: INFO or MSG_ERROR */
};

struct file_upload {
	struct apid_request	*ar;
	struct http_request	*req;		/* until answered */
	enum upload_phase	 phase;
	int			 call_open;	/* managerd's call */
	int			 spool_running;
	int			 upload_running;
	int			 answered;
	int			 gone;		/* the client left */
	struct upload_body	 body;
	int			 body_ok;	/* the whole body went in */
	int			 body_refused;	/* over the limit */
	int			 spool;		/* our copy, for UPLOAD */
	uint64_t		 max;		/* FILE_SPOOL's */
	int			 tar;		/* a tar spool */
	int			 job_ok;	/* UPLOAD wrote the whole tar */
	int			 job_errnum;	/* or why not */
	char			 job_err[256];
	json_object		*info;		/* FILE_INFO, while UPLOAD runs */
	char			*sandbox_id;
	char			*path;
	uint32_t		 mode;
};

static void
upload_free(struct file_upload *st)
{
	upload_body_free(&st->body);
	if (st->spool != -1)
		close(st->spool);
	if (st->info != NULL)
		json_object_put(st->info);
	free(st->sandbox_id);
	free(st->path);
	free(st);
}

static void
upload_maybe_free(struct file_upload *st)
{
	if (!st->call_open && !st->spool_running && !st->upload_running &&
	    st->answered)
		upload_free(st);
}

/* The last word to the client (a detached request is just freed). */
static void
upload_answer_error(struct file_upload *st, enum error_kind kind,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void
upload_answer_error(struct file_upload *st, enum error_kind kind,
    const char *fmt, ...)
{
	va_list	 ap;
	char	 msg[512];

	if (st->answered)
		return;
	/* No more body callbacks into st once the request is gone. */
	upload_body_free(&st->body);
	st->answered = 1;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (st->gone)
		respond_end(st->req, 0);
	else
		respond_error(st->req, kind, msg);
}

static void
upload_answer_info(struct file_upload *st)
{
	if (st->answered)
		return;
	if (!st->job_ok) {
		upload_answer_error(st, descriptor_error(st->job_errnum,
		    ERR_BACKEND), "cannot upload the file: %s",
		    st->job_err[0] != '\0' ? st->job_err :
		    "the archive was not written");
		return;
	}
	st->answered = 1;
	if (st->gone)
		respond_end(st->req, 0);
	else if (st->info == NULL)
		respond_error(st->req, ERR_INTERNAL, "cannot render the file");
	else
		respond_json(st->req, 200, st->info);
}

static void
upload_refuse_size(struct http_request *req)
{
	char	*msg;

	if (asprintf(&msg, "file exceeds %" PRIu64 " bytes",
	    apid->max_file_bytes) == -1)
		msg = NULL;
	respond_error(req, ERR_PAYLOAD_TOO_LARGE, msg != NULL ? msg :
	    "file too large");
	free(msg);
}

/* --- the UPLOAD job ------------------------------------------------------- */

static void
upload_job_done(const struct tar_result *res, void *arg)
{
	struct file_upload	*st = arg;

	st->upload_running = 0;
	if (res->errnum == 0)
		st->job_ok = 1;
	else {
		log_warnx("upload: %s", res->message != NULL ? res->message :
		    strerror(res->errnum));
		st->job_errnum = res->errnum;
		strlcpy(st->job_err, res->message != NULL ? res->message :
		    strerror(res->errnum), sizeof(st->job_err));
	}
	/* managerd's FILE_INFO came first: its answer waited for us. */
	if (!st->call_open && st->info != NULL)
		upload_answer_info(st);
	upload_maybe_free(st);
}

static void
upload_ready(struct file_upload *st, struct imsg *imsg)
{
	struct file_write_ready	 fw;
	struct tar_job_spec	 spec;

	if (st->phase != UPLOAD_COMMITTED || (imsg->fd == -1 &&
	    !imsg->fd_lost) || msg_get_file_write_ready(imsg, &fw) == -1)
		peer_bad_message(&apid->parent, imsg, "unexpected");
	st->phase = UPLOAD_WRITING;
	/* The tar Docker gets is then empty: FILE_INFO is answered 503. */
	if (imsg->fd_lost) {
		st->job_errnum = EMFILE;
		strlcpy(st->job_err, "apid is out of descriptors; try again",
		    sizeof(st->job_err));
		file_write_ready_free(&fw);
		return;
	}
	memset(&spec, 0, sizeof(spec));
	spec.kind = TAR_JOB_UPLOAD;
	spec.fds[0] = st->spool;
	spec.fds[1] = imsg_take_fd(imsg);
	spec.size = st->body.bytes;
	spec.upload = &fw;
	spec.done = upload_job_done;
	spec.arg = st;
	/* The job's now, even if it does not start. */
	st->spool = -1;
	if (tar_job_start(&spec) == -1) {
		st->job_errnum = errno;
		log_warn("upload: cannot start the archive job");
		strlcpy(st->job_err, "cannot start the archive writer",
		    sizeof(st->job_err));
	} else
		st->upload_running = 1;
	file_write_ready_free(&fw);
}

/* FILE_INFO: answered now, or when the job ends if it still runs. */
static void
upload_info(struct file_upload *st, struct imsg *imsg)
{
	struct file_info	 fi;

	if (st->phase != UPLOAD_WRITING || msg_get_file_info(imsg, &fi) == -1)
		peer_bad_message(&apid->parent, imsg, "unexpected");
	st->info = file_info_json(fi.name, fi.path, fi.type, fi.size,
	    fi.modified_at);
	file_info_free(&fi);
	st->call_open = 0;
	if (!st->upload_running)
		upload_answer_info(st);
}

/* --- the body, the SPOOL job, COMMIT or ABORT ----------------------------- */

/*
 * ABORT has no reply: managerd's call ends here.  From a reply callback
 * the dispatcher frees it when the callback returns APID_REPLY_DONE.
 */
static void
upload_abort(struct file_upload *st, int in_reply)
{
	if (peer_compose(&apid->parent, MSG_FILE_WRITE_ABORT, st->ar->id, -1,
	    NULL, 0) == -1)
		log_warnx("upload: cannot abort");
	if (!in_reply)
		apid_request_release(st->ar);
	st->call_open = 0;
}

/* After a tar spool FILE_INFO answers COMMIT: the tar is written. */
static void
upload_commit(struct file_upload *st)
{
	struct msgw	 w;

	msgw_init(&w);
	msg_put_u64(&w, st->body.bytes);
	if (peer_send(&apid->parent, MSG_FILE_WRITE_COMMIT, st->ar->id, -1,
	    &w) == -1) {
		upload_abort(st, 0);
		upload_answer_error(st, ERR_INTERNAL, "cannot reach managerd");
		return;
	}
	st->phase = st->tar ? UPLOAD_WRITING : UPLOAD_COMMITTED;
	st->job_ok = st->tar;
}

/*
 * The SPOOL job ended, which it does only once the body's pipe closed
 * (the body is over) or it failed.  The body went in whole: COMMIT.  A
 * tar spool's UPLOAD job counts the tar's bytes, and has checked that
 * the body had exactly its size.
 */
static void
spool_done(const struct tar_result *res, void *arg)
{
	struct file_upload	*st = arg;

	st->spool_running = 0;
	if (res->errnum == 0 && st->body_ok &&
	    (st->tar || res->bytes == st->body.bytes))
		upload_commit(st);
	else {
		upload_abort(st, 0);
		if (st->body_refused)
			upload_answer_error(st, ERR_PAYLOAD_TOO_LARGE,
			    "file exceeds %" PRIu64 " bytes", st->max);
		else if (res->errnum != 0 && !st->gone)
			upload_answer_error(st, storage_error(res->errnum,
			    ERR_BACKEND), "cannot store the upload: %s",
			    res->message != NULL ? res->message :
			    strerror(res->errnum));
		else
			upload_answer_error(st, ERR_INTERNAL, "the upload's "
			    "body was lost");
	}
	upload_maybe_free(st);
}

static void
body_done(void *arg, int ok)
{
	struct file_upload	*st = arg;

	st->body_ok = ok;
	/* Failed with the client still there and the pipe whole: too big. */
	if (!ok && st->req->conn != NULL && !st->body.broken)
		st->body_refused = 1;
}

/*
 * The job that takes the body from fds[0]: a SPOOL of it into fd, or,
 * for a tar spool, the UPLOAD of the plan's tar with it as the file.
 */
static void
spool_spec(struct file_upload *st, const struct file_spool *fs,
    const int fds[2], int fd, struct tar_job_spec *spec)
{
	memset(spec, 0, sizeof(*spec));
	spec->kind = st->tar ? TAR_JOB_UPLOAD : TAR_JOB_SPOOL;
	spec->fds[0] = fds[0];
	spec->fds[1] = fd;
	spec->max_bytes = st->max;
	spec->size = st->max;
	spec->upload = st->tar ? &fs->plan : NULL;
	spec->done = spool_done;
	spec->arg = st;
}

/* FILE_SPOOL: the body may come now, into the spool, through a job. */
static void
upload_spool(struct file_upload *st, struct imsg *imsg)
{
	struct file_spool	 fs;
	struct tar_job_spec	 spec;
	int			 fd, fds[2], saved, started;

	if (st->phase != UPLOAD_BEGUN || (imsg->fd == -1 &&
	    !imsg->fd_lost) || msg_get_file_spool(imsg, &fs) == -1)
		peer_bad_message(&apid->parent, imsg, "unexpected spool");
	st->phase = UPLOAD_SPOOLING;
	st->max = fs.max_bytes;
	st->tar = fs.tar;
	if (imsg->fd_lost) {
		file_spool_free(&fs);
		upload_abort(st, 1);
		upload_answer_error(st, ERR_UNAVAILABLE, "apid is out of "
		    "descriptors; try again");
		return;
	}
	fd = imsg_take_fd(imsg);
	errno = 0;
	/* A tar spool is managerd's to hand on: no copy of ours. */
	if (st->gone || (!st->tar &&
	    (st->spool = fcntl(fd, F_DUPFD_CLOEXEC, 0)) == -1) ||
	    bulk_pipe(fds, 0) == -1) {
		saved = errno;
		close(fd);
		file_spool_free(&fs);
		upload_abort(st, 1);
		upload_answer_error(st, descriptor_error(saved, ERR_INTERNAL),
		    "cannot spool the body: %s", strerror(saved));
		return;
	}
	spool_spec(st, &fs, fds, fd, &spec);
	started = tar_job_start(&spec);
	file_spool_free(&fs);
	if (started == -1) {
		close(fds[1]);
		upload_abort(st, 1);
		upload_answer_error(st, ERR_BACKEND, "cannot start the spool");
		return;
	}
	st->spool_running = 1;
	/* Failing, the pipe is closed: the job ends, spool_done aborts. */
	(void)upload_body_start(&st->body, st->req, fds[1], st->max,
	    body_done, st);
}

static int
upload_reply(struct apid_request *ar, struct imsg *imsg)
{
	struct file_upload	*st = ar->arg;

	switch (imsg->hdr.type) {
	case MSG_FILE_SPOOL:
		upload_spool(st, imsg);
		if (st->call_open)
			return APID_REPLY_MORE;
		break;		/* aborted at once */
	case MSG_FILE_WRITE_READY:
		upload_ready(st, imsg);
		return APID_REPLY_MORE;
	case MSG_FILE_INFO:
		upload_info(st, imsg);
		break;
	case MSG_ERROR:
		/* managerd is silent while the body is spooled. */
		if (st->phase == UPLOAD_SPOOLING)
			peer_bad_message(&apid->parent, imsg, "while spooling");
		/* True whatever a job does: it goes now. */
		st->call_open = 0;
		st->answered = 1;
		reply_error_msg(st->req, imsg);
		break;
	default:
		peer_bad_message(&apid->parent, imsg, "wrong reply type");
	}
	upload_maybe_free(st);
	return APID_REPLY_DONE;
}

static void
upload_gone(struct apid_request *ar)
{
	struct file_upload	*st = ar->arg;

	/* While spooling the body's end says so too, and aborts. */
	st->gone = 1;
}

/* ^[0-7]{3,4}$ */
static int
mode_valid(const char *m, size_t len)
{
	size_t	 i;

	if (len < 3 || len > 4)
		return 0;
	for (i = 0; i < len; i++)
		if (m[i] < '0' || m[i] > '7')
			return 0;
	return 1;
}

/* The 422s of the query; 0 with path (and mode) set if none. */
static int
upload_query(struct http_request *req, char **path, size_t *pathlen,
    uint32_t *mode)
{
	json_object	*errors, *ctx;
	char		*m = NULL;
	size_t		 mlen, i;
	int		 rc_path, rc_mode;

	*path = NULL;
	if ((errors = json_object_new_array()) == NULL)
		goto oom;
	if ((rc_path = query_get_bytes(req, "path", path, pathlen)) == -1 ||
	    (rc_mode = query_get(req, "mode", &m, &mlen)) == -1)
		goto oom;
	if (rc_path == 0)
		query_missing(errors, "path");
	if (rc_mode == 1 && !mode_valid(m, mlen)) {
		ctx = json_object_new_object();
		json_object_object_add(ctx, "pattern",
		    json_object_new_string(MODE_PATTERN));
		query_error(errors, "string_pattern_mismatch", "mode",
		    "String should match pattern '" MODE_PATTERN "'",
		    json_object_new_string_len(m, (int)mlen), ctx);
	}
	if (query_respond(req, errors)) {
		free(*path);
		free(m);
		*path = NULL;
		return -1;
	}
	*mode = 0644;
	if (rc_mode == 1)
		for (*mode = 0, i = 0; i < mlen; i++)
			*mode = *mode * 8 + (uint32_t)(m[i] - '0');
	free(m);
	return 0;
 oom:
	if (errors != NULL)
		json_object_put(errors);
	free(*path);
	free(m);
	*path = NULL;
	respond_error(req, ERR_INTERNAL, "out of memory");
	return -1;
}

/* Checked now, from the head: managerd checks the rest. */
static int
upload_begin(struct file_upload *st)
{
	struct file_write	 fw;
	struct msgw		 w;

	fw.sandbox_id = st->sandbox_id;
	fw.path = st->path;
	fw.mode = st->mode;
	fw.size = st->req->head.has_length ? st->req->head.length :
	    FILE_WRITE_SIZE_UNKNOWN;
	msgw_init(&w);
	msg_put_file_write(&w, &fw);
	if (w.overflow || strlen(st->path) > MSG_MAX_PATH) {
		respond_error(st->req, ERR_INVALID_REQUEST,
		    "path is too long");
		return -1;
	}
	if ((st->ar = apid_request_send(st->req, MSG_FILE_WRITE_BEGIN, &w, -1,
	    upload_reply, st)) == NULL) {
		respond_error(st->req, ERR_INTERNAL, "cannot reach managerd");
		return -1;
	}
	st->ar->gone = upload_gone;
	st->call_open = 1;
	return 0;
}

void
route_file_write(struct http_request *req, char **params)
{
	struct file_upload	*st;
	char			*path;
	size_t			 pathlen;
	uint32_t		 mode;

	if (upload_query(req, &path, &pathlen, &mode) == -1)
		return;
	/* §4.10 step 1: a declared length over the cap, from the head. */
	if (req->head.has_length && req->head.length > apid->max_file_bytes) {
		upload_refuse_size(req);
		free(path);
		return;
	}
	if (sandbox_id_check(req, params[0]) == -1) {
		free(path);
		return;
	}
	query_refuse_nul(path, pathlen);
	if ((st = calloc(1, sizeof(*st))) == NULL ||
	    (st->sandbox_id = strdup(params[0])) == NULL) {
		respond_error(req, ERR_INTERNAL, "out of memory");
		free(st);
		free(path);
		return;
	}
	st->req = req;
	st->path = path;
	st->mode = mode;
	st->spool = -1;
	st->body.fd = -1;
	if (upload_begin(st) == -1)
		upload_free(st);
}
