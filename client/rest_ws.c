/*
 * The opening handshake of a WebSocket (RFC 6455 §4.1) on the REST
 * client's HTTP connection, for .../attach: a GET with the API key and a
 * fresh Sec-WebSocket-Key, answered by a 101 whose Upgrade, Connection
 * and Sec-WebSocket-Accept show that the server took part; the socket
 * and the bytes that came after the head are then the caller's, for
 * ws_client.c to frame.  Any other answer is read as the API's error.
 */
#include <sys/types.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rest.h"
#include "rest_internal.h"
#include "websocket.h"

/* What the 101's headers said. */
struct ws_answer {
	int	upgrade;	/* Upgrade: websocket */
	int	connection;	/* Connection lists "upgrade" */
	int	naccept;	/* Sec-WebSocket-Accept headers */
	int	unasked;	/* an extension or subprotocol */
	char	accept[WS_ACCEPT_LEN + 1];
};

/* 1 if the comma-separated list holds token (case aside). */
static int
has_token(const char *list, const char *token)
{
	size_t	 n, len = strlen(token);

	while (*list != '\0') {
		list += strspn(list, " \t,");
		n = strcspn(list, " \t,");
		if (n == len && strncasecmp(list, token, len) == 0)
			return 1;
		list += n;
	}
	return 0;
}

static void
ws_header(const char *name, const char *value, void *arg)
{
	struct ws_answer	*a = arg;

	if (strcasecmp(name, "Upgrade") == 0)
		a->upgrade = strcasecmp(value, "websocket") == 0;
	else if (strcasecmp(name, "Connection") == 0)
		a->connection |= has_token(value, "upgrade");
	else if (strcasecmp(name, "Sec-WebSocket-Accept") == 0) {
		a->naccept++;
		/* Any other length cannot match: leave it empty. */
		if (strlen(value) == WS_ACCEPT_LEN)
			strlcpy(a->accept, value, sizeof(a->accept));
	} else if (strcasecmp(name, "Sec-WebSocket-Extensions") == 0 ||
	    strcasecmp(name, "Sec-WebSocket-Protocol") == 0)
		/* §4.1: the client asked for none, so must refuse any. */
		a->unasked = 1;
}

/* Why the 101 does not complete the handshake, or NULL. */
static const char *
answer_wrong(const struct ws_answer *a, const char *want)
{
	if (!a->upgrade)
		return "no Upgrade: websocket";
	if (!a->connection)
		return "no Connection: Upgrade";
	if (a->naccept != 1 || strcmp(a->accept, want) != 0)
		return "a wrong Sec-WebSocket-Accept";
	if (a->unasked)
		return "an extension or subprotocol nobody asked for";
	return NULL;
}

/* The socket and the bytes read past the head go to ws. */
static int
hand_over(struct conn *c, struct rest_ws *ws, struct rest_error *err)
{
	size_t	 n = c->len - c->off;

	ws->pre = NULL;
	ws->prelen = 0;
	if (n > 0) {
		if ((ws->pre = malloc(n)) == NULL) {
			seterr(err, 0, "connection_error", "%s",
			    strerror(errno));
			return -1;
		}
		memcpy(ws->pre, c->buf + c->off, n);
		ws->prelen = n;
	}
	ws->fd = c->fd;
	c->fd = -1;
	return 0;
}

/* The 101 or the error it is not. */
static int
ws_answered(struct conn *c, const struct ws_answer *a, const char *want,
    struct rest_ws *ws, struct rest_error *err)
{
	const char	*why;

	if (c->status != 101 && (c->status < 200 || c->status >= 300))
		return response_error(c, err);
	if (c->status != 101) {
		seterr(err, c->status, "http_error", "the server answered "
		    "%d, not 101, to the WebSocket handshake", c->status);
		return -1;
	}
	if ((why = answer_wrong(a, want)) != NULL) {
		seterr(err, c->status, "http_error", "the server's WebSocket "
		    "handshake has %s", why);
		return -1;
	}
	return hand_over(c, ws, err);
}

int
ws_upgrade(struct rest_client *rc, struct conn *c, const char *path,
    struct rest_ws *ws, struct rest_error *err)
{
	struct ws_answer	 a;
	char			 key[WS_KEY_LEN + 1], want[WS_ACCEPT_LEN + 1];
	char			*hdr;
	int			 r;

	ws->fd = -1;
	memset(&a, 0, sizeof(a));
	ws_make_key(key);
	if (ws_accept_key(key, want) == -1 || asprintf(&hdr, "Upgrade: "
	    "websocket\r\nSec-WebSocket-Version: 13\r\n"
	    "Sec-WebSocket-Key: %s\r\n", key) == -1) {
		seterr(err, 0, "connection_error", "%s", strerror(ENOMEM));
		return -1;
	}
	c->upgrade = hdr;
	c->on_header = ws_header;
	c->header_arg = &a;
	r = rest_exchange(rc, c, "GET", path, NULL, err);
	c->upgrade = NULL;
	c->on_header = NULL;
	free(hdr);
	if (r == -1)
		return -1;
	return ws_answered(c, &a, want, ws, err);
}

int
rest_websocket(struct rest_client *rc, const char *path, struct rest_ws *ws,
    struct rest_error *err)
{
	struct conn	*c;
	int		 r = -1;

	ws->fd = -1;
	ws->pre = NULL;
	ws->prelen = 0;
	if ((c = conn_new(err)) == NULL)
		return -1;
	if (conn_open(rc, c, err) == 0)
		r = ws_upgrade(rc, c, path, ws, err);
	conn_free(c);
	return r;
}

void
rest_ws_close(struct rest_ws *ws)
{
	if (ws->fd != -1)
		close(ws->fd);
	ws->fd = -1;
	free(ws->pre);
	ws->pre = NULL;
	ws->prelen = 0;
}
