/*
 * imsg framing over real socketpairs: partial reads, several messages per
 * read, bad headers, descriptor passing, dropped descriptors, and queued
 * output under EAGAIN.
 */
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "imsg.h"
#include "memcheck.h"

struct pair {
	int		 fds[2];
	struct imsgbuf	 a, b;
};

static int
pair_setup(void **state)
{
	struct pair	*p = calloc(1, sizeof(*p));

	assert_non_null(p);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0,
	    p->fds), 0);
	imsgbuf_init(&p->a, p->fds[0]);
	imsgbuf_init(&p->b, p->fds[1]);
	*state = p;
	return 0;
}

static int
pair_teardown(void **state)
{
	struct pair	*p = *state;

	imsgbuf_clear(&p->a);
	imsgbuf_clear(&p->b);
	close(p->fds[0]);
	close(p->fds[1]);
	free(p);
	return 0;
}

/* Write raw bytes to the socket, bypassing the framing. */
static void
raw_write(int fd, const void *buf, size_t len)
{
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
}

static void
make_header(unsigned char *h, uint32_t type, uint32_t len, uint32_t peerid)
{
	uint32_t	 pid = 42;

	memcpy(h, &type, 4);
	memcpy(h + 4, &len, 4);
	memcpy(h + 8, &peerid, 4);
	memcpy(h + 12, &pid, 4);
}

static void
test_roundtrip(void **state)
{
	struct pair	*p = *state;
	struct imsg	 imsg;

	assert_int_equal(imsg_compose(&p->a, 7, 99, -1, "hello", 5), 0);
	assert_int_equal(imsgbuf_write(&p->a), 0);
	assert_false(imsgbuf_pending(&p->a));
	assert_int_equal(imsgbuf_read(&p->b), IMSG_HEADER_SIZE + 5);
	assert_int_equal(imsg_get(&p->b, &imsg), 1);
	assert_int_equal(imsg.hdr.type, 7);
	assert_int_equal(imsg.hdr.peerid, 99);
	assert_int_equal(imsg.hdr.pid, getpid());
	assert_int_equal(imsg.len, 5);
	assert_int_equal(imsg.fd, -1);
	assert_memory_equal(imsg.data, "hello", 5);
	imsg_free(&imsg);
	assert_int_equal(imsg_get(&p->b, &imsg), 0);
}

static void
test_empty_payload(void **state)
{
	struct pair	*p = *state;
	struct imsg	 imsg;

	assert_int_equal(imsg_compose(&p->a, 3, 1, -1, NULL, 0), 0);
	assert_int_equal(imsgbuf_write(&p->a), 0);
	assert_int_equal(imsgbuf_read(&p->b), IMSG_HEADER_SIZE);
	assert_int_equal(imsg_get(&p->b, &imsg), 1);
	assert_int_equal(imsg.len, 0);
	assert_null(imsg.data);
	imsg_free(&imsg);
}

/* A message delivered one byte at a time is only complete at the end. */
static void
test_split_reads(void **state)
{
	struct pair	*p = *state;
	struct imsg	 imsg;
	unsigned char	 buf[IMSG_HEADER_SIZE + 10];
	size_t		 i;

	make_header(buf, 5, 10, 77);
	memcpy(buf + IMSG_HEADER_SIZE, "0123456789", 10);
	for (i = 0; i < sizeof(buf); i++) {
		assert_int_equal(imsg_get(&p->b, &imsg), 0);
		raw_write(p->fds[0], buf + i, 1);
		assert_int_equal(imsgbuf_read(&p->b), 1);
	}
	assert_int_equal(imsg_get(&p->b, &imsg), 1);
	assert_int_equal(imsg.hdr.type, 5);
	assert_int_equal(imsg.hdr.peerid, 77);
	assert_memory_equal(imsg.data, "0123456789", 10);
	imsg_free(&imsg);
}

static void
test_several_in_one_read(void **state)
{
	struct pair	*p = *state;
	struct imsg	 imsg;
	char		 payload[32];
	int		 i;

	for (i = 0; i < 20; i++) {
		snprintf(payload, sizeof(payload), "message %d", i);
		assert_int_equal(imsg_compose(&p->a, 100 + i, i, -1, payload,
		    strlen(payload)), 0);
	}
	assert_int_equal(imsgbuf_write(&p->a), 0);
	assert_true(imsgbuf_read(&p->b) > 0);
	for (i = 0; i < 20; i++) {
		snprintf(payload, sizeof(payload), "message %d", i);
		assert_int_equal(imsg_get(&p->b, &imsg), 1);
		assert_int_equal(imsg.hdr.type, 100 + i);
		assert_int_equal(imsg.len, strlen(payload));
		assert_memory_equal(imsg.data, payload, imsg.len);
		imsg_free(&imsg);
	}
	assert_int_equal(imsg_get(&p->b, &imsg), 0);
}

