/*
 * Tests for dockerd-proxy/docker_frames.c: Docker's multiplexed stream in,
 * whole frames out, and the PID taken from the first stdout line.  Every
 * input is fed whole, a byte at a time, split at every point and in random
 * pieces; the output must not depend on how it was cut.  A tty's raw
 * stream has no frames to keep: there the bytes must not depend on it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proxy.h"

/* What the parser emitted, re-framed as the proxy writes it to the pipe. */
struct sink {
	unsigned char	*data;
	size_t		 len, cap;
	size_t		 frames;
	unsigned char	*text;		/* the payloads alone */
	size_t		 text_len, text_cap;
	int		 streams;	/* FRAME_STDOUT | FRAME_STDERR seen */
};

/*
 * Room for more at *p: doubling, since the splits emit a byte at a
 * time, and valgrind's realloc always moves (growing by what each emit
 * adds took minutes under memcheck).
 */
static void
sink_room(unsigned char **p, size_t *cap, size_t need)
{
	size_t	 n = *cap > 0 ? *cap : 256;

	if (need <= *cap)
		return;
	while (n < need)
		n *= 2;
	*p = realloc(*p, n);
	assert_non_null(*p);
	*cap = n;
}

static void
sink_emit(void *arg, int stream, const unsigned char *data, size_t len)
{
	struct sink	*s = arg;

	assert_true(stream == FRAME_STDOUT || stream == FRAME_STDERR);
	assert_true(len > 0 && len <= FRAME_MAX_PAYLOAD);
	sink_room(&s->data, &s->cap, s->len + FRAME_HEADER_LEN + len);
	frame_header(s->data + s->len, stream, (uint32_t)len);
	memcpy(s->data + s->len + FRAME_HEADER_LEN, data, len);
	s->len += FRAME_HEADER_LEN + len;
	s->frames++;
	sink_room(&s->text, &s->text_cap, s->text_len + len);
	memcpy(s->text + s->text_len, data, len);
	s->text_len += len;
	s->streams |= stream;
}

static void
sink_free(struct sink *s)
{
	free(s->data);
	free(s->text);
}

/* run() makes a tty's parser instead. */
static int	 tty_stream;

/* Build a Docker stream: pairs of (stream, text), ended by 0. */
static size_t
stream_build(unsigned char *out, ...)
{
	va_list		 ap;
	const char	*text;
	size_t		 n = 0, len;
	int		 stream;

	va_start(ap, out);
	while ((stream = va_arg(ap, int)) != 0) {
		text = va_arg(ap, const char *);
		len = strlen(text);
		frame_header(out + n, stream, (uint32_t)len);
		memcpy(out + n + FRAME_HEADER_LEN, text, len);
		n += FRAME_HEADER_LEN + len;
	}
	va_end(ap);
	return n;
}

struct result {
	struct sink	 sink;
	long long	 pid;
	int		 feed_error;
	int		 finish_error;
};

/*
 * Feed input in pieces whose sizes come from cut(i): 0 means whole,
 * 1 a byte at a time, else a seeded random split.
 */
static void
run(const unsigned char *in, size_t len, int want_pid, int mode,
    unsigned int seed, struct result *r)
{
	struct frame_parser	*fp;
	size_t			 off = 0, n;

	memset(r, 0, sizeof(*r));
	fp = malloc(sizeof(*fp));
	assert_non_null(fp);
	if (tty_stream)
		frame_parser_init_tty(fp, want_pid);
	else
		frame_parser_init(fp, want_pid);
	srandom(seed);
	while (off < len) {
		if (mode == 0)
			n = len - off;
		else if (mode == 1)
			n = 1;
		else if (mode == 2)
			n = (size_t)seed < len - off ? (size_t)seed : len - off;
		else
			n = 1 + (size_t)random() % 20000;
		if (n > len - off)
			n = len - off;
		if (frame_parser_feed(fp, in + off, n, sink_emit, &r->sink) ==
		    -1) {
			r->feed_error = 1;
			break;
		}
		off += n;
	}
	r->finish_error = frame_parser_finish(fp, sink_emit, &r->sink);
	r->pid = fp->pid;
	free(fp);
}

/* Every way of cutting the input gives the same result as whole. */
static void
check_all_splits(const unsigned char *in, size_t len, int want_pid,
    const unsigned char *want, size_t want_len, long long want_pid_value,
    int want_error)
{
	struct result	 r;
	unsigned int	 i;

	for (i = 0; i < 2 + (len < 200 ? len : 200) + 50; i++) {
		if (i < 2)
			run(in, len, want_pid, i, 0, &r);
		else if (i < 2 + (len < 200 ? len : 200))
			run(in, len, want_pid, 2, i - 1, &r);
		else
			run(in, len, want_pid, 3, i, &r);
		if (r.feed_error != (want_error == 1) ||
		    r.finish_error != (want_error != 0 ? -1 : 0))
			fail_msg("split %u: errors %d %d", i, r.feed_error,
			    r.finish_error);
		assert_int_equal(r.pid, want_pid_value);
		if (want_error == 1) {
			sink_free(&r.sink);
			continue;
		}
		if (r.sink.len != want_len ||
		    (want_len > 0 && memcmp(r.sink.data, want, want_len) != 0))
			fail_msg("split %u: output differs (%zu bytes, want "
			    "%zu)", i, r.sink.len, want_len);
		sink_free(&r.sink);
	}
}

