/*
 * Strict UTF-8 decoding the way Python sees bytes it decoded with
 * surrogateescape: the image allowlist compares code points as Python
 * compares str (allowlist.c), and the store escapes them as json.dumps
 * does (store_json.c).
 */
#include <stddef.h>
#include <stdint.h>

#include "managerd.h"

/* Strict UTF-8 (no overlongs, no surrogates); a bad byte b is 0xdc00 + b. */
size_t
utf8_next_or_escape(const unsigned char *s, size_t len, uint32_t *cp)
{
	uint32_t	 c;
	size_t		 n, i;
	unsigned char	 lo = 0x80, hi = 0xbf;

	c = s[0];
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		c &= 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
		c &= 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
		c &= 0x07;
	} else
		goto bad;
	if (len < n)
		goto bad;
	for (i = 1; i < n; i++) {
		if (s[i] < lo || s[i] > hi)
			goto bad;
		lo = 0x80;
		hi = 0xbf;
		c = (c << 6) | (s[i] & 0x3f);
	}
	*cp = c;
	return n;
bad:
	*cp = 0xdc00 | s[0];
	return 1;
}