static void
test_max_payload(void **state)
{
	struct pair	*p = *state;
	struct imsg	 imsg;
	unsigned char	*big = malloc(IMSG_MAX_PAYLOAD + 1);
	ssize_t		 n;
	size_t		 got = 0;

	assert_non_null(big);
	memset(big, 0xab, IMSG_MAX_PAYLOAD + 1);
	assert_int_equal(imsg_compose(&p->a, 1, 0, -1, big,
	    IMSG_MAX_PAYLOAD + 1), -1);
	assert_int_equal(errno, EMSGSIZE);
	assert_int_equal(imsg_compose(&p->a, 1, 0, -1, big, IMSG_MAX_PAYLOAD),
	    0);
	assert_int_equal(imsgbuf_write(&p->a), 0);
	while (got < IMSG_HEADER_SIZE + IMSG_MAX_PAYLOAD) {
		n = imsgbuf_read(&p->b);
		assert_true(n > 0);
		got += (size_t)n;
	}
	assert_int_equal(imsg_get(&p->b, &imsg), 1);
	assert_int_equal(imsg.len, IMSG_MAX_PAYLOAD);
	assert_memory_equal(imsg.data, big, IMSG_MAX_PAYLOAD);
	imsg_free(&imsg);
	free(big);
}

/* A header claiming more than the maximum payload is a protocol error. */
static void
test_oversized_header_rejected(void **state)
{
	struct pair	*p = *state;
	struct imsg	 imsg;
	unsigned char	 h[IMSG_HEADER_SIZE];

	make_header(h, 1, IMSG_MAX_PAYLOAD + 1, 0);
	raw_write(p->fds[0], h, sizeof(h));
	assert_int_equal(imsgbuf_read(&p->b), IMSG_HEADER_SIZE);
	assert_int_equal(imsg_get(&p->b, &imsg), -1);
	assert_int_equal(errno, EBADMSG);
}

/* A truncated header never yields a message; the peer's EOF shows as 0. */
static void
test_truncated_header(void **state)
{
	struct pair	*p = *state;
	struct imsg	 imsg;
	unsigned char	 h[IMSG_HEADER_SIZE];

	make_header(h, 1, 4, 0);
	raw_write(p->fds[0], h, IMSG_HEADER_SIZE - 3);
	assert_int_equal(imsgbuf_read(&p->b), IMSG_HEADER_SIZE - 3);
	assert_int_equal(imsg_get(&p->b, &imsg), 0);
	shutdown(p->fds[0], SHUT_WR);
	assert_int_equal(imsgbuf_read(&p->b), 0);
	assert_int_equal(imsg_get(&p->b, &imsg), 0);
}

/* A header that says "fd" with no descriptor having arrived is an error. */
static void
test_fd_mark_without_fd(void **state)
{
	struct pair	*p = *state;
	struct imsg	 imsg;
	unsigned char	 h[IMSG_HEADER_SIZE];

	make_header(h, 1, IMSG_FD_MARK | 0, 0);
	raw_write(p->fds[0], h, sizeof(h));
	assert_int_equal(imsgbuf_read(&p->b), IMSG_HEADER_SIZE);
	assert_int_equal(imsg_get(&p->b, &imsg), -1);
	assert_int_equal(errno, EBADMSG);
}

/* Bytes with one descriptor in a single sendmsg, as a lying peer may. */
static void
raw_send_fd(int sock, const unsigned char *buf, size_t len, int fd)
{
	unsigned char	 copy[64];

	struct msghdr	 msg;
	struct iovec	 iov;
	struct cmsghdr	*cmsg;
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(sizeof(int))];
	} cmsgbuf;

	memset(&msg, 0, sizeof(msg));
	memset(&cmsgbuf, 0, sizeof(cmsgbuf));
	assert_true(len <= sizeof(copy));
	memcpy(copy, buf, len);
	iov.iov_base = copy;
	iov.iov_len = len;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cmsgbuf.buf;
	msg.msg_controllen = sizeof(cmsgbuf.buf);
	cmsg = CMSG_FIRSTHDR(&msg);
	cmsg->cmsg_len = CMSG_LEN(sizeof(int));
	cmsg->cmsg_level = SOL_SOCKET;
	cmsg->cmsg_type = SCM_RIGHTS;
	memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
	assert_int_equal(sendmsg(sock, &msg, 0), (ssize_t)len);
}

