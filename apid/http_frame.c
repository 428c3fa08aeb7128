/*
 * Request framing for the connection filter (http_intake.c): finds each
 * request head in the bytes a client sends, so that an upload's body can
 * go around evhttp (which in libevent 2.1 reads a body whole before any
 * handler runs) and an internal header cannot be forged.
 *
 * A head is the request line and the header lines up to the first empty
 * line, cut at EVBUFFER_EOL_CRLF as evhttp cuts them.  For every head the
 * framer strips any UPLOAD_LENGTH_HEADER line.  For `PUT
 * /v1/sandboxes/<id>/files[?...]` with one all-digit Content-Length N > 0
 * and no Transfer-Encoding it replaces Content-Length by "0" and
 * UPLOAD_LENGTH_HEADER: N, and the next N bytes go to the divert buffer
 * instead of evhttp.  Other heads go through byte for byte (less the
 * stripped lines), followed by their Content-Length bytes.
 *
 * evhttp answers "Expect: 100-continue" only for a body it reads, so for
 * a diverted one the framer notes it (fr->expect, HTTP/1.1 and later as
 * evhttp) and http_intake.c sends the 100 once the handler takes the body.
 *
 * What the framer cannot follow exactly as evhttp does (chunked bodies,
 * folded header lines, a body on GET, a bad Content-Length) makes it
 * pass the rest of the connection through untouched (FRAME_PASS): evhttp
 * then frames it alone, bounded by its JSON body limit, and no body is
 * diverted on that connection again.  That is safe because the upload
 * route trusts UPLOAD_LENGTH_HEADER only together with a diverted body
 * waiting on the same connection (http_intake.c).  An upload head with
 * two Content-Lengths, or a head longer than FRAME_HEAD_MAX, is refused:
 * evhttp is handed a request line it answers with 400 and a close, and
 * the rest of the connection is discarded.
 */
#include <sys/types.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>

#include "apid.h"

#define REFUSED_HEAD	"refused\r\n\r\n"
#define UPLOAD_PREFIX	"/v1/sandboxes/"
#define UPLOAD_SUFFIX	"/files"
#define MAX_CL_DIGITS	18

void
http_frame_init(struct http_framer *fr)
{
	memset(fr, 0, sizeof(*fr));
	fr->state = FRAME_HEAD;
}

/*
 * The length of the head at the start of src: > 0 when complete, 0 if
 * more bytes are needed, -1 if it is longer than FRAME_HEAD_MAX.
 */
static ssize_t
head_length(struct evbuffer *src)
{
	struct evbuffer_ptr	 pos, eol;
	size_t			 eol_len, start = 0;
	int			 first = 1;

	if (evbuffer_ptr_set(src, &pos, 0, EVBUFFER_PTR_SET) == -1)
		return 0;
	for (;;) {
		eol = evbuffer_search_eol(src, &pos, &eol_len,
		    EVBUFFER_EOL_CRLF);
		if (eol.pos == -1)
			break;
		if (((size_t)eol.pos == start && !first) ||
		    (size_t)eol.pos + eol_len > FRAME_HEAD_MAX)
			break;
		first = 0;
		start = (size_t)eol.pos + eol_len;
		if (evbuffer_ptr_set(src, &pos, start,
		    EVBUFFER_PTR_SET) == -1)
			return 0;
	}
	if (eol.pos != -1 && (size_t)eol.pos + eol_len <= FRAME_HEAD_MAX)
		return (ssize_t)(eol.pos + eol_len);
	if (evbuffer_get_length(src) > FRAME_HEAD_MAX)
		return -1;
	return 0;
}

/* The request target names the upload route (the query does not count). */
static int
upload_target(const char *t, size_t len)
{
	size_t	 plen = strlen(UPLOAD_PREFIX), slen = strlen(UPLOAD_SUFFIX);
	size_t	 i;

	for (i = 0; i < len; i++)
		if (t[i] == '?')
			break;
	len = i;
	if (len <= plen + slen || memcmp(t, UPLOAD_PREFIX, plen) != 0 ||
	    memcmp(t + len - slen, UPLOAD_SUFFIX, slen) != 0)
		return 0;
	return memchr(t + plen, '/', len - plen - slen) == NULL;
}

static int
name_is(const char *line, size_t namelen, const char *name)
{
	return strlen(name) == namelen &&
	    strncasecmp(line, name, namelen) == 0;
}

/* The value [v, v+len) is word between optional blanks, any case. */
static int
value_is(const char *v, size_t len, const char *word)
{
	while (len > 0 && (*v == ' ' || *v == '\t')) {
		v++;
		len--;
	}
	while (len > 0 && (v[len - 1] == ' ' || v[len - 1] == '\t'))
		len--;
	return len == strlen(word) && strncasecmp(v, word, len) == 0;
}

