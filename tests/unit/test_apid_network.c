/*
 * Tests for egress policies in apid (docs/rest-api.md "Network"): the
 * "network" field of create and fork as a boolean or a policy object,
 * the body of PUT .../network, and the three routes over apid's real
 * HTTP layer against a stand-in for managerd (apid_standin.c): what
 * each sends, how each answers, and the replies that are lies.  apid
 * checks only the shape of a policy; what a policy may say is
 * test_egress_policy.c's.
 */
#include <sys/queue.h>

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>

#include "apid.h"
#include "apid_standin.h"
#include "assert_fatal.h"
#include "http_fixture.h"

#define JSON	"application/json"
#define SB	"sb_0123456789abcdef"
#define NET	"/v1/sandboxes/" SB "/network"
#define LOG	NET "/log"

static struct apid	 the_apid;
struct apid		*apid = &the_apid;

static char *
to_text(json_object *o)
{
	char	*s;

	assert_non_null(s = strdup(json_object_to_json_string_ext(o,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)));
	return s;
}

/* A refusal as text: a 422's detail, or "status code: message". */
static char *
refusal(struct body_error *e)
{
	char	*s;

	if (e->status == 422)
		s = to_text(e->detail);
	else
		assert_int_not_equal(asprintf(&s, "%d %s: %s", e->status,
		    e->code, e->message), -1);
	body_error_free(e);
	return s;
}

static void
same(const char *what, const char *got, const char *want)
{
	if (strcmp(got, want) != 0)
		fail_msg("%s\n got %s\nwant %s", what, got, want);
}

/* --- create's and fork's "network" ---------------------------------------- */

/* The policy text create passes on for body, NULL if none. */
static char *
create_policy(const char *body, size_t len, int *network)
{
	struct create_request	 c;
	struct body_error	 e;
	char			*text, *s;

	if (body_parse_create(JSON, body, len, &c, &e) == -1) {
		s = refusal(&e);
		fail_msg("create %s refused: %s", body, s);
	}
	*network = c.network;
	text = c.network_policy;
	c.network_policy = NULL;
	create_request_free(&c);
	return text;
}

static void
create_passes(const char *body, const char *want)
{
	char	*text;
	int	 network = -1;

	text = create_policy(body, strlen(body), &network);
	assert_int_equal(network, 0);
	assert_non_null(text);
	same(body, text, want);
	free(text);
}

static char *
create_refused(const char *body, size_t len)
{
	struct create_request	 c;
	struct body_error	 e;

	assert_int_equal(body_parse_create(JSON, body, len, &c, &e), -1);
	assert_null(c.network_policy);
	assert_null(c.image);
	return refusal(&e);
}

static void
create_refused_is(const char *body, const char *want)
{
	char	*s = create_refused(body, strlen(body));

	same(body, s, want);
	free(s);
}

static void
test_create_policy(void **state)
{
	char	*text;
	int	 network;

	(void)state;
	create_passes("{\"network\": {\"mode\": \"allowlist\", \"allow\": "
	    "[\"pypi.org\", \"*.githubusercontent.com\", "
	    "\"203.0.113.0/24:443\"]}}", "{\"mode\":\"allowlist\",\"allow\":"
	    "[\"pypi.org\",\"*.githubusercontent.com\","
	    "\"203.0.113.0/24:443\"]}");
	create_passes("{\"network\": {\"mode\": \"none\"}, \"image\": \"x\"}",
	    "{\"mode\":\"none\"}");
	/* Compact whatever came; a key sent twice once, its last value. */
	create_passes("{\"network\": {\n\t\"mode\" : \"none\" ,\r\n \"mode\":"
	    " \"public\" }}", "{\"mode\":\"public\"}");
	create_passes("{\"network\": {}}", "{}");
	/* The booleans are what they were. */
	assert_null(create_policy("{\"network\": true}", 17, &network));
	assert_int_equal(network, 1);
	assert_null(create_policy("{\"network\": \"off\"}", 18, &network));
	assert_int_equal(network, 0);
	assert_null(create_policy("{}", 2, &network));
	assert_int_equal(network, 0);
	text = create_policy("{\"network\": 1}", 14, &network);
	assert_null(text);
	assert_int_equal(network, 1);
}

