/*
 * The client side of the REST API: one blocking HTTP/1.1 exchange per
 * call over a fresh TCP connection, with every response bounded (the head,
 * JSON bodies, NDJSON lines, downloads) and errors reported the way the
 * Python SDK reports them (API.md §1.2, §14).
 */
#include <sys/types.h>

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rest.h"
#include "rest_internal.h"
#include "utf8.h"

#define REST_MAX_LINE	(16 * 1024 * 1024)	/* one NDJSON line */
#define REST_MAX_ERROR	(1024 * 1024)		/* an error body */

void
seterr(struct rest_error *err, int status, const char *code,
    const char *fmt, ...)
{
	va_list	 ap;

	err->status = status;
	strlcpy(err->code, code, sizeof(err->code));
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
}

void
clearerr_rest(struct rest_error *err)
{
	memset(err, 0, sizeof(*err));
}

/* --- errors -------------------------------------------------------------- */

static json_object *
parse_json(const unsigned char *data, size_t len)
{
	json_tokener	*tok;
	json_object	*o;
	size_t		 end;

	if (len == 0 || len > INT_MAX)
		return NULL;
	if ((tok = json_tokener_new()) == NULL)
		return NULL;
	o = json_tokener_parse_ex(tok, (const char *)data, (int)len);
	if (o == NULL || json_tokener_get_error(tok) != json_tokener_success) {
		json_object_put(o);
		json_tokener_free(tok);
		return NULL;
	}
	/* Only white space may follow the value. */
	for (end = json_tokener_get_parse_end(tok); end < len; end++) {
		if (!isspace(data[end])) {
			json_object_put(o);
			o = NULL;
			break;
		}
	}
	json_tokener_free(tok);
	return o;
}

/* Copies s into dst, cutting at a UTF-8 character boundary. */
static void
copy_text(char *dst, size_t dstlen, const char *s, size_t n)
{
	if (n >= dstlen)
		n = utf8_cut(s, dstlen - 1);
	memcpy(dst, s, n);
	dst[n] = '\0';
}

/*
 * Control characters made spaces: what the server says may reach a
 * terminal, where an escape sequence must not act.
 */
static void
no_controls(char *p)
{
	for (; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p == 0x7f)
			*p = ' ';
}

/* Raw text of a body that is not the envelope: one line, no controls. */
static void
raw_message(struct rest_error *err, const struct conn *c,
    const unsigned char *data, size_t len)
{

	while (len > 0 && isspace(*data)) {
		data++;
		len--;
	}
	while (len > 0 && isspace(data[len - 1]))
		len--;
	if (len == 0) {
		strlcpy(err->message, c->reason, sizeof(err->message));
		return;
	}
	copy_text(err->message, sizeof(err->message), (const char *)data,
	    len);
	no_controls(err->message);
}

static void
envelope(struct rest_error *err, const struct conn *c,
    const unsigned char *data, size_t len)
{
	json_object	*o, *e, *code, *msg, *detail;
	const char	*s;

	err->status = c->status;
	strlcpy(err->code, "http_error", sizeof(err->code));
	o = parse_json(data, len);
	if (o == NULL || !json_object_is_type(o, json_type_object)) {
		raw_message(err, c, data, len);
		json_object_put(o);
		return;
	}
	if (json_object_object_get_ex(o, "error", &e) &&
	    json_object_is_type(e, json_type_object)) {
		if (json_object_object_get_ex(e, "code", &code) &&
		    (s = json_object_get_string(code)) != NULL && *s != '\0')
			strlcpy(err->code, s, sizeof(err->code));
		if (json_object_object_get_ex(e, "message", &msg) &&
		    (s = json_object_get_string(msg)) != NULL)
			copy_text(err->message, sizeof(err->message), s,
			    strlen(s));
	} else if (json_object_object_get_ex(o, "detail", &detail)) {
		strlcpy(err->code, "validation_error", sizeof(err->code));
		s = json_object_to_json_string_ext(detail,
		    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
		copy_text(err->message, sizeof(err->message), s, strlen(s));
	} else
		raw_message(err, c, data, len);
	json_object_put(o);
	no_controls(err->code);
	no_controls(err->message);
}

/* Reads a non-2xx answer's body into err; always -1. */
int
response_error(struct conn *c, struct rest_error *err)
{
	unsigned char	*data = NULL;
	size_t		 len = 0;
	int		 status = c->status;

	/* A body cut short still says something: use what arrived. */
	if (body_to_mem(c, REST_MAX_ERROR, &data, &len, err) == -1) {
		data = NULL;
		len = 0;
	}
	clearerr_rest(err);
	err->status = status;
	envelope(err, c, data, len);
	free(data);
	return -1;
}

static int
is_2xx(const struct conn *c)
{
	return c->status >= 200 && c->status < 300;
}

/* A 2xx JSON answer into *out (NULL for a 204). */
static int
response_json(struct conn *c, json_object **out, struct rest_error *err)
{
	unsigned char	*data;
	size_t		 len;

	if (!is_2xx(c))
		return response_error(c, err);
	if (c->status == 204)
		return c->status;
	if (body_to_mem(c, REST_MAX_JSON, &data, &len, err) == -1)
		return -1;
	*out = parse_json(data, len);
	if (*out == NULL) {
		seterr(err, c->status, "http_error", "the response is not "
		    "JSON");
		free(data);
		return -1;
	}
	free(data);
	return c->status;
}

/* request, then for an answer that is not a 2xx its error: -1 either way. */
int
request_2xx(struct rest_client *rc, struct conn *c, const char *method,
    const char *path, const struct body *b, struct rest_error *err)
{
	if (rest_request(rc, c, method, path, b, err) == -1)
		return -1;
	if (!is_2xx(c))
		return response_error(c, err);
	return 0;
}

/* --- the calls ----------------------------------------------------------- */

static int
json_body(json_object *o, struct body *b, struct rest_error *err)
{
	const char	*s;
	size_t		 len;

	memset(b, 0, sizeof(*b));
	b->fd = -1;
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE);
	if (s == NULL) {
		seterr(err, 0, "invalid_request", "cannot encode the body");
		return -1;
	}
	len = strlen(s);
	b->ctype = "application/json";
	b->mem = (const unsigned char *)s;
	b->len = len;
	return 0;
}

