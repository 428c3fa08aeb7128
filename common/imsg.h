/*
 * Framed messages over a stream socketpair, with descriptor passing:
 * our own implementation of the OpenBSD imsg wire semantics for Linux.
 *
 * Every message is a 16-byte header (type, length, peer id, pid) followed by
 * at most IMSG_MAX_PAYLOAD bytes.  The top bit of the length marks the one
 * message that owns a descriptor passed with SCM_RIGHTS on its first byte.
 * Output is queued and flushed when the socket is writable; input may hold
 * several messages or part of one.
 */
#ifndef AS_IMSG_H
#define AS_IMSG_H

#include <sys/queue.h>
#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#define IMSG_HEADER_SIZE	16
#define IMSG_MAX_PAYLOAD	16384
#define IMSG_FD_MARK		0x80000000U
/* In rfds: the place of a descriptor the kernel could not install. */
#define IMSG_FD_LOST		(-3)
/* Queued output beyond this is refused: a peer that stops reading is dead. */
#define IMSG_MAX_RFDS		8
#define IMSG_MAX_QUEUED		(4 * 1024 * 1024)

struct imsg_hdr {
	uint32_t	 type;
	uint32_t	 len;		/* payload length, plus IMSG_FD_MARK */
	uint32_t	 peerid;	/* request id */
	uint32_t	 pid;		/* sender's pid */
};

struct imsg {
	struct imsg_hdr	 hdr;
	int		 fd;		/* -1, or a descriptor we now own */
	int		 fd_lost;	/* marked, but the kernel dropped it */
	size_t		 len;		/* payload length */
	unsigned char	*data;		/* payload, NULL when len is 0 */
};

struct imsg_out {
	TAILQ_ENTRY(imsg_out)	 entry;
	unsigned char		*buf;
	size_t			 len;
	size_t			 off;	/* bytes already written */
	int			 fd;	/* sent with the first byte, then closed */
};

struct imsgbuf {
	int			 sock;
	uint32_t		 pid;
	unsigned char		 rbuf[IMSG_HEADER_SIZE + IMSG_MAX_PAYLOAD];
	size_t			 rlen;
	uint64_t		 rpos;	/* stream offset of rbuf[0] */
	/*
	 * Received descriptors, in order, not yet claimed by a header, each
	 * with the stream offset where the read that brought it ended: the
	 * kernel ends a read with the sendmsg that carried a descriptor, so
	 * that offset falls inside the message it was sent with.
	 */
	int			 rfds[IMSG_MAX_RFDS];
	uint64_t		 rfd_end[IMSG_MAX_RFDS];
	size_t			 nrfds;
	TAILQ_HEAD(, imsg_out)	 outq;
	size_t			 queued;
};

void	imsgbuf_init(struct imsgbuf *, int sock);
void	imsgbuf_clear(struct imsgbuf *);
int	imsg_compose(struct imsgbuf *, uint32_t type, uint32_t peerid,
	    int fd, const void *data, size_t len);
ssize_t	imsgbuf_read(struct imsgbuf *);
int	imsgbuf_write(struct imsgbuf *);
int	imsgbuf_flush(struct imsgbuf *);
int	imsgbuf_pending(const struct imsgbuf *);
int	imsg_get(struct imsgbuf *, struct imsg *);
int	imsg_take_fd(struct imsg *);
void	imsg_free(struct imsg *);

#endif /* AS_IMSG_H */
