/*
 * Tests for egress-proxy/egress_request.c: a sandbox's proxy request
 * heads, as a hostile client would send them, whole and a byte at a
 * time.
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

#include "egress_request.h"

/* Feed len bytes in pieces of step (0: whole); returns feed's verdict. */
static int
feed_steps(struct egress_request *r, const char *text, size_t len,
    size_t step, size_t *used_total)
{
	size_t	 off = 0, n, used;
	int	 rc = 0;

	egress_request_init(r);
	*used_total = 0;
	while (off < len) {
		n = step == 0 || len - off < step ? len - off : step;
		rc = egress_request_feed(r, text + off, n, &used);
		if (rc != 0) {
			*used_total = off + (rc == 1 ? used : 0);
			return rc;
		}
		assert_int_equal(used, n);
		off += n;
	}
	*used_total = off;
	return rc;
}

/* Whole and a byte at a time agree; returns 1, 0 or the status. */
static int
parse_len(struct egress_request *r, const char *text, size_t len)
{
	struct egress_request	 b;
	size_t			 used, used_b;
	int			 rc, rc_b;

	rc_b = feed_steps(&b, text, len, 1, &used_b);
	rc = feed_steps(r, text, len, 0, &used);
	assert_int_equal(rc, rc_b);
	if (rc == 1) {
		assert_int_equal(used, used_b);
		assert_string_equal(r->host, b.host);
		assert_int_equal(r->port, b.port);
		if (r->upstream != NULL)
			assert_string_equal(r->upstream, b.upstream);
	} else if (rc == -1) {
		assert_int_equal(r->status, b.status);
		assert_string_equal(r->reason, b.reason);
	}
	egress_request_free(&b);
	if (rc == -1) {
		assert_non_null(r->reason);
		return r->status;
	}
	return rc;
}

static int
parse(struct egress_request *r, const char *text)
{
	return parse_len(r, text, strlen(text));
}

/* The status a head is refused with, and its reason holds why. */
static void
refused(const char *text, int status, const char *why)
{
	struct egress_request	 r;

	assert_int_equal(parse(&r, text), status);
	if (strstr(r.reason, why) == NULL)
		fail_msg("reason \"%s\" lacks \"%s\"", r.reason, why);
	egress_request_free(&r);
}

static void
forwarded(const char *text, const char *upstream)
{
	struct egress_request	 r;

	assert_int_equal(parse(&r, text), 1);
	assert_int_equal(r.kind, EGRESS_REQUEST_FORWARD);
	assert_string_equal(r.upstream, upstream);
	assert_int_equal(r.upstream_len, strlen(upstream));
	egress_request_free(&r);
}

static void
test_connect(void **state)
{
	struct egress_request	 r;
	const char		*h = "CONNECT PyPI.org.:443 HTTP/1.1\r\n"
	    "Host: pypi.org:443\r\nUser-Agent: pip\r\n\r\n\x16\x03\x01";
	size_t			 used;

	assert_int_equal(feed_steps(&r, h, strlen(h), 0, &used), 1);
	assert_int_equal(r.kind, EGRESS_REQUEST_CONNECT);
	assert_int_equal(r.host_kind, EGRESS_HOST_NAME);
	assert_string_equal(r.host, "pypi.org");
	assert_int_equal(r.port, 443);
	assert_null(r.upstream);
	/* The TLS hello the client sent early is left to the caller. */
	assert_int_equal(used, strlen(h) - 3);
	egress_request_free(&r);

	/* HTTP/1.0, no Host: a CONNECT needs none. */
	assert_int_equal(parse(&r, "CONNECT a.b:1 HTTP/1.0\r\n\r\n"), 1);
	assert_int_equal(r.port, 1);
	egress_request_free(&r);
	assert_int_equal(parse(&r, "CONNECT a.b:65535 HTTP/1.1\r\n"
	    "Content-Length: 0\r\n\r\n"), 1);
	assert_int_equal(r.port, 65535);
	egress_request_free(&r);
}

