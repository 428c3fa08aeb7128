/*
 * One proxy request head from a sandbox (egress_request.h): collected
 * as it arrives, then checked and, for a forwarded request, rewritten
 * into the head sent upstream.
 *
 * node's http-parser (the project's HTTP tokenizer, apid/http_parse.c)
 * reads the head once it is whole: the method against its table, the
 * version, the fields, and its verdict on everything else; what it calls
 * an error is refused.  It is lenient where a sandbox could make two
 * parsers disagree (bare LF, obs-fold, any bytes in a URL, leading zeros
 * in ports, zone ids in IPv6 literals), so a line check of ours comes
 * first, and the request-target is read here, not by its URL parser:
 * the host must be exactly what common/egress_policy.c would accept in
 * an allowlist, since the policy is checked on it.  A method must be one
 * http-parser knows; any other is 501.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <http_parser.h>

#include "egress_policy.h"
#include "egress_request.h"

#define HEAD_FIRST_SIZE	1024
#define LENGTH_DIGITS	18	/* a Content-Length < 10^18: no overflow */

enum { READING = 0, DONE = 1, REFUSED = -1 };

/*
 * Hop-by-hop fields (RFC 9110 §7.6.1) and the proxy's own: never sent
 * upstream.  Transfer-Encoding stays: the body is relayed as it came.
 * Host is the client's word for where the request goes, replaced by the
 * URL's authority, which is what the policy was checked on.
 */
static const char *const hop_fields[] = {
	"Connection", "Proxy-Connection", "Keep-Alive", "TE", "Trailer",
	"Upgrade", "Proxy-Authorization", "Proxy-Authenticate", "Host",
};

static int
refuse(struct egress_request *r, int status, const char *reason)
{
	r->state = REFUSED;
	r->status = status;
	r->reason = reason;
	return -1;
}

