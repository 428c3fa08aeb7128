/*
 * Tests for apid/http_parse.c: request heads (RFC 9112 and the checks of
 * our own on top of http-parser) and bodies (Content-Length and the
 * strict chunked decoder), fed whole and split at every byte.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "apid.h"

/* Parse a head given with \n line ends; returns 0 or the status. */
static int
parse(struct http_head *h, const char *text)
{
	char	*raw;
	size_t	 len = 0;

	assert_non_null(raw = malloc(strlen(text) * 2 + 1));
	for (; *text != '\0'; text++) {
		if (*text == '\n')
			raw[len++] = '\r';
		raw[len++] = *text;
	}
	raw[len] = '\0';
	if (http_head_parse(h, raw, len) == 0)
		return 0;
	assert_non_null(h->error);
	return h->status;
}

static int
status_of(const char *text)
{
	struct http_head	 h;
	int			 st = parse(&h, text);

	http_head_free(&h);
	return st;
}

static void
test_a_plain_head(void **state)
{
	struct http_head	 h;

	assert_int_equal(parse(&h, "GET /v1/sandboxes?x=1 HTTP/1.1\n"
	    "Host: a\nX-Api-Key:  k  \nAuthorization:\n\n"), 0);
	assert_string_equal(h.method, "GET");
	assert_string_equal(h.target, "/v1/sandboxes?x=1");
	assert_int_equal(h.minor, 1);
	assert_string_equal(http_head_field(&h, "x-api-key"), "k");
	assert_string_equal(http_head_field(&h, "AUTHORIZATION"), "");
	assert_null(http_head_field(&h, "Cookie"));
	assert_true(h.keep_alive);
	assert_false(h.has_length);
	assert_false(h.chunked);
	http_head_free(&h);
}

static void
test_keep_alive_rules(void **state)
{
	struct http_head	 h;

	assert_int_equal(parse(&h, "GET / HTTP/1.1\nHost: a\n"
	    "Connection: close\n\n"), 0);
	assert_false(h.keep_alive);
	http_head_free(&h);
	assert_int_equal(parse(&h, "GET / HTTP/1.0\n\n"), 0);
	assert_false(h.keep_alive);
	http_head_free(&h);
	assert_int_equal(parse(&h, "GET / HTTP/1.0\nConnection: keep-alive"
	    "\n\n"), 0);
	assert_true(h.keep_alive);
	http_head_free(&h);
}

static void
test_expect_and_upgrade(void **state)
{
	struct http_head	 h;

	assert_int_equal(parse(&h, "PUT / HTTP/1.1\nHost: a\n"
	    "Expect: 100-Continue\nContent-Length: 5\n\n"), 0);
	assert_true(h.expect_continue);
	assert_true(h.has_length);
	assert_int_equal(h.length, 5);
	http_head_free(&h);
	assert_int_equal(status_of("GET / HTTP/1.1\nHost: a\nExpect: x\n\n"),
	    417);
	assert_int_equal(parse(&h, "GET /ws HTTP/1.1\nHost: a\n"
	    "Connection: Upgrade\nUpgrade: websocket\n\n"), 0);
	assert_true(h.upgrade);
	http_head_free(&h);
}

