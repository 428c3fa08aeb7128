/*
 * The schemas of the OpenAPI document (components.schemas): request
 * bodies with the bounds that give a 422 (API.md §4), and the objects
 * the server answers with (API.md §3).  Field order is the order of the
 * JSON the server writes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "openapi.h"

#define REQ	OPENAPI_REQUIRED
#define MIN	OPENAPI_MIN
#define XMIN	OPENAPI_XMIN
#define MAXLEN	OPENAPI_MAXLEN
#define MAXITEMS	OPENAPI_MAXITEMS
#define ONEOF	OPENAPI_ONEOF

#define TYPE_MAX	64

struct schema {
	const char			*name;
	const char			*desc;
	int				 closed;	/* no other keys */
	const struct openapi_field	*fields;
};

static const struct openapi_field create_fields[] = {
	{ "image", "string?", 0, 0, NULL, NULL, "null",
	    "Image reference.  Null or empty: the server's default image.  "
	    "Must match the server's allowlist (else 403)." },
	{ "cpus", "number?", XMIN, 0, NULL, NULL, "null",
	    "CPU limit in cores; null: the server default.  Above the "
	    "server's maximum: 400." },
	{ "memory_mb", "integer?", MIN, 16, NULL, NULL, "null",
	    "Memory limit in MiB (swap disabled); null: the server default.  "
	    "Above the server's maximum: 400." },
	{ "pids_limit", "integer?", MIN, 8, NULL, NULL, "null",
	    "Maximum number of processes; null: the server default.  Above "
	    "the server's maximum: 400." },
	{ "network", "boolean|#NetworkPolicy", ONEOF, 0, NULL, NULL, "false",
	    "false: no network, only a loopback interface.  true: what the "
	    "server's AGENT_SANDBOX_NETWORK_TRUE says, by default the policy "
	    "{\"mode\": \"public\"} (any public address, through the egress "
	    "proxy), or the reference's shared bridge network (bridge).  An "
	    "object: that egress policy (docs/rest-api.md \"Network\").  "
	    "Network access the server does not allow: 403; a bad policy, or "
	    "one this server cannot enforce (gVisor): 400." },
	{ "read_only_rootfs", "boolean", 0, 0, NULL, NULL, "true",
	    "Mount the image's filesystem read-only.  /workspace and /tmp "
	    "stay writable." },
	{ "timeout_seconds", "integer?", MIN, 1, NULL, NULL, "null",
	    "Time to live in seconds; null: the server default.  Above the "
	    "server's maximum: 400." },
	{ "env", "{string", 0, 0, NULL, NULL, "{}",
	    "Environment of every command.  A name that is empty or holds "
	    "'=' or NUL, or a value holding NUL: 400." },
	{ "labels", "null|{string", 0, 0, NULL, NULL, "null",
	    "Labels: at most 32 {key: value}; a key is 1-63 characters of "
	    "A-Z a-z 0-9 . _ / - starting with a letter or a digit, a value "
	    "at most 255 bytes of UTF-8 without control characters (else "
	    "400).  GET /v1/sandboxes?label=k=v finds sandboxes by them." },
	{ NULL }
};

static const struct openapi_field exec_fields[] = {
	{ "command", "string|[string", REQ, 0, NULL, NULL, NULL,
	    "A string runs under /bin/sh -c; a list of strings is the argv, "
	    "run without a shell.  Empty: 400." },
	{ "env", "{string", 0, 0, NULL, NULL, "{}",
	    "Variables added to the sandbox's environment for this "
	    "command." },
	{ "workdir", "string?", 0, 0, NULL, NULL, "null",
	    "Working directory; relative paths are under /workspace.  Null "
	    "or empty: /workspace." },
	{ "timeout_seconds", "number?", XMIN, 0, NULL, NULL, "null",
	    "Seconds before the command and all its processes are killed; "
	    "null: the server default.  Above the server's maximum: 400." },
	{ NULL }
};

