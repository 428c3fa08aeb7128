/*
 * The framing of a chunked request body (egress_chunked.h), byte by
 * byte; a chunk's data is skipped whole.  Pure: no I/O.
 */
#include <stddef.h>
#include <stdint.h>

#include "egress_chunked.h"

static int
hex_value(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* One byte of the framing (not of a chunk's data). */
static void
chunk_byte(struct egress_chunks *k, int ch)
{
	int	 v;

	switch (k->state) {
	case EGRESS_CH_SIZE:
		if ((v = hex_value(ch)) != -1 && k->digits < 15) {
			k->left = k->left * 16 + (uint64_t)v;
			k->digits++;
		} else if (k->digits > 0 && (ch == ';' || ch == '\r'))
			k->state = ch == ';' ? EGRESS_CH_EXT : EGRESS_CH_SIZE_LF;
		else
			k->state = EGRESS_CH_BAD;
		break;
	case EGRESS_CH_EXT:
		if (ch == '\r')
			k->state = EGRESS_CH_SIZE_LF;
		break;
	case EGRESS_CH_SIZE_LF:
		k->state = ch != '\n' ? EGRESS_CH_BAD : k->left > 0 ? EGRESS_CH_DATA :
		    EGRESS_CH_TRAILER_START;
		break;
	case EGRESS_CH_DATA_CR:
		k->state = ch == '\r' ? EGRESS_CH_DATA_LF : EGRESS_CH_BAD;
		break;
	case EGRESS_CH_DATA_LF:
		k->state = ch == '\n' ? EGRESS_CH_SIZE : EGRESS_CH_BAD;
		k->digits = 0;
		break;
	case EGRESS_CH_TRAILER_START:
		k->state = ch == '\r' ? EGRESS_CH_END_LF : EGRESS_CH_TRAILER;
		break;
	case EGRESS_CH_TRAILER:
		if (ch == '\r')
			k->state = EGRESS_CH_TRAILER_LF;
		break;
	case EGRESS_CH_TRAILER_LF:
		k->state = ch == '\n' ? EGRESS_CH_TRAILER_START : EGRESS_CH_BAD;
		break;
	case EGRESS_CH_END_LF:
		k->state = ch == '\n' ? EGRESS_CH_DONE : EGRESS_CH_BAD;
		break;
	default:
		break;
	}
}

/* How many of len bytes belong to the body; k says whether it ended. */
size_t
egress_chunks_scan(struct egress_chunks *k, const unsigned char *p, size_t len)
{
	size_t	 i = 0, n;

	while (i < len && k->state != EGRESS_CH_DONE && k->state != EGRESS_CH_BAD) {
		if (k->state == EGRESS_CH_DATA) {
			n = len - i < k->left ? len - i : (size_t)k->left;
			i += n;
			if ((k->left -= n) == 0)
				k->state = EGRESS_CH_DATA_CR;
			continue;
		}
		chunk_byte(k, p[i++]);
	}
	return i;
}
