/*
 * The OpenAPI 3.1 document of the REST API, built from a table of
 * operations (API.md §4), and "agent-sandbox openapi", which prints it.
 * The same bytes are committed as docs/openapi.json and served by apid at
 * GET /openapi.json; a unit test keeps the three equal.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "openapi.h"

#define REQ	OPENAPI_REQUIRED

#define DOC_MAX		(1024 * 1024)	/* the text is about 135 KiB */

struct op {
	const char			*path;
	const char			*method;
	const char			*id;		/* operationId */
	const char			*tag;
	const char			*summary;
	const char			*desc;
	const struct openapi_field	*query;		/* or NULL */
	const char			*body;		/* "#Schema", "binary" */
	int				 body_required;
	int				 status;
	const char			*reply;		/* NULL: no content */
	const char			*reply_desc;
	const char			*errors;	/* but 401 and 500 */
};

static const struct openapi_field read_query[] = {
	{ "path", "string", REQ, 0, NULL, NULL, NULL,
	    "File to read: an absolute path anywhere in the container, or a "
	    "path relative to /workspace." },
	{ NULL }
};

static const struct openapi_field write_query[] = {
	{ "path", "string", REQ, 0, NULL, NULL, NULL,
	    "File to write, under /workspace (relative paths are taken from "
	    "there).  Missing parent directories are created." },
	{ "mode", "string", 0, 0, "^[0-7]{3,4}$", NULL, "\"644\"",
	    "Octal permission bits, at most 777." },
	{ NULL }
};

static const struct openapi_field list_query[] = {
	{ "path", "string", 0, 0, NULL, NULL, "\"/workspace\"",
	    "Directory to list: absolute, or relative to /workspace." },
	{ NULL }
};

static const struct openapi_field output_query[] = {
	{ "after", "integer", OPENAPI_MIN, 0, NULL, NULL, "0",
	    "The last seq seen: the events after that byte.  0: all that is "
	    "kept.  Not a non-negative integer, or beyond output_bytes: "
	    "400." },
	{ "follow", "boolean", 0, 0, NULL, NULL, "false",
	    "Go on with live output until the process ends (the exit line "
	    "is last); false: end at the end of what is kept so far." },
	{ "encoding", "string", 0, 0, NULL, "utf8 base64", "\"utf8\"",
	    "data as UTF-8 text (invalid bytes as U+FFFD), or the base64 of "
	    "the bytes." },
	{ NULL }
};

static const struct openapi_field stdin_query[] = {
	{ "close", "boolean", 0, 0, NULL, NULL, "false",
	    "Close the process's stdin after the body (end of file)." },
	{ NULL }
};

static const struct openapi_field attach_query[] = {
	{ "token", "string", 0, 0, NULL, NULL, NULL,
	    "An attach token for this process, instead of the API key in a "
	    "header (browsers cannot set one on a WebSocket)." },
	{ NULL }
};

static const struct openapi_field snapshots_query[] = {
	{ "sandbox_id", "string?", 0, 0, NULL, NULL, "null",
	    "Only the snapshots taken from this sandbox (which need not "
	    "exist any more)." },
	{ NULL }
};

static const struct openapi_field sandboxes_query[] = {
	{ "label", "[string", 0, 0, NULL, NULL, NULL,
	    "Only the sandboxes with this label: key=value, or key alone "
	    "for any value (the key ends at the first '=').  Repeat it: "
	    "every one must match.  A bad key or value, or more than 32: "
	    "400." },
	{ NULL }
};

