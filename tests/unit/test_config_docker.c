/*
 * DOCKER_HOST in tcp:// form (common/config_docker.c): what a socket proxy
 * deployment may give, and every malformed value a clear error, never
 * quietly some other endpoint.
 */
#include <sys/socket.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"
#include "docker_host.h"

#define INSECURE	"AGENT_SANDBOX_INSECURE_NO_AUTH=true"
#define MAX_ENV		16
#define MUST		"DOCKER_HOST must be unix:///PATH or tcp://HOST:PORT, "

static char	 err[512];

static int
load(struct config *c, const char *host, const char *tls)
{
	char	*envp[MAX_ENV], insecure[] = INSECURE, sethost[1024];
	char	 settls[64];
	size_t	 n = 0;

	envp[n++] = insecure;
	snprintf(sethost, sizeof(sethost), "DOCKER_HOST=%s", host);
	envp[n++] = sethost;
	if (tls != NULL) {
		snprintf(settls, sizeof(settls), "DOCKER_TLS_VERIFY=%s", tls);
		envp[n++] = settls;
	}
	envp[n] = NULL;
	memset(err, 'x', sizeof(err) - 1);
	err[sizeof(err) - 1] = '\0';
	return config_load(c, envp, err, sizeof(err));
}

static void
expect_endpoint(const char *host, const char *want)
{
	struct config	 c;

	if (load(&c, host, NULL) != 0)
		fail_msg("%s: %s", host, err);
	assert_string_equal(c.docker_endpoint, want);
	config_free(&c);
}

static void
expect_error(const char *host, const char *tls, const char *want)
{
	struct config	 c;

	assert_int_equal(load(&c, host, tls), -1);
	if (strcmp(err, want) != 0)
		fail_msg("%s: got \"%s\", want \"%s\"", host, err, want);
	config_free(&c);
}

static void
test_tcp_accepted(void **state)
{
	expect_endpoint("tcp://127.0.0.1:2375", "tcp://127.0.0.1:2375");
	expect_endpoint("tcp://[::1]:2375", "tcp://[::1]:2375");
	expect_endpoint("tcp://[fe80::1:2]:1", "tcp://[fe80::1:2]:1");
	expect_endpoint("tcp://socket-proxy:2375", "tcp://socket-proxy:2375");
	expect_endpoint("tcp://docker.internal.example:65535",
	    "tcp://docker.internal.example:65535");
	expect_endpoint("tcp://a1.b-2.c:80", "tcp://a1.b-2.c:80");
	/* unix:// is unchanged: the path alone. */
	expect_endpoint("unix:///run/docker.sock", "/run/docker.sock");
}

static void
test_tcp_refused(void **state)
{
	static const struct {
		const char	*host, *why;
	} bad[] = {
		{ "tcp://", "a host and a port are required (tcp://HOST:PORT)" },
		{ "tcp://host", "a port is required (tcp://HOST:PORT)" },
		{ "tcp://host:", "the port must be a number from 1 to 65535, "
		    "and nothing may follow it" },
		{ "tcp://[::1", "an IPv6 address must end with ']'" },
		{ "tcp://[::1]", "a port is required (tcp://HOST:PORT)" },
		{ "tcp://[::1]2375", "a port is required (tcp://HOST:PORT)" },
		{ "tcp://[host]:1", "not an IPv6 address between the brackets" },
		{ "tcp://[]:1", "not an IPv6 address between the brackets" },
		{ "tcp://[127.0.0.1]:1",
		    "not an IPv6 address between the brackets" },
		{ "tcp://::1:2375", "the host is neither an IPv4 address, a "
		    "bracketed IPv6 address nor a host name" },
		{ "tcp://:2375", "the host is neither an IPv4 address, a "
		    "bracketed IPv6 address nor a host name" },
		{ "tcp://300.1.1.1:1", "the host is neither an IPv4 address, a "
		    "bracketed IPv6 address nor a host name" },
		{ "tcp://10.1:1", "the host is neither an IPv4 address, a "
		    "bracketed IPv6 address nor a host name" },
		{ "tcp://-a.b:1", "the host is neither an IPv4 address, a "
		    "bracketed IPv6 address nor a host name" },
		{ "tcp://a..b:1", "the host is neither an IPv4 address, a "
		    "bracketed IPv6 address nor a host name" },
		{ "tcp://user@host:1", "the host is neither an IPv4 address, a "
		    "bracketed IPv6 address nor a host name" },
		{ "tcp://h\xc3\xa9:1", "the host is neither an IPv4 address, a "
		    "bracketed IPv6 address nor a host name" },
		{ "tcp://host:0", "the port must be a number from 1 to 65535, "
		    "and nothing may follow it" },
		{ "tcp://host:70000", "the port must be a number from 1 to "
		    "65535, and nothing may follow it" },
		{ "tcp://host:000002375", "the port must be a number from 1 "
		    "to 65535, and nothing may follow it" },
		{ "tcp://host:+80", "the port must be a number from 1 to "
		    "65535, and nothing may follow it" },
		{ "tcp://host:-1", "the port must be a number from 1 to "
		    "65535, and nothing may follow it" },
		{ "tcp://host:80/", "the port must be a number from 1 to "
		    "65535, and nothing may follow it" },
		{ "tcp://host:80 ", "the port must be a number from 1 to "
		    "65535, and nothing may follow it" },
		{ "tcp://host:2375/v1.41", "the port must be a number from 1 "
		    "to 65535, and nothing may follow it" },
	};
	char	 want[1024];
	size_t	 i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(want, sizeof(want), MUST "got '%s': %s", bad[i].host,
		    bad[i].why);
		expect_error(bad[i].host, NULL, want);
	}
}

