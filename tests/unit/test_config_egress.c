/*
 * Tests for common/config_egress.c: what "network": true means, the
 * egress proxy's nameservers, the operator's public ranges and the log's
 * size, with the errors for what each refuses.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"

#define KEYS	"AGENT_SANDBOX_API_KEYS=aaaaaaaaaaaaaaaa"

/* One setting beside the key; 0 or -1 with err as config_load wrote it. */
static int
load(struct config *c, const char *setting, char *err, size_t errlen)
{
	char	*envp[3];
	int	 r, n = 0;

	envp[n++] = strdup(KEYS);
	if (setting != NULL)
		envp[n++] = strdup(setting);
	envp[n] = NULL;
	r = config_load(c, envp, err, errlen);
	while (n-- > 0)
		free(envp[n]);
	return r;
}

static void
refused(const char *setting, const char *want)
{
	struct config	 c;
	char		 err[512];

	assert_int_equal(load(&c, setting, err, sizeof(err)), -1);
	if (strstr(err, want) == NULL)
		fail_msg("%s: \"%s\" lacks \"%s\"", setting, err, want);
	config_free(&c);
}

static void
test_defaults(void **state)
{
	struct config	 c;
	char		 err[512];

	assert_int_equal(load(&c, NULL, err, sizeof(err)), 0);
	assert_string_equal(c.network_true, "public");
	assert_string_equal(c.egress_dns, "");
	assert_string_equal(c.egress_public, "");
	assert_int_equal(c.egress_log_size, 256);
	config_free(&c);
}

static void
test_accepted(void **state)
{
	struct config	 c;
	char		 err[512];

	assert_int_equal(load(&c, "AGENT_SANDBOX_NETWORK_TRUE=bridge", err,
	    sizeof(err)), 0);
	assert_string_equal(c.network_true, "bridge");
	config_free(&c);
	assert_int_equal(load(&c, "AGENT_SANDBOX_EGRESS_DNS=10.0.0.53, "
	    "2001:db8::53", err, sizeof(err)), 0);
	assert_string_equal(c.egress_dns, "10.0.0.53, 2001:db8::53");
	config_free(&c);
	assert_int_equal(load(&c, "AGENT_SANDBOX_EGRESS_PUBLIC=198.18.0.0/15,"
	    "2001:db8::/32", err, sizeof(err)), 0);
	config_free(&c);
	assert_int_equal(load(&c, "AGENT_SANDBOX_EGRESS_LOG_SIZE=65536", err,
	    sizeof(err)), 0);
	assert_int_equal(c.egress_log_size, 65536);
	config_free(&c);
}

static void
test_refused(void **state)
{
	refused("AGENT_SANDBOX_NETWORK_TRUE=allowlist",
	    "AGENT_SANDBOX_NETWORK_TRUE");
	refused("AGENT_SANDBOX_EGRESS_DNS=dns.example", "EGRESS_DNS");
	refused("AGENT_SANDBOX_EGRESS_DNS=10.0.0.1:53", "EGRESS_DNS");
	refused("AGENT_SANDBOX_EGRESS_DNS=1.1.1.1,1.0.0.1,8.8.8.8,8.8.4.4",
	    "more than 3 nameservers");
	refused("AGENT_SANDBOX_EGRESS_PUBLIC=10.0.0.1/8",
	    "AGENT_SANDBOX_EGRESS_PUBLIC: ");
	refused("AGENT_SANDBOX_EGRESS_PUBLIC=not-a-range",
	    "AGENT_SANDBOX_EGRESS_PUBLIC: ");
	refused("AGENT_SANDBOX_EGRESS_LOG_SIZE=0", "EGRESS_LOG_SIZE");
	refused("AGENT_SANDBOX_EGRESS_LOG_SIZE=65537", "EGRESS_LOG_SIZE");
	refused("AGENT_SANDBOX_EGRESS_LOG_SIZE=many", "EGRESS_LOG_SIZE");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_accepted),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
