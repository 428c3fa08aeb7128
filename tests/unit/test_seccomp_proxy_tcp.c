/*
 * dockerd-proxy's filter behind a socket proxy (DOCKER_HOST=tcp://), under
 * the real filter: a TCP connect to Docker's port as docker_http.c makes
 * it (non-blocking, TCP_NODELAY, SO_ERROR, the half-close), and the socket
 * of the one address family in use only: never a unix socket, never the
 * other family, never a datagram socket, no bind or listen.  And the
 * spawner's filter, which its children inherit, for each form.
 */
#include <sys/types.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "seccomp.h"
#include "seccomp_child.h"

static int
proxy_inet_load(enum seccomp_mode mode)
{
	proxy_seccomp_family(AF_INET);
	return proxy_seccomp_load(mode);
}

static int
proxy_inet6_load(enum seccomp_mode mode)
{
	proxy_seccomp_family(AF_INET6);
	return proxy_seccomp_load(mode);
}

/* The spawner's filter as managerd loads it for each DOCKER_HOST form. */
static int
spawner_load_family(int family, enum seccomp_mode mode)
{
	struct seccomp_table	 t[3];

	proxy_seccomp_family(family);
	t[0] = apid_seccomp_table();
	t[1] = proxy_seccomp_table();
	t[2] = worker_seccomp_table();
	return spawner_seccomp_load(t, SC_NELEM(t), mode);
}

static int
spawner_inet_load(enum seccomp_mode mode)
{
	return spawner_load_family(AF_INET, mode);
}

static int
spawner_name_load(enum seccomp_mode mode)
{
	return spawner_load_family(AF_UNSPEC, mode);
}

static void
call_socket_inet(void)
{
	syscall(SYS_socket, AF_INET, SOCK_STREAM, 0);
}

static void
call_socket_inet_dgram(void)
{
	syscall(SYS_socket, AF_INET, SOCK_DGRAM, 0);
}

static void
call_socket_inet_raw(void)
{
	syscall(SYS_socket, AF_INET, SOCK_RAW, IPPROTO_TCP);
}

/* MPTCP: a stream socket Landlock's TCP port rules do not hold. */
static void
call_socket_inet_mptcp(void)
{
	syscall(SYS_socket, AF_INET, SOCK_STREAM, 262 /* IPPROTO_MPTCP */);
}

static void
call_socket_inet_tcp_named(void)
{
	syscall(SYS_socket, AF_INET, SOCK_STREAM, IPPROTO_TCP);
}

static void
call_socket_inet6_mptcp(void)
{
	syscall(SYS_socket, AF_INET6, SOCK_STREAM, 262);
}

static void
call_socket_inet6(void)
{
	syscall(SYS_socket, AF_INET6, SOCK_STREAM, 0);
}

static void
call_bind(void)
{
	struct sockaddr_in	 sin;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	syscall(SYS_bind, 0, &sin, sizeof(sin));
}

static void
call_listen(void)
{
	syscall(SYS_listen, 0, 1);
}

static void
call_setsockopt_reuseaddr(void)
{
	int	 one = 1;

	syscall(SYS_setsockopt, 0, SOL_SOCKET, SO_REUSEADDR, &one,
	    sizeof(one));
}

static void
call_setsockopt_cork(void)
{
	int	 one = 1;

	syscall(SYS_setsockopt, 0, IPPROTO_TCP, TCP_CORK, &one, sizeof(one));
}

static void
call_getsockopt_peercred(void)
{
	char		 buf[64];
	socklen_t	 len = sizeof(buf);

	syscall(SYS_getsockopt, 0, SOL_SOCKET, SO_PEERCRED, buf, &len);
}

static void
call_sendto(void)
{
	syscall(SYS_sendto, 0, "x", 1, 0, NULL, 0);
}

static void
test_inet_forbidden(void **state)
{
	static const struct forbidden	 calls[] = {
		{ "socket(AF_UNIX)", call_socket_unix },
		{ "socket(AF_INET6)", call_socket_inet6 },
		{ "socket(AF_INET, SOCK_DGRAM)", call_socket_inet_dgram },
		{ "socket(AF_INET, SOCK_RAW)", call_socket_inet_raw },
		{ "socket(AF_INET, SOCK_STREAM, IPPROTO_MPTCP)",
		    call_socket_inet_mptcp },
		{ "socket(AF_INET, SOCK_STREAM, IPPROTO_TCP)",
		    call_socket_inet_tcp_named },
		{ "socket(AF_NETLINK)", call_socket_netlink },
		{ "bind", call_bind },
		{ "listen", call_listen },
		{ "setsockopt(SO_REUSEADDR)", call_setsockopt_reuseaddr },
		{ "setsockopt(TCP_CORK)", call_setsockopt_cork },
		{ "getsockopt(SO_PEERCRED)", call_getsockopt_peercred },
		{ "sendto", call_sendto },
		{ "openat", call_openat },
		{ "execve", call_execve },
		{ "fork", call_fork },
	};

	(void)state;
	expect_killed(proxy_inet_load, calls, SC_NELEM(calls));
}

static void
test_inet6_forbidden(void **state)
{
	static const struct forbidden	 calls[] = {
		{ "socket(AF_UNIX)", call_socket_unix },
		{ "socket(AF_INET)", call_socket_inet },
		{ "socket(AF_INET6, SOCK_STREAM, IPPROTO_MPTCP)",
		    call_socket_inet6_mptcp },
		{ "bind", call_bind },
	};

	(void)state;
	expect_killed(proxy_inet6_load, calls, SC_NELEM(calls));
}

