/*
 * The REST client tests' fake server (rest_fake.h): a thread on
 * 127.0.0.1 that takes one connection, records the request it got and
 * replays a canned answer.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "rest.h"
#include "rest_fake.h"

struct fake	 fk;

unsigned char
pattern(uint64_t i)
{
	return (unsigned char)((i * 7 + (i >> 12)) & 0xff);
}

void
write_all(int fd, const void *p, size_t len)
{
	const char	*s = p;
	ssize_t		 n;

	while (len > 0) {
		n = send(fd, s, len, MSG_NOSIGNAL);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		s += n;
		len -= n;
	}
}

static void
append(struct fake *f, const unsigned char *p, size_t n)
{
	f->req = realloc(f->req, f->reqlen + n + 1);
	if (f->req == NULL)
		abort();
	memcpy(f->req + f->reqlen, p, n);
	f->reqlen += n;
	f->req[f->reqlen] = '\0';
}

/* Reads the head, and the body its Content-Length announces unless early. */
static void
read_request(struct fake *f, int fd, int body)
{
	unsigned char	 buf[65536];
	char		*end, *cl;
	size_t		 want = 0;
	ssize_t		 n;

	for (;;) {
		if (f->req != NULL &&
		    (end = strstr((char *)f->req, "\r\n\r\n")) != NULL) {
			f->headlen = end + 4 - (char *)f->req;
			break;
		}
		if ((n = recv(fd, buf, sizeof(buf), 0)) <= 0)
			return;
		append(f, buf, n);
	}
	cl = strcasestr((char *)f->req, "\r\nContent-Length: ");
	if (cl != NULL && cl < (char *)f->req + f->headlen)
		want = strtoull(cl + 18, NULL, 10);
	while (body && f->reqlen < f->headlen + want) {
		if ((n = recv(fd, buf, sizeof(buf), 0)) <= 0)
			return;
		append(f, buf, n);
	}
}

static void
answer_big(struct fake *f, int fd)
{
	unsigned char	 buf[40000];
	char		 line[64];
	uint64_t	 done = 0;
	size_t		 n, i;
	const char	*h = "HTTP/1.1 200 OK\r\nContent-Type: "
	    "application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n";

	write_all(fd, h, strlen(h));
	while (done < f->big_len) {
		n = f->big_len - done;
		if (n > sizeof(buf))
			n = sizeof(buf);
		for (i = 0; i < n; i++)
			buf[i] = f->big_fill != 0 ? f->big_fill :
			    pattern(done + i);
		snprintf(line, sizeof(line), "%zx\r\n", n);
		write_all(fd, line, strlen(line));
		write_all(fd, buf, n);
		write_all(fd, "\r\n", 2);
		done += n;
	}
	write_all(fd, "0\r\n\r\n", 5);
}

/* Until the client closes fd, or for 3 s. */
static void
hold(int fd)
{
	struct timeval	 tv = { 3, 0 };
	char		 buf[4096];

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (recv(fd, buf, sizeof(buf), 0) > 0)
		;
}

/*
 * One connection per answer; every request goes on to f->log.  A
 * connection that does not come within 5 s ends it (a client that
 * failed early leaves no thread waiting for it).
 */
static void *
serve_script(struct fake *f)
{
	struct pollfd	 pfd = { f->lfd, POLLIN, 0 };
	size_t		 i;
	int		 fd;

	for (i = 0; poll(&pfd, 1, 5000) == 1 &&
	    (fd = accept(f->lfd, NULL, NULL)) != -1; i++) {
		read_request(f, fd, 1);
		if (f->script[i] != NULL)
			write_all(fd, f->script[i], strlen(f->script[i]));
		if (f->hold == i + 1)
			hold(fd);
		close(fd);
		f->log = realloc(f->log, f->loglen + f->reqlen + 1);
		if (f->log == NULL)
			abort();
		memcpy(f->log + f->loglen, f->req, f->reqlen);
		f->loglen += f->reqlen;
		f->log[f->loglen] = '\0';
		free(f->req);
		f->req = NULL;
		f->reqlen = f->headlen = 0;
		if (f->script[i] == NULL || f->script[i + 1] == NULL)
			break;
	}
	return NULL;
}

