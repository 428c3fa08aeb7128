/*
 * HTTP/1.1 client for the Docker Engine API over its unix socket or TCP:
 * the libevent plumbing that ties one request to one connection.  Request
 * heads are docker_http_head.c, the response parser docker_http_parse.c.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "bev_read.h"
#include "docker_http.h"

/* A queued upload beyond this is refused: the producer ignored HIWAT. */
#define UPLOAD_MAX_QUEUED	(16 * DOCKER_HTTP_UPLOAD_HIWAT)

struct docker_request {
	struct event_base		*base;
	struct bufferevent		*bev;
	struct event			*ev_defer;
	struct event			*ev_connect;	/* TCP, in progress */
	struct docker_http_parser	*parser;
	docker_body_cb			 on_body;
	docker_drain_cb			 on_drain;
	docker_done_cb			 on_done;
	void				*arg;
	enum docker_http_error		 connect_error;	/* reported deferred */
	int				 sys_errno;
	int				 upload;
	int				 upload_chunked;
	int				 upload_ended;
	unsigned long long		 upload_left;
	struct timeval			 deadline;	/* silence allowed */
	int				 upgrade;	/* deadline to the head */
	int				 hijack;	/* DOCKER_HTTP_UPGRADE */
	int				 shut_wanted;	/* once the output is out */
	int				 shut_done;
	int				 write_failed;
	int				 paused;
	int				 eof;
	int				 read_failed;	/* request_read_more's */
	int				 busy;		/* inside a callback */
	int				 cancelled;
	int				 finished;
	/* For the observer: what it made of the request, and the end. */
	int				 tag;
	struct timespec			 started;
	enum docker_http_error		 result;
	int				 connecting;	/* TCP, EINPROGRESS */
	int				 bounded;	/* DOCKER_HTTP_BOUNDED */
	int				 raw;		/* DOCKER_HTTP_RAW */
	docker_take_cb			 take_cb;	/* the body is taken */
	struct evbuffer			*take_rest;	/* read after the head */
};

static const char *const docker_http_errors[] = {
	[DOCKER_HTTP_OK] = "success",
	[DOCKER_HTTP_CONNECT] = "cannot connect to the Docker socket",
	[DOCKER_HTTP_IO] = "connection to Docker failed",
	[DOCKER_HTTP_PROTOCOL] = "malformed HTTP response from Docker",
	[DOCKER_HTTP_TOO_LARGE] = "Docker response too large",
	[DOCKER_HTTP_CANCELLED] = "request cancelled",
	[DOCKER_HTTP_TIMEOUT] = "Docker did not answer within the deadline",
	[DOCKER_HTTP_NOMEM] = "out of memory",
	[DOCKER_HTTP_BUSY] = "too many requests out to Docker",
};

const char *
docker_http_strerror(enum docker_http_error error)
{
	if ((unsigned int)error >= sizeof(docker_http_errors) /
	    sizeof(docker_http_errors[0]))
		return "unknown error";
	return docker_http_errors[error];
}

/* --- requests ---------------------------------------------------------- */

/* The read deadline on (armed) or off; writes always have theirs. */
static void
request_deadline(struct docker_request *req, int armed)
{
	struct timeval	 wtv = { DOCKER_HTTP_WRITE_TIMEOUT, 0 };

	bufferevent_set_timeouts(req->bev, armed ? &req->deadline : NULL,
	    &wtv);
}

/* The 101 came: the connection carries raw bytes both ways. */
static int
request_upgraded(const struct docker_request *req)
{
	return req->hijack &&
	    docker_http_parser_response(req->parser)->status == 101;
}

/* Requests allocated and not yet freed (DOCKER_HTTP_MAX_LIVE). */
static unsigned int	 live_requests;
/* A deadline passed and Docker has sent nothing since. */
static int		 docker_hung;

/* Who hears of a refused connect: the socket watch (docker_watch.c). */
static void		(*refused_cb)(void);
/* Who hears of every request, from its start to its end (the metrics). */
static const struct docker_http_observer *observer;

