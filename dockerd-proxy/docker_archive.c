/*
 * Read a path out of a sandbox (API.md §11.5, §11.6): GET
 * /containers/<id>/archive, whose X-Docker-Container-Path-Stat header
 * says what the path is, sent to managerd as ARCHIVE_STAT.  Docker's tar
 * then goes into the pipe managerd passed along, but only when the stat
 * says it is wanted; otherwise the request is dropped unread.  When the
 * pipe is full, reading from Docker stops until it drains, so a 1 GiB
 * file costs no more memory than a small one.
 *
 * The request goes out as HTTP/1.0, so that Docker sends the tar
 * unchunked, and once the stat is read the connection is taken over
 * (docker_request_take): the tar moves from the socket into the pipe
 * with splice(2), never through this process's memory.  Should the
 * answer come chunked all the same (a socket proxy in between), it goes
 * through the HTTP parser as before.
 *
 * Also the check both archive operations start with: the sandbox's
 * container exists and was made by this server.
 */
#include <sys/socket.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "docker_http.h"
#include "log.h"
#include "proxy.h"
#include "xmalloc.h"

#define INSPECT_MAX_BODY	(4 * 1024 * 1024)
/* Error bodies only: a streamed tar is never buffered. */
#define ARCHIVE_MAX_BODY	(64 * 1024)
/* The pipe's size asked for (the default pipe-max-size). */
#define ARCHIVE_PIPE_SIZE	(1024 * 1024)
/* Most bytes one splice(2) asks for; at most this many per wake-up. */
#define SPLICE_PIECE		(1024 * 1024)
#define SPLICE_TURN		(8 * SPLICE_PIECE)

/* --- is the container ours ------------------------------------------------ */

struct archive_lookup {
	struct proxy		*px;
	char			 id[SANDBOX_ID_LEN + 1];
	const char		*op;
	archive_container_cb	 cb;
	void			*arg;
	/* The cached container, or the cache's epoch when inspected. */
	char			 cid[DOCKER_ID_LEN + 1];
	uint64_t		 epoch;
};

static void
lookup_inspected(const struct docker_result *res, void *arg)
{
	struct archive_lookup	*l = arg;
	json_object		*obj, *config, *labels = NULL;
	const char		*cid;
	enum error_kind		 kind;
	char			 cidbuf[DOCKER_ID_LEN + 1] = "";
	char			 name[DOCKER_NAME_MAX], what[64];
	char			 text[1024];

	if (docker_result_answered(res) && res->status == 404) {
		snprintf(text, sizeof(text), "sandbox %s not found", l->id);
		l->cb(l->arg, NULL, ERR_NOT_FOUND, text);
		goto done;
	}
	if (!docker_result_answered(res) || res->status != 200) {
		snprintf(what, sizeof(what), "sandbox %s", l->id);
		kind = docker_result_error(res, what, text, sizeof(text));
		l->cb(l->arg, NULL, kind, text);
		goto done;
	}
	obj = docker_json_parse(res->resp);
	if (json_object_object_get_ex(obj, "Config", &config))
		json_object_object_get_ex(config, "Labels", &labels);
	cid = json_get_string(obj, "Id");
	if (labels_are_ours(labels, l->id, l->px->settings.instance_id) &&
	    valid_docker_id(cid))
		strlcpy(cidbuf, cid, sizeof(cidbuf));
	json_object_put(obj);
	if (cidbuf[0] != '\0')
		container_cache_put(l->id, cidbuf, l->epoch);
	if (cidbuf[0] == '\0') {
		sandbox_container_name(l->id, name, sizeof(name));
		refuse_not_ours(l->op, name, text, sizeof(text));
		l->cb(l->arg, NULL, ERR_FORBIDDEN, text);
		goto done;
	}
	l->cb(l->arg, cidbuf, 0, NULL);
done:
	free(l);
}

static struct archive_lookup *
lookup_new(struct proxy *px, const char *id, const char *op,
    archive_container_cb cb, void *arg)
{
	struct archive_lookup	*l;

	l = xcalloc(1, sizeof(*l));
	l->px = px;
	strlcpy(l->id, id, sizeof(l->id));
	l->op = op;
	l->cb = cb;
	l->arg = arg;
	return l;
}

