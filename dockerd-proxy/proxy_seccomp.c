/*
 * dockerd-proxy's system call allowlist.  As a pledge line:
 *
 *	pledge("stdio unix recvfd sendfd", NULL) where unix is only
 *	socket(AF_UNIX, SOCK_STREAM) and connect(2); no openat after start,
 *	no exec, no signals to anyone.  Behind a socket proxy
 *	(DOCKER_HOST=tcp://) "inet" instead of "unix": socket(AF_INET or
 *	AF_INET6, whichever the endpoint is, never both, never AF_UNIX),
 *	connect(2), TCP_NODELAY and the connect's SO_ERROR.
 *
 * seccomp cannot see the path given to connect(2): proxy_jail.c makes
 * /docker.sock the only socket there is to reach; nor the address, which
 * Landlock holds to the one port (proxy.c).  Measured with strace
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

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <fcntl.h>
#include <string.h>

#include "seccomp.h"

static const struct seccomp_rule proxy_rules[] = {
	/* The event loop; the backend is pinned to epoll in proxy.c. */
	SC_ALLOW(epoll_wait),
	SC_ALLOW(epoll_pwait),
	SC_ALLOW(epoll_ctl),
	/* imsg with managerd, which passes descriptors (SCM_RIGHTS). */
	SC_ALLOW(sendmsg),
	SC_ALLOW(recvmsg),
	/* One stream connection to Docker per request (its socket below). */
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
	/*
	 * An archive's tar from Docker's socket into its pipe without a
	 * copy here (docker_archive.c), and whether the pipe has room when
	 * splice says EAGAIN (poll with no wait; glibc may use either).
	 */
	SC_ALLOW(splice),
	SC_ALLOW_ARG(poll, SC_ARG_EQ(2, 0)),
	SC_ALLOW(ppoll),
	SC_ALLOW_ARG(ioctl, SC_ARG_EQ(1, FIONREAD)),
	/*
	 * Making a passed pipe non-blocking, and an archive's pipe larger;
	 * nothing else of fcntl.
	 */
	SC_ALLOW_ARG(fcntl, SC_ARG_EQ(1, F_GETFL)),
	SC_ALLOW_ARG(fcntl, SC_ARG_EQ(1, F_SETFL)),
	SC_ALLOW_ARG(fcntl, SC_ARG_EQ(1, F_SETPIPE_SZ)),
};

/* Docker's unix socket. */
static const struct seccomp_rule proxy_unix_rules[] = {
	SC_ALLOW_ARG2(socket, SC_ARG_EQ(0, AF_UNIX),
	    SC_ARG_MASKED_EQ(1, 0xf, SOCK_STREAM)),
};

/* A socket proxy on TCP: what every TCP connection needs, and its socket. */
static const struct seccomp_rule proxy_tcp_rules[] = {
	/* Heads and a tty's keystrokes are not held back (Nagle). */
	SC_ALLOW_ARG2(setsockopt, SC_ARG_EQ(1, IPPROTO_TCP),
	    SC_ARG_EQ(2, TCP_NODELAY)),
	/* How a non-blocking connect ended. */
	SC_ALLOW_ARG2(getsockopt, SC_ARG_EQ(1, SOL_SOCKET),
	    SC_ARG_EQ(2, SO_ERROR)),
};

/*
 * The protocol must be 0 (TCP): Landlock's TCP rules hold only TCP
 * sockets, and an IPPROTO_MPTCP stream socket of the same family and
 * type would connect to any port.
 */
static const struct seccomp_rule proxy_inet_rules[] = {
	SC_ALLOW_ARG3(socket, SC_ARG_EQ(0, AF_INET),
	    SC_ARG_MASKED_EQ(1, 0xf, SOCK_STREAM), SC_ARG_EQ(2, 0)),
};

static const struct seccomp_rule proxy_inet6_rules[] = {
	SC_ALLOW_ARG3(socket, SC_ARG_EQ(0, AF_INET6),
	    SC_ARG_MASKED_EQ(1, 0xf, SOCK_STREAM), SC_ARG_EQ(2, 0)),
};

