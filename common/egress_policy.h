/*
 * Egress policies (issue 15): what a sandbox's network may reach.  One
 * module, without I/O, for every process that handles a policy: apid
 * and managerd parse a client's, managerd keeps it in the sandbox's
 * record and sends it to the egress proxy in messages, and the proxy
 * checks every connection against it after resolving the name itself.
 *
 * A policy is {"mode": "none"}, {"mode": "public"} (any public address,
 * any port) or {"mode": "allowlist", "allow": [entries]}, an entry being
 *
 *	pypi.org		a host name, matched case-insensitively
 *	*.example.com		any name below example.com, not itself
 *	203.0.113.7		an IPv4 address (a /32)
 *	203.0.113.0/24		an IPv4 range
 *	[2001:db8::1]		an IPv6 address or range, in brackets
 *	[2001:db8::/32]
 *
 * each optionally followed by ":port" (1-65535) that restricts it to
 * that port.  Names are ASCII: IDNA is not supported, a client gives the
 * xn-- form of an internationalised name.
 *
 * Only public addresses are ever reached: a name or range on the list
 * lets through the addresses it covers that are public, never another.
 * The policy is a client's (possibly the agent's own) and the refused
 * ranges protect the operator's networks and the cloud's metadata
 * service; what counts as public besides the Internet is the operator's
 * to say (struct egress_extra), which is how the tests name their own
 * ranges.  A few addresses no setting makes public (loopback, the
 * unspecified address, multicast, broadcast, metadata services).
 */
#ifndef AS_EGRESS_POLICY_H
#define AS_EGRESS_POLICY_H

#include <sys/socket.h>

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "msg.h"

#define EGRESS_ALLOW_MAX	256	/* entries in one allowlist */
#define EGRESS_NAME_MAX		253	/* bytes of a host name, RFC 1035 */
#define EGRESS_LABEL_MAX	63	/* bytes of one label of a name */
/* Bytes of one entry: "*." a longest name ":65535". */
#define EGRESS_ENTRY_MAX	(EGRESS_NAME_MAX + 8)
#define EGRESS_EXTRA_MAX	64	/* ranges the operator calls public */
/* Connections one sandbox's log keeps (egress-proxy/egress_log.h). */
#define EGRESS_LOG_DEFAULT	256
#define EGRESS_LOG_MAX		65536	/* the most a setting may ask */
/* Where a policy sandbox's proxy listens, on its own loopback. */
#define EGRESS_PORT		3128
/* Room for a check's reason: a label, the word address, an address. */
#define EGRESS_WHY_MAX		128

enum egress_mode {
	EGRESS_NONE = 0,
	EGRESS_PUBLIC = 1,
	EGRESS_ALLOWLIST = 2,
};

enum egress_rule_kind {
	EGRESS_RULE_NAME = 1,		/* name holds the host name */
	EGRESS_RULE_WILDCARD = 2,	/* name holds what follows "*." */
	EGRESS_RULE_CIDR = 3,		/* cidr */
};

/* An address range; the bits past prefix are zero. */
struct egress_cidr {
	int		 family;	/* AF_INET or AF_INET6 */
	unsigned int	 prefix;	/* 0-32 or 0-128 */
	uint8_t		 addr[16];	/* IPv4 in the first 4 bytes */
};

struct egress_rule {
	enum egress_rule_kind	 kind;
	unsigned int		 port;	/* 0: any port */
	/* lowercase */
	char			 name[EGRESS_NAME_MAX + 1];
	struct egress_cidr	 cidr;
};

struct egress_policy {
	enum egress_mode	 mode;
	size_t			 nrules;	/* 0 unless ALLOWLIST */
	struct egress_rule	*rules;
};

/* The ranges the operator (or a test) counts as public as well. */
struct egress_extra {
	size_t			 count;
	struct egress_cidr	 cidrs[EGRESS_EXTRA_MAX];
};

void	egress_policy_free(struct egress_policy *);
int	egress_policy_copy(struct egress_policy *dst,
	    const struct egress_policy *src);	/* -1 ENOMEM */
