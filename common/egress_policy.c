/*
 * Egress policies' forms (egress_policy.h): a client's JSON and its
 * allowlist entries parsed and checked, written back canonically, and
 * the byte form of the messages between the daemons.  One policy has
 * one text and one byte form: names are kept lowercase, ranges without
 * host bits, and entries that say the same thing twice are refused.
 */
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egress_policy.h"
#include "utf8.h"

#define PORT_DIGITS_MAX	5
/* Longest address text with a prefix: 45 for IPv6 and "/128". */
#define CIDR_TEXT_MAX	(INET6_ADDRSTRLEN + 4)

static int	fail(char *, size_t, const char *, ...)
		    __attribute__((format(printf, 3, 4)));

static int
fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list	 ap;

	if (errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	errno = EINVAL;
	return -1;
}

static int
is_ascii_alnum(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9');
}

/* 1 if the bytes are printable ASCII, safe to quote in an error. */
static int
printable(const char *s, size_t len)
{
	size_t	 i;

	for (i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e ||
		    s[i] == '"' || s[i] == '\\')
			return 0;
	return 1;
}

static int
label_check(const char *s, size_t len, char *err, size_t errlen)
{
	size_t	 i;

	if (len == 0)
		return fail(err, errlen, "a host name has an empty label "
		    "(two dots in a row, or one at the start)");
	if (len > EGRESS_LABEL_MAX)
		return fail(err, errlen, "a label of a host name is at most "
		    "%d bytes", EGRESS_LABEL_MAX);
	if (s[0] == '-' || s[len - 1] == '-')
		return fail(err, errlen, "a label of a host name must not "
		    "start or end with '-'");
	for (i = 0; i < len; i++)
		if (!is_ascii_alnum((unsigned char)s[i]) && s[i] != '-' &&
		    s[i] != '_')
			return fail(err, errlen, "a host name holds only "
			    "letters, digits, '-', '_' and dots");
	return 0;
}

/*
 * A host name as resolvers take it.  A last label of digits is refused:
 * resolvers read "10.1" or "1.2.3.4.5"-like names as numbers, and a
 * name that is an address in disguise has no business on a list.
 */
static int
name_check(const char *s, size_t len, char *err, size_t errlen)
{
	size_t	 i, start = 0, last = 0;

	if (len > EGRESS_NAME_MAX)
		return fail(err, errlen, "a host name is at most %d bytes",
		    EGRESS_NAME_MAX);
	if (len > 0 && s[len - 1] == '.')
		return fail(err, errlen, "a host name must not end with a dot");
	for (i = 0; i <= len; i++) {
		if (i < len && s[i] != '.')
			continue;
		if (label_check(s + start, i - start, err, errlen) == -1)
			return -1;
		last = start;
		start = i + 1;
	}
	for (i = last; i < len; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return fail(err, errlen, "a host name must not end in a number "
	    "(an IPv4 address is four decimal numbers)");
}

int
egress_name_valid(const char *s, size_t len, char *err, size_t errlen)
{
	return name_check(s, len, err, errlen);
}

/* Copies the name lowercase into out (EGRESS_NAME_MAX + 1 bytes). */
static void
name_lower(const char *s, size_t len, char *out)
{
	size_t	 i;

	for (i = 0; i < len; i++)
		out[i] = s[i] >= 'A' && s[i] <= 'Z' ? s[i] - 'A' + 'a' : s[i];
	out[len] = '\0';
}

/* Digits, no leading zero, at most max: a port or a prefix length. */
static int
number_parse(const char *s, size_t len, unsigned int max, unsigned int *out)
{
	unsigned int	 v = 0;
	size_t		 i;

	if (len == 0 || len > PORT_DIGITS_MAX || (s[0] == '0' && len > 1))
		return -1;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (unsigned int)(s[i] - '0');
	}
	if (v > max)
		return -1;
	*out = v;
	return 0;
}

static int
port_parse(const char *s, size_t len, unsigned int *port, char *err,
    size_t errlen)
{
	if (number_parse(s, len, 65535, port) == -1 || *port == 0)
		return fail(err, errlen, "bad port: a port is a number "
		    "1-65535");
	return 0;
}

