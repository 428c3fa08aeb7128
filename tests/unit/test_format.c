/*
 * Tests for common/format.c: API timestamps (API.md §3.2), Python repr()
 * of floats and strings, and the constant-time comparison.  Expected
 * strings come from CPython 3.11.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "format.h"

struct ts_case {
	double		 epoch;
	const char	*want;
};

static void
test_timestamp_examples(void **state)
{
	static const struct ts_case cases[] = {
		{ 1700000000.0, "2023-11-14T22:13:20Z" },
		{ 1700000000.5, "2023-11-14T22:13:20.500000Z" },
		{ 1700000000.053406, "2023-11-14T22:13:20.053406Z" },
		{ 0.0, "1970-01-01T00:00:00Z" },
		{ 1e-6, "1970-01-01T00:00:00.000001Z" },
		{ 946684799.999999, "1999-12-31T23:59:59.999999Z" },
		{ 1234567890.000001, "2009-02-13T23:31:30.000001Z" },
		/* Leap years: 2000 is one, 2100 is not. */
		{ 951782400.25, "2000-02-29T00:00:00.250000Z" },
		{ 951868800.0, "2000-03-01T00:00:00Z" },
		{ 4102444800.0, "2100-01-01T00:00:00Z" },
		{ 4107542400.0, "2100-03-01T00:00:00Z" },
		/* Before the epoch the fraction still counts forwards. */
		{ -1.5, "1969-12-31T23:59:58.500000Z" },
		{ -1e-6, "1969-12-31T23:59:59.999999Z" },
		{ -2208988800.5, "1899-12-31T23:59:59.500000Z" },
		/* The ends of Python's datetime range. */
		{ -62135596800.0, "0001-01-01T00:00:00Z" },
		{ 253402300799.5, "9999-12-31T23:59:59.500000Z" },
	};
	char	 buf[FORMAT_TIMESTAMP_LEN];
	size_t	 i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_ptr_equal(format_timestamp(cases[i].epoch, buf,
		    sizeof(buf)), buf);
		assert_string_equal(buf, cases[i].want);
	}
}

static void
test_timestamp_rounding(void **state)
{
	static const struct ts_case cases[] = {
		/* Half-to-even on the microsecond. */
		{ 5e-7, "1970-01-01T00:00:00Z" },
		{ 1.5e-6, "1970-01-01T00:00:00.000002Z" },
		{ 2.5e-6, "1970-01-01T00:00:00.000002Z" },
		{ 3.5e-6, "1970-01-01T00:00:00.000004Z" },
		{ 4.5e-6, "1970-01-01T00:00:00.000004Z" },
		{ -5e-7, "1970-01-01T00:00:00Z" },
		{ 1700000000.1234565, "2023-11-14T22:13:20.123456Z" },
		{ 1700000000.0000025, "2023-11-14T22:13:20.000002Z" },
		{ 1700000000.0000035, "2023-11-14T22:13:20.000004Z" },
		/* A fraction that rounds to 1000000 carries into seconds. */
		{ 1.9999996, "1970-01-01T00:00:02Z" },
		{ 1700000000.9999995, "2023-11-14T22:13:21Z" },
		{ 1700000000.9999993, "2023-11-14T22:13:20.999999Z" },
		{ -0.9999996, "1969-12-31T23:59:59Z" },
		{ 59.9999999, "1970-01-01T00:01:00Z" },
		{ 86399.9999999, "1970-01-02T00:00:00Z" },
	};
	char	 buf[FORMAT_TIMESTAMP_LEN];
	size_t	 i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_non_null(format_timestamp(cases[i].epoch, buf,
		    sizeof(buf)));
		assert_string_equal(buf, cases[i].want);
	}
}

