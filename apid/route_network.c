/*
 * A sandbox's egress policy (docs/rest-api.md "Network"):
 * GET /v1/sandboxes/{id}/network and PUT (the body is the policy,
 * body_network.c) answer managerd's NETWORK_INFO, the canonical policy;
 * GET .../network/log relays the egress proxy's JSON of the sandbox's
 * recent connections, which managerd sends in pieces.
 *
 * Both texts come from managerd and go to a client as JSON: each is
 * parsed here, and one that is not the object it should be is a lie.
 * A log past NETWORK_LOG_MAX is no lie (the operator chose the ring's
 * size) but more than apid holds for one request: a 502.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "apid.h"

/* The most log text one request collects (JSON, compact). */
#define NETWORK_LOG_MAX		(8 * 1024 * 1024)

/* The JSON object len bytes of text hold, whole; NULL if not that. */
static json_object *
peer_object(const char *text, size_t len)
{
	json_tokener	*tok;
	json_object	*o;

	if (len > INT32_MAX || (tok = json_tokener_new()) == NULL)
		return NULL;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	o = json_tokener_parse_ex(tok, text, (int)len);
	if (json_tokener_get_error(tok) != json_tokener_success ||
	    json_tokener_get_parse_end(tok) != len ||
	    !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tok);
	return o;
}

/* A policy as managerd shows one: an object with a mode we know. */
static json_object *
policy_object(const char *text)
{
	static const char *const modes[] = { "none", "public", "allowlist",
	    "bridge" };
	json_object	*o, *mode;
	size_t		 i;

	if ((o = peer_object(text, strlen(text))) == NULL)
		return NULL;
	if (json_object_object_get_ex(o, "mode", &mode) &&
	    json_object_is_type(mode, json_type_string))
		for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
			if (strcmp(json_object_get_string(mode), modes[i]) == 0)
				return o;
	json_object_put(o);
	return NULL;
}

/* NETWORK_INFO (or MSG_ERROR), for GET and PUT alike. */
static int
info_reply(struct apid_request *ar, struct imsg *imsg)
{
	struct msgr	 r;
	json_object	*o;
	char		*text;

	if (imsg->hdr.type == MSG_ERROR) {
		reply_error_msg(ar->req, imsg);
		return APID_REPLY_DONE;
	}
	if (imsg->hdr.type != MSG_NETWORK_INFO)
		peer_bad_message(&apid->parent, imsg, "wrong reply type");
	msgr_init(&r, imsg);
	text = msgr_str(&r, MSG_MAX_STRING);
	if (msgr_end(&r) == -1 || text == NULL ||
	    (o = policy_object(text)) == NULL)
		peer_bad_message(&apid->parent, imsg, "malformed policy");
	free(text);
	respond_json(ar->req, 200, o);
	json_object_put(o);
	return APID_REPLY_DONE;
}

/* GET /v1/sandboxes/{id}/network */
void
route_network_get(struct http_request *req, char **params)
{
	struct msgw	 w;

	if (sandbox_id_check(req, params[0]) == -1)
		return;
	msgw_init(&w);
	msg_put_string(&w, params[0]);
	route_forward(req, MSG_NETWORK_GET, &w, info_reply, NULL);
}

/* PUT /v1/sandboxes/{id}/network */
void
route_network_put(struct http_request *req, char **params)
{
	struct body_error	 e;
	struct msgw		 w;
	const void		*data;
	char			*policy;
	size_t			 len;

	data = body_bytes(req, &len);
	/* FastAPI validates the body before the handler looks at the id. */
	if (body_parse_network(body_ctype(req), data, len, &policy, &e) ==
	    -1) {
		body_respond_error(req, &e);
		return;
	}
	if (sandbox_id_check(req, params[0]) == -1) {
		free(policy);
		return;
	}
	msgw_init(&w);
	msgw_str(&w, params[0]);
	msgw_str(&w, policy);
	free(policy);
	route_forward(req, MSG_NETWORK_PUT, &w, info_reply, NULL);
}