static int
host_bits_zero(const struct egress_cidr *c)
{
	size_t		 nbytes = c->family == AF_INET ? 4 : 16, i;
	unsigned int	 bit;

	for (i = c->prefix / 8; i < nbytes; i++) {
		bit = i == c->prefix / 8 ? c->prefix % 8 : 0;
		if ((c->addr[i] & (0xff >> bit)) != 0)
			return 0;
	}
	return 1;
}

/*
 * A range of IPv4-mapped IPv6 addresses would never match: connections
 * to those addresses are checked as the IPv4 addresses they are.
 */
static int
v4_mapped(const struct egress_cidr *c)
{
	static const uint8_t	 mapped[12] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff
	};

	return c->family == AF_INET6 && c->prefix >= 96 &&
	    memcmp(c->addr, mapped, sizeof(mapped)) == 0;
}

static int
cidr_check(const struct egress_cidr *c, char *err, size_t errlen)
{
	if (!host_bits_zero(c))
		return fail(err, errlen, "a range must be given by its first "
		    "address: host bits are set past /%u", c->prefix);
	if (v4_mapped(c))
		return fail(err, errlen, "an IPv4-mapped IPv6 address: give "
		    "the IPv4 address");
	return 0;
}

static int
cidr_parse_af(const char *s, size_t len, int af, struct egress_cidr *c,
    char *err, size_t errlen)
{
	char		 buf[CIDR_TEXT_MAX + 1];
	const char	*slash;
	size_t		 alen;
	unsigned int	 max = af == AF_INET ? 32 : 128;

	memset(c, 0, sizeof(*c));
	c->family = af;
	c->prefix = max;
	if (len > CIDR_TEXT_MAX)
		return fail(err, errlen, "not an IP address or range");
	slash = memchr(s, '/', len);
	alen = slash != NULL ? (size_t)(slash - s) : len;
	memcpy(buf, s, alen);
	buf[alen] = '\0';
	if (inet_pton(af, buf, c->addr) != 1)
		return fail(err, errlen, "not an %s address",
		    af == AF_INET ? "IPv4" : "IPv6");
	if (slash != NULL && number_parse(slash + 1, len - alen - 1, 999,
	    &c->prefix) == -1)
		return fail(err, errlen, "bad prefix length: a number 0-%u",
		    max);
	if (c->prefix > max)
		return fail(err, errlen, "prefix /%u is longer than %u",
		    c->prefix, max);
	return cidr_check(c, err, errlen);
}

int
egress_cidr_parse(const char *s, size_t len, struct egress_cidr *c,
    char *err, size_t errlen)
{
	int	 af = memchr(s, ':', len) != NULL ? AF_INET6 : AF_INET;

	return cidr_parse_af(s, len, af, c, err, errlen);
}

/*
 * Where the host part of an entry ends and its port: "[v6]:443",
 * "name:443", or no port.  More than one colon outside brackets is an
 * IPv6 address whose end could be read as a port: brackets are required.
 */
static int
split_port(const char *s, size_t len, size_t *hostlen, unsigned int *port,
    char *err, size_t errlen)
{
	const char	*end;
	size_t		 i, ncolons = 0, colon = 0;

	*port = 0;
	*hostlen = len;
	if (s[0] == '[') {
		if ((end = memchr(s, ']', len)) == NULL)
			return fail(err, errlen, "'[' without its ']'");
		*hostlen = (size_t)(end - s) + 1;
		if (*hostlen == len)
			return 0;
		if (s[*hostlen] != ':')
			return fail(err, errlen, "only :port may follow ']'");
		return port_parse(s + *hostlen + 1, len - *hostlen - 1, port,
		    err, errlen);
	}
	for (i = 0; i < len; i++)
		if (s[i] == ':') {
			ncolons++;
			colon = i;
		}
	if (ncolons > 1)
		return fail(err, errlen, "an IPv6 address must be in brackets, "
		    "as [2001:db8::1] or [2001:db8::/32]:443");
	if (ncolons == 0)
		return 0;
	*hostlen = colon;
	return port_parse(s + colon + 1, len - colon - 1, port, err, errlen);
}

