/*
 * The client side of the REST API: one blocking HTTP/1.1 exchange per
 * call over a fresh TCP connection, with every response bounded (the head,
 * JSON bodies, NDJSON lines, downloads) and errors reported the way the
 * Python SDK reports them (API.md §1.2, §14).
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rest.h"

#define REST_BUF	(64 * 1024)		/* the head, and each piece */
#define REST_MAX_LINE	(16 * 1024 * 1024)	/* one NDJSON line */
#define REST_MAX_ERROR	(1024 * 1024)		/* an error body */
#define REST_MAX_PATH	8192
#define REST_MAX_CHUNKLINE 1024

enum framing {
	BODY_NONE,	/* 1xx, 204, 304 */
	BODY_LENGTH,	/* Content-Length */
	BODY_CHUNKED,
	BODY_CLOSE	/* until the server closes */
};

struct conn {
	int		 fd;
	int		 timeout;
	const char	*host;
	const char	*port;
	size_t		 off;		/* first unread byte of buf */
	size_t		 len;		/* bytes in buf */
	int		 send_errno;	/* why the request could not be sent */
	int		 status;
	char		 reason[64];
	enum framing	 framing;
	uint64_t	 left;		/* of the body or of this chunk */
	int64_t		 total;		/* Content-Length, or -1 */
	int		 chunk_crlf;	/* a chunk's CRLF is still to come */
	int		 done;		/* the body has been read */
	unsigned char	 buf[REST_BUF];
};

/* A request body: in memory, or len bytes read from fd. */
struct body {
	const char		*ctype;
	const unsigned char	*mem;
	int			 fd;
	uint64_t		 len;
	rest_progress_cb	 cb;
	void			*arg;
};

static void
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

static void
clearerr_rest(struct rest_error *err)
{
	memset(err, 0, sizeof(*err));
}

/* --- the URL ------------------------------------------------------------- */

static int
hostchars(const char *s, size_t n, int v6)
{
	size_t	 i;

	if (n == 0)
		return 0;
	for (i = 0; i < n; i++) {
		if (isalnum((unsigned char)s[i]) || s[i] == '-' ||
		    s[i] == '.' || s[i] == '_')
			continue;
		/* An IPv6 literal, possibly with a zone ("fe80::1%eth0"). */
		if (v6 && (s[i] == ':' || s[i] == '%'))
			continue;
		return 0;
	}
	return 1;
}

/* Printable ASCII without spaces: safe in a request line or a header. */
static int
wirechars(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s <= 0x20 || (unsigned char)*s >= 0x7f)
			return 0;
	return 1;
}

static int
parse_url(struct rest_client *rc, const char *url, char *err, size_t errlen)
{
	const char	*p, *auth, *end, *h, *colon = NULL, *errstr, *shown;
	size_t		 hlen, plen;

	/* A URL with a password in it is never repeated in a message. */
	shown = strchr(url, '@') != NULL ? "the URL" : url;

	if (strncasecmp(url, "https://", 8) == 0) {
		snprintf(err, errlen, "https is not supported; put a TLS "
		    "proxy in front or use http on localhost");
		return -1;
	}
	if (strncasecmp(url, "http://", 7) != 0) {
		snprintf(err, errlen, "%s: not an http:// URL", shown);
		return -1;
	}
	auth = url + 7;
	end = auth + strcspn(auth, "/?#");
	if (memchr(auth, '@', end - auth) != NULL) {
		snprintf(err, errlen, "a user name or password in the URL is "
		    "not supported; set AGENT_SANDBOX_API_KEY instead");
		return -1;
	}
	if (*auth == '[') {
		h = auth + 1;
		p = memchr(h, ']', end - h);
		if (p == NULL || !hostchars(h, p - h, 1) ||
		    memchr(h, ':', p - h) == NULL) {
			snprintf(err, errlen, "%s: bad IPv6 address", shown);
			return -1;
		}
		hlen = p - h;
		p++;
		if (p != end && *p != ':') {
			snprintf(err, errlen, "%s: bad host", shown);
			return -1;
		}
		if (p != end)
			colon = p;
	} else {
		h = auth;
		colon = memchr(h, ':', end - h);
		hlen = (colon != NULL ? colon : end) - h;
		if (!hostchars(h, hlen, 0)) {
			snprintf(err, errlen, "%s: bad host", shown);
			return -1;
		}
	}
	if ((rc->host = strndup(h, hlen)) == NULL)
		goto nomem;

	if (colon != NULL) {
		if ((rc->port = strndup(colon + 1, end - colon - 1)) == NULL)
			goto nomem;
		if (*rc->port == '\0' ||
		    strspn(rc->port, "0123456789") != strlen(rc->port)) {
			snprintf(err, errlen, "%s: bad port", shown);
			return -1;
		}
		(void)strtonum(rc->port, 1, 65535, &errstr);
		if (errstr != NULL) {
			snprintf(err, errlen, "%s: port is %s", shown, errstr);
			return -1;
		}
	} else if ((rc->port = strdup("80")) == NULL)
		goto nomem;

	if (*end == '?' || *end == '#' || strpbrk(end, "?#") != NULL) {
		snprintf(err, errlen, "%s: a query or fragment in the URL is "
		    "not supported", shown);
		return -1;
	}
	/* The prefix, without trailing slashes: paths bring their own. */
	plen = strlen(end);
	while (plen > 0 && end[plen - 1] == '/')
		plen--;
	if ((rc->prefix = strndup(end, plen)) == NULL)
		goto nomem;
	if (!wirechars(rc->prefix)) {
		snprintf(err, errlen, "%s: bad path in the URL", shown);
		return -1;
	}
	return 0;
nomem:
	snprintf(err, errlen, "%s", strerror(ENOMEM));
	return -1;
}

