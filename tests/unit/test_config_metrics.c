/*
 * Tests for common/config_metrics.c: AGENT_SANDBOX_METRICS_KEY unset or
 * empty is no key; set, it must be at least 16 characters (counted as
 * Python counts them, like the API keys), without blanks or control
 * characters; and no message ever quotes it.
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

#define API_KEY		"aaaaaaaaaaaaaaaa"
#define METRICS_KEY	"mk-Zq8fT3vLp0WmX9rB"

static char	 err[512];

static int
load(struct config *c, const char *metrics_var)
{
	char	 api[] = "AGENT_SANDBOX_API_KEYS=" API_KEY;
	char	*envp[3] = { api, NULL, NULL };
	char	*var = NULL;
	int	 r;

	if (metrics_var != NULL) {
		assert_non_null(var = strdup(metrics_var));
		envp[1] = var;
	}
	r = config_load(c, envp, err, sizeof(err));
	free(var);
	return r;
}

static void
test_unset_and_empty(void **state)
{
	struct config	 c;

	assert_int_equal(load(&c, NULL), 0);
	assert_null(c.metrics_key);
	config_free(&c);
	assert_int_equal(load(&c, "AGENT_SANDBOX_METRICS_KEY="), 0);
	assert_null(c.metrics_key);
	config_free(&c);
}

static void
test_set(void **state)
{
	struct config	 c;

	assert_int_equal(load(&c, "AGENT_SANDBOX_METRICS_KEY=" METRICS_KEY),
	    0);
	assert_string_equal(c.metrics_key, METRICS_KEY);
	config_free(&c);
	/* 16 characters of two bytes each: long enough. */
	assert_int_equal(load(&c, "AGENT_SANDBOX_METRICS_KEY="
	    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
	    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"),
	    0);
	config_free(&c);
}

static void
expect_refused(const char *var, const char *secret, const char *want)
{
	struct config	 c;

	assert_int_equal(load(&c, var), -1);
	assert_string_equal(err, want);
	assert_null(strstr(err, secret));
	assert_null(c.metrics_key);
	config_free(&c);
}

static void
test_refused(void **state)
{
	expect_refused("AGENT_SANDBOX_METRICS_KEY=mk-short-123456",
	    "mk-short", "AGENT_SANDBOX_METRICS_KEY must be at least 16 "
	    "characters long");
	/* Eight two-byte characters are 16 bytes but 8 characters. */
	expect_refused("AGENT_SANDBOX_METRICS_KEY="
	    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9",
	    "\xc3\xa9\xc3\xa9", "AGENT_SANDBOX_METRICS_KEY must be at least "
	    "16 characters long");
	expect_refused("AGENT_SANDBOX_METRICS_KEY=" METRICS_KEY " x",
	    METRICS_KEY, "AGENT_SANDBOX_METRICS_KEY must not hold blanks or "
	    "control characters");
	expect_refused("AGENT_SANDBOX_METRICS_KEY= " METRICS_KEY,
	    METRICS_KEY, "AGENT_SANDBOX_METRICS_KEY must not hold blanks or "
	    "control characters");
	expect_refused("AGENT_SANDBOX_METRICS_KEY=" METRICS_KEY "\t",
	    METRICS_KEY, "AGENT_SANDBOX_METRICS_KEY must not hold blanks or "
	    "control characters");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unset_and_empty),
		cmocka_unit_test(test_set),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
