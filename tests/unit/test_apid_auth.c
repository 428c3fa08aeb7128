/*
 * Tests for apid/auth.c, API.md §2 and REFERENCE-TESTS E 27-31: which
 * header is the candidate, Bearer's case-insensitive scheme, empty values,
 * every configured key, and the 401 itself (status, body, header) through
 * apid's HTTP server.
 */
#include <sys/queue.h>
#include <sys/socket.h>

#include <netinet/in.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <event2/buffer.h>
#include <event2/event.h>

#include "apid.h"
#include "keys_file.h"
#include "http_fixture.h"

static char	 key0[] = "test-key-0123456789abcdef";
static char	 key1[] = "second-key-fedcba9876543210";
static char	*keys[] = { key0, key1, NULL };
#define NKEYS	2

/* E 27: any configured key matches; others and "" do not. */
static void
test_keys_matched(void **state)
{
	assert_int_equal(auth_check("Bearer test-key-0123456789abcdef", NULL,
	    keys, NKEYS), AUTH_OK);
	assert_int_equal(auth_check("Bearer second-key-fedcba9876543210",
	    NULL, keys, NKEYS), AUTH_OK);
	assert_int_equal(auth_check(NULL, "second-key-fedcba9876543210", keys,
	    NKEYS), AUTH_OK);
	assert_int_equal(auth_check("Bearer wrong-key-000000000", NULL, keys,
	    NKEYS), AUTH_REJECT);
	assert_int_equal(auth_check(NULL, "", keys, NKEYS), AUTH_REJECT);
	assert_int_equal(auth_check("Bearer ", NULL, keys, NKEYS),
	    AUTH_REJECT);
	/* A prefix or an extension of a key is not the key. */
	assert_int_equal(auth_check("Bearer test-key-0123456789abcde", NULL,
	    keys, NKEYS), AUTH_REJECT);
	assert_int_equal(auth_check("Bearer test-key-0123456789abcdef0",
	    NULL, keys, NKEYS), AUTH_REJECT);
	/* No keys configured: nothing matches. */
	assert_int_equal(auth_check("Bearer test-key-0123456789abcdef", NULL,
	    keys, 0), AUTH_REJECT);
}

/* E 28: Authorization "" or a wrong Bearer, no X-API-Key. */
static void
test_wrong_or_empty(void **state)
{
	assert_int_equal(auth_check("", NULL, keys, NKEYS), AUTH_REJECT);
	assert_int_equal(auth_check(NULL, NULL, keys, NKEYS), AUTH_REJECT);
	assert_int_equal(auth_check("Bearer wrong-key-000000000", NULL, keys,
	    NKEYS), AUTH_REJECT);
}

/* E 29: Authorization "" plus a valid X-API-Key is fine. */
static void
test_empty_authorization_falls_back(void **state)
{
	assert_int_equal(auth_check("", key0, keys, NKEYS), AUTH_OK);
	/* So is any unusable Authorization: no space, other scheme. */
	assert_int_equal(auth_check("Bearer", key0, keys, NKEYS), AUTH_OK);
	assert_int_equal(auth_check("Basic dXNlcjpwYXNz", key0, keys, NKEYS),
	    AUTH_OK);
	assert_int_equal(auth_check("Token test-key-0123456789abcdef", NULL,
	    keys, NKEYS), AUTH_REJECT);
	assert_int_equal(auth_check("test-key-0123456789abcdef", NULL, keys,
	    NKEYS), AUTH_REJECT);
}

/* A usable Bearer is the only candidate: wrong Bearer + right key = 401. */
static void
test_bearer_has_precedence(void **state)
{
	assert_int_equal(auth_check("Bearer wrong-key-000000000", key0, keys,
	    NKEYS), AUTH_REJECT);
	assert_int_equal(auth_check("Bearer test-key-0123456789abcdef",
	    "wrong", keys, NKEYS), AUTH_OK);
}

