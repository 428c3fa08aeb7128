/*
 * Egress checks (egress_policy.h): which addresses are public, and
 * whether a policy lets one connection through.  The egress proxy asks
 * this for every connection, with the address it resolved itself, so a
 * name that resolves to a private address later (DNS rebinding) is
 * refused then.
 */
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "egress_policy.h"

/*
 * The ranges that are not public (IANA's IPv4 and IPv6 special-purpose
 * registries, RFC 6890 and their successors), first match wins, so the
 * narrower entries come first for a precise reason.  "always" ones no
 * operator's extra range makes public.
 */
struct refused_range {
	const char	*cidr;
	int		 always;
	const char	*label;
};

static const struct refused_range refused_ranges[] = {
	/* AWS, GCP, Azure, OpenStack instance metadata and credentials */
	{ "169.254.169.254/32",	1, "cloud metadata" },
	/* AWS ECS task metadata and credentials */
	{ "169.254.170.2/32",	1, "cloud metadata" },
	/* Azure's WireServer: a public-looking address, host-only */
	{ "168.63.129.16/32",	1, "cloud metadata" },
	/* AWS's metadata service over IPv6 (Nitro) */
	{ "fd00:ec2::254/128",	1, "cloud metadata" },
	/* Alibaba Cloud's metadata, inside the CGNAT range */
	{ "100.100.100.200/32",	1, "cloud metadata" },
	/* "this network"; 0.0.0.0 reaches the local host on Linux */
	{ "0.0.0.0/8",		1, "unspecified" },
	/* the local host */
	{ "127.0.0.0/8",	1, "loopback" },
	/* RFC 1918 private networks */
	{ "10.0.0.0/8",		0, "private" },
	{ "172.16.0.0/12",	0, "private" },
	{ "192.168.0.0/16",	0, "private" },
	/* RFC 6598 carrier-grade NAT, shared address space */
	{ "100.64.0.0/10",	0, "carrier-grade NAT" },
	/* RFC 3927 link-local: the host's own links */
	{ "169.254.0.0/16",	0, "link-local" },
	/* RFC 6890 IETF protocol assignments (DS-Lite, Oracle metadata) */
	{ "192.0.0.0/24",	0, "reserved" },
	/* RFC 5737 documentation */
	{ "192.0.2.0/24",	0, "documentation" },
	{ "198.51.100.0/24",	0, "documentation" },
	{ "203.0.113.0/24",	0, "documentation" },
	/* RFC 7526 deprecated 6to4 relay anycast */
	{ "192.88.99.0/24",	0, "reserved" },
	/* RFC 2544 benchmarking */
	{ "198.18.0.0/15",	0, "benchmarking" },
	/* RFC 5771 multicast */
	{ "224.0.0.0/4",	1, "multicast" },
	/* the limited broadcast */
	{ "255.255.255.255/32",	1, "broadcast" },
	/* RFC 1112 reserved for future use */
	{ "240.0.0.0/4",	0, "reserved" },

	/* the unspecified address */
	{ "::/128",		1, "unspecified" },
	/* the local host */
	{ "::1/128",		1, "loopback" },
	/* RFC 4291 deprecated IPv4-compatible (::a.b.c.d) */
	{ "::/96",		0, "reserved" },
	/* RFC 6052, 8215 NAT64: would reach any IPv4 address, private too */
	{ "64:ff9b::/96",	0, "NAT64" },
	{ "64:ff9b:1::/48",	0, "NAT64" },
	/* RFC 6666 discard-only */
	{ "100::/64",		0, "reserved" },
	/* RFC 2928 IETF protocol assignments: Teredo, benchmarking, ORCHID */
	{ "2001::/23",		0, "reserved" },
	/* RFC 3849 documentation */
	{ "2001:db8::/32",	0, "documentation" },
	/* RFC 3056 6to4: embeds any IPv4 address, private too */
	{ "2002::/16",		0, "6to4" },
	/* RFC 9637 documentation */
	{ "3fff::/20",		0, "documentation" },
	/* RFC 9602 SRv6 segment identifiers */
	{ "5f00::/16",		0, "reserved" },
	/* RFC 4193 unique local */
	{ "fc00::/7",		0, "unique local" },
	/* RFC 4291 link-local */
	{ "fe80::/10",		0, "link-local" },
	/* RFC 3879 deprecated site-local */
	{ "fec0::/10",		0, "site-local" },
	/* RFC 4291 multicast */
	{ "ff00::/8",		1, "multicast" },
	/* outside 2000::/3, the only global unicast space assigned */
	{ "::/3",		0, "reserved" },
	{ "4000::/2",		0, "reserved" },
	{ "8000::/1",		0, "reserved" },
};

