/*
 * The operands and options of the process verbs (run, ps, logs, attach,
 * shell, kill), read into structures before any request, so that a
 * usage error costs nothing and the parsing is testable alone
 * (tests/unit/test_cli_process_args.c).  Each returns 0, or -1 for a
 * usage error (after saying why when getopt did not).
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define DEFAULT_SHELL	"/bin/sh"

/* The options run and shell share; 1 if ch is none of them. */
static int
spec_option(struct cli_start *st, int ch, const char *arg)
{
	switch (ch) {
	case 'e':
		return cli_parse_env(st->env, arg) == -1 ? -1 : 0;
	case 'w':
		st->spec.workdir = arg;
		return 0;
	case 'T':
		if (cli_parse_number(arg, &st->spec.timeout) == -1)
			return -1;
		st->spec.has_timeout = 1;
		return 0;
	case 'c':
		if (*arg == '\0') {
			cli_warn("--client-id must not be empty");
			return -1;
		}
		st->spec.client_id = arg;
		return 0;
	}
	return 1;
}

static int
start_init(struct cli_start *st)
{
	memset(st, 0, sizeof(*st));
	if ((st->env = json_object_new_object()) == NULL) {
		cli_warn("out of memory");
		return -1;
	}
	st->spec.env = st->env;
	return 0;
}

void
cli_start_free(struct cli_start *st)
{
	json_object_put(st->env);
	json_object_put(st->spec.command);
	memset(st, 0, sizeof(*st));
}

/* An empty env is left out of the request. */
static void
start_done(struct cli_start *st)
{
	if (json_object_object_length(st->env) == 0)
		st->spec.env = NULL;
}

/* ID [--] CMD [ARG...], from optind on. */
static int
run_operands(int argc, char **argv, struct cli_start *st)
{
	int	 i = optind;

	if (i == argc || cli_id(argv[0], argv[i]) == -1)
		return -1;
	st->sandbox = argv[i];
	if (++i < argc && strcmp(argv[i], "--") == 0)
		i++;
	if (i == argc)
		return -1;
	if ((st->spec.command = cli_command(argc - i, argv + i)) == NULL) {
		cli_warn("out of memory");
		return -1;
	}
	start_done(st);
	return 0;
}

int
cli_run_args(int argc, char **argv, struct cli_start *st)
{
	static const struct option longopts[] = {
		{ "detach", no_argument, NULL, 'd' },
		{ "tty", no_argument, NULL, 't' },
		{ "stdin", no_argument, NULL, 'i' },
		{ "env", required_argument, NULL, 'e' },
		{ "workdir", required_argument, NULL, 'w' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "client-id", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	int	 ch;

	if (start_init(st) == -1)
		return -1;
	/* "+": options end at the ID, so the command keeps its own. */
	while ((ch = getopt_long(argc, argv, "+dti", longopts, NULL)) != -1) {
		if (ch == 'd')
			st->detach = 1;
		else if (ch == 't')
			st->spec.tty = 1;
		else if (ch == 'i')
			st->spec.stdin_open = 1;
		else if (spec_option(st, ch, optarg) != 0)
			return -1;
	}
	return run_operands(argc, argv, st);
}

int
cli_shell_args(int argc, char **argv, struct cli_start *st)
{
	static const struct option longopts[] = {
		{ "shell", required_argument, NULL, 's' },
		{ "env", required_argument, NULL, 'e' },
		{ "workdir", required_argument, NULL, 'w' },
		{ NULL, 0, NULL, 0 },
	};
	const char	*shell = DEFAULT_SHELL;
	int		 ch;

	if (start_init(st) == -1)
		return -1;
	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (ch == 's' && *optarg != '\0')
			shell = optarg;
		else if (ch == 's' || spec_option(st, ch, optarg) != 0)
			return -1;
	}
	if (argc - optind != 1 || cli_id(argv[0], argv[optind]) == -1)
		return -1;
	st->sandbox = argv[optind];
	/* An argv of one: the shell itself, not a /bin/sh -c line. */
	if ((st->spec.command = json_object_new_array()) == NULL ||
	    json_object_array_add(st->spec.command,
	    json_object_new_string(shell)) != 0) {
		cli_warn("out of memory");
		return -1;
	}
	st->spec.tty = 1;
	st->spec.stdin_open = 1;
	start_done(st);
	return 0;
}

/* SB PID: the operands from optind on, exactly two. */
static int
two_ids(int argc, char **argv, const char **sb, const char **proc)
{
	if (argc - optind < 2 || cli_id(argv[0], argv[optind]) == -1 ||
	    cli_id(argv[0], argv[optind + 1]) == -1)
		return -1;
	*sb = argv[optind];
	*proc = argv[optind + 1];
	optind += 2;
	return 0;
}

int
cli_logs_args(int argc, char **argv, struct cli_logs *l)
{
	static const struct option longopts[] = {
		{ "follow", no_argument, NULL, 'f' },
		{ "after", required_argument, NULL, 'a' },
		{ NULL, 0, NULL, 0 },
	};
	long long	 n;
	int		 ch;

	memset(l, 0, sizeof(*l));
	while ((ch = getopt_long(argc, argv, "f", longopts, NULL)) != -1) {
		if (ch == 'f')
			l->follow = 1;
		else if (ch == 'a' && cli_parse_int(optarg, 0, LLONG_MAX,
		    &n) == 0)
			l->after = (uint64_t)n;
		else
			return -1;
	}
	if (two_ids(argc, argv, &l->sandbox, &l->process) == -1 ||
	    optind != argc)
		return -1;
	return 0;
}

int
cli_attach_args(int argc, char **argv, struct cli_attach *a)
{
	static const struct option longopts[] = {
		{ "no-stdin", no_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	int	 ch;

	memset(a, 0, sizeof(*a));
	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (ch != 'n')
			return -1;
		a->no_stdin = 1;
	}
	if (two_ids(argc, argv, &a->sandbox, &a->process) == -1 ||
	    optind != argc)
		return -1;
	return 0;
}

int
cli_kill_args(int argc, char **argv, struct cli_kill *k)
{
	static const struct option longopts[] = {
		{ "delete", no_argument, NULL, 'D' },
		{ NULL, 0, NULL, 0 },
	};
	int	 ch;

	memset(k, 0, sizeof(*k));
	k->signal = "TERM";
	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (ch != 'D')
			return -1;
		k->delete = 1;
	}
	if (two_ids(argc, argv, &k->sandbox, &k->process) == -1)
		return -1;
	if (optind == argc)
		return 0;
	/* DELETE kills the whole tree: no signal has a say. */
	if (k->delete || argc - optind != 1)
		return -1;
	if ((k->signal = rest_signal_name(argv[optind])) == NULL) {
		cli_warn("kill: unknown signal '%s' (TERM, INT, KILL or HUP)",
		    argv[optind]);
		return -1;
	}
	return 0;
}
