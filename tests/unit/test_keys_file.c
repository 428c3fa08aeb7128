/*
 * The keys file (common/keys_file.c): good files, and every odd one a
 * careless or hostile operator could write (not JSON, duplicates, bad
 * hex, wrong lengths, a huge file, 1,025 keys, non-UTF-8 and non-ASCII
 * names, missing fields, negative quotas); the hash and the constant-time
 * match; the chunks the table travels in.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "keys_file.h"

/* SHA-256("abcdefghijklmnopqrstuvwxyz"), sha256sum's. */
#define H1	"71c480df93d6ae2f1efad1447c66c9525e316218cf51fc8d9ed832f2daf18b73"
#define H2	"b094b301f7d948295e66ac463bc2c7f3d32f3a52e40baff2e86a0cdcd203367c"

static char	 err[512];

static int
parse(const char *text, struct keys_table *t)
{
	return keys_file_parse(text, strlen(text), t, err, sizeof(err));
}

static void
refused(const char *text, const char *words)
{
	struct keys_table	 t;

	if (parse(text, &t) != -1)
		fail_msg("accepted: %s", text);
	assert_null(t.v);
	assert_int_equal(t.n, 0);
	if (strstr(err, words) == NULL)
		fail_msg("error \"%s\" lacks \"%s\" for %s", err, words, text);
	/* An error names places, never a hash. */
	assert_null(strstr(err, "71c480df"));
}

static void
test_good_file(void **state)
{
	struct keys_table	 t;
	const struct key_entry	*e;

	(void)state;
	assert_int_equal(parse("{\"keys\": [{\"name\": \"ci-1\", \"tenant\": "
	    "\"team-a\", \"sha256\": \"" H1 "\", \"quotas\": {\"sandboxes\": "
	    "3, \"cpus\": 2.5, \"memory_mb\": 1024, \"snapshot_bytes\": "
	    "1000000, \"requests_per_second\": 2.5}}, {\"name\": \"ops\", "
	    "\"tenant\": \"ops\", \"admin\": true, \"sha256\": \""
	    "B094B301F7D948295E66AC463BC2C7F3D32F3A52E40BAFF2E86A0CDCD203367C"
	    "\"}]}\n", &t), 0);
	assert_int_equal(t.n, 2);
	assert_non_null(e = keys_table_find(&t, "ci-1"));
	assert_string_equal(e->tenant, "team-a");
	assert_false(e->admin);
	assert_int_equal(e->quota.sandboxes, 3);
	assert_true(e->quota.cpus == 2.5);
	assert_int_equal(e->quota.memory_mb, 1024);
	assert_int_equal(e->quota.snapshot_bytes, 1000000);
	assert_true(e->quota.rate == 2.5);
	assert_int_equal(e->quota.burst, 3);	/* a second's, rounded up */
	assert_non_null(e = keys_table_find(&t, "ops"));
	assert_true(e->admin);
	/* No quotas: none. */
	assert_int_equal(e->quota.sandboxes, KEY_NO_LIMIT);
	assert_true(e->quota.cpus < 0);
	assert_true(e->quota.rate == 0);
	assert_null(keys_table_find(&t, "nobody"));
	keys_table_free(&t);
	assert_int_equal(parse("{\"keys\": []}", &t), 0);
	assert_int_equal(t.n, 0);
	keys_table_free(&t);
}

static void
test_not_json(void **state)
{
	(void)state;
	refused("", "not JSON");
	refused("not json", "not JSON");
	refused("{\"keys\": []", "not JSON");
	refused("{\"keys\": []} {}", "not JSON");
	refused("[]", "one JSON object");
	refused("{\"keys\": {}}", "not an array");
	refused("{}", "\"keys\": missing");
	refused("{\"keys\": [], \"extra\": 1}", "unknown field");
	refused("{\"keys\": [1]}", "keys[0]: not an object");
	/* Comments and trailing commas are not JSON either. */
	refused("{\"keys\": [],}", "not JSON");
}

