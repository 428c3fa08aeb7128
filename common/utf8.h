/*
 * UTF-8 for every program: decoding with replacement exactly as Python's
 * bytes.decode("utf-8", "replace") (whole or incremental), validation,
 * strict one-character decoding (plain, or with Python's surrogateescape),
 * encoding, and counting and cutting well-formed text.  Well-formed means
 * RFC 3629: no overlong forms, no encoded surrogates, nothing above
 * U+10FFFF.
 */
#ifndef AS_UTF8_H
#define AS_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Python's decode("utf-8", "replace"), whole or incremental. */
struct utf8_decoder {
	unsigned char	 pend[4];
	size_t		 npend;
};
/* Output room utf8_decode needs for len input bytes. */
#define UTF8_DECODE_BOUND(len)	(3 * ((len) + 4))
void	utf8_decoder_init(struct utf8_decoder *);
/*
 * Decodes len bytes into out (UTF8_DECODE_BOUND(len) bytes of room) and
 * returns how many it wrote.  Unless final, an incomplete character at
 * the end waits in the decoder for the next call.  Each maximal subpart
 * of an ill-formed sequence becomes one U+FFFD.
 */
size_t	utf8_decode(struct utf8_decoder *, const void *in, size_t len,
	    int final, char *out);
/*
 * The same over the whole input into a new NUL-terminated string (its
 * length in *outlen unless NULL); NULL if out of memory.
 */
char	*utf8_repair(const void *in, size_t len, size_t *outlen);

/* 1 if the len bytes are well-formed UTF-8, else 0. */
int	utf8_valid(const void *, size_t len);

/*
 * The character at s (len >= 1 bytes available): its length (1-4) with
 * its code point in *cp, or 0 if s does not start a well-formed one.
 */
size_t	utf8_char(const void *s, size_t len, uint32_t *cp);
/*
 * The same, but a byte that starts no character is one of length 1 and
 * code point 0xdc00 + the byte, as Python's surrogateescape decodes it.
 */
size_t	utf8_next_or_escape(const void *s, size_t len, uint32_t *cp);

/* Writes cp as 1-4 bytes and returns how many; U+FFFD if it has none. */
size_t	utf8_encode(uint32_t cp, unsigned char *out);

/* Python's len() of well-formed UTF-8: the number of characters. */
size_t	utf8_nchars(const void *, size_t len);
/*
 * The largest m <= n at which s can be cut without splitting a character
 * that starts before n.  s[n] must be readable.
 */
size_t	utf8_cut(const void *s, size_t n);
/*
 * How many of the last bytes of s (0-3) are the start of a well-formed
 * character that the bytes after them may complete: what to hold back
 * so that a character is not split between two pieces of output.
 */
size_t	utf8_incomplete_tail(const void *s, size_t len);

#endif /* AS_UTF8_H */
