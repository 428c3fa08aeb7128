/*
 * Tests for managerd/allowlist.c: the image allowlist of API.md §8.6 and
 * item 43 of REFERENCE-TESTS.md.  The table's expected results come from
 * CPython 3.11's fnmatch.fnmatchcase.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "managerd.h"

struct glob_case {
	const char	*pattern;
	const char	*string;
	int		 want;
};

static void
expect_glob(const char *pattern, const char *string, int want)
{
	if (glob_match(pattern, string) != want)
		fail_msg("glob_match(\"%s\", \"%s\") != %d", pattern, string,
		    want);
}

/* Item 43. */
static void
test_reference_allowlist(void **state)
{
	char		 p1[] = "python:*", p2[] = "docker.io/library/*";
	char *const	 patterns[] = { p1, p2 };

	assert_true(image_allowed(patterns, 2, "python:3.12-slim"));
	assert_false(image_allowed(patterns, 2, "evil/miner:latest"));
	assert_true(image_allowed(patterns, 2,
	    "docker.io/library/alpine:3.20"));
	/* No normalization to docker.io/library/... */
	assert_false(image_allowed(patterns, 2, "library/python:3.12"));
	assert_false(image_allowed(patterns + 1, 1, "python:3.12-slim"));
}

/* By parts: a '*' stays within a path component, a tag or a digest. */
static void
test_parts(void **state)
{
	static const struct glob_case	 cases[] = {
		{ "python:*", "python:3.12-slim", 1 },
		{ "python:*", "python:5000/x/y", 0 },
		{ "python:*", "python:5000/x/y:1", 0 },
		{ "python:*", "python", 0 },
		{ "python:*", "python@sha256:00", 0 },
		{ "python:*", "python:3@sha256:00", 0 },
		{ "python:*@*", "python:3@sha256:00", 1 },
		{ "python@*", "python@sha256:00", 1 },
		{ "python", "python", 1 },
		{ "python", "python:3", 0 },
		{ "*", "python", 1 },
		{ "*", "evil/miner", 0 },
		{ "*:*", "evil/miner:latest", 0 },
		{ "*/*:*", "evil/miner:latest", 1 },
		{ "docker.io/library/*", "docker.io/library/alpine", 1 },
		{ "docker.io/library/*", "docker.io/library/alpine:3.20", 0 },
		{ "docker.io/library/*:*", "docker.io/library/alpine:3.20", 1 },
		{ "docker.io/library/*:*", "docker.io/library/a/b:1", 0 },
		{ "registry:5000/team/*:1.?", "registry:5000/team/app:1.2", 1 },
		{ "registry:5000/team/*:1.?", "registry:5000/team/app:1.22", 0 },
		{ "registry:*/team/app", "registry:5000/team/app", 1 },
		{ "py[a-z]hon:3*", "python:3.12", 1 },
		{ "", "", 1 },
		{ "", "x", 0 },
		{ "a/", "a/", 1 },
		{ "a/", "a", 0 },
	};
	char		 buf[256], *pattern[1];
	size_t		 i;
	char		 deep[200];

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		strlcpy(buf, cases[i].pattern, sizeof(buf));
		pattern[0] = buf;
		if (image_allowed_parts(pattern, 1, cases[i].string) !=
		    cases[i].want)
			fail_msg("parts \"%s\" \"%s\" != %d", cases[i].pattern,
			    cases[i].string, cases[i].want);
	}
	/* Past 32 parts nothing matches, not even its own text. */
	for (i = 0; i < 40; i++) {
		deep[2 * i] = 'a';
		deep[2 * i + 1] = '/';
	}
	deep[79] = '\0';
	pattern[0] = deep;
	assert_false(image_allowed_parts(pattern, 1, deep));
	deep[2 * 20 - 1] = '\0';
	assert_true(image_allowed_parts(pattern, 1, deep));
	assert_false(image_allowed_parts(NULL, 0, "python"));
}

static void
test_default_and_empty(void **state)
{
	char		 s1[] = "*";
	char *const	 star[] = { s1 };
	char *const	 none[] = { NULL };

	assert_true(image_allowed(star, 1, "evil/miner:latest"));
	assert_true(image_allowed(star, 1, "registry:5000/a/b@sha256:00"));
	assert_true(image_allowed(star, 1, ""));
	assert_false(image_allowed(none, 0, "python:3.12-slim"));
	assert_false(image_allowed(NULL, 0, "python:3.12-slim"));
}

static void
test_star_spans_everything(void **state)
{
	expect_glob("*", "a/b:c/d", 1);
	expect_glob("a*", "a/b:c", 1);
	expect_glob("*:latest", "ghcr.io/x/y:latest", 1);
	expect_glob("ghcr.io/*", "ghcr.io/x/y:1", 1);
	expect_glob("ghcr.io/*", "ghcr.iox/y:1", 0);
	expect_glob("a?c", "a/c", 1);
	expect_glob("a?c", "a:c", 1);
	expect_glob("a?c", "ac", 0);
}

static void
test_sets(void **state)
{
	expect_glob("[abc]", "a", 1);
	expect_glob("[abc]", "c", 1);
	expect_glob("[abc]", "d", 0);
	expect_glob("[abc]", "", 0);
	expect_glob("[abc]", "ab", 0);
	expect_glob("[a-z]", "m", 1);
	expect_glob("[a-z]", "M", 0);
	expect_glob("[!abc]", "d", 1);
	expect_glob("[!abc]", "b", 0);
	expect_glob("[!a-z]", "0", 1);
	expect_glob("[!a-z]", "q", 0);
	/* Case-sensitive. */
	expect_glob("Python", "python", 0);
}

