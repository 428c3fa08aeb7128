/*
 * Routing: the table of routes, path matching, 404 and 405, API keys on
 * /v1 routes (after matching: an unknown path is a 404 without a key),
 * and the bookkeeping of requests that wait for managerd.
 */
#include <sys/queue.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apid.h"
#include "log.h"

#define ROUTE_MAX_PARAMS	2
#define PATH_MAX_SEGMENTS	8
/*
 * evhttp answers a larger body itself (with its own 413 page), so its
 * limit sits above ours: JSON routes refuse more than BODY_MAX_JSON with
 * the envelope (body.c).  evhttp 2.1 reads a whole body before any route
 * (and so before the API key) is looked at, so this is what any client
 * can make us hold per connection.  An upload with a Content-Length does
 * not count: its body goes around evhttp (http_intake.c) and is read
 * only once the key and the request are checked; a chunked upload is
 * read by evhttp, and so bounded by this limit.
 */
#define BODY_SLACK		(64 * 1024)
/* What a client may send while we work on its request, unread. */
#define WATCH_READ_MAX		(64 * 1024)
/* How long accepting stops once apid is out of descriptors. */
#define ACCEPT_PAUSE_MSEC	100

typedef void	(*route_handler)(struct evhttp_request *, char **params);

struct route {
	const char		*pattern;	/* "*" segments are parameters */
	enum evhttp_cmd_type	 method;
	route_handler		 handler;
};

static const struct route routes[] = {
	{ "/healthz", EVHTTP_REQ_GET, route_health },
	{ "/openapi.json", EVHTTP_REQ_GET, route_openapi },
	{ "/v1/sandboxes", EVHTTP_REQ_POST, route_sandbox_create },
	{ "/v1/sandboxes", EVHTTP_REQ_GET, route_sandbox_list },
	{ "/v1/sandboxes/*", EVHTTP_REQ_GET, route_sandbox_get },
	{ "/v1/sandboxes/*", EVHTTP_REQ_DELETE, route_sandbox_delete },
	{ "/v1/sandboxes/*/timeout", EVHTTP_REQ_POST, route_sandbox_timeout },
	{ "/v1/sandboxes/*/exec", EVHTTP_REQ_POST, route_exec },
	{ "/v1/sandboxes/*/exec/stream", EVHTTP_REQ_POST, route_exec_stream },
	{ "/v1/sandboxes/*/files", EVHTTP_REQ_GET, route_file_read },
	{ "/v1/sandboxes/*/files", EVHTTP_REQ_PUT, route_file_write },
	{ "/v1/sandboxes/*/files/list", EVHTTP_REQ_GET, route_file_list },
	{ "/v1/sandboxes/*/snapshots", EVHTTP_REQ_POST, route_snapshot_create },
	{ "/v1/sandboxes/*/rollback", EVHTTP_REQ_POST, route_sandbox_rollback },
	{ "/v1/snapshots", EVHTTP_REQ_GET, route_snapshot_list },
	{ "/v1/snapshots/*", EVHTTP_REQ_GET, route_snapshot_get },
	{ "/v1/snapshots/*", EVHTTP_REQ_DELETE, route_snapshot_delete },
	{ "/v1/snapshots/*/fork", EVHTTP_REQ_POST, route_snapshot_fork },
};
#define NROUTES	(sizeof(routes) / sizeof(routes[0]))

static const char *
method_name(enum evhttp_cmd_type m)
{
	switch (m) {
	case EVHTTP_REQ_GET: return "GET";
	case EVHTTP_REQ_POST: return "POST";
	case EVHTTP_REQ_PUT: return "PUT";
	case EVHTTP_REQ_DELETE: return "DELETE";
	case EVHTTP_REQ_HEAD: return "HEAD";
	case EVHTTP_REQ_PATCH: return "PATCH";
	case EVHTTP_REQ_OPTIONS: return "OPTIONS";
	default: return "OTHER";
	}
}

/*
 * Split a decoded path into its segments, in place: "/a/b" gives "a", "b".
 * Returns the count, or -1 if there are too many or the path is relative.
 */
static int
path_split(char *path, char **segs, int max)
{
	int	 n = 0;

	if (*path != '/')
		return -1;
	while (*path == '/') {
		if (n == max)
			return -1;
		*path++ = '\0';
		segs[n++] = path;
		path += strcspn(path, "/");
	}
	return n;
}

/*
 * Match path segments against a pattern ("/v1/sandboxes/ * /exec" without
 * the spaces): "*" matches any non-empty segment and becomes a parameter.
 */
static int
route_match(const char *pattern, char **segs, int nsegs, char **params)
{
	const char	*pp = pattern;
	size_t		 len;
	int		 i, nparams = 0;

	for (i = 0; i < nsegs; i++) {
		if (*pp++ != '/')
			return 0;
		len = strcspn(pp, "/");
		if (len == 1 && *pp == '*') {
			if (segs[i][0] == '\0' || nparams == ROUTE_MAX_PARAMS)
				return 0;
			params[nparams++] = segs[i];
		} else if (strlen(segs[i]) != len ||
		    strncmp(segs[i], pp, len) != 0)
			return 0;
		pp += len;
	}
	return *pp == '\0';
}