/* All digits between optional blanks, at most MAX_CL_DIGITS: 0; else -1. */
static int
parse_length(const char *v, size_t len, uint64_t *out)
{
	size_t	 i = 0, end = len, n = 0;

	while (i < end && (v[i] == ' ' || v[i] == '\t'))
		i++;
	while (end > i && (v[end - 1] == ' ' || v[end - 1] == '\t'))
		end--;
	if (i == end || end - i > MAX_CL_DIGITS)
		return -1;
	for (*out = 0; i < end; i++, n++) {
		if (v[i] < '0' || v[i] > '9')
			return -1;
		*out = *out * 10 + (uint64_t)(v[i] - '0');
	}
	return 0;
}

struct head_info {
	int		 upload;	/* PUT on the upload route */
	int		 body_method;	/* evhttp reads a body for it */
	int		 weird;		/* evhttp must frame it alone */
	int		 cl_count;
	int		 cl_bad;
	int		 te;
	int		 strip;		/* has UPLOAD_LENGTH_HEADER lines */
	int		 expect;	/* Expect: 100-continue */
	int		 http11;	/* HTTP/1.1 or later */
	uint64_t	 cl;
};

/* The line [p, p+len) without its end of line. */
static size_t
line_body(const char *p, size_t len)
{
	if (len > 0 && p[len - 1] == '\n')
		len--;
	if (len > 0 && p[len - 1] == '\r')
		len--;
	return len;
}

static size_t
next_line(const char *p, size_t len)
{
	const char	*nl = memchr(p, '\n', len);

	return nl == NULL ? len : (size_t)(nl - p) + 1;
}

static void
head_scan(const char *h, size_t hlen, struct head_info *hi)
{
	const char	*sp, *colon, *v;
	size_t		 off, ll, bl, tlen, vlen;

	memset(hi, 0, sizeof(*hi));
	ll = next_line(h, hlen);
	bl = line_body(h, ll);
	if (bl == 0 || (sp = memchr(h, ' ', bl)) == NULL) {
		hi->weird = 1;
		return;
	}
	tlen = bl - (size_t)(sp + 1 - h);
	if (memchr(sp + 1, ' ', tlen) != NULL) {
		tlen = (size_t)((const char *)memchr(sp + 1, ' ', tlen) -
		    (sp + 1));
		/* HTTP/1.x, x > 0: evhttp's test for an Expect to answer. */
		vlen = bl - (size_t)(sp + 1 - h) - tlen - 1;
		v = sp + 1 + tlen + 1;
		hi->http11 = vlen == 8 && memcmp(v, "HTTP/1.", 7) == 0 &&
		    v[7] >= '1' && v[7] <= '9';
	} else
		hi->weird = 1;		/* no version */
	hi->body_method = (sp - h == 3 && memcmp(h, "PUT", 3) == 0) ||
	    (sp - h == 4 && memcmp(h, "POST", 4) == 0) ||
	    (sp - h == 5 && memcmp(h, "PATCH", 5) == 0);
	hi->upload = sp - h == 3 && memcmp(h, "PUT", 3) == 0 &&
	    upload_target(sp + 1, tlen);
	for (off = ll; off < hlen; off += ll) {
		ll = next_line(h + off, hlen - off);
		bl = line_body(h + off, ll);
		if (bl == 0)
			break;
		if (h[off] == ' ' || h[off] == '\t' ||
		    (colon = memchr(h + off, ':', bl)) == NULL) {
			hi->weird = 1;
			continue;
		}
		if (name_is(h + off, (size_t)(colon - (h + off)),
		    UPLOAD_LENGTH_HEADER))
			hi->strip = 1;
		else if (name_is(h + off, (size_t)(colon - (h + off)),
		    "Transfer-Encoding"))
			hi->te = 1;
		else if (name_is(h + off, (size_t)(colon - (h + off)),
		    "Expect"))
			hi->expect = value_is(colon + 1, bl -
			    (size_t)(colon + 1 - (h + off)), "100-continue");
		else if (name_is(h + off, (size_t)(colon - (h + off)),
		    "Content-Length")) {
			hi->cl_count++;
			if (parse_length(colon + 1,
			    bl - (size_t)(colon + 1 - (h + off)), &hi->cl) == -1)
				hi->cl_bad = 1;
		}
	}
}

/* Copy the head, less stripped lines; for a diversion, new lengths. */
static int
head_emit(const char *h, size_t hlen, struct evbuffer *dst, int divert,
    uint64_t cl)
{
	const char	*colon;
	size_t		 off, ll, bl;
	int		 first = 1;

	for (off = 0; off < hlen; off += ll, first = 0) {
		ll = next_line(h + off, hlen - off);
		bl = line_body(h + off, ll);
		if (bl == 0 && !first) {
			if (divert && evbuffer_add_printf(dst,
			    "Content-Length: 0\r\n%s: %llu\r\n",
			    UPLOAD_LENGTH_HEADER, (unsigned long long)cl) < 0)
				return -1;
		} else if (!first &&
		    (colon = memchr(h + off, ':', bl)) != NULL &&
		    (name_is(h + off, (size_t)(colon - (h + off)),
		    UPLOAD_LENGTH_HEADER) || (divert &&
		    name_is(h + off, (size_t)(colon - (h + off)),
		    "Content-Length"))))
			continue;
		if (evbuffer_add(dst, h + off, ll) == -1)
			return -1;
	}
	return 0;
}