static void
test_edge_cases(void **state)
{
	/* An unclosed '[' is a literal. */
	expect_glob("[", "[", 1);
	expect_glob("a[b", "a[b", 1);
	expect_glob("a[b", "ab", 0);
	/* ']' first in a set is a member. */
	expect_glob("[]]", "]", 1);
	expect_glob("[!]]", "]", 0);
	expect_glob("[!]]", "x", 1);
	expect_glob("[]", "[]", 1);
	/* Backslash is an ordinary character. */
	expect_glob("a\\*", "a\\bc", 1);
	expect_glob("a\\*", "a*", 0);
	expect_glob("[\\]", "\\", 1);
}

/* Many stars and a near miss must not take exponential time. */
static void
test_no_blowup(void **state)
{
	char	 pat[4096], str[8192];
	size_t	 i;

	for (i = 0; i + 2 < sizeof(pat); i += 2)
		memcpy(pat + i, "*a", 2);
	pat[i] = 'b';
	pat[i + 1] = '\0';
	memset(str, 'a', sizeof(str) - 1);
	str[sizeof(str) - 1] = '\0';
	expect_glob(pat, str, 0);
	str[sizeof(str) - 2] = 'b';
	expect_glob(pat, str, 1);
}

static void
test_python_table(void **state)
{
	static const struct glob_case cases[] = {
		{ "python:*", "python:3.12-slim", 1 },
		{ "docker.io/library/*", "python:3.12-slim", 0 },
		{ "python:*", "evil/miner:latest", 0 },
		{ "docker.io/library/*", "evil/miner:latest", 0 },
		{ "*", "evil/miner:latest", 1 },
		{ "*", "", 1 },
		{ "", "", 1 },
		{ "", "a", 0 },
		{ "a*", "a", 1 },
		{ "*a", "ba/a", 1 },
		{ "a*b", "a/x:y/b", 1 },
		{ "a*b", "a/x:y/bc", 0 },
		{ "*:*", "registry:5000/x:tag", 1 },
		{ "*/*", "noslash", 0 },
		{ "*/*", "a/b/c", 1 },
		{ "python:3.1?", "python:3.12", 1 },
		{ "python:3.1?", "python:3.1", 0 },
		{ "python:3.1?", "python:3.123", 0 },
		{ "?", "\xc3\xa9", 1 },
		{ "??", "\xc3\xa9", 0 },
		{ "[abc]", "b", 1 },
		{ "[abc]", "d", 0 },
		{ "[a-c]x", "bx", 1 },
		{ "[a-c]x", "dx", 0 },
		{ "[!abc]", "d", 1 },
		{ "[!abc]", "a", 0 },
		{ "[!a-c]", "/", 1 },
		{ "[]]", "]", 1 },
		{ "[]]", "a", 0 },
		{ "[!]]", "]", 0 },
		{ "[!]]", "a", 1 },
		{ "[]a]", "a", 1 },
		{ "[]-a]", "^", 1 },
		{ "[a", "[a", 1 },
		{ "[a", "a", 0 },
		{ "a[", "a[", 1 },
		{ "[!", "[!", 1 },
		{ "[]", "[]", 1 },
		{ "[!]", "[!]", 1 },
		{ "[!]", "a", 0 },
		{ "\\*", "\\x", 1 },
		{ "\\*", "*", 0 },
		{ "a\\b", "a\\b", 1 },
		{ "[\\]", "\\", 1 },
		{ "[a-]", "-", 1 },
		{ "[-a]", "-", 1 },
		{ "[!-]", "-", 0 },
		{ "[!-]", "x", 1 },
		{ "[z-a]", "z", 0 },
		{ "[z-a]", "-", 0 },
		{ "[!z-a]", "q", 1 },
		{ "[z-a!x]", "x", 0 },
		{ "[z-a!x]", "y", 1 },
		{ "[a-c-e]", "d", 0 },
		{ "[a-c-e]", "-", 1 },
		{ "[a-c-e]", "e", 1 },
		{ "[^a]", "^", 1 },
		{ "[^a]", "b", 0 },
		{ "[[a]", "[", 1 },
		{ "[a&&b]", "&", 1 },
		{ "[a|b]", "|", 1 },
		{ "[~]", "~", 1 },
		{ "*[0-9]", "v10", 1 },
		{ "*[0-9]", "v1a", 0 },
		{ "**a**", "xxaxx", 1 },
		{ "*a*a*a*", "aaa", 1 },
		{ "*a*a*a*", "aa", 0 },
		{ "a*a*a*a*a*a*a*a*b",
		    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 0 },
		{ "*.*", "a\nb.c", 1 },
		{ "?", "\n", 1 },
		{ "[\xc3\xa9-\xc3\xbc]", "\xc3\xb6", 1 },
		{ "[\xc3\xa9-\xc3\xbc]", "z", 0 },
		{ "Python:*", "python:3", 0 },
		{ "python:*", "Python:3", 0 },
		{ "[.]x", ".x", 1 },
		{ "docker.io/library/python:3.1[0-2]*",
		    "docker.io/library/python:3.11-slim", 1 },
		{ "docker.io/library/python:3.1[0-2]*",
		    "docker.io/library/python:3.13", 0 },
	};
	size_t	 i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_glob(cases[i].pattern, cases[i].string, cases[i].want);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reference_allowlist),
		cmocka_unit_test(test_default_and_empty),
		cmocka_unit_test(test_parts),
		cmocka_unit_test(test_star_spans_everything),
		cmocka_unit_test(test_sets),
		cmocka_unit_test(test_edge_cases),
		cmocka_unit_test(test_no_blowup),
		cmocka_unit_test(test_python_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
