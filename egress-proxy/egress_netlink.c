/*
 * The host's addresses as they change (issue 15).  A NETLINK_ROUTE
 * socket subscribed to the address groups is opened before getifaddrs(),
 * so no address can appear unseen between the two, and before the jail.
 * A new address joins the refused list in place, so the tunnels that
 * are up stay up; when the list is full, or the kernel dropped messages
 * (ENOBUFS: an address may have been missed), the proxy exits and
 * managerd starts it again with a fresh list.  A removed address stays
 * refused: that only refuses more.
 */
#include <sys/socket.h>

#include <errno.h>
#include <ifaddrs.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <stdlib.h>
#include <string.h>

#include "egress.h"
#include "log.h"

static int	 netlink_fd = -1;

void
egress_netlink_open(void)
{
	struct sockaddr_nl	 sa;
	struct ifaddrs		*ifa;

	netlink_fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC |
	    SOCK_NONBLOCK, NETLINK_ROUTE);
	if (netlink_fd == -1)
		fatal("netlink socket");
	memset(&sa, 0, sizeof(sa));
	sa.nl_family = AF_NETLINK;
	sa.nl_groups = RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR;
	if (bind(netlink_fd, (struct sockaddr *)&sa, sizeof(sa)) == -1)
		fatal("netlink bind");
	if (getifaddrs(&ifa) == -1)
		fatal("getifaddrs");
	if (egress_hostaddr_from_ifaddrs(&egress.host, ifa) == -1)
		fatalx("the host has more than %d addresses",
		    EGRESS_HOSTADDR_MAX);
	freeifaddrs(ifa);
	log_debug("%zu addresses of the host refused", egress.host.count);
}

/* One datagram; 1 read, 0 none left. */
static int
netlink_read_one(void)
{
	struct sockaddr_nl	 from;
	socklen_t		 fromlen = sizeof(from);
	/* aligned for struct nlmsghdr */
	uint32_t		 buf[8192 / sizeof(uint32_t)];
	ssize_t			 n;
	int			 added;

	n = recvfrom(netlink_fd, buf, sizeof(buf), 0,
	    (struct sockaddr *)&from, &fromlen);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n == -1 && errno == ENOBUFS)
		fatalx("address changes were missed; exiting for a fresh "
		    "list of the host's addresses");
	if (n == -1)
		fatal("netlink recvfrom");
	/* Only the kernel speaks for the host's addresses. */
	if (fromlen != sizeof(from) || from.nl_pid != 0)
		return 1;
	if ((added = egress_hostaddr_netlink(&egress.host, buf,
	    (size_t)n)) == -1)
		fatalx("the host has more than %d addresses; exiting for a "
		    "fresh list", EGRESS_HOSTADDR_MAX);
	if (added > 0)
		log_info("%d new address%s of the host refused", added,
		    added == 1 ? "" : "es");
	return 1;
}

static void
netlink_readable(evutil_socket_t fd, short what, void *arg)
{
	while (netlink_read_one())
		;
}

void
egress_netlink_start(void)
{
	egress.netlink = event_new(egress.base, netlink_fd,
	    EV_READ | EV_PERSIST, netlink_readable, NULL);
	if (egress.netlink == NULL || event_add(egress.netlink, NULL) == -1)
		fatalx("netlink event");
}