void
docker_http_observe(const struct docker_http_observer *o)
{
	observer = o;
}

static void
observe_start(struct docker_request *req, const struct docker_request_spec *s)
{
	/* Until an end says otherwise: the caller cancelled it. */
	req->result = DOCKER_HTTP_CANCELLED;
	if (observer == NULL)
		return;
	req->tag = observer->start(s->method, s->path);
	if (clock_gettime(CLOCK_MONOTONIC, &req->started) == -1)
		memset(&req->started, 0, sizeof(req->started));
}

static void
observe_end(struct docker_request *req)
{
	struct timespec	 now;
	double		 secs;

	if (observer == NULL || clock_gettime(CLOCK_MONOTONIC, &now) == -1)
		return;
	secs = (double)(now.tv_sec - req->started.tv_sec) +
	    (double)(now.tv_nsec - req->started.tv_nsec) / 1e9;
	observer->end(req->tag, req->parser != NULL ?
	    docker_http_parser_response(req->parser)->status : 0,
	    req->result, secs);
}

int
docker_http_hung(void)
{
	return docker_hung;
}

void
docker_http_on_refused(void (*cb)(void))
{
	refused_cb = cb;
}

static void
request_free(struct docker_request *req)
{
	live_requests--;
	observe_end(req);
	if (req->bev != NULL)
		bufferevent_free(req->bev);
	if (req->ev_defer != NULL)
		event_free(req->ev_defer);
	if (req->ev_connect != NULL)
		event_free(req->ev_connect);
	docker_http_parser_free(req->parser);
	if (req->take_rest != NULL)
		evbuffer_free(req->take_rest);
	free(req);
}

/* Calls the done callback once, then frees the request. */
static void
request_finish(struct docker_request *req, enum docker_http_error error)
{
	req->finished = 1;
	req->result = error;
	req->busy++;
	req->on_done(req, error, docker_http_parser_response(req->parser),
	    req->arg);
	req->busy--;
	request_free(req);
}

static int
request_body_fn(void *arg, const unsigned char *data, size_t len)
{
	struct docker_request	*req = arg;
	int			 r;

	/* Taken: what came with the head is kept for the taker. */
	if (req->take_cb != NULL)
		return evbuffer_add(req->take_rest, data, len) == -1 ? -1 : 1;
	r = req->on_body(req, data, len, req->arg);
	/* Cancelled inside the callback: stop; request_process frees. */
	if (req->cancelled)
		return 1;
	if (r != 0)
		return -1;
	return req->paused;
}

/*
 * The body is taken: the connection (no longer the bufferevent's to
 * close) and every body byte read so far go to the taker, and the
 * request ends without its done callback.
 */
static void
request_hand_over(struct docker_request *req)
{
	struct evbuffer	*in = bufferevent_get_input(req->bev);
	long long	 length, left = -1;
	size_t		 have;
	int		 fd;

	if (evbuffer_add_buffer(req->take_rest, in) == -1) {
		request_finish(req, DOCKER_HTTP_NOMEM);
		return;
	}
	have = evbuffer_get_length(req->take_rest);
	if (!docker_http_parser_identity(req->parser, &length)) {
		request_finish(req, DOCKER_HTTP_PROTOCOL);
		return;
	}
	if (length >= 0) {
		/* Bytes past the Content-Length: not HTTP we accept. */
		if ((unsigned long long)length < have) {
			request_finish(req, DOCKER_HTTP_PROTOCOL);
			return;
		}
		left = length - (long long)have;
	}
	fd = bufferevent_getfd(req->bev);
	bufferevent_disable(req->bev, EV_READ | EV_WRITE);
	bufferevent_setfd(req->bev, -1);
	req->finished = 1;
	req->result = DOCKER_HTTP_OK;
	req->busy++;
	req->take_cb(req, fd, req->take_rest, left, req->arg);
	req->busy--;
	request_free(req);
}