static void
test_fields(void **state)
{
	(void)state;
	refused("{\"keys\": [{\"tenant\": \"t\", \"sha256\": \"" H1 "\"}]}",
	    "keys[0].name: missing");
	refused("{\"keys\": [{\"name\": \"n\", \"sha256\": \"" H1 "\"}]}",
	    "keys[0].tenant: missing");
	refused("{\"keys\": [{\"name\": \"n\", \"tenant\": \"t\"}]}",
	    "keys[0].sha256: missing");
	refused("{\"keys\": [{\"name\": \"n\", \"tenant\": \"t\", \"sha256\": "
	    "\"" H1 "\", \"key\": \"plain\"}]}", "keys[0]: unknown field");
	refused("{\"keys\": [{\"name\": \"n\", \"tenant\": \"t\", \"sha256\": "
	    "\"" H1 "\", \"admin\": 1}]}", "keys[0].admin");
	refused("{\"keys\": [{\"name\": 7, \"tenant\": \"t\", \"sha256\": "
	    "\"" H1 "\"}]}", "keys[0].name");
}

static void
test_hashes(void **state)
{
	(void)state;
	/* One digit short, one long, a non-hex digit, a plain key. */
	refused("{\"keys\": [{\"name\": \"n\", \"tenant\": \"t\", \"sha256\": "
	    "\"71c480df93d6ae2f1efad1447c66c9525e316218cf51fc8d9ed832f2daf18b7"
	    "\"}]}", "64 hexadecimal digits");
	refused("{\"keys\": [{\"name\": \"n\", \"tenant\": \"t\", \"sha256\": "
	    "\"" H1 "0\"}]}", "64 hexadecimal digits");
	refused("{\"keys\": [{\"name\": \"n\", \"tenant\": \"t\", \"sha256\": "
	    "\"g1c480df93d6ae2f1efad1447c66c9525e316218cf51fc8d9ed832f2daf18b73"
	    "\"}]}", "64 hexadecimal digits");
	refused("{\"keys\": [{\"name\": \"n\", \"tenant\": \"t\", \"sha256\": "
	    "\"test-key-0123456789abcdef\"}]}", "64 hexadecimal digits");
}

static void
test_duplicates(void **state)
{
	(void)state;
	refused("{\"keys\": [{\"name\": \"n\", \"tenant\": \"t\", \"sha256\": "
	    "\"" H1 "\"}, {\"name\": \"n\", \"tenant\": \"u\", \"sha256\": "
	    "\"" H2 "\"}]}", "keys[1].name: the name of keys[0]");
	refused("{\"keys\": [{\"name\": \"n\", \"tenant\": \"t\", \"sha256\": "
	    "\"" H1 "\"}, {\"name\": \"m\", \"tenant\": \"t\", \"sha256\": "
	    "\"" H1 "\"}]}", "keys[1].sha256: the same key as keys[0]");
}

static void
test_names(void **state)
{
	static const char *const bad[] = {
		"", ".", "..", "-x", "a b", "a/b", "caf\xc3\xa9", "a\xff",
		"key-1", "key-007", "\xe2\x80\xae", "a\\u0000b",
		"0123456789012345678901234567890123456789012345678901234567890"
		"1234",
	};
	char	 text[512];
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "{\"keys\": [{\"name\": \"%s\", "
		    "\"tenant\": \"t\", \"sha256\": \"" H1 "\"}]}", bad[i]);
		refused(text, i == 7 ? "not JSON" : "keys[0].name");
		snprintf(text, sizeof(text), "{\"keys\": [{\"name\": \"n\", "
		    "\"tenant\": \"%s\", \"sha256\": \"" H1 "\"}]}", bad[i]);
		refused(text, i == 7 ? "not JSON" : "keys[0].tenant");
	}
	assert_true(key_name_valid("key-a"));
	assert_true(key_name_valid("a.b_c-D9"));
	assert_true(key_name_valid(
	    "012345678901234567890123456789012345678901234567890123456789012"));
}

