/*
 * Large reads for a socket bufferevent.  libevent 2.1's evbuffer_read
 * takes at most 4 KiB (EVBUFFER_MAX_READ) per call, and a bufferevent
 * reads once per wake-up, so a 100 MiB body costs 25,000 turns of the
 * loop and as many callbacks downstream.  While the descriptor has
 * more, bev_read_more() reads it into the bufferevent's input in pieces
 * of piece bytes, up to max in all.  End of file is left for the
 * bufferevent to find on its next read; an error is not, since reading
 * it took it (a reset reads as an end of file next): *err gets its
 * errno, for the caller to fail once what came before it is handled.
 */
#ifndef AS_BEV_READ_H
#define AS_BEV_READ_H

#include <stddef.h>

struct bufferevent;

size_t	bev_read_more(struct bufferevent *, size_t max, size_t piece,
	    int *err);

#endif /* AS_BEV_READ_H */
