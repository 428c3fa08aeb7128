/*
 * GET /v1/sandboxes/{sb}/files?path= (API.md §4.9, §1.1): a download.
 * The tar pipe's write end goes with FILE_READ; at FILE_READ_STARTED
 * {size} a FIRST_FILE job (tar_job.c) extracts the file into a second
 * pipe, which is forwarded to the client with backpressure
 * (pipe_reader.c) under Content-Length: size.  The last byte is held
 * back until the job has ended well with exactly size bytes: anything
 * that goes wrong after the headers (the job, managerd's MSG_ERROR, too
 * many bytes) closes the connection, so the client sees a short body,
 * never a wrong whole one.
 *
 * The state lives until managerd is done with the id, the pipe is closed
 * and the job has ended, in whatever order.
 */
#include <sys/queue.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "apid.h"
#include "log.h"

static int
pipe_nonblock_read(int fds[2])
{
	int	 flags;

	if (bulk_pipe(fds, 0) == -1)
		return -1;
	if ((flags = fcntl(fds[0], F_GETFL)) == -1 ||
	    fcntl(fds[0], F_SETFL, flags | O_NONBLOCK) == -1) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	return 0;
}

struct file_read {
	struct apid_request	*ar;
	struct http_request	*req;
	char			*path;		/* as asked, for logs */
	int			 tar_fd;	/* tar pipe, until STARTED */
	struct pipe_reader	 out;		/* the job's output */
	struct evbuffer		*pend;		/* read, not yet forwarded */
	uint64_t		 size;		/* FILE_READ_STARTED */
	uint64_t		 got;		/* read from the job */
	uint64_t		 sent;		/* forwarded to the client */
	int			 started;
	int			 reply_started;
	int			 job_running;
	int			 job_ok;	/* ended well, size bytes */
	int			 backend_done;	/* OK or MSG_ERROR came */
	int			 failed;	/* the body cannot be whole */
	int			 gone;
	int			 finishing;
	int			 err_kind;	/* MSG_ERROR after STARTED */
	char			*err_text;
	char			 job_err[256];
	struct event		*later;		/* read_finish_later */
};

static void
read_free(struct file_read *st)
{
	pipe_reader_close(&st->out);
	if (st->later != NULL)
		event_free(st->later);
	if (st->tar_fd != -1)
		close(st->tar_fd);
	if (st->pend != NULL)
		evbuffer_free(st->pend);
	free(st->err_text);
	free(st->path);
	free(st);
}

static void read_maybe_finish(struct file_read *);

/* -1 if the pipe cannot be watched: it is closed, the body is short. */
static int
read_resume(struct file_read *st)
{
	if (st->gone || pipe_reader_resume(&st->out) == 0)
		return 0;
	st->failed = 1;
	return -1;
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

	if (st->gone || st->failed || !st->reply_started)
		return;
	n = evbuffer_get_length(st->pend);
	if (!st->job_ok) {
		room = st->size - 1 - st->sent;	/* size > 0 here */
		if ((uint64_t)n > room)
			n = (size_t)room;
	}
	if (n == 0)
		return;
	if ((chunk = evbuffer_new()) == NULL ||
	    evbuffer_remove_buffer(st->pend, chunk, n) != (int)n) {
		log_warnx("download: out of memory");
		st->failed = 1;
		if (chunk != NULL)
			evbuffer_free(chunk);
		return;
	}
	st->sent += n;
	http_reply_chunk(st->req, chunk);
	evbuffer_free(chunk);
}

/* The last word: the whole body, or a connection closed short. */
static void
read_finish(struct file_read *st)
{
	char			*msg;

	pipe_reader_close(&st->out);
	if (st->gone) {
		respond_end(st->req, st->reply_started);
	} else if (!st->reply_started) {
		/* An empty file waits for the job: nothing went out yet. */
		if (!st->failed && st->job_ok)
			respond_buffer(st->req, 200,
			    "application/octet-stream", st->pend);
		else if (st->err_text != NULL)
			respond_error(st->req, st->err_kind, st->err_text);
		else {
			if (asprintf(&msg, "cannot read %s: %s", st->path,
			    st->job_err[0] != '\0' ? st->job_err :
			    "the download failed") == -1)
				msg = NULL;
			respond_error(st->req, ERR_BACKEND, msg != NULL ? msg :
			    "the download failed");
			free(msg);
		}
	} else {
		if (!st->failed && st->job_ok)
			read_forward(st);
		if (st->failed || !st->job_ok || st->sent != st->size) {
			log_warnx("download of %s cut short: %s", st->path,
			    st->err_text != NULL ? st->err_text :
			    st->job_err[0] != '\0' ? st->job_err :
			    "wrong size");
			/* The client sees a short body and a close. */
			http_reply_abort(st->req);
		} else
			http_reply_end(st->req);
	}
	read_free(st);
}

