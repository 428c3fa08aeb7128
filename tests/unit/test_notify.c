/*
 * Tests for what managerd reads from systemd's environment
 * (managerd/notify.c, managerd/activation.c): NOTIFY_SOCKET as a path or
 * an abstract name, WATCHDOG_USEC and WATCHDOG_PID, LISTEN_PID and
 * LISTEN_FDS, and the descriptor socket activation passes.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <netinet/in.h>

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "notify.h"

static void
test_address_path(void **state)
{
	struct sockaddr_un	 sun;
	socklen_t		 len;
	char			 err[128];

	assert_int_equal(notify_parse_address("/run/systemd/notify", &sun,
	    &len, err, sizeof(err)), 0);
	assert_int_equal(sun.sun_family, AF_UNIX);
	assert_string_equal(sun.sun_path, "/run/systemd/notify");
	assert_int_equal(len, offsetof(struct sockaddr_un, sun_path) +
	    strlen("/run/systemd/notify") + 1);
}

static void
test_address_abstract(void **state)
{
	struct sockaddr_un	 sun;
	socklen_t		 len;
	char			 err[128];

	assert_int_equal(notify_parse_address("@sd-notify/1", &sun, &len, err,
	    sizeof(err)), 0);
	/* A NUL first, the name after it, no terminating NUL counted. */
	assert_int_equal(sun.sun_path[0], '\0');
	assert_memory_equal(sun.sun_path + 1, "sd-notify/1", 11);
	assert_int_equal(len, offsetof(struct sockaddr_un, sun_path) + 12);
}

static void
test_address_bad(void **state)
{
	struct sockaddr_un	 sun;
	socklen_t		 len;
	char			 err[128], big[200];

	assert_int_equal(notify_parse_address("vsock:2:1234", &sun, &len, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "unix"));
	assert_int_equal(notify_parse_address("relative/path", &sun, &len,
	    err, sizeof(err)), -1);
	assert_int_equal(notify_parse_address("@", &sun, &len, err,
	    sizeof(err)), -1);
	assert_int_equal(notify_parse_address("/", &sun, &len, err,
	    sizeof(err)), -1);
	assert_int_equal(notify_parse_address("", &sun, &len, err,
	    sizeof(err)), -1);
	/* sun_path holds 108 bytes: a path needs its NUL, a name does not. */
	memset(big, 'a', sizeof(big));
	big[0] = '/';
	big[sizeof(sun.sun_path)] = '\0';
	assert_int_equal(notify_parse_address(big, &sun, &len, err,
	    sizeof(err)), -1);
	big[sizeof(sun.sun_path) - 1] = '\0';
	assert_int_equal(notify_parse_address(big, &sun, &len, err,
	    sizeof(err)), 0);
	big[0] = '@';
	big[sizeof(sun.sun_path) - 1] = 'a';
	big[sizeof(sun.sun_path)] = '\0';
	assert_int_equal(notify_parse_address(big, &sun, &len, err,
	    sizeof(err)), 0);
	assert_int_equal(len, sizeof(sun));
	big[sizeof(sun.sun_path)] = 'a';
	big[sizeof(sun.sun_path) + 1] = '\0';
	assert_int_equal(notify_parse_address(big, &sun, &len, err,
	    sizeof(err)), -1);
}

static void
test_watchdog(void **state)
{
	uint64_t	 usec;
	char		 err[128];

	assert_int_equal(notify_parse_watchdog(NULL, NULL, 42, &usec, err,
	    sizeof(err)), 0);
	assert_int_equal(usec, 0);
	assert_int_equal(notify_parse_watchdog("1000000", NULL, 42, &usec,
	    err, sizeof(err)), 0);
	assert_int_equal(usec, 1000000);
	assert_int_equal(notify_parse_watchdog("30000000", "42", 42, &usec,
	    err, sizeof(err)), 0);
	assert_int_equal(usec, 30000000);
	/* Another process's watchdog: none for us, and no error. */
	assert_int_equal(notify_parse_watchdog("30000000", "43", 42, &usec,
	    err, sizeof(err)), 0);
	assert_int_equal(usec, 0);
	assert_int_equal(notify_parse_watchdog("0", NULL, 42, &usec, err,
	    sizeof(err)), -1);
	assert_int_equal(notify_parse_watchdog("-5", NULL, 42, &usec, err,
	    sizeof(err)), -1);
	assert_int_equal(notify_parse_watchdog("1s", NULL, 42, &usec, err,
	    sizeof(err)), -1);
	assert_int_equal(notify_parse_watchdog("99999999999999999999999",
	    NULL, 42, &usec, err, sizeof(err)), -1);
	assert_int_equal(notify_parse_watchdog("1000", "x", 42, &usec, err,
	    sizeof(err)), -1);
	assert_int_equal(usec, 0);
}

static void
test_listen_env(void **state)
{
	char	 err[128];

	assert_int_equal(activation_check_env(NULL, NULL, 7, err,
	    sizeof(err)), 0);
	assert_int_equal(activation_check_env("7", NULL, 7, err,
	    sizeof(err)), 0);
	assert_int_equal(activation_check_env("7", "1", 7, err,
	    sizeof(err)), 1);
	/* Inherited from a parent that was activated: not ours. */
	assert_int_equal(activation_check_env("8", "1", 7, err,
	    sizeof(err)), 0);
	assert_int_equal(activation_check_env("junk", "1", 7, err,
	    sizeof(err)), 0);
	assert_int_equal(activation_check_env("7", "0", 7, err,
	    sizeof(err)), 0);
	assert_int_equal(activation_check_env("7", "2", 7, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "exactly one"));
	assert_int_equal(activation_check_env("7", "-1", 7, err,
	    sizeof(err)), -1);
	assert_int_equal(activation_check_env("7", "one", 7, err,
	    sizeof(err)), -1);
}

static void
expect_fd(int fd, int ok, const char *needle)
{
	char	 err[256];

	err[0] = '\0';
	assert_int_equal(activation_check_fd(fd, err, sizeof(err)),
	    ok ? 0 : -1);
	if (!ok && strstr(err, needle) == NULL)
		fail_msg("\"%s\" does not say \"%s\"", err, needle);
}

static void
test_listen_fd(void **state)
{
	struct sockaddr_in	 sin;
	int			 s, fd, pair[2];

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true((s = socket(AF_INET, SOCK_STREAM, 0)) != -1);
	assert_int_equal(bind(s, (struct sockaddr *)&sin, sizeof(sin)), 0);
	expect_fd(s, 0, "not listening");
	assert_int_equal(listen(s, 4), 0);
	expect_fd(s, 1, NULL);
	close(s);
	assert_true((s = socket(AF_INET, SOCK_DGRAM, 0)) != -1);
	expect_fd(s, 0, "stream");
	close(s);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
	expect_fd(pair[0], 0, "not listening");
	close(pair[0]);
	close(pair[1]);
	assert_true((fd = open("/dev/null", O_RDONLY)) != -1);
	expect_fd(fd, 0, "not a socket");
	close(fd);
	expect_fd(fd, 0, "not a socket");	/* closed */
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_address_path),
		cmocka_unit_test(test_address_abstract),
		cmocka_unit_test(test_address_bad),
		cmocka_unit_test(test_watchdog),
		cmocka_unit_test(test_listen_env),
		cmocka_unit_test(test_listen_fd),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