static void
read_all(struct imsgbuf *ibuf)
{
	while (imsgbuf_read(ibuf) > 0)
		;
}

/*
 * A descriptor sent with a message whose header says it carries none is
 * not kept for the next message that says it does: the first is refused.
 */
static void
test_fd_with_unmarked_message(void **state)
{
	struct pair	*p = *state;
	struct imsg	 imsg;
	unsigned char	 m[2][IMSG_HEADER_SIZE];

	make_header(m[0], 1, 0, 0);
	make_header(m[1], 2, IMSG_FD_MARK | 0, 0);
	raw_send_fd(p->fds[0], m[0], sizeof(m[0]), STDIN_FILENO);
	raw_write(p->fds[0], m[1], sizeof(m[1]));
	read_all(&p->b);
	assert_int_equal(imsg_get(&p->b, &imsg), -1);
	assert_int_equal(errno, EBADMSG);
}

/* Nor with the last byte of an unmarked message. */
static void
test_fd_with_last_byte(void **state)
{
	struct pair	*p = *state;
	struct imsg	 imsg;
	unsigned char	 m[IMSG_HEADER_SIZE + 4];

	make_header(m, 1, 4, 0);
	memcpy(m + IMSG_HEADER_SIZE, "abcd", 4);
	raw_write(p->fds[0], m, sizeof(m) - 1);
	assert_int_equal(imsgbuf_read(&p->b), (ssize_t)sizeof(m) - 1);
	raw_send_fd(p->fds[0], m + sizeof(m) - 1, 1, STDIN_FILENO);
	read_all(&p->b);
	assert_int_equal(imsg_get(&p->b, &imsg), -1);
	assert_int_equal(errno, EBADMSG);
}

/*
 * Honest peers interleave: unmarked, marked with its descriptor, the same
 * again, the marked ones split across sends; each gets its own, whatever
 * reads the kernel makes of it.
 */
static void
test_fd_interleaved(void **state)
{
	struct pair	*p = *state;
	struct imsg	 imsg;
	unsigned char	 plain[IMSG_HEADER_SIZE], marked[IMSG_HEADER_SIZE + 8];
	struct stat	 st[2], got;
	int		 fds[2], i;

	fds[0] = open("/dev/null", O_RDONLY);
	fds[1] = open("/", O_RDONLY | O_DIRECTORY);
	assert_true(fds[0] >= 0 && fds[1] >= 0);
	make_header(plain, 1, 0, 0);
	make_header(marked, 2, IMSG_FD_MARK | 8, 0);
	memcpy(marked + IMSG_HEADER_SIZE, "12345678", 8);
	for (i = 0; i < 2; i++) {
		assert_int_equal(fstat(fds[i], &st[i]), 0);
		raw_write(p->fds[0], plain, sizeof(plain));
		raw_send_fd(p->fds[0], marked, 5, fds[i]);
		raw_write(p->fds[0], marked + 5, sizeof(marked) - 5);
		close(fds[i]);
	}
	read_all(&p->b);
	for (i = 0; i < 2; i++) {
		assert_int_equal(imsg_get(&p->b, &imsg), 1);
		assert_int_equal(imsg.hdr.type, 1);
		assert_int_equal(imsg.fd, -1);
		imsg_free(&imsg);
		assert_int_equal(imsg_get(&p->b, &imsg), 1);
		assert_int_equal(imsg.hdr.type, 2);
		assert_true(imsg.fd >= 0);
		assert_int_equal(fstat(imsg.fd, &got), 0);
		assert_int_equal(got.st_ino, st[i].st_ino);
		assert_int_equal(got.st_dev, st[i].st_dev);
		imsg_free(&imsg);
	}
	assert_int_equal(imsg_get(&p->b, &imsg), 0);
}

