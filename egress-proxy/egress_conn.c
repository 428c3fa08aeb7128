/*
 * One sandbox connection through the egress proxy, as a state machine
 * (one object per connection, like OpenBSD httpd's struct client):
 *
 *	HEAD	reading the request head (EGRESS_HEAD_TIMEOUT)
 *	RESOLVE	asking evdns for the name's addresses (a step event
 *		runs the answer, so no callback frees what its caller uses)
 *	CONNECT	one allowed address after the other (EGRESS_CONNECT_TIMEOUT
 *		each)
 *	RELAY	bytes both ways, bounded by EGRESS_RELAY_BUF per direction,
 *		cut after EGRESS_IDLE_TIMEOUT without a byte
 *	CLOSING	an answer (a refusal) drains to the client, then the close
 *		(EGRESS_LINGER_TIMEOUT at most)
 *
 * The policy is the one the sandbox had when the connection was
 * accepted.  Every address is checked with egress_check() and against
 * the host's own addresses before it is connected to.  Each decision
 * goes to the sandbox's log at once, its byte counts when it ends, and
 * one EGRESS_AUDIT to managerd per connection.
 */
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/dns.h>
#include <event2/util.h>

#include "egress.h"
#include "egress_chunked.h"
#include "log.h"

enum conn_state {
	C_HEAD = 0,
	C_RESOLVE,
	C_CONNECT,
	C_RELAY,
	C_CLOSING,
};

struct egress_conn {
	TAILQ_ENTRY(egress_conn)	 entry;
	struct egress_sandbox		*sb;
	struct egress_rules		*rules;	/* NULL: mode none */
	enum conn_state			 state;
	struct bufferevent		*client;
	struct bufferevent		*upstream;
	struct event			*timer;	/* the state's time-out */
	struct event			*step;	/* the resolver's answer */
	struct evdns_getaddrinfo_request *dnsreq;
	int				 dns_result;
	struct egress_request		 req;
	struct timespec			 when;
	struct sockaddr_storage		 addrs[EGRESS_ADDRS_MAX];
	size_t				 naddrs, next;
	char				 address[INET6_ADDRSTRLEN];
	uint64_t			 log_id;	/* 0: not logged */
	int				 allowed;
	int				 audited;
	char				 why[EGRESS_WHY_MAX];
	uint64_t			 sent, received;
	uint64_t			 body_left;	/* FORWARD, LENGTH */
	struct egress_chunks		 chunks;	/* FORWARD, CHUNKED */
	int				 client_eof;
	time_t				 active;	/* last byte, monotonic */
};

static const struct egress_policy	 policy_none = { EGRESS_NONE, 0, NULL };

static void	conn_free(struct egress_conn *);
static void	conn_refuse(struct egress_conn *, int status, const char *why);
static void	conn_connect_next(struct egress_conn *);
static void	client_relay_read(struct bufferevent *, void *);

