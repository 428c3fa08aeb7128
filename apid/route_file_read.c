/*
 * GET /v1/sandboxes/{sb}/files?path= (API.md §4.9, §1.1): a download.
 * The tar pipe's write end goes with FILE_READ; at FILE_READ_STARTED
 * {size} a FIRST_FILE job (tar_job.c) extracts the file into a second
 * pipe, which is forwarded to the client with backpressure
 * (pipe_reader.c) under Content-Length: size, sent with the first bytes
 * the job makes, so that a job that never ran (the worker out of
 * descriptors) is an error answer, not a short body.  The last byte is
 * held back until the job has ended well with exactly size bytes: anything
 * that goes wrong after the headers (the job, managerd's MSG_ERROR, too
 * many bytes) closes the connection, so the client sees a short body,
 * never a wrong whole one.
 *
 * Past its first bytes the file, but for its last byte, is spliced from
 * the pipe to the socket (http_reply_splice) rather than read into an
 * evbuffer and written from there: a 100 MiB file then costs this
 * process almost nothing, and the bytes are copied once less.
 *
 * The request is over when managerd's last message (OK or MSG_ERROR)
 * has come, the pipe is closed and the job has ended, in whatever order
 * (piped.c).
 */
#include <sys/queue.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "apid.h"
#include "log.h"

/* Less than this is read and written the buffered way. */
#define READ_SPLICE_MIN		(256 * 1024)

struct file_read {
	struct piped		 pd;		/* the job's output */
	char			*path;		/* as asked, for logs */
	char			*member;	/* FILE_READ_STARTED's, or NULL */
	int			 tar_fd;	/* tar pipe, until STARTED */
	struct evbuffer		*pend;		/* read, not yet forwarded */
	uint64_t		 size;		/* FILE_READ_STARTED */
	uint64_t		 got;		/* read from the job */
	uint64_t		 sent;		/* forwarded to the client */
	int			 started;
	int			 reply_started;
	int			 splicing;	/* http_reply_splice's */
	int			 splice_short;	/* one ended short */
	int			 job_ok;	/* ended well, size bytes */
	int			 failed;	/* the body cannot be whole */
	int			 err_kind;	/* MSG_ERROR after STARTED */
	char			*err_text;
	char			 job_err[256];
	int			 job_errnum;	/* why the job failed */
};

/* The pipe is about to close: the HTTP layer lets go of it first. */
static void
read_splice_stop(struct file_read *st)
{
	if (st->splicing)
		http_reply_splice_cancel(st->pd.req);
	st->splicing = 0;
}

static void
read_free(struct file_read *st)
{
	read_splice_stop(st);
	pipe_reader_close(&st->pd.pipe);
	if (st->tar_fd != -1)
		close(st->tar_fd);
	if (st->pend != NULL)
		evbuffer_free(st->pend);
	free(st->err_text);
	free(st->member);
	free(st->path);
	free(st);
}

/* The body cannot be whole any more: stop reading, say why. */
static void
read_fail(struct file_read *st, const char *why)
{
	st->failed = 1;
	/* The proxy stops on EPIPE rather than wait for a reader. */
	if (st->tar_fd != -1) {
		close(st->tar_fd);
		st->tar_fd = -1;
	}
	if (why != NULL && st->job_err[0] == '\0')
		strlcpy(st->job_err, why, sizeof(st->job_err));
	read_splice_stop(st);
	piped_close(&st->pd);
}

/*
 * Hand the client what may go now: all of it once the job ended well,
 * else all but the last byte of the file.
 */
static void
read_forward(struct file_read *st)
{
	struct evbuffer	*chunk;
	uint64_t	 room;
	size_t		 n;

	if (st->pd.gone || st->failed)
		return;
	n = evbuffer_get_length(st->pend);
	if (!st->job_ok) {
		room = st->size - 1 - st->sent;	/* size > 0 here */
		if ((uint64_t)n > room)
			n = (size_t)room;
	}
	if (n == 0)
		return;
	/*
	 * The 200 waits for the first bytes: until the job has made some,
	 * its failure (the worker out of descriptors) can still be an error
	 * of its own rather than a body cut short.
	 */
	if (!st->reply_started) {
		http_reply_start(st->pd.req, 200, "application/octet-stream",
		    (int64_t)st->size);
		st->reply_started = 1;
	}
	if ((chunk = evbuffer_new()) == NULL ||
	    evbuffer_remove_buffer(st->pend, chunk, n) != (int)n) {
		log_warnx("download: out of memory");
		st->failed = 1;
		if (chunk != NULL)
			evbuffer_free(chunk);
		return;
	}
	st->sent += n;
	http_reply_chunk(st->pd.req, chunk);
	evbuffer_free(chunk);
}

