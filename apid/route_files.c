/*
 * The file routes (API.md §4.9-4.11, §3.7, §1.1): download, upload and
 * directory listing.  apid parses the query, makes the pipes and runs the
 * tar work (tar_job.c); managerd checks the sandbox and the path, and the
 * proxy moves the bytes between the pipes and Docker.
 *
 * Download: the tar pipe's write end goes with FILE_READ; at
 * FILE_READ_STARTED {size} a FIRST_FILE job extracts the file into a
 * second pipe, which is forwarded to the client with backpressure (read
 * only while the connection's output buffer is small), under
 * Content-Length: size.  The last byte is held back until the job has
 * ended well with exactly size bytes: anything that goes wrong after the
 * headers (the job, managerd's MSG_ERROR, too many bytes) closes the
 * connection, so the client sees a short body, never a wrong whole one.
 *
 * Upload: evhttp has read the body already.  After the 413 checks the
 * tar pipe's read end goes with FILE_WRITE; at FILE_WRITE_READY the body
 * moves (no copy) into an UPLOAD job that writes the tar into the pipe;
 * FILE_INFO is the answer.
 *
 * Listing: an exec under managerd's control whose output pipe carries
 * frames, like POST .../exec; its stdout is parsed by file_list.c once
 * EXEC_EXIT has come and the pipe is at EOF.
 *
 * Each request's state lives until managerd is done with its id, the
 * pipe is closed and its job (if any) has ended, in whatever order.
 */
#include <sys/queue.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "apid.h"
#include "log.h"

#define FILE_HIGH_WATER		(64 * 1024)
#define FILE_READ_SIZE		(64 * 1024)
/* Reads per wakeup, so one busy pipe cannot starve the others. */
#define FILE_READS_PER_EVENT	4
#define LIST_STDERR_MAX		4096
#define MODE_PATTERN		"^[0-7]{3,4}$"

static unsigned char	 readbuf[FILE_READ_SIZE];

/* Query strings, the way Starlette reads them. */

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * urllib.parse.unquote_plus: '+' is a space, %XX a byte (a bad escape
 * stays as it is), and the bytes read as UTF-8 with U+FFFD for what is
 * not.  NUL-ended; *outlen counts any NULs inside.
 */
static char *
qs_decode(const char *s, size_t len, size_t *outlen)
{
	struct utf8_decoder	 d;
	char			*raw, *out;
	size_t			 i, n = 0;
	int			 hi, lo;

	if ((raw = malloc(len + 1)) == NULL)
		return NULL;
	for (i = 0; i < len; i++) {
		if (s[i] == '+')
			raw[n++] = ' ';
		else if (s[i] == '%' && i + 2 < len &&
		    (hi = hexval((unsigned char)s[i + 1])) != -1 &&
		    (lo = hexval((unsigned char)s[i + 2])) != -1) {
			raw[n++] = (char)(hi << 4 | lo);
			i += 2;
		} else
			raw[n++] = s[i];
	}
	if ((out = malloc(UTF8_DECODE_BOUND(n) + 1)) == NULL) {
		free(raw);
		return NULL;
	}
	utf8_decoder_init(&d);
	*outlen = utf8_decode(&d, raw, n, 1, out);
	out[*outlen] = '\0';
	free(raw);
	return out;
}

/*
 * The last value of key in the query (Starlette keeps the last of a
 * repeated key; "key" alone is key=""), decoded.  1 and *val (malloc'd)
 * if present, 0 if not, -1 when out of memory.
 */
static int
query_get(struct evhttp_request *req, const char *key, char **val,
    size_t *vlen)
{
	const struct evhttp_uri	*uri = evhttp_request_get_evhttp_uri(req);
	const char		*q, *amp, *eq;
	char			*name, *v;
	size_t			 seg, nlen, n;
	int			 match;

	*val = NULL;
	*vlen = 0;
	q = uri != NULL ? evhttp_uri_get_query(uri) : NULL;
	while (q != NULL && *q != '\0') {
		amp = strchr(q, '&');
		seg = amp != NULL ? (size_t)(amp - q) : strlen(q);
		if (seg > 0) {
			eq = memchr(q, '=', seg);
			nlen = eq != NULL ? (size_t)(eq - q) : seg;
			if ((name = qs_decode(q, nlen, &n)) == NULL)
				goto oom;
			match = n == strlen(key) && memcmp(name, key, n) == 0;
			free(name);
			if (match) {
				v = eq != NULL ? qs_decode(eq + 1,
				    seg - nlen - 1, &n) : qs_decode("", 0, &n);
				if (v == NULL)
					goto oom;
				free(*val);
				*val = v;
				*vlen = n;
			}
		}
		q = amp != NULL ? amp + 1 : NULL;
	}
	return *val != NULL;
 oom:
	free(*val);
	*val = NULL;
	return -1;
}