static void
test_timestamp_invalid(void **state)
{
	char	 buf[FORMAT_TIMESTAMP_LEN], small[20];

	memset(buf, 'x', sizeof(buf));
	assert_null(format_timestamp(NAN, buf, sizeof(buf)));
	assert_string_equal(buf, "");
	assert_null(format_timestamp(INFINITY, buf, sizeof(buf)));
	assert_null(format_timestamp(-INFINITY, buf, sizeof(buf)));
	assert_null(format_timestamp(253402300800.0, buf, sizeof(buf)));
	assert_null(format_timestamp(-62135596801.0, buf, sizeof(buf)));
	assert_null(format_timestamp(1e300, buf, sizeof(buf)));
	/* 9999-12-31T23:59:59.99999 in decimal is year 10000 as a double. */
	assert_null(format_timestamp(253402300799.99999, buf, sizeof(buf)));

	/* "2023-11-14T22:13:20Z" needs 21 bytes. */
	memset(small, 'x', sizeof(small));
	assert_null(format_timestamp(1700000000.0, small, sizeof(small)));
	assert_string_equal(small, "");
	assert_non_null(format_timestamp(1700000000.0, buf, 21));
	assert_string_equal(buf, "2023-11-14T22:13:20Z");
	assert_null(format_timestamp(1700000000.5, buf, 27));
	assert_non_null(format_timestamp(1700000000.5, buf, 28));
	assert_null(format_timestamp(1.0, buf, 0));
}

/* Whole seconds across the whole range agree with the C library. */
static void
test_timestamp_vs_gmtime(void **state)
{
	char		 buf[FORMAT_TIMESTAMP_LEN], want[64];
	struct tm	 tm;
	time_t		 t;
	int64_t		 span = 253402300799LL + 62135596800LL;
	int		 i;

	srandom(36);
	for (i = 0; i < 20000; i++) {
		t = (time_t)(((int64_t)random() << 31 | random()) % span -
		    62135596800LL);
		assert_non_null(gmtime_r(&t, &tm));
		strftime(want, sizeof(want), "%Y-%m-%dT%H:%M:%SZ", &tm);
		if (tm.tm_year + 1900 < 1000) {
			/* strftime does not pad years below 1000. */
			snprintf(want, sizeof(want),
			    "%04d-%02d-%02dT%02d:%02d:%02dZ",
			    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
			    tm.tm_hour, tm.tm_min, tm.tm_sec);
		}
		assert_non_null(format_timestamp((double)t, buf, sizeof(buf)));
		assert_string_equal(buf, want);
	}
}

struct float_case {
	double		 v;
	const char	*want;
};

static void
test_pyfloat_examples(void **state)
{
	static const struct float_case cases[] = {
		{ 0.5, "0.5" },
		{ 1.0, "1.0" },
		{ 4.0, "4.0" },
		{ 10.0, "10.0" },
		{ 100.0, "100.0" },
		{ 0.1, "0.1" },
		{ 0.3, "0.3" },
		{ 0.1 + 0.2, "0.30000000000000004" },
		{ 1.0 / 3.0, "0.3333333333333333" },
		{ 2.0 / 3.0, "0.6666666666666666" },
		{ -2.5, "-2.5" },
		{ 12345.678, "12345.678" },
		{ 123456789.0, "123456789.0" },
		{ -123456789.0, "-123456789.0" },
		{ 1e15, "1000000000000000.0" },
		{ 1e16 - 2, "9999999999999998.0" },
		{ 9007199254740993.0, "9007199254740992.0" },
		{ 1e16, "1e+16" },
		{ 1.5e16, "1.5e+16" },
		{ 123456789012345678.0, "1.2345678901234568e+17" },
		{ 1e22, "1e+22" },
		{ 1e100, "1e+100" },
		{ 1.7976931348623157e308, "1.7976931348623157e+308" },
		{ 0.0001, "0.0001" },
		{ 0.00015, "0.00015" },
		{ 0.0001234, "0.0001234" },
		{ 1e-5, "1e-05" },
		{ 123e-7, "1.23e-05" },
		{ -1e-300, "-1e-300" },
		{ 5e-324, "5e-324" },
		{ 1.5e-323, "1.5e-323" },
		{ 0.0, "0.0" },
		{ -0.0, "-0.0" },
		{ INFINITY, "inf" },
		{ -INFINITY, "-inf" },
		{ NAN, "nan" },
	};
	char	 buf[FORMAT_PYFLOAT_LEN];
	size_t	 i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_ptr_equal(format_pyfloat(cases[i].v, buf, sizeof(buf)),
		    buf);
		assert_string_equal(buf, cases[i].want);
	}
}