/* tchar of RFC 9110 §5.6.2. */
static int
is_tchar(unsigned char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9'))
		return 1;
	return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/* What a field value may hold: VCHAR, obs-text, SP and HTAB. */
static int
is_value_byte(unsigned char c)
{
	return c == ' ' || c == '\t' || (c >= 0x21 && c != 0x7f);
}

void
egress_request_init(struct egress_request *r)
{
	memset(r, 0, sizeof(*r));
}

void
egress_request_free(struct egress_request *r)
{
	free(r->head);
	free(r->upstream);
	memset(r, 0, sizeof(*r));
}

/* Room for one more byte, the buffer growing up to the bound. */
static int
head_reserve(struct egress_request *r)
{
	size_t	 size;
	char	*p;

	if (r->len < r->size)
		return 0;
	if (r->len == EGRESS_HEAD_MAX)
		return refuse(r, 431, "request head too large");
	size = r->size == 0 ? HEAD_FIRST_SIZE : r->size * 2;
	if (size > EGRESS_HEAD_MAX)
		size = EGRESS_HEAD_MAX;
	if ((p = realloc(r->head, size)) == NULL) {
		refuse(r, 500, "out of memory");
		errno = ENOMEM;
		return -1;
	}
	r->head = p;
	r->size = size;
	return 0;
}

/*
 * One byte of the head: 1 when it ends the head.  Line ends are CRLF
 * and nothing else, checked as they come: a bare LF is where a lenient
 * parser upstream and a strict one would see different heads.
 */
static int
head_byte(struct egress_request *r, unsigned char c)
{
	if (head_reserve(r) == -1)
		return -1;
	if (r->len > 0 && r->head[r->len - 1] == '\r' && c != '\n')
		return refuse(r, 400, "CR without LF in the head");
	r->head[r->len++] = (char)c;
	if (c != '\n')
		return 0;
	if (r->len < 2 || r->head[r->len - 2] != '\r')
		return refuse(r, 400, "bare LF: lines must end in CRLF");
	if (r->len - r->line_start == 2)
		return r->nlines == 0 ?
		    refuse(r, 400, "empty request line") : 1;
	if (++r->nlines > 1 + EGRESS_FIELDS_MAX)
		return refuse(r, 431, "too many header fields");
	r->line_start = r->len;
	return 0;
}

/*
 * method SP request-target SP HTTP-version: single spaces, printable
 * ASCII only (a host or path of other bytes is refused, not guessed at).
 */
static int
check_request_line(struct egress_request *r, const char *p, size_t len)
{
	size_t	 i, spaces = 0;

	for (i = 0; i < len; i++) {
		if (p[i] == ' ') {
			if (i == 0 || p[i - 1] == ' ')
				return refuse(r, 400, "malformed request line");
			spaces++;
		} else if ((unsigned char)p[i] < 0x21 ||
		    (unsigned char)p[i] > 0x7e)
			return refuse(r, 400, "request line holds a byte that "
			    "is not printable ASCII");
		else if (spaces == 0 && !is_tchar((unsigned char)p[i]))
			return refuse(r, 400, "malformed method");
	}
	if (spaces != 2 || p[len - 1] == ' ')
		return refuse(r, 400, "malformed request line");
	if (len < 9 || memcmp(p + len - 8, "HTTP/", 5) != 0 ||
	    p[len - 3] < '0' || p[len - 3] > '9' || p[len - 2] != '.' ||
	    p[len - 1] < '0' || p[len - 1] > '9' || p[len - 9] != ' ')
		return refuse(r, 400, "malformed HTTP version");
	if (p[len - 3] != '1' || p[len - 1] > '1')
		return refuse(r, 505, "HTTP version not supported");
	return 0;
}

/* name ":" OWS value OWS, name a token, value without control bytes. */
static int
check_field_line(struct egress_request *r, const char *p, size_t len)
{
	size_t	 i;

	if (p[0] == ' ' || p[0] == '\t')
		return refuse(r, 400, "obsolete line folding");
	for (i = 0; i < len && p[i] != ':'; i++)
		if (!is_tchar((unsigned char)p[i]))
			return refuse(r, 400, "malformed header name");
	if (i == 0 || i == len)
		return refuse(r, 400, "malformed header line");
	for (i++; i < len; i++)
		if (!is_value_byte((unsigned char)p[i]))
			return refuse(r, 400, "control byte in a header value");
	return 0;
}

/* Every line; head_byte() made sure that each ends in CRLF. */
static int
check_lines(struct egress_request *r)
{
	const char	*p = r->head, *end = r->head + r->len, *cr;
	int		 first = 1;

	while ((cr = memchr(p, '\r', end - p)) != NULL && cr != p) {
		if (first ? check_request_line(r, p, cr - p) :
		    check_field_line(r, p, cr - p))
			return -1;
		first = 0;
		p = cr + 2;
	}
	return 0;
}

/* http-parser's callbacks record where things are in r->head. */

static int
on_url(http_parser *p, const char *at, size_t len)
{
	struct egress_request	*r = p->data;

	r->target_off = at - r->head;
	r->target_len = len;
	return 0;
}

static int
on_field(http_parser *p, const char *at, size_t len)
{
	struct egress_request	*r = p->data;
	struct egress_field	*f;
	const char		*cr;

	/* The head is parsed whole: one callback per line, counted. */
	if (r->nfields == EGRESS_FIELDS_MAX)
		return -1;
	f = &r->fields[r->nfields++];
	f->line_off = at - r->head;
	if ((cr = memchr(at, '\r', r->len - f->line_off)) == NULL)
		return -1;
	f->line_len = cr - at;
	f->name_len = len;
	f->value_off = f->line_off + f->line_len;
	f->value_len = 0;
	return 0;
}

static int
on_value(http_parser *p, const char *at, size_t len)
{
	struct egress_request	*r = p->data;
	struct egress_field	*f;

	if (r->nfields == 0)
		return -1;
	f = &r->fields[r->nfields - 1];
	if (f->value_len != 0)
		return -1;
	f->value_off = at - r->head;
	f->value_len = len;
	/* http-parser keeps the blanks after a value: OWS. */
	while (f->value_len > 0 && (at[f->value_len - 1] == ' ' ||
	    at[f->value_len - 1] == '\t'))
		f->value_len--;
	return 0;
}

static int
on_headers_complete(http_parser *p)
{
	struct egress_request	*r = p->data;

	r->parsed = 1;
	return 0;
}

/* A request without a body is complete with its head. */
static int
on_message_complete(http_parser *p)
{
	http_parser_pause(p, 1);
	return 0;
}

static const http_parser_settings head_settings = {
	.on_url = on_url,
	.on_header_field = on_field,
	.on_header_value = on_value,
	.on_headers_complete = on_headers_complete,
	.on_message_complete = on_message_complete,
};

static int
run_parser(struct egress_request *r)
{
	http_parser	 parser;
	enum http_errno	 e;
	size_t		 n;

	http_parser_init(&parser, HTTP_REQUEST);
	parser.data = r;
	n = http_parser_execute(&parser, &head_settings, r->head, r->len);
	e = HTTP_PARSER_ERRNO(&parser);
	switch (e) {
	case HPE_OK:
	case HPE_PAUSED:
		break;
	case HPE_INVALID_METHOD:
		return refuse(r, 501, "method not implemented");
	case HPE_UNEXPECTED_CONTENT_LENGTH:
		return refuse(r, 400, "more than one Content-Length, or one "
		    "with Transfer-Encoding");
	case HPE_INVALID_CONTENT_LENGTH:
		return refuse(r, 400, "invalid Content-Length");
	default:
		return refuse(r, 400, http_errno_description(e));
	}
	if (!r->parsed || n != r->len || r->target_len == 0)
		return refuse(r, 400, "malformed request head");
	r->method = parser.method;
	r->minor = parser.http_minor;
	return 0;
}

static int
field_is(const struct egress_request *r, const struct egress_field *f,
    const char *name)
{
	return f->name_len == strlen(name) &&
	    strncasecmp(r->head + f->line_off, name, f->name_len) == 0;
}

static size_t
field_count(const struct egress_request *r, const char *name,
    const struct egress_field **last)
{
	size_t	 i, n = 0;

	for (i = 0; i < r->nfields; i++)
		if (field_is(r, &r->fields[i], name)) {
			*last = &r->fields[i];
			n++;
		}
	return n;
}

static int
length_parse(struct egress_request *r, const struct egress_field *f)
{
	const char	*v = r->head + f->value_off;
	size_t		 i;

	if (f->value_len == 0 || f->value_len > LENGTH_DIGITS)
		return refuse(r, 400, "invalid Content-Length");
	r->content_length = 0;
	for (i = 0; i < f->value_len; i++) {
		if (v[i] < '0' || v[i] > '9')
			return refuse(r, 400, "invalid Content-Length");
		r->content_length = r->content_length * 10 + (v[i] - '0');
	}
	return 0;
}

/*
 * How the body after the head is framed: one Content-Length, or
 * Transfer-Encoding chunked alone (RFC 9112 §6.1, §6.3).  A CONNECT has
 * none: what follows its head is the tunnel's.
 */
static int
check_framing(struct egress_request *r)
{
	const struct egress_field	*cl = NULL, *te = NULL;
	size_t				 ncl, nte;

	ncl = field_count(r, "Content-Length", &cl);
	nte = field_count(r, "Transfer-Encoding", &te);
	if (ncl > 1)
		return refuse(r, 400, "more than one Content-Length");
	if (ncl == 1 && nte > 0)
		return refuse(r, 400, "Content-Length with Transfer-Encoding");
	if (ncl == 1 && length_parse(r, cl) == -1)
		return -1;
	if (ncl == 1 && r->content_length > 0)
		r->body = EGRESS_BODY_LENGTH;
	if (nte == 0)
		goto done;
	if (r->minor == 0)
		return refuse(r, 400, "Transfer-Encoding in HTTP/1.0");
	if (nte > 1 || te->value_len != 7 ||
	    strncasecmp(r->head + te->value_off, "chunked", 7) != 0)
		return refuse(r, 501, "transfer codings other than chunked "
		    "are not implemented");
	r->body = EGRESS_BODY_CHUNKED;
 done:
	if (r->method == HTTP_CONNECT && r->body != EGRESS_BODY_NONE)
		return refuse(r, 400, "a CONNECT request has no body");
	return 0;
}

/* A port: 1-5 digits, no leading zero, 1-65535. */
static int
port_parse(const char *s, size_t len, unsigned int *port)
{
	size_t	 i;

	if (len == 0 || len > 5 || s[0] == '0')
		return -1;
	*port = 0;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		*port = *port * 10 + (unsigned int)(s[i] - '0');
	}
	return *port <= 65535 ? 0 : -1;
}

