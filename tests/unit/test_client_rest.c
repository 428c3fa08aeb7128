/*
 * Tests for client/rest.c: URL parsing, escaping, and every call against
 * a fake server on 127.0.0.1 (a thread) that records the request it got
 * and replays a canned answer: Content-Length, chunked and close-delimited
 * bodies, 204, the error envelope, 422 details, HTML, oversized heads,
 * truncated bodies, NDJSON streams, big downloads and uploads.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "rest.h"
#include "rest_fake.h"

/* --- the fake server ----------------------------------------------------- */
/* --- URLs and helpers ---------------------------------------------------- */

static void
test_url_defaults(void **state)
{
	struct rest_client	 rc;
	char			 err[256];

	(void)state;
	unsetenv("AGENT_SANDBOX_URL");
	unsetenv("AGENT_SANDBOX_API_KEY");
	assert_int_equal(rest_client_init(&rc, NULL, NULL, err, sizeof(err)),
	    0);
	assert_string_equal(rc.host, "127.0.0.1");
	assert_string_equal(rc.port, "8080");
	assert_string_equal(rc.prefix, "");
	assert_null(rc.key);
	assert_int_equal(rc.timeout, REST_TIMEOUT_SECONDS);
	rest_client_free(&rc);
	assert_null(rc.host);

	setenv("AGENT_SANDBOX_URL", "http://sandbox.example:9001/base/", 1);
	setenv("AGENT_SANDBOX_API_KEY", KEY, 1);
	assert_int_equal(rest_client_init(&rc, NULL, NULL, err, sizeof(err)),
	    0);
	assert_string_equal(rc.host, "sandbox.example");
	assert_string_equal(rc.port, "9001");
	assert_string_equal(rc.prefix, "/base");
	assert_string_equal(rc.key, KEY);
	rest_client_free(&rc);

	/* Arguments win over the environment; an empty key is none. */
	assert_int_equal(rest_client_init(&rc, "http://h", "", err,
	    sizeof(err)), 0);
	assert_string_equal(rc.host, "h");
	assert_string_equal(rc.port, "80");
	assert_null(rc.key);
	rest_client_free(&rc);
	setenv("AGENT_SANDBOX_API_KEY", "", 1);
	setenv("AGENT_SANDBOX_URL", "", 1);
	assert_int_equal(rest_client_init(&rc, NULL, NULL, err, sizeof(err)),
	    0);
	assert_null(rc.key);
	assert_string_equal(rc.port, "8080");
	rest_client_free(&rc);
	unsetenv("AGENT_SANDBOX_URL");
	unsetenv("AGENT_SANDBOX_API_KEY");
}

static void
test_url_good(void **state)
{
	static const struct {
		const char	*url, *host, *port, *prefix;
	} cases[] = {
		{ "http://127.0.0.1:8080", "127.0.0.1", "8080", "" },
		{ "HTTP://Example.COM", "Example.COM", "80", "" },
		{ "http://localhost/", "localhost", "80", "" },
		{ "http://[::1]:9000/api/v2//", "::1", "9000", "/api/v2" },
		{ "http://[::1]", "::1", "80", "" },
		{ "http://[fe80::1%eth0]:1", "fe80::1%eth0", "1", "" },
		{ "http://my_host-1.local:65535/x", "my_host-1.local",
		    "65535", "/x" },
	};
	struct rest_client	 rc;
	char			 err[256];
	size_t			 i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (rest_client_init(&rc, cases[i].url, "k", err,
		    sizeof(err)) != 0)
			fail_msg("%s: %s", cases[i].url, err);
		assert_string_equal(rc.host, cases[i].host);
		assert_string_equal(rc.port, cases[i].port);
		assert_string_equal(rc.prefix, cases[i].prefix);
		rest_client_free(&rc);
	}
}

static void
test_url_bad(void **state)
{
	static const struct {
		const char	*url, *says;
	} cases[] = {
		{ "https://127.0.0.1:8080", "https is not supported; put a "
		    "TLS proxy in front or use http on localhost" },
		{ "HTTPS://h", "https is not supported" },
		{ "ftp://h", "not an http:// URL" },
		{ "127.0.0.1:8080", "not an http:// URL" },
		{ "http://user:pw@h:8080", "not supported" },
		{ "http://user@h", "not supported" },
		{ "http://h:0", "port" },
		{ "http://h:65536", "port" },
		{ "http://h:99999999999999999999", "port" },
		{ "http://h:", "port" },
		{ "http://h:80x", "port" },
		{ "http://h:-1", "port" },
		{ "http://", "bad host" },
		{ "http://:80", "bad host" },
		{ "http://h h", "bad host" },
		{ "http://[::1", "IPv6" },
		{ "http://[]:80", "IPv6" },
		{ "http://[::1]x", "bad host" },
		{ "http://[::1]:", "port" },
		{ "http://h/p?q=1", "query" },
		{ "http://h/p#f", "query" },
		{ "http://h/a b", "path" },
	};
	struct rest_client	 rc;
	char			 err[256];
	size_t			 i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		if (rest_client_init(&rc, cases[i].url, NULL, err,
		    sizeof(err)) != -1)
			fail_msg("%s accepted", cases[i].url);
		if (strstr(err, cases[i].says) == NULL)
			fail_msg("%s: \"%s\" lacks \"%s\"", cases[i].url, err,
			    cases[i].says);
		/* A refused URL leaves nothing to free, and free is safe. */
		assert_null(rc.host);
		rest_client_free(&rc);
	}
	/* A password in a refused URL is not repeated. */
	assert_int_equal(rest_client_init(&rc, "ftp://u:secret@h", NULL, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "not an http:// URL"));
	assert_null(strstr(err, "secret"));
	assert_int_equal(rest_client_init(&rc, "http://u:secret@h:0", NULL,
	    err, sizeof(err)), -1);
	assert_null(strstr(err, "secret"));
	assert_int_equal(rest_client_init(&rc, "http://h", "a\r\nX: y", err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "API key"));
	assert_null(rc.key);
}

