/*
 * Tests for common/config_pool.c: AGENT_SANDBOX_WARM_POOL's entries, and
 * the errors for everything it refuses (the value quoted, cut short).
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

static int
load(struct config *c, const char *pool, const char *max, char *err,
    size_t errlen)
{
	char	*envp[4];
	int	 r, n = 0;

	envp[n++] = strdup(KEYS);
	if (pool != NULL)
		envp[n++] = strdup(pool);
	if (max != NULL)
		envp[n++] = strdup(max);
	envp[n] = NULL;
	r = config_load(c, envp, err, errlen);
	while (n-- > 0)
		free(envp[n]);
	return r;
}

static void
test_entries(void **state)
{
	struct config	 c;
	char		 err[512];

	assert_int_equal(load(&c, NULL, NULL, err, sizeof(err)), 0);
	assert_int_equal(c.pool.count, 0);
	config_free(&c);
	assert_int_equal(load(&c, "AGENT_SANDBOX_WARM_POOL=", NULL, err,
	    sizeof(err)), 0);
	assert_int_equal(c.pool.count, 0);
	config_free(&c);
	assert_int_equal(load(&c, "AGENT_SANDBOX_WARM_POOL="
	    "registry:5000/team/py:3.13@sha256:ab=4,busybox=2", NULL, err,
	    sizeof(err)), 0);
	assert_int_equal(c.pool.count, 2);
	assert_string_equal(c.pool.images[0],
	    "registry:5000/team/py:3.13@sha256:ab");
	assert_int_equal(c.pool.counts[0], 4);
	assert_string_equal(c.pool.images[1], "busybox");
	assert_int_equal(c.pool.counts[1], 2);
	assert_int_equal(c.pool.total, 6);
	config_free(&c);
}

static void
expect_bad(const char *pool, const char *max, const char *want)
{
	struct config	 c;
	char		 err[512];

	if (load(&c, pool, max, err, sizeof(err)) == 0)
		fail_msg("%s accepted", pool);
	if (strstr(err, want) == NULL)
		fail_msg("%s: %s, not %s", pool, err, want);
}

static void
test_refused(void **state)
{
	char	 many[2048], *p;
	int	 i;

	expect_bad("AGENT_SANDBOX_WARM_POOL=busybox", NULL,
	    "each entry is IMAGE=COUNT, not busybox");
	expect_bad("AGENT_SANDBOX_WARM_POOL==3", NULL, "IMAGE=COUNT");
	expect_bad("AGENT_SANDBOX_WARM_POOL=busybox=1,", NULL, "IMAGE=COUNT");
	expect_bad("AGENT_SANDBOX_WARM_POOL=,busybox=1", NULL, "IMAGE=COUNT");
	expect_bad("AGENT_SANDBOX_WARM_POOL=busybox=0", NULL,
	    "the count of busybox must be a whole number in [1, 64]");
	expect_bad("AGENT_SANDBOX_WARM_POOL=busybox=65", NULL, "[1, 64]");
	expect_bad("AGENT_SANDBOX_WARM_POOL=busybox=-1", NULL, "[1, 64]");
	expect_bad("AGENT_SANDBOX_WARM_POOL=busybox=2x", NULL, "[1, 64]");
	expect_bad("AGENT_SANDBOX_WARM_POOL=busybox= 2", NULL, "[1, 64]");
	expect_bad("AGENT_SANDBOX_WARM_POOL=busybox=99999999999999999999",
	    NULL, "[1, 64]");
	expect_bad("AGENT_SANDBOX_WARM_POOL=busy box=1", NULL,
	    "busy box is not an image reference");
	expect_bad("AGENT_SANDBOX_WARM_POOL=a=b=1", NULL,
	    "a=b is not an image reference");
	expect_bad("AGENT_SANDBOX_WARM_POOL=caf\xc3\xa9=1", NULL,
	    "not an image reference");
	expect_bad("AGENT_SANDBOX_WARM_POOL=x\xff=1", NULL,
	    "not an image reference");
	expect_bad("AGENT_SANDBOX_WARM_POOL=busybox=1,busybox=2", NULL,
	    "names busybox twice");
	expect_bad("AGENT_SANDBOX_WARM_POOL=busybox=15,py=6", NULL,
	    "more sandboxes than max_sandboxes allows");
	expect_bad("AGENT_SANDBOX_WARM_POOL=busybox=3",
	    "AGENT_SANDBOX_MAX_SANDBOXES=2", "max_sandboxes");
	p = many + snprintf(many, sizeof(many), "AGENT_SANDBOX_WARM_POOL=");
	for (i = 0; i < 17; i++)
		p += snprintf(p, sizeof(many) - (size_t)(p - many), "%si%d=1",
		    i > 0 ? "," : "", i);
	expect_bad(many, "AGENT_SANDBOX_MAX_SANDBOXES=100", "at most 16");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_entries),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
