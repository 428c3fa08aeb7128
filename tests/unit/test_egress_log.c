/*
 * Tests for egress-proxy/egress_log.c: the ring of a sandbox's recent
 * egress connections, its drops, late updates, and its JSON with what a
 * hostile client may have put in a host name.
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
#include <json-c/json.h>

#include "egress_log.h"

static const struct timespec t0 = { 1764684844, 123456789 };

static uint64_t
add(struct egress_log *log, const char *host, int allowed)
{
	return egress_log_add(log, &t0, host, strlen(host), 443,
	    allowed ? "203.0.113.7" : NULL, allowed,
	    allowed ? NULL : "address 10.0.0.1 is private");
}

static json_object *
entry(json_object *o, size_t i)
{
	json_object	*entries;

	assert_true(json_object_object_get_ex(o, "entries", &entries));
	return json_object_array_get_idx(entries, i);
}

static const char *
field_str(json_object *e, const char *key)
{
	json_object	*v;

	assert_true(json_object_object_get_ex(e, key, &v));
	return v == NULL ? NULL : json_object_get_string(v);
}

static int64_t
field_int(json_object *e, const char *key)
{
	json_object	*v;

	assert_true(json_object_object_get_ex(e, key, &v));
	return json_object_get_int64(v);
}

static void
test_init(void **state)
{
	struct egress_log	 log;

	assert_int_equal(egress_log_init(&log, 0), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(egress_log_init(&log, EGRESS_LOG_MAX + 1), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(egress_log_init(&log, EGRESS_LOG_DEFAULT), 0);
	assert_int_equal(log.capacity, EGRESS_LOG_DEFAULT);
	egress_log_free(&log);
	egress_log_free(&log);
}

static void
test_entries(void **state)
{
	struct egress_log	 log;
	json_object		*o, *e, *v;
	uint64_t		 a, b;

	assert_int_equal(egress_log_init(&log, 4), 0);
	a = add(&log, "pypi.org", 1);
	b = add(&log, "internal.example", 0);
	assert_int_equal(a, 1);
	assert_int_equal(b, 2);
	assert_int_equal(egress_log_update(&log, a, 100, 5000), 0);

	assert_non_null(o = egress_log_to_json(&log));
	assert_int_equal(json_object_array_length(json_object_object_get(o,
	    "entries")), 2);
	assert_int_equal(field_int(o, "dropped"), 0);
	e = entry(o, 0);
	assert_string_equal(field_str(e, "time"), "2025-12-02T14:14:04.123Z");
	assert_string_equal(field_str(e, "host"), "pypi.org");
	assert_int_equal(field_int(e, "port"), 443);
	assert_string_equal(field_str(e, "address"), "203.0.113.7");
	assert_true(json_object_get_boolean(json_object_object_get(e,
	    "allowed")));
	assert_true(json_object_object_get_ex(e, "reason", &v));
	assert_null(v);
	assert_int_equal(field_int(e, "bytes_sent"), 100);
	assert_int_equal(field_int(e, "bytes_received"), 5000);
	e = entry(o, 1);
	assert_string_equal(field_str(e, "host"), "internal.example");
	assert_false(json_object_get_boolean(json_object_object_get(e,
	    "allowed")));
	assert_string_equal(field_str(e, "reason"),
	    "address 10.0.0.1 is private");
	assert_true(json_object_object_get_ex(e, "address", &v));
	assert_null(v);
	assert_int_equal(field_int(e, "bytes_sent"), 0);
	json_object_put(o);
	egress_log_free(&log);
}

static void
test_wrap(void **state)
{
	struct egress_log	 log;
	json_object		*o;
	char			 host[16];
	uint64_t		 ids[10];
	size_t			 i;

	assert_int_equal(egress_log_init(&log, 3), 0);
	for (i = 0; i < 10; i++) {
		snprintf(host, sizeof(host), "h%zu.example", i);
		ids[i] = add(&log, host, 1);
	}
	assert_int_equal(log.count, 3);
	assert_int_equal(log.dropped, 7);
	/* Newest last: the three last ones, in order. */
	assert_non_null(o = egress_log_to_json(&log));
	assert_int_equal(field_int(o, "dropped"), 7);
	for (i = 0; i < 3; i++) {
		snprintf(host, sizeof(host), "h%zu.example", i + 7);
		assert_string_equal(field_str(entry(o, i), "host"), host);
	}
	assert_null(entry(o, 3));
	json_object_put(o);

	/* A dropped record's update does nothing, a kept one's lands. */
	assert_int_equal(egress_log_update(&log, ids[6], 1, 1), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(egress_log_update(&log, ids[0], 1, 1), -1);
	assert_int_equal(egress_log_update(&log, 0, 1, 1), -1);
	assert_int_equal(egress_log_update(&log, ids[9] + 1, 1, 1), -1);
	assert_int_equal(egress_log_update(&log, ids[7], 7, 70), 0);
	assert_int_equal(egress_log_find(&log, ids[7])->bytes_received, 70);
	assert_null(egress_log_find(&log, ids[6]));
	for (i = 7; i < 10; i++)
		assert_int_equal(egress_log_find(&log, ids[i])->id, ids[i]);
	/* The slot of a dropped id now holds another record: untouched. */
	assert_int_equal(egress_log_find(&log, ids[9])->bytes_sent, 0);
	egress_log_free(&log);
}