static void
test_escape(void **state)
{
	static const struct {
		const char	*in, *out;
	} cases[] = {
		{ "", "" },
		{ "AZaz09-._~", "AZaz09-._~" },
		{ "/workspace/a b.txt", "%2Fworkspace%2Fa%20b.txt" },
		{ "a&b=c?d#e%f+g", "a%26b%3Dc%3Fd%23e%25f%2Bg" },
		{ "\xc3\xa9\x01\x7f\xff", "%C3%A9%01%7F%FF" },
		{ "sb_0123456789abcdef", "sb_0123456789abcdef" },
	};
	char	*s;
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		s = rest_escape(cases[i].in);
		assert_non_null(s);
		assert_string_equal(s, cases[i].out);
		free(s);
	}
	assert_null(rest_escape(NULL));
}

static void
test_error_string(void **state)
{
	struct rest_error	 e;
	char			 buf[64];

	(void)state;
	memset(&e, 0, sizeof(e));
	e.status = 404;
	strlcpy(e.code, "not_found", sizeof(e.code));
	strlcpy(e.message, "sandbox sb_1 not found", sizeof(e.message));
	rest_error_string(&e, buf, sizeof(buf));
	assert_string_equal(buf, "404 not_found: sandbox sb_1 not found");
	rest_error_string(&e, buf, 10);
	assert_string_equal(buf, "404 not_f");
}

/* --- JSON exchanges ------------------------------------------------------ */

static void
test_json_content_length(void **state)
{
	struct rest_client	 rc;
	struct rest_error	 err;
	json_object		*body, *out = NULL, *v;
	char			 want[128];

	(void)state;
	fake_start(ANSWER, with_length("HTTP/1.1 201 Created\r\n"
	    "Content-Type: application/json\r\n",
	    "{\"id\":\"sb_0123456789abcdef\",\"x\":\"a/b\"}"), 0);
	client(&rc, "", KEY);
	body = json_object_new_object();
	json_object_object_add(body, "image", json_object_new_string("a/b"));
	assert_int_equal(rest_json(&rc, "POST", "/v1/sandboxes", body, &out,
	    &err), 201);
	fake_stop();
	assert_non_null(out);
	assert_true(json_object_object_get_ex(out, "id", &v));
	assert_string_equal(json_object_get_string(v), "sb_0123456789abcdef");

	assert_true(starts_with("POST /v1/sandboxes HTTP/1.1\r\n"));
	snprintf(want, sizeof(want), "Host: 127.0.0.1:%s", fk.port);
	assert_true(has_header(want));
	assert_true(has_header("User-Agent: agent-sandbox/" PACKAGE_VERSION));
	assert_true(has_header("Authorization: Bearer " KEY));
	assert_true(has_header("Content-Type: application/json"));
	assert_true(has_header("Content-Length: 15"));
	assert_true(has_header("Connection: close"));
	assert_string_equal((char *)fk.req + fk.headlen, "{\"image\":\"a/b\"}");

	json_object_put(body);
	json_object_put(out);
	rest_client_free(&rc);
	fake_free();
}