/* Anything in an object goes on: what a policy may say is managerd's. */
static void
test_create_policy_odd(void **state)
{
	(void)state;
	create_passes("{\"network\": {\"mode\": {\"x\": [1, -2.5, null, true, "
	    "false, 1e400, NaN, 123456789012345678901234567890, 1E5]}, "
	    "\"allow\": 7}}", "{\"mode\":{\"x\":[1,-2.5,null,true,false,null,"
	    "null,123456789012345678901234567890,100000.0]},\"allow\":7}");
	/* Escapes as JSON needs them; UTF-8 as it came; NUL kept escaped. */
	create_passes("{\"network\": {\"\\u00e9k\": \"\\u0001\\\"\\\\/"
	    "\\n\\u007f\\u0000\", \"\xe2\x82\xac\": \"\\ud800\"}}",
	    "{\"\xc3\xa9k\":\"\\u0001\\\"\\\\/\\u000a\x7f\\u0000\","
	    "\"\xe2\x82\xac\":\"\xef\xbf\xbd\"}");
	create_passes("{\"network\": {\"a\": {\"b\": {\"c\": [[[{}]]]}}}}",
	    "{\"a\":{\"b\":{\"c\":[[[{}]]]}}}");
}

/* The bound is on the compact text, whitespace left out. */
static void
test_create_policy_bound(void **state)
{
	static char	 body[3 * EGRESS_POLICY_TEXT_MAX];
	const char	*pre = "{\"mode\":\"allowlist\",\"allow\":[\"";
	const char	*post = "\"]}";
	char		 name[EGRESS_POLICY_TEXT_MAX + 2], *text, *s;
	size_t		 n;
	int		 network;

	(void)state;
	n = EGRESS_POLICY_TEXT_MAX - strlen(pre) - strlen(post);
	memset(name, 'a', n);
	name[n] = '\0';
	snprintf(body, sizeof(body), "{\"network\":   {\"mode\" :  "
	    "\"allowlist\",   \"allow\" : [ \"%s\" ] } }", name);
	assert_true(strlen(body) > EGRESS_POLICY_TEXT_MAX);
	text = create_policy(body, strlen(body), &network);
	assert_non_null(text);
	assert_int_equal(strlen(text), EGRESS_POLICY_TEXT_MAX);
	assert_int_equal(strncmp(text, pre, strlen(pre)), 0);
	free(text);
	/* One byte more, and an error of another field beside it. */
	name[n] = 'a';
	name[n + 1] = '\0';
	snprintf(body, sizeof(body), "{\"cpus\": 0, \"network\": {\"mode\":"
	    "\"allowlist\",\"allow\":[\"%s\"]}}", name);
	s = create_refused(body, strlen(body));
	assert_non_null(strstr(s, "{\"detail\":[{\"type\":\"greater_than\","
	    "\"loc\":[\"body\",\"cpus\"]"));
	assert_non_null(strstr(s, "},{\"type\":\"too_long\",\"loc\":"
	    "[\"body\",\"network\"],\"msg\":\"Policy should be at most 8192 "
	    "bytes of compact JSON\",\"input\":{\"mode\":\"allowlist\","
	    "\"allow\":[\"aaa"));
	assert_non_null(strstr(s, "\"]},\"ctx\":{\"max_length\":8192}}]}"));
	free(s);
	/* Escapes count as written: 1366 NULs are 8196 bytes of text. */
	s = body;
	s += sprintf(s, "{\"network\": {\"k\": \"");
	for (n = 0; n < 1366; n++)
		s += sprintf(s, "\\u0000");
	sprintf(s, "\"}}");
	s = create_refused(body, strlen(body));
	assert_non_null(strstr(s, "\"type\":\"too_long\""));
	free(s);
}