static const struct op ops[] = {
	{ "/healthz", "get", "health", "health", "Check the server",
	    "Asks Docker whether it answers.  Needs no API key.",
	    NULL, NULL, 0, 200, "#Health", "The server and Docker answer.",
	    "502 503 504" },
	{ "/metrics", "get", "metrics", "health", "The server's metrics",
	    "The Prometheus text exposition format 0.0.4, every name "
	    "prefixed agent_sandbox_ (docs/metrics.md lists them).  Needs no "
	    "API key; with AGENT_SANDBOX_METRICS_KEY set, only "
	    "\"Authorization: Bearer <that key>\" (401 otherwise).",
	    NULL, NULL, 0, 200, "text", "The metrics.", "401" },
	{ "/v1/sandboxes", "get", "list_sandboxes", "sandboxes",
	    "List sandboxes",
	    "Every sandbox, expired ones not yet reaped and stopped ones "
	    "included, oldest first, or those with every label asked for.  "
	    "Each status is what Docker's event stream last said of the "
	    "sandbox's container; while that stream is down, it is asked "
	    "of Docker.",
	    sandboxes_query, NULL, 0, 200, "#SandboxList", "The sandboxes.",
	    "400 502 503 504" },
	{ "/v1/sandboxes", "post", "create_sandbox", "sandboxes",
	    "Create a sandbox",
	    "Creates a container and its /workspace volume from an image.  "
	    "Limits above the server's maxima, bad egress policies and "
	    "policies the server cannot enforce are refused with 400, images "
	    "outside its allowlist and unwanted network access with 403, a "
	    "full server with 429.",
	    NULL, "#CreateSandboxRequest", 1, 201, "#Sandbox",
	    "The new sandbox.", "400 403 413 422 429 502 503 504 507" },
	{ "/v1/sandboxes/{sandbox_id}", "get", "get_sandbox", "sandboxes",
	    "Get a sandbox", NULL,
	    NULL, NULL, 0, 200, "#Sandbox", "The sandbox.", "404 502 503 504" },
	{ "/v1/sandboxes/{sandbox_id}", "delete", "destroy_sandbox",
	    "sandboxes", "Destroy a sandbox",
	    "Removes its container and volume.  Its snapshots remain.",
	    NULL, NULL, 0, 204, NULL, "Destroyed.", "400 404 502 503 504" },
	{ "/v1/sandboxes/{sandbox_id}", "patch", "patch_sandbox", "sandboxes",
	    "Change a sandbox's labels",
	    "A JSON merge patch of the labels, on disk before the answer.  "
	    "Any other field: 422.  Waits for a rollback or snapshot of the "
	    "sandbox in progress; a sandbox destroyed meanwhile: 404.",
	    NULL, "#PatchSandboxRequest", 1, 200, "#Sandbox",
	    "The sandbox with its new labels.",
	    "400 404 413 422 502 503 504 507" },
	{ "/v1/sandboxes/{sandbox_id}/timeout", "post", "set_timeout",
	    "sandboxes", "Set a sandbox's time to live",
	    "The sandbox now expires timeout_seconds from now.",
	    NULL, "#TimeoutRequest", 1, 200, "#Sandbox",
	    "The sandbox with its new expiry.", "400 404 413 422 502 503 504 507" },
	{ "/v1/sandboxes/{sandbox_id}/stats", "get", "sandbox_stats",
	    "sandboxes", "What a sandbox uses now",
	    "CPU, memory and pids from Docker's one-shot stats, network "
	    "bytes, and the size of /workspace (a du run in the sandbox as "
	    "its user).  A stopped sandbox: 200 with every group null.",
	    NULL, NULL, 0, 200, "#SandboxStats", "The figures.",
	    "404 502 503 504" },
	{ "/v1/sandboxes/{sandbox_id}/network", "get", "sandbox_network_get",
	    "network", "Get a sandbox's egress policy",
	    "The canonical policy, or {\"mode\": \"bridge\"} for a sandbox on "
	    "the shared bridge network.",
	    NULL, NULL, 0, 200, "#NetworkPolicy", "The policy.", "404" },
	{ "/v1/sandboxes/{sandbox_id}/network", "put", "sandbox_network_put",
	    "network", "Change a sandbox's egress policy",
	    "The body is the whole new policy (mode none, public or "
	    "allowlist), on disk before the answer.  New connections follow "
	    "it at once; established ones keep going.  A bad policy: 400 "
	    "(the message starts \"network: \"); under the gVisor runtime, "
	    "a mode other than none: 400; network access the server does "
	    "not allow: 403; a sandbox on the shared bridge: 409.",
	    NULL, "#NetworkPolicy", 1, 200, "#NetworkPolicy",
	    "The new policy, canonical.",
	    "400 403 404 409 413 422 502 503 504 507" },
	{ "/v1/sandboxes/{sandbox_id}/network/log", "get",
	    "sandbox_network_log", "network",
	    "A sandbox's recent egress connections",
	    "Every connection the sandbox asked of the egress proxy, allowed "
	    "or refused, oldest first; a ring per sandbox of "
	    "AGENT_SANDBOX_EGRESS_LOG_SIZE entries (256 by default).  A "
	    "sandbox without a policy has none.",
	    NULL, NULL, 0, 200, "#NetworkLog", "The log.",
	    "404 502 503 504" },
	{ "/v1/sandboxes/{sandbox_id}/exec", "post", "exec_command", "exec",
	    "Run a command to completion",
	    "Runs the command as the sandbox user and answers when it ends.  "
	    "A non-zero exit status or a timeout is still a 200.",
	    NULL, "#ExecRequest", 1, 200, "#ExecResult",
	    "The command's outcome.", "400 404 413 422 502 503 504" },
	{ "/v1/sandboxes/{sandbox_id}/exec/stream", "post", "exec_stream",
	    "exec", "Run a command and stream its output",
	    "Same request and checks as the exec route; every error comes "
	    "before the stream starts.  The answer is newline-delimited JSON: "
	    "output events as they come, then one exit event.",
	    NULL, "#ExecRequest", 1, 200, "ndjson",
	    "ExecEvent objects, one per line.", "400 404 413 422 502 503 504" },
	{ "/v1/sandboxes/{sandbox_id}/processes", "post", "start_process",
	    "processes", "Start a process that outlives the request",
	    "The process keeps running, and its output is kept (a ring per "
	    "process, oldest output dropped first), with no client "
	    "connected.  A retry with the same client_id and body answers "
	    "200 with the first process; with another body, 409.",
	    NULL, "#ProcessRequest", 1, 201, "#Process", "The new process.",
	    "400 404 409 413 422 429 502 503 504" },
	{ "/v1/sandboxes/{sandbox_id}/processes", "get", "list_processes",
	    "processes", "List a sandbox's processes",
	    "In the order they were started; ended ones until deleted.",
	    NULL, NULL, 0, 200, "#ProcessList", "The processes.", "404" },
	{ "/v1/sandboxes/{sandbox_id}/processes/{process_id}", "get",
	    "get_process", "processes", "Get a process", NULL,
	    NULL, NULL, 0, 200, "#Process", "The process.", "404 502 503 504" },
	{ "/v1/sandboxes/{sandbox_id}/processes/{process_id}", "delete",
	    "delete_process", "processes", "Kill and remove a process",
	    "Kills the process's whole tree if it runs, and removes its "
	    "record and output.",
	    NULL, NULL, 0, 204, NULL, "Removed.", "404 502 503 504" },
	{ "/v1/sandboxes/{sandbox_id}/processes/{process_id}/output", "get",
	    "read_process_output", "processes", "Read a process's output",
	    "Newline-delimited JSON: the events after byte after, a gap "
	    "first when the ring no longer reaches back that far, and the "
	    "exit line last once the process has ended.",
	    output_query, NULL, 0, 200, "ndjson#ProcessEvent",
	    "ProcessEvent objects, one per line.", "400 404 422 503" },
	{ "/v1/sandboxes/{sandbox_id}/processes/{process_id}/stdin", "post",
	    "write_process_stdin", "processes", "Write to a process's stdin",
	    "The request body (at most 1 MiB, any content type) goes to the "
	    "process's stdin; the answer comes once it is in the process's "
	    "stdin pipe.  409 if the process has no stdin (or it is closed) "
	    "or no longer runs.",
	    stdin_query, "binary", 0, 204, NULL, "Written.",
	    "404 409 413 422 503" },
	{ "/v1/sandboxes/{sandbox_id}/processes/{process_id}/signal", "post",
	    "signal_process", "processes", "Signal a process",
	    "Sent to the process's whole process group.  409 if it no "
	    "longer runs.",
	    NULL, "#SignalRequest", 0, 204, NULL, "Sent.",
	    "404 409 413 422 502 503 504" },
	{ "/v1/sandboxes/{sandbox_id}/processes/{process_id}/resize", "post",
	    "resize_process", "processes", "Resize a process's tty",
	    "409 without a tty.",
	    NULL, "#ResizeRequest", 1, 204, NULL, "Resized.",
	    "404 409 413 422 502 503 504" },
	{ "/v1/sandboxes/{sandbox_id}/processes/{process_id}/attach", "get",
	    "attach_process", "processes", "Attach to a process (WebSocket)",
	    "An RFC 6455 WebSocket: the kept output, then live output, as "
	    "binary frames of raw bytes; binary frames from the client go "
	    "to stdin, a text frame {\"type\": \"resize\", \"cols\": C, "
	    "\"rows\": R} resizes the tty.  At the end a text frame "
	    "{\"type\": \"exit\", \"status\": ..., \"exit_code\": ...} and "
	    "close 1000.  Closing leaves the process running.",
	    attach_query, NULL, 0, 101, NULL, "The WebSocket.",
	    "400 404 426 503" },
	{ "/v1/sandboxes/{sandbox_id}/processes/{process_id}/attach-token",
	    "post", "create_attach_token", "processes",
	    "Make a token for one attachment",
	    "Good for 30 seconds and the first attach to this process that "
	    "presents it.  Kept in apid's memory only.",
	    NULL, NULL, 0, 201, "#AttachToken", "The token.", "404 429" },
	{ "/v1/sandboxes/{sandbox_id}/files", "get", "read_file", "files",
	    "Download a file",
	    "Symbolic links are followed.  Directories and other non-regular "
	    "files are refused with 400, files above the server's limit with "
	    "413.",
	    read_query, NULL, 0, 200, "binary", "The file's bytes.",
	    "400 404 413 422 502 503 504" },
	{ "/v1/sandboxes/{sandbox_id}/files", "put", "write_file", "files",
	    "Upload a file",
	    "The request body is the file's content, whatever its "
	    "Content-Type.  The file and any parent directory it needs "
	    "belong to the sandbox user.",
	    write_query, "binary", 0, 200, "#FileInfo", "The file written.",
	    "400 404 413 422 502 503 504 507" },
	{ "/v1/sandboxes/{sandbox_id}/files/list", "get", "list_files",
	    "files", "List a directory", NULL,
	    list_query, NULL, 0, 200, "#FileList", "The directory's entries.",
	    "400 404 502 503 504" },
	{ "/v1/sandboxes/{sandbox_id}/snapshots", "post", "create_snapshot",
	    "snapshots", "Snapshot a sandbox's /workspace",
	    "Stores a tar of /workspace in the server's data directory.  It "
	    "outlives the sandbox.  Processes, /tmp and the rest of the "
	    "filesystem are not part of it.",
	    NULL, "#SnapshotRequest", 0, 201, "#Snapshot", "The snapshot.",
	    "400 403 404 413 422 502 503 504 507" },
	{ "/v1/sandboxes/{sandbox_id}/rollback", "post", "rollback_sandbox",
	    "snapshots", "Restore a snapshot into a sandbox",
	    "Replaces the sandbox's container and /workspace with fresh ones "
	    "holding the snapshot's files; the sandbox keeps its ID, settings "
	    "and expiry.  If the rollback fails after the old container is "
	    "gone, the sandbox is removed and the error says so.",
	    NULL, "#RollbackRequest", 1, 200, "#Sandbox",
	    "The restored sandbox.", "400 404 413 422 502 503 504 507" },
	{ "/v1/snapshots", "get", "list_snapshots", "snapshots",
	    "List snapshots", "Oldest first.",
	    snapshots_query, NULL, 0, 200, "#SnapshotList", "The snapshots.",
	    "" },
	{ "/v1/snapshots/{snapshot_id}", "get", "get_snapshot", "snapshots",
	    "Get a snapshot", NULL,
	    NULL, NULL, 0, 200, "#Snapshot", "The snapshot.", "404" },
	{ "/v1/snapshots/{snapshot_id}", "delete", "delete_snapshot",
	    "snapshots", "Delete a snapshot",
	    "Sandboxes forked from it or rolled back to it keep their "
	    "source_snapshot_id.",
	    NULL, NULL, 0, 204, NULL, "Deleted.", "404" },
	{ "/v1/snapshots/{snapshot_id}/fork", "post", "fork_snapshot",
	    "snapshots", "Create a sandbox from a snapshot",
	    "A new sandbox with the source sandbox's settings (and the given "
	    "overrides), checked against the server's current limits, whose "
	    "/workspace holds the snapshot's files.",
	    NULL, "#ForkRequest", 0, 201, "#Sandbox", "The new sandbox.",
	    "400 403 404 413 422 429 502 503 504 507" },
};