int
rest_client_init(struct rest_client *rc, const char *url, const char *key,
    char *err, size_t errlen)
{
	memset(rc, 0, sizeof(*rc));
	rc->timeout = REST_TIMEOUT_SECONDS;
	if (url == NULL)
		url = getenv("AGENT_SANDBOX_URL");
	if (url == NULL || *url == '\0')
		url = REST_DEFAULT_URL;
	if (key == NULL)
		key = getenv("AGENT_SANDBOX_API_KEY");

	if (parse_url(rc, url, err, errlen) == -1)
		goto fail;
	if (key != NULL && *key != '\0') {
		if (!wirechars(key)) {
			snprintf(err, errlen, "the API key has characters an "
			    "HTTP header cannot carry");
			goto fail;
		}
		if ((rc->key = strdup(key)) == NULL) {
			snprintf(err, errlen, "%s", strerror(ENOMEM));
			goto fail;
		}
	}
	return 0;
fail:
	rest_client_free(rc);
	return -1;
}

void
rest_client_free(struct rest_client *rc)
{
	if (rc->key != NULL)
		freezero(rc->key, strlen(rc->key) + 1);
	free(rc->host);
	free(rc->port);
	free(rc->prefix);
	if (rc->addrs != NULL)
		freeaddrinfo(rc->addrs);
	memset(rc, 0, sizeof(*rc));
}

static void
resolve_error(const struct rest_client *rc, int gai, int errnum,
    struct rest_error *err)
{
	seterr(err, 0, "connection_error", "cannot resolve %s: %s", rc->host,
	    gai == EAI_SYSTEM ? strerror(errnum) : gai_strerror(gai));
}

/* Addresses for host and port; 0 with *res, or the getaddrinfo error. */
static int
lookup(const struct rest_client *rc, struct addrinfo **res, int *errnum)
{
	struct addrinfo	 hints;
	int		 r;

	*res = NULL;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if ((r = getaddrinfo(rc->host, rc->port, &hints, res)) != 0) {
		*errnum = errno;
		*res = NULL;
	}
	return r;
}

int
rest_client_resolve(struct rest_client *rc, struct rest_error *err)
{
	struct addrinfo	*res;
	int		 r, errnum = 0;

	clearerr_rest(err);
	r = lookup(rc, &res, &errnum);
	if (rc->addrs != NULL)
		freeaddrinfo(rc->addrs);
	rc->addrs = res;
	rc->resolved = 1;
	rc->gai_error = r;
	rc->gai_errno = errnum;
	if (r != 0) {
		resolve_error(rc, r, errnum, err);
		return -1;
	}
	return 0;
}

/* --- the connection ------------------------------------------------------ */

