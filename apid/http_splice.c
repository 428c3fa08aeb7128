/*
 * A Content-Length body into a pipe with splice(2) (http_body_splice):
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
