/*
 * The exec body (API.md §4.7, §5.1), as the reference's model: the
 * command as a string or a list of strings, env, workdir and
 * timeout_seconds, validated with body.c's machinery.  Its command and
 * workdir are a process's too (body_process.c).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "apid.h"

/* str | list[str], pydantic's smart union: both members' errors. */
int
v_command(struct vctx *v, const struct jv *in)
{
	struct loc	 ls = { "command", "str", NULL, 0, -1 };
	struct loc	 ll = { "command", "list[str]", NULL, 0, -1 };
	size_t		 i;

	if (in->type == JV_STRING)
		return 0;
	if (in->type == JV_ARRAY) {
		for (i = 0; i < in->u.a.n; i++)
			if (in->u.a.items[i].type != JV_STRING)
				break;
		if (i == in->u.a.n)
			return 0;
	}
	add_error(v, "string_type", &ls, "Input should be a valid string", in,
	    NULL);
	if (in->type != JV_ARRAY)
		return add_error(v, "list_type", &ll,
		    "Input should be a valid list", in, NULL);
	for (i = 0; i < in->u.a.n; i++) {
		ll.idx = (long)i;
		v_string(v, &ll, &in->u.a.items[i]);
	}
	return -1;
}

static const char *const exec_fields[] = { "command", "env", "workdir",
    "timeout_seconds", NULL };

/*
 * The checked command into an argv: the bounds of the messages, no NULs.
 * On failure nothing is left to free.
 */
int
command_take(const struct jv *cmd, int *shell, size_t *argc, char ***argv,
    struct body_error *e)
{
	const struct jv	*items = cmd;
	size_t		 i, n = 1;

	*shell = cmd->type == JV_STRING;
	if (!*shell) {
		items = cmd->u.a.items;
		n = cmd->u.a.n;
	}
	if (n > MSG_MAX_ARGC)
		return set_error(e, 400, "invalid_request",
		    "command has more than %d arguments", MSG_MAX_ARGC);
	for (i = 0; i < n; i++) {
		if (has_nul(&items[i]))
			return set_error(e, 400, "invalid_request",
			    "command must not contain NUL characters");
		if (items[i].u.s.len > MSG_MAX_ARG)
			return set_error(e, 400, "invalid_request",
			    "command arguments are limited to %d bytes",
			    MSG_MAX_ARG);
	}
	if ((*argv = calloc(n + 1, sizeof(char *))) == NULL)
		return set_error(e, 500, "internal_error", "out of memory");
	for (*argc = 0; *argc < n; (*argc)++) {
		if (((*argv)[*argc] = strdup(items[*argc].u.s.s)) == NULL) {
			msg_free_argv(*argv);
			*argv = NULL;
			*argc = 0;
			return set_error(e, 500, "internal_error",
			    "out of memory");
		}
	}
	return 0;
}

/* A workdir the schema let through (or NULL) into *out. */
int
workdir_take(const struct jv *workdir, char **out, struct body_error *e)
{
	*out = NULL;
	if (workdir == NULL)
		return 0;
	if (has_nul(workdir))
		return set_error(e, 400, "invalid_request",
		    "path must be a non-empty string");
	if (workdir->u.s.len > MSG_MAX_PATH)
		return set_error(e, 400, "invalid_request",
		    "workdir is longer than %d bytes", MSG_MAX_PATH);
	if ((*out = strdup(workdir->u.s.s)) == NULL)
		return set_error(e, 500, "internal_error", "out of memory");
	return 0;
}

int
body_parse_exec(const char *ctype, const void *data, size_t len,
    struct exec_request *x, struct body_error *e)
{
	struct jv	 body;
	struct vctx	 v;
	struct loc	 l = { NULL, NULL, NULL, 0, -1 };
	const struct jv	*f, *cmd = NULL, *env = NULL, *workdir = NULL;
	int		 rc = -1;

	memset(x, 0, sizeof(*x));
	if (body_object(ctype, data, len, &body, e) == -1)
		return -1;
	v.errors = json_object_new_array();
	v.body = &body;
	if ((f = member(&body, "command")) == NULL)
		v_missing(&v, "command");
	else if (v_command(&v, f) == 0)
		cmd = f;
	if ((f = member(&body, "env")) != NULL && v_env(&v, f) == 0)
		env = f;
	if ((f = member(&body, "workdir")) != NULL && f->type != JV_NULL) {
		l.field = "workdir";
		if (v_string(&v, &l, f) == 0)
			workdir = f;
	}
	if ((f = member(&body, "timeout_seconds")) != NULL &&
	    f->type != JV_NULL) {
		l.field = "timeout_seconds";
		x->has_timeout = v_float_gt0(&v, &l, f,
		    &x->timeout_seconds) == 0;
	}
	v_extras(&v, &body, exec_fields);
	if (json_object_array_length(v.errors) > 0) {
		set_detail(e, v.errors);
		goto out;
	}
	json_object_put(v.errors);
	/* managerd's order: env, then workdir (API.md §4.7). */
	if (env_take(env, &x->env, e) == -1 ||
	    workdir_take(workdir, &x->workdir, e) == -1 ||
	    command_take(cmd, &x->shell, &x->argc, &x->argv, e) == -1)
		goto out;
	rc = 0;
out:
	if (rc == -1)
		exec_request_free(x);
	jv_free(&body);
	return rc;
}
