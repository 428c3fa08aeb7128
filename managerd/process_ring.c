/*
 * A process's output ring (process.h): what came, numbered by bytes,
 * the oldest dropped past the cap.  Numbering by bytes is what makes a
 * gap exact: a reader that has everything through byte pos and finds
 * the ring starting later missed exactly the bytes in between, however
 * many pieces they came in.  Pure: no descriptors, no events.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "process.h"
#include "utf8.h"

void
ring_init(struct ring *r, uint64_t cap)
{
	memset(r, 0, sizeof(*r));
	TAILQ_INIT(&r->chunks);
	r->cap = cap;
}

void
ring_free(struct ring *r)
{
	struct ring_chunk	*c;

	while ((c = TAILQ_FIRST(&r->chunks)) != NULL) {
		TAILQ_REMOVE(&r->chunks, c, entry);
		free(c);
	}
	r->kept = 0;
	r->mem = 0;
}

static void
ring_trim(struct ring *r)
{
	struct ring_chunk	*c;

	while (r->mem > r->cap && (c = TAILQ_FIRST(&r->chunks)) != NULL &&
	    c != TAILQ_LAST(&r->chunks, ring_chunks)) {
		TAILQ_REMOVE(&r->chunks, c, entry);
		r->kept -= c->len;
		r->mem -= sizeof(*c) + c->room;
		free(c);
	}
}

static int
ring_push(struct ring *r, int stream, const unsigned char *data, size_t len)
{
	struct ring_chunk	*c = TAILQ_LAST(&r->chunks, ring_chunks);
	size_t			 room;

	if (c == NULL || c->stream != stream || c->room - c->len < len) {
		room = len < RING_CHUNK_ROOM ? RING_CHUNK_ROOM : len;
		if ((c = malloc(sizeof(*c) + room)) == NULL)
			return -1;
		c->len = 0;
		c->room = (uint32_t)room;
		c->stream = (uint8_t)stream;
		r->mem += sizeof(*c) + room;
		TAILQ_INSERT_TAIL(&r->chunks, c, entry);
	}
	memcpy(c->data + c->len, data, len);
	c->len += (uint32_t)len;
	r->total += len;
	c->seq = r->total;
	r->kept += len;
	ring_trim(r);
	return 0;
}

/* Whole characters of buf into chunks of at most PEV_DATA_MAX. */
static int
ring_push_cut(struct ring *r, int stream, const unsigned char *buf,
    size_t len)
{
	size_t	 n;

	while (len > 0) {
		n = len;
		if (n > PEV_DATA_MAX) {
			n = utf8_cut(buf, PEV_DATA_MAX);
			if (n == 0)	/* no character starts there: bytes */
				n = PEV_DATA_MAX;
		}
		if (ring_push(r, stream, buf, n) == -1)
			return -1;
		buf += n;
		len -= n;
	}
	return 0;
}

int
ring_append(struct ring *r, int stream, const void *data, size_t len)
{
	unsigned char	*buf;
	size_t		 idx = stream == PEV_STDERR, held = r->ncarry[idx];
	size_t		 n = held + len, tail;
	int		 rv;

	if (len == 0)
		return 0;
	if ((buf = malloc(n)) == NULL)
		return -1;	/* nothing of it kept, the carry as it was */
	memcpy(buf, r->carry[idx], held);
	memcpy(buf + held, data, len);
	tail = utf8_incomplete_tail(buf, n);
	/* Out of memory half way: what did not fit is dropped, not kept. */
	rv = ring_push_cut(r, stream, buf, n - tail);
	memcpy(r->carry[idx], buf + n - tail, tail);
	r->ncarry[idx] = tail;
	free(buf);
	return rv;
}

int
ring_flush(struct ring *r)
{
	size_t	 i;

	for (i = 0; i < 2; i++) {
		if (r->ncarry[i] > 0 && ring_push(r, i == 0 ? PEV_STDOUT :
		    PEV_STDERR, r->carry[i], r->ncarry[i]) == -1)
			return -1;
		r->ncarry[i] = 0;
	}
	return 0;
}

uint64_t
ring_dropped(const struct ring *r)
{
	return r->total - r->kept;
}

struct ring_chunk *
ring_next(const struct ring *r, uint64_t pos, uint32_t *skip)
{
	struct ring_chunk	*c;
	uint64_t		 start;

	/* Readers are near the end: look from there back. */
	TAILQ_FOREACH_REVERSE(c, &r->chunks, ring_chunks, entry) {
		start = c->seq - c->len;
		if (start <= pos && pos < c->seq) {
			*skip = (uint32_t)(pos - start);
			return c;
		}
		if (start <= pos)
			return NULL;	/* pos is at or past the end */
	}
	c = TAILQ_FIRST(&r->chunks);
	if (c != NULL && pos < c->seq - c->len) {
		*skip = 0;
		return c;
	}
	return NULL;
}
