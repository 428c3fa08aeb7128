/*
 * The REST client's HTTP/1.1: connecting with a deadline, writing the
 * request, and reading the response head and its body framed by
 * Content-Length, chunks or the server closing, every piece bounded.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rest.h"
#include "rest_internal.h"

#define REST_MAX_PATH	8192
#define REST_MAX_CHUNKLINE 1024

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

int
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
	if (!rc->resolved && (r = rest_lookup(rc, &res, &errnum)) != 0) {
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
		if (c->on_header != NULL)
			c->on_header(name, value, c->header_arg);
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
ssize_t
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

void
too_large(struct rest_error *err, uint64_t max)
{
	seterr(err, 413, "payload_too_large", "the response is larger than "
	    "%llu bytes", (unsigned long long)max);
}

/* The whole body, NUL-terminated, at most max bytes. */
int
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
	    "Connection: %s\r\n"
	    "%s"
	    "\r\n",
	    method, rc->prefix, path, host, PACKAGE_VERSION,
	    rc->key != NULL ? "Authorization: Bearer " : "",
	    rc->key != NULL ? rc->key : "",
	    rc->key != NULL ? "\r\n" : "",
	    ctype, clen, c->upgrade != NULL ? "Upgrade" : "close",
	    c->upgrade != NULL ? c->upgrade : "");
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
int
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
 * Sends the request on c's open connection and reads the response head.
 * An answer that arrives while the body is still being sent (a 401 or
 * 413 before the server read it all) is read as the response.
 */
int
rest_exchange(struct rest_client *rc, struct conn *c, const char *method,
    const char *path, const struct body *b, struct rest_error *err)
{
	struct rest_error	 sent;
	int			 r;

	if (check_request(method, path, err) == -1)
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

/* Connects, then rest_exchange. */
int
rest_request(struct rest_client *rc, struct conn *c, const char *method,
    const char *path, const struct body *b, struct rest_error *err)
{
	c->fd = -1;
	if (check_request(method, path, err) == -1)
		return -1;
	if (conn_open(rc, c, err) == -1)
		return -1;
	return rest_exchange(rc, c, method, path, b, err);
}

struct conn *
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

void
conn_free(struct conn *c)
{
	conn_close(c);
	free(c);
}