/* A path holding a NUL travels as "" (file_msg.h): both are refused. */
static void
path_for_message(char *path, size_t len)
{
	if (strlen(path) != len)
		path[0] = '\0';
}

static void
query_error(json_object *errors, const char *type, const char *field,
    const char *msg, json_object *input, json_object *ctx)
{
	json_object	*e, *loc;

	e = json_object_new_object();
	loc = json_object_new_array();
	json_object_array_add(loc, json_object_new_string("query"));
	json_object_array_add(loc, json_object_new_string(field));
	json_object_object_add(e, "type", json_object_new_string(type));
	json_object_object_add(e, "loc", loc);
	json_object_object_add(e, "msg", json_object_new_string(msg));
	json_object_object_add(e, "input", input);
	if (ctx != NULL)
		json_object_object_add(e, "ctx", ctx);
	json_object_array_add(errors, e);
}

static void
query_missing(json_object *errors, const char *field)
{
	query_error(errors, "missing", field, "Field required", NULL, NULL);
}

/* 1 with the 422 sent if errors holds any, else 0. */
static int
query_respond(struct evhttp_request *req, json_object *errors)
{
	json_object	*root;

	if (json_object_array_length(errors) == 0) {
		json_object_put(errors);
		return 0;
	}
	root = json_object_new_object();
	json_object_object_add(root, "detail", errors);
	respond_json(req, 422, root);
	json_object_put(root);
	return 1;
}

/* Answer a request whose client left: evhttp frees it when answered. */
static void
respond_gone(struct evhttp_request *req, int reply_started)
{
	if (reply_started)
		evhttp_send_reply_end(req);
	else
		evhttp_send_reply(req, 500, respond_reason(500), NULL);
}

/* managerd's MSG_ERROR as the answer; a malformed one is a lie. */
static void
respond_backend_error(struct evhttp_request *req, struct imsg *imsg)
{
	if (respond_error_imsg(req, imsg) == -1)
		peer_bad_message(&apid->parent, imsg, "malformed error");
}

static size_t
client_backlog(struct evhttp_request *req)
{
	struct evhttp_connection	*evcon;
	struct bufferevent		*bev;

	if ((evcon = evhttp_request_get_connection(req)) == NULL ||
	    (bev = evhttp_connection_get_bufferevent(evcon)) == NULL)
		return 0;
	return evbuffer_get_length(bufferevent_get_output(bev));
}

static int
pipe_nonblock_read(int fds[2])
{
	int	 flags;

	if (pipe2(fds, O_CLOEXEC) == -1)
		return -1;
	if ((flags = fcntl(fds[0], F_GETFL)) == -1 ||
	    fcntl(fds[0], F_SETFL, flags | O_NONBLOCK) == -1) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	return 0;
}

/* GET /v1/sandboxes/{sb}/files?path= */

struct file_read {
	struct apid_request	*ar;
	struct evhttp_request	*req;
	char			*path;		/* as asked, for logs */
	int			 tar_fd;	/* tar pipe, until STARTED */
	int			 fd;		/* the job's output, or -1 */
	struct event		*ev;
	int			 reading;
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
};

static void	read_pipe_cb(evutil_socket_t, short, void *);

static void
read_close_pipe(struct file_read *st)
{
	if (st->ev != NULL) {
		event_free(st->ev);
		st->ev = NULL;
	}
	st->reading = 0;
	if (st->fd != -1) {
		close(st->fd);
		st->fd = -1;
	}
}