static const struct {
	int		 status;
	const char	*desc;
} error_desc[] = {
	{ 400, "Invalid request (invalid_request), or a body that cannot be "
	    "read (http_error)." },
	{ 401, "Missing or invalid API key (unauthorized)." },
	{ 403, "Forbidden by the server's settings (forbidden), or over a "
	    "quota of the key's tenant (quota_exceeded)." },
	{ 404, "No such sandbox, snapshot, process, file or directory "
	    "(not_found)." },
	{ 409, "The request conflicts with the state of what it names "
	    "(conflict)." },
	{ 413, "Too large for the server's limits (payload_too_large)." },
	{ 422, "The request does not match its schema." },
	{ 426, "Not a WebSocket handshake of version 13 "
	    "(invalid_request)." },
	{ 429, "The server runs its maximum number of sandboxes, or of "
	    "processes, or holds its maximum of attach tokens, or the key "
	    "is over its requests per second, with Retry-After "
	    "(limit_exceeded)." },
	{ 500, "Internal error (internal_error)." },
	{ 502, "Docker is unreachable or failed (backend_error)." },
	{ 503, "A resource of the server is exhausted for the moment "
	    "(descriptors, requests out to Docker); try again "
	    "(unavailable)." },
	{ 504, "Docker did not answer within the operation's deadline "
	    "(backend_timeout)." },
	{ 507, "The server's data directory is full: a snapshot, upload or "
	    "record did not fit, and nothing of it was kept "
	    "(insufficient_storage)." },
};

