/*
 * GET /v1/sandboxes/{sb}/processes/{p}/attach (docs/rest-api.md
 * "Processes"): the opening handshake of an attachment's WebSocket
 * (RFC 6455 §4.2), up to the 101; attach.c runs the socket after it.
 *
 * A request with a body is refused (400) before any of it is read: the
 * router leaves the body to this route, and authentication too.  That
 * is the usual key in a header, or else ?token= from .../attach-token,
 * which opens only the process it was made for (attach_token.c), checked
 * after the handshake's fields so that a refused handshake leaves the
 * token good.  Then PROCESS_OUTPUT with after 0 and follow 1 and
 * a pipe's write end.  managerd answers PROCESS_OUTPUT_STARTED (the 101
 * goes now) or MSG_ERROR, a normal JSON error: an unknown process is a
 * 404 before any upgrade.  A client that left before the answer gets
 * nothing; closing the pipe tells managerd.
 */
#include <sys/queue.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "apid.h"
#include "log.h"
#include "websocket.h"

struct attach_request {
	struct http_request	*req;
	struct http_server	*srv;		/* the socket's, at the 101 */
	int			 fd;		/* the output pipe's read end */
	struct process_ref	 ref;
	/* The request's, copied: the 101 frees the request before takeover. */
	struct caller		 caller;
	char			 accept[WS_ACCEPT_LEN + 1];
};

static void
attach_request_free(struct attach_request *st)
{
	if (st->fd != -1)
		close(st->fd);
	process_ref_free(&st->ref);
	caller_free(&st->caller);
	free(st);
}

/*
 * The key in a header, or this process's token in the query.  A key
 * header present decides: a wrong key is refused whatever the token.
 */
static int
attach_auth(struct http_request *req, char **params)
{
	const char	*authz = http_request_field(req, "Authorization");
	const char	*key = http_request_field(req, "X-API-Key");
	char		*token;
	size_t		 len;
	int		 rc, ok;

	/* A key decides (401, or 429 past its rate), as on other routes. */
	if (apid->insecure_no_auth || authz != NULL || key != NULL)
		return auth_request(req, apid->api_keys, apid->api_keys_count,
		    apid->insecure_no_auth);
	if ((rc = query_get(req, "token", &token, &len)) == -1) {
		respond_error(req, ERR_INTERNAL, "out of memory");
		return -1;
	}
	/* The token's caller is the one that made it (attach_token.c). */
	ok = rc == 1 && attach_token_take(params[0], params[1], token, len,
	    &req->caller);
	if (rc == 1)
		freezero(token, len);
	if (ok)
		return 0;
	respond_error_status(req, 401, "unauthorized", rc == 1 ?
	    "invalid or expired attach token" : "missing or invalid API key");
	return -1;
}

/* 1 if the field's comma-separated list holds token (any case). */
static int
field_has(struct http_request *req, const char *name, const char *token)
{
	const char	*v = http_request_field(req, name), *end;
	size_t		 len, tlen = strlen(token);

	while (v != NULL && *v != '\0') {
		v += strspn(v, " \t,");
		end = v + strcspn(v, ",");
		for (len = (size_t)(end - v); len > 0 &&
		    isspace((unsigned char)v[len - 1]); len--)
			;
		if (len == tlen && strncasecmp(v, token, tlen) == 0)
			return 1;
		v = end;
	}
	return 0;
}

static int
refuse(struct http_request *req, int status, const char *why)
{
	respond_error_status(req, status, "invalid_request", why);
	return -1;
}

/* RFC 6455 §4.2.1-4.2.2: 0 with the accept key, or -1 when answered. */
static int
attach_handshake(struct http_request *req, char accept[WS_ACCEPT_LEN + 1])
{
	const char	*v;

	if (!field_has(req, "Upgrade", "websocket") || req->head.minor < 1) {
		http_add_field(req, "Upgrade", "websocket");
		http_add_field(req, "Connection", "Upgrade");
		return refuse(req, 426, "this route is a WebSocket: upgrade "
		    "to websocket over HTTP/1.1");
	}
	if (!field_has(req, "Connection", "upgrade"))
		return refuse(req, 400, "Connection must include upgrade");
	if ((v = http_request_field(req, "Sec-WebSocket-Version")) == NULL ||
	    strcmp(v, "13") != 0) {
		http_add_field(req, "Sec-WebSocket-Version", "13");
		return refuse(req, 426, "Sec-WebSocket-Version must be 13");
	}
	if ((v = http_request_field(req, "Sec-WebSocket-Key")) == NULL ||
	    ws_accept_key(v, accept) == -1)
		return refuse(req, 400, "Sec-WebSocket-Key must be 16 bytes "
		    "in base64");
	return 0;
}