static void
read_free(struct file_read *st)
{
	read_close_pipe(st);
	if (st->tar_fd != -1)
		close(st->tar_fd);
	if (st->pend != NULL)
		evbuffer_free(st->pend);
	free(st->err_text);
	free(st->path);
	free(st);
}

static void
read_resume(struct file_read *st)
{
	if (st->reading || st->fd == -1 || st->gone)
		return;
	if (event_add(st->ev, NULL) == -1) {
		log_warnx("download: cannot watch the pipe");
		st->failed = 1;
		read_close_pipe(st);
		return;
	}
	st->reading = 1;
}

static void
read_chunk_sent(struct evhttp_connection *evcon, void *arg)
{
	read_resume(arg);
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
	evhttp_send_reply_chunk_with_cb(st->req, chunk, read_chunk_sent, st);
	evbuffer_free(chunk);
}

/* The last word: the whole body, or a connection closed short. */
static void
read_finish(struct file_read *st)
{
	struct evkeyvalq	*out;
	char			*msg;

	read_close_pipe(st);
	if (st->gone) {
		respond_gone(st->req, st->reply_started);
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
			/*
			 * The headers are out, but evhttp reads this when
			 * the reply ends: it closes the connection instead
			 * of keeping it for the next request.
			 */
			out = evhttp_request_get_output_headers(st->req);
			evhttp_remove_header(out, "Connection");
			evhttp_add_header(out, "Connection", "close");
		}
		evhttp_send_reply_end(st->req);
	}
	read_free(st);
}

static int
read_can_finish(const struct file_read *st)
{
	return st->backend_done && !st->job_running && st->fd == -1;
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

static void
read_pipe_cb(evutil_socket_t fd, short events, void *arg)
{
	struct file_read	*st = arg;
	ssize_t			 n;
	int			 i;

	for (i = 0; i < FILE_READS_PER_EVENT; i++) {
		if (client_backlog(st->req) >= FILE_HIGH_WATER) {
			event_del(st->ev);
			st->reading = 0;
			return;
		}
		n = read(fd, readbuf, sizeof(readbuf));
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n == -1)
			log_warn("download: read from the pipe");
		if (n <= 0)
			break;
		st->got += (uint64_t)n;
		if (st->got > st->size) {
			st->failed = 1;
			strlcpy(st->job_err, "more bytes than the file has",
			    sizeof(st->job_err));
			break;
		}
		if (evbuffer_add(st->pend, readbuf, (size_t)n) == -1) {
			st->failed = 1;
			break;
		}
		read_forward(st);
	}
	if (i == FILE_READS_PER_EVENT)
		return;
	read_close_pipe(st);
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
		read_close_pipe(st);
	}
	/* The held-back byte may go now. */
	if (st->job_ok && st->fd == -1)
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
	struct timeval		 now = { 0, 0 };

	st->gone = 1;
	/* The job and the proxy stop on EPIPE. */
	read_close_pipe(st);
	if (st->tar_fd != -1) {
		close(st->tar_fd);
		st->tar_fd = -1;
	}
	if (!read_can_finish(st))
		return;
	/* We are inside evhttp's connection teardown: not here. */
	if (event_base_once(apid->base, -1, EV_TIMEOUT, read_finish_later, st,
	    &now) == -1)
		log_warnx("download: cannot finish a request");
}

