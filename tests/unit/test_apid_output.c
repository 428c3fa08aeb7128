/*
 * Tests for apid's output path: the JSON text writers against
 * json.dumps(), the capture cap of API.md §5.3, the frame parser and the
 * NDJSON events of §3.6 (the UTF-8 decoder under them is common/utf8.c,
 * tested in test_utf8.c).  Expected values were computed with CPython
 * 3.11 and are hard-coded.
 */
#include <sys/queue.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "apid.h"

struct enc_case {
	const char	*in;
	size_t		 inlen;
	const char	*want;
};

static const struct enc_case ndjson_cases[] = {
	{ "45\012", 3, "{\"type\": \"stdout\", \"data\": \"45\\n\"}\012" },
	{ "\303\251", 2, "{\"type\": \"stdout\", \"data\": \"\\u00e9\"}\012" },
	{ "\360\237\230\200", 4, "{\"type\": \"stdout\", \"data\": \"\\ud83d\\ude00\"}\012" },
	{ "a\000b\001\037\177z", 7, "{\"type\": \"stdout\", \"data\": \"a\\u0000b\\u0001\\u001f\\u007fz\"}\012" },
	{ "q\"b\\s", 5, "{\"type\": \"stdout\", \"data\": \"q\\\"b\\\\s\"}\012" },
	{ "\010\014\011\015\012", 5, "{\"type\": \"stdout\", \"data\": \"\\b\\f\\t\\r\\n\"}\012" },
	{ "\357\277\275", 3, "{\"type\": \"stdout\", \"data\": \"\\ufffd\"}\012" },
	{ "\342\200\250\342\200\251", 6, "{\"type\": \"stdout\", \"data\": \"\\u2028\\u2029\"}\012" },
	{ "\342\202\254 and \360\235\204\236 and \302\251", 19, "{\"type\": \"stdout\", \"data\": \"\\u20ac and \\ud834\\udd1e and \\u00a9\"}\012" },
	{ "/slash", 6, "{\"type\": \"stdout\", \"data\": \"/slash\"}\012" },
	{ "\303\234n\303\257c\303\266d\303\251\364\217\277\277", 15, "{\"type\": \"stdout\", \"data\": \"\\u00dcn\\u00efc\\u00f6d\\u00e9\\udbff\\udfff\"}\012" },
};
static const struct enc_case compact_cases[] = {
	{ "45\012", 3, "\"45\\n\"" },
	{ "\303\251", 2, "\"\303\251\"" },
	{ "\360\237\230\200", 4, "\"\360\237\230\200\"" },
	{ "a\000b\001\037\177z", 7, "\"a\\u0000b\\u0001\\u001f\177z\"" },
	{ "q\"b\\s", 5, "\"q\\\"b\\\\s\"" },
	{ "\010\014\011\015\012", 5, "\"\\b\\f\\t\\r\\n\"" },
	{ "\357\277\275", 3, "\"\357\277\275\"" },
	{ "\342\200\250\342\200\251", 6, "\"\342\200\250\342\200\251\"" },
	{ "\342\202\254 and \360\235\204\236 and \302\251", 19, "\"\342\202\254 and \360\235\204\236 and \302\251\"" },
	{ "/slash", 6, "\"/slash\"" },
	{ "\303\234n\303\257c\303\266d\303\251\364\217\277\277", 15, "\"\303\234n\303\257c\303\266d\303\251\364\217\277\277\"" },
};
#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

static char *
buffer_text(struct evbuffer *b)
{
	size_t	 len = evbuffer_get_length(b);
	char	*s = malloc(len + 1);

	assert_non_null(s);
	evbuffer_remove(b, s, len);
	s[len] = '\0';
	return s;
}

static void
test_ndjson_event(void **state)
{
	struct evbuffer	*b = evbuffer_new();
	char		*s;
	size_t		 i;

	for (i = 0; i < NELEM(ndjson_cases); i++) {
		assert_int_equal(jsonout_stream_event(b, "stdout",
		    ndjson_cases[i].in, ndjson_cases[i].inlen), 0);
		s = buffer_text(b);
		assert_string_equal(s, ndjson_cases[i].want);
		free(s);
	}
	assert_int_equal(jsonout_stream_event(b, "stderr", "boom\n", 5), 0);
	s = buffer_text(b);
	assert_string_equal(s,
	    "{\"type\": \"stderr\", \"data\": \"boom\\n\"}\n");
	free(s);
	evbuffer_free(b);
}