/* The list's label filters, escaped; the labels' PATCH and its body. */
static void
test_sandbox_calls(void **state)
{
	static const char *const filters[] = { "team=ml", "note=a b&c", "k" };
	struct rest_client	 rc;
	struct rest_error	 err;
	json_object		*labels, *out = NULL;

	(void)state;
	fake_start(ANSWER, with_length("HTTP/1.1 200 OK\r\n"
	    "Content-Type: application/json\r\n", "{\"sandboxes\":[]}"), 0);
	client(&rc, "", KEY);
	if (rest_sandbox_list(&rc, filters, 3, &out, &err) != 200)
		fail_msg("%d %s: %s", err.status, err.code, err.message);
	fake_stop();
	assert_true(starts_with("GET /v1/sandboxes?label=team%3Dml"
	    "&label=note%3Da%20b%26c&label=k HTTP/1.1\r\n"));
	json_object_put(out);
	rest_client_free(&rc);
	fake_free();

	/* Each fake server has a port of its own: a client for each. */
	fake_start(ANSWER, with_length("HTTP/1.1 200 OK\r\n"
	    "Content-Type: application/json\r\n", "{\"id\":\"sb_x\"}"), 0);
	client(&rc, "", KEY);
	labels = json_object_new_object();
	json_object_object_add(labels, "a", json_object_new_string("1"));
	json_object_object_add(labels, "b", NULL);
	assert_int_equal(rest_sandbox_patch_labels(&rc, "sb_0123456789abcdef",
	    labels, &out, &err), 200);
	fake_stop();
	assert_true(starts_with("PATCH /v1/sandboxes/sb_0123456789abcdef "
	    "HTTP/1.1\r\n"));
	assert_string_equal((char *)fk.req + fk.headlen,
	    "{\"labels\":{\"a\":\"1\",\"b\":null}}");
	json_object_put(labels);
	json_object_put(out);
	rest_client_free(&rc);
	fake_free();

	fake_start(ANSWER, with_length("HTTP/1.1 200 OK\r\n"
	    "Content-Type: application/json\r\n", "{\"status\":\"running\"}"),
	    0);
	client(&rc, "", KEY);
	assert_int_equal(rest_sandbox_stats(&rc, "sb_0123456789abcdef", &out,
	    &err), 200);
	fake_stop();
	assert_true(starts_with("GET /v1/sandboxes/sb_0123456789abcdef/stats "
	    "HTTP/1.1\r\n"));
	json_object_put(out);
	rest_client_free(&rc);
	fake_free();
}

static void
test_json_chunked(void **state)
{
	struct rest_client	 rc;
	struct rest_error	 err;
	json_object		*out = NULL, *v;
	const char		*resp = "HTTP/1.1 200 OK\r\n"
	    "content-type: application/json\r\n"
	    "transfer-encoding:  Chunked \r\n\r\n"
	    "5\r\n{\"ok\"\r\n3;ext=1\r\n:tr\r\nA \r\nue,\"n\":123\r\n"
	    "1\r\n}\r\n0\r\nX-Trailer: yes\r\n\r\n";

	(void)state;
	fake_start(ANSWER, resp, 0);
	client(&rc, "/prefix", NULL);
	assert_int_equal(rest_json(&rc, "GET", "/healthz", NULL, &out, &err),
	    200);
	fake_stop();
	assert_true(json_object_object_get_ex(out, "n", &v));
	assert_int_equal(json_object_get_int(v), 123);
	assert_true(json_object_object_get_ex(out, "ok", &v));
	assert_true(json_object_get_boolean(v));
	assert_true(starts_with("GET /prefix/healthz HTTP/1.1\r\n"));
	/* No key: no Authorization; no body: no length on a GET. */
	assert_null(strcasestr((char *)fk.req, "Authorization"));
	assert_null(strcasestr((char *)fk.req, "Content-Length"));
	assert_null(strcasestr((char *)fk.req, "Content-Type"));
	assert_int_equal(fk.reqlen, fk.headlen);
	json_object_put(out);
	rest_client_free(&rc);
	fake_free();
}

static void
test_json_close_delimited(void **state)
{
	struct rest_client	 rc;
	struct rest_error	 err;
	json_object		*out = NULL, *v;
	const char		*resp = "HTTP/1.0 200 OK\n"
	    "Content-Type: application/json\n\n"
	    "{\"status\":\"ok\"}\n";

	(void)state;
	fake_start(ANSWER, resp, 0);
	client(&rc, "", KEY);
	/* A POST without a body still says Content-Length: 0. */
	assert_int_equal(rest_json(&rc, "POST", "/v1/snapshots/s/fork", NULL,
	    &out, &err), 200);
	fake_stop();
	assert_true(json_object_object_get_ex(out, "status", &v));
	assert_string_equal(json_object_get_string(v), "ok");
	assert_true(has_header("Content-Length: 0"));
	json_object_put(out);
	rest_client_free(&rc);
	fake_free();
}

static void
test_json_204_and_continue(void **state)
{
	struct rest_client	 rc;
	struct rest_error	 err;
	json_object		*out = (json_object *)&rc;
	const char		*resp = "HTTP/1.1 100 Continue\r\n\r\n"
	    "HTTP/1.1 204 No Content\r\nServer: x\r\n\r\n";

	(void)state;
	fake_start(ANSWER, resp, 0);
	client(&rc, "", KEY);
	assert_int_equal(rest_json(&rc, "DELETE", "/v1/sandboxes/sb_1", NULL,
	    &out, &err), 204);
	fake_stop();
	assert_null(out);
	assert_true(starts_with("DELETE /v1/sandboxes/sb_1 HTTP/1.1\r\n"));
	assert_null(strcasestr((char *)fk.req, "Content-Length"));
	rest_client_free(&rc);
	fake_free();
}

