/*
 * Tests for common/metrics.c and common/metrics_msg.c: the text format
 * (HELP and TYPE once per family, label values escaped, whatever bytes
 * they hold; cumulative buckets, +Inf, _sum, _count), the bounds on
 * series and values, the check a receiver makes of a peer's text, the
 * codecs and the split into messages, and the resident set from
 * /proc/self/statm.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "metrics.h"
#include "metrics_msg.h"

/* The rendering of one family, NUL-ended, for string compares. */
static char *
render(const struct metric_family *f)
{
	struct metric_text	 t;
	char			*s;

	metric_text_init(&t);
	metric_render(&t, f);
	assert_false(t.error);
	assert_non_null(s = strndup(t.buf, t.len));
	metric_text_free(&t);
	return s;
}

static size_t
count(const char *hay, const char *needle)
{
	size_t	 n = 0;

	while ((hay = strstr(hay, needle)) != NULL) {
		n++;
		hay += strlen(needle);
	}
	return n;
}

static void
test_counter_text(void **state)
{
	struct metric_family	 f = {
		.name = "agent_sandbox_test_total", .help = "Things.",
		.type = METRIC_COUNTER, .labels = { "route", "status", NULL }
	};
	const char	*a[] = { "/v1/sandboxes", "200" };
	const char	*b[] = { "/v1/sandboxes", "404" };
	char		*s;

	metric_add(&f, a, 1);
	metric_add(&f, a, 2);
	metric_add(&f, b, 1);
	s = render(&f);
	assert_string_equal(s,
	    "# HELP agent_sandbox_test_total Things.\n"
	    "# TYPE agent_sandbox_test_total counter\n"
	    "agent_sandbox_test_total{route=\"/v1/sandboxes\",status=\"200\"}"
	    " 3\n"
	    "agent_sandbox_test_total{route=\"/v1/sandboxes\",status=\"404\"}"
	    " 1\n");
	free(s);
	assert_int_equal(f.nseries, 2);
	metric_family_clear(&f);
}

static void
test_no_labels_and_gauge(void **state)
{
	struct metric_family	 f = {
		.name = "g", .help = "back\\slash\nnew \"line\"",
		.type = METRIC_GAUGE
	};
	char	*s;

	metric_set(&f, NULL, 7);
	metric_set(&f, NULL, 2.5);
	s = render(&f);
	/* HELP escapes \ and newline, not quotes. */
	assert_string_equal(s, "# HELP g back\\\\slash\\nnew \"line\"\n"
	    "# TYPE g gauge\ng 2.5\n");
	free(s);
	metric_family_clear(&f);
	/* A family with no series yet: HELP and TYPE alone. */
	s = render(&f);
	assert_string_equal(s, "# HELP g back\\\\slash\\nnew \"line\"\n"
	    "# TYPE g gauge\n");
	free(s);
}

static char *
escaped(const char *v)
{
	struct metric_text	 t;
	char			*s;

	metric_text_init(&t);
	metric_escape_value(&t, v);
	assert_false(t.error);
	s = strndup(t.buf != NULL ? t.buf : "", t.len);
	metric_text_free(&t);
	return s;
}

