/*
 * Labels (docs/rest-api.md "Labels"): the rules of common/labels.c, the
 * sets and filters, their codecs (common/labels_msg.c, and the label
 * fields of create_request, sandbox_info and fork_request), and the
 * bodies that carry them (apid/body_labels.c): 422 for what breaks the
 * schema, 400 invalid_request for what breaks the rules, with odd input:
 * non-ASCII and invalid UTF-8, control characters, 33 labels, a 64-byte
 * key, a 256-byte value, an empty key, nested objects, numbers, null,
 * duplicate keys and a huge body.
 */
#include <sys/queue.h>

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "apid.h"
#include "file_msg.h"

#define JSON	"application/json"

static void
test_key_rules(void **state)
{
	char	 k[80];

	assert_true(label_key_valid("a", 1));
	assert_true(label_key_valid("9", 1));
	assert_true(label_key_valid("team.ml/owner_x-1", 17));
	assert_false(label_key_valid("", 0));
	assert_false(label_key_valid("-a", 2));
	assert_false(label_key_valid(".a", 2));
	assert_false(label_key_valid("/a", 2));
	assert_false(label_key_valid("_a", 2));
	assert_false(label_key_valid("a=b", 3));
	assert_false(label_key_valid("a b", 3));
	assert_false(label_key_valid("a,b", 3));
	assert_false(label_key_valid("\303\251", 2));	/* é */
	assert_false(label_key_valid("a\0b", 3));
	memset(k, 'k', sizeof(k));
	assert_true(label_key_valid(k, 63));
	assert_false(label_key_valid(k, 64));
}

static void
test_value_rules(void **state)
{
	char	 v[300];

	assert_true(label_value_valid("", 0));
	assert_true(label_value_valid("prod = yes, ok", 14));
	assert_true(label_value_valid("\303\251\360\237\230\200", 6));
	assert_false(label_value_valid("a\nb", 3));
	assert_false(label_value_valid("a\tb", 3));
	assert_false(label_value_valid("\177", 1));		/* DEL */
	assert_false(label_value_valid("\302\205", 2));	/* U+0085 */
	assert_false(label_value_valid("a\0b", 3));
	assert_false(label_value_valid("\377", 1));
	assert_false(label_value_valid("\303", 1));		/* truncated */
	assert_false(label_value_valid("\300\200", 2));	/* overlong */
	assert_false(label_value_valid("\355\240\200", 3));	/* surrogate */
	memset(v, 'v', sizeof(v));
	assert_true(label_value_valid(v, 255));
	assert_false(label_value_valid(v, 256));
}

static void
test_sets(void **state)
{
	struct label_list	 l, c;

	memset(&l, 0, sizeof(l));
	assert_int_equal(labels_set(&l, "b", "2"), 0);
	assert_int_equal(labels_set(&l, "a", "1"), 0);
	assert_int_equal(labels_set(&l, "c", "3"), 0);
	assert_int_equal(labels_set(&l, "b", "two"), 0);
	assert_int_equal(l.count, 3);
	assert_string_equal(l.keys[0], "a");
	assert_string_equal(l.keys[1], "b");
	assert_string_equal(l.values[1], "two");
	assert_string_equal(l.keys[2], "c");
	labels_remove(&l, "b");
	labels_remove(&l, "zz");
	assert_int_equal(l.count, 2);
	assert_null(labels_get(&l, "b"));
	assert_string_equal(labels_get(&l, "c"), "3");
	assert_int_equal(labels_copy(&c, &l), 0);
	assert_int_equal(labels_check(&c), 0);
	labels_free(&l);
	assert_string_equal(labels_get(&c, "a"), "1");
	labels_free(&c);
}

