/*
 * Tests for common/ids.c: the shape of sandbox and snapshot ids (API.md
 * §3.1), with the bypasses of PRIVSEP.md §2.10 (uppercase, %2e%2e, "//",
 * "..", lengths, an embedded NUL), and the ids id_make() draws.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ids.h"

#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

struct id_case {
	const char	*id;
	int		 ok;
};

static const struct id_case sandbox_cases[] = {
	{ "sb_0123456789abcdef", 1 },
	{ "sb_ffffffffffffffff", 1 },
	{ "sb_0000000000000000", 1 },
	{ "sb_0123456789ABCDEF", 0 },	/* uppercase */
	{ "SB_0123456789abcdef", 0 },
	{ "sb_0123456789abcdeF", 0 },
	{ "sb_0123456789abcde", 0 },	/* too short */
	{ "sb_0123456789abcdef0", 0 },	/* too long */
	{ "sb_0123456789abcdef/", 0 },
	{ "sb_0123456789abcdef\n", 0 },
	{ "sb_%2e%2e%2e%2e%2e%2e", 0 },
	{ "sb_%2e%2e/containers", 0 },
	{ "sb_..//............", 0 },
	{ "sb_//0123456789abcd", 0 },
	{ "sb_0123456789abcdeg", 0 },	/* not hex */
	{ "sb_0123456789abcd-f", 0 },
	{ "sb_0123456789abc ef", 0 },
	{ " sb_0123456789abcdef", 0 },
	{ "sb-0123456789abcdef", 0 },
	{ "xb_0123456789abcdef", 0 },
	{ "xx_0123456789abcdef", 0 },
	{ "0123456789abcdef", 0 },
	{ "sb_", 0 },
	{ "sb", 0 },
	{ "", 0 },
	{ "snap_0123456789abcdef", 0 },
};

static const struct id_case snapshot_cases[] = {
	{ "snap_9a8b7c6d5e4f3a2b", 1 },
	{ "snap_0123456789abcdef", 1 },
	{ "snap_0000000000000000", 1 },
	{ "snap_ffffffffffffffff", 1 },
	{ "snap_9A8B7C6D5E4F3A2B", 0 },	/* uppercase */
	{ "snap_0123456789ABCDEF", 0 },
	{ "SNAP_9a8b7c6d5e4f3a2b", 0 },
	{ "snap_9a8b7c6d5e4f3a2", 0 },	/* too short */
	{ "snap_9a8b7c6d5e4f3a2b0", 0 },	/* too long */
	{ "snap_", 0 },
	{ "snap", 0 },
	{ "", 0 },
	{ "../sandboxes/x", 0 },
	{ "snap_../sandboxes/xx", 0 },
	{ "snap_../../etc/pas", 0 },
	{ "snap_0123456789abcde/", 0 },
	{ "snap_9a8b7c6d5e4f3a2b/", 0 },
	{ "snap_9a8b7c6d5e4f3a2b.json", 0 },
	{ "snap_9a8b7c6d5e4f3a2g", 0 },	/* not hex */
	{ "snap_ghijklmnopqrstuv", 0 },
	{ "snap_9a8b7c6d 5e4f3a2", 0 },
	{ "snap_%2e%2e%2e%2e%2e%2e%2e", 0 },
	{ "snap-9a8b7c6d5e4f3a2b", 0 },
	{ "sb_9a8b7c6d5e4f3a2b", 0 },
};

static void
test_sandbox_ids(void **state)
{
	char	 with_nul[] = "sb_0123456789abcdef";
	size_t	 i;

	for (i = 0; i < NELEM(sandbox_cases); i++)
		if (id_is_sandbox(sandbox_cases[i].id) != sandbox_cases[i].ok)
			fail_msg("id_is_sandbox(\"%s\")", sandbox_cases[i].id);
	assert_false(id_is_sandbox(NULL));
	with_nul[10] = '\0';
	assert_false(id_is_sandbox(with_nul));
	assert_int_equal(strlen(SANDBOX_ID_PREFIX) + ID_HEX_LEN,
	    SANDBOX_ID_LEN);
}