/* One GET .../network/log: the text managerd has sent so far. */
struct netlog {
	struct evbuffer	*text;
	int		 over;		/* past NETWORK_LOG_MAX: dropped */
	int		 nomem;		/* a piece found no memory */
};

static void
netlog_free(struct netlog *l)
{
	if (l->text != NULL)
		evbuffer_free(l->text);
	free(l);
}

static void
netlog_piece(struct netlog *l, struct imsg *imsg)
{
	struct msgr	 r;
	char		*piece;
	size_t		 n;

	msgr_init(&r, imsg);
	piece = msgr_str(&r, EGRESS_LOG_PIECE);
	if (msgr_end(&r) == -1 || piece == NULL)
		peer_bad_message(&apid->parent, imsg, "malformed log text");
	n = strlen(piece);
	if (l->over || l->nomem ||
	    n > NETWORK_LOG_MAX - evbuffer_get_length(l->text)) {
		/* Not a lie; the rest is read and dropped until the end. */
		l->over = !l->nomem;
		evbuffer_drain(l->text, evbuffer_get_length(l->text));
	} else if (evbuffer_add(l->text, piece, n) == -1) {
		l->nomem = 1;
		evbuffer_drain(l->text, evbuffer_get_length(l->text));
	}
	free(piece);
}

/* At NETWORK_LOG_END: the whole text, {"entries": [...], ...}. */
static void
netlog_answer(struct http_request *req, struct netlog *l, struct imsg *imsg)
{
	json_object	*o, *entries;
	const char	*text;
	size_t		 len;
	char		 msg[128];

	if (l->nomem) {
		respond_error(req, ERR_INTERNAL, "out of memory");
		return;
	}
	if (l->over) {
		snprintf(msg, sizeof(msg), "the sandbox's network log is "
		    "larger than apid relays (%d bytes of JSON)",
		    NETWORK_LOG_MAX);
		respond_error(req, ERR_BACKEND, msg);
		return;
	}
	len = evbuffer_get_length(l->text);
	if ((text = (const char *)evbuffer_pullup(l->text, -1)) == NULL &&
	    len > 0) {
		respond_error(req, ERR_INTERNAL, "out of memory");
		return;
	}
	if ((o = peer_object(text != NULL ? text : "", len)) == NULL ||
	    !json_object_object_get_ex(o, "entries", &entries) ||
	    !json_object_is_type(entries, json_type_array))
		peer_bad_message(&apid->parent, imsg, "malformed log");
	respond_json(req, 200, o);
	json_object_put(o);
}

static int
netlog_reply(struct apid_request *ar, struct imsg *imsg)
{
	struct netlog	*l = ar->arg;

	switch (imsg->hdr.type) {
	case MSG_NETWORK_LOG_TEXT:
		netlog_piece(l, imsg);
		return APID_REPLY_MORE;
	case MSG_NETWORK_LOG_END:
		if (imsg->len != 0)
			peer_bad_message(&apid->parent, imsg,
			    "unexpected payload");
		netlog_answer(ar->req, l, imsg);
		break;
	case MSG_ERROR:
		reply_error_msg(ar->req, imsg);
		break;
	default:
		peer_bad_message(&apid->parent, imsg, "wrong reply type");
	}
	netlog_free(l);
	return APID_REPLY_DONE;
}

/* GET /v1/sandboxes/{id}/network/log */
void
route_network_log(struct http_request *req, char **params)
{
	struct netlog	*l;
	struct msgw	 w;

	if (sandbox_id_check(req, params[0]) == -1)
		return;
	if ((l = calloc(1, sizeof(*l))) == NULL ||
	    (l->text = evbuffer_new()) == NULL) {
		free(l);
		respond_error(req, ERR_INTERNAL, "out of memory");
		return;
	}
	msgw_init(&w);
	msg_put_string(&w, params[0]);
	if (apid_request_send(req, MSG_NETWORK_LOG, &w, -1, netlog_reply,
	    l) == NULL) {
		netlog_free(l);
		respond_error(req, ERR_INTERNAL, "cannot reach managerd");
	}
}