static void
test_escape_value(void **state)
{
	char	*s;

	s = escaped("a\\b\"c\nd");
	assert_string_equal(s, "a\\\\b\\\"c\\nd");
	free(s);
	/* Non-ASCII stays as it is. */
	s = escaped("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	assert_string_equal(s, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	free(s);
	/* Invalid UTF-8, each bad byte: U+FFFD. */
	s = escaped("x\xff\xc3(\xed\xa0\x80y");
	assert_string_equal(s, "x\xef\xbf\xbd\xef\xbf\xbd(\xef\xbf\xbd"
	    "\xef\xbf\xbd\xef\xbf\xbdy");
	free(s);
	/* Other control characters cannot stand in a line either. */
	s = escaped("a\rb\tc\x7f");
	assert_string_equal(s, "a\xef\xbf\xbd" "b\xef\xbf\xbd" "c"
	    "\xef\xbf\xbd");
	free(s);
	s = escaped("");
	assert_string_equal(s, "");
	free(s);
}

/* Whatever a label holds, the rendering is lines a receiver accepts. */
static void
test_odd_values_render_valid(void **state)
{
	struct metric_family	 f = {
		.name = "odd", .help = "h", .type = METRIC_COUNTER,
		.labels = { "v", NULL }
	};
	const char		*values[] = { "\"\n\\", "\xff\xfe", "\x01",
	    "\xe2\x82", "ok" };
	struct metric_text	 t;
	size_t			 i;
	char			*s;

	for (i = 0; i < 5; i++)
		metric_add(&f, &values[i], 1);
	metric_text_init(&t);
	metric_render(&t, &f);
	assert_true(metric_text_valid(t.buf, t.len));
	/* HELP, TYPE and one line per series: no newline leaked in. */
	assert_non_null(s = strndup(t.buf, t.len));
	assert_int_equal(count(s, "\n"), 2 + 5);
	free(s);
	metric_text_free(&t);
	metric_family_clear(&f);
}

static void
test_histogram_text(void **state)
{
	static const double	 bounds[] = { 0.1, 1, 10 };
	struct metric_family	 f = {
		.name = "h_seconds", .help = "Times.",
		.type = METRIC_HISTOGRAM, .labels = { "route", NULL },
		.bounds = bounds, .nbounds = 3
	};
	const char	*r[] = { "/x" };
	char		*s;

	metric_observe(&f, r, 0.05);
	metric_observe(&f, r, 0.1);	/* on a bound: that bucket */
	metric_observe(&f, r, 5);
	metric_observe(&f, r, 100);	/* +Inf only */
	s = render(&f);
	assert_string_equal(s,
	    "# HELP h_seconds Times.\n"
	    "# TYPE h_seconds histogram\n"
	    "h_seconds_bucket{route=\"/x\",le=\"0.1\"} 2\n"
	    "h_seconds_bucket{route=\"/x\",le=\"1\"} 2\n"
	    "h_seconds_bucket{route=\"/x\",le=\"10\"} 3\n"
	    "h_seconds_bucket{route=\"/x\",le=\"+Inf\"} 4\n"
	    "h_seconds_sum{route=\"/x\"} 105.15\n"
	    "h_seconds_count{route=\"/x\"} 4\n");
	free(s);
	/* Counters and gauges calls do not touch a histogram's series. */
	metric_add(&f, r, 1);
	assert_int_equal(f.series[0].count, 4);
	metric_family_clear(&f);
}

static void
test_histogram_no_labels(void **state)
{
	struct metric_family	 f = {
		.name = "h", .help = "x", .type = METRIC_HISTOGRAM,
		.bounds = metric_seconds_bounds,
		.nbounds = METRIC_SECONDS_NBOUNDS
	};
	char	*s;

	metric_observe(&f, NULL, 0.0005);
	s = render(&f);
	assert_non_null(strstr(s, "h_bucket{le=\"0.001\"} 1\n"));
	assert_non_null(strstr(s, "h_bucket{le=\"60\"} 1\n"));
	assert_non_null(strstr(s, "h_bucket{le=\"+Inf\"} 1\n"));
	assert_non_null(strstr(s, "h_count 1\n"));
	assert_int_equal(count(s, "_bucket"), METRIC_SECONDS_NBOUNDS + 1);
	assert_int_equal(count(s, "# TYPE"), 1);
	free(s);
	metric_family_clear(&f);
	/* Observing a counter family does nothing. */
	f.type = METRIC_COUNTER;
	metric_observe(&f, NULL, 1);
	assert_int_equal(f.nseries, 0);
}

static void
test_format_value(void **state)
{
	char	 b[64];

	metric_format_value(b, sizeof(b), 0);
	assert_string_equal(b, "0");
	metric_format_value(b, sizeof(b), 12345678);
	assert_string_equal(b, "12345678");
	metric_format_value(b, sizeof(b), 0.001);
	assert_string_equal(b, "0.001");
	metric_format_value(b, sizeof(b), 0.0025);
	assert_string_equal(b, "0.0025");
	metric_format_value(b, sizeof(b), -2.5);
	assert_string_equal(b, "-2.5");
	metric_format_value(b, sizeof(b), 1e20);
	assert_string_equal(b, "1e+20");
	metric_format_value(b, sizeof(b), 1.0 / 0.0);
	assert_string_equal(b, "+Inf");
	metric_format_value(b, sizeof(b), -1.0 / 0.0);
	assert_string_equal(b, "-Inf");
	metric_format_value(b, sizeof(b), 0.0 / 0.0);
	assert_string_equal(b, "NaN");
	metric_format_value(b, sizeof(b), 0.1 + 0.2);
	assert_true(strtod(b, NULL) == 0.1 + 0.2);
}

static void
test_series_bounded(void **state)
{
	struct metric_family	 f = {
		.name = "many", .help = "h", .type = METRIC_COUNTER,
		.labels = { "v", NULL }
	};
	char		 v[32], longv[METRIC_VALUE_MAX * 2 + 1];
	const char	*p = v;
	size_t		 i;

	for (i = 0; i < METRIC_SERIES_MAX + 10; i++) {
		snprintf(v, sizeof(v), "%zu", i);
		metric_add(&f, &p, 1);
	}
	assert_int_equal(f.nseries, METRIC_SERIES_MAX);
	assert_int_equal(f.dropped, 10);
	/* An existing series still counts. */
	snprintf(v, sizeof(v), "0");
	metric_add(&f, &p, 1);
	assert_true(f.series[0].value == 2);
	metric_family_clear(&f);

	/* A long value is kept cut, and the cut one is the same series. */
	memset(longv, 'a', sizeof(longv) - 1);
	longv[sizeof(longv) - 1] = '\0';
	p = longv;
	metric_add(&f, &p, 1);
	longv[METRIC_VALUE_MAX + 5] = '\0';
	metric_add(&f, &p, 1);
	assert_int_equal(f.nseries, 1);
	assert_int_equal(strlen(f.series[0].values[0]), METRIC_VALUE_MAX);
	metric_family_clear(&f);
}

static void
test_text_valid(void **state)
{
	assert_true(metric_text_valid("a 1\n", 4));
	assert_true(metric_text_valid("a{v=\"\xc3\xa9\"} 1\nb 2\n", 16));
	assert_false(metric_text_valid("", 0));
	assert_false(metric_text_valid("a 1", 3));	/* no whole line */
	assert_false(metric_text_valid("a\xff 1\n", 5));
	assert_false(metric_text_valid("a\r 1\n", 5));
	assert_false(metric_text_valid("a\0 1\n", 5));
	assert_false(metric_text_valid("a\x7f 1\n", 5));
}

static void
as_imsg(struct imsg *m, const struct msgw *w)
{
	memset(m, 0, sizeof(*m));
	m->fd = -1;
	m->data = (void *)(uintptr_t)w->buf;
	m->len = w->len;
}

static void
test_codec_text(void **state)
{
	char			 text[] = "x 1\ny 2\n";
	struct metrics_text	 in = { text, 8 }, out;
	struct msgw		 w;
	struct imsg		 m;

	msgw_init(&w);
	msg_put_metrics_text(&w, &in);
	as_imsg(&m, &w);
	assert_int_equal(msg_get_metrics_text(&m, &out), 0);
	assert_int_equal(out.len, 8);
	assert_string_equal(out.text, "x 1\ny 2\n");
	metrics_text_free(&out);
	/* A byte more, or one less: not this message. */
	msgw_u8(&w, 0);
	as_imsg(&m, &w);
	assert_int_equal(msg_get_metrics_text(&m, &out), -1);
	assert_null(out.text);
	w.len -= 2;
	as_imsg(&m, &w);
	assert_int_equal(msg_get_metrics_text(&m, &out), -1);
	/* Not whole lines, a NUL, invalid UTF-8, a NULL string. */
	msgw_init(&w);
	msgw_str(&w, "x 1");
	as_imsg(&m, &w);
	assert_int_equal(msg_get_metrics_text(&m, &out), -1);
	msgw_init(&w);
	msgw_u32(&w, 4);
	msgw_bytes(&w, "x\0 \n", 4);
	as_imsg(&m, &w);
	assert_int_equal(msg_get_metrics_text(&m, &out), -1);
	msgw_init(&w);
	msgw_str(&w, "x\xc3 1\n");
	as_imsg(&m, &w);
	assert_int_equal(msg_get_metrics_text(&m, &out), -1);
	msgw_init(&w);
	msgw_str(&w, NULL);
	as_imsg(&m, &w);
	assert_int_equal(msg_get_metrics_text(&m, &out), -1);
}

static void
test_codec_text_too_long(void **state)
{
	static char		 big[METRICS_CHUNK_MAX + 2];
	struct metrics_text	 in = { big, sizeof(big) - 1 }, out;
	struct msgw		 w;
	struct imsg		 m;

	memset(big, 'a', sizeof(big) - 2);
	big[sizeof(big) - 2] = '\n';
	msgw_init(&w);
	msg_put_metrics_text(&w, &in);
	assert_false(w.overflow);
	as_imsg(&m, &w);
	assert_int_equal(msg_get_metrics_text(&m, &out), -1);
}

static void
test_codec_rss(void **state)
{
	struct metrics_rss	 in = { 123456789012ULL }, out;
	struct msgw		 w;
	struct imsg		 m;

	msgw_init(&w);
	msg_put_metrics_rss(&w, &in);
	assert_int_equal(w.len, 8);
	as_imsg(&m, &w);
	assert_int_equal(msg_get_metrics_rss(&m, &out), 0);
	assert_true(out.rss_bytes == in.rss_bytes);
	w.len = 7;
	as_imsg(&m, &w);
	assert_int_equal(msg_get_metrics_rss(&m, &out), -1);
	w.len = 8;
	msgw_u8(&w, 1);
	as_imsg(&m, &w);
	assert_int_equal(msg_get_metrics_rss(&m, &out), -1);
}

/* What metrics_text_send gave its sender, put together again. */
struct sink {
	char	*all;
	size_t	 len;
	int	 pieces;
	int	 fail_at;
};

static int
sink_send(void *arg, struct msgw *w)
{
	struct sink		*s = arg;
	struct metrics_text	 t;
	struct imsg		 m;

	if (++s->pieces == s->fail_at)
		return -1;
	as_imsg(&m, w);
	/* Each piece is one a receiver accepts. */
	assert_int_equal(msg_get_metrics_text(&m, &t), 0);
	assert_true(t.len <= METRICS_CHUNK_MAX);
	assert_non_null(s->all = realloc(s->all, s->len + t.len));
	memcpy(s->all + s->len, t.text, t.len);
	s->len += t.len;
	metrics_text_free(&t);
	return 0;
}

static void
test_text_send(void **state)
{
	struct sink	 s = { NULL, 0, 0, 0 };
	size_t		 len = 3 * METRICS_CHUNK_MAX + 100, i;
	char		*text;

	assert_non_null(text = malloc(len));
	for (i = 0; i < len; i++)
		text[i] = i % 97 == 96 ? '\n' : 'a' + i % 26;
	text[len - 1] = '\n';
	assert_int_equal(metrics_text_send(text, len, sink_send, &s), 0);
	assert_int_equal(s.pieces, 4);
	assert_int_equal(s.len, len);
	assert_memory_equal(s.all, text, len);
	free(s.all);
	/* A sender's failure stops it. */
	memset(&s, 0, sizeof(s));
	s.fail_at = 2;
	assert_int_equal(metrics_text_send(text, len, sink_send, &s), -1);
	assert_int_equal(s.pieces, 2);
	free(s.all);
	/* A line longer than a piece cannot go. */
	memset(&s, 0, sizeof(s));
	memset(text, 'b', len - 1);
	assert_int_equal(metrics_text_send(text, len, sink_send, &s), -1);
	assert_int_equal(s.pieces, 0);
	free(text);
	/* Nothing to send: no message. */
	assert_int_equal(metrics_text_send("", 0, sink_send, &s), 0);
	assert_int_equal(s.pieces, 0);
}

static void
test_rss(void **state)
{
	int		 fd;
	uint64_t	 a, b;
	volatile char	*p;
	size_t		 i;

	assert_true(metric_rss_bytes(-1) == 0);
	assert_int_not_equal(fd = metric_rss_open(), -1);
	a = metric_rss_bytes(fd);
	assert_true(a > 0);
	/* Read again at offset 0: still there, and it follows the heap. */
	assert_non_null(p = malloc(32 << 20));
	for (i = 0; i < (32 << 20); i += 4096)
		p[i] = 1;
	b = metric_rss_bytes(fd);
	assert_true(b >= a + (16 << 20));
	free((void *)(uintptr_t)p);
	close(fd);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counter_text),
		cmocka_unit_test(test_no_labels_and_gauge),
		cmocka_unit_test(test_escape_value),
		cmocka_unit_test(test_odd_values_render_valid),
		cmocka_unit_test(test_histogram_text),
		cmocka_unit_test(test_histogram_no_labels),
		cmocka_unit_test(test_format_value),
		cmocka_unit_test(test_series_bounded),
		cmocka_unit_test(test_text_valid),
		cmocka_unit_test(test_codec_text),
		cmocka_unit_test(test_codec_text_too_long),
		cmocka_unit_test(test_codec_rss),
		cmocka_unit_test(test_text_send),
		cmocka_unit_test(test_rss),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
