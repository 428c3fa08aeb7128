/*
 * Small string helpers: API timestamps, Python-style repr() of floats and
 * strings, and a constant-time comparison.  Everything here is pure
 * computation (no time zone database, no locale beyond "C"), so it is safe
 * inside a chroot and a seccomp filter.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "utf8.h"

/* 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z, Python's datetime range. */
#define TS_MIN	(-62135596800.0)
#define TS_MAX	(253402300799.0)

static char *
fail_empty(char *buf, size_t len)
{
	if (len > 0)
		buf[0] = '\0';
	return NULL;
}

/*
 * Rounding without libm: otherwise every daemon maps libm (about 300 KiB
 * resident) for four functions.  Exact for every double: from 2^52 up,
 * each one is an integer already.
 */
double
fp_trunc(double x)
{
	if (!(x > -4503599627370496.0 && x < 4503599627370496.0))
		return x;	/* integral, infinite or NaN */
	return (double)(int64_t)x;
}

double
fp_floor(double x)
{
	double	 t = fp_trunc(x);

	return t > x ? t - 1.0 : t;
}

double
fp_ceil(double x)
{
	double	 t = fp_trunc(x);

	return t < x ? t + 1.0 : t;
}

/* C's round(): halfway cases away from zero. */
double
fp_round(double x)
{
	double	 t = fp_trunc(x), d = x - t;

	if (d >= 0.5)
		return t + 1.0;
	if (d <= -0.5)
		return t - 1.0;
	return t;
}

/* Python's _PyTime_RoundHalfEven(). */
static double
round_half_even(double x)
{
	double	 r, d;

	r = fp_round(x);
	d = x - r;
	if (d == 0.5 || d == -0.5)
		r = 2.0 * fp_round(x / 2.0);
	return r;
}

/* Days since 1970-01-01 to a proleptic Gregorian date (H. Hinnant). */
static void
civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
	int64_t	 era, doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

char *
format_timestamp(double epoch, char *buf, size_t len)
{
	double	 ipart, frac, us;
	int64_t	 secs, days, rem, year;
	int	 month, day, n;

	if (!isfinite(epoch))
		return fail_empty(buf, len);
	/* Same steps as CPython's _PyTime_DoubleToDenominator(). */
	ipart = fp_trunc(epoch);
	frac = epoch - ipart;	/* exact, like modf() */
	us = round_half_even(frac * 1e6);
	if (us >= 1e6) {
		us -= 1e6;
		ipart += 1.0;
	} else if (us < 0) {
		us += 1e6;
		ipart -= 1.0;
	}
	if (ipart < TS_MIN || ipart > TS_MAX)
		return fail_empty(buf, len);

	secs = (int64_t)ipart;
	days = secs / 86400;
	rem = secs % 86400;
	if (rem < 0) {
		rem += 86400;
		days--;
	}
	civil_from_days(days, &year, &month, &day);
	if (us != 0)
		n = snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ",
		    (int)year, month, day, (int)(rem / 3600),
		    (int)(rem / 60 % 60), (int)(rem % 60), (int)us);
	else
		n = snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02dZ",
		    (int)year, month, day, (int)(rem / 3600),
		    (int)(rem / 60 % 60), (int)(rem % 60));
	if (n < 0 || (size_t)n >= len)
		return fail_empty(buf, len);
	return buf;
}

char *
format_pyfloat(double v, char *buf, size_t len)
{
	char	 tmp[40], digits[20], out[FORMAT_PYFLOAT_LEN], *p;
	size_t	 nd;
	int	 prec, exp10, decpt, i, o;

	if (isnan(v))
		snprintf(out, sizeof(out), "nan");
	else if (isinf(v))
		snprintf(out, sizeof(out), "%s", v < 0 ? "-inf" : "inf");
	else if (v == 0)
		snprintf(out, sizeof(out), "%s", signbit(v) ? "-0.0" : "0.0");
	else {
		/*
		 * The correctly rounded %e with the fewest digits that reads
		 * back to v is the digit string Python's repr() chooses.
		 */
		for (prec = 1; prec <= 17; prec++) {
			snprintf(tmp, sizeof(tmp), "%.*e", prec - 1, v);
			if (strtod(tmp, NULL) == v)
				break;
		}
		p = tmp;
		o = 0;
		if (*p == '-')
			out[o++] = *p++;
		nd = 0;
		for (; *p != 'e' && *p != '\0'; p++)
			if (*p != '.' && nd < sizeof(digits) - 1)
				digits[nd++] = *p;
		while (nd > 1 && digits[nd - 1] == '0')
			nd--;
		digits[nd] = '\0';
		exp10 = (int)strtol(p + 1, NULL, 10);
		decpt = exp10 + 1;

		if (decpt > -4 && decpt <= 16) {
			if (decpt <= 0) {
				out[o++] = '0';
				out[o++] = '.';
				for (i = decpt; i < 0; i++)
					out[o++] = '0';
				for (i = 0; i < (int)nd; i++)
					out[o++] = digits[i];
			} else {
				for (i = 0; i < decpt; i++)
					out[o++] = i < (int)nd ?
					    digits[i] : '0';
				out[o++] = '.';
				if (decpt >= (int)nd)
					out[o++] = '0';
				for (i = decpt; i < (int)nd; i++)
					out[o++] = digits[i];
			}
			out[o] = '\0';
		} else {
			out[o++] = digits[0];
			if (nd > 1) {
				out[o++] = '.';
				for (i = 1; i < (int)nd; i++)
					out[o++] = digits[i];
			}
			snprintf(out + o, sizeof(out) - o, "e%c%02d",
			    exp10 < 0 ? '-' : '+', abs(exp10));
		}
	}
	if (strlcpy(buf, out, len) >= len)
		return fail_empty(buf, len);
	return buf;
}

