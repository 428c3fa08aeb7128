/*
 * Tests for managerd/paths.c: path normalisation and the write rule of
 * API.md §6.1, group I of REFERENCE-TESTS.md (items 59-64).  Expected
 * strings come from CPython 3.11's posixpath.normpath.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "managerd.h"

#define OUTLEN		4096
#define ROUNDS		20000
#define MAXSEGS		12

struct path_case {
	const char	*in;
	const char	*want;
};

static void
expect_norm(const char *in, const char *want)
{
	char	 out[OUTLEN];

	memset(out, 'x', sizeof(out));
	if (path_normalize(in, out, sizeof(out)) != 0)
		fail_msg("normalize(\"%s\") failed", in);
	if (strcmp(out, want) != 0)
		fail_msg("normalize(\"%s\") = \"%s\", want \"%s\"", in, out,
		    want);
}

/* Item 59. */
static void
test_examples(void **state)
{
	expect_norm("main.py", "/workspace/main.py");
	expect_norm("src/../main.py", "/workspace/main.py");
	expect_norm("/etc/os-release", "/etc/os-release");
	expect_norm("/workspace/a//b/", "/workspace/a/b");
}

/* posixpath.normpath(posixpath.join("/workspace", p)) for relative p. */
static void
test_python_table(void **state)
{
	static const struct path_case cases[] = {
		{ "/", "/" },
		{ "//", "//" },
		{ "///", "/" },
		{ "////", "/" },
		{ "/..", "/" },
		{ "/../..", "/" },
		{ "//..", "//" },
		{ "///..", "/" },
		{ "//etc/x", "//etc/x" },
		{ "///etc/x", "/etc/x" },
		{ "////etc/x", "/etc/x" },
		{ "//workspace/x", "//workspace/x" },
		{ "..", "/" },
		{ "../..", "/" },
		{ "../etc/passwd", "/etc/passwd" },
		{ ".", "/workspace" },
		{ "./", "/workspace" },
		{ "./a/./b/.", "/workspace/a/b" },
		{ "a/b/../../..", "/" },
		{ "a/b/../../../x", "/x" },
		{ "/a/b/c/../../d", "/a/d" },
		{ "/./.", "/" },
		{ "/.//./", "/" },
		{ "/a/.../b", "/a/.../b" },
		{ "/a/..b/c", "/a/..b/c" },
		{ "/a/b..", "/a/b.." },
		{ "/a/.b/./c/", "/a/.b/c" },
		{ "a//b///c////", "/workspace/a/b/c" },
		{ "/workspace", "/workspace" },
		{ "/workspace/..", "/" },
		{ "/workspace/../workspace/x", "/workspace/x" },
		{ "/workspacex/a", "/workspacex/a" },
		{ "workspace", "/workspace/workspace" },
		{ "..workspace", "/workspace/..workspace" },
		{ "/workspace/./", "/workspace" },
		{ "//workspace/../x", "//x" },
		{ "a/../../workspace/b", "/workspace/b" },
		{ "/a/b/c/d/../../../../../..", "/" },
		{ "~/x", "/workspace/~/x" },
		{ "a\\..\\b", "/workspace/a\\..\\b" },
		{ " /x", "/workspace/ /x" },
		{ "/ /../x", "/x" },
		{ "\xc3\xa9/../\xc3\xbc", "/workspace/\xc3\xbc" },
	};
	size_t	 i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_norm(cases[i].in, cases[i].want);
}

