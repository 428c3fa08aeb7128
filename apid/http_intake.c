/*
 * Each client connection's bufferevent (evhttp_set_bevcb): a filter over
 * the socket that frames requests (http_frame.c) and takes the body of
 * an upload away from evhttp, which in libevent 2.1 would read it whole
 * before any handler, and before the API key, is looked at.  Until a
 * handler takes the body, at most INTAKE_MAX bytes of it wait here:
 * beyond that the filter leaves the socket's bytes where they are, the
 * socket bufferevent stops at its watermark, and TCP pushes back on the
 * client.  The upload handler, once the key and the request are checked
 * (and the declared length against its cap), takes the body
 * (http_intake_collect): from then on the filter reads all of it, and
 * the handler gets it whole, or learns that the client went away first.
 * Nothing of a body goes further before it is complete, so a client
 * that stops half-way cannot leave half a file behind.
 *
 * Output: libevent's filter tells evhttp its reply is written when it
 * is in the socket bufferevent's buffer, not the socket, and does not
 * resume writing when evhttp re-enables EV_WRITE; evhttp then closes a
 * connection with its last reply unsent, or never sends the reply of a
 * kept-alive one.  So the output filter writes to the socket itself and
 * waits for it to be writable, and a new reply kicks the filter.
 *
 * evhttp, seeing Content-Length: 0, never answers an upload's "Expect:
 * 100-continue", and a client such as curl then waits a second before it
 * sends the body.  So the intake sends the 100 itself when the handler,
 * the key and the request checked, takes the body: a refused upload gets
 * its final answer alone, as it should.  The 100 goes to the socket
 * directly (evhttp's bufferevent is not writing between a request and
 * its reply) and always before the reply.
 */
#include <sys/queue.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>

#include "apid.h"
#include "log.h"

/* A diverted body that waits for its handler or its pipe. */
#define INTAKE_MAX		(256 * 1024)
/* What the socket bufferevent reads ahead of the filter. */
#define INTAKE_READ_MAX		(64 * 1024)
#define CONTINUE_LINE		"HTTP/1.1 100 Continue\r\n\r\n"

struct intake {
	TAILQ_ENTRY(intake)	 entry;
	struct bufferevent	*bev;		/* the filter: evhttp's */
	struct bufferevent	*under;		/* the socket */
	struct http_framer	 fr;
	struct evbuffer		*body;		/* diverted, as it was read */
	struct evbuffer		*whole;		/* a taken body, packed */
	struct evbuffer		*interim;	/* a 100 Continue, unsent */
	struct event		*kick;		/* a reply to write */
	struct event		*sockw;		/* the socket is writable */
	struct event		*done;		/* collected: tell the handler */
	int			 pending;	/* a diverted body, not taken */
	http_intake_cb		 collect;	/* the handler that took it */
	void			*collect_arg;
};

static TAILQ_HEAD(, intake)	 intakes = TAILQ_HEAD_INITIALIZER(intakes);

static void	intake_kick_cb(evutil_socket_t, short, void *);

static void
intake_free(void *arg)
{
	struct intake	*in = arg;
	http_intake_cb	 cb;

	TAILQ_REMOVE(&intakes, in, entry);
	/* The client went away before its whole body came. */
	if ((cb = in->collect) != NULL) {
		in->collect = NULL;
		cb(in->collect_arg, NULL);
	}
	if (in->kick != NULL)
		event_free(in->kick);
	if (in->sockw != NULL)
		event_free(in->sockw);
	if (in->done != NULL)
		event_free(in->done);
	if (in->body != NULL)
		evbuffer_free(in->body);
	if (in->whole != NULL)
		evbuffer_free(in->whole);
	if (in->interim != NULL)
		evbuffer_free(in->interim);
	free(in);
}

/*
 * A taken body, copied into full chains: the socket's reads leave chains
 * half empty (16 KiB in a 32 KiB allocation), and moved as they are the
 * body would cost twice its size while it waits.
 */
static int
intake_pack(struct intake *in)
{
	unsigned char	*p;
	size_t		 n;

	while ((n = evbuffer_get_contiguous_space(in->body)) > 0) {
		if ((p = evbuffer_pullup(in->body, (ssize_t)n)) == NULL ||
		    evbuffer_add(in->whole, p, n) == -1)
			return -1;
		evbuffer_drain(in->body, n);
	}
	return 0;
}