static void
test_literals(void **state)
{
	struct egress_request	 r;
	struct sockaddr_in	*sin = (struct sockaddr_in *)&r.addr;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)&r.addr;
	char			 text[INET6_ADDRSTRLEN];

	assert_int_equal(parse(&r, "CONNECT 203.0.113.7:443 HTTP/1.1\r\n\r\n"),
	    1);
	assert_int_equal(r.host_kind, EGRESS_HOST_IPV4);
	assert_string_equal(r.host, "203.0.113.7");
	assert_int_equal(sin->sin_family, AF_INET);
	assert_int_equal(ntohs(sin->sin_port), 443);
	assert_string_equal(inet_ntop(AF_INET, &sin->sin_addr, text,
	    sizeof(text)), "203.0.113.7");
	egress_request_free(&r);

	assert_int_equal(parse(&r, "CONNECT [2001:DB8:0::1]:8443 HTTP/1.1"
	    "\r\n\r\n"), 1);
	assert_int_equal(r.host_kind, EGRESS_HOST_IPV6);
	assert_string_equal(r.host, "2001:db8::1");
	assert_int_equal(sin6->sin6_family, AF_INET6);
	assert_int_equal(ntohs(sin6->sin6_port), 8443);
	egress_request_free(&r);

	forwarded("GET http://[::ffff:10.0.0.1]/x HTTP/1.1\r\n\r\n",
	    "GET /x HTTP/1.1\r\nHost: [::ffff:10.0.0.1]\r\n"
	    "Connection: close\r\n\r\n");

	/* Without brackets, the last group could be a port. */
	refused("CONNECT 2001:db8::1:443 HTTP/1.1\r\n\r\n", 400, "brackets");
	refused("CONNECT ::1 HTTP/1.1\r\n\r\n", 400, "brackets");
	refused("GET http://2001:db8::1/ HTTP/1.1\r\n\r\n", 400, "brackets");
	refused("CONNECT [2001:db8::1 HTTP/1.1\r\n\r\n", 400, "without");
	refused("CONNECT [2001:db8::1]x:1 HTTP/1.1\r\n\r\n", 400, ":port");
	refused("CONNECT [fe80::1%25eth0]:1 HTTP/1.1\r\n\r\n", 400, "IPv6");
	refused("CONNECT [1.2.3.4]:1 HTTP/1.1\r\n\r\n", 400, "IPv6");
	refused("CONNECT [2001:db8::1] HTTP/1.1\r\n\r\n", 400, "host:port");
	/* Numbers that resolvers read as addresses, and the policy not. */
	refused("CONNECT 010.0.0.1:80 HTTP/1.1\r\n\r\n", 400, "host name");
	refused("CONNECT 1.2.3:80 HTTP/1.1\r\n\r\n", 400, "host name");
	refused("CONNECT 0x7f.1:80 HTTP/1.1\r\n\r\n", 400, "host name");
	refused("CONNECT 2130706433:80 HTTP/1.1\r\n\r\n", 400, "host name");
}

static void
test_ports(void **state)
{
	refused("CONNECT a.b:0 HTTP/1.1\r\n\r\n", 400, "invalid port");
	refused("CONNECT a.b:65536 HTTP/1.1\r\n\r\n", 400, "invalid port");
	refused("CONNECT a.b:080 HTTP/1.1\r\n\r\n", 400, "invalid port");
	refused("CONNECT a.b:99999999999 HTTP/1.1\r\n\r\n", 400, "port");
	refused("CONNECT a.b: HTTP/1.1\r\n\r\n", 400, "invalid port");
	refused("CONNECT a.b:+1 HTTP/1.1\r\n\r\n", 400, "invalid port");
	refused("CONNECT a.b HTTP/1.1\r\n\r\n", 400, "host:port");
	refused("CONNECT :443 HTTP/1.1\r\n\r\n", 400, "empty host");
	refused("GET http://a.b:/ HTTP/1.1\r\n\r\n", 400, "invalid port");
	refused("GET http://a.b:0/ HTTP/1.1\r\n\r\n", 400, "invalid port");
	refused("GET http://a.b:65536/ HTTP/1.1\r\n\r\n", 400, "port");
	forwarded("GET http://a.b:8080 HTTP/1.1\r\n\r\n",
	    "GET / HTTP/1.1\r\nHost: a.b:8080\r\nConnection: close\r\n\r\n");
	forwarded("GET http://a.b:80/ HTTP/1.1\r\n\r\n",
	    "GET / HTTP/1.1\r\nHost: a.b\r\nConnection: close\r\n\r\n");
}

