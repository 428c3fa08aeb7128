/*
 * The WebSocket opening handshake (RFC 6455 §4), shared by apid (the
 * server side of .../attach) and the CLI (the client side of attach and
 * shell).  The framing itself is Debian's libwslay; what it leaves to
 * its user is the key exchange, which needs SHA-1 (libmd, which libbsd
 * already depends on) and base64 (below: a dozen lines, not worth a
 * library of its own).
 */
#ifndef AS_WEBSOCKET_H
#define AS_WEBSOCKET_H

#include <stddef.h>

#define WS_KEY_LEN	24	/* base64 of 16 random bytes */
#define WS_ACCEPT_LEN	28	/* base64 of a SHA-1 */

/*
 * Standard base64 (with padding) of len bytes into out, NUL-terminated;
 * returns the length written, or 0 if outlen (which must hold
 * 4 * ceil(len / 3) + 1 bytes) is too small.
 */
size_t	b64_encode(const void *in, size_t len, char *out, size_t outlen);
/*
 * The decoded bytes of base64 text (padding required, no blanks) into
 * out; returns their number, or -1 if the text is not base64 or does
 * not fit.
 */
long	b64_decode(const char *in, size_t len, void *out, size_t outlen);

/*
 * Sec-WebSocket-Accept for a client's Sec-WebSocket-Key: 0, or -1 if
 * the key is not the base64 of 16 bytes (RFC 6455 §4.2.1, item 5).
 */
int	ws_accept_key(const char *key, char out[WS_ACCEPT_LEN + 1]);
/* A new random Sec-WebSocket-Key. */
void	ws_make_key(char out[WS_KEY_LEN + 1]);

#endif /* AS_WEBSOCKET_H */