/* Not an object: today's boolean errors, byte for byte. */
static void
test_create_policy_not_object(void **state)
{
	char	*s;

	(void)state;
	create_refused_is("{\"network\": []}", "{\"detail\":[{\"type\":"
	    "\"bool_type\",\"loc\":[\"body\",\"network\"],\"msg\":\"Input "
	    "should be a valid boolean\",\"input\":[]}]}");
	create_refused_is("{\"network\": [{\"mode\": \"none\"}]}",
	    "{\"detail\":[{\"type\":\"bool_type\",\"loc\":[\"body\","
	    "\"network\"],\"msg\":\"Input should be a valid boolean\","
	    "\"input\":[{\"mode\":\"none\"}]}]}");
	create_refused_is("{\"network\": null}", "{\"detail\":[{\"type\":"
	    "\"bool_type\",\"loc\":[\"body\",\"network\"],\"msg\":\"Input "
	    "should be a valid boolean\",\"input\":null}]}");
	create_refused_is("{\"network\": \"{\\\"mode\\\": \\\"none\\\"}\"}",
	    "{\"detail\":[{\"type\":\"bool_parsing\",\"loc\":[\"body\","
	    "\"network\"],\"msg\":\"Input should be a valid boolean, unable "
	    "to interpret input\",\"input\":\"{\\\"mode\\\": \\\"none\\\"}\"}]}");
	create_refused_is("{\"network\": 2}", "{\"detail\":[{\"type\":"
	    "\"bool_parsing\",\"loc\":[\"body\",\"network\"],\"msg\":\"Input "
	    "should be a valid boolean, unable to interpret input\","
	    "\"input\":2}]}");
	/* Bytes that are no UTF-8, truncated JSON: as any body. */
	create_refused_is("{\"network\": {\"mode\": \"\xff\"}}",
	    "400 http_error: There was an error parsing the body");
	s = create_refused("{\"network\": {\"mode\": \"none\"", 27);
	assert_non_null(strstr(s, "\"type\":\"json_invalid\""));
	free(s);
	/* A key holding NUL would reach managerd cut short. */
	create_refused_is("{\"network\": {\"mode\\u0000x\": \"public\"}}",
	    "400 invalid_request: a policy's keys must not contain NUL "
	    "characters");
	create_refused_is("{\"network\": {\"allow\": [{\"\\u0000\": 1}]}}",
	    "400 invalid_request: a policy's keys must not contain NUL "
	    "characters");
	/* A policy taken, then a 400 after the schema: nothing kept. */
	create_refused_is("{\"network\": {\"mode\": \"none\"}, \"image\": "
	    "\"a\\u0000b\"}", "400 invalid_request: image must not contain "
	    "NUL characters");
}

static void
fork_parse(const char *body, struct fork_request *fr)
{
	struct body_error	 e;
	char			*s;

	if (body_parse_fork(JSON, body, strlen(body), fr, &e) == -1) {
		s = refusal(&e);
		fail_msg("fork %s refused: %s", body, s);
	}
}

static char *
fork_refused(const char *body)
{
	struct fork_request	 fr;
	struct body_error	 e;

	assert_int_equal(body_parse_fork(JSON, body, strlen(body), &fr, &e),
	    -1);
	assert_null(fr.network_policy);
	assert_false(fr.has_network);
	return refusal(&e);
}

static void
test_fork_policy(void **state)
{
	struct fork_request	 fr;
	static char		 body[2 * EGRESS_POLICY_TEXT_MAX];
	char			*s;

	(void)state;
	fork_parse("{\"network\": {\"mode\": \"public\"}, \"cpus\": 1}", &fr);
	assert_true(fr.has_network);
	assert_false(fr.network);
	assert_string_equal(fr.network_policy, "{\"mode\":\"public\"}");
	assert_true(fr.has_cpus);
	fork_request_free(&fr);
	/* null is "not given", as for every field of fork. */
	fork_parse("{\"network\": null}", &fr);
	assert_false(fr.has_network);
	assert_null(fr.network_policy);
	fork_parse("{\"network\": true}", &fr);
	assert_true(fr.has_network);
	assert_true(fr.network);
	assert_null(fr.network_policy);
	s = fork_refused("{\"network\": []}");
	same("fork []", s, "{\"detail\":[{\"type\":\"bool_type\",\"loc\":"
	    "[\"body\",\"network\"],\"msg\":\"Input should be a valid "
	    "boolean\",\"input\":[]}]}");
	free(s);
	memset(body, 0, sizeof(body));
	strlcpy(body, "{\"network\": {\"k\": \"", sizeof(body));
	memset(body + strlen(body), 'k', EGRESS_POLICY_TEXT_MAX);
	strlcat(body, "\"}}", sizeof(body));
	s = fork_refused(body);
	assert_non_null(strstr(s, "\"type\":\"too_long\",\"loc\":[\"body\","
	    "\"network\"]"));
	free(s);
	/* A policy taken, then labels refused: the policy freed. */
	s = fork_refused("{\"network\": {\"mode\": \"none\"}, \"labels\": "
	    "{\"-bad\": \"x\"}}");
	assert_non_null(strstr(s, "400 invalid_request: invalid label key"));
	free(s);
}

/* --- PUT's body ----------------------------------------------------------- */

static char *
put_refused(const char *ctype, const char *body, size_t len)
{
	struct body_error	 e;
	char			*policy = (char *)1;

	assert_int_equal(body_parse_network(ctype, body, len, &policy, &e),
	    -1);
	assert_null(policy);
	return refusal(&e);
}

static void
put_refused_has(const char *ctype, const char *body, const char *needle)
{
	char	*s = put_refused(ctype, body, strlen(body));

	if (strstr(s, needle) == NULL)
		fail_msg("PUT %s: %s", body, s);
	free(s);
}