static void
test_quotas(void **state)
{
	static const char *const bad[] = {
		"\"sandboxes\": -1", "\"sandboxes\": 1.5", "\"sandboxes\": \"2\"",
		"\"cpus\": -0.5", "\"cpus\": \"1\"", "\"memory_mb\": -1",
		"\"snapshot_bytes\": -5", "\"snapshot_bytes\": 1e30",
		"\"sandboxes\": 99999999999999999999",
		"\"requests_per_second\": 0", "\"requests_per_second\": -1",
		"\"burst\": 0", "\"burst\": 3", "\"cpu\": 1",
	};
	struct keys_table	 t;
	char			 text[512];
	size_t			 i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "{\"keys\": [{\"name\": \"n\", "
		    "\"tenant\": \"t\", \"sha256\": \"" H1 "\", \"quotas\": "
		    "{%s}}]}", bad[i]);
		refused(text, "keys[0].quotas");
	}
	/* Zero is a quota (nothing allowed), null none. */
	assert_int_equal(parse("{\"keys\": [{\"name\": \"n\", \"tenant\": "
	    "\"t\", \"sha256\": \"" H1 "\", \"quotas\": {\"sandboxes\": 0, "
	    "\"memory_mb\": null, \"requests_per_second\": 0.5, \"burst\": "
	    "7}}]}", &t), 0);
	assert_int_equal(t.v[0].quota.sandboxes, 0);
	assert_int_equal(t.v[0].quota.memory_mb, KEY_NO_LIMIT);
	assert_int_equal(t.v[0].quota.burst, 7);
	keys_table_free(&t);
}

static void
test_sizes(void **state)
{
	struct keys_table	 t;
	char			*big, *p;
	size_t			 i, n = 1025;

	(void)state;
	/* 1,024 keys are taken, 1,025 refused. */
	assert_non_null(big = malloc(n * 160 + 64));
	for (i = 0; i < 2; i++) {
		size_t	 k, count = i == 0 ? 1024 : 1025;

		p = big + sprintf(big, "{\"keys\": [");
		for (k = 0; k < count; k++)
			p += sprintf(p, "%s{\"name\": \"k%zu\", \"tenant\": "
			    "\"t\", \"sha256\": \"%064zx\"}", k ? "," : "", k,
			    k);
		sprintf(p, "]}");
		if (i == 0) {
			assert_int_equal(parse(big, &t), 0);
			assert_int_equal(t.n, 1024);
			keys_table_free(&t);
		} else
			refused(big, "more than 1024 keys");
	}
	free(big);
	/* Past a MiB: refused before it is parsed. */
	assert_non_null(big = malloc(KEYS_FILE_MAX_BYTES + 2));
	memset(big, ' ', KEYS_FILE_MAX_BYTES + 1);
	memcpy(big, "{\"keys\": []}", 12);
	big[KEYS_FILE_MAX_BYTES + 1] = '\0';
	refused(big, "larger than");
	/* At a MiB exactly, whitespace after the object is fine. */
	big[KEYS_FILE_MAX_BYTES] = '\0';
	assert_int_equal(parse(big, &t), 0);
	free(big);
	/* A NUL inside is no JSON. */
	assert_int_equal(keys_file_parse("{\"keys\": []}\0", 13, &t, err,
	    sizeof(err)), -1);
	/* Deeply nested input stops at the depth bound. */
	refused("{\"keys\": [[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]}",
	    "not JSON");
}

static void
test_read(void **state)
{
	struct keys_table	 t;
	char			 path[] = "/tmp/test_keys_file.XXXXXX";
	int			 fd;

	(void)state;
	assert_int_equal(keys_file_read("/nonexistent/keys.json", &t, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "No such file"));
	assert_true((fd = mkstemp(path)) != -1);
	assert_int_equal(write(fd, "{\"keys\": []}\n", 13), 13);
	close(fd);
	assert_int_equal(keys_file_read(path, &t, err, sizeof(err)), 0);
	unlink(path);
}