/* The same for a tty: the bytes, all stdout, whatever the splits. */
static void
check_tty_splits(const void *in, size_t len, const void *want,
    size_t want_len, long long want_pid_value)
{
	struct result	 r;
	unsigned int	 i, cuts = len < 200 ? (unsigned int)len : 200;

	tty_stream = 1;
	for (i = 0; i < 2 + cuts + 50; i++) {
		if (i < 2)
			run(in, len, 1, i, 0, &r);
		else if (i < 2 + cuts)
			run(in, len, 1, 2, i - 1, &r);
		else
			run(in, len, 1, 3, i, &r);
		if (r.feed_error || r.finish_error)
			fail_msg("split %u: errors %d %d", i, r.feed_error,
			    r.finish_error);
		assert_int_equal(r.pid, want_pid_value);
		if (r.sink.text_len != want_len || (want_len > 0 &&
		    memcmp(r.sink.text, want, want_len) != 0))
			fail_msg("split %u: output differs (%zu bytes, want "
			    "%zu)", i, r.sink.text_len, want_len);
		if (r.sink.streams & FRAME_STDERR)
			fail_msg("split %u: a tty has no stderr", i);
		sink_free(&r.sink);
	}
	tty_stream = 0;
}

static void
test_plain_frames(void **state)
{
	unsigned char	 in[256], want[256];
	size_t		 len, wlen;

	len = stream_build(in, 1, "hello\n", 2, "oops\n", 1, "x", 0);
	/* Without a PID wanted, the stream comes out as it went in. */
	check_all_splits(in, len, 0, in, len, -1, 0);
	len = stream_build(in, 1, "1234\n", 1, "hello\n", 2, "err\n", 0);
	wlen = stream_build(want, 1, "hello\n", 2, "err\n", 0);
	check_all_splits(in, len, 1, want, wlen, 1234, 0);
}

static void
test_pid_line(void **state)
{
	unsigned char	 in[256], want[256];
	size_t		 len, wlen;

	/* The PID and output in one frame: the rest stays one frame. */
	len = stream_build(in, 1, "42\nfirst line\nsecond\n", 0);
	wlen = stream_build(want, 1, "first line\nsecond\n", 0);
	check_all_splits(in, len, 1, want, wlen, 42, 0);
	/* Stderr before the PID passes through. */
	len = stream_build(in, 2, "warning\n", 1, "777\n", 1, "out", 0);
	wlen = stream_build(want, 2, "warning\n", 1, "out", 0);
	check_all_splits(in, len, 1, want, wlen, 777, 0);
	/* The line split over frames. */
	len = stream_build(in, 1, "12", 1, "34", 1, "5\nx", 0);
	wlen = stream_build(want, 1, "x", 0);
	check_all_splits(in, len, 1, want, wlen, 12345, 0);
	/* Only the first line counts. */
	len = stream_build(in, 1, "10\n", 1, "20\n", 0);
	wlen = stream_build(want, 1, "20\n", 0);
	check_all_splits(in, len, 1, want, wlen, 10, 0);
	/* Twelve digits is the limit... and past PID_MAX it is no PID. */
	len = stream_build(in, 1, "4194304\n", 0);
	check_all_splits(in, len, 1, (const unsigned char *)"", 0, 4194304,
	    0);
}

/* Anything but a PID line is output, kept whole and in order. */
static void
test_not_a_pid(void **state)
{
	static const char *const	 texts[] = {
		"OCI runtime exec failed: no such file\r\n",
		"12a\n",
		"\n",
		"-5\n",
		"0\n",
		"1\n",
		"4194305\n",
		"1234567890123\n",
		"123456789012\n",
		" 12\n",
		"12\r\n",
	};
	unsigned char			 in[256];
	size_t				 i, len;

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		len = stream_build(in, 1, texts[i], 0);
		check_all_splits(in, len, 1, in, len, -1, 0);
	}
	/* Digits and then the end: output too. */
	len = stream_build(in, 1, "123", 0);
	check_all_splits(in, len, 1, in, len, -1, 0);
	/* No stdout at all. */
	len = stream_build(in, 2, "only stderr", 0);
	check_all_splits(in, len, 1, in, len, -1, 0);
	check_all_splits(in, 0, 1, in, 0, -1, 0);
}

