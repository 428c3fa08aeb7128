/*
 * Helpers for the harnesses (harness.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

void
harness_fail(const char *file, int line, const char *what)
{
	fprintf(stderr, "%s:%d: invariant broken: %s\n", file, line, what);
	abort();
}

void
splitter_init(struct splitter *sp, uint64_t seed, size_t max)
{
	sp->state = seed * 2 + 1;
	sp->max = max > 0 ? max : 1;
}

/* A xorshift: cheap, and the same seed always gives the same pieces. */
size_t
splitter_next(struct splitter *sp, size_t left)
{
	size_t	 n;

	sp->state ^= sp->state << 13;
	sp->state ^= sp->state >> 7;
	sp->state ^= sp->state << 17;
	n = 1 + (size_t)(sp->state % sp->max);
	return n < left ? n : left;
}

uint64_t
take_u64(const uint8_t **data, size_t *len, size_t n)
{
	uint64_t	 v = 0;

	while (n-- > 0 && *len > 0) {
		v = v << 8 | **data;
		(*data)++;
		(*len)--;
	}
	return v;
}

void
buf_add(struct buf *b, const void *data, size_t len)
{
	if (b->len + len + 1 > b->size) {
		b->size = (b->len + len + 1) * 2;
		CHECK((b->p = realloc(b->p, b->size)) != NULL);
	}
	if (len > 0)
		memcpy(b->p + b->len, data, len);
	b->len += len;
	b->p[b->len] = '\0';
}

int
buf_equal(const struct buf *a, const struct buf *b)
{
	return a->len == b->len && (a->len == 0 || memcmp(a->p, b->p,
	    a->len) == 0);
}

void
buf_free(struct buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}