static int
read_can_finish(const struct file_read *st)
{
	return st->backend_done && !st->job_running && st->out.fd == -1;
}

/* From the loop (a pipe or job event): managerd is done with the id. */
static void
read_maybe_finish(struct file_read *st)
{
	if (!read_can_finish(st) || st->finishing)
		return;
	st->finishing = 1;
	apid_request_release(st->ar);
	read_finish(st);
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
	return 0;
}

static void
read_pipe_end(void *arg)
{
	struct file_read	*st = arg;

	if (st->out.failed)
		st->failed = 1;
	read_maybe_finish(st);
}

static void
read_job_done(const struct tar_result *res, void *arg)
{
	struct file_read	*st = arg;

	st->job_running = 0;
	if (res->errnum == 0 && res->bytes == st->size)
		st->job_ok = 1;
	else {
		st->failed = 1;
		if (res->errnum != 0)
			strlcpy(st->job_err, res->message != NULL ?
			    res->message : strerror(res->errnum),
			    sizeof(st->job_err));
		else
			strlcpy(st->job_err, "wrong size",
			    sizeof(st->job_err));
		pipe_reader_close(&st->out);
	}
	/* The held-back byte may go now. */
	if (st->job_ok && st->out.fd == -1)
		read_forward(st);
	read_maybe_finish(st);
}

static void
read_finish_later(evutil_socket_t fd, short events, void *arg)
{
	read_maybe_finish(arg);
}

static void
read_gone(struct apid_request *ar)
{
	struct file_read	*st = ar->arg;

	st->gone = 1;
	/* The job and the proxy stop on EPIPE. */
	pipe_reader_close(&st->out);
	if (st->tar_fd != -1) {
		close(st->tar_fd);
		st->tar_fd = -1;
	}
	if (!read_can_finish(st))
		return;
	/*
	 * We are inside the connection's teardown: not here, but on the
	 * loop's next turn, through an event made with the state (which
	 * cannot fail now).
	 */
	event_active(st->later, EV_TIMEOUT, 1);
}

/* FILE_READ_STARTED: the job, then the 200 (unless the file is empty). */
static void
read_started(struct file_read *st)
{
	struct tar_job_spec	 spec;
	int			 fds[2];

	if (st->gone)
		return;
	if (pipe_nonblock_read(fds) == -1) {
		log_warn("download: pipe2");
		goto fail;
	}
	if (pipe_reader_open(&st->out, fds[0]) == -1) {
		close(fds[1]);
		goto fail;
	}
	memset(&spec, 0, sizeof(spec));
	spec.kind = TAR_JOB_FIRST_FILE;
	spec.in_fd = st->tar_fd;
	spec.out_fd = fds[1];
	spec.max_bytes = st->size;
	spec.done = read_job_done;
	spec.arg = st;
	st->tar_fd = -1;		/* the job's now, even on failure */
	if (tar_job_start(&spec) == -1) {
		log_warn("download: cannot start the tar job");
		pipe_reader_close(&st->out);
		goto fail;
	}
	st->job_running = 1;
	if (st->size > 0) {
		http_reply_start(st->req, 200, "application/octet-stream",
		    (int64_t)st->size);
		st->reply_started = 1;
	}
	/* Failing, the job sees EPIPE and its end finishes the request. */
	(void)read_resume(st);
	return;
 fail:
	st->failed = 1;
	strlcpy(st->job_err, "cannot start the extraction",
	    sizeof(st->job_err));
	if (st->tar_fd != -1) {
		close(st->tar_fd);
		st->tar_fd = -1;
	}
}

