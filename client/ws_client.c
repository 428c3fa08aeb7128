/*
 * A client's WebSocket frames over libwslay's event API (ws_client.h).
 * Binary messages are handed on piece by piece as they arrive (wslay's
 * buffering is off: a process may send a megabyte of ring in one frame),
 * text messages are gathered up to WS_MAX_TEXT.  wslay refuses what RFC
 * 6455 forbids a server (a masked frame, a reserved bit, text that is not
 * UTF-8) by queueing a close with 1002 and reading no more; that is a
 * failure here, as is the socket closing before the close handshake.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <wslay/wslay.h>

#include "ws_client.h"

struct ws_client {
	wslay_event_context_ptr	 ctx;
	int			 fd;
	unsigned char		*pre;		/* read with the handshake */
	size_t			 prelen;
	size_t			 preoff;
	const struct ws_handler	*h;
	void			*arg;
	int			 ctrl;		/* a control frame */
	int			 fin;		/* a message's last frame */
	int			 opcode;	/* of the data message */
	char			 text[WS_MAX_TEXT];
	size_t			 textlen;
	int			 stopped;	/* a handler said stop */
	int			 eof;
	int			 errnum;
	char			 why[128];
};

static ssize_t
ws_recv(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, int flags,
    void *arg)
{
	struct ws_client	*ws = arg;
	ssize_t			 n;

	(void)flags;
	if (ws->preoff < ws->prelen) {
		n = ws->prelen - ws->preoff < len ? ws->prelen - ws->preoff :
		    len;
		memcpy(buf, ws->pre + ws->preoff, n);
		ws->preoff += n;
		return n;
	}
	while ((n = recv(ws->fd, buf, len, 0)) == -1 && errno == EINTR)
		;
	if (n > 0)
		return n;
	if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
		wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
	else {
		ws->eof = n == 0;
		ws->errnum = n == 0 ? 0 : errno;
		wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
	}
	return -1;
}

static ssize_t
ws_send(wslay_event_context_ptr ctx, const uint8_t *data, size_t len,
    int flags, void *arg)
{
	struct ws_client	*ws = arg;
	ssize_t			 n;

	(void)flags;
	while ((n = send(ws->fd, data, len, MSG_NOSIGNAL | MSG_DONTWAIT)) ==
	    -1 && errno == EINTR)
		;
	if (n >= 0)
		return n;
	if (errno == EAGAIN || errno == EWOULDBLOCK)
		wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
	else {
		ws->errnum = errno;
		wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
	}
	return -1;
}

static int
ws_genmask(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, void *arg)
{
	(void)ctx;
	(void)arg;
	arc4random_buf(buf, len);
	return 0;
}

/* Stops reading, with why (the first reason given wins). */
static void
ws_stop(struct ws_client *ws, const char *why)
{
	if (ws->why[0] == '\0')
		strlcpy(ws->why, why, sizeof(ws->why));
	ws->stopped = 1;
	wslay_event_shutdown_read(ws->ctx);
}

static void
ws_frame_start(wslay_event_context_ptr ctx,
    const struct wslay_event_on_frame_recv_start_arg *a, void *arg)
{
	struct ws_client	*ws = arg;

	(void)ctx;
	/* A ping or a close may come between two pieces of a message. */
	ws->ctrl = (a->opcode & 0x8) != 0;
	if (ws->ctrl)
		return;
	ws->fin = a->fin;
	if (a->opcode != WSLAY_CONTINUATION_FRAME) {
		ws->opcode = a->opcode;
		ws->textlen = 0;
	}
	if (ws->opcode == WSLAY_TEXT_FRAME &&
	    a->payload_length > WS_MAX_TEXT - ws->textlen)
		ws_stop(ws, "a text message from the server is too long");
}

static void
ws_frame_chunk(wslay_event_context_ptr ctx,
    const struct wslay_event_on_frame_recv_chunk_arg *a, void *arg)
{
	struct ws_client	*ws = arg;

	(void)ctx;
	if (ws->ctrl || ws->stopped || a->data_length == 0)
		return;
	if (ws->opcode == WSLAY_BINARY_FRAME) {
		if (ws->h->binary(a->data, a->data_length, ws->arg) == -1)
			ws_stop(ws, "");
		return;
	}
	/* The start's check bounds the text: this cannot overflow. */
	if (a->data_length > WS_MAX_TEXT - ws->textlen) {
		ws_stop(ws, "a text message from the server is too long");
		return;
	}
	memcpy(ws->text + ws->textlen, a->data, a->data_length);
	ws->textlen += a->data_length;
}

static void
ws_frame_end(wslay_event_context_ptr ctx, void *arg)
{
	struct ws_client	*ws = arg;

	(void)ctx;
	if (ws->ctrl || ws->stopped || !ws->fin ||
	    ws->opcode != WSLAY_TEXT_FRAME)
		return;
	if (ws->h->text(ws->text, ws->textlen, ws->arg) == -1)
		ws_stop(ws, "");
	ws->textlen = 0;
}

