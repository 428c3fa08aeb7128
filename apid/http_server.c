/*
 * The listener and the connection cap.  apid serves at most
 * max_connections clients at once.  A connection beyond that takes the
 * place of the oldest one that has no request in progress (waiting for
 * its next head, still sending a head, or lingering after its last
 * reply), so that idle or slow clients piling up cannot lock anyone
 * out: a client that sends a whole request promptly is served.  When
 * every connection has a request in progress, accepting stops until one
 * ends and new clients wait in the listen queue.  Descriptors beyond
 * the cap are kept in reserve for pipes (apid.c sets the limit).
 */
#include <sys/queue.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "apid.h"
#include "log.h"

/* Accepts per wake-up, so that a flood does not starve the others. */
#define ACCEPT_BATCH		32
/* How long accepting stops when apid is out of descriptors. */
#define ACCEPT_PAUSE_MSEC	100

void
http_settings_default(struct http_settings *s)
{
	memset(s, 0, sizeof(*s));
	s->head_timeout.tv_sec = 10;
	s->body_timeout.tv_sec = 30;
	s->idle_timeout.tv_sec = 60;
	s->send_timeout.tv_sec = 60;
	s->max_connections = 1024;
}

static void
accept_pause(struct http_server *srv, int msec)
{
	struct timeval	 tv = { 0, msec * 1000 };

	event_del(srv->accept_ev);
	if (msec > 0)
		evtimer_add(srv->accept_resume, &tv);
}

static void
accept_resume_cb(evutil_socket_t fd, short what, void *arg)
{
	struct http_server	*srv = arg;

	if (srv->listener != -1)
		event_add(srv->accept_ev, NULL);
}

/* At the cap: the oldest connection without a request makes room. */
static int
can_take_one(struct http_server *srv)
{
	return srv->nconns < srv->settings.max_connections ||
	    !TAILQ_EMPTY(&srv->idle);
}

int
http_server_adopt(struct http_server *srv, int fd)
{
	int	 on = 1;

	if (!can_take_one(srv)) {
		close(fd);
		return -1;
	}
	if (srv->nconns >= srv->settings.max_connections)
		http_conn_shed(TAILQ_FIRST(&srv->idle));
	/* NDJSON lines and small replies go out at once (no Nagle wait). */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
	if (http_conn_new(srv, fd) == NULL) {
		log_warnx("out of memory for a connection");
		close(fd);
		return -1;
	}
	return 0;
}

/* Out of descriptors: free one by shedding, else pause for a while. */
static int
accept_starved(struct http_server *srv)
{
	struct http_conn	*c;

	if ((c = TAILQ_FIRST(&srv->idle)) != NULL) {
		http_conn_shed(c);
		return 0;
	}
	log_debug("accept: %s; pausing", strerror(errno));
	accept_pause(srv, ACCEPT_PAUSE_MSEC);
	return -1;
}

static void
accept_cb(evutil_socket_t lfd, short what, void *arg)
{
	struct http_server	*srv = arg;
	int			 i, fd;

	for (i = 0; i < ACCEPT_BATCH; i++) {
		if (!can_take_one(srv)) {
			/* All busy: clients wait in the listen queue. */
			accept_pause(srv, 0);
			return;
		}
		fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd != -1) {
			(void)http_server_adopt(srv, fd);
			continue;
		}
		if (errno == EINTR || errno == ECONNABORTED)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return;
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
		    errno == ENOMEM) {
			if (accept_starved(srv) == -1)
				return;
			continue;
		}
		log_warnx("accept: %s", strerror(errno));
		return;
	}
}

void
http_server_conn_gone(struct http_server *srv)
{
	if (srv->listener != -1 && srv->accept_ev != NULL &&
	    !event_pending(srv->accept_ev, EV_READ, NULL) &&
	    !evtimer_pending(srv->accept_resume, NULL))
		event_add(srv->accept_ev, NULL);
}

int
http_server_init(struct http_server *srv, struct event_base *base,
    const struct http_settings *s, http_request_cb cb)
{
	memset(srv, 0, sizeof(*srv));
	srv->base = base;
	srv->settings = *s;
	srv->request_cb = cb;
	srv->listener = -1;
	TAILQ_INIT(&srv->conns);
	TAILQ_INIT(&srv->idle);
	if ((srv->accept_resume = evtimer_new(base, accept_resume_cb,
	    srv)) == NULL)
		return -1;
	return 0;
}

int
http_server_listen(struct http_server *srv, int fd)
{
	if ((srv->accept_ev = event_new(srv->base, fd, EV_READ | EV_PERSIST,
	    accept_cb, srv)) == NULL || event_add(srv->accept_ev, NULL) == -1)
		return -1;
	srv->listener = fd;
	return 0;
}

void
http_server_close(struct http_server *srv)
{
	struct http_conn	*c;
	int			 fd = srv->listener;

	srv->listener = -1;
	while ((c = TAILQ_FIRST(&srv->conns)) != NULL)
		http_conn_free(c);
	if (srv->accept_ev != NULL)
		event_free(srv->accept_ev);
	if (srv->accept_resume != NULL)
		event_free(srv->accept_resume);
	if (fd != -1)
		close(fd);
	srv->accept_ev = srv->accept_resume = NULL;
}
