/*
 * UTF-8 decoding with replacement, byte for byte what Python's
 * bytes.decode("utf-8", "replace") and its incremental decoder produce:
 * each maximal subpart of an ill-formed sequence becomes one U+FFFD
 * (Unicode "substitution of maximal subparts"), encoded surrogates and
 * overlong forms are ill-formed.  The incremental form holds back a
 * character split across chunks until the next chunk (or the final call)
 * decides it.  Output is always well-formed UTF-8.
 */
#include <sys/queue.h>

#include <stddef.h>
#include <string.h>

#include "apid.h"

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