static int
deadline_left(const struct timespec *deadline)
{
	struct timespec	 now;
	long long	 ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (long long)(deadline->tv_sec - now.tv_sec) * 1000 +
	    (deadline->tv_nsec - now.tv_nsec) / 1000000;
	if (ms < 0)
		return 0;
	return ms > INT_MAX ? INT_MAX : (int)ms;
}

/* One address, non-blocking so the connect can time out. */
static int
connect_one(const struct addrinfo *ai, const struct timespec *deadline)
{
	struct pollfd	 pfd;
	socklen_t	 sl;
	int		 fd, r, soerr, save;

	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC |
	    SOCK_NONBLOCK, ai->ai_protocol);
	if (fd == -1)
		return -1;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
		return fd;
	if (errno != EINPROGRESS && errno != EINTR)
		goto fail;
	pfd.fd = fd;
	pfd.events = POLLOUT;
	for (;;) {
		r = poll(&pfd, 1, deadline_left(deadline));
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1)
			goto fail;
		if (r == 0) {
			errno = ETIMEDOUT;
			goto fail;
		}
		break;
	}
	sl = sizeof(soerr);
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == -1)
		goto fail;
	if (soerr != 0) {
		errno = soerr;
		goto fail;
	}
	return fd;
fail:
	save = errno;
	close(fd);
	errno = save;
	return -1;
}

static int
conn_open(struct rest_client *rc, struct conn *c, struct rest_error *err)
{
	struct addrinfo	*res = NULL, *ai;
	struct timespec	 deadline;
	struct timeval	 tv;
	int		 r, errnum = 0, fd = -1, flags, one = 1, save = 0;

	c->fd = -1;
	c->timeout = rc->timeout > 0 ? rc->timeout : REST_TIMEOUT_SECONDS;
	c->host = rc->host;
	c->port = rc->port;
	/* Addresses resolved in advance, or a lookup for this call. */
	if (rc->resolved && rc->gai_error != 0) {
		resolve_error(rc, rc->gai_error, rc->gai_errno, err);
		return -1;
	}
	if (!rc->resolved && (r = lookup(rc, &res, &errnum)) != 0) {
		resolve_error(rc, r, errnum, err);
		return -1;
	}
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += c->timeout;
	for (ai = res != NULL ? res : rc->addrs; ai != NULL;
	    ai = ai->ai_next) {
		if ((fd = connect_one(ai, &deadline)) != -1)
			break;
		save = errno;
	}
	if (res != NULL)
		freeaddrinfo(res);
	if (fd == -1) {
		seterr(err, 0, "connection_error", "cannot connect to %s "
		    "port %s: %s", rc->host, rc->port, strerror(save));
		return -1;
	}
	/* Blocking from here on, with a bound on every wait. */
	if ((flags = fcntl(fd, F_GETFL)) == -1 ||
	    fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == -1)
		goto fail;
	tv.tv_sec = c->timeout;
	tv.tv_usec = 0;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == -1 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) == -1)
		goto fail;
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->fd = fd;
	return 0;
fail:
	seterr(err, 0, "connection_error", "socket: %s", strerror(errno));
	close(fd);
	return -1;
}

static void
conn_close(struct conn *c)
{
	if (c->fd != -1)
		close(c->fd);
	c->fd = -1;
}

static void
timed_out(struct conn *c, struct rest_error *err)
{
	seterr(err, 0, "connection_error", "%s port %s: no progress for %d "
	    "seconds", c->host, c->port, c->timeout);
}

/*
 * Sends all of data.  With early set, stops (returning 1) as soon as the
 * server has something to say: an error answered before the whole body
 * was read, which the caller then reads instead of writing on.
 */
static int
conn_send(struct conn *c, const void *data, size_t len, int early,
    struct rest_error *err)
{
	const unsigned char	*p = data;
	struct pollfd		 pfd;
	ssize_t			 n;
	int			 r;

