/*
 * One client connection, as OpenBSD httpd's struct client: a
 * bufferevent, the request being served, and one timer whose meaning
 * follows the state.
 *
 *	WAITING --first byte--> HEAD --whole head--> ACTIVE --last reply-->
 *	WAITING (kept alive; the next pipelined head is read from what is
 *	buffered) or CLOSING --written--> LINGER --EOF or quiet--> freed.
 *
 * Timers: a new or kept-alive connection that sends nothing is closed
 * after idle_timeout (head_timeout for a new one); a head must be whole
 * within head_timeout of its first byte, however slowly it trickles; a
 * body must move at least once per body_timeout.  While a route works
 * nothing is timed but the reply: bufferevent's write timeout closes a
 * connection whose output has not moved for send_timeout, so a slow
 * reader of a stream is never cut off while it keeps reading.
 *
 * Reading goes on while a request is served (up to a watermark), so
 * that a client that hangs up is noticed at once: its request is
 * detached (req->conn = NULL) and its route told, and the route's last
 * reply call then only frees it.  A connection closed after a reply is
 * half-closed and read for a while ("lingering close"), so that a client
 * still sending a body it was refused reads our answer instead of a
 * reset.
 */
#include <sys/ioctl.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "apid.h"
#include "bev_read.h"
#include "log.h"

/* Input read ahead of the parser: a whole head, and some body. */
#define CONN_INPUT_MAX		(HTTP_HEAD_MAX + 64 * 1024)
/* A route is told the output has drained when it is this small. */
#define CONN_OUTPUT_LOW		(16 * 1024)
/* Most bytes written at once from outside the bufferevent, as it does. */
#define CONN_WRITE_MAX		(16 * 1024)
/* What a lingering close waits for: quiet, then at most in all. */
#define LINGER_QUIET_SEC	2
#define LINGER_MAX_SEC		30
/* Body bytes fed to the parser at a time. */
#define FEED_MAX		(64 * 1024)

static void	conn_read_cb(struct bufferevent *, void *);
static void	conn_write_cb(struct bufferevent *, void *);
static void	conn_event_cb(struct bufferevent *, short, void *);
static void	conn_timer_cb(evutil_socket_t, short, void *);
static void	conn_next_cb(evutil_socket_t, short, void *);

static void
conn_sheddable(struct http_conn *c, int on)
{
	if (on == c->sheddable)
		return;
	if (on)
		TAILQ_INSERT_TAIL(&c->srv->idle, c, idle_entry);
	else
		TAILQ_REMOVE(&c->srv->idle, c, idle_entry);
	c->sheddable = on;
}

static void
conn_timer(struct http_conn *c, const struct timeval *tv)
{
	if (tv == NULL)
		evtimer_del(c->timer);
	else
		evtimer_add(c->timer, tv);
}

