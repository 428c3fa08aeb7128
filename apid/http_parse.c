/*
 * Request heads and bodies (RFC 9112), pure: bytes in, a parsed head or
 * an HTTP status out, so that it can be tested and fuzzed alone.
 *
 * node's http-parser tokenizes (request line, fields, Content-Length,
 * chunked bodies).  It is lenient where a proxy in front of us might not
 * be, and a difference in framing between two parsers is how requests
 * are smuggled, so a head is first checked here line by line: every line
 * ends in CRLF, no obs-fold, field names are tokens (no whitespace before
 * the colon), values hold no control bytes; then the framing fields are
 * checked together: one Content-Length, no Content-Length with
 * Transfer-Encoding, no coding but "chunked".  Anything else is a 400
 * (or 501 for a coding we do not implement) and the connection closes.
 */
#include <sys/types.h>

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <http_parser.h>

#include "apid.h"
#include "format.h"

/* tchar of RFC 9110 §5.6.2. */
static int
is_tchar(unsigned char c)
{
	if (isalnum(c))
		return 1;
	return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/* What a field value may hold: VCHAR, obs-text, SP and HTAB. */
static int
is_value_byte(unsigned char c)
{
	return c == ' ' || c == '\t' || (c >= 0x21 && c != 0x7f);
}

static int	chunk_trailer_byte(struct http_head *, unsigned char);

static int
head_error(struct http_head *h, int status, const char *why)
{
	h->status = status;
	h->error = why;
	return -1;
}

/*
 * The request line: method SP request-target SP HTTP-version, single
 * spaces, no control bytes (http-parser checks the parts).
 */
static int
check_request_line(struct http_head *h, const char *p, size_t len)
{
	size_t	 i, spaces = 0;

	if (len > HTTP_TARGET_MAX + 64)
		return head_error(h, 414, "URI Too Long");
	for (i = 0; i < len; i++) {
		if (p[i] == ' ') {
			if (i == 0 || p[i - 1] == ' ')
				return head_error(h, 400, "malformed request "
				    "line");
			spaces++;
		} else if ((unsigned char)p[i] < 0x21 || p[i] == 0x7f)
			return head_error(h, 400, "malformed request line");
	}
	if (spaces != 2 || p[len - 1] == ' ')
		return head_error(h, 400, "malformed request line");
	/* Non-strict http-parser takes any letters for "HTTP". */
	if (len < 9 || memcmp(p + len - 8, "HTTP/", 5) != 0 ||
	    !isdigit((unsigned char)p[len - 3]) || p[len - 2] != '.' ||
	    !isdigit((unsigned char)p[len - 1]) || p[len - 9] != ' ')
		return head_error(h, 400, "malformed HTTP version");
	return 0;
}

/* name ":" OWS value OWS, name a token, value without control bytes. */
static int
check_field_line(struct http_head *h, const char *p, size_t len)
{
	size_t	 i;

	if (p[0] == ' ' || p[0] == '\t')
		return head_error(h, 400, "obsolete line folding");
	for (i = 0; i < len && p[i] != ':'; i++)
		if (!is_tchar((unsigned char)p[i]))
			return head_error(h, 400, "malformed header name");
	if (i == 0 || i == len)
		return head_error(h, 400, "malformed header line");
	for (i++; i < len; i++)
		if (!is_value_byte((unsigned char)p[i]))
			return head_error(h, 400, "control byte in a header "
			    "value");
	return 0;
}

/* Every line ends in CRLF; no CR or LF anywhere else. */
static int
check_lines(struct http_head *h, const char *raw, size_t len)
{
	const char	*p = raw, *end = raw + len, *cr;
	int		 first = 1, nfields = 0;

	while (p < end) {
		if ((cr = memchr(p, '\r', end - p)) == NULL ||
		    cr + 1 >= end || cr[1] != '\n' ||
		    memchr(p, '\n', cr - p) != NULL)
			return head_error(h, 400, "malformed line ending");
		if (cr == p)
			return 0;		/* the empty line: the end */
		if (first) {
			if (check_request_line(h, p, cr - p) == -1)
				return -1;
			first = 0;
		} else {
			if (++nfields > HTTP_FIELDS_MAX)
				return head_error(h, 431,
				    "Request Header Fields Too Large");
			if (check_field_line(h, p, cr - p) == -1)
				return -1;
		}
		p = cr + 2;
	}
	return head_error(h, 400, "incomplete head");
}

/* http-parser's callbacks record where things are in h->raw. */

static int
on_url(http_parser *p, const char *at, size_t len)
{
	struct http_head	*h = p->data;

	h->target_off = at - h->raw;
	h->target_len = len;
	return 0;
}

static int
on_field(http_parser *p, const char *at, size_t len)
{
	struct http_head	*h = p->data;
	struct http_field	*f;

	/* check_lines() counted them: one callback per line. */
	if (h->nfields == HTTP_FIELDS_MAX)
		return -1;
	f = &h->fields[h->nfields++];
	f->name_off = at - h->raw;
	f->name_len = len;
	f->value_off = f->name_off + len;
	f->value_len = 0;
	return 0;
}

static int
on_value(http_parser *p, const char *at, size_t len)
{
	struct http_head	*h = p->data;
	struct http_field	*f;

	if (h->nfields == 0)
		return -1;
	f = &h->fields[h->nfields - 1];
	/* With the whole head at once a value comes in one piece. */
	if (f->value_len != 0)
		return -1;
	f->value_off = at - h->raw;
	f->value_len = len;
	return 0;
}

static int
on_headers_complete(http_parser *p)
{
	struct http_head	*h = p->data;

	h->complete = 1;
	return 0;
}

/* A request without a body is complete with its head. */
static int
on_head_message_complete(http_parser *p)
{
	http_parser_pause(p, 1);
	return 0;
}

/* Bodies are read later, by http_body_feed(), without http-parser. */
static const http_parser_settings head_settings = {
	.on_url = on_url,
	.on_header_field = on_field,
	.on_header_value = on_value,
	.on_headers_complete = on_headers_complete,
	.on_message_complete = on_head_message_complete,
};

/* NUL-terminate the pieces in place: h->raw is ours. */
static void
split_fields(struct http_head *h)
{
	struct http_field	*f;
	size_t			 i;

	h->target = h->raw + h->target_off;
	h->raw[h->target_off + h->target_len] = '\0';
	h->method = http_method_str(h->parser.method);
	for (i = 0; i < h->nfields; i++) {
		f = &h->fields[i];
		f->name = h->raw + f->name_off;
		h->raw[f->name_off + f->name_len] = '\0';
		/* An empty value may be reported at the next line's start. */
		if (f->value_len == 0) {
			f->value = "";
			continue;
		}
		/* http-parser keeps the blanks after a value: OWS. */
		while (f->value_len > 0 &&
		    (h->raw[f->value_off + f->value_len - 1] == ' ' ||
		    h->raw[f->value_off + f->value_len - 1] == '\t'))
			f->value_len--;
		f->value = h->raw + f->value_off;
		h->raw[f->value_off + f->value_len] = '\0';
	}
}

const char *
http_head_field(const struct http_head *h, const char *name)
{
	size_t	 i;

	for (i = 0; i < h->nfields; i++)
		if (strcasecmp(h->fields[i].name, name) == 0)
			return h->fields[i].value;
	return NULL;
}

static size_t
field_count(const struct http_head *h, const char *name)
{
	size_t	 i, n = 0;

	for (i = 0; i < h->nfields; i++)
		if (strcasecmp(h->fields[i].name, name) == 0)
			n++;
	return n;
}

/*
 * Transfer-Encoding: only "chunked", once, and never with a
 * Content-Length or in HTTP/1.0 (RFC 9112 §6.1, §6.3).  Any other coding
 * is refused as a request whose length cannot be read reliably.
 */
static int
check_framing(struct http_head *h)
{
	const char	*te;
	size_t	 	 n;

	if (field_count(h, "Content-Length") > 1)
		return head_error(h, 400, "more than one Content-Length");
	if ((n = field_count(h, "Transfer-Encoding")) == 0)
		return 0;
	if (http_head_field(h, "Content-Length") != NULL)
		return head_error(h, 400, "Content-Length with "
		    "Transfer-Encoding");
	if (h->minor == 0)
		return head_error(h, 400, "Transfer-Encoding in HTTP/1.0");
	te = http_head_field(h, "Transfer-Encoding");
	te += strspn(te, " \t");
	if (n == 1 && strncasecmp(te, "chunked", 7) == 0 &&
	    te[7 + strspn(te + 7, " \t")] == '\0')
		return 0;
	return head_error(h, 400, "transfer codings other than chunked are "
	    "not accepted");
}

/* The fields that change what we do, once the framing is sound. */
static int
check_semantics(struct http_head *h)
{
	const char	*v;

	if (h->major != 1 || h->minor > 1)
		return head_error(h, 505, "HTTP Version Not Supported");
	if (check_framing(h) == -1)
		return -1;
	if (field_count(h, "Host") > 1 ||
	    (h->minor == 1 && field_count(h, "Host") == 0))
		return head_error(h, 400, "a request needs exactly one Host");
	h->chunked = (h->parser.flags & F_CHUNKED) != 0;
	h->has_length = (h->parser.flags & F_CONTENTLENGTH) != 0;
	h->length = h->has_length ? h->parser.content_length : 0;
	h->keep_alive = http_should_keep_alive(&h->parser);
	if ((v = http_head_field(h, "Expect")) != NULL) {
		if (strcasecmp(v, "100-continue") != 0)
			return head_error(h, 417, "Expectation Failed");
		h->expect_continue = 1;
	}
	h->upgrade = h->parser.upgrade &&
	    http_head_field(h, "Upgrade") != NULL;
	return 0;
}

static int
parser_status(enum http_errno e)
{
	switch (e) {
	case HPE_INVALID_METHOD:
		return 501;
	case HPE_INVALID_VERSION:
		return 505;
	case HPE_HEADER_OVERFLOW:
		return 431;
	default:
		return 400;
	}
}

/*
 * raw: one whole head, from the request line to the empty line, which
 * the head takes (it is split in place).  0, or -1 with h->status and
 * h->error set; h->raw is freed by http_head_free() either way.
 */
int
http_head_parse(struct http_head *h, char *raw, size_t len)
{
	enum http_errno	 e;
	size_t		 n;

	memset(h, 0, sizeof(*h));
	h->raw = raw;
	h->rawlen = len;
	if (len > HTTP_HEAD_MAX)
		return head_error(h, 431, "Request Header Fields Too Large");
	if (check_lines(h, raw, len) == -1)
		return -1;
	http_parser_init(&h->parser, HTTP_REQUEST);
	h->parser.data = h;
	n = http_parser_execute(&h->parser, &head_settings, raw, len);
	e = HTTP_PARSER_ERRNO(&h->parser);
	if ((e == HPE_OK || e == HPE_PAUSED) && h->complete && n == len) {
		if (e == HPE_PAUSED)
			http_parser_pause(&h->parser, 0);
		h->major = h->parser.http_major;
		h->minor = h->parser.http_minor;
		split_fields(h);
		return check_semantics(h);
	}
	if (e == HPE_OK || e == HPE_PAUSED)
		return head_error(h, 400, "incomplete head");
	return head_error(h, parser_status(e), http_errno_description(e));
}

void
http_head_free(struct http_head *h)
{
	free(h->raw);
	h->raw = NULL;
}

/*
 * Bodies are framed here, not by http-parser: Debian builds it without
 * HTTP_PARSER_STRICT, and then it takes any two bytes for the CRLF after
 * a chunk's data or after a chunk size's CR ("2\r\n{}XX0\r\n\r\n" is a
 * whole body to it), which is exactly the disagreement with a proxy that
 * smuggles a request.  RFC 9112 §7.1, strictly:
 *
 *	chunk = 1*HEXDIG [ chunk-ext ] CRLF chunk-data CRLF
 *	last-chunk = 1*("0") [ chunk-ext ] CRLF, trailer lines, CRLF
 */
#define CHUNK_SIZE_DIGITS	15	/* < 2^60: no overflow */
#define CHUNK_LINE_MAX		4096	/* an extension or a trailer line */
#define CHUNK_TRAILERS_MAX	(8 * 1024)

/* One byte of framing; 0, or -1 with the refusal set. */
static int
chunk_framing_byte(struct http_head *h, unsigned char c)
{
	struct http_chunker	*k = &h->chunker;
	int			 v;

	switch (k->state) {
	case CHUNK_SIZE:
		if ((v = format_hexval(c)) != -1) {
			if (++k->digits > CHUNK_SIZE_DIGITS)
				return head_error(h, 400, "chunk size too large");
			k->left = k->left * 16 + (uint64_t)v;
			return 0;
		}
		if (k->digits == 0)
			return head_error(h, 400, "malformed chunk size");
		if (c == '\r') {
			k->state = CHUNK_SIZE_LF;
			return 0;
		}
		if (c != ';' && c != ' ' && c != '\t')
			return head_error(h, 400, "malformed chunk size");
		k->state = CHUNK_EXT;
		k->line = 0;
		return 0;
	case CHUNK_EXT:
		if (c == '\r') {
			k->state = CHUNK_SIZE_LF;
			return 0;
		}
		if (++k->line > CHUNK_LINE_MAX || !is_value_byte(c))
			return head_error(h, 400, "malformed chunk extension");
		return 0;
	case CHUNK_SIZE_LF:
		if (c != '\n')
			return head_error(h, 400, "malformed chunk size line");
		k->state = k->left > 0 ? CHUNK_DATA : CHUNK_TRAILER;
		k->digits = 0;
		k->line = 0;
		return 0;
	case CHUNK_DATA_CR:
		if (c != '\r')
			return head_error(h, 400, "chunk data not followed by "
			    "CRLF");
		k->state = CHUNK_DATA_LF;
		return 0;
	case CHUNK_DATA_LF:
		if (c != '\n')
			return head_error(h, 400, "chunk data not followed by "
			    "CRLF");
		k->state = CHUNK_SIZE;
		return 0;
	default:
		return chunk_trailer_byte(h, c);
	}
}

/* Trailer lines are read and dropped; the empty line ends the body. */
static int
chunk_trailer_byte(struct http_head *h, unsigned char c)
{
	struct http_chunker	*k = &h->chunker;

	if (k->state == CHUNK_TRAILER_LF) {
		if (c != '\n')
			return head_error(h, 400, "malformed trailer");
		if (k->line == 0)
			h->body_done = 1;
		k->state = CHUNK_TRAILER;
		k->line = 0;
		return 0;
	}
	if (c == '\r') {
		k->state = CHUNK_TRAILER_LF;
		return 0;
	}
	if (++k->line > CHUNK_LINE_MAX || !is_value_byte(c))
		return head_error(h, 400, "malformed trailer");
	if (++h->trailer_bytes > CHUNK_TRAILERS_MAX)
		return head_error(h, 431, "Request Header Fields Too Large");
	return 0;
}

/* Chunked: framing bytes one by one, data in runs. */
static ssize_t
chunked_feed(struct http_head *h, const char *data, size_t len)
{
	struct http_chunker	*k = &h->chunker;
	size_t			 i = 0, n;

	while (i < len && !h->body_done) {
		if (k->state != CHUNK_DATA) {
			/* Framing must carry data, byte for byte. */
			if (++h->framing_bytes > HTTP_CHUNK_OVERHEAD_MAX +
			    h->body_bytes)
				return head_error(h, 400, "chunk framing without "
				    "data");
			if (chunk_framing_byte(h, (unsigned char)data[i]) == -1)
				return -1;
			i++;
			continue;
		}
		n = len - i < k->left ? len - i : (size_t)k->left;
		h->body_cb(h->body_arg, data + i, n);
		h->body_bytes += n;
		k->left -= n;
		i += n;
		if (k->left == 0)
			k->state = CHUNK_DATA_CR;
	}
	return (ssize_t)i;
}

/* With a Content-Length: exactly that many bytes. */
static ssize_t
length_feed(struct http_head *h, const char *data, size_t len)
{
	uint64_t	 left = h->length - h->body_bytes;
	size_t		 n = len < left ? len : (size_t)left;

	/* Never an empty piece: a route may push back on every piece. */
	if (n > 0)
		h->body_cb(h->body_arg, data, n);
	h->body_bytes += n;
	if (h->body_bytes == h->length)
		h->body_done = 1;
	return (ssize_t)n;
}

/*
 * Feed wire bytes of the body; the decoded bytes go to cb.  Returns how
 * many wire bytes were taken (fewer than len once the body is complete:
 * the rest is the next request's), or -1 with h->status and h->error.
 * A chunked body's framing (sizes, extensions, trailers) may cost at most
 * HTTP_CHUNK_OVERHEAD_MAX wire bytes more than its data, so that a body
 * must keep moving data to keep its connection.
 */
ssize_t
http_body_feed(struct http_head *h, const char *data, size_t len,
    http_body_cb cb, void *arg)
{
	if (h->body_done || (!h->chunked && h->length == 0)) {
		h->body_done = 1;
		return 0;
	}
	h->body_cb = cb;
	h->body_arg = arg;
	if (!h->chunked)
		return length_feed(h, data, len);
	return chunked_feed(h, data, len);
}