/* The hash is SHA-256; match finds the one entry, whichever it is. */
static void
test_hash_and_match(void **state)
{
	struct keys_table	 t;
	unsigned char		 h[KEY_HASH_LEN];

	(void)state;
	assert_int_equal(parse("{\"keys\": [{\"name\": \"a\", \"tenant\": \"t\","
	    " \"sha256\": \"" H2 "\"}, {\"name\": \"b\", \"tenant\": \"t\", "
	    "\"sha256\": \"" H1 "\"}]}", &t), 0);
	key_hash("abcdefghijklmnopqrstuvwxyz", 26, h);
	assert_int_equal(h[0], 0x71);
	assert_int_equal(h[31], 0x73);
	assert_int_equal(keys_table_match(&t, h), 1);
	h[31] ^= 1;
	assert_int_equal(keys_table_match(&t, h), -1);
	memcpy(h, t.v[0].sha256, sizeof(h));
	assert_int_equal(keys_table_match(&t, h), 0);
	keys_table_free(&t);
	assert_int_equal(keys_table_match(&t, h), -1);
}

/* A table of 130 keys goes in three chunks and comes back the same. */
static void
test_chunks(void **state)
{
	struct keys_table	 t, back;
	struct imsg		 m;
	struct msgw		 w;
	uint32_t		 total;
	size_t			 first;
	char			*text, *p;
	size_t			 k;

	(void)state;
	assert_non_null(text = malloc(130 * 200));
	p = text + sprintf(text, "{\"keys\": [");
	for (k = 0; k < 130; k++)
		p += sprintf(p, "%s{\"name\": \"k%zu\", \"tenant\": \"t%zu\", "
		    "\"admin\": %s, \"sha256\": \"%064zx\", \"quotas\": "
		    "{\"sandboxes\": %zu, \"requests_per_second\": 1.5}}",
		    k ? "," : "", k, k % 3, k % 2 ? "true" : "false", k, k);
	sprintf(p, "]}");
	assert_int_equal(parse(text, &t), 0);
	free(text);
	memset(&back, 0, sizeof(back));
	for (first = 0; first < t.n; first += KEYS_PER_MESSAGE) {
		msgw_init(&w);
		msg_put_keys_chunk(&w, &t, first);
		assert_false(w.overflow);
		memset(&m, 0, sizeof(m));
		m.fd = -1;
		m.data = w.buf;
		m.len = w.len;
		assert_int_equal(msg_get_keys_chunk(&m, &back, &total), 0);
		assert_int_equal(total, 130);
	}
	assert_int_equal(back.n, 130);
	assert_memory_equal(back.v, t.v, t.n * sizeof(*t.v));
	/* A chunk out of order, or a second table's start: refused. */
	msgw_init(&w);
	msg_put_keys_chunk(&w, &t, 64);
	m.data = w.buf;
	m.len = w.len;
	assert_int_equal(msg_get_keys_chunk(&m, &back, &total), -1);
	keys_table_free(&back);
	/* A trailing byte, or a name a file would refuse: refused. */
	msgw_init(&w);
	msg_put_keys_chunk(&w, &t, 0);
	msgw_u8(&w, 0);
	m.data = w.buf;
	m.len = w.len;
	assert_int_equal(msg_get_keys_chunk(&m, &back, &total), -1);
	keys_table_free(&back);
	strlcpy(t.v[0].name, "key-1", sizeof(t.v[0].name));
	msgw_init(&w);
	msg_put_keys_chunk(&w, &t, 0);
	m.data = w.buf;
	m.len = w.len;
	assert_int_equal(msg_get_keys_chunk(&m, &back, &total), -1);
	keys_table_free(&back);
	keys_table_free(&t);
	/* The empty table is one message. */
	msgw_init(&w);
	msg_put_keys_chunk(&w, &t, 0);
	m.data = w.buf;
	m.len = w.len;
	assert_int_equal(msg_get_keys_chunk(&m, &back, &total), 0);
	assert_int_equal(total, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_file),
		cmocka_unit_test(test_not_json),
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_hashes),
		cmocka_unit_test(test_duplicates),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_quotas),
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_read),
		cmocka_unit_test(test_hash_and_match),
		cmocka_unit_test(test_chunks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
