/*
 * Tests for common/utf8.c.  Decoding is held to CPython 3.11's
 * bytes.decode("utf-8", "replace") and its incremental decoder: the
 * tables (with the number of U+FFFD Python writes for each input, one
 * per maximal subpart) and the FNV-1a digests of every two-byte input
 * and of three- and four-byte inputs built from the bytes where the
 * rules change were computed with it and are hard-coded, as are the
 * digests of surrogateescape decoding and of chr(cp).encode().
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "utf8.h"

/* U+FFFD as UTF-8. */
#define R	"\357\277\275"

#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

struct dec_case {
	const char	*in;
	size_t		 inlen;
	const char	*want;
	size_t		 wantlen;
	size_t		 nfffd;	/* U+FFFD in Python's output */
};

struct inc_chunk {
	const char	*in;
	size_t		 inlen;
	const char	*want;
	size_t		 wantlen;
};

struct inc_case {
	size_t		 n;
	struct inc_chunk chunks[3];
	const char	*final;
	size_t		 finallen;
};

static const struct dec_case dec_cases[] = {
	/* empty */
	{ "", 0, "", 0, 0 },
	/* ASCII */
	{ "hello", 5, "hello", 5, 0 },
	/* U+00E9 */
	{ "caf\303\251", 5, "caf\303\251", 5, 0 },
	/* U+20AC */
	{ "\342\202\254", 3, "\342\202\254", 3, 0 },
	/* U+1F600 */
	{ "\360\237\230\200", 4, "\360\237\230\200", 4, 0 },
	/* U+0080, the first two-byte character */
	{ "\302\200", 2, "\302\200", 2, 0 },
	/* U+07FF, the last */
	{ "\337\277", 2, "\337\277", 2, 0 },
	/* U+0800, the first three-byte character */
	{ "\340\240\200", 3, "\340\240\200", 3, 0 },
	/* U+D7FF, just below the surrogates */
	{ "\355\237\277", 3, "\355\237\277", 3, 0 },
	/* U+E000, just above them */
	{ "\356\200\200", 3, "\356\200\200", 3, 0 },
	/* U+FFFE U+FFFF: noncharacters are well-formed */
	{ "\357\277\276\357\277\277", 6, "\357\277\276\357\277\277", 6, 0 },
	/* U+10000, the first four-byte character */
	{ "\360\220\200\200", 4, "\360\220\200\200", 4, 0 },
	/* U+10FFFF, the last character */
	{ "\364\217\277\277", 4, "\364\217\277\277", 4, 0 },
	/* U+FFFD itself */
	{ "\357\277\275", 3, R, 3, 1 },
	/* a BOM is a character like any other */
	{ "\357\273\277x", 4, "\357\273\277x", 4, 0 },
	/* a lone continuation byte */
	{ "\200", 1, R, 3, 1 },
	/* two: one U+FFFD each */
	{ "\277\200", 2, R R, 6, 2 },
	/* five */
	{ "\200\200\200\200\200", 5, R R R R R, 15, 5 },
	/* between ASCII */
	{ "a\200b", 3, "a" R "b", 5, 1 },
	/* one too many after a whole character */
	{ "\303\251\251", 3, "\303\251" R, 5, 1 },
	/* overlong NUL (C0 80): C0 is never a lead byte */
	{ "\300\200", 2, R R, 6, 2 },
	/* overlong '/' */
	{ "\300\257", 2, R R, 6, 2 },
	/* overlong U+007F */
	{ "\301\277", 2, R R, 6, 2 },
	/* overlong three-byte NUL */
	{ "\340\200\200", 3, R R R, 9, 3 },
	/* overlong three-byte '/' */
	{ "\340\200\257", 3, R R R, 9, 3 },
	/* overlong U+07FF: E0 wants A0..BF next */
	{ "\340\237\277", 3, R R R, 9, 3 },
	/* overlong four-byte NUL */
	{ "\360\200\200\200", 4, R R R R, 12, 4 },
	/* overlong four-byte '/' */
	{ "\360\200\200\257", 4, R R R R, 12, 4 },
	/* overlong U+FFFF: F0 wants 90..BF next */
	{ "\360\217\277\277", 4, R R R R, 12, 4 },
	/* U+D800 encoded: ED wants 80..9F next */
	{ "\355\240\200", 3, R R R, 9, 3 },
	/* U+DB7F */
	{ "\355\255\277", 3, R R R, 9, 3 },
	/* U+DBFF */
	{ "\355\257\277", 3, R R R, 9, 3 },
	/* U+DC00 */
	{ "\355\260\200", 3, R R R, 9, 3 },
	/* U+DFFF */
	{ "\355\277\277", 3, R R R, 9, 3 },
	/* a CESU-8 surrogate pair for U+1F600 */
	{ "\355\240\275\355\270\200", 6, R R R R R R, 18, 6 },
	/* a truncated surrogate: the first bad byte is its own subpart */
	{ "\355\240", 2, R R, 6, 2 },
	/* a lone ED at the end */
	{ "\355", 1, R, 3, 1 },
	/* U+110000: F4 wants 80..8F next */
	{ "\364\220\200\200", 4, R R R R, 12, 4 },
	/* U+13FFFF */
	{ "\364\277\277\277", 4, R R R R, 12, 4 },
	/* F5 is never a lead byte */
	{ "\365\200\200\200", 4, R R R R, 12, 4 },
	/* U+1FFFFF in the old four-byte form */
	{ "\367\277\277\277", 4, R R R R, 12, 4 },
	/* an old five-byte form */
	{ "\370\210\200\200\200", 5, R R R R R, 15, 5 },
	/* an old six-byte form */
	{ "\374\204\200\200\200\200", 6, R R R R R R, 18, 6 },
	/* FE and FF */
	{ "\376\377", 2, R R, 6, 2 },
	/* a UTF-32 BOM */
	{ "\377\376\000\000", 4, R R "\000\000", 8, 2 },
	/* a lone two-byte lead */
	{ "\302", 1, R, 3, 1 },
	/* three-byte, two of three */
	{ "\340\240", 2, R, 3, 1 },
	/* U+20AC without its last byte */
	{ "\342\202", 2, R, 3, 1 },
	/* a lone three-byte lead */
	{ "\342", 1, R, 3, 1 },
	/* a lone four-byte lead */
	{ "\360", 1, R, 3, 1 },
	/* four-byte, two of four */
	{ "\360\237", 2, R, 3, 1 },
	/* four-byte, three of four */
	{ "\360\237\230", 3, R, 3, 1 },
	/* U+10FFFF without its last byte */
	{ "\364\217\277", 3, R, 3, 1 },
	/* a whole character, then a truncated one */
	{ "\303\251\303", 3, "\303\251" R, 5, 1 },
	/* two, then a lone lead */
	{ "\342\202\254\342\202\254\342", 7,
	    "\342\202\254\342\202\254" R, 9, 1 },
	/* a mixture ending in a lead */
	{ "a\377b\303\251c\342\202\254\360", 10,
	    "a" R "b\303\251c\342\202\254" R, 14, 2 },
	/* lead, then ASCII */
	{ "\302A", 2, R "A", 4, 1 },
	/* two of three, then ASCII */
	{ "\342\202A", 3, R "A", 4, 1 },
	/* three of four, then ASCII */
	{ "\360\237\230A", 4, R "A", 4, 1 },
	/* a bad second byte, then a stray continuation */
	{ "\342(\241", 3, R "(" R, 7, 2 },
	/* the same in four bytes */
	{ "\360(\214(", 4, R "(" R "(", 8, 2 },
	/* a truncated character before a whole one */
	{ "\341\200\342\202\254", 5, R "\342\202\254", 6, 1 },
	/* three truncated ones, one whole */
	{ "\361\200\200\341\200\302\200", 7, R R "\302\200", 8, 2 },
	/* a lead before a whole character */
	{ "\302\303\251", 3, R "\303\251", 5, 1 },
	/* a subpart then a byte that is never valid */
	{ "\360\220\300", 3, R R, 6, 2 },
	/* NUL */
	{ "\000", 1, "\000", 1, 0 },
	/* NUL and SOH */
	{ "\000\001nul", 5, "\000\001nul", 5, 0 },
	/* NULs between and after */
	{ "a\000b\000", 4, "a\000b\000", 4, 0 },
	/* a lead, then NUL */
	{ "\302\000", 2, R "\000", 4, 1 },
	/* two of three, then NUL */
	{ "\342\202\000", 3, R "\000", 4, 1 },
	/* three of four, then NUL */
	{ "\360\237\230\000", 4, R "\000", 4, 1 },
	/* NUL, then a lone lead */
	{ "\000\360", 2, "\000" R, 4, 1 },
	/* U+FFFFF and U+E000 */
	{ "\363\277\277\277\356\200\200", 7,
	    "\363\277\277\277\356\200\200", 7, 0 },
};