static void
test_json_not_json(void **state)
{
	struct rest_client	 rc;
	struct rest_error	 err;
	json_object		*out = NULL;
	const char		*resp = "HTTP/1.1 200 OK\r\n"
	    "Content-Length: 9\r\n\r\n{\"a\":1}xx";

	(void)state;
	fake_start(ANSWER, resp, 0);
	client(&rc, "", KEY);
	assert_int_equal(rest_json(&rc, "GET", "/v1/x", NULL, &out, &err),
	    -1);
	fake_stop();
	assert_null(out);
	assert_int_equal(err.status, 200);
	assert_string_equal(err.code, "http_error");
	rest_client_free(&rc);
	fake_free();
}

/* --- errors -------------------------------------------------------------- */

static void
expect_error(const char *resp, int status, const char *code,
    const char *message)
{
	struct rest_client	 rc;
	struct rest_error	 err;
	json_object		*out = NULL;

	fake_start(ANSWER, resp, 0);
	client(&rc, "", KEY);
	assert_int_equal(rest_json(&rc, "GET", "/v1/sandboxes", NULL, &out,
	    &err), -1);
	fake_stop();
	assert_null(out);
	assert_int_equal(err.status, status);
	assert_string_equal(err.code, code);
	if (message != NULL)
		assert_string_equal(err.message, message);
	rest_client_free(&rc);
	fake_free();
}

static void
test_error_envelope(void **state)
{
	static const char *const pieces[] = { "{\"error\":{\"code\":",
	    "\"not_found\",\"message\":\"no sandbox \\u00e9\"}}", NULL };

	(void)state;
	expect_error(with_length("HTTP/1.1 401 Unauthorized\r\n"
	    "WWW-Authenticate: Bearer\r\nContent-Type: application/json\r\n",
	    "{\"error\":{\"code\":\"unauthorized\","
	    "\"message\":\"missing or invalid API key\"}}"), 401,
	    "unauthorized", "missing or invalid API key");
	expect_error(with_chunks("HTTP/1.1 404 Not Found\r\n", pieces), 404,
	    "not_found", "no sandbox \xc3\xa9");
	/* What the server says cannot drive a terminal. */
	expect_error(with_length("HTTP/1.1 409 Conflict\r\n",
	    "{\"error\":{\"code\":\"x\\u001b[2J\",\"message\":"
	    "\"a\\nb\\u001b]0;title\\u0007c\\u007f\"}}"), 409,
	    "x [2J", "a b ]0;title c ");
}

static void
test_error_422(void **state)
{
	(void)state;
	expect_error("HTTP/1.1 422 Unprocessable Entity\r\n"
	    "Content-Type: application/json\r\n\r\n"
	    "{\"detail\":[{\"type\":\"missing\",\"loc\":[\"body\"],"
	    "\"msg\":\"Field required\",\"input\":null}]}", 422,
	    "validation_error", "[{\"type\":\"missing\",\"loc\":[\"body\"],"
	    "\"msg\":\"Field required\",\"input\":null}]");
}

static void
test_error_html(void **state)
{
	char	 big[8192];
	size_t	 n;

	(void)state;
	expect_error("HTTP/1.1 500 Internal Server Error\r\n"
	    "Content-Type: text/html\r\nContent-Length: 52\r\n\r\n"
	    "\n  <html><body>\r\n<h1>Oops</h1>\x1b[31m</body></html>  \n",
	    500, "http_error",
	    "<html><body>  <h1>Oops</h1> [31m</body></html>");
	/* An empty error body says the reason phrase. */
	expect_error("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n",
	    502, "http_error", "Bad Gateway");
	/* JSON that is not the envelope is text too. */
	expect_error("HTTP/1.1 400 Bad Request\r\nContent-Length: 7\r\n\r\n"
	    "[1,2,3]", 400, "http_error", "[1,2,3]");
	/* Long text is cut to the message. */
	n = snprintf(big, sizeof(big), "HTTP/1.1 503 Busy\r\n"
	    "Content-Length: 5000\r\n\r\n");
	memset(big + n, 'x', 5000);
	big[n + 5000] = '\0';
	expect_error(big, 503, "http_error", NULL);
}

static void
test_error_transport(void **state)
{
	static char	 big[80 * 1024];
	size_t		 n;

	(void)state;
	/* The head must fit in 64 KiB. */
	n = snprintf(big, sizeof(big), "HTTP/1.1 200 OK\r\nX-Pad: ");
	memset(big + n, 'p', sizeof(big) - n - 1);
	expect_error(big, 0, "connection_error",
	    "the response head is larger than 65536 bytes");
	/* Bodies cut short. */
	expect_error("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"a\":1",
	    0, "connection_error", NULL);
	expect_error("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
	    "10\r\n{\"a\":1}", 0, "connection_error", NULL);
	expect_error("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
	    "zz\r\n{\"a\":1}\r\n0\r\n\r\n", 0, "connection_error",
	    "bad chunked framing in the response");
	/* Not HTTP, or nothing at all. */
	expect_error("SSH-2.0-OpenSSH_9.2\r\n\r\n", 0, "connection_error",
	    NULL);
	expect_error("", 0, "connection_error", NULL);
	expect_error("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n"
	    "Content-Length: 2\r\n\r\n{}", 0, "connection_error", NULL);
}