static void
test_scheme_case_insensitive(void **state)
{
	assert_int_equal(auth_check("bearer test-key-0123456789abcdef", NULL,
	    keys, NKEYS), AUTH_OK);
	assert_int_equal(auth_check("BEARER test-key-0123456789abcdef", NULL,
	    keys, NKEYS), AUTH_OK);
	assert_int_equal(auth_check("BeArEr second-key-fedcba9876543210",
	    NULL, keys, NKEYS), AUTH_OK);
	/* Everything after the first space is the credential. */
	assert_int_equal(auth_check("Bearer  test-key-0123456789abcdef", NULL,
	    keys, NKEYS), AUTH_REJECT);
	assert_int_equal(auth_check("Bearers test-key-0123456789abcdef", NULL,
	    keys, NKEYS), AUTH_REJECT);
}

static struct http_request *
request_with(const char *authorization, const char *x_api_key)
{
	char	 head[512];

	snprintf(head, sizeof(head), "GET /v1/sandboxes HTTP/1.1\nHost: x\n"
	    "%s%s%s%s%s%s", authorization != NULL ? "Authorization: " : "",
	    authorization != NULL ? authorization : "",
	    authorization != NULL ? "\n" : "",
	    x_api_key != NULL ? "x-api-key: " : "",
	    x_api_key != NULL ? x_api_key : "", x_api_key != NULL ? "\n" : "");
	return fixture_request(head, NULL);
}

/* E 31 and the glue: headers are read from the request. */
static void
test_request_accepted(void **state)
{
	struct http_request	*req;

	req = request_with("Bearer test-key-0123456789abcdef", NULL);
	assert_int_equal(auth_request(req, keys, NKEYS, 0), 0);
	http_request_free(req);
	/* Header names are case-insensitive. */
	req = request_with(NULL, key1);
	assert_int_equal(auth_request(req, keys, NKEYS, 0), 0);
	http_request_free(req);
	/* Insecure mode: no credentials at all. */
	req = request_with(NULL, NULL);
	assert_int_equal(auth_request(req, keys, NKEYS, 1), 0);
	http_request_free(req);
	req = request_with("Bearer wrong-key-000000000", NULL);
	assert_int_equal(auth_request(req, NULL, 0, 1), 0);
	http_request_free(req);
	/* A refused request is answered, which frees it. */
	req = request_with("Bearer wrong-key-000000000", NULL);
	assert_int_equal(auth_request(req, keys, NKEYS, 0), -1);
}

/*
 * The whole exchange: apid's HTTP server whose handler runs
 * auth_request, and the test reading status, fields and body.
 */
struct exchange {
	int	 code;
	char	 www[64];
	char	 ctype[64];
	char	 body[256];
	char	 retry[16];
};

static void
server_cb(struct http_request *req)
{
	if (auth_request(req, keys, NKEYS, 0) == 0)
		http_reply(req, 200, NULL, NULL);
}

static void
exchange(struct exchange *x, const char *authorization, const char *xkey)
{
	struct http_fixture	 fx;
	struct http_response	 r = { 0 };
	char			 head[512];

	memset(x, 0, sizeof(*x));
	fixture_init(&fx, server_cb, NULL);
	snprintf(head, sizeof(head), "GET /v1/sandboxes HTTP/1.1\r\n"
	    "Host: x\r\n%s%s%s%s%s%s\r\n",
	    authorization != NULL ? "Authorization: " : "",
	    authorization != NULL ? authorization : "",
	    authorization != NULL ? "\r\n" : "", xkey != NULL ?
	    "X-API-Key: " : "", xkey != NULL ? xkey : "",
	    xkey != NULL ? "\r\n" : "");
	fixture_send_str(&fx, head);
	assert_int_equal(fixture_response(&fx, &r, 2000), 0);
	x->code = r.status;
	strlcpy(x->www, response_field(&r, "www-authenticate"),
	    sizeof(x->www));
	strlcpy(x->ctype, response_field(&r, "content-type"),
	    sizeof(x->ctype));
	strlcpy(x->retry, response_field(&r, "retry-after"),
	    sizeof(x->retry));
	if (r.body != NULL)
		strlcpy(x->body, r.body, sizeof(x->body));
	response_free(&r);
	fixture_free(&fx);
}

