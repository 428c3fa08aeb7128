/* Large reads for a socket bufferevent (bev_read.h). */
#include <sys/types.h>
#include <sys/uio.h>

#include <errno.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "bev_read.h"

/* One readv into reserved space: bytes read, 0 for none (or EOF), -1. */
static ssize_t
read_piece(struct evbuffer *in, int fd, size_t piece)
{
	struct evbuffer_iovec	 vec[2];
	struct iovec		 iov[2];
	size_t			 left;
	ssize_t			 n;
	int			 i, nvec;

	if ((nvec = evbuffer_reserve_space(in, (ev_ssize_t)piece, vec,
	    2)) <= 0)
		return 0;
	for (i = 0; i < nvec; i++) {
		iov[i].iov_base = vec[i].iov_base;
		iov[i].iov_len = vec[i].iov_len;
	}
	if ((n = readv(fd, iov, nvec)) <= 0) {
		evbuffer_commit_space(in, vec, 0);
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK ||
		    errno == EINTR))
			return 0;
		return n == 0 ? 0 : -1;
	}
	for (i = 0, left = (size_t)n; i < nvec; i++) {
		if (vec[i].iov_len > left)
			vec[i].iov_len = left;
		left -= vec[i].iov_len;
	}
	return evbuffer_commit_space(in, vec, nvec) == -1 ? 0 : n;
}

size_t
bev_read_more(struct bufferevent *bev, size_t max, size_t piece, int *err)
{
	struct evbuffer	*in = bufferevent_get_input(bev);
	int		 fd = bufferevent_getfd(bev);
	size_t		 total = 0;
	ssize_t		 n;

	*err = 0;
	/*
	 * A bufferevent keeps the end of its input frozen except while it
	 * reads itself; open it the same way for these reads.
	 */
	evbuffer_unfreeze(in, 0);
	while (total < max) {
		if ((n = read_piece(in, fd, max - total < piece ?
		    max - total : piece)) == -1)
			*err = errno;
		if (n <= 0)
			break;
		total += (size_t)n;
	}
	evbuffer_freeze(in, 0);
	return total;
}
