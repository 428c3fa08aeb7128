/*
 * Tests for common/egress_policy.c and common/egress_match.c: a client's
 * policy parsed or refused with the right words, written back
 * canonically, its byte form decoded exactly and lies refused, and the
 * checks on resolved addresses (private, metadata, mapped, the
 * operator's extra public ranges).
 */
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "egress_policy.h"

static int
parse(const char *text, struct egress_policy *p, char *err, size_t errlen)
{
	json_object	*v;
	int		 r;

	/* json-c's null is the NULL object */
	v = json_tokener_parse(text);
	if (strcmp(text, "null") != 0)
		assert_non_null(v);
	r = egress_policy_parse(v, NULL, p, err, errlen);
	json_object_put(v);
	return r;
}

static void
parse_ok(const char *text, struct egress_policy *p)
{
	char	 err[256] = "";

	if (parse(text, p, err, sizeof(err)) == -1)
		fail_msg("%s refused: %s", text, err);
}

static void
expect_bad(const char *text, const char *why)
{
	struct egress_policy	 p;
	char			 err[256] = "";

	memset(&p, 0xa5, sizeof(p));
	if (parse(text, &p, err, sizeof(err)) == 0)
		fail_msg("%s accepted", text);
	if (strstr(err, why) == NULL)
		fail_msg("%s: \"%s\" does not say \"%s\"", text, err, why);
}

/* One entry (len bytes, may hold anything) refused for the reason. */
static void
entry_bad_len(const char *s, size_t len, const char *why)
{
	struct egress_rule	 r;
	char			 err[256] = "";

	if (egress_rule_parse(s, len, &r, err, sizeof(err)) == 0)
		fail_msg("entry %.*s accepted", (int)len, s);
	if (strstr(err, why) == NULL)
		fail_msg("entry %.*s: \"%s\" does not say \"%s\"", (int)len, s,
		    err, why);
}

static void
entry_bad(const char *s, const char *why)
{
	entry_bad_len(s, strlen(s), why);
}

/* One entry accepted and written back as canonical. */
static void
entry_ok(const char *s, const char *canonical)
{
	struct egress_rule	 r;
	char			 err[256] = "", buf[EGRESS_ENTRY_MAX + 1];

	if (egress_rule_parse(s, strlen(s), &r, err, sizeof(err)) == -1)
		fail_msg("entry %s refused: %s", s, err);
	assert_int_equal(egress_rule_format(&r, buf, sizeof(buf)), 0);
	assert_string_equal(buf, canonical);
}

static struct sockaddr_storage
addr(const char *text)
{
	struct sockaddr_storage	 ss;
	struct sockaddr_in	*sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)&ss;

	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, text, &sin->sin_addr) == 1)
		ss.ss_family = AF_INET;
	else if (inet_pton(AF_INET6, text, &sin6->sin6_addr) == 1)
		ss.ss_family = AF_INET6;
	else
		fail_msg("bad address %s in a test", text);
	return ss;
}

static int
check(const struct egress_policy *p, const struct egress_extra *extra,
    const char *host, unsigned int port, const char *a, char *why)
{
	struct sockaddr_storage	 ss = addr(a);

	why[0] = '\0';
	return egress_check(p, extra, host, port, &ss, why, EGRESS_WHY_MAX);
}

static void
expect_refused(const struct egress_policy *p,
    const struct egress_extra *extra, const char *host, unsigned int port,
    const char *a, const char *reason)
{
	char	 why[EGRESS_WHY_MAX];

	if (check(p, extra, host, port, a, why))
		fail_msg("%s:%u at %s allowed", host ? host : "-", port, a);
	if (strcmp(why, reason) != 0)
		fail_msg("%s at %s: \"%s\", not \"%s\"", host ? host : "-", a,
		    why, reason);
}

static void
expect_allowed(const struct egress_policy *p,
    const struct egress_extra *extra, const char *host, unsigned int port,
    const char *a)
{
	char	 why[EGRESS_WHY_MAX];

	if (!check(p, extra, host, port, a, why))
		fail_msg("%s:%u at %s refused: %s", host ? host : "-", port, a,
		    why);
}

static void
test_modes(void **state)
{
	struct egress_policy	 p, t;
	json_object		*v;
	char			 err[256];

	parse_ok("false", &p);
	assert_int_equal(p.mode, EGRESS_NONE);
	parse_ok("true", &p);
	assert_int_equal(p.mode, EGRESS_PUBLIC);
	parse_ok("{\"mode\": \"none\"}", &p);
	assert_int_equal(p.mode, EGRESS_NONE);
	parse_ok("{\"mode\": \"public\"}", &p);
	assert_int_equal(p.mode, EGRESS_PUBLIC);
	assert_int_equal(p.nrules, 0);
	parse_ok("{\"mode\": \"allowlist\", \"allow\": []}", &p);
	assert_int_equal(p.mode, EGRESS_ALLOWLIST);
	assert_int_equal(p.nrules, 0);
	egress_policy_free(&p);

	/* true is the operator's policy, copied */
	parse_ok("{\"mode\": \"allowlist\", \"allow\": [\"pypi.org\"]}", &t);
	v = json_object_new_boolean(1);
	assert_int_equal(egress_policy_parse(v, &t, &p, err, sizeof(err)), 0);
	json_object_put(v);
	assert_true(egress_policy_equal(&p, &t));
	assert_ptr_not_equal(p.rules, t.rules);
	egress_policy_free(&p);
	egress_policy_free(&t);
}