static const struct {
	const char	*name;
	const char	*desc;
} tags[] = {
	{ "health", "Server status." },
	{ "sandboxes", "Create, inspect, extend and destroy sandboxes." },
	{ "exec", "Run commands in a sandbox." },
	{ "processes", "Processes that outlive a request: their output, "
	    "stdin, signals, and attachments over a WebSocket." },
	{ "files", "Read, write and list files in a sandbox." },
	{ "network", "A sandbox's egress policy and the log of its "
	    "connections." },
	{ "snapshots", "Snapshot /workspace, roll back, fork." },
};

static const struct openapi_field path_params[] = {
	{ "sandbox_id", "string", REQ, 0, NULL, NULL, NULL,
	    "Sandbox ID: sb_ followed by 16 lowercase hex digits." },
	{ "snapshot_id", "string", REQ, 0, NULL, NULL, NULL,
	    "Snapshot ID: snap_ followed by 16 lowercase hex digits." },
	{ "process_id", "string", REQ, 0, NULL, NULL, NULL,
	    "Process ID: proc_ followed by 16 lowercase hex digits." },
	{ NULL }
};

static json_object *
content(const char *media, json_object *schema)
{
	json_object	*o, *m;

	o = json_object_new_object();
	m = json_object_new_object();
	openapi_put(m, "schema", schema);
	openapi_put(o, media, m);
	return o;
}

