/*
 * agent-sandbox exec: run a command in a sandbox (API.md §4.7, §4.8).
 * The output streams live (stdout events to stdout, stderr events to
 * stderr) and the CLI exits with the command's status: 124 after a
 * timeout, 255 for a status outside 0-255 (-1: none was reported), 141
 * without a message when stdout's reader has gone (exec ... | head).
 * One CMD operand is a shell line, run under /bin/sh -c; several are an
 * argv, run without a shell.  --json instead runs the blocking exec,
 * prints its result and exits 0 whenever the server answered.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

struct exec_state {
	int	got_exit;
	int	exit_code;
	int	timed_out;
	int	write_failed;
};

/* rest_ndjson's line(): one event of the stream (API.md §3.6). */
static int
exec_event(json_object *ev, void *arg)
{
	struct exec_state	*st = arg;
	json_object		*v;
	const char		*type;

	if (!json_object_object_get_ex(ev, "type", &v) ||
	    (type = json_object_get_string(v)) == NULL)
		return 0;
	if (strcmp(type, "stdout") == 0 || strcmp(type, "stderr") == 0) {
		if (!json_object_object_get_ex(ev, "data", &v) ||
		    !json_object_is_type(v, json_type_string))
			return 0;
		if (cli_write_all(type[3] == 'o' ? STDOUT_FILENO :
		    STDERR_FILENO, json_object_get_string(v),
		    json_object_get_string_len(v)) == -1) {
			st->write_failed = errno;
			return -1;
		}
	} else if (strcmp(type, "exit") == 0) {
		st->got_exit = 1;
		/* null or absent: no status was reported. */
		st->exit_code = json_object_object_get_ex(ev, "exit_code",
		    &v) && json_object_is_type(v, json_type_int) ?
		    json_object_get_int(v) : -1;
		st->timed_out = json_object_object_get_ex(ev, "timed_out",
		    &v) && json_object_get_boolean(v);
	}
	return 0;
}

static int
exec_stream(struct cli *cli, const char *path, json_object *body)
{
	struct exec_state	st;
	struct rest_error	err;

	memset(&st, 0, sizeof(st));
	if (rest_ndjson(&cli->rc, path, body, exec_event, &st, &err) == -1 &&
	    !st.write_failed)
		return cli_api_error(&err);
	/* Whoever read our output has gone (exec ... | head -1). */
	if (st.write_failed == EPIPE)
		return CLI_EXIT_PIPE;
	if (st.write_failed) {
		cli_warn("exec: writing the output: %s",
		    strerror(st.write_failed));
		return CLI_EXIT_FAIL;
	}
	if (!st.got_exit) {
		cli_warn("exec: the output ended without an exit status");
		return CLI_EXIT_FAIL;
	}
	if (st.timed_out) {
		cli_warn("exec: the command timed out (exit code %d)",
		    st.exit_code);
		return CLI_EXIT_TIMEOUT;
	}
	if (st.exit_code < 0 || st.exit_code > 255)
		return 255;
	return st.exit_code;
}

static int
exec_blocking(struct cli *cli, const char *path, json_object *body)
{
	json_object	*result;

	if (cli_call(cli, "POST", path, body, &result) == -1)
		return CLI_EXIT_FAIL;
	cli_print_json(result);
	json_object_put(result);
	return CLI_EXIT_OK;
}

int
cli_exec(struct cli *cli, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "timeout", required_argument, NULL, 't' },
		{ "env", required_argument, NULL, 'e' },
		{ "workdir", required_argument, NULL, 'w' },
		{ NULL, 0, NULL, 0 },
	};
	json_object	*body = NULL, *env;
	const char	*workdir = NULL;
	char		*path = NULL;
	double		 timeout = 0;
	int		 ch, i, has_timeout = 0, bad_usage = 1;
	int		 ret = CLI_EXIT_FAIL;

	if ((env = json_object_new_object()) == NULL) {
		cli_warn("out of memory");
		return CLI_EXIT_FAIL;
	}
	/* "+": options end at the ID, so the command keeps its own. */
	while ((ch = getopt_long(argc, argv, "+", longopts, NULL)) != -1) {
		switch (ch) {
		case 't':
			if (cli_parse_number(optarg, &timeout) == -1)
				goto out;
			has_timeout = 1;
			break;
		case 'e':
			if (cli_parse_env(env, optarg) == -1)
				goto out;
			break;
		case 'w':
			workdir = optarg;
			break;
		default:
			goto out;
		}
	}
	i = optind;
	if (i == argc || cli_id(argv[0], argv[i]) == -1)
		goto out;
	if (++i < argc && strcmp(argv[i], "--") == 0)
		i++;
	if (i == argc)
		goto out;
	bad_usage = 0;
	if ((path = cli_resource("sandboxes", argv[optind],
	    cli->json ? "/exec" : "/exec/stream")) == NULL)
		goto out;
	if ((body = json_object_new_object()) == NULL ||
	    cli_put(body, "command", cli_command(argc - i, argv + i)) == -1)
		goto out;
	if (json_object_object_length(env) > 0) {
		if (cli_put(body, "env", env) == -1) {
			env = NULL;
			goto out;
		}
		env = NULL;
	}
	if (workdir != NULL &&
	    cli_put(body, "workdir", json_object_new_string(workdir)) == -1)
		goto out;
	if (has_timeout) {
		if (cli_put(body, "timeout_seconds",
		    json_object_new_double(timeout)) == -1)
			goto out;
		/* The client must outwait a long, silent command. */
		if (timeout > 0 && timeout < INT_MAX - 60 &&
		    cli->rc.timeout < (int)timeout + 31)
			cli->rc.timeout = (int)timeout + 31;
	}
	ret = cli->json ? exec_blocking(cli, path, body) :
	    exec_stream(cli, path, body);
 out:
	json_object_put(env);
	json_object_put(body);
	free(path);
	if (bad_usage)
		return cli_usage(argv[0]);
	return ret;
}
