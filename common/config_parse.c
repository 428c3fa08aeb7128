/*
 * The parsers of single values with Python's rules: str.strip() with
 * Unicode whitespace, int(), float(), bool words, comma lists.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"

/*
 * UTF-8 encodings of the non-ASCII characters for which Python's
 * str.isspace() is true; str.strip() and int() strip those too.
 */
static const char *const uniwhite[] = {
	"\xc2\x85", "\xc2\xa0", "\xe1\x9a\x80",
	"\xe2\x80\x80", "\xe2\x80\x81", "\xe2\x80\x82", "\xe2\x80\x83",
	"\xe2\x80\x84", "\xe2\x80\x85", "\xe2\x80\x86", "\xe2\x80\x87",
	"\xe2\x80\x88", "\xe2\x80\x89", "\xe2\x80\x8a",
	"\xe2\x80\xa8", "\xe2\x80\xa9", "\xe2\x80\xaf", "\xe2\x81\x9f",
	"\xe3\x80\x80",
};

/*
 * str.strip() also strips U+001C..U+001F; int() and float() strip only
 * C's isspace() set among ASCII (CPython's Py_ISSPACE).
 */
enum white {
	WHITE_STRIP,
	WHITE_NUMBER,
};

static int
ascii_white(unsigned char c, enum white kind)
{
	if (c == ' ' || (c >= 0x09 && c <= 0x0d))
		return 1;
	return kind == WHITE_STRIP && c >= 0x1c && c <= 0x1f;
}

static int
ascii_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

/* Length of the whitespace character that starts s[0..n), or 0. */
static size_t
white_at(const char *s, size_t n, enum white kind)
{
	size_t	 i, k;

	if (n > 0 && ascii_white((unsigned char)s[0], kind))
		return 1;
	for (i = 0; i < sizeof(uniwhite) / sizeof(uniwhite[0]); i++) {
		k = strlen(uniwhite[i]);
		if (n >= k && memcmp(s, uniwhite[i], k) == 0)
			return k;
	}
	return 0;
}

/*
 * Length of the whitespace character that ends s[0..n), or 0.  A complete
 * multi-byte sequence at the end is never part of an earlier character,
 * since lead bytes are never continuation bytes.
 */
static size_t
white_before(const char *s, size_t n, enum white kind)
{
	size_t	 i, k;

	if (n > 0 && ascii_white((unsigned char)s[n - 1], kind))
		return 1;
	for (i = 0; i < sizeof(uniwhite) / sizeof(uniwhite[0]); i++) {
		k = strlen(uniwhite[i]);
		if (n >= k && memcmp(s + n - k, uniwhite[i], k) == 0)
			return k;
	}
	return 0;
}

/* Python's stripping: s[*start..*end) is what remains of s[0..n). */
static void
strip_span(const char *s, size_t n, enum white kind, size_t *start,
    size_t *end)
{
	size_t	 a = 0, b = n, k;

	while (a < b && (k = white_at(s + a, b - a, kind)) > 0)
		a += k;
	while (b > a && (k = white_before(s + a, b - a, kind)) > 0)
		b -= k;
	*start = a;
	*end = b;
}

int
config_parse_bool(const char *raw, int *out)
{
	static const char *const truthy[] = { "1", "true", "yes", "on" };
	static const char *const falsy[] = { "0", "false", "no", "off", "" };
	char	 word[8];
	size_t	 a, b, i;

	strip_span(raw, strlen(raw), WHITE_STRIP, &a, &b);
	if (b - a >= sizeof(word))
		return -1;
	for (i = 0; a + i < b; i++) {
		word[i] = raw[a + i];
		if (word[i] >= 'A' && word[i] <= 'Z')
			word[i] += 'a' - 'A';
	}
	word[i] = '\0';
	for (i = 0; i < sizeof(truthy) / sizeof(truthy[0]); i++)
		if (strcmp(word, truthy[i]) == 0) {
			*out = 1;
			return 0;
		}
	for (i = 0; i < sizeof(falsy) / sizeof(falsy[0]); i++)
		if (strcmp(word, falsy[i]) == 0) {
			*out = 0;
			return 0;
		}
	return -1;
}

