/*
 * Payloads of the metrics messages (msg.h, METRICS_* and DOCKER_METRICS_*):
 * how the numbers managerd and dockerd-proxy keep reach apid's
 * GET /metrics.  Each daemon renders the families it owns (metrics.h)
 * and sends the text in pieces of whole lines; the receiver checks each
 * piece (metric_text_valid) and the total (METRIC_TEXT_MAX).  Decoders
 * check every field and the exact length, return -1 on failure and
 * leave nothing allocated.
 */
#ifndef AS_METRICS_MSG_H
#define AS_METRICS_MSG_H

#include <stddef.h>
#include <stdint.h>

#include "msg.h"

/* Text in one message: whole lines, at most this many bytes. */
#define METRICS_CHUNK_MAX	(IMSG_MAX_PAYLOAD - 64)

struct metrics_text {
	char	*text;		/* NUL-ended; holds no NUL */
	size_t	 len;
};

/* METRICS_TEXT, DOCKER_METRICS_TEXT: str text. */
void	msg_put_metrics_text(struct msgw *, const struct metrics_text *);
int	msg_get_metrics_text(const struct imsg *, struct metrics_text *);
void	metrics_text_free(struct metrics_text *);

/* METRICS_REQUEST, DOCKER_METRICS_END: u64 resident bytes (0: unknown). */
struct metrics_rss {
	uint64_t	 rss_bytes;
};
void	msg_put_metrics_rss(struct msgw *, const struct metrics_rss *);
int	msg_get_metrics_rss(const struct imsg *, struct metrics_rss *);
void	metrics_rss_free(struct metrics_rss *);

/*
 * Send text (whole lines) in METRICS_CHUNK_MAX pieces, each cut after a
 * newline, through send (which returns -1 on failure): 0 or -1.
 */
int	metrics_text_send(const char *, size_t,
	    int (*send)(void *arg, struct msgw *), void *arg);

#endif /* AS_METRICS_MSG_H */