static void
test_filters(void **state)
{
	struct label_filter	 f;
	struct label_list	 l;
	const char		*why;
	int			 i;
	char			 s[16];

	memset(&f, 0, sizeof(f));
	memset(&l, 0, sizeof(l));
	labels_set(&l, "env", "prod=1");
	labels_set(&l, "team", "ml");
	assert_true(label_filter_match(&f, &l));	/* no filter */
	assert_int_equal(label_filter_parse(&f, "env=prod=1", 10, &why), 0);
	assert_string_equal(f.values[0], "prod=1");
	assert_true(label_filter_match(&f, &l));
	assert_int_equal(label_filter_parse(&f, "team", 4, &why), 0);
	assert_null(f.values[1]);
	assert_true(label_filter_match(&f, &l));
	assert_int_equal(label_filter_parse(&f, "team=", 5, &why), 0);
	assert_string_equal(f.values[2], "");
	assert_false(label_filter_match(&f, &l));	/* ANDed */
	label_filter_free(&f);
	assert_int_equal(label_filter_parse(&f, "gone", 4, &why), 0);
	assert_false(label_filter_match(&f, &l));
	label_filter_free(&f);
	assert_int_equal(label_filter_parse(&f, "=x", 2, &why), -1);
	assert_int_equal(errno, EINVAL);
	assert_non_null(why);
	assert_int_equal(label_filter_parse(&f, "k=\n", 3, &why), -1);
	assert_int_equal(label_filter_parse(&f, "k=\377", 3, &why), -1);
	for (i = 0; i < LABEL_FILTERS_MAX; i++) {
		snprintf(s, sizeof(s), "k%d", i);
		assert_int_equal(label_filter_parse(&f, s, strlen(s), &why), 0);
	}
	assert_int_equal(label_filter_parse(&f, "one", 3, &why), -1);
	assert_int_equal(errno, E2BIG);
	label_filter_free(&f);
	labels_free(&l);
}

/* Wrap a payload as the message a peer would send. */
static void
as_imsg(struct imsg *m, struct msgw *w)
{
	memset(m, 0, sizeof(*m));
	m->data = w->buf;
	m->len = w->len;
	m->fd = -1;
}

static void
test_info_codec(void **state)
{
	struct sandbox_info	 in, out;
	struct msgw		 w;
	struct imsg		 m;
	char			 id[] = "sb_0123456789abcdef", image[] = "img";

	memset(&in, 0, sizeof(in));
	in.id = id;
	in.image = image;
	labels_set(&in.labels, "env", "prod");
	labels_set(&in.labels, "\303\251", "x");	/* not a key */
	msgw_init(&w);
	msg_put_sandbox_info(&w, &in);
	as_imsg(&m, &w);
	assert_int_equal(msg_get_sandbox_info(&m, &out), -1);
	labels_remove(&in.labels, "\303\251");
	msgw_init(&w);
	msg_put_sandbox_info(&w, &in);
	as_imsg(&m, &w);
	assert_int_equal(msg_get_sandbox_info(&m, &out), 0);
	assert_int_equal(out.labels.count, 1);
	assert_string_equal(labels_get(&out.labels, "env"), "prod");
	sandbox_info_free(&out);
	/* One byte short, one too many: refused. */
	m.len--;
	assert_int_equal(msg_get_sandbox_info(&m, &out), -1);
	m.len += 2;
	assert_int_equal(msg_get_sandbox_info(&m, &out), -1);
	labels_free(&in.labels);
}

/* A label list written by hand: in any order, any count. */
static void
put_raw_labels(struct msgw *w, const char *const *kv, uint32_t n)
{
	uint32_t	 i;

	msgw_u32(w, n);
	for (i = 0; i < n; i++) {
		msgw_str(w, kv[2 * i]);
		msgw_str(w, kv[2 * i + 1]);
	}
}

static int
decode_labels(const char *const *kv, uint32_t n)
{
	struct label_list	 l;
	struct msgw		 w;
	struct imsg		 m;
	struct msgr		 r;
	int			 rc;

	msgw_init(&w);
	put_raw_labels(&w, kv, n);
	as_imsg(&m, &w);
	msgr_init(&r, &m);
	rc = msg_get_labels(&r, &l);
	if (rc == 0)
		rc = msgr_end(&r);
	labels_free(&l);
	return rc;
}

