/*
 * The listener and the connection cap.  apid serves at most
 * max_connections clients at once.  A connection beyond that takes the
 * place of the oldest one that has no request in progress (waiting for
 * its next head, still sending a head, or lingering after its last
 * reply), so that idle or slow clients piling up cannot lock anyone
 * out: a client that sends a whole request promptly is served.  When
 * every connection has a request in progress, accepting stops until one
 * ends and new clients wait in the listen queue.  Descriptors beyond
 * the cap are kept in reserve for pipes (apid.c sets the limit).  Out
 * of descriptors all the same (a lower limit, a full system table), one
 * descriptor held in reserve lets waiting clients be answered 503 while
 * accepting pauses.  A socket a route took over (a WebSocket) is no
 * connection any more, but it still holds its descriptors and counts
 * against the cap until the route closes it; so does a request whose
 * client left while it still holds a pipe (http_server_take).
 */
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "apid.h"
#include "log.h"

/* Accepts per wake-up, so that a flood does not starve the others. */
#define ACCEPT_BATCH		32
/* How long accepting stops when apid is out of descriptors. */
#define ACCEPT_PAUSE_MSEC	100
/* What a client accepted on the reserve reads (the error envelope). */
#define UNAVAILABLE_BODY	"{\"error\":{\"code\":\"unavailable\"," \
	"\"message\":\"apid is out of descriptors; try again\"}}"

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
	return srv->nconns + srv->taken < srv->settings.max_connections ||
	    !TAILQ_EMPTY(&srv->idle);
}

int
http_server_adopt(struct http_server *srv, int fd)
{
	return http_server_adopt_from(srv, fd, NULL, 0);
}

/*
 * The client's address as the caller's client_addr (caller.h): "ip:port",
 * "[ip6]:port"; "" for any other family (a socketpair in the tests).
 */
static void
conn_addr(char *out, size_t size, const struct sockaddr *sa, socklen_t len)
{
	const struct sockaddr_in	*sin = (const void *)sa;
	const struct sockaddr_in6	*sin6 = (const void *)sa;
	char				 ip[INET6_ADDRSTRLEN];

	out[0] = '\0';
	if (sa == NULL)
		return;
	if (sa->sa_family == AF_INET && len >= (socklen_t)sizeof(*sin) &&
	    inet_ntop(AF_INET, &sin->sin_addr, ip, sizeof(ip)) != NULL)
		snprintf(out, size, "%s:%u", ip, ntohs(sin->sin_port));
	else if (sa->sa_family == AF_INET6 &&
	    len >= (socklen_t)sizeof(*sin6) &&
	    inet_ntop(AF_INET6, &sin6->sin6_addr, ip, sizeof(ip)) != NULL)
		snprintf(out, size, "[%s]:%u", ip, ntohs(sin6->sin6_port));
}

int
http_server_adopt_from(struct http_server *srv, int fd,
    const struct sockaddr *sa, socklen_t salen)
{
	struct http_conn	*c;
	int			 on = 1;

	if (!can_take_one(srv)) {
		close(fd);
		return -1;
	}
	if (srv->nconns + srv->taken >= srv->settings.max_connections)
		http_conn_shed(TAILQ_FIRST(&srv->idle));
	/* NDJSON lines and small replies go out at once (no Nagle wait). */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
	if ((c = http_conn_new(srv, fd)) == NULL) {
		log_warnx("out of memory for a connection");
		close(fd);
		return -1;
	}
	conn_addr(c->addr, sizeof(c->addr), sa, salen);
	return 0;
}

/* The descriptor kept free so that a client can still be told 503. */
static void
reserve_take(struct http_server *srv)
{
	if (srv->reserve == -1)
		srv->reserve = fcntl(srv->listener, F_DUPFD_CLOEXEC, 0);
}

/* How long a refused client has to send its request before we close. */
#define REFUSE_LINGER_SEC	1

/*
 * The refused client sent its request (or went, or took too long): what
 * it sent is read, so that closing sends no reset that would destroy
 * the answer before it read it.  Then the reserve again, and the next.
 */
static void
refuse_done_cb(evutil_socket_t fd, short what, void *arg)
{
	struct http_server	*srv = arg;
	char			 junk[4096];
	int			 i;

	for (i = 0; i < 16 && read(fd, junk, sizeof(junk)) > 0; i++)
		;
	event_del(srv->refuse_ev);
	close(srv->refusing);
	srv->refusing = -1;
	reserve_take(srv);
	/* The next one waiting, if any, need not wait out the pause. */
	if (srv->reserve != -1 && srv->listener != -1) {
		evtimer_del(srv->accept_resume);
		event_add(srv->accept_ev, NULL);
	}
}