/* FILE_READ_STARTED: the job, then the 200 (unless the file is empty). */
static void
read_started(struct file_read *st)
{
	struct tar_job_spec	 spec;
	struct evkeyvalq	*out;
	char			 len[32];
	int			 fds[2];

	if (st->gone)
		return;
	if (pipe_nonblock_read(fds) == -1) {
		log_warn("download: pipe2");
		goto fail;
	}
	if ((st->ev = event_new(apid->base, fds[0], EV_READ | EV_PERSIST,
	    read_pipe_cb, st)) == NULL) {
		close(fds[0]);
		close(fds[1]);
		goto fail;
	}
	st->fd = fds[0];
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
		read_close_pipe(st);
		goto fail;
	}
	st->job_running = 1;
	if (st->size > 0) {
		out = evhttp_request_get_output_headers(st->req);
		snprintf(len, sizeof(len), "%" PRIu64, st->size);
		evhttp_add_header(out, "Content-Type",
		    "application/octet-stream");
		evhttp_add_header(out, "Content-Length", len);
		evhttp_send_reply_start(st->req, 200, respond_reason(200));
		st->reply_started = 1;
	}
	read_resume(st);
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
				respond_gone(st->req, 0);
			else
				respond_backend_error(st->req, imsg);
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
		read_close_pipe(st);
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
route_file_read(struct evhttp_request *req, char **params)
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
	path_for_message(path, len);
	if ((st = calloc(1, sizeof(*st))) == NULL ||
	    (st->pend = evbuffer_new()) == NULL) {
		free(st);
		free(path);
		respond_error(req, ERR_INTERNAL, "out of memory");
		return;
	}
	st->req = req;
	st->path = path;
	st->tar_fd = st->fd = -1;
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
	if (pipe2(fds, O_CLOEXEC) == -1) {
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

/* PUT /v1/sandboxes/{sb}/files?path=&mode= */

struct file_upload {
	struct apid_request	*ar;
	struct evhttp_request	*req;
	int			 tar_fd;	/* tar pipe, until WRITE_READY */
	int			 ready;
	int			 job_running;
	int			 answered;	/* managerd's last word came */
	int			 gone;
};

static void
upload_free(struct file_upload *st)
{
	if (st->tar_fd != -1)
		close(st->tar_fd);
	free(st);
}

static void
upload_job_done(const struct tar_result *res, void *arg)
{
	struct file_upload	*st = arg;

	st->job_running = 0;
	if (res->errnum != 0)
		log_warnx("upload: %s", res->message != NULL ? res->message :
		    strerror(res->errnum));
	if (st->answered)
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
	struct evbuffer		*body;

	if (st->ready || msg_get_file_write_ready(imsg, &fw) == -1)
		peer_bad_message(&apid->parent, imsg, "unexpected");
	st->ready = 1;
	if (st->gone || st->tar_fd == -1) {
		file_write_ready_free(&fw);
		return;
	}
	/* The body's chains move to the job: no copy. */
	if ((body = evbuffer_new()) == NULL || evbuffer_add_buffer(body,
	    evhttp_request_get_input_buffer(st->req)) == -1) {
		log_warnx("upload: out of memory");
		if (body != NULL)
			evbuffer_free(body);
		close(st->tar_fd);
		st->tar_fd = -1;
		file_write_ready_free(&fw);
		return;
	}
	memset(&spec, 0, sizeof(spec));
	spec.kind = TAR_JOB_UPLOAD;
	spec.in_fd = -1;
	spec.out_fd = st->tar_fd;
	spec.body = body;
	spec.upload = &fw;
	spec.done = upload_job_done;
	spec.arg = st;
	st->tar_fd = -1;
	if (tar_job_start(&spec) == -1)
		log_warn("upload: cannot start the tar job");
	else
		st->job_running = 1;
	file_write_ready_free(&fw);
}

static void
upload_info(struct file_upload *st, struct imsg *imsg)
{
	struct file_info	 fi;
	json_object		*o;

	if (!st->ready || msg_get_file_info(imsg, &fi) == -1)
		peer_bad_message(&apid->parent, imsg, "unexpected");
	if (st->gone)
		respond_gone(st->req, 0);
	else if ((o = file_info_json(fi.name, fi.path, fi.type, fi.size,
	    fi.modified_at)) == NULL)
		respond_error(st->req, ERR_INTERNAL, "cannot render the file");
	else {
		respond_json(st->req, 200, o);
		json_object_put(o);
	}
	file_info_free(&fi);
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
		if (st->gone)
			respond_gone(st->req, 0);
		else
			respond_backend_error(st->req, imsg);
		break;
	default:
		peer_bad_message(&apid->parent, imsg, "wrong reply type");
	}
	st->answered = 1;
	if (st->tar_fd != -1) {
		close(st->tar_fd);
		st->tar_fd = -1;
	}
	if (!st->job_running)
		upload_free(st);
	return APID_REPLY_DONE;
}

