/*
 * Routing: the table of routes, path matching, 404 and 405, API keys on
 * /v1 routes (after matching: an unknown path is a 404 without a key),
 * then the body: JSON routes get theirs whole (at most BODY_MAX_JSON,
 * read only once the key is checked), an upload streams its own.  And
 * the bookkeeping of requests that wait for managerd.
 */
#include <sys/queue.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "apid.h"
#include "log.h"

#define ROUTE_MAX_PARAMS	2
#define PATH_MAX_SEGMENTS	8

typedef void	(*route_handler)(struct http_request *, char **params);

enum route_body {
	ROUTE_BODY_WHOLE,	/* read it all first (JSON, or none) */
	ROUTE_BODY_STREAM	/* the handler reads it (uploads) */
};

struct route {
	const char		*pattern;	/* "*" segments are parameters */
	const char		*method;
	route_handler		 handler;
	enum route_body		 body;
};

static const struct route routes[] = {
	{ "/healthz", "GET", route_health, ROUTE_BODY_WHOLE },
	{ "/openapi.json", "GET", route_openapi, ROUTE_BODY_WHOLE },
	{ "/metrics", "GET", route_metrics, ROUTE_BODY_WHOLE },
	{ "/v1/sandboxes", "POST", route_sandbox_create, ROUTE_BODY_WHOLE },
	{ "/v1/sandboxes", "GET", route_sandbox_list, ROUTE_BODY_WHOLE },
	{ "/v1/sandboxes/*", "GET", route_sandbox_get, ROUTE_BODY_WHOLE },
	{ "/v1/sandboxes/*", "DELETE", route_sandbox_delete,
	    ROUTE_BODY_WHOLE },
	{ "/v1/sandboxes/*", "PATCH", route_sandbox_patch, ROUTE_BODY_WHOLE },
	{ "/v1/sandboxes/*/timeout", "POST", route_sandbox_timeout,
	    ROUTE_BODY_WHOLE },
	{ "/v1/sandboxes/*/stats", "GET", route_sandbox_stats,
	    ROUTE_BODY_WHOLE },
	{ "/v1/sandboxes/*/network", "GET", route_network_get,
	    ROUTE_BODY_WHOLE },
	{ "/v1/sandboxes/*/network", "PUT", route_network_put,
	    ROUTE_BODY_WHOLE },
	{ "/v1/sandboxes/*/network/log", "GET", route_network_log,
	    ROUTE_BODY_WHOLE },
	{ "/v1/sandboxes/*/exec", "POST", route_exec, ROUTE_BODY_WHOLE },
	{ "/v1/sandboxes/*/exec/stream", "POST", route_exec_stream,
	    ROUTE_BODY_WHOLE },
	{ "/v1/sandboxes/*/files", "GET", route_file_read, ROUTE_BODY_WHOLE },
	{ "/v1/sandboxes/*/files", "PUT", route_file_write,
	    ROUTE_BODY_STREAM },
	{ "/v1/sandboxes/*/files/list", "GET", route_file_list,
	    ROUTE_BODY_WHOLE },
	{ "/v1/sandboxes/*/snapshots", "POST", route_snapshot_create,
	    ROUTE_BODY_WHOLE },
	{ "/v1/sandboxes/*/rollback", "POST", route_sandbox_rollback,
	    ROUTE_BODY_WHOLE },
	{ "/v1/snapshots", "GET", route_snapshot_list, ROUTE_BODY_WHOLE },
	{ "/v1/snapshots/*", "GET", route_snapshot_get, ROUTE_BODY_WHOLE },
	{ "/v1/snapshots/*", "DELETE", route_snapshot_delete,
	    ROUTE_BODY_WHOLE },
	{ "/v1/snapshots/*/fork", "POST", route_snapshot_fork,
	    ROUTE_BODY_WHOLE },
	{ "/v1/sandboxes/*/processes", "POST", route_process_create,
	    ROUTE_BODY_WHOLE },
	{ "/v1/sandboxes/*/processes", "GET", route_process_list,
	    ROUTE_BODY_WHOLE },
	{ "/v1/sandboxes/*/processes/*", "GET", route_process_get,
	    ROUTE_BODY_WHOLE },
	{ "/v1/sandboxes/*/processes/*", "DELETE", route_process_delete,
	    ROUTE_BODY_WHOLE },
	{ "/v1/sandboxes/*/processes/*/signal", "POST", route_process_signal,
	    ROUTE_BODY_WHOLE },
	{ "/v1/sandboxes/*/processes/*/resize", "POST", route_process_resize,
	    ROUTE_BODY_WHOLE },
	/* Raw bytes, read whole too: see route_process_stdin.c. */
	{ "/v1/sandboxes/*/processes/*/stdin", "POST", route_process_stdin,
	    ROUTE_BODY_WHOLE },
	{ "/v1/sandboxes/*/processes/*/output", "GET", route_process_output,
	    ROUTE_BODY_WHOLE },
	/* It refuses a body itself, before any is read. */
	{ "/v1/sandboxes/*/processes/*/attach", "GET", route_process_attach,
	    ROUTE_BODY_STREAM },
	{ "/v1/sandboxes/*/processes/*/attach-token", "POST",
	    route_process_attach_token, ROUTE_BODY_WHOLE },
};
#define NROUTES	(sizeof(routes) / sizeof(routes[0]))