static void
test_ndjson_exit(void **state)
{
	struct evbuffer	*b = evbuffer_new();
	char		*s;

	assert_int_equal(jsonout_stream_exit(b, 4, 0, 12), 0);
	s = buffer_text(b);
	assert_string_equal(s, "{\"type\": \"exit\", \"exit_code\": 4, "
	    "\"timed_out\": false, \"duration_ms\": 12}\n");
	free(s);
	assert_int_equal(jsonout_stream_exit(b, -1, 1, 0), 0);
	s = buffer_text(b);
	assert_string_equal(s, "{\"type\": \"exit\", \"exit_code\": -1, "
	    "\"timed_out\": true, \"duration_ms\": 0}\n");
	free(s);
	evbuffer_free(b);
}

/* json.dumps(s, ensure_ascii=False, separators=(",", ":")) */
static void
test_compact_string(void **state)
{
	struct evbuffer	*b = evbuffer_new();
	char		*s;
	size_t		 i;

	for (i = 0; i < NELEM(compact_cases); i++) {
		assert_int_equal(jsonout_string(b, compact_cases[i].in,
		    compact_cases[i].inlen, 0), 0);
		s = buffer_text(b);
		assert_string_equal(s, compact_cases[i].want);
		free(s);
	}
	evbuffer_free(b);
}

static void
test_exec_result(void **state)
{
	struct evbuffer	*b = evbuffer_new();
	char		*s;

	assert_int_equal(jsonout_exec_result(b, "hi\n", 3, "\303\251\"", 3,
	    0, 0, 1, 7), 0);
	s = buffer_text(b);
	assert_string_equal(s, "{\"stdout\":\"hi\\n\",\"stderr\":\"\303\251\\\""
	    "\",\"exit_code\":0,\"timed_out\":false,\"truncated\":true,"
	    "\"duration_ms\":7}");
	free(s);
	evbuffer_free(b);
}

static void
fill(char *p, char c, size_t n)
{
	memset(p, c, n);
}

/* API.md §5.3's test: cap 100, 80 bytes of stdout then 80 of stderr. */
static void
test_cap_80_80(void **state)
{
	struct capture	 c;
	char		 x[80], y[80];

	fill(x, 'x', sizeof(x));
	fill(y, 'y', sizeof(y));
	capture_init(&c, 100);
	assert_int_equal(capture_add(&c, EXEC_STDOUT, x, sizeof(x)), 0);
	assert_int_equal(c.truncated, 0);
	assert_int_equal(capture_add(&c, EXEC_STDERR, y, sizeof(y)), 0);
	assert_int_equal(c.truncated, 1);
	assert_int_equal(c.stream[EXEC_STDOUT].len, 80);
	assert_int_equal(c.stream[EXEC_STDERR].len, 20);
	assert_int_equal(c.kept, 100);
	assert_memory_equal(c.stream[EXEC_STDERR].data, y, 20);
	capture_free(&c);
}

/* Exactly the cap is not truncated; any further non-empty chunk is. */
static void
test_cap_exact(void **state)
{
	struct capture	 c;
	char		 x[100];

	fill(x, 'x', sizeof(x));
	capture_init(&c, 100);
	assert_int_equal(capture_add(&c, EXEC_STDOUT, x, 60), 0);
	assert_int_equal(capture_add(&c, EXEC_STDERR, x, 40), 0);
	assert_int_equal(c.truncated, 0);
	assert_int_equal(capture_add(&c, EXEC_STDOUT, x, 0), 0);
	assert_int_equal(c.truncated, 0);
	assert_int_equal(capture_add(&c, EXEC_STDERR, x, 1), 0);
	assert_int_equal(c.truncated, 1);
	assert_int_equal(c.stream[EXEC_STDOUT].len, 60);
	assert_int_equal(c.stream[EXEC_STDERR].len, 40);
	capture_free(&c);
}

