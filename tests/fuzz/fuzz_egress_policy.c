/*
 * Egress policies (common/egress_policy.c, common/egress_match.c).  The
 * first byte chooses what the rest is:
 *
 *	0	a client's "network" value as JSON (json-c parses it first)
 *	1	a policy's byte form, as a peer's message carries it
 *	2	one allowlist entry
 *	3	a byte form's length (2 bytes) and the form, a port (2
 *		bytes), a family byte (odd: IPv6) and 16 address bytes,
 *		then a host name: one connection's check
 *
 * Checks: a refusal says why in printable text and leaves nothing; an
 * accepted policy's byte form decodes to the same policy and encodes to
 * the same bytes (decode(encode(p)) == p), its JSON parses back to it,
 * and each entry's canonical text parses to the same rule; an accepted
 * byte form is exactly the encoding of what it decoded to; a check
 * allows only public addresses, and the policy's mode is respected.
 */
#include <sys/socket.h>
#include <netinet/in.h>

#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "egress_policy.h"
#include "harness.h"

#define JSON_MAX	(64 * 1024)

static void
check_error(const char *err)
{
	size_t	 i, len = strlen(err);

	CHECK(len > 0);
	for (i = 0; i < len; i++)
		CHECK((unsigned char)err[i] >= 0x20 &&
		    (unsigned char)err[i] < 0x7f);
}

/* What must hold of any accepted policy. */
static void
check_policy(const struct egress_policy *p)
{
	struct egress_policy	 q;
	struct egress_rule	 r;
	struct msgw		 w, w2;
	json_object		*o;
	char			 buf[EGRESS_ENTRY_MAX + 1], err[256];
	size_t			 i;

	CHECK(p->mode <= EGRESS_ALLOWLIST && p->nrules <= EGRESS_ALLOW_MAX);
	CHECK(p->nrules == 0 || p->mode == EGRESS_ALLOWLIST);
	msgw_init(&w);
	msg_put_egress_policy(&w, p);
	CHECK(!w.overflow);
	CHECK(egress_policy_decode(w.buf, w.len, &q) == 0);
	CHECK(egress_policy_equal(p, &q));
	msgw_init(&w2);
	msg_put_egress_policy(&w2, &q);
	CHECK(w2.len == w.len && memcmp(w2.buf, w.buf, w.len) == 0);
	egress_policy_free(&q);

	CHECK((o = egress_policy_to_json(p)) != NULL);
	CHECK(egress_policy_parse(o, NULL, &q, err, sizeof(err)) == 0);
	CHECK(egress_policy_equal(p, &q));
	egress_policy_free(&q);
	json_object_put(o);

	for (i = 0; i < p->nrules; i++) {
		CHECK(egress_rule_format(&p->rules[i], buf, sizeof(buf)) == 0);
		CHECK(egress_rule_parse(buf, strlen(buf), &r, err,
		    sizeof(err)) == 0);
		CHECK(memcmp(&r, &p->rules[i], sizeof(r)) == 0);
	}
}

static void
fuzz_json(const uint8_t *data, size_t len)
{
	struct egress_policy	 p;
	struct json_tokener	*tok;
	json_object		*v;
	char			 err[256] = "";

	if (len > JSON_MAX || (tok = json_tokener_new()) == NULL)
		return;
	v = json_tokener_parse_ex(tok, (const char *)data, (int)len);
	if (json_tokener_get_error(tok) != json_tokener_success) {
		json_tokener_free(tok);
		return;
	}
	json_tokener_free(tok);
	memset(&p, 0, sizeof(p));
	if (egress_policy_parse(v, NULL, &p, err, sizeof(err)) == -1) {
		check_error(err);
		CHECK(p.rules == NULL && p.nrules == 0);
	} else {
		check_policy(&p);
		egress_policy_free(&p);
	}
	json_object_put(v);
}

static void
fuzz_bytes(const uint8_t *data, size_t len)
{
	struct egress_policy	 p;
	struct msgw		 w;

	if (egress_policy_decode(data, len, &p) == -1) {
		CHECK(p.rules == NULL && p.nrules == 0);
		return;
	}
	msgw_init(&w);
	msg_put_egress_policy(&w, &p);
	CHECK(w.len == len && memcmp(w.buf, data, len) == 0);
	check_policy(&p);
	egress_policy_free(&p);
}

static void
fuzz_entry(const uint8_t *data, size_t len)
{
	struct egress_rule	 r, back;
	char			 buf[EGRESS_ENTRY_MAX + 1], err[256] = "";

	if (egress_rule_parse((const char *)data, len, &r, err,
	    sizeof(err)) == -1) {
		check_error(err);
		return;
	}
	CHECK(egress_rule_format(&r, buf, sizeof(buf)) == 0);
	CHECK(egress_rule_parse(buf, strlen(buf), &back, err,
	    sizeof(err)) == 0);
	CHECK(memcmp(&r, &back, sizeof(r)) == 0);
}

static void
address_take(const uint8_t *b, struct sockaddr_storage *ss)
{
	struct sockaddr_in	*sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (b[0] & 1) {
		ss->ss_family = AF_INET6;
		memcpy(&sin6->sin6_addr, b + 1, 16);
	} else {
		ss->ss_family = AF_INET;
		memcpy(&sin->sin_addr, b + 1, 4);
	}
}

static void
fuzz_check(const uint8_t *data, size_t len)
{
	struct egress_policy	 p;
	struct sockaddr_storage	 ss;
	char			 why[EGRESS_WHY_MAX];
	char			 host[EGRESS_NAME_MAX + 8];
	size_t			 plen, hlen;
	unsigned int		 port;
	int			 ok;

	if (len < 2)
		return;
	plen = (size_t)data[0] << 8 | data[1];
	if (plen > len - 2 || len - 2 - plen < 19)
		return;
	if (egress_policy_decode(data + 2, plen, &p) == -1)
		return;
	data += 2 + plen;
	len -= 2 + plen;
	port = (unsigned int)data[0] << 8 | data[1];
	address_take(data + 2, &ss);
	hlen = len - 19 < sizeof(host) - 1 ? len - 19 : sizeof(host) - 1;
	memcpy(host, data + 19, hlen);
	host[hlen] = '\0';
	why[0] = '\0';
	ok = egress_check(&p, NULL, hlen > 0 ? host : NULL, port, &ss, why,
	    sizeof(why));
	if (ok) {
		CHECK(p.mode != EGRESS_NONE && port > 0);
		CHECK(egress_address_public(NULL, &ss, why, sizeof(why)));
	} else
		check_error(why);
	egress_policy_free(&p);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	if (len < 1)
		return 0;
	switch (data[0] % 4) {
	case 0:
		fuzz_json(data + 1, len - 1);
		break;
	case 1:
		fuzz_bytes(data + 1, len - 1);
		break;
	case 2:
		fuzz_entry(data + 1, len - 1);
		break;
	default:
		fuzz_check(data + 1, len - 1);
		break;
	}
	return 0;
}