static int
name_rule(const char *s, size_t len, enum egress_rule_kind kind,
    struct egress_rule *r, char *err, size_t errlen)
{
	if (len == 0)
		return fail(err, errlen, kind == EGRESS_RULE_WILDCARD ?
		    "bad wildcard: \"*.\" must be followed by a name" :
		    "empty host name");
	if (memchr(s, '*', len) != NULL)
		return fail(err, errlen, "bad wildcard: only a whole first "
		    "label \"*.\" may be one");
	if (name_check(s, len, err, errlen) == -1)
		return -1;
	r->kind = kind;
	name_lower(s, len, r->name);
	return 0;
}

static int
host_parse(const char *s, size_t len, struct egress_rule *r, char *err,
    size_t errlen)
{
	struct in_addr	 a4;
	char		 buf[INET_ADDRSTRLEN];

	if (len > 0 && s[0] == '[') {
		r->kind = EGRESS_RULE_CIDR;
		return cidr_parse_af(s + 1, len - 2, AF_INET6, &r->cidr, err,
		    errlen);
	}
	if (len < sizeof(buf)) {
		memcpy(buf, s, len);
		buf[len] = '\0';
	}
	if (memchr(s, '/', len) != NULL || (len < sizeof(buf) &&
	    inet_pton(AF_INET, buf, &a4) == 1)) {
		r->kind = EGRESS_RULE_CIDR;
		return cidr_parse_af(s, len, AF_INET, &r->cidr, err, errlen);
	}
	if (len >= 2 && s[0] == '*' && s[1] == '.')
		return name_rule(s + 2, len - 2, EGRESS_RULE_WILDCARD, r, err,
		    errlen);
	return name_rule(s, len, EGRESS_RULE_NAME, r, err, errlen);
}

static int
ascii(const char *s, size_t len)
{
	size_t	 i;

	for (i = 0; i < len; i++)
		if ((unsigned char)s[i] > 0x7f)
			return 0;
	return 1;
}

int
egress_rule_parse(const char *s, size_t len, struct egress_rule *r,
    char *err, size_t errlen)
{
	size_t	 hostlen;

	memset(r, 0, sizeof(*r));
	if (len == 0)
		return fail(err, errlen, "empty entry");
	if (len > EGRESS_ENTRY_MAX)
		return fail(err, errlen, "an entry is at most %d bytes",
		    EGRESS_ENTRY_MAX);
	if (memchr(s, '\0', len) != NULL)
		return fail(err, errlen, "an entry must not hold a NUL byte");
	if (!utf8_valid(s, len))
		return fail(err, errlen, "not valid UTF-8");
	if (!ascii(s, len))
		return fail(err, errlen, "not ASCII: internationalised names "
		    "(IDNA) are not supported, give the name's xn-- form");
	if (split_port(s, len, &hostlen, &r->port, err, errlen) == -1 ||
	    host_parse(s, hostlen, r, err, errlen) == -1) {
		memset(r, 0, sizeof(*r));
		return -1;
	}
	return 0;
}

static int
rule_equal(const struct egress_rule *a, const struct egress_rule *b)
{
	if (a->kind != b->kind || a->port != b->port)
		return 0;
	if (a->kind != EGRESS_RULE_CIDR)
		return strcmp(a->name, b->name) == 0;
	return a->cidr.family == b->cidr.family &&
	    a->cidr.prefix == b->cidr.prefix &&
	    memcmp(a->cidr.addr, b->cidr.addr, sizeof(a->cidr.addr)) == 0;
}

/* The index of an earlier rule equal to rules[n], or n. */
static size_t
rule_repeats(const struct egress_rule *rules, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (rule_equal(&rules[i], &rules[n]))
			return i;
	return n;
}

void
egress_policy_free(struct egress_policy *p)
{
	free(p->rules);
	memset(p, 0, sizeof(*p));
}

int
egress_policy_copy(struct egress_policy *dst, const struct egress_policy *src)
{
	memset(dst, 0, sizeof(*dst));
	if (src->nrules > 0) {
		dst->rules = reallocarray(NULL, src->nrules,
		    sizeof(*dst->rules));
		if (dst->rules == NULL)
			return -1;
		memcpy(dst->rules, src->rules, src->nrules *
		    sizeof(*dst->rules));
	}
	dst->mode = src->mode;
	dst->nrules = src->nrules;
	return 0;
}