static void
test_refused(void **state)
{
	struct rest_client	 rc;
	struct rest_error	 err;
	json_object		*out = NULL;
	char			 buf[2560];

	struct sockaddr_in	 sin;
	socklen_t		 sl = sizeof(sin);
	char			 url[64], msg[256];
	int			 fd;

	(void)state;
	/* A port that was just free and is closed again. */
	fd = socket(AF_INET, SOCK_STREAM, 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &sl), 0);
	close(fd);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", ntohs(sin.sin_port));
	assert_int_equal(rest_client_init(&rc, url, KEY, msg, sizeof(msg)), 0);
	assert_int_equal(rest_json(&rc, "GET", "/healthz", NULL, &out, &err),
	    -1);
	assert_int_equal(err.status, 0);
	assert_string_equal(err.code, "connection_error");
	assert_non_null(strstr(err.message, "cannot connect"));
	rest_error_string(&err, buf, sizeof(buf));
	assert_int_equal(strncmp(buf, "0 connection_error: cannot connect",
	    34), 0);
	/* A path that would break the request line. */
	assert_int_equal(rest_json(&rc, "GET", "/a b", NULL, &out, &err), -1);
	assert_string_equal(err.code, "invalid_request");
	assert_int_equal(rest_json(&rc, "GET", "x", NULL, &out, &err), -1);
	/* Resolved in advance: the same refusal, from the kept addresses. */
	assert_int_equal(rest_client_resolve(&rc, &err), 0);
	assert_non_null(rc.addrs);
	assert_int_equal(rest_json(&rc, "GET", "/healthz", NULL, &out, &err),
	    -1);
	assert_non_null(strstr(err.message, "cannot connect"));
	rest_client_free(&rc);
	assert_null(rc.addrs);

	/* A failed lookup is kept: later calls fail without another. */
	assert_int_equal(rest_client_init(&rc, "http://no-such-host.invalid",
	    KEY, msg, sizeof(msg)), 0);
	rc.resolved = 1;
	rc.gai_error = EAI_NONAME;
	assert_int_equal(rest_json(&rc, "GET", "/healthz", NULL, &out, &err),
	    -1);
	assert_int_equal(err.status, 0);
	assert_string_equal(err.code, "connection_error");
	assert_non_null(strstr(err.message,
	    "cannot resolve no-such-host.invalid"));
	rest_client_free(&rc);
}

static void
test_timeout(void **state)
{
	struct rest_client	 rc;
	struct rest_error	 err;
	json_object		*out = NULL;

	(void)state;
	fake_start(SILENT, NULL, 0);
	client(&rc, "", KEY);
	rc.timeout = 1;
	assert_int_equal(rest_json(&rc, "GET", "/healthz", NULL, &out, &err),
	    -1);
	assert_int_equal(err.status, 0);
	assert_string_equal(err.code, "connection_error");
	assert_non_null(strstr(err.message, "no progress for 1 seconds"));
	fake_stop();
	rest_client_free(&rc);
	fake_free();
}

/* --- bytes --------------------------------------------------------------- */

static void
test_get_bytes(void **state)
{
	struct rest_client	 rc;
	struct rest_error	 err;
	unsigned char		*data = NULL;
	size_t			 len = 99;
	static const char	 resp[] = "HTTP/1.1 200 OK\r\n"
	    "Content-Type: application/octet-stream\r\n"
	    "Content-Length: 6\r\n\r\na\0b\r\nc";

	(void)state;
	fake_start(ANSWER, resp, sizeof(resp) - 1);
	client(&rc, "", KEY);
	assert_int_equal(rest_get_bytes(&rc, "/v1/sandboxes/s/files?path="
	    "%2Fworkspace%2Fa", 1024, &data, &len, &err), 200);
	fake_stop();
	assert_int_equal(len, 6);
	assert_memory_equal(data, "a\0b\r\nc", 6);
	assert_int_equal(data[6], '\0');
	assert_true(starts_with("GET /v1/sandboxes/s/files?path=%2Fworkspace"
	    "%2Fa HTTP/1.1\r\n"));
	free(data);
	fake_free();

	/* Over the cap, by Content-Length. */
	fake_start(ANSWER, resp, sizeof(resp) - 1);
	rest_client_free(&rc);
	client(&rc, "", KEY);
	assert_int_equal(rest_get_bytes(&rc, "/f", 5, &data, &len, &err), -1);
	fake_stop();
	assert_null(data);
	assert_int_equal(err.status, 413);
	assert_string_equal(err.code, "payload_too_large");
	fake_free();

	/* Over the cap, without a length; and an empty body. */
	fake_start(ANSWER, "HTTP/1.1 200 OK\r\n\r\n0123456789", 0);
	rest_client_free(&rc);
	client(&rc, "", KEY);
	assert_int_equal(rest_get_bytes(&rc, "/f", 9, &data, &len, &err), -1);
	fake_stop();
	assert_string_equal(err.code, "payload_too_large");
	fake_free();
	fake_start(ANSWER, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 0);
	rest_client_free(&rc);
	client(&rc, "", KEY);
	assert_int_equal(rest_get_bytes(&rc, "/f", 9, &data, &len, &err), 200);
	fake_stop();
	assert_int_equal(len, 0);
	assert_string_equal((char *)data, "");
	free(data);
	fake_free();

	/* An error is the envelope. */
	fake_start(ANSWER, with_length("HTTP/1.1 413 Payload Too Large\r\n",
	    "{\"error\":{\"code\":\"payload_too_large\","
	    "\"message\":\"file too big\"}}"), 0);
	rest_client_free(&rc);
	client(&rc, "", KEY);
	assert_int_equal(rest_get_bytes(&rc, "/f", 9, &data, &len, &err), -1);
	fake_stop();
	assert_int_equal(err.status, 413);
	assert_string_equal(err.message, "file too big");
	rest_client_free(&rc);
	fake_free();
}