int
rest_json(struct rest_client *rc, const char *method, const char *path,
    json_object *body, json_object **out, struct rest_error *err)
{
	struct conn	*c;
	struct body	 b;
	int		 r;

	*out = NULL;
	if ((c = conn_new(err)) == NULL)
		return -1;
	if (body != NULL && json_body(body, &b, err) == -1) {
		conn_free(c);
		return -1;
	}
	r = rest_request(rc, c, method, path, body != NULL ? &b : NULL, err);
	if (r == 0)
		r = response_json(c, out, err);
	conn_free(c);
	return r;
}

static int
write_fully(int fd, const unsigned char *p, size_t len)
{
	ssize_t		 n;

	while (len > 0) {
		n = write(fd, p, len);
		if (n == -1 && io_again(fd, POLLOUT))
			continue;
		if (n == -1)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

int64_t
rest_get_to_fd(struct rest_client *rc, const char *path, int fd,
    uint64_t max, rest_progress_cb cb, void *arg, struct rest_error *err)
{
	const unsigned char	*p;
	struct conn		*c;
	uint64_t		 done = 0;
	int64_t			 r = -1;
	ssize_t			 n;

	if ((c = conn_new(err)) == NULL)
		return -1;
	if (request_2xx(rc, c, "GET", path, NULL, err) == -1)
		goto out;
	if (max != 0 && c->total > 0 && (uint64_t)c->total > max) {
		too_large(err, max);
		goto out;
	}
	for (;;) {
		if ((n = body_read(c, &p, REST_BUF, err)) == -1)
			goto out;
		if (n == 0)
			break;
		if (max != 0 && done + n > max) {
			too_large(err, max);
			goto out;
		}
		if (write_fully(fd, p, n) == -1) {
			seterr(err, 0, "io_error", "writing the download: %s",
			    strerror(errno));
			goto out;
		}
		done += n;
		if (cb != NULL)
			cb(done, c->total, arg);
	}
	r = done;
out:
	conn_free(c);
	return r;
}

/* A request with the body b, answered with JSON or a 204. */
int
body_call(struct rest_client *rc, const char *method, const char *path,
    const struct body *b, json_object **out, struct rest_error *err)
{
	struct conn	*c;
	int		 r;

	*out = NULL;
	if ((c = conn_new(err)) == NULL)
		return -1;
	r = rest_request(rc, c, method, path, b, err);
	if (r == 0)
		r = response_json(c, out, err);
	conn_free(c);
	return r;
}

int
rest_put_from_fd(struct rest_client *rc, const char *path, int fd,
    uint64_t len, rest_progress_cb cb, void *arg, json_object **out,
    struct rest_error *err)
{
	struct body	 b;

	memset(&b, 0, sizeof(b));
	b.ctype = "application/octet-stream";
	b.fd = fd;
	b.len = len;
	b.cb = cb;
	b.arg = arg;
	return body_call(rc, "PUT", path, &b, out, err);
}

int
rest_put_bytes(struct rest_client *rc, const char *path, const void *data,
    size_t len, json_object **out, struct rest_error *err)
{
	struct body	 b;

	memset(&b, 0, sizeof(b));
	b.ctype = "application/octet-stream";
	b.fd = -1;
	b.mem = data;
	b.len = len;
	return body_call(rc, "PUT", path, &b, out, err);
}

int
rest_get_bytes(struct rest_client *rc, const char *path, uint64_t max,
    unsigned char **data, size_t *len, struct rest_error *err)
{
	struct conn	*c;
	int		 r = -1;

	*data = NULL;
	*len = 0;
	if ((c = conn_new(err)) == NULL)
		return -1;
	if (request_2xx(rc, c, "GET", path, NULL, err) == -1)
		goto out;
	if (body_to_mem(c, max != 0 ? max : REST_MAX_JSON, data, len,
	    err) == -1)
		goto out;
	r = c->status;
out:
	conn_free(c);
	return r;
}

static int
blank(const char *s, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (!isspace((unsigned char)s[i]))
			return 0;
	return 1;
}

/* One line of the stream: 0 to go on, 1 when line() stopped, -1. */
static int
ndjson_line(struct conn *c, char *s, size_t n,
    int (*line)(json_object *, void *), void *arg, struct rest_error *err)
{
	json_object	*o;
	int		 r;

	if (blank(s, n))
		return 0;
	if ((o = parse_json((unsigned char *)s, n)) == NULL) {
		seterr(err, c->status, "http_error", "a line of the stream "
		    "is not JSON");
		return -1;
	}
	r = line(o, arg);
	json_object_put(o);
	return r == 0 ? 0 : 1;
}

/* Appends take bytes to the line being read, bounded by REST_MAX_LINE. */
static int
ndjson_append(struct conn *c, struct ndjson *nd, const unsigned char *p,
    size_t take, struct rest_error *err)
{
	char	*nbuf;
	size_t	 want;

	if (nd->have + take > REST_MAX_LINE) {
		seterr(err, c->status, "http_error", "a line of the stream is "
		    "longer than %d bytes", REST_MAX_LINE);
		return -1;
	}
	if (nd->have + take > nd->cap) {
		want = nd->cap == 0 ? 4096 : nd->cap;
		while (want < nd->have + take)
			want *= 2;
		if ((nbuf = realloc(nd->buf, want)) == NULL) {
			seterr(err, 0, "connection_error", "%s",
			    strerror(errno));
			return -1;
		}
		nd->buf = nbuf;
		nd->cap = want;
	}
	memcpy(nd->buf + nd->have, p, take);
	nd->have += take;
	return 0;
}

int
ndjson_step(struct conn *c, struct ndjson *nd,
    int (*line)(json_object *, void *), void *arg, struct rest_error *err)
{
	const unsigned char	*p, *nl;
	size_t			 take;
	ssize_t			 n;
	int			 lr;

	if ((n = body_read(c, &p, REST_BUF, err)) == -1)
		return -1;
	if (n == 0) {
		/* A last line without its newline still counts. */
		lr = nd->have > 0 ? ndjson_line(c, nd->buf, nd->have, line,
		    arg, err) : 0;
		nd->have = 0;
		return lr == -1 ? -1 : 1;
	}
	while (n > 0) {
		nl = memchr(p, '\n', n);
		take = nl != NULL ? (size_t)(nl - p) + 1 : (size_t)n;
		if (ndjson_append(c, nd, p, take, err) == -1)
			return -1;
		p += take;
		n -= take;
		if (nl == NULL)
			break;
		lr = ndjson_line(c, nd->buf, nd->have, line, arg, err);
		nd->have = 0;
		if (lr != 0)
			return lr;
	}
	return 0;
}

int
rest_ndjson(struct rest_client *rc, const char *path, json_object *body,
    int (*line)(json_object *, void *), void *arg, struct rest_error *err)
{
	struct ndjson	 nd;
	struct conn	*c;
	struct body	 b;
	int		 r = -1;

	memset(&nd, 0, sizeof(nd));
	if ((c = conn_new(err)) == NULL)
		return -1;
	if (body != NULL && json_body(body, &b, err) == -1)
		goto out;
	if (request_2xx(rc, c, "POST", path, body != NULL ? &b : NULL,
	    err) == -1)
		goto out;
	while ((r = ndjson_step(c, &nd, line, arg, err)) == 0)
		;
	if (r == 1)
		r = 0;
out:
	free(nd.buf);
	conn_free(c);
	return r;
}

/* --- small helpers ------------------------------------------------------- */

char *
rest_escape(const char *s)
{
	static const char	 hex[] = "0123456789ABCDEF";
	const unsigned char	*p;
	char			*out, *q;
	size_t			 n;

	if (s == NULL)
		return NULL;
	n = strlen(s);
	if (n > (SIZE_MAX - 1) / 3)
		return NULL;
	if ((out = malloc(n * 3 + 1)) == NULL)
		return NULL;
	for (p = (const unsigned char *)s, q = out; *p != '\0'; p++) {
		if (isalnum(*p) && *p < 0x80)
			*q++ = *p;
		else if (*p == '-' || *p == '.' || *p == '_' || *p == '~')
			*q++ = *p;
		else {
			*q++ = '%';
			*q++ = hex[*p >> 4];
			*q++ = hex[*p & 0xf];
		}
	}
	*q = '\0';
	return out;
}

void
rest_error_string(const struct rest_error *e, char *buf, size_t len)
{
	snprintf(buf, len, "%d %s: %s", e->status, e->code, e->message);
}
