/*
 * The process routes (docs/rest-api.md "Processes") for the CLI and
 * agent-sandbox-mcp: one request per call as everywhere in the client,
 * each answer checked for the shape its callers rely on (a Process has
 * a process ID), and the output's NDJSON read event by event, every
 * event checked on its own and against those before it, with a wait of
 * its own for a follow.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ids.h"
#include "process_msg.h"
#include "rest.h"
#include "rest_internal.h"
#include "websocket.h"

#define MAX_SIGNAL_NAME	8	/* "SIGTERM" and its NUL */

static void
nomem(struct rest_error *err)
{
	seterr(err, 0, "connection_error", "%s", strerror(ENOMEM));
}

char *
rest_process_path(const char *sandbox, const char *process,
    const char *suffix)
{
	char	*sb, *pr = NULL, *path = NULL;

	if ((sb = rest_escape(sandbox)) == NULL)
		return NULL;
	if (process != NULL && (pr = rest_escape(process)) == NULL)
		goto out;
	if (asprintf(&path, "/v1/sandboxes/%s/processes%s%s%s", sb,
	    pr != NULL ? "/" : "", pr != NULL ? pr : "", suffix) == -1)
		path = NULL;
out:
	free(sb);
	free(pr);
	return path;
}

/*
 * rest_json on path, which it frees, and body, which it puts: the
 * status, or -1.
 */
static int
process_call(struct rest_client *rc, const char *method, char *path,
    json_object *body, json_object **out, struct rest_error *err)
{
	int	 r;

	*out = NULL;
	if (path == NULL) {
		json_object_put(body);
		nomem(err);
		return -1;
	}
	r = rest_json(rc, method, path, body, out, err);
	free(path);
	json_object_put(body);
	return r;
}

/* A call answered by a 204 (or any 2xx, whose body is not wanted). */
static int
process_do(struct rest_client *rc, const char *method, char *path,
    json_object *body, struct rest_error *err)
{
	json_object	*out;

	if (process_call(rc, method, path, body, &out, err) == -1)
		return -1;
	json_object_put(out);
	return 0;
}

/* A Process as the callers use it: an object with a process ID. */
static int
is_process(json_object *o)
{
	json_object	*id;

	return json_object_is_type(o, json_type_object) &&
	    json_object_object_get_ex(o, "id", &id) &&
	    json_object_is_type(id, json_type_string) &&
	    id_is_process(json_object_get_string(id));
}

static int
not_process(json_object **out, int status, struct rest_error *err)
{
	json_object_put(*out);
	*out = NULL;
	seterr(err, status, "http_error", "the server's answer is not a "
	    "process");
	return -1;
}

/* Adds key: val (taken) to o; -1 when out of memory or val is NULL. */
static int
put(json_object *o, const char *key, json_object *val)
{
	if (val == NULL || json_object_object_add(o, key, val) != 0) {
		json_object_put(val);
		return -1;
	}
	return 0;
}

static json_object *
spec_body(const struct rest_process_spec *s)
{
	json_object	*b;

	if ((b = json_object_new_object()) == NULL)
		return NULL;
	if (put(b, "command", json_object_get(s->command)) == -1 ||
	    (s->env != NULL && put(b, "env", json_object_get(s->env)) == -1) ||
	    (s->workdir != NULL && put(b, "workdir",
	    json_object_new_string(s->workdir)) == -1) ||
	    (s->has_timeout && put(b, "timeout_seconds",
	    json_object_new_double(s->timeout)) == -1) ||
	    (s->tty && put(b, "tty", json_object_new_boolean(1)) == -1) ||
	    (s->cols > 0 && put(b, "cols", json_object_new_int(s->cols)) ==
	    -1) ||
	    (s->rows > 0 && put(b, "rows", json_object_new_int(s->rows)) ==
	    -1) ||
	    (s->stdin_open != 0 && put(b, "stdin",
	    json_object_new_boolean(s->stdin_open > 0)) == -1) ||
	    (s->client_id != NULL && put(b, "client_id",
	    json_object_new_string(s->client_id)) == -1)) {
		json_object_put(b);
		return NULL;
	}
	return b;
}

int
rest_process_start(struct rest_client *rc, const char *sandbox,
    const struct rest_process_spec *spec, json_object **out,
    struct rest_error *err)
{
	json_object	*body;
	int		 status;

