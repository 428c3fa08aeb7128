/*
 * AGENT_SANDBOX_KEYS_FILE (common/config_keys.c): unset is none, a path
 * must be absolute, and a keys file is enough without flat keys.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"

static char	 err[512];

static int
load(struct config *c, const char *a, const char *b)
{
	char	*envp[3] = { NULL, NULL, NULL };
	int	 r;

	if (a != NULL)
		envp[0] = strdup(a);
	if (b != NULL)
		envp[a != NULL] = strdup(b);
	r = config_load(c, envp, err, sizeof(err));
	free(envp[0]);
	free(envp[1]);
	return r;
}

static void
test_unset(void **state)
{
	struct config	 c;

	(void)state;
	assert_int_equal(load(&c, "AGENT_SANDBOX_API_KEYS="
	    "test-key-0123456789abcdef", NULL), 0);
	assert_string_equal(c.keys_file, "");
	config_free(&c);
}

static void
test_alone(void **state)
{
	struct config	 c;

	(void)state;
	assert_int_equal(load(&c, "AGENT_SANDBOX_KEYS_FILE=/etc/k.json",
	    NULL), 0);
	assert_string_equal(c.keys_file, "/etc/k.json");
	assert_int_equal(c.api_keys_count, 0);
	config_free(&c);
	/* Neither keys nor a file: still the reference's error. */
	assert_int_equal(load(&c, "AGENT_SANDBOX_KEYS_FILE=", NULL), -1);
	assert_non_null(strstr(err, "set AGENT_SANDBOX_API_KEYS"));
}

static void
test_relative(void **state)
{
	struct config	 c;

	(void)state;
	assert_int_equal(load(&c, "AGENT_SANDBOX_KEYS_FILE=keys.json",
	    "AGENT_SANDBOX_API_KEYS=test-key-0123456789abcdef"), -1);
	assert_non_null(strstr(err, "AGENT_SANDBOX_KEYS_FILE"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unset),
		cmocka_unit_test(test_alone),
		cmocka_unit_test(test_relative),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