static int	refuse(char *, size_t, const char *, ...)
		    __attribute__((format(printf, 3, 4)));

static int
refuse(char *why, size_t whylen, const char *fmt, ...)
{
	va_list	 ap;

	if (whylen > 0) {
		va_start(ap, fmt);
		vsnprintf(why, whylen, fmt, ap);
		va_end(ap);
	}
	return 0;
}

/* The address as a full-length range; a v4-mapped one as its IPv4. */
static int
address_get(const struct sockaddr_storage *ss, struct egress_cidr *a)
{
	const struct sockaddr_in	*sin;
	const struct sockaddr_in6	*sin6;

	memset(a, 0, sizeof(*a));
	if (ss->ss_family == AF_INET) {
		sin = (const struct sockaddr_in *)ss;
		a->family = AF_INET;
		a->prefix = 32;
		memcpy(a->addr, &sin->sin_addr, 4);
		return 0;
	}
	if (ss->ss_family != AF_INET6)
		return -1;
	sin6 = (const struct sockaddr_in6 *)ss;
	if (IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr)) {
		a->family = AF_INET;
		a->prefix = 32;
		memcpy(a->addr, &sin6->sin6_addr.s6_addr[12], 4);
		return 0;
	}
	a->family = AF_INET6;
	a->prefix = 128;
	memcpy(a->addr, &sin6->sin6_addr, 16);
	return 0;
}

/* 1 if the range c holds the address a. */
static int
cidr_contains(const struct egress_cidr *c, const struct egress_cidr *a)
{
	unsigned int	 whole = c->prefix / 8, bits = c->prefix % 8;
	uint8_t		 mask;

	if (c->family != a->family)
		return 0;
	if (memcmp(c->addr, a->addr, whole) != 0)
		return 0;
	if (bits == 0)
		return 1;
	mask = (uint8_t)(0xff << (8 - bits));
	return (c->addr[whole] & mask) == (a->addr[whole] & mask);
}

static int
extra_contains(const struct egress_extra *extra, const struct egress_cidr *a)
{
	size_t	 i;

	if (extra == NULL)
		return 0;
	for (i = 0; i < extra->count && i < EGRESS_EXTRA_MAX; i++)
		if (cidr_contains(&extra->cidrs[i], a))
			return 1;
	return 0;
}

/*
 * The table's entry that holds a, or NULL.  An entry that does not
 * parse (it cannot: the unit test reads them all) is taken to hold
 * every address, so that a typo refuses rather than opens.
 */
static const struct refused_range *
refused_find(const struct egress_cidr *a)
{
	const struct refused_range	*rr;
	struct egress_cidr		 c;
	size_t				 i;

	for (i = 0; i < sizeof(refused_ranges) / sizeof(*rr); i++) {
		rr = &refused_ranges[i];
		if (egress_cidr_parse(rr->cidr, strlen(rr->cidr), &c, NULL,
		    0) == -1)
			return rr;
		if (cidr_contains(&c, a))
			return rr;
	}
	return NULL;
}

int
egress_address_public(const struct egress_extra *extra,
    const struct sockaddr_storage *ss, char *why, size_t whylen)
{
	const struct refused_range	*rr;
	struct egress_cidr		 a;
	char				 text[INET6_ADDRSTRLEN];

	if (address_get(ss, &a) == -1)
		return refuse(why, whylen, "not an IP address");
	if ((rr = refused_find(&a)) == NULL)
		return 1;
	if (!rr->always && extra_contains(extra, &a))
		return 1;
	if (inet_ntop(a.family, a.addr, text, sizeof(text)) == NULL)
		return refuse(why, whylen, "%s address", rr->label);
	return refuse(why, whylen, "%s address %s", rr->label, text);
}

static int
ascii_lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

/* The n bytes of a (any case) and b (lowercase) are the same name. */
static int
name_equal(const char *a, const char *b, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (ascii_lower((unsigned char)a[i]) != (unsigned char)b[i])
			return 0;
	return 1;
}

