/*
 * GET /metrics reads each daemon's resident set from a /proc/self/statm
 * opened before the jail: that read, pread at offset 0, again and again,
 * must pass apid's, managerd's and dockerd-proxy's real seccomp filters
 * (kill mode), in a forked child each.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "memcheck.h"
#include "metrics.h"
#include "seccomp.h"
#include "seccomp_child.h"

static int
rss_child(void *arg)
{
	load_fn		 load = (load_fn)(uintptr_t)arg;
	uint64_t	 a, b;
	volatile char	*p;
	size_t		 i;
	int		 fd;

	if ((fd = metric_rss_open()) == -1)
		return 1;
	if (load(SECCOMP_MODE_KILL) == -1)
		return 2;
	if ((a = metric_rss_bytes(fd)) == 0)
		return 3;
	/* A second read starts at offset 0 again, and sees the growth. */
	if ((p = malloc(8 << 20)) == NULL)
		return 4;
	/* volatile: the compiler may not drop pages nobody reads. */
	for (i = 0; i < (8 << 20); i += 4096)
		p[i] = 1;
	if ((b = metric_rss_bytes(fd)) < a + (4 << 20))
		return 5;
	free((void *)(uintptr_t)p);
	return 0;
}

static void
expect_rss(load_fn load, const char *what)
{
	expect_exit_zero(run_child(rss_child, (void *)(uintptr_t)load), what);
}

static void
test_apid(void **state)
{
	expect_rss(apid_seccomp_load, "apid");
}

static void
test_managerd(void **state)
{
	expect_rss(managerd_seccomp_load, "managerd");
}

static void
test_proxy(void **state)
{
	expect_rss(proxy_seccomp_load, "dockerd-proxy");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_apid),
		cmocka_unit_test(test_managerd),
		cmocka_unit_test(test_proxy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