static const struct openapi_field process_req_fields[] = {
	{ "command", "string|[string", REQ, 0, NULL, NULL, NULL,
	    "As for exec: a string runs under /bin/sh -c.  Empty: 400." },
	{ "env", "{string", 0, 0, NULL, NULL, "{}",
	    "Variables added to the sandbox's environment." },
	{ "workdir", "string?", 0, 0, NULL, NULL, "null",
	    "Working directory; null: /workspace." },
	{ "timeout_seconds", "number?", XMIN, 0, NULL, NULL, "null",
	    "Killed this long after its start; at most the exec maximum "
	    "(else 400).  Null: runs until the sandbox ends." },
	{ "tty", "boolean", 0, 0, NULL, NULL, "false",
	    "Run it on a terminal (stdout and stderr are then one stream, "
	    "stdout)." },
	{ "cols", "integer?", MIN, 1, NULL, NULL, "null",
	    "The tty's columns, at most 1000; only with tty (else 400).  "
	    "Null: 80." },
	{ "rows", "integer?", MIN, 1, NULL, NULL, "null",
	    "The tty's rows, at most 1000; only with tty (else 400).  Null: "
	    "24." },
	{ "stdin", "boolean", 0, 0, NULL, NULL, NULL,
	    "Keep its stdin open for .../stdin and attachments; false: "
	    "stdin is empty.  Default: tty." },
	{ "client_id", "string?", 0, 0, NULL, NULL, "null",
	    "1 to 128 bytes: makes a retry safe (the same body answers the "
	    "first process, 200)." },
	{ NULL }
};

static const struct openapi_field signal_fields[] = {
	{ "signal", "string", 0, 0, NULL, "TERM INT KILL HUP", "\"TERM\"",
	    "The signal, sent to the process's whole process group." },
	{ NULL }
};

static const struct openapi_field resize_fields[] = {
	{ "cols", "integer", REQ | MIN, 1, NULL, NULL, NULL,
	    "Columns, at most 1000." },
	{ "rows", "integer", REQ | MIN, 1, NULL, NULL, NULL,
	    "Rows, at most 1000." },
	{ NULL }
};

static const struct openapi_field timeout_fields[] = {
	{ "timeout_seconds", "integer", REQ | MIN, 1, NULL, NULL, NULL,
	    "New time to live, counted from now.  Above the server's "
	    "maximum: 400." },
	{ NULL }
};

static const struct openapi_field snapshot_req_fields[] = {
	{ "name", "string?", MAXLEN, 128, NULL, NULL, "null",
	    "A label for the snapshot." },
	{ NULL }
};

static const struct openapi_field rollback_fields[] = {
	{ "snapshot_id", "string", REQ, 0, NULL, NULL, NULL,
	    "The snapshot whose files replace /workspace.  It may come from "
	    "any sandbox." },
	{ NULL }
};

static const struct openapi_field fork_fields[] = {
	{ "timeout_seconds", "integer?", MIN, 1, NULL, NULL, "null",
	    "Time to live; null: the server default (not the source "
	    "sandbox's)." },
	{ "network", "null|boolean|#NetworkPolicy", ONEOF, 0, NULL, NULL,
	    "null",
	    "Override the source sandbox's network setting: a boolean or an "
	    "egress policy, as for create.  Null or absent: the snapshot's "
	    "(its source sandbox's when it was taken), policy included." },
	{ "cpus", "number?", XMIN, 0, NULL, NULL, "null",
	    "Override the source sandbox's CPU limit." },
	{ "memory_mb", "integer?", MIN, 16, NULL, NULL, "null",
	    "Override the source sandbox's memory limit." },
	{ "labels", "null|{string", 0, 0, NULL, NULL, "null",
	    "The new sandbox's labels, as for create: none are taken from "
	    "the source sandbox." },
	{ NULL }
};

static const struct openapi_field patch_fields[] = {
	{ "labels", "null|{string|null", 0, 0, NULL, NULL, NULL,
	    "A JSON merge patch (RFC 7396) of the labels: a string sets "
	    "that label, null removes it, keys not named are kept; null for "
	    "the whole object removes every label.  The result holds at "
	    "most 32 (else 400)." },
	{ NULL }
};

static const struct openapi_field stats_cpu_fields[] = {
	{ "usage_seconds", "number", REQ, 0, NULL, NULL, NULL,
	    "CPU time used since the sandbox started." },
	{ "percent", "number?", REQ, 0, NULL, NULL, NULL,
	    "Current use in percent of one CPU, when Docker gives a "
	    "previous sample; its one-shot stats do not, so null." },
	{ NULL }
};

static const struct openapi_field stats_memory_fields[] = {
	{ "usage_bytes", "integer", REQ, 0, NULL, NULL, NULL,
	    "Memory in use, less the inactive file cache (as docker stats "
	    "shows it)." },
	{ "limit_bytes", "integer", REQ, 0, NULL, NULL, NULL,
	    "The sandbox's memory limit." },
	{ NULL }
};

static const struct openapi_field stats_pids_fields[] = {
	{ "current", "integer", REQ, 0, NULL, NULL, NULL,
	    "Processes and threads in the sandbox now." },
	{ "limit", "integer?", REQ, 0, NULL, NULL, NULL,
	    "The sandbox's pids limit; null: none." },
	{ NULL }
};

