/*
 * Docker's streamed JSON answers, one object per line (an image pull's
 * progress, the event stream), cut into lines.  A line longer than the
 * reader's limit is skipped whole, never cut: half an object is worse
 * than none.
 */
#include <stdlib.h>
#include <string.h>

#include "proxy.h"
#include "xmalloc.h"

void
docker_lines_init(struct docker_lines *dl, size_t max, docker_line_fn fn,
    void *arg)
{
	memset(dl, 0, sizeof(*dl));
	dl->buf = xmalloc(max);
	dl->max = max;
	dl->fn = fn;
	dl->arg = arg;
}

void
docker_lines_free(struct docker_lines *dl)
{
	free(dl->buf);
	memset(dl, 0, sizeof(*dl));
}

/* Once per newline; the callback may not free the reader. */
void
docker_lines_feed(struct docker_lines *dl, const unsigned char *data,
    size_t len)
{
	const unsigned char	*nl;
	size_t			 n;

	while (len > 0) {
		nl = memchr(data, '\n', len);
		n = nl != NULL ? (size_t)(nl - data) : len;
		if (!dl->skip && dl->len + n <= dl->max) {
			memcpy(dl->buf + dl->len, data, n);
			dl->len += n;
		} else
			dl->skip = 1;
		if (nl != NULL) {
			docker_lines_end(dl);
			n++;
		}
		data += n;
		len -= n;
	}
}

/* The stream ended: a last line without its newline counts. */
void
docker_lines_end(struct docker_lines *dl)
{
	if (!dl->skip && dl->len > 0)
		dl->fn(dl->arg, dl->buf, dl->len);
	dl->len = 0;
	dl->skip = 0;
}
