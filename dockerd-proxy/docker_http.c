/*
 * HTTP/1.1 client for the Docker Engine API over its unix socket: request
 * heads, a response parser that never trusts a length it has not bounded,
 * and the libevent plumbing that ties one request to one connection.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "docker_http.h"

/* A queued upload beyond this is refused: the producer ignored HIWAT. */
#define UPLOAD_MAX_QUEUED	(16 * DOCKER_HTTP_UPLOAD_HIWAT)
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

struct docker_request {
	struct event_base		*base;
	struct bufferevent		*bev;
	struct event			*ev_defer;
	struct docker_http_parser	*parser;
	docker_body_cb			 on_body;
	docker_drain_cb			 on_drain;
	docker_done_cb			 on_done;
	void				*arg;
	enum docker_http_error		 connect_error;	/* reported deferred */
	int				 sys_errno;
	int				 upload;
	int				 upload_chunked;
	int				 upload_ended;
	unsigned long long		 upload_left;
	int				 write_failed;
	int				 paused;
	int				 eof;
	int				 busy;		/* inside a callback */
	int				 cancelled;
	int				 finished;
};

static const char *const docker_http_errors[] = {
	[DOCKER_HTTP_OK] = "success",
	[DOCKER_HTTP_CONNECT] = "cannot connect to the Docker socket",
	[DOCKER_HTTP_IO] = "connection to Docker failed",
	[DOCKER_HTTP_PROTOCOL] = "malformed HTTP response from Docker",
	[DOCKER_HTTP_TOO_LARGE] = "Docker response too large",
	[DOCKER_HTTP_CANCELLED] = "request cancelled",
	[DOCKER_HTTP_TIMEOUT] = "Docker did not answer in time",
	[DOCKER_HTTP_NOMEM] = "out of memory",
};

const char *
docker_http_strerror(enum docker_http_error error)
{
	if ((unsigned int)error >= sizeof(docker_http_errors) /
	    sizeof(docker_http_errors[0]))
		return "unknown error";
	return docker_http_errors[error];
}

/* --- request heads -------------------------------------------------------- */

/* RFC 9110 tchar: the characters of a method or header name. */
static int
is_tchar(unsigned char c)
{
	if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	    (c >= 'A' && c <= 'Z'))
		return 1;
	return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static int
valid_method(const char *method)
{
	size_t	 i;

	if (method[0] == '\0' || strlen(method) > 32)
		return 0;
	for (i = 0; method[i] != '\0'; i++)
		if (!is_tchar((unsigned char)method[i]))
			return 0;
	return 1;
}

/* Visible ASCII only: no space, no control character, no 8-bit byte. */
static int
valid_path(const char *path)
{
	size_t	 i;

	if (path[0] != '/' || strlen(path) > DOCKER_HTTP_MAX_PATH)
		return 0;
	for (i = 0; path[i] != '\0'; i++)
		if (path[i] <= ' ' || path[i] >= 0x7f)
			return 0;
	return 1;
}

/* A header value: printable ASCII and spaces, nothing that ends a line. */
static int
valid_header_value(const char *value)
{
	size_t	 i;

	if (strlen(value) > 256)
		return 0;
	for (i = 0; value[i] != '\0'; i++)
		if (value[i] < ' ' || value[i] >= 0x7f)
			return 0;
	return 1;
}