static void
test_fd_passing(void **state)
{
	struct pair	*p = *state;
	struct imsg	 imsg;
	struct stat	 want, got;
	char		 path[] = "/tmp/test_imsg.XXXXXX";
	int		 fd, fd2;

	fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(fstat(fd, &want), 0);
	fd2 = dup(fd);
	assert_int_equal(imsg_compose(&p->a, 9, 1, fd, "x", 1), 0);
	assert_int_equal(imsg_compose(&p->a, 10, 2, -1, "y", 1), 0);
	assert_int_equal(imsgbuf_write(&p->a), 0);
	/* The sender's copy is closed once sent: ownership moved. */
	assert_int_equal(fcntl(fd, F_GETFD), -1);
	while (imsgbuf_read(&p->b) > 0)
		;
	assert_int_equal(imsg_get(&p->b, &imsg), 1);
	assert_int_equal(imsg.hdr.type, 9);
	assert_true(imsg.fd >= 0);
	assert_int_equal(fstat(imsg.fd, &got), 0);
	assert_int_equal(got.st_ino, want.st_ino);
	assert_int_equal(got.st_dev, want.st_dev);
	/* Received descriptors must not leak into an exec. */
	assert_true(fcntl(imsg.fd, F_GETFD) & FD_CLOEXEC);
	fd = imsg.fd;
	imsg_free(&imsg);	/* unclaimed: closed */
	assert_int_equal(fcntl(fd, F_GETFD), -1);
	assert_int_equal(imsg_get(&p->b, &imsg), 1);
	assert_int_equal(imsg.hdr.type, 10);
	assert_int_equal(imsg.fd, -1);
	imsg_free(&imsg);
	close(fd2);
}

static void
test_take_fd(void **state)
{
	struct pair	*p = *state;
	struct imsg	 imsg;
	int		 fds[2], fd;

	assert_int_equal(pipe(fds), 0);
	assert_int_equal(imsg_compose(&p->a, 1, 0, fds[1], NULL, 0), 0);
	assert_int_equal(imsgbuf_write(&p->a), 0);
	assert_true(imsgbuf_read(&p->b) > 0);
	assert_int_equal(imsg_get(&p->b, &imsg), 1);
	fd = imsg_take_fd(&imsg);
	imsg_free(&imsg);
	/* Still open after free, and it is the pipe's write end. */
	assert_int_equal(write(fd, "z", 1), 1);
	close(fd);
	assert_int_equal(read(fds[0], &fd, 1), 1);
	close(fds[0]);
}

/*
 * Two descriptor-carrying messages each get their own descriptor even when
 * both are read before either is parsed.
 */
static void
test_two_fds_in_order(void **state)
{
	struct pair	*p = *state;
	struct imsg	 m1, m2;
	int		 f1[2], f2[2];
	char		 c;

	assert_int_equal(pipe(f1), 0);
	assert_int_equal(pipe(f2), 0);
	assert_int_equal(imsg_compose(&p->a, 1, 0, f1[1], NULL, 0), 0);
	assert_int_equal(imsg_compose(&p->a, 2, 0, f2[1], NULL, 0), 0);
	assert_int_equal(imsgbuf_write(&p->a), 0);
	while (imsgbuf_read(&p->b) > 0)
		;
	assert_int_equal(imsg_get(&p->b, &m1), 1);
	assert_int_equal(imsg_get(&p->b, &m2), 1);
	assert_int_equal(write(m1.fd, "1", 1), 1);
	assert_int_equal(write(m2.fd, "2", 1), 1);
	assert_int_equal(read(f1[0], &c, 1), 1);
	assert_int_equal(c, '1');
	assert_int_equal(read(f2[0], &c, 1), 1);
	assert_int_equal(c, '2');
	imsg_free(&m1);
	imsg_free(&m2);
	close(f1[0]);
	close(f2[0]);
}

/*
 * Lower the soft limit so that only spare descriptor slots are free:
 * every slot below the new limit but the last spare ones is taken.
 */
static void
limit_slots(struct rlimit *saved, int spare)
{
	struct rlimit	 low;
	int		 fd;

	assert_int_equal(getrlimit(RLIMIT_NOFILE, saved), 0);
	low = *saved;
	for (fd = 0; fcntl(fd, F_GETFD) != -1; fd++)
		;
	low.rlim_cur = (rlim_t)(fd + spare);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
}

static void
unlimit_slots(const struct rlimit *saved)
{
	assert_int_equal(setrlimit(RLIMIT_NOFILE, saved), 0);
}

