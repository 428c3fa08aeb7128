/*
 * splice(2) between the client's socket and a pipe, both ways.
 *
 * A Content-Length body into a pipe (http_body_splice):
 * an upload's bytes move from the client's socket into the pipe the
 * archive worker reads, never through this process's memory and never
 * through the bufferevent's callbacks, which cost more than the copy.
 * What the input already holds (read with the head) goes first,
 * written from the evbuffer.  The bufferevent does not read meanwhile;
 * once the body is whole it reads again, so that a client that hangs
 * up while its answer is made is noticed as before.
 *
 * The connection owns the pipe from the start: it closes it before it
 * tells the route, once, by the end callback: ok when every byte of the
 * body is in it; not ok when the client left or reset (the connection
 * is then freed, as for a streamed body), when the pipe's reader went
 * away (req->sink_broken set), or when the body stopped coming for
 * body_timeout (answered 408).
 *
 * A reply's bytes from a pipe (http_reply_splice): a download's file
 * moves from the pipe the tar job fills to the socket, once what the
 * output buffer holds (the head, the first bytes) is written.  The pipe
 * stays the route's.  The bufferevent still reads, so a client that
 * hangs up is noticed as before; its own write timeout only runs while
 * it has bytes to write, so a socket that takes nothing for
 * send_timeout is timed here (source_wait_socket).
 */
#include <sys/socket.h>
#include <sys/ioctl.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "apid.h"
#include "log.h"

/* Most bytes one splice(2) asks for, and the most moved per wake-up. */
#define SPLICE_PIECE	(1024 * 1024)
#define SPLICE_TURN	(4 * SPLICE_PIECE)

static void	splice_step(struct http_conn *);

static void
splice_ready(evutil_socket_t fd, short what, void *arg)
{
	splice_step(arg);
}

/* Done with the pipe: closed, and the bufferevent reads again. */
void
http_conn_splice_stop(struct http_conn *c)
{
	if (c->sink == -1)
		return;
	event_free(c->sink_sock);
	event_free(c->sink_pipe);
	c->sink_sock = c->sink_pipe = NULL;
	close(c->sink);
	c->sink = -1;
	if (c->bev != NULL)
		bufferevent_enable(c->bev, EV_READ);
}

/*
 * splice(2) and write(2) said EAGAIN: wait for the side that is stuck.
 * Bytes pending on the socket mean the pipe is full (the reader's pace,
 * as a paused body's); none, that the client has sent nothing more.
 * The body's timer runs either way, as for a streamed body.
 */
static void
splice_wait(struct http_conn *c)
{
	int	 pending = 0;

	if (evbuffer_get_length(bufferevent_get_input(c->bev)) > 0 ||
	    (ioctl(c->fd, FIONREAD, &pending) == 0 && pending > 0))
		event_add(c->sink_pipe, NULL);
	else
		event_add(c->sink_sock, NULL);
	http_conn_body_timer(c);
}

