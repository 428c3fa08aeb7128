/*
 * The metrics messages' codecs (metrics_msg.h).
 */
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "metrics_msg.h"

void
msg_put_metrics_text(struct msgw *w, const struct metrics_text *t)
{
	msgw_u32(w, (uint32_t)t->len);
	msgw_bytes(w, t->text, t->len);
}

int
msg_get_metrics_text(const struct imsg *imsg, struct metrics_text *t)
{
	struct msgr	 r;

	memset(t, 0, sizeof(*t));
	msgr_init(&r, imsg);
	t->text = msgr_str(&r, METRICS_CHUNK_MAX);
	if (msgr_end(&r) == -1 || t->text == NULL)
		goto fail;
	t->len = strlen(t->text);
	/* A NUL inside would have cut it short: the lengths differ then. */
	if (t->len != imsg->len - 4 || !metric_text_valid(t->text, t->len))
		goto fail;
	return 0;
fail:
	metrics_text_free(t);
	return -1;
}

void
metrics_text_free(struct metrics_text *t)
{
	free(t->text);
	t->text = NULL;
	t->len = 0;
}

void
msg_put_metrics_rss(struct msgw *w, const struct metrics_rss *m)
{
	msgw_u64(w, m->rss_bytes);
}

int
msg_get_metrics_rss(const struct imsg *imsg, struct metrics_rss *m)
{
	struct msgr	 r;

	msgr_init(&r, imsg);
	m->rss_bytes = msgr_u64(&r);
	return msgr_end(&r);
}

void
metrics_rss_free(struct metrics_rss *m)
{
	(void)m;
}

/* The longest run of whole lines from s that fits in a piece. */
static size_t
piece_len(const char *s, size_t len)
{
	size_t	 n;

	if (len <= METRICS_CHUNK_MAX)
		return len;
	for (n = METRICS_CHUNK_MAX; n > 0; n--)
		if (s[n - 1] == '\n')
			return n;
	return 0;
}

int
metrics_text_send(const char *s, size_t len,
    int (*send)(void *, struct msgw *), void *arg)
{
	struct metrics_text	 t;
	struct msgw		 w;
	size_t			 n;

	while (len > 0) {
		if ((n = piece_len(s, len)) == 0)
			return -1;	/* a line longer than a piece */
		t.text = (char *)(uintptr_t)s;
		t.len = n;
		msgw_init(&w);
		msg_put_metrics_text(&w, &t);
		if (w.overflow || send(arg, &w) == -1)
			return -1;
		s += n;
		len -= n;
	}
	return 0;
}
