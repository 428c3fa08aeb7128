/*
 * The route bodies (apid/body*.c) with any Content-Type and any bytes.
 * Input: one byte choosing the route and whether a Content-Type is sent,
 * then the Content-Type up to a newline, then the body.
 *
 * An error must be one apid can answer: a known status with its message,
 * or a 422 whose {"detail": [...]} entries are what FastAPI writes, and
 * valid UTF-8 JSON.  A success must be within the bounds the messages
 * carry, and what apid would send managerd must decode there (managerd
 * treats a message it cannot decode as a lying peer) and encode to the
 * same bytes again.  A policy object ("network" of create and fork,
 * PUT .../network's body) must be the compact JSON object managerd can
 * parse, and apid's own form of itself.
 */
#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>

#include "apid.h"
#include "harness.h"

#define SANDBOX_ID	"sb_0123456789abcdef"
#define SNAPSHOT_ID	"snap_0123456789abcdef"

static void
check_error(const struct body_error *e)
{
	json_object	*list, *entry, *v;
	const char	*text;
	size_t		 i;

	if (e->status != 422) {
		CHECK(e->status == 400 || e->status == 404 ||
		    e->status == 413 || e->status == 500);
		CHECK(e->code != NULL && e->message != NULL);
		CHECK(e->detail == NULL);
		return;
	}
	CHECK(e->detail != NULL && e->message == NULL);
	CHECK(json_object_object_get_ex(e->detail, "detail", &list));
	CHECK(json_object_is_type(list, json_type_array));
	CHECK(json_object_array_length(list) > 0);
	for (i = 0; i < json_object_array_length(list); i++) {
		entry = json_object_array_get_idx(list, i);
		CHECK(json_object_object_get_ex(entry, "type", &v) &&
		    json_object_is_type(v, json_type_string));
		CHECK(json_object_object_get_ex(entry, "msg", &v) &&
		    json_object_is_type(v, json_type_string));
		CHECK(json_object_object_get_ex(entry, "loc", &v) &&
		    json_object_is_type(v, json_type_array));
		CHECK(strcmp(json_object_get_string(
		    json_object_array_get_idx(v, 0)), "body") == 0);
		CHECK(json_object_object_get_ex(entry, "input", &v));
	}
	text = json_object_to_json_string_ext(e->detail, JSON_C_TO_STRING_PLAIN);
	CHECK(text != NULL && utf8_valid(text, strlen(text)));
}

/* Encoded, decoded by the receiver's codec, encoded again: same bytes. */
#define ROUND_TRIP(put, get, freefn, type, val) do {			\
	struct msgw	 w1, w2;					\
	struct imsg	 im;						\
	type		 back;						\
									\
	msgw_init(&w1);							\
	put(&w1, (val));						\
	if (w1.overflow)	/* answered "too large to forward" */	\
		break;							\
	memset(&im, 0, sizeof(im));					\
	im.fd = -1;							\
	im.data = w1.buf;						\
	im.len = w1.len;						\
	CHECK(get(&im, &back) == 0);					\
	msgw_init(&w2);							\
	put(&w2, &back);						\
	CHECK(!w2.overflow && w2.len == w1.len &&			\
	    memcmp(w1.buf, w2.buf, w1.len) == 0);			\
	freefn(&back);							\
} while (0)

static void
check_env(const struct env_list *env)
{
	size_t	 i;

	CHECK(env->count <= MSG_MAX_ENV);
	for (i = 0; i < env->count; i++) {
		CHECK(strlen(env->keys[i]) <= MSG_MAX_ENV_KEY);
		CHECK(strlen(env->values[i]) <= MSG_MAX_ENV_VALUE);
	}
}

/*
 * A policy's text as managerd gets it: within the bound, UTF-8, one
 * JSON object for json-c (managerd's parser), and what apid would send
 * again were the text itself the body (its own compact form).
 */
static void
check_policy(const char *text)
{
	struct body_error	 e;
	json_tokener		*tok;
	json_object		*o;
	char			*again;
	size_t			 len;

	if (text == NULL)
		return;
	len = strlen(text);
	CHECK(len <= EGRESS_POLICY_TEXT_MAX && utf8_valid(text, len));
	CHECK((tok = json_tokener_new()) != NULL);
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	o = json_tokener_parse_ex(tok, text, (int)len);
	CHECK(json_tokener_get_error(tok) == json_tokener_success &&
	    json_tokener_get_parse_end(tok) == len &&
	    json_object_is_type(o, json_type_object));
	json_object_put(o);
	json_tokener_free(tok);
	memset(&e, 0, sizeof(e));
	CHECK(body_parse_network("application/json", text, len, &again,
	    &e) == 0);
	CHECK(strcmp(again, text) == 0);
	free(again);
}

static int
body_create(const char *ctype, const void *body, size_t len,
    struct body_error *e)
{
	struct create_request	 c;

