/*
 * The sandbox, exec, file and snapshot tools of agent-sandbox-mcp (API.md
 * §13): their descriptions and argument tables, and for each the REST
 * calls it makes; the process tools are in mcp_process.c, and both
 * tables are listed and called from here.  Tools that act on a sandbox
 * fetch it first, as the Python SDK's get_sandbox does, so an unknown ID
 * fails the same way everywhere.  Every failure, an API error included,
 * becomes a tool result with isError true; nothing here exits.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp.h"
#include "utf8.h"


static const char *const summary_keys[] = {
	"id", "status", "image", "network", "expires_at", "source_snapshot_id",
};
static const char *const exec_keys[] = {
	"stdout", "stderr", "exit_code", "timed_out", "truncated",
	"duration_ms",
};
static const char *const fileinfo_keys[] = {
	"name", "path", "type", "size", "modified_at",
};
static const char *const snapshot_keys[] = {
	"id", "sandbox_id", "name", "image", "size_bytes", "created_at",
};

void
out_text(struct tool_out *out, int error, const char *fmt, ...)
{
	va_list	 ap;
	int	 n;

	free(out->text);
	out->text = NULL;
	va_start(ap, fmt);
	n = vasprintf(&out->text, fmt, ap);
	va_end(ap);
	if (n == -1) {
		out->text = NULL;
		n = 0;
	}
	out->len = n;
	out->error = error;
}

void
out_rest(struct tool_out *out, const struct rest_error *err)
{
	char	 buf[sizeof(err->code) + sizeof(err->message) + 32];

	rest_error_string(err, buf, sizeof(buf));
	out_text(out, 1, "%s", buf);
}

/* Render and release obj as the tool's result. */
void
out_json(struct tool_out *out, json_object *obj)
{
	const char	*s;

	if (obj == NULL) {
		out_text(out, 1, "out of memory");
		return;
	}
	s = json_object_to_json_string_ext(obj,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	if (s == NULL)
		out_text(out, 1, "out of memory");
	else
		out_text(out, 0, "%s", s);
	json_object_put(obj);
}

/* A new object with the listed keys of obj (null where missing). */
json_object *
pick(json_object *obj, const char *const *keys, size_t n)
{
	json_object	*o, *v;
	size_t		 i;

	if ((o = json_object_new_object()) == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		v = NULL;
		if (json_object_is_type(obj, json_type_object))
			json_object_object_get_ex(obj, keys[i], &v);
		if (json_object_object_add(o, keys[i],
		    json_object_get(v)) == -1) {
			json_object_put(v);
			json_object_put(o);
			return NULL;
		}
	}
	return o;
}

/* "/v1/<kind>/<escaped id><suffix>", malloc'd. */
static char *
api_path(const char *kind, const char *id, const char *suffix)
{
	char	*esc, *path;

	if ((esc = rest_escape(id)) == NULL)
		return NULL;
	if (asprintf(&path, "/v1/%s/%s%s", kind, esc, suffix) == -1)
		path = NULL;
	free(esc);
	return path;
}

/* The same with "?path=<escaped file path>[&mode=644]" appended. */
static char *
file_path(const char *id, const char *suffix, const char *file,
    const char *extra)
{
	char	*esc, *q, *path;

	if ((esc = rest_escape(file)) == NULL)
		return NULL;
	if (asprintf(&q, "%s?path=%s%s", suffix, esc, extra) == -1)
		q = NULL;
	free(esc);
	if (q == NULL)
		return NULL;
	path = api_path("sandboxes", id, q);
	free(q);
	return path;
}

/*
 * One JSON exchange; on failure out holds the error.  *res may be NULL
 * afterwards (a 204).
 */
static int
call(struct rest_client *c, const char *method, char *path, json_object *body,
    json_object **res, struct tool_out *out)
{
	struct rest_error	 err;
	int			 rc;

	*res = NULL;
	if (path == NULL) {
		json_object_put(body);
		out_text(out, 1, "out of memory");
		return -1;
	}
	memset(&err, 0, sizeof(err));
	rc = rest_json(c, method, path, body, res, &err);
	free(path);
	json_object_put(body);
	if (rc == -1) {
		*res = NULL;
		out_rest(out, &err);
		return -1;
	}
	return 0;
}

/* The preliminary GET of a sandbox the tool is about to act on. */
int
get_sandbox(struct rest_client *c, const char *id, struct tool_out *out)
{
	json_object	*sb;

	if (call(c, "GET", api_path("sandboxes", id, ""), NULL, &sb, out) == -1)
		return -1;
	json_object_put(sb);
	return 0;
}

/* A new request body, or NULL with out saying why. */
static json_object *
new_body(struct tool_out *out)
{
	json_object	*body;

	if ((body = json_object_new_object()) == NULL)
		out_text(out, 1, "out of memory");
	return body;
}

/* POST body to path and render the listed keys of the answer. */
static void
post_pick(struct rest_client *c, char *path, json_object *body,
    const char *const *keys, size_t n, struct tool_out *out)
{
	json_object	*res;

	if (call(c, "POST", path, body, &res, out) == -1)
		return;
	out_json(out, pick(res, keys, n));
	json_object_put(res);
}

/*
 * res[key] when it is an array (borrowed from res); otherwise NULL, with
 * res released and out saying why.
 */
static json_object *
member_array(json_object *res, const char *key, struct tool_out *out)
{
	json_object	*arr;

	if (!json_object_object_get_ex(res, key, &arr) ||
	    !json_object_is_type(arr, json_type_array)) {
		json_object_put(res);
		out_text(out, 1, "unexpected response from the server");
		return NULL;
	}
	return arr;
}

const char *
str_arg(json_object *args, const char *name, const char *def)
{
	json_object	*v = args_get(args, name);

	return v != NULL ? json_object_get_string(v) : def;
}

/* An integer argument as JSON for the server (60.0 becomes 60). */
static json_object *
int_arg(json_object *args, const char *name)
{
	json_object	*v = args_get(args, name);

	if (v == NULL)
		return NULL;
	return json_object_new_int64(json_object_get_int64(v));
}

static void
add_if(json_object *body, const char *key, json_object *v)
{
	if (v != NULL)
		json_object_object_add(body, key, v);
}

/* --- the tools ------------------------------------------------------------ */

static const struct mcp_arg create_args[] = {
	{ "image", ARG_STRING, ARG_NULLABLE, "null",
	    "Container image; null for the server's default image." },
	{ "network", ARG_BOOL, 0, "false",
	    "Attach the sandbox to a network.  Without it the sandbox has "
	    "no network access at all." },
	{ "timeout_seconds", ARG_INTEGER, ARG_NULLABLE, "null",
	    "Seconds until the sandbox expires and is destroyed; null for "
	    "the server's default." },
	{ "cpus", ARG_NUMBER, ARG_NULLABLE, "null",
	    "CPU limit in cores; null for the server's default." },
	{ "memory_mb", ARG_INTEGER, ARG_NULLABLE, "null",
	    "Memory limit in MiB; null for the server's default." },
	{ "labels", ARG_ENV, ARG_NULLABLE, "null",
	    "Labels to tag the sandbox with, as {key: value} (at most 32; "
	    "keys 1-63 characters of A-Z a-z 0-9 . _ / -); sandbox_list "
	    "finds sandboxes by them." },
};

static void
tool_create(struct rest_client *c, json_object *args, struct tool_out *out)
{
	json_object	*body, *v;

	if ((body = new_body(out)) == NULL)
		return;
	if ((v = args_get(args, "image")) != NULL)
		json_object_object_add(body, "image", json_object_get(v));
	v = args_get(args, "network");
	json_object_object_add(body, "network",
	    json_object_new_boolean(v != NULL && json_object_get_boolean(v)));
	json_object_object_add(body, "read_only_rootfs",
	    json_object_new_boolean(1));
	json_object_object_add(body, "env", json_object_new_object());
	add_if(body, "timeout_seconds", int_arg(args, "timeout_seconds"));
	if ((v = args_get(args, "cpus")) != NULL)
		json_object_object_add(body, "cpus", json_object_get(v));
	add_if(body, "memory_mb", int_arg(args, "memory_mb"));
	/* Only when given, as the SDK's body has no labels. */
	if ((v = args_get(args, "labels")) != NULL)
		json_object_object_add(body, "labels", json_object_get(v));
	post_pick(c, strdup("/v1/sandboxes"), body, summary_keys,
	    NITEMS(summary_keys), out);
}

static const struct mcp_arg list_args[] = {
	{ "labels", ARG_ENV, ARG_NULLABLE, "null",
	    "Only the sandboxes that have every one of these labels, as "
	    "{key: value}; null for all." },
};

/* "/v1/sandboxes" with ?label=k%3Dv&... for each label of args. */
static char *
list_path(json_object *args)
{
	json_object	*labels;
	char		*path, *kv, *esc, *next;

	if ((path = strdup("/v1/sandboxes")) == NULL ||
	    (labels = args_get(args, "labels")) == NULL)
		return path;
	json_object_object_foreach(labels, key, val) {
		if (asprintf(&kv, "%s=%s", key,
		    json_object_get_string(val)) == -1)
			kv = NULL;
		esc = kv != NULL ? rest_escape(kv) : NULL;
		free(kv);
		if (esc == NULL || asprintf(&next, "%s%slabel=%s", path,
		    strchr(path, '?') != NULL ? "&" : "?", esc) == -1)
			next = NULL;
		free(esc);
		free(path);
		if ((path = next) == NULL)
			return NULL;
	}
	return path;
}

static void
tool_list(struct rest_client *c, json_object *args, struct tool_out *out)
{
	json_object	*res, *arr, *list, *s;
	size_t		 i, n;

	if (call(c, "GET", list_path(args), NULL, &res, out) == -1)
		return;
	if ((arr = member_array(res, "sandboxes", out)) == NULL)
		return;
	n = json_object_array_length(arr);
	if ((list = json_object_new_array_ext(n)) == NULL)
		goto fail;
	for (i = 0; i < n; i++) {
		s = pick(json_object_array_get_idx(arr, i), summary_keys,
		    NITEMS(summary_keys));
		if (s == NULL || json_object_array_add(list, s) == -1) {
			json_object_put(s);
			json_object_put(list);
			goto fail;
		}
	}
	json_object_put(res);
	out_json(out, list);
	return;
fail:
	json_object_put(res);
	out_text(out, 1, "out of memory");
}

static const struct mcp_arg exec_args[] = {
	{ "sandbox_id", ARG_STRING, ARG_ID, NULL,
	    "ID of the sandbox (sb_...)." },
	{ "command", ARG_STRING, ARG_REQUIRED, NULL,
	    "Shell command, run with /bin/sh -c." },
	{ "workdir", ARG_STRING, ARG_NULLABLE, "null",
	    "Working directory; null for /workspace." },
	{ "timeout_seconds", ARG_NUMBER, ARG_NULLABLE, "null",
	    "Seconds before the command is killed; null for the server's "
	    "default." },
};

static void
tool_exec(struct rest_client *c, json_object *args, struct tool_out *out)
{
	const char	*id = str_arg(args, "sandbox_id", "");
	json_object	*body, *v;

	if (get_sandbox(c, id, out) == -1)
		return;
	if ((body = new_body(out)) == NULL)
		return;
	json_object_object_add(body, "command",
	    json_object_get(args_get(args, "command")));
	if ((v = args_get(args, "workdir")) != NULL)
		json_object_object_add(body, "workdir", json_object_get(v));
	if ((v = args_get(args, "timeout_seconds")) != NULL)
		json_object_object_add(body, "timeout_seconds",
		    json_object_get(v));
	post_pick(c, api_path("sandboxes", id, "/exec"), body, exec_keys,
	    NITEMS(exec_keys), out);
}

static const struct mcp_arg read_args[] = {
	{ "sandbox_id", ARG_STRING, ARG_ID, NULL,
	    "ID of the sandbox (sb_...)." },
	{ "path", ARG_STRING, ARG_REQUIRED, NULL,
	    "File to read; relative paths are under /workspace." },
};

/*
 * After the GET of args' sandbox, the API path of args' file with extra
 * appended to the query; NULL with out saying why.
 */
static char *
sandbox_file(struct rest_client *c, json_object *args, const char *extra,
    struct tool_out *out)
{
	const char	*id = str_arg(args, "sandbox_id", "");
	char		*path;

	if (get_sandbox(c, id, out) == -1)
		return NULL;
	if ((path = file_path(id, "/files", str_arg(args, "path", ""),
	    extra)) == NULL)
		out_text(out, 1, "out of memory");
	return path;
}

static void
tool_read(struct rest_client *c, json_object *args, struct tool_out *out)
{
	struct rest_error	 err;
	unsigned char		*data = NULL;
	size_t			 len = 0;
	char			*path;

	if ((path = sandbox_file(c, args, "", out)) == NULL)
		return;
	memset(&err, 0, sizeof(err));
	if (rest_get_bytes(c, path, MCP_MAX_READ, &data, &len, &err) == -1) {
		free(path);
		out_rest(out, &err);
		return;
	}
	free(path);
	free(out->text);
	out->text = (char *)data;
	out->len = data != NULL ? len : 0;
	out->error = 0;
}

static const struct mcp_arg write_args[] = {
	{ "sandbox_id", ARG_STRING, ARG_ID, NULL,
	    "ID of the sandbox (sb_...)." },
	{ "path", ARG_STRING, ARG_REQUIRED, NULL,
	    "File to write, under /workspace (relative paths are taken "
	    "from there).  Missing parent directories are created." },
	{ "content", ARG_STRING, ARG_REQUIRED | ARG_BYTES, NULL,
	    "Text to store, written as UTF-8." },
};

static void
tool_write(struct rest_client *c, json_object *args, struct tool_out *out)
{
	json_object		*content, *res = NULL;
	struct rest_error	 err;
	char			*path;

	if ((path = sandbox_file(c, args, "&mode=644", out)) == NULL)
		return;
	content = args_get(args, "content");
	memset(&err, 0, sizeof(err));
	if (rest_put_bytes(c, path, json_object_get_string(content),
	    json_object_get_string_len(content), &res, &err) == -1) {
		free(path);
		out_rest(out, &err);
		return;
	}
	free(path);
	out_json(out, pick(res, fileinfo_keys, NITEMS(fileinfo_keys)));
	json_object_put(res);
}

static const struct mcp_arg list_files_args[] = {
	{ "sandbox_id", ARG_STRING, ARG_ID, NULL,
	    "ID of the sandbox (sb_...)." },
	{ "path", ARG_STRING, 0, "\"/workspace\"",
	    "Directory to list." },
};

static void
tool_list_files(struct rest_client *c, json_object *args,
    struct tool_out *out)
{
	const char	*id = str_arg(args, "sandbox_id", "");
	json_object	*res, *entries;

	if (get_sandbox(c, id, out) == -1)
		return;
	if (call(c, "GET", file_path(id, "/files/list",
	    str_arg(args, "path", "/workspace"), ""), NULL, &res, out) == -1)
		return;
	if ((entries = member_array(res, "entries", out)) == NULL)
		return;
	out_json(out, json_object_get(entries));
	json_object_put(res);
}

static const struct mcp_arg snapshot_args[] = {
	{ "sandbox_id", ARG_STRING, ARG_ID, NULL,
	    "ID of the sandbox (sb_...)." },
	{ "name", ARG_STRING, ARG_NULLABLE, "null",
	    "A label for the snapshot (at most 128 characters)." },
};

/*
 * POST {key: args[key]} to the sandbox's <suffix> and render the listed
 * keys of the answer.
 */
static void
sandbox_post(struct rest_client *c, json_object *args, const char *suffix,
    const char *key, const char *const *keys, size_t n, struct tool_out *out)
{
	const char	*id = str_arg(args, "sandbox_id", "");
	json_object	*body;

	if (get_sandbox(c, id, out) == -1)
		return;
	if ((body = new_body(out)) == NULL)
		return;
	json_object_object_add(body, key, json_object_get(args_get(args, key)));
	post_pick(c, api_path("sandboxes", id, suffix), body, keys, n, out);
}

static void
tool_snapshot(struct rest_client *c, json_object *args, struct tool_out *out)
{
	sandbox_post(c, args, "/snapshots", "name", snapshot_keys,
	    NITEMS(snapshot_keys), out);
}

static const struct mcp_arg rollback_args[] = {
	{ "sandbox_id", ARG_STRING, ARG_ID, NULL,
	    "ID of the sandbox (sb_...)." },
	{ "snapshot_id", ARG_STRING, ARG_ID, NULL,
	    "ID of the snapshot to restore (snap_...)." },
};

static void
tool_rollback(struct rest_client *c, json_object *args, struct tool_out *out)
{
	sandbox_post(c, args, "/rollback", "snapshot_id", summary_keys,
	    NITEMS(summary_keys), out);
}

static const struct mcp_arg fork_args[] = {
	{ "snapshot_id", ARG_STRING, ARG_ID, NULL,
	    "ID of the snapshot to start from (snap_...)." },
	{ "timeout_seconds", ARG_INTEGER, ARG_NULLABLE, "null",
	    "Seconds until the new sandbox expires; null for the server's "
	    "default." },
};

static void
tool_fork(struct rest_client *c, json_object *args, struct tool_out *out)
{
	const char	*snap = str_arg(args, "snapshot_id", "");
	json_object	*body;

	if ((body = new_body(out)) == NULL)
		return;
	add_if(body, "timeout_seconds", int_arg(args, "timeout_seconds"));
	post_pick(c, api_path("snapshots", snap, "/fork"), body, summary_keys,
	    NITEMS(summary_keys), out);
}

static const struct mcp_arg destroy_args[] = {
	{ "sandbox_id", ARG_STRING, ARG_ID, NULL,
	    "ID of the sandbox (sb_...)." },
};

static void
tool_destroy(struct rest_client *c, json_object *args, struct tool_out *out)
{
	const char	*id = str_arg(args, "sandbox_id", "");
	json_object	*res;

	if (get_sandbox(c, id, out) == -1)
		return;
	if (call(c, "DELETE", api_path("sandboxes", id, ""), NULL, &res,
	    out) == -1)
		return;
	json_object_put(res);
	out_text(out, 0, "destroyed %s", id);
}

static const struct mcp_arg stats_args[] = {
	{ "sandbox_id", ARG_STRING, ARG_ID, NULL,
	    "ID of the sandbox (sb_...)." },
};

static void
tool_stats(struct rest_client *c, json_object *args, struct tool_out *out)
{
	const char	*id = str_arg(args, "sandbox_id", "");
	json_object	*res;

	if (get_sandbox(c, id, out) == -1)
		return;
	if (call(c, "GET", api_path("sandboxes", id, "/stats"), NULL, &res,
	    out) == -1)
		return;
	out_json(out, res);
}

static const struct mcp_arg network_args[] = {
	{ "sandbox_id", ARG_STRING, ARG_ID, NULL,
	    "ID of the sandbox (sb_...)." },
};

/*
 * The policy and the proxy's log in one answer.  Read only: what a
 * sandbox may reach is its operator's to say, not its agent's, so no tool
 * changes a policy.
 */
static void
tool_network(struct rest_client *c, json_object *args, struct tool_out *out)
{
	const char	*id = str_arg(args, "sandbox_id", "");
	json_object	*policy, *log, *both;

	if (call(c, "GET", api_path("sandboxes", id, "/network"), NULL,
	    &policy, out) == -1)
		return;
	if (call(c, "GET", api_path("sandboxes", id, "/network/log"), NULL,
	    &log, out) == -1) {
		json_object_put(policy);
		return;
	}
	if ((both = json_object_new_object()) == NULL ||
	    json_object_object_add(both, "policy", policy) != 0) {
		json_object_put(policy);
		json_object_put(log);
		json_object_put(both);
		out_text(out, 1, "out of memory");
		return;
	}
	if (json_object_object_add(both, "log", log) != 0) {
		json_object_put(log);
		json_object_put(both);
		out_text(out, 1, "out of memory");
		return;
	}
	out_json(out, both);
}

static const struct tool tools[] = {
	{ "sandbox_create",
	    "Create a new isolated sandbox (a disposable Linux container "
	    "with an empty /workspace) and return its summary, including "
	    "its id.  No network access unless network is true.",
	    create_args, NITEMS(create_args), tool_create },
	{ "sandbox_list",
	    "List every sandbox on the server with its status and expiry, "
	    "or only those with the given labels.",
	    list_args, NITEMS(list_args), tool_list },
	{ "sandbox_exec",
	    "Run a shell command in a sandbox and wait for it.  Returns "
	    "stdout, stderr, exit_code, timed_out, truncated and "
	    "duration_ms.  The working directory defaults to /workspace.",
	    exec_args, NITEMS(exec_args), tool_exec },
	{ "sandbox_read_file",
	    "Read a file from a sandbox and return its content as text "
	    "(bytes that are not UTF-8 show as U+FFFD).",
	    read_args, NITEMS(read_args), tool_read },
	{ "sandbox_write_file",
	    "Write text to a file under /workspace in a sandbox, replacing "
	    "any existing file (mode 644).  Returns the file's info.",
	    write_args, NITEMS(write_args), tool_write },
	{ "sandbox_list_files",
	    "List a directory in a sandbox: name, path, type, size and "
	    "modification time of each entry.",
	    list_files_args, NITEMS(list_files_args), tool_list_files },
	{ "sandbox_snapshot",
	    "Save the sandbox's /workspace as a snapshot and return it.  "
	    "Take one before a risky change; roll back to its id, or fork "
	    "from it, later.",
	    snapshot_args, NITEMS(snapshot_args), tool_snapshot },
	{ "sandbox_rollback",
	    "Restore a sandbox's /workspace to a snapshot, discarding every "
	    "change made since.  Returns the sandbox's summary.",
	    rollback_args, NITEMS(rollback_args), tool_rollback },
	{ "sandbox_fork",
	    "Create a new sandbox whose /workspace starts as a copy of a "
	    "snapshot, to try another approach in parallel.  Returns the "
	    "new sandbox's summary.",
	    fork_args, NITEMS(fork_args), tool_fork },
	{ "sandbox_destroy",
	    "Destroy a sandbox and its /workspace for good.  Its snapshots "
	    "are kept.",
	    destroy_args, NITEMS(destroy_args), tool_destroy },
	{ "sandbox_stats",
	    "Show what a sandbox uses now: CPU seconds, memory and its "
	    "limit, processes and their limit, /workspace bytes, network "
	    "bytes (null where unknown, e.g. without a network).",
	    stats_args, NITEMS(stats_args), tool_stats },
	{ "sandbox_network",
	    "Show what a sandbox may reach and what it tried: its egress "
	    "policy (mode none, public or allowlist, with the allowed "
	    "names and ranges) and its recent connections through the "
	    "egress proxy, each allowed or refused with the reason.  Use it "
	    "to find out why a download failed.  Read only.",
	    network_args, NITEMS(network_args), tool_network },
};

/* The i-th tool of both tables, or NULL past their end. */
static const struct tool *
tool_at(size_t i)
{
	if (i < NITEMS(tools))
		return &tools[i];
	i -= NITEMS(tools);
	return i < mcp_nprocess_tools ? &mcp_process_tools[i] : NULL;
}

json_object *
tools_list(void)
{
	const struct tool	*tl;
	json_object		*list, *t, *schema;
	size_t			 i;

	if ((list = json_object_new_array()) == NULL)
		return NULL;
	for (i = 0; (tl = tool_at(i)) != NULL; i++) {
		if ((t = json_object_new_object()) == NULL)
			goto fail;
		if (json_object_array_add(list, t) == -1) {
			json_object_put(t);
			goto fail;
		}
		if ((schema = args_schema(tl->args, tl->nargs)) == NULL)
			goto fail;
		json_object_object_add(t, "name",
		    json_object_new_string(tl->name));
		json_object_object_add(t, "description",
		    json_object_new_string(tl->description));
		json_object_object_add(t, "inputSchema", schema);
	}
	return list;
fail:
	json_object_put(list);
	return NULL;
}

static json_object *
call_result(const char *text, size_t len, int error)
{
	json_object	*res, *content, *item;
	char		*s;
	size_t		 slen;

	if ((s = utf8_repair(text, len, &slen)) == NULL)
		return NULL;
	res = json_object_new_object();
	content = json_object_new_array();
	item = json_object_new_object();
	if (res == NULL || content == NULL || item == NULL) {
		json_object_put(res);
		json_object_put(content);
		json_object_put(item);
		free(s);
		return NULL;
	}
	json_object_object_add(item, "type", json_object_new_string("text"));
	json_object_object_add(item, "text",
	    json_object_new_string_len(s, slen));
	free(s);
	json_object_array_add(content, item);
	json_object_object_add(res, "content", content);
	json_object_object_add(res, "isError",
	    json_object_new_boolean(error));
	return res;
}

json_object *
tools_call(struct mcp_server *srv, const char *name, json_object *arguments)
{
	const struct tool	*t = NULL, *tl;
	struct tool_out		 out;
	json_object		*res;
	char			 err[512];
	size_t			 i;

	for (i = 0; (tl = tool_at(i)) != NULL; i++)
		if (strcmp(tl->name, name) == 0)
			t = tl;
	if (t == NULL) {
		snprintf(err, sizeof(err), "unknown tool '%s'", name);
		return call_result(err, strlen(err), 1);
	}
	if (args_check(t->args, t->nargs, arguments, err, sizeof(err)) == -1)
		return call_result(err, strlen(err), 1);
	if (!srv->rest_ok)
		return call_result(srv->rest_err, strlen(srv->rest_err), 1);
	memset(&out, 0, sizeof(out));
	t->run(&srv->rest, arguments, &out);
	if (out.text == NULL)
		res = call_result("out of memory", 13, 1);
	else
		res = call_result(out.text, out.len, out.error);
	free(out.text);
	return res;
}