static const struct openapi_field stats_workspace_fields[] = {
	{ "bytes", "integer", REQ, 0, NULL, NULL, NULL,
	    "Disk space /workspace takes (du -sk, in whole KiB, of what the "
	    "sandbox user can read)." },
	{ NULL }
};

static const struct openapi_field stats_network_fields[] = {
	{ "rx_bytes", "integer", REQ, 0, NULL, NULL, NULL,
	    "Bytes received, over every interface." },
	{ "tx_bytes", "integer", REQ, 0, NULL, NULL, NULL,
	    "Bytes sent, over every interface." },
	{ NULL }
};

static const struct openapi_field stats_fields[] = {
	{ "status", "string", REQ, 0, NULL, "running stopped", NULL,
	    "Whether the sandbox's container runs.  A stopped one has no "
	    "figures: every group is null." },
	{ "cpu", "null|#StatsCpu", REQ, 0, NULL, NULL, NULL, "CPU use." },
	{ "memory", "null|#StatsMemory", REQ, 0, NULL, NULL, NULL,
	    "Memory use and limit." },
	{ "pids", "null|#StatsPids", REQ, 0, NULL, NULL, NULL,
	    "Processes and their limit." },
	{ "workspace", "null|#StatsWorkspace", REQ, 0, NULL, NULL, NULL,
	    "The size of /workspace; null when the image has no /bin/sh or "
	    "du to measure it with." },
	{ "network", "null|#StatsNetwork", REQ, 0, NULL, NULL, NULL,
	    "Network bytes; null for a sandbox without a network." },
	{ NULL }
};

static const struct openapi_field network_policy_fields[] = {
	{ "mode", "string", REQ, 0, NULL, "none public allowlist bridge", NULL,
	    "none: no network.  public: any public address, any port.  "
	    "allowlist: only what allow names, and of that only public "
	    "addresses.  bridge appears only in the answer of GET, for a "
	    "sandbox on the shared bridge network, which no policy filters; "
	    "no request may give it." },
	{ "allow", "[string", MAXITEMS, 256, NULL, NULL, NULL,
	    "Only with mode allowlist, and needed there.  Each entry is a "
	    "host name (pypi.org, matched case-insensitively; ASCII only: "
	    "give the xn-- form of an internationalised name), *.name (any "
	    "name below it, not itself), an IPv4 address or CIDR "
	    "(203.0.113.0/24), or an IPv6 address or CIDR in brackets "
	    "([2001:db8::/32]), each optionally followed by :port (1-65535) "
	    "for that port only; at most 261 bytes, no repeats, a range "
	    "given by its first address.  Answers give each in its "
	    "canonical form (names lowercase, a /32 or /128 as the bare "
	    "address), in the given order." },
	{ NULL }
};

static const struct openapi_field network_log_entry_fields[] = {
	{ "time", "date-time", REQ, 0, NULL, NULL, NULL,
	    "When the connection was asked for (UTC, milliseconds)." },
	{ "host", "string", REQ, 0, NULL, NULL, NULL,
	    "The host the client asked for, a name or an address, as given "
	    "(ill-formed UTF-8 as U+FFFD)." },
	{ "port", "integer", REQ, 0, NULL, NULL, NULL,
	    "The port asked for." },
	{ "address", "string?", REQ, 0, NULL, NULL, NULL,
	    "The address connected to, or refused; null when there was none "
	    "(the name did not resolve, or was refused before)." },
	{ "allowed", "boolean", REQ, 0, NULL, NULL, NULL,
	    "The policy let it through." },
	{ "reason", "string?", REQ, 0, NULL, NULL, NULL,
	    "Why it was refused (e.g. the range, as private or cloud "
	    "metadata, or not on the allowlist); null when allowed." },
	{ "bytes_sent", "integer", REQ, 0, NULL, NULL, NULL,
	    "Bytes the sandbox sent upstream, once the connection ended (0 "
	    "until then)." },
	{ "bytes_received", "integer", REQ, 0, NULL, NULL, NULL,
	    "Bytes upstream sent to the sandbox, once the connection ended "
	    "(0 until then)." },
	{ NULL }
};

static const struct openapi_field network_log_fields[] = {
	{ "entries", "[#NetworkLogEntry", REQ, 0, NULL, NULL, NULL,
	    "The sandbox's recent connections through the egress proxy, "
	    "oldest first, at most AGENT_SANDBOX_EGRESS_LOG_SIZE (256 by "
	    "default)." },
	{ "dropped", "integer", REQ, 0, NULL, NULL, NULL,
	    "Entries dropped, oldest first, to make room for newer "
	    "ones." },
	{ NULL }
};