/* Content-Length all digits and above max (API.md §4.10 step 1). */
static int
content_length_over(struct evhttp_request *req, uint64_t max)
{
	const char	*cl;
	uint64_t	 v = 0;
	size_t		 i;

	cl = evhttp_find_header(evhttp_request_get_input_headers(req),
	    "Content-Length");
	if (cl == NULL || *cl == '\0')
		return 0;
	for (i = 0; cl[i] != '\0'; i++) {
		if (!isdigit((unsigned char)cl[i]))
			return 0;
		if (v > (UINT64_MAX - 9) / 10)
			v = UINT64_MAX;		/* saturate: still over */
		else
			v = v * 10 + (uint64_t)(cl[i] - '0');
	}
	return v > max;
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
upload_query(struct evhttp_request *req, char **path, size_t *pathlen,
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

void
route_file_write(struct evhttp_request *req, char **params)
{
	struct file_upload	*st;
	struct file_write	 fw;
	struct msgw		 w;
	char			*path, *msg;
	size_t			 pathlen, bodylen;
	uint32_t		 mode;
	int			 fds[2];

	if (upload_query(req, &path, &pathlen, &mode) == -1)
		return;
	bodylen = evbuffer_get_length(evhttp_request_get_input_buffer(req));
	if (content_length_over(req, apid->max_file_bytes) ||
	    bodylen > apid->max_file_bytes) {
		if (asprintf(&msg, "file exceeds %" PRIu64 " bytes",
		    apid->max_file_bytes) == -1)
			msg = NULL;
		respond_error(req, ERR_PAYLOAD_TOO_LARGE, msg != NULL ? msg :
		    "file too large");
		free(msg);
		free(path);
		return;
	}
	if (sandbox_id_check(req, params[0]) == -1) {
		free(path);
		return;
	}
	path_for_message(path, pathlen);
	fw.sandbox_id = params[0];
	fw.path = path;
	fw.mode = mode;
	fw.size = bodylen;
	msgw_init(&w);
	msg_put_file_write(&w, &fw);
	if (w.overflow || strlen(path) > MSG_MAX_PATH) {
		respond_error(req, ERR_INVALID_REQUEST, "path is too long");
		free(path);
		return;
	}
	free(path);
	if ((st = calloc(1, sizeof(*st))) == NULL) {
		respond_error(req, ERR_INTERNAL, "out of memory");
		return;
	}
	st->req = req;
	st->tar_fd = -1;
	/* The proxy reads the tar blocking; the job writes it blocking. */
	if (pipe2(fds, O_CLOEXEC) == -1) {
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

/* GET /v1/sandboxes/{sb}/files/list?path= */

struct file_listing {
	struct apid_request	*ar;
	struct evhttp_request	*req;
	int			 fd;		/* output pipe, or -1 */
	struct event		*ev;
	char			*dir;		/* FILE_LIST_STARTED */
	int			 started;
	int			 exited;
	int			 eof;
	int			 gone;
	struct exec_exit	 exit;
	struct frame_parser	 fp;
	char			*out;
	size_t			 outlen;
	size_t			 outsize;
	int			 too_large;
	char			 err[LIST_STDERR_MAX];
	size_t			 errlen;
};

static void
list_close_pipe(struct file_listing *st)
{
	if (st->ev != NULL) {
		event_free(st->ev);
		st->ev = NULL;
	}
	if (st->fd != -1) {
		close(st->fd);
		st->fd = -1;
	}
	st->eof = 1;
}

static void
list_free(struct file_listing *st)
{
	list_close_pipe(st);
	free(st->dir);
	free(st->out);
	free(st);
}

static int
list_frame(void *arg, int stream, const unsigned char *data, size_t len,
    int end)
{
	struct file_listing	*st = arg;
	size_t			 size;
	char			*p;

	if (stream == FRAME_STDERR) {
		if (len > sizeof(st->err) - st->errlen)
			len = sizeof(st->err) - st->errlen;
		memcpy(st->err + st->errlen, data, len);
		st->errlen += len;
		return 0;
	}
	if (stream != FRAME_STDOUT || st->too_large || len == 0)
		return 0;
	if (len > FILE_LIST_OUTPUT_MAX - st->outlen) {
		st->too_large = 1;
		free(st->out);
		st->out = NULL;
		st->outlen = st->outsize = 0;
		return 0;
	}
	if (st->outlen + len > st->outsize) {
		size = st->outsize == 0 ? 64 * 1024 : st->outsize;
		while (size < st->outlen + len)
			size *= 2;
		if (size > FILE_LIST_OUTPUT_MAX)
			size = FILE_LIST_OUTPUT_MAX;
		if ((p = realloc(st->out, size)) == NULL)
			return -1;
		st->out = p;
		st->outsize = size;
	}
	memcpy(st->out + st->outlen, data, len);
	st->outlen += len;
	return 0;
}

/* Python's str.strip() of stderr, as text. */
static char *
list_stderr(struct file_listing *st)
{
	struct utf8_decoder	 d;
	const char		*s = st->err;
	size_t			 len = st->errlen, n;
	char			*out;

	while (len > 0 && isspace((unsigned char)*s)) {
		s++;
		len--;
	}
	while (len > 0 && isspace((unsigned char)s[len - 1]))
		len--;
	if ((out = malloc(UTF8_DECODE_BOUND(len) + 1)) == NULL)
		return NULL;
	utf8_decoder_init(&d);
	n = utf8_decode(&d, s, len, 1, out);
	out[n] = '\0';
	return out;
}

static void
list_respond(struct file_listing *st)
{
	struct file_entries	 fe;
	json_object		*o;
	char			*msg = NULL, *err;

	if (st->too_large) {
		if (asprintf(&msg, "cannot list %s: listing too large",
		    st->dir) == -1)
			msg = NULL;
		respond_error(st->req, ERR_BACKEND, msg != NULL ? msg :
		    "listing too large");
	} else if (st->exit.exit_code == 0) {
		if (file_list_parse(st->out != NULL ? st->out : "",
		    st->outlen, &fe) == -1) {
			respond_error(st->req, ERR_INTERNAL, "out of memory");
			return;
		}
		if ((o = file_list_json(st->dir, &fe)) == NULL)
			respond_error(st->req, ERR_INTERNAL, "out of memory");
		else {
			respond_json(st->req, 200, o);
			json_object_put(o);
		}
		file_entries_free(&fe);
	} else if (st->exit.exit_code == 2) {
		if (asprintf(&msg, "%s: not found", st->dir) == -1)
			msg = NULL;
		respond_error(st->req, ERR_NOT_FOUND, msg != NULL ? msg :
		    "not found");
	} else if (st->exit.exit_code == 3) {
		if (asprintf(&msg, "%s is not a directory", st->dir) == -1)
			msg = NULL;
		respond_error(st->req, ERR_INVALID_REQUEST, msg != NULL ? msg :
		    "not a directory");
	} else {
		err = list_stderr(st);
		if (asprintf(&msg, "cannot list %s: %s", st->dir,
		    err != NULL ? err : "") == -1)
			msg = NULL;
		free(err);
		respond_error(st->req, ERR_BACKEND, msg != NULL ? msg :
		    "cannot list");
	}
	free(msg);
}

static void
list_finish(struct file_listing *st)
{
	list_close_pipe(st);
	if (st->gone)
		respond_gone(st->req, 0);
	else
		list_respond(st);
	list_free(st);
}

static void
list_read_cb(evutil_socket_t fd, short events, void *arg)
{
	struct file_listing	*st = arg;
	ssize_t			 n;
	int			 i;

	for (i = 0; i < FILE_READS_PER_EVENT; i++) {
		n = read(fd, readbuf, sizeof(readbuf));
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n == -1)
			log_warn("listing: read from the output pipe");
		if (n <= 0)
			break;
		if (frame_parser_feed(&st->fp, readbuf, (size_t)n, list_frame,
		    st) == -1) {
			log_warnx("listing: out of memory");
			st->too_large = 1;
			break;
		}
	}
	if (i == FILE_READS_PER_EVENT)
		return;
	list_close_pipe(st);
	if (st->exited) {
		apid_request_release(st->ar);
		list_finish(st);
	}
}

static void
list_finish_later(evutil_socket_t fd, short events, void *arg)
{
	struct file_listing	*st = arg;

	apid_request_release(st->ar);
	list_finish(st);
}

static void
list_gone(struct apid_request *ar)
{
	struct file_listing	*st = ar->arg;
	struct timeval		 now = { 0, 0 };

	st->gone = 1;
	list_close_pipe(st);
	if (!st->exited) {
		/* managerd treats a listing as an exec: it ends it. */
		if (peer_compose(&apid->parent, MSG_EXEC_CANCEL, ar->id, -1,
		    NULL, 0) == -1)
			log_warnx("listing: cannot cancel");
		return;
	}
	/* We are inside evhttp's connection teardown: not here. */
	if (event_base_once(apid->base, -1, EV_TIMEOUT, list_finish_later, st,
	    &now) == -1)
		log_warnx("listing: cannot finish a request");
}

static int
list_reply(struct apid_request *ar, struct imsg *imsg)
{
	struct file_listing	*st = ar->arg;

	switch (imsg->hdr.type) {
	case MSG_FILE_LIST_STARTED:
		if (st->started)
			peer_bad_message(&apid->parent, imsg, "unexpected");
		if ((st->dir = msg_get_string(imsg, MSG_MAX_PATH)) == NULL)
			peer_bad_message(&apid->parent, imsg, "malformed");
		st->started = 1;
		if (!st->gone && st->ev != NULL &&
		    event_add(st->ev, NULL) == -1) {
			log_warnx("listing: cannot watch the output pipe");
			list_close_pipe(st);
		}
		return APID_REPLY_MORE;
	case MSG_EXEC_EXIT:
		if (!st->started || st->exited)
			peer_bad_message(&apid->parent, imsg, "unexpected");
		if (msg_get_exec_exit(imsg, &st->exit) == -1)
			peer_bad_message(&apid->parent, imsg, "malformed");
		st->exited = 1;
		if (!st->eof)
			return APID_REPLY_MORE;		/* finish at EOF */
		list_finish(st);
		return APID_REPLY_DONE;
	case MSG_ERROR:
		list_close_pipe(st);
		if (st->gone)
			respond_gone(st->req, 0);
		else
			respond_backend_error(st->req, imsg);
		list_free(st);
		return APID_REPLY_DONE;
	default:
		peer_bad_message(&apid->parent, imsg, "wrong reply type");
	}
}

void
route_file_list(struct evhttp_request *req, char **params)
{
	struct file_listing	*st;
	struct file_request	 fr;
	struct msgw		 w;
	char			*path;
	size_t			 len;
	int			 fds[2], rc;

	if ((rc = query_get(req, "path", &path, &len)) == -1) {
		respond_error(req, ERR_INTERNAL, "out of memory");
		return;
	}
	if (sandbox_id_check(req, params[0]) == -1) {
		free(path);
		return;
	}
	if (path != NULL)
		path_for_message(path, len);
	fr.sandbox_id = params[0];
	fr.path = path;		/* NULL: managerd lists /workspace */
	msgw_init(&w);
	msg_put_file_request(&w, &fr);
	if (w.overflow || (path != NULL && strlen(path) > MSG_MAX_PATH)) {
		respond_error(req, ERR_INVALID_REQUEST, "path is too long");
		free(path);
		return;
	}
	free(path);
	if ((st = calloc(1, sizeof(*st))) == NULL) {
		respond_error(req, ERR_INTERNAL, "out of memory");
		return;
	}
	st->req = req;
	st->fd = -1;
	frame_parser_init(&st->fp);
	if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) == -1) {
		log_warn("listing: pipe2");
		respond_error(req, ERR_INTERNAL, "cannot make a pipe");
		list_free(st);
		return;
	}
	st->fd = fds[0];
	if ((st->ev = event_new(apid->base, st->fd, EV_READ | EV_PERSIST,
	    list_read_cb, st)) == NULL) {
		close(fds[1]);
		respond_error(req, ERR_INTERNAL, "out of memory");
		list_free(st);
		return;
	}
	if ((st->ar = apid_request_send(req, MSG_FILE_LIST, &w, fds[1],
	    list_reply, st)) == NULL) {
		respond_error(req, ERR_INTERNAL, "cannot reach managerd");
		list_free(st);
		return;
	}
	st->ar->gone = list_gone;
}