static void
test_policy_refused(void **state)
{
	expect_bad("null", "network must be true, false or a policy object");
	expect_bad("1", "network must be");
	expect_bad("\"public\"", "network must be");
	expect_bad("[]", "network must be");
	expect_bad("{}", "needs a mode");
	expect_bad("{\"mode\": \"open\"}", "unknown mode \"open\"");
	expect_bad("{\"mode\": \"PUBLIC\"}", "unknown mode");
	expect_bad("{\"mode\": \"pub\\u0000lic\"}", "unknown mode");
	expect_bad("{\"mode\": 2}", "mode must be a string");
	expect_bad("{\"mode\": null}", "mode must be a string");
	expect_bad("{\"mode\": \"public\", \"extra\": 1}",
	    "unknown field \"extra\"");
	expect_bad("{\"mode\": \"public\", \"\\u00e9\": 1}",
	    "unknown field: a policy has mode and allow");
	expect_bad("{\"mode\": \"public\", \"allow\": []}",
	    "allow is only for mode allowlist");
	expect_bad("{\"mode\": \"none\", \"allow\": [\"a.b\"]}",
	    "allow is only for mode allowlist");
	expect_bad("{\"mode\": \"allowlist\"}", "needs allow");
	expect_bad("{\"mode\": \"allowlist\", \"allow\": \"pypi.org\"}",
	    "allow must be a list of strings");
	expect_bad("{\"mode\": \"allowlist\", \"allow\": {}}",
	    "allow must be a list");
	expect_bad("{\"mode\": \"allowlist\", \"allow\": [\"a.b\", 1]}",
	    "allow[1] must be a string");
	expect_bad("{\"mode\": \"allowlist\", \"allow\": [null]}",
	    "allow[0] must be a string");
	expect_bad("{\"mode\": \"allowlist\", \"allow\": [\"a.b\", \"\"]}",
	    "allow[1]: empty entry");
	expect_bad("{\"mode\": \"allowlist\", \"allow\": [\"a.b:0\"]}",
	    "allow[0] \"a.b:0\": bad port");
	/* not quoted: not printable ASCII */
	expect_bad("{\"mode\": \"allowlist\", \"allow\": "
	    "[\"b\\u00fccher.de\"]}",
	    "allow[0]: not ASCII: internationalised names (IDNA) are not "
	    "supported");
	expect_bad("{\"mode\": \"allowlist\", \"allow\": [\"a\\nb\"]}",
	    "allow[0]: a host name holds only");
	expect_bad("{\"mode\": \"allowlist\", \"allow\": [\"a\\u0000b\"]}",
	    "allow[0]: an entry must not hold a NUL byte");
	expect_bad("{\"mode\": \"allowlist\", \"allow\": "
	    "[\"Pypi.org\", \"pypi.org\"]}", "allow[1] says again what "
	    "allow[0] says");
	expect_bad("{\"mode\": \"allowlist\", \"allow\": "
	    "[\"10.0.0.0/8\", \"10.0.0.0/8\"]}", "allow[1] says again");
}

static void
test_too_many(void **state)
{
	struct egress_policy	 p;
	json_object		*o, *a;
	char			 err[256], name[32];
	int			 i;

	o = json_object_new_object();
	a = json_object_new_array();
	json_object_object_add(o, "mode", json_object_new_string("allowlist"));
	json_object_object_add(o, "allow", a);
	for (i = 0; i < EGRESS_ALLOW_MAX; i++) {
		snprintf(name, sizeof(name), "h%d.example.com", i);
		json_object_array_add(a, json_object_new_string(name));
	}
	assert_int_equal(egress_policy_parse(o, NULL, &p, err, sizeof(err)),
	    0);
	assert_int_equal(p.nrules, EGRESS_ALLOW_MAX);
	assert_string_equal(p.rules[255].name, "h255.example.com");
	egress_policy_free(&p);
	json_object_array_add(a, json_object_new_string("one.more"));
	assert_int_equal(egress_policy_parse(o, NULL, &p, err, sizeof(err)),
	    -1);
	assert_string_equal(err, "allow has 257 entries, at most 256");
	json_object_put(o);
}