/*
 * Answer one waiting client 503 on the reserve: the head and the
 * envelope, our side shut; the descriptor is kept until the client's
 * request is in (refuse_done_cb).  0, or -1 when no client was waiting,
 * there is no reserve, or a refusal is still lingering.
 */
static int
refuse_one(struct http_server *srv)
{
	struct timeval	 tv = { REFUSE_LINGER_SEC, 0 };
	struct iovec	 iov;
	int		 fd;

	if (srv->reserve == -1 || srv->refusing != -1)
		return -1;
	close(srv->reserve);
	srv->reserve = -1;
	fd = accept4(srv->listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd == -1) {
		reserve_take(srv);
		return -1;
	}
	iov.iov_base = srv->unavailable;
	iov.iov_len = srv->unavailable_len;
	(void)writev(fd, &iov, 1);
	(void)shutdown(fd, SHUT_WR);
	srv->refusing = fd;
	srv->refused++;
	event_assign(srv->refuse_ev, srv->base, fd, EV_READ, refuse_done_cb,
	    srv);
	event_add(srv->refuse_ev, &tv);
	return 0;
}

/*
 * Out of descriptors: free one by shedding an idle client; else tell a
 * waiting one 503 through the reserve (the next when it is done) and
 * pause accepting for a while rather than spin on EMFILE.
 */
static int
accept_starved(struct http_server *srv)
{
	struct http_conn	*c;
	int			 i, saved = errno;

	if ((c = TAILQ_FIRST(&srv->idle)) != NULL) {
		http_conn_shed(c);
		return 0;
	}
	i = refuse_one(srv);
	log_debug("accept: %s; %s, pausing", strerror(saved), i == 0 ?
	    "one refused" : "none refused");
	accept_pause(srv, ACCEPT_PAUSE_MSEC);
	return -1;
}

static void
accept_cb(evutil_socket_t lfd, short what, void *arg)
{
	struct http_server	*srv = arg;
	struct sockaddr_storage	 ss;
	socklen_t		 salen;
	int			 i, fd, got = 0;

	for (i = 0; i < ACCEPT_BATCH; i++) {
		if (!can_take_one(srv)) {
			/* All busy: clients wait in the listen queue. */
			accept_pause(srv, 0);
			return;
		}
		salen = sizeof(ss);
		fd = accept4(lfd, (struct sockaddr *)&ss, &salen,
		    SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd != -1) {
			(void)http_server_adopt_from(srv, fd,
			    (struct sockaddr *)&ss, salen);
			got = 1;
			continue;
		}
		if (errno == EINTR || errno == ECONNABORTED)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return;
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
		    errno == ENOMEM) {
			/*
			 * accept fails so whether or not anyone waits: only
			 * a wake-up with nothing taken yet says someone does.
			 * Else the (level-triggered) listener tells us again.
			 */
			if (got || accept_starved(srv) == -1)
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

void
http_server_take(struct http_server *srv)
{
	srv->taken++;
}

void
http_server_untake(struct http_server *srv)
{
	srv->taken--;
	http_server_conn_gone(srv);
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
	srv->reserve = srv->refusing = -1;
	if ((srv->accept_resume = evtimer_new(base, accept_resume_cb,
	    srv)) == NULL || (srv->refuse_ev = calloc(1,
	    event_get_struct_event_size())) == NULL)
		return -1;
	srv->unavailable_len = (size_t)snprintf(srv->unavailable,
	    sizeof(srv->unavailable), "HTTP/1.1 503 Service Unavailable\r\n"
	    "Content-Type: application/json\r\nContent-Length: %zu\r\n"
	    "Retry-After: 1\r\nConnection: close\r\n\r\n%s",
	    strlen(UNAVAILABLE_BODY), UNAVAILABLE_BODY);
	return 0;
}

int
http_server_listen(struct http_server *srv, int fd)
{
	if ((srv->accept_ev = event_new(srv->base, fd, EV_READ | EV_PERSIST,
	    accept_cb, srv)) == NULL || event_add(srv->accept_ev, NULL) == -1)
		return -1;
	srv->listener = fd;
	reserve_take(srv);
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
	if (srv->reserve != -1)
		close(srv->reserve);
	if (srv->refusing != -1) {
		event_del(srv->refuse_ev);
		close(srv->refusing);
	}
	free(srv->refuse_ev);
	srv->refuse_ev = NULL;
	srv->reserve = srv->refusing = -1;
	srv->accept_ev = srv->accept_resume = NULL;
}
