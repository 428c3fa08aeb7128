/*
 * UTF-8 for every program (see utf8.h).  One classifier, utf8_step(),
 * decides what is well-formed, so apid's responses, managerd's records
 * and the MCP client's text agree byte for byte.  Decoding with replacement
 * is what Python's bytes.decode("utf-8", "replace") and its incremental
 * decoder produce: each maximal subpart of an ill-formed sequence becomes
 * one U+FFFD (Unicode "substitution of maximal subparts"), encoded
 * surrogates and overlong forms are ill-formed.  The incremental form
 * holds back a character split across chunks until the next chunk (or
 * the final call) decides it.  Output is always well-formed UTF-8.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

static const char	 replacement[3] = { '\xef', '\xbf', '\xbd' };

/*
 * Look at the sequence starting at p[0] (n >= 1 bytes available).
 * Returns its length (1-4) if it is a whole valid character, -k if its
 * first k bytes are a maximal ill-formed subpart, or 0 if all n bytes
 * are a valid prefix of a character that needs more bytes.
 */
static int
utf8_step(const unsigned char *p, size_t n)
{
	unsigned char	 c = p[0], lo = 0x80, hi = 0xbf;
	int		 need, i;

	if (c < 0x80)
		return 1;
	if (c < 0xc2)
		return -1;
	if (c < 0xe0)
		need = 1;
	else if (c < 0xf0) {
		need = 2;
		if (c == 0xe0)
			lo = 0xa0;		/* overlong */
		else if (c == 0xed)
			hi = 0x9f;		/* surrogates */
	} else if (c < 0xf5) {
		need = 3;
		if (c == 0xf0)
			lo = 0x90;		/* overlong */
		else if (c == 0xf4)
			hi = 0x8f;		/* above U+10FFFF */
	} else
		return -1;
	for (i = 1; i <= need; i++) {
		if ((size_t)i >= n)
			return 0;
		if (p[i] < lo || p[i] > hi)
			return -i;
		lo = 0x80;
		hi = 0xbf;
	}
	return need + 1;
}

void
utf8_decoder_init(struct utf8_decoder *d)
{
	memset(d, 0, sizeof(*d));
}

/*
 * The bytes held back from the previous chunk complete, fail or stay
 * pending with the first bytes of this one.  Returns how many bytes of
 * in were used; *o advances over what was written.
 */
static size_t
utf8_finish_pending(struct utf8_decoder *d, const unsigned char *in,
    size_t len, int final, char *out, size_t *o)
{
	unsigned char	 tmp[8];
	size_t		 take, n;
	int		 r;

	take = len < 4 - d->npend ? len : 4 - d->npend;
	memcpy(tmp, d->pend, d->npend);
	/* The final call may pass no input at all (NULL). */
	if (take > 0)
		memcpy(tmp + d->npend, in, take);
	n = d->npend + take;
	r = utf8_step(tmp, n);
	if (r == 0) {
		/* Still incomplete: all of in (take == len) is pending. */
		d->npend = 0;
		if (final) {
			memcpy(out + *o, replacement, 3);
			*o += 3;
		} else {
			memcpy(d->pend, tmp, n);
			d->npend = n;
		}
		return take;
	}
	if (r > 0) {
		memcpy(out + *o, tmp, (size_t)r);
		*o += (size_t)r;
	} else {
		memcpy(out + *o, replacement, 3);
		*o += 3;
		r = -r;
	}
	/* The bad byte lies past the pending ones: r >= npend. */
	take = (size_t)r - d->npend;
	d->npend = 0;
	return take;
}

size_t
utf8_decode(struct utf8_decoder *d, const void *inp, size_t len, int final,
    char *out)
{
	const unsigned char	*in = inp;
	size_t			 i = 0, o = 0, start;
	int			 r;

	if (d->npend > 0)
		i = utf8_finish_pending(d, in, len, final, out, &o);
	while (i < len) {
		start = i;
		while (i < len && in[i] < 0x80)
			i++;
		if (i > start) {
			memcpy(out + o, in + start, i - start);
			o += i - start;
			continue;
		}
		r = utf8_step(in + i, len - i);
		if (r > 0) {
			memcpy(out + o, in + i, (size_t)r);
			o += (size_t)r;
			i += (size_t)r;
		} else if (r < 0) {
			memcpy(out + o, replacement, 3);
			o += 3;
			i += (size_t)-r;
		} else if (final) {
			memcpy(out + o, replacement, 3);
			o += 3;
			i = len;
		} else {
			memcpy(d->pend, in + i, len - i);
			d->npend = len - i;
			i = len;
		}
	}
	return o;
}

