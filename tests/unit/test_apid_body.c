/*
 * Tests for apid's request bodies: pyjson.c against CPython 3.11's
 * json.loads() (messages and character positions of JSONDecodeError,
 * what it accepts), and body.c's FastAPI/pydantic 422 entries (API.md
 * §1.3, §1.4, §4.2, §4.6, §4.7; REFERENCE-TESTS 7, 42, 51), content
 * types, missing bodies, the command union, env, int_from_float, the lax
 * coercions, and the NUL strings that cannot travel to managerd.
 */
#include <sys/queue.h>

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "apid.h"

#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))
#define JSON		"application/json"

struct json_case {
	const char	*in;
	size_t		 len;
	int		 rc;
	const char	*msg;
	size_t		 pos;
	const char	*value;		/* compact re-encoding */
};

/* Computed with json.loads() (and json.dumps() of the result). */
static const struct json_case json_cases[] = {
	{ "{", 1, PYJSON_ERROR, "Expecting property name enclosed in double quotes", 1, NULL },
	{ "}", 1, PYJSON_ERROR, "Expecting value", 0, NULL },
	{ "{\"a\"", 4, PYJSON_ERROR, "Expecting ':' delimiter", 4, NULL },
	{ "{\"a\":", 5, PYJSON_ERROR, "Expecting value", 5, NULL },
	{ "{\"a\":1", 6, PYJSON_ERROR, "Expecting ',' delimiter", 6, NULL },
	{ "{\"a\":1,", 7, PYJSON_ERROR, "Expecting property name enclosed in double quotes", 7, NULL },
	{ "{\"a\":1,}", 8, PYJSON_ERROR, "Expecting property name enclosed in double quotes", 7, NULL },
	{ "{\"a\" 1}", 7, PYJSON_ERROR, "Expecting ':' delimiter", 5, NULL },
	{ "{a:1}", 5, PYJSON_ERROR, "Expecting property name enclosed in double quotes", 1, NULL },
	{ "[1,]", 4, PYJSON_ERROR, "Expecting value", 3, NULL },
	{ "[1 2]", 5, PYJSON_ERROR, "Expecting ',' delimiter", 3, NULL },
	{ "[", 1, PYJSON_ERROR, "Expecting value", 1, NULL },
	{ "", 0, PYJSON_ERROR, "Expecting value", 0, NULL },
	{ "   ", 3, PYJSON_ERROR, "Expecting value", 3, NULL },
	{ "nul", 3, PYJSON_ERROR, "Expecting value", 0, NULL },
	{ "tru", 3, PYJSON_ERROR, "Expecting value", 0, NULL },
	{ "-", 1, PYJSON_ERROR, "Expecting value", 0, NULL },
	{ "-x", 2, PYJSON_ERROR, "Expecting value", 0, NULL },
	{ "01", 2, PYJSON_ERROR, "Extra data", 1, NULL },
	{ "1.", 2, PYJSON_ERROR, "Extra data", 1, NULL },
	{ "1.e5", 4, PYJSON_ERROR, "Extra data", 1, NULL },
	{ "1e", 2, PYJSON_ERROR, "Extra data", 1, NULL },
	{ "1e+", 3, PYJSON_ERROR, "Extra data", 1, NULL },
	{ "{\"a\":1} x", 9, PYJSON_ERROR, "Extra data", 8, NULL },
	{ "{\"a\":\"b", 7, PYJSON_ERROR, "Unterminated string starting at", 5, NULL },
	{ "{\"a\":\"\\x\"}", 10, PYJSON_ERROR, "Invalid \\escape", 6, NULL },
	{ "{\"a\":\"\\u12\"}", 12, PYJSON_ERROR, "Invalid \\uXXXX escape", 7, NULL },
	{ "{\"a\":\"\\u12G4\"}", 14, PYJSON_ERROR, "Invalid \\uXXXX escape", 7, NULL },
	{ "{\"a\":\"\\u1234", 12, PYJSON_ERROR, "Invalid \\uXXXX escape", 7, NULL },
	{ "{\"a\":\"\\u1234\"", 13, PYJSON_ERROR, "Expecting ',' delimiter", 13, NULL },
	{ "{\"a\":\"x\012y\"}", 11, PYJSON_ERROR, "Invalid control character at", 7, NULL },
	{ "{\"a\":\"\001\"}", 9, PYJSON_ERROR, "Invalid control character at", 6, NULL },
	{ "{\"\303\251\303\251\": x}", 11, PYJSON_ERROR, "Expecting value", 7, NULL },
	{ "{\"\360\237\230\200\": 1,,}", 13, PYJSON_ERROR, "Expecting property name enclosed in double quotes", 8, NULL },
	{ "\357\273\277{\"a\" 1}", 10, PYJSON_ERROR, "Expecting ':' delimiter", 5, NULL },
	{ "{\"a\":\"\\ud800\\uZZZZ\"}", 20, PYJSON_ERROR, "Invalid \\uXXXX escape", 13, NULL },
	{ "\"\\", 2, PYJSON_ERROR, "Unterminated string starting at", 0, NULL },
	{ "\"abc", 4, PYJSON_ERROR, "Unterminated string starting at", 0, NULL },
	{ "[NaN, Infinity, -Infinity]", 26, PYJSON_OK, NULL, 0, NULL },
	{ "{\"a\":-Infinity}", 15, PYJSON_OK, NULL, 0, NULL },
	{ "{\"a\":\"\\ud83d\\ude00\"}", 20, PYJSON_OK, NULL, 0, "{\"a\":\"\360\237\230\200\"}" },
	{ "{\"a\":1, \"a\":2, \"b\":3}", 21, PYJSON_OK, NULL, 0, "{\"a\":2,\"b\":3}" },
	{ "[1,2,3]", 7, PYJSON_OK, NULL, 0, "[1,2,3]" },
	{ "{\"a\":\"\\ud800x\"}", 15, PYJSON_OK, NULL, 0, "{\"a\":\"\357\277\275x\"}" },
	{ "{\"a\":\"\\ud800\\u0041\"}", 20, PYJSON_OK, NULL, 0, "{\"a\":\"\357\277\275A\"}" },
	{ "12345678901234567890123", 23, PYJSON_OK, NULL, 0, "12345678901234567890123" },
	{ "-0", 2, PYJSON_OK, NULL, 0, "0" },
	{ "1E400", 5, PYJSON_OK, NULL, 0, NULL },
	{ "{\"a\":\303\251}", 8, PYJSON_ERROR, "Expecting value", 5, NULL },
	{ "[-]", 3, PYJSON_ERROR, "Expecting value", 1, NULL },
	{ "{\"a\":1}\012\011 ", 10, PYJSON_OK, NULL, 0, "{\"a\":1}" },
	{ "\011\012{\"a\":[true,false,null]} ", 26, PYJSON_OK, NULL, 0, "{\"a\":[true,false,null]}" },
	{ "{\"a\": NaN}", 10, PYJSON_OK, NULL, 0, NULL },
	{ "{\"a\":\"\\/\\b\\f\\n\\r\\t\\\"\\\\\"}", 24, PYJSON_OK, NULL, 0, "{\"a\":\"/\\b\\f\\n\\r\\t\\\"\\\\\"}" },
	{ "\"\\u0000x\"", 9, PYJSON_OK, NULL, 0, "\"\\u0000x\"" },
	{ "[1,\0122,\012  x]", 11, PYJSON_ERROR, "Expecting value", 9, NULL },
	{ "{\"\": 1}", 7, PYJSON_OK, NULL, 0, "{\"\":1}" },
	{ "{\"a\":tru}", 9, PYJSON_ERROR, "Expecting value", 5, NULL },
	{ "{\"a\":nulll}", 11, PYJSON_ERROR, "Expecting ',' delimiter", 9, NULL },
	{ "\377", 1, PYJSON_FATAL, NULL, 0, NULL },
	/* Python (surrogatepass) takes an encoded surrogate; we do not. */
	{ "{\"a\":\"\355\240\200\"}", 11, PYJSON_FATAL, NULL, 0, NULL },
	{ "{\"a\": 1.5e3}", 12, PYJSON_OK, NULL, 0, "{\"a\":1500.0}" },
	{ "[0.1, 1e-7, 123.456e2, 5E+1]", 28, PYJSON_OK, NULL, 0, "[0.1,1e-07,12345.6,50.0]" },
};