/* E 28: the 401 envelope and "WWW-Authenticate: Bearer" (exact). */
static void
test_request_rejected(void **state)
{
	struct exchange	 x;

	exchange(&x, "", NULL);
	assert_int_equal(x.code, 401);
	assert_string_equal(x.www, "Bearer");
	assert_string_equal(x.ctype, "application/json");
	assert_string_equal(x.body, "{\"error\":{\"code\":\"unauthorized\","
	    "\"message\":\"missing or invalid API key\"}}");
	exchange(&x, "Bearer wrong-key-000000000", key0);
	assert_int_equal(x.code, 401);
	assert_string_equal(x.www, "Bearer");
}

/* E 29 over HTTP: Authorization "" + a valid X-API-Key is a 200. */
static void
test_request_fallback_http(void **state)
{
	struct exchange	 x;

	exchange(&x, "", key0);
	assert_int_equal(x.code, 200);
	assert_string_equal(x.www, "");
	exchange(&x, "Bearer test-key-0123456789abcdef", NULL);
	assert_int_equal(x.code, 200);
}

/* Who a flat key is: an admin, named by its place in the list. */
static void
test_flat_key_caller(void **state)
{
	struct http_request	*req;

	(void)state;
	req = request_with(NULL, key1);
	assert_int_equal(auth_request(req, keys, NKEYS, 0), 0);
	assert_string_equal(req->caller.key_name, "key-2");
	assert_string_equal(req->caller.tenant, "");
	assert_int_equal(req->caller.admin, 1);
	http_request_free(req);
	req = request_with(NULL, NULL);
	assert_int_equal(auth_request(req, keys, NKEYS, 1), 0);
	assert_string_equal(req->caller.key_name, "");
	assert_int_equal(req->caller.admin, 1);
	http_request_free(req);
}

/*
 * A keys file table as managerd sends it (MSG_APID_KEYS): SHA-256 of
 * "abcdefghijklmnopqrstuvwxyz" for "ci" (1 request a second, a burst
 * of 2), of "zyxwvutsrqponmlkjihgfedcba" for "ops" (admin, no rate).
 */
static void
send_table(const char *ci_name, double rate)
{
	static struct peer	 nopeer;
	struct keys_table	 t;
	struct imsg		 m;
	struct msgw		 w;
	char			 text[1024], err[256];

	snprintf(text, sizeof(text), "{\"keys\": [{\"name\": \"%s\", "
	    "\"tenant\": \"team-a\", \"sha256\": \"71c480df93d6ae2f1efad1447c6"
	    "6c9525e316218cf51fc8d9ed832f2daf18b73\", \"quotas\": "
	    "{\"requests_per_second\": %g, \"burst\": 2}}, {\"name\": "
	    "\"ops\", \"tenant\": \"ops\", \"admin\": true, \"sha256\": "
	    "\"cd1a7a2d7b4b4b4c0e4e8a3d0c5d7e2c4a6b8d0f2a4c6e8b0d2f4a6c8e0b2d4f"
	    "\"}]}", ci_name, rate);
	assert_int_equal(keys_file_parse(text, strlen(text), &t, err,
	    sizeof(err)), 0);
	msgw_init(&w);
	msg_put_keys_chunk(&w, &t, 0);
	memset(&m, 0, sizeof(m));
	m.fd = -1;
	m.data = w.buf;
	m.len = w.len;
	auth_keys_chunk(&nopeer, &m);
	keys_table_free(&t);
}

static int
auth_as(const char *key, struct http_request **out)
{
	struct http_request	*req;
	char			 bearer[128];
	int			 rc;

	snprintf(bearer, sizeof(bearer), "Bearer %s", key);
	req = request_with(bearer, NULL);
	rc = auth_request(req, keys, NKEYS, 0);
	*out = rc == 0 ? req : NULL;
	if (rc == 0 && out == NULL)
		http_request_free(req);
	return rc;
}