static json_object *
ref(const char *name)
{
	struct openapi_field	 f = { "", name, 0, 0, NULL, NULL, NULL, NULL };

	return openapi_field_schema(&f);
}

static json_object *
binary(void)
{
	json_object	*o;

	o = json_object_new_object();
	openapi_put(o, "type", openapi_str("string"));
	openapi_put(o, "format", openapi_str("binary"));
	return o;
}

static json_object *
parameter(const struct openapi_field *f, const char *in)
{
	struct openapi_field	 bare = *f;
	json_object		*o;

	bare.desc = NULL;	/* said once, by the parameter */
	o = json_object_new_object();
	openapi_put(o, "name", openapi_str(f->name));
	openapi_put(o, "in", openapi_str(in));
	openapi_put(o, "required",
	    json_object_new_boolean((f->flags & OPENAPI_REQUIRED) != 0));
	openapi_put(o, "description", openapi_str(f->desc));
	openapi_put(o, "schema", openapi_field_schema(&bare));
	return o;
}

static json_object *
parameters(const struct op *op)
{
	const struct openapi_field	*f;
	json_object			*arr;
	char				 braced[64];

	arr = json_object_new_array();
	for (f = path_params; f->name != NULL; f++) {
		snprintf(braced, sizeof(braced), "{%s}", f->name);
		if (strstr(op->path, braced) != NULL)
			openapi_push(arr, parameter(f, "path"));
	}
	for (f = op->query; f != NULL && f->name != NULL; f++)
		openapi_push(arr, parameter(f, "query"));
	return arr;
}

static json_object *
request_body(const struct op *op)
{
	json_object	*o;

	o = json_object_new_object();
	openapi_put(o, "required", json_object_new_boolean(op->body_required));
	if (strcmp(op->body, "binary") == 0)
		openapi_put(o, "content",
		    content("application/octet-stream", binary()));
	else
		openapi_put(o, "content",
		    content("application/json", ref(op->body)));
	return o;
}