int
docker_request_take(struct docker_request *req, docker_take_cb cb)
{
	long long	 length;

	if (req == NULL || cb == NULL || !req->raw || req->busy == 0 ||
	    req->take_cb != NULL || req->finished || req->cancelled ||
	    !docker_http_parser_identity(req->parser, &length)) {
		errno = EINVAL;
		return -1;
	}
	if ((req->take_rest = evbuffer_new()) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	req->take_cb = cb;
	return 0;
}

/* Feed what has been read to the parser, unless paused. */
static void
request_process(struct docker_request *req)
{
	struct evbuffer			*in = bufferevent_get_input(req->bev);
	enum docker_http_parse_result	 r;
	unsigned char			*data;
	size_t				 len, used;

	while (!req->paused) {
		if ((len = evbuffer_get_contiguous_space(in)) == 0)
			break;
		if ((data = evbuffer_pullup(in, len)) == NULL) {
			request_finish(req, DOCKER_HTTP_NOMEM);
			return;
		}
		req->busy++;
		r = docker_http_parse(req->parser, data, len, &used);
		req->busy--;
		if (req->cancelled) {
			request_free(req);
			return;
		}
		evbuffer_drain(in, used);
		if (req->take_cb != NULL && r != DOCKER_HTTP_PARSE_ERROR) {
			request_hand_over(req);
			return;
		}
		if (req->upgrade && request_upgraded(req)) {
			req->upgrade = 0;
			/* The command sets the pace now, unless it is bounded. */
			if (req->bounded)
				request_deadline(req, 1);
			else
				bufferevent_set_timeouts(req->bev, NULL, NULL);
		}
		if (r == DOCKER_HTTP_PARSE_DONE) {
			request_finish(req, DOCKER_HTTP_OK);
			return;
		}
		if (r == DOCKER_HTTP_PARSE_ERROR) {
			request_finish(req,
			    docker_http_parser_error(req->parser));
			return;
		}
	}
	if (req->paused || !(req->eof || req->read_failed) ||
	    evbuffer_get_length(in) > 0)
		return;
	if (req->read_failed) {
		request_finish(req, DOCKER_HTTP_IO);
		return;
	}
	if (docker_http_parse_eof(req->parser) == DOCKER_HTTP_PARSE_DONE)
		request_finish(req, DOCKER_HTTP_OK);
	else
		request_finish(req, docker_http_parser_error(req->parser));
}

/*
 * While the socket has more, read it in large pieces (bev_read.h), up to
 * DOCKER_HTTP_SINGLE_READ per wake-up; a paused request reads nothing,
 * so the backpressure is unchanged.  An error is kept, and the request
 * fails once what came before it was handed over.
 */
static void
request_read_more(struct docker_request *req)
{
	int	 err;

	(void)bev_read_more(req->bev, DOCKER_HTTP_SINGLE_READ,
	    DOCKER_HTTP_READ_PIECE, &err);
	if (err != 0) {
		req->sys_errno = err;
		req->read_failed = 1;
	}
}

static void
request_readcb(struct bufferevent *bev, void *arg)
{
	struct docker_request	*req = arg;

	docker_hung = 0;
	if (!req->paused)
		request_read_more(req);
	request_process(req);
}

/* The half-close, once nothing queued is left to go before it. */
static void
request_shutdown_now(struct docker_request *req)
{
	if (req->shut_done || req->bev == NULL ||
	    evbuffer_get_length(bufferevent_get_output(req->bev)) > 0)
		return;
	req->shut_done = 1;
	if (shutdown(bufferevent_getfd(req->bev), SHUT_WR) == -1) {
		req->write_failed = 1;
		if (req->sys_errno == 0)
			req->sys_errno = errno;
	}
}

static void
request_writecb(struct bufferevent *bev, void *arg)
{
	struct docker_request	*req = arg;
	int			 writing;

	if (req->shut_wanted) {
		request_shutdown_now(req);
		return;
	}
	writing = (req->upload && !req->upload_ended) ||
	    request_upgraded(req);
	if (!writing || req->on_drain == NULL)
		return;
	req->busy++;
	req->on_drain(req, req->arg);
	req->busy--;
	if (req->cancelled)
		request_free(req);
}

static void
request_eventcb(struct bufferevent *bev, short what, void *arg)
{
	struct docker_request	*req = arg;
	int			 saved_errno = errno;

	if (what & BEV_EVENT_TIMEOUT) {
		/* Not a ping's short one: a loaded Docker may miss that. */
		if ((what & BEV_EVENT_READING) &&
		    req->deadline.tv_sec * 1000 >= DOCKER_DEADLINE_HUNG_MS)
			docker_hung = 1;
		request_finish(req, DOCKER_HTTP_TIMEOUT);
		return;
	}
	if (what & BEV_EVENT_WRITING) {
		/*
		 * Docker may answer and close before reading all we send
		 * (a 404 to an upload): keep reading for that answer.
		 */
		if (req->sys_errno == 0)
			req->sys_errno = (what & BEV_EVENT_ERROR) ?
			    saved_errno : EPIPE;
		req->write_failed = 1;
		evbuffer_drain(bufferevent_get_output(bev),
		    evbuffer_get_length(bufferevent_get_output(bev)));
		return;
	}
	if (what & BEV_EVENT_EOF) {
		req->eof = 1;
		request_process(req);
		return;
	}
	if (what & BEV_EVENT_ERROR) {
		req->sys_errno = saved_errno;
		request_finish(req, DOCKER_HTTP_IO);
	}
}

/* Runs from the loop: a connect error, or input kept while paused. */
static void
request_defer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct docker_request	*req = arg;

	if (req->connect_error != DOCKER_HTTP_OK) {
		request_finish(req, req->connect_error);
		return;
	}
	if (req->bev != NULL)
		request_process(req);
}