/* A rule's name against the client's (hlen bytes, no trailing dot). */
static int
rule_name_matches(const struct egress_rule *r, const char *host, size_t hlen)
{
	size_t	 nlen = strlen(r->name);

	if (r->kind == EGRESS_RULE_NAME)
		return hlen == nlen && name_equal(host, r->name, nlen);
	/* "*.example.com": at least one more label, not the name itself */
	return hlen > nlen + 1 && host[hlen - nlen - 1] == '.' &&
	    name_equal(host + hlen - nlen, r->name, nlen);
}

static int
rule_matches(const struct egress_rule *r, const char *host, size_t hlen,
    unsigned int port, const struct egress_cidr *a)
{
	if (r->port != 0 && r->port != port)
		return 0;
	if (r->kind == EGRESS_RULE_CIDR)
		return cidr_contains(&r->cidr, a);
	return host != NULL && rule_name_matches(r, host, hlen);
}

int
egress_check(const struct egress_policy *p, const struct egress_extra *extra,
    const char *host, unsigned int port, const struct sockaddr_storage *ss,
    char *why, size_t whylen)
{
	struct egress_cidr	 a;
	size_t			 i, hlen = 0;

	if (p->mode == EGRESS_NONE)
		return refuse(why, whylen, "the sandbox has no network");
	if (port == 0 || port > 65535)
		return refuse(why, whylen, "bad port");
	if (!egress_address_public(extra, ss, why, whylen))
		return 0;
	if (p->mode == EGRESS_PUBLIC)
		return 1;
	if (address_get(ss, &a) == -1)
		return refuse(why, whylen, "not an IP address");
	if (host != NULL) {
		hlen = strnlen(host, EGRESS_NAME_MAX + 2);
		if (hlen > 0 && host[hlen - 1] == '.')
			hlen--;
		if (hlen == 0 || hlen > EGRESS_NAME_MAX)
			return refuse(why, whylen, "not on the allowlist");
	}
	for (i = 0; i < p->nrules; i++)
		if (rule_matches(&p->rules[i], host, hlen, port, &a))
			return 1;
	return refuse(why, whylen, "not on the allowlist");
}

int
egress_check_name(const struct egress_policy *p, const char *host,
    unsigned int port, char *why, size_t whylen)
{
	const struct egress_rule	*r;
	size_t				 i, hlen;

	if (p->mode == EGRESS_NONE)
		return refuse(why, whylen, "the sandbox has no network");
	if (port == 0 || port > 65535)
		return refuse(why, whylen, "bad port");
	if (p->mode == EGRESS_PUBLIC)
		return 1;
	hlen = strnlen(host, EGRESS_NAME_MAX + 2);
	if (hlen > 0 && host[hlen - 1] == '.')
		hlen--;
	if (hlen == 0 || hlen > EGRESS_NAME_MAX)
		return refuse(why, whylen, "not on the allowlist");
	for (i = 0; i < p->nrules; i++) {
		r = &p->rules[i];
		if (r->port != 0 && r->port != port)
			continue;
		/* A range may hold whatever the name resolves to. */
		if (r->kind == EGRESS_RULE_CIDR ||
		    rule_name_matches(r, host, hlen))
			return 1;
	}
	return refuse(why, whylen, "not on the allowlist");
}

int
egress_extra_parse(const char *list, struct egress_extra *extra, char *err,
    size_t errlen)
{
	const char	*p = list, *comma;
	size_t		 len;
	char		 why[128];

	memset(extra, 0, sizeof(*extra));
	if (*list == '\0')
		return 0;
	for (;;) {
		comma = strchr(p, ',');
		len = comma != NULL ? (size_t)(comma - p) : strlen(p);
		if (extra->count == EGRESS_EXTRA_MAX) {
			snprintf(err, errlen, "at most %d ranges",
			    EGRESS_EXTRA_MAX);
			break;
		}
		if (egress_cidr_parse(p, len, &extra->cidrs[extra->count],
		    why, sizeof(why)) == -1) {
			snprintf(err, errlen, "range %zu: %s",
			    extra->count + 1, why);
			break;
		}
		extra->count++;
		if (comma == NULL)
			return 0;
		p = comma + 1;
	}
	memset(extra, 0, sizeof(*extra));
	return -1;
}