static void
test_put_bytes(void **state)
{
	struct rest_client	 rc;
	struct rest_error	 err;
	json_object		*out = NULL, *v;
	static const unsigned char data[] = { 'x', 0, 0xff, '\n', 'y' };
	const char		*resp = "HTTP/1.1 200 OK\r\n"
	    "Content-Type: application/json\r\nContent-Length: 10\r\n\r\n"
	    "{\"size\":5}";

	(void)state;
	fake_start(ANSWER, resp, 0);
	client(&rc, "", KEY);
	assert_int_equal(rest_put_bytes(&rc, "/v1/sandboxes/s/files?path=a&"
	    "mode=644", data, sizeof(data), &out, &err), 200);
	fake_stop();
	assert_true(json_object_object_get_ex(out, "size", &v));
	assert_int_equal(json_object_get_int(v), 5);
	assert_true(starts_with("PUT /v1/sandboxes/s/files?path=a&mode=644 "
	    "HTTP/1.1\r\n"));
	assert_true(has_header("Content-Type: application/octet-stream"));
	assert_true(has_header("Content-Length: 5"));
	assert_int_equal(fk.reqlen - fk.headlen, sizeof(data));
	assert_memory_equal(fk.req + fk.headlen, data, sizeof(data));
	json_object_put(out);
	rest_client_free(&rc);
	fake_free();
}

/* The server refuses before reading 8 MiB: its answer is the result. */
static void
test_put_answered_early(void **state)
{
	struct rest_client	 rc;
	struct rest_error	 err;
	json_object		*out = NULL;
	unsigned char		*data;
	size_t			 len = 8 * 1024 * 1024;
	const char		*resp;

	(void)state;
	data = calloc(1, len);
	assert_non_null(data);
	resp = with_length("HTTP/1.1 413 Payload Too Large\r\n"
	    "Content-Type: application/json\r\n",
	    "{\"error\":{\"code\":\"payload_too_large\",\"message\":"
	    "\"upload too large\"}}");
	fake_start(EARLY, resp, 0);
	client(&rc, "", KEY);
	assert_int_equal(rest_put_bytes(&rc, "/v1/sandboxes/s/files?path=a",
	    data, len, &out, &err), -1);
	fake_stop();
	assert_null(out);
	assert_int_equal(err.status, 413);
	assert_string_equal(err.code, "payload_too_large");
	assert_string_equal(err.message, "upload too large");
	free(data);
	rest_client_free(&rc);
	fake_free();
}

/* --- streams to and from descriptors ------------------------------------- */

struct progress {
	uint64_t	 last;
	int64_t		 total;
	int		 calls;
	int		 backwards;
};

static void
progress(uint64_t done, int64_t total, void *arg)
{
	struct progress	*p = arg;

	if (done < p->last)
		p->backwards = 1;
	p->last = done;
	p->total = total;
	p->calls++;
}

static int
tmpfile_fd(void)
{
	char	 path[] = "/tmp/test_client_rest.XXXXXX";
	int	 fd;

	fd = mkstemp(path);
	assert_true(fd != -1);
	unlink(path);
	return fd;
}