	while (len > 0) {
		pfd.fd = c->fd;
		pfd.events = POLLOUT | (early ? POLLIN : 0);
		r = poll(&pfd, 1, c->timeout * 1000);
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1) {
			seterr(err, 0, "connection_error", "poll: %s",
			    strerror(errno));
			return -1;
		}
		if (r == 0) {
			c->send_errno = ETIMEDOUT;
			timed_out(c, err);
			return -1;
		}
		if (early && (pfd.revents & POLLIN))
			return 1;
		n = send(c->fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n == -1) {
			if (errno == EINTR || errno == EAGAIN ||
			    errno == EWOULDBLOCK)
				continue;
			c->send_errno = errno;
			seterr(err, 0, "connection_error", "sending to %s "
			    "port %s: %s", c->host, c->port, strerror(errno));
			return -1;
		}
		p += n;
		len -= n;
	}
	return 0;
}

/* Reads more into buf.  Returns the bytes read, 0 at EOF, -1. */
static ssize_t
conn_fill(struct conn *c, struct rest_error *err)
{
	ssize_t	 n;

	if (c->off == c->len)
		c->off = c->len = 0;
	else if (c->len == sizeof(c->buf) && c->off > 0) {
		memmove(c->buf, c->buf + c->off, c->len - c->off);
		c->len -= c->off;
		c->off = 0;
	}
	if (c->len == sizeof(c->buf)) {
		seterr(err, 0, "connection_error", "receive buffer full");
		return -1;
	}
	for (;;) {
		n = recv(c->fd, c->buf + c->len, sizeof(c->buf) - c->len, 0);
		if (n >= 0)
			break;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			timed_out(c, err);
		else
			seterr(err, 0, "connection_error", "receiving from %s "
			    "port %s: %s", c->host, c->port, strerror(errno));
		return -1;
	}
	c->len += n;
	return n;
}

static void
truncated(struct conn *c, struct rest_error *err)
{
	seterr(err, 0, "connection_error", "%s port %s closed the connection "
	    "before the end of the response", c->host, c->port);
}

/* A line of the chunked framing, without its CRLF. */
static int
conn_line(struct conn *c, char *out, size_t outlen, struct rest_error *err)
{
	size_t	 n = 0;
	ssize_t	 r;
	int	 ch;

	for (;;) {
		if (c->off == c->len) {
			if ((r = conn_fill(c, err)) == -1)
				return -1;
			if (r == 0) {
				truncated(c, err);
				return -1;
			}
		}
		ch = c->buf[c->off++];
		if (ch == '\n')
			break;
		if (n + 1 >= outlen) {
			seterr(err, 0, "connection_error", "bad chunked "
			    "framing in the response");
			return -1;
		}
		out[n++] = ch;
	}
	if (n > 0 && out[n - 1] == '\r')
		n--;
	out[n] = '\0';
	return 0;
}

/* --- the response head --------------------------------------------------- */

static char *
trim(char *s)
{
	size_t	 n;

	while (*s == ' ' || *s == '\t')
		s++;
	n = strlen(s);
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = '\0';
	return s;
}

static int
parse_status(struct conn *c, char *line)
{
	char	*p;
	size_t	 i;

	if (strncmp(line, "HTTP/1.", 7) != 0 || !isdigit((unsigned char)line[7])
	    || line[8] != ' ')
		return -1;
	p = line + 9;
	if (!isdigit((unsigned char)p[0]) || !isdigit((unsigned char)p[1]) ||
	    !isdigit((unsigned char)p[2]) || (p[3] != '\0' && p[3] != ' '))
		return -1;
	c->status = (p[0] - '0') * 100 + (p[1] - '0') * 10 + (p[2] - '0');
	if (c->status < 100)
		return -1;
	p = p[3] == ' ' ? trim(p + 4) : p + 3;
	for (i = 0; p[i] != '\0' && i + 1 < sizeof(c->reason); i++)
		c->reason[i] = isprint((unsigned char)p[i]) ? p[i] : '?';
	c->reason[i] = '\0';
	return 0;
}