int
config_parse_long(const char *raw, long long *out)
{
	unsigned long long	 v = 0, lim;
	size_t			 a, b, i;
	unsigned int		 d;
	int			 neg = 0;

	strip_span(raw, strlen(raw), WHITE_NUMBER, &a, &b);
	i = a;
	if (i < b && (raw[i] == '+' || raw[i] == '-'))
		neg = raw[i++] == '-';
	if (i == b || !ascii_digit(raw[i]))
		return -1;
	lim = neg ? (unsigned long long)LLONG_MAX + 1 : LLONG_MAX;
	for (; i < b; i++) {
		/* One '_' between two digits, as in a Python literal. */
		if (raw[i] == '_' && i + 1 < b && ascii_digit(raw[i + 1]))
			continue;
		if (!ascii_digit(raw[i]))
			return -1;
		d = raw[i] - '0';
		if (v > (lim - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	if (neg)
		*out = v == lim ? LLONG_MIN : -(long long)v;
	else
		*out = (long long)v;
	return 0;
}

/* Digits with single '_' between them; returns how many digits. */
static size_t
scan_digitpart(const char *s, size_t *i, size_t end)
{
	size_t	 n = 0;

	while (*i < end) {
		if (ascii_digit(s[*i])) {
			n++;
			(*i)++;
		} else if (s[*i] == '_' && n > 0 && *i + 1 < end &&
		    ascii_digit(s[*i + 1]))
			(*i)++;
		else
			break;
	}
	return n;
}

static int
word_is(const char *s, size_t n, const char *word)
{
	return strlen(word) == n && strncasecmp(s, word, n) == 0;
}

int
config_parse_double(const char *raw, double *out)
{
	size_t	 a, b, i, o, intd, fracd = 0;
	char	*clean;
	int	 neg = 0;

	strip_span(raw, strlen(raw), WHITE_NUMBER, &a, &b);
	i = a;
	if (i < b && (raw[i] == '+' || raw[i] == '-'))
		neg = raw[i++] == '-';
	if (word_is(raw + i, b - i, "inf") ||
	    word_is(raw + i, b - i, "infinity")) {
		*out = neg ? -INFINITY : INFINITY;
		return 0;
	}
	if (word_is(raw + i, b - i, "nan")) {
		*out = neg ? -NAN : NAN;
		return 0;
	}

	/* Python's float grammar: no hex, no "nan(...)", unlike strtod. */
	intd = scan_digitpart(raw, &i, b);
	if (i < b && raw[i] == '.') {
		i++;
		fracd = scan_digitpart(raw, &i, b);
	}
	if (intd == 0 && fracd == 0)
		return -1;
	if (i < b && (raw[i] == 'e' || raw[i] == 'E')) {
		i++;
		if (i < b && (raw[i] == '+' || raw[i] == '-'))
			i++;
		if (scan_digitpart(raw, &i, b) == 0)
			return -1;
	}
	if (i != b)
		return -1;

	if ((clean = malloc(b - a + 1)) == NULL)
		return -1;
	for (i = a, o = 0; i < b; i++)
		if (raw[i] != '_')
			clean[o++] = raw[i];
	clean[o] = '\0';
	/* Overflow gives inf and underflow 0, as in Python. */
	*out = strtod(clean, NULL);
	free(clean);
	return 0;
}

void
config_list_free(char **list)
{
	size_t	 i;

	if (list == NULL)
		return;
	/* Lists may hold API keys: wipe every item. */
	for (i = 0; list[i] != NULL; i++)
		freezero(list[i], strlen(list[i]));
	free(list);
}

char **
config_parse_list(const char *raw, size_t *count)
{
	char		**list;
	const char	 *item, *comma;
	size_t		  max = 1, n = 0, len, a, b;

	for (item = raw; (item = strchr(item, ',')) != NULL; item++)
		max++;
	if ((list = reallocarray(NULL, max + 1, sizeof(*list))) == NULL)
		return NULL;
	list[0] = NULL;
	for (item = raw;; item = comma + 1) {
		comma = strchr(item, ',');
		len = comma != NULL ? (size_t)(comma - item) : strlen(item);
		strip_span(item, len, WHITE_STRIP, &a, &b);
		if (b > a) {
			if ((list[n] = strndup(item + a, b - a)) == NULL) {
				config_list_free(list);
				return NULL;
			}
			list[++n] = NULL;
		}
		if (comma == NULL)
			break;
	}
	*count = n;
	return list;
}