void
archive_container_inspect(struct proxy *px, const char *id, const char *op,
    archive_container_cb cb, void *arg)
{
	struct archive_lookup	*l = lookup_new(px, id, op, cb, arg);
	char			 name[DOCKER_NAME_MAX], path[256];

	l->epoch = container_cache_epoch();
	sandbox_container_name(id, name, sizeof(name));
	if (docker_path(path, sizeof(path), DOCKER_API "/containers/%s/json",
	    name) == -1)
		fatalx("%s: path", __func__);
	docker_call(px, "GET", path, NULL, INSPECT_MAX_BODY, lookup_inspected,
	    l);
}

/* A cached container, told on the loop's next turn as an inspect's is. */
static void
lookup_cached(evutil_socket_t fd, short what, void *arg)
{
	struct archive_lookup	*l = arg;

	l->cb(l->arg, l->cid, 0, NULL);
	free(l);
}

void
archive_container(struct proxy *px, const char *id, const char *op,
    archive_container_cb cb, void *arg)
{
	struct archive_lookup	*l;
	const char		*cid;

	if ((cid = container_cache_get(id)) == NULL) {
		archive_container_inspect(px, id, op, cb, arg);
		return;
	}
	l = lookup_new(px, id, op, cb, arg);
	strlcpy(l->cid, cid, sizeof(l->cid));
	if (event_base_once(px->base, -1, EV_TIMEOUT, lookup_cached, l,
	    NULL) == -1) {
		free(l);
		archive_container_inspect(px, id, op, cb, arg);
	}
}

/* --- GET ------------------------------------------------------------------ */

struct archive_read {
	struct proxy		*px;
	uint32_t		 peerid;
	struct archive_get	*ag;
	int			 fd;		/* the pipe; -1 once closed */
	struct event		*ev_pipe;
	struct evbuffer		*out;		/* tar bytes not yet written */
	struct docker_request	*req;
	int			 paused;
	int			 stat_sent;
	int			 ended;		/* Docker's body is complete */
	/* Once taken: Docker's connection, and the tar bytes still due. */
	int			 sock;
	long long		 left;		/* -1: until Docker closes */
	int			 reader_gone;	/* the pipe's reader closed */
	struct event		*ev_sock;
	struct event		*ev_deadline;	/* Docker silent too long */
};

static void
read_pipe_close(struct archive_read *r)
{
	if (r->fd == -1)
		return;
	if (r->ev_pipe != NULL)
		event_del(r->ev_pipe);
	close(r->fd);
	r->fd = -1;
}

static void
read_free(struct archive_read *r)
{
	if (r->req != NULL)
		docker_request_cancel(r->req);
	read_pipe_close(r);
	if (r->ev_pipe != NULL)
		event_free(r->ev_pipe);
	if (r->ev_sock != NULL)
		event_free(r->ev_sock);
	if (r->ev_deadline != NULL)
		event_free(r->ev_deadline);
	if (r->sock != -1)
		close(r->sock);
	if (r->out != NULL)
		evbuffer_free(r->out);
	archive_get_free(r->ag);
	free(r->ag);
	free(r);
}

