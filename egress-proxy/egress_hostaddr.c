/*
 * The host's own addresses, refused as destinations (issue 15).  The
 * proxy connects from the host's namespace, so a public address of the
 * host (a cloud VM's) would pass egress_check() and reach the host's
 * own services, apid's port among them.  The list comes from
 * getifaddrs() before the jail and grows with the kernel's RTM_NEWADDR
 * messages (egress_netlink.c).  Pure: no I/O, so it is unit-tested.
 */
#include <sys/socket.h>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>

#include <string.h>

#include "egress.h"

static const uint8_t	 v4mapped[12] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff
};

/* family and bytes of addr, a v4-mapped IPv6 address as its IPv4 one. */
static int
hostaddr_of(int family, const void *bytes, struct egress_hostaddr *h)
{
	memset(h, 0, sizeof(*h));
	if (family == AF_INET) {
		h->family = AF_INET;
		memcpy(h->addr, bytes, 4);
		return 0;
	}
	if (family != AF_INET6)
		return -1;
	if (memcmp(bytes, v4mapped, sizeof(v4mapped)) == 0) {
		h->family = AF_INET;
		memcpy(h->addr, (const uint8_t *)bytes + 12, 4);
		return 0;
	}
	h->family = AF_INET6;
	memcpy(h->addr, bytes, 16);
	return 0;
}

static int
hostaddr_sockaddr(const struct sockaddr *sa, struct egress_hostaddr *h)
{
	if (sa == NULL)
		return -1;
	if (sa->sa_family == AF_INET)
		return hostaddr_of(AF_INET,
		    &((const struct sockaddr_in *)sa)->sin_addr, h);
	if (sa->sa_family == AF_INET6)
		return hostaddr_of(AF_INET6,
		    &((const struct sockaddr_in6 *)sa)->sin6_addr, h);
	return -1;
}

static int
hostaddr_known(const struct egress_hostaddrs *l,
    const struct egress_hostaddr *h)
{
	size_t	 i;

	for (i = 0; i < l->count; i++)
		if (l->a[i].family == h->family &&
		    memcmp(l->a[i].addr, h->addr, sizeof(h->addr)) == 0)
			return 1;
	return 0;
}

static int
hostaddr_insert(struct egress_hostaddrs *l, const struct egress_hostaddr *h)
{
	if (hostaddr_known(l, h))
		return 0;
	if (l->count == EGRESS_HOSTADDR_MAX)
		return -1;
	l->a[l->count++] = *h;
	return 1;
}

int
egress_hostaddr_add(struct egress_hostaddrs *l, const struct sockaddr *sa)
{
	struct egress_hostaddr	 h;

	if (hostaddr_sockaddr(sa, &h) == -1)
		return 0;
	return hostaddr_insert(l, &h);
}

int
egress_hostaddr_from_ifaddrs(struct egress_hostaddrs *l,
    const struct ifaddrs *ifa)
{
	for (; ifa != NULL; ifa = ifa->ifa_next)
		if (egress_hostaddr_add(l, ifa->ifa_addr) == -1)
			return -1;
	return 0;
}

int
egress_hostaddr_is_host(const struct egress_hostaddrs *l,
    const struct sockaddr_storage *ss)
{
	struct egress_hostaddr	 h;

	if (hostaddr_sockaddr((const struct sockaddr *)ss, &h) == -1)
		return 0;
	return hostaddr_known(l, &h);
}

/* IFA_ADDRESS and IFA_LOCAL of one RTM_NEWADDR (they differ on p2p). */
static int
netlink_newaddr(struct egress_hostaddrs *l, const struct nlmsghdr *nh)
{
	const struct ifaddrmsg	*ifa = NLMSG_DATA(nh);
	const struct rtattr	*rta;
	struct egress_hostaddr	 h;
	size_t			 want;
	int			 len, added = 0, rc;

	if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(*ifa)))
		return 0;
	want = ifa->ifa_family == AF_INET ? 4 : 16;
	len = (int)(nh->nlmsg_len - NLMSG_LENGTH(sizeof(*ifa)));
	for (rta = IFA_RTA(ifa); RTA_OK(rta, len); rta = RTA_NEXT(rta, len)) {
		if (rta->rta_type != IFA_ADDRESS && rta->rta_type != IFA_LOCAL)
			continue;
		if (RTA_PAYLOAD(rta) != want ||
		    hostaddr_of(ifa->ifa_family, RTA_DATA(rta), &h) == -1)
			continue;
		if ((rc = hostaddr_insert(l, &h)) == -1)
			return -1;
		added += rc;
	}
	return added;
}

int
egress_hostaddr_netlink(struct egress_hostaddrs *l, const void *buf,
    size_t len)
{
	const struct nlmsghdr	*nh = buf;
	int			 n = 0, rc;
	unsigned int		 left;

	if (len > 1U << 30)
		return 0;
	left = (unsigned int)len;
	for (; NLMSG_OK(nh, left); nh = NLMSG_NEXT(nh, left)) {
		if (nh->nlmsg_type != RTM_NEWADDR)
			continue;
		if ((rc = netlink_newaddr(l, nh)) == -1)
			return -1;
		n += rc;
	}
	return n;
}