static void
test_put_body(void **state)
{
	static char		 big[BODY_MAX_JSON + 2];
	struct body_error	 e;
	char			*policy, *s;
	size_t			 n;

	(void)state;
	assert_int_equal(body_parse_network("application/json; charset=utf-8",
	    "{\"mode\": \"allowlist\", \"allow\": [\"[2001:db8::/32]:443\"]}",
	    55, &policy, &e), 0);
	assert_string_equal(policy, "{\"mode\":\"allowlist\",\"allow\":"
	    "[\"[2001:db8::/32]:443\"]}");
	free(policy);
	/* No Content-Type is JSON too (API.md §1.4). */
	assert_int_equal(body_parse_network(NULL, "{}", 2, &policy, &e), 0);
	assert_string_equal(policy, "{}");
	free(policy);
	put_refused_has(JSON, "", "[{\"type\":\"missing\",\"loc\":[\"body\"]");
	put_refused_has(JSON, "null", "[{\"type\":\"missing\",\"loc\":"
	    "[\"body\"]");
	put_refused_has(JSON, "[{\"mode\": \"none\"}]",
	    "\"type\":\"model_attributes_type\",\"loc\":[\"body\"]");
	put_refused_has(JSON, "\"none\"", "model_attributes_type");
	put_refused_has(JSON, "false", "model_attributes_type");
	put_refused_has("text/plain", "{\"mode\": \"none\"}",
	    "\"type\":\"model_attributes_type\",\"loc\":[\"body\"],\"msg\":"
	    "\"Input should be a valid dictionary or object to extract fields "
	    "from\",\"input\":\"{\\\"mode\\\": \\\"none\\\"}\"");
	put_refused_has("application/x-www-form-urlencoded", "mode=none",
	    "model_attributes_type");
	put_refused_has(JSON, "{\"mode\": \"none\"",
	    "\"type\":\"json_invalid\",\"loc\":[\"body\",15]");
	put_refused_has(JSON, "{\"a\": {\"b\\u0000\": 1}}", "400 invalid_request: "
	    "a policy's keys must not contain NUL characters");
	put_refused_has(JSON, "{\"mode\": \"n\xc3\"}",
	    "400 http_error: There was an error parsing the body");
	/* Past the bound of every JSON body, and past the policy's. */
	memset(big, ' ', sizeof(big) - 1);
	big[0] = '{';
	big[sizeof(big) - 2] = '}';
	s = put_refused(JSON, big, sizeof(big) - 1);
	same("huge", s, "413 payload_too_large: request body is larger than "
	    "1048576 bytes");
	free(s);
	n = snprintf(big, sizeof(big), "{\"mode\": \"allowlist\", \"allow\": [");
	while (n < EGRESS_POLICY_TEXT_MAX + 1000)
		n += snprintf(big + n, sizeof(big) - n, "\"host%zu.example\", ",
		    n);
	snprintf(big + n, sizeof(big) - n, "\"last.example\"]}");
	put_refused_has(JSON, big, "[{\"type\":\"too_long\",\"loc\":[\"body\"],"
	    "\"msg\":\"Policy should be at most 8192 bytes of compact JSON\"");
}

/* --- the routes ----------------------------------------------------------- */

static const struct standin_route routes[] = {
	{ "GET", "/v1/sandboxes/*/network", route_network_get },
	{ "PUT", "/v1/sandboxes/*/network", route_network_put },
	{ "GET", "/v1/sandboxes/*/network/log", route_network_log },
	{ "POST", "/v1/sandboxes", route_sandbox_create },
};

static struct http_fixture	 fx;
static struct http_response	 resp;

static void
router(struct http_request *req)
{
	standin_route(req, routes, sizeof(routes) / sizeof(routes[0]));
}

static int
setup(void **state)
{
	(void)state;
	signal(SIGPIPE, SIG_IGN);
	standin_reset();
	fixture_init(&fx, router, NULL);
	apid->base = fx.base;
	apid->parent.name = "managerd";
	memset(&resp, 0, sizeof(resp));
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	response_free(&resp);
	standin_reset();
	fixture_free(&fx);
	return 0;
}

static void
request_ct(const char *method, const char *target, const char *ctype,
    const char *body)
{
	char	 head[1024], ct[256] = "";

	if (ctype != NULL)
		snprintf(ct, sizeof(ct), "Content-Type: %s\r\n", ctype);
	snprintf(head, sizeof(head), "%s %s HTTP/1.1\r\nHost: t\r\n%s"
	    "Content-Length: %zu\r\n\r\n", method, target, ct,
	    body != NULL ? strlen(body) : 0);
	fixture_send_str(&fx, head);
	if (body != NULL)
		fixture_send_str(&fx, body);
	fixture_run(&fx, 5);
}