static time_t
now_mono(void)
{
	struct timespec	 ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

static const struct egress_policy *
conn_policy(const struct egress_conn *c)
{
	return c->rules != NULL ? &c->rules->policy : &policy_none;
}

static void
timer_set(struct egress_conn *c, int seconds)
{
	struct timeval	 tv = { seconds, 0 };

	(void)evtimer_add(c->timer, &tv);
}

/* --- the record of a connection ----------------------------------------- */

static void
conn_log(struct egress_conn *c, int allowed, const char *why)
{
	c->allowed = allowed;
	(void)strlcpy(c->why, allowed ? "" : why, sizeof(c->why));
	c->log_id = egress_log_add(&c->sb->log, &c->when, c->req.host,
	    strlen(c->req.host), c->req.port, c->address, allowed, c->why);
}

/* One EGRESS_AUDIT; a head that never named a host has host "". */
static void
conn_audit(struct egress_conn *c)
{
	struct msgw	*w;

	if (c->audited || (c->log_id == 0 && c->why[0] == '\0'))
		return;
	c->audited = 1;
	if ((w = malloc(sizeof(*w))) == NULL) {
		log_warnx("%s: audit record lost: out of memory", c->sb->id);
		return;
	}
	msgw_init(w);
	msgw_str(w, c->sb->id);
	msgw_str(w, c->req.host);
	msgw_u32(w, c->req.port);
	msgw_str(w, c->address);
	msgw_u8(w, (uint8_t)c->allowed);
	msgw_str(w, c->allowed ? "" : c->why);
	msgw_u64(w, c->sent);
	msgw_u64(w, c->received);
	(void)peer_send(&egress.parent, MSG_EGRESS_AUDIT, 0, -1, w);
	free(w);
}

/* --- the end ------------------------------------------------------------ */

static void
conn_free(struct egress_conn *c)
{
	struct egress_sandbox	*sb = c->sb;

	if (c->log_id != 0)
		(void)egress_log_update(&sb->log, c->log_id, c->sent,
		    c->received);
	conn_audit(c);
	if (c->dnsreq != NULL) {
		/* Its callback runs now with EVUTIL_EAI_CANCEL. */
		evdns_getaddrinfo_cancel(c->dnsreq);
		c->dnsreq = NULL;
	}
	if (c->client != NULL)
		bufferevent_free(c->client);
	if (c->upstream != NULL)
		bufferevent_free(c->upstream);
	if (c->timer != NULL)
		event_free(c->timer);
	if (c->step != NULL)
		event_free(c->step);
	egress_request_free(&c->req);
	egress_rules_unref(c->rules);
	TAILQ_REMOVE(&sb->conns, c, entry);
	sb->nconns--;
	egress.nconns--;
	free(c);
	egress_sandbox_conn_gone(sb);
}

void
egress_conn_cut(struct egress_conn *c)
{
	conn_free(c);
}

static void
closing_written(struct bufferevent *bev, void *arg)
{
	conn_free(arg);
}

/* The client reset or closed before the answer drained: done. */
static void
closing_event(struct bufferevent *bev, short what, void *arg)
{
	conn_free(arg);
}

/* What is queued for the client goes out, then the close. */
static void
conn_finish(struct egress_conn *c)
{
	c->state = C_CLOSING;
	if (c->upstream != NULL) {
		bufferevent_free(c->upstream);
		c->upstream = NULL;
	}
	if (evbuffer_get_length(bufferevent_get_output(c->client)) == 0) {
		conn_free(c);
		return;
	}
	bufferevent_disable(c->client, EV_READ);
	bufferevent_setwatermark(c->client, EV_WRITE, 0, 0);
	bufferevent_setcb(c->client, NULL, closing_written, closing_event,
	    c);
	bufferevent_enable(c->client, EV_WRITE);
	timer_set(c, EGRESS_LINGER_TIMEOUT);
}

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

/* An answer the proxy makes itself, and the close. */
static void
conn_answer(struct egress_conn *c, int status, const char *why)
{
	struct evbuffer	*out = bufferevent_get_output(c->client);
	char		 body[EGRESS_WHY_MAX + 64];
	int		 n;

	n = snprintf(body, sizeof(body), "egress-proxy: %s\n", why);
	if (n < 0 || (size_t)n >= sizeof(body))
		n = (int)strlen(body);
	(void)evbuffer_add_printf(out, "HTTP/1.1 %d %s\r\n"
	    "Content-Type: text/plain; charset=utf-8\r\n"
	    "Content-Length: %d\r\nConnection: close\r\n\r\n%s",
	    status, status_text(status), n, body);
	conn_finish(c);
}

/* A decision against the connection: logged, audited, answered. */
static void
conn_refuse(struct egress_conn *c, int status, const char *why)
{
	if (c->log_id == 0)
		conn_log(c, 0, why);
	else {
		/* Allowed, then no address answered: the log says why. */
		(void)strlcpy(c->why, why, sizeof(c->why));
	}
	conn_answer(c, status, why);
}

/* --- timers ------------------------------------------------------------- */

static void
conn_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct egress_conn	*c = arg;
	time_t			 idle;

	switch (c->state) {
	case C_HEAD:
		/* No destination to log; the refusal is audited. */
		c->req.host[0] = '\0';
		c->req.port = 0;
		(void)strlcpy(c->why, "the request head took too long",
		    sizeof(c->why));
		conn_answer(c, 408, c->why);
		break;
	case C_RESOLVE:
		/* Its callback runs now with EVUTIL_EAI_CANCEL: no answer
		 * can come after the refusal. */
		if (c->dnsreq != NULL) {
			evdns_getaddrinfo_cancel(c->dnsreq);
			c->dnsreq = NULL;
		}
		conn_refuse(c, 504, "the name did not resolve in time");
		break;
	case C_CONNECT:
		conn_connect_next(c);
		break;
	case C_RELAY:
		idle = now_mono() - c->active;
		if (idle < EGRESS_IDLE_TIMEOUT) {
			timer_set(c, (int)(EGRESS_IDLE_TIMEOUT - idle));
			break;
		}
		log_debug("%s: %s:%u idle, cut", c->sb->id, c->req.host,
		    c->req.port);
		conn_free(c);
		break;
	case C_CLOSING:
		conn_free(c);
		break;
	}
}