static void
test_names(void **state)
{
	char	 big[EGRESS_ENTRY_MAX + 2];
	char	 name[EGRESS_NAME_MAX + 2];
	size_t	 i;

	entry_ok("pypi.org", "pypi.org");
	entry_ok("PyPI.ORG", "pypi.org");
	entry_ok("files.pythonhosted.org:443", "files.pythonhosted.org:443");
	entry_ok("localhost", "localhost");
	entry_ok("xn--bcher-kva.de", "xn--bcher-kva.de");
	entry_ok("_acme.example.com", "_acme.example.com");
	entry_ok("a-b.c1", "a-b.c1");
	entry_ok("*.githubusercontent.com", "*.githubusercontent.com");
	entry_ok("*.Example.com:8443", "*.example.com:8443");

	entry_bad("*", "bad wildcard");
	entry_bad("*.", "bad wildcard: \"*.\" must be followed by a name");
	entry_bad("*.*.com", "bad wildcard");
	entry_bad("a.*.com", "bad wildcard");
	entry_bad("*a.com", "bad wildcard");
	entry_bad("**.com", "bad wildcard");
	entry_bad("a..b", "empty label");
	entry_bad(".a.b", "empty label");
	entry_bad("pypi.org.", "must not end with a dot");
	entry_bad("-a.b", "must not start or end with '-'");
	entry_bad("a-.b", "must not start or end with '-'");
	entry_bad("a b", "holds only letters");
	entry_bad("a/b", "not an IPv4 address");
	entry_bad("a]b", "holds only letters");
	entry_bad("1.2.3", "must not end in a number");
	entry_bad("999.1.1.1", "must not end in a number");
	entry_bad("1.2.3.4.5", "must not end in a number");
	entry_bad("0x7f.1", "must not end in a number");
	entry_bad("caf\xc3\xa9.fr", "not ASCII");
	entry_bad("\xe2\x80\x8bpypi.org", "not ASCII");
	entry_bad("pypi\xef\xbc\x8eorg", "not ASCII");
	entry_bad("a\xff.b", "not valid UTF-8");
	entry_bad("\xc0\xae.b", "not valid UTF-8");
	entry_bad("\xed\xa0\x80.b", "not valid UTF-8");
	entry_bad_len("a\0b", 3, "NUL byte");
	entry_bad_len("", 0, "empty entry");
	entry_bad(":443", "empty host name");

	/* a label of 64, a name of 254 */
	memset(name, 'a', 64);
	name[64] = '\0';
	entry_bad(name, "at most 63 bytes");
	for (i = 0; i < EGRESS_NAME_MAX + 1; i++)
		name[i] = i % 2 == 0 ? 'a' : '.';
	name[EGRESS_NAME_MAX + 1] = '\0';
	entry_bad(name, "a host name is at most 253 bytes");
	name[EGRESS_NAME_MAX] = '\0';
	entry_ok(name, name);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	entry_bad(big, "an entry is at most 261 bytes");
}

/* The check the egress proxy makes of a requested name. */
static void
test_name_valid(void **state)
{
	char	 err[128];

	assert_int_equal(egress_name_valid("pypi.org", 8, err,
	    sizeof(err)), 0);
	/* len, not the NUL, says where the name ends. */
	assert_int_equal(egress_name_valid("pypi.org.", 8, err,
	    sizeof(err)), 0);
	assert_int_equal(egress_name_valid("pypi.org.", 9, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "must not end with a dot"));
	assert_int_equal(egress_name_valid("", 0, err, sizeof(err)), -1);
	assert_int_equal(egress_name_valid("a\0b", 3, err, sizeof(err)), -1);
	assert_int_equal(egress_name_valid("*.a", 3, err, sizeof(err)), -1);
	assert_int_equal(egress_name_valid("10.0.0.1", 8, NULL, 0), -1);
}

static void
test_ports(void **state)
{
	entry_ok("a.b:1", "a.b:1");
	entry_ok("a.b:65535", "a.b:65535");
	entry_bad("a.b:0", "bad port");
	entry_bad("a.b:65536", "bad port");
	entry_bad("a.b:99999", "bad port");
	entry_bad("a.b:100000", "bad port");
	entry_bad("a.b:0443", "bad port");
	entry_bad("a.b:", "bad port");
	entry_bad("a.b:+1", "bad port");
	entry_bad("a.b:-1", "bad port");
	entry_bad("a.b:4 3", "bad port");
	entry_bad("a.b:http", "bad port");
}

static void
test_cidrs(void **state)
{
	entry_ok("203.0.113.0/24", "203.0.113.0/24");
	entry_ok("203.0.113.0/24:443", "203.0.113.0/24:443");
	entry_ok("203.0.113.7", "203.0.113.7");
	entry_ok("203.0.113.7/32", "203.0.113.7");
	entry_ok("0.0.0.0/0", "0.0.0.0/0");
	entry_ok("0.0.0.0/0:443", "0.0.0.0/0:443");
	entry_ok("[2001:db8::/32]:443", "[2001:db8::/32]:443");
	entry_ok("[2001:DB8:0:0::1]", "[2001:db8::1]");
	entry_ok("[2001:db8::1/128]", "[2001:db8::1]");
	entry_ok("[::/0]", "[::/0]");

	entry_bad("10.0.0.0/33", "prefix /33 is longer than 32");
	entry_bad("[2001:db8::/129]", "prefix /129 is longer than 128");
	entry_bad("10.0.0.1/8", "host bits are set past /8");
	entry_bad("[2001:db8::1/32]", "host bits are set past /32");
	entry_bad("10.0.0.0/", "bad prefix length");
	entry_bad("10.0.0.0/08", "bad prefix length");
	entry_bad("10.0.0.0/-1", "bad prefix length");
	entry_bad("10.0.0.0/8/8", "bad prefix length");
	entry_bad("10.0.0/8", "not an IPv4 address");
	entry_bad("010.0.0.0/8", "not an IPv4 address");
	entry_bad("1.2.3.256/32", "not an IPv4 address");
	entry_bad("2001:db8::1", "must be in brackets");
	entry_bad("2001:db8::/32", "must be in brackets");
	entry_bad("[2001:db8::1", "'[' without its ']'");
	entry_bad("[2001:db8::1]443", "only :port may follow ']'");
	entry_bad("[2001:db8::1]:", "bad port");
	entry_bad("[]", "not an IPv6 address");
	entry_bad("[10.0.0.1]", "not an IPv6 address");
	entry_bad("[pypi.org]", "not an IPv6 address");
	entry_bad("[::ffff:10.0.0.1]", "IPv4-mapped");
	entry_bad("[::ffff:0:0/96]", "IPv4-mapped");
	entry_bad("[::ffff:169.254.169.254]:80", "IPv4-mapped");
}