/* A complete head of hlen bytes is at the start of src. */
static int
frame_head(struct http_framer *fr, struct evbuffer *src,
    struct evbuffer *dst, size_t hlen, int *events)
{
	struct head_info	 hi;
	const char		*h;
	int			 divert;

	if ((h = (const char *)evbuffer_pullup(src, (ev_ssize_t)hlen)) ==
	    NULL)
		return -1;
	head_scan(h, hlen, &hi);
	if (hi.upload && (hi.cl_count > 1 || (hi.cl_count == 1 &&
	    hi.cl_bad))) {
		if (evbuffer_add(dst, REFUSED_HEAD,
		    strlen(REFUSED_HEAD)) == -1)
			return -1;
		evbuffer_drain(src, evbuffer_get_length(src));
		fr->state = FRAME_DISCARD;
		return 0;
	}
	divert = hi.upload && !hi.weird && !hi.te && hi.cl_count == 1 &&
	    hi.cl > 0;
	if (!hi.strip && !divert) {
		if (evbuffer_remove_buffer(src, dst, hlen) != (int)hlen)
			return -1;
	} else {
		if (head_emit(h, hlen, dst, divert, hi.cl) == -1)
			return -1;
		evbuffer_drain(src, hlen);
	}
	if (divert) {
		fr->state = FRAME_DIVERT;
		fr->left = fr->divert_len = hi.cl;
		fr->expect = hi.expect && hi.http11;
		*events |= FRAME_DIVERTED;
	} else if (hi.weird || hi.te || hi.cl_bad || hi.cl_count > 1 ||
	    (hi.cl_count == 1 && hi.cl > 0 && !hi.body_method))
		fr->state = FRAME_PASS;
	else if (hi.cl_count == 1 && hi.cl > 0) {
		fr->state = FRAME_BODY;
		fr->left = hi.cl;
	}
	return 0;
}

static size_t
min3(uint64_t a, size_t b, size_t c)
{
	size_t	 m = b < c ? b : c;

	return a < m ? (size_t)a : m;
}

/*
 * Move what can go from src: heads and bodies to dst (at most dst_room
 * body bytes), a diverted body to divert (at most divert_room bytes).
 * Returns FRAME_PROGRESS and FRAME_DIVERTED flags, or -1 if out of memory.
 */
int
http_frame(struct http_framer *fr, struct evbuffer *src,
    struct evbuffer *dst, size_t dst_room, struct evbuffer *divert,
    size_t divert_room)
{
	ssize_t	 hlen;
	size_t	 n, avail;
	int	 events = 0;

	while ((avail = evbuffer_get_length(src)) > 0) {
		switch (fr->state) {
		case FRAME_HEAD:
			if ((hlen = head_length(src)) == 0)
				return events;
			if (hlen == -1) {
				if (evbuffer_add(dst, REFUSED_HEAD,
				    strlen(REFUSED_HEAD)) == -1)
					return -1;
				evbuffer_drain(src, avail);
				fr->state = FRAME_DISCARD;
				return events | FRAME_PROGRESS;
			}
			if (frame_head(fr, src, dst, (size_t)hlen,
			    &events) == -1)
				return -1;
			events |= FRAME_PROGRESS;
			break;
		case FRAME_BODY:
		case FRAME_PASS:
			n = fr->state == FRAME_PASS ? min3(UINT64_MAX, avail,
			    dst_room) : min3(fr->left, avail, dst_room);
			if (n == 0)
				return events;
			if (evbuffer_remove_buffer(src, dst, n) != (int)n)
				return -1;
			dst_room -= n;
			events |= FRAME_PROGRESS;
			if (fr->state == FRAME_BODY && (fr->left -= n) == 0)
				fr->state = FRAME_HEAD;
			break;
		case FRAME_DIVERT:
			if ((n = min3(fr->left, avail, divert_room)) == 0)
				return events;
			if (evbuffer_remove_buffer(src, divert, n) != (int)n)
				return -1;
			divert_room -= n;
			events |= FRAME_PROGRESS;
			if ((fr->left -= n) == 0)
				fr->state = FRAME_HELD;
			break;
		case FRAME_HELD:
			return events;
		case FRAME_DISCARD:
			evbuffer_drain(src, avail);
			return events | FRAME_PROGRESS;
		}
	}
	return events;
}

/* The diverted body has been consumed: the next head may come. */
void
http_frame_release(struct http_framer *fr)
{
	if (fr->state == FRAME_HELD)
		fr->state = FRAME_HEAD;
	fr->expect = 0;
}