int
egress_policy_equal(const struct egress_policy *a,
    const struct egress_policy *b)
{
	size_t	 i;

	if (a->mode != b->mode || a->nrules != b->nrules)
		return 0;
	for (i = 0; i < a->nrules; i++)
		if (!rule_equal(&a->rules[i], &b->rules[i]))
			return 0;
	return 1;
}

/* allow[i]'s error, the entry quoted when that is safe. */
static int
entry_parse(json_object *v, size_t i, struct egress_rule *r, char *err,
    size_t errlen)
{
	char		 why[160];
	const char	*s;
	size_t		 len;

	if (!json_object_is_type(v, json_type_string))
		return fail(err, errlen, "allow[%zu] must be a string", i);
	s = json_object_get_string(v);
	len = (size_t)json_object_get_string_len(v);
	if (egress_rule_parse(s, len, r, why, sizeof(why)) == 0)
		return 0;
	if (len > 0 && len <= EGRESS_ENTRY_MAX && printable(s, len))
		return fail(err, errlen, "allow[%zu] \"%.*s\": %s", i,
		    (int)len, s, why);
	return fail(err, errlen, "allow[%zu]: %s", i, why);
}

static int
allow_parse(json_object *allow, struct egress_policy *p, char *err,
    size_t errlen)
{
	size_t	 i, n, first;

	if (!json_object_is_type(allow, json_type_array))
		return fail(err, errlen, "allow must be a list of strings");
	n = json_object_array_length(allow);
	if (n > EGRESS_ALLOW_MAX)
		return fail(err, errlen, "allow has %zu entries, at most %d",
		    n, EGRESS_ALLOW_MAX);
	if (n > 0 && (p->rules = calloc(n, sizeof(*p->rules))) == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		if (entry_parse(json_object_array_get_idx(allow, i), i,
		    &p->rules[i], err, errlen) == -1)
			return -1;
		if ((first = rule_repeats(p->rules, i)) != i)
			return fail(err, errlen, "allow[%zu] says again what "
			    "allow[%zu] says", i, first);
		p->nrules = i + 1;
	}
	return 0;
}

static int
mode_parse(json_object *v, enum egress_mode *mode, char *err, size_t errlen)
{
	const char	*s;
	size_t		 len;

	if (!json_object_is_type(v, json_type_string))
		return fail(err, errlen, "mode must be a string: none, public "
		    "or allowlist");
	s = json_object_get_string(v);
	len = (size_t)json_object_get_string_len(v);
	if (len != strlen(s))
		return fail(err, errlen, "unknown mode: none, public or "
		    "allowlist");
	if (strcmp(s, "none") == 0)
		*mode = EGRESS_NONE;
	else if (strcmp(s, "public") == 0)
		*mode = EGRESS_PUBLIC;
	else if (strcmp(s, "allowlist") == 0)
		*mode = EGRESS_ALLOWLIST;
	else if (len <= 32 && printable(s, len))
		return fail(err, errlen, "unknown mode \"%s\": none, public or "
		    "allowlist", s);
	else
		return fail(err, errlen, "unknown mode: none, public or "
		    "allowlist");
	return 0;
}

static int
fields_check(json_object *o, char *err, size_t errlen)
{
	json_object_object_foreach(o, key, val) {
		(void)val;
		if (strcmp(key, "mode") == 0 || strcmp(key, "allow") == 0)
			continue;
		if (strlen(key) <= 32 && printable(key, strlen(key)))
			return fail(err, errlen, "unknown field \"%s\": a "
			    "policy has mode and allow", key);
		return fail(err, errlen, "unknown field: a policy has mode "
		    "and allow");
	}
	return 0;
}