static const struct openapi_field sandbox_fields[] = {
	{ "id", "string", REQ, 0, NULL, NULL, NULL,
	    "sb_ followed by 16 lowercase hex digits." },
	{ "status", "string", REQ, 0, NULL, "running stopped", NULL,
	    "Whether the sandbox's container runs." },
	{ "status_reason", "string?", REQ, 0, NULL,
	    "exited oom_killed container_removed", NULL,
	    "Why a stopped sandbox is stopped: its container's main process "
	    "ended (exited), ended after an out-of-memory kill in the "
	    "container since it started (oom_killed), or the container is "
	    "gone (container_removed); null while it runs." },
	{ "image", "string", REQ, 0, NULL, NULL, NULL,
	    "Image the sandbox was created from." },
	{ "cpus", "number", REQ, 0, NULL, NULL, NULL,
	    "CPU limit in cores." },
	{ "memory_mb", "integer", REQ, 0, NULL, NULL, NULL,
	    "Memory limit in MiB." },
	{ "pids_limit", "integer", REQ, 0, NULL, NULL, NULL,
	    "Maximum number of processes." },
	{ "network", "boolean", REQ, 0, NULL, NULL, NULL,
	    "The sandbox can reach something: it is on the shared bridge, "
	    "or its egress policy's mode is not none "
	    "(GET .../network tells which)." },
	{ "read_only_rootfs", "boolean", REQ, 0, NULL, NULL, NULL,
	    "Image filesystem mounted read-only." },
	{ "created_at", "date-time", REQ, 0, NULL, NULL, NULL,
	    "Creation time (UTC)." },
	{ "expires_at", "date-time", REQ, 0, NULL, NULL, NULL,
	    "When the reaper destroys the sandbox (UTC)." },
	{ "source_snapshot_id", "string?", REQ, 0, NULL, NULL, NULL,
	    "Snapshot the sandbox was forked from or last rolled back to." },
	{ "labels", "{string", REQ, 0, NULL, NULL, NULL,
	    "The sandbox's labels ({} when none)." },
	{ NULL }
};

static const struct openapi_field sandbox_list_fields[] = {
	{ "sandboxes", "[#Sandbox", REQ, 0, NULL, NULL, NULL,
	    "Every sandbox, oldest first." },
	{ NULL }
};

static const struct openapi_field exec_result_fields[] = {
	{ "stdout", "string", REQ, 0, NULL, NULL, NULL,
	    "Standard output, decoded as UTF-8 (invalid bytes become "
	    "U+FFFD)." },
	{ "stderr", "string", REQ, 0, NULL, NULL, NULL,
	    "Standard error, decoded the same way." },
	{ "exit_code", "integer", REQ, 0, NULL, NULL, NULL,
	    "Exit status (128+N after signal N; -1 if none was reported)." },
	{ "timed_out", "boolean", REQ, 0, NULL, NULL, NULL,
	    "The timeout fired and the command was killed." },
	{ "truncated", "boolean", REQ, 0, NULL, NULL, NULL,
	    "Output went past the server's capture limit (stdout and stderr "
	    "together) and was cut." },
	{ "duration_ms", "integer", REQ, 0, NULL, NULL, NULL,
	    "Wall time in milliseconds." },
	{ NULL }
};

static const struct openapi_field exec_event_fields[] = {
	{ "type", "string", REQ, 0, NULL, "stdout stderr exit", NULL,
	    "Output of one stream, or the end of the command (always the "
	    "last line)." },
	{ "data", "string", 0, 0, NULL, NULL, NULL,
	    "Output text (stdout and stderr events)." },
	{ "exit_code", "integer", 0, 0, NULL, NULL, NULL,
	    "Exit status (exit event)." },
	{ "timed_out", "boolean", 0, 0, NULL, NULL, NULL,
	    "The timeout fired (exit event)." },
	{ "duration_ms", "integer", 0, 0, NULL, NULL, NULL,
	    "Wall time in milliseconds (exit event)." },
	{ NULL }
};