static void *
serve(void *arg)
{
	struct fake	*f = arg;
	unsigned char	 buf[65536];
	int		 fd;

	if (f->mode == SCRIPT)
		return serve_script(f);
	if ((fd = accept(f->lfd, NULL, NULL)) == -1)
		return NULL;
	switch (f->mode) {
	case ANSWER:
		read_request(f, fd, 1);
		write_all(fd, f->resp, f->resplen);
		break;
	case EARLY:
		read_request(f, fd, 0);
		write_all(fd, f->resp, f->resplen);
		shutdown(fd, SHUT_WR);
		while (recv(fd, buf, sizeof(buf), 0) > 0)
			;
		break;
	case SILENT:
		read_request(f, fd, 1);
		sleep(3);
		break;
	case BIG:
		read_request(f, fd, 1);
		answer_big(f, fd);
		break;
	case SCRIPT:
		break;
	case PACED:
		read_request(f, fd, 1);
		write_all(fd, f->resp, f->resplen);
		usleep(f->pause_ms * 1000);
		write_all(fd, f->resp2, strlen(f->resp2));
		break;
	}
	close(fd);
	return NULL;
}

void
fake_start(enum mode mode, const char *resp, size_t resplen)
{
	struct sockaddr_in	 sin;
	socklen_t		 sl = sizeof(sin);

	memset(&fk, 0, sizeof(fk));
	fk.mode = mode;
	fk.resp = resp;
	fk.resplen = resplen != 0 || resp == NULL ? resplen : strlen(resp);
	fk.lfd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fk.lfd != -1);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fk.lfd, (struct sockaddr *)&sin, sizeof(sin)),
	    0);
	assert_int_equal(listen(fk.lfd, 1), 0);
	assert_int_equal(getsockname(fk.lfd, (struct sockaddr *)&sin, &sl),
	    0);
	snprintf(fk.port, sizeof(fk.port), "%d", ntohs(sin.sin_port));
	assert_int_equal(pthread_create(&fk.th, NULL, serve, &fk), 0);
}

void
fake_stop(void)
{
	pthread_join(fk.th, NULL);
	close(fk.lfd);
}

void
fake_free(void)
{
	free(fk.req);
	fk.req = NULL;
	free(fk.log);
	fk.log = NULL;
}

void
fake_big(size_t len, int fill)
{
	fake_start(BIG, NULL, 0);
	fk.big_len = len;
	fk.big_fill = fill;
}

char	 rbuf[256 * 1024];

/* An answer with its Content-Length. */
void
fake_paced(const char *resp, const char *resp2, int pause_ms)
{
	/* As fake_big: read only once the request came. */
	fake_start(PACED, resp, 0);
	fk.resp2 = resp2;
	fk.pause_ms = pause_ms;
}

void
fake_script(const char *const *answers)
{
	/* As fake_big: read only once the first request came. */
	fake_start(SCRIPT, NULL, 0);
	fk.script = answers;
}

const char *
with_length(const char *head, const char *body)
{
	snprintf(rbuf, sizeof(rbuf), "%sContent-Length: %zu\r\n\r\n%s",
	    head, strlen(body), body);
	return rbuf;
}

/* An answer in chunks, one per piece. */
const char *
with_chunks(const char *head, const char *const *pieces)
{
	size_t	 n;

	n = snprintf(rbuf, sizeof(rbuf), "%sTransfer-Encoding: chunked\r\n"
	    "\r\n", head);
	for (; *pieces != NULL; pieces++)
		n += snprintf(rbuf + n, sizeof(rbuf) - n, "%zx\r\n%s\r\n",
		    strlen(*pieces), *pieces);
	snprintf(rbuf + n, sizeof(rbuf) - n, "0\r\n\r\n");
	return rbuf;
}

void
client(struct rest_client *rc, const char *prefix, const char *key)
{
	char	 url[128], err[256];

	snprintf(url, sizeof(url), "http://127.0.0.1:%s%s", fk.port, prefix);
	assert_int_equal(rest_client_init(rc, url, key, err, sizeof(err)), 0);
}

/* The request's head contains this line exactly. */
int
has_header(const char *line)
{
	char	*head, *p;
	size_t	 n = strlen(line);
	int	 found = 0;

	head = strndup((char *)fk.req, fk.headlen);
	assert_non_null(head);
	for (p = head; (p = strstr(p, line)) != NULL; p += n)
		if ((p == head || p[-1] == '\n') && p[n] == '\r') {
			found = 1;
			break;
		}
	free(head);
	return found;
}

int
starts_with(const char *prefix)
{
	return fk.req != NULL && strncmp((char *)fk.req, prefix,
	    strlen(prefix)) == 0;
}