static void
test_get_to_fd(void **state)
{
	struct rest_client	 rc;
	struct rest_error	 err;
	struct progress		 pr;
	unsigned char		 buf[65536];
	uint64_t		 i, off = 0;
	ssize_t			 n;
	int			 fd;

	(void)state;
	fd = tmpfile_fd();
	memset(&pr, 0, sizeof(pr));
	fake_big(50 * 1024 * 1024 + 17, 0);
	client(&rc, "", KEY);
	assert_int_equal(rest_get_to_fd(&rc, "/v1/sandboxes/s/files?path=b",
	    fd, 0, progress, &pr, &err), 50 * 1024 * 1024 + 17);
	fake_stop();
	assert_int_equal(pr.last, 50 * 1024 * 1024 + 17);
	assert_int_equal(pr.total, -1);
	assert_true(pr.calls > 1);
	assert_false(pr.backwards);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (i = 0; i < (uint64_t)n; i++)
			if (buf[i] != pattern(off + i))
				fail_msg("byte %llu differs",
				    (unsigned long long)(off + i));
		off += n;
	}
	assert_int_equal(off, 50 * 1024 * 1024 + 17);
	fake_free();

	/* The cap stops a stream without a length. */
	fake_big(1024 * 1024, 0);
	rest_client_free(&rc);
	client(&rc, "", KEY);
	assert_int_equal(rest_get_to_fd(&rc, "/f", fd, 1000, NULL, NULL,
	    &err), -1);
	fake_stop();
	assert_int_equal(err.status, 413);
	assert_string_equal(err.code, "payload_too_large");
	fake_free();

	/* With a length: progress knows the total; errors are enveloped. */
	fake_start(ANSWER, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc",
	    0);
	rest_client_free(&rc);
	client(&rc, "", KEY);
	memset(&pr, 0, sizeof(pr));
	assert_int_equal(rest_get_to_fd(&rc, "/f", fd, 3, progress, &pr,
	    &err), 3);
	fake_stop();
	assert_int_equal(pr.total, 3);
	fake_free();
	fake_start(ANSWER, with_length("HTTP/1.1 404 Not Found\r\n",
	    "{\"error\":{\"code\":\"not_found\",\"message\":\"no file\"}}"),
	    0);
	rest_client_free(&rc);
	client(&rc, "", KEY);
	assert_int_equal(rest_get_to_fd(&rc, "/f", fd, 0, NULL, NULL, &err),
	    -1);
	fake_stop();
	assert_int_equal(err.status, 404);
	assert_string_equal(err.code, "not_found");
	assert_string_equal(err.message, "no file");
	close(fd);
	rest_client_free(&rc);
	fake_free();
}

static void
test_put_from_fd(void **state)
{
	struct rest_client	 rc;
	struct rest_error	 err;
	struct progress		 pr;
	json_object		*out = NULL;
	unsigned char		*data;
	size_t			 len = 3 * 1024 * 1024 + 5, i;
	int			 fd;
	const char		*resp = "HTTP/1.1 200 OK\r\n"
	    "Content-Length: 2\r\n\r\n{}";

	(void)state;
	data = malloc(len);
	assert_non_null(data);
	for (i = 0; i < len; i++)
		data[i] = pattern(i);
	fd = tmpfile_fd();
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	memset(&pr, 0, sizeof(pr));

	fake_start(ANSWER, resp, 0);
	client(&rc, "", KEY);
	assert_int_equal(rest_put_from_fd(&rc, "/v1/sandboxes/s/files?path=c",
	    fd, len, progress, &pr, &out, &err), 200);
	fake_stop();
	assert_non_null(out);
	assert_int_equal(pr.last, len);
	assert_int_equal(pr.total, (int64_t)len);
	assert_false(pr.backwards);
	assert_true(starts_with("PUT /v1/sandboxes/s/files?path=c HTTP/1.1"));
	assert_true(has_header("Content-Type: application/octet-stream"));
	assert_int_equal(fk.reqlen - fk.headlen, len);
	assert_memory_equal(fk.req + fk.headlen, data, len);
	json_object_put(out);
	fake_free();

	/* A file shorter than announced fails before the server answers. */
	assert_int_equal(lseek(fd, len - 10, SEEK_SET), (off_t)(len - 10));
	fake_start(EARLY, resp, 0);
	rest_client_free(&rc);
	client(&rc, "", KEY);
	assert_int_equal(rest_put_from_fd(&rc, "/f", fd, 100, NULL, NULL,
	    &out, &err), -1);
	fake_stop();
	assert_null(out);
	assert_string_equal(err.code, "io_error");
	close(fd);
	free(data);
	rest_client_free(&rc);
	fake_free();
}

/* --- NDJSON -------------------------------------------------------------- */

struct lines {
	char	 seen[512];
	int	 count;
	int	 stop_after;
};

static int
on_line(json_object *o, void *arg)
{
	struct lines	*l = arg;
	json_object	*v;

	l->count++;
	if (json_object_object_get_ex(o, "data", &v))
		strlcat(l->seen, json_object_get_string(v), sizeof(l->seen));
	strlcat(l->seen, "|", sizeof(l->seen));
	return l->stop_after != 0 && l->count >= l->stop_after ? -1 : 0;
}