	if (body_parse_create(ctype, body, len, &c, e) == -1)
		return -1;
	CHECK(c.network_policy == NULL || c.network == 0);
	check_policy(c.network_policy);
	CHECK(c.image == NULL || strlen(c.image) <= MSG_MAX_IMAGE);
	CHECK(!c.has_cpus || c.cpus > 0);
	CHECK(!c.has_memory_mb || c.memory_mb >= 16);
	CHECK(!c.has_pids_limit || c.pids_limit >= 8);
	CHECK(!c.has_timeout_seconds || c.timeout_seconds >= 1);
	check_env(&c.env);
	CHECK(labels_check(&c.labels) == 0);
	ROUND_TRIP(msg_put_create_request, msg_get_create_request,
	    create_request_free, struct create_request, &c);
	create_request_free(&c);
	return 0;
}

static int
body_exec(const char *ctype, const void *body, size_t len,
    struct body_error *e)
{
	struct exec_request	 x;
	size_t			 i;

	if (body_parse_exec(ctype, body, len, &x, e) == -1)
		return -1;
	CHECK(x.argc >= 1 || !x.shell);
	CHECK(!x.shell || x.argc == 1);
	CHECK(x.argc <= MSG_MAX_ARGC && x.argv[x.argc] == NULL);
	for (i = 0; i < x.argc; i++)
		CHECK(strlen(x.argv[i]) <= MSG_MAX_ARG);
	CHECK(x.workdir == NULL || strlen(x.workdir) <= MSG_MAX_PATH);
	CHECK(!x.has_timeout || x.timeout_seconds > 0);
	check_env(&x.env);
	/* The route adds the id from the path. */
	CHECK((x.sandbox_id = strdup(SANDBOX_ID)) != NULL);
	ROUND_TRIP(msg_put_exec_request, msg_get_exec_request,
	    exec_request_free, struct exec_request, &x);
	exec_request_free(&x);
	return 0;
}

static int
body_timeout(const char *ctype, const void *body, size_t len,
    struct body_error *e)
{
	int64_t	 seconds;

	if (body_parse_timeout(ctype, body, len, &seconds, e) == -1)
		return -1;
	CHECK(seconds >= 1);
	return 0;
}

static int
body_snapshot(const char *ctype, const void *body, size_t len,
    struct body_error *e)
{
	struct snapshot_create	 s;

	if (body_parse_snapshot_create(ctype, body, len, &s.name, e) == -1)
		return -1;
	s.sandbox_id = strdup(SANDBOX_ID);
	CHECK(s.sandbox_id != NULL);
	ROUND_TRIP(msg_put_snapshot_create, msg_get_snapshot_create,
	    snapshot_create_free, struct snapshot_create, &s);
	snapshot_create_free(&s);
	return 0;
}

static int
body_rollback(const char *ctype, const void *body, size_t len,
    struct body_error *e)
{
	struct rollback_request	 q;

	if (body_parse_rollback(ctype, body, len, &q.snapshot_id, e) == -1)
		return -1;
	CHECK(q.snapshot_id != NULL);
	q.sandbox_id = strdup(SANDBOX_ID);
	CHECK(q.sandbox_id != NULL);
	/* The route answers 404 itself for an id that cannot be one. */
	if (strlen(q.snapshot_id) <= MSG_MAX_ID)
		ROUND_TRIP(msg_put_rollback_request, msg_get_rollback_request,
		    rollback_request_free, struct rollback_request, &q);
	rollback_request_free(&q);
	return 0;
}

static int
body_fork(const char *ctype, const void *body, size_t len,
    struct body_error *e)
{
	struct fork_request	 f;

	if (body_parse_fork(ctype, body, len, &f, e) == -1)
		return -1;
	CHECK(!f.has_timeout_seconds || f.timeout_seconds >= 1);
	CHECK(!f.has_cpus || f.cpus > 0);
	CHECK(!f.has_memory_mb || f.memory_mb >= 16);
	CHECK(labels_check(&f.labels) == 0);
	CHECK(f.network_policy == NULL || (f.has_network && !f.network));
	check_policy(f.network_policy);
	CHECK((f.snapshot_id = strdup(SNAPSHOT_ID)) != NULL);
	ROUND_TRIP(msg_put_fork_request, msg_get_fork_request,
	    fork_request_free, struct fork_request, &f);
	fork_request_free(&f);
	return 0;
}

static int
body_process(const char *ctype, const void *body, size_t len,
    struct body_error *e)
{
	struct process_request	 p;
	size_t			 i;

