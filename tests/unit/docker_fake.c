/* The fake Docker and the result callbacks of docker_fake.h. */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <netinet/in.h>

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "docker_fake.h"

const char	 ping_response[] = "HTTP/1.1 200 OK\r\n"
			    "Api-Version: 1.41\r\nContent-Length: 2\r\n"
			    "Content-Type: text/plain; charset=utf-8\r\n\r\nOK";

char *
dup_or_null(const char *s)
{
	char	*d;

	if (s == NULL)
		return NULL;
	d = strdup(s);
	assert_non_null(d);
	return d;
}

static void	fake_respond(struct fake *);

/* The fake's socket, so that teardown removes it after a failed test. */
static char		 fake_dir[64];
static char		 fake_path[108];

static void
fake_close(struct fake *fk)
{
	if (fk->conn != NULL)
		bufferevent_free(fk->conn);
	fk->conn = NULL;
}

static void
fake_tick(evutil_socket_t fd, short what, void *arg)
{
	fake_respond(arg);
}

static void
fake_writecb(struct bufferevent *bev, void *arg)
{
	struct fake	*fk = arg;

	if (fk->got_eof || (fk->sent == fk->response_len && !fk->keep_open))
		fake_close(fk);
}

static void
fake_respond(struct fake *fk)
{
	struct timeval	 tv = { 0, 1000 };
	size_t		 n = fk->response_len - fk->sent;

	if (fk->dribble != 0 && n > fk->dribble)
		n = fk->dribble;
	assert_int_equal(bufferevent_write(fk->conn, fk->response + fk->sent,
	    n), 0);
	fk->sent += n;
	if (fk->sent < fk->response_len)
		evtimer_add(fk->tick, &tv);
}

/* Decode a chunked request body in place; -1 while incomplete. */
long
dechunk(const char *s, size_t len, struct evbuffer *out)
{
	size_t	 off = 0;
	char	*end;
	unsigned long n;

	for (;;) {
		if (memchr(s + off, '\n', len - off) == NULL)
			return -1;
		n = strtoul(s + off, &end, 16);
		off = (size_t)((const char *)memchr(s + off, '\n',
		    len - off) - s) + 1;
		if (n == 0)
			return len - off >= 2 ? (long)off + 2 : -1;
		if (len - off < n + 2)
			return -1;
		if (out != NULL)
			evbuffer_add(out, s + off, n);
		off += n + 2;
	}
}

/* Is the whole request in?  Returns the head length, or 0. */
static size_t
fake_request_complete(struct fake *fk, int head_only)
{
	const char	*s, *eoh, *cl;
	size_t		 len, head;

	len = evbuffer_get_length(fk->request);
	s = (const char *)evbuffer_pullup(fk->request, -1);
	if (s == NULL || (eoh = memmem(s, len, "\r\n\r\n", 4)) == NULL)
		return 0;
	head = (size_t)(eoh - s) + 4;
	if (head_only)
		return head;
	if ((cl = memmem(s, head, "Content-Length: ", 16)) != NULL)
		return len - head >= strtoul(cl + 16, NULL, 10) ? head : 0;
	if (memmem(s, head, "Transfer-Encoding: chunked", 26) != NULL)
		return dechunk(s + head, len - head, NULL) != -1 ? head : 0;
	return head;
}

static void
fake_readcb(struct bufferevent *bev, void *arg)
{
	struct fake	*fk = arg;
	int		 early = fk->close_early || fk->answer_early;

	evbuffer_add_buffer(fk->request, bufferevent_get_input(bev));
	if (fk->answered || fake_request_complete(fk, early) == 0)
		return;
	fk->answered = 1;
	if (fk->close_early) {
		fake_close(fk);
		return;
	}
	if (fk->hold)
		return;
	if (fk->answer_early)
		bufferevent_disable(bev, EV_READ);
	fake_respond(fk);
}

static void
fake_eventcb(struct bufferevent *bev, short what, void *arg)
{
	struct fake	*fk = arg;

	if (what & BEV_EVENT_EOF)
		fk->got_eof = 1;
	/* As a command that read its stdin to the end: last words, then go. */
	if ((what & BEV_EVENT_EOF) && fk->after_eof != NULL) {
		assert_int_equal(bufferevent_write(bev, fk->after_eof,
		    strlen(fk->after_eof)), 0);
		return;
	}
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		fake_close(fk);
}

static void
fake_accept(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct fake	*fk = arg;

	fk->accepted++;
	/* One connection at a time is all a test needs. */
	assert_null(fk->conn);
	fk->conn = bufferevent_socket_new(fk->base, fd, BEV_OPT_CLOSE_ON_FREE);
	assert_non_null(fk->conn);
	bufferevent_setcb(fk->conn, fake_readcb, fake_writecb, fake_eventcb,
	    fk);
	bufferevent_enable(fk->conn, EV_READ | EV_WRITE);
}

/* Everything but the listening socket. */
static void
fake_setup(struct fake *fk, struct event_base *base, const char *response,
    size_t response_len)
{
	memset(fk, 0, sizeof(*fk));
	fk->base = base;
	fk->response = response;
	fk->response_len = response_len != 0 ? response_len :
	    strlen(response);
	fk->request = evbuffer_new();
	assert_non_null(fk->request);
	fk->tick = evtimer_new(base, fake_tick, fk);
	assert_non_null(fk->tick);
}

static void
fake_listen(struct fake *fk, int fd)
{
	assert_int_equal(listen(fd, 8), 0);
	fk->listener = evconnlistener_new(fk->base, fake_accept, fk,
	    LEV_OPT_CLOSE_ON_FREE, -1, fd);
	assert_non_null(fk->listener);
}