static void
test_big_frames(void **state)
{
	unsigned char	*in, *want;
	size_t		 big = 3 * FRAME_MAX_PAYLOAD + 100, len, off, n;

	/* One Docker frame longer than ours: cut at FRAME_MAX_PAYLOAD. */
	in = malloc(big + 64);
	want = malloc(big + 64);
	assert_non_null(in);
	assert_non_null(want);
	frame_header(in, 1, 6);
	memcpy(in + 8, "31337\n", 6);
	frame_header(in + 14, 2, (uint32_t)big);
	for (off = 0; off < big; off++)
		in[22 + off] = (unsigned char)(off * 7);
	len = 22 + big;
	for (off = 0, n = 0; off < big; off += FRAME_MAX_PAYLOAD) {
		size_t	 piece = big - off < FRAME_MAX_PAYLOAD ? big - off :
		    FRAME_MAX_PAYLOAD;

		frame_header(want + n, 2, (uint32_t)piece);
		memcpy(want + n + 8, in + 22 + off, piece);
		n += 8 + piece;
	}
	check_all_splits(in, len, 1, want, n, 31337, 0);
	free(in);
	free(want);
}

static void
test_malformed(void **state)
{
	unsigned char	 in[64];
	size_t		 len;

	/* Stream 0 (stdin), 3 (Docker's own errors), non-zero padding. */
	len = stream_build(in, 1, "5\n", 0);
	memcpy(in + len, "\x00\x00\x00\x00\x00\x00\x00\x01x", 9);
	check_all_splits(in, len + 9, 1, NULL, 0, 5, 1);
	memcpy(in + len, "\x03\x00\x00\x00\x00\x00\x00\x01x", 9);
	check_all_splits(in, len + 9, 1, NULL, 0, 5, 1);
	memcpy(in + len, "\x01\x00\x01\x00\x00\x00\x00\x01x", 9);
	check_all_splits(in, len + 9, 1, NULL, 0, 5, 1);
	memcpy(in, "HTTP/1.1 200 OK\r\n", 17);
	check_all_splits(in, 17, 1, NULL, 0, -1, 1);
}

static void
test_truncated(void **state)
{
	unsigned char	 in[64], want[64];
	size_t		 len, wlen;

	memset(in, 0, sizeof(in));
	/* The stream ends inside a frame: what came is kept, and flagged. */
	len = stream_build(in, 1, "9\n", 1, "abcdef", 0);
	wlen = stream_build(want, 1, "abc", 0);
	check_all_splits(in, len - 3, 1, want, wlen, 9, 2);
	/* Inside a header. */
	len = stream_build(in, 1, "9\n", 1, "ab", 0);
	wlen = stream_build(want, 1, "ab", 0);
	check_all_splits(in, len + 3, 1, want, wlen, 9, 2);
}

/* A pty turns the wrapper's "PID\n" into "PID\r\n"; no frames at all. */
static void
test_tty_pid_line(void **state)
{
	check_tty_splits("4242\r\n$ hello\r\n", 15, "$ hello\r\n", 9, 4242);
	/* A tty without onlcr: the bare newline is fine too. */
	check_tty_splits("77\nout", 6, "out", 3, 77);
	/* Only the first line counts, and its end only once. */
	check_tty_splits("10\r\n20\r\n", 8, "20\r\n", 4, 10);
	/* What would be a frame header is output like any other bytes. */
	check_tty_splits("5\r\n\001\000\000\000\000\000\000\001x", 12,
	    "\001\000\000\000\000\000\000\001x", 9, 5);
	check_tty_splits("", 0, "", 0, -1);
}

/* Not a PID line: output, the held '\r' included and in its place. */
static void
test_tty_not_a_pid(void **state)
{
	static const char *const	 texts[] = {
		"12\r\r\n",
		"12\rx\n",
		"\r\n",
		"12\r",
		"123",
		"1\r\n",
		"12 \r\n",
		"OCI runtime exec failed: no such file\r\n",
		"4194305\r\n",
	};
	size_t				 i;

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		check_tty_splits(texts[i], strlen(texts[i]), texts[i],
		    strlen(texts[i]), -1);
	/* Without a tty, the '\r' is not a line end's. */
	tty_stream = 0;
}

/* Long raw output: pieces of at most FRAME_MAX_PAYLOAD, every byte kept. */
static void
test_tty_big(void **state)
{
	unsigned char	*in;
	size_t		 big = 3 * FRAME_MAX_PAYLOAD + 100, off;

	in = malloc(big + 6);
	assert_non_null(in);
	memcpy(in, "999\r\n", 5);
	for (off = 0; off < big; off++)
		in[5 + off] = (unsigned char)(off * 13);
	check_tty_splits(in, big + 5, in + 5, big, 999);
	free(in);
}

static void
test_header(void **state)
{
	unsigned char	 h[FRAME_HEADER_LEN];

	frame_header(h, 2, 0x01020304);
	assert_memory_equal(h, "\x02\x00\x00\x00\x01\x02\x03\x04", 8);
	frame_header(h, 1, 32768);
	assert_memory_equal(h, "\x01\x00\x00\x00\x00\x00\x80\x00", 8);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_frames),
		cmocka_unit_test(test_pid_line),
		cmocka_unit_test(test_not_a_pid),
		cmocka_unit_test(test_big_frames),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_tty_pid_line),
		cmocka_unit_test(test_tty_not_a_pid),
		cmocka_unit_test(test_tty_big),
		cmocka_unit_test(test_header),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
