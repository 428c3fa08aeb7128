/*
 * Tests for apid's snapshot routes: the bodies of snapshot create,
 * rollback and fork with their 422 entries (API.md §1.3, §1.4, §4.12,
 * §4.13, §4.17), the Snapshot object (§3.4), snapshot id plausibility,
 * the ?sandbox_id= filter, and the routes themselves against stand-ins
 * for managerd (apid_request_send), the tar job and the responses:
 * what each route sends, and the SNAPSHOT_CREATE exchange with its
 * SINK, SNAPSHOT_WRITTEN and final reply.
 */
#include <sys/queue.h>
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
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
#include <event2/buffer.h>
#include <event2/event.h>

#include "apid.h"
#include "http_fixture.h"

#define JSON		"application/json"

/* Stand-ins for http.c, respond.c and tar_job.c. */

static struct apid	 the_apid;
struct apid		*apid = &the_apid;

static struct {
	int		 called;
	uint32_t	 type;
	struct msgw	 w;
	int		 fd;
	apid_reply_cb	 reply;
	void		*arg;
	int		 fail;
} sent;
static struct apid_request	 sent_ar;

struct apid_request *
apid_request_send(struct http_request *req, uint32_t type, struct msgw *w,
    int fd, apid_reply_cb reply, void *arg)
{
	if (sent.fail) {
		if (fd != -1)
			close(fd);
		return NULL;
	}
	sent.called++;
	sent.type = type;
	if (w != NULL)
		sent.w = *w;
	else
		msgw_init(&sent.w);
	sent.fd = fd;
	sent.reply = reply;
	sent.arg = arg;
	memset(&sent_ar, 0, sizeof(sent_ar));
	sent_ar.id = 7;
	sent_ar.req = req;
	sent_ar.reply = reply;
	sent_ar.arg = arg;
	return &sent_ar;
}

static struct {
	int			 called;
	struct tar_job_spec	 spec;
	int			 fail;	/* errno to fail with */
} job;

int
tar_job_start(const struct tar_job_spec *spec)
{
	job.called++;
	job.spec = *spec;
	if (job.fail == 0)
		return 0;
	close(spec->in_fd);
	close(spec->out_fd);
	errno = job.fail;
	return -1;
}

static struct {
	int	 status;
	char	*text;		/* compact JSON, or "code: message" */
} resp;

static void
resp_set(int status, char *text)
{
	resp.status = status;
	free(resp.text);
	resp.text = text;
}