static void
test_snapshot_ids(void **state)
{
	char	 with_nul[] = "snap_0123456789abcdef";
	size_t	 i;

	for (i = 0; i < NELEM(snapshot_cases); i++)
		if (id_is_snapshot(snapshot_cases[i].id) !=
		    snapshot_cases[i].ok)
			fail_msg("id_is_snapshot(\"%s\")",
			    snapshot_cases[i].id);
	assert_false(id_is_snapshot(NULL));
	with_nul[12] = '\0';
	assert_false(id_is_snapshot(with_nul));
	assert_int_equal(strlen(SNAPSHOT_ID_PREFIX) + ID_HEX_LEN,
	    SNAPSHOT_ID_LEN);
}

/* Drawn ids have the shape, differ, and use every hex digit. */
static void
test_container_ids(void **state)
{
	const char *ok =
	    "c0abe65f61ece5660c333305eb9c96122aecc8632389aec5105c08f69b21ef71";
	char	 buf[80];

	(void)state;
	assert_true(id_is_container(ok));
	assert_false(id_is_container(NULL));
	assert_false(id_is_container(""));
	assert_false(id_is_container("c0abe65f61ec"));	/* the short form */
	snprintf(buf, sizeof(buf), "%s0", ok);
	assert_false(id_is_container(buf));
	snprintf(buf, sizeof(buf), "%.63s", ok);
	assert_false(id_is_container(buf));
	snprintf(buf, sizeof(buf), "%.63sF", ok);
	assert_false(id_is_container(buf));
	snprintf(buf, sizeof(buf), "%.63s\xc3", ok);
	assert_false(id_is_container(buf));
	assert_false(id_is_container("sb_0123456789abcdef"));
}

static void
test_make(void **state)
{
	char	 a[SANDBOX_ID_LEN + 1], b[SANDBOX_ID_LEN + 1];
	char	 s[SNAPSHOT_ID_LEN + 1], seen[16];
	int	 i, k;

	assert_int_equal(id_make(a, sizeof(a), SANDBOX_ID_PREFIX), 0);
	assert_int_equal(id_make(b, sizeof(b), SANDBOX_ID_PREFIX), 0);
	assert_true(id_is_sandbox(a));
	assert_true(id_is_sandbox(b));
	assert_string_not_equal(a, b);
	assert_int_equal(id_make(s, sizeof(s), SNAPSHOT_ID_PREFIX), 0);
	assert_true(id_is_snapshot(s));
	assert_false(id_is_sandbox(s));
	memset(seen, 0, sizeof(seen));
	for (i = 0; i < 200; i++) {
		assert_int_equal(id_make(a, sizeof(a), SANDBOX_ID_PREFIX), 0);
		assert_true(id_is_sandbox(a));
		for (k = 3; k < SANDBOX_ID_LEN; k++)
			seen[a[k] <= '9' ? a[k] - '0' : a[k] - 'a' + 10] = 1;
	}
	for (k = 0; k < 16; k++)
		assert_true(seen[k]);
}

/* One byte short is refused and nothing is written. */
static void
test_make_small(void **state)
{
	char	 buf[SANDBOX_ID_LEN + 1];

	memset(buf, 'x', sizeof(buf));
	assert_int_equal(id_make(buf, SANDBOX_ID_LEN, SANDBOX_ID_PREFIX), -1);
	assert_int_equal(buf[0], 'x');
	assert_int_equal(id_make(buf, sizeof(buf), SNAPSHOT_ID_PREFIX), -1);
	assert_int_equal(buf[0], 'x');
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sandbox_ids),
		cmocka_unit_test(test_snapshot_ids),
		cmocka_unit_test(test_container_ids),
		cmocka_unit_test(test_make),
		cmocka_unit_test(test_make_small),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