	*out = NULL;
	clearerr_rest(err);
	if ((body = spec_body(spec)) == NULL) {
		nomem(err);
		return -1;
	}
	status = process_call(rc, "POST", rest_process_path(sandbox, NULL,
	    ""), body, out, err);
	if (status == -1)
		return -1;
	return is_process(*out) ? 0 : not_process(out, status, err);
}

int
rest_process_list(struct rest_client *rc, const char *sandbox,
    json_object **out, struct rest_error *err)
{
	json_object	*arr;
	size_t		 i, n;
	int		 status;

	status = process_call(rc, "GET", rest_process_path(sandbox, NULL,
	    ""), NULL, out, err);
	if (status == -1)
		return -1;
	if (!json_object_object_get_ex(*out, "processes", &arr) ||
	    !json_object_is_type(arr, json_type_array))
		return not_process(out, status, err);
	n = json_object_array_length(arr);
	for (i = 0; i < n; i++)
		if (!is_process(json_object_array_get_idx(arr, i)))
			return not_process(out, status, err);
	return 0;
}

int
rest_process_get(struct rest_client *rc, const char *sandbox,
    const char *process, json_object **out, struct rest_error *err)
{
	int	 status;

	status = process_call(rc, "GET", rest_process_path(sandbox, process,
	    ""), NULL, out, err);
	if (status == -1)
		return -1;
	return is_process(*out) ? 0 : not_process(out, status, err);
}

const char *
rest_signal_name(const char *s)
{
	const char	*errstr;
	char		 up[MAX_SIGNAL_NAME];
	long long	 n;
	size_t		 i;

	if (s[0] >= '0' && s[0] <= '9') {
		n = strtonum(s, 1, 64, &errstr);
		return errstr == NULL ? process_signal_name((int)n) : NULL;
	}
	if (strncasecmp(s, "SIG", 3) == 0)
		s += 3;
	for (i = 0; s[i] != '\0'; i++) {
		if (i + 1 >= sizeof(up))
			return NULL;
		up[i] = toupper((unsigned char)s[i]);
	}
	up[i] = '\0';
	return process_signal_name(process_signal_number(up));
}

int
rest_process_signal(struct rest_client *rc, const char *sandbox,
    const char *process, const char *signal, struct rest_error *err)
{
	json_object	*body;
	const char	*name;

	clearerr_rest(err);
	if ((name = rest_signal_name(signal)) == NULL) {
		seterr(err, 0, "invalid_request", "unknown signal '%.32s': "
		    "TERM, INT, KILL or HUP", signal);
		return -1;
	}
	if ((body = json_object_new_object()) == NULL ||
	    put(body, "signal", json_object_new_string(name)) == -1) {
		json_object_put(body);
		nomem(err);
		return -1;
	}
	return process_do(rc, "POST", rest_process_path(sandbox, process,
	    "/signal"), body, err);
}

int
rest_process_resize(struct rest_client *rc, const char *sandbox,
    const char *process, int cols, int rows, struct rest_error *err)
{
	json_object	*body;

	clearerr_rest(err);
	if ((body = json_object_new_object()) == NULL ||
	    put(body, "cols", json_object_new_int(cols)) == -1 ||
	    put(body, "rows", json_object_new_int(rows)) == -1) {
		json_object_put(body);
		nomem(err);
		return -1;
	}
	return process_do(rc, "POST", rest_process_path(sandbox, process,
	    "/resize"), body, err);
}

int
rest_process_stdin(struct rest_client *rc, const char *sandbox,
    const char *process, const void *data, size_t len, int close,
    struct rest_error *err)
{
	json_object	*out = NULL;
	struct body	 b;
	char		*path;
	int		 r;

	clearerr_rest(err);
	memset(&b, 0, sizeof(b));
	b.ctype = "application/octet-stream";
	b.fd = -1;
	b.mem = data;
	b.len = len;
	if ((path = rest_process_path(sandbox, process,
	    close ? "/stdin?close=true" : "/stdin")) == NULL) {
		nomem(err);
		return -1;
	}
	r = body_call(rc, "POST", path, &b, &out, err);
	free(path);
	json_object_put(out);
	return r == -1 ? -1 : 0;
}

int
rest_process_delete(struct rest_client *rc, const char *sandbox,
    const char *process, struct rest_error *err)
{
	clearerr_rest(err);
	return process_do(rc, "DELETE", rest_process_path(sandbox, process,
	    ""), NULL, err);
}
