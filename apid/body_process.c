/*
 * The bodies of the process routes (docs/rest-api.md "Processes"):
 * starting one, a signal and a tty's new size, validated with body.c's
 * machinery the way the exec body is (body_exec.c, whose command, env
 * and workdir rules a process shares): every 422 entry in field order,
 * then unknown keys.
 *
 * Beyond the schema, with 400s: what cannot travel to managerd (NULs,
 * the message bounds) and a tty size without a tty, which no single
 * field's type can say.  What managerd knows better (an empty command,
 * a timeout above its maximum, a sandbox that is not running) is its
 * to refuse.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apid.h"

static const char *const process_fields[] = { "command", "env", "workdir",
    "timeout_seconds", "tty", "cols", "rows", "stdin", "client_id", NULL };

/* What the schema let through, for the checks after it. */
struct process_fields {
	const struct jv	*cmd, *env, *workdir, *client_id;
	int		 has_stdin, has_cols, has_rows;
};

static json_object *
ctx_int(const char *key, int64_t v)
{
	json_object	*c = json_object_new_object();

	json_object_object_add(c, key, json_object_new_int64(v));
	return c;
}

/* The member unless it was not sent or is null. */
static const struct jv *
given(const struct jv *obj, const char *name)
{
	const struct jv	*f;

	if ((f = member(obj, name)) == NULL || f->type == JV_NULL)
		return NULL;
	return f;
}

/* int, Field(ge=1, le=PROCESS_TTY_MAX): a tty's columns or rows. */
static int
v_tty_size(struct vctx *v, const char *field, const struct jv *in,
    uint32_t *out)
{
	struct loc	 l = { field, NULL, NULL, 0, -1 };
	int64_t		 n;
	char		 msg[64];

	if (v_int_ge(v, &l, in, 1, &n) == -1)
		return -1;
	if (n > PROCESS_TTY_MAX) {
		snprintf(msg, sizeof(msg), "Input should be less than or "
		    "equal to %d", PROCESS_TTY_MAX);
		return add_error(v, "less_than_equal", &l, msg, in,
		    ctx_int("le", PROCESS_TTY_MAX));
	}
	*out = (uint32_t)n;
	return 0;
}

/* str of 1 to PROCESS_CLIENT_ID_MAX bytes (the limit is the message's). */
static int
v_client_id(struct vctx *v, const struct jv *in)
{
	struct loc	 l = { "client_id", NULL, NULL, 0, -1 };
	char		 msg[64];

	if (v_string(v, &l, in) == -1)
		return -1;
	if (in->u.s.len == 0)
		return add_error(v, "string_too_short", &l,
		    "String should have at least 1 character", in,
		    ctx_int("min_length", 1));
	if (in->u.s.len <= PROCESS_CLIENT_ID_MAX)
		return 0;
	snprintf(msg, sizeof(msg), "String should have at most %d bytes",
	    PROCESS_CLIENT_ID_MAX);
	return add_error(v, "string_too_long", &l, msg, in,
	    ctx_int("max_length", PROCESS_CLIENT_ID_MAX));
}

/* command, env, workdir, timeout_seconds: as exec's model has them. */
static void
process_schema_exec(struct vctx *v, const struct jv *body,
    struct process_request *p, struct process_fields *pf)
{
	struct loc	 l = { NULL, NULL, NULL, 0, -1 };
	const struct jv	*f;

	if ((f = member(body, "command")) == NULL)
		v_missing(v, "command");
	else if (v_command(v, f) == 0)
		pf->cmd = f;
	if ((f = member(body, "env")) != NULL && v_env(v, f) == 0)
		pf->env = f;
	if ((f = given(body, "workdir")) != NULL) {
		l.field = "workdir";
		if (v_string(v, &l, f) == 0)
			pf->workdir = f;
	}
	if ((f = given(body, "timeout_seconds")) != NULL) {
		l.field = "timeout_seconds";
		p->has_timeout = v_float_gt0(v, &l, f,
		    &p->timeout_seconds) == 0;
	}
}

/* tty, cols, rows, stdin, client_id. */
static void
process_schema_tty(struct vctx *v, const struct jv *body,
    struct process_request *p, struct process_fields *pf)
{
	struct loc	 l = { NULL, NULL, NULL, 0, -1 };
	const struct jv	*f;

	if ((f = member(body, "tty")) != NULL) {
		l.field = "tty";
		(void)v_bool(v, &l, f, &p->tty);
	}
	if ((f = given(body, "cols")) != NULL)
		pf->has_cols = v_tty_size(v, "cols", f, &p->cols) == 0;
	if ((f = given(body, "rows")) != NULL)
		pf->has_rows = v_tty_size(v, "rows", f, &p->rows) == 0;
	if ((f = member(body, "stdin")) != NULL) {
		l.field = "stdin";
		pf->has_stdin = v_bool(v, &l, f, &p->stdin_open) == 0;
	}
	if ((f = given(body, "client_id")) != NULL && v_client_id(v, f) == 0)
		pf->client_id = f;
}

