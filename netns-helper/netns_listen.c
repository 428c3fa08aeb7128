/*
 * NETNS_LISTEN {pid, container, port}: a TCP socket listening on
 * 127.0.0.1:port inside the network namespace of the container's first
 * process, passed back to managerd (common/msg.h).
 *
 * The pid comes from Docker's inspect, and the kernel may have given it
 * to another process since.  So the helper opens a pidfd of it first,
 * then checks that /proc/<pid>/cgroup names the container
 * (netns_cgroup.c), then that the pidfd's process still lives: if it
 * does, the file it read was its own.  Only then does a child of the
 * helper enter that process's namespace through the pidfd (the helper
 * itself never leaves the host's) and make the socket.  A pid that is
 * gone or is not the container's is no lie (Docker and the kernel race
 * managerd): it is an error reply, and the helper serves on.
 *
 * One request at a time, synchronously: it takes a fork and a few
 * system calls, and the child gives itself NETNS_CHILD_S at most with an
 * alarm.  The helper has no kill(2): as root it could signal any root
 * process on the host.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "egress_policy.h"
#include "ids.h"
#include "log.h"
#include "netns.h"
#include "netns_cgroup.h"

static int	 proc_dir = -1;

struct listen_req {
	uint32_t	 pid;
	char		*container;
	uint32_t	 port;
};

void
netns_listen_init(int procfd)
{
	proc_dir = procfd;
}

/* The request, whole and in range; anything else is a lie. */
static void
listen_req_get(struct peer *p, struct imsg *imsg, struct listen_req *q)
{
	struct msgr	 r;

	msgr_init(&r, imsg);
	q->pid = msgr_u32(&r);
	q->container = msgr_str(&r, CONTAINER_ID_LEN);
	q->port = msgr_u32(&r);
	if (msgr_end(&r) == -1 || q->container == NULL) {
		free(q->container);
		peer_bad_message(p, imsg, "malformed request");
	}
	/* Only the proxy's port: no other one is ever managerd's to ask. */
	if (q->pid == 0 || q->pid > INT32_MAX ||
	    q->pid == (uint32_t)getpid() || !id_is_container(q->container) ||
	    q->port != EGRESS_PORT) {
		free(q->container);
		peer_bad_message(p, imsg, "a pid, container or port out of "
		    "range");
	}
}

/* 1 if /proc/<pid>/cgroup names the container, 0 if not, -1 gone. */
static int
cgroup_names(uint32_t pid, const char *container)
{
	char	 path[32], text[NETNS_CGROUP_MAX + 1];
	size_t	 len = 0;
	ssize_t	 n;
	int	 fd;

	snprintf(path, sizeof(path), "%u/cgroup", pid);
	if ((fd = openat(proc_dir, path, O_RDONLY | O_CLOEXEC |
	    O_NOFOLLOW)) == -1)
		return -1;
	while (len < sizeof(text) &&
	    (n = read(fd, text + len, sizeof(text) - len)) > 0)
		len += (size_t)n;
	close(fd);
	return netns_cgroup_names(text, len, container);
}

/*
 * 1 if pid's network namespace is the helper's own, the host's: a
 * container run with --network host, where a listener would squat a
 * port of the host's loopback.  -1 if it cannot be seen (gone).
 */
static int
netns_is_ours(uint32_t pid)
{
	struct stat	 theirs, ours;
	char		 path[32];

	snprintf(path, sizeof(path), "%u/ns/net", pid);
	if (fstatat(proc_dir, path, &theirs, 0) == -1 ||
	    fstatat(proc_dir, "self/ns/net", &ours, 0) == -1)
		return -1;
	return theirs.st_dev == ours.st_dev && theirs.st_ino == ours.st_ino;
}

/* 1 while the pidfd's process lives: it polls readable once it ended. */
static int
pidfd_alive(int pidfd)
{
	struct pollfd	 pfd = { pidfd, POLLIN, 0 };

	return poll(&pfd, 1, 0) == 0;
}

