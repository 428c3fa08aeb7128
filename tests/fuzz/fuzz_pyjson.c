/*
 * apid's json.loads() (apid/pyjson.c) on any bytes.  A value it accepts
 * is written back as JSON and parsed again: it must come back equal, with
 * no key twice in an object (duplicates are merged, the last one
 * winning).  A syntax error must point inside the input, as Python's
 * position does; and jv_to_json, which renders inputs in 422s, must take
 * any value.
 */
#include <sys/queue.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apid.h"
#include "harness.h"

static void
out_str(struct buf *o, const char *s, size_t len)
{
	char	 esc[8];
	size_t	 i;

	buf_add(o, "\"", 1);
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\' || c < 0x20) {
			snprintf(esc, sizeof(esc), "\\u%04x", c);
			buf_add(o, esc, 6);
		} else
			buf_add(o, &s[i], 1);
	}
	buf_add(o, "\"", 1);
}

static void
out_float(struct buf *o, double f)
{
	char	 buf[40];

	if (isnan(f))
		snprintf(buf, sizeof(buf), "NaN");
	else if (isinf(f))
		snprintf(buf, sizeof(buf), "%sInfinity", f < 0 ? "-" : "");
	else {
		/* %.17g reads back exactly; keep it a float, not an int. */
		snprintf(buf, sizeof(buf), "%.17g", f);
		if (strpbrk(buf, ".e") == NULL)
			strlcat(buf, ".0", sizeof(buf));
	}
	buf_add(o, buf, strlen(buf));
}

static void
dump(struct buf *o, const struct jv *v)
{
	char	 buf[32];
	size_t	 i;

	switch (v->type) {
	case JV_NULL:
		buf_add(o, "null", 4);
		break;
	case JV_TRUE:
		buf_add(o, "true", 4);
		break;
	case JV_FALSE:
		buf_add(o, "false", 5);
		break;
	case JV_INT:
		if (v->u.i.big != NULL)
			buf_add(o, v->u.i.big, strlen(v->u.i.big));
		else {
			snprintf(buf, sizeof(buf), "%lld",
			    (long long)v->u.i.v);
			buf_add(o, buf, strlen(buf));
		}
		break;
	case JV_FLOAT:
		out_float(o, v->u.f);
		break;
	case JV_STRING:
		out_str(o, v->u.s.s, v->u.s.len);
		break;
	case JV_ARRAY:
		buf_add(o, "[", 1);
		for (i = 0; i < v->u.a.n; i++) {
			if (i > 0)
				buf_add(o, ",", 1);
			dump(o, &v->u.a.items[i]);
		}
		buf_add(o, "]", 1);
		break;
	case JV_OBJECT:
		buf_add(o, "{", 1);
		for (i = 0; i < v->u.o.n; i++) {
			if (i > 0)
				buf_add(o, ",", 1);
			out_str(o, v->u.o.m[i].key, v->u.o.m[i].klen);
			buf_add(o, ":", 1);
			dump(o, &v->u.o.m[i].val);
		}
		buf_add(o, "}", 1);
		break;
	}
}

static int
same_bytes(const char *a, size_t alen, const char *b, size_t blen)
{
	return alen == blen && memcmp(a, b, alen) == 0;
}

static int
same_float(double a, double b)
{
	if (isnan(a) || isnan(b))
		return isnan(a) && isnan(b);
	return memcmp(&a, &b, sizeof(a)) == 0;	/* -0.0 is not 0.0 */
}

static int
equal(const struct jv *a, const struct jv *b)
{
	size_t	 i;

	if (a->type != b->type)
		return 0;
	switch (a->type) {
	case JV_INT:
		if ((a->u.i.big == NULL) != (b->u.i.big == NULL))
			return 0;
		if (a->u.i.big != NULL)
			return strcmp(a->u.i.big, b->u.i.big) == 0;
		return a->u.i.v == b->u.i.v;
	case JV_FLOAT:
		return same_float(a->u.f, b->u.f);
	case JV_STRING:
		return same_bytes(a->u.s.s, a->u.s.len, b->u.s.s, b->u.s.len);
	case JV_ARRAY:
		if (a->u.a.n != b->u.a.n)
			return 0;
		for (i = 0; i < a->u.a.n; i++)
			if (!equal(&a->u.a.items[i], &b->u.a.items[i]))
				return 0;
		return 1;
	case JV_OBJECT:
		if (a->u.o.n != b->u.o.n)
			return 0;
		for (i = 0; i < a->u.o.n; i++)
			if (!same_bytes(a->u.o.m[i].key, a->u.o.m[i].klen,
			    b->u.o.m[i].key, b->u.o.m[i].klen) ||
			    !equal(&a->u.o.m[i].val, &b->u.o.m[i].val))
				return 0;
		return 1;
	default:
		return 1;
	}
}

/* Keys are unique, strings are UTF-8 and NUL-ended at their length. */
static void
check_value(const struct jv *v)
{
	size_t	 i, j;

	switch (v->type) {
	case JV_STRING:
		CHECK(v->u.s.s[v->u.s.len] == '\0');
		CHECK(utf8_valid(v->u.s.s, v->u.s.len));
		break;
	case JV_ARRAY:
		for (i = 0; i < v->u.a.n; i++)
			check_value(&v->u.a.items[i]);
		break;
	case JV_OBJECT:
		for (i = 0; i < v->u.o.n; i++) {
			CHECK(utf8_valid(v->u.o.m[i].key, v->u.o.m[i].klen));
			/* Quadratic, but inputs are small. */
			for (j = 0; j < i; j++)
				CHECK(!same_bytes(v->u.o.m[i].key,
				    v->u.o.m[i].klen, v->u.o.m[j].key,
				    v->u.o.m[j].klen));
			check_value(&v->u.o.m[i].val);
		}
		break;
	default:
		break;
	}
}

static size_t
chars(const uint8_t *s, size_t len)
{
	size_t	 i, n = 0;

	for (i = 0; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			n++;
	return n;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct pyjson_error	 err, err2;
	struct jv		 v, v2;
	struct buf		 o = { NULL, 0, 0 };
	json_object		*j;
	int			 rc;

	rc = pyjson_parse(data, len, &v, &err);
	CHECK(rc == PYJSON_OK || rc == PYJSON_ERROR || rc == PYJSON_FATAL);
	if (rc != PYJSON_OK) {
		CHECK(err.msg != NULL);
		CHECK(v.type == JV_NULL);
		/* The BOM is not counted: the input's characters bound it. */
		if (rc == PYJSON_ERROR)
			CHECK(err.pos <= chars(data, len));
		return 0;
	}
	check_value(&v);
	dump(&o, &v);
	rc = pyjson_parse(o.p, o.len, &v2, &err2);
	CHECK(rc == PYJSON_OK);
	CHECK(equal(&v, &v2));
	j = jv_to_json(&v);
	CHECK(j != NULL || v.type == JV_NULL || v.type == JV_FLOAT);
	if (j != NULL)
		CHECK(json_object_to_json_string(j) != NULL);
	json_object_put(j);
	jv_free(&v2);
	jv_free(&v);
	buf_free(&o);
	return 0;
}
