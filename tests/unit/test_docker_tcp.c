/*
 * docker_http over TCP, as behind a socket proxy: the endpoint's forms, a
 * request whose connect is still in progress when it starts, a refused
 * connect reported the way a unix one is (DOCKER_HTTP_CONNECT, from the
 * loop), one that never completes held to the deadline, and a cancel
 * while it is in progress.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>

#include <errno.h>
#include <malloc.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "docker_fake.h"

#define PING_HEAD	"GET /v1.41/_ping HTTP/1.1\r\nHost: docker\r\n" \
			"User-Agent: agent-sandbox\r\nConnection: close\r\n\r\n"

static struct docker_request *
ping(struct event_base *base, const char *endpoint, struct result *res,
    unsigned int deadline_ms)
{
	struct docker_request_spec	 spec;

	memset(&spec, 0, sizeof(spec));
	spec.method = "GET";
	spec.path = "/v1.41/_ping";
	spec.max_body = 1024;
	spec.on_done = done_cb;
	spec.arg = res;
	spec.deadline_ms = deadline_ms;
	return docker_request_new(base, endpoint, &spec);
}

static void
test_endpoint_forms(void **state)
{
	static const char *const bad[] = { "", "docker.sock", "unix:///x",
	    "tcp://", "tcp://127.0.0.1", "tcp://localhost:2375",
	    "tcp://[::1]", "tcp://127.0.0.1:0", "tcp://127.0.0.1:65536",
	    "tcp://[127.0.0.1]:1", "tcp://1.2.3.4:80/x", "http://1.2.3.4:80" };
	struct docker_endpoint	 ep;
	struct result		 res;
	size_t			 i;

	assert_int_equal(docker_endpoint_parse("/run/docker.sock", &ep), 0);
	assert_int_equal(ep.family, AF_UNIX);
	assert_int_equal(docker_endpoint_parse("tcp://10.1.2.3:2375", &ep), 0);
	assert_int_equal(ep.family, AF_INET);
	assert_int_equal(ep.port, 2375);
	assert_int_equal(ntohs(((struct sockaddr_in *)&ep.addr)->sin_port),
	    2375);
	assert_int_equal(docker_endpoint_parse("tcp://[fd00::2]:1", &ep), 0);
	assert_int_equal(ep.family, AF_INET6);
	assert_int_equal(ep.len, sizeof(struct sockaddr_in6));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		assert_int_equal(docker_endpoint_parse(bad[i], &ep), -1);
		assert_int_equal(errno, EINVAL);
		/* A request to it fails at once, before any socket. */
		result_init(&res, *state);
		errno = 0;
		assert_null(ping(*state, bad[i], &res, 0));
		assert_int_equal(errno, EINVAL);
		result_free(&res);
	}
}

