/*
 * The Docker Engine API client's response parser: status line, headers,
 * Content-Length, chunked or read-until-close bodies, never trusting a
 * length it has not bounded.  Pure (no I/O), so that docker_http.c can
 * feed it what it reads and the unit tests can feed it bytes.
 */
#include <sys/types.h>

#include <ctype.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "docker_http.h"

/* First allocation for a buffered body of unknown length. */
#define BODY_MIN_ALLOC		1024

enum parser_state {
	PS_STATUS,		/* status line */
	PS_HEADER,		/* header lines */
	PS_BODY_LENGTH,		/* Content-Length bytes */
	PS_BODY_EOF,		/* everything until the peer closes */
	PS_CHUNK_SIZE,		/* chunk-size [; ext] */
	PS_CHUNK_DATA,
	PS_CHUNK_END,		/* the CRLF after chunk data */
	PS_TRAILER,		/* trailer lines after the last chunk */
	PS_DONE,
	PS_ERROR
};

struct docker_http_parser {
	enum parser_state	 state;
	enum docker_http_error	 error;
	int			 flags;
	size_t			 max_body;
	docker_http_body_fn	 body_fn;
	void			*arg;
	int			 stream;	/* body goes to body_fn */
	struct docker_response	 resp;
	size_t			 body_cap;
	size_t			 head_bytes;	/* head (or trailer) so far */
	int			 head_lines;
	int			 have_length;
	long long		 content_length;
	int			 chunked;
	unsigned long long	 remaining;	/* of the body or chunk */
	size_t			 line_len;
	size_t			 line_raw;	/* with its line end */
	size_t			 line_size;	/* without */
	char			 line[DOCKER_HTTP_MAX_HEAD + 1];
};

/* RFC 9110 tchar: the characters of a method or header name. */
int
docker_http_is_tchar(unsigned char c)
{
	if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	    (c >= 'A' && c <= 'Z'))
		return 1;
	return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

struct docker_http_parser *
docker_http_parser_new(int flags, size_t max_body, docker_http_body_fn fn,
    void *arg)
{
	struct docker_http_parser	*p;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	p->state = PS_STATUS;
	p->flags = flags;
	/* Keeps max_body + 1 and the doubling below from overflowing. */
	p->max_body = max_body > SIZE_MAX / 4 ? SIZE_MAX / 4 : max_body;
	p->body_fn = fn;
	p->arg = arg;
	return p;
}

static void
parser_clear_headers(struct docker_http_parser *p)
{
	free(p->resp.content_type);
	free(p->resp.path_stat);
	p->resp.content_type = NULL;
	p->resp.path_stat = NULL;
	p->have_length = 0;
	p->content_length = 0;
	p->chunked = 0;
}

void
docker_http_parser_free(struct docker_http_parser *p)
{
	if (p == NULL)
		return;
	parser_clear_headers(p);
	free(p->resp.body);
	free(p);
}

enum docker_http_error
docker_http_parser_error(const struct docker_http_parser *p)
{
	return p->state == PS_ERROR ? p->error : DOCKER_HTTP_OK;
}

const struct docker_response *
docker_http_parser_response(const struct docker_http_parser *p)
{
	return &p->resp;
}

static int
parser_fail(struct docker_http_parser *p, enum docker_http_error error)
{
	p->state = PS_ERROR;
	p->error = error;
	return -1;
}

/* A buffered body is never NULL once complete, so callers need no check. */
static int
parser_done(struct docker_http_parser *p)
{
	if (!p->stream && p->resp.body == NULL) {
		if ((p->resp.body = calloc(1, 1)) == NULL)
			return parser_fail(p, DOCKER_HTTP_NOMEM);
		p->body_cap = 1;
	}
	p->state = PS_DONE;
	return 0;
}

static int
body_reserve(struct docker_http_parser *p, size_t need)
{
	unsigned char	*body;
	size_t		 cap;

	if (need <= p->body_cap)
		return 0;
	cap = p->body_cap < BODY_MIN_ALLOC ? BODY_MIN_ALLOC : p->body_cap;
	while (cap < need)
		cap *= 2;
	if (cap > p->max_body + 1)
		cap = p->max_body + 1;
	if ((body = realloc(p->resp.body, cap)) == NULL)
		return parser_fail(p, DOCKER_HTTP_NOMEM);
	/*
	 * Terminated at once: a body reserved for its Content-Length is
	 * handed out as it is when the connection ends before the first
	 * byte of it.
	 */
	body[p->resp.body_len] = '\0';
	p->resp.body = body;
	p->body_cap = cap;
	return 0;
}

