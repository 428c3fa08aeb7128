/*
 * The egress proxy's request heads (egress-proxy/egress_request.c).
 * Input: the first byte is a split seed; the rest is what a sandbox
 * sends, fed whole and then in pieces of the splitter's choosing.
 *
 * Checks: the verdict, the bytes used, the host, port and upstream head
 * (or the status and reason) are the same however the bytes are cut.  A
 * refusal has a status the proxy answers (400, 431, 500, 501, 505) and a
 * printable reason.  An accepted head ends at its blank line, within the
 * bound; its host is a valid name (lowercase, no trailing dot) or an
 * address literal, its port 1-65535.  A forwarded one's upstream head,
 * read again by http-parser, is one origin-form request (target "/..."),
 * with exactly one Host, the URL's, no hop-by-hop field, CRLF line ends,
 * and Connection: close as its last field.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <http_parser.h>

#include "egress_policy.h"
#include "egress_request.h"
#include "harness.h"

/* What the re-parse of an upstream head saw. */
struct upstream {
	const struct egress_request	*r;
	char				 field[64];
	size_t				 field_len;
	int				 in_host;
	size_t				 nhost;
	size_t				 nconnection;
	char				 host[EGRESS_NAME_MAX + 32];
	size_t				 host_len;
	int				 target_ok;
	int				 complete;
	int				 last_close;
};

static const char *const hop[] = {
	"connection", "proxy-connection", "keep-alive", "te", "trailer",
	"upgrade", "proxy-authorization", "proxy-authenticate",
};

static int
up_url(http_parser *p, const char *at, size_t len)
{
	struct upstream	*u = p->data;

	u->target_ok = len > 0 && at[0] == '/';
	return 0;
}

static int
up_field(http_parser *p, const char *at, size_t len)
{
	struct upstream	*u = p->data;
	size_t		 i;

	/* A whole head at once: each name comes in one piece. */
	if (len >= sizeof(u->field))
		len = 0;	/* longer than any name looked for */
	memcpy(u->field, at, len);
	u->field[len] = '\0';
	u->field_len = len;
	u->in_host = strcasecmp(u->field, "Host") == 0;
	u->nhost += u->in_host;
	u->nconnection += strcasecmp(u->field, "Connection") == 0;
	u->last_close = 0;
	for (i = 0; i < sizeof(hop) / sizeof(hop[0]); i++)
		if (strcasecmp(u->field, hop[i]) == 0)
			CHECK(strcasecmp(u->field, "connection") == 0);
	return 0;
}

static int
up_value(http_parser *p, const char *at, size_t len)
{
	struct upstream	*u = p->data;

	if (u->in_host) {
		CHECK(len < sizeof(u->host));
		memcpy(u->host, at, len);
		u->host_len = len;
	}
	if (strcasecmp(u->field, "connection") == 0)
		u->last_close = len == 5 && memcmp(at, "close", 5) == 0;
	return 0;
}

static int
up_headers_complete(http_parser *p)
{
	struct upstream	*u = p->data;

	u->complete = 1;
	/* What follows is the body; the head is all we gave. */
	return 0;
}

static const http_parser_settings up_settings = {
	.on_url = up_url,
	.on_header_field = up_field,
	.on_header_value = up_value,
	.on_headers_complete = up_headers_complete,
};

static void
check_upstream(const struct egress_request *r, size_t headlen)
{
	struct upstream	 u;
	http_parser	 p;
	enum http_errno	 e;
	char		 want[EGRESS_NAME_MAX + 32];
	size_t		 i, n;

	CHECK(r->upstream != NULL && r->upstream_len > 4);
	CHECK(r->upstream_len <= headlen + EGRESS_UPSTREAM_EXTRA);
	CHECK(strlen(r->upstream) == r->upstream_len);
	CHECK(memcmp(r->upstream + r->upstream_len - 4, "\r\n\r\n", 4) == 0);
	for (i = 0; i < r->upstream_len; i++)
		if (r->upstream[i] == '\n')
			CHECK(i > 0 && r->upstream[i - 1] == '\r');
	memset(&u, 0, sizeof(u));
	u.r = r;
	http_parser_init(&p, HTTP_REQUEST);
	p.data = &u;
	n = http_parser_execute(&p, &up_settings, r->upstream,
	    r->upstream_len);
	e = HTTP_PARSER_ERRNO(&p);
	CHECK(e == HPE_OK || e == HPE_PAUSED);
	CHECK(n == r->upstream_len && u.complete && u.target_ok);
	CHECK(p.method == (unsigned int)r->method);
	CHECK(u.nhost == 1 && u.nconnection == 1 && u.last_close);
	snprintf(want, sizeof(want), r->host_kind == EGRESS_HOST_IPV6 ?
	    "[%s]" : "%s", r->host);
	if (r->port != 80)
		snprintf(want + strlen(want), sizeof(want) - strlen(want),
		    ":%u", r->port);
	CHECK(u.host_len == strlen(want) &&
	    memcmp(u.host, want, u.host_len) == 0);
}