	if (body_parse_process(ctype, body, len, &p, e) == -1)
		return -1;
	CHECK(!p.shell || p.argc == 1);
	CHECK(p.argc <= MSG_MAX_ARGC && p.argv[p.argc] == NULL);
	for (i = 0; i < p.argc; i++)
		CHECK(strlen(p.argv[i]) <= MSG_MAX_ARG);
	CHECK(p.workdir == NULL || strlen(p.workdir) <= MSG_MAX_PATH);
	CHECK(!p.has_timeout || p.timeout_seconds > 0);
	CHECK(p.cols <= PROCESS_TTY_MAX && p.rows <= PROCESS_TTY_MAX);
	CHECK(p.tty || (p.cols == 0 && p.rows == 0));
	CHECK(p.client_id == NULL || (*p.client_id != '\0' &&
	    strlen(p.client_id) <= PROCESS_CLIENT_ID_MAX));
	check_env(&p.env);
	CHECK((p.sandbox_id = strdup(SANDBOX_ID)) != NULL);
	ROUND_TRIP(msg_put_process_request, msg_get_process_request,
	    process_request_free, struct process_request, &p);
	process_request_free(&p);
	return 0;
}

static int
body_signal(const char *ctype, const void *body, size_t len,
    struct body_error *e)
{
	uint32_t	 signo;

	if (body_parse_signal(ctype, body, len, &signo, e) == -1)
		return -1;
	CHECK(process_signal_name((int)signo) != NULL);
	return 0;
}

static int
body_resize(const char *ctype, const void *body, size_t len,
    struct body_error *e)
{
	uint32_t	 cols, rows;

	if (body_parse_resize(ctype, body, len, &cols, &rows, e) == -1)
		return -1;
	CHECK(cols >= 1 && cols <= PROCESS_TTY_MAX);
	CHECK(rows >= 1 && rows <= PROCESS_TTY_MAX);
	return 0;
}

/* PATCH: changes within the bounds, a key set or removed, never both. */
static int
body_patch(const char *ctype, const void *body, size_t len,
    struct body_error *e)
{
	struct label_patch	 p;
	size_t			 i;

	if (body_parse_patch(ctype, body, len, &p, e) == -1)
		return -1;
	CHECK(labels_check(&p.set) == 0);
	CHECK(p.nremove <= LABELS_MAX);
	CHECK(!p.clear || (p.set.count == 0 && p.nremove == 0));
	for (i = 0; i < p.nremove; i++) {
		CHECK(label_key_valid(p.remove[i], strlen(p.remove[i])));
		CHECK(labels_get(&p.set, p.remove[i]) == NULL);
	}
	CHECK((p.id = strdup(SANDBOX_ID)) != NULL);
	ROUND_TRIP(msg_put_label_patch, msg_get_label_patch,
	    label_patch_free, struct label_patch, &p);
	label_patch_free(&p);
	return 0;
}

/* PUT .../network: the policy, and the NETWORK_PUT that carries it. */
static int
body_network(const char *ctype, const void *body, size_t len,
    struct body_error *e)
{
	struct msgw	 w;
	struct msgr	 r;
	struct imsg	 im;
	char		*policy, *id, *back;

	if (body_parse_network(ctype, body, len, &policy, e) == -1)
		return -1;
	CHECK(policy != NULL);
	check_policy(policy);
	msgw_init(&w);
	msgw_str(&w, SANDBOX_ID);
	msgw_str(&w, policy);
	CHECK(!w.overflow);
	memset(&im, 0, sizeof(im));
	im.fd = -1;
	im.data = w.buf;
	im.len = w.len;
	msgr_init(&r, &im);
	id = msgr_str(&r, MSG_MAX_ID);
	back = msgr_str(&r, EGRESS_POLICY_TEXT_MAX);
	CHECK(msgr_end(&r) == 0 && id != NULL && back != NULL);
	CHECK(strcmp(back, policy) == 0);
	free(id);
	free(back);
	free(policy);
	return 0;
}

static int (*const bodies[])(const char *, const void *, size_t,
    struct body_error *) = {
	body_create, body_exec, body_timeout, body_snapshot,
	body_rollback, body_fork, body_process, body_signal, body_resize,
	body_patch, body_network
};
#define NBODIES	(sizeof(bodies) / sizeof(bodies[0]))

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct body_error	 e;
	const uint8_t		*nl;
	char			*ctype = NULL;
	unsigned int		 sel;

	if (len == 0)
		return 0;
	sel = data[0];
	data++;
	len--;
	/* A Content-Type is a C string: the request keeps it NUL-ended. */
	if (sel & 0x80 && (nl = memchr(data, '\n', len)) != NULL) {
		CHECK((ctype = strndup((const char *)data,
		    (size_t)(nl - data))) != NULL);
		len -= (size_t)(nl - data) + 1;
		data = nl + 1;
	}
	memset(&e, 0, sizeof(e));
	if (bodies[(sel & 0x7f) % NBODIES](ctype, data, len, &e) == -1)
		check_error(&e);
	else
		CHECK(e.status == 0 && e.detail == NULL && e.message == NULL);
	body_error_free(&e);
	free(ctype);
	return 0;
}