/* In the child: the socket in the namespace, or errno, down sock. */
static __attribute__((noreturn)) void
listen_child(int pidfd, uint32_t port, int sock)
{
	struct sockaddr_in	 sin;
	struct msghdr		 msg;
	struct cmsghdr		*cm;
	struct iovec		 iov;
	union {
		struct cmsghdr	 hdr;
		char		 buf[CMSG_SPACE(sizeof(int))];
	} cbuf;
	int			 s = -1, err = 0, one = 1;

	/* Its own bound: the helper has no kill(2) (netns_seccomp.c). */
	alarm(NETNS_CHILD_S);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	/*
	 * SO_REUSEADDR, or the connections the last proxy closed (TIME_WAIT
	 * on port) would keep a new listener out after its restart.  It
	 * shares nothing with the sandbox: Linux refuses the bind while any
	 * socket listens there, and without SO_REUSEPORT on both sides.
	 */
	if (setns(pidfd, CLONE_NEWNET) == -1 ||
	    (s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == -1 ||
	    bind(s, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(s, NETNS_BACKLOG) == -1)
		err = errno;
	memset(&msg, 0, sizeof(msg));
	iov.iov_base = &err;
	iov.iov_len = sizeof(err);
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	if (err == 0) {
		memset(&cbuf, 0, sizeof(cbuf));
		msg.msg_control = cbuf.buf;
		msg.msg_controllen = sizeof(cbuf.buf);
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &s, sizeof(int));
	}
	_exit(sendmsg(sock, &msg, 0) == (ssize_t)sizeof(err) ? 0 : 1);
}

/* The child's answer: the socket, or -1 with errno (ETIMEDOUT: none). */
static int
listen_answer(int sock)
{
	struct pollfd	 pfd = { sock, POLLIN, 0 };
	struct msghdr	 msg;
	struct cmsghdr	*cm;
	struct iovec	 iov;
	union {
		struct cmsghdr	 hdr;
		char		 buf[CMSG_SPACE(sizeof(int))];
	} cbuf;
	int		 err = 0, fd = -1;

	if (poll(&pfd, 1, NETNS_CHILD_S * 1000 + 500) != 1) {
		errno = ETIMEDOUT;
		return -1;
	}
	memset(&msg, 0, sizeof(msg));
	iov.iov_base = &err;
	iov.iov_len = sizeof(err);
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cbuf.buf;
	msg.msg_controllen = sizeof(cbuf.buf);
	if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != (ssize_t)sizeof(err)) {
		errno = EPIPE;
		return -1;
	}
	if ((cm = CMSG_FIRSTHDR(&msg)) != NULL &&
	    cm->cmsg_type == SCM_RIGHTS &&
	    cm->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	if (err == 0 && fd != -1)
		return fd;
	if (fd != -1)
		close(fd);
	errno = err != 0 ? err : EPROTO;
	return -1;
}

/* A child enters the namespace; the socket it made, or -1 and errno. */
static int
listen_in(int pidfd, uint32_t port)
{
	pid_t	 child;
	int	 sv[2], fd, saved;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
		return -1;
	if ((child = fork()) == -1) {
		saved = errno;
		close(sv[0]);
		close(sv[1]);
		errno = saved;
		return -1;
	}
	if (child == 0) {
		close(sv[0]);
		listen_child(pidfd, port, sv[1]);
	}
	close(sv[1]);
	fd = listen_answer(sv[0]);
	saved = errno;
	close(sv[0]);
	/* It ends by itself within NETNS_CHILD_S: its alarm. */
	while (waitpid(child, NULL, 0) == -1 && errno == EINTR)
		;
	errno = saved;
	return fd;
}

static void
listen_failed(struct peer *p, uint32_t peerid, const struct listen_req *q,
    int errnum)
{
	if (errnum == EADDRINUSE)
		peer_send_error(p, peerid, ERR_CONFLICT, "127.0.0.1:%u is "
		    "already in use in the sandbox's network namespace",
		    q->port);
	else if (errnum == ESRCH)
		peer_send_error(p, peerid, ERR_NOT_FOUND, "pid %u is gone",
		    q->pid);
	else
		peer_send_error(p, peerid, ERR_BACKEND, "cannot listen in "
		    "the namespace of pid %u: %s", q->pid, strerror(errnum));
}

void
netns_listen(struct peer *p, struct imsg *imsg)
{
	struct listen_req	 q;
	uint32_t		 peerid = imsg->hdr.peerid;
	int			 pidfd, fd = -1, named, ours;

	listen_req_get(p, imsg, &q);
	if ((pidfd = (int)syscall(SYS_pidfd_open, (pid_t)q.pid, 0)) == -1) {
		listen_failed(p, peerid, &q, errno);
		goto done;
	}
	named = cgroup_names(q.pid, q.container);
	ours = netns_is_ours(q.pid);
	if (named == -1 || ours == -1 || !pidfd_alive(pidfd))
		listen_failed(p, peerid, &q, ESRCH);
	else if (named == 0)
		peer_send_error(p, peerid, ERR_NOT_FOUND, "pid %u is not the "
		    "process of container %.12s", q.pid, q.container);
	else if (ours)
		peer_send_error(p, peerid, ERR_FORBIDDEN, "container %.12s "
		    "shares the host's network namespace", q.container);
	else if ((fd = listen_in(pidfd, q.port)) == -1)
		listen_failed(p, peerid, &q, errno);
	else if (peer_send(p, MSG_NETNS_SOCKET, peerid, fd, NULL) == -1)
		fatalx("cannot queue NETNS_SOCKET");
	close(pidfd);
 done:
	free(q.container);
}