/*
 * Not in dockerd-proxy's own filter, only in the spawner's: resolving a
 * host name in DOCKER_HOST, once at start before the jail (glibc's
 * resolver over UDP, after /etc/hosts; nscd is a unix socket the spawner
 * allows anyway).
 */
static const struct seccomp_rule proxy_resolver_rules[] = {
	SC_ALLOW_ARG2(socket, SC_ARG_EQ(0, AF_INET),
	    SC_ARG_MASKED_EQ(1, 0xf, SOCK_DGRAM)),
	SC_ALLOW_ARG2(socket, SC_ARG_EQ(0, AF_INET6),
	    SC_ARG_MASKED_EQ(1, 0xf, SOCK_DGRAM)),
	SC_ALLOW(sendto),
	SC_ALLOW(sendmmsg),
	SC_ALLOW(recvfrom),
	SC_ALLOW(bind),
	SC_ALLOW(getsockname),
	SC_ALLOW(setsockopt),
	/* The resolver's default search domain comes from the host name. */
	SC_ALLOW(uname),
};

static int	 proxy_family = AF_UNIX;

void
proxy_seccomp_family(int family)
{
	proxy_family = family;
}

int
proxy_seccomp_load(enum seccomp_mode mode)
{
	struct seccomp_table	 t[3] = {
		{ proxy_rules, SC_NELEM(proxy_rules) },
		{ proxy_unix_rules, SC_NELEM(proxy_unix_rules) },
		{ proxy_tcp_rules, SC_NELEM(proxy_tcp_rules) },
	};

	if (proxy_family == AF_UNIX)
		return seccomp_install_tables("dockerd-proxy", t, 2, mode);
	if (proxy_family == AF_INET)
		t[1] = (struct seccomp_table){ proxy_inet_rules,
		    SC_NELEM(proxy_inet_rules) };
	else
		t[1] = (struct seccomp_table){ proxy_inet6_rules,
		    SC_NELEM(proxy_inet6_rules) };
	return seccomp_install_tables("dockerd-proxy", t, 3, mode);
}

/*
 * What the spawner's filter must allow as well (see seccomp.h), for the
 * family set: a host name (AF_UNSPEC) resolves to either, so the spawner
 * then allows both inet families and the resolver, its proxy child only
 * the one family it got.
 */
struct seccomp_table
proxy_seccomp_table(void)
{
	static struct seccomp_rule	 all[SC_NELEM(proxy_rules) +
	    SC_NELEM(proxy_tcp_rules) + SC_NELEM(proxy_inet_rules) +
	    SC_NELEM(proxy_inet6_rules) + SC_NELEM(proxy_resolver_rules)];
	struct seccomp_table		 parts[5] = {
		{ proxy_rules, SC_NELEM(proxy_rules) },
		{ proxy_unix_rules, SC_NELEM(proxy_unix_rules) },
	};
	struct seccomp_table		 t = { all, 0 };
	size_t				 i, n = 2;

	if (proxy_family != AF_UNIX) {
		parts[1] = (struct seccomp_table){ proxy_tcp_rules,
		    SC_NELEM(proxy_tcp_rules) };
		if (proxy_family != AF_INET6)
			parts[n++] = (struct seccomp_table){ proxy_inet_rules,
			    SC_NELEM(proxy_inet_rules) };
		if (proxy_family != AF_INET)
			parts[n++] = (struct seccomp_table){ proxy_inet6_rules,
			    SC_NELEM(proxy_inet6_rules) };
		if (proxy_family == AF_UNSPEC)
			parts[n++] = (struct seccomp_table){
			    proxy_resolver_rules,
			    SC_NELEM(proxy_resolver_rules) };
	}
	for (i = 0; i < n; i++) {
		memcpy(all + t.n, parts[i].rules,
		    parts[i].n * sizeof(parts[i].rules[0]));
		t.n += parts[i].n;
	}
	return t;
}