static void
send_not_found(struct evhttp_request *req)
{
	respond_error_status(req, 404, "not_found", "Not Found");
}

static void
send_method_not_allowed(struct evhttp_request *req, const char *allow)
{
	evhttp_add_header(evhttp_request_get_output_headers(req), "Allow",
	    allow);
	respond_error_status(req, 405, "method_not_allowed",
	    "Method Not Allowed");
}

static void
http_request_cb(struct evhttp_request *req, void *arg)
{
	const struct evhttp_uri	*uri = evhttp_request_get_evhttp_uri(req);
	const char		*rawpath;
	char			*path, *segs[PATH_MAX_SEGMENTS];
	char			*params[ROUTE_MAX_PARAMS];
	char			 allow[64] = "";
	size_t			 i, len;
	int			 nsegs;

	rawpath = uri != NULL ? evhttp_uri_get_path(uri) : NULL;
	if (rawpath == NULL || *rawpath == '\0')
		rawpath = "/";
	/* Decode before matching, so %2F cannot smuggle a '/'. */
	if ((path = evhttp_uridecode(rawpath, 0, &len)) == NULL) {
		respond_error(req, ERR_INTERNAL, "out of memory");
		return;
	}
	log_debug("%s %s", method_name(evhttp_request_get_command(req)), path);
	/*
	 * A diverted upload body (http_intake.c) that no handler takes is
	 * never read: the connection closes after the answer.  The upload
	 * route lifts this once it reads the body.
	 */
	if (evhttp_find_header(evhttp_request_get_input_headers(req),
	    UPLOAD_LENGTH_HEADER) != NULL)
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Connection", "close");
	/* An encoded NUL, or more segments than any route has: no route. */
	if (strlen(path) != len ||
	    (nsegs = path_split(path, segs, PATH_MAX_SEGMENTS)) == -1) {
		send_not_found(req);
		free(path);
		return;
	}
	for (i = 0; i < NROUTES; i++) {
		if (!route_match(routes[i].pattern, segs, nsegs, params))
			continue;
		if (routes[i].method == evhttp_request_get_command(req)) {
			if (strncmp(routes[i].pattern, "/v1/", 4) == 0 &&
			    auth_request(req, apid->api_keys,
			    apid->api_keys_count,
			    apid->insecure_no_auth) == -1) {
				free(path);
				return;
			}
			routes[i].handler(req, params);
			free(path);
			return;
		}
		if (allow[0] != '\0')
			strlcat(allow, ", ", sizeof(allow));
		strlcat(allow, method_name(routes[i].method), sizeof(allow));
	}
	if (allow[0] != '\0')
		send_method_not_allowed(req, allow);
	else
		send_not_found(req);
	free(path);
}

/* After apid.c has read max_file_bytes from managerd. */
void
http_setup(struct evhttp *http)
{
	evhttp_set_allowed_methods(http, EVHTTP_REQ_GET | EVHTTP_REQ_POST |
	    EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE | EVHTTP_REQ_HEAD |
	    EVHTTP_REQ_PATCH | EVHTTP_REQ_OPTIONS);
	evhttp_set_max_headers_size(http, 64 * 1024);
	evhttp_set_max_body_size(http, BODY_MAX_JSON + BODY_SLACK);
	http_intake_setup(http);
	evhttp_set_gencb(http, http_request_cb, NULL);
}

/*
 * evhttp has no connection limit.  apid's descriptor limit is the limit
 * (apid.c lowers it before the seccomp filter): at it, accept(2) fails
 * with EMFILE and we stop accepting for a while, as OpenBSD httpd does,
 * instead of retrying the refused accept in a busy loop.  The clients
 * above the limit wait in the listen queue.
 */
static struct evconnlistener	*http_listener;
static struct event		*http_accept_ev;

static void
http_accept_resume(evutil_socket_t fd, short event, void *arg)
{
	evconnlistener_enable(http_listener);
}

static void
http_accept_error(struct evconnlistener *lev, void *arg)
{
	struct timeval	 tv = { 0, ACCEPT_PAUSE_MSEC * 1000 };
	int		 saved = errno;

	if (saved != EMFILE && saved != ENFILE && saved != ENOBUFS &&
	    saved != ENOMEM) {
		log_warnx("accept: %s", strerror(saved));
		return;
	}
	log_debug("accept: %s; pausing", strerror(saved));
	evconnlistener_disable(lev);
	evtimer_add(http_accept_ev, &tv);
}

void
http_listen(struct evhttp *http, struct event_base *base, int fd)
{
	struct evhttp_bound_socket	*bound;

	if ((bound = evhttp_accept_socket_with_handle(http, fd)) == NULL)
		fatalx("cannot accept on the listener");
	if ((http_listener = evhttp_bound_socket_get_listener(bound)) == NULL)
		fatalx("evhttp_bound_socket_get_listener");
	if ((http_accept_ev = evtimer_new(base, http_accept_resume,
	    NULL)) == NULL)
		fatalx("evtimer_new");
	evconnlistener_set_error_cb(http_listener, http_accept_error);
}

