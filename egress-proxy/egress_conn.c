/*
 * One connection from a sandbox, one state machine: its request head
 * (egress_request.c), the name resolved by evdns, every address checked
 * against the sandbox's policy as it was at accept and against the
 * host's own addresses, a connect to the first allowed one (the next on
 * failure), then a relay both ways with bounded buffers.  A refusal is
 * an HTTP status with a short text naming the reason.  Each connection
 * is logged once in its sandbox's ring and audited once to managerd.
 */
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/dns.h>
#include <event2/util.h>

#include "egress.h"
#include "log.h"

enum conn_state {
	CONN_HEAD,		/* reading the request head */
	CONN_RESOLVE,		/* evdns asked */
	CONN_CONNECT,		/* connecting to addrs[next - 1] */
	CONN_RELAY,		/* both ways */
	CONN_REFUSE,		/* an answer is going out, then the close */
};

struct egress_conn {
	TAILQ_ENTRY(egress_conn)	 entry;
	struct egress_sandbox		*sb;
	struct egress_rules		*rules;	/* NULL: refuse all */
	enum conn_state			 state;
	struct bufferevent		*client, *upstream;
	struct event			*timer;
	struct evdns_getaddrinfo_request *dns;
	int				 dns_pending;
	struct egress_request		 req;
	int				 have_req;	/* req's host is set */
	struct sockaddr_storage		 addrs[EGRESS_ADDRS_MAX];
	size_t				 naddrs, next;
	int				 last_error;	/* errno, 0 timeout */
	struct timespec			 start;
	int				 logged;
	uint64_t			 log_id;
	int				 allowed;
	char				 address[INET6_ADDRSTRLEN];
	char				 reason[EGRESS_WHY_MAX];
	uint64_t			 sent, received;
	uint64_t			 body_left;	/* FORWARD, LENGTH */
	int				 client_eof, upstream_eof;
	int				 client_stop;	/* body relayed */
};

static const struct egress_policy	 refuse_all = { EGRESS_NONE, 0, NULL };
static struct msgw			 audit;

static void	conn_end(struct egress_conn *);
static void	conn_connect_next(struct egress_conn *);
static void	relay_start(struct egress_conn *);

static void
timer_set(struct egress_conn *c, int seconds)
{
	struct timeval	 tv = { seconds, 0 };

	(void)evtimer_add(c->timer, &tv);
}

static const char *
conn_host(const struct egress_conn *c)
{
	return c->have_req ? c->req.host : "";
}

static unsigned int
conn_port(const struct egress_conn *c)
{
	return c->have_req ? c->req.port : 0;
}

static void
addr_text(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	const void	*a;

	if (ss->ss_family == AF_INET)
		a = &((const struct sockaddr_in *)ss)->sin_addr;
	else
		a = &((const struct sockaddr_in6 *)ss)->sin6_addr;
	if (inet_ntop(ss->ss_family, a, buf, (socklen_t)len) == NULL)
		buf[0] = '\0';
}

/* The log's record, made once, at the decision (or at the end). */
static void
conn_record(struct egress_conn *c, int allowed, const char *reason)
{
	if (c->logged)
		return;
	c->logged = 1;
	c->allowed = allowed;
	(void)strlcpy(c->reason, allowed ? "" : reason, sizeof(c->reason));
	c->log_id = egress_log_add(&c->sb->log, &c->start, conn_host(c),
	    strlen(conn_host(c)), conn_port(c), c->address, allowed,
	    c->reason);
}

static void
conn_audit(struct egress_conn *c)
{
	msgw_init(&audit);
	msgw_str(&audit, c->sb->id);
	msgw_str(&audit, conn_host(c));
	msgw_u32(&audit, conn_port(c));
	msgw_str(&audit, c->address);
	msgw_u8(&audit, (uint8_t)c->allowed);
	msgw_str(&audit, c->reason);
	msgw_u64(&audit, c->sent);
	msgw_u64(&audit, c->received);
	(void)peer_send(&egress.parent, MSG_EGRESS_AUDIT, 0, -1, &audit);
}

static void
conn_cancel_dns(struct egress_conn *c)
{
	struct evdns_getaddrinfo_request	*req = c->dns;

	c->dns = NULL;
	c->dns_pending = 0;
	if (req != NULL)
		evdns_getaddrinfo_cancel(req);
}

