/*
 * The process verbs that need no terminal: run, ps, logs and kill
 * (docs/cli.md "Processes"; attach and shell are cli_attach.c).  logs
 * asks for base64 so that the bytes written are the process's own, not
 * text with U+FFFD; -f (and run without -d) follows the output to the
 * process's end and exits with its status, as exec does.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

struct logs_state {
	struct cli	*cli;
	int		 got_exit;
	int		 status;	/* the exit's, as cli_process_status */
	int		 write_failed;	/* errno */
};

int
cli_process_status(const struct rest_event *ev)
{
	if (strcmp(ev->status, "timed_out") == 0) {
		cli_warn("the process timed out");
		return CLI_EXIT_TIMEOUT;
	}
	if (strcmp(ev->status, "lost") == 0) {
		cli_warn("the server lost the process's output");
		return 255;
	}
	/* 128+N after signal N: already a shell's status. */
	if (!ev->has_exit_code || ev->exit_code < 0 || ev->exit_code > 255)
		return 255;
	return ev->exit_code;
}

/* --json: the events as the server sent them, one per line. */
static int
event_json(const struct rest_event *ev, struct logs_state *st)
{
	const char	*s;

	s = json_object_to_json_string_ext(ev->obj, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE);
	if (s == NULL || printf("%s\n", s) < 0 || fflush(stdout) == EOF) {
		st->write_failed = errno != 0 ? errno : EIO;
		return -1;
	}
	return 0;
}

/* rest_process_output's event(): the bytes to stdout or stderr. */
static int
logs_event(const struct rest_event *ev, void *arg)
{
	struct logs_state	*st = arg;

	if (ev->type == REST_EVENT_EXIT) {
		st->got_exit = 1;
		st->status = cli_process_status(ev);
	}
	if (st->cli->json)
		return event_json(ev, st);
	if (ev->type == REST_EVENT_GAP) {
		cli_warn("%llu bytes of output were dropped here",
		    (unsigned long long)ev->dropped);
		return 0;
	}
	if (ev->type != REST_EVENT_STDOUT && ev->type != REST_EVENT_STDERR)
		return 0;
	if (cli_write_all(ev->type == REST_EVENT_STDOUT ? STDOUT_FILENO :
	    STDERR_FILENO, ev->data, ev->len) == -1) {
		st->write_failed = errno;
		return -1;
	}
	return 0;
}

int
cli_process_logs(struct cli *cli, const struct cli_logs *l)
{
	struct rest_output_opts	 o;
	struct logs_state	 st;
	struct rest_error	 err;

	memset(&st, 0, sizeof(st));
	st.cli = cli;
	memset(&o, 0, sizeof(o));
	o.after = l->after;
	o.follow = l->follow;
	o.base64 = !cli->json;
	if (rest_process_output(&cli->rc, l->sandbox, l->process, &o,
	    logs_event, &st, &err) == -1 && !st.write_failed)
		return cli_api_error(&err);
	if (st.write_failed == EPIPE)
		return CLI_EXIT_PIPE;
	if (st.write_failed) {
		cli_warn("logs: writing the output: %s",
		    strerror(st.write_failed));
		return CLI_EXIT_FAIL;
	}
	if (!l->follow)
		return CLI_EXIT_OK;
	if (!st.got_exit) {
		cli_warn("logs: the output ended before the process did");
		return CLI_EXIT_FAIL;
	}
	return st.status;
}

int
cli_logs(struct cli *cli, int argc, char **argv)
{
	struct cli_logs	 l;

	if (cli_logs_args(argc, argv, &l) == -1)
		return cli_usage(argv[0]);
	return cli_process_logs(cli, &l);
}

/* The new process's ID, or its JSON with --json. */
static void
started(struct cli *cli, json_object *proc)
{
	if (cli->json)
		cli_print_json(proc);
	else
		printf("%s\n", cli_str(proc, "id"));
	fflush(stdout);
}

int
cli_run(struct cli *cli, int argc, char **argv)
{
	struct cli_start	 st;
	struct rest_error	 err;
	struct cli_logs		 l;
	json_object		*proc;
	int			 ret;

	if (cli_run_args(argc, argv, &st) == -1) {
		cli_start_free(&st);
		return cli_usage(argv[0]);
	}
	if (rest_process_start(&cli->rc, st.sandbox, &st.spec, &proc,
	    &err) == -1) {
		cli_start_free(&st);
		return cli_api_error(&err);
	}
	if (st.detach) {
		started(cli, proc);
		ret = CLI_EXIT_OK;
	} else {
		/* Interrupted, the process goes on: say how to find it. */
		if (isatty(STDERR_FILENO))
			cli_warn("started %s", cli_str(proc, "id"));
		memset(&l, 0, sizeof(l));
		l.sandbox = st.sandbox;
		l.process = cli_str(proc, "id");
		l.follow = 1;
		ret = cli_process_logs(cli, &l);
	}
	json_object_put(proc);
	cli_start_free(&st);
	return ret;
}

int
cli_ps(struct cli *cli, int argc, char **argv)
{
	struct rest_error	 err;
	json_object		*list, **procs;
	size_t			 n;
	int			 i, ret = CLI_EXIT_OK;

	if ((i = cli_options(argc, argv)) == -1 || argc - i != 1 ||
	    cli_id(argv[0], argv[i]) == -1)
		return cli_usage(argv[0]);
	if (rest_process_list(&cli->rc, argv[i], &list, &err) == -1)
		return cli_api_error(&err);
	if (cli->json)
		cli_print_json(list);
	else if ((procs = cli_members(list, "processes", &n)) == NULL)
		ret = CLI_EXIT_FAIL;
	else {
		cli_process_table(procs, n);
		free(procs);
	}
	json_object_put(list);
	return ret;
}

/* kill --delete: the ID, or {"deleted": [ID]}, as rm prints. */
static void
deleted(struct cli *cli, const char *id)
{
	json_object	*doc;

	if (!cli->json) {
		printf("%s\n", id);
		return;
	}
	doc = json_tokener_parse("{\"deleted\": []}");
	if (doc != NULL)
		json_object_array_add(json_object_object_get(doc, "deleted"),
		    json_object_new_string(id));
	cli_print_json(doc);
	json_object_put(doc);
}

int
cli_kill(struct cli *cli, int argc, char **argv)
{
	struct rest_error	 err;
	struct cli_kill		 k;

	if (cli_kill_args(argc, argv, &k) == -1)
		return cli_usage(argv[0]);
	if (k.delete) {
		if (rest_process_delete(&cli->rc, k.sandbox, k.process,
		    &err) == -1)
			return cli_api_error(&err);
		deleted(cli, k.process);
		return CLI_EXIT_OK;
	}
	if (rest_process_signal(&cli->rc, k.sandbox, k.process, k.signal,
	    &err) == -1)
		return cli_api_error(&err);
	return CLI_EXIT_OK;
}
