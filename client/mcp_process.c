/*
 * The process tools of agent-sandbox-mcp (docs/mcp.md): start a command
 * that outlives the call, read its output in slices, signal or delete it,
 * list a sandbox's.  A model cannot hold a stream open, so the output
 * comes in calls: each returns what followed "after" (waiting up to ten
 * seconds for more when asked), at most MCP_MAX_OUTPUT bytes of it, and
 * the "after" of the next call.  The bytes travel as base64 so that a
 * slice can end anywhere (at a character's boundary) with an exact next
 * "after"; the text is made UTF-8 here, a whole run of one stream at a
 * time, so that a character split between two events stays whole.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp.h"
#include "utf8.h"

#define MAX_WAIT_SECONDS	10

static const char *const process_keys[] = {
	"id", "sandbox_id", "command", "workdir", "status", "running",
	"exit_code", "started_at", "ended_at", "timeout_seconds",
	"client_id", "output_bytes", "dropped_bytes",
};

/* --- sandbox_process_start ------------------------------------------------ */

static const struct mcp_arg start_args[] = {
	{ "sandbox_id", ARG_STRING, ARG_ID, NULL,
	    "ID of the sandbox (sb_...)." },
	{ "command", ARG_STRING, ARG_REQUIRED, NULL,
	    "Shell command, run with /bin/sh -c." },
	{ "env", ARG_ENV, ARG_NULLABLE, "null",
	    "Environment variables for the command, name to value." },
	{ "workdir", ARG_STRING, ARG_NULLABLE, "null",
	    "Working directory; null for /workspace." },
	{ "timeout_seconds", ARG_NUMBER, ARG_NULLABLE, "null",
	    "Seconds after which the process is killed; null to let it run "
	    "as long as the sandbox." },
	{ "client_id", ARG_STRING, ARG_NULLABLE, "null",
	    "A name for this start (1 to 128 bytes): a retry with the same "
	    "client_id and arguments returns the process already started "
	    "instead of starting another." },
};

static void
tool_start(struct rest_client *c, json_object *args, struct tool_out *out)
{
	struct rest_process_spec spec;
	struct rest_error	 err;
	const char		*id = str_arg(args, "sandbox_id", "");
	json_object		*proc, *v;

	if (get_sandbox(c, id, out) == -1)
		return;
	memset(&spec, 0, sizeof(spec));
	spec.command = args_get(args, "command");
	spec.env = args_get(args, "env");
	spec.workdir = str_arg(args, "workdir", NULL);
	spec.client_id = str_arg(args, "client_id", NULL);
	if ((v = args_get(args, "timeout_seconds")) != NULL) {
		spec.has_timeout = 1;
		spec.timeout = json_object_get_double(v);
	}
	if (rest_process_start(c, id, &spec, &proc, &err) == -1) {
		out_rest(out, &err);
		return;
	}
	out_json(out, pick(proc, process_keys, NITEMS(process_keys)));
	json_object_put(proc);
}

/* --- sandbox_process_output ----------------------------------------------- */

static const struct mcp_arg output_args[] = {
	{ "sandbox_id", ARG_STRING, ARG_ID, NULL,
	    "ID of the sandbox (sb_...)." },
	{ "process_id", ARG_STRING, ARG_ID, NULL,
	    "ID of the process (proc_...)." },
	{ "after", ARG_INTEGER, 0, "0",
	    "Return the output after this many bytes: 0 for all that is "
	    "kept, or the next_after of the previous call." },
	{ "wait_seconds", ARG_NUMBER, 0, "0",
	    "0 to 10: follow the output for up to this long (less if the "
	    "process ends) and return what came; 0 returns at once." },
};

/* The output gathered by one call. */
struct slice {
	json_object	*events;	/* [{"type", "text"}, ...] */
	int		 run_type;	/* the stream of the run, or -1 */
	unsigned char	 run[MCP_MAX_OUTPUT];	/* its bytes */
	size_t		 runlen;
	size_t		 total;		/* output bytes in events */
	uint64_t	 next;		/* the next call's after */
	int		 cut;		/* the bound stopped the read */
	int		 ended;
	struct rest_event exit;
	int		 nomem;
};

static void
add_event(struct slice *sl, json_object *ev)
{
	if (ev == NULL || json_object_array_add(sl->events, ev) != 0) {
		json_object_put(ev);
		sl->nomem = 1;
	}
}

/* The run of one stream's bytes, as text, into events. */
static void
flush_run(struct slice *sl)
{
	json_object	*ev;
	char		*text;
	size_t		 len;

	if (sl->runlen == 0)
		return;
	ev = json_object_new_object();
	if (ev == NULL || (text = utf8_repair(sl->run, sl->runlen,
	    &len)) == NULL) {
		json_object_put(ev);
		sl->nomem = 1;
		return;
	}
	json_object_object_add(ev, "type", json_object_new_string(
	    sl->run_type == REST_EVENT_STDOUT ? "stdout" : "stderr"));
	json_object_object_add(ev, "text", json_object_new_string_len(text,
	    len));
	free(text);
	add_event(sl, ev);
	sl->runlen = 0;
}

