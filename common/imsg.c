/*
 * Framed messages with descriptor passing over a SOCK_STREAM socketpair.
 * See imsg.h for the wire format.  Linux specifics handled here: a
 * descriptor the kernel could not install shows up only as MSG_CTRUNC, and
 * received descriptors are close-on-exec from the start.
 */
#include <sys/socket.h>
#include <sys/uio.h>

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "imsg.h"

void
imsgbuf_init(struct imsgbuf *ibuf, int sock)
{
	memset(ibuf, 0, sizeof(*ibuf));
	ibuf->sock = sock;
	ibuf->pid = (uint32_t)getpid();
	TAILQ_INIT(&ibuf->outq);
}

static void
imsg_out_free(struct imsg_out *out)
{
	if (out->fd != -1)
		close(out->fd);
	freezero(out->buf, out->len);
	free(out);
}

/* Drop everything queued and any unclaimed descriptor; the socket stays. */
void
imsgbuf_clear(struct imsgbuf *ibuf)
{
	struct imsg_out	*out;

	while ((out = TAILQ_FIRST(&ibuf->outq)) != NULL) {
		TAILQ_REMOVE(&ibuf->outq, out, entry);
		imsg_out_free(out);
	}
	ibuf->queued = 0;
	while (ibuf->nrfds > 0)
		if (ibuf->rfds[--ibuf->nrfds] >= 0)
			close(ibuf->rfds[ibuf->nrfds]);
	explicit_bzero(ibuf->rbuf, ibuf->rlen);
	ibuf->rpos += ibuf->rlen;
	ibuf->rlen = 0;
}

static void
put_u32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

static uint32_t
get_u32(const unsigned char *p)
{
	uint32_t	 v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * Queue one message.  Ownership of fd passes to the queue at once: it is
 * closed after it was sent, or on failure here.
 */
int
imsg_compose(struct imsgbuf *ibuf, uint32_t type, uint32_t peerid, int fd,
    const void *data, size_t len)
{
	struct imsg_out	*out;
	uint32_t	 wirelen;

	if (len > IMSG_MAX_PAYLOAD || (len > 0 && data == NULL)) {
		errno = EMSGSIZE;
		goto fail;
	}
	if (ibuf->queued + IMSG_HEADER_SIZE + len > IMSG_MAX_QUEUED) {
		errno = ENOBUFS;
		goto fail;
	}
	if ((out = calloc(1, sizeof(*out))) == NULL)
		goto fail;
	out->len = IMSG_HEADER_SIZE + len;
	if ((out->buf = malloc(out->len)) == NULL) {
		free(out);
		goto fail;
	}
	wirelen = (uint32_t)len | (fd != -1 ? IMSG_FD_MARK : 0);
	put_u32(out->buf, type);
	put_u32(out->buf + 4, wirelen);
	put_u32(out->buf + 8, peerid);
	put_u32(out->buf + 12, ibuf->pid);
	if (len > 0)
		memcpy(out->buf + IMSG_HEADER_SIZE, data, len);
	out->fd = fd;
	TAILQ_INSERT_TAIL(&ibuf->outq, out, entry);
	ibuf->queued += out->len;
	return 0;
fail:
	if (fd != -1) {
		int saved = errno;
		close(fd);
		errno = saved;
	}
	return -1;
}

int
imsgbuf_pending(const struct imsgbuf *ibuf)
{
	return !TAILQ_EMPTY(&ibuf->outq);
}

/*
 * Write as much queued output as the socket takes.  A descriptor goes out
 * alone with the first byte of its message, never batched with another.
 * Returns 0 (possibly with output left; EAGAIN is not an error) or -1.
 */
int
imsgbuf_write(struct imsgbuf *ibuf)
{
	struct imsg_out	*out;
	struct msghdr	 msg;
	struct iovec	 iov;
	struct cmsghdr	*cmsg;
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(sizeof(int))];
	} cmsgbuf;
	ssize_t		 n;

	while ((out = TAILQ_FIRST(&ibuf->outq)) != NULL) {
		memset(&msg, 0, sizeof(msg));
		iov.iov_base = out->buf + out->off;
		iov.iov_len = out->len - out->off;
		msg.msg_iov = &iov;
		msg.msg_iovlen = 1;
		if (out->fd != -1) {
			memset(&cmsgbuf, 0, sizeof(cmsgbuf));
			msg.msg_control = cmsgbuf.buf;
			msg.msg_controllen = sizeof(cmsgbuf.buf);
			cmsg = CMSG_FIRSTHDR(&msg);
			cmsg->cmsg_len = CMSG_LEN(sizeof(int));
			cmsg->cmsg_level = SOL_SOCKET;
			cmsg->cmsg_type = SCM_RIGHTS;
			memcpy(CMSG_DATA(cmsg), &out->fd, sizeof(int));
		}
		n = sendmsg(ibuf->sock, &msg, MSG_NOSIGNAL);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return -1;
		}
		if (out->fd != -1) {
			close(out->fd);
			out->fd = -1;
		}
		out->off += (size_t)n;
		ibuf->queued -= (size_t)n;
		if (out->off < out->len)
			continue;
		TAILQ_REMOVE(&ibuf->outq, out, entry);
		imsg_out_free(out);
	}
	return 0;
}