static void
test_to_json(void **state)
{
	struct egress_policy	 p, q;
	json_object		*o;
	char			 err[256];
	const char		*text;

	parse_ok("{\"allow\": [\"PyPI.org\", \"*.GitHubUserContent.com\", "
	    "\"203.0.113.0/24:443\", \"[2001:db8:0::/32]:443\"], "
	    "\"mode\": \"allowlist\"}", &p);
	o = egress_policy_to_json(&p);
	assert_non_null(o);
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE);
	assert_string_equal(text, "{\"mode\":\"allowlist\",\"allow\":"
	    "[\"pypi.org\",\"*.githubusercontent.com\",\"203.0.113.0/24:443\","
	    "\"[2001:db8::/32]:443\"]}");
	/* the canonical form parses to the same policy */
	assert_int_equal(egress_policy_parse(o, NULL, &q, err, sizeof(err)),
	    0);
	assert_true(egress_policy_equal(&p, &q));
	json_object_put(o);
	egress_policy_free(&q);
	egress_policy_free(&p);

	parse_ok("{\"mode\": \"public\"}", &p);
	o = egress_policy_to_json(&p);
	assert_string_equal(json_object_to_json_string_ext(o,
	    JSON_C_TO_STRING_PLAIN), "{\"mode\":\"public\"}");
	json_object_put(o);
	parse_ok("false", &p);
	o = egress_policy_to_json(&p);
	assert_string_equal(json_object_to_json_string_ext(o,
	    JSON_C_TO_STRING_PLAIN), "{\"mode\":\"none\"}");
	json_object_put(o);
}

static void
round_trip(const char *text)
{
	struct egress_policy	 p, q;
	struct msgw		 w, w2;

	parse_ok(text, &p);
	msgw_init(&w);
	msg_put_egress_policy(&w, &p);
	assert_false(w.overflow);
	assert_int_equal(egress_policy_decode(w.buf, w.len, &q), 0);
	assert_true(egress_policy_equal(&p, &q));
	msgw_init(&w2);
	msg_put_egress_policy(&w2, &q);
	assert_int_equal(w2.len, w.len);
	assert_memory_equal(w2.buf, w.buf, w.len);
	egress_policy_free(&p);
	egress_policy_free(&q);
}

static void
test_round_trips(void **state)
{
	round_trip("false");
	round_trip("true");
	round_trip("{\"mode\": \"allowlist\", \"allow\": []}");
	round_trip("{\"mode\": \"allowlist\", \"allow\": [\"pypi.org\", "
	    "\"*.githubusercontent.com\", \"203.0.113.0/24:443\", "
	    "\"[2001:db8::/32]:443\", \"0.0.0.0/0:22\", \"[::/0]\"]}");
}

/* Bytes of one allowlist of a single rule, as a lying peer would. */
static size_t
one_rule(unsigned char *b, uint8_t kind, uint32_t port)
{
	size_t	 n = 0;

	b[n++] = EGRESS_ALLOWLIST;
	b[n++] = 1;
	b[n++] = 0;
	b[n++] = 0;
	b[n++] = 0;
	b[n++] = kind;
	b[n++] = port & 0xff;
	b[n++] = (port >> 8) & 0xff;
	b[n++] = (port >> 16) & 0xff;
	b[n++] = (port >> 24) & 0xff;
	return n;
}

static size_t
add_str(unsigned char *b, size_t n, const char *s)
{
	uint32_t	 len = (uint32_t)strlen(s);

	b[n++] = len & 0xff;
	b[n++] = (len >> 8) & 0xff;
	b[n++] = 0;
	b[n++] = 0;
	memcpy(b + n, s, len);
	return n + len;
}

static void
expect_lie(const unsigned char *b, size_t len)
{
	struct egress_policy	 p;

	assert_int_equal(egress_policy_decode(b, len, &p), -1);
	assert_int_equal(p.nrules, 0);
	assert_null(p.rules);
}