static int
object_parse(json_object *o, struct egress_policy *p, char *err,
    size_t errlen)
{
	json_object	*mode, *allow;

	if (fields_check(o, err, errlen) == -1)
		return -1;
	if (!json_object_object_get_ex(o, "mode", &mode))
		return fail(err, errlen, "a policy needs a mode: none, public "
		    "or allowlist");
	if (mode_parse(mode, &p->mode, err, errlen) == -1)
		return -1;
	if (!json_object_object_get_ex(o, "allow", &allow))
		return p->mode != EGRESS_ALLOWLIST ? 0 : fail(err, errlen,
		    "mode allowlist needs allow, a list of entries");
	if (p->mode != EGRESS_ALLOWLIST)
		return fail(err, errlen, "allow is only for mode allowlist");
	return allow_parse(allow, p, err, errlen);
}

int
egress_policy_parse(json_object *v, const struct egress_policy *if_true,
    struct egress_policy *p, char *err, size_t errlen)
{
	struct egress_policy	 tmp;

	memset(&tmp, 0, sizeof(tmp));
	switch (json_object_get_type(v)) {
	case json_type_boolean:
		if (!json_object_get_boolean(v))
			tmp.mode = EGRESS_NONE;
		else if (if_true == NULL)
			tmp.mode = EGRESS_PUBLIC;
		else if (egress_policy_copy(&tmp, if_true) == -1)
			return -1;
		break;
	case json_type_object:
		if (object_parse(v, &tmp, err, errlen) == -1) {
			egress_policy_free(&tmp);
			return -1;
		}
		break;
	default:
		return fail(err, errlen, "network must be true, false or a "
		    "policy object with a mode");
	}
	*p = tmp;
	return 0;
}

static int
cidr_format(const struct egress_cidr *c, char *buf, size_t len)
{
	char	 a[INET6_ADDRSTRLEN];
	int	 n, v6 = c->family == AF_INET6;

	if (inet_ntop(c->family, c->addr, a, sizeof(a)) == NULL)
		return -1;
	if (c->prefix == (v6 ? 128u : 32u))
		n = snprintf(buf, len, "%s%s%s", v6 ? "[" : "", a,
		    v6 ? "]" : "");
	else
		n = snprintf(buf, len, "%s%s/%u%s", v6 ? "[" : "", a,
		    c->prefix, v6 ? "]" : "");
	return n < 0 || (size_t)n >= len ? -1 : n;
}

int
egress_rule_format(const struct egress_rule *r, char *buf, size_t len)
{
	int	 n, m;

	if (r->kind == EGRESS_RULE_CIDR)
		n = cidr_format(&r->cidr, buf, len);
	else
		n = snprintf(buf, len, "%s%s",
		    r->kind == EGRESS_RULE_WILDCARD ? "*." : "", r->name);
	if (n < 0 || (size_t)n >= len)
		return -1;
	if (r->port == 0)
		return 0;
	m = snprintf(buf + n, len - (size_t)n, ":%u", r->port);
	return m < 0 || (size_t)m >= len - (size_t)n ? -1 : 0;
}

static const char *
mode_name(enum egress_mode mode)
{
	switch (mode) {
	case EGRESS_NONE:
		return "none";
	case EGRESS_PUBLIC:
		return "public";
	default:
		return "allowlist";
	}
}

static json_object *
allow_to_json(const struct egress_policy *p)
{
	json_object	*a, *s;
	char		 buf[EGRESS_ENTRY_MAX + 1];
	size_t		 i;

	if ((a = json_object_new_array()) == NULL)
		return NULL;
	for (i = 0; i < p->nrules; i++) {
		if (egress_rule_format(&p->rules[i], buf, sizeof(buf)) == -1 ||
		    (s = json_object_new_string(buf)) == NULL)
			goto bad;
		if (json_object_array_add(a, s) != 0) {
			json_object_put(s);
			goto bad;
		}
	}
	return a;
bad:
	json_object_put(a);
	return NULL;
}

json_object *
egress_policy_to_json(const struct egress_policy *p)
{
	json_object	*o, *a;

	if ((o = json_object_new_object()) == NULL)
		return NULL;
	if (json_object_object_add(o, "mode",
	    json_object_new_string(mode_name(p->mode))) != 0)
		goto bad;
	if (p->mode != EGRESS_ALLOWLIST)
		return o;
	if ((a = allow_to_json(p)) == NULL)
		goto bad;
	if (json_object_object_add(o, "allow", a) != 0) {
		json_object_put(a);
		goto bad;
	}
	return o;
bad:
	json_object_put(o);
	return NULL;
}