struct http_conn *
http_conn_new(struct http_server *srv, int fd)
{
	struct http_conn	*c;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->srv = srv;
	c->fd = fd;
	c->sink = -1;
	c->source = -1;
	c->out_queued = -1;
	if ((c->bev = bufferevent_socket_new(srv->base, fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL ||
	    (c->timer = evtimer_new(srv->base, conn_timer_cb, c)) == NULL ||
	    (c->next = event_new(srv->base, -1, 0, conn_next_cb, c)) == NULL) {
		if (c->bev != NULL)
			bufferevent_free(c->bev);
		if (c->timer != NULL)
			event_free(c->timer);
		free(c);
		return NULL;
	}
	bufferevent_setcb(c->bev, conn_read_cb, conn_write_cb, conn_event_cb,
	    c);
	bufferevent_setwatermark(c->bev, EV_READ, 0, CONN_INPUT_MAX);
	bufferevent_setwatermark(c->bev, EV_WRITE, CONN_OUTPUT_LOW, 0);
	/* libevent 2.1 reads 4 KiB at a time unless told: uploads are big. */
	(void)bufferevent_set_max_single_read(c->bev, FEED_MAX);
	bufferevent_set_timeouts(c->bev, NULL, &srv->settings.send_timeout);
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
	TAILQ_INSERT_TAIL(&srv->conns, c, entry);
	srv->nconns++;
	c->state = CONN_WAITING;
	conn_sheddable(c, 1);
	conn_timer(c, &srv->settings.head_timeout);
	return c;
}

/*
 * The request goes on without its client: told once, here; from now on
 * reply calls only free it.
 */
static void
conn_detach(struct http_conn *c)
{
	struct http_request	*req = c->req;
	http_notify_cb		 gone;

	if (req == NULL)
		return;
	/* The pipe closes before the route hears of the body's end. */
	http_conn_splice_stop(c);
	/* A reply's pipe is the route's: its events go before it is told. */
	http_conn_source_stop(c);
	c->req = NULL;
	req->conn = NULL;
	/*
	 * body_end may give the request its last reply, which frees it:
	 * held until then, and a route done with it is not told it is gone.
	 */
	if (req->body_state == BODY_READING) {
		req->body_state = BODY_FAILED;
		req->holds++;
		if (req->body_end != NULL)
			req->body_end(req->body_arg, 0);
		req->holds--;
		if (req->free_pending) {
			http_request_free(req);
			return;
		}
	}
	if ((gone = req->gone) != NULL) {
		req->gone = NULL;
		gone(req->gone_arg);
	}
}

void
http_conn_free(struct http_conn *c)
{
	struct http_server	*srv = c->srv;

	conn_detach(c);
	http_conn_splice_stop(c);
	http_conn_source_stop(c);
	conn_sheddable(c, 0);
	TAILQ_REMOVE(&srv->conns, c, entry);
	srv->nconns--;
	event_free(c->timer);
	event_free(c->next);
	if (c->bev != NULL)
		bufferevent_free(c->bev);
	free(c);
	http_server_conn_gone(srv);
}

void
http_conn_shed(struct http_conn *c)
{
	log_debug("connection %d shed after %d requests", c->fd, c->served);
	c->srv->shed++;
	http_conn_free(c);
}

void
http_conn_write(struct http_conn *c, const void *data, size_t len)
{
	if (evbuffer_add(bufferevent_get_output(c->bev), data, len) == -1)
		log_warnx("connection %d: out of memory for output", c->fd);
}

void
http_conn_write_buffer(struct http_conn *c, struct evbuffer *buf)
{
	if (evbuffer_add_buffer(bufferevent_get_output(c->bev), buf) == -1)
		log_warnx("connection %d: out of memory for output", c->fd);
}

/* Nothing more will be answered: half-close, then read what still comes. */
static void
conn_linger(struct http_conn *c)
{
	struct timeval	 now, max = { LINGER_MAX_SEC, 0 };
	struct timeval	 quiet = { LINGER_QUIET_SEC, 0 };

	c->state = CONN_LINGER;
	conn_sheddable(c, 1);
	if (shutdown(c->fd, SHUT_WR) == -1) {
		http_conn_free(c);
		return;
	}
	evutil_gettimeofday(&now, NULL);
	timeradd(&now, &max, &c->linger_end);
	evbuffer_drain(bufferevent_get_input(c->bev),
	    evbuffer_get_length(bufferevent_get_input(c->bev)));
	bufferevent_enable(c->bev, EV_READ);
	conn_timer(c, &quiet);
}

void
http_conn_close(struct http_conn *c)
{
	c->state = CONN_CLOSING;
	conn_timer(c, NULL);
	if (evbuffer_get_length(bufferevent_get_output(c->bev)) == 0)
		conn_linger(c);
}

/*
 * The request's last reply is queued (and the request about to be
 * freed): keep the connection for the next one, or close it.
 */
void
http_conn_request_done(struct http_conn *c, int keep)
{
	/* Answered before its body was whole: the rest is not wanted. */
	http_conn_splice_stop(c);
	c->req = NULL;
	c->served++;
	if (!keep) {
		http_conn_close(c);
		return;
	}
	c->state = CONN_WAITING;
	conn_sheddable(c, 1);
	conn_timer(c, &c->srv->settings.idle_timeout);
	bufferevent_setwatermark(c->bev, EV_READ, 0, CONN_INPUT_MAX);
	bufferevent_enable(c->bev, EV_READ);
	/* A pipelined head may be buffered: on the loop's next turn. */
	if (evbuffer_get_length(bufferevent_get_input(c->bev)) > 0)
		event_active(c->next, EV_TIMEOUT, 1);
}

/* RFC 9112 §2.2: empty lines before a request line are ignored. */
static void
skip_empty_lines(struct evbuffer *in)
{
	unsigned char	*p;

	while (evbuffer_get_length(in) >= 2 &&
	    (p = evbuffer_pullup(in, 2)) != NULL && p[0] == '\r' &&
	    p[1] == '\n')
		evbuffer_drain(in, 2);
}

/* The head's length with its empty line, 0 if not all here, -1 too long. */
static ssize_t
head_length(struct evbuffer *in)
{
	struct evbuffer_ptr	 end;
	size_t			 len = evbuffer_get_length(in);

	end = evbuffer_search(in, "\r\n\r\n", 4, NULL);
	if (end.pos == -1)
		return len > HTTP_HEAD_MAX ? -1 : 0;
	if ((size_t)end.pos + 4 > HTTP_HEAD_MAX)
		return -1;
	return end.pos + 4;
}

static void
conn_start_request(struct http_conn *c, char *raw, size_t len)
{
	struct http_request	*req;

	if ((req = http_request_new(c)) == NULL) {
		free(raw);
		http_reply_refusal(c, 500, "out of memory");
		return;
	}
	if (http_head_parse(&req->head, raw, len) == -1) {
		http_reply_refusal(c, req->head.status, req->head.error);
		req->status = req->head.status;	/* for request_done */
		http_request_free(req);
		return;
	}
	c->state = CONN_ACTIVE;
	c->req = req;
	conn_sheddable(c, 0);
	conn_timer(c, NULL);
	if (http_request_prepare(req) == -1) {
		c->req = NULL;
		http_reply_refusal(c, 400, "malformed request target");
		req->status = 400;
		http_request_free(req);
		return;
	}
	c->srv->request_cb(req);
}

static void
conn_read_head(struct http_conn *c)
{
	struct evbuffer	*in = bufferevent_get_input(c->bev);
	ssize_t		 len;
	char		*raw;

	if (c->state == CONN_WAITING) {
		skip_empty_lines(in);
		if (evbuffer_get_length(in) == 0)
			return;
		c->state = CONN_HEAD;
		conn_timer(c, &c->srv->settings.head_timeout);
	}
	if ((len = head_length(in)) == 0)
		return;
	if (len == -1) {
		http_reply_refusal(c, 431, "Request Header Fields Too Large");
		return;
	}
	if ((raw = malloc(len + 1)) == NULL) {
		http_reply_refusal(c, 500, "out of memory");
		return;
	}
	evbuffer_remove(in, raw, len);
	raw[len] = '\0';
	conn_start_request(c, raw, len);
}

static void
conn_body_data(void *arg, const char *data, size_t len)
{
	struct http_request	*req = arg;

	if (req->body_state != BODY_READING)
		return;
	if (req->head.body_bytes + len > req->body_max) {
		req->body_state = BODY_FAILED;
		return;
	}
	req->body_data(req->body_arg, data, len);
}

/* The body's framing broke: a 400, and the route loses its client. */
static void
conn_body_broken(struct http_conn *c, const char *why)
{
	int	 started = c->req->reply_started;

	/* The route may finish (and free) the request while it is told. */
	conn_detach(c);
	if (!started)
		http_reply_refusal(c, 400, why);
	else
		http_conn_close(c);
}

void
http_conn_body_timer(struct http_conn *c)
{
	conn_timer(c, &c->srv->settings.body_timeout);
}

void
http_conn_body_end(struct http_conn *c, int ok)
{
	struct http_request	*req = c->req;

	conn_timer(c, NULL);
	req->body_state = ok ? BODY_DONE : BODY_FAILED;
	req->body_end(req->body_arg, ok);
}

/*
 * Feed buffered body bytes to the parser while the route takes them.
 * The route may answer (and free the request) from its callbacks, so
 * c->req is looked at again after each.
 */
void
http_conn_feed_body(struct http_conn *c)
{
	struct evbuffer		*in = bufferevent_get_input(c->bev);
	struct http_request	*req;
	ssize_t			 n;
	size_t			 len;
	const char		*p;

	/* A spliced body moves by itself (http_splice.c). */
	if (c->sink != -1)
		return;
	while ((req = c->req) != NULL && req->body_state == BODY_READING &&
	    !req->body_paused) {
		if ((len = evbuffer_get_contiguous_space(in)) > FEED_MAX)
			len = FEED_MAX;
		p = len > 0 ? (char *)evbuffer_pullup(in, len) : "";
		n = http_body_feed(&req->head, p, len, conn_body_data, req);
		if (n == -1) {
			conn_body_broken(c, req->head.error);
			return;
		}
		evbuffer_drain(in, n);
		if (req->body_state == BODY_FAILED)
			http_conn_body_end(c, 0);
		else if (req->head.body_done)
			http_conn_body_end(c, 1);
		else if (n == 0 || len == 0)
			break;
	}
	if ((req = c->req) != NULL && req->body_state == BODY_READING)
		conn_timer(c, &c->srv->settings.body_timeout);
}

/*
 * A body: read on in large pieces (bev_read.h) up to the input's bound,
 * unless the route paused it.  An error is the bufferevent's to find on
 * its next read (an end of file after a reset): the body is cut short
 * either way.
 */
static void
conn_read_body_more(struct http_conn *c)
{
	size_t	 have = evbuffer_get_length(bufferevent_get_input(c->bev));
	int	 err;

	if (c->req->body_paused || have >= CONN_INPUT_MAX)
		return;
	(void)bev_read_more(c->bev, CONN_INPUT_MAX - have, FEED_MAX, &err);
}

static void
conn_read_cb(struct bufferevent *bev, void *arg)
{
	struct http_conn	*c = arg;
	struct evbuffer		*in = bufferevent_get_input(bev);
	struct timeval		 now, quiet = { LINGER_QUIET_SEC, 0 };

	switch (c->state) {
	case CONN_WAITING:
	case CONN_HEAD:
		conn_read_head(c);
		break;
	case CONN_ACTIVE:
		/* Else it waits: a pipelined request, read when its turn comes. */
		if (c->req != NULL && c->req->body_state == BODY_READING) {
			conn_read_body_more(c);
			http_conn_feed_body(c);
		}
		break;
	case CONN_CLOSING:
		evbuffer_drain(in, evbuffer_get_length(in));
		break;
	case CONN_LINGER:
		evbuffer_drain(in, evbuffer_get_length(in));
		evutil_gettimeofday(&now, NULL);
		if (timercmp(&now, &c->linger_end, >=))
			http_conn_free(c);
		else
			conn_timer(c, &quiet);
		break;
	case CONN_TAKEN:
		break;
	}
}

/* What follows bytes going out, whoever wrote them. */
static void
conn_written(struct http_conn *c)
{
	struct http_request	*req = c->req;
	http_notify_cb		 drained;
	size_t			 left;

	c->out_queued = -1;		/* it moved: a timeout starts afresh */
	left = evbuffer_get_length(bufferevent_get_output(c->bev));
	if (c->state == CONN_CLOSING && left == 0) {
		conn_linger(c);
		return;
	}
	if (c->state == CONN_ACTIVE && req != NULL && left <= CONN_OUTPUT_LOW &&
	    (drained = req->drained) != NULL) {
		req->drained = NULL;
		drained(req->drained_arg);
	}
}

static void
conn_write_cb(struct bufferevent *bev, void *arg)
{
	conn_written(arg);
}

/*
 * Write what is queued now, instead of waiting a turn of the loop for
 * the socket to be reported writable (it nearly always is): a reply
 * costs one writev, not two epoll changes and a wake-up more.  What
 * does not fit waits for bufferevent's own writing.
 */
void
http_conn_flush(struct http_conn *c)
{
	struct evbuffer	*out = bufferevent_get_output(c->bev);

	if (evbuffer_get_length(out) == 0 || c->state == CONN_LINGER)
		return;
	if (http_conn_write_now(c) > 0)
		conn_written(c);
}

/*
 * One write of the output's front to the socket, from outside the
 * bufferevent.  A socket bufferevent keeps that front frozen except in
 * its own write callback, so that nothing else drains it, and a write
 * then fails without a word (which made every flush a no-op until this
 * was found).  This process has one thread: unfrozen for the one write.
 * At most what bufferevent writes at once (libevent 2.1's 16 KiB): a
 * socket is reported writable again only once a good part of its buffer
 * is free (a quarter of it, for a Unix socket), so filling it whole would
 * leave a slow reader's reply unmoved, and timed out, where bufferevent's
 * own writes keep moving.  What evbuffer_write_atmost returns, errno kept.
 */
int
http_conn_write_now(struct http_conn *c)
{
	struct evbuffer	*out = bufferevent_get_output(c->bev);
	int		 n, saved;

	evbuffer_unfreeze(out, 1);
	n = evbuffer_write_atmost(out, c->fd, CONN_WRITE_MAX);
	saved = errno;
	evbuffer_freeze(out, 1);
	errno = saved;
	return n;
}

/*
 * The write timed out.  The kernel reports a socket writable only once
 * a good part of its buffer is free (a spliced reply fills all of it),
 * so a reader that keeps reading slowly may not make it writable within
 * send_timeout: its queue going down (TIOCOUTQ) since the last timeout
 * is movement too, timed again.  The first timeout has nothing to
 * compare with, so a reader that stopped goes after one or two periods.
 */
static int
conn_output_moving(struct http_conn *c)
{
	int	 queued;

	if (ioctl(c->fd, TIOCOUTQ, &queued) == -1 ||
	    (c->out_queued != -1 && queued >= c->out_queued))
		return 0;
	c->out_queued = queued;
	bufferevent_enable(c->bev, EV_WRITE);
	return 1;
}

static void
conn_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct http_conn	*c = arg;

	if ((what & BEV_EVENT_TIMEOUT) && (what & BEV_EVENT_WRITING) &&
	    conn_output_moving(c))
		return;
	if (what & BEV_EVENT_TIMEOUT)
		log_debug("connection %d: the reply did not move for %lld s",
		    c->fd, (long long)c->srv->settings.send_timeout.tv_sec);
	else if ((what & BEV_EVENT_ERROR) && c->state != CONN_LINGER)
		log_debug("connection %d: %s", c->fd, strerror(errno));
	http_conn_free(c);
}

static void
conn_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct http_conn	*c = arg;

	switch (c->state) {
	case CONN_HEAD:
		http_reply_refusal(c, 408, "the request head took too long");
		break;
	case CONN_ACTIVE:
		/* Only a body is timed while a request is served. */
		conn_detach(c);
		http_reply_refusal(c, 408, "the request body stopped coming");
		break;
	default:
		http_conn_free(c);
		break;
	}
}

static void
conn_next_cb(evutil_socket_t fd, short what, void *arg)
{
	struct http_conn	*c = arg;

	if (c->state == CONN_WAITING)
		conn_read_head(c);
	else if (c->state == CONN_ACTIVE && c->req != NULL &&
	    c->req->body_state == BODY_READING)
		http_conn_feed_body(c);
}

/* Body reading resumes on the loop's next turn (see http_body.c). */
void
http_conn_kick(struct http_conn *c)
{
	event_active(c->next, EV_TIMEOUT, 1);
}

/* Hand the socket to a route (Upgrade); the connection is gone. */
struct bufferevent *
http_conn_take(struct http_conn *c)
{
	struct bufferevent	*bev = c->bev;

	c->req = NULL;
	c->bev = NULL;
	c->state = CONN_TAKEN;
	c->srv->taken++;
	bufferevent_setcb(bev, NULL, NULL, NULL, NULL);
	bufferevent_set_timeouts(bev, NULL, NULL);
	http_conn_free(c);
	return bev;
}