/* Returns 0 to go on, 1 when the body function asked to pause, -1. */
static int
body_deliver(struct docker_http_parser *p, const unsigned char *data,
    size_t len)
{
	size_t	 room, n;
	int	 r;

	if (len == 0)
		return 0;
	if (p->stream) {
		if ((r = p->body_fn(p->arg, data, len)) < 0)
			return parser_fail(p, DOCKER_HTTP_CANCELLED);
		return r > 0;
	}
	/* Keep what fits, so the result does not depend on read sizes. */
	room = p->max_body - p->resp.body_len;
	n = len < room ? len : room;
	if (body_reserve(p, p->resp.body_len + n + 1) == -1)
		return -1;
	if (n > 0)
		memcpy(p->resp.body + p->resp.body_len, data, n);
	p->resp.body_len += n;
	p->resp.body[p->resp.body_len] = '\0';
	if (n < len)
		return parser_fail(p, DOCKER_HTTP_TOO_LARGE);
	return 0;
}

/*
 * Collect one line, at most max bytes with its line end.  Returns 1 with a
 * complete line in p->line (CR LF or LF stripped), 0 when the input ran
 * out first, -1 when the line is too long.
 */
static int
line_collect(struct docker_http_parser *p, const unsigned char *data,
    size_t len, size_t *used, size_t max)
{
	const unsigned char	*lf;
	size_t			 n;

	lf = memchr(data, '\n', len);
	n = lf != NULL ? (size_t)(lf - data) + 1 : len;
	if (p->line_len > max || n > max - p->line_len)
		return -1;
	memcpy(p->line + p->line_len, data, n);
	p->line_len += n;
	*used = n;
	if (lf == NULL)
		return 0;
	p->line_raw = p->line_len;
	p->line_len--;
	if (p->line_len > 0 && p->line[p->line_len - 1] == '\r')
		p->line_len--;
	p->line[p->line_len] = '\0';
	p->line_size = p->line_len;
	p->line_len = 0;
	return 1;
}

/* A stray CR, NUL or other control byte inside a line is not HTTP. */
static int
line_clean(const char *line, size_t len)
{
	size_t		 i;
	unsigned char	 c;

	for (i = 0; i < len; i++) {
		c = (unsigned char)line[i];
		if ((c < ' ' && c != '\t') || c == 0x7f)
			return 0;
	}
	return 1;
}

static int
parse_status_line(struct docker_http_parser *p, const char *line)
{
	int	 status;

	if (strncmp(line, "HTTP/1.", 7) != 0 ||
	    (line[7] != '0' && line[7] != '1') || line[8] != ' ' ||
	    !isdigit((unsigned char)line[9]) ||
	    !isdigit((unsigned char)line[10]) ||
	    !isdigit((unsigned char)line[11]) ||
	    (line[12] != '\0' && line[12] != ' '))
		return parser_fail(p, DOCKER_HTTP_PROTOCOL);
	status = (line[9] - '0') * 100 + (line[10] - '0') * 10 +
	    (line[11] - '0');
	if (status < 100 || status > 599)
		return parser_fail(p, DOCKER_HTTP_PROTOCOL);
	p->resp.status = status;
	p->state = PS_HEADER;
	return 0;
}

static int
parse_content_length(struct docker_http_parser *p, const char *value)
{
	const char	*errstr;
	long long	 n;

	if (value[0] == '\0' || strspn(value, "0123456789") != strlen(value))
		return parser_fail(p, DOCKER_HTTP_PROTOCOL);
	n = strtonum(value, 0, LLONG_MAX, &errstr);
	if (errstr != NULL)
		return parser_fail(p, DOCKER_HTTP_PROTOCOL);
	if (p->have_length && n != p->content_length)
		return parser_fail(p, DOCKER_HTTP_PROTOCOL);
	p->have_length = 1;
	p->content_length = n;
	return 0;
}

static int
header_copy(struct docker_http_parser *p, char **dst, const char *value)
{
	if (*dst != NULL)
		return parser_fail(p, DOCKER_HTTP_PROTOCOL);
	if ((*dst = strdup(value)) == NULL)
		return parser_fail(p, DOCKER_HTTP_NOMEM);
	return 0;
}

/*
 * Split "Name: value" in place.  Returns the value with optional
 * whitespace trimmed, or NULL when the line is not a header field.
 */
