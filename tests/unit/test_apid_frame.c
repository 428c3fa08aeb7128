/*
 * Tests for apid's request framing (http_frame.c): what evhttp is given,
 * what is diverted, across arbitrary read boundaries.
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

struct run {
	struct http_framer	 fr;
	struct evbuffer		*src, *dst, *div;
	int			 diversions;
};

static void
run_init(struct run *r)
{
	http_frame_init(&r->fr);
	assert_non_null(r->src = evbuffer_new());
	assert_non_null(r->dst = evbuffer_new());
	assert_non_null(r->div = evbuffer_new());
	r->diversions = 0;
}

static void
run_free(struct run *r)
{
	evbuffer_free(r->src);
	evbuffer_free(r->dst);
	evbuffer_free(r->div);
}

/* Feed in pieces of step bytes; the diverted body is consumed at once. */
static void
feed(struct run *r, const char *in, size_t len, size_t step)
{
	size_t	 off, n;
	int	 ev;

	for (off = 0; off < len; off += n) {
		n = len - off < step ? len - off : step;
		assert_int_equal(evbuffer_add(r->src, in + off, n), 0);
		do {
			ev = http_frame(&r->fr, r->src, r->dst, SIZE_MAX,
			    r->div, SIZE_MAX);
			assert_true(ev >= 0);
			if (ev & FRAME_DIVERTED)
				r->diversions++;
			if (r->fr.state == FRAME_HELD)
				http_frame_release(&r->fr);
		} while (ev != 0 && evbuffer_get_length(r->src) > 0);
	}
}

static void
assert_buf(struct evbuffer *b, const char *want)
{
	size_t	 len = evbuffer_get_length(b);
	char	*got = malloc(len + 1);

	assert_non_null(got);
	evbuffer_copyout(b, got, len);
	got[len] = '\0';
	assert_string_equal(got, want);
	free(got);
}

static void
check(const char *in, const char *want_dst, const char *want_div,
    int diversions)
{
	struct run	 r;
	size_t		 steps[] = { 1, 2, 3, 7, 64, 100000 };
	size_t		 i;

	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		run_init(&r);
		feed(&r, in, strlen(in), steps[i]);
		assert_buf(r.dst, want_dst);
		assert_buf(r.div, want_div);
		assert_int_equal(r.diversions, diversions);
		run_free(&r);
	}
}

static void
test_normal_unchanged(void **state)
{
	const char	*in =
	    "GET /v1/sandboxes HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k"
	    "\r\n\r\n"
	    "POST /v1/sandboxes HTTP/1.1\nContent-Length: 7\n\n{\"a\":1}"
	    "PUT /v1/sandboxes/abc/files?path=a HTTP/1.1\r\n"
	    "Content-Length: 0\r\n\r\n";

	check(in, in, "", 0);
}

static void
test_upload_diverted(void **state)
{
	check("PUT /v1/sandboxes/sb1/files?path=/workspace/a&mode=644 "
	    "HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nX-A: b\r\n\r\n"
	    "hello",
	    "PUT /v1/sandboxes/sb1/files?path=/workspace/a&mode=644 "
	    "HTTP/1.1\r\nHost: h\r\nX-A: b\r\nContent-Length: 0\r\n"
	    UPLOAD_LENGTH_HEADER ": 5\r\n\r\n", "hello", 1);
}

static void
test_forged_stripped(void **state)
{
	check("GET /healthz HTTP/1.1\r\nx-agent-sandbox-upload-length: 9\r\n"
	    "\r\n"
	    "PUT /v1/sandboxes/s/files?path=a HTTP/1.1\r\n"
	    UPLOAD_LENGTH_HEADER ": 99\r\ncontent-length: 2\r\n\r\nhi",
	    "GET /healthz HTTP/1.1\r\n\r\n"
	    "PUT /v1/sandboxes/s/files?path=a HTTP/1.1\r\n"
	    "Content-Length: 0\r\n" UPLOAD_LENGTH_HEADER ": 2\r\n\r\n",
	    "hi", 1);
}