static void
conn_free(struct egress_conn *c)
{
	struct egress_sandbox	*sb = c->sb;

	conn_cancel_dns(c);
	if (c->upstream != NULL)
		bufferevent_free(c->upstream);
	if (c->client != NULL)
		bufferevent_free(c->client);
	if (c->timer != NULL)
		event_free(c->timer);
	egress_request_free(&c->req);
	egress_rules_unref(c->rules);
	TAILQ_REMOVE(&sb->conns, c, entry);
	sb->nconns--;
	egress.nconns--;
	free(c);
	egress_sandbox_conn_gone(sb);
}

static void
conn_end(struct egress_conn *c)
{
	conn_record(c, 0, "closed before a request");
	(void)egress_log_update(&c->sb->log, c->log_id, c->sent, c->received);
	conn_audit(c);
	conn_free(c);
}

void
egress_conn_cut(struct egress_conn *c)
{
	conn_record(c, 0, "the sandbox was forgotten");
	conn_end(c);
}

/* --- refusals ----------------------------------------------------------- */

static const char *
status_text(int status)
{
	switch (status) {
	case 400: return "Bad Request";
	case 403: return "Forbidden";
	case 408: return "Request Timeout";
	case 431: return "Request Header Fields Too Large";
	case 501: return "Not Implemented";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	case 505: return "HTTP Version Not Supported";
	default: return "Internal Server Error";
	}
}

static void
refuse_read(struct bufferevent *bev, void *arg)
{
	struct evbuffer	*in = bufferevent_get_input(bev);

	(void)evbuffer_drain(in, evbuffer_get_length(in));
}

static void
refuse_event(struct bufferevent *bev, short what, void *arg)
{
	conn_end(arg);
}

static void
refuse_lingered(struct bufferevent *bev, void *arg)
{
	struct egress_conn	*c = arg;

	(void)shutdown(bufferevent_getfd(bev), SHUT_WR);
	bufferevent_setcb(bev, refuse_read, NULL, refuse_event, c);
}

static void
conn_refuse(struct egress_conn *c, int status, const char *reason)
{
	char	 body[EGRESS_WHY_MAX + 64];
	int	 n;

	conn_record(c, 0, reason);
	conn_cancel_dns(c);
	if (c->upstream != NULL)
		bufferevent_free(c->upstream);
	c->upstream = NULL;
	c->state = CONN_REFUSE;
	n = snprintf(body, sizeof(body), "egress-proxy: %s\n", reason);
	if (n < 0 || (size_t)n >= sizeof(body))
		n = (int)strlen(body);
	evbuffer_drain(bufferevent_get_input(c->client),
	    evbuffer_get_length(bufferevent_get_input(c->client)));
	(void)evbuffer_add_printf(bufferevent_get_output(c->client),
	    "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\n"
	    "Content-Length: %d\r\nConnection: close\r\n\r\n%s", status,
	    status_text(status), n, body);
	bufferevent_setcb(c->client, refuse_read, refuse_lingered,
	    refuse_event, c);
	bufferevent_enable(c->client, EV_READ | EV_WRITE);
	timer_set(c, EGRESS_LINGER_TIMEOUT);
}

/* --- the decision ------------------------------------------------------- */

/* Keep the allowed addresses, in order; refuse if none is. */
static void
conn_check(struct egress_conn *c)
{
	const struct egress_policy	*p;
	char				 why[EGRESS_WHY_MAX];
	char				 first[EGRESS_WHY_MAX] = "";
	const char			*host;
	size_t				 i, kept = 0;

	p = c->rules != NULL ? &c->rules->policy : &refuse_all;
	host = c->req.host_kind == EGRESS_HOST_NAME ? c->req.host : NULL;
	for (i = 0; i < c->naddrs; i++) {
		if (!egress_check(p, &egress.extra, host, c->req.port,
		    &c->addrs[i], why, sizeof(why)))
			;
		else if (egress_hostaddr_is_host(&egress.host, &c->addrs[i]))
			(void)strlcpy(why, "the host's own address",
			    sizeof(why));
		else {
			if (kept == 0)
				addr_text(&c->addrs[i], c->address,
				    sizeof(c->address));
			c->addrs[kept++] = c->addrs[i];
			continue;
		}
		if (first[0] == '\0') {
			(void)strlcpy(first, why, sizeof(first));
			if (kept == 0)
				addr_text(&c->addrs[i], c->address,
				    sizeof(c->address));
		}
	}
	c->naddrs = kept;
	if (kept == 0) {
		conn_refuse(c, 403, first);
		return;
	}
	c->address[0] = '\0';
	addr_text(&c->addrs[0], c->address, sizeof(c->address));
	conn_record(c, 1, "");
	conn_connect_next(c);
}