static void
test_labels_codec_lies(void **state)
{
	static const char *const sorted[] = { "a", "1", "b", "2" };
	static const char *const unsorted[] = { "b", "2", "a", "1" };
	static const char *const dup[] = { "a", "1", "a", "2" };
	static const char *const nullv[] = { "a", NULL };
	static const char *const ctl[] = { "a", "x\001" };
	static const char *const badkey[] = { "-a", "1" };
	const char	*many[2 * (LABELS_MAX + 1)];
	char		 keys[LABELS_MAX + 1][8];
	int		 i;

	assert_int_equal(decode_labels(sorted, 2), 0);
	assert_int_equal(decode_labels(unsorted, 2), -1);
	assert_int_equal(decode_labels(dup, 2), -1);
	assert_int_equal(decode_labels(nullv, 1), -1);
	assert_int_equal(decode_labels(ctl, 1), -1);
	assert_int_equal(decode_labels(badkey, 1), -1);
	for (i = 0; i <= LABELS_MAX; i++) {
		snprintf(keys[i], sizeof(keys[i]), "k%02d", i);
		many[2 * i] = keys[i];
		many[2 * i + 1] = "";
	}
	assert_int_equal(decode_labels(many, LABELS_MAX), 0);
	assert_int_equal(decode_labels(many, LABELS_MAX + 1), -1);
}

static void
test_patch_codec(void **state)
{
	struct label_patch	 in, out;
	struct msgw		 w;
	struct imsg		 m;
	char			 gone[] = "gone", old[] = "old", neu[] = "new";
	char			 zz[] = "zz", *rm[] = { gone, old };
	char			 id[] = "sb_x";

	memset(&in, 0, sizeof(in));
	in.id = id;
	labels_set(&in.set, "new", "v");
	in.remove = rm;
	in.nremove = 2;
	msgw_init(&w);
	msg_put_label_patch(&w, &in);
	as_imsg(&m, &w);
	assert_int_equal(msg_get_label_patch(&m, &out), 0);
	assert_int_equal(out.nremove, 2);
	assert_string_equal(out.remove[1], "old");
	label_patch_free(&out);
	/* A key both set and removed, removals out of order, clear+set. */
	rm[0] = neu;
	msgw_init(&w);
	msg_put_label_patch(&w, &in);
	as_imsg(&m, &w);
	assert_int_equal(msg_get_label_patch(&m, &out), -1);
	rm[0] = zz;
	msgw_init(&w);
	msg_put_label_patch(&w, &in);
	as_imsg(&m, &w);
	assert_int_equal(msg_get_label_patch(&m, &out), -1);
	in.nremove = 0;
	in.clear = 1;
	msgw_init(&w);
	msg_put_label_patch(&w, &in);
	as_imsg(&m, &w);
	assert_int_equal(msg_get_label_patch(&m, &out), -1);
	labels_free(&in.set);
}

static void
test_filter_codec(void **state)
{
	struct label_filter	 in, out;
	struct msgw		 w;
	struct imsg		 m;

	memset(&in, 0, sizeof(in));
	label_filter_add(&in, "a", "1");
	label_filter_add(&in, "b", NULL);
	msgw_init(&w);
	msg_put_label_filter(&w, &in);
	as_imsg(&m, &w);
	assert_int_equal(msg_get_label_filter(&m, &out), 0);
	assert_int_equal(out.count, 2);
	assert_null(out.values[1]);
	label_filter_free(&out);
	label_filter_free(&in);
	/* has_value 0 with a string "" after it: a lie. */
	msgw_init(&w);
	msgw_u32(&w, 1);
	msgw_str(&w, "a");
	msgw_u8(&w, 0);
	msgw_str(&w, "");
	as_imsg(&m, &w);
	assert_int_equal(msg_get_label_filter(&m, &out), -1);
	/* has_value 2. */
	msgw_init(&w);
	msgw_u32(&w, 1);
	msgw_str(&w, "a");
	msgw_u8(&w, 2);
	msgw_str(&w, "x");
	as_imsg(&m, &w);
	assert_int_equal(msg_get_label_filter(&m, &out), -1);
	/* The old empty list request is no longer one. */
	msgw_init(&w);
	as_imsg(&m, &w);
	assert_int_equal(msg_get_label_filter(&m, &out), -1);
}