static void
test_pipelined(void **state)
{
	check("PUT /v1/sandboxes/s/files?path=a HTTP/1.1\r\n"
	    "Content-Length: 3\r\n\r\nabc"
	    "PUT /v1/sandboxes/s/files?path=b HTTP/1.1\r\n"
	    "Content-Length: 4\r\n\r\nGET "
	    "GET /v1/sandboxes/s/files?path=b HTTP/1.1\r\n\r\n",
	    "PUT /v1/sandboxes/s/files?path=a HTTP/1.1\r\n"
	    "Content-Length: 0\r\n" UPLOAD_LENGTH_HEADER ": 3\r\n\r\n"
	    "PUT /v1/sandboxes/s/files?path=b HTTP/1.1\r\n"
	    "Content-Length: 0\r\n" UPLOAD_LENGTH_HEADER ": 4\r\n\r\n"
	    "GET /v1/sandboxes/s/files?path=b HTTP/1.1\r\n\r\n",
	    "abcGET ", 2);
}

/* Not the upload route: other methods, paths, more segments. */
static void
test_not_upload(void **state)
{
	const char	*in =
	    "POST /v1/sandboxes/s/files HTTP/1.1\r\nContent-Length: 2\r\n\r\nab"
	    "PUT /v1/sandboxes/s/x/files HTTP/1.1\r\nContent-Length: 2\r\n\r\nab"
	    "PUT /v1/sandboxes//files HTTP/1.1\r\nContent-Length: 2\r\n\r\nab"
	    "PUT /v1/sandboxes/s/filesx HTTP/1.1\r\nContent-Length: 2\r\n\r\nab";

	check(in, in, "", 0);
}

/* The body stays with its head while the divert buffer is full. */
static void
test_backpressure(void **state)
{
	struct run	 r;
	const char	*in = "PUT /v1/sandboxes/s/files?path=a HTTP/1.1\r\n"
	    "Content-Length: 10\r\n\r\n0123456789GET / HTTP/1.1\r\n\r\n";

	run_init(&r);
	evbuffer_add(r.src, in, strlen(in));
	assert_int_equal(http_frame(&r.fr, r.src, r.dst, SIZE_MAX, r.div, 4),
	    FRAME_PROGRESS | FRAME_DIVERTED);
	assert_buf(r.div, "0123");
	assert_int_equal(http_frame(&r.fr, r.src, r.dst, SIZE_MAX, r.div, 0),
	    0);
	assert_int_equal(http_frame(&r.fr, r.src, r.dst, SIZE_MAX, r.div,
	    100), FRAME_PROGRESS);
	assert_buf(r.div, "0123456789");
	assert_int_equal(r.fr.state, FRAME_HELD);
	/* Held: the next request waits for the release. */
	assert_int_equal(http_frame(&r.fr, r.src, r.dst, SIZE_MAX, r.div,
	    100), 0);
	assert_int_equal(evbuffer_get_length(r.src), 18);
	http_frame_release(&r.fr);
	assert_int_equal(http_frame(&r.fr, r.src, r.dst, SIZE_MAX, r.div,
	    100), FRAME_PROGRESS);
	assert_int_equal(evbuffer_get_length(r.src), 0);
	run_free(&r);
}

static void
test_oversized_head(void **state)
{
	struct run	 r;
	char		*big;
	size_t		 len = FRAME_HEAD_MAX + 10, i;

	assert_non_null(big = malloc(len));
	memcpy(big, "GET / HTTP/1.1\r\n", 16);
	for (i = 16; i < len; i++)
		big[i] = (i % 80) == 79 ? '\n' : 'a';
	run_init(&r);
	feed(&r, big, len, 4096);
	assert_buf(r.dst, "refused\r\n\r\n");
	assert_int_equal(r.fr.state, FRAME_DISCARD);
	assert_int_equal(evbuffer_get_length(r.src), 0);
	feed(&r, "GET / HTTP/1.1\r\n\r\n", 18, 18);
	assert_buf(r.dst, "refused\r\n\r\n");
	run_free(&r);
	free(big);
}