/* The smuggling cases: 400 whatever http-parser would have made of them. */
static void
test_framing_refusals(void **state)
{
	static const char *const heads[] = {
	    "POST / HTTP/1.1\nHost: a\nContent-Length: 1\n"
	    "Transfer-Encoding: chunked\n\n",
	    "POST / HTTP/1.1\nHost: a\nTransfer-Encoding: chunked\n"
	    "Content-Length: 1\n\n",
	    "POST / HTTP/1.1\nHost: a\nContent-Length: 1\nContent-Length: 2"
	    "\n\n",
	    "POST / HTTP/1.1\nHost: a\nContent-Length: 1\nContent-Length: 1"
	    "\n\n",
	    "POST / HTTP/1.1\nHost: a\nContent-Length: 1, 1\n\n",
	    "POST / HTTP/1.1\nHost: a\nContent-Length: -1\n\n",
	    "POST / HTTP/1.1\nHost: a\nContent-Length: 99999999999999999999"
	    "\n\n",
	    "POST / HTTP/1.1\nHost: a\nTransfer-Encoding: gzip\n\n",
	    "POST / HTTP/1.1\nHost: a\nTransfer-Encoding: gzip, chunked\n\n",
	    "POST / HTTP/1.1\nHost: a\nTransfer-Encoding: chunked, gzip\n\n",
	    "POST / HTTP/1.1\nHost: a\nTransfer-Encoding: chunked\n"
	    "Transfer-Encoding: chunked\n\n",
	    "POST / HTTP/1.1\nHost: a\nTransfer-Encoding: xchunked\n\n",
	    "POST / HTTP/1.0\nTransfer-Encoding: chunked\n\n",
	    "GET / HTTP/1.1\nHost : a\n\n",
	    "GET / HTTP/1.1\nHost: a\nX: a\n b\n\n",
	    "GET / HTTP/1.1\nHost: a\nX: a\n\tb\n\n",
	    "GET / HTTP/1.1\nHost: a\n: empty\n\n",
	    "GET / HTTP/1.1\nHost: a\nX-\x7f: v\n\n",
	    "GET / HTTP/1.1\nHost: a\nX: \x01\n\n",
	    "GET / HTTP/1.1\nHost: a\nNoColon\n\n",
	    "GET  / HTTP/1.1\nHost: a\n\n",
	    "GET / HTTP/1.1 \nHost: a\n\n",
	    "GET /\x01 HTTP/1.1\nHost: a\n\n",
	    "GET / HTTP/1.1\n\n",
	    "GET / HTTP/1.1\nHost: a\nHost: b\n\n",
	    "GET / HTTX/1.1\nHost: a\n\n",
	};
	size_t	 i;

	for (i = 0; i < sizeof(heads) / sizeof(heads[0]); i++) {
		print_message("%zu: %s", i, heads[i]);
		assert_int_equal(status_of(heads[i]), 400);
	}
}

/* Line ends are CRLF: a bare LF or CR is refused, not guessed at. */
static void
test_bare_line_ends(void **state)
{
	static const char *const raws[] = {
	    "GET / HTTP/1.1\nHost: a\r\n\r\n",
	    "GET / HTTP/1.1\r\nHost: a\n\r\n",
	    "GET / HTTP/1.1\r\nHost: a\rX: b\r\n\r\n",
	    "GET / HTTP/1.1\r\nHost: a\r\n",
	};
	struct http_head	 h;
	size_t			 i;
	char			*raw;

	for (i = 0; i < sizeof(raws) / sizeof(raws[0]); i++) {
		assert_non_null(raw = strdup(raws[i]));
		assert_int_equal(http_head_parse(&h, raw, strlen(raw)), -1);
		assert_int_equal(h.status, 400);
		http_head_free(&h);
	}
}

static void
test_other_statuses(void **state)
{
	char	*big;
	size_t	 i;

	assert_int_equal(status_of("GET / HTTP/2.0\nHost: a\n\n"), 505);
	assert_int_equal(status_of("GET / HTTP/1.2\nHost: a\n\n"), 505);
	assert_int_equal(status_of("GET / HTTP/0.9\nHost: a\n\n"), 505);
	/* Methods are case-sensitive tokens: unknown ones are 501. */
	assert_int_equal(status_of("BREW / HTTP/1.1\nHost: a\n\n"), 501);
	assert_int_equal(status_of("get / HTTP/1.1\nHost: a\n\n"), 501);
	assert_non_null(big = malloc(HTTP_TARGET_MAX + 200));
	memcpy(big, "GET /", 5);
	memset(big + 5, 'a', HTTP_TARGET_MAX + 100);
	strcpy(big + 5 + HTTP_TARGET_MAX + 100, " HTTP/1.1\nHost: a\n\n");
	assert_int_equal(status_of(big), 414);
	free(big);
	assert_non_null(big = malloc(HTTP_FIELDS_MAX * 8 + 100));
	strcpy(big, "GET / HTTP/1.1\nHost: a\n");
	for (i = 0; i < HTTP_FIELDS_MAX; i++)
		strcat(big, "X-A: b\n");
	strcat(big, "\n");
	assert_int_equal(status_of(big), 431);
	free(big);
}