static const struct openapi_field process_fields[] = {
	{ "id", "string", REQ, 0, NULL, NULL, NULL,
	    "proc_ followed by 16 lowercase hex digits." },
	{ "sandbox_id", "string", REQ, 0, NULL, NULL, NULL,
	    "The sandbox it runs in." },
	{ "command", "string|[string", REQ, 0, NULL, NULL, NULL,
	    "As given." },
	{ "workdir", "string", REQ, 0, NULL, NULL, NULL,
	    "Its working directory, normalized." },
	{ "status", "string", REQ, 0, NULL,
	    "running exited killed timed_out lost", NULL,
	    "running; exited by itself; killed after a signal or DELETE; "
	    "timed_out at its timeout_seconds; lost when the server can no "
	    "longer follow its output." },
	{ "running", "boolean", REQ, 0, NULL, NULL, NULL,
	    "Docker still runs it (a lost one may)." },
	{ "exit_code", "integer?", REQ, 0, NULL, NULL, NULL,
	    "Once it ended and Docker said so (128+N after signal N)." },
	{ "started_at", "date-time", REQ, 0, NULL, NULL, NULL,
	    "When it started (UTC)." },
	{ "ended_at", "date-time?", REQ, 0, NULL, NULL, NULL,
	    "When it ended (UTC)." },
	{ "timeout_seconds", "number?", REQ, 0, NULL, NULL, NULL,
	    "Killed this long after its start; null: runs until the "
	    "sandbox ends." },
	{ "tty", "boolean", REQ, 0, NULL, NULL, NULL, "It has a tty." },
	{ "stdin", "boolean", REQ, 0, NULL, NULL, NULL,
	    "Its stdin was kept open." },
	{ "cols", "integer?", REQ, 0, NULL, NULL, NULL, "The tty's size." },
	{ "rows", "integer?", REQ, 0, NULL, NULL, NULL, "The tty's size." },
	{ "client_id", "string?", REQ, 0, NULL, NULL, NULL,
	    "The client_id it was started with." },
	{ "output_bytes", "integer", REQ, 0, NULL, NULL, NULL,
	    "All output so far: the seq of its last byte." },
	{ "kept_bytes", "integer", REQ, 0, NULL, NULL, NULL,
	    "Of which still kept." },
	{ "dropped_bytes", "integer", REQ, 0, NULL, NULL, NULL,
	    "Of which dropped from the ring." },
	{ NULL }
};

static const struct openapi_field process_list_fields[] = {
	{ "processes", "[#Process", REQ, 0, NULL, NULL, NULL,
	    "In the order they were started." },
	{ NULL }
};

static const struct openapi_field process_event_fields[] = {
	{ "type", "string", REQ, 0, NULL, "stdout stderr gap exit", NULL,
	    "Output of one stream, bytes missed, or the end (always last)." },
	{ "seq", "integer", 0, 0, NULL, NULL, NULL,
	    "Output bytes (both streams) up to and including the event's "
	    "last; on exit, the last of all.  Pass it as after to go on." },
	{ "data", "string", 0, 0, NULL, NULL, NULL,
	    "The output: UTF-8 text, or base64 with encoding=base64." },
	{ "dropped_bytes", "integer", 0, 0, NULL, NULL, NULL,
	    "Bytes missed (gap event)." },
	{ "status", "string", 0, 0, NULL,
	    "running exited killed timed_out lost", NULL,
	    "The process's status (exit event)." },
	{ "exit_code", "integer?", 0, 0, NULL, NULL, NULL,
	    "Exit status (exit event)." },
	{ "ended_at", "date-time?", 0, 0, NULL, NULL, NULL,
	    "When it ended (exit event)." },
	{ NULL }
};

static const struct openapi_field attach_token_fields[] = {
	{ "token", "string", REQ, 0, NULL, NULL, NULL,
	    "43 characters of base64url; pass it as ?token= to .../attach." },
	{ "expires_at", "date-time", REQ, 0, NULL, NULL, NULL,
	    "When it stops being good (UTC)." },
	{ NULL }
};

static const struct openapi_field file_info_fields[] = {
	{ "name", "string", REQ, 0, NULL, NULL, NULL, "Base name." },
	{ "path", "string", REQ, 0, NULL, NULL, NULL,
	    "Absolute, normalized path." },
	{ "type", "string", REQ, 0, NULL, "file directory symlink other",
	    NULL, "Kind of entry; symbolic links are not followed." },
	{ "size", "integer", REQ, 0, NULL, NULL, NULL, "Size in bytes." },
	{ "modified_at", "date-time", REQ, 0, NULL, NULL, NULL,
	    "Last modification (UTC)." },
	{ NULL }
};

static const struct openapi_field file_list_fields[] = {
	{ "path", "string", REQ, 0, NULL, NULL, NULL,
	    "The normalized directory." },
	{ "entries", "[#FileInfo", REQ, 0, NULL, NULL, NULL,
	    "Its entries sorted by name, dotfiles included." },
	{ NULL }
};

