/*
 * PUT /v1/sandboxes/{sb}/files?path=&mode= (API.md §4.10): an upload.
 * After the 413 checks of the head the body is read (only now, once the
 * key and the request are checked) into memory, and only when all of it
 * has come does managerd hear of the upload: a client that goes away
 * half-way leaves no file touched.  Then the tar pipe's read end goes
 * with FILE_WRITE; at FILE_WRITE_READY an UPLOAD job in the archive
 * worker (tar_job.c) reads the body from a pipe apid fills
 * (body_pipe.c) and writes the tar into the tar pipe; FILE_INFO is the
 * answer.  The state lives until managerd's last word has come and the
 * job has ended.
 *
 * FILE_INFO alone does not prove the upload: the proxy sends the tar to
 * Docker as it comes (chunked), and Docker accepts a tar that stops at a
 * member boundary, so a job that failed after the parent directories
 * still gets FILE_INFO (of whatever file was there before).  So the 200
 * waits for the job's end, and a job that did not end well, or never
 * started, makes the answer an error whatever managerd says.
 */
#include <sys/queue.h>

#include <ctype.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "apid.h"
#include "log.h"

#define MODE_PATTERN		"^[0-7]{3,4}$"

struct file_upload {
	struct apid_request	*ar;
	struct http_request	*req;
	int			 tar_fd;	/* tar pipe, until WRITE_READY */
	int			 ready;
	int			 job_running;
	int			 answered;	/* managerd's last word came */
	int			 gone;
	int			 job_ok;	/* the whole tar was written */
	struct evbuffer		*body;		/* until the job takes it */
	char			*sandbox_id;
	char			*path;
	uint32_t		 mode;
	char			 job_err[256];	/* why not */
	json_object		*info;		/* FileInfo (NULL: cannot render) */
	int			 body_lost;	/* out of memory while reading */
	int			 info_waits;	/* FILE_INFO came before the job end */
};

static void
upload_free(struct file_upload *st)
{
	if (st->tar_fd != -1)
		close(st->tar_fd);
	if (st->info != NULL)
		json_object_put(st->info);
	if (st->body != NULL)
		evbuffer_free(st->body);
	free(st->sandbox_id);
	free(st->path);
	free(st);
}

/* managerd said FILE_INFO: the answer, if the job wrote the whole tar. */
static void
upload_respond(struct file_upload *st)
{
	char	*msg;

	if (st->gone)
		respond_end(st->req, 0);
	else if (!st->job_ok) {
		if (asprintf(&msg, "cannot upload the file: %s",
		    st->job_err[0] != '\0' ? st->job_err :
		    "the archive was not written") == -1)
			msg = NULL;
		respond_error(st->req, ERR_INTERNAL, msg != NULL ? msg :
		    "the upload failed");
		free(msg);
	} else if (st->info == NULL)
		respond_error(st->req, ERR_INTERNAL, "cannot render the file");
	else
		respond_json(st->req, 200, st->info);
}

static void
upload_job_done(const struct tar_result *res, void *arg)
{
	struct file_upload	*st = arg;

	st->job_running = 0;
	if (res->errnum == 0)
		st->job_ok = 1;
	else {
		log_warnx("upload: %s", res->message != NULL ? res->message :
		    strerror(res->errnum));
		strlcpy(st->job_err, res->message != NULL ? res->message :
		    strerror(res->errnum), sizeof(st->job_err));
	}
	if (!st->answered)
		return;
	/* managerd's FILE_INFO came first: its answer waited for us. */
	if (st->info_waits)
		upload_respond(st);
	upload_free(st);
}

static void
upload_gone(struct apid_request *ar)
{
	struct file_upload	*st = ar->arg;

	st->gone = 1;
	/* Before WRITE_READY: an empty tar, which Docker refuses. */
	if (st->tar_fd != -1) {
		close(st->tar_fd);
		st->tar_fd = -1;
	}
}

static void
upload_ready(struct file_upload *st, struct imsg *imsg)
{
	struct file_write_ready	 fw;
	struct tar_job_spec	 spec;

	if (st->ready || msg_get_file_write_ready(imsg, &fw) == -1)
		peer_bad_message(&apid->parent, imsg, "unexpected");
	st->ready = 1;
	if (st->gone || st->tar_fd == -1) {
		file_write_ready_free(&fw);
		return;
	}
	memset(&spec, 0, sizeof(spec));
	spec.kind = TAR_JOB_UPLOAD;
	spec.size = evbuffer_get_length(st->body);
	/* The body goes from memory into a pipe the job reads. */
	spec.fds[0] = body_pipe_start(st->body);
	st->body = NULL;
	spec.fds[1] = st->tar_fd;
	spec.upload = &fw;
	spec.done = upload_job_done;
	spec.arg = st;
	st->tar_fd = -1;
	if (spec.fds[0] == -1) {
		close(spec.fds[1]);
		log_warn("upload: cannot pass the body on");
		strlcpy(st->job_err, "cannot pass the body on",
		    sizeof(st->job_err));
	} else if (tar_job_start(&spec) == -1) {
		log_warn("upload: cannot start the tar job");
		strlcpy(st->job_err, "cannot start the archive writer",
		    sizeof(st->job_err));
	} else
		st->job_running = 1;
	file_write_ready_free(&fw);
}

