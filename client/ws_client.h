/*
 * The frames of a client's WebSocket (RFC 6455 §5) once its handshake is
 * done (rest_websocket()), for the CLI's attach and shell: framing,
 * masking, ping and close by Debian's libwslay, on a non-blocking socket
 * that the caller polls.  Programs that use it link $(WSLAY_LIBS).
 */
#ifndef AS_CLIENT_WS_CLIENT_H
#define AS_CLIENT_WS_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "rest.h"

#define WS_MAX_TEXT	4096		/* a text message: a small JSON */
#define WS_MAX_FRAME	(64 * 1024 * 1024)	/* a frame's payload */

struct ws_client;

/* What arrives: each returns 0, or -1 to stop reading. */
struct ws_handler {
	/* A piece of a binary message, as it comes. */
	int	(*binary)(const unsigned char *, size_t, void *);
	/* A whole text message: UTF-8 of at most WS_MAX_TEXT bytes. */
	int	(*text)(const char *, size_t, void *);
};

/*
 * Takes ws's socket (made non-blocking) and its early bytes; NULL when
 * out of memory, with ws left to the caller.  Call ws_client_io(c, 0)
 * before the first poll: frames may have come with the handshake.
 */
struct ws_client	*ws_client_new(struct rest_ws *ws,
			    const struct ws_handler *, void *arg);
void	ws_client_free(struct ws_client *);	/* closes the socket */

int	ws_client_fd(const struct ws_client *);
/* POLLIN and POLLOUT as the connection needs; 0 once it is closed. */
short	ws_client_events(const struct ws_client *);
/*
 * Reads what the socket has (revents, or 0 for the early bytes) and
 * sends what is queued.  0, or -1 once the connection failed:
 * ws_client_error() says why.
 */
int	ws_client_io(struct ws_client *, short revents);
const char *ws_client_error(const struct ws_client *);

/* Queue a message (copied); -1 once closing. */
int	ws_client_send(struct ws_client *, int text, const void *, size_t);
size_t	ws_client_queued(const struct ws_client *);	/* bytes unsent */
/* Queue a close with 1000; the connection ends at the server's answer. */
int	ws_client_close(struct ws_client *);
/* The code of the server's close frame, or 0 if none came. */
uint16_t ws_client_close_code(const struct ws_client *);

#endif /* AS_CLIENT_WS_CLIENT_H */