/*
 * Code points Python's str.isprintable() rejects, apart from unassigned
 * ones (Unicode 14: Cc, Cf, Cs, Co, Zl, Zp and Zs other than space).
 */
static const struct {
	uint32_t	lo, hi;
} nonprintable[] = {
	{ 0x0, 0x1f }, { 0x7f, 0xa0 }, { 0xad, 0xad }, { 0x600, 0x605 },
	{ 0x61c, 0x61c }, { 0x6dd, 0x6dd }, { 0x70f, 0x70f },
	{ 0x890, 0x891 }, { 0x8e2, 0x8e2 }, { 0x1680, 0x1680 },
	{ 0x180e, 0x180e }, { 0x2000, 0x200f }, { 0x2028, 0x202f },
	{ 0x205f, 0x2064 }, { 0x2066, 0x206f }, { 0x3000, 0x3000 },
	{ 0xd800, 0xf8ff }, { 0xfeff, 0xfeff }, { 0xfff9, 0xfffb },
	{ 0x110bd, 0x110bd }, { 0x110cd, 0x110cd }, { 0x13430, 0x13438 },
	{ 0x1bca0, 0x1bca3 }, { 0x1d173, 0x1d17a }, { 0xe0001, 0xe0001 },
	{ 0xe0020, 0xe007f }, { 0xf0000, 0xffffd }, { 0x100000, 0x10fffd },
};

static int
printable(uint32_t cp)
{
	size_t	 i;

	for (i = 0; i < sizeof(nonprintable) / sizeof(nonprintable[0]); i++)
		if (cp >= nonprintable[i].lo && cp <= nonprintable[i].hi)
			return 0;
	return 1;
}

char *
format_pyrepr(const char *s)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 n, i, k, o;
	uint32_t		 cp;
	char			*out, quote;

	n = strlen(s);
	/* Worst case: every byte becomes "\udcNN". */
	if (n > (SIZE_MAX - 3) / 6) {
		errno = ENOMEM;
		return NULL;
	}
	if ((out = malloc(n * 6 + 3)) == NULL)
		return NULL;
	quote = (strchr(s, '\'') != NULL && strchr(s, '"') == NULL) ?
	    '"' : '\'';

	o = 0;
	out[o++] = quote;
	for (i = 0; i < n; i += k) {
		if ((k = utf8_char(p + i, n - i, &cp)) == 0) {
			/* What surrogateescape makes of an undecodable byte. */
			o += sprintf(out + o, "\\udc%02x", p[i]);
			k = 1;
			continue;
		}
		if (cp == (uint32_t)quote || cp == '\\') {
			out[o++] = '\\';
			out[o++] = (char)cp;
		} else if (cp == '\n')
			o += sprintf(out + o, "\\n");
		else if (cp == '\r')
			o += sprintf(out + o, "\\r");
		else if (cp == '\t')
			o += sprintf(out + o, "\\t");
		else if (printable(cp)) {
			memcpy(out + o, p + i, k);
			o += k;
		} else if (cp < 0x100)
			o += sprintf(out + o, "\\x%02x", cp);
		else if (cp < 0x10000)
			o += sprintf(out + o, "\\u%04x", cp);
		else
			o += sprintf(out + o, "\\U%08x", cp);
	}
	out[o++] = quote;
	out[o] = '\0';
	return out;
}

size_t
format_pystrlen(const char *s)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 n, i, k, count = 0;
	uint32_t		 cp;

	n = strlen(s);
	for (i = 0; i < n; i += k, count++)
		if ((k = utf8_char(p + i, n - i, &cp)) == 0)
			k = 1;
	return count;
}

int
format_consttime_equal(const void *a, size_t alen, const void *b, size_t blen)
{
	const volatile unsigned char	*pa = a, *pb = b;
	volatile unsigned char		 diff = 0;
	unsigned char			 ca, cb;
	size_t				 i, n;

	/* Walk the longer length so no early exit depends on content. */
	n = alen > blen ? alen : blen;
	for (i = 0; i < n; i++) {
		ca = i < alen ? pa[i] : 0;
		cb = i < blen ? pb[i] : 0;
		diff |= ca ^ cb;
	}
	diff |= (unsigned char)(alen != blen);
	return (int)((((unsigned int)diff - 1) >> 8) & 1);
}

int
format_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

size_t
format_percent_decode(const char *s, size_t len, int plus, char *out)
{
	size_t	 i, n = 0;
	int	 hi, lo;

	for (i = 0; i < len; i++) {
		if (plus && s[i] == '+')
			out[n++] = ' ';
		else if (s[i] == '%' && i + 2 < len &&
		    (hi = format_hexval((unsigned char)s[i + 1])) != -1 &&
		    (lo = format_hexval((unsigned char)s[i + 2])) != -1) {
			out[n++] = (char)(hi << 4 | lo);
			i += 2;
		} else
			out[n++] = s[i];
	}
	return n;
}