void
msg_put_egress_policy(struct msgw *w, const struct egress_policy *p)
{
	const struct egress_rule	*r;
	size_t				 i, nbytes;

	msgw_u8(w, (uint8_t)p->mode);
	msgw_u32(w, (uint32_t)p->nrules);
	for (i = 0; i < p->nrules; i++) {
		r = &p->rules[i];
		msgw_u8(w, (uint8_t)r->kind);
		msgw_u32(w, r->port);
		if (r->kind != EGRESS_RULE_CIDR) {
			msgw_str(w, r->name);
			continue;
		}
		nbytes = r->cidr.family == AF_INET ? 4 : 16;
		msgw_u8(w, nbytes == 4 ? 4 : 6);
		msgw_u8(w, (uint8_t)r->cidr.prefix);
		msgw_bytes(w, r->cidr.addr, nbytes);
	}
}

/* A name only parse could have made: valid and already lowercase. */
static int
get_name(struct msgr *r, char *out)
{
	char	*s;
	size_t	 len;
	int	 ok;

	if ((s = msgr_str(r, EGRESS_NAME_MAX)) == NULL)
		return -1;
	len = strlen(s);
	name_lower(s, len, out);
	ok = len > 0 && name_check(s, len, NULL, 0) == 0 &&
	    memchr(s, '*', len) == NULL && strcmp(s, out) == 0;
	free(s);
	return ok ? 0 : -1;
}

static int
get_cidr(struct msgr *r, struct egress_cidr *c)
{
	uint8_t		 family;
	size_t		 i, nbytes;

	family = msgr_u8(r);
	c->prefix = msgr_u8(r);
	if (r->error || (family != 4 && family != 6))
		return -1;
	c->family = family == 4 ? AF_INET : AF_INET6;
	nbytes = family == 4 ? 4 : 16;
	if (c->prefix > 8 * nbytes)
		return -1;
	for (i = 0; i < nbytes; i++)
		c->addr[i] = msgr_u8(r);
	if (r->error)
		return -1;
	return cidr_check(c, NULL, 0);
}

static int
get_rule(struct msgr *r, struct egress_rule *rule)
{
	uint8_t	 kind;

	memset(rule, 0, sizeof(*rule));
	kind = msgr_u8(r);
	rule->port = msgr_u32(r);
	if (r->error || rule->port > 65535)
		return -1;
	rule->kind = kind;
	switch (kind) {
	case EGRESS_RULE_NAME:
	case EGRESS_RULE_WILDCARD:
		return get_name(r, rule->name);
	case EGRESS_RULE_CIDR:
		return get_cidr(r, &rule->cidr);
	default:
		return -1;
	}
}

static int
get_rules(struct msgr *r, struct egress_policy *p, uint32_t n)
{
	uint32_t	 i;

	if (n > EGRESS_ALLOW_MAX || (n > 0 && p->mode != EGRESS_ALLOWLIST))
		return -1;
	if (n > 0 && (p->rules = calloc(n, sizeof(*p->rules))) == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		if (get_rule(r, &p->rules[i]) == -1 ||
		    rule_repeats(p->rules, i) != i)
			return -1;
		p->nrules = i + 1;
	}
	return 0;
}

int
msg_get_egress_policy(struct msgr *r, struct egress_policy *p)
{
	uint8_t		 mode;
	uint32_t	 n;

	memset(p, 0, sizeof(*p));
	mode = msgr_u8(r);
	n = msgr_u32(r);
	if (r->error || mode > EGRESS_ALLOWLIST)
		goto bad;
	p->mode = mode;
	if (get_rules(r, p, n) == -1)
		goto bad;
	return 0;
bad:
	egress_policy_free(p);
	r->error = 1;
	return -1;
}

int
egress_policy_decode(const void *buf, size_t len, struct egress_policy *p)
{
	struct msgr	 r;

	r.p = buf;
	r.len = len;
	r.off = 0;
	r.error = 0;
	if (msg_get_egress_policy(&r, p) == -1)
		return -1;
	if (msgr_end(&r) == -1) {
		egress_policy_free(p);
		return -1;
	}
	return 0;
}