static void
request(const char *method, const char *target, const char *body)
{
	request_ct(method, target, body != NULL ? JSON : NULL, body);
}

static struct standin_call *
sent(uint32_t type)
{
	struct standin_call	*c = standin_find(type);

	if (c == NULL)
		fail_msg("no %s sent", msg_type_name(type));
	return c;
}

static void
answer_is(int status, const char *body)
{
	assert_int_equal(fixture_response(&fx, &resp, 2000), 0);
	assert_int_equal(resp.status, status);
	if (body != NULL && strcmp(resp.body != NULL ? resp.body : "",
	    body) != 0)
		fail_msg(" got %s\nwant %s", resp.body, body);
}

static void
reply_info(struct standin_call *c, const char *policy)
{
	struct msgw	 w;

	msgw_init(&w);
	msgw_str(&w, policy);
	assert_int_equal(standin_reply(c, MSG_NETWORK_INFO, &w, -1),
	    APID_REPLY_DONE);
}

/* The sandbox id a call carried, and nothing else. */
static void
carried_id(struct standin_call *c)
{
	struct imsg	 m = standin_imsg(c);
	char		*id;

	assert_non_null(id = msg_get_string(&m, MSG_MAX_ID));
	assert_string_equal(id, SB);
	free(id);
}

static void
test_route_get(void **state)
{
	char	 target[512], id[200];

	(void)state;
	request("GET", NET, NULL);
	carried_id(sent(MSG_NETWORK_GET));
	reply_info(sent(MSG_NETWORK_GET), "{ \"mode\": \"allowlist\", "
	    "\"allow\": [ \"pypi.org\", \"*.example.com:443\" ] }");
	answer_is(200, "{\"mode\":\"allowlist\",\"allow\":[\"pypi.org\","
	    "\"*.example.com:443\"]}");
	assert_string_equal(response_field(&resp, "content-type"),
	    "application/json");
	/* The same connection, again and again. */
	request("GET", NET, NULL);
	reply_info(sent(MSG_NETWORK_GET), "{\"mode\":\"bridge\"}");
	answer_is(200, "{\"mode\":\"bridge\"}");
	assert_true(resp.keep_alive);
	request("GET", NET, NULL);
	standin_reply_error(sent(MSG_NETWORK_GET), ERR_NOT_FOUND,
	    "sandbox " SB " not found");
	answer_is(404, "{\"error\":{\"code\":\"not_found\",\"message\":"
	    "\"sandbox " SB " not found\"}}");
	/* An id too long for a message: managerd's 404, from apid. */
	memset(id, 'b', 129);
	id[129] = '\0';
	snprintf(target, sizeof(target), "/v1/sandboxes/%s/network", id);
	request("GET", target, NULL);
	answer_is(404, NULL);
	assert_non_null(strstr(resp.body, "not found"));
	snprintf(target, sizeof(target), "/v1/sandboxes/%s/network/log", id);
	request("GET", target, NULL);
	answer_is(404, NULL);
	snprintf(target, sizeof(target), "/v1/sandboxes/%s/network", id);
	request("PUT", target, "{\"mode\": \"none\"}");
	answer_is(404, NULL);
	assert_int_equal(standin_count(), 3);
	/* managerd cannot be reached. */
	standin_fail = 1;
	request("GET", NET, NULL);
	answer_is(500, "{\"error\":{\"code\":\"internal_error\",\"message\":"
	    "\"cannot reach managerd\"}}");
}