/* A host name is resolved before the jail; a literal is kept as it is. */
static void
test_endpoint_resolve(void **state)
{
	char	 out[128], err[256];

	assert_int_equal(docker_endpoint_resolve("tcp://localhost:2375", out,
	    sizeof(out), err, sizeof(err)), 0);
	assert_true(strcmp(out, "tcp://127.0.0.1:2375") == 0 ||
	    strcmp(out, "tcp://[::1]:2375") == 0);
	assert_int_equal(docker_endpoint_resolve("tcp://[::1]:9", out,
	    sizeof(out), err, sizeof(err)), 0);
	assert_string_equal(out, "tcp://[::1]:9");
	assert_int_equal(docker_endpoint_resolve("/var/run/docker.sock", out,
	    sizeof(out), err, sizeof(err)), 0);
	assert_string_equal(out, "/var/run/docker.sock");
	assert_int_equal(docker_endpoint_resolve("tcp://no-such-host.invalid:1",
	    out, sizeof(out), err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cannot resolve no-such-host.invalid"));
}

static void
ping_over(struct event_base *base, int family)
{
	struct fake	 fk;
	struct result	 res;

	fake_start_tcp(&fk, base, family, ping_response, 0);
	result_init(&res, base);
	assert_non_null(ping(base, fk.path, &res, 0));
	run_loop(base);
	assert_int_equal(res.calls, 1);
	assert_int_equal(res.error, DOCKER_HTTP_OK);
	assert_int_equal(res.status, 200);
	assert_true(fake_request_is(&fk, PING_HEAD, 0));
	result_free(&res);
	fake_stop(&fk);
}

static void
test_ping_ipv4(void **state)
{
	ping_over(*state, AF_INET);
}

static void
test_ping_ipv6(void **state)
{
	ping_over(*state, AF_INET6);
}

/* A port nobody listens on: a port the kernel gave and took back. */
static unsigned int
closed_port(void)
{
	struct sockaddr_in	 sin;
	socklen_t		 len = sizeof(sin);
	int			 fd;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
	close(fd);
	return ntohs(sin.sin_port);
}

/* Refused: DOCKER_HTTP_CONNECT with ECONNREFUSED, never inside the call. */
static void
test_refused(void **state)
{
	struct event_base	*base = *state;
	struct result		 res;
	char			 endpoint[64];

	snprintf(endpoint, sizeof(endpoint), "tcp://127.0.0.1:%u",
	    closed_port());
	result_init(&res, base);
	assert_non_null(ping(base, endpoint, &res, 0));
	assert_int_equal(res.calls, 0);
	run_loop(base);
	assert_int_equal(res.calls, 1);
	assert_int_equal(res.error, DOCKER_HTTP_CONNECT);
	assert_int_equal(res.sys_errno, ECONNREFUSED);
	assert_int_equal(res.status, 0);
	result_free(&res);
}

/*
 * A listener that never accepts, its queue full: the kernel drops the
 * next SYN, the connect stays in progress, and the deadline ends it.
 */
static int
full_listener(char *endpoint, size_t len, int *filler)
{
	struct sockaddr_in	 sin;
	socklen_t		 slen = sizeof(sin);
	int			 fd, i;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(listen(fd, 0), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &slen), 0);
	for (i = 0; i < 2; i++) {
		filler[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		assert_true(filler[i] >= 0);
		(void)connect(filler[i], (struct sockaddr *)&sin, sizeof(sin));
	}
	usleep(100000);
	snprintf(endpoint, len, "tcp://127.0.0.1:%u", ntohs(sin.sin_port));
	return fd;
}

static void
test_connect_held_to_the_deadline(void **state)
{
	struct event_base	*base = *state;
	struct result		 res;
	char			 endpoint[64];
	int			 fd, filler[2];

	fd = full_listener(endpoint, sizeof(endpoint), filler);
	result_init(&res, base);
	assert_non_null(ping(base, endpoint, &res, 300));
	run_loop(base);
	assert_int_equal(res.calls, 1);
	assert_int_equal(res.error, DOCKER_HTTP_TIMEOUT);
	assert_int_equal(res.sys_errno, ETIMEDOUT);
	result_free(&res);
	close(filler[0]);
	close(filler[1]);
	close(fd);
}

/* Cancelled while its connect is in progress: no callback, nothing left. */
static void
test_cancel_while_connecting(void **state)
{
	struct event_base	*base = *state;
	struct docker_request	*req;
	struct result		 res;
	char			 endpoint[64];
	int			 fd, filler[2];

	fd = full_listener(endpoint, sizeof(endpoint), filler);
	result_init(&res, base);
	req = ping(base, endpoint, &res, 300);
	assert_non_null(req);
	run_for(base, 50000);
	docker_request_cancel(req);
	run_for(base, 500000);
	assert_int_equal(res.calls, 0);
	result_free(&res);
	close(filler[0]);
	close(filler[1]);
	close(fd);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_endpoint_forms,
		    setup_base, teardown_base),
		cmocka_unit_test(test_endpoint_resolve),
		cmocka_unit_test_setup_teardown(test_ping_ipv4,
		    setup_base, teardown_base),
		cmocka_unit_test_setup_teardown(test_ping_ipv6,
		    setup_base, teardown_base),
		cmocka_unit_test_setup_teardown(test_refused,
		    setup_base, teardown_base),
		cmocka_unit_test_setup_teardown(
		    test_connect_held_to_the_deadline, setup_base,
		    teardown_base),
		cmocka_unit_test_setup_teardown(test_cancel_while_connecting,
		    setup_base, teardown_base),
	};

	signal(SIGPIPE, SIG_IGN);
	mallopt(M_PERTURB, 0x5a);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