static void
add_gap(struct slice *sl, uint64_t dropped)
{
	json_object	*ev;

	flush_run(sl);
	if ((ev = json_object_new_object()) != NULL) {
		json_object_object_add(ev, "type",
		    json_object_new_string("gap"));
		json_object_object_add(ev, "dropped_bytes",
		    json_object_new_int64((int64_t)dropped));
	}
	add_event(sl, ev);
	sl->next += dropped;
}

/*
 * rest_process_output's event(): data joins the run of its stream, up
 * to the bound, where it is cut at a character's boundary and the read
 * stops with next_after at the first byte left out.
 */
static int
slice_event(const struct rest_event *ev, void *arg)
{
	struct slice	*sl = arg;
	size_t		 room, take;

	if (ev->type == REST_EVENT_GAP) {
		add_gap(sl, ev->dropped);
		return sl->nomem ? -1 : 0;
	}
	if (ev->type == REST_EVENT_EXIT) {
		flush_run(sl);
		sl->ended = 1;
		sl->exit = *ev;
		return 0;
	}
	if ((int)ev->type != sl->run_type)
		flush_run(sl);
	sl->run_type = ev->type;
	room = MCP_MAX_OUTPUT - sl->total;
	take = ev->len <= room ? ev->len : utf8_cut(ev->data, room);
	memcpy(sl->run + sl->runlen, ev->data, take);
	sl->runlen += take;
	sl->total += take;
	sl->next = ev->seq - ev->len + take;
	if (take < ev->len)
		sl->cut = 1;
	return sl->cut || sl->nomem ? -1 : 0;
}

/* status and exit_code: the exit event's, or the process's as it is. */
static int
slice_status(struct rest_client *c, json_object *args, struct slice *sl,
    json_object *res, struct tool_out *out)
{
	struct rest_error	 err;
	json_object		*proc, *v;

	if (sl->ended) {
		json_object_object_add(res, "status",
		    json_object_new_string(sl->exit.status));
		json_object_object_add(res, "exit_code",
		    sl->exit.has_exit_code ?
		    json_object_new_int(sl->exit.exit_code) : NULL);
		return 0;
	}
	if (rest_process_get(c, str_arg(args, "sandbox_id", ""),
	    str_arg(args, "process_id", ""), &proc, &err) == -1) {
		out_rest(out, &err);
		return -1;
	}
	v = NULL;
	json_object_object_get_ex(proc, "status", &v);
	json_object_object_add(res, "status", json_object_get(v));
	v = NULL;
	json_object_object_get_ex(proc, "exit_code", &v);
	json_object_object_add(res, "exit_code", json_object_get(v));
	json_object_put(proc);
	return 0;
}

/* The checked "after" and "wait_seconds" into o; -1 with out set. */
static int
output_opts(json_object *args, struct rest_output_opts *o,
    struct tool_out *out)
{
	json_object	*v;
	double		 wait = 0;
	int64_t		 after = 0;

	memset(o, 0, sizeof(*o));
	if ((v = args_get(args, "after")) != NULL)
		after = json_object_get_int64(v);
	if ((v = args_get(args, "wait_seconds")) != NULL)
		wait = json_object_get_double(v);
	if (after < 0) {
		out_text(out, 1, "after must not be negative");
		return -1;
	}
	if (!(wait >= 0 && wait <= MAX_WAIT_SECONDS)) {
		out_text(out, 1, "wait_seconds must be 0 to %d",
		    MAX_WAIT_SECONDS);
		return -1;
	}
	o->after = (uint64_t)after;
	/*
	 * Whole milliseconds, rounded up: a wait_ms of 0 with follow would
	 * be a follow with no end, as logs -f has.
	 */
	o->wait_ms = (int)(wait * 1000);
	if (o->wait_ms < wait * 1000)
		o->wait_ms++;
	o->follow = o->wait_ms > 0;
	o->base64 = 1;
	return 0;
}

static void
slice_result(struct rest_client *c, json_object *args, struct slice *sl,
    struct tool_out *out)
{
	json_object	*res;

	if ((res = json_object_new_object()) == NULL) {
		out_text(out, 1, "out of memory");
		return;
	}
	json_object_object_add(res, "events", json_object_get(sl->events));
	json_object_object_add(res, "next_after",
	    json_object_new_int64((int64_t)sl->next));
	json_object_object_add(res, "truncated",
	    json_object_new_boolean(sl->cut));
	if (slice_status(c, args, sl, res, out) == -1) {
		json_object_put(res);
		return;
	}
	out_json(out, res);
}