/* Chunked: evhttp frames the rest of the connection, nothing diverted. */
static void
test_chunked(void **state)
{
	const char	*in = "PUT /v1/sandboxes/s/files?path=a HTTP/1.1\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"
	    "PUT /v1/sandboxes/s/files?path=a HTTP/1.1\r\n"
	    "Content-Length: 2\r\n\r\nhi";
	struct run	 r;

	check(in, in, "", 0);
	run_init(&r);
	feed(&r, in, strlen(in), 5);
	assert_int_equal(r.fr.state, FRAME_PASS);
	run_free(&r);
}

static void
test_lowercase(void **state)
{
	check("PUT /v1/sandboxes/s/files?path=a HTTP/1.1\r\n"
	    "cOnTeNt-LeNgTh:  3 \r\n\r\nxyz",
	    "PUT /v1/sandboxes/s/files?path=a HTTP/1.1\r\n"
	    "Content-Length: 0\r\n" UPLOAD_LENGTH_HEADER ": 3\r\n\r\n", "xyz",
	    1);
}

static void
test_duplicate_length(void **state)
{
	check("PUT /v1/sandboxes/s/files?path=a HTTP/1.1\r\n"
	    "Content-Length: 3\r\ncontent-length: 3\r\n\r\nxyzGET / HTTP/1.1"
	    "\r\n\r\n", "refused\r\n\r\n", "", 0);
	check("PUT /v1/sandboxes/s/files?path=a HTTP/1.1\r\n"
	    "Content-Length: +3\r\n\r\nxyz", "refused\r\n\r\n", "", 0);
}

/* A body on GET or a folded line: evhttp's own framing from there on. */
static void
test_pass(void **state)
{
	const char	*in = "GET /x HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc"
	    "PUT /v1/sandboxes/s/files?path=a HTTP/1.1\r\n"
	    "Content-Length: 2\r\n\r\nhi";

	check(in, in, "", 0);
	in = "PUT /v1/sandboxes/s/files?path=a HTTP/1.1\r\nX: a\r\n b\r\n"
	    "Content-Length: 2\r\n\r\nhi";
	check(in, in, "", 0);
}

/* Whether a diverted head asked for 100 Continue, as evhttp would see it. */
static int
expects(const char *head)
{
	struct run	 r;
	int		 ev, expect;

	run_init(&r);
	assert_int_equal(evbuffer_add(r.src, head, strlen(head)), 0);
	ev = http_frame(&r.fr, r.src, r.dst, SIZE_MAX, r.div, SIZE_MAX);
	assert_true(ev & FRAME_DIVERTED);
	expect = r.fr.expect;
	run_free(&r);
	return expect;
}

static void
test_expect(void **state)
{
	assert_true(expects("PUT /v1/sandboxes/s/files?path=a HTTP/1.1\r\n"
	    "Expect: 100-continue\r\nContent-Length: 3\r\n\r\n"));
	assert_true(expects("PUT /v1/sandboxes/s/files?path=a HTTP/1.1\r\n"
	    "Content-Length: 3\r\nexpect:  100-Continue \r\n\r\n"));
	assert_false(expects("PUT /v1/sandboxes/s/files?path=a HTTP/1.0\r\n"
	    "Expect: 100-continue\r\nContent-Length: 3\r\n\r\n"));
	assert_false(expects("PUT /v1/sandboxes/s/files?path=a HTTP/1.1\r\n"
	    "Expect: 100-continued\r\nContent-Length: 3\r\n\r\n"));
	assert_false(expects("PUT /v1/sandboxes/s/files?path=a HTTP/1.1\r\n"
	    "Content-Length: 3\r\n\r\n"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_normal_unchanged),
		cmocka_unit_test(test_upload_diverted),
		cmocka_unit_test(test_forged_stripped),
		cmocka_unit_test(test_pipelined),
		cmocka_unit_test(test_not_upload),
		cmocka_unit_test(test_backpressure),
		cmocka_unit_test(test_oversized_head),
		cmocka_unit_test(test_chunked),
		cmocka_unit_test(test_lowercase),
		cmocka_unit_test(test_duplicate_length),
		cmocka_unit_test(test_pass),
		cmocka_unit_test(test_expect),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
