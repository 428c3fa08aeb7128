/*
 * What every client process may do once its filter is loaded: REST calls
 * over TCP to the server (rest.c) and its standard streams.  As a pledge
 * line, "stdio inet" where inet is only TCP: socket(AF_INET or AF_INET6,
 * SOCK_STREAM), connect, the socket options rest.c sets, send and recv
 * without addresses; no open, no exec, no signals to anyone.
 *
 * The server's name is resolved before the filter is loaded
 * (rest_client_resolve()): a lookup needs openat (/etc/hosts,
 * /etc/nsswitch.conf, /etc/resolv.conf, /etc/gai.conf, NSS modules), a
 * unix socket (nscd), UDP (DNS) and netlink (to sort several addresses,
 * as localhost has), none of which is here.
 */
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>

#include "client_seccomp.h"

static const struct seccomp_rule	client_rules[] = {
	/* Standard input (MCP messages, cp's "-"), and recv(2). */
	SC_ALLOW(read),
	SC_ALLOW(recvfrom),
	/* send(2) on a connected socket: no address of its own. */
	SC_ALLOW_ARG(sendto, SC_ARG_EQ(4, 0)),
	/* One TCP connection per call; a non-blocking connect with poll. */
	SC_ALLOW_ARG2(socket, SC_ARG_EQ(0, AF_INET),
	    SC_ARG_MASKED_EQ(1, 0xf, SOCK_STREAM)),
	SC_ALLOW_ARG2(socket, SC_ARG_EQ(0, AF_INET6),
	    SC_ARG_MASKED_EQ(1, 0xf, SOCK_STREAM)),
	SC_ALLOW(connect),
	SC_ALLOW(poll),
	SC_ALLOW(ppoll),
	SC_ALLOW(ppoll_time64),
	/* The connect's outcome, then blocking with timeouts, no Nagle. */
	SC_ALLOW_ARG2(getsockopt, SC_ARG_EQ(1, SOL_SOCKET),
	    SC_ARG_EQ(2, SO_ERROR)),
	SC_ALLOW_ARG2(setsockopt, SC_ARG_EQ(1, SOL_SOCKET),
	    SC_ARG_EQ(2, SO_RCVTIMEO)),
	SC_ALLOW_ARG2(setsockopt, SC_ARG_EQ(1, SOL_SOCKET),
	    SC_ARG_EQ(2, SO_SNDTIMEO)),
#ifdef SO_RCVTIMEO_NEW
	/* 32-bit systems with a 64-bit time_t. */
	SC_ALLOW_ARG2(setsockopt, SC_ARG_EQ(1, SOL_SOCKET),
	    SC_ARG_EQ(2, SO_RCVTIMEO_NEW)),
	SC_ALLOW_ARG2(setsockopt, SC_ARG_EQ(1, SOL_SOCKET),
	    SC_ARG_EQ(2, SO_SNDTIMEO_NEW)),
#endif
	SC_ALLOW_ARG2(setsockopt, SC_ARG_EQ(1, IPPROTO_TCP),
	    SC_ARG_EQ(2, TCP_NODELAY)),
	SC_ALLOW_ARG(fcntl, SC_ARG_EQ(1, F_GETFL)),
	SC_ALLOW_ARG(fcntl, SC_ARG_EQ(1, F_SETFL)),
	SC_ALLOW_ARG(fcntl64, SC_ARG_EQ(1, F_GETFL)),
	SC_ALLOW_ARG(fcntl64, SC_ARG_EQ(1, F_SETFL)),
	/* isatty(3), from stdio and the progress display. */
	SC_ALLOW_ARG(ioctl, SC_ARG_EQ(1, TCGETS)),
};

int
client_seccomp_mode(const char *progname)
{
	const char	*word = getenv("AGENT_SANDBOX_SECCOMP");
	int		 mode;

	if ((mode = seccomp_mode_parse(word)) == -1)
		fprintf(stderr, "%s: AGENT_SANDBOX_SECCOMP=%s: not kill, trap "
		    "or log\n", progname, word);
	return mode;
}

int
client_seccomp_install(const char *progname,
    const struct seccomp_rule *own, size_t nown, enum seccomp_mode mode)
{
	struct seccomp_rule	*all;
	size_t			 n = SC_NELEM(client_rules);
	int			 r;

	if ((all = calloc(n + nown, sizeof(*all))) == NULL) {
		fprintf(stderr, "%s: out of memory\n", progname);
		return -1;
	}
	memcpy(all, client_rules, sizeof(client_rules));
	if (nown > 0)
		memcpy(all + n, own, nown * sizeof(*own));
	r = seccomp_install(progname, all, n + nown, mode);
	free(all);
	return r;
}