static const struct openapi_field snapshot_fields[] = {
	{ "id", "string", REQ, 0, NULL, NULL, NULL,
	    "snap_ followed by 16 lowercase hex digits." },
	{ "sandbox_id", "string", REQ, 0, NULL, NULL, NULL,
	    "Sandbox it was taken from (which may no longer exist)." },
	{ "name", "string?", REQ, 0, NULL, NULL, NULL, "Its label." },
	{ "image", "string", REQ, 0, NULL, NULL, NULL,
	    "Image of the source sandbox." },
	{ "size_bytes", "integer", REQ, 0, NULL, NULL, NULL,
	    "Size of the stored tar file." },
	{ "created_at", "date-time", REQ, 0, NULL, NULL, NULL,
	    "When it was taken (UTC)." },
	{ NULL }
};

static const struct openapi_field snapshot_list_fields[] = {
	{ "snapshots", "[#Snapshot", REQ, 0, NULL, NULL, NULL,
	    "Snapshots, oldest first." },
	{ NULL }
};

static const struct openapi_field health_fields[] = {
	{ "status", "string", REQ, 0, NULL, "ok", NULL, "Always ok." },
	{ "backend", "string", REQ, 0, NULL, NULL, NULL,
	    "Name of the backend (docker)." },
	{ "version", "string", REQ, 0, NULL, NULL, NULL,
	    "Server version." },
	{ NULL }
};

static const struct openapi_field error_fields[] = {
	{ "code", "string", REQ, 0, NULL,
	    "invalid_request unauthorized forbidden not_found "
	    "method_not_allowed conflict payload_too_large limit_exceeded "
	    "internal_error backend_error insufficient_storage unavailable "
	    "backend_timeout http_error quota_exceeded",
	    NULL,
	    "Machine-readable error code." },
	{ "message", "string", REQ, 0, NULL, NULL, NULL,
	    "What went wrong." },
	{ NULL }
};

static const struct openapi_field error_response_fields[] = {
	{ "error", "#Error", REQ, 0, NULL, NULL, NULL, "The error." },
	{ NULL }
};

static const struct openapi_field validation_error_fields[] = {
	{ "type", "string", REQ, 0, NULL, NULL, NULL,
	    "Kind of violation, e.g. missing, extra_forbidden, "
	    "greater_than." },
	{ "loc", "[string|integer", REQ, 0, NULL, NULL, NULL,
	    "Where: \"body\" or \"query\", then the field." },
	{ "msg", "string", REQ, 0, NULL, NULL, NULL, "What is wrong." },
	{ "input", "any", 0, 0, NULL, NULL, NULL, "The offending value." },
	{ "ctx", "{any", 0, 0, NULL, NULL, NULL,
	    "The bound that was violated, if any." },
	{ NULL }
};

static const struct openapi_field http_validation_fields[] = {
	{ "detail", "[#ValidationError", REQ, 0, NULL, NULL, NULL,
	    "One entry per violation." },
	{ NULL }
};