void
fake_start(struct fake *fk, struct event_base *base, const char *response,
    size_t response_len)
{
	struct sockaddr_un	 sun;
	int			 fd;

	fake_setup(fk, base, response, response_len);
	strlcpy(fk->dir, "/tmp/test_docker_http.XXXXXX", sizeof(fk->dir));
	assert_non_null(mkdtemp(fk->dir));
	snprintf(fk->path, sizeof(fk->path), "%s/docker.sock", fk->dir);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	strlcpy(sun.sun_path, fk->path, sizeof(sun.sun_path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	fake_listen(fk, fd);
	strlcpy(fake_dir, fk->dir, sizeof(fake_dir));
	strlcpy(fake_path, fk->path, sizeof(fake_path));
}

void
fake_start_tcp(struct fake *fk, struct event_base *base, int family,
    const char *response, size_t response_len)
{
	struct sockaddr_storage	 ss;
	struct sockaddr_in	*sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)&ss;
	socklen_t		 len;
	int			 fd;

	fake_setup(fk, base, response, response_len);
	memset(&ss, 0, sizeof(ss));
	if (family == AF_INET) {
		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof(*sin);
	} else {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = in6addr_loopback;
		len = sizeof(*sin6);
	}
	fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&ss, len), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&ss, &len), 0);
	fake_listen(fk, fd);
	snprintf(fk->path, sizeof(fk->path), family == AF_INET ?
	    "tcp://127.0.0.1:%u" : "tcp://[::1]:%u", family == AF_INET ?
	    ntohs(sin->sin_port) : ntohs(sin6->sin6_port));
}

void
fake_stop(struct fake *fk)
{
	fake_dir[0] = fake_path[0] = '\0';
	fake_close(fk);
	evconnlistener_free(fk->listener);
	evbuffer_free(fk->request);
	event_free(fk->tick);
	if (fk->dir[0] != '\0') {
		unlink(fk->path);
		rmdir(fk->dir);
	}
}

int
fake_request_is(struct fake *fk, const char *want, size_t len)
{
	if (len == 0)
		len = strlen(want);
	return evbuffer_get_length(fk->request) == len &&
	    memcmp(evbuffer_pullup(fk->request, -1), want, len) == 0;
}

/* --- what a request ended with ------------------------------------------ */


void
result_init(struct result *res, struct event_base *base)
{
	memset(res, 0, sizeof(*res));
	res->base = base;
	res->body = evbuffer_new();
	res->streamed = evbuffer_new();
	assert_non_null(res->body);
	assert_non_null(res->streamed);
	res->resume_after.tv_usec = 2000;
}

void
result_free(struct result *res)
{
	free(res->content_type);
	free(res->path_stat);
	evbuffer_free(res->body);
	evbuffer_free(res->streamed);
	if (res->resume != NULL)
		event_free(res->resume);
}

void
done_cb(struct docker_request *req, enum docker_http_error error,
    const struct docker_response *resp, void *arg)
{
	struct result	*res = arg;

	assert_non_null(resp);
	res->calls++;
	res->error = error;
	res->status = resp->status;
	res->content_type = dup_or_null(resp->content_type);
	res->path_stat = dup_or_null(resp->path_stat);
	res->body_null = resp->body == NULL;
	if (resp->body != NULL)
		evbuffer_add(res->body, resp->body, resp->body_len);
	res->sys_errno = docker_request_errno(req);
	/* The request is gone after this: nothing may resume it. */
	if (res->resume != NULL)
		event_del(res->resume);
	res->req = NULL;
	event_base_loopbreak(res->base);
}

void
resume_cb(evutil_socket_t fd, short what, void *arg)
{
	struct result	*res = arg;

	res->paused = 0;
	docker_request_resume(res->req);
}

int
body_cb(struct docker_request *req, const unsigned char *data, size_t len,
    void *arg)
{
	struct result	*res = arg;

	assert_ptr_equal(req, res->req);
	assert_true(len > 0);
	res->body_calls++;
	if (res->paused)
		res->calls_while_paused++;
	/* Headers are complete before the first piece of body. */
	assert_int_not_equal(docker_request_response(req)->status, 0);
	evbuffer_add(res->streamed, data, len);
	if (res->cancel_at != 0 && res->body_calls == res->cancel_at) {
		docker_request_cancel(req);
		res->req = NULL;
		event_base_loopbreak(res->base);
		return 0;
	}
	if (res->abort_at != 0 && res->body_calls == res->abort_at)
		return -1;
	if (res->pause_each) {
		docker_request_pause(req);
		res->paused = 1;
		evtimer_add(res->resume, &res->resume_after);
	}
	return 0;
}

/* Run the loop until the done callback, or fail after a while. */
void
run_loop(struct event_base *base)
{
	struct timeval	 tv = { 10, 0 };

	event_base_loopexit(base, &tv);
	event_base_dispatch(base);
}

void
run_for(struct event_base *base, long usec)
{
	struct timeval	 tv = { 0, usec };

	event_base_loopexit(base, &tv);
	event_base_dispatch(base);
}

int
setup_base(void **state)
{
	struct event_base	*base;

	if ((base = event_base_new()) == NULL)
		return -1;
	*state = base;
	return 0;
}

int
teardown_base(void **state)
{
	if (fake_dir[0] != '\0') {
		unlink(fake_path);
		rmdir(fake_dir);
		fake_dir[0] = fake_path[0] = '\0';
	}
	event_base_free(*state);
	return 0;
}