static void
test_forward(void **state)
{
	struct egress_request	 r;
	const char		*h = "POST http://Example.COM./up?x=1&y=%2F "
	    "HTTP/1.1\r\nHost: evil.internal\r\nContent-Length: 3\r\n"
	    "Proxy-Authorization: Basic eA==\r\nProxy-Connection: keep-alive"
	    "\r\nConnection: keep-alive, X-Secret\r\nX-Secret: 1\r\n"
	    "Keep-Alive: 5\r\nTE: trailers\r\nTrailer: X\r\nUpgrade: h2c\r\n"
	    "Accept: */*\r\n\r\nabc";
	size_t			 used;

	assert_int_equal(feed_steps(&r, h, strlen(h), 0, &used), 1);
	assert_int_equal(used, strlen(h) - 3);
	assert_int_equal(r.kind, EGRESS_REQUEST_FORWARD);
	assert_string_equal(r.host, "example.com");
	assert_int_equal(r.port, 80);
	assert_int_equal(r.body, EGRESS_BODY_LENGTH);
	assert_int_equal(r.content_length, 3);
	assert_string_equal(r.upstream, "POST /up?x=1&y=%2F HTTP/1.1\r\n"
	    "Host: example.com\r\nContent-Length: 3\r\nAccept: */*\r\n"
	    "Connection: close\r\n\r\n");
	egress_request_free(&r);

	/* Any method http-parser knows; a query without a path. */
	forwarded("PROPFIND HTTP://a.b?q HTTP/1.0\r\n\r\n",
	    "PROPFIND /?q HTTP/1.0\r\nHost: a.b\r\nConnection: close\r\n\r\n");
	forwarded("GET http://a.b HTTP/1.1\r\nHost: a.b\r\nX:\r\n\r\n",
	    "GET / HTTP/1.1\r\nHost: a.b\r\nX:\r\nConnection: close\r\n\r\n");
	/* A field value's obs-text is the upstream's business. */
	forwarded("GET http://a.b/ HTTP/1.1\r\nX: caf\xc3\xa9 \xff\r\n\r\n",
	    "GET / HTTP/1.1\r\nHost: a.b\r\nX: caf\xc3\xa9 \xff\r\n"
	    "Connection: close\r\n\r\n");

	/* No Upgrade through a forward: a WebSocket client uses CONNECT. */
	forwarded("GET http://a.b/ws HTTP/1.1\r\nConnection: Upgrade\r\n"
	    "Upgrade: websocket\r\nSec-WebSocket-Key: k\r\n\r\n",
	    "GET /ws HTTP/1.1\r\nHost: a.b\r\nSec-WebSocket-Key: k\r\n"
	    "Connection: close\r\n\r\n");
	forwarded("GET http://a.b/ HTTP/1.1\r\nExpect: 100-continue\r\n"
	    "Content-Length: 0\r\n\r\n", "GET / HTTP/1.1\r\nHost: a.b\r\n"
	    "Expect: 100-continue\r\nContent-Length: 0\r\n"
	    "Connection: close\r\n\r\n");

	assert_int_equal(parse(&r, "PUT http://a.b/ HTTP/1.1\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n"), 1);
	assert_int_equal(r.body, EGRESS_BODY_CHUNKED);
	assert_non_null(strstr(r.upstream, "\r\nTransfer-Encoding: chunked"
	    "\r\n"));
	egress_request_free(&r);
}

static void
test_host_header(void **state)
{
	/* Differing from the URL: replaced, not trusted. */
	forwarded("GET http://a.b/ HTTP/1.1\r\nHost: 169.254.169.254\r\n\r\n",
	    "GET / HTTP/1.1\r\nHost: a.b\r\nConnection: close\r\n\r\n");
	forwarded("GET http://a.b/ HTTP/1.1\r\nhOsT: a.b\r\n\r\n",
	    "GET / HTTP/1.1\r\nHost: a.b\r\nConnection: close\r\n\r\n");
	refused("GET http://a.b/ HTTP/1.1\r\nHost: a.b\r\nHost: c.d\r\n\r\n",
	    400, "more than one Host");
	refused("CONNECT a.b:1 HTTP/1.1\r\nHost: a\r\nhost: a\r\n\r\n", 400,
	    "more than one Host");
}