static void
test_capacity_one(void **state)
{
	struct egress_log	 log;
	uint64_t		 a, b;

	assert_int_equal(egress_log_init(&log, 1), 0);
	a = add(&log, "a.b", 1);
	b = add(&log, "c.d", 1);
	assert_int_equal(egress_log_update(&log, a, 1, 1), -1);
	assert_int_equal(egress_log_update(&log, b, 2, 3), 0);
	assert_string_equal(egress_log_find(&log, b)->host, "c.d");
	assert_int_equal(log.dropped, 1);
	egress_log_free(&log);
}

/* Whatever a client named, the JSON is valid UTF-8 and parses back. */
static void
test_hostile_text(void **state)
{
	struct egress_log	 log;
	json_object		*o, *back;
	const char		*js, *h;
	char			 big[EGRESS_NAME_MAX + 100];

	assert_int_equal(egress_log_init(&log, 8), 0);
	egress_log_add(&log, &t0, "\xff\xfe" "a", 3, 1, NULL, 0, "bad \xc3");
	egress_log_add(&log, &t0, "a\"b\\c\n\x01", 7, 2, NULL, 0, NULL);
	egress_log_add(&log, &t0, "caf\xc3\xa9", 5, 3, "", 1, "");
	egress_log_add(&log, &t0, "a\0evil", 6, 4, NULL, 0, NULL);
	memset(big, 'x', sizeof(big));
	egress_log_add(&log, &t0, big, sizeof(big), 5, NULL, 0, NULL);
	/* An overlong "/" and an encoded surrogate. */
	egress_log_add(&log, &t0, "\xc0\xaf\xed\xa0\x80", 5, 6, NULL, 0, NULL);

	assert_non_null(o = egress_log_to_json(&log));
	js = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	assert_non_null(js);
	assert_non_null(back = json_tokener_parse(js));
	assert_string_equal(field_str(entry(back, 0), "host"),
	    "\xef\xbf\xbd\xef\xbf\xbd" "a");
	assert_string_equal(field_str(entry(back, 0), "reason"),
	    "bad \xef\xbf\xbd");
	assert_string_equal(field_str(entry(back, 1), "host"),
	    "a\"b\\c\n\x01");
	/* Escaped on the wire, not raw. */
	assert_non_null(strstr(js, "a\\\"b\\\\c\\n\\u0001"));
	assert_string_equal(field_str(entry(back, 2), "host"),
	    "caf\xc3\xa9");
	assert_null(field_str(entry(back, 2), "address"));
	assert_null(field_str(entry(back, 2), "reason"));
	/* Cut at the NUL: nothing after it is shown as part of the name. */
	assert_string_equal(field_str(entry(back, 3), "host"), "a");
	h = field_str(entry(back, 4), "host");
	assert_int_equal(strlen(h), EGRESS_NAME_MAX);
	assert_string_equal(field_str(entry(back, 5), "host"),
	    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	json_object_put(back);
	json_object_put(o);
	egress_log_free(&log);
}

static void
test_times(void **state)
{
	struct egress_log	 log;
	struct timespec		 t = { 0, 999999999 };
	json_object		*o;

	assert_int_equal(egress_log_init(&log, 2), 0);
	egress_log_add(&log, &t, "a.b", 3, 1, NULL, 1, NULL);
	t.tv_sec = 4102444800;	/* 2100-01-01 */
	t.tv_nsec = 1000000000;	/* not a time: shown as .000 */
	egress_log_add(&log, &t, "a.b", 3, 1, NULL, 1, NULL);
	assert_non_null(o = egress_log_to_json(&log));
	assert_string_equal(field_str(entry(o, 0), "time"),
	    "1970-01-01T00:00:00.999Z");
	assert_string_equal(field_str(entry(o, 1), "time"),
	    "2100-01-01T00:00:00.000Z");
	json_object_put(o);
	egress_log_free(&log);
}

static void
test_empty(void **state)
{
	struct egress_log	 log;
	json_object		*o;

	assert_int_equal(egress_log_init(&log, 2), 0);
	assert_non_null(o = egress_log_to_json(&log));
	assert_string_equal(json_object_to_json_string_ext(o,
	    JSON_C_TO_STRING_PLAIN), "{\"entries\":[],\"dropped\":0}");
	json_object_put(o);
	assert_null(egress_log_find(&log, 1));
	egress_log_free(&log);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init),
		cmocka_unit_test(test_entries),
		cmocka_unit_test(test_wrap),
		cmocka_unit_test(test_capacity_one),
		cmocka_unit_test(test_hostile_text),
		cmocka_unit_test(test_times),
		cmocka_unit_test(test_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
