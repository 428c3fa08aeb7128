/*
 * dockerd-proxy's system call allowlist.  As a pledge line:
 *
 *	pledge("stdio unix recvfd sendfd", NULL) where unix is only
 *	socket(AF_UNIX, SOCK_STREAM) and connect(2); no openat after start,
 *	no exec, no signals to anyone.
 *
 * seccomp cannot see the path given to connect(2): proxy_jail.c makes
 * /docker.sock the only socket there is to reach.  Measured with strace
 * -f over start-up, GET /healthz (a Docker ping), every operation of
 * tests/integration/test_proxy_ops.py (create, destroy, state, list,
 * exec with its output pipe, timeouts, cancels, archive get into a pipe,
 * archive put from a pipe or a regular file), of test_proxy_processes.py
 * (processes with and without a tty, their stdin and its end, signals,
 * resizes, inspects) and shutdown.  Timers are epoll_wait timeouts; exec
 * output and archives go to their pipe with writev; an uploaded tar is
 * read with read(2), the same as a socket.
 */
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <fcntl.h>

#include "seccomp.h"

static const struct seccomp_rule proxy_rules[] = {
	/* The event loop; the backend is pinned to epoll in proxy.c. */
	SC_ALLOW(epoll_wait),
	SC_ALLOW(epoll_pwait),
	SC_ALLOW(epoll_ctl),
	/* imsg with managerd, which passes descriptors (SCM_RIGHTS). */
	SC_ALLOW(sendmsg),
	SC_ALLOW(recvmsg),
	/* One stream connection to the Docker socket per request. */
	SC_ALLOW_ARG2(socket, SC_ARG_EQ(0, AF_UNIX),
	    SC_ARG_MASKED_EQ(1, 0xf, SOCK_STREAM)),
	SC_ALLOW(connect),
	/* A process's stdin ends with a half-close of its exec's stream. */
	SC_ALLOW_ARG(shutdown, SC_ARG_EQ(1, SHUT_WR)),
	/*
	 * A process's socket from managerd must be a unix stream socket:
	 * its family, then its type.  Nothing else of getsockopt.
	 */
	SC_ALLOW_ARG2(getsockopt, SC_ARG_EQ(1, SOL_SOCKET),
	    SC_ARG_EQ(2, SO_DOMAIN)),
	SC_ALLOW_ARG2(getsockopt, SC_ARG_EQ(1, SOL_SOCKET),
	    SC_ARG_EQ(2, SO_TYPE)),
	/*
	 * GET /metrics: the resident set from /proc/self/statm, opened
	 * before the jail and read at offset 0 on each scrape.
	 */
	SC_ALLOW(pread64),
	/* HTTP to and from dockerd through bufferevents. */
	SC_ALLOW(read),
	SC_ALLOW(readv),
	SC_ALLOW(writev),
	SC_ALLOW_ARG(ioctl, SC_ARG_EQ(1, FIONREAD)),
	/* Making a passed pipe non-blocking; nothing else of fcntl. */
	SC_ALLOW_ARG(fcntl, SC_ARG_EQ(1, F_GETFL)),
	SC_ALLOW_ARG(fcntl, SC_ARG_EQ(1, F_SETFL)),
};

int
proxy_seccomp_load(enum seccomp_mode mode)
{
	return seccomp_install("dockerd-proxy", proxy_rules,
	    SC_NELEM(proxy_rules), mode);
}

/* What the spawner's filter must allow as well (see seccomp.h). */
struct seccomp_table
proxy_seccomp_table(void)
{
	struct seccomp_table	 t = { proxy_rules, SC_NELEM(proxy_rules) };

	return t;
}