/* Chunk by chunk, what Python's incremental decoder returns. */
static const struct inc_case inc_cases[] = {
	{ 2, {
	    { "\303", 1, "", 0 },
	    { "\251", 1, "\303\251", 2 },
	}, "", 0 },
	{ 2, {
	    { "a\342\202", 3, "a", 1 },
	    { "\254b", 2, "\342\202\254b", 4 },
	}, "", 0 },
	{ 2, {
	    { "\342\202", 2, "", 0 },
	    { "A", 1, R "A", 4 },
	}, "", 0 },
	{ 3, {
	    { "\360\237", 2, "", 0 },
	    { "\230", 1, "", 0 },
	    { "\200", 1, "\360\237\230\200", 4 },
	}, "", 0 },
	{ 1, {
	    { "x\342", 2, "x", 1 },
	}, R, 3 },
	{ 3, {
	    { "\360", 1, "", 0 },
	    { "\237\230", 2, "", 0 },
	    { "A", 1, R "A", 4 },
	}, "", 0 },
	{ 2, {
	    { "\355", 1, "", 0 },
	    { "\240\200", 2, R R R, 9 },
	}, "", 0 },
	{ 2, {
	    { "ok\303", 3, "ok", 2 },
	    { "\303\251", 2, R "\303\251", 5 },
	}, "", 0 },
	{ 2, {
	    { "\364", 1, "", 0 },
	    { "\220", 1, R R, 6 },
	}, "", 0 },
	{ 2, {
	    { "\340", 1, "", 0 },
	    { "\200", 1, R R, 6 },
	}, "", 0 },
	{ 3, {
	    { "\360\220", 2, "", 0 },
	    { "\200", 1, "", 0 },
	    { "\200", 1, "\360\220\200\200", 4 },
	}, "", 0 },
	{ 2, {
	    { "\303", 1, "", 0 },
	    { "\000", 1, R "\000", 4 },
	}, "", 0 },
	{ 2, {
	    { "\342", 1, "", 0 },
	    { "\202\377", 2, R R, 6 },
	}, "", 0 },
	{ 1, {
	    { "\360\237\230", 3, "", 0 },
	}, R, 3 },
	{ 3, {
	    { "\342\202", 2, "", 0 },
	    { "\254\342", 2, "\342\202\254", 3 },
	    { "\202", 1, "", 0 },
	}, R, 3 },
	{ 3, {
	    { "\360", 1, "", 0 },
	    { "\237", 1, "", 0 },
	    { "\230", 1, "", 0 },
	}, R, 3 },
	{ 2, {
	    { "\200", 1, R, 3 },
	    { "\303", 1, "", 0 },
	}, R, 3 },
};