static const struct wslay_event_callbacks	 callbacks = {
	ws_recv, ws_send, ws_genmask, ws_frame_start, ws_frame_chunk,
	ws_frame_end, NULL
};

struct ws_client *
ws_client_new(struct rest_ws *rws, const struct ws_handler *h, void *arg)
{
	struct ws_client	*ws;
	int			 flags;

	if ((ws = calloc(1, sizeof(*ws))) == NULL)
		return NULL;
	if (wslay_event_context_client_init(&ws->ctx, &callbacks, ws) != 0) {
		free(ws);
		return NULL;
	}
	wslay_event_config_set_no_buffering(ws->ctx, 1);
	wslay_event_config_set_max_recv_msg_length(ws->ctx, WS_MAX_FRAME);
	ws->h = h;
	ws->arg = arg;
	ws->fd = rws->fd;
	ws->pre = rws->pre;
	ws->prelen = rws->prelen;
	rws->fd = -1;
	rws->pre = NULL;
	rws->prelen = 0;
	/* Never blocking: a failure here only costs a blocking send. */
	if ((flags = fcntl(ws->fd, F_GETFL)) != -1)
		(void)fcntl(ws->fd, F_SETFL, flags | O_NONBLOCK);
	return ws;
}

void
ws_client_free(struct ws_client *ws)
{
	if (ws == NULL)
		return;
	wslay_event_context_free(ws->ctx);
	if (ws->fd != -1)
		close(ws->fd);
	free(ws->pre);
	free(ws);
}

int
ws_client_fd(const struct ws_client *ws)
{
	return ws->fd;
}

short
ws_client_events(const struct ws_client *ws)
{
	short	 ev = 0;

	if (wslay_event_want_read(ws->ctx))
		ev |= POLLIN;
	if (wslay_event_want_write(ws->ctx))
		ev |= POLLOUT;
	return ev;
}

/* -1, with why from what went wrong last. */
static int
ws_failed(struct ws_client *ws, int r)
{
	if (ws->why[0] != '\0')
		return -1;
	if (ws->eof)
		strlcpy(ws->why, "the server closed the connection",
		    sizeof(ws->why));
	else if (ws->errnum != 0)
		snprintf(ws->why, sizeof(ws->why), "the connection failed: %s",
		    strerror(ws->errnum));
	else if (r == WSLAY_ERR_NOMEM)
		strlcpy(ws->why, "out of memory", sizeof(ws->why));
	else
		strlcpy(ws->why, "the WebSocket failed", sizeof(ws->why));
	return -1;
}

int
ws_client_io(struct ws_client *ws, short revents)
{
	int	 r;

	if (ws->why[0] != '\0')
		return -1;
	if (wslay_event_want_read(ws->ctx) && ((revents & (POLLIN | POLLHUP |
	    POLLERR)) || ws->preoff < ws->prelen)) {
		if ((r = wslay_event_recv(ws->ctx)) != 0)
			return ws_failed(ws, r);
		if (ws->why[0] != '\0')
			return -1;
		/* wslay stopped reading, not at a close nor at our word. */
		if (!wslay_event_want_read(ws->ctx) && !ws->stopped &&
		    !wslay_event_get_close_received(ws->ctx)) {
			strlcpy(ws->why, "a frame from the server breaks the "
			    "WebSocket protocol", sizeof(ws->why));
			(void)wslay_event_send(ws->ctx);
			return -1;
		}
	}
	if (wslay_event_want_write(ws->ctx) &&
	    (r = wslay_event_send(ws->ctx)) != 0)
		return ws_failed(ws, r);
	return 0;
}

const char *
ws_client_error(const struct ws_client *ws)
{
	return ws->why[0] != '\0' ? ws->why : "stopped";
}

int
ws_client_send(struct ws_client *ws, int text, const void *data, size_t len)
{
	struct wslay_event_msg	 m;

	m.opcode = text ? WSLAY_TEXT_FRAME : WSLAY_BINARY_FRAME;
	m.msg = data;
	m.msg_length = len;
	return wslay_event_queue_msg(ws->ctx, &m) == 0 ? 0 : -1;
}

size_t
ws_client_queued(const struct ws_client *ws)
{
	return wslay_event_get_queued_msg_length(ws->ctx);
}

int
ws_client_close(struct ws_client *ws)
{
	return wslay_event_queue_close(ws->ctx, WSLAY_CODE_NORMAL_CLOSURE,
	    NULL, 0) == 0 ? 0 : -1;
}

uint16_t
ws_client_close_code(const struct ws_client *ws)
{
	if (!wslay_event_get_close_received(ws->ctx))
		return 0;
	return wslay_event_get_status_code_received(ws->ctx);
}