/* Bodies. */

struct sink {
	char	 buf[256];
	size_t	 len;
};

static void
sink_cb(void *arg, const char *data, size_t len)
{
	struct sink	*s = arg;

	assert_true(s->len + len < sizeof(s->buf));
	memcpy(s->buf + s->len, data, len);
	s->len += len;
	s->buf[s->len] = '\0';
}

/*
 * Feed the body split every `step` bytes; returns the wire bytes taken
 * (what is left belongs to the next request), or -1.
 */
static ssize_t
feed_split(struct http_head *h, const char *wire, size_t step,
    struct sink *s)
{
	size_t	 off = 0, len = strlen(wire), n;
	ssize_t	 r;

	memset(s, 0, sizeof(*s));
	while (off < len && !h->body_done) {
		n = len - off < step ? len - off : step;
		if ((r = http_body_feed(h, wire + off, n, sink_cb, s)) == -1)
			return -1;
		off += (size_t)r;
		if ((size_t)r < n)
			break;
	}
	return (ssize_t)off;
}

static ssize_t
body_of(const char *head, const char *wire, size_t step, struct sink *s,
    int *status)
{
	struct http_head	 h;
	ssize_t			 r;

	assert_int_equal(parse(&h, head), 0);
	r = feed_split(&h, wire, step, s);
	*status = r == -1 ? h.status : (h.body_done ? 0 : -1);
	http_head_free(&h);
	return r;
}

#define CHUNKED	"POST / HTTP/1.1\nHost: a\nTransfer-Encoding: chunked\n\n"

static void
test_bodies_at_every_split(void **state)
{
	const char	*wire = "3\r\nabc\r\n1;ext=\"v\"\r\nd\r\n"
	    "000\r\nT: x\r\n\r\nGET /next";
	struct sink	 s;
	size_t		 step;
	int		 st;

	for (step = 1; step <= strlen(wire); step++) {
		assert_int_equal(body_of(CHUNKED, wire, step, &s, &st),
		    strlen(wire) - strlen("GET /next"));
		assert_int_equal(st, 0);
		assert_string_equal(s.buf, "abcd");
		assert_int_equal(body_of("PUT / HTTP/1.1\nHost: a\n"
		    "Content-Length: 4\n\n", "wxyzGET", step, &s, &st), 4);
		assert_int_equal(st, 0);
		assert_string_equal(s.buf, "wxyz");
	}
}

/* What Debian's non-strict http-parser takes and we must not. */
static void
test_chunk_refusals(void **state)
{
	static const char *const wires[] = {
	    "2\r\n{}XX0\r\n\r\n",
	    "2\r\n{}\rX0\r\n\r\n",
	    "2\rX{}\r\n0\r\n\r\n",
	    "zz\r\n{}\r\n0\r\n\r\n",
	    "\r\n{}\r\n0\r\n\r\n",
	    "1111111111111111\r\n",
	    "2 x\x01\r\n{}\r\n0\r\n\r\n",
	    "0\r\nT\x01: x\r\n\r\n",
	    "0\r\nT: x\rX\r\n",
	    "-1\r\n",
	};
	struct sink	 s;
	size_t		 i, step;
	int		 st;

	for (i = 0; i < sizeof(wires) / sizeof(wires[0]); i++)
		for (step = 1; step <= strlen(wires[i]); step++) {
			print_message("%zu/%zu\n", i, step);
			assert_int_equal(body_of(CHUNKED, wires[i], step, &s,
			    &st), -1);
			assert_int_equal(st, 400);
		}
}

static void
count_cb(void *arg, const char *data, size_t len)
{
	*(size_t *)arg += len;
}

/* Feed one piece again and again: the count of pieces taken before -1. */
static int
feed_until_refused(struct http_head *h, const char *piece, int max)
{
	size_t	 got = 0;
	int	 i;

	for (i = 0; i < max; i++)
		if (http_body_feed(h, piece, strlen(piece), count_cb, &got) ==
		    -1)
			return i;
	return max;
}

