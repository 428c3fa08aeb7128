/*
 * The JSON-RPC 2.0 side of agent-sandbox-mcp: one line in, at most one
 * line out.  Requests get a result or an error; notifications (no id)
 * never get a reply; a reply from the client (we send no requests) is
 * ignored.  The MCP methods served are initialize, ping, tools/list and
 * tools/call.
 *
 * Where errors go: a message we cannot read is a JSON-RPC error (-32700
 * not JSON, -32600 not a request, -32601 unknown method, -32602 for
 * tools/call params that are not {"name": string, "arguments": object}).
 * Everything about a tool itself (unknown tool, bad arguments, an API
 * error) is a tool result with isError true, so the model sees why.
 */
#include <stdlib.h>
#include <string.h>

#include "mcp.h"

static const char *const versions[] = {
	"2025-06-18", "2025-03-26", "2024-11-05",	/* newest first */
};

static const char instructions[] =
    "These tools run code in disposable, isolated sandboxes (Linux "
    "containers).  The usual flow: sandbox_create, then sandbox_exec and "
    "the file tools (sandbox_write_file, sandbox_read_file, "
    "sandbox_list_files).  Before a risky change, take a sandbox_snapshot; "
    "if the change goes wrong, roll back to that snapshot's id with "
    "sandbox_rollback.  To try several approaches in parallel, sandbox_fork "
    "one snapshot into several sandboxes.  For a command that runs long "
    "or must keep running (a server, a build, a watcher), "
    "sandbox_process_start it and read its output with "
    "sandbox_process_output; end it with sandbox_process_kill.  Call "
    "sandbox_destroy when finished.  Files live "
    "under /workspace.  Sandboxes have no network access unless created "
    "with network=true.";