/* The reply is out: the next request on the connection reads freely. */
static void
watch_done(struct evhttp_request *req, void *arg)
{
	struct evhttp_connection	*evcon;
	struct bufferevent		*bev;

	if ((evcon = evhttp_request_get_connection(req)) != NULL &&
	    (bev = evhttp_connection_get_bufferevent(evcon)) != NULL)
		bufferevent_setwatermark(bev, EV_READ, 0, 0);
}

/*
 * evhttp stops reading a connection while we work on its request, so it
 * would learn that the client hung up only when the reply fails.  Read
 * (into the input buffer, for a pipelined next request, bounded by a
 * watermark that lasts until the reply is out) so that EOF reaches
 * evhttp's error callback now: it detaches the request and runs the close
 * callback, which tells us the client is gone.
 */
void
http_watch_close(struct evhttp_request *req)
{
	struct evhttp_connection	*evcon;
	struct bufferevent		*bev;
	bufferevent_data_cb		 wcb;
	bufferevent_event_cb		 ecb;
	void				*cbarg;

	if ((evcon = evhttp_request_get_connection(req)) == NULL ||
	    (bev = evhttp_connection_get_bufferevent(evcon)) == NULL)
		return;
	bufferevent_getcb(bev, NULL, &wcb, &ecb, &cbarg);
	bufferevent_setcb(bev, NULL, wcb, ecb, cbarg);
	bufferevent_setwatermark(bev, EV_READ, 0, WATCH_READ_MAX);
	evhttp_request_set_on_complete_cb(req, watch_done, NULL);
	bufferevent_enable(bev, EV_READ);
}

static void
connection_closed_cb(struct evhttp_connection *evcon, void *arg)
{
	struct apid_request	*ar = arg;

	ar->client_gone = 1;
	if (ar->gone != NULL)
		ar->gone(ar);
}

/*
 * Forward a request to managerd and remember who to answer.  The reply
 * callback runs for each message managerd sends for it, whatever happened
 * to the client.  fd (or -1) travels with the message and is ours no
 * more, even on failure.
 */
struct apid_request *
apid_request_send(struct evhttp_request *req, uint32_t type, struct msgw *w,
    int fd, apid_reply_cb reply, void *arg)
{
	struct apid_request		*ar;
	struct evhttp_connection	*evcon;

	if ((ar = calloc(1, sizeof(*ar))) == NULL) {
		if (fd != -1)
			close(fd);
		return NULL;
	}
	ar->id = apid->next_id++;
	if (apid->next_id == 0)
		apid->next_id = 1;
	ar->req = req;
	ar->reply = reply;
	ar->arg = arg;
	if (peer_send(&apid->parent, type, ar->id, fd, w) == -1) {
		free(ar);
		return NULL;
	}
	if ((evcon = evhttp_request_get_connection(req)) != NULL)
		evhttp_connection_set_closecb(evcon, connection_closed_cb, ar);
	http_watch_close(req);
	TAILQ_INSERT_TAIL(&apid->pending, ar, entry);
	return ar;
}

void
apid_request_release(struct apid_request *ar)
{
	struct evhttp_connection	*evcon;

	TAILQ_REMOVE(&apid->pending, ar, entry);
	if (!ar->client_gone &&
	    (evcon = evhttp_request_get_connection(ar->req)) != NULL)
		evhttp_connection_set_closecb(evcon, NULL, NULL);
	free(ar);
}

void
apid_dispatch_parent(struct peer *p, struct imsg *imsg)
{
	struct apid_request		*ar;
	struct evhttp_connection	*evcon;

	if (imsg->hdr.type == MSG_TAR_CHECK) {
		tar_check_request(p, imsg);
		return;
	}
	if (imsg->hdr.type == MSG_APID_WORKER_CHANNEL) {
		tar_jobs_channel(p, imsg);
		return;
	}
	if (imsg->fd != -1 && imsg->hdr.type != MSG_SNAPSHOT_SINK)
		peer_bad_message(p, imsg, "unexpected descriptor");
	TAILQ_FOREACH(ar, &apid->pending, entry)
		if (ar->id == imsg->hdr.peerid)
			break;
	if (ar == NULL)
		peer_bad_message(p, imsg, "reply to no pending request");
	/*
	 * Unhook from the connection before a final reply: sending it may
	 * free the connection, whose close callback must not find ar.
	 * A request that goes on hooks itself back.
	 */
	if (!ar->client_gone &&
	    (evcon = evhttp_request_get_connection(ar->req)) != NULL)
		evhttp_connection_set_closecb(evcon, NULL, NULL);
	if (ar->reply(ar, imsg) == APID_REPLY_MORE) {
		if (!ar->client_gone &&
		    (evcon = evhttp_request_get_connection(ar->req)) != NULL)
			evhttp_connection_set_closecb(evcon,
			    connection_closed_cb, ar);
		return;
	}
	TAILQ_REMOVE(&apid->pending, ar, entry);
	free(ar);
}
