/*
 * Tests for egress-proxy/egress_chunked.c: where a chunked request body
 * ends, fed whole or a byte at a time, and what breaks it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "egress_chunked.h"

/* The body's length in text, fed in pieces of step bytes. */
static size_t
scan(const char *text, size_t step, enum egress_chunk_state *end)
{
	struct egress_chunks	 k;
	size_t			 len = strlen(text), off = 0, n, used = 0;

	memset(&k, 0, sizeof(k));
	while (off < len && k.state != EGRESS_CH_DONE &&
	    k.state != EGRESS_CH_BAD) {
		n = len - off < step ? len - off : step;
		used += egress_chunks_scan(&k, (const unsigned char *)text +
		    off, n);
		off += n;
	}
	*end = k.state;
	return used;
}

static void
expect_body(const char *text, size_t body)
{
	enum egress_chunk_state	 end;
	size_t			 step;

	for (step = 1; step <= strlen(text); step++) {
		assert_int_equal(scan(text, step, &end), body);
		assert_int_equal(end, EGRESS_CH_DONE);
	}
}

static void
expect_state(const char *text, enum egress_chunk_state want)
{
	enum egress_chunk_state	 end;

	(void)scan(text, strlen(text), &end);
	assert_int_equal(end, want);
	(void)scan(text, 1, &end);
	assert_int_equal(end, want);
}

static void
test_ends(void **state)
{
	static const char	 one[] = "3\r\nabc\r\n0\r\n\r\n";
	static const char	 two[] = "3;ext=1\r\nabc\r\n10\r\n"
	    "zzzzzzzzzzzzzzzz\r\n0\r\nX-T: 1\r\nX-U: 2\r\n\r\n";
	char			 piped[256];

	expect_body("0\r\n\r\n", 5);
	expect_body(one, strlen(one));
	expect_body(two, strlen(two));
	/* What follows the body is not the body's. */
	(void)strcpy(piped, one);
	(void)strcat(piped, "GET http://a.test/ HTTP/1.1\r\n\r\n");
	expect_body(piped, strlen(one));
	/* A chunk's data may hold anything, CRLFs included. */
	expect_body("4\r\n\r\n\r\n\r\n0\r\n\r\n", 14);
	expect_body("A\r\n0123456789\r\n0\r\n\r\n", 20);
}

static void
test_unfinished(void **state)
{
	expect_state("3\r\nab", EGRESS_CH_DATA);
	expect_state("3\r\nabc\r\n0\r\n", EGRESS_CH_TRAILER_START);
	expect_state("3", EGRESS_CH_SIZE);
}

static void
test_bad(void **state)
{
	expect_state("zz\r\n", EGRESS_CH_BAD);
	expect_state("\r\n", EGRESS_CH_BAD);
	expect_state("-1\r\n", EGRESS_CH_BAD);
	expect_state("3\nabc", EGRESS_CH_BAD);
	expect_state("3\r\nabcd\r\n", EGRESS_CH_BAD);
	expect_state("3\r\nabc\n0\r\n\r\n", EGRESS_CH_BAD);
	expect_state("0\r\n\r\r", EGRESS_CH_BAD);
	/* 16 hex digits: past the bound, whatever their value. */
	expect_state("0000000000000001\r\n", EGRESS_CH_BAD);
	expect_state("fffffffffffffff\r\n", EGRESS_CH_DATA);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ends),
		cmocka_unit_test(test_unfinished),
		cmocka_unit_test(test_bad),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
