/*
 * Tests for egress-proxy/egress_hostaddr.c: the host's own addresses the
 * egress proxy refuses, from getifaddrs() and from the kernel's
 * RTM_NEWADDR messages, v4-mapped addresses as their IPv4 ones.
 */
#include <sys/socket.h>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "egress.h"

static struct egress_hostaddrs	 list;

static struct sockaddr_storage
addr(const char *text)
{
	struct sockaddr_storage	 ss;

	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, text, &((struct sockaddr_in *)&ss)->sin_addr))
		ss.ss_family = AF_INET;
	else {
		assert_int_equal(inet_pton(AF_INET6, text,
		    &((struct sockaddr_in6 *)&ss)->sin6_addr), 1);
		ss.ss_family = AF_INET6;
	}
	return ss;
}

static int
is_host(const char *text)
{
	struct sockaddr_storage	 ss = addr(text);

	return egress_hostaddr_is_host(&list, &ss);
}

static void
test_ifaddrs(void **state)
{
	struct sockaddr_storage	 a = addr("203.0.113.9"),
				 b = addr("2001:db8::9");
	struct sockaddr		 link;
	struct ifaddrs		 i[4];
	int			 k;

	memset(&link, 0, sizeof(link));
	link.sa_family = AF_PACKET;
	memset(i, 0, sizeof(i));
	for (k = 0; k < 3; k++)
		i[k].ifa_next = &i[k + 1];
	/* One without an address, two inet ones, one of a link layer. */
	i[1].ifa_addr = (struct sockaddr *)&a;
	i[2].ifa_addr = (struct sockaddr *)&b;
	i[3].ifa_addr = &link;

	memset(&list, 0, sizeof(list));
	assert_int_equal(egress_hostaddr_from_ifaddrs(&list, &i[0]), 0);
	assert_int_equal(list.count, 2);
	assert_true(is_host("203.0.113.9"));
	assert_true(is_host("2001:db8::9"));
	/* A v4-mapped address is its IPv4 one. */
	assert_true(is_host("::ffff:203.0.113.9"));
	assert_false(is_host("203.0.113.10"));
	assert_false(is_host("2001:db8::a"));
	/* Twice is once. */
	assert_int_equal(egress_hostaddr_add(&list, (struct sockaddr *)&a), 0);
	assert_int_equal(list.count, 2);
}

static void
test_full(void **state)
{
	struct sockaddr_in	 sin;
	uint32_t		 i;

	memset(&list, 0, sizeof(list));
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	for (i = 0; i < EGRESS_HOSTADDR_MAX; i++) {
		sin.sin_addr.s_addr = htonl(0xc6120000 + i);
		assert_int_equal(egress_hostaddr_add(&list,
		    (struct sockaddr *)&sin), 1);
	}
	sin.sin_addr.s_addr = htonl(0xc6130000);
	assert_int_equal(egress_hostaddr_add(&list, (struct sockaddr *)&sin),
	    -1);
}

/* One RTM_NEWADDR (or another type) with an IFA_LOCAL of len bytes. */
static size_t
newaddr(void *buf, uint16_t type, int family, const void *a, size_t len)
{
	struct nlmsghdr		*nh = buf;
	struct ifaddrmsg	*ifa;
	struct rtattr		*rta;

	memset(buf, 0, NLMSG_SPACE(sizeof(*ifa) + RTA_SPACE(16)));
	nh->nlmsg_type = type;
	nh->nlmsg_len = NLMSG_LENGTH(sizeof(*ifa) + RTA_LENGTH(len));
	ifa = NLMSG_DATA(nh);
	ifa->ifa_family = (uint8_t)family;
	rta = IFA_RTA(ifa);
	rta->rta_type = IFA_LOCAL;
	rta->rta_len = (uint16_t)RTA_LENGTH(len);
	memcpy(RTA_DATA(rta), a, len);
	return NLMSG_ALIGN(nh->nlmsg_len);
}

static void
test_netlink(void **state)
{
	uint32_t	 buf[1024];
	unsigned char	*p = (unsigned char *)buf;
	struct in_addr	 v4;
	struct in6_addr	 v6;
	size_t		 off = 0;

	memset(&list, 0, sizeof(list));
	assert_int_equal(inet_pton(AF_INET, "198.51.100.4", &v4), 1);
	assert_int_equal(inet_pton(AF_INET6, "2001:db8::4", &v6), 1);
	off += newaddr(p + off, RTM_NEWADDR, AF_INET, &v4, 4);
	off += newaddr(p + off, RTM_NEWADDR, AF_INET6, &v6, 16);
	/* Not an addition, and a length that lies: skipped. */
	off += newaddr(p + off, RTM_DELADDR, AF_INET, "\x0a\0\0\x01", 4);
	off += newaddr(p + off, RTM_NEWADDR, AF_INET, &v6, 16);
	assert_int_equal(egress_hostaddr_netlink(&list, buf, off), 2);
	assert_true(is_host("198.51.100.4"));
	assert_true(is_host("2001:db8::4"));
	assert_false(is_host("10.0.0.1"));
	/* Seen again: nothing new.  A truncated buffer: nothing at all. */
	assert_int_equal(egress_hostaddr_netlink(&list, buf, off), 0);
	assert_int_equal(egress_hostaddr_netlink(&list, buf, 7), 0);
	assert_int_equal(list.count, 2);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ifaddrs),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_netlink),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