static enum bufferevent_filter_result
intake_in(struct evbuffer *src, struct evbuffer *dst, ev_ssize_t limit,
    enum bufferevent_flush_mode mode, void *arg)
{
	struct intake	*in = arg;
	size_t		 room, have = evbuffer_get_length(in->body);
	int		 ev;

	room = limit < 0 ? SIZE_MAX : (size_t)limit;
	/* A taken body is read whole: its length was checked. */
	ev = http_frame(&in->fr, src, dst, room, in->body,
	    in->collect != NULL ? SIZE_MAX :
	    have < INTAKE_MAX ? INTAKE_MAX - have : 0);
	if (ev == -1)
		return BEV_ERROR;
	if (ev & FRAME_DIVERTED)
		in->pending = 1;
	if (in->collect != NULL && intake_pack(in) == -1)
		return BEV_ERROR;
	if (in->collect != NULL && in->fr.state == FRAME_HELD)
		event_active(in->done, EV_READ, 0);
	return (ev & FRAME_PROGRESS) ? BEV_OK : BEV_NEED_MORE;
}

/* The event that waits for the socket to be writable, made once. */
static int
intake_sockw(struct intake *in)
{
	if (in->sockw == NULL && (in->sockw = event_new(
	    bufferevent_get_base(in->bev), bufferevent_getfd(in->under),
	    EV_WRITE, intake_kick_cb, in)) == NULL)
		return -1;
	return 0;
}

/* Write what is left of a 100 Continue: 1 if some still waits. */
static int
intake_interim(struct intake *in)
{
	if (evbuffer_get_length(in->interim) == 0)
		return 0;
	/* An error shows again on the next read or write of the socket. */
	if (evbuffer_write(in->interim, bufferevent_getfd(in->under)) ==
	    -1 && errno != EAGAIN && errno != EINTR)
		evbuffer_drain(in->interim, evbuffer_get_length(in->interim));
	if (evbuffer_get_length(in->interim) == 0)
		return 0;
	event_add(in->sockw, NULL);
	return 1;
}

static enum bufferevent_filter_result
intake_out(struct evbuffer *src, struct evbuffer *dst, ev_ssize_t limit,
    enum bufferevent_flush_mode mode, void *arg)
{
	struct intake	*in = arg;
	evutil_socket_t	 fd = bufferevent_getfd(in->under);
	int		 n;

	if (intake_sockw(in) == -1 || intake_interim(in))
		return BEV_NEED_MORE;
	n = evbuffer_write(src, fd);
	if (n == -1 && errno != EAGAIN && errno != EINTR) {
		bufferevent_trigger_event(in->bev, BEV_EVENT_WRITING |
		    BEV_EVENT_ERROR, BEV_TRIG_DEFER_CALLBACKS);
		return BEV_ERROR;
	}
	if (evbuffer_get_length(src) > 0)
		event_add(in->sockw, NULL);
	return n > 0 ? BEV_OK : BEV_NEED_MORE;
}

static void
intake_kick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct intake	*in = arg;

	if (in->sockw != NULL && intake_interim(in))
		return;
	bufferevent_flush(in->bev, EV_WRITE, BEV_NORMAL);
}

static void
intake_outbuf_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct intake	*in = arg;

	if (info->n_added > 0)
		event_active(in->kick, EV_WRITE, 0);
}

/*
 * A taken body: whole, it goes to the handler (outside the filter, which
 * must not see a reply begin); not yet, the filter reads on, from what
 * the socket bufferevent holds first.
 */
static void
intake_done_cb(evutil_socket_t fd, short what, void *arg)
{
	struct intake	*in = arg;
	http_intake_cb	 cb;

	if ((cb = in->collect) != NULL && intake_pack(in) == -1) {
		/* Out of memory: the rest of the body is never read. */
		log_warnx("upload: out of memory");
		in->collect = NULL;
		in->fr.state = FRAME_DISCARD;
		evbuffer_drain(in->body, evbuffer_get_length(in->body));
		evbuffer_drain(in->whole, evbuffer_get_length(in->whole));
		cb(in->collect_arg, NULL);
		return;
	}
	if (cb != NULL && in->fr.state == FRAME_HELD) {
		in->collect = NULL;
		http_frame_release(&in->fr);
		cb(in->collect_arg, in->whole);
		evbuffer_drain(in->whole, evbuffer_get_length(in->whole));
	}
	bufferevent_trigger(in->under, EV_READ, BEV_TRIG_IGNORE_WATERMARKS |
	    BEV_TRIG_DEFER_CALLBACKS);
}

