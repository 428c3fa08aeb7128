/*
 * Turn arbitrary bytes into well-formed UTF-8 for a JSON string: every
 * maximal ill-formed subpart becomes one U+FFFD, as Python's
 * decode("utf-8", "replace") does, so a file read through the MCP server
 * reads as it would through the Python SDK.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mcp.h"

/*
 * Length of the valid character at p (1-4), or -k when its first k bytes
 * are a maximal ill-formed subpart (k >= 1).
 */
static int
utf8_char(const unsigned char *p, size_t n)
{
	unsigned char	 c = p[0], lo = 0x80, hi = 0xbf;
	size_t		 need, i;

	if (c < 0x80)
		return 1;
	if (c < 0xc2 || c > 0xf4)
		return -1;
	if (c < 0xe0)
		need = 1;
	else if (c < 0xf0) {
		need = 2;
		if (c == 0xe0)
			lo = 0xa0;	/* overlong */
		else if (c == 0xed)
			hi = 0x9f;	/* surrogates */
	} else {
		need = 3;
		if (c == 0xf0)
			lo = 0x90;	/* overlong */
		else if (c == 0xf4)
			hi = 0x8f;	/* above U+10FFFF */
	}
	for (i = 1; i <= need; i++) {
		if (i >= n || p[i] < lo || p[i] > hi)
			return -(int)i;
		lo = 0x80;
		hi = 0xbf;
	}
	return (int)need + 1;
}

char *
utf8_repair(const unsigned char *in, size_t len, size_t *outlen)
{
	char	*out;
	size_t	 i, o = 0;
	int	 k;

	/* Each input byte yields at most three output bytes. */
	if (len > (SIZE_MAX - 1) / 3)
		return NULL;
	if ((out = malloc(len * 3 + 1)) == NULL)
		return NULL;
	for (i = 0; i < len; ) {
		k = utf8_char(in + i, len - i);
		if (k > 0) {
			memcpy(out + o, in + i, k);
			o += k;
			i += k;
		} else {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			i += -k;
		}
	}
	out[o] = '\0';
	if (outlen != NULL)
		*outlen = o;
	return out;
}