static void
tool_output(struct rest_client *c, json_object *args, struct tool_out *out)
{
	struct rest_output_opts	 o;
	struct rest_error	 err;
	struct slice		*sl;
	const char		*id = str_arg(args, "sandbox_id", "");

	if (output_opts(args, &o, out) == -1 || get_sandbox(c, id, out) == -1)
		return;
	if ((sl = calloc(1, sizeof(*sl))) == NULL ||
	    (sl->events = json_object_new_array()) == NULL) {
		free(sl);
		out_text(out, 1, "out of memory");
		return;
	}
	sl->run_type = -1;
	sl->next = o.after;
	/* A wait that ran out (1) is a result like the end of the output. */
	if (rest_process_output(c, id, str_arg(args, "process_id", ""), &o,
	    slice_event, sl, &err) == -1)
		out_rest(out, &err);
	else {
		flush_run(sl);
		if (sl->nomem)
			out_text(out, 1, "out of memory");
		else
			slice_result(c, args, sl, out);
	}
	json_object_put(sl->events);
	free(sl);
}

/* --- sandbox_process_kill, sandbox_process_list --------------------------- */

static const struct mcp_arg kill_args[] = {
	{ "sandbox_id", ARG_STRING, ARG_ID, NULL,
	    "ID of the sandbox (sb_...)." },
	{ "process_id", ARG_STRING, ARG_ID, NULL,
	    "ID of the process (proc_...)." },
	{ "signal", ARG_STRING, 0, "\"TERM\"",
	    "TERM, INT, KILL or HUP, sent to the process's group." },
	{ "delete", ARG_BOOL, 0, "false",
	    "Instead of a signal, kill the process and everything it "
	    "started, and remove it and its output." },
};

static void
tool_kill(struct rest_client *c, json_object *args, struct tool_out *out)
{
	struct rest_error	 err;
	const char		*id = str_arg(args, "sandbox_id", "");
	const char		*proc = str_arg(args, "process_id", "");
	const char		*sig = str_arg(args, "signal", "TERM");
	json_object		*v = args_get(args, "delete");
	int			 del = v != NULL && json_object_get_boolean(v);

	if (!del && rest_signal_name(sig) == NULL) {
		out_text(out, 1, "unknown signal '%.32s': TERM, INT, KILL or "
		    "HUP", sig);
		return;
	}
	if (get_sandbox(c, id, out) == -1)
		return;
	if ((del ? rest_process_delete(c, id, proc, &err) :
	    rest_process_signal(c, id, proc, sig, &err)) == -1) {
		out_rest(out, &err);
		return;
	}
	if (del)
		out_text(out, 0, "deleted %s", proc);
	else
		out_text(out, 0, "sent %s to %s", rest_signal_name(sig), proc);
}

static const struct mcp_arg list_args[] = {
	{ "sandbox_id", ARG_STRING, ARG_ID, NULL,
	    "ID of the sandbox (sb_...)." },
};

static void
tool_list(struct rest_client *c, json_object *args, struct tool_out *out)
{
	struct rest_error	 err;
	const char		*id = str_arg(args, "sandbox_id", "");
	json_object		*res, *arr, *list, *p;
	size_t			 i, n;

	if (get_sandbox(c, id, out) == -1)
		return;
	if (rest_process_list(c, id, &res, &err) == -1) {
		out_rest(out, &err);
		return;
	}
	arr = json_object_object_get(res, "processes");
	n = json_object_array_length(arr);
	list = json_object_new_array_ext(n);
	for (i = 0; list != NULL && i < n; i++) {
		p = pick(json_object_array_get_idx(arr, i), process_keys,
		    NITEMS(process_keys));
		if (p == NULL || json_object_array_add(list, p) != 0) {
			json_object_put(p);
			json_object_put(list);
			list = NULL;
		}
	}
	json_object_put(res);
	out_json(out, list);
}

const struct tool mcp_process_tools[] = {
	{ "sandbox_process_start",
	    "Start a shell command in a sandbox that keeps running after "
	    "this call returns (a server, a long build, a watcher) and "
	    "return the process, with its id.  Read its output with "
	    "sandbox_process_output; end it with sandbox_process_kill.",
	    start_args, NITEMS(start_args), tool_start },
	{ "sandbox_process_output",
	    "Read a process's output after a byte count: events (stdout "
	    "and stderr text, gaps where old output was dropped), "
	    "next_after for the next call, truncated when more than 64 KiB "
	    "was waiting, and the process's status and exit_code.",
	    output_args, NITEMS(output_args), tool_output },
	{ "sandbox_process_kill",
	    "Send a signal to a process (TERM by default), or with delete "
	    "kill it and all it started and remove it.  Ended processes "
	    "count against the sandbox's limit until deleted.",
	    kill_args, NITEMS(kill_args), tool_kill },
	{ "sandbox_process_list",
	    "List a sandbox's processes, oldest first, with their status.",
	    list_args, NITEMS(list_args), tool_list },
};
const size_t	mcp_nprocess_tools = NITEMS(mcp_process_tools);