int
docker_http_request_head(struct evbuffer *out, const char *method,
    const char *path, const char *content_type, long long content_length,
    int flags)
{
	const char	*connection;
	int		 r;

	if (method == NULL || path == NULL || !valid_method(method) ||
	    !valid_path(path) || (content_type != NULL &&
	    !valid_header_value(content_type)) ||
	    content_length < DOCKER_HTTP_CHUNKED ||
	    (flags & ~DOCKER_HTTP_UPGRADE) != 0) {
		errno = EINVAL;
		return -1;
	}
	if (flags & DOCKER_HTTP_UPGRADE)
		connection = "Connection: Upgrade\r\nUpgrade: tcp\r\n";
	else
		connection = "Connection: close\r\n";
	r = evbuffer_add_printf(out, "%s %s HTTP/1.1\r\nHost: docker\r\n"
	    "User-Agent: agent-sandbox\r\n%s", method, path, connection);
	if (r != -1 && content_type != NULL) {
		if (content_length == DOCKER_HTTP_CHUNKED)
			r = evbuffer_add_printf(out, "Content-Type: %s\r\n"
			    "Transfer-Encoding: chunked\r\n", content_type);
		else
			r = evbuffer_add_printf(out, "Content-Type: %s\r\n"
			    "Content-Length: %lld\r\n", content_type,
			    content_length);
	}
	if (r != -1)
		r = evbuffer_add(out, "\r\n", 2);
	if (r == -1) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

/* --- response parser ------------------------------------------------------ */

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
		if (!is_tchar((unsigned char)line[i]))
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

/* --- requests ---------------------------------------------------------- */

static void
request_free(struct docker_request *req)
{
	if (req->bev != NULL)
		bufferevent_free(req->bev);
	if (req->ev_defer != NULL)
		event_free(req->ev_defer);
	docker_http_parser_free(req->parser);
	free(req);
}

/* Calls the done callback once, then frees the request. */
static void
request_finish(struct docker_request *req, enum docker_http_error error)
{
	req->finished = 1;
	req->busy++;
	req->on_done(req, error, docker_http_parser_response(req->parser),
	    req->arg);
	req->busy--;
	request_free(req);
}

static int
request_body_fn(void *arg, const unsigned char *data, size_t len)
{
	struct docker_request	*req = arg;
	int			 r;

	r = req->on_body(req, data, len, req->arg);
	/* Cancelled inside the callback: stop; request_process frees. */
	if (req->cancelled)
		return 1;
	if (r != 0)
		return -1;
	return req->paused;
}

/* Feed what has been read to the parser, unless paused. */
static void
request_process(struct docker_request *req)
{
	struct evbuffer			*in = bufferevent_get_input(req->bev);
	enum docker_http_parse_result	 r;
	unsigned char			*data;
	size_t				 len, used;

	while (!req->paused) {
		if ((len = evbuffer_get_contiguous_space(in)) == 0)
			break;
		if ((data = evbuffer_pullup(in, len)) == NULL) {
			request_finish(req, DOCKER_HTTP_NOMEM);
			return;
		}
		req->busy++;
		r = docker_http_parse(req->parser, data, len, &used);
		req->busy--;
		if (req->cancelled) {
			request_free(req);
			return;
		}
		evbuffer_drain(in, used);
		if (r == DOCKER_HTTP_PARSE_DONE) {
			request_finish(req, DOCKER_HTTP_OK);
			return;
		}
		if (r == DOCKER_HTTP_PARSE_ERROR) {
			request_finish(req,
			    docker_http_parser_error(req->parser));
			return;
		}
	}
	if (req->paused || !req->eof || evbuffer_get_length(in) > 0)
		return;
	if (docker_http_parse_eof(req->parser) == DOCKER_HTTP_PARSE_DONE)
		request_finish(req, DOCKER_HTTP_OK);
	else
		request_finish(req, docker_http_parser_error(req->parser));
}

static void
request_readcb(struct bufferevent *bev, void *arg)
{
	request_process(arg);
}

static void
request_writecb(struct bufferevent *bev, void *arg)
{
	struct docker_request	*req = arg;

	if (!req->upload || req->upload_ended || req->on_drain == NULL)
		return;
	req->busy++;
	req->on_drain(req, req->arg);
	req->busy--;
	if (req->cancelled)
		request_free(req);
}

static void
request_eventcb(struct bufferevent *bev, short what, void *arg)
{
	struct docker_request	*req = arg;
	int			 saved_errno = errno;

	if (what & BEV_EVENT_TIMEOUT) {
		request_finish(req, DOCKER_HTTP_TIMEOUT);
		return;
	}
	if (what & BEV_EVENT_WRITING) {
		/*
		 * Docker may answer and close before reading all we send
		 * (a 404 to an upload): keep reading for that answer.
		 */
		if (req->sys_errno == 0)
			req->sys_errno = (what & BEV_EVENT_ERROR) ?
			    saved_errno : EPIPE;
		req->write_failed = 1;
		evbuffer_drain(bufferevent_get_output(bev),
		    evbuffer_get_length(bufferevent_get_output(bev)));
		return;
	}
	if (what & BEV_EVENT_EOF) {
		req->eof = 1;
		request_process(req);
		return;
	}
	if (what & BEV_EVENT_ERROR) {
		req->sys_errno = saved_errno;
		request_finish(req, DOCKER_HTTP_IO);
	}
}

/* Runs from the loop: a connect error, or input kept while paused. */
static void
request_defer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct docker_request	*req = arg;

	if (req->connect_error != DOCKER_HTTP_OK) {
		request_finish(req, req->connect_error);
		return;
	}
	if (req->bev != NULL)
		request_process(req);
}