/*
 * With no free descriptor slot the kernel drops a passed descriptor and
 * only says MSG_CTRUNC: its message comes out whole, marked fd_lost, and
 * the stream goes on; once a slot is free descriptors arrive again.
 */
static void
test_ctrunc_is_lost(void **state)
{
	struct pair	*p = *state;
	struct imsg	 imsg;
	struct rlimit	 saved;
	int		 fds[2];

	/*
	 * valgrind keeps RLIMIT_NOFILE to itself: setrlimit changes only the
	 * limit it shows the program, the kernel's slots stay free.
	 */
	SKIP_UNDER_MEMCHECK("it emulates the descriptor limit");
	assert_int_equal(pipe(fds), 0);
	assert_int_equal(imsg_compose(&p->a, 7, 3, dup(fds[1]), "xy", 2), 0);
	assert_int_equal(imsg_compose(&p->a, 8, 4, -1, "z", 1), 0);
	assert_int_equal(imsgbuf_write(&p->a), 0);
	limit_slots(&saved, 0);
	read_all(&p->b);
	unlimit_slots(&saved);
	assert_int_equal(imsg_get(&p->b, &imsg), 1);
	assert_int_equal(imsg.hdr.type, 7);
	assert_int_equal(imsg.hdr.peerid, 3);
	assert_int_equal(imsg.fd, -1);
	assert_int_equal(imsg.fd_lost, 1);
	assert_memory_equal(imsg.data, "xy", 2);
	imsg_free(&imsg);
	assert_int_equal(imsg_get(&p->b, &imsg), 1);
	assert_int_equal(imsg.hdr.type, 8);
	assert_int_equal(imsg.fd_lost, 0);
	imsg_free(&imsg);
	assert_int_equal(imsg_compose(&p->a, 9, 5, fds[1], "w", 1), 0);
	assert_int_equal(imsgbuf_write(&p->a), 0);
	read_all(&p->b);
	assert_int_equal(imsg_get(&p->b, &imsg), 1);
	assert_int_equal(imsg.hdr.type, 9);
	assert_true(imsg.fd >= 0);
	assert_int_equal(imsg.fd_lost, 0);
	imsg_free(&imsg);
	close(fds[0]);
}

/* A dropped descriptor is still one on a message marked for none. */
static void
test_ctrunc_unmarked(void **state)
{
	struct pair	*p = *state;
	struct imsg	 imsg;
	struct rlimit	 saved;
	unsigned char	 h[IMSG_HEADER_SIZE];

	make_header(h, 1, 0, 0);
	raw_send_fd(p->fds[0], h, sizeof(h), STDIN_FILENO);
	limit_slots(&saved, 0);
	read_all(&p->b);
	unlimit_slots(&saved);
	assert_int_equal(imsg_get(&p->b, &imsg), -1);
	assert_int_equal(errno, EBADMSG);
}

/*
 * Two descriptors in one sendmsg with room for one: the kernel installs
 * the first and truncates.  That is a peer sending extras, still an
 * error (the caller's to make fatal), not a descriptor lost.
 */
static void
test_ctrunc_extra_fds(void **state)
{
	struct pair	*p = *state;
	struct rlimit	 saved;
	struct msghdr	 msg;
	struct iovec	 iov;
	struct cmsghdr	*cmsg;
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(sizeof(int) * 2)];
	} cmsgbuf;
	unsigned char	 h[IMSG_HEADER_SIZE];
	int		 two[2] = { STDIN_FILENO, STDERR_FILENO };

	make_header(h, 1, IMSG_FD_MARK, 0);
	memset(&msg, 0, sizeof(msg));
	memset(&cmsgbuf, 0, sizeof(cmsgbuf));
	iov.iov_base = h;
	iov.iov_len = sizeof(h);
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cmsgbuf.buf;
	msg.msg_controllen = sizeof(cmsgbuf.buf);
	cmsg = CMSG_FIRSTHDR(&msg);
	cmsg->cmsg_len = CMSG_LEN(sizeof(two));
	cmsg->cmsg_level = SOL_SOCKET;
	cmsg->cmsg_type = SCM_RIGHTS;
	memcpy(CMSG_DATA(cmsg), two, sizeof(two));
	assert_int_equal(sendmsg(p->fds[0], &msg, 0), (ssize_t)sizeof(h));
	limit_slots(&saved, 1);
	errno = 0;
	assert_int_equal(imsgbuf_read(&p->b), -1);
	assert_int_equal(errno, EMSGSIZE);
	unlimit_slots(&saved);
}