static int
request_check(const struct docker_request_spec *s)
{
	if (s == NULL ||
	    s->method == NULL || s->path == NULL || s->on_done == NULL ||
	    (s->flags & ~(DOCKER_HTTP_UPGRADE | DOCKER_HTTP_UPLOAD |
	    DOCKER_HTTP_LASTING | DOCKER_HTTP_BOUNDED |
	    DOCKER_HTTP_ANNOUNCE | DOCKER_HTTP_RAW)) != 0)
		return -1;
	if ((s->flags & DOCKER_HTTP_RAW) && ((s->flags & (DOCKER_HTTP_UPGRADE |
	    DOCKER_HTTP_UPLOAD)) || s->body_len > 0))
		return -1;
	if (s->flags & DOCKER_HTTP_UPLOAD)
		return s->content_type == NULL || s->body != NULL ||
		    s->body_len != 0 || s->upload_len < -1 ? -1 : 0;
	if (s->body_len > 0 && s->body == NULL)
		return -1;
	if (s->content_type == NULL && s->body_len > 0)
		return -1;
	if (s->body_len > LLONG_MAX)
		return -1;
	return 0;
}

/* The connect failed: reported from the loop, as DOCKER_HTTP_CONNECT. */
static void
request_refused(struct docker_request *req, int errnum)
{
	req->sys_errno = errnum;
	req->connect_error = DOCKER_HTTP_CONNECT;
	if (errnum == ECONNREFUSED && refused_cb != NULL)
		refused_cb();
}

/*
 * A TCP connect in progress ended (the socket is writable) or took longer
 * than the request may wait for Docker.  On success reading and writing
 * start, and what was queued meanwhile (the head, an upload's first
 * bytes) goes out.
 */
static void
request_connect_cb(evutil_socket_t fd, short what, void *arg)
{
	struct docker_request	*req = arg;
	socklen_t		 len = sizeof(int);
	int			 soerr = 0;

	req->connecting = 0;
	if (what & EV_TIMEOUT) {
		req->sys_errno = ETIMEDOUT;
		request_finish(req, DOCKER_HTTP_TIMEOUT);
		return;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) == -1)
		soerr = errno;
	if (soerr != 0) {
		request_refused(req, soerr);
		request_finish(req, req->connect_error);
		return;
	}
	if (bufferevent_enable(req->bev, req->paused ? EV_WRITE :
	    EV_READ | EV_WRITE) == -1) {
		req->sys_errno = errno;
		request_finish(req, DOCKER_HTTP_IO);
	}
}