static json_object *
success(const struct op *op)
{
	json_object	*o;

	o = json_object_new_object();
	openapi_put(o, "description", openapi_str(op->reply_desc));
	if (op->reply == NULL)
		return o;
	if (strcmp(op->reply, "binary") == 0)
		openapi_put(o, "content",
		    content("application/octet-stream", binary()));
	else if (strcmp(op->reply, "text") == 0)
		openapi_put(o, "content", content("text/plain; version=0.0.4; "
		    "charset=utf-8", ref("string")));
	else if (strncmp(op->reply, "ndjson", 6) == 0)
		/* "ndjson#Event": lines of that schema; ExecEvent if none. */
		openapi_put(o, "content", content("application/x-ndjson",
		    ref(op->reply[6] != '\0' ? op->reply + 6 : "#ExecEvent")));
	else
		openapi_put(o, "content",
		    content("application/json", ref(op->reply)));
	return o;
}

static json_object *
error_response(int status, const char *desc)
{
	json_object	*o, *headers, *h;

	o = json_object_new_object();
	openapi_put(o, "description", openapi_str(desc));
	if (status == 401) {
		headers = json_object_new_object();
		h = json_object_new_object();
		openapi_put(h, "description",
		    openapi_str("Always \"Bearer\"."));
		openapi_put(h, "schema", ref("string"));
		openapi_put(headers, "WWW-Authenticate", h);
		openapi_put(o, "headers", headers);
	}
	if (status == 429) {
		headers = json_object_new_object();
		h = json_object_new_object();
		openapi_put(h, "description", openapi_str("Whole seconds "
		    "(at least 1) until the key may make its next request; "
		    "sent when the key's requests per second were the "
		    "limit."));
		openapi_put(h, "schema", ref("integer"));
		openapi_put(headers, "Retry-After", h);
		openapi_put(o, "headers", headers);
	}
	openapi_put(o, "content", content("application/json",
	    ref(status == 422 ? "#HTTPValidationError" : "#ErrorResponse")));
	return o;
}

/* Whether the space-separated list holds the status. */
static int
has_status(const char *list, int status)
{
	char	 word[8];

	snprintf(word, sizeof(word), "%d", status);
	while (*list != '\0') {
		if (strncmp(list, word, 3) == 0 &&
		    (list[3] == ' ' || list[3] == '\0'))
			return 1;
		list += strcspn(list, " ");
		list += strspn(list, " ");
	}
	return 0;
}

static json_object *
responses(const struct op *op, int authenticated)
{
	json_object	*o;
	char		 key[8];
	size_t		 i;
	int		 st;

	o = json_object_new_object();
	snprintf(key, sizeof(key), "%d", op->status);
	openapi_put(o, key, success(op));
	for (i = 0; i < sizeof(error_desc) / sizeof(error_desc[0]); i++) {
		st = error_desc[i].status;
		if (has_status(op->errors, st) || st == 500 ||
		    ((st == 401 || st == 429) && authenticated)) {
			snprintf(key, sizeof(key), "%d", st);
			openapi_put(o, key, error_response(st,
			    error_desc[i].desc));
		}
	}
	return o;
}

/* Either scheme will do. */
static json_object *
security(void)
{
	json_object	*arr, *o;

	arr = json_object_new_array();
	o = json_object_new_object();
	openapi_put(o, "HTTPBearer", json_object_new_array());
	openapi_push(arr, o);
	o = json_object_new_object();
	openapi_put(o, "APIKeyHeader", json_object_new_array());
	openapi_push(arr, o);
	return arr;
}

static json_object *
operation(const struct op *op)
{
	json_object	*o, *t, *params;
	int		 authenticated = strncmp(op->path, "/v1/", 4) == 0;

	o = json_object_new_object();
	t = json_object_new_array();
	openapi_push(t, openapi_str(op->tag));
	openapi_put(o, "tags", t);
	openapi_put(o, "summary", openapi_str(op->summary));
	if (op->desc != NULL)
		openapi_put(o, "description", openapi_str(op->desc));
	openapi_put(o, "operationId", openapi_str(op->id));
	params = parameters(op);
	if (params != NULL && json_object_array_length(params) > 0)
		openapi_put(o, "parameters", params);
	else
		json_object_put(params);
	if (op->body != NULL)
		openapi_put(o, "requestBody", request_body(op));
	openapi_put(o, "responses", responses(op, authenticated));
	if (authenticated)
		openapi_put(o, "security", security());
	return o;
}

static json_object *
paths(void)
{
	json_object	*o, *item = NULL;
	size_t		 i;

	o = json_object_new_object();
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		/* Operations on one path are next to each other. */
		if (i == 0 || strcmp(ops[i].path, ops[i - 1].path) != 0) {
			item = json_object_new_object();
			openapi_put(o, ops[i].path, item);
		}
		openapi_put(item, ops[i].method, operation(&ops[i]));
	}
	return o;
}