/* --- relaying ----------------------------------------------------------- */

/*
 * Move what src holds to dst, up to limit bytes (a forwarded body's
 * rest), and stop reading src while dst holds EGRESS_RELAY_BUF.
 */
static size_t
relay(struct bufferevent *src, struct bufferevent *dst, uint64_t limit)
{
	struct evbuffer	*in = bufferevent_get_input(src);
	size_t		 n = evbuffer_get_length(in);

	if (n > limit)
		n = (size_t)limit;
	if (n > 0)
		(void)evbuffer_remove_buffer(in, bufferevent_get_output(dst), n);
	if (evbuffer_get_length(bufferevent_get_output(dst)) >=
	    EGRESS_RELAY_BUF)
		bufferevent_disable(src, EV_READ);
	return n;
}

/* The bytes of the client's input that are still its chunked body. */
static uint64_t
chunked_limit(struct egress_conn *c)
{
	struct evbuffer		*in = bufferevent_get_input(c->client);
	struct evbuffer_iovec	 v[8];
	uint64_t		 body = 0;
	int			 i, nv;

	nv = evbuffer_peek(in, -1, NULL, v, 8);
	if (nv > 8)
		nv = 8;
	for (i = 0; i < nv && c->chunks.state != EGRESS_CH_DONE &&
	    c->chunks.state != EGRESS_CH_BAD; i++)
		body += egress_chunks_scan(&c->chunks, v[i].iov_base,
		    v[i].iov_len);
	return body;
}


/* A chunked body, scanned as it goes, to its end. */
static void
relay_chunked(struct egress_conn *c)
{
	struct evbuffer	*in = bufferevent_get_input(c->client);
	size_t		 avail, n;

	do {
		avail = evbuffer_get_length(in);
		n = relay(c->client, c->upstream, chunked_limit(c));
		c->sent += n;
	} while (n > 0 && n < avail && c->chunks.state != EGRESS_CH_DONE &&
	    c->chunks.state != EGRESS_CH_BAD);
}

/* What the client sent, on its way; -1: c is freed (a bad body). */
static int
client_relay(struct egress_conn *c)
{
	struct evbuffer		*in = bufferevent_get_input(c->client);
	size_t			 n;

	c->active = now_mono();
	if (c->req.kind == EGRESS_REQUEST_CONNECT) {
		c->sent += relay(c->client, c->upstream, UINT64_MAX);
		return 0;
	}
	if (c->req.body == EGRESS_BODY_CHUNKED)
		relay_chunked(c);
	else {
		n = relay(c->client, c->upstream, c->body_left);
		c->sent += n;
		c->body_left -= n;
	}
	if (c->chunks.state == EGRESS_CH_BAD) {
		log_debug("%s: %s: a malformed chunked body, cut", c->sb->id,
		    c->req.host);
		conn_free(c);
		return -1;
	}
	/* One request per connection: what follows its body is not relayed. */
	if (c->req.body != EGRESS_BODY_CHUNKED ||
	    c->chunks.state == EGRESS_CH_DONE)
		evbuffer_drain(in, evbuffer_get_length(in));
	return 0;
}

static void
client_relay_read(struct bufferevent *bev, void *arg)
{
	(void)client_relay(arg);
}

static void
upstream_relay_read(struct bufferevent *bev, void *arg)
{
	struct egress_conn	*c = arg;

	c->received += relay(c->upstream, c->client, UINT64_MAX);
	c->active = now_mono();
}

/* dst drained below the watermark: its source may be read again. */
static void
client_drained(struct bufferevent *bev, void *arg)
{
	struct egress_conn	*c = arg;

	if (c->upstream != NULL)
		bufferevent_enable(c->upstream, EV_READ);
}

static void
upstream_drained(struct bufferevent *bev, void *arg)
{
	struct egress_conn	*c = arg;
	struct evbuffer		*out = bufferevent_get_output(bev);

	if (c->client_eof) {
		if (evbuffer_get_length(out) == 0)
			(void)shutdown(bufferevent_getfd(bev), SHUT_WR);
		return;
	}
	bufferevent_enable(c->client, EV_READ);
}