static int
parse_headers(struct conn *c, char *head, struct rest_error *err)
{
	char		*line, *next, *name, *value, *nl;
	const char	*errstr;
	long long	 clen = -1, v;
	int		 chunked = 0, te = 0;
	size_t		 n;

	line = head;
	if ((nl = strchr(line, '\n')) != NULL)
		*nl = '\0';
	n = strlen(line);
	if (n > 0 && line[n - 1] == '\r')
		line[n - 1] = '\0';
	if (parse_status(c, line) == -1) {
		seterr(err, 0, "connection_error", "%s port %s did not answer "
		    "in HTTP", c->host, c->port);
		return -1;
	}
	for (next = nl != NULL ? nl + 1 : NULL; next != NULL && *next != '\0';
	    ) {
		line = next;
		if ((nl = strchr(line, '\n')) != NULL) {
			*nl = '\0';
			next = nl + 1;
		} else
			next = NULL;
		n = strlen(line);
		if (n > 0 && line[n - 1] == '\r')
			line[--n] = '\0';
		if (n == 0)
			break;
		if ((value = strchr(line, ':')) == NULL)
			goto bad;
		*value++ = '\0';
		name = line;
		value = trim(value);
		if (strcasecmp(name, "Content-Length") == 0) {
			if (*value == '\0' ||
			    strspn(value, "0123456789") != strlen(value))
				goto bad;
			v = strtonum(value, 0, LLONG_MAX, &errstr);
			if (errstr != NULL || (clen != -1 && clen != v))
				goto bad;
			clen = v;
		} else if (strcasecmp(name, "Transfer-Encoding") == 0) {
			te = 1;
			n = strlen(value);
			/* Chunked when it is the last coding applied. */
			chunked = n >= 7 &&
			    strcasecmp(value + n - 7, "chunked") == 0 &&
			    (n == 7 || value[n - 8] == ' ' ||
			    value[n - 8] == ',');
		}
	}
	c->total = -1;
	if ((c->status >= 100 && c->status < 200) || c->status == 204 ||
	    c->status == 304)
		c->framing = BODY_NONE;
	else if (chunked)
		c->framing = BODY_CHUNKED;
	else if (te)
		c->framing = BODY_CLOSE;
	else if (clen != -1) {
		c->framing = BODY_LENGTH;
		c->left = clen;
		c->total = clen;
	} else
		c->framing = BODY_CLOSE;
	c->done = c->framing == BODY_NONE;
	return 0;
bad:
	seterr(err, 0, "connection_error", "bad header in the response of "
	    "%s port %s", c->host, c->port);
	return -1;
}

/* Finds the blank line ending the head: the offset after it, or 0. */
static size_t
head_end(const unsigned char *p, size_t len)
{
	size_t	 i;

	for (i = 0; i < len; i++) {
		if (p[i] != '\n')
			continue;
		if (i + 1 < len && p[i + 1] == '\n')
			return i + 2;
		if (i + 2 < len && p[i + 1] == '\r' && p[i + 2] == '\n')
			return i + 3;
	}
	return 0;
}

static int
read_head(struct conn *c, struct rest_error *err)
{
	char	*head;
	size_t	 end;
	ssize_t	 r;

	for (;;) {
		end = head_end(c->buf + c->off, c->len - c->off);
		if (end == 0) {
			if (c->len - c->off >= sizeof(c->buf)) {
				seterr(err, 0, "connection_error", "the "
				    "response head is larger than %d bytes",
				    REST_BUF);
				return -1;
			}
			if ((r = conn_fill(c, err)) == -1)
				return -1;
			if (r == 0) {
				seterr(err, 0, "connection_error", "%s port "
				    "%s closed the connection without an "
				    "answer", c->host, c->port);
				return -1;
			}
			continue;
		}
		/* The head is parsed in place; the body follows it. */
		head = (char *)c->buf + c->off;
		head[end - 1] = '\0';
		if (memchr(head, '\0', end - 1) != NULL) {
			seterr(err, 0, "connection_error", "bad header in the "
			    "response of %s port %s", c->host, c->port);
			return -1;
		}
		c->off += end;
		if (parse_headers(c, head, err) == -1)
			return -1;
		/* Interim answers (100 Continue) precede the real one. */
		if (c->status < 200 && c->status != 101)
			continue;
		return 0;
	}
}

/* --- the response body --------------------------------------------------- */

