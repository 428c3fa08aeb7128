/*
 * Tests for GET /metrics's key (auth_metrics in apid/auth.c) and the HTTP
 * server's request_done hook the counters hang on: through apid's HTTP
 * server, the test as the client.  No key: open.  A key: only
 * "Authorization: Bearer <key>"; an X-API-Key, another scheme, a prefix
 * or an extension of it is a 401 in the envelope.
 */
#include <sys/queue.h>

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
#include "http_fixture.h"

#define KEY	"metrics-key-0123456789abcdef"

/* auth.c reads the flat keys and the keys file table from here. */
static struct apid	 test_apid;
struct apid		*apid = &test_apid;

static const char	*server_key;

/* What request_done heard of the last request. */
static struct {
	int		 calls;
	int		 status;
	uint64_t	 out_bytes;
	uint64_t	 in_bytes;
	char		 route[64];
} done;

static void
request_done(struct http_request *req)
{
	done.calls++;
	done.status = req->status;
	done.out_bytes = req->out_bytes;
	done.in_bytes = req->head.body_bytes;
	strlcpy(done.route, req->route != NULL ? req->route : "(none)",
	    sizeof(done.route));
}

static void
server_cb(struct http_request *req)
{
	struct evbuffer	*b;

	req->route = "/metrics";
	if (auth_metrics(req, server_key) == -1)
		return;
	b = evbuffer_new();
	evbuffer_add(b, "m 1\n", 4);
	http_reply(req, 200, "text/plain", b);
	evbuffer_free(b);
}

struct exchange {
	int	 code;
	char	 www[64];
	char	 body[256];
};

static void
exchange(struct exchange *x, const char *key, const char *fields)
{
	struct http_fixture	 fx;
	struct http_response	 r = { 0 };
	char			 head[512];

	server_key = key;
	memset(x, 0, sizeof(*x));
	memset(&done, 0, sizeof(done));
	fixture_init(&fx, server_cb, NULL);
	fx.srv.request_done = request_done;
	snprintf(head, sizeof(head), "GET /metrics HTTP/1.1\r\nHost: x\r\n"
	    "%s\r\n", fields);
	fixture_send_str(&fx, head);
	assert_int_equal(fixture_response(&fx, &r, 2000), 0);
	x->code = r.status;
	strlcpy(x->www, response_field(&r, "www-authenticate"),
	    sizeof(x->www));
	if (r.body != NULL)
		strlcpy(x->body, r.body, sizeof(x->body));
	response_free(&r);
	fixture_free(&fx);
}

static void
test_open_without_key(void **state)
{
	struct exchange	 x;

	exchange(&x, NULL, "");
	assert_int_equal(x.code, 200);
	exchange(&x, NULL, "Authorization: Bearer anything\r\n");
	assert_int_equal(x.code, 200);
}

static void
test_key_required(void **state)
{
	static const char *const refused[] = {
		"",
		"Authorization: Bearer\r\n",
		"Authorization: Bearer \r\n",
		"Authorization: Basic " KEY "\r\n",
		"Authorization: " KEY "\r\n",
		"X-API-Key: " KEY "\r\n",
		"Authorization: Bearer metrics-key-0123456789abcde\r\n",
		"Authorization: Bearer " KEY "0\r\n",
		"Authorization: Bearer  " KEY "\r\n",
		"Authorization: Bearer METRICS-KEY-0123456789ABCDEF\r\n",
	};
	struct exchange	 x;
	size_t		 i;

	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		exchange(&x, KEY, refused[i]);
		assert_int_equal(x.code, 401);
		assert_string_equal(x.www, "Bearer");
		assert_string_equal(x.body, "{\"error\":{\"code\":"
		    "\"unauthorized\",\"message\":\"missing or invalid "
		    "metrics key\"}}");
		/* The refusal is counted like any answer. */
		assert_int_equal(done.calls, 1);
		assert_int_equal(done.status, 401);
	}
	exchange(&x, KEY, "Authorization: Bearer " KEY "\r\n");
	assert_int_equal(x.code, 200);
	/* The scheme is case-insensitive, as for the API keys. */
	exchange(&x, KEY, "Authorization: bEaReR " KEY "\r\n");
	assert_int_equal(x.code, 200);
}

static void
test_request_done_hook(void **state)
{
	struct exchange	 x;

	exchange(&x, NULL, "");
	assert_int_equal(done.calls, 1);
	assert_int_equal(done.status, 200);
	assert_int_equal(done.out_bytes, 4);
	assert_int_equal(done.in_bytes, 0);
	assert_string_equal(done.route, "/metrics");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_without_key),
		cmocka_unit_test(test_key_required),
		cmocka_unit_test(test_request_done_hook),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
