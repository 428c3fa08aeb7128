/*
 * agent-sandbox-mcp's internal interfaces: the JSON-RPC layer (mcp_rpc.c),
 * the tool tables and their calls (mcp_tools.c, mcp_process.c) and
 * argument schemas and checks (mcp_args.c).
 */
#ifndef AS_CLIENT_MCP_H
#define AS_CLIENT_MCP_H

#include <stddef.h>

#include <json-c/json.h>

#include "rest.h"

#define MCP_MAX_LINE	(16 * 1024 * 1024)	/* one JSON-RPC message */
#define MCP_MAX_READ	(64 * 1024 * 1024)	/* sandbox_read_file */
#define MCP_MAX_OUTPUT	(64 * 1024)	/* sandbox_process_output, a call */

/* JSON-RPC 2.0 error codes. */
#define RPC_PARSE_ERROR		-32700
#define RPC_INVALID_REQUEST	-32600
#define RPC_METHOD_NOT_FOUND	-32601
#define RPC_INVALID_PARAMS	-32602
#define RPC_INTERNAL_ERROR	-32603

/* What the tools talk to: a REST client, or why there is none. */
struct mcp_server {
	struct rest_client	 rest;
	int			 rest_ok;
	char			 rest_err[256];
};

/* mcp_rpc.c: one input line in; the reply line (malloc'd) or NULL. */
char	*rpc_handle_line(struct mcp_server *, const char *line, size_t len);
char	*rpc_error_line(json_object *id, int code, const char *message);

/* mcp_tools.c */
json_object	*tools_list(void);
/*
 * Run a tool.  Returns the MCP CallToolResult; a failing tool, an unknown
 * tool or bad arguments give isError true with the reason as its text.
 */
json_object	*tools_call(struct mcp_server *, const char *name,
		    json_object *arguments);

/* mcp_args.c: the arguments a tool takes, as a table. */
#define ARG_STRING	1
#define ARG_BOOL	2
#define ARG_INTEGER	3
#define ARG_NUMBER	4
#define ARG_ENV		5	/* an object of strings (no NUL) */

#define ARG_REQUIRED	0x01	/* must be present */
#define ARG_NULLABLE	0x02	/* null accepted, meaning "not given" */
#define ARG_BYTES	0x04	/* a string that may hold NUL characters */
#define ARG_NONEMPTY	0x08	/* a string that must not be empty */
#define ARG_ID		(ARG_REQUIRED | ARG_NONEMPTY)

struct mcp_arg {
	const char	*name;
	int		 type;
	int		 flags;
	const char	*defval;	/* JSON text of the default or NULL */
	const char	*description;
};

json_object	*args_schema(const struct mcp_arg *, size_t);
int		 args_check(const struct mcp_arg *, size_t, json_object *,
		    char *, size_t);
/* A checked argument, or NULL if absent or null. */
json_object	*args_get(json_object *, const char *);

/* What a tool produced: text (any bytes; repaired to UTF-8 later). */
struct tool_out {
	char	*text;
	size_t	 len;
	int	 error;
};

struct tool {
	const char		*name;
	const char		*description;
	const struct mcp_arg	*args;
	size_t			 nargs;
	void			(*run)(struct rest_client *, json_object *,
				    struct tool_out *);
};

#define NITEMS(a)	(sizeof(a) / sizeof((a)[0]))

/* mcp_tools.c: what every tool's result is made with. */
void	out_text(struct tool_out *, int error, const char *, ...)
	    __attribute__((format(printf, 3, 4)));
void	out_rest(struct tool_out *, const struct rest_error *);
/* Renders and releases obj as the result. */
void	out_json(struct tool_out *, json_object *obj);
/* A new object with the listed keys of obj (null where missing). */
json_object	*pick(json_object *obj, const char *const *keys, size_t n);
/* The GET of a sandbox a tool is about to act on; -1 with out set. */
int	get_sandbox(struct rest_client *, const char *id, struct tool_out *);
const char	*str_arg(json_object *args, const char *name, const char *def);

/* mcp_process.c: the process tools, listed after mcp_tools.c's. */
extern const struct tool	mcp_process_tools[];
extern const size_t		mcp_nprocess_tools;

#endif /* AS_CLIENT_MCP_H */