static const struct schema schemas[] = {
	{ "CreateSandboxRequest", "Body of POST /v1/sandboxes.", 1,
	    create_fields },
	{ "ExecRequest", "Body of the exec routes.", 1, exec_fields },
	{ "ProcessRequest", "Body of POST "
	    "/v1/sandboxes/{sandbox_id}/processes.", 1, process_req_fields },
	{ "SignalRequest", "Optional body of POST .../processes/{process_id}"
	    "/signal.", 1, signal_fields },
	{ "ResizeRequest", "Body of POST .../processes/{process_id}/resize.",
	    1, resize_fields },
	{ "TimeoutRequest", "Body of POST /v1/sandboxes/{sandbox_id}/timeout.",
	    1, timeout_fields },
	{ "SnapshotRequest", "Optional body of POST "
	    "/v1/sandboxes/{sandbox_id}/snapshots.", 1, snapshot_req_fields },
	{ "RollbackRequest", "Body of POST "
	    "/v1/sandboxes/{sandbox_id}/rollback.", 1, rollback_fields },
	{ "ForkRequest", "Optional body of POST "
	    "/v1/snapshots/{snapshot_id}/fork: overrides of the source "
	    "sandbox's settings.", 1, fork_fields },
	{ "PatchSandboxRequest", "Body of PATCH /v1/sandboxes/{sandbox_id}: "
	    "only the labels can change.", 1, patch_fields },
	{ "Sandbox", "A sandbox: one container and its /workspace volume.",
	    0, sandbox_fields },
	{ "SandboxStats", "What a sandbox uses now; a group is null when "
	    "its figures are unknown.", 0, stats_fields },
	{ "StatsCpu", "CPU use.", 0, stats_cpu_fields },
	{ "StatsMemory", "Memory use.", 0, stats_memory_fields },
	{ "StatsPids", "Processes.", 0, stats_pids_fields },
	{ "StatsWorkspace", "The size of /workspace.", 0,
	    stats_workspace_fields },
	{ "StatsNetwork", "Network use.", 0, stats_network_fields },
	{ "NetworkPolicy", "A sandbox's egress policy: what its network may "
	    "reach, through the egress proxy.  Canonical in answers.", 1,
	    network_policy_fields },
	{ "NetworkLog", "A sandbox's recent egress connections.", 0,
	    network_log_fields },
	{ "NetworkLogEntry", "One connection asked of the egress proxy.", 0,
	    network_log_entry_fields },
	{ "SandboxList", "Every sandbox.", 0, sandbox_list_fields },
	{ "ExecResult", "Outcome of a command run to completion.", 1,
	    exec_result_fields },
	{ "ExecEvent", "One line of an exec stream.", 1,
	    exec_event_fields },
	{ "Process", "A process that outlives the request that started it.",
	    0, process_fields },
	{ "ProcessList", "A sandbox's processes.", 0, process_list_fields },
	{ "ProcessEvent", "One line of a process's output.", 1,
	    process_event_fields },
	{ "AttachToken", "A token for one attachment to one process.", 0,
	    attach_token_fields },
	{ "FileInfo", "A file or directory entry.", 1, file_info_fields },
	{ "FileList", "The entries of a directory.", 0, file_list_fields },
	{ "Snapshot", "A stored copy of a sandbox's /workspace.", 0,
	    snapshot_fields },
	{ "SnapshotList", "Snapshots.", 0, snapshot_list_fields },
	{ "Health", "Answer of GET /healthz.", 0, health_fields },
	{ "Error", "Code and message of an error.", 0, error_fields },
	{ "ErrorResponse", "Every error but request validation.", 0,
	    error_response_fields },
	{ "ValidationError", "One violation of a request's schema.", 0,
	    validation_error_fields },
	{ "HTTPValidationError", "Request validation failed (422).", 0,
	    http_validation_fields },
};

static int	build_failed;

void
openapi_put(json_object *obj, const char *key, json_object *val)
{
	if (obj == NULL || val == NULL ||
	    json_object_object_add(obj, key, val) == -1) {
		build_failed = 1;
		json_object_put(val);
	}
}

void
openapi_push(json_object *arr, json_object *val)
{
	if (arr == NULL || val == NULL ||
	    json_object_array_add(arr, val) == -1) {
		build_failed = 1;
		json_object_put(val);
	}
}

json_object *
openapi_str(const char *s)
{
	return json_object_new_string(s);
}

int
openapi_failed(void)
{
	int	 failed = build_failed;

	build_failed = 0;
	return failed;
}

static json_object *
type_schema(const char *type);

/*
 * "T|U": anyOf; a NUL-terminated copy is split at each top-level '|',
 * so "T|U|V" is one anyOf of three, until a '[' or '{' takes the rest.
 */
static json_object *
any_of(const char *type, size_t bar)
{
	json_object	*o, *arr;
	char		 left[TYPE_MAX];

	o = json_object_new_object();
	arr = json_object_new_array();
	for (;;) {
		if (bar >= sizeof(left)) {
			build_failed = 1;
			break;
		}
		memcpy(left, type, bar);
		left[bar] = '\0';
		openapi_push(arr, type_schema(left));
		type += bar + 1;
		if (type[0] == '[' || type[0] == '{' ||
		    type[bar = strcspn(type, "|")] != '|') {
			openapi_push(arr, type_schema(type));
			break;
		}
	}
	openapi_put(o, "anyOf", arr);
	return o;
}

/* The anyOf of o, renamed oneOf (its alternatives exclude each other). */
static void
one_of(json_object *o)
{
	json_object	*alts;

	if (o == NULL || !json_object_object_get_ex(o, "anyOf", &alts)) {
		build_failed = 1;
		return;
	}
	json_object_get(alts);
	json_object_object_del(o, "anyOf");
	openapi_put(o, "oneOf", alts);
}

static json_object *
type_schema(const char *type)
{
	json_object	*o;
	char		 ref[128];
	size_t		 bar;

	/* "[T" and "{T" take the rest; "string|[string" is an anyOf. */
	if (type[0] != '[' && type[0] != '{' &&
	    type[bar = strcspn(type, "|")] == '|')
		return any_of(type, bar);
	o = json_object_new_object();
	if (type[0] == '#') {
		if ((size_t)snprintf(ref, sizeof(ref), "#/components/schemas/%s",
		    type + 1) >= sizeof(ref))
			build_failed = 1;
		openapi_put(o, "$ref", openapi_str(ref));
	} else if (type[0] == '[') {
		openapi_put(o, "type", openapi_str("array"));
		openapi_put(o, "items", type_schema(type + 1));
	} else if (type[0] == '{') {
		openapi_put(o, "type", openapi_str("object"));
		openapi_put(o, "additionalProperties", type_schema(type + 1));
	} else if (strcmp(type, "date-time") == 0) {
		openapi_put(o, "type", openapi_str("string"));
		openapi_put(o, "format", openapi_str("date-time"));
	} else if (strcmp(type, "any") != 0)
		openapi_put(o, "type", openapi_str(type));
	return o;
}