/* After the schema: what the messages cannot carry, then the copies. */
static int
process_take(struct process_request *p, const struct process_fields *pf,
    struct body_error *e)
{
	if ((pf->has_cols || pf->has_rows) && !p->tty)
		return set_error(e, 400, "invalid_request",
		    "cols and rows are only for a process with a tty");
	if (env_take(pf->env, &p->env, e) == -1 ||
	    workdir_take(pf->workdir, &p->workdir, e) == -1 ||
	    command_take(pf->cmd, &p->shell, &p->argc, &p->argv, e) == -1)
		return -1;
	if (!pf->has_stdin)
		p->stdin_open = p->tty;
	if (pf->client_id == NULL)
		return 0;
	if (has_nul(pf->client_id))
		return set_error(e, 400, "invalid_request",
		    "client_id must not contain NUL characters");
	if ((p->client_id = strdup(pf->client_id->u.s.s)) == NULL)
		return set_error(e, 500, "internal_error", "out of memory");
	return 0;
}

int
body_parse_process(const char *ctype, const void *data, size_t len,
    struct process_request *p, struct body_error *e)
{
	struct process_fields	 pf;
	struct jv		 body;
	struct vctx		 v;
	int			 rc = -1;

	memset(p, 0, sizeof(*p));
	memset(&pf, 0, sizeof(pf));
	if (body_object(ctype, data, len, &body, e) == -1)
		return -1;
	v.errors = json_object_new_array();
	v.body = &body;
	process_schema_exec(&v, &body, p, &pf);
	process_schema_tty(&v, &body, p, &pf);
	v_extras(&v, &body, process_fields);
	if (json_object_array_length(v.errors) > 0)
		set_detail(e, v.errors);
	else {
		json_object_put(v.errors);
		rc = process_take(p, &pf, e);
	}
	if (rc == -1)
		process_request_free(p);
	jv_free(&body);
	return rc;
}

static const char *const signal_fields[] = { "signal", NULL };
#define SIGNAL_NAMES	"'TERM', 'INT', 'KILL' or 'HUP'"

/* {"signal": Literal["TERM", "INT", "KILL", "HUP"] = "TERM"} */
int
body_parse_signal(const char *ctype, const void *data, size_t len,
    uint32_t *signo, struct body_error *e)
{
	struct loc	 l = { "signal", NULL, NULL, 0, -1 };
	struct jv	 body;
	struct vctx	 v;
	const struct jv	*f;
	json_object	*ctx;
	int		 rc;

	*signo = (uint32_t)process_signal_number("TERM");
	if ((rc = body_optional(ctype, data, len, &body, e)) != 0)
		return rc == 1 ? 0 : -1;
	v.errors = json_object_new_array();
	v.body = &body;
	if ((f = member(&body, "signal")) != NULL) {
		*signo = f->type == JV_STRING && !has_nul(f) ?
		    (uint32_t)process_signal_number(f->u.s.s) : 0;
		if (*signo == 0) {
			ctx = json_object_new_object();
			json_object_object_add(ctx, "expected",
			    json_object_new_string(SIGNAL_NAMES));
			add_error(&v, "literal_error", &l,
			    "Input should be " SIGNAL_NAMES, f, ctx);
		}
	}
	v_extras(&v, &body, signal_fields);
	rc = 0;
	if (json_object_array_length(v.errors) > 0)
		rc = set_detail(e, v.errors);
	else
		json_object_put(v.errors);
	jv_free(&body);
	return rc;
}

static const char *const resize_fields[] = { "cols", "rows", NULL };

/* {"cols": int, "rows": int}, both required, each 1..PROCESS_TTY_MAX. */
int
body_parse_resize(const char *ctype, const void *data, size_t len,
    uint32_t *cols, uint32_t *rows, struct body_error *e)
{
	struct jv	 body;
	struct vctx	 v;
	const struct jv	*f;
	int		 rc = 0;

	*cols = *rows = 0;
	if (body_object(ctype, data, len, &body, e) == -1)
		return -1;
	v.errors = json_object_new_array();
	v.body = &body;
	if ((f = member(&body, "cols")) == NULL)
		v_missing(&v, "cols");
	else
		(void)v_tty_size(&v, "cols", f, cols);
	if ((f = member(&body, "rows")) == NULL)
		v_missing(&v, "rows");
	else
		(void)v_tty_size(&v, "rows", f, rows);
	v_extras(&v, &body, resize_fields);
	if (json_object_array_length(v.errors) > 0)
		rc = set_detail(e, v.errors);
	else
		json_object_put(v.errors);
	jv_free(&body);
	return rc;
}