static struct bufferevent *
intake_bevcb(struct event_base *base, void *arg)
{
	struct intake	*in;
	struct bufferevent *under;

	if ((in = calloc(1, sizeof(*in))) == NULL)
		return NULL;
	http_frame_init(&in->fr);
	TAILQ_INSERT_TAIL(&intakes, in, entry);
	if ((in->body = evbuffer_new()) == NULL ||
	    (in->whole = evbuffer_new()) == NULL ||
	    (in->interim = evbuffer_new()) == NULL ||
	    (in->kick = event_new(base, -1, 0, intake_kick_cb, in)) == NULL ||
	    (in->done = event_new(base, -1, 0, intake_done_cb, in)) == NULL ||
	    (under = bufferevent_socket_new(base, -1,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		intake_free(in);
		return NULL;
	}
	if ((in->bev = bufferevent_filter_new(under, intake_in, intake_out,
	    BEV_OPT_CLOSE_ON_FREE, intake_free, in)) == NULL) {
		bufferevent_free(under);
		intake_free(in);
		return NULL;
	}
	in->under = under;
	bufferevent_setwatermark(under, EV_READ, 0, INTAKE_READ_MAX);
	evbuffer_add_cb(bufferevent_get_output(in->bev), intake_outbuf_cb, in);
	return in->bev;
}

void
http_intake_setup(struct evhttp *http)
{
	evhttp_set_bevcb(http, intake_bevcb, NULL);
}

static struct intake *
intake_of(struct evhttp_request *req)
{
	struct evhttp_connection	*evcon;
	struct bufferevent		*bev;
	struct intake			*in;

	if ((evcon = evhttp_request_get_connection(req)) == NULL ||
	    (bev = evhttp_connection_get_bufferevent(evcon)) == NULL)
		return NULL;
	TAILQ_FOREACH(in, &intakes, entry)
		if (in->bev == bev)
			return in;
	return NULL;
}

/*
 * The request's diverted body, declared len bytes: 1 if it waits for
 * http_intake_collect, 0 if there is none.  Only the request the framer
 * rewrote carries UPLOAD_LENGTH_HEADER, and evhttp sees no later head
 * of its connection before the body is taken or the connection gone.
 */
int
http_intake_pending(struct evhttp_request *req, uint64_t len)
{
	struct intake	*in = intake_of(req);

	return in != NULL && in->pending && in->fr.divert_len == len;
}

/*
 * Take the request's diverted body: cb gets it whole (its chains may be
 * moved out), or NULL if the connection goes first; once, and never
 * from within this call.  -1 if there is no body to take.
 */
int
http_intake_collect(struct evhttp_request *req, http_intake_cb cb, void *arg)
{
	struct intake	*in = intake_of(req);

	if (in == NULL || !in->pending) {
		errno = ENOENT;
		return -1;
	}
	in->pending = 0;
	in->collect = cb;
	in->collect_arg = arg;
	event_active(in->done, EV_READ, 0);
	/* No 100 once the client has started on the body (RFC 9110 10.1.1). */
	if (in->fr.expect && in->fr.left == in->fr.divert_len &&
	    intake_sockw(in) == 0 && evbuffer_add(in->interim, CONTINUE_LINE,
	    strlen(CONTINUE_LINE)) == 0)
		intake_interim(in);
	in->fr.expect = 0;
	return 0;
}

/* The body will not be read: the connection must close after the reply. */
void
http_intake_refuse(struct evhttp_request *req)
{
	struct intake	*in = intake_of(req);

	evhttp_remove_header(evhttp_request_get_output_headers(req),
	    "Connection");
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Connection", "close");
	if (in == NULL)
		return;
	in->pending = 0;
	in->fr.state = FRAME_DISCARD;
	evbuffer_drain(in->body, evbuffer_get_length(in->body));
}