static char *
to_text(json_object *o)
{
	const char	*s;

	s = json_object_to_json_string_ext(o,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	return strdup(s);
}

static void
test_pyjson_table(void **state)
{
	struct pyjson_error	 err;
	struct jv		 v;
	json_object		*o;
	char			*s;
	size_t			 i;
	int			 rc;

	for (i = 0; i < NELEM(json_cases); i++) {
		const struct json_case	*c = &json_cases[i];

		rc = pyjson_parse(c->in, c->len, &v, &err);
		if (rc != c->rc)
			fail_msg("case %zu (%s): rc %d, want %d", i, c->in, rc,
			    c->rc);
		if (rc == PYJSON_ERROR) {
			assert_string_equal(err.msg, c->msg);
			if (err.pos != c->pos)
				fail_msg("case %zu (%s): pos %zu, want %zu", i,
				    c->in, err.pos, c->pos);
			assert_int_equal(v.type, JV_NULL);
		}
		if (rc == PYJSON_OK && c->value != NULL) {
			o = jv_to_json(&v);
			s = to_text(o);
			assert_string_equal(s, c->value);
			free(s);
			json_object_put(o);
		}
		jv_free(&v);
	}
}

static void
test_pyjson_values(void **state)
{
	static const char	 text[] = "{\"i\": -42, \"f\": 2.5, "
	    "\"big\": 123456789012345678901234, \"n\": NaN, "
	    "\"s\": \"a\\u0000b\","
	    " \"t\": true}";
	struct pyjson_error	 err;
	struct jv		 v;
	struct jv_member	*m;

	assert_int_equal(pyjson_parse(text, strlen(text), &v, &err),
	    PYJSON_OK);
	assert_int_equal(v.type, JV_OBJECT);
	assert_int_equal(v.u.o.n, 6);
	m = v.u.o.m;
	assert_int_equal(m[0].val.type, JV_INT);
	assert_int_equal(m[0].val.u.i.v, -42);
	assert_null(m[0].val.u.i.big);
	assert_int_equal(m[1].val.type, JV_FLOAT);
	assert_true(m[1].val.u.f == 2.5);
	assert_int_equal(m[2].val.type, JV_INT);
	assert_int_equal(m[2].val.u.i.v, INT64_MAX);
	assert_string_equal(m[2].val.u.i.big, "123456789012345678901234");
	assert_true(isnan(m[3].val.u.f));
	assert_int_equal(m[4].val.type, JV_STRING);
	assert_int_equal(m[4].val.u.s.len, 3);
	assert_memory_equal(m[4].val.u.s.s, "a\0b", 3);
	assert_int_equal(m[5].val.type, JV_TRUE);
	jv_free(&v);
}

/* Python's int() refuses more than 4300 digits; not a JSONDecodeError. */
static void
test_pyjson_limits(void **state)
{
	struct pyjson_error	 err;
	struct jv		 v;
	char			*s;
	size_t			 i;

	assert_non_null(s = malloc(4302));
	memset(s, '1', 4301);
	assert_int_equal(pyjson_parse(s, 4301, &v, &err), PYJSON_FATAL);
	assert_int_equal(pyjson_parse(s, 4300, &v, &err), PYJSON_OK);
	assert_int_equal(v.type, JV_INT);
	assert_int_equal(v.u.i.v, INT64_MAX);
	jv_free(&v);
	free(s);
	/* Nesting: deep enough for anything sane, bounded for the rest. */
	assert_non_null(s = malloc(2000));
	for (i = 0; i < 100; i++) {
		s[i] = '[';
		s[199 - i] = ']';
	}
	assert_int_equal(pyjson_parse(s, 200, &v, &err), PYJSON_OK);
	jv_free(&v);
	for (i = 0; i < 1000; i++) {
		s[i] = '[';
		s[1999 - i] = ']';
	}
	assert_int_equal(pyjson_parse(s, 2000, &v, &err), PYJSON_FATAL);
	assert_int_equal(v.type, JV_NULL);
	free(s);
}

/* A repeated key keeps its first place and its last value. */
static void
test_pyjson_duplicates(void **state)
{
	static const char	 text[] =
	    "{\"b\":1,\"a\":2,\"b\":3,\"c\":4,\"a\":5,\"b\":6}";
	struct pyjson_error	 err;
	struct jv		 v;
	json_object		*o;
	char			*s;

	assert_int_equal(pyjson_parse(text, strlen(text), &v, &err),
	    PYJSON_OK);
	o = jv_to_json(&v);
	s = to_text(o);
	assert_string_equal(s, "{\"b\":6,\"a\":5,\"c\":4}");
	free(s);
	json_object_put(o);
	jv_free(&v);
}

/* Helpers for the body tests. */

static char *
detail_of(struct body_error *e)
{
	char	*s;

	assert_int_equal(e->status, 422);
	assert_non_null(e->detail);
	s = to_text(e->detail);
	body_error_free(e);
	return s;
}

static void
create_422(const char *ctype, const char *body, const char *want)
{
	struct create_request	 c;
	struct body_error	 e;
	char			*s;

	assert_int_equal(body_parse_create(ctype, body,
	    body ? strlen(body) : 0, &c, &e), -1);
	s = detail_of(&e);
	if (strcmp(s, want) != 0)
		fail_msg("body %s\n got %s\nwant %s", body, s, want);
	free(s);
	assert_null(c.image);
	assert_int_equal(c.env.count, 0);
}

static void
exec_422(const char *body, const char *want)
{
	struct exec_request	 x;
	struct body_error	 e;
	char			*s;

	assert_int_equal(body_parse_exec(JSON, body, strlen(body), &x, &e),
	    -1);
	s = detail_of(&e);
	if (strcmp(s, want) != 0)
		fail_msg("body %s\n got %s\nwant %s", body, s, want);
	free(s);
	assert_null(x.argv);
}

static void
timeout_422(const char *body, const char *want)
{
	struct body_error	 e;
	int64_t			 secs;
	char			*s;

	assert_int_equal(body_parse_timeout(JSON, body, body ? strlen(body) :
	    0, &secs, &e), -1);
	s = detail_of(&e);
	if (strcmp(s, want) != 0)
		fail_msg("body %s\n got %s\nwant %s", body, s, want);
	free(s);
}

static void
create_ok(const char *body, struct create_request *c)
{
	struct body_error	 e;

	if (body_parse_create(JSON, body, strlen(body), c, &e) == -1)
		fail_msg("body %s: status %d", body, e.status);
}

static void
exec_ok(const char *body, struct exec_request *x)
{
	struct body_error	 e;

	if (body_parse_exec(JSON, body, strlen(body), x, &e) == -1)
		fail_msg("body %s: status %d", body, e.status);
}

static void
create_400(const char *body, const char *want)
{
	struct create_request	 c;
	struct body_error	 e;

	assert_int_equal(body_parse_create(JSON, body, strlen(body), &c, &e),
	    -1);
	assert_int_equal(e.status, 400);
	assert_string_equal(e.code, "invalid_request");
	assert_string_equal(e.message, want);
	assert_null(e.detail);
	body_error_free(&e);
}

static void
exec_400(const char *body, const char *want)
{
	struct exec_request	 x;
	struct body_error	 e;

	assert_int_equal(body_parse_exec(JSON, body, strlen(body), &x, &e),
	    -1);
	assert_int_equal(e.status, 400);
	assert_string_equal(e.code, "invalid_request");
	assert_string_equal(e.message, want);
	body_error_free(&e);
}

#define MISSING_BODY \
	"{\"detail\":[{\"type\":\"missing\",\"loc\":[\"body\"]," \
	"\"msg\":\"Field required\",\"input\":null}]}"
#define NOT_OBJECT(input) \
	"{\"detail\":[{\"type\":\"model_attributes_type\",\"loc\":[\"body\"]," \
	"\"msg\":\"Input should be a valid dictionary or object to extract " \
	"fields from\",\"input\":" input "}]}"

/* REFERENCE-TESTS 7: {"cpus": -1} and {"unknown": 1}. */
static void
test_create_reference_7(void **state)
{
	create_422(JSON, "{\"cpus\": -1}",
	    "{\"detail\":[{\"type\":\"greater_than\",\"loc\":[\"body\","
	    "\"cpus\"],\"msg\":\"Input should be greater than 0\","
	    "\"input\":-1,\"ctx\":{\"gt\":0.0}}]}");
	create_422(JSON, "{\"unknown\": 1}",
	    "{\"detail\":[{\"type\":\"extra_forbidden\",\"loc\":[\"body\","
	    "\"unknown\"],\"msg\":\"Extra inputs are not permitted\","
	    "\"input\":1}]}");
}

/* {"cpus": 64} passes the schema: 400 is managerd's (§4.2 step 2). */
static void
test_create_server_bounds_pass(void **state)
{
	struct create_request	 c;

	create_ok("{\"cpus\": 64}", &c);
	assert_int_equal(c.has_cpus, 1);
	assert_true(c.cpus == 64.0);
	create_request_free(&c);
	/* REFERENCE-TESTS 42's schema-valid values. */
	create_ok("{\"cpus\": 100, \"memory_mb\": 1000000}", &c);
	assert_int_equal(c.memory_mb, 1000000);
	create_request_free(&c);
	create_ok("{\"env\": {\"A=B\": \"x\"}}", &c);
	assert_int_equal(c.env.count, 1);
	assert_string_equal(c.env.keys[0], "A=B");
	create_request_free(&c);
}

/* REFERENCE-TESTS 42's schema parts: memory 8, pids 2, TTL 0. */
static void
test_create_minimums(void **state)
{
	create_422(JSON, "{\"memory_mb\": 8}",
	    "{\"detail\":[{\"type\":\"greater_than_equal\",\"loc\":[\"body\","
	    "\"memory_mb\"],\"msg\":\"Input should be greater than or equal "
	    "to 16\",\"input\":8,\"ctx\":{\"ge\":16}}]}");
	create_422(JSON, "{\"pids_limit\": 2}",
	    "{\"detail\":[{\"type\":\"greater_than_equal\",\"loc\":[\"body\","
	    "\"pids_limit\"],\"msg\":\"Input should be greater than or equal "
	    "to 8\",\"input\":2,\"ctx\":{\"ge\":8}}]}");
	create_422(JSON, "{\"timeout_seconds\": 0}",
	    "{\"detail\":[{\"type\":\"greater_than_equal\",\"loc\":[\"body\","
	    "\"timeout_seconds\"],\"msg\":\"Input should be greater than or "
	    "equal to 1\",\"input\":0,\"ctx\":{\"ge\":1}}]}");
	create_422(JSON, "{\"cpus\": 0.0}",
	    "{\"detail\":[{\"type\":\"greater_than\",\"loc\":[\"body\","
	    "\"cpus\"],\"msg\":\"Input should be greater than 0\","
	    "\"input\":0.0,\"ctx\":{\"gt\":0.0}}]}");
}

static void
test_create_types(void **state)
{
	create_422(JSON, "{\"image\": 5}",
	    "{\"detail\":[{\"type\":\"string_type\",\"loc\":[\"body\","
	    "\"image\"],\"msg\":\"Input should be a valid string\","
	    "\"input\":5}]}");
	create_422(JSON, "{\"network\": null}",
	    "{\"detail\":[{\"type\":\"bool_type\",\"loc\":[\"body\","
	    "\"network\"],\"msg\":\"Input should be a valid boolean\","
	    "\"input\":null}]}");
	create_422(JSON, "{\"read_only_rootfs\": \"maybe\"}",
	    "{\"detail\":[{\"type\":\"bool_parsing\",\"loc\":[\"body\","
	    "\"read_only_rootfs\"],\"msg\":\"Input should be a valid boolean, "
	    "unable to interpret input\",\"input\":\"maybe\"}]}");
	create_422(JSON, "{\"memory_mb\": 16.5}",
	    "{\"detail\":[{\"type\":\"int_from_float\",\"loc\":[\"body\","
	    "\"memory_mb\"],\"msg\":\"Input should be a valid integer, got a "
	    "number with a fractional part\",\"input\":16.5}]}");
	create_422(JSON, "{\"memory_mb\": [16]}",
	    "{\"detail\":[{\"type\":\"int_type\",\"loc\":[\"body\","
	    "\"memory_mb\"],\"msg\":\"Input should be a valid integer\","
	    "\"input\":[16]}]}");
	create_422(JSON, "{\"pids_limit\": \"lots\"}",
	    "{\"detail\":[{\"type\":\"int_parsing\",\"loc\":[\"body\","
	    "\"pids_limit\"],\"msg\":\"Input should be a valid integer, "
	    "unable to parse string as an integer\",\"input\":\"lots\"}]}");
	create_422(JSON, "{\"cpus\": {}}",
	    "{\"detail\":[{\"type\":\"float_type\",\"loc\":[\"body\","
	    "\"cpus\"],\"msg\":\"Input should be a valid number\","
	    "\"input\":{}}]}");
	create_422(JSON, "{\"cpus\": \"half\"}",
	    "{\"detail\":[{\"type\":\"float_parsing\",\"loc\":[\"body\","
	    "\"cpus\"],\"msg\":\"Input should be a valid number, unable to "
	    "parse string as a number\",\"input\":\"half\"}]}");
	create_422(JSON, "{\"timeout_seconds\": Infinity}",
	    "{\"detail\":[{\"type\":\"finite_number\",\"loc\":[\"body\","
	    "\"timeout_seconds\"],\"msg\":\"Input should be a finite number\","
	    "\"input\":null}]}");
	/* NaN > 0 is false; FastAPI could not print NaN either: null. */
	create_422(JSON, "{\"cpus\": NaN}",
	    "{\"detail\":[{\"type\":\"greater_than\",\"loc\":[\"body\","
	    "\"cpus\"],\"msg\":\"Input should be greater than 0\","
	    "\"input\":null,\"ctx\":{\"gt\":0.0}}]}");
	/* A huge negative: said back with all its digits. */
	create_422(JSON, "{\"memory_mb\": -99999999999999999999999}",
	    "{\"detail\":[{\"type\":\"greater_than_equal\",\"loc\":[\"body\","
	    "\"memory_mb\"],\"msg\":\"Input should be greater than or equal "
	    "to 16\",\"input\":-99999999999999999999999,"
	    "\"ctx\":{\"ge\":16}}]}");
}

static void
test_create_env_types(void **state)
{
	create_422(JSON, "{\"env\": {\"A\": 1, \"B\": \"x\", \"C\": null}}",
	    "{\"detail\":[{\"type\":\"string_type\",\"loc\":[\"body\",\"env\","
	    "\"A\"],\"msg\":\"Input should be a valid string\",\"input\":1},"
	    "{\"type\":\"string_type\",\"loc\":[\"body\",\"env\",\"C\"],"
	    "\"msg\":\"Input should be a valid string\",\"input\":null}]}");
	create_422(JSON, "{\"env\": [\"A=1\"]}",
	    "{\"detail\":[{\"type\":\"dict_type\",\"loc\":[\"body\",\"env\"],"
	    "\"msg\":\"Input should be a valid dictionary\","
	    "\"input\":[\"A=1\"]}]}");
	create_422(JSON, "{\"env\": null}",
	    "{\"detail\":[{\"type\":\"dict_type\",\"loc\":[\"body\",\"env\"],"
	    "\"msg\":\"Input should be a valid dictionary\",\"input\":null}]}");
}

/* Every error, fields in model order, unknown keys last. */
static void
test_create_collects_all(void **state)
{
	create_422(JSON, "{\"zzz\": true, \"network\": [], \"cpus\": 0, "
	    "\"memory_mb\": \"x\"}",
	    "{\"detail\":[{\"type\":\"greater_than\",\"loc\":[\"body\","
	    "\"cpus\"],\"msg\":\"Input should be greater than 0\",\"input\":0,"
	    "\"ctx\":{\"gt\":0.0}},{\"type\":\"int_parsing\",\"loc\":[\"body\","
	    "\"memory_mb\"],\"msg\":\"Input should be a valid integer, unable "
	    "to parse string as an integer\",\"input\":\"x\"},{\"type\":"
	    "\"bool_type\",\"loc\":[\"body\",\"network\"],\"msg\":\"Input "
	    "should be a valid boolean\",\"input\":[]},{\"type\":"
	    "\"extra_forbidden\",\"loc\":[\"body\",\"zzz\"],\"msg\":\"Extra "
	    "inputs are not permitted\",\"input\":true}]}");
}

static void
test_create_defaults(void **state)
{
	struct create_request	 c;

	create_ok("{}", &c);
	assert_null(c.image);
	assert_int_equal(c.has_cpus, 0);
	assert_int_equal(c.has_memory_mb, 0);
	assert_int_equal(c.has_pids_limit, 0);
	assert_int_equal(c.has_timeout_seconds, 0);
	assert_int_equal(c.network, 0);
	assert_int_equal(c.read_only_rootfs, 1);
	assert_int_equal(c.env.count, 0);
	create_request_free(&c);
	/* null means "not given" for the nullable fields. */
	create_ok("{\"image\": null, \"cpus\": null, \"memory_mb\": null, "
	    "\"pids_limit\": null, \"timeout_seconds\": null}", &c);
	assert_null(c.image);
	assert_int_equal(c.has_cpus + c.has_memory_mb + c.has_pids_limit +
	    c.has_timeout_seconds, 0);
	create_request_free(&c);
}

/* What the SDK sends, every field given. */
static void
test_create_full(void **state)
{
	struct create_request	 c;

	create_ok("{\"image\": \"alpine:3.20\", \"cpus\": 0.5, \"memory_mb\": "
	    "256, \"pids_limit\": 64, \"network\": false, \"read_only_rootfs\":"
	    " false, \"timeout_seconds\": 60, \"env\": {\"MODE\": \"test\", "
	    "\"GREETING\": \"h\\u00e9\"}}", &c);
	assert_string_equal(c.image, "alpine:3.20");
	assert_int_equal(c.has_cpus, 1);
	assert_true(c.cpus == 0.5);
	assert_int_equal(c.has_memory_mb, 1);
	assert_int_equal(c.memory_mb, 256);
	assert_int_equal(c.has_pids_limit, 1);
	assert_int_equal(c.pids_limit, 64);
	assert_int_equal(c.network, 0);
	assert_int_equal(c.read_only_rootfs, 0);
	assert_int_equal(c.has_timeout_seconds, 1);
	assert_int_equal(c.timeout_seconds, 60);
	assert_int_equal(c.env.count, 2);
	assert_string_equal(c.env.keys[0], "MODE");
	assert_string_equal(c.env.values[0], "test");
	assert_string_equal(c.env.keys[1], "GREETING");
	assert_string_equal(c.env.values[1], "h\303\251");
	create_request_free(&c);
}

/* pydantic's lax mode: 16.0 is 16, "32" is 32, "0.5" is 0.5, "yes". */
static void
test_create_lax(void **state)
{
	struct create_request	 c;

	create_ok("{\"memory_mb\": 16.0, \"pids_limit\": \" 32 \", \"cpus\": "
	    "\"0.5\", \"network\": \"yes\", \"read_only_rootfs\": 0, "
	    "\"timeout_seconds\": \"60.000\"}", &c);
	assert_int_equal(c.memory_mb, 16);
	assert_int_equal(c.pids_limit, 32);
	assert_true(c.cpus == 0.5);
	assert_int_equal(c.network, 1);
	assert_int_equal(c.read_only_rootfs, 0);
	assert_int_equal(c.timeout_seconds, 60);
	create_request_free(&c);
	/* Beyond int64: saturated, so managerd's range check answers. */
	create_ok("{\"memory_mb\": 99999999999999999999999, "
	    "\"cpus\": 1, \"cpus\": 2}", &c);
	assert_int_equal(c.memory_mb, INT64_MAX);
	assert_true(c.cpus == 2.0);
	create_request_free(&c);
}

/* §1.4: empty body, JSON null, non-objects. */
static void
test_body_shapes(void **state)
{
	create_422(JSON, NULL, MISSING_BODY);
	create_422(JSON, "", MISSING_BODY);
	create_422(JSON, "null", MISSING_BODY);
	create_422(JSON, " null\n", MISSING_BODY);
	create_422(JSON, "[1, \"a\"]", NOT_OBJECT("[1,\"a\"]"));
	create_422(JSON, "5", NOT_OBJECT("5"));
	create_422(JSON, "\"x\"", NOT_OBJECT("\"x\""));
	timeout_422(NULL, MISSING_BODY);
	exec_422("null", MISSING_BODY);
	exec_422("true", NOT_OBJECT("true"));
}

static void
test_json_invalid(void **state)
{
	create_422(JSON, "{\"cpus\":}",
	    "{\"detail\":[{\"type\":\"json_invalid\",\"loc\":[\"body\",8],"
	    "\"msg\":\"JSON decode error\",\"input\":{},\"ctx\":{\"error\":"
	    "\"Expecting value\"}}]}");
	/* Positions count characters, not bytes. */
	create_422(JSON, "{\"image\": \"\303\251\303\251\" \"x\"}",
	    "{\"detail\":[{\"type\":\"json_invalid\",\"loc\":[\"body\",15],"
	    "\"msg\":\"JSON decode error\",\"input\":{},\"ctx\":{\"error\":"
	    "\"Expecting ',' delimiter\"}}]}");
}

/* Bodies Python cannot even decode: FastAPI's 400 http_error. */
static void
test_body_unparseable(void **state)
{
	struct create_request	 c;
	struct body_error	 e;

	assert_int_equal(body_parse_create(JSON, "{\"image\": \"\377\"}", 14,
	    &c, &e), -1);
	assert_int_equal(e.status, 400);
	assert_string_equal(e.code, "http_error");
	assert_string_equal(e.message, "There was an error parsing the body");
	body_error_free(&e);
}

static void
test_body_too_large(void **state)
{
	struct create_request	 c;
	struct body_error	 e;
	char			*big;

	assert_non_null(big = malloc(BODY_MAX_JSON + 1));
	memset(big, ' ', BODY_MAX_JSON + 1);
	memcpy(big, "{}", 2);
	assert_int_equal(body_parse_create(JSON, big, BODY_MAX_JSON + 1, &c,
	    &e), -1);
	assert_int_equal(e.status, 413);
	assert_string_equal(e.code, "payload_too_large");
	body_error_free(&e);
	/* Exactly the limit is parsed. */
	assert_int_equal(body_parse_create(JSON, big, BODY_MAX_JSON, &c, &e),
	    0);
	create_request_free(&c);
	free(big);
}

/* §1.4: application/json or application/ *+json, params allowed. */
static void
test_content_types(void **state)
{
	static const char *const ok[] = { NULL, "", "application/json",
	    "application/json; charset=utf-8", "Application/JSON",
	    " application/json ;x=y", "application/vnd.api+json",
	    "application/merge-patch+json" };
	static const char *const bad[] = { "text/plain", "text/json",
	    "application/jsonx", "application/x-www-form-urlencoded",
	    "application/json/x", "json", "application/+jsonx" };
	struct create_request	 c;
	struct body_error	 e;
	size_t			 i;

	for (i = 0; i < NELEM(ok); i++) {
		if (body_parse_create(ok[i], "{}", 2, &c, &e) != 0)
			fail_msg("%s refused", ok[i]);
		create_request_free(&c);
	}
	for (i = 0; i < NELEM(bad); i++)
		create_422(bad[i], "{}", NOT_OBJECT("\"{}\""));
}

static void
test_create_nul(void **state)
{
	create_400("{\"env\": {\"A\\u0000B\": \"x\"}}",
	    "invalid environment variable name 'A\\x00B'");
	create_400("{\"env\": {\"OK\": \"1\", \"K\": \"v\\u0000\"}}",
	    "invalid environment variable name 'K'");
	create_400("{\"env\": {\"it's\\u0000\": \"x\"}}",
	    "invalid environment variable name \"it's\\x00\"");
	create_400("{\"image\": \"alpine\\u0000\"}",
	    "image must not contain NUL characters");
}

static void
test_create_bounds(void **state)
{
	char	*body, *p;
	int	 i;

	assert_non_null(body = malloc(16 * 1024));
	p = body + sprintf(body, "{\"env\": {");
	for (i = 0; i <= MSG_MAX_ENV; i++)
		p += sprintf(p, "%s\"K%d\": \"v\"", i ? ", " : "", i);
	strcpy(p, "}}");
	create_400(body, "at most 256 environment variables are supported");
	free(body);
}

/* REFERENCE-TESTS 9, 10, 50, 51: the two command forms. */
static void
test_exec_forms(void **state)
{
	struct exec_request	 x;

	exec_ok("{\"command\": \"echo hi\"}", &x);
	assert_int_equal(x.shell, 1);
	assert_int_equal(x.argc, 1);
	assert_string_equal(x.argv[0], "echo hi");
	assert_null(x.argv[1]);
	assert_null(x.workdir);
	assert_int_equal(x.has_timeout, 0);
	assert_int_equal(x.env.count, 0);
	exec_request_free(&x);
	exec_ok("{\"command\": [\"printf\", \"%s|\", \"a b\", \"$HOME\"]}",
	    &x);
	assert_int_equal(x.shell, 0);
	assert_int_equal(x.argc, 4);
	assert_string_equal(x.argv[1], "%s|");
	assert_string_equal(x.argv[3], "$HOME");
	assert_null(x.argv[4]);
	exec_request_free(&x);
	exec_ok("{\"command\": [\"fail\", \"2\"], \"env\": {\"EXTRA\": \"x\"}, "
	    "\"workdir\": \"/tmp\", \"timeout_seconds\": 1.5}", &x);
	assert_int_equal(x.argc, 2);
	assert_int_equal(x.env.count, 1);
	assert_string_equal(x.env.values[0], "x");
	assert_string_equal(x.workdir, "/tmp");
	assert_int_equal(x.has_timeout, 1);
	assert_true(x.timeout_seconds == 1.5);
	exec_request_free(&x);
	/* REFERENCE-TESTS 51: these are managerd's 400s, not 422s. */
	exec_ok("{\"command\": \"\"}", &x);
	exec_request_free(&x);
	exec_ok("{\"command\": \"   \"}", &x);
	exec_request_free(&x);
	exec_ok("{\"command\": []}", &x);
	assert_int_equal(x.shell, 0);
	assert_int_equal(x.argc, 0);
	assert_null(x.argv[0]);
	exec_request_free(&x);
	exec_ok("{\"command\": \"x\", \"timeout_seconds\": 1000000000, "
	    "\"workdir\": null}", &x);
	assert_true(x.timeout_seconds == 1e9);
	assert_null(x.workdir);
	exec_request_free(&x);
}

/* The union: both members report. */
static void
test_exec_command_union(void **state)
{
	exec_422("{\"command\": 5}",
	    "{\"detail\":[{\"type\":\"string_type\",\"loc\":[\"body\","
	    "\"command\",\"str\"],\"msg\":\"Input should be a valid string\","
	    "\"input\":5},{\"type\":\"list_type\",\"loc\":[\"body\","
	    "\"command\",\"list[str]\"],\"msg\":\"Input should be a valid "
	    "list\",\"input\":5}]}");
	exec_422("{\"command\": null}",
	    "{\"detail\":[{\"type\":\"string_type\",\"loc\":[\"body\","
	    "\"command\",\"str\"],\"msg\":\"Input should be a valid string\","
	    "\"input\":null},{\"type\":\"list_type\",\"loc\":[\"body\","
	    "\"command\",\"list[str]\"],\"msg\":\"Input should be a valid "
	    "list\",\"input\":null}]}");
	exec_422("{\"command\": [1, \"a\", true]}",
	    "{\"detail\":[{\"type\":\"string_type\",\"loc\":[\"body\","
	    "\"command\",\"str\"],\"msg\":\"Input should be a valid string\","
	    "\"input\":[1,\"a\",true]},{\"type\":\"string_type\",\"loc\":"
	    "[\"body\",\"command\",\"list[str]\",0],\"msg\":\"Input should be "
	    "a valid string\",\"input\":1},{\"type\":\"string_type\",\"loc\":"
	    "[\"body\",\"command\",\"list[str]\",2],\"msg\":\"Input should be "
	    "a valid string\",\"input\":true}]}");
}

static void
test_exec_schema(void **state)
{
	exec_422("{}",
	    "{\"detail\":[{\"type\":\"missing\",\"loc\":[\"body\",\"command\"],"
	    "\"msg\":\"Field required\",\"input\":{}}]}");
	exec_422("{\"cmd\": \"ls\"}",
	    "{\"detail\":[{\"type\":\"missing\",\"loc\":[\"body\",\"command\"],"
	    "\"msg\":\"Field required\",\"input\":{\"cmd\":\"ls\"}},{\"type\":"
	    "\"extra_forbidden\",\"loc\":[\"body\",\"cmd\"],\"msg\":\"Extra "
	    "inputs are not permitted\",\"input\":\"ls\"}]}");
	exec_422("{\"command\": \"x\", \"timeout_seconds\": 0}",
	    "{\"detail\":[{\"type\":\"greater_than\",\"loc\":[\"body\","
	    "\"timeout_seconds\"],\"msg\":\"Input should be greater than 0\","
	    "\"input\":0,\"ctx\":{\"gt\":0.0}}]}");
	exec_422("{\"command\": \"x\", \"timeout_seconds\": -1.5}",
	    "{\"detail\":[{\"type\":\"greater_than\",\"loc\":[\"body\","
	    "\"timeout_seconds\"],\"msg\":\"Input should be greater than 0\","
	    "\"input\":-1.5,\"ctx\":{\"gt\":0.0}}]}");
	exec_422("{\"command\": \"x\", \"workdir\": 5, \"env\": {\"A\": []}}",
	    "{\"detail\":[{\"type\":\"string_type\",\"loc\":[\"body\",\"env\","
	    "\"A\"],\"msg\":\"Input should be a valid string\",\"input\":[]},"
	    "{\"type\":\"string_type\",\"loc\":[\"body\",\"workdir\"],\"msg\":"
	    "\"Input should be a valid string\",\"input\":5}]}");
}

static void
test_exec_nul(void **state)
{
	exec_400("{\"command\": \"x\", \"workdir\": \"/tmp\\u0000\"}",
	    "path must be a non-empty string");
	exec_400("{\"command\": \"x\", \"env\": {\"\\u0000\": \"\"}}",
	    "invalid environment variable name '\\x00'");
	/* managerd's order: env before workdir. */
	exec_400("{\"command\": \"x\", \"workdir\": \"\\u0000\", "
	    "\"env\": {\"E\": \"\\u0000\"}}",
	    "invalid environment variable name 'E'");
	exec_400("{\"command\": [\"a\", \"b\\u0000\"]}",
	    "command must not contain NUL characters");
}

static void
test_exec_bounds(void **state)
{
	char	*body, *p;
	int	 i;

	assert_non_null(body = malloc(16 * 1024));
	p = body + sprintf(body, "{\"command\": [");
	for (i = 0; i <= MSG_MAX_ARGC; i++)
		p += sprintf(p, "%s\"a\"", i ? ", " : "");
	strcpy(p, "]}");
	exec_400(body, "command has more than 1024 arguments");
	free(body);
}

/* §4.6: {"timeout_seconds": <integer >= 1>}, required. */
static void
test_timeout_body(void **state)
{
	struct body_error	 e;
	int64_t			 secs;

	assert_int_equal(body_parse_timeout(JSON, "{\"timeout_seconds\":600}",
	    23, &secs, &e), 0);
	assert_int_equal(secs, 600);
	assert_int_equal(body_parse_timeout(NULL, "{\"timeout_seconds\":2.0}",
	    23, &secs, &e), 0);
	assert_int_equal(secs, 2);
	timeout_422("{}",
	    "{\"detail\":[{\"type\":\"missing\",\"loc\":[\"body\","
	    "\"timeout_seconds\"],\"msg\":\"Field required\",\"input\":{}}]}");
	timeout_422("{\"timeout_seconds\": 0}",
	    "{\"detail\":[{\"type\":\"greater_than_equal\",\"loc\":[\"body\","
	    "\"timeout_seconds\"],\"msg\":\"Input should be greater than or "
	    "equal to 1\",\"input\":0,\"ctx\":{\"ge\":1}}]}");
	timeout_422("{\"timeout_seconds\": 600, \"extra\": 1}",
	    "{\"detail\":[{\"type\":\"extra_forbidden\",\"loc\":[\"body\","
	    "\"extra\"],\"msg\":\"Extra inputs are not permitted\","
	    "\"input\":1}]}");
	timeout_422("{\"timeout_seconds\": null}",
	    "{\"detail\":[{\"type\":\"int_type\",\"loc\":[\"body\","
	    "\"timeout_seconds\"],\"msg\":\"Input should be a valid integer\","
	    "\"input\":null}]}");
	timeout_422("{\"timeout_seconds\": 1.5}",
	    "{\"detail\":[{\"type\":\"int_from_float\",\"loc\":[\"body\","
	    "\"timeout_seconds\"],\"msg\":\"Input should be a valid integer, "
	    "got a number with a fractional part\",\"input\":1.5}]}");
}

/* Python's repr() of strings with NULs (computed with CPython). */
static void
test_pyrepr(void **state)
{
	static const struct {
		const char	*in;
		size_t		 len;
		const char	*want;
	} cases[] = {
		{ "A\0B", 3, "'A\\x00B'" },
		{ "it's\0", 5, "\"it's\\x00\"" },
		{ "a'b\"c\0", 6, "'a\\'b\"c\\x00'" },
		{ "", 0, "''" },
		{ "\0", 1, "'\\x00'" },
		{ "\303\251\0\n", 4, "'\303\251\\x00\\n'" },
		{ "x\0\0y", 4, "'x\\x00\\x00y'" },
	};
	char	*r;
	size_t	 i;

	for (i = 0; i < NELEM(cases); i++) {
		assert_non_null(r = body_pyrepr(cases[i].in, cases[i].len));
		assert_string_equal(r, cases[i].want);
		free(r);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pyjson_table),
		cmocka_unit_test(test_pyjson_values),
		cmocka_unit_test(test_pyjson_limits),
		cmocka_unit_test(test_pyjson_duplicates),
		cmocka_unit_test(test_create_reference_7),
		cmocka_unit_test(test_create_server_bounds_pass),
		cmocka_unit_test(test_create_minimums),
		cmocka_unit_test(test_create_types),
		cmocka_unit_test(test_create_env_types),
		cmocka_unit_test(test_create_collects_all),
		cmocka_unit_test(test_create_defaults),
		cmocka_unit_test(test_create_full),
		cmocka_unit_test(test_create_lax),
		cmocka_unit_test(test_body_shapes),
		cmocka_unit_test(test_json_invalid),
		cmocka_unit_test(test_body_unparseable),
		cmocka_unit_test(test_body_too_large),
		cmocka_unit_test(test_content_types),
		cmocka_unit_test(test_create_nul),
		cmocka_unit_test(test_create_bounds),
		cmocka_unit_test(test_exec_forms),
		cmocka_unit_test(test_exec_command_union),
		cmocka_unit_test(test_exec_schema),
		cmocka_unit_test(test_exec_nul),
		cmocka_unit_test(test_exec_bounds),
		cmocka_unit_test(test_timeout_body),
		cmocka_unit_test(test_pyrepr),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