/* Framing must carry data: endless extensions or trailers are refused. */
static void
test_chunk_bounds(void **state)
{
	struct http_head	 h;
	char			 line[8192];
	size_t			 got = 0;

	/* 16-byte chunks go on for ever; 1-byte ones do not. */
	assert_int_equal(parse(&h, CHUNKED), 0);
	assert_int_equal(feed_until_refused(&h, "10\r\n0123456789abcdef\r\n",
	    100000), 100000);
	http_head_free(&h);
	assert_int_equal(parse(&h, CHUNKED), 0);
	assert_in_range(feed_until_refused(&h, "1\r\nx\r\n", 100000), 10000,
	    20000);
	http_head_free(&h);

	assert_int_equal(parse(&h, CHUNKED), 0);
	memset(line, 'a', sizeof(line));
	assert_int_equal(http_body_feed(&h, "1;", 2, count_cb, &got), 2);
	assert_int_equal(http_body_feed(&h, line, sizeof(line), count_cb,
	    &got), -1);
	http_head_free(&h);

	/* Trailers: at most 8 KiB of them. */
	assert_int_equal(parse(&h, CHUNKED), 0);
	assert_int_equal(http_body_feed(&h, "0\r\n", 3, count_cb, &got), 3);
	assert_in_range(feed_until_refused(&h, "T: xxxxxxxxxxxxxxxxxxxxxxxx"
	    "xxxxxxxxxxxxxxxxxxxxxx\r\n", 10000), 100, 200);
	assert_int_equal(h.status, 431);
	http_head_free(&h);
}

static void
pieces_cb(void *arg, const char *data, size_t len)
{
	assert_true(len > 0);
	(*(int *)arg)++;
}

/*
 * No read gives a route an empty piece, with either framing: a route
 * that pushes back on every piece would spin (found by fuzz_http_conn,
 * tests/fuzz/regressions/http_conn/empty-piece-spins).
 */
static void
test_no_empty_pieces(void **state)
{
	struct http_head	 h;
	int			 pieces = 0;

	assert_int_equal(parse(&h, "PUT / HTTP/1.1\nHost: a\n"
	    "Content-Length: 8\n\n"), 0);
	assert_int_equal(http_body_feed(&h, "", 0, pieces_cb, &pieces), 0);
	assert_int_equal(http_body_feed(&h, "abcd", 4, pieces_cb, &pieces), 4);
	assert_int_equal(http_body_feed(&h, "", 0, pieces_cb, &pieces), 0);
	assert_int_equal(pieces, 1);
	assert_false(h.body_done);
	http_head_free(&h);
	assert_int_equal(parse(&h, CHUNKED), 0);
	assert_int_equal(http_body_feed(&h, "2\r\n", 3, pieces_cb, &pieces),
	    3);
	assert_int_equal(http_body_feed(&h, "", 0, pieces_cb, &pieces), 0);
	assert_int_equal(pieces, 1);
	assert_int_equal(http_body_feed(&h, "x", 1, pieces_cb, &pieces), 1);
	assert_int_equal(pieces, 2);
	http_head_free(&h);
}

static void
test_no_body(void **state)
{
	struct http_head	 h;
	struct sink		 s;

	assert_int_equal(parse(&h, "GET / HTTP/1.1\nHost: a\n\n"), 0);
	memset(&s, 0, sizeof(s));
	assert_int_equal(http_body_feed(&h, "GET /", 5, sink_cb, &s), 0);
	assert_true(h.body_done);
	http_head_free(&h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_plain_head),
		cmocka_unit_test(test_keep_alive_rules),
		cmocka_unit_test(test_expect_and_upgrade),
		cmocka_unit_test(test_framing_refusals),
		cmocka_unit_test(test_bare_line_ends),
		cmocka_unit_test(test_other_statuses),
		cmocka_unit_test(test_bodies_at_every_split),
		cmocka_unit_test(test_chunk_refusals),
		cmocka_unit_test(test_chunk_bounds),
		cmocka_unit_test(test_no_empty_pieces),
		cmocka_unit_test(test_no_body),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
