/*
 * httpload: a closed-loop HTTP/1.1 load generator for the benchmarks.
 * N kept-alive connections each send one GET, wait for its whole
 * response, and send the next, for a fixed time; it prints requests per
 * second and latency percentiles.  It exists because wrk cannot talk to
 * a unix socket, and the floor our server is compared with is Docker's
 * own API on /var/run/docker.sock: the same tool on both sides keeps the
 * comparison fair.
 *
 *	httpload [-c conns] [-d seconds] [-H field]... (-u socket | -p port)
 *	    path
 */
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <err.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS	1024
#define BUF_SIZE	65536
#define MAX_SAMPLES	(4 * 1024 * 1024)

struct conn {
	int	 fd;
	char	 buf[BUF_SIZE];
	size_t	 len;
	double	 sent_at;
};

static double	*samples;
static size_t	 nsamples;
static uint64_t	 done, failed;

static double
now(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int
connect_to(const char *sock, int port)
{
	struct sockaddr_un	 sun;
	struct sockaddr_in	 sin;
	int			 fd, on = 1;

	if (sock != NULL) {
		memset(&sun, 0, sizeof(sun));
		sun.sun_family = AF_UNIX;
		strlcpy(sun.sun_path, sock, sizeof(sun.sun_path));
		if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1 ||
		    connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1)
			err(1, "%s", sock);
		return fd;
	}
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1 ||
	    connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1)
		err(1, "127.0.0.1:%d", port);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
	return fd;
}

static void
send_request(struct conn *c, const char *req, size_t len)
{
	if (write(c->fd, req, len) != (ssize_t)len)
		err(1, "write");
	c->sent_at = now();
}

/* Where a chunked body that starts at p ends, or 0 if not all here. */
static size_t
chunked_length(const char *buf, size_t off, size_t len)
{
	const char	*nl;
	unsigned long	 size;

	for (;;) {
		if ((nl = memmem(buf + off, len - off, "\r\n", 2)) == NULL)
			return 0;
		size = strtoul(buf + off, NULL, 16);
		off = nl - buf + 2 + size + 2;
		if (off > len)
			return 0;
		if (size == 0)
			return off;
	}
}

static const char *
field(const char *buf, size_t head, const char *name)
{
	const char	*p;
	size_t		 n = strlen(name);

	for (p = buf; (p = memmem(p, head - (p - buf), "\r\n", 2)) != NULL;
	    p += 2)
		if (strncasecmp(p + 2, name, n) == 0)
			return p + 2 + n;
	return NULL;
}

/* Length of one whole response at the start of buf, or 0. */
static size_t
response_length(const char *buf, size_t len)
{
	const char	*end, *v;
	size_t		 head;

	if ((end = memmem(buf, len, "\r\n\r\n", 4)) == NULL)
		return 0;
	head = end - buf + 4;
	if ((v = field(buf, head, "Content-Length:")) != NULL) {
		head += strtoul(v, NULL, 10);
		return head <= len ? head : 0;
	}
	if ((v = field(buf, head, "Transfer-Encoding:")) != NULL)
		return chunked_length(buf, head, len);
	errx(1, "a response without a length");
}

static void
on_readable(struct conn *c, const char *req, size_t reqlen, int running)
{
	ssize_t	 n;
	size_t	 r;

	if ((n = read(c->fd, c->buf + c->len, sizeof(c->buf) - c->len)) <= 0)
		errx(1, "the server closed a connection");
	c->len += (size_t)n;
	while ((r = response_length(c->buf, c->len)) > 0) {
		if (strncmp(c->buf + 9, "200", 3) != 0)
			failed++;
		done++;
		if (nsamples < MAX_SAMPLES)
			samples[nsamples++] = now() - c->sent_at;
		memmove(c->buf, c->buf + r, c->len - r);
		c->len -= r;
		if (running)
			send_request(c, req, reqlen);
	}
}

static int
cmp_double(const void *a, const void *b)
{
	double	 x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void
report(double secs, int nconns)
{
	qsort(samples, nsamples, sizeof(samples[0]), cmp_double);
	printf("{\"requests\": %llu, \"failed\": %llu, \"seconds\": %.3f, "
	    "\"connections\": %d, \"rps\": %.0f, \"p50_ms\": %.3f, "
	    "\"p99_ms\": %.3f}\n", (unsigned long long)done,
	    (unsigned long long)failed, secs, nconns, done / secs,
	    nsamples ? samples[nsamples / 2] * 1000 : 0,
	    nsamples ? samples[nsamples * 99 / 100] * 1000 : 0);
}

int
main(int argc, char *argv[])
{
	struct epoll_event	 ev, evs[64];
	struct conn		*conns;
	const char		*sock = NULL;
	char			 req[4096], fields[2048] = "";
	double			 secs = 5, t0, end;
	size_t			 reqlen;
	int			 ch, i, n, nconns = 16, port = 0, ep;

	while ((ch = getopt(argc, argv, "c:d:H:u:p:")) != -1) {
		switch (ch) {
		case 'c': nconns = atoi(optarg); break;
		case 'd': secs = atof(optarg); break;
		case 'H':
			strlcat(fields, optarg, sizeof(fields));
			strlcat(fields, "\r\n", sizeof(fields));
			break;
		case 'u': sock = optarg; break;
		case 'p': port = atoi(optarg); break;
		default: errx(2, "usage: httpload [-c n] [-d s] [-H field] "
		    "(-u sock | -p port) path");
		}
	}
	if (optind + 1 != argc || nconns < 1 || nconns > MAX_CONNS ||
	    (sock == NULL && port == 0))
		errx(2, "usage: httpload [-c n] [-d s] (-u sock | -p port) path");
	reqlen = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: bench"
	    "\r\n%s\r\n", argv[optind], fields);
	if ((conns = calloc(nconns, sizeof(*conns))) == NULL ||
	    (samples = calloc(MAX_SAMPLES, sizeof(double))) == NULL ||
	    (ep = epoll_create1(0)) == -1)
		err(1, "setup");
	for (i = 0; i < nconns; i++) {
		conns[i].fd = connect_to(sock, port);
		ev.events = EPOLLIN;
		ev.data.ptr = &conns[i];
		if (epoll_ctl(ep, EPOLL_CTL_ADD, conns[i].fd, &ev) == -1)
			err(1, "epoll_ctl");
	}
	t0 = now();
	end = t0 + secs;
	for (i = 0; i < nconns; i++)
		send_request(&conns[i], req, reqlen);
	while (now() < end) {
		if ((n = epoll_wait(ep, evs, 64, 100)) == -1 && errno != EINTR)
			err(1, "epoll_wait");
		for (i = 0; i < n; i++)
			on_readable(evs[i].data.ptr, req, reqlen, 1);
	}
	report(now() - t0, nconns);
	return 0;
}