static void
test_refused_targets(void **state)
{
	refused("GET /path HTTP/1.1\r\nHost: a.b\r\n\r\n", 400,
	    "not a proxy request");
	refused("OPTIONS * HTTP/1.1\r\nHost: a.b\r\n\r\n", 400,
	    "not a proxy request");
	refused("GET https://a.b/ HTTP/1.1\r\n\r\n", 501, "CONNECT");
	refused("GET ftp://a.b/ HTTP/1.1\r\n\r\n", 501, "only http://");
	refused("GET http://user:pass@a.b/ HTTP/1.1\r\n\r\n", 400,
	    "userinfo");
	refused("GET http://a.b@c.d/ HTTP/1.1\r\n\r\n", 400, "userinfo");
	refused("CONNECT u@a.b:443 HTTP/1.1\r\n\r\n", 400, "userinfo");
	refused("GET http:///x HTTP/1.1\r\n\r\n", 400, "empty host");
	refused("GET http://a.b/#f HTTP/1.1\r\n\r\n", 400, "fragment");
	refused("GET http://a..b/ HTTP/1.1\r\n\r\n", 400, "host name");
	refused("GET http://a.b../ HTTP/1.1\r\n\r\n", 400, "host name");
	refused("GET http://a%2eb/ HTTP/1.1\r\n\r\n", 400, "host name");
	refused("GET http://*.a.b/ HTTP/1.1\r\n\r\n", 400, "host name");
	refused("GET http://-a.b/ HTTP/1.1\r\n\r\n", 400, "host name");
	refused("FOO http://a.b/ HTTP/1.1\r\n\r\n", 501, "method");
	refused("get http://a.b/ HTTP/1.1\r\n\r\n", 501, "method");
	refused("CONNECT http://a.b/ HTTP/1.1\r\n\r\n", 400, "");
	refused("GET a.b:80 HTTP/1.1\r\n\r\n", 400, "");
}

static void
test_names(void **state)
{
	char			 text[EGRESS_HEAD_MAX];
	char			 name[EGRESS_NAME_MAX + 2];
	struct egress_request	 r;
	size_t			 i;

	/* 253 bytes, in labels of 63 and less, with and without a dot. */
	for (i = 0; i < EGRESS_NAME_MAX; i++)
		name[i] = (i + 1) % 64 == 0 ? '.' : 'a';
	name[EGRESS_NAME_MAX] = '\0';
	snprintf(text, sizeof(text), "CONNECT %s.:443 HTTP/1.1\r\n\r\n", name);
	assert_int_equal(parse(&r, text), 1);
	assert_string_equal(r.host, name);
	egress_request_free(&r);
	name[EGRESS_NAME_MAX] = 'a';
	name[EGRESS_NAME_MAX + 1] = '\0';
	snprintf(text, sizeof(text), "CONNECT %s:443 HTTP/1.1\r\n\r\n", name);
	refused(text, 400, "host name");

	/* Not ASCII, valid UTF-8 or not: refused in the request line. */
	refused("CONNECT caf\xc3\xa9.fr:443 HTTP/1.1\r\n\r\n", 400, "ASCII");
	refused("CONNECT \xff\xfe:443 HTTP/1.1\r\n\r\n", 400, "ASCII");
	refused("GET http://a.b/\xc3\xa9 HTTP/1.1\r\n\r\n", 400, "ASCII");
	refused("GET http://a.b/\x80 HTTP/1.1\r\n\r\n", 400, "ASCII");
	refused("GET http://a.b/\x7f HTTP/1.1\r\n\r\n", 400, "ASCII");
	refused("GET http://a.b/\t HTTP/1.1\r\n\r\n", 400, "ASCII");
	forwarded("GET http://xn--caf-dma.fr/ HTTP/1.1\r\n\r\n",
	    "GET / HTTP/1.1\r\nHost: xn--caf-dma.fr\r\nConnection: close"
	    "\r\n\r\n");
	forwarded("GET http://_acme.a-b.c1/ HTTP/1.1\r\n\r\n",
	    "GET / HTTP/1.1\r\nHost: _acme.a-b.c1\r\nConnection: close"
	    "\r\n\r\n");
}

static void
test_nul(void **state)
{
	struct egress_request	 r;
	static const char	 a[] = "CONNECT a.b\0.c:443 HTTP/1.1\r\n\r\n";
	static const char	 b[] = "GET http://a.b/ HTTP/1.1\r\nX: a\0b\r\n"
	    "\r\n";
	static const char	 c[] = "GET http://a.b/ HTTP/1.1\r\nX\0: a\r\n"
	    "\r\n";

	assert_int_equal(parse_len(&r, a, sizeof(a) - 1), 400);
	egress_request_free(&r);
	assert_int_equal(parse_len(&r, b, sizeof(b) - 1), 400);
	assert_string_equal(r.reason, "control byte in a header value");
	egress_request_free(&r);
	assert_int_equal(parse_len(&r, c, sizeof(c) - 1), 400);
	egress_request_free(&r);
}

