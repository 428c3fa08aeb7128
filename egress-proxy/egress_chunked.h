/*
 * Where a sandbox's chunked request body ends (RFC 9112 section 7.1), so
 * that egress-proxy relays it to its last chunk and trailers and no
 * further: a request pipelined behind it never goes upstream.  Pure: no
 * I/O, so that it is tested alone.  A size has at most 15 hex digits;
 * chunk extensions and trailer lines are skipped to their CR, and a CR
 * must be followed by LF.
 */
#ifndef AS_EGRESS_CHUNKED_H
#define AS_EGRESS_CHUNKED_H

#include <stddef.h>
#include <stdint.h>

enum egress_chunk_state {
	EGRESS_CH_SIZE = 0, EGRESS_CH_EXT, EGRESS_CH_SIZE_LF, EGRESS_CH_DATA,
	EGRESS_CH_DATA_CR, EGRESS_CH_DATA_LF, EGRESS_CH_TRAILER_START,
	EGRESS_CH_TRAILER, EGRESS_CH_TRAILER_LF, EGRESS_CH_END_LF,
	EGRESS_CH_DONE,		/* the body ended */
	EGRESS_CH_BAD,		/* malformed: nothing more is the body */
};

/* Zeroed: at the start of a body. */
struct egress_chunks {
	enum egress_chunk_state	 state;
	uint64_t		 left;		/* of the current chunk */
	int			 digits;
};

/*
 * How many of the len bytes at p belong to the body, from the start;
 * the state says whether it ended (DONE) or broke (BAD) there.
 */
size_t	egress_chunks_scan(struct egress_chunks *, const unsigned char *p,
	    size_t len);

#endif /* AS_EGRESS_CHUNKED_H */
