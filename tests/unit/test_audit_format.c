/*
 * Tests for managerd/audit.c's line: one JSON object and one newline,
 * valid UTF-8 and valid JSON whatever bytes the ids and names hold
 * (non-ASCII kept, invalid UTF-8 as U+FFFD, quotes, backslashes and
 * control bytes escaped), absent fields left out, the time in RFC 3339
 * UTC with milliseconds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "audit.h"
#include "utf8.h"

static char *
format_ok(const struct audit_record *r, size_t *lenp)
{
	char	*line;
	size_t	 len;

	if ((line = audit_format(r, &len)) == NULL)
		fail_msg("audit_format failed");
	assert_int_equal(strlen(line), len);
	assert_true(len >= 3 && line[len - 1] == '\n');
	/* One line: the only newline is the last byte. */
	assert_ptr_equal(strchr(line, '\n'), line + len - 1);
	assert_true(utf8_valid(line, len));
	if (lenp != NULL)
		*lenp = len;
	return line;
}

static json_object *
parse_ok(const char *line)
{
	json_object	*o;

	if ((o = json_tokener_parse(line)) == NULL ||
	    !json_object_is_type(o, json_type_object))
		fail_msg("not a JSON object: %s", line);
	return o;
}

static const char *
field(json_object *o, const char *key)
{
	json_object	*v;

	if (!json_object_object_get_ex(o, key, &v))
		return NULL;
	return json_object_get_string(v);
}

static void
test_plain(void **state)
{
	struct audit_record	 r;
	char			*line;

	memset(&r, 0, sizeof(r));
	r.time = 1764637323.456789;
	r.duration = 0.0123;
	r.key = "ci";
	r.tenant = "team-a";
	r.client = "127.0.0.1";
	r.route = "POST /v1/sandboxes/{sandbox_id}/exec";
	r.sandbox_id = "sb_0123456789abcdef";
	r.status = 200;
	line = format_ok(&r, NULL);
	assert_string_equal(line, "{\"time\":\"2025-12-02T01:02:03.456Z\","
	    "\"key\":\"ci\",\"tenant\":\"team-a\",\"client\":\"127.0.0.1\","
	    "\"route\":\"POST /v1/sandboxes/{sandbox_id}/exec\","
	    "\"sandbox_id\":\"sb_0123456789abcdef\",\"status\":200,"
	    "\"duration_ms\":12}\n");
	free(line);
}

static void
test_failure_and_absent(void **state)
{
	struct audit_record	 r;
	json_object		*o;
	char			*line;

	memset(&r, 0, sizeof(r));
	r.route = "DELETE /v1/snapshots/{id}";
	r.snapshot_id = "snap_x";
	r.status = 404;
	r.error = "not_found";
	r.duration = -1.0;	/* a clock that stepped back: 0, not < 0 */
	r.client_gone = 1;
	line = format_ok(&r, NULL);
	o = parse_ok(line);
	assert_string_equal(field(o, "time"), "1970-01-01T00:00:00.000Z");
	assert_string_equal(field(o, "error"), "not_found");
	assert_string_equal(field(o, "status"), "404");
	assert_string_equal(field(o, "duration_ms"), "0");
	assert_string_equal(field(o, "client_gone"), "true");
	assert_null(field(o, "key"));
	assert_null(field(o, "sandbox_id"));
	assert_null(field(o, "process_id"));
	json_object_put(o);
	free(line);
}

static void
test_odd_bytes(void **state)
{
	struct audit_record	 r;
	json_object		*o;
	char			*line;

	memset(&r, 0, sizeof(r));
	r.key = "cl\xc3\xa9-\xe2\x82\xac";		/* "clé-€" */
	r.tenant = "\xff\xfe";				/* not UTF-8 */
	r.sandbox_id = "sb_\xc3";			/* cut short */
	r.snapshot_id = "q\"b\\s/\x01\x1f\x7f";
	r.process_id = "\xed\xa0\x80";			/* a surrogate */
	r.route = "\xf4\x90\x80\x80";			/* above U+10FFFF */
	r.status = 400;
	line = format_ok(&r, NULL);
	o = parse_ok(line);
	assert_string_equal(field(o, "key"), "cl\xc3\xa9-\xe2\x82\xac");
	assert_string_equal(field(o, "tenant"), "\xef\xbf\xbd\xef\xbf\xbd");
	assert_string_equal(field(o, "sandbox_id"), "sb_\xef\xbf\xbd");
	assert_string_equal(field(o, "snapshot_id"), "q\"b\\s/\x01\x1f\x7f");
	assert_non_null(strstr(line, "\\u0001"));
	assert_non_null(strstr(line, "\\u001f"));
	assert_null(strstr(field(o, "process_id"), "\xed"));
	assert_null(strstr(field(o, "route"), "\xf4"));
	json_object_put(o);
	free(line);
}

static void
test_time(void **state)
{
	struct audit_record	 r;
	json_object		*o;
	char			*line;

	memset(&r, 0, sizeof(r));
	r.time = 951782400.9999;	/* 2000-02-29, the fraction cut */
	line = format_ok(&r, NULL);
	o = parse_ok(line);
	assert_string_equal(field(o, "time"), "2000-02-29T00:00:00.999Z");
	json_object_put(o);
	free(line);
	r.time = 1e300;			/* out of range: the epoch */
	line = format_ok(&r, NULL);
	o = parse_ok(line);
	assert_string_equal(field(o, "time"), "1970-01-01T00:00:00.000Z");
	json_object_put(o);
	free(line);
}

static void
random_bytes(char *buf, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		buf[i] = (char)(1 + random() % 255);
	buf[n] = '\0';
}

/* Any bytes in every string: still one valid JSON line. */
static void
test_random(void **state)
{
	struct audit_record	 r;
	char			 s[7][64], *line;
	json_object		*o;
	int			 i, k;

	srandom(13);
	for (i = 0; i < 3000; i++) {
		for (k = 0; k < 7; k++)
			random_bytes(s[k], (size_t)(random() % 63));
		memset(&r, 0, sizeof(r));
		r.key = s[0];
		r.tenant = s[1];
		r.client = s[2];
		r.route = s[3];
		r.sandbox_id = s[4];
		r.snapshot_id = s[5];
		r.process_id = s[6];
		r.status = (int)(random() % 600);
		line = format_ok(&r, NULL);
		o = parse_ok(line);
		json_object_put(o);
		free(line);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_failure_and_absent),
		cmocka_unit_test(test_odd_bytes),
		cmocka_unit_test(test_time),
		cmocka_unit_test(test_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