static void
test_framing(void **state)
{
	refused("POST http://a.b/ HTTP/1.1\r\nContent-Length: 1\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n", 400, "Transfer-Encoding");
	refused("POST http://a.b/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
	    "Content-Length: 1\r\n\r\n", 400, "Transfer-Encoding");
	refused("POST http://a.b/ HTTP/1.1\r\nContent-Length: 1\r\n"
	    "Content-Length: 1\r\n\r\n", 400, "Content-Length");
	refused("POST http://a.b/ HTTP/1.1\r\nContent-Length: 1, 1\r\n\r\n",
	    400, "Content-Length");
	refused("POST http://a.b/ HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
	    400, "Content-Length");
	refused("POST http://a.b/ HTTP/1.1\r\nContent-Length: +1\r\n\r\n",
	    400, "Content-Length");
	refused("POST http://a.b/ HTTP/1.1\r\nContent-Length:\r\n\r\n",
	    400, "Content-Length");
	refused("POST http://a.b/ HTTP/1.1\r\nContent-Length: "
	    "99999999999999999999\r\n\r\n", 400, "Content-Length");
	refused("POST http://a.b/ HTTP/1.1\r\nTransfer-Encoding: gzip, "
	    "chunked\r\n\r\n", 501, "chunked");
	refused("POST http://a.b/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n", 501, "chunked");
	refused("POST http://a.b/ HTTP/1.0\r\nTransfer-Encoding: chunked\r\n"
	    "\r\n", 400, "HTTP/1.0");
	refused("CONNECT a.b:443 HTTP/1.1\r\nContent-Length: 5\r\n\r\n",
	    400, "no body");
	refused("CONNECT a.b:443 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
	    "\r\n", 400, "no body");
	/* Dropping either, as Connection asks, would reframe the body. */
	refused("POST http://a.b/ HTTP/1.1\r\nContent-Length: 1\r\n"
	    "Connection: content-length\r\n\r\n", 400, "frames");
	refused("GET http://a.b/ HTTP/1.1\r\nConnection: close, Host\r\n\r\n",
	    400, "frames");
	refused("GET http://a.b/ HTTP/1.1\r\nConnection: a/b\r\n\r\n", 400,
	    "Connection");
}

static void
test_lines(void **state)
{
	refused("GET http://a.b/ HTTP/1.1\n\n", 400, "bare LF");
	refused("GET http://a.b/ HTTP/1.1\r\nX: 1\n\r\n", 400, "bare LF");
	refused("GET http://a.b/ HTTP/1.1\r\nX: 1\r\r\n\r\n", 400, "CR");
	refused("GET http://a.b/ HTTP/1.1\r\nX: 1\r\n folded\r\n\r\n", 400,
	    "folding");
	refused("GET http://a.b/ HTTP/1.1\r\nX: 1\r\n\tfolded\r\n\r\n", 400,
	    "folding");
	refused("GET http://a.b/ HTTP/1.1\r\nX : 1\r\n\r\n", 400,
	    "header name");
	refused("GET http://a.b/ HTTP/1.1\r\nX\r\n\r\n", 400, "header line");
	refused("GET http://a.b/ HTTP/1.1\r\n: x\r\n\r\n", 400, "header line");
	refused("\r\nGET http://a.b/ HTTP/1.1\r\n\r\n", 400, "empty request");
	refused("GET  http://a.b/ HTTP/1.1\r\n\r\n", 400, "request line");
	refused("GET http://a.b/ HTTP/1.1 \r\n\r\n", 400, "request line");
	refused("GET http://a.b/ HTTP/1.1 x\r\n\r\n", 400, "request line");
	refused("GET http://a.b/\r\n\r\n", 400, "request line");
	refused("GET http://a.b/ XTTP/1.1\r\n\r\n", 400, "version");
	refused("GET http://a.b/ HTTP/2.0\r\n\r\n", 505, "version");
	refused("GET http://a.b/ HTTP/1.2\r\n\r\n", 505, "version");
	refused("G(T http://a.b/ HTTP/1.1\r\n\r\n", 400, "method");
}

/* A head of exactly len bytes: a request line and X: fields. */
static char *
head_of(size_t len, size_t *nfields)
{
	const char	*line = "GET http://a.b/ HTTP/1.1\r\n";
	char		*h;
	size_t		 off, n, left;

	assert_non_null(h = malloc(len + 1));
	off = strlen(line);
	memcpy(h, line, off);
	*nfields = 0;
	while ((left = len - off - 2) > 0) {
		/* Fields of at most 1000 bytes, none shorter than "X: \r\n". */
		n = left > 1000 ? 1000 : left;
		if (left > 1000 && left - 1000 < 5)
			n = 500;
		memcpy(h + off, "X: ", 3);
		memset(h + off + 3, 'v', n - 5);
		memcpy(h + off + n - 2, "\r\n", 2);
		off += n;
		(*nfields)++;
	}
	memcpy(h + off, "\r\n", 2);
	h[len] = '\0';
	return h;
}