static void
test_fork_codec(void **state)
{
	struct fork_request	 in, out;
	struct msgw		 w;
	struct imsg		 m;
	char			 snap[] = "snap_x";
	char			 policy[] = "{\"mode\": \"none\"}";

	memset(&in, 0, sizeof(in));
	in.snapshot_id = snap;
	in.has_network = 1;
	in.network_policy = policy;
	labels_set(&in.labels, "k", "v");
	msgw_init(&w);
	msg_put_fork_request(&w, &in);
	as_imsg(&m, &w);
	assert_int_equal(msg_get_fork_request(&m, &out), 0);
	assert_string_equal(labels_get(&out.labels, "k"), "v");
	assert_true(out.has_network);
	assert_string_equal(out.network_policy, policy);
	fork_request_free(&out);
	labels_free(&in.labels);
}

/* The body's error: status, and the message (400) or detail (422). */
static char *
error_of(struct body_error *e)
{
	char	*s;

	if (e->status == 422)
		s = strdup(json_object_to_json_string_ext(e->detail,
		    JSON_C_TO_STRING_PLAIN));
	else if (asprintf(&s, "%d %s: %s", e->status, e->code,
	    e->message) == -1)
		s = NULL;
	body_error_free(e);
	return s;
}

static char *
create_error(const char *body, size_t len)
{
	struct create_request	 c;
	struct body_error	 e;

	if (body_parse_create(JSON, body, len, &c, &e) == 0) {
		create_request_free(&c);
		return NULL;
	}
	assert_int_equal(c.labels.count, 0);
	return error_of(&e);
}

static void
expect_create(const char *body, const char *want)
{
	char	*got = create_error(body, strlen(body));

	if (got == NULL || strstr(got, want) == NULL)
		fail_msg("body %s\n got %s\nwant %s", body,
		    got ? got : "success", want);
	free(got);
}

static void
test_create_labels(void **state)
{
	struct create_request	 c;
	struct body_error	 e;
	const char		*b;

	b = "{\"labels\": {\"team\": \"ml\", \"env\": \"\\u00e9t\\u00e9\", "
	    "\"team\": \"ops\"}}";
	assert_int_equal(body_parse_create(JSON, b, strlen(b), &c, &e), 0);
	/* A key sent twice: the last one, as json.loads keeps. */
	assert_int_equal(c.labels.count, 2);
	assert_string_equal(labels_get(&c.labels, "team"), "ops");
	assert_string_equal(labels_get(&c.labels, "env"), "\303\251t\303\251");
	create_request_free(&c);
	b = "{\"labels\": null}";
	assert_int_equal(body_parse_create(JSON, b, strlen(b), &c, &e), 0);
	assert_int_equal(c.labels.count, 0);
	create_request_free(&c);
	/* The schema: 422. */
	expect_create("{\"labels\": []}",
	    "\"type\":\"dict_type\",\"loc\":[\"body\",\"labels\"]");
	expect_create("{\"labels\": \"a=b\"}", "dict_type");
	expect_create("{\"labels\": {\"a\": 1}}",
	    "\"type\":\"string_type\",\"loc\":[\"body\",\"labels\",\"a\"]");
	expect_create("{\"labels\": {\"a\": {\"b\": \"c\"}}}", "string_type");
	expect_create("{\"labels\": {\"a\": null}}", "string_type");
	expect_create("{\"labels\": {\"a\": true}}", "string_type");
	/* The rules: 400. */
	expect_create("{\"labels\": {\"\": \"x\"}}",
	    "400 invalid_request: invalid label key ''");
	expect_create("{\"labels\": {\"\\u00e9\": \"x\"}}",
	    "invalid label key '\303\251'");
	expect_create("{\"labels\": {\"a b\": \"x\"}}", "invalid label key");
	expect_create("{\"labels\": {\"a\\u0000\": \"x\"}}",
	    "invalid label key 'a\\x00'");
	expect_create("{\"labels\": {\"a\": \"x\\ny\"}}",
	    "invalid value of label 'a'");
	expect_create("{\"labels\": {\"a\": \"\\u0000\"}}", "invalid value");
	expect_create("{\"labels\": {\"a\": \"\\u0085\"}}", "invalid value");
}