static int
next_chunk(struct conn *c, struct rest_error *err)
{
	char		 line[REST_MAX_CHUNKLINE];
	uint64_t	 size = 0;
	size_t		 i;
	int		 d;

	if (c->chunk_crlf) {
		if (conn_line(c, line, sizeof(line), err) == -1)
			return -1;
		if (line[0] != '\0')
			goto bad;
		c->chunk_crlf = 0;
	}
	if (conn_line(c, line, sizeof(line), err) == -1)
		return -1;
	for (i = 0; isxdigit((unsigned char)line[i]); i++) {
		if (i >= 15)
			goto bad;
		d = isdigit((unsigned char)line[i]) ? line[i] - '0' :
		    tolower((unsigned char)line[i]) - 'a' + 10;
		size = size * 16 + d;
	}
	if (i == 0 || (line[i] != '\0' && line[i] != ';' && line[i] != ' ' &&
	    line[i] != '\t'))
		goto bad;
	if (size == 0) {
		/* The last chunk: skip the trailers up to the blank line. */
		do {
			if (conn_line(c, line, sizeof(line), err) == -1)
				return -1;
		} while (line[0] != '\0');
		c->done = 1;
		return 0;
	}
	c->left = size;
	c->chunk_crlf = 1;
	return 0;
bad:
	seterr(err, 0, "connection_error", "bad chunked framing in the "
	    "response");
	return -1;
}

/*
 * Up to max bytes of the body, in place: *p points into the receive
 * buffer until the next call.  Returns the count, 0 at the end, -1.
 */
static ssize_t
body_read(struct conn *c, const unsigned char **p, size_t max,
    struct rest_error *err)
{
	size_t	 n;
	ssize_t	 r;

	if (c->done)
		return 0;
	if (c->framing == BODY_LENGTH && c->left == 0) {
		c->done = 1;
		return 0;
	}
	if (c->framing == BODY_CHUNKED && c->left == 0) {
		if (next_chunk(c, err) == -1)
			return -1;
		if (c->done)
			return 0;
	}
	if (c->off == c->len) {
		if ((r = conn_fill(c, err)) == -1)
			return -1;
		if (r == 0) {
			if (c->framing == BODY_CLOSE) {
				c->done = 1;
				return 0;
			}
			truncated(c, err);
			return -1;
		}
	}
	n = c->len - c->off;
	if (n > max)
		n = max;
	if (c->framing != BODY_CLOSE && n > c->left)
		n = c->left;
	if (c->framing != BODY_CLOSE)
		c->left -= n;
	*p = c->buf + c->off;
	c->off += n;
	return n;
}

static void
too_large(struct rest_error *err, uint64_t max)
{
	seterr(err, 413, "payload_too_large", "the response is larger than "
	    "%llu bytes", (unsigned long long)max);
}