static void
test_head_bound(void **state)
{
	struct egress_request	 r;
	char			*h;
	size_t			 n;

	h = head_of(EGRESS_HEAD_MAX, &n);
	assert_true(n <= EGRESS_FIELDS_MAX);
	assert_int_equal(parse(&r, h), 1);
	assert_int_equal(r.nfields, n);
	egress_request_free(&r);
	free(h);

	h = head_of(EGRESS_HEAD_MAX + 1, &n);
	assert_int_equal(parse(&r, h), 431);
	egress_request_free(&r);
	free(h);

	/* No end in sight: refused at the byte past the bound. */
	assert_non_null(h = malloc(EGRESS_HEAD_MAX + 10));
	memset(h, 'a', EGRESS_HEAD_MAX + 10);
	memcpy(h, "GET http://a.b/", 15);
	egress_request_init(&r);
	assert_int_equal(egress_request_feed(&r, h, EGRESS_HEAD_MAX, &n), 0);
	assert_int_equal(egress_request_feed(&r, h, 1, &n), -1);
	assert_int_equal(r.status, 431);
	egress_request_free(&r);
	free(h);
}

static void
test_field_count(void **state)
{
	struct egress_request	 r;
	char			*h;
	size_t			 i, off, used;

	assert_non_null(h = malloc(EGRESS_HEAD_MAX));
	off = (size_t)sprintf(h, "GET http://a.b/ HTTP/1.1\r\n");
	for (i = 0; i < EGRESS_FIELDS_MAX; i++)
		off += (size_t)sprintf(h + off, "X%zu: y\r\n", i);
	memcpy(h + off, "\r\n", 2);
	assert_int_equal(parse_len(&r, h, off + 2), 1);
	assert_int_equal(r.nfields, EGRESS_FIELDS_MAX);
	egress_request_free(&r);

	/* The 101st field's line end refuses it, before any blank line. */
	off += (size_t)sprintf(h + off, "Y: z\r\n");
	egress_request_init(&r);
	assert_int_equal(egress_request_feed(&r, h, off, &used), -1);
	assert_int_equal(r.status, 431);
	egress_request_free(&r);

	/* Thousands of empty-named lines: refused at the 101st too. */
	off = (size_t)sprintf(h, "GET http://a.b/ HTTP/1.1\r\n");
	while (off + 3 < EGRESS_HEAD_MAX)
		off += (size_t)sprintf(h + off, ":\r\n");
	egress_request_init(&r);
	assert_int_equal(egress_request_feed(&r, h, off, &used), -1);
	assert_int_equal(r.status, 431);
	egress_request_free(&r);
	free(h);
}

static void
test_after_verdict(void **state)
{
	struct egress_request	 r;
	size_t			 used;

	egress_request_init(&r);
	assert_int_equal(egress_request_feed(&r, "CONNECT a.b:1 HTTP/1.1\r\n"
	    "\r\nmore", 30, &used), 1);
	assert_int_equal(used, 26);
	assert_int_equal(egress_request_feed(&r, "x", 1, &used), 1);
	assert_int_equal(used, 0);
	egress_request_free(&r);

	egress_request_init(&r);
	assert_int_equal(egress_request_feed(&r, "GET /\n", 6, &used), -1);
	assert_int_equal(egress_request_feed(&r, "x", 1, &used), -1);
	assert_int_equal(r.status, 400);
	egress_request_free(&r);

	/* Nothing yet: nothing held but the buffer. */
	egress_request_init(&r);
	assert_int_equal(egress_request_feed(&r, "", 0, &used), 0);
	assert_int_equal(egress_request_feed(&r, "CONN", 4, &used), 0);
	assert_int_equal(used, 4);
	egress_request_free(&r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_connect),
		cmocka_unit_test(test_literals),
		cmocka_unit_test(test_ports),
		cmocka_unit_test(test_forward),
		cmocka_unit_test(test_host_header),
		cmocka_unit_test(test_refused_targets),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_nul),
		cmocka_unit_test(test_framing),
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_head_bound),
		cmocka_unit_test(test_field_count),
		cmocka_unit_test(test_after_verdict),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