/* FILE_INFO: answered now, or when the job ends if it still runs. */
static void
upload_info(struct file_upload *st, struct imsg *imsg)
{
	struct file_info	 fi;

	if (!st->ready || msg_get_file_info(imsg, &fi) == -1)
		peer_bad_message(&apid->parent, imsg, "unexpected");
	if (!st->gone)
		st->info = file_info_json(fi.name, fi.path, fi.type, fi.size,
		    fi.modified_at);
	file_info_free(&fi);
	if (st->job_running)
		st->info_waits = 1;
	else
		upload_respond(st);
}

static int
upload_reply(struct apid_request *ar, struct imsg *imsg)
{
	struct file_upload	*st = ar->arg;

	switch (imsg->hdr.type) {
	case MSG_FILE_WRITE_READY:
		upload_ready(st, imsg);
		return APID_REPLY_MORE;
	case MSG_FILE_INFO:
		upload_info(st, imsg);
		break;
	case MSG_ERROR:
		/* An error is true whatever the job did: it goes now. */
		if (st->gone)
			respond_end(st->req, 0);
		else
			reply_error_msg(st->req, imsg);
		break;
	default:
		peer_bad_message(&apid->parent, imsg, "wrong reply type");
	}
	/*
	 * managerd is done with the id (the request is forgotten on return;
	 * a FileInfo still waiting goes to the request, detached or not).
	 */
	st->answered = 1;
	if (st->tar_fd != -1) {
		close(st->tar_fd);
		st->tar_fd = -1;
	}
	if (!st->job_running)
		upload_free(st);
	return APID_REPLY_DONE;
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
	if ((rc_path = query_get(req, "path", path, pathlen)) == -1 ||
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

/* The whole body is in st->body: managerd hears of the upload now. */
static void
upload_send(struct file_upload *st)
{
	struct http_request	*req = st->req;
	struct file_write	 fw;
	struct msgw		 w;
	int			 fds[2];

	fw.sandbox_id = st->sandbox_id;
	fw.path = st->path;
	fw.mode = st->mode;
	fw.size = evbuffer_get_length(st->body);
	msgw_init(&w);
	msg_put_file_write(&w, &fw);
	/* The proxy reads the tar blocking; the job writes it blocking. */
	if (bulk_pipe(fds, 0) == -1) {
		log_warn("upload: pipe2");
		respond_error(req, ERR_INTERNAL, "cannot make a pipe");
		upload_free(st);
		return;
	}
	st->tar_fd = fds[1];
	if ((st->ar = apid_request_send(req, MSG_FILE_WRITE, &w, fds[0],
	    upload_reply, st)) == NULL) {
		respond_error(req, ERR_INTERNAL, "cannot reach managerd");
		upload_free(st);
		return;
	}
	st->ar->gone = upload_gone;
}

static void
upload_body_data(void *arg, const char *data, size_t len)
{
	struct file_upload	*st = arg;

	if (evbuffer_add(st->body, data, len) == -1) {
		log_warnx("upload: out of memory for the body");
		st->body_lost = 1;
		http_body_pause(st->req);
	}
}

/* The whole body, or none: a client gone half-way costs nothing more. */
static void
upload_body_end(void *arg, int ok)
{
	struct file_upload	*st = arg;
	char			*msg;

	if (ok && !st->body_lost) {
		upload_send(st);
		return;
	}
	if (ok || st->req->conn == NULL)
		respond_end(st->req, 0);
	else {
		if (asprintf(&msg, "file exceeds %" PRIu64 " bytes",
		    apid->max_file_bytes) == -1)
			msg = NULL;
		respond_error(st->req, ERR_PAYLOAD_TOO_LARGE, msg != NULL ?
		    msg : "file too large");
		free(msg);
	}
	upload_free(st);
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

void
route_file_write(struct http_request *req, char **params)
{
	struct file_upload	*st;
	struct file_write	 fw;
	struct msgw		 w;
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
	/* Checked now, from the head: the message is made again later. */
	fw.sandbox_id = params[0];
	fw.path = path;
	fw.mode = mode;
	fw.size = req->head.length;
	msgw_init(&w);
	msg_put_file_write(&w, &fw);
	if (w.overflow || strlen(path) > MSG_MAX_PATH) {
		respond_error(req, ERR_INVALID_REQUEST, "path is too long");
		free(path);
		return;
	}
	if ((st = calloc(1, sizeof(*st))) == NULL ||
	    (st->body = evbuffer_new()) == NULL ||
	    (st->sandbox_id = strdup(params[0])) == NULL) {
		respond_error(req, ERR_INTERNAL, "out of memory");
		if (st != NULL)
			upload_free(st);
		free(path);
		return;
	}
	st->req = req;
	st->tar_fd = -1;
	st->path = path;
	st->mode = mode;
	(void)http_body_stream(req, apid->max_file_bytes, upload_body_data,
	    upload_body_end, st);
}