static char *
to_text(json_object *o)
{
	return strdup(json_object_to_json_string_ext(o,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
}

void
respond_json(struct http_request *req, int status, json_object *obj)
{
	resp_set(status, to_text(obj));
}

void
respond_error_status(struct http_request *req, int status, const char *code,
    const char *message)
{
	char	*s;

	assert_int_not_equal(asprintf(&s, "%s: %s", code, message), -1);
	resp_set(status, s);
}

void
respond_error(struct http_request *req, enum error_kind kind,
    const char *message)
{
	static const int	 status[] = { 0, 400, 401, 403, 404, 409, 413,
	    429, 500, 502, 507, 503, 504 };

	assert_true(kind < sizeof(status) / sizeof(status[0]));
	respond_error_status(req, status[kind], "error", message);
}

void
respond_errno(struct http_request *req, int errnum, const char *what)
{
	respond_error(req, descriptor_error(errnum, ERR_INTERNAL), what);
}

int
respond_error_imsg(struct http_request *req, struct imsg *imsg)
{
	struct msgr	 r;
	uint32_t	 kind;
	char		*text;

	msgr_init(&r, imsg);
	kind = msgr_u32(&r);
	text = msgr_str(&r, MSG_MAX_STRING);
	if (msgr_end(&r) == -1 || text == NULL)
		return -1;
	respond_error(req, kind, text);
	free(text);
	return 0;
}

const char *
respond_reason(int status)
{
	return "Reason";
}

static void
resp_expect(int status, const char *text)
{
	assert_int_equal(resp.status, status);
	if (strcmp(resp.text, text) != 0)
		fail_msg(" got %s\nwant %s", resp.text, text);
	resp_set(0, NULL);
}

/* Helpers for the body tests. */

static char *
detail_of(struct body_error *e)
{
	char	*s;

	assert_int_equal(e->status, 422);
	assert_non_null(e->detail);
	s = to_text(e->detail);
	body_error_free(e);
	return s;
}

static void
expect_detail(struct body_error *e, const char *body, const char *want)
{
	char	*s = detail_of(e);

	if (strcmp(s, want) != 0)
		fail_msg("body %s\n got %s\nwant %s", body, s, want);
	free(s);
}

static void
name_422(const char *ctype, const char *body, const char *want)
{
	struct body_error	 e;
	char			*name = (char *)1;

	assert_int_equal(body_parse_snapshot_create(ctype, body,
	    body ? strlen(body) : 0, &name, &e), -1);
	assert_null(name);
	expect_detail(&e, body, want);
}

static char *
name_ok(const char *ctype, const char *body)
{
	struct body_error	 e;
	char			*name = (char *)1;

	if (body_parse_snapshot_create(ctype, body, body ? strlen(body) : 0,
	    &name, &e) == -1)
		fail_msg("body %s: status %d", body, e.status);
	return name;
}

static void
rollback_422(const char *ctype, const char *body, const char *want)
{
	struct body_error	 e;
	char			*id = (char *)1;

	assert_int_equal(body_parse_rollback(ctype, body,
	    body ? strlen(body) : 0, &id, &e), -1);
	assert_null(id);
	expect_detail(&e, body, want);
}

static void
fork_422(const char *body, const char *want)
{
	struct fork_request	 f;
	struct body_error	 e;

	assert_int_equal(body_parse_fork(JSON, body, strlen(body), &f, &e),
	    -1);
	assert_int_equal(f.has_timeout_seconds + f.has_network + f.has_cpus +
	    f.has_memory_mb, 0);
	expect_detail(&e, body, want);
}

static void
fork_ok(const char *ctype, const char *body, struct fork_request *f)
{
	struct body_error	 e;

	if (body_parse_fork(ctype, body, body ? strlen(body) : 0, f, &e) == -1)
		fail_msg("body %s: status %d", body, e.status);
	assert_null(f->snapshot_id);
}

#define MISSING_BODY \
	"{\"detail\":[{\"type\":\"missing\",\"loc\":[\"body\"]," \
	"\"msg\":\"Field required\",\"input\":null}]}"
#define NOT_OBJECT(input) \
	"{\"detail\":[{\"type\":\"model_attributes_type\",\"loc\":[\"body\"]," \
	"\"msg\":\"Input should be a valid dictionary or object to extract " \
	"fields from\",\"input\":" input "}]}"
#define EXTRA(key, input) \
	"{\"type\":\"extra_forbidden\",\"loc\":[\"body\",\"" key "\"]," \
	"\"msg\":\"Extra inputs are not permitted\",\"input\":" input "}"
#define STRING_TYPE(field, input) \
	"{\"type\":\"string_type\",\"loc\":[\"body\",\"" field "\"]," \
	"\"msg\":\"Input should be a valid string\",\"input\":" input "}"

/* A string of n copies of a UTF-8 character, in JSON quotes if quoted. */
static char *
repeat(const char *ch, size_t n, int quoted)
{
	size_t	 len = strlen(ch), i;
	char	*s, *p;

	assert_non_null(s = malloc(n * len + 3));
	p = s;
	if (quoted)
		*p++ = '"';
	for (i = 0; i < n; i++, p += len)
		memcpy(p, ch, len);
	if (quoted)
		*p++ = '"';
	*p = '\0';
	return s;
}

/* §4.12: absent, empty, null, {} and {"name": null} are no name. */
static void
test_create_no_name(void **state)
{
	static const char *const bodies[] = { NULL, "", "null", " null ",
	    "{}", "{\"name\": null}" };
	size_t	 i;

	for (i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++)
		assert_null(name_ok(JSON, bodies[i]));
	/* No Content-Type is parsed as JSON; an empty body needs none. */
	assert_null(name_ok(NULL, "null"));
	assert_null(name_ok("text/plain", ""));
}

static void
test_create_name(void **state)
{
	/* Exactly 128 characters pass, in ASCII and in 2-4 byte UTF-8. */
	static const char *const chars[] = { "a", "\303\251", "\342\202\254",
	    "\360\237\230\200" };
	char	*name, *body, *s;
	size_t	 i;

	name = name_ok(JSON, "{\"name\": \"before-upgrade\"}");
	assert_string_equal(name, "before-upgrade");
	free(name);
	name = name_ok("application/vnd.api+json; charset=utf-8",
	    "{\"name\": \"\\u00e9t\\u00e9\"}");
	assert_string_equal(name, "\303\251t\303\251");
	free(name);
	name = name_ok(JSON, "{\"name\": \"\"}");
	assert_string_equal(name, "");
	free(name);

	for (i = 0; i < sizeof(chars) / sizeof(chars[0]); i++) {
		s = repeat(chars[i], 128, 1);
		assert_int_not_equal(asprintf(&body, "{\"name\":%s}", s), -1);
		name = name_ok(JSON, body);
		assert_int_equal(strlen(name), 128 * strlen(chars[i]));
		free(name);
		free(body);
		free(s);
	}
}

static void
test_create_name_too_long(void **state)
{
	static const char *const chars[] = { "a", "\303\251", "\342\202\254",
	    "\360\237\230\200" };
	char	*s, *body, *want;
	size_t	 i;

	for (i = 0; i < sizeof(chars) / sizeof(chars[0]); i++) {
		s = repeat(chars[i], 129, 1);
		assert_int_not_equal(asprintf(&body, "{\"name\":%s}", s), -1);
		assert_int_not_equal(asprintf(&want,
		    "{\"detail\":[{\"type\":\"string_too_long\",\"loc\":"
		    "[\"body\",\"name\"],\"msg\":\"String should have at most "
		    "128 characters\",\"input\":%s,\"ctx\":{\"max_length\":128}"
		    "}]}", s), -1);
		name_422(JSON, body, want);
		free(want);
		free(body);
		free(s);
	}
}

static void
test_create_422(void **state)
{
	name_422(JSON, "{\"name\": 5}", "{\"detail\":["
	    STRING_TYPE("name", "5") "]}");
	name_422(JSON, "{\"name\": [\"a\"]}", "{\"detail\":["
	    STRING_TYPE("name", "[\"a\"]") "]}");
	name_422(JSON, "{\"nam\": \"x\"}", "{\"detail\":["
	    EXTRA("nam", "\"x\"") "]}");
	/* Errors are collected: fields first, then unknown keys. */
	name_422(JSON, "{\"x\": 1, \"name\": true}", "{\"detail\":["
	    STRING_TYPE("name", "true") "," EXTRA("x", "1") "]}");
	name_422(JSON, "[]", NOT_OBJECT("[]"));
	name_422(JSON, "\"a\"", NOT_OBJECT("\"a\""));
	name_422(JSON, "{\"name\": \"x\"",
	    "{\"detail\":[{\"type\":\"json_invalid\",\"loc\":[\"body\",12],"
	    "\"msg\":\"JSON decode error\",\"input\":{},\"ctx\":{\"error\":"
	    "\"Expecting ',' delimiter\"}}]}");
	/* Not parsed: the model sees the raw text. */
	name_422("text/plain", "null", NOT_OBJECT("\"null\""));
	name_422("application/x-www-form-urlencoded", "{}",
	    NOT_OBJECT("\"{}\""));
}

/* What could not travel to managerd, and what Python fails on. */
static void
test_create_400(void **state)
{
	struct body_error	 e;
	char			*name;

	assert_int_equal(body_parse_snapshot_create(JSON,
	    "{\"name\": \"a\\u0000b\"}", 20, &name, &e), -1);
	assert_null(name);
	assert_int_equal(e.status, 400);
	assert_string_equal(e.message, "name must not contain NUL characters");
	body_error_free(&e);
	assert_int_equal(body_parse_snapshot_create(JSON,
	    "{\"name\": \"\377\"}", 13, &name, &e), -1);
	assert_int_equal(e.status, 400);
	assert_string_equal(e.code, "http_error");
	body_error_free(&e);
}

static void
test_rollback(void **state)
{
	struct body_error	 e;
	char			*id;
	const char		*b;

	b = "{\"snapshot_id\": \"snap_0123456789abcdef\"}";
	assert_int_equal(body_parse_rollback(JSON, b, strlen(b), &id, &e), 0);
	assert_string_equal(id, "snap_0123456789abcdef");
	free(id);
	rollback_422(JSON, NULL, MISSING_BODY);
	rollback_422(JSON, "", MISSING_BODY);
	rollback_422(JSON, "null", MISSING_BODY);
	rollback_422(JSON, "{}",
	    "{\"detail\":[{\"type\":\"missing\",\"loc\":[\"body\","
	    "\"snapshot_id\"],\"msg\":\"Field required\",\"input\":{}}]}");
	rollback_422(JSON, "{\"snapshot_id\": null}", "{\"detail\":["
	    STRING_TYPE("snapshot_id", "null") "]}");
	rollback_422(JSON, "{\"snapshot_id\": 12}", "{\"detail\":["
	    STRING_TYPE("snapshot_id", "12") "]}");
	rollback_422(JSON, "{\"snapshot_id\": \"s\", \"force\": true}",
	    "{\"detail\":[" EXTRA("force", "true") "]}");
	rollback_422(JSON, "{\"id\": \"s\"}",
	    "{\"detail\":[{\"type\":\"missing\",\"loc\":[\"body\","
	    "\"snapshot_id\"],\"msg\":\"Field required\",\"input\":"
	    "{\"id\":\"s\"}}," EXTRA("id", "\"s\"") "]}");
	rollback_422(JSON, "[1]", NOT_OBJECT("[1]"));
	rollback_422("text/plain", "{}", NOT_OBJECT("\"{}\""));
	/* A NUL names no snapshot. */
	b = "{\"snapshot_id\": \"snap_\\u0000\"}";
	assert_int_equal(body_parse_rollback(JSON, b, strlen(b), &id, &e), -1);
	assert_null(id);
	assert_int_equal(e.status, 404);
	assert_string_equal(e.code, "not_found");
	assert_string_equal(e.message, "snapshot 'snap_\\x00' not found");
	body_error_free(&e);
}

static void
test_fork_defaults(void **state)
{
	static const char *const bodies[] = { NULL, "", "null", "{}",
	    "{\"timeout_seconds\": null, \"network\": null, \"cpus\": null, "
	    "\"memory_mb\": null}" };
	struct fork_request	 f;
	size_t			 i;

	for (i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
		fork_ok(JSON, bodies[i], &f);
		assert_int_equal(f.has_timeout_seconds + f.has_network +
		    f.has_cpus + f.has_memory_mb, 0);
	}
}

static void
test_fork_overrides(void **state)
{
	struct fork_request	 f;

	fork_ok(JSON, "{\"timeout_seconds\": 60, \"network\": true, "
	    "\"cpus\": 0.5, \"memory_mb\": 256}", &f);
	assert_true(f.has_timeout_seconds);
	assert_int_equal(f.timeout_seconds, 60);
	assert_true(f.has_network);
	assert_true(f.network);
	assert_true(f.has_cpus);
	assert_true(f.cpus == 0.5);
	assert_true(f.has_memory_mb);
	assert_int_equal(f.memory_mb, 256);
	fork_ok(NULL, "{\"network\": false, \"memory_mb\": 16.0}", &f);
	assert_false(f.has_timeout_seconds);
	assert_true(f.has_network);
	assert_false(f.network);
	assert_false(f.has_cpus);
	assert_true(f.has_memory_mb);
	assert_int_equal(f.memory_mb, 16);
	/* pydantic's lax coercions. */
	fork_ok(JSON, "{\"timeout_seconds\": \"30\", \"network\": \"yes\", "
	    "\"cpus\": \"2\"}", &f);
	assert_int_equal(f.timeout_seconds, 30);
	assert_true(f.network);
	assert_true(f.cpus == 2.0);
}

static void
test_fork_422(void **state)
{
	fork_422("{\"timeout_seconds\": 0}",
	    "{\"detail\":[{\"type\":\"greater_than_equal\",\"loc\":[\"body\","
	    "\"timeout_seconds\"],\"msg\":\"Input should be greater than or "
	    "equal to 1\",\"input\":0,\"ctx\":{\"ge\":1}}]}");
	fork_422("{\"timeout_seconds\": 1.5}",
	    "{\"detail\":[{\"type\":\"int_from_float\",\"loc\":[\"body\","
	    "\"timeout_seconds\"],\"msg\":\"Input should be a valid integer, "
	    "got a number with a fractional part\",\"input\":1.5}]}");
	fork_422("{\"network\": []}",
	    "{\"detail\":[{\"type\":\"bool_type\",\"loc\":[\"body\","
	    "\"network\"],\"msg\":\"Input should be a valid boolean\","
	    "\"input\":[]}]}");
	fork_422("{\"network\": 2}",
	    "{\"detail\":[{\"type\":\"bool_parsing\",\"loc\":[\"body\","
	    "\"network\"],\"msg\":\"Input should be a valid boolean, unable "
	    "to interpret input\",\"input\":2}]}");
	fork_422("{\"cpus\": 0}",
	    "{\"detail\":[{\"type\":\"greater_than\",\"loc\":[\"body\","
	    "\"cpus\"],\"msg\":\"Input should be greater than 0\","
	    "\"input\":0,\"ctx\":{\"gt\":0.0}}]}");
	fork_422("{\"cpus\": \"x\"}",
	    "{\"detail\":[{\"type\":\"float_parsing\",\"loc\":[\"body\","
	    "\"cpus\"],\"msg\":\"Input should be a valid number, unable to "
	    "parse string as a number\",\"input\":\"x\"}]}");
	fork_422("{\"memory_mb\": 15}",
	    "{\"detail\":[{\"type\":\"greater_than_equal\",\"loc\":[\"body\","
	    "\"memory_mb\"],\"msg\":\"Input should be greater than or equal "
	    "to 16\",\"input\":15,\"ctx\":{\"ge\":16}}]}");
	fork_422("{\"memory_mb\": {}}",
	    "{\"detail\":[{\"type\":\"int_type\",\"loc\":[\"body\","
	    "\"memory_mb\"],\"msg\":\"Input should be a valid integer\","
	    "\"input\":{}}]}");
	fork_422("{\"image\": \"x\", \"cpus\": -1, \"env\": {}}",
	    "{\"detail\":[{\"type\":\"greater_than\",\"loc\":[\"body\","
	    "\"cpus\"],\"msg\":\"Input should be greater than 0\","
	    "\"input\":-1,\"ctx\":{\"gt\":0.0}}," EXTRA("image", "\"x\"") ","
	    EXTRA("env", "{}") "]}");
	fork_422("7", NOT_OBJECT("7"));
	fork_422("{", "{\"detail\":[{\"type\":\"json_invalid\",\"loc\":"
	    "[\"body\",1],\"msg\":\"JSON decode error\",\"input\":{},\"ctx\":"
	    "{\"error\":\"Expecting property name enclosed in double quotes\""
	    "}}]}");
}

/* §3.4: six keys in order, name always present, §3.2 timestamps. */
static void
test_snapshot_json(void **state)
{
	char			 id[] = "snap_0123456789abcdef";
	char			 sb[] = "sb_4f1c2a9e0b7d6c31";
	char			 name[] = "before";
	char			 image[] = "agent-sandbox/busybox:test";
	struct snapshot_info	 si = { id, sb, name, image, 10240,
	    1700000000.5 };
	json_object		*o;
	char			*s;

	o = snapshot_info_json(&si);
	s = to_text(o);
	assert_string_equal(s, "{\"id\":\"snap_0123456789abcdef\","
	    "\"sandbox_id\":\"sb_4f1c2a9e0b7d6c31\",\"name\":\"before\","
	    "\"image\":\"agent-sandbox/busybox:test\",\"size_bytes\":10240,"
	    "\"created_at\":\"2023-11-14T22:13:20.500000Z\"}");
	free(s);
	json_object_put(o);
	si.name = NULL;
	si.size_bytes = UINT64_C(9007199254740993);
	si.created_at = 1700000000.0;
	o = snapshot_info_json(&si);
	s = to_text(o);
	assert_string_equal(s, "{\"id\":\"snap_0123456789abcdef\","
	    "\"sandbox_id\":\"sb_4f1c2a9e0b7d6c31\",\"name\":null,"
	    "\"image\":\"agent-sandbox/busybox:test\","
	    "\"size_bytes\":9007199254740993,"
	    "\"created_at\":\"2023-11-14T22:13:20Z\"}");
	free(s);
	json_object_put(o);
}

static void
test_id_plausible(void **state)
{
	char	*s;

	assert_true(snapshot_id_plausible("snap_0123456789abcdef"));
	assert_true(snapshot_id_plausible("nope"));
	assert_false(snapshot_id_plausible(""));
	assert_false(snapshot_id_plausible("a/b"));
	assert_false(snapshot_id_plausible("snap\n"));
	assert_false(snapshot_id_plausible("snap\x7f"));
	s = repeat("a", MSG_MAX_ID, 0);
	assert_true(snapshot_id_plausible(s));
	free(s);
	s = repeat("a", MSG_MAX_ID + 1, 0);
	assert_false(snapshot_id_plausible(s));
	free(s);
}

static void
filter_is(const char *query, int rc, const char *want)
{
	char	*v;

	assert_int_equal(snapshot_list_filter(query, &v), rc);
	if (want == NULL)
		assert_null(v);
	else
		assert_string_equal(v, want);
	free(v);
}

static void
test_list_filter(void **state)
{
	filter_is(NULL, 0, NULL);
	filter_is("", 0, NULL);
	filter_is("other=1", 0, NULL);
	filter_is("sandbox_id=sb_1", 1, "sb_1");
	filter_is("sandbox_id=", 1, "");
	filter_is("sandbox_id", 1, "");
	filter_is("a=1&&sandbox_id=sb_1&b", 1, "sb_1");
	filter_is("sandbox_id=sb_1&sandbox_id=sb_2", 1, "sb_2");
	filter_is("sandbox%5Fid=a+b%20c", 1, "a b c");
	filter_is("sandbox_id=a%00b", 1, "");
	filter_is("sandbox_id=%zz", 1, "%zz");
}

/* The routes, against the stand-ins. */

static struct http_request *
request(const char *body, const char *ctype)
{
	struct http_request	*req;
	char			 head[256];

	snprintf(head, sizeof(head), "POST /v1/x HTTP/1.1\nHost: x\n%s%s%s",
	    ctype != NULL ? "Content-Type: " : "", ctype != NULL ? ctype : "",
	    ctype != NULL ? "\n" : "");
	req = fixture_request(head, body);
	memset(&sent, 0, sizeof(sent));
	sent.fd = -1;
	memset(&job, 0, sizeof(job));
	return req;
}

/* What apid_request_send got, as the message managerd would read. */
static struct imsg
sent_imsg(void)
{
	struct imsg	 m;

	memset(&m, 0, sizeof(m));
	m.hdr.type = sent.type;
	m.hdr.peerid = 7;
	m.fd = -1;
	m.len = sent.w.len;
	m.data = sent.w.len ? sent.w.buf : NULL;
	return m;
}

static int
reply(uint32_t type, struct msgw *w, int fd)
{
	struct imsg	 m;

	memset(&m, 0, sizeof(m));
	m.hdr.type = type;
	m.hdr.peerid = 7;
	m.fd = fd;
	m.len = w != NULL ? w->len : 0;
	m.data = m.len ? w->buf : NULL;
	return sent.reply(&sent_ar, &m);
}

/* The same, its descriptor dropped by the kernel on the way in. */
static int
reply_lost(uint32_t type, struct msgw *w)
{
	struct imsg	 m;

	memset(&m, 0, sizeof(m));
	m.hdr.type = type;
	m.hdr.peerid = 7;
	m.fd = -1;
	m.fd_lost = 1;
	m.len = w->len;
	m.data = w->buf;
	return sent.reply(&sent_ar, &m);
}

static int
reply_error(enum error_kind kind, const char *text)
{
	struct msgw	 w;

	msgw_init(&w);
	msgw_u32(&w, kind);
	msgw_str(&w, text);
	return reply(MSG_ERROR, &w, -1);
}

/* managerd's end of the channel apid reports SNAPSHOT_WRITTEN on. */
static struct imsgbuf	 parent_end;
static struct event_base *base;

static int
setup_channel(void **state)
{
	int	 sv[2];

	signal(SIGPIPE, SIG_IGN);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_non_null(base = event_base_new());
	peer_init(&apid->parent, base, sv[0], "managerd", NULL, NULL, NULL);
	imsgbuf_init(&parent_end, sv[1]);
	return 0;
}

static int
teardown_channel(void **state)
{
	peer_stop(&apid->parent);
	close(apid->parent.ibuf.sock);
	imsgbuf_clear(&parent_end);
	close(parent_end.sock);
	event_base_free(base);
	free(resp.text);
	resp.text = NULL;
	return 0;
}

static void
expect_written(int32_t errnum, uint64_t bytes)
{
	struct imsg		 m;
	struct tar_result	 r;

	assert_int_equal(imsgbuf_flush(&apid->parent.ibuf), 0);
	assert_true(imsgbuf_read(&parent_end) > 0);
	assert_int_equal(imsg_get(&parent_end, &m), 1);
	assert_int_equal(m.hdr.type, MSG_SNAPSHOT_WRITTEN);
	assert_int_equal(m.hdr.peerid, 7);
	assert_int_equal(msg_get_tar_result(&m, &r), 0);
	assert_int_equal(r.errnum, errnum);
	assert_int_equal(r.bytes, bytes);
	tar_result_free(&r);
	imsg_free(&m);
}

static void
info_msg(struct msgw *w)
{
	char			 id[] = "snap_0123456789abcdef";
	char			 sb[] = "sb_1", image[] = "img";
	struct snapshot_info	 si = { id, sb, NULL, image, 10240,
	    1700000000.0 };

	msgw_init(w);
	msg_put_snapshot_info(w, &si);
}

#define INFO_JSON \
	"{\"id\":\"snap_0123456789abcdef\",\"sandbox_id\":\"sb_1\"," \
	"\"name\":null,\"image\":\"img\",\"size_bytes\":10240," \
	"\"created_at\":\"2023-11-14T22:13:20Z\"}"

/* SNAPSHOT_CREATE, SINK, the job, WRITTEN, then SNAPSHOT_INFO: 201. */
static void
test_route_create(void **state)
{
	struct http_request	*req = request("{\"name\": \"n\"}", JSON);
	char			 sb[] = "sb_1", *params[] = { sb };
	struct snapshot_create	 sc;
	struct imsg		 m;
	struct msgw		 w;
	struct tar_result	 res = { 0, 10240, NULL };
	char			 c = 'x';
	int			 fd;

	route_snapshot_create(req, params);
	assert_int_equal(sent.called, 1);
	assert_int_equal(sent.type, MSG_SNAPSHOT_CREATE);
	m = sent_imsg();
	assert_int_equal(msg_get_snapshot_create(&m, &sc), 0);
	assert_string_equal(sc.sandbox_id, "sb_1");
	assert_string_equal(sc.name, "n");
	snapshot_create_free(&sc);
	assert_int_not_equal(sent.fd, -1);

	msgw_init(&w);
	msg_put_snapshot_sink(&w, 4096, 0);
	assert_int_not_equal(fd = open("/dev/null", O_WRONLY | O_CLOEXEC),
	    -1);
	assert_int_equal(reply(MSG_SNAPSHOT_SINK, &w, fd), APID_REPLY_MORE);
	assert_int_equal(job.called, 1);
	assert_int_equal(job.spec.kind, TAR_JOB_SNAPSHOT);
	assert_int_equal(job.spec.out_fd, fd);
	assert_int_equal(job.spec.max_bytes, 4096);
	/* The job reads what managerd's end of the pipe carries. */
	assert_int_equal(write(sent.fd, &c, 1), 1);
	c = 0;
	assert_int_equal(read(job.spec.in_fd, &c, 1), 1);
	assert_int_equal(c, 'x');
	close(sent.fd);
	close(job.spec.in_fd);
	close(job.spec.out_fd);
	assert_int_equal(resp.status, 0);

	job.spec.done(&res, job.spec.arg);
	expect_written(0, 10240);
	info_msg(&w);
	assert_int_equal(reply(MSG_SNAPSHOT_INFO, &w, -1), APID_REPLY_DONE);
	resp_expect(201, INFO_JSON);
	http_request_free(req);
}

/* apid's SNAPSHOT_RETRY: its reason and the new pipe's write end. */
static int
expect_retry(const char *why)
{
	struct imsg		 m;
	struct tar_result	 r;
	int			 fd;

	assert_int_equal(imsgbuf_flush(&apid->parent.ibuf), 0);
	assert_true(imsgbuf_read(&parent_end) > 0);
	assert_int_equal(imsg_get(&parent_end, &m), 1);
	assert_int_equal(m.hdr.type, MSG_SNAPSHOT_RETRY);
	assert_int_equal(m.hdr.peerid, 7);
	assert_int_not_equal(m.fd, -1);
	fd = imsg_take_fd(&m);
	assert_int_equal(msg_get_tar_result(&m, &r), 0);
	assert_int_equal(r.errnum, JOB_NEEDS_REWRITE);
	assert_string_equal(r.message, why);
	tar_result_free(&r);
	imsg_free(&m);
	return fd;
}

/*
 * A copy first; it stops at a member the rewrite would change, so apid
 * asks again with a new pipe, and the second sink's job is the rewrite
 * reading that pipe.
 */
static void
test_route_create_retry(void **state)
{
	struct http_request	*req = request("{}", JSON);
	char			 sb[] = "sb_1", *params[] = { sb };
	char			 why[] = "a FIFO: ./ff";
	struct tar_result	 stop = { JOB_NEEDS_REWRITE, 0, why };
	struct tar_result	 res = { 0, 10240, NULL };
	struct msgw		 w;
	char			 c = 'y';
	int			 fd, wfd;

	route_snapshot_create(req, params);
	close(sent.fd);
	msgw_init(&w);
	msg_put_snapshot_sink(&w, 4096, 1);
	assert_int_not_equal(fd = open("/dev/null", O_WRONLY | O_CLOEXEC),
	    -1);
	assert_int_equal(reply(MSG_SNAPSHOT_SINK, &w, fd), APID_REPLY_MORE);
	assert_int_equal(job.spec.kind, TAR_JOB_SNAPSHOT_COPY);
	close(job.spec.in_fd);
	close(job.spec.out_fd);
	job.spec.done(&stop, job.spec.arg);
	wfd = expect_retry(why);

	msgw_init(&w);
	msg_put_snapshot_sink(&w, 4096, 0);
	assert_int_not_equal(fd = open("/dev/null", O_WRONLY | O_CLOEXEC),
	    -1);
	assert_int_equal(reply(MSG_SNAPSHOT_SINK, &w, fd), APID_REPLY_MORE);
	assert_int_equal(job.called, 2);
	assert_int_equal(job.spec.kind, TAR_JOB_SNAPSHOT);
	assert_int_equal(write(wfd, &c, 1), 1);
	c = 0;
	assert_int_equal(read(job.spec.in_fd, &c, 1), 1);
	assert_int_equal(c, 'y');
	close(wfd);
	close(job.spec.in_fd);
	close(job.spec.out_fd);
	job.spec.done(&res, job.spec.arg);
	expect_written(0, 10240);
	info_msg(&w);
	assert_int_equal(reply(MSG_SNAPSHOT_INFO, &w, -1), APID_REPLY_DONE);
	resp_expect(201, INFO_JSON);
	http_request_free(req);
}

/* After a retry managerd may answer with an error instead of a sink. */
static void
test_route_create_retry_error(void **state)
{
	struct http_request	*req = request("{}", JSON);
	char			 sb[] = "sb_1", *params[] = { sb };
	char			 why[] = "extended attributes: ./x";
	struct tar_result	 stop = { JOB_NEEDS_REWRITE, 0, why };
	struct msgw		 w;
	int			 fd;

	route_snapshot_create(req, params);
	close(sent.fd);
	msgw_init(&w);
	msg_put_snapshot_sink(&w, 4096, 1);
	assert_int_not_equal(fd = open("/dev/null", O_WRONLY | O_CLOEXEC),
	    -1);
	assert_int_equal(reply(MSG_SNAPSHOT_SINK, &w, fd), APID_REPLY_MORE);
	close(job.spec.in_fd);
	close(job.spec.out_fd);
	job.spec.done(&stop, job.spec.arg);
	close(expect_retry(why));
	assert_int_equal(reply_error(ERR_UNAVAILABLE, "managerd is out of "
	    "descriptors"), APID_REPLY_DONE);
	resp_expect(503, "error: managerd is out of descriptors");
	http_request_free(req);
}

/* MSG_ERROR before the sink: the pipe is closed, the error answered. */
static void
test_route_create_error(void **state)
{
	struct http_request	*req = request(NULL, NULL);
	char			 sb[] = "sb_404", *params[] = { sb };
	char			 c = 'x';

	route_snapshot_create(req, params);
	assert_int_equal(sent.called, 1);
	assert_int_equal(reply_error(ERR_NOT_FOUND, "sandbox sb_404 not found"),
	    APID_REPLY_DONE);
	resp_expect(404, "error: sandbox sb_404 not found");
	assert_int_equal(job.called, 0);
	/* Nobody reads the pipe any more. */
	assert_int_equal(write(sent.fd, &c, 1), -1);
	assert_int_equal(errno, EPIPE);
	close(sent.fd);
	http_request_free(req);
}

/* A job that cannot start is reported at once; managerd answers. */
static void
test_route_create_job_fails(void **state)
{
	struct http_request	*req = request("{}", JSON);
	char			 sb[] = "sb_1", *params[] = { sb };
	struct msgw		 w;
	int			 fd;

	route_snapshot_create(req, params);
	job.fail = ENOSYS;
	msgw_init(&w);
	msg_put_snapshot_sink(&w, 4096, 0);
	assert_int_not_equal(fd = open("/dev/null", O_WRONLY | O_CLOEXEC),
	    -1);
	assert_int_equal(reply(MSG_SNAPSHOT_SINK, &w, fd), APID_REPLY_MORE);
	assert_int_equal(job.called, 1);
	expect_written(ENOSYS, 0);
	assert_int_equal(reply_error(ERR_INTERNAL, "snapshot failed"),
	    APID_REPLY_DONE);
	resp_expect(500, "error: snapshot failed");
	close(sent.fd);
	http_request_free(req);
}

/*
 * The snapshot file came without its descriptor (apid was out of them):
 * no job starts, managerd hears EMFILE and answers the client 503.
 */
static void
test_route_create_sink_lost(void **state)
{
	struct http_request	*req = request("{}", JSON);
	char			 sb[] = "sb_1", *params[] = { sb };
	struct msgw		 w;
	char			 c = 'x';

	route_snapshot_create(req, params);
	msgw_init(&w);
	msg_put_snapshot_sink(&w, 4096, 0);
	assert_int_equal(reply_lost(MSG_SNAPSHOT_SINK, &w), APID_REPLY_MORE);
	assert_int_equal(job.called, 0);
	expect_written(EMFILE, 0);
	/* The pipe's read end went with it: the proxy's writes fail. */
	assert_int_equal(write(sent.fd, &c, 1), -1);
	assert_int_equal(errno, EPIPE);
	assert_int_equal(reply_error(ERR_UNAVAILABLE, "apid is out of "
	    "descriptors"), APID_REPLY_DONE);
	resp_expect(503, "error: apid is out of descriptors");
	close(sent.fd);
	http_request_free(req);
}

/* Checks apid makes before anything is sent. */
static void
test_route_create_local(void **state)
{
	struct http_request	*req = request("{\"name\": 1}", JSON);
	char			 sb[] = "sb_1", *params[] = { sb };
	char			*longid = repeat("s", MSG_MAX_ID + 1, 0);
	char			*want;

	route_snapshot_create(req, params);
	assert_int_equal(sent.called, 0);
	assert_int_equal(resp.status, 422);
	resp_set(0, NULL);
	http_request_free(req);

	req = request(NULL, NULL);
	params[0] = longid;
	route_snapshot_create(req, params);
	assert_int_equal(sent.called, 0);
	assert_int_not_equal(asprintf(&want, "error: sandbox %s not found",
	    longid), -1);
	resp_expect(404, want);
	free(want);
	free(longid);
	http_request_free(req);
}

static void
test_route_rollback(void **state)
{
	struct http_request	*req;
	char			 sb[] = "sb_1", *params[] = { sb };
	struct rollback_request	 rq;
	struct imsg		 m;

	req = request("{\"snapshot_id\": \"snap_0123456789abcdef\"}", JSON);
	route_sandbox_rollback(req, params);
	assert_int_equal(sent.type, MSG_SANDBOX_ROLLBACK);
	m = sent_imsg();
	assert_int_equal(msg_get_rollback_request(&m, &rq), 0);
	assert_string_equal(rq.sandbox_id, "sb_1");
	assert_string_equal(rq.snapshot_id, "snap_0123456789abcdef");
	rollback_request_free(&rq);
	assert_int_equal(reply_error(ERR_NOT_FOUND, "snapshot x not found"),
	    APID_REPLY_DONE);
	resp_expect(404, "error: snapshot x not found");
	http_request_free(req);

	/* The snapshot is checked before the sandbox. */
	req = request("{\"snapshot_id\": \"a/b\"}", JSON);
	params[0] = repeat("s", MSG_MAX_ID + 1, 0);
	route_sandbox_rollback(req, params);
	assert_int_equal(sent.called, 0);
	resp_expect(404, "error: snapshot a/b not found");
	free(params[0]);
	http_request_free(req);

	req = request(NULL, JSON);
	params[0] = sb;
	route_sandbox_rollback(req, params);
	assert_int_equal(sent.called, 0);
	resp_expect(422, MISSING_BODY);
	http_request_free(req);
}

static void
test_route_fork(void **state)
{
	struct http_request	*req;
	char			 bad[] = "bad\001id";
	char			 snap[] = "snap_0123456789abcdef";
	char			*params[] = { snap };
	struct fork_request	 fr;
	struct imsg		 m;

	req = request("{\"memory_mb\": 64}", JSON);
	route_snapshot_fork(req, params);
	assert_int_equal(sent.type, MSG_SNAPSHOT_FORK);
	m = sent_imsg();
	assert_int_equal(msg_get_fork_request(&m, &fr), 0);
	assert_string_equal(fr.snapshot_id, "snap_0123456789abcdef");
	assert_true(fr.has_memory_mb);
	assert_int_equal(fr.memory_mb, 64);
	assert_false(fr.has_cpus || fr.has_network || fr.has_timeout_seconds);
	fork_request_free(&fr);
	assert_int_equal(reply_error(ERR_LIMIT_EXCEEDED, "quota"),
	    APID_REPLY_DONE);
	resp_expect(429, "error: quota");
	http_request_free(req);

	/* The body is validated before the id is looked at. */
	req = request("{\"cpus\": 0}", JSON);
	params[0] = bad;
	route_snapshot_fork(req, params);
	assert_int_equal(sent.called, 0);
	assert_int_equal(resp.status, 422);
	resp_set(0, NULL);
	http_request_free(req);

	req = request(NULL, NULL);
	route_snapshot_fork(req, params);
	assert_int_equal(sent.called, 0);
	resp_expect(404, "error: snapshot bad\001id not found");
	http_request_free(req);
}

static void
test_route_get_list(void **state)
{
	struct http_request	*req;
	char			 ctl[] = "x\037";
	char			 snap[] = "snap_0123456789abcdef";
	char			*params[] = { snap };
	struct imsg		 m;
	struct msgw		 w;
	char			*s;

	req = request(NULL, NULL);
	route_snapshot_get(req, params);
	assert_int_equal(sent.type, MSG_SNAPSHOT_GET);
	m = sent_imsg();
	assert_non_null(s = msg_get_string(&m, MSG_MAX_ID));
	assert_string_equal(s, "snap_0123456789abcdef");
	free(s);
	info_msg(&w);
	assert_int_equal(reply(MSG_SNAPSHOT_INFO, &w, -1), APID_REPLY_DONE);
	resp_expect(200, INFO_JSON);
	http_request_free(req);

	req = request(NULL, NULL);
	route_snapshot_list(req, params);
	assert_int_equal(sent.type, MSG_SNAPSHOT_LIST);
	m = sent_imsg();
	assert_int_equal(msg_get_snapshot_list(&m, &s), 0);
	assert_null(s);
	info_msg(&w);
	assert_int_equal(reply(MSG_SNAPSHOT_INFO, &w, -1), APID_REPLY_MORE);
	assert_int_equal(reply(MSG_SNAPSHOT_INFO, &w, -1), APID_REPLY_MORE);
	assert_int_equal(reply(MSG_SNAPSHOT_LIST_END, NULL, -1),
	    APID_REPLY_DONE);
	resp_expect(200, "{\"snapshots\":[" INFO_JSON "," INFO_JSON "]}");
	http_request_free(req);

	req = request(NULL, NULL);
	route_snapshot_list(req, params);
	assert_int_equal(reply(MSG_SNAPSHOT_LIST_END, NULL, -1),
	    APID_REPLY_DONE);
	resp_expect(200, "{\"snapshots\":[]}");
	http_request_free(req);

	req = request(NULL, NULL);
	params[0] = ctl;
	route_snapshot_delete(req, params);
	assert_int_equal(sent.called, 0);
	resp_expect(404, "error: snapshot x\037 not found");
	http_request_free(req);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_no_name),
		cmocka_unit_test(test_create_name),
		cmocka_unit_test(test_create_name_too_long),
		cmocka_unit_test(test_create_422),
		cmocka_unit_test(test_create_400),
		cmocka_unit_test(test_rollback),
		cmocka_unit_test(test_fork_defaults),
		cmocka_unit_test(test_fork_overrides),
		cmocka_unit_test(test_fork_422),
		cmocka_unit_test(test_snapshot_json),
		cmocka_unit_test(test_id_plausible),
		cmocka_unit_test(test_list_filter),
		cmocka_unit_test(test_route_create),
		cmocka_unit_test(test_route_create_retry),
		cmocka_unit_test(test_route_create_retry_error),
		cmocka_unit_test(test_route_create_error),
		cmocka_unit_test(test_route_create_job_fails),
		cmocka_unit_test(test_route_create_sink_lost),
		cmocka_unit_test(test_route_create_local),
		cmocka_unit_test(test_route_rollback),
		cmocka_unit_test(test_route_fork),
		cmocka_unit_test(test_route_get_list),
	};

	return cmocka_run_group_tests(tests, setup_channel, teardown_channel);
}