static int
host_ipv6(struct egress_request *r, const char *s, size_t len)
{
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)&r->addr;
	char			 buf[INET6_ADDRSTRLEN];

	if (len >= sizeof(buf))
		return refuse(r, 400, "invalid IPv6 address");
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (inet_pton(AF_INET6, buf, &sin6->sin6_addr) != 1)
		return refuse(r, 400, "invalid IPv6 address");
	sin6->sin6_family = AF_INET6;
	r->host_kind = EGRESS_HOST_IPV6;
	inet_ntop(AF_INET6, &sin6->sin6_addr, r->host, sizeof(r->host));
	return 0;
}

/*
 * A name or an IPv4 literal.  glibc's inet_pton takes only four decimal
 * numbers without leading zeros; anything else that looks numeric
 * ("1.2.3", "010.0.0.1", "0x7f.1") is no valid name either, whose last
 * label may not be all digits, so no host is read as an address by a
 * resolver and as a name by the policy.
 */
static int
host_name(struct egress_request *r, const char *s, size_t len)
{
	struct sockaddr_in	*sin = (struct sockaddr_in *)&r->addr;
	size_t			 i;

	if (len > 0 && s[len - 1] == '.')
		len--;
	if (len > EGRESS_NAME_MAX)
		return refuse(r, 400, "host name too long");
	memcpy(r->host, s, len);
	r->host[len] = '\0';
	if (inet_pton(AF_INET, r->host, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		r->host_kind = EGRESS_HOST_IPV4;
		return 0;
	}
	if (egress_name_valid(s, len, NULL, 0) == -1)
		return refuse(r, 400, "invalid host name");
	for (i = 0; i < len; i++)
		if (r->host[i] >= 'A' && r->host[i] <= 'Z')
			r->host[i] += 'a' - 'A';
	r->host_kind = EGRESS_HOST_NAME;
	return 0;
}

/*
 * host [":" port]: a name, an IPv4 literal or a bracketed IPv6 one.
 * With no port, default (0: one is required).  An empty port ("host:")
 * is refused rather than defaulted: nothing needs it.
 */
static int
authority_parse(struct egress_request *r, const char *s, size_t len,
    unsigned int default_port)
{
	const char	*colon, *end;
	size_t		 hostlen;

	if (memchr(s, '@', len) != NULL)
		return refuse(r, 400, "userinfo in the URL is not accepted");
	if (len > 0 && s[0] == '[') {
		if ((end = memchr(s, ']', len)) == NULL)
			return refuse(r, 400, "'[' without its ']'");
		if (host_ipv6(r, s + 1, end - s - 1) == -1)
			return -1;
		colon = end + 1 < s + len ? end + 1 : NULL;
		if (colon != NULL && *colon != ':')
			return refuse(r, 400, "only :port may follow ']'");
	} else {
		colon = memchr(s, ':', len);
		hostlen = colon != NULL ? (size_t)(colon - s) : len;
		if (colon != NULL && memchr(colon + 1, ':', len - hostlen - 1))
			return refuse(r, 400, "an IPv6 address must be in "
			    "brackets");
		if (hostlen == 0)
			return refuse(r, 400, "empty host");
		if (host_name(r, s, hostlen) == -1)
			return -1;
	}
	if (colon == NULL && default_port == 0)
		return refuse(r, 400, "CONNECT needs host:port");
	r->port = default_port;
	if (colon != NULL && port_parse(colon + 1, s + len - colon - 1,
	    &r->port) == -1)
		return refuse(r, 400, "invalid port");
	/* sin_port and sin6_port are at the same place. */
	((struct sockaddr_in *)&r->addr)->sin_port = htons(r->port);
	return 0;
}

static int
scheme_is(const char *s, size_t len, const char *scheme)
{
	size_t	 n = strlen(scheme);

	return len >= n && strncasecmp(s, scheme, n) == 0;
}

/*
 * http://authority[/path][?query], the path and query kept for the
 * upstream request line.  https:// is TLS, which the client speaks to
 * the server through CONNECT; a path alone means the client does not
 * know it talks to a proxy.
 */
static int
absolute_parse(struct egress_request *r, size_t *path_off)
{
	const char	*t = r->head + r->target_off, *a;
	size_t		 len = r->target_len, alen;

	if (t[0] == '/' || t[0] == '*')
		return refuse(r, 400, "not a proxy request: give an absolute "
		    "http:// URL, or CONNECT host:port");
	if (scheme_is(t, len, "https://"))
		return refuse(r, 501, "https:// is not forwarded: use "
		    "CONNECT for TLS");
	if (!scheme_is(t, len, "http://"))
		return refuse(r, 501, "only http:// URLs are forwarded");
	if (memchr(t, '#', len) != NULL)
		return refuse(r, 400, "a fragment (#) is not sent in a "
		    "request");
	a = t + 7;
	for (alen = 0; alen < len - 7 && a[alen] != '/' && a[alen] != '?';
	    alen++)
		;
	*path_off = r->target_off + 7 + alen;
	return authority_parse(r, a, alen, 80);
}

/*
 * Does a Connection field list this name?  Its value is a list of
 * tokens (RFC 9110 §7.6.1), empty elements allowed.
 */
static int
connection_lists(const struct egress_request *r, const char *name,
    size_t namelen)
{
	const struct egress_field	*c;
	const char			*v, *end, *tok;
	size_t				 i, n;

	for (i = 0; i < r->nfields; i++) {
		c = &r->fields[i];
		if (!field_is(r, c, "Connection"))
			continue;
		v = r->head + c->value_off;
		end = v + c->value_len;
		while (v < end) {
			while (v < end && strchr(" \t,", *v) != NULL)
				v++;
			tok = v;
			for (n = 0; v + n < end && is_tchar(v[n]); n++)
				;
			if (n == namelen && strncasecmp(tok, name, n) == 0)
				return 1;
			v += n;
		}
	}
	return 0;
}

/*
 * Connection's list must be tokens, and may not name a field that
 * frames the body or says where it goes: dropping one of those would
 * send upstream a body it reads otherwise than we relay it.
 */
static int
check_connection(struct egress_request *r)
{
	static const char *const kept[] = {
		"Content-Length", "Transfer-Encoding", "Host",
	};
	const char	*v;
	size_t		 i, j;

	for (i = 0; i < r->nfields; i++) {
		if (!field_is(r, &r->fields[i], "Connection"))
			continue;
		v = r->head + r->fields[i].value_off;
		for (j = 0; j < r->fields[i].value_len; j++)
			if (!is_tchar(v[j]) && strchr(" \t,", v[j]) == NULL)
				return refuse(r, 400, "malformed Connection");
	}
	for (i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		if (connection_lists(r, kept[i], strlen(kept[i])))
			return refuse(r, 400, "Connection names a field that "
			    "frames the request");
	return 0;
}

static int
is_hop_by_hop(const struct egress_request *r, const struct egress_field *f)
{
	size_t	 i;

	for (i = 0; i < sizeof(hop_fields) / sizeof(hop_fields[0]); i++)
		if (field_is(r, f, hop_fields[i]))
			return 1;
	return connection_lists(r, r->head + f->line_off, f->name_len);
}

static void
out_add(struct egress_request *r, const char *s, size_t len)
{
	memcpy(r->upstream + r->upstream_len, s, len);
	r->upstream_len += len;
}

/* Host: the URL's authority, its port only when not the default. */
static size_t
host_line(const struct egress_request *r, char *buf, size_t len)
{
	int	 v6 = r->host_kind == EGRESS_HOST_IPV6;

	if (r->port == 80)
		return (size_t)snprintf(buf, len, "Host: %s%s%s\r\n",
		    v6 ? "[" : "", r->host, v6 ? "]" : "");
	return (size_t)snprintf(buf, len, "Host: %s%s%s:%u\r\n",
	    v6 ? "[" : "", r->host, v6 ? "]" : "", r->port);
}

/*
 * The head sent upstream: the request line in origin-form, Host from the
 * URL (a client's own Host is not trusted), the client's end-to-end
 * fields as they came, and Connection: close: one request per upstream
 * connection, so that no response of one request can be read as
 * another's and the proxy never frames a response.
 */
static int
upstream_build(struct egress_request *r, size_t path_off)
{
	const char	*method = http_method_str(r->method);
	const char	*path = r->head + path_off;
	size_t		 pathlen = r->target_off + r->target_len - path_off;
	char		 host[EGRESS_NAME_MAX + 32];
	size_t		 i, size;

	/*
	 * The request line loses "http://" and the authority (at most one
	 * byte, a "/", comes in), the fields only lose lines: the client's
	 * head, a Host line and Connection: close bound it.
	 */
	size = r->len + EGRESS_UPSTREAM_EXTRA;
	if ((r->upstream = malloc(size)) == NULL) {
		refuse(r, 500, "out of memory");
		errno = ENOMEM;
		return -1;
	}
	out_add(r, method, strlen(method));
	out_add(r, " ", 1);
	if (pathlen == 0 || path[0] == '?')
		out_add(r, "/", 1);
	out_add(r, path, pathlen);
	out_add(r, r->minor == 0 ? " HTTP/1.0\r\n" : " HTTP/1.1\r\n", 11);
	out_add(r, host, host_line(r, host, sizeof(host)));
	for (i = 0; i < r->nfields; i++) {
		if (is_hop_by_hop(r, &r->fields[i]))
			continue;
		out_add(r, r->head + r->fields[i].line_off,
		    r->fields[i].line_len);
		out_add(r, "\r\n", 2);
	}
	out_add(r, "Connection: close\r\n\r\n", 21);
	r->upstream[r->upstream_len] = '\0';
	return 0;
}

/* The whole head is in r->head: check it and say what to do. */
static int
head_finish(struct egress_request *r)
{
	const struct egress_field	*last;
	size_t				 path_off = 0;

	if (check_lines(r) == -1 || run_parser(r) == -1 ||
	    check_framing(r) == -1 || check_connection(r) == -1)
		return -1;
	/* RFC 9112 §3.2: more than one Host is a 400, even to a proxy. */
	if (field_count(r, "Host", &last) > 1)
		return refuse(r, 400, "more than one Host");
	if (r->method == HTTP_CONNECT) {
		r->kind = EGRESS_REQUEST_CONNECT;
		if (authority_parse(r, r->head + r->target_off,
		    r->target_len, 0) == -1)
			return -1;
	} else {
		r->kind = EGRESS_REQUEST_FORWARD;
		if (absolute_parse(r, &path_off) == -1 ||
		    upstream_build(r, path_off) == -1)
			return -1;
	}
	r->state = DONE;
	return 1;
}

int
egress_request_feed(struct egress_request *r, const void *data, size_t len,
    size_t *used)
{
	const unsigned char	*p = data;
	size_t			 i;
	int			 rc;

	*used = 0;
	if (r->state != READING)
		return r->state;
	for (i = 0; i < len; i++) {
		if ((rc = head_byte(r, p[i])) == -1)
			return -1;
		if (rc == 1) {
			*used = i + 1;
			return head_finish(r);
		}
	}
	*used = len;
	return 0;
}