/* Python's digests (see the first comment): inputs one after another. */
#define DECODE_TWO	0xe7abc117fcf74de5ULL
#define DECODE_THREE	0xc968259b0e78677fULL
#define DECODE_FOUR	0x8cdf576aca059649ULL
#define ESCAPE_TWO	0x390476603bb1c025ULL
#define ESCAPE_THREE	0xd1c6a1125eb8b981ULL
#define ESCAPE_FOUR	0x547283e159d1b4cdULL
#define ENCODE_ALL	0xf32df5f54ee3c908ULL

#define FNV_BASIS	0xcbf29ce484222325ULL

/* The bytes after a lead byte where the rules change. */
static const unsigned char interesting[] = {
	0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0,
	0xc2, 0xdf, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff,
};

static uint64_t
fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char	*s = p;
	size_t			 i;

	for (i = 0; i < n; i++) {
		h ^= s[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static size_t
decode_whole(const void *in, size_t len, char *out)
{
	struct utf8_decoder	 d;

	utf8_decoder_init(&d);
	return utf8_decode(&d, in, len, 1, out);
}

static size_t
count_fffd(const char *s, size_t len)
{
	size_t	 i, n = 0;

	for (i = 0; i + 3 <= len; i++)
		if (memcmp(s + i, R, 3) == 0)
			n++;
	return n;
}

static void
test_decode_table(void **state)
{
	const struct dec_case	*c;
	char			 out[256];
	size_t			 i, n;

	for (i = 0; i < NELEM(dec_cases); i++) {
		c = &dec_cases[i];
		n = decode_whole(c->in, c->inlen, out);
		assert_int_equal(n, c->wantlen);
		assert_memory_equal(out, c->want, n);
		assert_int_equal(count_fffd(out, n), c->nfffd);
		assert_true(n <= UTF8_DECODE_BOUND(c->inlen));
		assert_int_equal(utf8_valid(out, n), 1);
	}
}

/* Decodes c->in cut at a and b (a <= b), the last call final. */
static size_t
decode_three(const struct dec_case *c, size_t a, size_t b, char *out)
{
	struct utf8_decoder	 d;
	size_t			 n;

	utf8_decoder_init(&d);
	n = utf8_decode(&d, c->in, a, 0, out);
	n += utf8_decode(&d, c->in + a, b - a, 0, out + n);
	n += utf8_decode(&d, c->in + b, c->inlen - b, 1, out + n);
	assert_int_equal(d.npend, 0);
	return n;
}

/* Every split into three pieces, and byte by byte, equals the whole. */
static void
test_decode_split_everywhere(void **state)
{
	const struct dec_case	*c;
	struct utf8_decoder	 d;
	char			 out[256];
	size_t			 i, a, b, n, k;

	for (i = 0; i < NELEM(dec_cases); i++) {
		c = &dec_cases[i];
		for (a = 0; a <= c->inlen; a++)
			for (b = a; b <= c->inlen; b++) {
				n = decode_three(c, a, b, out);
				assert_int_equal(n, c->wantlen);
				assert_memory_equal(out, c->want, n);
			}
		utf8_decoder_init(&d);
		for (k = 0, n = 0; k < c->inlen; k++)
			n += utf8_decode(&d, c->in + k, 1, 0, out + n);
		n += utf8_decode(&d, NULL, 0, 1, out + n);
		assert_int_equal(n, c->wantlen);
		assert_memory_equal(out, c->want, n);
	}
}

static void
test_decode_incremental(void **state)
{
	const struct inc_chunk	*c;
	struct utf8_decoder	 d;
	char			 out[64];
	size_t			 i, k, n;

	for (i = 0; i < NELEM(inc_cases); i++) {
		utf8_decoder_init(&d);
		for (k = 0; k < inc_cases[i].n; k++) {
			c = &inc_cases[i].chunks[k];
			n = utf8_decode(&d, c->in, c->inlen, 0, out);
			assert_int_equal(n, c->wantlen);
			assert_memory_equal(out, c->want, n);
		}
		n = utf8_decode(&d, NULL, 0, 1, out);
		assert_int_equal(n, inc_cases[i].finallen);
		assert_memory_equal(out, inc_cases[i].final, n);
		assert_int_equal(d.npend, 0);
	}
}

/*
 * One input of a digest set: its whole decoding goes into the digest,
 * every two-piece split must give the same, and it is valid exactly when
 * it decodes to itself.
 */
static uint64_t
decode_one(uint64_t h, const unsigned char *in, size_t len)
{
	struct utf8_decoder	 d;
	char			 whole[32], split[32];
	size_t			 n, m, cut;

	n = decode_whole(in, len, whole);
	for (cut = 1; cut < len; cut++) {
		utf8_decoder_init(&d);
		m = utf8_decode(&d, in, cut, 0, split);
		m += utf8_decode(&d, in + cut, len - cut, 1, split + m);
		assert_int_equal(m, n);
		assert_memory_equal(split, whole, n);
	}
	assert_int_equal(utf8_valid(in, len),
	    n == len && memcmp(whole, in, len) == 0);
	h = fnv(h, whole, n);
	return fnv(h, "\377", 1);
}

/* Calls f on each input of the sets the digests cover. */
static uint64_t
each_two(uint64_t (*f)(uint64_t, const unsigned char *, size_t))
{
	unsigned char	 b[2];
	uint64_t	 h = FNV_BASIS;
	unsigned int	 i;

	for (i = 0; i < 65536; i++) {
		b[0] = i >> 8;
		b[1] = i & 0xff;
		h = f(h, b, 2);
	}
	return h;
}

static uint64_t
each_three(uint64_t (*f)(uint64_t, const unsigned char *, size_t))
{
	unsigned char	 b[3];
	uint64_t	 h = FNV_BASIS;
	unsigned int	 lead;
	size_t		 i, j;

	for (lead = 0xc0; lead <= 0xff; lead++)
		for (i = 0; i < NELEM(interesting); i++)
			for (j = 0; j < NELEM(interesting); j++) {
				b[0] = lead;
				b[1] = interesting[i];
				b[2] = interesting[j];
				h = f(h, b, 3);
			}
	return h;
}

static uint64_t
each_four(uint64_t (*f)(uint64_t, const unsigned char *, size_t))
{
	unsigned char	 b[4];
	uint64_t	 h = FNV_BASIS;
	unsigned int	 lead;
	size_t		 i, j, k;

	for (lead = 0xe0; lead <= 0xff; lead++)
		for (i = 0; i < NELEM(interesting); i++)
			for (j = 0; j < NELEM(interesting); j++)
				for (k = 0; k < NELEM(interesting); k++) {
					b[0] = lead;
					b[1] = interesting[i];
					b[2] = interesting[j];
					b[3] = interesting[k];
					h = f(h, b, 4);
				}
	return h;
}

static void
test_decode_digests(void **state)
{
	assert_int_equal(each_two(decode_one), DECODE_TWO);
	assert_int_equal(each_three(decode_one), DECODE_THREE);
	assert_int_equal(each_four(decode_one), DECODE_FOUR);
}

static void
test_repair(void **state)
{
	const struct dec_case	*c;
	char			*s;
	size_t			 i, n;

	for (i = 0; i < NELEM(dec_cases); i++) {
		c = &dec_cases[i];
		s = utf8_repair(c->in, c->inlen, &n);
		assert_non_null(s);
		assert_int_equal(n, c->wantlen);
		assert_memory_equal(s, c->want, n);
		assert_int_equal(s[n], '\0');
		free(s);
	}
	s = utf8_repair("a\377", 2, NULL);
	assert_non_null(s);
	assert_string_equal(s, "a" R);
	free(s);
	s = utf8_repair(NULL, 0, &n);
	assert_non_null(s);
	assert_int_equal(n, 0);
	assert_string_equal(s, "");
	free(s);
}

static void
test_valid(void **state)
{
	const struct dec_case	*c;
	size_t			 i;

	for (i = 0; i < NELEM(dec_cases); i++) {
		c = &dec_cases[i];
		assert_int_equal(utf8_valid(c->in, c->inlen),
		    c->inlen == c->wantlen &&
		    memcmp(c->in, c->want, c->inlen) == 0);
	}
	assert_int_equal(utf8_valid("plain", 5), 1);
	assert_int_equal(utf8_valid("", 0), 1);
	assert_int_equal(utf8_valid("a\000b", 3), 1);
	assert_int_equal(utf8_valid("\303\251", 2), 1);
	/* Only the length given counts: a cut character is invalid. */
	assert_int_equal(utf8_valid("\303\251", 1), 0);
	assert_int_equal(utf8_valid("\360\237\230\200", 3), 0);
	assert_int_equal(utf8_valid("\355\240\200", 3), 0);
	assert_int_equal(utf8_valid("\300\200", 2), 0);
	assert_int_equal(utf8_valid("\364\220\200\200", 4), 0);
}

struct char_case {
	const char	*in;
	size_t		 len;
	size_t		 want;		/* 0: not a character */
	uint32_t	 cp;
};

static const struct char_case char_cases[] = {
	{ "A", 1, 1, 0x41 },
	{ "\000", 1, 1, 0 },
	{ "\177", 1, 1, 0x7f },
	{ "\302\200", 2, 2, 0x80 },
	{ "\303\251xyz", 5, 2, 0xe9 },
	{ "\337\277", 2, 2, 0x7ff },
	{ "\340\240\200", 3, 3, 0x800 },
	{ "\342\202\254", 3, 3, 0x20ac },
	{ "\355\237\277", 3, 3, 0xd7ff },
	{ "\356\200\200", 3, 3, 0xe000 },
	{ "\357\277\277", 3, 3, 0xffff },
	{ "\360\220\200\200", 4, 4, 0x10000 },
	{ "\360\237\230\200", 4, 4, 0x1f600 },
	{ "\364\217\277\277", 4, 4, 0x10ffff },
	{ "\200", 1, 0, 0 },
	{ "\300\200", 2, 0, 0 },
	{ "\301\277", 2, 0, 0 },
	{ "\340\237\277", 3, 0, 0 },
	{ "\360\217\277\277", 4, 0, 0 },
	{ "\355\240\200", 3, 0, 0 },
	{ "\355\277\277", 3, 0, 0 },
	{ "\364\220\200\200", 4, 0, 0 },
	{ "\365\200\200\200", 4, 0, 0 },
	{ "\377", 1, 0, 0 },
	/* Cut short by len, whatever follows in memory. */
	{ "\303\251", 1, 0, 0 },
	{ "\342\202\254", 2, 0, 0 },
	{ "\360\237\230\200", 3, 0, 0 },
	{ "\302\000", 2, 0, 0 },
};

static void
test_char(void **state)
{
	const struct char_case	*c;
	uint32_t		 cp;
	size_t			 i;

	for (i = 0; i < NELEM(char_cases); i++) {
		c = &char_cases[i];
		cp = 0xdeadbeef;
		assert_int_equal(utf8_char(c->in, c->len, &cp), c->want);
		if (c->want > 0)
			assert_int_equal(cp, c->cp);
	}
}

/*
 * utf8_char against the rest of the module: a character it finds is
 * valid, one character long and encodes back to its bytes; when it finds
 * none, no prefix of the input is a single valid character.
 */
static uint64_t
char_one(uint64_t h, const unsigned char *in, size_t len)
{
	unsigned char	 enc[4];
	uint32_t	 cp;
	size_t		 k, m, want = 0;

	for (m = 1; m <= len; m++)
		if (utf8_valid(in, m) && utf8_nchars(in, m) == 1)
			want = m;
	k = utf8_char(in, len, &cp);
	assert_int_equal(k, want);
	if (k > 0) {
		assert_int_equal(utf8_encode(cp, enc), k);
		assert_memory_equal(enc, in, k);
	}
	return h;
}

static void
test_char_agrees(void **state)
{
	each_two(char_one);
	each_three(char_one);
	each_four(char_one);
}

static void
test_next_or_escape(void **state)
{
	uint32_t	 cp;

	assert_int_equal(utf8_next_or_escape("\303\251", 2, &cp), 2);
	assert_int_equal(cp, 0xe9);
	assert_int_equal(utf8_next_or_escape("\000", 1, &cp), 1);
	assert_int_equal(cp, 0);
	assert_int_equal(utf8_next_or_escape("\377", 1, &cp), 1);
	assert_int_equal(cp, 0xdcff);
	assert_int_equal(utf8_next_or_escape("\200", 1, &cp), 1);
	assert_int_equal(cp, 0xdc80);
	/* Each byte of a bad sequence is escaped on its own. */
	assert_int_equal(utf8_next_or_escape("\355\240\200", 3, &cp), 1);
	assert_int_equal(cp, 0xdced);
	assert_int_equal(utf8_next_or_escape("\342\202", 2, &cp), 1);
	assert_int_equal(cp, 0xdce2);
	assert_int_equal(utf8_next_or_escape("\360\237\230\200", 4, &cp), 4);
	assert_int_equal(cp, 0x1f600);
}

/* The code points surrogateescape decodes the input to, each LE. */
static uint64_t
escape_one(uint64_t h, const unsigned char *in, size_t len)
{
	unsigned char	 le[4];
	uint32_t	 cp;
	size_t		 i, k;

	for (i = 0; i < len; i += k) {
		k = utf8_next_or_escape(in + i, len - i, &cp);
		assert_true(k >= 1 && k <= len - i);
		le[0] = cp & 0xff;
		le[1] = (cp >> 8) & 0xff;
		le[2] = (cp >> 16) & 0xff;
		le[3] = cp >> 24;
		h = fnv(h, le, 4);
	}
	return fnv(h, "\377\377\377\377", 4);
}

static void
test_escape_digests(void **state)
{
	assert_int_equal(each_two(escape_one), ESCAPE_TWO);
	assert_int_equal(each_three(escape_one), ESCAPE_THREE);
	assert_int_equal(each_four(escape_one), ESCAPE_FOUR);
}

static void
test_encode(void **state)
{
	static const uint32_t	 extra[] = {
		0x110000, 0x1fffff, 0xffffffff
	};
	unsigned char		 b[4];
	uint64_t		 h = FNV_BASIS;
	uint32_t		 cp, back;
	size_t			 n, i;

	for (cp = 0; cp <= 0x10ffff; cp++) {
		n = utf8_encode(cp, b);
		h = fnv(h, b, n);
		assert_int_equal(utf8_char(b, n, &back), n);
		if (cp < 0xd800 || cp > 0xdfff)
			assert_int_equal(back, cp);
		else
			assert_int_equal(back, 0xfffd);
	}
	for (i = 0; i < NELEM(extra); i++) {
		n = utf8_encode(extra[i], b);
		assert_int_equal(n, 3);
		assert_memory_equal(b, R, 3);
		h = fnv(h, b, n);
	}
	assert_int_equal(h, ENCODE_ALL);
	assert_int_equal(utf8_encode(0x1f600, b), 4);
	assert_memory_equal(b, "\360\237\230\200", 4);
}

static void
test_nchars(void **state)
{
	/* len() in Python of the decoded text. */
	assert_int_equal(utf8_nchars("", 0), 0);
	assert_int_equal(utf8_nchars("abc", 3), 3);
	assert_int_equal(utf8_nchars("a\000b", 3), 3);
	assert_int_equal(utf8_nchars("caf\303\251", 5), 4);
	assert_int_equal(utf8_nchars("\342\202\254\342\202\254", 6), 2);
	assert_int_equal(utf8_nchars("\360\237\230\200!", 5), 2);
	assert_int_equal(utf8_nchars("\364\217\277\277\357\273\277", 7), 2);
	/* A prefix counts the characters that start in it. */
	assert_int_equal(utf8_nchars("\303\251\303\251", 3), 2);
}

static void
test_cut(void **state)
{
	static const char	 s[] =
	    "a\303\251\342\202\254\360\237\230\200z";
	static const size_t	 want[] = { 0, 1, 1, 3, 3, 3, 6, 6, 6, 6, 10,
	    11 };
	size_t			 n;

	for (n = 0; n < NELEM(want); n++)
		assert_int_equal(utf8_cut(s, n), want[n]);
	/* Continuation bytes alone: nothing can be kept. */
	assert_int_equal(utf8_cut("\200\200\200", 2), 0);
	assert_int_equal(utf8_cut("ab", 1), 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_table),
		cmocka_unit_test(test_decode_split_everywhere),
		cmocka_unit_test(test_decode_incremental),
		cmocka_unit_test(test_decode_digests),
		cmocka_unit_test(test_repair),
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_char),
		cmocka_unit_test(test_char_agrees),
		cmocka_unit_test(test_next_or_escape),
		cmocka_unit_test(test_escape_digests),
		cmocka_unit_test(test_encode),
		cmocka_unit_test(test_nchars),
		cmocka_unit_test(test_cut),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