static void
client_relay_event(struct bufferevent *bev, short what, void *arg)
{
	struct egress_conn	*c = arg;

	if ((what & BEV_EVENT_EOF) && !c->client_eof) {
		/* The client is done sending: a half-close upstream. */
		c->client_eof = 1;
		bufferevent_disable(bev, EV_READ);
		bufferevent_setwatermark(c->upstream, EV_WRITE, 0, 0);
		upstream_drained(c->upstream, c);
		return;
	}
	conn_free(c);
}

static void
upstream_relay_event(struct bufferevent *bev, short what, void *arg)
{
	struct egress_conn	*c = arg;

	/* The server is done (or failed): what it sent goes out first. */
	if (what & BEV_EVENT_EOF)
		upstream_relay_read(bev, c);
	conn_finish(c);
}

static void
conn_relay_start(struct egress_conn *c)
{
	int	 rc;

	c->state = C_RELAY;
	c->active = now_mono();
	if (c->req.kind == EGRESS_REQUEST_CONNECT)
		rc = evbuffer_add_printf(bufferevent_get_output(c->client),
		    "HTTP/1.1 200 Connection established\r\n\r\n");
	else
		rc = evbuffer_add(bufferevent_get_output(c->upstream),
		    c->req.upstream, c->req.upstream_len);
	if (rc == -1) {
		conn_refuse(c, 500, "out of memory");
		return;
	}
	if (c->req.kind == EGRESS_REQUEST_FORWARD) {
		c->sent += c->req.upstream_len;
		c->body_left = c->req.body == EGRESS_BODY_LENGTH ?
		    c->req.content_length : 0;
	}
	bufferevent_setwatermark(c->client, EV_READ, 0, EGRESS_RELAY_BUF);
	bufferevent_setwatermark(c->upstream, EV_READ, 0, EGRESS_RELAY_BUF);
	bufferevent_setwatermark(c->client, EV_WRITE, EGRESS_RELAY_BUF / 2, 0);
	bufferevent_setwatermark(c->upstream, EV_WRITE, EGRESS_RELAY_BUF / 2,
	    0);
	bufferevent_setcb(c->client, client_relay_read, client_drained,
	    client_relay_event, c);
	bufferevent_setcb(c->upstream, upstream_relay_read, upstream_drained,
	    upstream_relay_event, c);
	bufferevent_enable(c->client, EV_READ | EV_WRITE);
	bufferevent_enable(c->upstream, EV_READ | EV_WRITE);
	timer_set(c, EGRESS_IDLE_TIMEOUT);
	/* Bytes the client sent after its head (a body, a TLS hello). */
	if (client_relay(c) == -1)
		return;
	if (c->client_eof) {
		c->client_eof = 0;
		client_relay_event(c->client, BEV_EVENT_EOF, c);
	}
}

/* --- connecting --------------------------------------------------------- */

static void
upstream_connect_event(struct bufferevent *bev, short what, void *arg)
{
	struct egress_conn	*c = arg;

	if (what & BEV_EVENT_CONNECTED) {
		evtimer_del(c->timer);
		conn_relay_start(c);
		return;
	}
	conn_connect_next(c);
}

static socklen_t
addr_len(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET ? sizeof(struct sockaddr_in) :
	    sizeof(struct sockaddr_in6);
}

static void
address_text(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	const void	*a;

	if (ss->ss_family == AF_INET)
		a = &((const struct sockaddr_in *)ss)->sin_addr;
	else
		a = &((const struct sockaddr_in6 *)ss)->sin6_addr;
	if (inet_ntop(ss->ss_family, a, buf, (socklen_t)len) == NULL)
		(void)strlcpy(buf, "", len);
}