/* Write until the queue is empty, waiting for the socket if needed. */
int
imsgbuf_flush(struct imsgbuf *ibuf)
{
	while (imsgbuf_pending(ibuf)) {
		if (imsgbuf_write(ibuf) == -1)
			return -1;
		if (imsgbuf_pending(ibuf)) {
			struct pollfd	 pfd = { ibuf->sock, POLLOUT, 0 };

			/* A blocking wait is fine: used at start-up only. */
			if (poll(&pfd, 1, -1) == -1 && errno != EINTR)
				return -1;
		}
	}
	return 0;
}

/*
 * Keep a received descriptor, or the place of one the kernel could not
 * install (IMSG_FD_LOST), with the stream offset where its read ended.
 * Returns -1 when more are waiting than a peer may have in flight.
 */
static int
keep_fd(struct imsgbuf *ibuf, int fd, size_t n)
{
	if (ibuf->nrfds == IMSG_MAX_RFDS)
		return -1;
	ibuf->rfd_end[ibuf->nrfds] = ibuf->rpos + ibuf->rlen + n;
	ibuf->rfds[ibuf->nrfds++] = fd;
	return 0;
}

/*
 * Read what the socket has.  Returns the number of bytes read, 0 on EOF,
 * -1 on error (errno EAGAIN when nothing was there).  A descriptor that the
 * kernel dropped (MSG_CTRUNC with none installed: this process is out of
 * descriptors) is remembered as lost, so that imsg_get hands out its
 * message with fd_lost set rather than as one that carried none.  More
 * than one descriptor in one read is an error (EMSGSIZE): we never send
 * that.
 */