static int
request_check(const char *socket_path, const struct docker_request_spec *s)
{
	if (socket_path == NULL || socket_path[0] == '\0' || s == NULL ||
	    s->method == NULL || s->path == NULL || s->on_done == NULL ||
	    (s->flags & ~(DOCKER_HTTP_UPGRADE | DOCKER_HTTP_UPLOAD)) != 0)
		return -1;
	if (s->flags & DOCKER_HTTP_UPLOAD)
		return s->content_type == NULL || s->body != NULL ||
		    s->body_len != 0 || s->upload_len < -1 ? -1 : 0;
	if (s->body_len > 0 && s->body == NULL)
		return -1;
	if (s->content_type == NULL && s->body_len > 0)
		return -1;
	if (s->body_len > LLONG_MAX)
		return -1;
	return 0;
}

/* Connect now: a unix socket connects at once or not at all. */
static int
request_connect(struct docker_request *req, const struct sockaddr_un *sun)
{
	int	 fd;

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1)
		return -1;
	if (connect(fd, (const struct sockaddr *)sun, sizeof(*sun)) == -1) {
		/* EAGAIN here means Docker's listen backlog is full. */
		req->sys_errno = errno;
		req->connect_error = DOCKER_HTTP_CONNECT;
		close(fd);
		return 0;
	}
	if ((req->bev = bufferevent_socket_new(req->base, fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		close(fd);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

static void
request_setup(struct docker_request *req)
{
	struct timeval	 wtv = { DOCKER_HTTP_WRITE_TIMEOUT, 0 };

	bufferevent_setcb(req->bev, request_readcb, request_writecb,
	    request_eventcb, req);
	if (req->upload)
		bufferevent_setwatermark(req->bev, EV_WRITE,
		    DOCKER_HTTP_UPLOAD_LOWAT, 0);
	bufferevent_set_timeouts(req->bev, NULL, &wtv);
}

struct docker_request *
docker_request_new(struct event_base *base, const char *socket_path,
    const struct docker_request_spec *s)
{
	struct docker_request	*req = NULL;
	struct evbuffer		*head = NULL;
	struct sockaddr_un	 sun;
	long long		 clen;
	int			 pflags = 0, saved;

	if (base == NULL || request_check(socket_path, s) == -1) {
		errno = EINVAL;
		return NULL;
	}
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlcpy(sun.sun_path, socket_path, sizeof(sun.sun_path)) >=
	    sizeof(sun.sun_path)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	if (s->flags & DOCKER_HTTP_UPLOAD)
		clen = s->upload_len < 0 ? DOCKER_HTTP_CHUNKED : s->upload_len;
	else
		clen = (long long)s->body_len;

	/* Everything that can be checked is checked before the socket. */
	if ((head = evbuffer_new()) == NULL)
		goto fail;
	if (docker_http_request_head(head, s->method, s->path,
	    s->content_type, clen, s->flags & DOCKER_HTTP_UPGRADE) == -1)
		goto fail;
	if (s->body_len > 0 && evbuffer_add(head, s->body, s->body_len) == -1)
		goto nomem;

	if (strcmp(s->method, "HEAD") == 0)
		pflags |= DOCKER_HTTP_PARSE_HEAD;
	if (s->flags & DOCKER_HTTP_UPGRADE)
		pflags |= DOCKER_HTTP_PARSE_UPGRADE;
	if ((req = calloc(1, sizeof(*req))) == NULL)
		goto nomem;
	req->base = base;
	req->on_body = s->on_body;
	req->on_drain = s->on_drain;
	req->on_done = s->on_done;
	req->arg = s->arg;
	if (s->flags & DOCKER_HTTP_UPLOAD) {
		req->upload = 1;
		req->upload_chunked = clen == DOCKER_HTTP_CHUNKED;
		req->upload_left = req->upload_chunked ? 0 : clen;
	}
	if ((req->parser = docker_http_parser_new(pflags, s->max_body,
	    s->on_body != NULL ? request_body_fn : NULL, req)) == NULL)
		goto nomem;
	if ((req->ev_defer = event_new(base, -1, 0, request_defer_cb,
	    req)) == NULL)
		goto nomem;
	if (request_connect(req, &sun) == -1)
		goto fail;
	if (req->bev == NULL) {
		/* The done callback never runs inside the caller's call. */
		event_active(req->ev_defer, EV_TIMEOUT, 1);
		evbuffer_free(head);
		return req;
	}
	request_setup(req);
	if (evbuffer_add_buffer(bufferevent_get_output(req->bev), head) == -1)
		goto nomem;
	if (bufferevent_enable(req->bev, EV_READ | EV_WRITE) == -1)
		goto fail;
	evbuffer_free(head);
	return req;

nomem:
	errno = ENOMEM;
fail:
	saved = errno;
	if (head != NULL)
		evbuffer_free(head);
	if (req != NULL)
		request_free(req);
	errno = saved;
	return NULL;
}

struct docker_request *
docker_request_start(struct event_base *base, const char *socket_path,
    const char *method, const char *path, const char *content_type,
    const void *body, size_t body_len, size_t max_body, docker_body_cb on_body,
    docker_done_cb on_done, void *arg)
{
	struct docker_request_spec	 s;

	memset(&s, 0, sizeof(s));
	s.method = method;
	s.path = path;
	s.content_type = content_type;
	s.body = body;
	s.body_len = body_len;
	s.max_body = max_body;
	s.on_body = on_body;
	s.on_done = on_done;
	s.arg = arg;
	return docker_request_new(base, socket_path, &s);
}

void
docker_request_cancel(struct docker_request *req)
{
	if (req == NULL || req->finished || req->cancelled)
		return;
	if (req->busy > 0) {
		/* Inside one of our callbacks: the caller frees on return. */
		req->cancelled = 1;
		if (req->bev != NULL)
			bufferevent_disable(req->bev, EV_READ | EV_WRITE);
		return;
	}
	request_free(req);
}

void
docker_request_pause(struct docker_request *req)
{
	req->paused = 1;
	if (req->bev != NULL)
		bufferevent_disable(req->bev, EV_READ);
}

void
docker_request_resume(struct docker_request *req)
{
	if (!req->paused)
		return;
	req->paused = 0;
	if (req->bev == NULL || req->finished || req->cancelled)
		return;
	if (!req->eof)
		bufferevent_enable(req->bev, EV_READ);
	/* What was read before the pause is handled from the loop. */
	event_active(req->ev_defer, EV_TIMEOUT, 1);
}

int
docker_request_write(struct docker_request *req, const void *data,
    size_t len)
{
	struct evbuffer	*out;
	int		 r;

	if (!req->upload || req->upload_ended || req->finished ||
	    req->cancelled) {
		errno = EINVAL;
		return -1;
	}
	if (req->bev == NULL || req->write_failed) {
		errno = EPIPE;
		return -1;
	}
	if (len == 0)
		return 0;
	if (!req->upload_chunked && len > req->upload_left) {
		errno = EMSGSIZE;
		return -1;
	}
	out = bufferevent_get_output(req->bev);
	if (len > UPLOAD_MAX_QUEUED ||
	    evbuffer_get_length(out) > UPLOAD_MAX_QUEUED - len) {
		errno = ENOBUFS;
		return -1;
	}
	if (req->upload_chunked) {
		r = evbuffer_add_printf(out, "%zx\r\n", len);
		if (r != -1)
			r = evbuffer_add(out, data, len);
		if (r != -1)
			r = evbuffer_add(out, "\r\n", 2);
	} else {
		r = evbuffer_add(out, data, len);
		req->upload_left -= len;
	}
	if (r == -1) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

int
docker_request_write_end(struct docker_request *req)
{
	if (!req->upload || req->upload_ended || req->finished ||
	    req->cancelled) {
		errno = EINVAL;
		return -1;
	}
	if (req->bev == NULL || req->write_failed) {
		errno = EPIPE;
		return -1;
	}
	if (!req->upload_chunked && req->upload_left != 0) {
		errno = EMSGSIZE;
		return -1;
	}
	if (req->upload_chunked &&
	    evbuffer_add(bufferevent_get_output(req->bev), "0\r\n\r\n", 5) ==
	    -1) {
		errno = ENOMEM;
		return -1;
	}
	req->upload_ended = 1;
	return 0;
}

size_t
docker_request_pending(const struct docker_request *req)
{
	if (req->bev == NULL)
		return 0;
	return evbuffer_get_length(bufferevent_get_output(req->bev));
}

void
docker_request_set_timeout(struct docker_request *req,
    const struct timeval *tv)
{
	struct timeval	 wtv = { DOCKER_HTTP_WRITE_TIMEOUT, 0 };

	if (req->bev != NULL)
		bufferevent_set_timeouts(req->bev, tv, &wtv);
}

const struct docker_response *
docker_request_response(const struct docker_request *req)
{
	return docker_http_parser_response(req->parser);
}

int
docker_request_errno(const struct docker_request *req)
{
	return req->sys_errno;
}
