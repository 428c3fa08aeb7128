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

#define REF_MAX_PARTS	32

/* Copies s[0..n) and a NUL to *out, moving *out past them; the copy. */
static char *
put_part(char **out, const char *s, size_t n)
{
	char	*p = *out;

	memcpy(p, s, n);
	p[n] = '\0';
	*out += n + 1;
	return p;
}

/* The last c in s[0..n), or NULL. */
static const char *
last_of(const char *s, size_t n, char c)
{
	while (n > 0)
		if (s[--n] == c)
			return s + n;
	return NULL;
}

/*
 * An image reference as its parts, copied into buf (strlen(ref) +
 * REF_MAX_PARTS bytes): the path components split at '/', then the last
 * one's tag (from its last ':' before any '@') and digest (from its last
 * '@'), each keeping its ':' or '@' so that a pattern's tag meets only a
 * tag.  "registry:5000/team/app:1.2" is "registry:5000", "team", "app",
 * ":1.2".  -1 past REF_MAX_PARTS.
 */
static int
ref_parts(const char *ref, char *buf, char **parts, size_t *np)
{
	const char	*last, *slash, *at, *colon, *end;
	size_t		 n = 0;

	for (last = ref; (slash = strchr(last, '/')) != NULL;
	    last = slash + 1) {
		if (n == REF_MAX_PARTS - 3)
			return -1;
		parts[n++] = put_part(&buf, last, (size_t)(slash - last));
	}
	end = last + strlen(last);
	at = last_of(last, (size_t)(end - last), '@');
	colon = last_of(last, (size_t)((at != NULL ? at : end) - last), ':');
	parts[n++] = put_part(&buf, last, (size_t)((colon != NULL ? colon :
	    at != NULL ? at : end) - last));
	if (colon != NULL)
		parts[n++] = put_part(&buf, colon, (size_t)((at != NULL ? at :
		    end) - colon));
	if (at != NULL)
		parts[n++] = put_part(&buf, at, (size_t)(end - at));
	*np = n;
	return 0;
}

/* Part by part: a '*' never reaches across a '/', ':' or '@' boundary. */
static int
parts_match(const char *pattern, const char *image)
{
	char	*pb, *ib, *pp[REF_MAX_PARTS], *ip[REF_MAX_PARTS];
	size_t	 pn, in, i;
	int	 ok = 0;

	pb = malloc(strlen(pattern) + REF_MAX_PARTS);
	ib = malloc(strlen(image) + REF_MAX_PARTS);
	if (pb != NULL && ib != NULL &&
	    ref_parts(pattern, pb, pp, &pn) == 0 &&
	    ref_parts(image, ib, ip, &in) == 0 && pn == in)
		for (ok = 1, i = 0; ok && i < pn; i++)
			ok = glob_match(pp[i], ip[i]);
	free(pb);
	free(ib);
	return ok;
}

int
image_allowed_parts(char *const *patterns, size_t count, const char *image)
{
	size_t	 i;

	for (i = 0; i < count; i++)
		if (parts_match(patterns[i], image))
			return 1;
	return 0;
}
