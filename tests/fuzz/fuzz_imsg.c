/*
 * The imsg framing (common/imsg.c).  Input: a byte seeding the splits (its
 * top bit: the reader is out of descriptors), a byte of which messages
 * get a descriptor, then what a peer wrote.
 *
 * First the reader on its own: the bytes go into the read buffer in
 * pieces, as recvmsg would put them, and imsg_get takes messages out.
 * However the bytes are cut, the same messages (each exactly its bytes in
 * the input) and the same protocol error must come out, and a mark of a
 * descriptor that never came is an error, never a message.  Then the
 * messages go through a real socketpair, some with a descriptor: each
 * must come out as it went in, with its own descriptor, and no
 * descriptor may be left open.  A reader out of descriptors (its
 * RLIMIT_NOFILE at its lowest free one while it reads) gets each message
 * whole all the same, marked fd_lost where one was sent, never a
 * descriptor, and the stream goes on.
 */
#include <sys/resource.h>
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "imsg.h"
#include "harness.h"

#define MAX_MSGS	64

struct parsed {
	struct imsg	 msg[MAX_MSGS];
	size_t		 n;
	int		 error;
	size_t		 fed;
};

/* imsgbuf_read without the socket: as much of len as the buffer takes. */
static size_t
feed(struct imsgbuf *ib, const uint8_t *data, size_t len)
{
	size_t	 room = sizeof(ib->rbuf) - ib->rlen;

	if (len > room)
		len = room;
	memcpy(ib->rbuf + ib->rlen, data, len);
	ib->rlen += len;
	return len;
}

static void
parse(const uint8_t *data, size_t len, struct splitter *sp, struct parsed *p)
{
	struct imsgbuf	 ib;
	size_t		 piece, n;
	int		 rc = 0;

	memset(p, 0, sizeof(*p));
	imsgbuf_init(&ib, -1);
	while (len > 0 && !p->error && p->n < MAX_MSGS) {
		piece = sp != NULL ? splitter_next(sp, len) : len;
		n = feed(&ib, data, piece);
		/* A full buffer without a whole message: the peer lied. */
		if (n == 0)
			break;
		data += n;
		len -= n;
		p->fed += n;
		while (p->n < MAX_MSGS &&
		    (rc = imsg_get(&ib, &p->msg[p->n])) == 1) {
			CHECK(p->msg[p->n].fd == -1);
			p->n++;
		}
		if (p->n < MAX_MSGS && rc == -1)
			p->error = 1;
	}
	imsgbuf_clear(&ib);
}

/* The messages come out of the input in order, each its own bytes. */
static void
check_parsed(const uint8_t *data, const struct parsed *p)
{
	const struct imsg	*m;
	size_t			 i, off = 0;
	uint32_t		 len;

	for (i = 0; i < p->n; i++) {
		m = &p->msg[i];
		memcpy(&len, data + off + 4, sizeof(len));
		CHECK(!(len & IMSG_FD_MARK) && len <= IMSG_MAX_PAYLOAD);
		CHECK(m->len == len && m->hdr.len == len);
		CHECK(memcmp(&m->hdr.type, data + off, 4) == 0);
		CHECK(memcmp(&m->hdr.peerid, data + off + 8, 4) == 0);
		CHECK(memcmp(&m->hdr.pid, data + off + 12, 4) == 0);
		CHECK(len == 0 || memcmp(m->data, data + off +
		    IMSG_HEADER_SIZE, len) == 0);
		off += IMSG_HEADER_SIZE + len;
	}
}

/* Any descriptor will do for passing; stdin may be closed. */
static int
devnull(void)
{
	static int	 fd = -1;

	if (fd == -1)
		CHECK((fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) != -1);
	return fd;
}

static int
lowest_free_fd(void)
{
	int	 fd;

	CHECK((fd = dup(devnull())) != -1);
	close(fd);
	return fd;
}

/* imsgbuf_read, with no descriptor to be had if starved. */
static void
read_maybe_starved(struct imsgbuf *r, int starved)
{
	struct rlimit	 saved, none;
	ssize_t		 n;

	if (starved) {
		CHECK(getrlimit(RLIMIT_NOFILE, &saved) == 0);
		none = saved;
		none.rlim_cur = (rlim_t)lowest_free_fd();
		CHECK(setrlimit(RLIMIT_NOFILE, &none) == 0);
	}
	n = imsgbuf_read(r);
	if (starved)
		CHECK(setrlimit(RLIMIT_NOFILE, &saved) == 0);
	if (n == -1)
		CHECK(errno == EAGAIN);
}

/* The parsed messages through a socketpair; bit i of fds: one for i. */
static void
transport(const struct parsed *p, unsigned int fds, int starved)
{
	struct imsgbuf	 w, r;
	struct imsg	 got;
	size_t		 i = 0, sent = 0;
	int		 sv[2], fd, rc = 0, had;

	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) == 0);
	imsgbuf_init(&w, sv[0]);
	imsgbuf_init(&r, sv[1]);
	while (i < p->n) {
		if (sent < p->n) {
			fd = (fds >> (sent % 8)) & 1 ? dup(devnull()) : -1;
			CHECK(imsg_compose(&w, p->msg[sent].hdr.type,
			    p->msg[sent].hdr.peerid, fd, p->msg[sent].data,
			    p->msg[sent].len) == 0);
			sent++;
		}
		CHECK(imsgbuf_write(&w) == 0);
		read_maybe_starved(&r, starved);
		while (i < p->n && (rc = imsg_get(&r, &got)) == 1) {
			had = (fds >> (i % 8)) & 1;
			CHECK(got.hdr.type == p->msg[i].hdr.type);
			CHECK(got.hdr.peerid == p->msg[i].hdr.peerid);
			CHECK(got.len == p->msg[i].len);
			CHECK(got.len == 0 ||
			    memcmp(got.data, p->msg[i].data, got.len) == 0);
			CHECK((got.fd != -1) == (had && !starved));
			CHECK(got.fd_lost == (had && starved));
			CHECK(got.fd == -1 || fcntl(got.fd, F_GETFD) != -1);
			imsg_free(&got);
			i++;
		}
		CHECK(rc != -1);
	}
	CHECK(!imsgbuf_pending(&w) && r.rlen == 0 && r.nrfds == 0);
	imsgbuf_clear(&w);
	imsgbuf_clear(&r);
	close(sv[0]);
	close(sv[1]);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	static struct parsed	 whole, split;
	struct splitter		 sp;
	unsigned int		 fds;
	size_t			 i;
	int			 lowest;

	if (len < 2)
		return 0;
	splitter_init(&sp, data[0], 1 + data[0] % 64);
	fds = data[1];
	data += 2;
	len -= 2;
	lowest = lowest_free_fd();	/* after devnull()'s own */
	parse(data, len, NULL, &whole);
	parse(data, len, &sp, &split);
	CHECK(whole.n == split.n && whole.error == split.error);
	check_parsed(data, &whole);
	check_parsed(data, &split);
	transport(&whole, fds, data[-2] & 0x80);
	for (i = 0; i < whole.n; i++) {
		imsg_free(&whole.msg[i]);
		imsg_free(&split.msg[i]);
	}
	CHECK(lowest_free_fd() == lowest);
	return 0;
}
