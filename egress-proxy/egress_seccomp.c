/*
 * egress-proxy's system call allowlist.  As a pledge line:
 *
 *	pledge("stdio inet dns recvfd sendfd", NULL): accept4 on the
 *	listeners managerd passes, socket(AF_INET or AF_INET6) for TCP
 *	out and UDP to the nameservers, connect; no filesystem (the jail
 *	is empty and Landlock holds none), no exec, no signals to anyone.
 *
 * The proxy parses what hostile sandboxes send, so what it may do after
 * that is this table on top of the base set in common/seccomp.c.
 * seccomp cannot see connect(2)'s address: egress_check() and the
 * host's addresses decide that (egress_conn.c).  Measured with strace
 * -f over tests/integration/test_egress_proxy.py (start-up, CONNECT and
 * forwarded requests, refusals, hostile and slow heads, log requests,
 * forgets, a new address of the host, lies, the close of the channel).
 */
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <fcntl.h>
#include <linux/netlink.h>
#include <string.h>

#include "seccomp.h"
#include "egress.h"

static const struct seccomp_rule egress_rules[] = {
	/* The event loop; the backend is pinned to epoll in proc.c. */
	SC_ALLOW(epoll_wait),
	SC_ALLOW(epoll_pwait),
	SC_ALLOW(epoll_ctl),
	/* imsg with managerd, which passes the listeners (SCM_RIGHTS). */
	SC_ALLOW(sendmsg),
	SC_ALLOW(recvmsg),
	/* A sandbox's connections, on its listener. */
	SC_ALLOW(accept4),
	/*
	 * Out: TCP to the destination.  Protocol 0 only: no MPTCP, no raw
	 * sockets.  evdns's UDP sockets were made before the jail, when
	 * the nameservers were added (libevent 2.1 never makes another).
	 */
	SC_ALLOW_ARG3(socket, SC_ARG_EQ(0, AF_INET),
	    SC_ARG_MASKED_EQ(1, 0xf, SOCK_STREAM), SC_ARG_EQ(2, 0)),
	SC_ALLOW_ARG3(socket, SC_ARG_EQ(0, AF_INET6),
	    SC_ARG_MASKED_EQ(1, 0xf, SOCK_STREAM), SC_ARG_EQ(2, 0)),
	SC_ALLOW(connect),
	/* evdns's queries and answers; the kernel's netlink messages. */
	SC_ALLOW(sendto),
	SC_ALLOW(recvfrom),
	/* Bytes both ways through bufferevents. */
	SC_ALLOW(read),
	SC_ALLOW(readv),
	SC_ALLOW(writev),
	/* A client's end of sending becomes a half-close upstream. */
	SC_ALLOW_ARG(shutdown, SC_ARG_EQ(1, SHUT_WR)),
	/* evbuffer_read asks how much is pending; no other ioctl. */
	SC_ALLOW_ARG(ioctl, SC_ARG_EQ(1, FIONREAD)),
	/*
	 * How a non-blocking connect ended; and that a passed listener
	 * is one, and of an inet family.  Nothing else of getsockopt.
	 */
	SC_ALLOW_ARG2(getsockopt, SC_ARG_EQ(1, SOL_SOCKET),
	    SC_ARG_EQ(2, SO_ERROR)),
	SC_ALLOW_ARG2(getsockopt, SC_ARG_EQ(1, SOL_SOCKET),
	    SC_ARG_EQ(2, SO_ACCEPTCONN)),
	SC_ALLOW_ARG2(getsockopt, SC_ARG_EQ(1, SOL_SOCKET),
	    SC_ARG_EQ(2, SO_DOMAIN)),
	/* Passed listeners made non-blocking (egress_dispatch.c). */
	SC_ALLOW_ARG(fcntl, SC_ARG_EQ(1, F_GETFL)),
	SC_ALLOW_ARG(fcntl, SC_ARG_EQ(1, F_SETFL)),
};

/*
 * Not in egress-proxy's own filter, only in the spawner's: what it does
 * before its jail (egress.c) beyond what every child does.  evdns's UDP
 * socket per nameserver; the NETLINK_ROUTE socket that reports new
 * addresses, bound to the address groups; getifaddrs()'s own netlink
 * socket, bound, named (getsockname) and asked (sendto, recvmsg).
 */
static const struct seccomp_rule egress_start_rules[] = {
	SC_ALLOW_ARG2(socket, SC_ARG_EQ(0, AF_INET),
	    SC_ARG_MASKED_EQ(1, 0xf, SOCK_DGRAM)),
	SC_ALLOW_ARG2(socket, SC_ARG_EQ(0, AF_INET6),
	    SC_ARG_MASKED_EQ(1, 0xf, SOCK_DGRAM)),
	SC_ALLOW_ARG3(socket, SC_ARG_EQ(0, AF_NETLINK),
	    SC_ARG_MASKED_EQ(1, 0xf, SOCK_RAW), SC_ARG_EQ(2, NETLINK_ROUTE)),
	SC_ALLOW(bind),
	SC_ALLOW(getsockname),
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
	static struct seccomp_rule	 all[SC_NELEM(egress_rules) +
	    SC_NELEM(egress_start_rules)];
	struct seccomp_table		 t = { all, SC_NELEM(all) };

	memcpy(all, egress_rules, sizeof(egress_rules));
	memcpy(all + SC_NELEM(egress_rules), egress_start_rules,
	    sizeof(egress_start_rules));
	return t;
}