static void
test_ndjson(void **state)
{
	struct rest_client	 rc;
	struct rest_error	 err;
	struct lines		 l;
	json_object		*body;
	static const char *const pieces[] = {
		"{\"type\": \"std", "out\", \"data\": \"a\\n\"}\n\n",
		"\r\n\r\n", "  \n{\"type\": \"stderr\", \"data\":",
		" \"b\"}\r\n", "{\"type\": \"exit\", \"exi", "t_code\": ",
		"0}", NULL };
	static const char *const cut[] = { "{\"data\":\"x\"}\n", NULL };
	char			 resp[1024], resp_cut[256];

	(void)state;
	strlcpy(resp, with_chunks("HTTP/1.1 200 OK\r\n"
	    "Content-Type: application/x-ndjson\r\n", pieces), sizeof(resp));
	/* Without the last chunk. */
	strlcpy(resp_cut, with_chunks("HTTP/1.1 200 OK\r\n", cut),
	    sizeof(resp_cut));
	resp_cut[strlen(resp_cut) - 5] = '\0';
	memset(&l, 0, sizeof(l));
	fake_start(ANSWER, resp, 0);
	client(&rc, "", KEY);
	body = json_object_new_object();
	json_object_object_add(body, "command",
	    json_object_new_string("echo a"));
	assert_int_equal(rest_ndjson(&rc, "/v1/sandboxes/s/exec/stream", body,
	    on_line, &l, &err), 0);
	fake_stop();
	assert_int_equal(l.count, 3);
	assert_string_equal(l.seen, "a\n|b||");
	assert_true(starts_with("POST /v1/sandboxes/s/exec/stream HTTP/1.1"));
	assert_true(has_header("Content-Type: application/json"));
	assert_string_equal((char *)fk.req + fk.headlen,
	    "{\"command\":\"echo a\"}");
	fake_free();

	/* line() can stop the stream. */
	memset(&l, 0, sizeof(l));
	l.stop_after = 1;
	fake_start(ANSWER, resp, 0);
	rest_client_free(&rc);
	client(&rc, "", KEY);
	assert_int_equal(rest_ndjson(&rc, "/s", body, on_line, &l, &err), 0);
	fake_stop();
	assert_int_equal(l.count, 1);
	fake_free();

	/* A bad line is an error; so is a stream cut short. */
	memset(&l, 0, sizeof(l));
	fake_start(ANSWER, "HTTP/1.1 200 OK\r\n\r\n{\"data\":\"x\"}\n{oops\n",
	    0);
	rest_client_free(&rc);
	client(&rc, "", KEY);
	assert_int_equal(rest_ndjson(&rc, "/s", body, on_line, &l, &err), -1);
	fake_stop();
	assert_int_equal(l.count, 1);
	assert_string_equal(err.code, "http_error");
	fake_free();
	memset(&l, 0, sizeof(l));
	fake_start(ANSWER, resp_cut, 0);
	rest_client_free(&rc);
	client(&rc, "", KEY);
	assert_int_equal(rest_ndjson(&rc, "/s", body, on_line, &l, &err), -1);
	fake_stop();
	assert_int_equal(l.count, 1);
	assert_string_equal(err.code, "connection_error");
	fake_free();

	/* An error before the stream. */
	memset(&l, 0, sizeof(l));
	fake_start(ANSWER, with_length("HTTP/1.1 400 Bad Request\r\n",
	    "{\"error\":{\"code\":\"invalid_request\",\"message\":\"not "
	    "running\"}}"), 0);
	rest_client_free(&rc);
	client(&rc, "", KEY);
	assert_int_equal(rest_ndjson(&rc, "/s", body, on_line, &l, &err), -1);
	fake_stop();
	assert_int_equal(l.count, 0);
	assert_int_equal(err.status, 400);
	assert_string_equal(err.code, "invalid_request");
	assert_string_equal(err.message, "not running");
	json_object_put(body);
	rest_client_free(&rc);
	fake_free();
}

static void
test_ndjson_long_line(void **state)
{
	struct rest_client	 rc;
	struct rest_error	 err;
	struct lines		 l;

	(void)state;
	memset(&l, 0, sizeof(l));
	/* 17 MiB without a newline. */
	fake_big(17 * 1024 * 1024, 'x');
	client(&rc, "", KEY);
	assert_int_equal(rest_ndjson(&rc, "/s", NULL, on_line, &l, &err), -1);
	fake_stop();
	assert_int_equal(l.count, 0);
	assert_non_null(strstr(err.message, "longer than"));
	assert_true(has_header("Content-Length: 0"));
	rest_client_free(&rc);
	fake_free();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_url_defaults),
		cmocka_unit_test(test_url_good),
		cmocka_unit_test(test_url_bad),
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_error_string),
		cmocka_unit_test(test_json_content_length),
		cmocka_unit_test(test_sandbox_calls),
		cmocka_unit_test(test_json_chunked),
		cmocka_unit_test(test_json_close_delimited),
		cmocka_unit_test(test_json_204_and_continue),
		cmocka_unit_test(test_json_not_json),
		cmocka_unit_test(test_error_envelope),
		cmocka_unit_test(test_error_422),
		cmocka_unit_test(test_error_html),
		cmocka_unit_test(test_error_transport),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_get_bytes),
		cmocka_unit_test(test_put_bytes),
		cmocka_unit_test(test_put_answered_early),
		cmocka_unit_test(test_get_to_fd),
		cmocka_unit_test(test_put_from_fd),
		cmocka_unit_test(test_ndjson),
		cmocka_unit_test(test_ndjson_long_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
