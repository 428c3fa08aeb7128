/*
 * Families, series and the text exposition format (see metrics.h).  The
 * format: "# HELP name text" and "# TYPE name type" once per family,
 * then "name{label="value",...} number" per series; a histogram's
 * series is its cumulative buckets (le, +Inf last), _sum and _count.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "metrics.h"
#include "utf8.h"

const double metric_seconds_bounds[METRIC_SECONDS_NBOUNDS] = {
	0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
	1, 2.5, 5, 10, 30, 60
};

static size_t
family_nlabels(const struct metric_family *f)
{
	size_t	 n = 0;

	while (n < METRIC_LABELS_MAX && f->labels[n] != NULL)
		n++;
	return n;
}

static int
series_is(const struct metric_series *s, const char *const *values,
    size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (strncmp(s->values[i], values[i], METRIC_VALUE_MAX) != 0)
			return 0;
	return 1;
}

/* A copy of at most METRIC_VALUE_MAX bytes, not cutting a character. */
static char *
value_copy(const char *v)
{
	size_t	 len = strlen(v);

	if (len > METRIC_VALUE_MAX)
		len = utf8_cut(v, METRIC_VALUE_MAX);
	return strndup(v, len);
}

static void
series_free(struct metric_series *s)
{
	size_t	 i;

	for (i = 0; i < METRIC_LABELS_MAX; i++)
		free(s->values[i]);
	free(s->buckets);
}

static int
series_make(struct metric_family *f, struct metric_series *s,
    const char *const *values, size_t n)
{
	size_t	 i;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < n; i++)
		if ((s->values[i] = value_copy(values[i])) == NULL)
			goto fail;
	if (f->type == METRIC_HISTOGRAM && (s->buckets = calloc(f->nbounds +
	    1, sizeof(*s->buckets))) == NULL)
		goto fail;
	return 0;
fail:
	series_free(s);
	return -1;
}

static int
family_grow(struct metric_family *f)
{
	struct metric_series	*p;
	size_t			 cap;

	if (f->nseries < f->cap)
		return 0;
	cap = f->cap == 0 ? 8 : f->cap * 2;
	if ((p = reallocarray(f->series, cap, sizeof(*p))) == NULL)
		return -1;
	f->series = p;
	f->cap = cap;
	return 0;
}

struct metric_series *
metric_series(struct metric_family *f, const char *const *values)
{
	size_t	 i, n = family_nlabels(f);

	for (i = 0; i < f->nseries; i++)
		if (series_is(&f->series[i], values, n))
			return &f->series[i];
	if (f->nseries >= METRIC_SERIES_MAX || family_grow(f) == -1 ||
	    series_make(f, &f->series[f->nseries], values, n) == -1) {
		f->dropped++;
		return NULL;
	}
	return &f->series[f->nseries++];
}

void
metric_add(struct metric_family *f, const char *const *values, double v)
{
	struct metric_series	*s;

	if ((s = metric_series(f, values)) != NULL)
		s->value += v;
}

void
metric_set(struct metric_family *f, const char *const *values, double v)
{
	struct metric_series	*s;

	if ((s = metric_series(f, values)) != NULL)
		s->value = v;
}

/* The first bucket whose bound is >= v; nbounds for +Inf (and NaN). */
static size_t
bucket_of(const struct metric_family *f, double v)
{
	size_t	 i;

	for (i = 0; i < f->nbounds; i++)
		if (v <= f->bounds[i])
			return i;
	return f->nbounds;
}

void
metric_observe(struct metric_family *f, const char *const *values, double v)
{
	struct metric_series	*s;

	if (f->type != METRIC_HISTOGRAM ||
	    (s = metric_series(f, values)) == NULL)
		return;
	s->buckets[bucket_of(f, v)]++;
	s->sum += v;
	s->count++;
}

void
metric_family_clear(struct metric_family *f)
{
	size_t	 i;

	for (i = 0; i < f->nseries; i++)
		series_free(&f->series[i]);
	free(f->series);
	f->series = NULL;
	f->nseries = f->cap = 0;
	f->dropped = 0;
}

/* --- text --------------------------------------------------------------- */

void
metric_text_init(struct metric_text *t)
{
	memset(t, 0, sizeof(*t));
}

void
metric_text_free(struct metric_text *t)
{
	free(t->buf);
	metric_text_init(t);
}

void
metric_text_add(struct metric_text *t, const void *p, size_t n)
{
	size_t	 cap;
	char	*b;

	if (t->error)
		return;
	if (n > METRIC_TEXT_MAX - t->len) {
		t->error = 1;
		return;
	}
	if (t->len + n > t->cap) {
		for (cap = t->cap == 0 ? 4096 : t->cap; cap < t->len + n;)
			cap *= 2;
		if ((b = realloc(t->buf, cap)) == NULL) {
			t->error = 1;
			return;
		}
		t->buf = b;
		t->cap = cap;
	}
	memcpy(t->buf + t->len, p, n);
	t->len += n;
}

static void
text_str(struct metric_text *t, const char *s)
{
	metric_text_add(t, s, strlen(s));
}