static double
random_double(void)
{
	uint64_t	 bits;
	double		 v;

	bits = (uint64_t)random() << 33 ^ (uint64_t)random() << 11 ^
	    (uint64_t)random();
	memcpy(&v, &bits, sizeof(v));
	return v;
}

/* Any double reads back from its repr, which is short and well-formed. */
static void
test_pyfloat_roundtrip(void **state)
{
	char	 buf[FORMAT_PYFLOAT_LEN], *end;
	double	 v, back;
	int	 i;

	srandom(42);
	for (i = 0; i < 20000; i++) {
		v = random_double();
		if (i % 2)
			v = (double)(random() % 100000) / 1000.0;
		assert_non_null(format_pyfloat(v, buf, sizeof(buf)));
		assert_true(strlen(buf) <= 24);
		back = strtod(buf, &end);
		assert_int_equal(*end, '\0');
		if (isnan(v))
			assert_true(isnan(back));
		else {
			assert_true(back == v);
			assert_int_equal(!!signbit(back), !!signbit(v));
		}
		/* Always a '.', an 'e', or one of inf/nan. */
		assert_true(strpbrk(buf, ".en") != NULL);
	}
}

static void
test_pyfloat_small_buffer(void **state)
{
	char	 buf[8];

	memset(buf, 'x', sizeof(buf));
	assert_null(format_pyfloat(123456789.0, buf, sizeof(buf)));
	assert_string_equal(buf, "");
	assert_non_null(format_pyfloat(1234.5, buf, 7));
	assert_string_equal(buf, "1234.5");
	assert_null(format_pyfloat(1234.5, buf, 6));
	assert_null(format_pyfloat(1.0, buf, 0));
}

struct repr_case {
	const char	*in;
	const char	*want;
};

static void
test_pyrepr(void **state)
{
	static const struct repr_case cases[] = {
		{ "", "''" },
		{ "abc", "'abc'" },
		{ "eighty", "'eighty'" },
		{ "it's", "\"it's\"" },
		{ "say \"hi\"", "'say \"hi\"'" },
		{ "it's \"x\"", "'it\\'s \"x\"'" },
		{ "a\\b", "'a\\\\b'" },
		{ "\n\r\t", "'\\n\\r\\t'" },
		{ "\x01\x1f\x7f", "'\\x01\\x1f\\x7f'" },
		{ " spaces ", "' spaces '" },
		/* Printable non-ASCII stays; invisible code points do not. */
		{ "caf\xc3\xa9", "'caf\xc3\xa9'" },
		{ "\xe2\x82\xac", "'\xe2\x82\xac'" },
		{ "\xf0\x9f\x98\x80", "'\xf0\x9f\x98\x80'" },
		{ "\xc2\x80", "'\\x80'" },
		{ "\xc2\xa0", "'\\xa0'" },
		{ "\xc2\xad", "'\\xad'" },
		{ "\xe2\x80\xa8", "'\\u2028'" },
		{ "\xe3\x80\x80", "'\\u3000'" },
		{ "\xef\xbb\xbf", "'\\ufeff'" },
		{ "\xf3\xa0\x80\x81", "'\\U000e0001'" },
		/* Undecodable bytes show as surrogateescape does. */
		{ "\x80", "'\\udc80'" },
		{ "a\xff" "b", "'a\\udcffb'" },
		{ "\xe2\x82" "A", "'\\udce2\\udc82A'" },
		{ "\xc0\xaf", "'\\udcc0\\udcaf'" },
		{ "\xed\xa0\x80", "'\\udced\\udca0\\udc80'" },
		{ "\xf4\x90\x80\x80", "'\\udcf4\\udc90\\udc80\\udc80'" },
		{ "\xe2\x82", "'\\udce2\\udc82'" },
	};
	char	*r;
	size_t	 i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		r = format_pyrepr(cases[i].in);
		assert_non_null(r);
		assert_string_equal(r, cases[i].want);
		free(r);
	}
}