/* Nothing went out yet: the (empty) file, or an error envelope. */
static void
read_answer_whole(struct file_read *st)
{
	char	*msg;

	if (!st->failed && st->job_ok) {
		respond_buffer(st->pd.req, 200, "application/octet-stream",
		    st->pend);
		return;
	}
	/*
	 * A job that got no descriptors is the cause: the proxy's "the
	 * reader went away", when it comes, is only what followed.
	 */
	if (st->err_text != NULL &&
	    descriptor_error(st->job_errnum, 0) != ERR_UNAVAILABLE) {
		respond_error(st->pd.req, st->err_kind, st->err_text);
		return;
	}
	if (asprintf(&msg, "cannot read %s: %s", st->path,
	    st->job_err[0] != '\0' ? st->job_err : "the download failed") == -1)
		msg = NULL;
	respond_error(st->pd.req, descriptor_error(st->job_errnum,
	    ERR_BACKEND), msg != NULL ? msg : "the download failed");
	free(msg);
}

/* The last word: the whole body, or a connection closed short. */
static void
read_finish(void *arg)
{
	struct file_read	*st = arg;

	if (st->pd.gone)
		respond_end(st->pd.req, st->reply_started);
	else if (!st->reply_started)
		read_answer_whole(st);
	else {
		if (!st->failed && st->job_ok)
			read_forward(st);
		if (st->failed || !st->job_ok || st->sent != st->size) {
			log_warnx("download of %s cut short: %s", st->path,
			    st->err_text != NULL ? st->err_text :
			    st->job_err[0] != '\0' ? st->job_err :
			    "wrong size");
			/* The client sees a short body and a close. */
			http_reply_abort(st->pd.req);
		} else
			http_reply_end(st->pd.req);
	}
	read_free(st);
}

/*
 * The spliced bytes went (all but the last byte of the file), or fewer
 * of them if the pipe ended first: the buffered reader takes the rest,
 * holding that last byte back as before.
 */
static void
read_spliced(void *arg, uint64_t moved)
{
	struct file_read	*st = arg;

	st->splicing = 0;
	/* Short: the pipe ended, or splice failed; never tried again. */
	if (moved < st->size - 1 - st->got)
		st->splice_short = 1;
	st->got += moved;
	st->sent += moved;
	piped_resume(&st->pd);
}

/* Everything read so far went out: the rest but one byte is spliced. */
static void
read_splice_rest(struct file_read *st)
{
	uint64_t	 rest;

	if (!st->reply_started || st->failed || st->pd.gone || st->job_ok ||
	    st->splicing || st->sent != st->got)
		return;
	rest = st->size - 1 - st->got;
	if (rest < READ_SPLICE_MIN || st->splice_short)
		return;
	/* It starts on the loop's next turn: the reader pauses after. */
	if (http_reply_splice(st->pd.req, st->pd.pipe.fd, rest, read_spliced,
	    st) == -1)
		return;			/* no memory: the buffered way */
	pipe_reader_pause(&st->pd.pipe);
	st->splicing = 1;
}

static int
read_data(void *arg, const unsigned char *buf, size_t n)
{
	struct file_read	*st = arg;

	/* Nothing more can go out: stop reading (the job sees EPIPE). */
	if (st->failed)
		return -1;
	st->got += (uint64_t)n;
	if (st->got > st->size) {
		st->failed = 1;
		strlcpy(st->job_err, "more bytes than the file has",
		    sizeof(st->job_err));
		return -1;
	}
	if (evbuffer_add(st->pend, buf, n) == -1) {
		st->failed = 1;
		return -1;
	}
	read_forward(st);
	read_splice_rest(st);
	return 0;
}

static void
read_job_done(const struct tar_result *res, void *arg)
{
	struct file_read	*st = arg;

	if (res->errnum == 0 && res->bytes == st->size) {
		st->job_ok = 1;
		/* The held-back byte may go now, if all of it is here. */
		if (!piped_pending(&st->pd, PIPED_PIPE))
			read_forward(st);
	} else {
		st->job_errnum = res->errnum;
		read_fail(st, res->errnum != 0 ? (res->message != NULL ?
		    res->message : strerror(res->errnum)) : "wrong size");
	}
	(void)piped_done(&st->pd, PIPED_JOB);
}

/* The job and the proxy stop on EPIPE; managerd then ends the call. */
static void
read_gone(void *arg)
{
	read_fail(arg, NULL);
}

static int
read_start_job(struct file_read *st, int out_fd)
{
	struct tar_job_spec	 spec;

	memset(&spec, 0, sizeof(spec));
	spec.kind = TAR_JOB_FIRST_FILE;
	spec.in_fd = st->tar_fd;
	spec.out_fd = out_fd;
	spec.max_bytes = st->size;
	spec.member = st->member;
	spec.done = read_job_done;
	spec.arg = st;
	st->tar_fd = -1;		/* the job's now, even on failure */
	if (tar_job_start(&spec) == -1) {
		log_warn("download: cannot start the tar job");
		return -1;
	}
	return 0;
}