static void
set_port(struct sockaddr_storage *ss, unsigned int port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
	else
		((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
}

static void
resolved(int result, struct evutil_addrinfo *res, void *arg)
{
	struct egress_conn	*c = arg;
	struct evutil_addrinfo	*ai;
	char			 why[EGRESS_WHY_MAX];

	if (result == EVUTIL_EAI_CANCEL)
		return;		/* the connection is going */
	c->dns = NULL;
	c->dns_pending = 0;
	for (ai = res; ai != NULL && c->naddrs < EGRESS_ADDRS_MAX;
	    ai = ai->ai_next) {
		if ((ai->ai_family != AF_INET && ai->ai_family != AF_INET6) ||
		    ai->ai_addrlen > sizeof(c->addrs[0]))
			continue;
		memset(&c->addrs[c->naddrs], 0, sizeof(c->addrs[0]));
		memcpy(&c->addrs[c->naddrs], ai->ai_addr, ai->ai_addrlen);
		set_port(&c->addrs[c->naddrs++], c->req.port);
	}
	if (res != NULL)
		evutil_freeaddrinfo(res);
	if (result != 0 || c->naddrs == 0) {
		(void)snprintf(why, sizeof(why), "cannot resolve the name: %s",
		    result != 0 ? evutil_gai_strerror(result) :
		    "no address");
		conn_refuse(c, 502, why);
		return;
	}
	conn_check(c);
}

static void
conn_resolve(struct egress_conn *c)
{
	struct evutil_addrinfo			 hints;
	struct evdns_getaddrinfo_request	*req;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_protocol = IPPROTO_TCP;
	c->state = CONN_RESOLVE;
	timer_set(c, EGRESS_RESOLVE_TIMEOUT);
	c->dns_pending = 1;
	req = evdns_getaddrinfo(egress.dns, c->req.host, NULL, &hints,
	    resolved, c);
	/* NULL: the callback already ran. */
	if (c->dns_pending)
		c->dns = req;
}

static void
head_done(struct egress_conn *c)
{
	c->have_req = 1;
	bufferevent_disable(c->client, EV_READ);
	if (c->req.host_kind == EGRESS_HOST_NAME) {
		conn_resolve(c);
		return;
	}
	c->addrs[0] = c->req.addr;
	c->naddrs = 1;
	conn_check(c);
}

static void
head_read(struct bufferevent *bev, void *arg)
{
	struct egress_conn	*c = arg;
	struct evbuffer		*in = bufferevent_get_input(bev);
	struct evbuffer_iovec	 v;
	size_t			 used;
	int			 rc;

	while (evbuffer_peek(in, -1, NULL, &v, 1) >= 1 && v.iov_len > 0) {
		rc = egress_request_feed(&c->req, v.iov_base, v.iov_len, &used);
		if (rc == 0) {
			(void)evbuffer_drain(in, v.iov_len);
			continue;
		}
		if (rc == -1) {
			conn_refuse(c, c->req.status, c->req.reason);
			return;
		}
		(void)evbuffer_drain(in, used);
		head_done(c);
		return;
	}
}

static void
client_event(struct bufferevent *bev, short what, void *arg)
{
	conn_end(arg);
}

static void
conn_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct egress_conn	*c = arg;

	switch (c->state) {
	case CONN_HEAD:
		conn_refuse(c, 408, "no whole request head in time");
		break;
	case CONN_RESOLVE:
		conn_refuse(c, 504, "the name was not resolved in time");
		break;
	case CONN_CONNECT:
		bufferevent_free(c->upstream);
		c->upstream = NULL;
		c->last_error = 0;
		conn_connect_next(c);
		break;
	case CONN_RELAY:
	case CONN_REFUSE:
		conn_end(c);
		break;
	}
}

/* --- connecting ---------------------------------------------------------- */

static void
upstream_connect_event(struct bufferevent *bev, short what, void *arg)
{
	struct egress_conn	*c = arg;

	if (what & BEV_EVENT_CONNECTED) {
		relay_start(c);
		return;
	}
	c->last_error = EVUTIL_SOCKET_ERROR();
	bufferevent_free(c->upstream);
	c->upstream = NULL;
	conn_connect_next(c);
}

static void
connect_failed(struct egress_conn *c)
{
	char	 why[EGRESS_WHY_MAX];

	if (c->last_error == 0) {
		conn_refuse(c, 504, "the connection upstream timed out");
		return;
	}
	(void)snprintf(why, sizeof(why), "cannot connect upstream: %s",
	    strerror(c->last_error));
	conn_refuse(c, c->last_error == EMFILE || c->last_error == ENFILE ?
	    503 : 502, why);
}

static void
conn_connect_next(struct egress_conn *c)
{
	struct sockaddr_storage	*ss;
	socklen_t		 len;

	c->state = CONN_CONNECT;
	if (c->next >= c->naddrs) {
		connect_failed(c);
		return;
	}
	ss = &c->addrs[c->next++];
	len = ss->ss_family == AF_INET ? sizeof(struct sockaddr_in) :
	    sizeof(struct sockaddr_in6);
	c->upstream = bufferevent_socket_new(egress.base, -1,
	    BEV_OPT_CLOSE_ON_FREE);
	if (c->upstream == NULL) {
		conn_refuse(c, 500, "out of memory");
		return;
	}
	bufferevent_setcb(c->upstream, NULL, NULL, upstream_connect_event, c);
	timer_set(c, EGRESS_CONNECT_TIMEOUT);
	if (bufferevent_socket_connect(c->upstream, (struct sockaddr *)ss,
	    (int)len) == -1) {
		c->last_error = errno != 0 ? errno : ECONNREFUSED;
		bufferevent_free(c->upstream);
		c->upstream = NULL;
		conn_connect_next(c);
	}
}

/* --- relaying ------------------------------------------------------------ */

static int
relay_done(const struct egress_conn *c)
{
	size_t	 to_client, to_up;

	to_client = evbuffer_get_length(bufferevent_get_output(c->client));
	to_up = evbuffer_get_length(bufferevent_get_output(c->upstream));
	if (!c->upstream_eof || to_client > 0)
		return 0;
	/* A forwarded request ends with its response. */
	return c->req.kind == EGRESS_REQUEST_FORWARD ||
	    (c->client_eof && to_up == 0);
}

/* src's bytes to dst, holding src back while dst's queue is full. */
static void
relay_move(struct egress_conn *c, struct bufferevent *src,
    struct bufferevent *dst)
{
	struct evbuffer	*in = bufferevent_get_input(src);
	struct evbuffer	*out = bufferevent_get_output(dst);
	size_t		 n = evbuffer_get_length(in);

	if (src == c->client && c->client_stop) {
		(void)evbuffer_drain(in, n);
		return;
	}
	if (src == c->client && c->req.kind == EGRESS_REQUEST_FORWARD &&
	    c->req.body == EGRESS_BODY_LENGTH && n > c->body_left)
		n = (size_t)c->body_left;
	if (evbuffer_remove_buffer(in, out, n) < 0)
		return;
	if (src == c->client) {
		c->sent += n;
		if (c->req.kind == EGRESS_REQUEST_FORWARD &&
		    c->req.body == EGRESS_BODY_LENGTH &&
		    (c->body_left -= n) == 0)
			c->client_stop = 1;
	} else
		c->received += n;
	if (evbuffer_get_length(out) >= EGRESS_RELAY_BUF) {
		bufferevent_disable(src, EV_READ);
		bufferevent_setwatermark(dst, EV_WRITE, EGRESS_RELAY_BUF / 2,
		    0);
	}
}

static struct bufferevent *
relay_other(struct egress_conn *c, struct bufferevent *bev)
{
	return bev == c->client ? c->upstream : c->client;
}

static void
relay_read(struct bufferevent *bev, void *arg)
{
	struct egress_conn	*c = arg;

	timer_set(c, EGRESS_IDLE_TIMEOUT);
	relay_move(c, bev, relay_other(c, bev));
}

/* A side's EOF goes on as a half-close once what it sent is written. */
static void
relay_half_close(struct egress_conn *c, struct bufferevent *dst)
{
	int	 src_eof = dst == c->client ? c->upstream_eof : c->client_eof;

	if (src_eof && evbuffer_get_length(bufferevent_get_output(dst)) == 0)
		(void)shutdown(bufferevent_getfd(dst), SHUT_WR);
}

static void
relay_written(struct bufferevent *dst, void *arg)
{
	struct egress_conn	*c = arg;
	struct bufferevent	*src = relay_other(c, dst);
	int			 src_eof;

	src_eof = src == c->client ? c->client_eof : c->upstream_eof;
	bufferevent_setwatermark(dst, EV_WRITE, 0, 0);
	if (!src_eof)
		bufferevent_enable(src, EV_READ);
	if (relay_done(c)) {
		conn_end(c);
		return;
	}
	if (!(c->req.kind == EGRESS_REQUEST_FORWARD && dst == c->upstream))
		relay_half_close(c, dst);
}

static void
relay_event(struct bufferevent *bev, short what, void *arg)
{
	struct egress_conn	*c = arg;
	struct bufferevent	*dst = relay_other(c, bev);

	if (what & BEV_EVENT_ERROR || !(what & BEV_EVENT_EOF)) {
		conn_end(c);
		return;
	}
	relay_move(c, bev, dst);
	if (bev == c->client)
		c->client_eof = 1;
	else
		c->upstream_eof = 1;
	bufferevent_disable(bev, EV_READ);
	if (relay_done(c)) {
		conn_end(c);
		return;
	}
	if (!(c->req.kind == EGRESS_REQUEST_FORWARD && dst == c->upstream))
		relay_half_close(c, dst);
}

static void
relay_start(struct egress_conn *c)
{
	static const char	 established[] =
	    "HTTP/1.1 200 Connection established\r\n\r\n";

	c->state = CONN_RELAY;
	timer_set(c, EGRESS_IDLE_TIMEOUT);
	if (c->req.kind == EGRESS_REQUEST_CONNECT)
		(void)bufferevent_write(c->client, established,
		    sizeof(established) - 1);
	else {
		(void)bufferevent_write(c->upstream, c->req.upstream,
		    c->req.upstream_len);
		c->sent += c->req.upstream_len;
		c->body_left = c->req.body == EGRESS_BODY_LENGTH ?
		    c->req.content_length : 0;
		if (c->req.body == EGRESS_BODY_NONE ||
		    (c->req.body == EGRESS_BODY_LENGTH && c->body_left == 0))
			c->client_stop = 1;
	}
	bufferevent_setcb(c->client, relay_read, relay_written, relay_event, c);
	bufferevent_setcb(c->upstream, relay_read, relay_written, relay_event,
	    c);
	bufferevent_enable(c->client, EV_READ | EV_WRITE);
	bufferevent_enable(c->upstream, EV_READ | EV_WRITE);
	/* What the client sent after its head is already here. */
	relay_move(c, c->client, c->upstream);
}

/* --- accept -------------------------------------------------------------- */

void
egress_conn_accept(struct egress_sandbox *sb, int fd)
{
	struct egress_conn	*c;

	if ((c = calloc(1, sizeof(*c))) == NULL) {
		log_warnx("%s: a connection refused: out of memory", sb->id);
		close(fd);
		return;
	}
	c->sb = sb;
	egress_request_init(&c->req);
	(void)clock_gettime(CLOCK_REALTIME, &c->start);
	c->client = bufferevent_socket_new(egress.base, fd,
	    BEV_OPT_CLOSE_ON_FREE);
	c->timer = evtimer_new(egress.base, conn_timeout, c);
	if (c->client == NULL || c->timer == NULL) {
		if (c->client == NULL)
			close(fd);
		else
			bufferevent_free(c->client);
		if (c->timer != NULL)
			event_free(c->timer);
		free(c);
		log_warnx("%s: a connection refused: out of memory", sb->id);
		return;
	}
	if ((c->rules = sb->rules) != NULL)
		c->rules->refs++;
	TAILQ_INSERT_TAIL(&sb->conns, c, entry);
	sb->nconns++;
	egress.nconns++;
	c->state = CONN_HEAD;
	bufferevent_setcb(c->client, head_read, NULL, client_event, c);
	bufferevent_enable(c->client, EV_READ);
	timer_set(c, EGRESS_HEAD_TIMEOUT);
}
