/*
 * landlock_restrict_tcp (common/privdrop.c), what holds dockerd-proxy to
 * the socket proxy's port: in a child, TCP connect to that port works, to
 * any other port fails with EACCES, bind fails, and no file can be opened.
 * Landlock rules are per port, not per address: connect to the allowed port
 * on another address passes Landlock (docs/security.md says so).  Skipped
 * on a kernel whose Landlock has no network rules (ABI < 4).
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <netinet/in.h>

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

#include "privdrop.h"

static int
listener(struct sockaddr_in *sin)
{
	socklen_t	 len = sizeof(*sin);
	int		 fd;

	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)sin, sizeof(*sin)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)sin, &len), 0);
	assert_int_equal(listen(fd, 4), 0);
	return fd;
}

/* 0 connected, else the errno of the connect. */
static int
try_connect(const struct sockaddr_in *sin)
{
	int	 fd, r = 0;

	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		return errno;
	if (connect(fd, (const struct sockaddr *)sin, sizeof(*sin)) == -1)
		r = errno;
	close(fd);
	return r;
}

static int
child(const struct sockaddr_in *allowed, const struct sockaddr_in *other)
{
	struct sockaddr_in	 any, elsewhere = *allowed;
	char			 err[256];
	int			 fd;

	if (landlock_restrict_tcp(ntohs(allowed->sin_port), err,
	    sizeof(err)) != 0)
		return 2;
	if (try_connect(allowed) != 0)
		return 3;
	if (try_connect(other) != EACCES)
		return 4;
	/* Per port only: another address on that port is not Landlock's. */
	elsewhere.sin_addr.s_addr = htonl(INADDR_LOOPBACK + 1);
	if (try_connect(&elsewhere) == EACCES)
		return 5;
	memset(&any, 0, sizeof(any));
	any.sin_family = AF_INET;
	any.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		return 6;
	if (bind(fd, (struct sockaddr *)&any, sizeof(any)) != -1 ||
	    errno != EACCES)
		return 7;
	close(fd);
	if (open("/etc/hostname", O_RDONLY) != -1 || errno != EACCES)
		return 8;
	return 0;
}

static void
test_connect_only_to_the_port(void **state)
{
	struct sockaddr_in	 allowed, other;
	char			 err[256];
	int			 a, b, status;
	pid_t			 pid;

	(void)state;
	a = listener(&allowed);
	b = listener(&other);
	pid = fork();
	assert_true(pid != -1);
	if (pid == 0) {
		alarm(10);
		_exit(child(&allowed, &other));
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	close(a);
	close(b);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 2) {
		/* Tell a missing ABI from a failure. */
		pid = fork();
		if (pid == 0)
			_exit(landlock_restrict_tcp(1, err, sizeof(err)));
		assert_int_equal(waitpid(pid, &status, 0), pid);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 1)
			skip();
		fail_msg("landlock_restrict_tcp failed");
	}
	assert_int_equal(WEXITSTATUS(status), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_connect_only_to_the_port),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