/* Output that the socket cannot take yet stays queued, in order. */
static void
test_queued_output_eagain(void **state)
{
	struct pair	*p = *state;
	struct imsg	 imsg;
	unsigned char	*buf = malloc(IMSG_MAX_PAYLOAD);
	uint32_t	 sent = 0, recvd = 0;
	int		 i, r;

	assert_non_null(buf);
	memset(buf, 0x5a, IMSG_MAX_PAYLOAD);
	/* Far more than a socket buffer holds. */
	for (i = 0; i < 200; i++)
		assert_int_equal(imsg_compose(&p->a, 1, sent++, -1, buf,
		    IMSG_MAX_PAYLOAD), 0);
	assert_int_equal(imsgbuf_write(&p->a), 0);
	assert_true(imsgbuf_pending(&p->a));
	while (recvd < sent) {
		assert_int_equal(imsgbuf_write(&p->a), 0);
		if (imsgbuf_read(&p->b) == -1)
			assert_int_equal(errno, EAGAIN);
		while ((r = imsg_get(&p->b, &imsg)) == 1) {
			assert_int_equal(imsg.hdr.peerid, recvd);
			assert_int_equal(imsg.len, IMSG_MAX_PAYLOAD);
			recvd++;
			imsg_free(&imsg);
		}
		assert_int_equal(r, 0);
	}
	assert_false(imsgbuf_pending(&p->a));
	free(buf);
}

/* A peer that never reads cannot make us queue without bound. */
static void
test_queue_limit(void **state)
{
	struct pair	*p = *state;
	unsigned char	*buf = calloc(1, IMSG_MAX_PAYLOAD);
	int		 i, rc = 0, fds[2];

	assert_non_null(buf);
	for (i = 0; i < 1000 && rc == 0; i++)
		rc = imsg_compose(&p->a, 1, 0, -1, buf, IMSG_MAX_PAYLOAD);
	assert_int_equal(rc, -1);
	assert_int_equal(errno, ENOBUFS);
	assert_true(p->a.queued <= IMSG_MAX_QUEUED);
	/* A refused message's descriptor is closed, not leaked. */
	assert_int_equal(pipe(fds), 0);
	assert_int_equal(imsg_compose(&p->a, 1, 0, fds[1], buf,
	    IMSG_MAX_PAYLOAD), -1);
	assert_int_equal(fcntl(fds[1], F_GETFD), -1);
	close(fds[0]);
	free(buf);
}

static void
test_write_to_closed_peer(void **state)
{
	struct pair	*p = *state;

	close(p->fds[1]);
	p->fds[1] = -1;
	assert_int_equal(imsg_compose(&p->a, 1, 0, -1, "x", 1), 0);
	assert_int_equal(imsgbuf_write(&p->a), -1);
	assert_int_equal(errno, EPIPE);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_roundtrip, pair_setup,
		    pair_teardown),
		cmocka_unit_test_setup_teardown(test_empty_payload, pair_setup,
		    pair_teardown),
		cmocka_unit_test_setup_teardown(test_split_reads, pair_setup,
		    pair_teardown),
		cmocka_unit_test_setup_teardown(test_several_in_one_read,
		    pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(test_max_payload, pair_setup,
		    pair_teardown),
		cmocka_unit_test_setup_teardown(test_oversized_header_rejected,
		    pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(test_truncated_header,
		    pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(test_fd_mark_without_fd,
		    pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(test_fd_with_unmarked_message,
		    pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(test_fd_with_last_byte,
		    pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(test_fd_interleaved,
		    pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(test_fd_passing, pair_setup,
		    pair_teardown),
		cmocka_unit_test_setup_teardown(test_take_fd, pair_setup,
		    pair_teardown),
		cmocka_unit_test_setup_teardown(test_two_fds_in_order,
		    pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(test_ctrunc_is_lost,
		    pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(test_ctrunc_unmarked,
		    pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(test_ctrunc_extra_fds,
		    pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(test_queued_output_eagain,
		    pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(test_queue_limit, pair_setup,
		    pair_teardown),
		cmocka_unit_test_setup_teardown(test_write_to_closed_peer,
		    pair_setup, pair_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