static int
request_socket(const struct docker_endpoint *ep)
{
	int	 fd, one = 1;

	fd = socket(ep->family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1 || ep->family == AF_UNIX)
		return fd;
	/* Small writes (a head, a keystroke to a tty) are not held back. */
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Connect now.  A unix socket connects at once or not at all; TCP may
 * answer EINPROGRESS, and the request then waits for the socket to become
 * writable (request_connect_cb), no longer than its deadline.
 */
static int
request_connect(struct docker_request *req, const struct docker_endpoint *ep)
{
	int	 fd;

	if ((fd = request_socket(ep)) == -1)
		return -1;
	if (connect(fd, (const struct sockaddr *)&ep->addr, ep->len) == -1) {
		if (errno != EINPROGRESS || ep->family == AF_UNIX) {
			/* EAGAIN on a unix socket: Docker's backlog is full. */
			request_refused(req, errno);
			close(fd);
			return 0;
		}
		req->connecting = 1;
		if ((req->ev_connect = event_new(req->base, fd, EV_WRITE,
		    request_connect_cb, req)) == NULL) {
			close(fd);
			errno = ENOMEM;
			return -1;
		}
	}
	if ((req->bev = bufferevent_socket_new(req->base, fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		close(fd);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

/* Reading and writing start now, or once a TCP connect is through. */
static int
request_enable(struct docker_request *req)
{
	if (req->connecting)
		return event_add(req->ev_connect, &req->deadline);
	return bufferevent_enable(req->bev, EV_READ | EV_WRITE);
}

static void
request_setup(struct docker_request *req)
{
	bufferevent_setcb(req->bev, request_readcb, request_writecb,
	    request_eventcb, req);
	if (req->upload || req->hijack) {
		bufferevent_setwatermark(req->bev, EV_WRITE,
		    DOCKER_HTTP_UPLOAD_LOWAT, 0);
		/*
		 * libevent writes at most 16 KiB a wake-up: a 10 MiB upload
		 * would be 640 writes, and as many wake-ups of Docker's
		 * reader.  All that is queued goes in one.
		 */
		(void)bufferevent_set_max_single_write(req->bev,
		    DOCKER_HTTP_UPLOAD_HIWAT);
	}
	/* An upload's answer is due once its body is all sent. */
	request_deadline(req, !req->upload);
}

struct docker_request *
docker_request_new(struct event_base *base, const char *endpoint,
    const struct docker_request_spec *s)
{
	struct docker_request	*req = NULL;
	struct evbuffer		*head = NULL;
	struct docker_endpoint	 ep;
	long long		 clen;
	unsigned int		 ms;
	int			 pflags = 0, saved;

	if (base == NULL || request_check(s) == -1) {
		errno = EINVAL;
		return NULL;
	}
	if (docker_endpoint_parse(endpoint, &ep) == -1)
		return NULL;
	if (s->flags & DOCKER_HTTP_UPLOAD)
		clen = s->upload_len < 0 ? DOCKER_HTTP_CHUNKED : s->upload_len;
	else
		clen = (long long)s->body_len;

	/* Everything that can be checked is checked before the socket. */
	if ((head = evbuffer_new()) == NULL)
		goto fail;
	if (docker_http_request_head(head, s->method, s->path,
	    s->content_type, clen, (s->flags & DOCKER_HTTP_UPGRADE) |
	    ((s->flags & DOCKER_HTTP_RAW) ? DOCKER_HTTP_HEAD_1_0 : 0)) == -1)
		goto fail;
	if (s->body_len > 0 && evbuffer_add(head, s->body, s->body_len) == -1)
		goto nomem;

	if (strcmp(s->method, "HEAD") == 0)
		pflags |= DOCKER_HTTP_PARSE_HEAD;
	if (s->flags & DOCKER_HTTP_UPGRADE)
		pflags |= DOCKER_HTTP_PARSE_UPGRADE;
	if (s->flags & DOCKER_HTTP_ANNOUNCE)
		pflags |= DOCKER_HTTP_PARSE_ANNOUNCE;
	if (live_requests >= DOCKER_HTTP_MAX_LIVE ||
	    ((s->flags & DOCKER_HTTP_LASTING) &&
	    live_requests >= DOCKER_HTTP_MAX_LIVE - DOCKER_HTTP_RESERVE)) {
		errno = EAGAIN;
		goto fail;
	}
	if ((req = calloc(1, sizeof(*req))) == NULL)
		goto nomem;
	live_requests++;
	observe_start(req, s);
	req->base = base;
	req->on_body = s->on_body;
	req->on_drain = s->on_drain;
	req->on_done = s->on_done;
	req->arg = s->arg;
	ms = s->deadline_ms != 0 ? s->deadline_ms : DOCKER_DEADLINE_MS;
	if (docker_hung && ms > DOCKER_DEADLINE_HUNG_MS)
		ms = DOCKER_DEADLINE_HUNG_MS;
	req->deadline.tv_sec = ms / 1000;
	req->deadline.tv_usec = (ms % 1000) * 1000;
	req->upgrade = (s->flags & DOCKER_HTTP_UPGRADE) != 0;
	req->bounded = (s->flags & DOCKER_HTTP_BOUNDED) != 0;
	req->raw = (s->flags & DOCKER_HTTP_RAW) != 0;
	req->hijack = req->upgrade;
	if (s->flags & DOCKER_HTTP_UPLOAD) {
		req->upload = 1;
		req->upload_chunked = clen == DOCKER_HTTP_CHUNKED;
		req->upload_left = req->upload_chunked ? 0 : clen;
	}
	if ((req->parser = docker_http_parser_new(pflags, s->max_body,
	    s->on_body != NULL ? request_body_fn : NULL, req)) == NULL)
		goto nomem;
	if ((req->ev_defer = event_new(base, -1, 0, request_defer_cb,
	    req)) == NULL)
		goto nomem;
	if (request_connect(req, &ep) == -1)
		goto fail;
	if (req->bev == NULL) {
		/* The done callback never runs inside the caller's call. */
		event_active(req->ev_defer, EV_TIMEOUT, 1);
		evbuffer_free(head);
		return req;
	}
	request_setup(req);
	if (evbuffer_add_buffer(bufferevent_get_output(req->bev), head) == -1)
		goto nomem;
	if (request_enable(req) == -1)
		goto fail;
	evbuffer_free(head);
	return req;

nomem:
	errno = ENOMEM;
fail:
	saved = errno;
	if (head != NULL)
		evbuffer_free(head);
	if (req != NULL) {
		req->result = saved == ENOMEM ? DOCKER_HTTP_NOMEM :
		    DOCKER_HTTP_CONNECT;
		request_free(req);
	}
	errno = saved;
	return NULL;
}

struct docker_request *
docker_request_start(struct event_base *base, const char *endpoint,
    const char *method, const char *path, const char *content_type,
    const void *body, size_t body_len, size_t max_body, docker_body_cb on_body,
    docker_done_cb on_done, void *arg)
{
	struct docker_request_spec	 s;

	memset(&s, 0, sizeof(s));
	s.method = method;
	s.path = path;
	s.content_type = content_type;
	s.body = body;
	s.body_len = body_len;
	s.max_body = max_body;
	s.on_body = on_body;
	s.on_done = on_done;
	s.arg = arg;
	return docker_request_new(base, endpoint, &s);
}

void
docker_request_cancel(struct docker_request *req)
{
	if (req == NULL || req->finished || req->cancelled)
		return;
	if (req->busy > 0) {
		/* Inside one of our callbacks: the caller frees on return. */
		req->cancelled = 1;
		if (req->bev != NULL)
			bufferevent_disable(req->bev, EV_READ | EV_WRITE);
		return;
	}
	request_free(req);
}

void
docker_request_pause(struct docker_request *req)
{
	req->paused = 1;
	if (req->bev != NULL)
		bufferevent_disable(req->bev, EV_READ);
}

void
docker_request_resume(struct docker_request *req)
{
	if (!req->paused)
		return;
	req->paused = 0;
	if (req->bev == NULL || req->finished || req->cancelled)
		return;
	/* A connect in progress enables reading once it is through. */
	if (!req->eof && !req->connecting)
		bufferevent_enable(req->bev, EV_READ);
	/* What was read before the pause is handled from the loop. */
	event_active(req->ev_defer, EV_TIMEOUT, 1);
}

int
docker_request_write(struct docker_request *req, const void *data,
    size_t len)
{
	struct evbuffer	*out;
	int		 r;

	if (!req->upload || req->upload_ended || req->finished ||
	    req->cancelled) {
		errno = EINVAL;
		return -1;
	}
	if (req->bev == NULL || req->write_failed) {
		errno = EPIPE;
		return -1;
	}
	if (len == 0)
		return 0;
	if (!req->upload_chunked && len > req->upload_left) {
		errno = EMSGSIZE;
		return -1;
	}
	out = bufferevent_get_output(req->bev);
	if (len > UPLOAD_MAX_QUEUED ||
	    evbuffer_get_length(out) > UPLOAD_MAX_QUEUED - len) {
		errno = ENOBUFS;
		return -1;
	}
	if (req->upload_chunked) {
		r = evbuffer_add_printf(out, "%zx\r\n", len);
		if (r != -1)
			r = evbuffer_add(out, data, len);
		if (r != -1)
			r = evbuffer_add(out, "\r\n", 2);
	} else {
		r = evbuffer_add(out, data, len);
		req->upload_left -= len;
	}
	if (r == -1) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

int
docker_request_write_end(struct docker_request *req)
{
	if (!req->upload || req->upload_ended || req->finished ||
	    req->cancelled) {
		errno = EINVAL;
		return -1;
	}
	if (req->bev == NULL || req->write_failed) {
		errno = EPIPE;
		return -1;
	}
	if (!req->upload_chunked && req->upload_left != 0) {
		errno = EMSGSIZE;
		return -1;
	}
	if (req->upload_chunked &&
	    evbuffer_add(bufferevent_get_output(req->bev), "0\r\n\r\n", 5) ==
	    -1) {
		errno = ENOMEM;
		return -1;
	}
	req->upload_ended = 1;
	request_deadline(req, 1);
	return 0;
}

int
docker_request_write_raw(struct docker_request *req, const void *data,
    size_t len)
{
	struct evbuffer	*out;

	if (!request_upgraded(req) || req->shut_wanted || req->finished ||
	    req->cancelled) {
		errno = EINVAL;
		return -1;
	}
	if (req->bev == NULL || req->write_failed) {
		errno = EPIPE;
		return -1;
	}
	out = bufferevent_get_output(req->bev);
	if (len > UPLOAD_MAX_QUEUED ||
	    evbuffer_get_length(out) > UPLOAD_MAX_QUEUED - len) {
		errno = ENOBUFS;
		return -1;
	}
	if (len > 0 && evbuffer_add(out, data, len) == -1) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

int
docker_request_shutdown_write(struct docker_request *req)
{
	if (!request_upgraded(req) || req->shut_wanted || req->finished ||
	    req->cancelled) {
		errno = EINVAL;
		return -1;
	}
	if (req->bev == NULL || req->write_failed) {
		errno = EPIPE;
		return -1;
	}
	req->shut_wanted = 1;
	request_shutdown_now(req);
	return 0;
}

size_t
docker_request_pending(const struct docker_request *req)
{
	if (req->bev == NULL)
		return 0;
	return evbuffer_get_length(bufferevent_get_output(req->bev));
}

const struct docker_response *
docker_request_response(const struct docker_request *req)
{
	return docker_http_parser_response(req->parser);
}

int
docker_request_errno(const struct docker_request *req)
{
	return req->sys_errno;
}