static json_object *
security_schemes(void)
{
	json_object	*o, *s;

	o = json_object_new_object();
	s = json_object_new_object();
	openapi_put(s, "type", openapi_str("http"));
	openapi_put(s, "scheme", openapi_str("bearer"));
	openapi_put(s, "description", openapi_str(
	    "Authorization: Bearer <key>.  When present, it is the only "
	    "credential looked at."));
	openapi_put(o, "HTTPBearer", s);
	s = json_object_new_object();
	openapi_put(s, "type", openapi_str("apiKey"));
	openapi_put(s, "in", openapi_str("header"));
	openapi_put(s, "name", openapi_str("X-API-Key"));
	openapi_put(s, "description", openapi_str(
	    "X-API-Key: <key>, used when there is no Bearer credential."));
	openapi_put(o, "APIKeyHeader", s);
	return o;
}

static json_object *
document(void)
{
	json_object	*doc, *info, *lic, *tl, *t, *comp;
	size_t		 i;

	doc = json_object_new_object();
	openapi_put(doc, "openapi", openapi_str("3.1.0"));
	info = json_object_new_object();
	openapi_put(info, "title", openapi_str("agent-sandbox"));
	openapi_put(info, "description", openapi_str(
	    "Disposable Docker sandboxes for AI agents: create a sandbox, "
	    "run commands, read and write files, snapshot /workspace, roll "
	    "back and fork.  Every /v1 route needs an API key."));
	openapi_put(info, "version", openapi_str(PACKAGE_VERSION));
	lic = json_object_new_object();
	openapi_put(lic, "name", openapi_str("Apache-2.0"));
	openapi_put(lic, "identifier", openapi_str("Apache-2.0"));
	openapi_put(info, "license", lic);
	openapi_put(doc, "info", info);
	tl = json_object_new_array();
	for (i = 0; i < sizeof(tags) / sizeof(tags[0]); i++) {
		t = json_object_new_object();
		openapi_put(t, "name", openapi_str(tags[i].name));
		openapi_put(t, "description", openapi_str(tags[i].desc));
		openapi_push(tl, t);
	}
	openapi_put(doc, "tags", tl);
	openapi_put(doc, "paths", paths());
	comp = json_object_new_object();
	openapi_put(comp, "schemas", openapi_schemas());
	openapi_put(comp, "securitySchemes", security_schemes());
	openapi_put(doc, "components", comp);
	return doc;
}

/* The text, in a buffer that grows. */
struct text {
	char	*p;
	size_t	 len;
	size_t	 size;
	int	 failed;
};

static void
text_add(struct text *t, const char *s, size_t n)
{
	char	*np;
	size_t	 want;

	if (t->failed)
		return;
	if (n > DOC_MAX || t->len + n >= DOC_MAX) {
		t->failed = 1;
		return;
	}
	if (t->len + n >= t->size) {
		want = t->size == 0 ? 64 * 1024 : t->size * 2;
		while (want <= t->len + n)
			want *= 2;
		if ((np = realloc(t->p, want)) == NULL) {
			t->failed = 1;
			return;
		}
		t->p = np;
		t->size = want;
	}
	memcpy(t->p + t->len, s, n);
	t->len += n;
	t->p[t->len] = '\0';
}

static void
text_str(struct text *t, const char *s)
{
	text_add(t, s, strlen(s));
}

static void
text_indent(struct text *t, int depth)
{
	int	 i;

	for (i = 0; i < depth; i++)
		text_add(t, "  ", 2);
}

/* A JSON string the way Python writes it (non-ASCII kept as is). */
static void
text_quoted(struct text *t, const char *s)
{
	char	 esc[8];

	text_add(t, "\"", 1);
	for (; *s != '\0'; s++) {
		switch (*s) {
		case '"':
			text_str(t, "\\\"");
			break;
		case '\\':
			text_str(t, "\\\\");
			break;
		case '\n':
			text_str(t, "\\n");
			break;
		case '\r':
			text_str(t, "\\r");
			break;
		case '\t':
			text_str(t, "\\t");
			break;
		default:
			if ((unsigned char)*s < 0x20) {
				snprintf(esc, sizeof(esc), "\\u%04x",
				    (unsigned char)*s);
				text_str(t, esc);
			} else
				text_add(t, s, 1);
		}
	}
	text_add(t, "\"", 1);
}