/* A keys file key: its hash matched, its name and tenant the caller. */
static void
test_keys_file_key(void **state)
{
	struct http_request	*req;

	(void)state;
	send_table("ci", 1000);
	assert_int_equal(auth_as("abcdefghijklmnopqrstuvwxyz", &req), 0);
	assert_string_equal(req->caller.key_name, "ci");
	assert_string_equal(req->caller.tenant, "team-a");
	assert_int_equal(req->caller.admin, 0);
	http_request_free(req);
	/* One byte off, or the hash itself as the key: refused. */
	assert_int_equal(auth_as("abcdefghijklmnopqrstuvwxyZ", &req), -1);
	assert_int_equal(auth_as("71c480df93d6ae2f1efad1447c66c9525e316218cf5"
	    "1fc8d9ed832f2daf18b73", &req), -1);
	/* The flat keys still work beside the file's. */
	assert_int_equal(auth_as(key0, &req), 0);
	assert_string_equal(req->caller.key_name, "key-1");
	http_request_free(req);
}

/*
 * The token bucket: a burst of 2, then a wait of whole seconds (the
 * bucket refills at 1/s: 1 or 2 s, never less than 1).  A reload that
 * keeps the key keeps its empty bucket; a new key starts full.
 */
static void
test_token_bucket(void **state)
{
	struct http_request	*req;
	long			 wait;

	(void)state;
	send_table("ci-b", 1);
	assert_int_equal(auth_as("abcdefghijklmnopqrstuvwxyz", &req), 0);
	http_request_free(req);
	assert_int_equal(auth_as("abcdefghijklmnopqrstuvwxyz", &req), 0);
	http_request_free(req);
	assert_int_equal(auth_as("abcdefghijklmnopqrstuvwxyz", &req), -1);
	/* The bucket's own answer, as the 429's Retry-After says it. */
	assert_int_equal(auth_keys_match("abcdefghijklmnopqrstuvwxyz"), 0);
	wait = auth_keys_take(0);
	assert_true(wait >= 1 && wait <= 2);
	send_table("ci-b", 1);
	assert_true(auth_keys_take(0) >= 1);
	send_table("ci-renamed", 1);
	assert_int_equal(auth_keys_take(0), 0);
	/* No rate: never held back. */
	assert_int_equal(auth_keys_take(1), 0);
	assert_int_equal(auth_keys_take(-1), 0);
}

/* A rate of almost nothing: Retry-After says a day, not an overflow. */
static void
test_tiny_rate_waits_a_day(void **state)
{
	struct http_request	*req;

	(void)state;
	send_table("ci-tiny", 1e-300);
	assert_int_equal(auth_as("abcdefghijklmnopqrstuvwxyz", &req), 0);
	http_request_free(req);
	assert_int_equal(auth_as("abcdefghijklmnopqrstuvwxyz", &req), 0);
	http_request_free(req);
	assert_int_equal(auth_keys_take(0), RETRY_AFTER_MAX);
}

/* The 429 over HTTP: the envelope and Retry-After. */
static void
test_rate_429_http(void **state)
{
	struct exchange	 x;

	(void)state;
	send_table("ci-h", 1);
	exchange(&x, "Bearer abcdefghijklmnopqrstuvwxyz", NULL);
	assert_int_equal(x.code, 200);
	exchange(&x, "Bearer abcdefghijklmnopqrstuvwxyz", NULL);
	assert_int_equal(x.code, 200);
	exchange(&x, "Bearer abcdefghijklmnopqrstuvwxyz", NULL);
	assert_int_equal(x.code, 429);
	assert_non_null(strstr(x.body, "\"code\":\"limit_exceeded\""));
	assert_true(x.retry[0] == '1' || x.retry[0] == '2');
	assert_int_equal(x.retry[1], '\0');
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keys_matched),
		cmocka_unit_test(test_wrong_or_empty),
		cmocka_unit_test(test_empty_authorization_falls_back),
		cmocka_unit_test(test_bearer_has_precedence),
		cmocka_unit_test(test_scheme_case_insensitive),
		cmocka_unit_test(test_request_accepted),
		cmocka_unit_test(test_request_rejected),
		cmocka_unit_test(test_request_fallback_http),
		cmocka_unit_test(test_flat_key_caller),
		cmocka_unit_test(test_keys_file_key),
		cmocka_unit_test(test_token_bucket),
		cmocka_unit_test(test_tiny_rate_waits_a_day),
		cmocka_unit_test(test_rate_429_http),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