/* A request whose body is being collected for its route. */
struct routed {
	const struct route	*route;
	char			*segs[PATH_MAX_SEGMENTS];
	char			*params[ROUTE_MAX_PARAMS];
};

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
send_method_not_allowed(struct http_request *req, const char *allow)
{
	http_add_field(req, "Allow", allow);
	respond_error_status(req, 405, "method_not_allowed",
	    "Method Not Allowed");
}

/* The route for the request's path and method; NULL if answered. */
static const struct route *
route_find(struct http_request *req, char **params)
{
	char	*segs[PATH_MAX_SEGMENTS], allow[64] = "";
	size_t	 i;
	int	 nsegs;

	if ((nsegs = path_split(req->path, segs, PATH_MAX_SEGMENTS)) == -1) {
		respond_error_status(req, 404, "not_found", "Not Found");
		return NULL;
	}
	for (i = 0; i < NROUTES; i++) {
		if (!route_match(routes[i].pattern, segs, nsegs, params))
			continue;
		/* The metrics' label: a pattern of ours, never the path. */
		req->route = routes[i].pattern;
		if (strcmp(routes[i].method, http_request_method(req)) == 0)
			return &routes[i];
		if (allow[0] != '\0')
			strlcat(allow, ", ", sizeof(allow));
		strlcat(allow, routes[i].method, sizeof(allow));
	}
	if (allow[0] != '\0')
		send_method_not_allowed(req, allow);
	else
		respond_error_status(req, 404, "not_found", "Not Found");
	return NULL;
}

static void
body_collected(void *arg, int ok)
{
	struct http_request	*req = arg;
	struct routed		*r = req->route_data;
	char			 msg[64];

	req->route_data = NULL;
	if (!ok && req->conn != NULL) {
		/* Past the limit; the connection closes after the 413. */
		snprintf(msg, sizeof(msg), "request body is larger than %d "
		    "bytes", BODY_MAX_JSON);
		respond_error(req, ERR_PAYLOAD_TOO_LARGE, msg);
	} else if (!ok)
		http_reply_abort(req);		/* the client is gone: frees */
	else
		r->route->handler(req, r->params);
	free(r);
}


static void
route_body(struct http_request *req, const struct route *route,
    char **params)
{
	struct routed	*r;

	if (route->body == ROUTE_BODY_STREAM) {
		route->handler(req, params);
		return;
	}
	if ((r = calloc(1, sizeof(*r))) == NULL) {
		respond_error(req, ERR_INTERNAL, "out of memory");
		return;
	}
	r->route = route;
	memcpy(r->params, params, sizeof(r->params));
	req->route_data = r;
	if (http_body_collect(req, BODY_MAX_JSON, body_collected) == -1) {
		/* Declared too large: refused from the head alone. */
		req->route_data = NULL;
		free(r);
		body_collected(req, 0);
	}
}

/*
 * The route as the OpenAPI document names it, for the caller (and so
 * the audit log): "POST /v1/sandboxes/{sandbox_id}/exec".  A "*" takes
 * the name of the collection before it.
 */
static char *
route_template(const struct route *route)
{
	static const char *const	 names[][2] = {
		{ "sandboxes", "{sandbox_id}" },
		{ "snapshots", "{snapshot_id}" },
		{ "processes", "{process_id}" },
	};
	char				 out[CALLER_MAX_ROUTE];
	char				 prev[32] = "";
	const char			*p = route->pattern, *name;
	size_t				 len, i;

	strlcpy(out, route->method, sizeof(out));
	strlcat(out, " ", sizeof(out));
	while (*p == '/') {
		p++;
		len = strcspn(p, "/");
		name = NULL;
		for (i = 0; len == 1 && *p == '*' &&
		    i < sizeof(names) / sizeof(names[0]); i++)
			if (strcmp(prev, names[i][0]) == 0)
				name = names[i][1];
		strlcat(out, "/", sizeof(out));
		if (name != NULL)
			strlcat(out, name, sizeof(out));
		else if (len < sizeof(prev)) {
			memcpy(prev, p, len);
			prev[len] = '\0';
			strlcat(out, prev, sizeof(out));
		}
		p += len;
	}
	return strdup(out);
}