/* A nullable type: ["T", "null"]. */
static json_object *
nullable_schema(const char *type)
{
	json_object	*o, *arr;

	o = json_object_new_object();
	arr = json_object_new_array();
	openapi_push(arr, openapi_str(type));
	openapi_push(arr, openapi_str("null"));
	openapi_put(o, "type", arr);
	return o;
}

static json_object *
enum_list(const char *words)
{
	json_object	*arr;
	char		 word[64];
	size_t		 n;

	arr = json_object_new_array();
	while (*words != '\0') {
		n = strcspn(words, " ");
		if (n >= sizeof(word)) {
			build_failed = 1;
			break;
		}
		memcpy(word, words, n);
		word[n] = '\0';
		openapi_push(arr, openapi_str(word));
		words += n;
		words += strspn(words, " ");
	}
	return arr;
}

json_object *
openapi_field_schema(const struct openapi_field *f)
{
	json_object	*o, *values;
	char		 base[TYPE_MAX];
	size_t		 len = strlen(f->type);
	int		 nullable = len > 0 && f->type[len - 1] == '?';

	if (nullable) {
		if (len > sizeof(base)) {
			build_failed = 1;
			return NULL;
		}
		memcpy(base, f->type, len - 1);
		base[len - 1] = '\0';
		o = nullable_schema(base);
	} else
		o = type_schema(f->type);
	if (f->flags & OPENAPI_ONEOF)
		one_of(o);
	if (f->enums != NULL) {
		values = enum_list(f->enums);
		/* A null the type allows must be one of the values too. */
		if (nullable && json_object_array_add(values, NULL) != 0)
			build_failed = 1;
		openapi_put(o, "enum", values);
	}
	if (f->flags & OPENAPI_MIN)
		openapi_put(o, "minimum", json_object_new_int64(f->bound));
	if (f->flags & OPENAPI_XMIN)
		openapi_put(o, "exclusiveMinimum",
		    json_object_new_int64(f->bound));
	if (f->flags & OPENAPI_MAXLEN)
		openapi_put(o, "maxLength", json_object_new_int64(f->bound));
	if (f->flags & OPENAPI_MAXITEMS)
		openapi_put(o, "maxItems", json_object_new_int64(f->bound));
	if (f->pattern != NULL)
		openapi_put(o, "pattern", openapi_str(f->pattern));
	if (f->def != NULL) {
		/* "null" parses to NULL: a JSON null, not a failure. */
		if (strcmp(f->def, "null") != 0)
			openapi_put(o, "default", json_tokener_parse(f->def));
		else if (o == NULL ||
		    json_object_object_add(o, "default", NULL) == -1)
			build_failed = 1;
	}
	if (f->desc != NULL)
		openapi_put(o, "description", openapi_str(f->desc));
	return o;
}

static json_object *
schema_json(const struct schema *s)
{
	const struct openapi_field	*f;
	json_object			*o, *props, *req;

	o = json_object_new_object();
	props = json_object_new_object();
	req = json_object_new_array();
	openapi_put(o, "title", openapi_str(s->name));
	openapi_put(o, "description", openapi_str(s->desc));
	openapi_put(o, "type", openapi_str("object"));
	for (f = s->fields; f->name != NULL; f++) {
		openapi_put(props, f->name, openapi_field_schema(f));
		if (f->flags & OPENAPI_REQUIRED)
			openapi_push(req, openapi_str(f->name));
	}
	openapi_put(o, "properties", props);
	if (req != NULL && json_object_array_length(req) > 0)
		openapi_put(o, "required", req);
	else
		json_object_put(req);
	if (s->closed)
		openapi_put(o, "additionalProperties",
		    json_object_new_boolean(0));
	return o;
}

json_object *
openapi_schemas(void)
{
	json_object	*o;
	size_t		 i;

	o = json_object_new_object();
	for (i = 0; i < sizeof(schemas) / sizeof(schemas[0]); i++)
		openapi_put(o, schemas[i].name, schema_json(&schemas[i]));
	return o;
}