static int
read_reply(struct apid_request *ar, struct imsg *imsg)
{
	struct file_read	*st = ar->arg;
	struct msgr		 r;

	switch (imsg->hdr.type) {
	case MSG_FILE_READ_STARTED:
		if (st->started || st->backend_done ||
		    msg_get_u64(imsg, &st->size) == -1)
			peer_bad_message(&apid->parent, imsg, "unexpected");
		st->started = 1;
		read_started(st);
		return APID_REPLY_MORE;
	case MSG_OK:
		if (!st->started || st->backend_done || imsg->len != 0)
			peer_bad_message(&apid->parent, imsg, "unexpected");
		break;
	case MSG_ERROR:
		if (st->backend_done)
			peer_bad_message(&apid->parent, imsg, "unexpected");
		if (!st->started) {
			/* Nothing went out: a normal error. */
			if (st->gone)
				respond_end(st->req, 0);
			else
				reply_error_msg(st->req, imsg);
			read_free(st);
			return APID_REPLY_DONE;
		}
		msgr_init(&r, imsg);
		st->err_kind = (int)msgr_u32(&r);
		st->err_text = msgr_str(&r, MSG_MAX_STRING);
		if (msgr_end(&r) == -1 || st->err_text == NULL ||
		    st->err_kind < ERR_INVALID_REQUEST ||
		    st->err_kind > ERR_KIND_MAX)
			peer_bad_message(&apid->parent, imsg, "malformed error");
		st->failed = 1;
		pipe_reader_close(&st->out);
		break;
	default:
		peer_bad_message(&apid->parent, imsg, "wrong reply type");
	}
	st->backend_done = 1;
	if (!read_can_finish(st))
		return APID_REPLY_MORE;		/* the job or pipe finishes */
	st->finishing = 1;
	read_finish(st);
	return APID_REPLY_DONE;
}

void
route_file_read(struct http_request *req, char **params)
{
	struct file_read	*st;
	struct file_request	 fr;
	json_object		*errors;
	struct msgw		 w;
	char			*path;
	size_t			 len;
	int			 fds[2], rc;

	if ((errors = json_object_new_array()) == NULL ||
	    (rc = query_get(req, "path", &path, &len)) == -1) {
		if (errors != NULL)
			json_object_put(errors);
		respond_error(req, ERR_INTERNAL, "out of memory");
		return;
	}
	if (rc == 0)
		query_missing(errors, "path");
	if (query_respond(req, errors)) {
		free(path);
		return;
	}
	if (sandbox_id_check(req, params[0]) == -1) {
		free(path);
		return;
	}
	query_refuse_nul(path, len);
	if ((st = calloc(1, sizeof(*st))) == NULL) {
		free(path);
		respond_error(req, ERR_INTERNAL, "out of memory");
		return;
	}
	st->req = req;
	st->path = path;
	st->tar_fd = -1;
	pipe_reader_init(&st->out, "download", req, read_data, read_pipe_end,
	    st);
	if ((st->pend = evbuffer_new()) == NULL ||
	    (st->later = event_new(apid->base, -1, 0, read_finish_later,
	    st)) == NULL) {
		respond_error(req, ERR_INTERNAL, "out of memory");
		read_free(st);
		return;
	}
	fr.sandbox_id = params[0];
	fr.path = path;
	msgw_init(&w);
	msg_put_file_request(&w, &fr);
	if (w.overflow || strlen(path) > MSG_MAX_PATH) {
		respond_error(req, ERR_INVALID_REQUEST, "path is too long");
		read_free(st);
		return;
	}
	/* Docker's tar comes through a pipe the job reads blocking. */
	if (bulk_pipe(fds, 0) == -1) {
		log_warn("download: pipe2");
		respond_error(req, ERR_INTERNAL, "cannot make a pipe");
		read_free(st);
		return;
	}
	st->tar_fd = fds[0];
	if ((st->ar = apid_request_send(req, MSG_FILE_READ, &w, fds[1],
	    read_reply, st)) == NULL) {
		respond_error(req, ERR_INTERNAL, "cannot reach managerd");
		read_free(st);
		return;
	}
	st->ar->gone = read_gone;
}