/* pyjson.c makes a lone surrogate U+FFFD: a valid value then. */
static void
test_create_surrogate(void **state)
{
	struct create_request	 c;
	struct body_error	 e;
	const char		*b = "{\"labels\": {\"a\": \"\\ud800\"}}";

	assert_int_equal(body_parse_create(JSON, b, strlen(b), &c, &e), 0);
	assert_string_equal(labels_get(&c.labels, "a"), "\357\277\275");
	create_request_free(&c);
}

/*
 * Bytes that are not UTF-8 inside the JSON text itself: the body is no
 * JSON to Python (a UnicodeDecodeError), the 400 every body gets so.
 */
static void
test_create_raw_bytes(void **state)
{
	static const char	 key[] = "{\"labels\": {\"\377\": \"x\"}}";
	static const char	 val[] = "{\"labels\": {\"a\": \"\377\"}}";
	char			*got;

	got = create_error(key, sizeof(key) - 1);
	assert_non_null(got);
	assert_string_equal(got,
	    "400 http_error: There was an error parsing the body");
	free(got);
	got = create_error(val, sizeof(val) - 1);
	assert_non_null(got);
	assert_string_equal(got,
	    "400 http_error: There was an error parsing the body");
	free(got);
}

/* A body of n labels, keys of klen bytes, values of vlen bytes. */
static char *
labels_body(const char *field, int n, size_t klen, size_t vlen)
{
	char	*b, *p;
	int	 i;

	b = malloc(32 + (size_t)n * (klen + vlen + 16));
	p = b + sprintf(b, "{\"%s\": {", field);
	for (i = 0; i < n; i++) {
		p += sprintf(p, "%s\"%0*d\": \"", i ? ", " : "", (int)klen, i);
		memset(p, 'v', vlen);
		p += vlen;
		*p++ = '"';
	}
	strcpy(p, "}}");
	return b;
}

static void
test_create_bounds(void **state)
{
	char	*b;

	b = labels_body("labels", LABELS_MAX, 63, 255);
	free(create_error(b, strlen(b)) == NULL ? NULL : (fail(), NULL));
	free(b);
	b = labels_body("labels", LABELS_MAX + 1, 4, 1);
	expect_create(b, "400 invalid_request: a sandbox has at most 32 labels");
	free(b);
	b = labels_body("labels", 1, 64, 1);
	expect_create(b, "invalid label key");
	free(b);
	b = labels_body("labels", 1, 8, 256);
	expect_create(b, "invalid value of label '00000000'");
	free(b);
	/* Huge: past the body limit it is a 413, before any parsing. */
	b = labels_body("labels", 1, 8, BODY_MAX_JSON);
	expect_create(b, "413 payload_too_large");
	free(b);
	/* Many thousands of labels within the limit: 400, not a crash. */
	b = labels_body("labels", 20000, 8, 1);
	expect_create(b, "at most 32 labels");
	free(b);
}

static char *
patch_error(const char *body, struct label_patch *p)
{
	struct body_error	 e;

	if (body_parse_patch(JSON, body, strlen(body), p, &e) == 0)
		return NULL;
	return error_of(&e);
}