/* A name of 254 characters is one too many; 253 in labels of 63 is fine. */
static void
test_tcp_name_length(void **state)
{
	char	 name[300], host[400], want[800];

	memset(name, 'a', sizeof(name));
	name[63] = name[127] = name[191] = '.';
	name[253] = '\0';
	snprintf(host, sizeof(host), "tcp://%s:1", name);
	expect_endpoint(host, host);
	name[253] = 'a';
	name[254] = '\0';
	snprintf(host, sizeof(host), "tcp://%s:1", name);
	snprintf(want, sizeof(want), MUST "got '%s': the host name is "
	    "longer than 253 characters", host);
	expect_error(host, NULL, want);
}

static void
test_tls_refused(void **state)
{
	struct config	 c;
	const char	*want = "DOCKER_TLS_VERIFY is set, but TLS to Docker "
	    "is not supported: tcp:// is for a socket proxy on loopback or "
	    "a private network (docs/socket-proxy.md)";

	expect_error("tcp://127.0.0.1:2376", "1", want);
	expect_error("tcp://docker:2376", "0", want);
	/* Empty is unset, as for the Docker CLI; unix:// never uses TLS. */
	assert_int_equal(load(&c, "tcp://127.0.0.1:2375", ""), 0);
	config_free(&c);
	assert_int_equal(load(&c, "unix:///var/run/docker.sock", "1"), 0);
	config_free(&c);
	expect_error("https://docker:2376", NULL,
	    MUST "got 'https://docker:2376'");
	expect_error("tls://docker:2376", NULL,
	    MUST "got 'tls://docker:2376'");
}

/* The splitter dockerd-proxy uses before it resolves the name. */
static void
test_split(void **state)
{
	struct docker_host_tcp	 t;
	const char		*why = NULL;

	assert_int_equal(docker_host_tcp_parse("tcp://[::1]:9", &t, &why), 0);
	assert_string_equal(t.host, "::1");
	assert_int_equal(t.family, AF_INET6);
	assert_int_equal(t.port, 9);
	assert_int_equal(docker_host_tcp_parse("tcp://10.0.0.2:2375", &t,
	    &why), 0);
	assert_string_equal(t.host, "10.0.0.2");
	assert_int_equal(t.family, AF_INET);
	assert_int_equal(t.port, 2375);
	assert_int_equal(docker_host_tcp_parse("tcp://proxy:1", &t, &why), 0);
	assert_string_equal(t.host, "proxy");
	assert_int_equal(t.family, AF_UNSPEC);
	assert_int_equal(docker_host_tcp_parse("/var/run/docker.sock", &t,
	    &why), -1);
	assert_string_equal(why, "not tcp://");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tcp_accepted),
		cmocka_unit_test(test_tcp_refused),
		cmocka_unit_test(test_tcp_name_length),
		cmocka_unit_test(test_tls_refused),
		cmocka_unit_test(test_split),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
