/*
 * libevent glue for an imsg channel (see peer.h).  A message that cannot be
 * parsed, or a failing socket, is fatal: our peers are our own processes,
 * and one that sends garbage has been compromised or has crashed.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "peer.h"

static void	peer_event_cb(evutil_socket_t, short, void *);
static void	peer_flush_cb(evutil_socket_t, short, void *);

/* EV_WRITE only for output a write found the socket full for. */
static void
peer_update_event(struct peer *p)
{
	short	 events = EV_READ;

	if (imsgbuf_pending(&p->ibuf) && !p->flushing)
		events |= EV_WRITE;
	if (events == p->events && event_initialized(&p->ev))
		return;
	if (event_initialized(&p->ev))
		event_del(&p->ev);
	p->events = events;
	event_assign(&p->ev, p->base, p->ibuf.sock, events | EV_PERSIST,
	    peer_event_cb, p);
	if (event_add(&p->ev, NULL) == -1)
		fatalx("%s: event_add failed", __func__);
}

void
peer_init(struct peer *p, struct event_base *base, int sock, const char *name,
    peer_dispatch_cb dispatch, peer_closed_cb closed, void *arg)
{
	memset(p, 0, sizeof(*p));
	imsgbuf_init(&p->ibuf, sock);
	p->base = base;
	p->name = name;
	p->dispatch = dispatch;
	p->closed = closed;
	p->arg = arg;
	event_assign(&p->ev_flush, base, -1, 0, peer_flush_cb, p);
	peer_update_event(p);
}

void
peer_stop(struct peer *p)
{
	if (event_initialized(&p->ev))
		event_del(&p->ev);
	if (event_initialized(&p->ev_flush))
		event_del(&p->ev_flush);
	p->flushing = 0;
	p->stopped = 1;
	imsgbuf_clear(&p->ibuf);
}

/* Returns -1 when the peer went away (closed() was called), else 0. */
static int
peer_read(struct peer *p)
{
	struct imsg	 imsg;
	ssize_t		 n;
	int		 r;

	n = imsgbuf_read(&p->ibuf);
	if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return 0;
	/* A peer that died with our bytes unread resets the connection. */
	if (n == 0 || (n == -1 && errno == ECONNRESET)) {
		p->closed(p);
		return -1;
	}
	if (n == -1)
		fatal("read from %s", p->name);
	while ((r = imsg_get(&p->ibuf, &imsg)) == 1) {
		if (imsg.fd_lost && !msg_fd_may_be_lost(imsg.hdr.type))
			fatalx("%s from %s: its descriptor was dropped (out "
			    "of descriptors?)", msg_type_name(imsg.hdr.type),
			    p->name);
		p->dispatch(p, &imsg);
		imsg_free(&imsg);
	}
	if (r == -1)
		fatal("malformed message from %s", p->name);
	return 0;
}

/* Returns -1 when the peer went away (closed() was called), else 0. */
static int
peer_write(struct peer *p)
{
	if (imsgbuf_write(&p->ibuf) == -1) {
		if (errno == EPIPE || errno == ECONNRESET) {
			p->closed(p);
			return -1;
		}
		fatal("write to %s", p->name);
	}
	return 0;
}

static void
peer_event_cb(evutil_socket_t sock, short events, void *arg)
{
	struct peer	*p = arg;

	if ((events & EV_WRITE) && peer_write(p) == -1)
		return;
	if ((events & EV_READ) && peer_read(p) == -1)
		return;
	peer_update_event(p);
}

/*
 * What the callbacks of this loop pass queued goes in one write, with no
 * poll for writability first: a socketpair to our own process almost
 * always has room.
 */
static void
peer_flush_cb(evutil_socket_t fd, short events, void *arg)
{
	struct peer	*p = arg;

	p->flushing = 0;
	if (imsgbuf_pending(&p->ibuf) && peer_write(p) == -1)
		return;
	peer_update_event(p);
}

int
peer_compose(struct peer *p, uint32_t type, uint32_t peerid, int fd,
    const void *data, size_t len)
{
	/* Its process is gone: nothing may wait in a loop for a new one. */
	if (p->stopped) {
		log_warnx("%s: %s for %s, which is not running", __func__,
		    msg_type_name(type), p->name);
		if (fd != -1)
			close(fd);
		errno = EPIPE;
		return -1;
	}
	if (imsg_compose(&p->ibuf, type, peerid, fd, data, len) == -1) {
		log_warn("%s: queue %s for %s", __func__, msg_type_name(type),
		    p->name);
		return -1;
	}
	if (!p->flushing) {
		p->flushing = 1;
		event_active(&p->ev_flush, EV_TIMEOUT, 1);
	}
	return 0;
}

int
peer_send(struct peer *p, uint32_t type, uint32_t peerid, int fd,
    struct msgw *w)
{
	if (w != NULL && w->overflow) {
		log_warnx("%s: %s for %s does not fit in one message",
		    __func__, msg_type_name(type), p->name);
		if (fd != -1)
			close(fd);
		return -1;
	}
	return peer_compose(p, type, peerid, fd, w ? w->buf : NULL,
	    w ? w->len : 0);
}

int
peer_send_error(struct peer *p, uint32_t peerid, enum error_kind kind,
    const char *fmt, ...)
{
	struct msgw	 w;
	char		 text[MSG_MAX_STRING + 1];
	va_list		 ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	msgw_init(&w);
	msgw_u32(&w, kind);
	msgw_str(&w, text);
	return peer_send(p, MSG_ERROR, peerid, -1, &w);
}

void
peer_bad_message(struct peer *p, const struct imsg *imsg, const char *why)
{
	fatalx("bad %s message from %s: %s", msg_type_name(imsg->hdr.type),
	    p->name, why);
}

int
peer_recv_blocking(struct imsgbuf *ibuf, struct imsg *imsg)
{
	struct pollfd	 pfd;
	ssize_t		 n;
	int		 r;

	for (;;) {
		if ((r = imsg_get(ibuf, imsg)) != 0)
			return r;
		pfd.fd = ibuf->sock;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, -1) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		n = imsgbuf_read(ibuf);
		if (n == 0) {
			errno = ECONNRESET;
			return -1;
		}
		if (n == -1 && errno != EAGAIN)
			return -1;
	}
}