/* The one final reply; the pipe is closed before it goes. */
static void
read_fail(struct archive_read *r, enum error_kind kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
read_fail(struct archive_read *r, enum error_kind kind, const char *fmt, ...)
{
	char	 text[MSG_MAX_STRING + 1];	/* a whole path and more */
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (r->req != NULL) {
		docker_request_cancel(r->req);
		r->req = NULL;
	}
	read_pipe_close(r);
	log_debug("archive get %u in sandbox %s: %s", r->peerid, r->ag->id,
	    text);
	peer_send_error(&r->px->parent, r->peerid, kind, "%s", text);
	read_free(r);
}

static void
read_finish(struct archive_read *r)
{
	if (r->req != NULL) {
		docker_request_cancel(r->req);
		r->req = NULL;
	}
	read_pipe_close(r);
	peer_send(&r->px->parent, MSG_DOCKER_DONE, r->peerid, -1, NULL);
	read_free(r);
}

/* From the path stat: ARCHIVE_STAT to managerd; 1 to stream the body. */
static int
read_stat(struct archive_read *r, const struct docker_response *resp)
{
	struct archive_stat	 st;
	struct msgw		 w;
	const char		*why;
	int			 stream;

	if (archive_path_stat_parse(resp->path_stat, &st, &why) == -1) {
		log_warnx("archive get %u in sandbox %s: %s", r->peerid,
		    r->ag->id, why);
		read_fail(r, ERR_BACKEND, "%s: Docker did not say what it is",
		    r->ag->path);
		return -1;
	}
	msgw_init(&w);
	msg_put_archive_stat(&w, &st);
	peer_send(&r->px->parent, MSG_DOCKER_ARCHIVE_STAT, r->peerid, -1, &w);
	r->stat_sent = 1;
	stream = (r->ag->want == ARCHIVE_WANT_FILE &&
	    st.kind == ARCHIVE_KIND_FILE && st.size <= r->ag->max_bytes) ||
	    (r->ag->want == ARCHIVE_WANT_TREE && st.kind == ARCHIVE_KIND_DIR);
	archive_stat_free(&st);
	return stream;
}

/* 1 when all that came is in the pipe; 0 while it is full; -1 gone. */
static int
read_flush(struct archive_read *r)
{
	int	 n;

	while (evbuffer_get_length(r->out) > 0) {
		n = evbuffer_write(r->out, r->fd);
		if (n > 0 || (n == -1 && errno == EINTR))
			continue;
		if (n == 0 || errno == EAGAIN || errno == EWOULDBLOCK) {
			/* Unwatched, nothing would ever call again. */
			if (event_add(r->ev_pipe, NULL) == -1) {
				read_fail(r, ERR_INTERNAL, "%s: cannot watch "
				    "the pipe", r->ag->path);
				return -1;
			}
			return 0;
		}
		if (errno != EPIPE)
			log_warn("archive get %u: writing to the pipe",
			    r->peerid);
		read_fail(r, ERR_BACKEND, "%s: the reader went away",
		    r->ag->path);
		return -1;
	}
	return 1;
}

/* --- the taken connection: splice(2) into the pipe ------------------------ */

static int	splice_reader_gone(struct archive_read *);

/*
 * splice(2) said EAGAIN: the socket has nothing, or the pipe no room.
 * Only while waiting for Docker does its deadline run: a full pipe is
 * the reader's pace.  A reader gone since the splice is no failure yet:
 * the archive worker closes at the tar's end blocks, and Docker's close
 * may still be on its way (splice_reader_gone decides).
 */
static void
splice_wait(struct archive_read *r)
{
	struct pollfd	 pfd = { r->fd, POLLOUT, 0 };
	struct timeval	 tv = { DOCKER_DEADLINE_MS / 1000,
	    (DOCKER_DEADLINE_MS % 1000) * 1000 };
	int		 n;

	do {
		n = poll(&pfd, 1, 0);
	} while (n == -1 && errno == EINTR);
	if (n == 1 && (pfd.revents & POLLERR)) {
		(void)splice_reader_gone(r);
		return;
	}
	if (n == 1 && (pfd.revents & POLLOUT)) {
		evtimer_add(r->ev_deadline, &tv);
		event_add(r->ev_sock, NULL);
		return;
	}
	evtimer_del(r->ev_deadline);
	event_add(r->ev_pipe, NULL);
}

/*
 * The pipe's reader has gone.  Fine if Docker's answer had ended: the
 * archive worker stops at the tar's end blocks and may be gone before
 * Docker's close reaches us.  A failure if more of it comes.  0 while
 * waiting to know, -1 once ended (r is freed).
 */
static int
splice_reader_gone(struct archive_read *r)
{
	struct timeval	 tv = { DOCKER_DEADLINE_MS / 1000,
	    (DOCKER_DEADLINE_MS % 1000) * 1000 };
	struct msghdr	 msg;
	struct iovec	 iov;
	char		 c;
	ssize_t		 n;

	r->reader_gone = 1;
	iov.iov_base = &c;
	iov.iov_len = 1;
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	do {
		n = recvmsg(r->sock, &msg, MSG_PEEK | MSG_DONTWAIT);
	} while (n == -1 && errno == EINTR);
	if (n == 0 && r->left <= 0) {
		read_finish(r);
		return -1;
	}
	if (n == -1 && errno == EAGAIN && r->left <= 0) {
		evtimer_add(r->ev_deadline, &tv);
		event_add(r->ev_sock, NULL);
		return 0;
	}
	read_fail(r, ERR_BACKEND, "%s: the reader went away", r->ag->path);
	return -1;
}

/* One splice's outcome: 1 to go on, 0 waiting, -1 ended (r is freed). */
static int
splice_step(struct archive_read *r)
{
	size_t	 want = SPLICE_PIECE;
	ssize_t	 n;

	if (r->left >= 0 && (unsigned long long)r->left < want)
		want = (size_t)r->left;
	n = splice(r->sock, NULL, r->fd, NULL, want,
	    SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
	if (n > 0) {
		if (r->left > 0)
			r->left -= n;
		return 1;
	}
	if (n == 0 && r->left > 0)
		read_fail(r, ERR_BACKEND, "%s: Docker closed the connection "
		    "%lld bytes short", r->ag->path, r->left);
	else if (n == 0)
		read_finish(r);
	else if (errno == EINTR)
		return 1;
	else if (errno == EAGAIN) {
		splice_wait(r);
		return 0;
	} else if (errno == EPIPE)
		return splice_reader_gone(r);
	else
		read_fail(r, ERR_BACKEND, "%s: reading Docker's answer: %s",
		    r->ag->path, strerror(errno));
	return -1;
}

/*
 * What came with the head first, then splice(2) until the body's end,
 * at most SPLICE_TURN bytes per turn of the loop.
 */
static void
read_splice(struct archive_read *r)
{
	size_t	 done;
	int	 rc;

	if (r->reader_gone) {
		(void)splice_reader_gone(r);
		return;
	}
	if (read_flush(r) != 1)
		return;
	for (done = 0; done < SPLICE_TURN; done += SPLICE_PIECE) {
		if (r->left == 0) {
			read_finish(r);
			return;
		}
		if ((rc = splice_step(r)) != 1)
			return;
	}
	event_active(r->ev_sock, EV_READ, 1);
}

static void
splice_ready(evutil_socket_t fd, short what, void *arg)
{
	read_splice(arg);
}

static void
splice_deadline(evutil_socket_t fd, short what, void *arg)
{
	struct archive_read	*r = arg;

	log_warnx("archive get %u in sandbox %s: %s", r->peerid, r->ag->id,
	    docker_http_strerror(DOCKER_HTTP_TIMEOUT));
	read_fail(r, docker_http_error_kind(DOCKER_HTTP_TIMEOUT), "%s: %s",
	    r->ag->path, docker_http_strerror(DOCKER_HTTP_TIMEOUT));
}

/* docker_request_take()'s callback: the connection is ours now. */
static void
read_taken(struct docker_request *req, int fd, struct evbuffer *rest,
    long long left, void *arg)
{
	struct archive_read	*r = arg;

	r->req = NULL;
	r->sock = fd;
	r->left = left;
	if (evbuffer_add_buffer(r->out, rest) == -1 ||
	    (r->ev_sock = event_new(r->px->base, fd, EV_READ, splice_ready,
	    r)) == NULL ||
	    (r->ev_deadline = evtimer_new(r->px->base, splice_deadline,
	    r)) == NULL)
		fatalx("%s: out of memory", __func__);
	/* From the loop: the request is being freed around us. */
	event_active(r->ev_sock, EV_READ, 1);
}

static void
read_pipe_writable(evutil_socket_t fd, short what, void *arg)
{
	struct archive_read	*r = arg;
	int			 flushed;

	if (r->sock != -1) {
		read_splice(r);
		return;
	}
	if ((flushed = read_flush(r)) != 1)
		return;
	if (r->ended) {
		read_finish(r);
		return;
	}
	if (r->paused) {
		r->paused = 0;
		docker_request_resume(r->req);
	}
}

static int
read_body(struct docker_request *req, const unsigned char *data, size_t len,
    void *arg)
{
	struct archive_read	*r = arg;
	int			 flushed;

	if (!r->stat_sent) {
		switch (read_stat(r, docker_request_response(req))) {
		case -1:
			/* read_fail cancelled the request and freed r. */
			return -1;
		case 0:
			read_finish(r);
			return -1;
		}
		/* The announce: take the body, unless it came chunked. */
		if (len == 0 && docker_request_take(req, read_taken) == 0)
			return 0;
	}
	if (evbuffer_add(r->out, data, len) == -1)
		fatalx("%s: out of memory", __func__);
	if ((flushed = read_flush(r)) == -1)
		return -1;
	if (flushed == 0 && !r->paused) {
		r->paused = 1;
		docker_request_pause(req);
	}
	return 0;
}

static void
read_done(struct docker_request *req, enum docker_http_error error,
    const struct docker_response *resp, void *arg)
{
	struct archive_read	*r = arg;
	struct docker_result	 res;
	enum error_kind		 kind;
	char			 text[MSG_MAX_STRING + 1];
	int			 stream;

	r->req = NULL;
	if (error == DOCKER_HTTP_OK && resp->status == 404) {
		docker_error_message(resp, text, sizeof(text));
		if (container_gone_message(text)) {
			container_cache_forget(r->ag->id);
			read_fail(r, ERR_NOT_FOUND, "sandbox %s not found",
			    r->ag->id);
		} else
			read_fail(r, ERR_NOT_FOUND, "%s: not found",
			    r->ag->path);
		return;
	}
	if (!r->stat_sent && (error != DOCKER_HTTP_OK ||
	    resp->status != 200)) {
		res.error = error;
		res.errnum = docker_request_errno(req);
		res.status = resp->status;
		res.resp = resp;
		kind = docker_result_error(&res, r->ag->path, text,
		    sizeof(text));
		/* Docker resolves symlinks itself and gives up on a loop. */
		if (error == DOCKER_HTTP_OK &&
		    archive_error_class(text) == ARCHIVE_ERROR_LOOP) {
			read_fail(r, ERR_INVALID_REQUEST,
			    "%s: too many levels of symbolic links",
			    r->ag->path);
			return;
		}
		read_fail(r, kind, "%s", text);
		return;
	}
	if (error != DOCKER_HTTP_OK) {
		log_warnx("archive get %u in sandbox %s: %s", r->peerid,
		    r->ag->id, docker_http_strerror(error));
		read_fail(r, docker_http_error_kind(error), "%s: %s",
		    r->ag->path, docker_http_strerror(error));
		return;
	}
	/* An empty body: the stat has not been seen yet. */
	if (!r->stat_sent) {
		if ((stream = read_stat(r, resp)) == -1)
			return;
		if (stream) {
			read_fail(r, ERR_BACKEND, "%s: Docker sent no archive",
			    r->ag->path);
			return;
		}
		read_finish(r);
		return;
	}
	r->ended = 1;
	r->paused = 0;
	if (read_flush(r) == 1)
		read_finish(r);
}

static void
read_container(void *arg, const char *cid, enum error_kind kind,
    const char *text)
{
	struct archive_read		*r = arg;
	struct docker_request_spec	 spec;
	char				 path[DOCKER_HTTP_MAX_PATH + 1];

	if (cid == NULL) {
		read_fail(r, kind, "%s", text);
		return;
	}
	if (docker_path(path, sizeof(path), DOCKER_API
	    "/containers/%s/archive?path=%s", cid, r->ag->path) == -1) {
		read_fail(r, ERR_INVALID_REQUEST, "path too long");
		return;
	}
	memset(&spec, 0, sizeof(spec));
	spec.method = "GET";
	spec.path = path;
	spec.max_body = ARCHIVE_MAX_BODY;
	spec.flags = DOCKER_HTTP_ANNOUNCE | DOCKER_HTTP_RAW;
	spec.on_body = read_body;
	spec.on_done = read_done;
	spec.arg = r;
	log_debug("docker GET %s", path);
	if ((r->req = docker_request_new(r->px->base,
	    r->px->settings.docker_endpoint, &spec)) == NULL)
		read_fail(r, docker_start_error_kind(errno), "%s: cannot start "
		    "a Docker request: %s", r->ag->path, strerror(errno));
}

void
docker_archive_get(struct proxy *px, uint32_t peerid, struct archive_get *ag,
    int fd)
{
	struct archive_read	*r;
	struct stat		 st;
	int			 flags;

	r = xcalloc(1, sizeof(*r));
	r->px = px;
	r->peerid = peerid;
	r->ag = ag;
	r->fd = fd;
	r->sock = -1;
	if ((r->out = evbuffer_new()) == NULL ||
	    (r->ev_pipe = event_new(px->base, fd, EV_WRITE,
	    read_pipe_writable, r)) == NULL)
		fatalx("%s: out of memory", __func__);
	if (fstat(fd, &st) == -1 || !S_ISFIFO(st.st_mode) ||
	    (flags = fcntl(fd, F_GETFL)) == -1 ||
	    fcntl(fd, F_SETFL, flags | O_NONBLOCK) == -1) {
		read_fail(r, ERR_INTERNAL, "archive output is not a pipe");
		return;
	}
	/*
	 * A larger pipe: each splice and each of the reader's reads moves
	 * up to this much, not 64 KiB.  Past the user's pipe quota the
	 * kernel refuses, and the pipe stays as it was.
	 */
	(void)fcntl(fd, F_SETPIPE_SZ, ARCHIVE_PIPE_SIZE);
	archive_container(px, ag->id, "read files of", read_container, r);
}