/* FILE_READ_STARTED: the job; the 200 goes with its first bytes. */
static void
read_started(struct file_read *st)
{
	int	 wfd;

	if (st->pd.gone) {
		(void)piped_done(&st->pd, PIPED_JOB);	/* none will run */
		return;
	}
	if ((wfd = piped_pipe(&st->pd, 1)) == -1 ||
	    read_start_job(st, wfd) == -1) {
		st->job_errnum = errno;
		(void)piped_done(&st->pd, PIPED_JOB);
		read_fail(st, "cannot start the extraction");
		return;
	}
	/* Failing, the job sees EPIPE and its end finishes the request. */
	piped_resume(&st->pd);
}

/* managerd's MSG_ERROR once the file has started: the body is cut. */
static void
read_error_late(struct file_read *st, struct imsg *imsg)
{
	struct msgr	 r;

	msgr_init(&r, imsg);
	st->err_kind = (int)msgr_u32(&r);
	st->err_text = msgr_str(&r, MSG_MAX_STRING);
	if (msgr_end(&r) == -1 || st->err_text == NULL ||
	    st->err_kind < ERR_INVALID_REQUEST || st->err_kind > ERR_KIND_MAX)
		peer_bad_message(&apid->parent, imsg, "malformed error");
	read_fail(st, NULL);
}

static int
read_reply(struct apid_request *ar, struct imsg *imsg)
{
	struct file_read	*st = piped_arg(ar);
	struct file_read_started rs;

	if (!piped_pending(&st->pd, PIPED_BACKEND))
		peer_bad_message(&apid->parent, imsg, "after the end");
	switch (imsg->hdr.type) {
	case MSG_FILE_READ_STARTED:
		if (st->started || msg_get_file_read_started(imsg, &rs) == -1)
			peer_bad_message(&apid->parent, imsg, "unexpected");
		st->size = rs.size;
		st->member = rs.member;		/* ours now */
		st->started = 1;
		read_started(st);
		return APID_REPLY_MORE;
	case MSG_OK:
		if (!st->started || imsg->len != 0)
			peer_bad_message(&apid->parent, imsg, "unexpected");
		return piped_done(&st->pd, PIPED_BACKEND);
	case MSG_ERROR:
		if (st->started) {
			read_error_late(st, imsg);
			return piped_done(&st->pd, PIPED_BACKEND);
		}
		/* Nothing went out: a normal error. */
		reply_error_msg(st->pd.req, imsg);
		read_free(st);
		return APID_REPLY_DONE;
	default:
		peer_bad_message(&apid->parent, imsg, "wrong reply type");
	}
}

static const struct piped_ops read_ops = {
	"download", read_data, read_finish, read_gone
};

/* ?path= and the message; NULL if answered. */
static char *
read_path(struct http_request *req, char **params, struct msgw *w)
{
	struct file_request	 fr;
	json_object		*errors;
	char			*path;
	size_t			 len;
	int			 rc;

	if ((errors = json_object_new_array()) == NULL ||
	    (rc = query_get_bytes(req, "path", &path, &len)) == -1) {
		if (errors != NULL)
			json_object_put(errors);
		respond_error(req, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	if (rc == 0)
		query_missing(errors, "path");
	if (query_respond(req, errors) || sandbox_id_check(req,
	    params[0]) == -1) {
		free(path);
		return NULL;
	}
	query_refuse_nul(path, len);
	fr.sandbox_id = params[0];
	fr.path = path;
	msgw_init(w);
	msg_put_file_request(w, &fr);
	if (w->overflow || strlen(path) > MSG_MAX_PATH) {
		respond_error(req, ERR_INVALID_REQUEST, "path is too long");
		free(path);
		return NULL;
	}
	return path;
}

void
route_file_read(struct http_request *req, char **params)
{
	struct file_read	*st;
	struct msgw		 w;
	char			*path;
	int			 fds[2];

	if ((path = read_path(req, params, &w)) == NULL)
		return;
	if ((st = calloc(1, sizeof(*st))) == NULL ||
	    (st->pend = evbuffer_new()) == NULL) {
		free(st);
		free(path);
		respond_error(req, ERR_INTERNAL, "out of memory");
		return;
	}
	st->path = path;
	st->tar_fd = -1;
	piped_init(&st->pd, req, 1, PIPED_PIPE | PIPED_JOB, &read_ops, st);
	/* Docker's tar comes through a pipe the job reads blocking. */
	if (bulk_pipe(fds, 0) == -1) {
		log_warn("download: pipe2");
		respond_errno(req, errno, "cannot make a pipe");
		read_free(st);
		return;
	}
	st->tar_fd = fds[0];
	if (piped_send(&st->pd, MSG_FILE_READ, &w, fds[1], read_reply) == -1) {
		respond_error(req, ERR_INTERNAL, "cannot reach managerd");
		read_free(st);
	}
}