static void
text_value(struct text *t, json_object *o, int depth)
{
	struct json_object_iterator	 it, end;
	char				 num[32];
	size_t				 i, n;

	switch (json_object_get_type(o)) {
	case json_type_null:
		text_str(t, "null");
		break;
	case json_type_boolean:
		text_str(t, json_object_get_boolean(o) ? "true" : "false");
		break;
	case json_type_int:
		snprintf(num, sizeof(num), "%lld",
		    (long long)json_object_get_int64(o));
		text_str(t, num);
		break;
	case json_type_string:
		text_quoted(t, json_object_get_string(o));
		break;
	case json_type_array:
		if ((n = json_object_array_length(o)) == 0) {
			text_str(t, "[]");
			break;
		}
		text_str(t, "[\n");
		for (i = 0; i < n; i++) {
			text_indent(t, depth + 1);
			text_value(t, json_object_array_get_idx(o, i),
			    depth + 1);
			text_str(t, i + 1 < n ? ",\n" : "\n");
		}
		text_indent(t, depth);
		text_str(t, "]");
		break;
	case json_type_object:
		if (json_object_object_length(o) == 0) {
			text_str(t, "{}");
			break;
		}
		text_str(t, "{\n");
		it = json_object_iter_begin(o);
		end = json_object_iter_end(o);
		while (!json_object_iter_equal(&it, &end)) {
			text_indent(t, depth + 1);
			text_quoted(t, json_object_iter_peek_name(&it));
			text_str(t, ": ");
			text_value(t, json_object_iter_peek_value(&it),
			    depth + 1);
			json_object_iter_next(&it);
			text_str(t, json_object_iter_equal(&it, &end) ?
			    "\n" : ",\n");
		}
		text_indent(t, depth);
		text_str(t, "}");
		break;
	default:
		/* No floats: every number in the document is an integer. */
		t->failed = 1;
	}
}

char *
openapi_document(size_t *len)
{
	struct text	 t = { NULL, 0, 0, 0 };
	json_object	*doc;

	(void)openapi_failed();
	doc = document();
	if (openapi_failed() || doc == NULL) {
		json_object_put(doc);
		return NULL;
	}
	text_value(&t, doc, 0);
	text_str(&t, "\n");
	json_object_put(doc);
	if (t.failed) {
		free(t.p);
		return NULL;
	}
	if (len != NULL)
		*len = t.len;
	return t.p;
}

static int
openapi_usage(void)
{
	fprintf(stderr, "usage: agent-sandbox openapi [-o FILE | "
	    "--output FILE]\n");
	return 2;
}

static int
write_all(FILE *fp, const char *path, const char *text, size_t len)
{
	if (fwrite(text, 1, len, fp) != len || fflush(fp) == EOF) {
		fprintf(stderr, "agent-sandbox: %s: %s\n", path,
		    strerror(errno));
		return -1;
	}
	return 0;
}

/* argv[0] is "openapi". */
int
openapi_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	const char	*output = NULL;
	char		*text;
	size_t		 len;
	FILE		*fp;
	int		 ch, rc = 0;

	optind = 1;
	opterr = 0;	/* getopt would name argv[0], "openapi" */
	while ((ch = getopt_long(argc, argv, "o:", longopts, NULL)) != -1) {
		switch (ch) {
		case 'o':
			if (*optarg == '\0')
				return openapi_usage();
			output = optarg;
			break;
		default:
			return openapi_usage();
		}
	}
	if (optind != argc)
		return openapi_usage();
	if ((text = openapi_document(&len)) == NULL) {
		fprintf(stderr, "agent-sandbox: cannot build the OpenAPI "
		    "document: out of memory\n");
		return 1;
	}
	if (output == NULL || strcmp(output, "-") == 0) {
		if (write_all(stdout, "stdout", text, len) == -1)
			rc = 1;
	} else if ((fp = fopen(output, "w")) == NULL) {
		fprintf(stderr, "agent-sandbox: %s: %s\n", output,
		    strerror(errno));
		rc = 1;
	} else {
		if (write_all(fp, output, text, len) == -1)
			rc = 1;
		if (fclose(fp) == EOF && rc == 0) {
			fprintf(stderr, "agent-sandbox: %s: %s\n", output,
			    strerror(errno));
			rc = 1;
		}
	}
	free(text);
	return rc;
}