/* A cut through a multi-byte character decodes to U+FFFD at the end. */
static void
test_cap_cut_character(void **state)
{
	struct capture	 c;
	char		*out;
	size_t		 len;

	capture_init(&c, 4);
	assert_int_equal(capture_add(&c, EXEC_STDOUT, "ab\303\251", 4), 0);
	assert_int_equal(capture_add(&c, EXEC_STDOUT, "\342\202\254", 3), 0);
	assert_int_equal(c.truncated, 1);
	capture_free(&c);
	capture_init(&c, 3);
	assert_int_equal(capture_add(&c, EXEC_STDOUT, "ab\303\251", 4), 0);
	out = capture_decode(&c, EXEC_STDOUT, &len);
	assert_non_null(out);
	assert_int_equal(len, 5);
	assert_memory_equal(out, "ab\357\277\275", 5);
	free(out);
	out = capture_decode(&c, EXEC_STDERR, &len);
	assert_non_null(out);
	assert_int_equal(len, 0);
	free(out);
	capture_free(&c);
}

struct got_frame {
	int	 stream;
	char	 data[64];
	size_t	 len;
	int	 ends;
};

static int
collect_frame(void *arg, int stream, const unsigned char *p, size_t len,
    int end)
{
	struct got_frame	*g = arg;

	g->stream = stream;
	if (len > 0)		/* an end comes with no bytes, p NULL */
		memcpy(g->data + g->len, p, len);
	g->len += len;
	g->ends += end;
	return 0;
}

static const unsigned char frames[] = {
	1, 0, 0, 0, 0, 0, 0, 3, 'o', 'u', 't',
	2, 0, 0, 0, 0, 0, 0, 0,
	2, 0, 0, 0, 0, 0, 0, 4, 'e', 'r', 'r', '!',
};

/* Frames fed in every possible two pieces give the same payloads. */
static void
test_frame_parser(void **state)
{
	struct frame_parser	 fp;
	struct got_frame	 g;
	size_t			 cut;

	for (cut = 0; cut <= sizeof(frames); cut++) {
		memset(&g, 0, sizeof(g));
		frame_parser_init(&fp);
		assert_int_equal(frame_parser_feed(&fp, frames, cut,
		    collect_frame, &g), 0);
		assert_int_equal(frame_parser_feed(&fp, frames + cut,
		    sizeof(frames) - cut, collect_frame, &g), 0);
		assert_int_equal(g.ends, 3);
		assert_int_equal(g.len, 7);
		assert_memory_equal(g.data, "outerr!", 7);
		assert_int_equal(g.stream, 2);
		assert_int_equal(fp.hlen, 0);
		assert_int_equal(fp.left, 0);
	}
}

/* A big-endian length above 16 bits. */
static void
test_frame_length(void **state)
{
	static const unsigned char hdr[] = { 1, 0, 0, 0, 0, 1, 0, 2 };
	struct frame_parser	 fp;

	frame_parser_init(&fp);
	assert_int_equal(frame_parser_feed(&fp, hdr, sizeof(hdr), NULL, NULL),
	    0);
	assert_int_equal(fp.left, 65538);
	assert_int_equal(fp.stream, 1);
}

static int
collect_line(void *arg, struct evbuffer *line)
{
	struct evbuffer	*all = arg;

	/* Each event arrives alone, ending in one newline. */
	assert_int_equal(evbuffer_search_eol(line, NULL, NULL,
	    EVBUFFER_EOL_LF).pos, (ev_ssize_t)evbuffer_get_length(line) - 1);
	evbuffer_add_buffer(all, line);
	return 0;
}

static char *
events_run(const char *const *chunks, const int *which, size_t n,
    int64_t code)
{
	struct stream_events	*se = malloc(sizeof(*se));
	struct evbuffer		*all = evbuffer_new();
	char			*s;
	size_t			 i;

	assert_non_null(se);
	assert_int_equal(stream_events_init(se, collect_line, all), 0);
	for (i = 0; i < n; i++)
		assert_int_equal(stream_events_add(se, which[i], chunks[i],
		    strlen(chunks[i]), 1), 0);
	assert_int_equal(stream_events_flush(se, EXEC_STDOUT), 0);
	assert_int_equal(stream_events_flush(se, EXEC_STDERR), 0);
	assert_int_equal(stream_events_exit(se, code, 0, 5), 0);
	stream_events_free(se);
	free(se);
	s = buffer_text(all);
	evbuffer_free(all);
	return s;
}