void
metric_format_value(char *buf, size_t len, double v)
{
	int	 prec;

	if (isnan(v)) {
		snprintf(buf, len, "NaN");
		return;
	}
	if (isinf(v)) {
		snprintf(buf, len, v > 0 ? "+Inf" : "-Inf");
		return;
	}
	if (v >= -9e15 && v <= 9e15 && v == (double)(int64_t)v) {
		snprintf(buf, len, "%lld", (long long)v);
		return;
	}
	/* The shortest that reads back as the same double. */
	for (prec = 1; prec < 17; prec++) {
		snprintf(buf, len, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
	snprintf(buf, len, "%.17g", v);
}

/* HELP text: backslash and newline escaped (quotes are not, there). */
static void
text_help(struct metric_text *t, const char *s)
{
	for (; *s != '\0'; s++) {
		if (*s == '\\')
			text_str(t, "\\\\");
		else if (*s == '\n')
			text_str(t, "\\n");
		else
			metric_text_add(t, s, 1);
	}
}

void
metric_escape_value(struct metric_text *t, const char *s)
{
	static const char	 replacement[] = "\xef\xbf\xbd";
	size_t			 len = strlen(s), n;
	uint32_t		 cp;

	while (len > 0) {
		if ((n = utf8_char(s, len, &cp)) == 0) {
			metric_text_add(t, replacement, 3);
			n = 1;
		} else if (*s == '\\')
			text_str(t, "\\\\");
		else if (*s == '"')
			text_str(t, "\\\"");
		else if (*s == '\n')
			text_str(t, "\\n");
		else if (cp < 0x20 || cp == 0x7f)
			/* No escape for it, and no line may hold it. */
			metric_text_add(t, replacement, 3);
		else
			metric_text_add(t, s, n);
		s += n;
		len -= n;
	}
}

/* {a="x",b="y"}, with extra (the le of a bucket) last; nothing if none. */
static void
text_labels(struct metric_text *t, const struct metric_family *f,
    const struct metric_series *s, const char *extra_value)
{
	size_t	 i, n = family_nlabels(f);

	if (n == 0 && extra_value == NULL)
		return;
	text_str(t, "{");
	for (i = 0; i < n; i++) {
		if (i > 0)
			text_str(t, ",");
		text_str(t, f->labels[i]);
		text_str(t, "=\"");
		metric_escape_value(t, s->values[i]);
		text_str(t, "\"");
	}
	if (extra_value != NULL) {
		text_str(t, n > 0 ? ",le=\"" : "le=\"");
		text_str(t, extra_value);
		text_str(t, "\"");
	}
	text_str(t, "}");
}

static void
text_sample(struct metric_text *t, const struct metric_family *f,
    const char *suffix, const struct metric_series *s, const char *le,
    double v)
{
	char	 num[64];

	text_str(t, f->name);
	text_str(t, suffix);
	text_labels(t, f, s, le);
	metric_format_value(num, sizeof(num), v);
	text_str(t, " ");
	text_str(t, num);
	text_str(t, "\n");
}

static void
render_histogram(struct metric_text *t, const struct metric_family *f,
    const struct metric_series *s)
{
	char		 le[64];
	uint64_t	 cum = 0;
	size_t		 i;

	for (i = 0; i < f->nbounds; i++) {
		cum += s->buckets[i];
		metric_format_value(le, sizeof(le), f->bounds[i]);
		text_sample(t, f, "_bucket", s, le, (double)cum);
	}
	text_sample(t, f, "_bucket", s, "+Inf", (double)s->count);
	text_sample(t, f, "_sum", s, NULL, s->sum);
	text_sample(t, f, "_count", s, NULL, (double)s->count);
}

static const char *
type_name(enum metric_type type)
{
	switch (type) {
	case METRIC_COUNTER:
		return "counter";
	case METRIC_GAUGE:
		return "gauge";
	default:
		return "histogram";
	}
}

void
metric_render(struct metric_text *t, const struct metric_family *f)
{
	size_t	 i;

	text_str(t, "# HELP ");
	text_str(t, f->name);
	text_str(t, " ");
	text_help(t, f->help);
	text_str(t, "\n# TYPE ");
	text_str(t, f->name);
	text_str(t, " ");
	text_str(t, type_name(f->type));
	text_str(t, "\n");
	for (i = 0; i < f->nseries; i++) {
		if (f->type == METRIC_HISTOGRAM)
			render_histogram(t, f, &f->series[i]);
		else
			text_sample(t, f, "", &f->series[i], NULL,
			    f->series[i].value);
	}
}

int
metric_text_valid(const char *s, size_t len)
{
	size_t	 i;

	if (len == 0 || s[len - 1] != '\n' || !utf8_valid(s, len))
		return 0;
	for (i = 0; i < len; i++)
		if (((unsigned char)s[i] < 0x20 && s[i] != '\n') ||
		    s[i] == 0x7f)
			return 0;
	return 1;
}

/* --- the daemon's own numbers -------------------------------------------- */

static long	 page_size;

/* The page size too, now: sysconf may not work in every jail. */
int
metric_rss_open(void)
{
	page_size = sysconf(_SC_PAGESIZE);
	return open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
}

/* statm: size resident shared ... in pages; the second is the RSS. */
uint64_t
metric_rss_bytes(int fd)
{
	char		 buf[256], *p, *end;
	ssize_t		 n;
	unsigned long long pages;

	if (fd == -1 || (n = pread(fd, buf, sizeof(buf) - 1, 0)) <= 0)
		return 0;
	buf[n] = '\0';
	if (page_size <= 0)
		return 0;
	if ((p = strchr(buf, ' ')) == NULL)
		return 0;
	errno = 0;
	pages = strtoull(p + 1, &end, 10);
	if (errno != 0 || end == p + 1)
		return 0;
	return (uint64_t)pages * (uint64_t)page_size;
}

void
metric_clock(struct timespec *ts)
{
	if (clock_gettime(CLOCK_MONOTONIC, ts) == -1)
		memset(ts, 0, sizeof(*ts));
}

double
metric_since(const struct timespec *start)
{
	struct timespec	 now;

	metric_clock(&now);
	return (double)(now.tv_sec - start->tv_sec) +
	    (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}