/* 1 if the two are the same policy, rule by rule in order. */
int	egress_policy_equal(const struct egress_policy *,
	    const struct egress_policy *);

/*
 * The value of "network" in a create or fork body, or a PUT's body:
 * false is mode none, true a copy of if_true (the operator's setting;
 * NULL: mode public), an object a policy.  0, or -1 with errno EINVAL
 * and a client's error text in err (never the raw bytes of an entry
 * that is not printable ASCII), or ENOMEM.  p is untouched on failure.
 */
int	egress_policy_parse(json_object *, const struct egress_policy
	    *if_true, struct egress_policy *p, char *err, size_t errlen);
/*
 * One allowlist entry (len bytes, not NUL-terminated): 0, or -1 with a
 * client's error text (the entry not quoted).
 */
int	egress_rule_parse(const char *, size_t len, struct egress_rule *,
	    char *err, size_t errlen);
/*
 * One range without brackets or port (10.0.0.0/8, 2001:db8::/32, or an
 * address for a /32 or /128), as the operator's list holds them.
 */
int	egress_cidr_parse(const char *, size_t len, struct egress_cidr *,
	    char *err, size_t errlen);
/*
 * The operator's list: CIDRs separated by commas ("" for none), IPv6
 * ones bare (2001:db8::/32).  0, or -1 with the reason in err.
 */
int	egress_extra_parse(const char *, struct egress_extra *, char *err,
	    size_t errlen);

/*
 * A host name as an allowlist entry may hold one (len bytes, without a
 * trailing dot; the caller removes one first if it takes them): 0, or -1
 * with the reason in err.  The egress proxy checks a client's requested
 * name with it, so that what a request may name and what a policy may
 * list are one set.
 */
int	egress_name_valid(const char *, size_t len, char *err, size_t errlen);

/* The canonical text of a rule, as parse takes it; -1 if len is short. */
int	egress_rule_format(const struct egress_rule *, char *, size_t len);
/* The canonical JSON of a policy, entries in their order; NULL ENOMEM. */
json_object *egress_policy_to_json(const struct egress_policy *);

/*
 * The byte form for messages: u8 mode, u32 count, then per rule u8 kind,
 * u32 port, and str name (NAME, WILDCARD) or u8 family (4 or 6), u8
 * prefix and 4 or 16 address bytes (CIDR).  One policy has one encoding:
 * the decoder takes only what parse could have made (canonical names,
 * no host bits, counts in bounds) and refuses the rest (-1, r->error
 * set, p empty).
 */
void	msg_put_egress_policy(struct msgw *, const struct egress_policy *);
int	msg_get_egress_policy(struct msgr *, struct egress_policy *);
/* The same over exactly len bytes. */
int	egress_policy_decode(const void *, size_t len,
	    struct egress_policy *);

/*
 * May a connection go to addr (IPv4, IPv6; a v4-mapped v6 address is its
 * IPv4 one) on port?  host is the name the client asked for (NULL when
 * it gave an address), one trailing dot ignored.  1 yes; 0 no, with a
 * short reason in why (EGRESS_WHY_MAX bytes are enough).  extra may be
 * NULL.
 */
int	egress_check(const struct egress_policy *,
	    const struct egress_extra *, const char *host, unsigned int port,
	    const struct sockaddr_storage *addr, char *why, size_t whylen);
/*
 * Before resolving host: could any address of it pass on port?  0 (with
 * the reason egress_check would give) when no rule can match, so that a
 * sandbox's names off its list are never even asked of a nameserver (a
 * query is a message out).  1 otherwise; egress_check still decides.
 */
int	egress_check_name(const struct egress_policy *, const char *host,
	    unsigned int port, char *why, size_t whylen);
/*
 * Is addr public?  1 yes; 0 no, with its range's reason in why.
 */
int	egress_address_public(const struct egress_extra *,
	    const struct sockaddr_storage *, char *why, size_t whylen);

#endif /* AS_EGRESS_POLICY_H */