/* The socket is ours: the WebSocket runs (attach.c). */
static void
attach_takeover(struct bufferevent *bev, void *arg)
{
	struct attach_request	*st = arg;

	(void)attach_start(bev, st->srv, &st->ref, &st->caller, st->fd);
	st->fd = -1;
}

static int
attach_reply(struct apid_request *ar, struct imsg *imsg)
{
	struct attach_request	*st = ar->arg;
	struct http_request	*req = st->req;

	if (imsg->hdr.type == MSG_ERROR) {
		reply_error_msg(req, imsg);
		attach_request_free(st);
		return APID_REPLY_DONE;
	}
	if (imsg->hdr.type != MSG_PROCESS_OUTPUT_STARTED || imsg->len != 0)
		peer_bad_message(&apid->parent, imsg, "unexpected");
	if (req->conn == NULL) {
		http_reply_abort(req);
		attach_request_free(st);
		return APID_REPLY_DONE;
	}
	if (caller_copy(&st->caller, &req->caller) == -1) {
		respond_error(req, ERR_INTERNAL, "out of memory");
		attach_request_free(st);
		return APID_REPLY_DONE;
	}
	http_add_field(req, "Sec-WebSocket-Accept", st->accept);
	st->srv = req->conn->srv;
	http_reply_upgrade(req, "websocket", attach_takeover, st);
	attach_request_free(st);
	return APID_REPLY_DONE;
}

/* The pipe, and PROCESS_OUTPUT with its write end. */
static int
attach_send(struct attach_request *st, char **params)
{
	struct process_output	 o;
	struct msgw		 w;
	int			 fds[2];

	if (pipe2(fds, O_CLOEXEC) == -1) {
		respond_errno(st->req, errno, "cannot make a pipe");
		return -1;
	}
	st->fd = fds[0];
	if (fcntl(st->fd, F_SETFL, O_NONBLOCK) == -1) {
		close(fds[1]);
		respond_errno(st->req, errno, "cannot make a pipe");
		return -1;
	}
	memset(&o, 0, sizeof(o));
	o.ref.sandbox_id = params[0];
	o.ref.process_id = params[1];
	o.follow = 1;
	msgw_init(&w);
	msg_put_process_output(&w, &o);
	/* The write end goes with the message, ours no more. */
	if (apid_request_send(st->req, MSG_PROCESS_OUTPUT, &w, fds[1],
	    attach_reply, st) == NULL) {
		respond_error(st->req, ERR_INTERNAL, "cannot reach managerd");
		return -1;
	}
	return 0;
}

void
route_process_attach(struct http_request *req, char **params)
{
	struct attach_request	*st;
	char			 accept[WS_ACCEPT_LEN + 1];

	/*
	 * The connection is the WebSocket's or nothing: after any other
	 * answer, what the client sent on (its first frames, perhaps) is
	 * no next request.
	 */
	req->close_after = 1;
	if (req->head.chunked || req->head.length > 0) {
		(void)refuse(req, 400, "an attach request has no body");
		return;
	}
	/* The handshake first: one refused must not use a token up. */
	if (attach_handshake(req, accept) == -1 ||
	    attach_auth(req, params) == -1 ||
	    process_ref_check(req, params) == -1)
		return;
	if ((st = calloc(1, sizeof(*st))) == NULL ||
	    (st->ref.sandbox_id = strdup(params[0])) == NULL ||
	    (st->ref.process_id = strdup(params[1])) == NULL) {
		if (st != NULL)
			process_ref_free(&st->ref);
		free(st);
		respond_error(req, ERR_INTERNAL, "out of memory");
		return;
	}
	st->req = req;
	st->fd = -1;
	memcpy(st->accept, accept, sizeof(st->accept));
	if (attach_send(st, params) == -1)
		attach_request_free(st);
}