/* The next allowed address, or a 502 when none is left. */
static void
conn_connect_next(struct egress_conn *c)
{
	struct sockaddr_storage	*ss;

	if (c->upstream != NULL) {
		bufferevent_free(c->upstream);
		c->upstream = NULL;
	}
	if (c->next == c->naddrs) {
		conn_refuse(c, 502, "no address of it answered");
		return;
	}
	ss = &c->addrs[c->next++];
	address_text(ss, c->address, sizeof(c->address));
	c->state = C_CONNECT;
	c->upstream = bufferevent_socket_new(egress.base, -1,
	    BEV_OPT_CLOSE_ON_FREE);
	if (c->upstream == NULL) {
		conn_refuse(c, 500, "out of memory");
		return;
	}
	timer_set(c, EGRESS_CONNECT_TIMEOUT);
	/*
	 * No event callback during the call: libevent runs it at once,
	 * inside the call, when the connect fails at once (no route), and
	 * this function is then the one to go on.  Success is reported
	 * later, from the loop.
	 */
	if (bufferevent_socket_connect(c->upstream, (struct sockaddr *)ss,
	    (int)addr_len(ss)) == -1) {
		log_debug("%s: connect %s: %s", c->sb->id, c->address,
		    strerror(errno));
		if (errno == EMFILE || errno == ENFILE) {
			c->next = c->naddrs;
			conn_refuse(c, 503, "the proxy is out of descriptors");
			return;
		}
		conn_connect_next(c);
		return;
	}
	bufferevent_setcb(c->upstream, NULL, NULL, upstream_connect_event, c);
}

/*
 * Keep the addresses the policy allows, in order, the host's own
 * refused.  None: a 403 with the first one's reason.
 */
static void
conn_check_addresses(struct egress_conn *c, const char *host)
{
	char	 why[EGRESS_WHY_MAX], first[EGRESS_WHY_MAX] = "";
	size_t	 i, kept = 0;
	int	 ok;

	for (i = 0; i < c->naddrs; i++) {
		/* The policy's reason first: "loopback" says more. */
		ok = egress_check(conn_policy(c), &egress.extra, host,
		    c->req.port, &c->addrs[i], why, sizeof(why));
		if (ok && egress_hostaddr_is_host(&egress.host,
		    &c->addrs[i])) {
			(void)strlcpy(why, "the host's own address",
			    sizeof(why));
			ok = 0;
		}
		if (ok)
			c->addrs[kept++] = c->addrs[i];
		else if (first[0] == '\0') {
			(void)strlcpy(first, why, sizeof(first));
			address_text(&c->addrs[i], c->address,
			    sizeof(c->address));
		}
	}
	c->naddrs = kept;
	c->next = 0;
	if (kept == 0) {
		conn_refuse(c, 403, first[0] != '\0' ? first :
		    "the name has no address");
		return;
	}
	address_text(&c->addrs[0], c->address, sizeof(c->address));
	conn_log(c, 1, NULL);
	conn_connect_next(c);
}

/* --- resolving ---------------------------------------------------------- */

static void
resolved(int result, struct evutil_addrinfo *res, void *arg)
{
	struct egress_conn	*c = arg;
	struct evutil_addrinfo	*ai;

	if (result == EVUTIL_EAI_CANCEL) {
		if (res != NULL)
			evutil_freeaddrinfo(res);
		return;
	}
	c->dnsreq = NULL;
	c->dns_result = result;
	c->naddrs = 0;
	for (ai = res; ai != NULL && c->naddrs < EGRESS_ADDRS_MAX;
	    ai = ai->ai_next) {
		if ((ai->ai_family != AF_INET && ai->ai_family != AF_INET6) ||
		    ai->ai_addrlen > sizeof(c->addrs[0]))
			continue;
		memset(&c->addrs[c->naddrs], 0, sizeof(c->addrs[0]));
		memcpy(&c->addrs[c->naddrs], ai->ai_addr, ai->ai_addrlen);
		c->naddrs++;
	}
	if (res != NULL)
		evutil_freeaddrinfo(res);
	/* It may run inside evdns_getaddrinfo(): the rest runs later. */
	event_active(c->step, EV_TIMEOUT, 1);
}

static void
conn_resolved(evutil_socket_t fd, short what, void *arg)
{
	struct egress_conn	*c = arg;

	/* The client went away, or the time ran out, meanwhile. */
	if (c->state != C_RESOLVE)
		return;
	evtimer_del(c->timer);
	if (c->dns_result != 0 && c->naddrs == 0) {
		/* Not the policy's refusal: the name has no address. */
		conn_refuse(c, 502, c->dns_result == EVUTIL_EAI_NONAME ||
		    c->dns_result == EVUTIL_EAI_NODATA ?
		    "the name does not resolve" : "the name did not resolve");
		return;
	}
	conn_check_addresses(c, c->req.host);
}