static void
expect_patch(const char *body, const char *want)
{
	struct label_patch	 p;
	char			*got = patch_error(body, &p);

	if (got == NULL) {
		label_patch_free(&p);
		fail_msg("body %s: accepted", body);
	}
	if (strstr(got, want) == NULL)
		fail_msg("body %s\n got %s\nwant %s", body, got, want);
	free(got);
}

static void
test_patch_body(void **state)
{
	struct label_patch	 p;
	char			*b;

	assert_null(patch_error("{\"labels\": {\"b\": null, \"a\": \"1\", "
	    "\"c\": null}}", &p));
	assert_int_equal(p.set.count, 1);
	assert_int_equal(p.nremove, 2);
	assert_string_equal(p.remove[0], "b");
	assert_string_equal(p.remove[1], "c");
	assert_false(p.clear);
	label_patch_free(&p);
	/* Set then removed in one body: the last word counts. */
	assert_null(patch_error("{\"labels\": {\"a\": \"1\", \"a\": null}}",
	    &p));
	assert_int_equal(p.set.count, 0);
	assert_int_equal(p.nremove, 1);
	label_patch_free(&p);
	assert_null(patch_error("{\"labels\": null}", &p));
	assert_true(p.clear);
	label_patch_free(&p);
	assert_null(patch_error("{}", &p));
	assert_false(p.clear);
	assert_int_equal(p.set.count + p.nremove, 0);
	label_patch_free(&p);
	expect_patch("{\"labels\": {}, \"image\": \"x\"}",
	    "\"type\":\"extra_forbidden\",\"loc\":[\"body\",\"image\"]");
	expect_patch("{\"labels\": {\"a\": 5}}", "string_type");
	expect_patch("{\"labels\": {\"a\": [\"x\"]}}", "string_type");
	expect_patch("{\"labels\": 7}", "dict_type");
	expect_patch("[]", "model_attributes_type");
	expect_patch("", "missing");
	expect_patch("{\"labels\": {\"-x\": null}}", "invalid label key");
	expect_patch("{\"labels\": {\"x\": \"\\u001b[31m\"}}",
	    "invalid value");
	b = labels_body("labels", LABELS_MAX + 1, 4, 1);
	expect_patch(b, "sets at most 32 labels");
	free(b);
}

static void
test_fork_body(void **state)
{
	struct fork_request	 fr;
	struct body_error	 e;
	const char		*b;
	char			*s;

	b = "{\"labels\": {\"k\": \"v\"}, \"cpus\": 1}";
	assert_int_equal(body_parse_fork(JSON, b, strlen(b), &fr, &e), 0);
	assert_string_equal(labels_get(&fr.labels, "k"), "v");
	fork_request_free(&fr);
	b = "{\"labels\": {\"k\": 1}}";
	assert_int_equal(body_parse_fork(JSON, b, strlen(b), &fr, &e), -1);
	s = error_of(&e);
	assert_non_null(strstr(s, "string_type"));
	free(s);
	b = "{\"labels\": {\"k=\": \"v\"}}";
	assert_int_equal(body_parse_fork(JSON, b, strlen(b), &fr, &e), -1);
	s = error_of(&e);
	assert_non_null(strstr(s, "400 invalid_request: invalid label key"));
	free(s);
	assert_int_equal(fr.labels.count, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key_rules),
		cmocka_unit_test(test_value_rules),
		cmocka_unit_test(test_sets),
		cmocka_unit_test(test_filters),
		cmocka_unit_test(test_info_codec),
		cmocka_unit_test(test_labels_codec_lies),
		cmocka_unit_test(test_patch_codec),
		cmocka_unit_test(test_filter_codec),
		cmocka_unit_test(test_fork_codec),
		cmocka_unit_test(test_create_labels),
		cmocka_unit_test(test_create_surrogate),
		cmocka_unit_test(test_create_raw_bytes),
		cmocka_unit_test(test_create_bounds),
		cmocka_unit_test(test_patch_body),
		cmocka_unit_test(test_fork_body),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