static char *
header_split(char *line)
{
	char	*colon, *value, *end;
	size_t	 i;

	if ((colon = strchr(line, ':')) == NULL || colon == line)
		return NULL;
	/* No space before the colon, and no obsolete line folding. */
	for (i = 0; line + i < colon; i++)
		if (!docker_http_is_tchar((unsigned char)line[i]))
			return NULL;
	*colon = '\0';
	value = colon + 1;
	value += strspn(value, " \t");
	end = value + strlen(value);
	while (end > value && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	*end = '\0';
	return value;
}

static int
parse_header_line(struct docker_http_parser *p, char *line)
{
	char	*value;

	if (++p->head_lines > DOCKER_HTTP_MAX_HEADER_LINES)
		return parser_fail(p, DOCKER_HTTP_PROTOCOL);
	if ((value = header_split(line)) == NULL)
		return parser_fail(p, DOCKER_HTTP_PROTOCOL);
	if (strcasecmp(line, "Content-Length") == 0)
		return parse_content_length(p, value);
	if (strcasecmp(line, "Transfer-Encoding") == 0) {
		/* Only plain chunked; chunked twice is not chunked. */
		if (p->chunked || strcasecmp(value, "chunked") != 0)
			return parser_fail(p, DOCKER_HTTP_PROTOCOL);
		p->chunked = 1;
		return 0;
	}
	if (strcasecmp(line, "Content-Type") == 0)
		return header_copy(p, &p->resp.content_type, value);
	if (strcasecmp(line, "X-Docker-Container-Path-Stat") == 0)
		return header_copy(p, &p->resp.path_stat, value);
	return 0;
}

int
docker_http_parser_identity(const struct docker_http_parser *p,
    long long *length)
{
	if (!p->stream || p->chunked || p->resp.status == 101 ||
	    p->state == PS_STATUS || p->state == PS_ERROR)
		return 0;
	*length = p->have_length ? p->content_length : -1;
	return 1;
}

/* The blank line after the headers: decide how the body is framed. */
static int
parse_headers_end(struct docker_http_parser *p)
{
	int	 status = p->resp.status;

	/* An interim answer (100 Continue): the real one follows. */
	if (status < 200 && status != 101) {
		parser_clear_headers(p);
		p->state = PS_STATUS;
		return 0;
	}
	p->stream = p->body_fn != NULL && status < 300;
	/* Not after a 101: a hijacked stream has no framing to announce. */
	if (p->stream && status != 101 && (p->flags &
	    DOCKER_HTTP_PARSE_ANNOUNCE) &&
	    p->body_fn(p->arg, (const unsigned char *)"", 0) != 0)
		return parser_fail(p, DOCKER_HTTP_CANCELLED);
	/* A hijacked stream (exec start): raw bytes until Docker closes. */
	if (status == 101) {
		if (!(p->flags & DOCKER_HTTP_PARSE_UPGRADE))
			return parser_fail(p, DOCKER_HTTP_PROTOCOL);
		p->state = PS_BODY_EOF;
		return 0;
	}
	/* Both framings at once is how requests get smuggled: refuse. */
	if (p->chunked && p->have_length)
		return parser_fail(p, DOCKER_HTTP_PROTOCOL);
	if ((p->flags & DOCKER_HTTP_PARSE_HEAD) || status == 204 ||
	    status == 304)
		return parser_done(p);
	if (p->chunked) {
		p->state = PS_CHUNK_SIZE;
		return 0;
	}
	if (!p->have_length) {
		p->state = PS_BODY_EOF;
		return 0;
	}
	if (!p->stream && (unsigned long long)p->content_length > p->max_body)
		return parser_fail(p, DOCKER_HTTP_TOO_LARGE);
	if (p->content_length == 0)
		return parser_done(p);
	if (!p->stream &&
	    body_reserve(p, (size_t)p->content_length + 1) == -1)
		return -1;
	p->remaining = p->content_length;
	p->state = PS_BODY_LENGTH;
	return 0;
}

static int
parse_chunk_size(struct docker_http_parser *p, const char *line)
{
	unsigned long long	 size = 0;
	const char		*s;
	int			 digit;

	for (s = line; isxdigit((unsigned char)*s); s++) {
		if (size > (unsigned long long)(LLONG_MAX >> 4))
			return parser_fail(p, DOCKER_HTTP_PROTOCOL);
		digit = isdigit((unsigned char)*s) ? *s - '0' :
		    tolower((unsigned char)*s) - 'a' + 10;
		size = size << 4 | (unsigned int)digit;
	}
	if (s == line)
		return parser_fail(p, DOCKER_HTTP_PROTOCOL);
	s += strspn(s, " \t");
	/* Extensions are allowed and ignored. */
	if (*s != '\0' && *s != ';')
		return parser_fail(p, DOCKER_HTTP_PROTOCOL);
	if (size == 0) {
		/* Trailers get a budget of their own. */
		p->head_bytes = 0;
		p->head_lines = 0;
		p->state = PS_TRAILER;
		return 0;
	}
	p->remaining = size;
	p->state = PS_CHUNK_DATA;
	return 0;
}

static int
parse_trailer_line(struct docker_http_parser *p, char *line)
{
	if (line[0] == '\0')
		return parser_done(p);
	if (++p->head_lines > DOCKER_HTTP_MAX_HEADER_LINES ||
	    header_split(line) == NULL)
		return parser_fail(p, DOCKER_HTTP_PROTOCOL);
	return 0;
}

/* One complete line in the state it belongs to. */
static int
parse_line(struct docker_http_parser *p)
{
	if (!line_clean(p->line, p->line_size))
		return parser_fail(p, DOCKER_HTTP_PROTOCOL);
	switch (p->state) {
	case PS_STATUS:
		p->head_bytes += p->line_raw;
		return parse_status_line(p, p->line);
	case PS_HEADER:
		p->head_bytes += p->line_raw;
		if (p->line[0] == '\0')
			return parse_headers_end(p);
		return parse_header_line(p, p->line);
	case PS_TRAILER:
		p->head_bytes += p->line_raw;
		return parse_trailer_line(p, p->line);
	case PS_CHUNK_SIZE:
		return parse_chunk_size(p, p->line);
	case PS_CHUNK_END:
		if (p->line[0] != '\0')
			return parser_fail(p, DOCKER_HTTP_PROTOCOL);
		p->state = PS_CHUNK_SIZE;
		return 0;
	default:
		return parser_fail(p, DOCKER_HTTP_PROTOCOL);
	}
}

static size_t
line_limit(const struct docker_http_parser *p)
{
	switch (p->state) {
	case PS_CHUNK_SIZE:
		return DOCKER_HTTP_MAX_CHUNK_LINE;
	case PS_CHUNK_END:
		return 2;
	default:
		return DOCKER_HTTP_MAX_HEAD - p->head_bytes;
	}
}

/* Body bytes in any framing; returns 0, 1 (paused) or -1. */
static int
parse_body(struct docker_http_parser *p, const unsigned char *data,
    size_t len, size_t *used)
{
	size_t	 n = len;
	int	 r;

	if (p->state != PS_BODY_EOF && p->remaining < n)
		n = (size_t)p->remaining;
	*used = n;
	if ((r = body_deliver(p, data, n)) == -1)
		return -1;
	if (p->state == PS_BODY_EOF)
		return r;
	p->remaining -= n;
	if (p->remaining == 0) {
		if (p->state == PS_CHUNK_DATA)
			p->state = PS_CHUNK_END;
		else if (parser_done(p) == -1)
			return -1;
	}
	return r;
}

enum docker_http_parse_result
docker_http_parse(struct docker_http_parser *p, const void *data, size_t len,
    size_t *used)
{
	const unsigned char	*d = data;
	size_t			 off = 0, n;
	int			 r;

	while (off < len && p->state != PS_DONE && p->state != PS_ERROR) {
		switch (p->state) {
		case PS_BODY_LENGTH:
		case PS_BODY_EOF:
		case PS_CHUNK_DATA:
			r = parse_body(p, d + off, len - off, &n);
			off += n;
			if (r == 1 && p->state != PS_DONE) {
				*used = off;
				return DOCKER_HTTP_PARSE_PAUSED;
			}
			break;
		default:
			r = line_collect(p, d + off, len - off, &n,
			    line_limit(p));
			if (r == -1) {
				parser_fail(p, DOCKER_HTTP_PROTOCOL);
				break;
			}
			off += n;
			if (r == 1)
				parse_line(p);
			break;
		}
	}
	*used = off;
	if (p->state == PS_DONE)
		return DOCKER_HTTP_PARSE_DONE;
	if (p->state == PS_ERROR)
		return DOCKER_HTTP_PARSE_ERROR;
	return DOCKER_HTTP_PARSE_MORE;
}

enum docker_http_parse_result
docker_http_parse_eof(struct docker_http_parser *p)
{
	switch (p->state) {
	case PS_DONE:
		return DOCKER_HTTP_PARSE_DONE;
	case PS_ERROR:
		return DOCKER_HTTP_PARSE_ERROR;
	case PS_BODY_EOF:
		if (parser_done(p) == -1)
			return DOCKER_HTTP_PARSE_ERROR;
		return DOCKER_HTTP_PARSE_DONE;
	default:
		/* Closed before the response was complete. */
		parser_fail(p, DOCKER_HTTP_IO);
		return DOCKER_HTTP_PARSE_ERROR;
	}
}
