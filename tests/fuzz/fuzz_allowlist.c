/*
 * The image allowlist's matchers (managerd/allowlist.c): glob_match,
 * fnmatchcase's globs on code points, and image_allowed_parts, the same
 * globs part by part.  Input: a pattern, a NUL, an image reference (any
 * bytes; a missing NUL makes the reference empty).
 *
 * Besides not crashing: a pattern with no '*', '?' or '[' matches
 * exactly itself; "*" matches anything; the reference with each of those
 * characters put in brackets matches the reference, whole and part by
 * part (up to the parts the matcher keeps); and a match still holds with
 * a '*' added to the pattern and anything to the reference.
 */
#include <stdlib.h>
#include <string.h>

#include "managerd.h"
#include "harness.h"

#define REF_PARTS_KEPT	29	/* '/'-separated parts parts_match takes */

/* s with every glob character made literal: "a*b" is "a[*]b". */
static char *
escape(const char *s)
{
	char	*out, *o;

	CHECK((out = malloc(3 * strlen(s) + 1)) != NULL);
	for (o = out; *s != '\0'; s++) {
		if (strchr("*?[", *s) != NULL) {
			*o++ = '[';
			*o++ = *s;
			*o++ = ']';
		} else
			*o++ = *s;
	}
	*o = '\0';
	return out;
}

static size_t
count(const char *s, char c)
{
	size_t	 n = 0;

	for (; *s != '\0'; s++)
		n += *s == c;
	return n;
}

static void
check_literal(const char *pattern, const char *ref)
{
	char	*lit = escape(ref), *pats[1];

	CHECK(glob_match(lit, ref) == 1);
	pats[0] = lit;
	if (count(ref, '/') < REF_PARTS_KEPT)
		CHECK(image_allowed_parts(pats, 1, ref) == 1);
	if (strpbrk(pattern, "*?[") == NULL)
		CHECK(glob_match(pattern, ref) == (strcmp(pattern, ref) == 0));
	free(lit);
}

static void
check_suffix(const char *pattern, const char *ref)
{
	char	*p2, *r2;
	size_t	 pl = strlen(pattern), rl = strlen(ref);

	if (glob_match(pattern, ref) != 1)
		return;
	CHECK((p2 = malloc(pl + 2)) != NULL && (r2 = malloc(rl + 2)) != NULL);
	memcpy(p2, pattern, pl);
	memcpy(p2 + pl, "*", 2);
	memcpy(r2, ref, rl);
	memcpy(r2 + rl, "x", 2);
	CHECK(glob_match(p2, r2) == 1);
	free(p2);
	free(r2);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	char		*buf, *pattern, *ref, *nul, *pats[1];
	int		 m;

	CHECK((buf = malloc(len + 2)) != NULL);
	memcpy(buf, data, len);
	buf[len] = buf[len + 1] = '\0';
	pattern = buf;
	nul = memchr(buf, '\0', len + 1);
	ref = nul + 1;
	m = glob_match(pattern, ref);
	CHECK(m == 0 || m == 1);
	CHECK(glob_match("*", ref) == 1);
	pats[0] = pattern;
	m = image_allowed_parts(pats, 1, ref);
	CHECK(m == 0 || m == 1);
	check_literal(pattern, ref);
	check_suffix(pattern, ref);
	free(buf);
	return 0;
}
