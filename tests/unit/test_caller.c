/*
 * MSG_CALLER's codec (common/caller.c): a round trip, the bounds of each
 * field, NULLs, the admin byte, and payloads short or long by a byte.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "caller.h"

static char	 name[] = "ci-runner", tenant[] = "team-a.b_9", addr[] =
		    "[2001:db8::1]:51000", route[] =
		    "POST /v1/sandboxes/{sandbox_id}/exec";

static void
as_imsg(struct imsg *m, const struct msgw *w)
{
	memset(m, 0, sizeof(*m));
	m->fd = -1;
	m->data = (void *)(uintptr_t)w->buf;
	m->len = w->len;
}

static int
decode(const struct msgw *w, struct caller *c)
{
	struct imsg	 m;

	as_imsg(&m, w);
	return msg_get_caller(&m, c);
}

static void
test_round_trip(void **state)
{
	struct caller	 in = { name, tenant, 1, addr, route }, out, copy;
	struct msgw	 w;

	(void)state;
	msgw_init(&w);
	msg_put_caller(&w, &in);
	assert_false(w.overflow);
	assert_int_equal(decode(&w, &out), 0);
	assert_string_equal(out.key_name, name);
	assert_string_equal(out.tenant, tenant);
	assert_int_equal(out.admin, 1);
	assert_string_equal(out.client_addr, addr);
	assert_string_equal(out.route, route);
	assert_int_equal(caller_copy(&copy, &out), 0);
	caller_free(&out);
	assert_null(out.key_name);
	assert_string_equal(copy.route, route);
	caller_free(&copy);
}

/* NULL strings go as "", and come back so: no NULL reaches managerd. */
static void
test_nulls_travel_empty(void **state)
{
	struct caller	 in = { NULL, NULL, 0, NULL, NULL }, out;
	struct msgw	 w;

	(void)state;
	msgw_init(&w);
	msg_put_caller(&w, &in);
	assert_int_equal(decode(&w, &out), 0);
	assert_string_equal(out.key_name, "");
	assert_string_equal(out.tenant, "");
	assert_int_equal(out.admin, 0);
	assert_string_equal(out.client_addr, "");
	assert_string_equal(out.route, "");
	caller_free(&out);
	assert_int_equal(caller_copy(&out, &in), 0);
	assert_string_equal(out.tenant, "");
	caller_free(&out);
}

static void
put_fields(struct msgw *w, const char *n, const char *t, uint8_t admin,
    const char *a, const char *r)
{
	msgw_init(w);
	msgw_str(w, n);
	msgw_str(w, t);
	msgw_u8(w, admin);
	msgw_str(w, a);
	msgw_str(w, r);
}

static char *
repeat(char ch, size_t n)
{
	char	*s;

	assert_non_null(s = malloc(n + 1));
	memset(s, ch, n);
	s[n] = '\0';
	return s;
}

/* Each string at its bound is taken, one byte more refused. */
static void
test_bounds(void **state)
{
	struct caller	 c;
	struct msgw	 w;
	char		*at, *over;

	(void)state;
	at = repeat('n', CALLER_MAX_NAME);
	over = repeat('n', CALLER_MAX_NAME + 1);
	put_fields(&w, at, at, 0, "", "");
	assert_int_equal(decode(&w, &c), 0);
	caller_free(&c);
	put_fields(&w, over, "", 0, "", "");
	assert_int_equal(decode(&w, &c), -1);
	put_fields(&w, "", over, 0, "", "");
	assert_int_equal(decode(&w, &c), -1);
	free(at);
	free(over);
	at = repeat('a', CALLER_MAX_ADDR);
	over = repeat('a', CALLER_MAX_ADDR + 1);
	put_fields(&w, "", "", 0, at, "");
	assert_int_equal(decode(&w, &c), 0);
	caller_free(&c);
	put_fields(&w, "", "", 0, over, "");
	assert_int_equal(decode(&w, &c), -1);
	free(at);
	free(over);
	at = repeat('r', CALLER_MAX_ROUTE);
	over = repeat('r', CALLER_MAX_ROUTE + 1);
	put_fields(&w, "", "", 0, "", at);
	assert_int_equal(decode(&w, &c), 0);
	caller_free(&c);
	put_fields(&w, "", "", 0, "", over);
	assert_int_equal(decode(&w, &c), -1);
	free(at);
	free(over);
}

/*
 * What a record or a log line could not hold as it is: names and tenants
 * outside the keys file's rule, control or non-ASCII bytes anywhere.
 */
static void
test_odd_callers_refused(void **state)
{
	static const char *const bad_names[] = { "a b", "a\nb", "../x", ".x",
	    "-x", "caf\xc3\xa9", "\xff", NULL };
	struct caller	 c;
	struct msgw	 w;
	size_t		 i;

	(void)state;
	for (i = 0; bad_names[i] != NULL; i++) {
		put_fields(&w, bad_names[i], "", 0, "", "");
		assert_int_equal(decode(&w, &c), -1);
		put_fields(&w, "", bad_names[i], 0, "", "");
		assert_int_equal(decode(&w, &c), -1);
	}
	/* A flat key's name is a name, not a tenant. */
	put_fields(&w, "key-12", "", 1, "", "");
	assert_int_equal(decode(&w, &c), 0);
	caller_free(&c);
	put_fields(&w, "", "key-12", 1, "", "");
	assert_int_equal(decode(&w, &c), -1);
	put_fields(&w, "", "", 0, "127.0.0.1:1\r\nX: y", "");
	assert_int_equal(decode(&w, &c), -1);
	put_fields(&w, "", "", 0, "", "GET /\x7f");
	assert_int_equal(decode(&w, &c), -1);
	put_fields(&w, "", "", 0, "", "GET /caf\xc3\xa9");
	assert_int_equal(decode(&w, &c), -1);
}

/* admin is 0 or 1; a NULL string, a short or long payload: refused. */
static void
test_malformed(void **state)
{
	struct caller	 c;
	struct msgw	 w;

	(void)state;
	put_fields(&w, "k", "t", 2, "a", "r");
	assert_int_equal(decode(&w, &c), -1);
	assert_null(c.key_name);
	put_fields(&w, NULL, "t", 0, "a", "r");
	assert_int_equal(decode(&w, &c), -1);
	put_fields(&w, "k", "t", 0, "a", NULL);
	assert_int_equal(decode(&w, &c), -1);
	put_fields(&w, "k", "t", 0, "a", "r");
	msgw_u8(&w, 0);
	assert_int_equal(decode(&w, &c), -1);
	put_fields(&w, "k", "t", 0, "a", "r");
	w.len--;
	assert_int_equal(decode(&w, &c), -1);
	msgw_init(&w);
	assert_int_equal(decode(&w, &c), -1);
	/* A NUL inside a string is no string of ours. */
	msgw_init(&w);
	msgw_u32(&w, 3);
	msgw_bytes(&w, "a\0b", 3);
	msgw_str(&w, "t");
	msgw_u8(&w, 0);
	msgw_str(&w, "a");
	msgw_str(&w, "r");
	assert_int_equal(decode(&w, &c), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_nulls_travel_empty),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_odd_callers_refused),
		cmocka_unit_test(test_malformed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