/* The worst case for the output size: every byte escaped. */
static void
test_pyrepr_worst_case(void **state)
{
	char	 in[257], *r;
	size_t	 i;

	for (i = 0; i < 256; i++)
		in[i] = (char)(0x80 + i % 64);
	in[256] = '\0';
	r = format_pyrepr(in);
	assert_non_null(r);
	assert_int_equal(strlen(r), 256 * 6 + 2);
	assert_memory_equal(r, "'\\udc80\\udc81", 13);
	free(r);
}

static void
test_pystrlen(void **state)
{
	assert_int_equal(format_pystrlen(""), 0);
	assert_int_equal(format_pystrlen("abcdefghijklmnop"), 16);
	assert_int_equal(format_pystrlen("caf\xc3\xa9"), 4);
	assert_int_equal(format_pystrlen("\xe2\x82\xac\xf0\x9f\x98\x80"), 2);
	/* Each undecodable byte is one character. */
	assert_int_equal(format_pystrlen("\x80\x81\xff"), 3);
	assert_int_equal(format_pystrlen("\xe2\x82" "A"), 3);
}

static void
test_consttime_equal(void **state)
{
	static const char key[] = "aaaaaaaaaaaaaaaa";

	assert_int_equal(format_consttime_equal(key, 16, key, 16), 1);
	assert_int_equal(format_consttime_equal(key, 16,
	    "aaaaaaaaaaaaaaaa", 16), 1);
	assert_int_equal(format_consttime_equal(key, 16,
	    "aaaaaaaaaaaaaaab", 16), 0);
	assert_int_equal(format_consttime_equal(key, 16,
	    "baaaaaaaaaaaaaaa", 16), 0);
	/* Only the lowest bit differs. */
	assert_int_equal(format_consttime_equal("a", 1, "`", 1), 0);
	assert_int_equal(format_consttime_equal("\x80", 1, "\x00", 1), 0);
	/* Prefixes and different lengths. */
	assert_int_equal(format_consttime_equal(key, 16, key, 15), 0);
	assert_int_equal(format_consttime_equal(key, 15, key, 16), 0);
	assert_int_equal(format_consttime_equal("a\0", 2, "a", 1), 0);
	assert_int_equal(format_consttime_equal(key, 16, "", 0), 0);
	assert_int_equal(format_consttime_equal("", 0, key, 16), 0);
	/* Empty strings, and NULL with no length. */
	assert_int_equal(format_consttime_equal("", 0, "", 0), 1);
	assert_int_equal(format_consttime_equal(NULL, 0, NULL, 0), 1);
	assert_int_equal(format_consttime_equal(NULL, 0, "x", 1), 0);
	/* Bytes after the lengths are not compared. */
	assert_int_equal(format_consttime_equal("abcX", 3, "abcY", 3), 1);
}

static void
test_consttime_random(void **state)
{
	unsigned char	 a[32], b[32];
	size_t		 alen, blen, j;
	int		 i, want;

	srandom(7);
	for (i = 0; i < 5000; i++) {
		alen = random() % sizeof(a);
		blen = i % 2 ? alen : random() % sizeof(b);
		for (j = 0; j < sizeof(a); j++)
			a[j] = b[j] = (unsigned char)random();
		if (i % 3 == 0 && blen > 0)
			b[random() % blen] ^= 1 << (random() % 8);
		want = alen == blen && memcmp(a, b, alen) == 0;
		assert_int_equal(format_consttime_equal(a, alen, b, blen),
		    want);
	}
}

