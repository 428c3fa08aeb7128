/*
 * Metrics in the Prometheus text exposition format (0.0.4), shared by
 * the three daemons: each keeps the families it alone observes, renders
 * them here, and apid puts the pieces together for GET /metrics
 * (docs/metrics.md).  A family is a name, a type, its label names and
 * its series; a series is one set of label values.  Label values are
 * bounded by the callers (route and endpoint templates, states, status
 * codes), never a client's string or an id; METRIC_SERIES_MAX is only
 * the guard behind that.  Counters and sums are doubles: exact up to
 * 2^53, which a counter of requests does not reach.
 */
#ifndef AS_METRICS_H
#define AS_METRICS_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define METRIC_LABELS_MAX	3
#define METRIC_SERIES_MAX	1024	/* per family; beyond, dropped */
#define METRIC_VALUE_MAX	128	/* bytes of a label value, kept */
/* The most text one daemon's families may make (and a peer may send). */
#define METRIC_TEXT_MAX		(1024 * 1024)

enum metric_type {
	METRIC_COUNTER,
	METRIC_GAUGE,
	METRIC_HISTOGRAM
};

struct metric_series {
	char		*values[METRIC_LABELS_MAX];
	double		 value;		/* a counter's or a gauge's */
	/* per bound, not cumulative; the last is +Inf's */
	uint64_t	*buckets;
	double		 sum;
	uint64_t	 count;
};

/*
 * Defined statically by the daemon that owns it: name, help, type,
 * labels (NULL after the last), and for a histogram its upper bounds,
 * ascending, without +Inf (which every histogram has).
 */
struct metric_family {
	const char		*name;
	const char		*help;
	enum metric_type	 type;
	const char		*labels[METRIC_LABELS_MAX + 1];
	const double		*bounds;
	size_t			 nbounds;
	/* filled as series appear */
	struct metric_series	*series;
	size_t			 nseries;
	size_t			 cap;
	uint64_t		 dropped;	/* observations past the cap */
};

/* Latency buckets, 1 ms .. 60 s. */
#define METRIC_SECONDS_NBOUNDS	15
extern const double	metric_seconds_bounds[METRIC_SECONDS_NBOUNDS];

/*
 * The series with these values (as many as the family has labels),
 * made if new; NULL when out of memory or past METRIC_SERIES_MAX.
 */
struct metric_series *metric_series(struct metric_family *,
	    const char *const *values);
/* Counters and gauges; values NULL for a family without labels. */
void	 metric_add(struct metric_family *, const char *const *values,
	    double);
void	 metric_set(struct metric_family *, const char *const *values,
	    double);
void	 metric_observe(struct metric_family *, const char *const *values,
	    double);
void	 metric_family_clear(struct metric_family *);

/* Rendered text, grown as needed; error once it failed or grew too big. */
struct metric_text {
	char	*buf;
	size_t	 len;
	size_t	 cap;
	int	 error;
};

void	 metric_text_init(struct metric_text *);
void	 metric_text_free(struct metric_text *);
/* Bytes as they are (text already rendered, a peer's checked text). */
void	 metric_text_add(struct metric_text *, const void *, size_t);
/* HELP and TYPE once, then every series (a histogram's buckets, sum, count). */
void	 metric_render(struct metric_text *, const struct metric_family *);
/*
 * A label value as the format quotes it (\\, \", \n), invalid UTF-8
 * and other control characters as U+FFFD.
 */
void	 metric_escape_value(struct metric_text *, const char *);
/* A sample value: integers plainly, others shortest, +Inf, -Inf, NaN. */
void	 metric_format_value(char *buf, size_t len, double);

/*
 * 1 if text could be lines of a rendering: whole lines (it ends with a
 * newline), valid UTF-8, no control character but the newline.  What a
 * daemon accepts from a peer's rendering (the codecs of metrics_msg.h).
 */
int	 metric_text_valid(const char *, size_t);

/*
 * A daemon's resident set: open /proc/self/statm before the jail (-1 on
 * failure), then read it at offset 0 on each scrape (pread, no path).
 * The bytes, or 0 when it cannot be read.
 */
int	 metric_rss_open(void);
uint64_t metric_rss_bytes(int fd);

/* Seconds since start (CLOCK_MONOTONIC), and a start. */
void	 metric_clock(struct timespec *);
double	 metric_since(const struct timespec *);

#endif /* AS_METRICS_H */