void
http_route(struct http_request *req)
{
	const struct route	*route;
	char			*params[ROUTE_MAX_PARAMS] = { NULL, NULL };

	log_debug("%s %s", http_request_method(req), req->path);
	if ((route = route_find(req, params)) == NULL)
		return;
	free(req->caller.route);
	if ((req->caller.route = route_template(route)) == NULL) {
		respond_error(req, ERR_INTERNAL, "out of memory");
		return;
	}
	/*
	 * An attachment checks its own: a browser's WebSocket carries an
	 * attach token, not a key (route_attach.c).  It reads no body: an
	 * unauthenticated client cannot make us read one.
	 */
	if (strncmp(route->pattern, "/v1/", 4) == 0 &&
	    route->handler != route_process_attach &&
	    auth_request(req, apid->api_keys, apid->api_keys_count,
	    apid->insecure_no_auth) == -1)
		return;
	route_body(req, route, params);
}

/* apid_request: requests that wait for managerd. */

static void
apid_request_gone(void *arg)
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
 * more, even on failure.  req is NULL for a request with no HTTP client
 * (an attachment's, once its connection became a WebSocket): it is one
 * whose client is gone from the start.
 */
struct apid_request *
apid_request_send(struct http_request *req, uint32_t type, struct msgw *w,
    int fd, apid_reply_cb reply, void *arg)
{
	static const struct caller	 nobody;

	return apid_request_send_as(req != NULL ? &req->caller : &nobody, req,
	    type, w, fd, reply, arg);
}

/*
 * Every request is preceded by its caller (MSG_CALLER, msg.h), with the
 * request's id: managerd refuses a request that comes without one.
 */
struct apid_request *
apid_request_send_as(const struct caller *caller, struct http_request *req,
    uint32_t type, struct msgw *w, int fd, apid_reply_cb reply, void *arg)
{
	struct apid_request	*ar;
	struct msgw		 cw;

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
	msgw_init(&cw);
	msg_put_caller(&cw, caller);
	/* What cannot go goes not at all: no caller without its request. */
	if (cw.overflow || (w != NULL && w->overflow) ||
	    peer_send(&apid->parent, MSG_CALLER, ar->id, -1, &cw) == -1) {
		if (w != NULL && w->overflow)
			log_warnx("%s does not fit in one message",
			    msg_type_name(type));
		if (fd != -1)
			close(fd);
		free(ar);
		return NULL;
	}
	/* Only out of memory now; managerd would take the next for a lie. */
	if (peer_send(&apid->parent, type, ar->id, fd, w) == -1)
		fatalx("cannot queue %s after its caller", msg_type_name(type));
	ar->client_gone = req == NULL || req->conn == NULL;
	if (req != NULL)
		http_request_on_gone(req, apid_request_gone, ar);
	TAILQ_INSERT_TAIL(&apid->pending, ar, entry);
	return ar;
}

void
apid_request_release(struct apid_request *ar)
{
	TAILQ_REMOVE(&apid->pending, ar, entry);
	if (!ar->client_gone)
		http_request_on_gone(ar->req, NULL, NULL);
	free(ar);
}

void
apid_dispatch_parent(struct peer *p, struct imsg *imsg)
{
	struct apid_request	*ar;

	if (imsg->hdr.type == MSG_TAR_CHECK) {
		tar_check_request(p, imsg);
		return;
	}
	if (imsg->hdr.type == MSG_APID_KEYS) {
		/* A removed key's tokens go with it, and a changed key's. */
		if (auth_keys_chunk(p, imsg))
			attach_tokens_keep(auth_keys_same);
		return;
	}
	if (imsg->hdr.type == MSG_APID_WORKER_CHANNEL) {
		tar_jobs_channel(p, imsg);
		return;
	}
	if (imsg->fd != -1 && imsg->hdr.type != MSG_SNAPSHOT_SINK &&
	    imsg->hdr.type != MSG_FILE_SPOOL &&
	    imsg->hdr.type != MSG_FILE_WRITE_READY)
		peer_bad_message(p, imsg, "unexpected descriptor");
	TAILQ_FOREACH(ar, &apid->pending, entry)
		if (ar->id == imsg->hdr.peerid)
			break;
	if (ar == NULL)
		peer_bad_message(p, imsg, "reply to no pending request");
	/*
	 * A final reply frees the request: its gone callback must not find
	 * ar afterwards.  A request that goes on hooks itself back.
	 */
	if (!ar->client_gone)
		http_request_on_gone(ar->req, NULL, NULL);
	if (ar->reply(ar, imsg) == APID_REPLY_MORE) {
		if (!ar->client_gone)
			http_request_on_gone(ar->req, apid_request_gone, ar);
		return;
	}
	TAILQ_REMOVE(&apid->pending, ar, entry);
	free(ar);
}