/* The whole body, NUL-terminated, at most max bytes. */
static int
body_to_mem(struct conn *c, uint64_t max, unsigned char **data,
    size_t *len, struct rest_error *err)
{
	const unsigned char	*p;
	unsigned char		*buf = NULL, *nbuf;
	size_t			 have = 0, cap = 0, want;
	ssize_t			 n;

	*data = NULL;
	*len = 0;
	if (max > SIZE_MAX - 1)
		max = SIZE_MAX - 1;
	if (c->total > 0 && (uint64_t)c->total > max) {
		too_large(err, max);
		return -1;
	}
	for (;;) {
		if ((n = body_read(c, &p, REST_BUF, err)) == -1)
			goto fail;
		if (n == 0)
			break;
		if ((uint64_t)have + n > max) {
			too_large(err, max);
			goto fail;
		}
		if (have + n + 1 > cap) {
			want = cap == 0 ? REST_BUF : cap;
			while (want < have + n + 1)
				want *= 2;
			if (want > max + 1)
				want = max + 1;
			if ((nbuf = realloc(buf, want)) == NULL) {
				seterr(err, 0, "connection_error", "%s",
				    strerror(errno));
				goto fail;
			}
			buf = nbuf;
			cap = want;
		}
		memcpy(buf + have, p, n);
		have += n;
	}
	if (buf == NULL && (buf = malloc(1)) == NULL) {
		seterr(err, 0, "connection_error", "%s", strerror(errno));
		return -1;
	}
	buf[have] = '\0';
	*data = buf;
	*len = have;
	return 0;
fail:
	free(buf);
	return -1;
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
	if (n >= dstlen) {
		n = dstlen - 1;
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
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
static int
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

/* --- the request --------------------------------------------------------- */

static int
check_request(const char *method, const char *path, struct rest_error *err)
{
	if (method == NULL || *method == '\0' || strlen(method) > 16 ||
	    !wirechars(method) || path == NULL || path[0] != '/' ||
	    strlen(path) > REST_MAX_PATH || !wirechars(path)) {
		seterr(err, 0, "invalid_request", "bad request method or "
		    "path");
		return -1;
	}
	return 0;
}

static int
send_head(struct rest_client *rc, struct conn *c, const char *method,
    const char *path, const struct body *b, struct rest_error *err)
{
	char	*head = NULL, clen[64] = "", ctype[128] = "", host[300];
	int	 n, r;

	if (strchr(rc->host, ':') != NULL)
		snprintf(host, sizeof(host), "[%s]", rc->host);
	else
		snprintf(host, sizeof(host), "%s", rc->host);
	if (strcmp(rc->port, "80") != 0) {
		strlcat(host, ":", sizeof(host));
		strlcat(host, rc->port, sizeof(host));
	}
	if (b != NULL) {
		snprintf(clen, sizeof(clen), "Content-Length: %llu\r\n",
		    (unsigned long long)b->len);
		if (b->ctype != NULL)
			snprintf(ctype, sizeof(ctype), "Content-Type: %s\r\n",
			    b->ctype);
	} else if (strcmp(method, "GET") != 0 &&
	    strcmp(method, "DELETE") != 0 && strcmp(method, "HEAD") != 0)
		strlcpy(clen, "Content-Length: 0\r\n", sizeof(clen));

	n = asprintf(&head, "%s %s%s HTTP/1.1\r\n"
	    "Host: %s\r\n"
	    "User-Agent: agent-sandbox/%s\r\n"
	    "Accept: */*\r\n"
	    "%s%s%s"
	    "%s%s"
	    "Connection: close\r\n"
	    "\r\n",
	    method, rc->prefix, path, host, PACKAGE_VERSION,
	    rc->key != NULL ? "Authorization: Bearer " : "",
	    rc->key != NULL ? rc->key : "",
	    rc->key != NULL ? "\r\n" : "",
	    ctype, clen);
	if (n == -1) {
		seterr(err, 0, "connection_error", "%s", strerror(ENOMEM));
		return -1;
	}
	r = conn_send(c, head, n, 0, err);
	freezero(head, n);
	return r;
}

/*
 * Whether a read or write on fd that failed with errno is worth trying
 * again: after a signal, or once a non-blocking fd is ready for events.
 */
static int
io_again(int fd, short events)
{
	struct pollfd	 pfd;

	if (errno == EINTR)
		return 1;
	if (errno != EAGAIN && errno != EWOULDBLOCK)
		return 0;
	pfd.fd = fd;
	pfd.events = events;
	(void)poll(&pfd, 1, -1);
	return 1;
}

static int
read_fully(int fd, unsigned char *buf, size_t len)
{
	size_t		 have = 0;
	ssize_t		 n;

	while (have < len) {
		n = read(fd, buf + have, len - have);
		if (n == -1 && io_again(fd, POLLIN))
			continue;
		if (n == -1)
			return -1;
		if (n == 0)
			break;
		have += n;
	}
	return have;
}

/* Returns 0 when all was sent, 1 when the server answered early, -1. */
static int
send_body(struct conn *c, const struct body *b, struct rest_error *err)
{
	unsigned char	*piece = NULL;
	const void	*p;
	uint64_t	 done = 0;
	size_t		 n;
	int		 r = 0, got;

	if (b->fd != -1 && b->len > 0 && (piece = malloc(REST_BUF)) == NULL) {
		seterr(err, 0, "connection_error", "%s", strerror(errno));
		return -1;
	}
	while (done < b->len) {
		n = b->len - done > REST_BUF ? REST_BUF : b->len - done;
		if (b->fd == -1)
			p = b->mem + done;
		else {
			if ((got = read_fully(b->fd, piece, n)) == -1) {
				seterr(err, 0, "io_error", "reading the "
				    "upload: %s", strerror(errno));
				r = -1;
				break;
			}
			if ((size_t)got < n) {
				seterr(err, 0, "io_error", "the upload ended "
				    "after %llu of %llu bytes",
				    (unsigned long long)(done + got),
				    (unsigned long long)b->len);
				r = -1;
				break;
			}
			p = piece;
		}
		if ((r = conn_send(c, p, n, 1, err)) != 0)
			break;
		done += n;
		if (b->cb != NULL)
			b->cb(done, (int64_t)b->len, b->arg);
	}
	free(piece);
	return r;
}

/*
 * Connects, sends the request and reads the response head.  An answer
 * that arrives while the body is still being sent (a 401 or 413 before
 * the server read it all) is read as the response.
 */
static int
request(struct rest_client *rc, struct conn *c, const char *method,
    const char *path, const struct body *b, struct rest_error *err)
{
	struct rest_error	 sent;
	int			 r;

	c->fd = -1;
	if (check_request(method, path, err) == -1)
		return -1;
	if (conn_open(rc, c, err) == -1)
		return -1;
	r = send_head(rc, c, method, path, b, err);
	if (r == 0 && b != NULL)
		r = send_body(c, b, err);
	if (r == -1) {
		if (c->send_errno != EPIPE && c->send_errno != ECONNRESET)
			return -1;
		/* The server may have said why before it closed. */
		sent = *err;
		if (read_head(c, err) == 0)
			return 0;
		*err = sent;
		return -1;
	}
	return read_head(c, err);
}

/* request, then for an answer that is not a 2xx its error: -1 either way. */
static int
request_2xx(struct rest_client *rc, struct conn *c, const char *method,
    const char *path, const struct body *b, struct rest_error *err)
{
	if (request(rc, c, method, path, b, err) == -1)
		return -1;
	if (!is_2xx(c))
		return response_error(c, err);
	return 0;
}

static struct conn *
conn_new(struct rest_error *err)
{
	struct conn	*c;

	clearerr_rest(err);
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		seterr(err, 0, "connection_error", "%s", strerror(errno));
		return NULL;
	}
	c->fd = -1;
	return c;
}

static void
conn_free(struct conn *c)
{
	conn_close(c);
	free(c);
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
	r = request(rc, c, method, path, body != NULL ? &b : NULL, err);
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

static int
put_body(struct rest_client *rc, const char *path, struct body *b,
    json_object **out, struct rest_error *err)
{
	struct conn	*c;
	int		 r;

	*out = NULL;
	if ((c = conn_new(err)) == NULL)
		return -1;
	r = request(rc, c, "PUT", path, b, err);
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
	return put_body(rc, path, &b, out, err);
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
	return put_body(rc, path, &b, out, err);
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

int
rest_ndjson(struct rest_client *rc, const char *path, json_object *body,
    int (*line)(json_object *, void *), void *arg, struct rest_error *err)
{
	const unsigned char	*p, *nl;
	struct conn		*c;
	struct body		 b;
	char			*buf = NULL, *nbuf;
	size_t			 have = 0, cap = 0, take, want;
	ssize_t			 n;
	int			 r = -1, lr;

	if ((c = conn_new(err)) == NULL)
		return -1;
	if (body != NULL && json_body(body, &b, err) == -1)
		goto out;
	if (request_2xx(rc, c, "POST", path, body != NULL ? &b : NULL,
	    err) == -1)
		goto out;
	for (;;) {
		if ((n = body_read(c, &p, REST_BUF, err)) == -1)
			goto out;
		if (n == 0)
			break;
		while (n > 0) {
			nl = memchr(p, '\n', n);
			take = nl != NULL ? (size_t)(nl - p) + 1 : (size_t)n;
			if (have + take > REST_MAX_LINE) {
				seterr(err, c->status, "http_error", "a line "
				    "of the stream is longer than %d bytes",
				    REST_MAX_LINE);
				goto out;
			}
			if (have + take > cap) {
				want = cap == 0 ? 4096 : cap;
				while (want < have + take)
					want *= 2;
				if ((nbuf = realloc(buf, want)) == NULL) {
					seterr(err, 0, "connection_error",
					    "%s", strerror(errno));
					goto out;
				}
				buf = nbuf;
				cap = want;
			}
			memcpy(buf + have, p, take);
			have += take;
			p += take;
			n -= take;
			if (nl == NULL)
				break;
			lr = ndjson_line(c, buf, have, line, arg, err);
			have = 0;
			if (lr == -1)
				goto out;
			if (lr == 1) {
				r = 0;
				goto out;
			}
		}
	}
	/* A last line without its newline still counts. */
	if (have > 0 && ndjson_line(c, buf, have, line, arg, err) == -1)
		goto out;
	r = 0;
out:
	free(buf);
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