ssize_t
imsgbuf_read(struct imsgbuf *ibuf)
{
	struct msghdr	 msg;
	struct iovec	 iov;
	struct cmsghdr	*cmsg;
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(sizeof(int) * 4)];
	} cmsgbuf;
	ssize_t		 n;
	int		 fds[4], nfds, i, got = 0, overflow = 0;

	if (ibuf->rlen == sizeof(ibuf->rbuf)) {
		errno = ENOBUFS;
		return -1;
	}
	memset(&msg, 0, sizeof(msg));
	iov.iov_base = ibuf->rbuf + ibuf->rlen;
	iov.iov_len = sizeof(ibuf->rbuf) - ibuf->rlen;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cmsgbuf.buf;
	msg.msg_controllen = sizeof(cmsgbuf.buf);
	do {
		n = recvmsg(ibuf->sock, &msg, MSG_CMSG_CLOEXEC);
	} while (n == -1 && errno == EINTR);
	if (n <= 0)
		return n;
	for (cmsg = CMSG_FIRSTHDR(&msg); cmsg != NULL;
	    cmsg = CMSG_NXTHDR(&msg, cmsg)) {
		if (cmsg->cmsg_level != SOL_SOCKET ||
		    cmsg->cmsg_type != SCM_RIGHTS)
			continue;
		nfds = (int)((cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		if (nfds > 4)
			nfds = 4;
		memcpy(fds, CMSG_DATA(cmsg), sizeof(int) * (size_t)nfds);
		for (i = 0; i < nfds; i++) {
			/* One descriptor per sendmsg; extras are closed. */
			if (got++ == 0 &&
			    keep_fd(ibuf, fds[i], (size_t)n) == 0)
				continue;
			close(fds[i]);
			overflow = 1;
		}
	}
	/* Truncated with some installed: more were sent than one. */
	if ((msg.msg_flags & MSG_CTRUNC) && (got > 0 ||
	    keep_fd(ibuf, IMSG_FD_LOST, (size_t)n) == -1))
		overflow = 1;
	if (overflow) {
		errno = EMSGSIZE;
		return -1;
	}
	ibuf->rlen += (size_t)n;
	return n;
}

/*
 * The descriptor the message of total bytes at the head of the buffer
 * came with, or -1; -2 when one came with it against its header (a mark
 * without a descriptor, or a descriptor without a mark); IMSG_FD_LOST
 * when it came marked but the kernel dropped its descriptor.  A
 * descriptor belongs to the message whose bytes the read that brought
 * it ended in.
 */
static int
take_fd(struct imsgbuf *ibuf, size_t total, int marked)
{
	uint64_t	 start = ibuf->rpos, end = start + total;
	int		 fd;

	if (ibuf->nrfds == 0)
		return marked ? -2 : -1;
	/* Before this message: one that carried none brought it. */
	if (ibuf->rfd_end[0] <= start)
		return -2;
	if (ibuf->rfd_end[0] > end)
		return marked ? -2 : -1;
	if (!marked)
		return -2;
	fd = ibuf->rfds[0];
	memmove(ibuf->rfds, ibuf->rfds + 1, (ibuf->nrfds - 1) * sizeof(int));
	memmove(ibuf->rfd_end, ibuf->rfd_end + 1,
	    (ibuf->nrfds - 1) * sizeof(uint64_t));
	ibuf->nrfds--;
	return fd;
}

/*
 * Take the next complete message out of the read buffer.
 * Returns 1 with *imsg filled, 0 if more input is needed, -1 on a protocol
 * error (oversized length, a descriptor mark without a descriptor, or a
 * descriptor that came with a message not marked for one).  A marked
 * message whose descriptor the kernel dropped comes with fd -1 and
 * fd_lost set: which messages may lose one is the caller's to judge.
 */
int
imsg_get(struct imsgbuf *ibuf, struct imsg *imsg)
{
	uint32_t	 wirelen;
	size_t		 len, total;

	memset(imsg, 0, sizeof(*imsg));
	imsg->fd = -1;
	if (ibuf->rlen < IMSG_HEADER_SIZE)
		return 0;
	imsg->hdr.type = get_u32(ibuf->rbuf);
	wirelen = get_u32(ibuf->rbuf + 4);
	imsg->hdr.peerid = get_u32(ibuf->rbuf + 8);
	imsg->hdr.pid = get_u32(ibuf->rbuf + 12);
	len = wirelen & ~IMSG_FD_MARK;
	if (len > IMSG_MAX_PAYLOAD) {
		errno = EBADMSG;
		return -1;
	}
	total = IMSG_HEADER_SIZE + len;
	if (ibuf->rlen < total)
		return 0;
	imsg->fd = take_fd(ibuf, total, (wirelen & IMSG_FD_MARK) != 0);
	if (imsg->fd == -2) {
		imsg->fd = -1;
		errno = EBADMSG;
		return -1;
	}
	if (imsg->fd == IMSG_FD_LOST) {
		imsg->fd = -1;
		imsg->fd_lost = 1;
	}
	imsg->hdr.len = (uint32_t)len;
	imsg->len = len;
	if (len > 0) {
		if ((imsg->data = malloc(len)) == NULL) {
			if (imsg->fd != -1)
				close(imsg->fd);
			return -1;
		}
		memcpy(imsg->data, ibuf->rbuf + IMSG_HEADER_SIZE, len);
	}
	memmove(ibuf->rbuf, ibuf->rbuf + total, ibuf->rlen - total);
	ibuf->rlen -= total;
	ibuf->rpos += total;
	explicit_bzero(ibuf->rbuf + ibuf->rlen, total);
	return 1;
}

/* Claim the descriptor of a message; imsg_free will not close it then. */
int
imsg_take_fd(struct imsg *imsg)
{
	int	 fd = imsg->fd;

	imsg->fd = -1;
	return fd;
}

void
imsg_free(struct imsg *imsg)
{
	if (imsg->fd != -1)
		close(imsg->fd);
	imsg->fd = -1;
	freezero(imsg->data, imsg->len);
	imsg->data = NULL;
	imsg->len = 0;
}
