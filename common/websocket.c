/* The WebSocket handshake's key exchange (websocket.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sha1.h>

#include "websocket.h"

#define WS_GUID	"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

static const char b64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t
b64_encode(const void *in, size_t len, char *out, size_t outlen)
{
	const unsigned char	*p = in;
	size_t			 i, o = 0;
	uint32_t		 v;

	if (outlen < (len + 2) / 3 * 4 + 1)
		return 0;
	for (i = 0; i < len; i += 3) {
		v = (uint32_t)p[i] << 16;
		if (i + 1 < len)
			v |= (uint32_t)p[i + 1] << 8;
		if (i + 2 < len)
			v |= p[i + 2];
		out[o++] = b64_alphabet[v >> 18 & 63];
		out[o++] = b64_alphabet[v >> 12 & 63];
		out[o++] = i + 1 < len ? b64_alphabet[v >> 6 & 63] : '=';
		out[o++] = i + 2 < len ? b64_alphabet[v & 63] : '=';
	}
	out[o] = '\0';
	return o;
}

static int
b64_value(char c)
{
	const char	*at;

	if (c == '\0' || (at = strchr(b64_alphabet, c)) == NULL)
		return -1;
	return (int)(at - b64_alphabet);
}

long
b64_decode(const char *in, size_t len, void *out, size_t outlen)
{
	unsigned char	*q = out;
	size_t		 i, o = 0, pad;
	uint32_t	 v;
	int		 k, d;

	if (len % 4 != 0)
		return -1;
	for (i = 0; i < len; i += 4) {
		pad = 0;
		v = 0;
		for (k = 0; k < 4; k++) {
			if (in[i + k] == '=' && i + 4 == len && k >= 2 &&
			    (k == 3 || in[i + 3] == '=')) {
				pad++;
				v <<= 6;
				continue;
			}
			if (pad > 0 || (d = b64_value(in[i + k])) == -1)
				return -1;
			v = v << 6 | (uint32_t)d;
		}
		if (o + 3 - pad > outlen)
			return -1;
		q[o++] = (unsigned char)(v >> 16);
		if (pad < 2)
			q[o++] = (unsigned char)(v >> 8);
		if (pad < 1)
			q[o++] = (unsigned char)v;
	}
	return (long)o;
}

int
ws_accept_key(const char *key, char out[WS_ACCEPT_LEN + 1])
{
	unsigned char	 raw[18], digest[SHA1_DIGEST_LENGTH];
	SHA1_CTX	 ctx;

	if (key == NULL || strlen(key) != WS_KEY_LEN ||
	    b64_decode(key, WS_KEY_LEN, raw, sizeof(raw)) != 16)
		return -1;
	SHA1Init(&ctx);
	SHA1Update(&ctx, (const uint8_t *)key, WS_KEY_LEN);
	SHA1Update(&ctx, (const uint8_t *)WS_GUID, strlen(WS_GUID));
	SHA1Final(digest, &ctx);
	b64_encode(digest, sizeof(digest), out, WS_ACCEPT_LEN + 1);
	return 0;
}

void
ws_make_key(char out[WS_KEY_LEN + 1])
{
	unsigned char	 raw[16];

	arc4random_buf(raw, sizeof(raw));
	b64_encode(raw, sizeof(raw), out, WS_KEY_LEN + 1);
}