int
utf8_valid(const void *data, size_t len)
{
	const unsigned char	*p = data;
	size_t			 i = 0;
	int			 r;

	while (i < len) {
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		if ((r = utf8_step(p + i, len - i)) <= 0)
			return 0;
		i += (size_t)r;
	}
	return 1;
}

char *
utf8_repair(const void *in, size_t len, size_t *outlen)
{
	struct utf8_decoder	 d;
	char			*out;
	size_t			 n;

	/* From a fresh decoder each input byte yields at most three. */
	if (len > (SIZE_MAX - 1) / 3) {
		errno = ENOMEM;
		return NULL;
	}
	if ((out = malloc(len * 3 + 1)) == NULL)
		return NULL;
	utf8_decoder_init(&d);
	n = utf8_decode(&d, in, len, 1, out);
	out[n] = '\0';
	if (outlen != NULL)
		*outlen = n;
	return out;
}

size_t
utf8_char(const void *s, size_t len, uint32_t *cp)
{
	const unsigned char	*p = s;
	uint32_t		 c;
	int			 n, i;

	if ((n = utf8_step(p, len)) <= 0)
		return 0;
	/* The lead byte keeps 7, 5, 4 or 3 bits; each other byte 6. */
	c = n == 1 ? p[0] : p[0] & (0x7f >> n);
	for (i = 1; i < n; i++)
		c = (c << 6) | (p[i] & 0x3f);
	*cp = c;
	return (size_t)n;
}

size_t
utf8_next_or_escape(const void *s, size_t len, uint32_t *cp)
{
	size_t	 n;

	if ((n = utf8_char(s, len, cp)) > 0)
		return n;
	*cp = 0xdc00 | *(const unsigned char *)s;
	return 1;
}

size_t
utf8_encode(uint32_t cp, unsigned char *out)
{
	/* A surrogate or anything past U+10FFFF has no UTF-8. */
	if ((cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		cp = 0xfffd;
	if (cp < 0x80) {
		out[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = 0xc0 | (cp >> 6);
		out[1] = 0x80 | (cp & 0x3f);
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = 0xe0 | (cp >> 12);
		out[1] = 0x80 | ((cp >> 6) & 0x3f);
		out[2] = 0x80 | (cp & 0x3f);
		return 3;
	}
	out[0] = 0xf0 | (cp >> 18);
	out[1] = 0x80 | ((cp >> 12) & 0x3f);
	out[2] = 0x80 | ((cp >> 6) & 0x3f);
	out[3] = 0x80 | (cp & 0x3f);
	return 4;
}

/* Every character has exactly one byte that is not a continuation byte. */
size_t
utf8_nchars(const void *s, size_t len)
{
	const unsigned char	*p = s;
	size_t			 i, n = 0;

	for (i = 0; i < len; i++)
		if ((p[i] & 0xc0) != 0x80)
			n++;
	return n;
}

size_t
utf8_cut(const void *s, size_t n)
{
	const unsigned char	*p = s;

	while (n > 0 && (p[n] & 0xc0) == 0x80)
		n--;
	return n;
}

/* The bytes a character led by b takes: 2-4, or 0 if b leads none. */
static size_t
utf8_lead_len(unsigned char b)
{
	if (b >= 0xc2 && b <= 0xdf)
		return 2;
	if (b >= 0xe0 && b <= 0xef)
		return 3;
	if (b >= 0xf0 && b <= 0xf4)
		return 4;
	return 0;
}

/* RFC 3629's table 3-7: the second byte's range after each lead. */
static int
utf8_second_ok(unsigned char lead, unsigned char b)
{
	if (lead == 0xe0)
		return b >= 0xa0 && b <= 0xbf;
	if (lead == 0xed)
		return b >= 0x80 && b <= 0x9f;
	if (lead == 0xf0)
		return b >= 0x90 && b <= 0xbf;
	if (lead == 0xf4)
		return b >= 0x80 && b <= 0x8f;
	return b >= 0x80 && b <= 0xbf;
}

size_t
utf8_incomplete_tail(const void *s, size_t len)
{
	const unsigned char	*p = s;
	size_t			 i, j, need;

	for (i = 1; i <= 3 && i <= len; i++) {
		if ((p[len - i] & 0xc0) == 0x80)
			continue;
		need = utf8_lead_len(p[len - i]);
		if (need <= i)
			return 0;
		for (j = 1; j < i; j++)
			if (j == 1 ? !utf8_second_ok(p[len - i], p[len - i + 1]) :
			    (p[len - i + j] & 0xc0) != 0x80)
				return 0;
		return i;
	}
	return 0;
}