static void
test_route_put(void **state)
{
	struct standin_call	*c;
	struct imsg		 m;
	struct msgr		 r;
	char			*id, *policy;

	(void)state;
	request("PUT", NET, "{\"mode\": \"allowlist\",\n \"allow\": "
	    "[\"pypi.org\"]}");
	c = sent(MSG_NETWORK_PUT);
	m = standin_imsg(c);
	msgr_init(&r, &m);
	id = msgr_str(&r, MSG_MAX_ID);
	policy = msgr_str(&r, EGRESS_POLICY_TEXT_MAX);
	assert_int_equal(msgr_end(&r), 0);
	assert_string_equal(id, SB);
	assert_string_equal(policy, "{\"mode\":\"allowlist\",\"allow\":"
	    "[\"pypi.org\"]}");
	free(id);
	free(policy);
	reply_info(c, "{\"mode\": \"allowlist\", \"allow\": [\"pypi.org\"]}");
	answer_is(200, "{\"mode\":\"allowlist\",\"allow\":[\"pypi.org\"]}");
	/* managerd's verdicts, as they come. */
	request("PUT", NET, "{\"mode\": \"allowlist\", \"allow\": [\"10.0.0.1"
	    "/8\"]}");
	standin_reply_error(sent(MSG_NETWORK_PUT), ERR_INVALID_REQUEST,
	    "allow[0]: a range is written from its first address");
	answer_is(400, "{\"error\":{\"code\":\"invalid_request\",\"message\":"
	    "\"allow[0]: a range is written from its first address\"}}");
	request("PUT", NET, "{\"mode\": \"none\"}");
	standin_reply_error(sent(MSG_NETWORK_PUT), ERR_CONFLICT,
	    "sandbox " SB " is on the shared bridge");
	answer_is(409, NULL);
	assert_int_equal(standin_count(), 3);
	/* What never reaches managerd. */
	request("PUT", NET, NULL);
	answer_is(422, "{\"detail\":[{\"type\":\"missing\",\"loc\":"
	    "[\"body\"],\"msg\":\"Field required\",\"input\":null}]}");
	request_ct("PUT", NET, "text/plain", "{\"mode\": \"none\"}");
	answer_is(422, NULL);
	assert_non_null(strstr(resp.body, "model_attributes_type"));
	request("PUT", NET, "[]");
	answer_is(422, NULL);
	request("PUT", NET, "{\"mode\": ");
	answer_is(422, NULL);
	assert_non_null(strstr(resp.body, "json_invalid"));
	request("PUT", NET, "{\"mode\": \"\xe9\"}");
	answer_is(400, NULL);
	assert_int_equal(standin_count(), 3);
	/* And the connection still serves. */
	request("GET", NET, NULL);
	reply_info(sent(MSG_NETWORK_GET), "{\"mode\":\"none\"}");
	answer_is(200, "{\"mode\":\"none\"}");
}

/* A body past BODY_MAX_JSON is refused from its head. */
static void
test_route_put_huge(void **state)
{
	char	 head[256];

	(void)state;
	snprintf(head, sizeof(head), "PUT " NET " HTTP/1.1\r\nHost: t\r\n"
	    "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n",
	    BODY_MAX_JSON + 1);
	fixture_send_str(&fx, head);
	fixture_run(&fx, 5);
	answer_is(413, NULL);
	assert_int_equal(standin_count(), 0);
}

/* Create carries an object's text, and the boolean as before. */
static void
test_route_create(void **state)
{
	struct create_request	 c;
	struct imsg		 m;

	(void)state;
	request("POST", "/v1/sandboxes", "{\"network\": {\"mode\": "
	    "\"allowlist\", \"allow\": [\"pypi.org\"]}}");
	m = standin_imsg(sent(MSG_SANDBOX_CREATE));
	assert_int_equal(msg_get_create_request(&m, &c), 0);
	assert_int_equal(c.network, 0);
	assert_string_equal(c.network_policy, "{\"mode\":\"allowlist\","
	    "\"allow\":[\"pypi.org\"]}");
	create_request_free(&c);
	standin_reply_error(sent(MSG_SANDBOX_CREATE), ERR_INVALID_REQUEST,
	    "this server cannot enforce egress policies: its runtime is runsc");
	answer_is(400, NULL);
	request("POST", "/v1/sandboxes", "{\"network\": true}");
	m = standin_imsg(sent(MSG_SANDBOX_CREATE));
	assert_int_equal(msg_get_create_request(&m, &c), 0);
	assert_int_equal(c.network, 1);
	assert_null(c.network_policy);
	create_request_free(&c);
	standin_reply_error(sent(MSG_SANDBOX_CREATE), ERR_FORBIDDEN, "no");
	answer_is(403, NULL);
}

static void
log_piece(struct standin_call *c, const char *text)
{
	struct msgw	 w;

	msgw_init(&w);
	msgw_str(&w, text);
	assert_int_equal(standin_reply(c, MSG_NETWORK_LOG_TEXT, &w, -1),
	    APID_REPLY_MORE);
}

static void
log_end(struct standin_call *c)
{
	assert_int_equal(standin_reply(c, MSG_NETWORK_LOG_END, NULL, -1),
	    APID_REPLY_DONE);
}

#define ENTRY	"{\"time\": \"2026-12-03T10:00:00.000000Z\", \"host\": " \
	"\"pypi.org\", \"port\": 443, \"address\": \"151.101.0.223\", " \
	"\"allowed\": true, \"reason\": null, \"bytes_sent\": 517, " \
	"\"bytes_received\": 6120}"
