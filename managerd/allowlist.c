/*
 * The image allowlist (API.md §8.6): shell-style globs with the meaning
 * Python's fnmatch.fnmatchcase gives them, down to its odd corners.  Both
 * strings are compared as Unicode code points, as Python compares str;
 * bytes that are not UTF-8 stand for themselves the way surrogateescape
 * decodes them.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "managerd.h"
#include "utf8.h"

#define NOSTAR	SIZE_MAX

/* An element of a set once fnmatch.translate has rewritten it. */
struct set_elem {
	uint32_t	 cp;
	int		 join;	/* a '-' that makes a range */
};

static uint32_t *
decode(const char *str, size_t *np)
{
	const unsigned char	*s = (const unsigned char *)str;
	uint32_t		*cps;
	size_t			 len, off, n;

	len = strlen(str);
	if ((cps = reallocarray(NULL, len + 1, sizeof(*cps))) == NULL)
		return NULL;
	for (off = n = 0; off < len; n++)
		off += utf8_next_or_escape(s + off, len - off, &cps[n]);
	*np = n;
	return cps;
}

static size_t
find_dash(const uint32_t *p, size_t from, size_t to)
{
	for (; from < to; from++)
		if (p[from] == '-')
			return from;
	return NOSTAR;
}

/*
 * Whether c is in the set p[i..j) (between '[' and ']').  This follows
 * fnmatch.translate: '-' after the first character (after "!" for a
 * negated set) makes ranges, a '-' right after a range is literal, a
 * trailing '-' is literal, and a range whose ends are reversed is
 * removed together with the characters either side of it, which can
 * even bring a '!' to the front and negate the set.  What is left is
 * read the way Python's re reads a character class.
 */
static int
set_match(const uint32_t *p, size_t i, size_t j, uint32_t c,
    struct set_elem *e)
{
	size_t	 k, x, len, start, last;
	int	 neg, found;
	uint32_t lo, hi;

	len = 0;
	for (x = i; x < j; x++) {
		e[len].cp = p[x];
		e[len++].join = 0;
	}
	if (find_dash(p, i, j) != NOSTAR) {
		start = i;
		last = NOSTAR;
		k = p[i] == '!' ? i + 2 : i + 1;
		while (k < j && (k = find_dash(p, k, j)) != NOSTAR) {
			e[k - i].join = 1;
			last = k - i;
			start = k + 1;
			k += 3;
		}
		if (start == j && last != NOSTAR)
			e[last].join = 0;
		/* Drop reversed ranges, right to left. */
		for (x = len; x-- > 0;) {
			if (!e[x].join || e[x - 1].cp <= e[x + 1].cp)
				continue;
			memmove(&e[x - 1], &e[x + 2],
			    (len - x - 2) * sizeof(*e));
			len -= 3;
			x--;
		}
	}
	if (len == 0)
		return 0;
	neg = e[0].cp == '!';
	found = 0;
	for (x = neg ? 1 : 0; x < len;) {
		lo = e[x++].cp;
		if (x < len && e[x].join && x + 1 < len) {
			hi = e[x + 1].cp;
			x += 2;
			if (lo <= c && c <= hi)
				found = 1;
		} else if (lo == c)
			found = 1;
	}
	return found != neg;
}

/* Match one non-star token at p[*pi]; advance *pi past it. */
static int
token_match(const uint32_t *p, size_t n, size_t *pi, uint32_t c,
    struct set_elem *e)
{
	size_t	 i = *pi, j;

	if (p[i] == '?') {
		*pi = i + 1;
		return 1;
	}
	if (p[i] == '[') {
		j = i + 1;
		if (j < n && p[j] == '!')
			j++;
		if (j < n && p[j] == ']')
			j++;
		while (j < n && p[j] != ']')
			j++;
		if (j < n) {
			*pi = j + 1;
			return set_match(p, i + 1, j, c, e);
		}
		/* No closing ']': a literal '['. */
	}
	*pi = i + 1;
	return p[i] == c;
}

int
glob_match(const char *pattern, const char *string)
{
	uint32_t	*p = NULL, *s = NULL;
	struct set_elem	*e = NULL;
	size_t		 n, m, pi, si, next, star_pi, star_si;
	int		 r = 0;

	/* Out of memory denies: the allowlist fails closed. */
	if ((p = decode(pattern, &n)) == NULL ||
	    (s = decode(string, &m)) == NULL ||
	    (e = reallocarray(NULL, n + 1, sizeof(*e))) == NULL)
		goto done;

	/*
	 * Every token but '*' matches exactly one character, so going back
	 * to the last '*' and letting it take one more is enough.
	 */
	pi = si = 0;
	star_pi = star_si = NOSTAR;
	while (si < m) {
		if (pi < n && p[pi] == '*') {
			while (pi < n && p[pi] == '*')
				pi++;
			star_pi = pi;
			star_si = si;
			continue;
		}
		next = pi;
		if (pi < n && token_match(p, n, &next, s[si], e)) {
			pi = next;
			si++;
			continue;
		}
		if (star_pi == NOSTAR)
			goto done;
		pi = star_pi;
		si = ++star_si;
	}
	while (pi < n && p[pi] == '*')
		pi++;
	r = pi == n;
done:
	free(p);
	free(s);
	free(e);
	return r;
}

int
image_allowed(char *const *patterns, size_t count, const char *image)
{
	size_t	 i;

	for (i = 0; i < count; i++)
		if (glob_match(patterns[i], image))
			return 1;
	return 0;
}