static void
check_host(const struct egress_request *r)
{
	unsigned char	 a[16];
	size_t		 i, len = strlen(r->host);

	CHECK(r->port >= 1 && r->port <= 65535);
	switch (r->host_kind) {
	case EGRESS_HOST_NAME:
		CHECK(egress_name_valid(r->host, len, NULL, 0) == 0);
		for (i = 0; i < len; i++)
			CHECK(r->host[i] < 'A' || r->host[i] > 'Z');
		break;
	case EGRESS_HOST_IPV4:
		CHECK(inet_pton(AF_INET, r->host, a) == 1);
		CHECK(r->addr.ss_family == AF_INET);
		break;
	case EGRESS_HOST_IPV6:
		CHECK(inet_pton(AF_INET6, r->host, a) == 1);
		CHECK(r->addr.ss_family == AF_INET6);
		break;
	default:
		CHECK(0);
	}
}

static void
check_verdict(const struct egress_request *r, int rc, const uint8_t *data,
    size_t used)
{
	size_t	 i;

	if (rc == -1) {
		CHECK(r->status == 400 || r->status == 431 ||
		    r->status == 500 || r->status == 501 || r->status == 505);
		CHECK(r->reason != NULL && r->reason[0] != '\0');
		for (i = 0; r->reason[i] != '\0'; i++)
			CHECK(r->reason[i] >= 0x20 && r->reason[i] < 0x7f);
		return;
	}
	if (rc == 0)
		return;
	CHECK(used >= 4 && used <= EGRESS_HEAD_MAX);
	CHECK(memcmp(data + used - 4, "\r\n\r\n", 4) == 0);
	check_host(r);
	if (r->kind == EGRESS_REQUEST_FORWARD)
		check_upstream(r, used);
	else
		CHECK(r->kind == EGRESS_REQUEST_CONNECT && r->upstream == NULL);
}

/* The whole input's verdict, r kept; *used counts from the start. */
static int
feed_pieces(struct egress_request *r, const uint8_t *data, size_t len,
    struct splitter *sp, size_t *used)
{
	size_t	 off = 0, n, u;
	int	 rc = 0;

	egress_request_init(r);
	*used = 0;
	while (off < len) {
		n = sp != NULL ? splitter_next(sp, len - off) : len - off;
		rc = egress_request_feed(r, data + off, n, &u);
		if (rc == 1)
			*used = off + u;
		if (rc != 0)
			return rc;
		CHECK(u == n);
		off += n;
	}
	return rc;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct egress_request	 whole, cut;
	struct splitter		 sp;
	size_t			 used_whole, used_cut;
	int			 rc, rc_cut;

	if (len < 1 || len > 2 * EGRESS_HEAD_MAX)
		return 0;
	splitter_init(&sp, data[0], 64);
	data++;
	len--;
	rc = feed_pieces(&whole, data, len, NULL, &used_whole);
	check_verdict(&whole, rc, data, used_whole);
	rc_cut = feed_pieces(&cut, data, len, &sp, &used_cut);
	CHECK(rc == rc_cut);
	if (rc == 1) {
		CHECK(used_whole == used_cut);
		CHECK(strcmp(whole.host, cut.host) == 0);
		CHECK(whole.port == cut.port && whole.kind == cut.kind);
		CHECK((whole.upstream == NULL) == (cut.upstream == NULL));
		CHECK(whole.upstream == NULL ||
		    strcmp(whole.upstream, cut.upstream) == 0);
	} else if (rc == -1)
		CHECK(whole.status == cut.status &&
		    strcmp(whole.reason, cut.reason) == 0);
	egress_request_free(&whole);
	egress_request_free(&cut);
	return 0;
}