/* In unix mode, the TCP rules are not there either. */
static void
test_unix_mode_has_no_tcp(void **state)
{
	static const struct forbidden	 calls[] = {
		{ "socket(AF_INET)", call_socket_inet },
		{ "socket(AF_INET6)", call_socket_inet6 },
	};

	(void)state;
	expect_killed(proxy_seccomp_load, calls, SC_NELEM(calls));
}

/*
 * The spawner: a literal's stream family only.  (UDP and route netlink
 * sockets it allows whatever the endpoint: the egress proxy makes them
 * before its jail, managerd/spawner_seccomp.c.)
 */
static void
test_spawner_forbidden(void **state)
{
	static const struct forbidden	 inet[] = {
		{ "socket(AF_INET6)", call_socket_inet6 },
		{ "socket(AF_INET, SOCK_RAW)", call_socket_inet_raw },
		{ "socket(AF_INET, SOCK_STREAM, IPPROTO_MPTCP)",
		    call_socket_inet_mptcp },
		{ "listen", call_listen },
	};
	static const struct forbidden	 name[] = {
		{ "socket(AF_INET, SOCK_RAW)", call_socket_inet_raw },
		{ "socket(AF_INET, SOCK_STREAM, IPPROTO_MPTCP)",
		    call_socket_inet_mptcp },
		{ "socket(AF_INET6, SOCK_STREAM, IPPROTO_MPTCP)",
		    call_socket_inet6_mptcp },
		{ "listen", call_listen },
	};

	(void)state;
	expect_killed(spawner_inet_load, inet, SC_NELEM(inet));
	expect_killed(spawner_name_load, name, SC_NELEM(name));
}

/* Writable within the child's time: the connect's end, as epoll says. */
static int
wait_writable(int ep, int fd)
{
	struct epoll_event	 ev;

	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLOUT;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == -1)
		return -1;
	return epoll_wait(ep, &ev, 1, CHILD_TIMEOUT * 1000) == 1 ? 0 : -1;
}

struct tcp_run {
	struct sockaddr_in	 sin;
	int			 ep;
};

static int
tcp_child(void *arg)
{
	struct tcp_run	*run = arg;
	char		 buf[8];
	socklen_t	 len = sizeof(int);
	int		 fd, one = 1, soerr = -1;

	if (proxy_inet_load(SECCOMP_MODE_KILL) != 0)
		return 3;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1)
		return 4;
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) == -1)
		return 5;
	if (connect(fd, (struct sockaddr *)&run->sin, sizeof(run->sin)) == -1 &&
	    errno != EINPROGRESS)
		return 6;
	if (wait_writable(run->ep, fd) == -1)
		return 7;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) == -1 ||
	    soerr != 0)
		return 8;
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) == -1)
		return 9;
	if (write(fd, "ping", 4) != 4)
		return 10;
	if (read(fd, buf, sizeof(buf)) != 4 || memcmp(buf, "pong", 4) != 0)
		return 11;
	/* A process's stdin ends with a half-close; the answer still comes. */
	if (shutdown(fd, SHUT_WR) == -1)
		return 12;
	if (read(fd, buf, sizeof(buf)) != 3 || memcmp(buf, "eof", 3) != 0)
		return 13;
	close(fd);
	return 0;
}

static void
test_tcp_allowed(void **state)
{
	struct tcp_run		 run;
	struct timeval		 tv = { CHILD_TIMEOUT, 0 };
	socklen_t		 len = sizeof(run.sin);
	char			 buf[8];
	int			 lfd, cfd, status, talked = 0;
	pid_t			 pid;

	(void)state;
	memset(&run, 0, sizeof(run));
	run.sin.sin_family = AF_INET;
	run.sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(lfd != -1);
	assert_int_equal(bind(lfd, (struct sockaddr *)&run.sin,
	    sizeof(run.sin)), 0);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)&run.sin, &len),
	    0);
	assert_int_equal(listen(lfd, 4), 0);
	assert_int_equal(setsockopt(lfd, SOL_SOCKET, SO_RCVTIMEO, &tv,
	    sizeof(tv)), 0);
	/* Made before the filter, as libevent makes it in the proxy. */
	run.ep = epoll_create1(EPOLL_CLOEXEC);
	assert_true(run.ep != -1);

	fflush(NULL);
	pid = fork();
	assert_true(pid != -1);
	if (pid == 0) {
		close(lfd);
		alarm(CHILD_TIMEOUT);
		_exit(tcp_child(&run));
	}
	if ((cfd = accept(lfd, NULL, NULL)) != -1) {
		talked = setsockopt(cfd, SOL_SOCKET, SO_RCVTIMEO, &tv,
		    sizeof(tv)) == 0 && read(cfd, buf, sizeof(buf)) == 4 &&
		    memcmp(buf, "ping", 4) == 0 && write(cfd, "pong", 4) == 4 &&
		    read(cfd, buf, sizeof(buf)) == 0 && write(cfd, "eof", 3) == 3;
		close(cfd);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	close(lfd);
	close(run.ep);
	expect_exit_zero(status, "dockerd-proxy over TCP under its filter");
	assert_true(talked);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inet_forbidden),
		cmocka_unit_test(test_inet6_forbidden),
		cmocka_unit_test(test_unix_mode_has_no_tcp),
		cmocka_unit_test(test_spawner_forbidden),
		cmocka_unit_test(test_tcp_allowed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
