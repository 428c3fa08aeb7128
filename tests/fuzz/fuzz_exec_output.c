/*
 * apid's side of an exec's output (apid/exec_output.c): the frame parser,
 * then the NDJSON events of a streaming exec and the capture of a
 * blocking one, as route_exec.c wires them.  Input: a byte choosing the
 * capture's cap and the largest piece, a byte seeding the splits, then
 * what the proxy writes into the pipe.
 *
 * The same bytes fed whole and in pieces must give the same events and
 * the same capture.  Every event is a JSON line; the text of a stream's
 * events, put together, is that stream's bytes decoded at once (the
 * incremental decoder neither loses nor invents a character at a split);
 * the capture keeps the first cap bytes and says so when it cut.
 */
#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "apid.h"
#include "harness.h"

struct result {
	struct stream_events	 se;
	struct capture		 cap;
	struct buf		 lines;		/* every event, in order */
	struct buf		 text[2];	/* event data by stream */
	int			 exits;
};

static int
hex4(const char *p)
{
	int	 v = 0, i;

	/* jsonout writes lower-case hex digits. */
	for (i = 0; i < 4; i++) {
		if (p[i] >= '0' && p[i] <= '9')
			v = v << 4 | (p[i] - '0');
		else {
			CHECK(p[i] >= 'a' && p[i] <= 'f');
			v = v << 4 | (p[i] - 'a' + 10);
		}
	}
	return v;
}

static void
add_cp(struct buf *b, uint32_t cp)
{
	char	 u[4];

	if (cp < 0x80) {
		u[0] = (char)cp;
		buf_add(b, u, 1);
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | cp >> 6);
		u[1] = (char)(0x80 | (cp & 0x3f));
		buf_add(b, u, 2);
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | cp >> 12);
		u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f));
		buf_add(b, u, 3);
	} else {
		u[0] = (char)(0xf0 | cp >> 18);
		u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[3] = (char)(0x80 | (cp & 0x3f));
		buf_add(b, u, 4);
	}
}

/*
 * The JSON string at s (ensure_ascii: escapes only), into b; returns
 * what follows its closing quote.  Decoded here because json-c 0.16 turns
 * some surrogate pairs (U+xD800-U+xDFFF of every plane) into U+FFFD.
 */
static const char *
unescape(const char *s, struct buf *b)
{
	/* An escape's letter, and the byte it stands for. */
	static const char	 escapes[] = "\"\\bfnrt";
	static const char	 bytes[] = "\"\\\b\f\n\r\t";
	const char		*e;
	uint32_t		 cp, lo;

	for (; *s != '"'; s++) {
		CHECK(*s >= 0x20 && *s < 0x7f);
		if (*s != '\\') {
			buf_add(b, s, 1);
			continue;
		}
		if ((e = strchr(escapes, *++s)) != NULL && *s != '\0') {
			buf_add(b, &bytes[e - escapes], 1);
			continue;
		}
		CHECK(*s == 'u');
		cp = (uint32_t)hex4(s + 1);
		s += 4;
		if (cp >= 0xd800 && cp <= 0xdbff) {
			CHECK(s[1] == '\\' && s[2] == 'u');
			lo = (uint32_t)hex4(s + 3);
			CHECK(lo >= 0xdc00 && lo <= 0xdfff);
			cp = 0x10000 + ((cp - 0xd800) << 10 | (lo - 0xdc00));
			s += 6;
		} else
			CHECK(cp < 0xdc00 || cp > 0xdfff);
		add_cp(b, cp);
	}
	return s + 1;
}

/* One event line: JSON, valid UTF-8, of the shape jsonout writes. */
static void
event(struct result *r, const char *line, size_t len)
{
	static const char	 out[] = "{\"type\": \"stdout\", \"data\": \"";
	static const char	 err[] = "{\"type\": \"stderr\", \"data\": \"";
	static const char	 ex[] = "{\"type\": \"exit\", ";
	json_object		*o;
	struct buf		*text;
	size_t			 before;

	CHECK(len > 0 && line[len - 1] == '\n');
	CHECK(memchr(line, '\n', len - 1) == NULL);
	CHECK(utf8_valid(line, len));
	CHECK((o = json_tokener_parse(line)) != NULL);
	json_object_put(o);
	if (strncmp(line, ex, sizeof(ex) - 1) == 0) {
		r->exits++;
		return;
	}
	CHECK(r->exits == 0);
	if (strncmp(line, out, sizeof(out) - 1) == 0)
		text = &r->text[EXEC_STDOUT];
	else {
		CHECK(strncmp(line, err, sizeof(err) - 1) == 0);
		text = &r->text[EXEC_STDERR];
	}
	before = text->len;
	CHECK(strcmp(unescape(line + sizeof(out) - 1, text), "}\n") == 0);
	CHECK(text->len > before);
}

static int
emit(void *arg, struct evbuffer *line)
{
	struct result	*r = arg;
	size_t		 len = evbuffer_get_length(line);
	char		*p;

	CHECK(len <= 6 * STREAM_EVENT_MAX + 64);
	CHECK((p = malloc(len + 1)) != NULL);
	CHECK(evbuffer_remove(line, p, len) == (int)len);
	p[len] = '\0';
	buf_add(&r->lines, p, len);
	event(r, p, len);
	free(p);
	return 0;
}