#define ENTRY_JSON "{\"time\":\"2026-12-03T10:00:00.000000Z\",\"host\":" \
	"\"pypi.org\",\"port\":443,\"address\":\"151.101.0.223\"," \
	"\"allowed\":true,\"reason\":null,\"bytes_sent\":517," \
	"\"bytes_received\":6120}"

static void
test_route_log(void **state)
{
	struct standin_call	*c;

	(void)state;
	request("GET", LOG, NULL);
	c = sent(MSG_NETWORK_LOG);
	carried_id(c);
	/* Pieces cut anywhere, even in a string; an empty one too. */
	log_piece(c, "{\"entries\": [" ENTRY ", {\"time\": \"2026-12-03T1");
	log_piece(c, "");
	log_piece(c, "0:00:01.000000Z\", \"host\": \"10.0.0.1\", \"port\": "
	    "22, \"address\": null, \"allowed\": false, \"reason\": \"address "
	    "10.0.0.0/8 is private\", \"bytes_sent\": 0, \"bytes_received\": "
	    "0}], \"dropped\": 3}");
	log_end(c);
	answer_is(200, "{\"entries\":[" ENTRY_JSON ",{\"time\":"
	    "\"2026-12-03T10:00:01.000000Z\",\"host\":\"10.0.0.1\",\"port\":"
	    "22,\"address\":null,\"allowed\":false,\"reason\":\"address "
	    "10.0.0.0/8 is private\",\"bytes_sent\":0,\"bytes_received\":0}],"
	    "\"dropped\":3}");
	request("GET", LOG, NULL);
	c = sent(MSG_NETWORK_LOG);
	log_piece(c, "{\"entries\":[],\"dropped\":0}");
	log_end(c);
	answer_is(200, "{\"entries\":[],\"dropped\":0}");
	request("GET", LOG, NULL);
	c = sent(MSG_NETWORK_LOG);
	log_piece(c, "{\"entries\":[");
	standin_reply_error(c, ERR_UNAVAILABLE, "the egress proxy is "
	    "restarting");
	answer_is(503, NULL);
	/* A log of a sandbox that has no policy is managerd's to say. */
	request("GET", LOG, NULL);
	standin_reply_error(sent(MSG_NETWORK_LOG), ERR_NOT_FOUND,
	    "sandbox " SB " not found");
	answer_is(404, NULL);
}

/* More than apid relays: a 502 at the end, and the connection serves. */
static void
test_route_log_bound(void **state)
{
	static char		 piece[EGRESS_LOG_PIECE + 1];
	struct standin_call	*c;
	size_t			 sent_bytes = 0;

	(void)state;
	request("GET", LOG, NULL);
	c = sent(MSG_NETWORK_LOG);
	log_piece(c, "{\"entries\":[],\"pad\":\"");
	memset(piece, 'x', EGRESS_LOG_PIECE);
	while (sent_bytes <= 8 * 1024 * 1024) {
		log_piece(c, piece);
		sent_bytes += EGRESS_LOG_PIECE;
	}
	log_piece(c, "\"}");
	log_end(c);
	answer_is(502, "{\"error\":{\"code\":\"backend_error\",\"message\":"
	    "\"the sandbox's network log is larger than apid relays "
	    "(8388608 bytes of JSON)\"}}");
	request("GET", NET, NULL);
	reply_info(sent(MSG_NETWORK_GET), "{\"mode\":\"none\"}");
	answer_is(200, "{\"mode\":\"none\"}");
}

/* The client leaves: the replies still come, and free the request. */
static void
test_route_log_gone(void **state)
{
	struct standin_call	*c;

	(void)state;
	request("GET", LOG, NULL);
	c = sent(MSG_NETWORK_LOG);
	log_piece(c, "{\"entries\":[");
	close(fx.client);
	fx.client = -1;
	fixture_run(&fx, 20);
	log_piece(c, "]}");
	log_end(c);
	fixture_run(&fx, 5);
}

/* --- lies ------------------------------------------------------------------ */

static void
lie_setup(const char *method, const char *target, const char *body)
{
	setup(NULL);
	request(method, target, body);
}

static void
lie_info(const char *policy)
{
	lie_setup("GET", NET, NULL);
	reply_info(sent(MSG_NETWORK_GET), policy);
}

static void
lie_info_not_json(void)
{
	lie_info("{\"mode\": \"none\"");
}

static void
lie_info_array(void)
{
	lie_info("[{\"mode\": \"none\"}]");
}

static void
lie_info_trailing(void)
{
	lie_info("{\"mode\": \"none\"} {}");
}

static void
lie_info_mode(void)
{
	lie_info("{\"mode\": \"everything\"}");
}

