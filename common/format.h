/*
 * Small string helpers: timestamps as the API renders them (API.md §3.2),
 * Python-style repr() of floats and strings for messages that must read
 * like the reference's, and a constant-time comparison for API keys.
 */
#ifndef AS_FORMAT_H
#define AS_FORMAT_H

#include <stddef.h>

#define FORMAT_TIMESTAMP_LEN	40
#define FORMAT_PYFLOAT_LEN	32

/*
 * "YYYY-MM-DDTHH:MM:SS.ffffffZ", or without the fraction when the
 * microseconds are 0.  The fraction is rounded half-to-even with carry,
 * exactly as Python's datetime.fromtimestamp().  Never touches the time
 * zone database.  Returns buf, or NULL (buf set to "" when len > 0) if
 * epoch is not finite, falls outside years 1-9999, or len is too small.
 */
char	*format_timestamp(double epoch, char *buf, size_t len);

/*
 * Python repr() of a float: the shortest string that reads back to the
 * same double, "1.0" for integral values, "1e+16" / "1e-05" outside
 * 1e-4 <= |v| < 1e16, "inf", "-inf", "nan", "-0.0".  Returns buf, or
 * NULL (buf set to "" when len > 0) if len is too small.
 */
char	*format_pyfloat(double v, char *buf, size_t len);

/*
 * Python repr() of a str given as UTF-8 bytes (invalid bytes show as
 * Python's surrogateescape does, "\udcNN").  Returns a malloc'd string,
 * or NULL with errno set.
 */
char	*format_pyrepr(const char *s);

/*
 * Python len() of the str those UTF-8 bytes decode to, counting each
 * undecodable byte as one character (surrogateescape).
 */
size_t	format_pystrlen(const char *s);

/*
 * 1 if the byte strings are equal, else 0.  The time taken depends on the
 * two lengths only, never on the contents.
 */
int	format_consttime_equal(const void *a, size_t alen, const void *b,
	    size_t blen);

/* The value of a hex digit (either case), or -1. */
int	format_hexval(int c);

/*
 * %XX of s[0..len) decoded into out (room for len bytes: it never
 * grows), a bad escape kept as it is; with plus, '+' is a space (a
 * query's form encoding).  Returns the bytes written, NULs included.
 */
size_t	format_percent_decode(const char *s, size_t len, int plus,
	    char *out);

/* trunc, floor, ceil and round without libm (see format.c). */
double	fp_trunc(double);
double	fp_floor(double);
double	fp_ceil(double);
double	fp_round(double);

#endif /* AS_FORMAT_H */