/* route_exec.c's exec_frame, for both kinds of exec at once. */
static int
frame(void *arg, int stream, const unsigned char *data, size_t len, int end)
{
	struct result	*r = arg;
	int		 which;

	if (stream == FRAME_STDOUT)
		which = EXEC_STDOUT;
	else if (stream == FRAME_STDERR)
		which = EXEC_STDERR;
	else
		return 0;
	CHECK(capture_add(&r->cap, which, data, len) == 0);
	return stream_events_add(&r->se, which, data, len, end);
}

static void
run(const uint8_t *data, size_t len, uint64_t cap, struct splitter *sp,
    struct result *r)
{
	struct frame_parser	 fp;
	size_t			 n;

	memset(r, 0, sizeof(*r));
	CHECK(stream_events_init(&r->se, emit, r) == 0);
	capture_init(&r->cap, cap);
	frame_parser_init(&fp);
	buf_add(&r->lines, "", 0);
	buf_add(&r->text[0], "", 0);
	buf_add(&r->text[1], "", 0);
	while (len > 0) {
		n = sp != NULL ? splitter_next(sp, len) : len;
		CHECK(frame_parser_feed(&fp, data, n, frame, r) == 0);
		data += n;
		len -= n;
	}
	CHECK(stream_events_flush(&r->se, EXEC_STDOUT) == 0);
	CHECK(stream_events_flush(&r->se, EXEC_STDERR) == 0);
	CHECK(stream_events_exit(&r->se, 0, 0, 0) == 0);
	CHECK(r->exits == 1);
}

static void
result_free(struct result *r)
{
	stream_events_free(&r->se);
	capture_free(&r->cap);
	buf_free(&r->lines);
	buf_free(&r->text[0]);
	buf_free(&r->text[1]);
}

/* Each stream's payload, as frame_parser_feed hands it out. */
static void
naive(const uint8_t *d, size_t len, struct buf raw[2])
{
	uint32_t	 n;

	while (len >= 8) {
		n = (uint32_t)d[4] << 24 | (uint32_t)d[5] << 16 |
		    (uint32_t)d[6] << 8 | d[7];
		if (n > len - 8)
			n = (uint32_t)(len - 8);
		if (d[0] == FRAME_STDOUT || d[0] == FRAME_STDERR)
			buf_add(&raw[d[0] == FRAME_STDERR], d + 8, n);
		d += 8 + n;
		len -= 8 + n;
	}
}

static void
check_decoded(const struct buf *raw, const struct buf *text)
{
	struct utf8_decoder	 d;
	struct buf		 want = { NULL, 0, 0 };

	CHECK((want.p = malloc(UTF8_DECODE_BOUND(raw->len))) != NULL);
	utf8_decoder_init(&d);
	want.len = utf8_decode(&d, raw->p, raw->len, 1, want.p);
	CHECK(buf_equal(&want, text));
	buf_free(&want);
}

/* The capture: the first cap bytes in arrival order, each stream's own. */
static void
check_capture(const struct capture *c, const struct buf raw[2],
    uint64_t cap)
{
	uint64_t	 total = raw[0].len + raw[1].len;
	char		*text;
	size_t		 tlen;
	int		 i;

	CHECK(c->kept == (total < cap ? total : cap));
	CHECK(c->truncated == (total > cap));
	for (i = 0; i < 2; i++) {
		CHECK(c->stream[i].len <= raw[i].len);
		CHECK(c->stream[i].len == 0 || memcmp(c->stream[i].data,
		    raw[i].p, c->stream[i].len) == 0);
		CHECK((text = capture_decode(c, i, &tlen)) != NULL);
		CHECK(utf8_valid(text, tlen));
		free(text);
	}
	CHECK(c->stream[0].len + c->stream[1].len == c->kept);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	static const uint64_t	 caps[] = { 0, 1, 3, 100, 4096, 70000,
	    UINT64_MAX, UINT64_MAX };
	struct result		 whole, split;
	struct buf		 raw[2] = { { NULL, 0, 0 }, { NULL, 0, 0 } };
	struct splitter		 sp;
	uint64_t		 cap;

	if (len < 2)
		return 0;
	cap = caps[data[0] & 7];
	splitter_init(&sp, data[1], 1 + (data[0] >> 3));
	data += 2;
	len -= 2;
	run(data, len, cap, NULL, &whole);
	run(data, len, cap, &sp, &split);
	CHECK(buf_equal(&whole.lines, &split.lines));

	buf_add(&raw[0], "", 0);
	buf_add(&raw[1], "", 0);
	naive(data, len, raw);
	check_decoded(&raw[0], &whole.text[0]);
	check_decoded(&raw[1], &whole.text[1]);
	check_capture(&whole.cap, raw, cap);
	check_capture(&split.cap, raw, cap);
	result_free(&whole);
	result_free(&split);
	buf_free(&raw[0]);
	buf_free(&raw[1]);
	return 0;
}