/* Item 60 (and 64 by hand): empty paths and NUL bytes are refused. */
static void
test_empty_and_nul(void **state)
{
	char	 out[OUTLEN];

	errno = 0;
	assert_int_equal(path_normalize("", out, sizeof(out)), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(path_normalize_len("", 0, out, sizeof(out)), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(path_normalize_len("a\0b", 3, out, sizeof(out)), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(path_normalize_len("/x\0", 3, out, sizeof(out)), -1);
	assert_int_equal(path_normalize_len("\0", 1, out, sizeof(out)), -1);
	/* The length is what counts, not a terminator. */
	assert_int_equal(path_normalize_len("abc", 2, out, sizeof(out)), 0);
	assert_string_equal(out, "/workspace/ab");
}

static void
test_too_long(void **state)
{
	char	 out[16], *big;
	size_t	 n = 10000;

	/* "/workspace/abcd" is 15 bytes: fits exactly, one more does not. */
	assert_int_equal(path_normalize("abcd", out, sizeof(out)), 0);
	assert_string_equal(out, "/workspace/abcd");
	errno = 0;
	assert_int_equal(path_normalize("abcde", out, sizeof(out)), -1);
	assert_int_equal(errno, ENAMETOOLONG);
	assert_int_equal(path_normalize("/", out, 1), -1);
	assert_int_equal(errno, ENAMETOOLONG);

	/* A long input whose result is short is fine. */
	big = malloc(n + 8);
	assert_non_null(big);
	memset(big, 'a', n);
	memcpy(big + n, "/../x", 6);
	assert_int_equal(path_normalize(big, out, sizeof(out)), 0);
	assert_string_equal(out, "/workspace/x");
	big[n] = '\0';
	errno = 0;
	assert_int_equal(path_normalize(big, out, sizeof(out)), -1);
	assert_int_equal(errno, ENAMETOOLONG);
	free(big);
}

static int
write_ok(const char *in, char *out)
{
	return path_normalize(in, out, OUTLEN) == 0 && path_in_workspace(out);
}

/* Item 61. */
static void
test_write_targets(void **state)
{
	static const char *const rejected[] = {
		"../etc/passwd", "/etc/passwd", "/workspace", "/workspace/..",
		"/workspacex/a", "/workspace/", "/workspace/.", ".", "..",
		"//workspace/x", "/", "//", "a/../..", "/workspace/a/../..",
	};
	char	 out[OUTLEN];
	size_t	 i;

	for (i = 0; i < sizeof(rejected) / sizeof(rejected[0]); i++)
		if (write_ok(rejected[i], out))
			fail_msg("write to \"%s\" accepted", rejected[i]);
	assert_true(write_ok("a/b.txt", out));
	assert_string_equal(out, "/workspace/a/b.txt");
	assert_true(write_ok("/workspace/x", out));
	assert_string_equal(out, "/workspace/x");
	assert_true(write_ok("///workspace//x/", out));
	assert_string_equal(out, "/workspace/x");
	assert_true(write_ok("..workspace", out));
	assert_string_equal(out, "/workspace/..workspace");

	/* Only normalized input is judged; anything else is refused. */
	assert_false(path_in_workspace("/workspace/../etc"));
	assert_false(path_in_workspace("/workspace/./x"));
	assert_false(path_in_workspace("/workspace//x"));
	assert_false(path_in_workspace("/workspace/x/"));
	assert_false(path_in_workspace("workspace/x"));
	assert_true(path_in_workspace("/workspace/a/b"));
	assert_true(path_in_workspace("/workspace/..a"));
}

/*
 * An independent oracle: split into segments, resolve with a stack,
 * join.  Slower and simpler than paths.c.
 */
static void
oracle(const char *in, char *out)
{
	char	 buf[OUTLEN], *segs[OUTLEN], *s, *save;
	size_t	 n = 0, i, slashes = 0;

	if (in[0] != '/')
		snprintf(buf, sizeof(buf), "/workspace/%s", in);
	else
		snprintf(buf, sizeof(buf), "%s", in);
	while (buf[slashes] == '/')
		slashes++;
	for (s = strtok_r(buf, "/", &save); s != NULL;
	    s = strtok_r(NULL, "/", &save)) {
		if (strcmp(s, ".") == 0)
			continue;
		if (strcmp(s, "..") == 0) {
			if (n > 0)
				n--;
			continue;
		}
		segs[n++] = s;
	}
	strcpy(out, slashes == 2 ? "//" : "/");
	for (i = 0; i < n; i++) {
		if (i > 0)
			strcat(out, "/");
		strcat(out, segs[i]);
	}
}

static void
random_path(char *buf, size_t len)
{
	static const char *const parts[] = {
		"a", "..", ".", "", "workspace", "/", "//", "b.txt", "...",
		"..a", "\xc3\xa9", " ", "workspacex", "\xe9", "a\nb c",
		"\xff\\",
	};
	size_t	 nparts = sizeof(parts) / sizeof(parts[0]);
	int	 i, n;

	buf[0] = '\0';
	n = 1 + random() % MAXSEGS;
	switch (random() % 4) {
	case 0:
		strlcat(buf, "/", len);
		break;
	case 1:
		strlcat(buf, "//", len);
		break;
	default:
		break;
	}
	for (i = 0; i < n; i++) {
		if (i > 0)
			strlcat(buf, "/", len);
		strlcat(buf, parts[random() % nparts], len);
	}
	if (buf[0] == '\0')
		strlcpy(buf, "x", len);
}

static int
has_dotdot_segment(const char *p)
{
	size_t	 n;

	while (*p != '\0') {
		p += strspn(p, "/");
		n = strcspn(p, "/");
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return 1;
		p += n;
	}
	return 0;
}

/* Items 62 and 63, plus agreement with the oracle. */
static void
test_random_properties(void **state)
{
	char	 in[512], out[OUTLEN], again[OUTLEN], want[OUTLEN];
	int	 i, accepted = 0;

	srandom(59);
	for (i = 0; i < ROUNDS; i++) {
		random_path(in, sizeof(in));
		if (path_normalize(in, out, sizeof(out)) != 0)
			fail_msg("normalize(\"%s\") failed", in);
		if (out[0] != '/')
			fail_msg("\"%s\" -> \"%s\" not absolute", in, out);
		if (has_dotdot_segment(out))
			fail_msg("\"%s\" -> \"%s\" has ..", in, out);
		assert_int_equal(path_normalize(out, again, sizeof(again)), 0);
		if (strcmp(out, again) != 0)
			fail_msg("\"%s\" -> \"%s\" -> \"%s\"", in, out, again);
		oracle(in, want);
		if (strcmp(out, want) != 0)
			fail_msg("\"%s\" -> \"%s\", oracle \"%s\"", in, out,
			    want);
		if (path_in_workspace(out)) {
			accepted++;
			assert_memory_equal(out, "/workspace/", 11);
			assert_true(strlen(out) > 11);
		} else if (strncmp(out, "/workspace/", 11) == 0 &&
		    out[11] != '\0')
			fail_msg("\"%s\" wrongly refused", out);
	}
	/* The generator must have exercised both outcomes. */
	assert_true(accepted > ROUNDS / 20);
	assert_true(accepted < ROUNDS - ROUNDS / 20);
}

/* Item 64: a NUL anywhere refuses the path. */
static void
test_random_nul(void **state)
{
	char	 in[512], out[OUTLEN];
	size_t	 len;
	int	 i;

	srandom(64);
	for (i = 0; i < ROUNDS / 4; i++) {
		random_path(in, sizeof(in));
		len = strlen(in);
		in[random() % len] = '\0';
		errno = 0;
		assert_int_equal(path_normalize_len(in, len, out,
		    sizeof(out)), -1);
		assert_int_equal(errno, EINVAL);
	}
}

/* Names are bytes: every byte but NUL and '/' is a name's own. */
static void
test_odd_bytes(void **state)
{
	char	 in[300], want[320], out[OUTLEN];
	int	 c, n = 0;

	for (c = 1; c < 256; c++)
		if (c != '/')
			in[n++] = (char)c;
	in[n] = '\0';
	snprintf(want, sizeof(want), "/workspace/%s", in);
	assert_int_equal(path_normalize(in, out, sizeof(out)), 0);
	assert_string_equal(out, want);
	assert_true(path_in_workspace(out));
	/* A 255-byte Latin-1 name popped by "..", then 40 more bytes. */
	memset(in, 0xe9, 255);
	memcpy(in + 255, "/../", 4);
	memset(in + 259, 0xe9, 40);
	in[299] = '\0';
	assert_int_equal(path_normalize(in, out, sizeof(out)), 0);
	assert_int_equal(strlen(out), 11 + 40);
	assert_int_equal((unsigned char)out[50], 0xe9);
}

/* A deep path: 2000 components, half of them popped. */
static void
test_deep(void **state)
{
	char	*in, *out;
	size_t	 i;

	assert_non_null(in = malloc(2000 * 5 + 1));
	assert_non_null(out = malloc(MSG_MAX_PATH + 1));
	in[0] = '\0';
	for (i = 0; i < 1000; i++)
		strcat(in, "a/b/");
	for (i = 0; i < 1000; i++)
		strcat(in, "../");
	assert_int_equal(path_normalize(in, out, MSG_MAX_PATH + 1), 0);
	assert_int_equal(strlen(out), 10 + 2 * 1000 * 2 - 2000);
	assert_memory_equal(out, "/workspace/a/b/a/b", 18);
	free(in);
	free(out);
}

static void
test_join_link(void **state)
{
	char	 out[OUTLEN], link[OUTLEN];

	/* Relative: from the link's directory; absolute: replaces it. */
	assert_int_equal(path_join_link("/workspace/d/l", "../x\xe9/./y",
	    out, sizeof(out)), 0);
	assert_string_equal(out, "/workspace/x\xe9/y");
	assert_int_equal(path_join_link("/workspace/d/l", "/etc//a\n/",
	    out, sizeof(out)), 0);
	assert_string_equal(out, "/etc/a\n");
	assert_int_equal(path_join_link("/l", "../../y", out, sizeof(out)),
	    0);
	assert_string_equal(out, "/y");
	assert_int_equal(path_join_link("/w/l", "//z", out, sizeof(out)), 0);
	assert_string_equal(out, "//z");
	/* In place, as the read does. */
	strlcpy(link, "/workspace/a/l", sizeof(link));
	assert_int_equal(path_join_link(link, "b", link, sizeof(link)), 0);
	assert_string_equal(link, "/workspace/a/b");
	errno = 0;
	assert_int_equal(path_join_link("/workspace/l", "abcdefgh", out, 16),
	    -1);
	assert_int_equal(errno, ENAMETOOLONG);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_examples),
		cmocka_unit_test(test_python_table),
		cmocka_unit_test(test_empty_and_nul),
		cmocka_unit_test(test_too_long),
		cmocka_unit_test(test_write_targets),
		cmocka_unit_test(test_random_properties),
		cmocka_unit_test(test_random_nul),
		cmocka_unit_test(test_odd_bytes),
		cmocka_unit_test(test_deep),
		cmocka_unit_test(test_join_link),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
