/*
 * egress-proxy's system call allowlist.  As a pledge line:
 *
 *	pledge("stdio inet dns recvfd", NULL) where inet is only
 *	socket(AF_INET or AF_INET6, SOCK_STREAM, 0) and connect(2), accept
 *	on the listeners managerd passes, and dns is the UDP sockets evdns
 *	opened before the jail; no openat, no exec, no signals.
 *
 * The netlink socket that reports the host's new addresses was opened
 * before the jail; only recvfrom is needed on it.  Measured with strace
 * -f over start-up and tests/integration/test_egress_proxy.py.
 */
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <fcntl.h>
#include <string.h>

#include <seccomp.h>

static const struct seccomp_rule egress_rules[] = {
	/* The event loop; the backend is pinned to epoll (proc.c). */
	SC_ALLOW(epoll_wait),
	SC_ALLOW(epoll_pwait),
	SC_ALLOW(epoll_ctl),
	/* imsg with managerd, which passes the listeners (SCM_RIGHTS). */
	SC_ALLOW(sendmsg),
	SC_ALLOW(recvmsg),
	/* A sandbox's connections on its listener. */
	SC_ALLOW(accept4),
	SC_ALLOW(accept),
	/* Upstream: TCP only (not MPTCP, not raw, not UDP). */
	SC_ALLOW_ARG3(socket, SC_ARG_EQ(0, AF_INET),
	    SC_ARG_MASKED_EQ(1, 0xf, SOCK_STREAM), SC_ARG_EQ(2, 0)),
	SC_ALLOW_ARG3(socket, SC_ARG_EQ(0, AF_INET6),
	    SC_ARG_MASKED_EQ(1, 0xf, SOCK_STREAM), SC_ARG_EQ(2, 0)),
	SC_ALLOW(connect),
	/* How a non-blocking connect ended. */
	SC_ALLOW_ARG2(getsockopt, SC_ARG_EQ(1, SOL_SOCKET),
	    SC_ARG_EQ(2, SO_ERROR)),
	/* A listener from managerd must be a listening inet socket. */
	SC_ALLOW_ARG2(getsockopt, SC_ARG_EQ(1, SOL_SOCKET),
	    SC_ARG_EQ(2, SO_ACCEPTCONN)),
	SC_ALLOW_ARG2(getsockopt, SC_ARG_EQ(1, SOL_SOCKET),
	    SC_ARG_EQ(2, SO_DOMAIN)),
	/* A tunnel's end goes on as a half-close; a refusal's too. */
	SC_ALLOW_ARG(shutdown, SC_ARG_EQ(1, SHUT_WR)),
	/* Relayed bytes through bufferevents (FIONREAD sizes a read). */
	SC_ALLOW(read),
	SC_ALLOW(readv),
	SC_ALLOW(writev),
	SC_ALLOW_ARG(ioctl, SC_ARG_EQ(1, FIONREAD)),
	/* evdns's UDP sockets, and the netlink socket's messages. */
	SC_ALLOW(sendto),
	SC_ALLOW(recvfrom),
	/* Making sockets non-blocking; nothing else of fcntl. */
	SC_ALLOW_ARG(fcntl, SC_ARG_EQ(1, F_GETFL)),
	SC_ALLOW_ARG(fcntl, SC_ARG_EQ(1, F_SETFL)),
	SC_ALLOW_ARG(fcntl, SC_ARG_EQ(1, F_GETFD)),
	SC_ALLOW_ARG(fcntl, SC_ARG_EQ(1, F_SETFD)),
};

int
egress_seccomp_load(enum seccomp_mode mode)
{
	return seccomp_install("egress-proxy", egress_rules,
	    SC_NELEM(egress_rules), mode);
}

/* What the spawner's filter must allow as well (see seccomp.h). */
struct seccomp_table
egress_seccomp_table(void)
{
	struct seccomp_table	 t = { egress_rules, SC_NELEM(egress_rules) };

	return t;
}