/* The libm-free rounding helpers agree with libm on awkward and random
 * doubles, the sign of zero aside. */
static void
test_fp_rounding_matches_libm(void **state)
{
	static const double	 cases[] = { 0.0, 0.5, -0.5, 1.5, -1.5, 2.5,
	    0.49999999999999994, -0.49999999999999994, 4503599627370495.5,
	    4503599627370496.0, -4503599627370497.0, 1e300, -1e300,
	    1700000000.053406, 0.9999995, -2.0000001 };
	double			 x;
	size_t			 i;
	uint64_t		 bits;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		x = cases[i];
		assert_true(fp_trunc(x) == trunc(x));
		assert_true(fp_floor(x) == floor(x));
		assert_true(fp_ceil(x) == ceil(x));
		assert_true(fp_round(x) == round(x));
	}
	assert_true(isinf(fp_floor(INFINITY)));
	assert_true(isnan(fp_round(NAN)));
	srandom(7);
	for (i = 0; i < 200000; i++) {
		bits = ((uint64_t)random() << 33) ^ ((uint64_t)random() << 2) ^
		    (uint64_t)random();
		memcpy(&x, &bits, sizeof(x));
		if (!isfinite(x))
			continue;
		if (i % 2)
			x = (double)(random() % 2000000) / 1000.0 - 1000.0;
		assert_true(fp_trunc(x) == trunc(x));
		assert_true(fp_floor(x) == floor(x));
		assert_true(fp_ceil(x) == ceil(x));
		assert_true(fp_round(x) == round(x));
	}
}

/* Every byte as a hex digit, and the decoding apid's paths and queries use. */
static void
test_hex_and_percent_decode(void **state)
{
	static const struct {
		const char	*in;
		int		 plus;
		const char	*out;
		size_t		 outlen;
	} cases[] = {
		{ "a%20b", 0, "a b", 3 },
		{ "a+b", 0, "a+b", 3 },
		{ "a+b", 1, "a b", 3 },
		{ "%41%4a%4A", 0, "AJJ", 3 },
		{ "%", 0, "%", 1 },
		{ "%4", 0, "%4", 2 },
		{ "%4g%zz", 0, "%4g%zz", 6 },
		{ "x%00y", 0, "x\0y", 3 },
		{ "%ff%FE", 0, "\xff\xfe", 2 },
		{ "%%41", 0, "%A", 2 },
		{ "", 1, "", 0 },
	};
	char	 out[16];
	size_t	 i, n;
	int	 c;

	(void)state;
	for (c = -1; c < 256; c++) {
		if (c >= '0' && c <= '9')
			assert_int_equal(format_hexval(c), c - '0');
		else if (c >= 'a' && c <= 'f')
			assert_int_equal(format_hexval(c), c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			assert_int_equal(format_hexval(c), c - 'A' + 10);
		else
			assert_int_equal(format_hexval(c), -1);
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		n = format_percent_decode(cases[i].in, strlen(cases[i].in),
		    cases[i].plus, out);
		assert_int_equal(n, cases[i].outlen);
		assert_memory_equal(out, cases[i].out, n);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timestamp_examples),
		cmocka_unit_test(test_timestamp_rounding),
		cmocka_unit_test(test_timestamp_invalid),
		cmocka_unit_test(test_timestamp_vs_gmtime),
		cmocka_unit_test(test_pyfloat_examples),
		cmocka_unit_test(test_pyfloat_roundtrip),
		cmocka_unit_test(test_pyfloat_small_buffer),
		cmocka_unit_test(test_pyrepr),
		cmocka_unit_test(test_pyrepr_worst_case),
		cmocka_unit_test(test_pystrlen),
		cmocka_unit_test(test_consttime_equal),
		cmocka_unit_test(test_consttime_random),
		cmocka_unit_test(test_fp_rounding_matches_libm),
		cmocka_unit_test(test_hex_and_percent_decode),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