static void
test_lies(void **state)
{
	struct egress_policy	 p;
	struct msgw		 w;
	unsigned char		 b[600];
	size_t			 n, i;

	/* every cut of a good encoding, and one byte too many */
	parse_ok("{\"mode\": \"allowlist\", \"allow\": [\"pypi.org:443\", "
	    "\"[2001:db8::/32]\", \"*.a.b\"]}", &p);
	msgw_init(&w);
	msg_put_egress_policy(&w, &p);
	egress_policy_free(&p);
	for (i = 0; i < w.len; i++)
		expect_lie(w.buf, i);
	w.buf[w.len] = 0;
	expect_lie(w.buf, w.len + 1);

	/* unknown mode; rules for mode public; a count past the bound */
	expect_lie((const unsigned char *)"\x03\0\0\0\0", 5);
	expect_lie((const unsigned char *)"\x01\x01\0\0\0", 5);
	expect_lie((const unsigned char *)"\x02\x01\x01\0\0", 5);
	expect_lie((const unsigned char *)"\x02\xff\xff\xff\xff", 5);

	n = one_rule(b, EGRESS_RULE_NAME, 443);
	assert_int_equal(egress_policy_decode(b, add_str(b, n, "a.b"), &p), 0);
	egress_policy_free(&p);
	expect_lie(b, add_str(b, n, "A.b"));	/* not canonical */
	expect_lie(b, add_str(b, n, "a..b"));
	expect_lie(b, add_str(b, n, "a.b."));
	/* the star is the kind's, never the name's */
	expect_lie(b, add_str(b, n, "*.a.b"));
	expect_lie(b, add_str(b, n, ""));
	expect_lie(b, add_str(b, n, "1.2.3.4"));
	expect_lie(b, add_str(b, n, "caf\xc3\xa9"));
	/* a NULL string */
	memcpy(b + n, "\xff\xff\xff\xff", 4);
	expect_lie(b, n + 4);
	/* a name past 253 bytes */
	memset(b + n + 4, 'a', 254);
	b[n] = 254;
	b[n + 1] = 0;
	b[n + 2] = 0;
	b[n + 3] = 0;
	expect_lie(b, n + 4 + 254);

	/* ports 0 (any) and 65535 fine, 65536 not */
	n = one_rule(b, EGRESS_RULE_WILDCARD, 0);
	assert_int_equal(egress_policy_decode(b, add_str(b, n, "a.b"), &p), 0);
	egress_policy_free(&p);
	n = one_rule(b, EGRESS_RULE_WILDCARD, 65536);
	expect_lie(b, add_str(b, n, "a.b"));
	n = one_rule(b, 9, 1);
	expect_lie(b, add_str(b, n, "a.b"));

	/* CIDR: family, prefix, host bits, mapped */
	n = one_rule(b, EGRESS_RULE_CIDR, 0);
	memcpy(b + n, "\x04\x18\xcb\x00\x71\x00", 6);
	assert_int_equal(egress_policy_decode(b, n + 6, &p), 0);
	assert_int_equal(p.rules[0].cidr.prefix, 24);
	egress_policy_free(&p);
	memcpy(b + n, "\x04\x21\xcb\x00\x71\x00", 6);	/* /33 */
	expect_lie(b, n + 6);
	memcpy(b + n, "\x04\x18\xcb\x00\x71\x01", 6);	/* host bits */
	expect_lie(b, n + 6);
	memcpy(b + n, "\x05\x18\xcb\x00\x71\x00", 6);	/* family */
	expect_lie(b, n + 6);
	memcpy(b + n, "\x06\x80\0\0\0\0\0\0\0\0\0\0\xff\xff\x0a\0\0\x01", 18);
	expect_lie(b, n + 18);			/* ::ffff:10.0.0.1 */
	memcpy(b + n, "\x06\x81\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 18);
	expect_lie(b, n + 18);			/* /129 */

	/* the same rule twice */
	n = one_rule(b, EGRESS_RULE_NAME, 0);
	b[1] = 2;
	n = add_str(b, n, "a.b");
	b[n++] = EGRESS_RULE_NAME;
	memset(b + n, 0, 4);
	n = add_str(b, n + 4, "a.b");
	expect_lie(b, n);
}

static void
test_public(void **state)
{
	struct egress_policy	 p;

	parse_ok("{\"mode\": \"public\"}", &p);
	expect_allowed(&p, NULL, "pypi.org", 443, "151.101.0.223");
	expect_allowed(&p, NULL, NULL, 80, "8.8.8.8");
	expect_allowed(&p, NULL, NULL, 80, "2a04:4e42::223");
	expect_allowed(&p, NULL, NULL, 80, "::ffff:8.8.8.8");
	expect_allowed(&p, NULL, NULL, 80, "100.128.0.1");
	expect_allowed(&p, NULL, NULL, 80, "172.32.0.1");
	expect_allowed(&p, NULL, NULL, 80, "2001:200::1");
	expect_refused(&p, NULL, "pypi.org", 443, "10.0.0.5",
	    "private address 10.0.0.5");
	expect_refused(&p, NULL, NULL, 80, "172.31.255.255",
	    "private address 172.31.255.255");
	expect_refused(&p, NULL, NULL, 80, "192.168.1.1",
	    "private address 192.168.1.1");
	expect_refused(&p, NULL, NULL, 80, "::ffff:10.0.0.1",
	    "private address 10.0.0.1");
	expect_refused(&p, NULL, NULL, 80, "127.0.0.1",
	    "loopback address 127.0.0.1");
	expect_refused(&p, NULL, NULL, 80, "::1", "loopback address ::1");
	expect_refused(&p, NULL, NULL, 80, "0.0.0.0",
	    "unspecified address 0.0.0.0");
	expect_refused(&p, NULL, NULL, 80, "::", "unspecified address ::");
	expect_refused(&p, NULL, NULL, 80, "100.64.0.1",
	    "carrier-grade NAT address 100.64.0.1");
	expect_refused(&p, NULL, NULL, 80, "100.127.255.254",
	    "carrier-grade NAT address 100.127.255.254");
	expect_refused(&p, NULL, NULL, 80, "169.254.169.254",
	    "cloud metadata address 169.254.169.254");
	expect_refused(&p, NULL, NULL, 80, "::ffff:169.254.169.254",
	    "cloud metadata address 169.254.169.254");
	expect_refused(&p, NULL, NULL, 80, "::ffff:a9fe:a9fe",
	    "cloud metadata address 169.254.169.254");
	expect_refused(&p, NULL, NULL, 80, "fd00:ec2::254",
	    "cloud metadata address fd00:ec2::254");
	expect_refused(&p, NULL, NULL, 80, "168.63.129.16",
	    "cloud metadata address 168.63.129.16");
	expect_refused(&p, NULL, NULL, 80, "169.254.1.1",
	    "link-local address 169.254.1.1");
	expect_refused(&p, NULL, NULL, 80, "fe80::1",
	    "link-local address fe80::1");
	expect_refused(&p, NULL, NULL, 80, "fd12:3456::1",
	    "unique local address fd12:3456::1");
	expect_refused(&p, NULL, NULL, 80, "224.0.0.1",
	    "multicast address 224.0.0.1");
	expect_refused(&p, NULL, NULL, 80, "ff02::1",
	    "multicast address ff02::1");
	expect_refused(&p, NULL, NULL, 80, "255.255.255.255",
	    "broadcast address 255.255.255.255");
	expect_refused(&p, NULL, NULL, 80, "240.0.0.1",
	    "reserved address 240.0.0.1");
	expect_refused(&p, NULL, NULL, 80, "192.0.2.1",
	    "documentation address 192.0.2.1");
	expect_refused(&p, NULL, NULL, 80, "2001:db8::1",
	    "documentation address 2001:db8::1");
	expect_refused(&p, NULL, NULL, 80, "198.18.0.1",
	    "benchmarking address 198.18.0.1");
	/* IPv6 forms that carry an IPv4 address */
	expect_refused(&p, NULL, NULL, 80, "64:ff9b::a00:1",
	    "NAT64 address 64:ff9b::a00:1");
	expect_refused(&p, NULL, NULL, 80, "2002:a00:1::1",
	    "6to4 address 2002:a00:1::1");
	expect_refused(&p, NULL, NULL, 80, "::10.0.0.1",
	    "reserved address ::10.0.0.1");
	expect_refused(&p, NULL, NULL, 80, "2001::1",
	    "reserved address 2001::1");
	expect_refused(&p, NULL, NULL, 80, "4000::1",
	    "reserved address 4000::1");
	expect_refused(&p, NULL, NULL, 0, "8.8.8.8", "bad port");
	expect_refused(&p, NULL, NULL, 65536, "8.8.8.8", "bad port");
}

static void
test_none(void **state)
{
	struct egress_policy	 p;

	parse_ok("false", &p);
	expect_refused(&p, NULL, "pypi.org", 443, "151.101.0.223",
	    "the sandbox has no network");
}

static void
test_allowlist(void **state)
{
	struct egress_policy	 p;

	parse_ok("{\"mode\": \"allowlist\", \"allow\": [\"pypi.org\", "
	    "\"*.githubusercontent.com:443\", \"8.8.4.0/24:53\", "
	    "\"[2a04:4e42::/32]\"]}", &p);
	expect_allowed(&p, NULL, "pypi.org", 443, "151.101.0.223");
	expect_allowed(&p, NULL, "PYPI.org", 80, "151.101.0.223");
	expect_allowed(&p, NULL, "pypi.org.", 80, "151.101.0.223");
	expect_refused(&p, NULL, "pypi.org..", 80, "151.101.0.223",
	    "not on the allowlist");
	expect_refused(&p, NULL, "www.pypi.org", 80, "151.101.0.223",
	    "not on the allowlist");
	expect_refused(&p, NULL, "pypi.org.evil.com", 80, "151.101.0.223",
	    "not on the allowlist");
	expect_refused(&p, NULL, "xpypi.org", 80, "151.101.0.223",
	    "not on the allowlist");
	/* a wildcard: names below it only, on its port only */
	expect_allowed(&p, NULL, "raw.githubusercontent.com", 443,
	    "185.199.108.133");
	expect_allowed(&p, NULL, "a.b.githubusercontent.com", 443,
	    "185.199.108.133");
	expect_refused(&p, NULL, "githubusercontent.com", 443,
	    "185.199.108.133", "not on the allowlist");
	expect_refused(&p, NULL, ".githubusercontent.com", 443,
	    "185.199.108.133", "not on the allowlist");
	expect_refused(&p, NULL, "xgithubusercontent.com", 443,
	    "185.199.108.133", "not on the allowlist");
	expect_refused(&p, NULL, "raw.githubusercontent.com", 80,
	    "185.199.108.133", "not on the allowlist");
	/* a matching name that resolved to a private address (rebinding) */
	expect_refused(&p, NULL, "pypi.org", 443, "10.0.0.5",
	    "private address 10.0.0.5");
	expect_refused(&p, NULL, "raw.githubusercontent.com", 443,
	    "::ffff:169.254.169.254",
	    "cloud metadata address 169.254.169.254");
	/* CIDR rules match the address, however the client named it */
	expect_allowed(&p, NULL, NULL, 53, "8.8.4.4");
	expect_allowed(&p, NULL, "dns.example", 53, "8.8.4.4");
	expect_allowed(&p, NULL, NULL, 53, "::ffff:8.8.4.4");
	expect_refused(&p, NULL, NULL, 443, "8.8.4.4", "not on the allowlist");
	expect_refused(&p, NULL, NULL, 53, "8.8.8.8", "not on the allowlist");
	expect_allowed(&p, NULL, NULL, 443, "2a04:4e42:1::1");
	expect_refused(&p, NULL, NULL, 443, "2a05::1", "not on the allowlist");
	/* an IP literal never matches a name rule */
	expect_refused(&p, NULL, NULL, 443, "151.101.0.223",
	    "not on the allowlist");
	egress_policy_free(&p);
}

/* Before resolving: only a name some rule could pass is asked. */
static void
test_check_name(void **state)
{
	struct egress_policy	 p;
	char			 why[EGRESS_WHY_MAX];

	parse_ok("{\"mode\": \"allowlist\", \"allow\": [\"pypi.org\", "
	    "\"*.githubusercontent.com:443\"]}", &p);
	assert_int_equal(egress_check_name(&p, "PyPI.org.", 80, why,
	    sizeof(why)), 1);
	assert_int_equal(egress_check_name(&p, "raw.githubusercontent.com",
	    443, why, sizeof(why)), 1);
	assert_int_equal(egress_check_name(&p, "raw.githubusercontent.com",
	    80, why, sizeof(why)), 0);
	assert_string_equal(why, "not on the allowlist");
	assert_int_equal(egress_check_name(&p, "exfil.evil.example", 443,
	    why, sizeof(why)), 0);
	assert_int_equal(egress_check_name(&p, "", 443, why, sizeof(why)), 0);
	egress_policy_free(&p);
	/* A range may hold any name's address: resolved, then checked. */
	parse_ok("{\"mode\": \"allowlist\", \"allow\": [\"8.8.4.0/24:53\"]}",
	    &p);
	assert_int_equal(egress_check_name(&p, "any.example", 53, why,
	    sizeof(why)), 1);
	assert_int_equal(egress_check_name(&p, "any.example", 443, why,
	    sizeof(why)), 0);
	egress_policy_free(&p);
	parse_ok("true", &p);
	assert_int_equal(egress_check_name(&p, "any.example", 1, why,
	    sizeof(why)), 1);
	assert_int_equal(egress_check_name(&p, "any.example", 0, why,
	    sizeof(why)), 0);
	assert_string_equal(why, "bad port");
	egress_policy_free(&p);
	parse_ok("false", &p);
	assert_int_equal(egress_check_name(&p, "pypi.org", 443, why,
	    sizeof(why)), 0);
	assert_string_equal(why, "the sandbox has no network");
	egress_policy_free(&p);
}

/* A range on the list never opens an address that is not public. */
static void
test_cidr_does_not_widen(void **state)
{
	struct egress_policy	 p;

	parse_ok("{\"mode\": \"allowlist\", \"allow\": [\"0.0.0.0/0\", "
	    "\"10.0.0.0/8\", \"[::/0]\", \"169.254.169.254\"]}", &p);
	expect_allowed(&p, NULL, NULL, 443, "1.1.1.1");
	expect_allowed(&p, NULL, NULL, 443, "2606:4700::1111");
	expect_refused(&p, NULL, NULL, 443, "10.1.2.3",
	    "private address 10.1.2.3");
	expect_refused(&p, NULL, NULL, 80, "169.254.169.254",
	    "cloud metadata address 169.254.169.254");
	expect_refused(&p, NULL, NULL, 80, "fd00:ec2::254",
	    "cloud metadata address fd00:ec2::254");
	expect_refused(&p, NULL, NULL, 80, "::1", "loopback address ::1");
	egress_policy_free(&p);
}

static void
test_extra(void **state)
{
	struct egress_policy	 p;
	struct egress_extra	 extra;
	char			 err[256];

	assert_int_equal(egress_extra_parse("", &extra, err, sizeof(err)), 0);
	assert_int_equal(extra.count, 0);
	assert_int_equal(egress_extra_parse("203.0.113.0/24,10.99.0.0/16,"
	    "fd12::/16,169.254.0.0/16", &extra, err, sizeof(err)), 0);
	assert_int_equal(extra.count, 4);
	parse_ok("{\"mode\": \"allowlist\", \"allow\": ["
	    "\"203.0.113.0/24:443\", \"test.internal\"]}", &p);
	expect_allowed(&p, &extra, NULL, 443, "203.0.113.9");
	expect_allowed(&p, &extra, "test.internal", 80, "10.99.1.2");
	expect_allowed(&p, &extra, "test.internal", 80, "fd12::5");
	expect_allowed(&p, &extra, "test.internal", 80, "169.254.1.1");
	/* the extra ranges are public, not on the list */
	expect_refused(&p, &extra, NULL, 80, "203.0.113.9",
	    "not on the allowlist");
	/* other private ranges stay refused */
	expect_refused(&p, &extra, "test.internal", 80, "10.98.0.1",
	    "private address 10.98.0.1");
	/* no extra range opens what is always refused */
	assert_int_equal(egress_extra_parse("0.0.0.0/0,::/0", &extra, err,
	    sizeof(err)), 0);
	expect_allowed(&p, &extra, "test.internal", 80, "10.98.0.1");
	expect_refused(&p, &extra, "test.internal", 80, "::1",
	    "loopback address ::1");
	expect_refused(&p, &extra, "test.internal", 80, "169.254.169.254",
	    "cloud metadata address 169.254.169.254");
	expect_refused(&p, &extra, "test.internal", 80, "127.0.0.1",
	    "loopback address 127.0.0.1");
	expect_refused(&p, &extra, "test.internal", 80, "224.0.0.1",
	    "multicast address 224.0.0.1");
	egress_policy_free(&p);

	assert_int_equal(egress_extra_parse("10.0.0.0/8,", &extra, err,
	    sizeof(err)), -1);
	assert_string_equal(err, "range 2: not an IPv4 address");
	assert_int_equal(extra.count, 0);
	assert_int_equal(egress_extra_parse("10.0.0.1/8", &extra, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "host bits"));
	assert_int_equal(egress_extra_parse("[fd12::/16]", &extra, err,
	    sizeof(err)), -1);
}

/* Every range of the table parses: one address of each is refused. */
static void
test_table(void **state)
{
	static const char *const inside[] = {
		"0.1.2.3", "10.255.255.255", "100.64.0.0", "127.255.0.1",
		"169.254.170.2", "172.16.0.0", "192.0.0.9", "192.0.2.255",
		"192.88.99.1", "192.168.255.255", "198.19.255.255",
		"198.51.100.1", "203.0.113.255", "239.255.255.255",
		"241.0.0.1", "100.100.100.200", "::2", "64:ff9b:1::1",
		"100::1", "2001:1ff:ffff::1", "2002::", "3fff:fff::1",
		"5f00::1", "fc00::1", "febf::1", "fec0::1", "ff00::",
		"1fff::1", "7fff::1", "ffff::1", "2001:db8:ffff::1",
	};
	static const char *const outside[] = {
		"1.0.0.1", "9.255.255.255", "11.0.0.0", "100.63.255.255",
		"100.128.0.0", "126.255.255.255", "128.0.0.0", "169.253.0.1",
		"169.255.0.1", "172.15.255.255", "172.32.0.0", "192.0.1.1",
		"192.167.0.1", "192.169.0.1", "198.17.255.255", "198.20.0.0",
		"223.255.255.255", "168.63.129.17", "2000::1", "2001:200::1",
		"2003::1", "3ffe::1", "3fff:1000::1", "2600::1",
	};
	char			 why[EGRESS_WHY_MAX];
	struct sockaddr_storage	 ss;
	size_t			 i;

	for (i = 0; i < sizeof(inside) / sizeof(*inside); i++) {
		ss = addr(inside[i]);
		if (egress_address_public(NULL, &ss, why, sizeof(why)))
			fail_msg("%s counted public", inside[i]);
		assert_null(strstr(why, "not an IP address"));
	}
	for (i = 0; i < sizeof(outside) / sizeof(*outside); i++) {
		ss = addr(outside[i]);
		if (!egress_address_public(NULL, &ss, why, sizeof(why)))
			fail_msg("%s refused: %s", outside[i], why);
	}
	memset(&ss, 0, sizeof(ss));
	ss.ss_family = AF_UNIX;
	assert_false(egress_address_public(NULL, &ss, why, sizeof(why)));
	assert_string_equal(why, "not an IP address");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_modes),
		cmocka_unit_test(test_policy_refused),
		cmocka_unit_test(test_too_many),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_name_valid),
		cmocka_unit_test(test_ports),
		cmocka_unit_test(test_cidrs),
		cmocka_unit_test(test_to_json),
		cmocka_unit_test(test_round_trips),
		cmocka_unit_test(test_lies),
		cmocka_unit_test(test_public),
		cmocka_unit_test(test_none),
		cmocka_unit_test(test_allowlist),
		cmocka_unit_test(test_check_name),
		cmocka_unit_test(test_cidr_does_not_widen),
		cmocka_unit_test(test_extra),
		cmocka_unit_test(test_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