/* REFERENCE-TESTS 12: "é" in two one-byte chunks comes out joined. */
static void
test_events_split_char(void **state)
{
	static const char *const chunks[] = { "\303", "\251" };
	static const int which[] = { EXEC_STDOUT, EXEC_STDOUT };
	char	*s;

	s = events_run(chunks, which, 2, 0);
	assert_string_equal(s,
	    "{\"type\": \"stdout\", \"data\": \"\\u00e9\"}\n"
	    "{\"type\": \"exit\", \"exit_code\": 0, \"timed_out\": false, "
	    "\"duration_ms\": 5}\n");
	free(s);
}

/* Interleaved streams keep their order; each has its own decoder. */
static void
test_events_interleaved(void **state)
{
	static const char *const chunks[] = { "a\342\202", "boom\n", "\254",
	    "\360\237" };
	static const int which[] = { EXEC_STDOUT, EXEC_STDERR, EXEC_STDOUT,
	    EXEC_STDERR };
	char	*s;

	s = events_run(chunks, which, 4, 4);
	assert_string_equal(s,
	    "{\"type\": \"stdout\", \"data\": \"a\"}\n"
	    "{\"type\": \"stderr\", \"data\": \"boom\\n\"}\n"
	    "{\"type\": \"stdout\", \"data\": \"\\u20ac\"}\n"
	    "{\"type\": \"stderr\", \"data\": \"\\ufffd\"}\n"
	    "{\"type\": \"exit\", \"exit_code\": 4, \"timed_out\": false, "
	    "\"duration_ms\": 5}\n");
	free(s);
}

/* Dangling bytes on both streams: stdout's flush comes first. */
static void
test_events_flush_order(void **state)
{
	static const char *const chunks[] = { "x\303", "\342" };
	static const int which[] = { EXEC_STDERR, EXEC_STDOUT };
	char	*s;

	s = events_run(chunks, which, 2, 1);
	assert_string_equal(s,
	    "{\"type\": \"stderr\", \"data\": \"x\"}\n"
	    "{\"type\": \"stdout\", \"data\": \"\\ufffd\"}\n"
	    "{\"type\": \"stderr\", \"data\": \"\\ufffd\"}\n"
	    "{\"type\": \"exit\", \"exit_code\": 1, \"timed_out\": false, "
	    "\"duration_ms\": 5}\n");
	free(s);
}

/* A frame delivered in pieces is still one event. */
static void
test_events_one_per_frame(void **state)
{
	struct stream_events	*se = malloc(sizeof(*se));
	struct evbuffer		*all = evbuffer_new();
	char			*s;

	assert_non_null(se);
	assert_int_equal(stream_events_init(se, collect_line, all), 0);
	assert_int_equal(stream_events_add(se, EXEC_STDOUT, "12", 2, 0), 0);
	assert_int_equal(evbuffer_get_length(all), 0);
	assert_int_equal(stream_events_add(se, EXEC_STDOUT, "34", 2, 1), 0);
	assert_int_equal(stream_events_add(se, EXEC_STDOUT, "", 0, 1), 0);
	stream_events_free(se);
	free(se);
	s = buffer_text(all);
	assert_string_equal(s, "{\"type\": \"stdout\", \"data\": \"1234\"}\n");
	free(s);
	evbuffer_free(all);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ndjson_event),
		cmocka_unit_test(test_ndjson_exit),
		cmocka_unit_test(test_compact_string),
		cmocka_unit_test(test_exec_result),
		cmocka_unit_test(test_cap_80_80),
		cmocka_unit_test(test_cap_exact),
		cmocka_unit_test(test_cap_cut_character),
		cmocka_unit_test(test_frame_parser),
		cmocka_unit_test(test_frame_length),
		cmocka_unit_test(test_events_split_char),
		cmocka_unit_test(test_events_interleaved),
		cmocka_unit_test(test_events_flush_order),
		cmocka_unit_test(test_events_one_per_frame),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