static char *
render(json_object *msg)
{
	const char	*s;
	char		*line = NULL;

	s = json_object_to_json_string_ext(msg,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	if (s != NULL)
		line = strdup(s);
	json_object_put(msg);
	return line;
}

static json_object *
envelope(json_object *id)
{
	json_object	*msg;

	if ((msg = json_object_new_object()) == NULL)
		return NULL;
	json_object_object_add(msg, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(msg, "id", json_object_get(id));
	return msg;
}

char *
rpc_error_line(json_object *id, int code, const char *message)
{
	json_object	*msg, *err;

	if ((msg = envelope(id)) == NULL)
		return NULL;
	if ((err = json_object_new_object()) == NULL) {
		json_object_put(msg);
		return NULL;
	}
	json_object_object_add(msg, "error", err);
	json_object_object_add(err, "code", json_object_new_int(code));
	json_object_object_add(err, "message",
	    json_object_new_string(message));
	return render(msg);
}

/* A result reply; takes result. */
static char *
result_line(json_object *id, json_object *result)
{
	json_object	*msg;

	if (result == NULL)
		return rpc_error_line(id, RPC_INTERNAL_ERROR, "out of memory");
	if ((msg = envelope(id)) == NULL) {
		json_object_put(result);
		return NULL;
	}
	json_object_object_add(msg, "result", result);
	return render(msg);
}

static json_object *
initialize(json_object *params)
{
	json_object	*res, *caps, *info, *v;
	const char	*version = versions[0], *asked;
	size_t		 i;

	if (json_object_object_get_ex(params, "protocolVersion", &v) &&
	    json_object_is_type(v, json_type_string)) {
		asked = json_object_get_string(v);
		for (i = 0; i < sizeof(versions) / sizeof(versions[0]); i++)
			if (strcmp(asked, versions[i]) == 0)
				version = versions[i];
	}
	res = json_object_new_object();
	caps = json_object_new_object();
	info = json_object_new_object();
	if (res == NULL || caps == NULL || info == NULL) {
		json_object_put(res);
		json_object_put(caps);
		json_object_put(info);
		return NULL;
	}
	json_object_object_add(res, "protocolVersion",
	    json_object_new_string(version));
	json_object_object_add(caps, "tools", json_object_new_object());
	json_object_object_add(res, "capabilities", caps);
	json_object_object_add(info, "name",
	    json_object_new_string("agent-sandbox"));
	json_object_object_add(info, "version",
	    json_object_new_string(PACKAGE_VERSION));
	json_object_object_add(res, "serverInfo", info);
	json_object_object_add(res, "instructions",
	    json_object_new_string(instructions));
	return res;
}

static json_object *
list(void)
{
	json_object	*res, *tools;

	if ((tools = tools_list()) == NULL)
		return NULL;
	if ((res = json_object_new_object()) == NULL) {
		json_object_put(tools);
		return NULL;
	}
	json_object_object_add(res, "tools", tools);
	return res;
}

static char *
call(struct mcp_server *srv, json_object *id, json_object *params)
{
	json_object	*name, *args = NULL;

	if (params == NULL ||
	    !json_object_object_get_ex(params, "name", &name) ||
	    !json_object_is_type(name, json_type_string))
		return rpc_error_line(id, RPC_INVALID_PARAMS,
		    "tools/call needs params.name, a string");
	if (json_object_object_get_ex(params, "arguments", &args) &&
	    args != NULL && !json_object_is_type(args, json_type_object))
		return rpc_error_line(id, RPC_INVALID_PARAMS,
		    "tools/call params.arguments must be an object");
	return result_line(id, tools_call(srv, json_object_get_string(name),
	    args));
}

static char *
request(struct mcp_server *srv, json_object *id, const char *method,
    json_object *params)
{
	if (strcmp(method, "initialize") == 0)
		return result_line(id, initialize(params));
	if (strcmp(method, "ping") == 0)
		return result_line(id, json_object_new_object());
	if (strcmp(method, "tools/list") == 0)
		return result_line(id, list());
	if (strcmp(method, "tools/call") == 0)
		return call(srv, id, params);
	return rpc_error_line(id, RPC_METHOD_NOT_FOUND, "Method not found");
}

static int
valid_id(json_object *id)
{
	return json_object_is_type(id, json_type_string) ||
	    json_object_is_type(id, json_type_int) ||
	    json_object_is_type(id, json_type_double);
}

static char *
message(struct mcp_server *srv, json_object *msg)
{
	json_object	*id = NULL, *method = NULL, *version, *params = NULL;
	int		 has_id, has_method;

	if (!json_object_is_type(msg, json_type_object))
		return rpc_error_line(NULL, RPC_INVALID_REQUEST,
		    "Invalid Request: not a JSON object");
	has_id = json_object_object_get_ex(msg, "id", &id);
	has_method = json_object_object_get_ex(msg, "method", &method) &&
	    json_object_is_type(method, json_type_string);
	/*
	 * A notification: initialized, cancelled, progress... there is
	 * nothing to do for any of them, and no reply, ever.
	 */
	if (has_method && !has_id)
		return NULL;
	/* A reply from the client: we send no requests, so none is due. */
	if (!has_method && (json_object_object_get_ex(msg, "result", NULL) ||
	    json_object_object_get_ex(msg, "error", NULL)))
		return NULL;
	if (!has_id)
		return rpc_error_line(NULL, RPC_INVALID_REQUEST,
		    "Invalid Request: no method");
	if (!valid_id(id))
		return rpc_error_line(NULL, RPC_INVALID_REQUEST,
		    "Invalid Request: id must be a string or a number");
	if (!json_object_object_get_ex(msg, "jsonrpc", &version) ||
	    !json_object_is_type(version, json_type_string) ||
	    strcmp(json_object_get_string(version), "2.0") != 0)
		return rpc_error_line(id, RPC_INVALID_REQUEST,
		    "Invalid Request: jsonrpc must be \"2.0\"");
	if (!has_method)
		return rpc_error_line(id, RPC_INVALID_REQUEST,
		    "Invalid Request: method must be a string");
	if (json_object_object_get_ex(msg, "params", &params) &&
	    params != NULL && !json_object_is_type(params, json_type_object))
		return rpc_error_line(id, RPC_INVALID_PARAMS,
		    "Invalid params: params must be an object");
	return request(srv, id, json_object_get_string(method), params);
}

char *
rpc_handle_line(struct mcp_server *srv, const char *line, size_t len)
{
	struct json_tokener	*tok;
	enum json_tokener_error	 err;
	json_object		*msg;
	char			*reply;

	while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' ' ||
	    line[len - 1] == '\t'))
		len--;
	while (len > 0 && (line[0] == ' ' || line[0] == '\t')) {
		line++;
		len--;
	}
	if (len == 0)
		return NULL;
	if (len > MCP_MAX_LINE)
		return rpc_error_line(NULL, RPC_PARSE_ERROR,
		    "Parse error: message too long");
	if ((tok = json_tokener_new()) == NULL)
		return rpc_error_line(NULL, RPC_INTERNAL_ERROR,
		    "out of memory");
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT |
	    JSON_TOKENER_VALIDATE_UTF8);
	msg = json_tokener_parse_ex(tok, line, (int)len);
	err = json_tokener_get_error(tok);
	if (err == json_tokener_success &&
	    json_tokener_get_parse_end(tok) != len)
		err = json_tokener_error_parse_unexpected;
	if (err == json_tokener_continue) {
		/* A bare number or literal ends only with its input. */
		msg = json_tokener_parse_ex(tok, "", 1);
		err = json_tokener_get_error(tok);
	}
	if (err != json_tokener_success) {
		json_object_put(msg);
		json_tokener_free(tok);
		return rpc_error_line(NULL, RPC_PARSE_ERROR, "Parse error");
	}
	json_tokener_free(tok);
	reply = message(srv, msg);
	json_object_put(msg);
	return reply;
}
