/*
 * Tests for apid/auth.c, API.md §2 and REFERENCE-TESTS E 27-31: which
 * header is the candidate, Bearer's case-insensitive scheme, empty values,
 * every configured key, and the 401 itself (status, body, header) through
 * evhttp.
 */
#include <sys/queue.h>
#include <sys/socket.h>

#include <netinet/in.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "apid.h"

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

static struct evhttp_request *
request_with(const char *authorization, const char *x_api_key)
{
	struct evhttp_request	*req;
	struct evkeyvalq	*h;

	req = evhttp_request_new(NULL, NULL);
	assert_non_null(req);
	h = evhttp_request_get_input_headers(req);
	if (authorization != NULL)
		evhttp_add_header(h, "Authorization", authorization);
	if (x_api_key != NULL)
		evhttp_add_header(h, "x-api-key", x_api_key);
	return req;
}

/* E 31 and the glue: headers are read from the request. */
static void
test_request_accepted(void **state)
{
	struct evhttp_request	*req;

	req = request_with("Bearer test-key-0123456789abcdef", NULL);
	assert_int_equal(auth_request(req, keys, NKEYS, 0), 0);
	evhttp_request_free(req);
	/* Header names are case-insensitive. */
	req = request_with(NULL, key1);
	assert_int_equal(auth_request(req, keys, NKEYS, 0), 0);
	evhttp_request_free(req);
	/* Insecure mode: no credentials at all. */
	req = request_with(NULL, NULL);
	assert_int_equal(auth_request(req, keys, NKEYS, 1), 0);
	evhttp_request_free(req);
	req = request_with("Bearer wrong-key-000000000", NULL);
	assert_int_equal(auth_request(req, NULL, 0, 1), 0);
	evhttp_request_free(req);
}

/*
 * The whole exchange over loopback HTTP: an evhttp server whose handler
 * runs auth_request, and an evhttp client reading status, headers, body.
 */
struct exchange {
	struct event_base	*base;
	int			 code;
	char			 www[64];
	char			 ctype[64];
	char			 body[256];
};

static void
server_cb(struct evhttp_request *req, void *arg)
{
	if (auth_request(req, keys, NKEYS, 0) == 0)
		evhttp_send_reply(req, 200, "OK", NULL);
}

static void
client_done(struct evhttp_request *req, void *arg)
{
	struct exchange	*x = arg;
	struct evkeyvalq *h;
	const char	*v;
	struct evbuffer	*b;
	size_t		 n;

	assert_non_null(req);
	x->code = evhttp_request_get_response_code(req);
	h = evhttp_request_get_input_headers(req);
	if ((v = evhttp_find_header(h, "WWW-Authenticate")) != NULL)
		strlcpy(x->www, v, sizeof(x->www));
	if ((v = evhttp_find_header(h, "Content-Type")) != NULL)
		strlcpy(x->ctype, v, sizeof(x->ctype));
	b = evhttp_request_get_input_buffer(req);
	n = evbuffer_get_length(b);
	assert_true(n < sizeof(x->body));
	evbuffer_remove(b, x->body, n);
	x->body[n] = '\0';
	event_base_loopexit(x->base, NULL);
}

static void
exchange(struct exchange *x, const char *authorization, const char *xkey)
{
	struct evhttp			*http;
	struct evhttp_bound_socket	*bound;
	struct evhttp_connection	*conn;
	struct evhttp_request		*req;
	struct sockaddr_in		 sin;
	socklen_t			 slen = sizeof(sin);

	memset(x, 0, sizeof(*x));
	assert_non_null(x->base = event_base_new());
	assert_non_null(http = evhttp_new(x->base));
	evhttp_set_gencb(http, server_cb, NULL);
	assert_non_null(bound = evhttp_bind_socket_with_handle(http,
	    "127.0.0.1", 0));
	assert_int_equal(getsockname(evhttp_bound_socket_get_fd(bound),
	    (struct sockaddr *)&sin, &slen), 0);
	assert_non_null(conn = evhttp_connection_base_new(x->base, NULL,
	    "127.0.0.1", ntohs(sin.sin_port)));
	assert_non_null(req = evhttp_request_new(client_done, x));
	if (authorization != NULL)
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Authorization", authorization);
	if (xkey != NULL)
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "X-API-Key", xkey);
	assert_int_equal(evhttp_make_request(conn, req, EVHTTP_REQ_GET,
	    "/v1/sandboxes"), 0);
	event_base_dispatch(x->base);
	evhttp_connection_free(conn);
	evhttp_free(http);
	event_base_free(x->base);
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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