static void
lie_info_no_mode(void)
{
	lie_info("{\"allow\": []}");
}

static void
lie_info_extra(void)
{
	struct msgw	 w;

	lie_setup("PUT", NET, "{\"mode\": \"none\"}");
	msgw_init(&w);
	msgw_str(&w, "{\"mode\": \"none\"}");
	msgw_u8(&w, 0);
	standin_reply(sent(MSG_NETWORK_PUT), MSG_NETWORK_INFO, &w, -1);
}

static void
lie_info_type(void)
{
	lie_setup("PUT", NET, "{\"mode\": \"none\"}");
	standin_reply(sent(MSG_NETWORK_PUT), MSG_OK, NULL, -1);
}

static void
lie_log_not_object(void)
{
	struct standin_call	*c;

	lie_setup("GET", LOG, NULL);
	c = sent(MSG_NETWORK_LOG);
	log_piece(c, "[]");
	log_end(c);
}

static void
lie_log_no_entries(void)
{
	struct standin_call	*c;

	lie_setup("GET", LOG, NULL);
	c = sent(MSG_NETWORK_LOG);
	log_piece(c, "{\"dropped\": 0}");
	log_end(c);
}

static void
lie_log_cut(void)
{
	struct standin_call	*c;

	lie_setup("GET", LOG, NULL);
	c = sent(MSG_NETWORK_LOG);
	log_piece(c, "{\"entries\": [");
	log_end(c);
}

static void
lie_log_empty(void)
{
	lie_setup("GET", LOG, NULL);
	log_end(sent(MSG_NETWORK_LOG));
}

static void
lie_log_end_payload(void)
{
	struct msgw	 w;

	lie_setup("GET", LOG, NULL);
	msgw_init(&w);
	msgw_u8(&w, 1);
	standin_reply(sent(MSG_NETWORK_LOG), MSG_NETWORK_LOG_END, &w, -1);
}

static void
lie_log_piece_long(void)
{
	static char	 piece[EGRESS_LOG_PIECE + 2];

	lie_setup("GET", LOG, NULL);
	memset(piece, ' ', EGRESS_LOG_PIECE + 1);
	log_piece(sent(MSG_NETWORK_LOG), piece);
}

static void
lie_log_type(void)
{
	lie_setup("GET", LOG, NULL);
	standin_reply(sent(MSG_NETWORK_LOG), MSG_NETWORK_INFO, NULL, -1);
}

static void
test_lies(void **state)
{
	(void)state;
	assert_fatal(lie_info_not_json, "bad NETWORK_INFO message from "
	    "managerd: malformed policy");
	assert_fatal(lie_info_array, "bad NETWORK_INFO message from "
	    "managerd: malformed policy");
	assert_fatal(lie_info_trailing, "bad NETWORK_INFO message from "
	    "managerd: malformed policy");
	assert_fatal(lie_info_mode, "bad NETWORK_INFO message from "
	    "managerd: malformed policy");
	assert_fatal(lie_info_no_mode, "bad NETWORK_INFO message from "
	    "managerd: malformed policy");
	assert_fatal(lie_info_extra, "bad NETWORK_INFO message from "
	    "managerd: malformed policy");
	assert_fatal(lie_info_type, "bad OK message from managerd: wrong "
	    "reply type");
	assert_fatal(lie_log_not_object, "bad NETWORK_LOG_END message from "
	    "managerd: malformed log");
	assert_fatal(lie_log_no_entries, "bad NETWORK_LOG_END message from "
	    "managerd: malformed log");
	assert_fatal(lie_log_cut, "bad NETWORK_LOG_END message from "
	    "managerd: malformed log");
	assert_fatal(lie_log_empty, "bad NETWORK_LOG_END message from "
	    "managerd: malformed log");
	assert_fatal(lie_log_end_payload, "bad NETWORK_LOG_END message from "
	    "managerd: unexpected payload");
	assert_fatal(lie_log_piece_long, "bad NETWORK_LOG_TEXT message from "
	    "managerd: malformed log text");
	assert_fatal(lie_log_type, "bad NETWORK_INFO message from managerd: "
	    "wrong reply type");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_policy),
		cmocka_unit_test(test_create_policy_odd),
		cmocka_unit_test(test_create_policy_bound),
		cmocka_unit_test(test_create_policy_not_object),
		cmocka_unit_test(test_fork_policy),
		cmocka_unit_test(test_put_body),
		cmocka_unit_test_setup_teardown(test_route_get, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_route_put, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_route_put_huge, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_route_create, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_route_log, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_route_log_bound, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_route_log_gone, setup,
		    teardown),
		cmocka_unit_test(test_lies),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