/* One move into the pipe: the input's bytes first, then the socket's. */
static ssize_t
splice_move(struct http_conn *c, uint64_t left)
{
	struct evbuffer	*in = bufferevent_get_input(c->bev);
	size_t		 have = evbuffer_get_length(in), want = SPLICE_PIECE;

	if (have > 0)
		return evbuffer_write_atmost(in, c->sink,
		    left < have ? (ev_ssize_t)left : (ev_ssize_t)have);
	if (left < want)
		want = (size_t)left;
	return splice(c->fd, NULL, c->sink, NULL, want,
	    SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
}

/* The pipe's reader went away: the route's job says why. */
static void
splice_broken(struct http_conn *c)
{
	c->req->sink_broken = 1;
	http_conn_splice_stop(c);
	http_conn_body_end(c, 0);
}

static void
splice_step(struct http_conn *c)
{
	struct http_head	*h = &c->req->head;
	size_t			 moved = 0;
	ssize_t			 n;

	while (h->body_bytes < h->length) {
		if (moved >= SPLICE_TURN) {
			/*
			 * Others get a turn of the loop too.  The body moved,
			 * so its timer starts again, as a streamed body's does
			 * on each piece (else a client always ahead of us,
			 * never met with EAGAIN, would time out mid-body).
			 */
			http_conn_body_timer(c);
			event_active(c->sink_sock, EV_READ, 1);
			return;
		}
		if ((n = splice_move(c, h->length - h->body_bytes)) > 0) {
			h->body_bytes += (uint64_t)n;
			moved += (size_t)n;
		} else if (n == -1 && errno == EINTR)
			continue;
		else if (n == -1 && errno == EAGAIN) {
			splice_wait(c);
			return;
		} else if (n == -1 && errno == EPIPE) {
			splice_broken(c);
			return;
		} else {
			/* End of file or a reset before the body's end. */
			if (n == -1)
				log_debug("connection %d: %s", c->fd,
				    strerror(errno));
			http_conn_free(c);
			return;
		}
	}
	h->body_done = 1;
	http_conn_splice_stop(c);
	http_conn_body_end(c, 1);
}

/*
 * Start moving the body of req (BODY_READING, a Content-Length body)
 * into fd, a non-blocking pipe the connection now owns.  0, or -1 with
 * fd still the caller's (no memory).
 */
int
http_conn_splice(struct http_conn *c, int fd)
{
	if ((c->sink_sock = event_new(c->srv->base, c->fd, EV_READ,
	    splice_ready, c)) == NULL ||
	    (c->sink_pipe = event_new(c->srv->base, fd, EV_WRITE,
	    splice_ready, c)) == NULL) {
		if (c->sink_sock != NULL)
			event_free(c->sink_sock);
		c->sink_sock = NULL;
		return -1;
	}
	c->sink = fd;
	bufferevent_disable(c->bev, EV_READ);
	splice_step(c);
	return 0;
}

/* --- a reply's bytes from a pipe ----------------------------------------- */

static void	source_step(struct http_conn *);

/*
 * The socket is full: wait until it has room, for send_timeout at most.
 * A splice fills all of its buffer, and the kernel reports it writable
 * only once a good part of that is free again (a third for TCP, three
 * quarters for a Unix socket), so a reader that keeps reading slowly
 * may not get there in time: the timer starts again while the socket's
 * queue goes down.
 */
static void
source_wait_socket(struct http_conn *c)
{
	if (ioctl(c->fd, TIOCOUTQ, &c->source_queued) == -1)
		c->source_queued = -1;
	event_add(c->source_sock, &c->srv->settings.send_timeout);
}

/* Timed out: did the reader take anything meanwhile? */
static int
source_moving(struct http_conn *c)
{
	int	 queued;

	if (c->source_queued == -1 ||
	    ioctl(c->fd, TIOCOUTQ, &queued) == -1 ||
	    queued >= c->source_queued)
		return 0;
	c->source_queued = queued;
	event_add(c->source_sock, &c->srv->settings.send_timeout);
	return 1;
}

static void
source_ready(evutil_socket_t fd, short what, void *arg)
{
	struct http_conn	*c = arg;

	if ((what & EV_TIMEOUT) && source_moving(c))
		return;
	if (what & EV_TIMEOUT) {
		log_debug("connection %d: the reply did not move for %lld s",
		    c->fd, (long long)c->srv->settings.send_timeout.tv_sec);
		http_conn_free(c);
		return;
	}
	source_step(c);
}

/* Done with the pipe, which stays the route's: no callback. */
void
http_conn_source_stop(struct http_conn *c)
{
	if (c->source == -1)
		return;
	event_free(c->source_sock);
	event_free(c->source_pipe);
	c->source_sock = c->source_pipe = NULL;
	c->source = -1;
}

/* The bytes went, or the pipe ended first: the route says what follows. */
static void
source_end(struct http_conn *c)
{
	void	(*done)(void *, uint64_t) = c->source_end;

	http_conn_source_stop(c);
	done(c->source_arg, c->source_moved);
}

/*
 * EAGAIN: a pipe with bytes in it means the socket is full, timed as
 * the bufferevent times its own output; an empty one waits for the job.
 */
static void
source_wait(struct http_conn *c)
{
	int	 pending = 0;

	if (ioctl(c->source, FIONREAD, &pending) == 0 && pending > 0)
		source_wait_socket(c);
	else
		event_add(c->source_pipe, NULL);
}

/* One move to the socket: what the output holds first, then the pipe's. */
static ssize_t
source_move(struct http_conn *c, int *from_pipe)
{
	struct evbuffer	*out = bufferevent_get_output(c->bev);
	size_t		 want = SPLICE_PIECE;

	*from_pipe = evbuffer_get_length(out) == 0;
	if (!*from_pipe)
		return http_conn_write_now(c);
	if (c->source_left < want)
		want = (size_t)c->source_left;
	return splice(c->source, NULL, c->fd, NULL, want,
	    SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
}

/* Moved n bytes of the pipe's: the reply's count, as a chunk's. */
static void
source_count(struct http_conn *c, size_t n)
{
	c->source_left -= n;
	c->source_moved += n;
	c->req->length_left -= (int64_t)n;
	c->req->out_bytes += n;
}

static void
source_step(struct http_conn *c)
{
	size_t		 moved = 0;
	ssize_t		 n;
	int		 from_pipe;

	while (c->source_left > 0) {
		if (moved >= SPLICE_TURN) {
			/* Others get a turn of the loop too. */
			event_active(c->source_sock, EV_WRITE, 1);
			return;
		}
		n = source_move(c, &from_pipe);
		if (n > 0) {
			if (from_pipe)
				source_count(c, (size_t)n);
			moved += (size_t)n;
		} else if (n == -1 && errno == EINTR)
			continue;
		else if (n == -1 && errno == EAGAIN) {
			if (from_pipe)
				source_wait(c);
			else
				source_wait_socket(c);
			return;
		} else if (n == 0 && from_pipe)
			break;		/* the pipe ended first */
		else if (n == -1 && from_pipe && errno != EPIPE &&
		    errno != ECONNRESET) {
			log_warn("connection %d: splice from the pipe", c->fd);
			break;
		} else {
			/* The client reset or left. */
			log_debug("connection %d: %s", c->fd,
			    n == -1 ? strerror(errno) : "closed");
			http_conn_free(c);
			return;
		}
	}
	source_end(c);
}

int
http_reply_splice(struct http_request *req, int fd, uint64_t n,
    void (*done)(void *, uint64_t), void *arg)
{
	struct http_conn	*c = req->conn;

	if (c == NULL || !req->reply_started || req->chunked ||
	    req->until_close || req->broken || req->length_left < 0 ||
	    n > (uint64_t)req->length_left || c->source != -1)
		return -1;
	if ((c->source_sock = event_new(c->srv->base, c->fd, EV_WRITE,
	    source_ready, c)) == NULL ||
	    (c->source_pipe = event_new(c->srv->base, fd, EV_READ,
	    source_ready, c)) == NULL) {
		if (c->source_sock != NULL)
			event_free(c->source_sock);
		c->source_sock = NULL;
		return -1;
	}
	c->source = fd;
	c->source_left = n;
	c->source_moved = 0;
	c->source_end = done;
	c->source_arg = arg;
	/* On the loop's next turn: done never runs before this returns. */
	event_active(c->source_sock, EV_WRITE, 1);
	return 0;
}

void
http_reply_splice_cancel(struct http_request *req)
{
	if (req->conn != NULL)
		http_conn_source_stop(req->conn);
}