static void
conn_resolve(struct egress_conn *c)
{
	struct evutil_addrinfo	 hints;
	char			 port[8];

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_protocol = IPPROTO_TCP;
	(void)snprintf(port, sizeof(port), "%u", c->req.port);
	c->state = C_RESOLVE;
	timer_set(c, EGRESS_RESOLVE_TIMEOUT);
	c->dnsreq = evdns_getaddrinfo(egress.dns, c->req.host, port, &hints,
	    resolved, c);
	/* NULL: answered already (see resolved), or failed; either way. */
	if (c->dnsreq == NULL && !event_pending(c->step, EV_TIMEOUT, NULL) &&
	    c->state == C_RESOLVE && c->naddrs == 0 && c->dns_result == 0) {
		c->dns_result = EVUTIL_EAI_FAIL;
		event_active(c->step, EV_TIMEOUT, 1);
	}
}

/* --- the head ----------------------------------------------------------- */

static void
conn_head_done(struct egress_conn *c)
{
	char	 why[EGRESS_WHY_MAX];

	bufferevent_disable(c->client, EV_READ);
	evtimer_del(c->timer);
	if (c->req.host_kind != EGRESS_HOST_NAME) {
		c->addrs[0] = c->req.addr;
		c->naddrs = 1;
		conn_check_addresses(c, NULL);
		return;
	}
	/* A name no rule could pass is not even asked of a nameserver. */
	if (!egress_check_name(conn_policy(c), c->req.host, c->req.port, why,
	    sizeof(why))) {
		conn_refuse(c, 403, why);
		return;
	}
	conn_resolve(c);
}

/* A bad head: no destination to log, but the refusal is audited. */
static void
conn_bad_head(struct egress_conn *c)
{
	c->req.host[0] = '\0';
	c->req.port = 0;
	(void)strlcpy(c->why, c->req.reason != NULL ? c->req.reason :
	    "bad request", sizeof(c->why));
	conn_answer(c, c->req.status != 0 ? c->req.status : 400, c->why);
}

static void
client_head_read(struct bufferevent *bev, void *arg)
{
	struct egress_conn	*c = arg;
	struct evbuffer		*in = bufferevent_get_input(bev);
	struct evbuffer_iovec	 v;
	size_t			 used;
	int			 rc = 0;

	while (rc == 0 && evbuffer_peek(in, -1, NULL, &v, 1) > 0 &&
	    v.iov_len > 0) {
		rc = egress_request_feed(&c->req, v.iov_base, v.iov_len,
		    &used);
		if (rc == 0)
			evbuffer_drain(in, v.iov_len);
		else if (rc == 1)
			evbuffer_drain(in, used);
	}
	if (rc == 1)
		conn_head_done(c);
	else if (rc == -1)
		conn_bad_head(c);
}

static void
client_head_event(struct bufferevent *bev, short what, void *arg)
{
	struct egress_conn	*c = arg;

	/* Gone before its head was whole: nothing was asked. */
	if (c->state == C_HEAD) {
		conn_free(c);
		return;
	}
	/* Gone while resolving or connecting: nothing more to do. */
	if (what & BEV_EVENT_EOF) {
		c->client_eof = 1;
		bufferevent_disable(bev, EV_READ);
		return;
	}
	conn_free(c);
}

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
	(void)clock_gettime(CLOCK_REALTIME, &c->when);
	c->client = bufferevent_socket_new(egress.base, fd,
	    BEV_OPT_CLOSE_ON_FREE);
	c->timer = evtimer_new(egress.base, conn_timeout, c);
	c->step = event_new(egress.base, -1, 0, conn_resolved, c);
	TAILQ_INSERT_TAIL(&sb->conns, c, entry);
	sb->nconns++;
	egress.nconns++;
	if (c->client == NULL) {
		close(fd);
		conn_free(c);
		return;
	}
	if (c->timer == NULL || c->step == NULL) {
		conn_free(c);
		return;
	}
	if ((c->rules = sb->rules) != NULL)
		c->rules->refs++;
	/* The head's bound plus one: the parser refuses the byte past it. */
	bufferevent_setwatermark(c->client, EV_READ, 0, EGRESS_HEAD_MAX + 1);
	bufferevent_setcb(c->client, client_head_read, NULL,
	    client_head_event, c);
	bufferevent_enable(c->client, EV_READ);
	timer_set(c, EGRESS_HEAD_TIMEOUT);
}
