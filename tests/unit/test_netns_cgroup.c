/*
 * Tests for netns-helper/netns_cgroup.c: a pid's cgroup file names the
 * container, in the forms Docker's two cgroup drivers write, and any
 * other file does not: another container, a prefix or suffix of the id,
 * a host process, truncated or garbled lines, NULs, oversize files.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "netns_cgroup.h"

#define ID	"c0abe65f61ece5660c333305eb9c96122aecc8632389aec5105c08f69b21ef71"
#define OTHER	"d0abe65f61ece5660c333305eb9c96122aecc8632389aec5105c08f69b21ef71"

static int
names(const char *text)
{
	return netns_cgroup_names(text, strlen(text), ID);
}

static void
test_docker_forms(void **state)
{
	(void)state;
	/* cgroup v2 with the cgroupfs driver (this project's CI host). */
	assert_int_equal(names("0::/docker/" ID "\n"), 1);
	/* v2 with the systemd driver. */
	assert_int_equal(names("0::/system.slice/docker-" ID ".scope\n"), 1);
	/* v1: every hierarchy names it. */
	assert_int_equal(names("12:pids:/docker/" ID "\n"
	    "1:name=systemd:/docker/" ID "\n0::/docker/" ID "\n"), 1);
	/* Docker inside a nested cgroup still ends in the id. */
	assert_int_equal(names("0::/kubepods/pod1/docker/" ID "\n"), 1);
	/* What the directories above are called is not the check. */
	assert_int_equal(names("0::/DOCKER/" ID "\n"), 1);
}

static void
test_other_processes(void **state)
{
	(void)state;
	assert_int_equal(names("0::/docker/" OTHER "\n"), 0);
	assert_int_equal(names("0::/user.slice/user-0.slice/session-1.scope\n"),
	    0);
	assert_int_equal(names("0::/\n"), 0);
	/* One hierarchy elsewhere is enough to refuse. */
	assert_int_equal(names("4:memory:/docker/" ID "\n"
	    "3:pids:/docker/" OTHER "\n"), 0);
	/* The id as a directory above the process, not its own cgroup. */
	assert_int_equal(names("0::/docker/" ID "/init\n"), 0);
	/* Prefixes, suffixes and near misses of both forms. */
	assert_int_equal(names("0::/docker/" ID "0\n"), 0);
	assert_int_equal(names("0::/docker/x" ID "\n"), 0);
	assert_int_equal(names("0::/docker-" ID ".scop\n"), 0);
	assert_int_equal(names("0::/docker-" ID ".scopes\n"), 0);
	assert_int_equal(names("0::/podman-" ID ".scope\n"), 0);
}

static void
test_malformed(void **state)
{
	char	 big[NETNS_CGROUP_MAX + 2];
	size_t	 n;

	(void)state;
	assert_int_equal(names(""), 0);
	assert_int_equal(names("\n"), 0);
	assert_int_equal(names("0::/docker/" ID), 0);	/* no newline */
	assert_int_equal(names("0::/docker/" ID "\n\n"), 0);
	assert_int_equal(names("0:/docker/" ID "\n"), 0);	/* one colon */
	assert_int_equal(names(":0:/docker/" ID "\n"), 0);
	assert_int_equal(names("0::docker/" ID "\n"), 0);	/* relative */
	assert_int_equal(names("0::\n"), 0);
	assert_int_equal(netns_cgroup_names("0::/docker/" ID "\n\0", 77, ID),
	    0);
	assert_int_equal(names("0::/docker/" ID "\r\n"), 0);
	/* The file whole, and one byte over the bound. */
	n = NETNS_CGROUP_MAX - 1;
	memset(big, '/', n);
	memcpy(big, "0::", 3);
	memcpy(big + n - 64 - 1, "/" ID, 65);
	big[n] = '\n';
	assert_int_equal(netns_cgroup_names(big, n + 1, ID), 1);
	memmove(big + 1, big, n + 1);
	big[1] = '0';
	assert_int_equal(netns_cgroup_names(big, n + 2, ID), 0);
}

static void
test_bad_ids(void **state)
{
	const char	*text = "0::/docker/" ID "\n";

	(void)state;
	assert_int_equal(netns_cgroup_names(text, strlen(text), ""), 0);
	assert_int_equal(netns_cgroup_names(text, strlen(text),
	    "C0ABE65F61ECE5660C333305EB9C96122AECC8632389AEC5105C08F69B21EF71"),
	    0);
	assert_int_equal(netns_cgroup_names(text, strlen(text), ID "0"), 0);
	assert_int_equal(netns_cgroup_names(text, strlen(text), "c0abe65f"),
	    0);
	/* Non-ASCII and invalid UTF-8 in a path are just another path. */
	assert_int_equal(names("0::/d\xc3\xa9/\xff\xfe" ID "\n"), 0);
	assert_int_equal(names("0::/d\xc3\xa9/\xff\xfe/" ID "\n"), 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_docker_forms),
		cmocka_unit_test(test_other_processes),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_bad_ids),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
