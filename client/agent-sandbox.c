/*
 * agent-sandbox: the command-line entry point.  "serve" runs managerd with
 * the given host and port, "openapi" prints the API description and
 * "--version" the version; every other verb is a client of a running
 * server (AGENT_SANDBOX_URL, AGENT_SANDBOX_API_KEY), implemented in the
 * cli_*.c files and listed in the table below.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "client_seccomp.h"
#include "log.h"
#include "openapi.h"

extern char	**environ;

const struct cli_verb	cli_verbs[] = {
	{ "create", cli_create,
	    "[--image IMG] [--cpus N] [--memory MB] [--pids N]\n"
	    "\t[--ttl SECONDS] [--network | --allow ENTRY...] "
	    "[--writable-rootfs]\n\t[--env K=V]... [--label K=V]...",
	    "create a sandbox and print its ID" },
	{ "ls", cli_ls, "[--label K[=V]]...",
	    "list sandboxes (with every label given)" },
	{ "inspect", cli_inspect, "ID", "show one sandbox" },
	{ "label", cli_label, "ID K=V|K-...",
	    "set (K=V) or remove (K-) a sandbox's labels" },
	{ "stats", cli_stats, "ID",
	    "show a sandbox's CPU, memory, pids, workspace and network" },
	{ "network", cli_network, "ID [none | public | allow ENTRY...]",
	    "show a sandbox's egress policy, or replace it" },
	{ "network-log", cli_network_log, "ID",
	    "a sandbox's recent connections through the egress proxy" },
	{ "rm", cli_rm, "ID...", "destroy sandboxes" },
	{ "timeout", cli_timeout, "ID SECONDS",
	    "let a sandbox live SECONDS from now" },
	{ "exec", cli_exec,
	    "[--timeout S] [--env K=V]... [--workdir DIR]\n"
	    "\tID -- CMD [ARG...]",
	    "run a command (one CMD: a /bin/sh -c line; more: an argv)" },
	{ "cp", cli_cp, "SRC DST",
	    "copy one file; one side is SB:/path, '-' is stdin/stdout" },
	{ "snapshot", cli_snapshot, "ID [--name NAME]",
	    "snapshot a sandbox's /workspace and print the snapshot ID" },
	{ "snapshots", cli_snapshots, "[--sandbox ID]", "list snapshots" },
	{ "rollback", cli_rollback, "ID SNAP",
	    "restore a snapshot into a sandbox" },
	{ "fork", cli_fork,
	    "SNAP [--ttl S] [--cpus N] [--memory MB]\n"
	    "\t[--network | --allow ENTRY...] [--label K=V]...",
	    "create a sandbox from a snapshot and print its ID" },
	{ "snapshot-rm", cli_snapshot_rm, "SNAP...", "delete snapshots" },
	{ "run", cli_run,
	    "[-d] [-t] [-i] [--timeout S] [--env K=V]...\n"
	    "\t[--workdir DIR] [--client-id ID] ID -- CMD [ARG...]",
	    "start a command that outlives the CLI (-d: print its ID)" },
	{ "ps", cli_ps, "ID", "list a sandbox's processes" },
	{ "logs", cli_logs, "[-f] [--after SEQ] ID PROC",
	    "print a process's output (-f: follow it to its end)" },
	{ "attach", cli_attach, "[--no-stdin] ID PROC",
	    "connect to a process's terminal, or its stdin and output" },
	{ "shell", cli_shell,
	    "[--shell PATH] [--env K=V]... [--workdir DIR] ID",
	    "an interactive shell in a sandbox, deleted when it ends" },
	{ "kill", cli_kill, "[--delete] ID PROC [SIGNAL]",
	    "signal a process (TERM); --delete kills and removes it" },
	{ "metrics", cli_metrics, "",
	    "print the server's metrics (key: AGENT_SANDBOX_METRICS_KEY)" },
	{ NULL, NULL, NULL, NULL },
};

static void
usage_text(FILE *fp)
{
	const struct cli_verb	*v;

	fprintf(fp,
	    "usage: agent-sandbox --version\n"
	    "       agent-sandbox serve [--host HOST] [--port PORT]\n"
	    "       agent-sandbox openapi [-o FILE | --output FILE]\n"
	    "       agent-sandbox hash-key [--generate] [--name NAME] "
	    "[--tenant TENANT] [--admin]\n"
	    "       agent-sandbox help [VERB]\n"
	    "       agent-sandbox [--json] VERB [ARG...]\n"
	    "\nverbs (a server at AGENT_SANDBOX_URL, default %s,\n"
	    "key in AGENT_SANDBOX_API_KEY):\n", REST_DEFAULT_URL);
	for (v = cli_verbs; v->name != NULL; v++)
		fprintf(fp, "  %-12s %s\n", v->name, v->help);
	fprintf(fp, "\n--json (before or after the verb) prints the "
	    "server's JSON instead of text.\n");
}

static void
usage(void)
{
	usage_text(stderr);
	exit(CLI_EXIT_USAGE);
}

const struct cli_verb *
cli_verb_find(const char *name)
{
	const struct cli_verb	*v;

	for (v = cli_verbs; v->name != NULL; v++)
		if (strcmp(v->name, name) == 0)
			return v;
	return NULL;
}

static void
verb_text(FILE *fp, const struct cli_verb *v)
{
	fprintf(fp, "usage: agent-sandbox %s%s%s\n", v->name,
	    *v->usage != '\0' ? " " : "", v->usage);
}

int
cli_usage(const char *verb)
{
	const struct cli_verb	*v;

	if ((v = cli_verb_find(verb)) == NULL)
		usage_text(stderr);
	else
		verb_text(stderr, v);
	return CLI_EXIT_USAGE;
}

int
cli_help(const char *verb)
{
	const struct cli_verb	*v;

	if (verb == NULL)
		usage_text(stdout);
	else if ((v = cli_verb_find(verb)) == NULL) {
		fprintf(stderr, "agent-sandbox: unknown command '%s'\n", verb);
		usage();
	} else {
		verb_text(stdout, v);
		printf("%s\n", v->help);
	}
	return CLI_EXIT_OK;
}

static const char *
managerd_path(void)
{
	const char	*p = getenv("AGENT_SANDBOX_MANAGERD");

	return (p != NULL && *p != '\0') ? p : SBINDIR "/managerd";
}

static int
serve(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "host", required_argument, NULL, 'h' },
		{ "port", required_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	const char	*errstr, *path;
	long long	 port;
	int		 ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (ch) {
		case 'h':
			if (*optarg == '\0')
				usage();
			if (setenv("AGENT_SANDBOX_HOST", optarg, 1) == -1)
				return 1;
			break;
		case 'p':
			port = strtonum(optarg, 0, 65535, &errstr);
			if (errstr != NULL) {
				fprintf(stderr, "agent-sandbox: port %s is %s\n",
				    optarg, errstr);
				usage();
			}
			/* Port 0 means: keep the configured or default port. */
			if (port != 0 && setenv("AGENT_SANDBOX_PORT", optarg,
			    1) == -1)
				return 1;
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	path = managerd_path();
	execle(path, "managerd", (char *)NULL, environ);
	fprintf(stderr, "agent-sandbox: cannot run %s: %s\n", path,
	    strerror(errno));
	return 1;
}

/* A pipe whose reader has closed it polls as an error for writing. */
static int
stdout_gone(void)
{
	struct pollfd	 pfd;

	pfd.fd = STDOUT_FILENO;
	pfd.events = POLLOUT;
	pfd.revents = 0;
	return poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLERR);
}

/* What a verb may do beyond a REST call (cli_seccomp.c). */
static int
verb_filter(const struct cli_verb *v)
{
	if (v->run == cli_cp)
		return CLI_SECCOMP_FILES;
	if (v->run == cli_attach || v->run == cli_shell)
		return CLI_SECCOMP_TTY;
	return 0;
}

/*
 * Run a client verb.  Every "--json" before a "--" is taken out of its
 * arguments (so the flag may follow the verb), and "-h" / "--help" there
 * prints the verb's usage.
 */
static int
client_verb(const struct cli_verb *v, int argc, char *argv[], int json)
{
	struct cli	  cli;
	struct rest_error rerr;
	char		**args, err[256];
	int		  i, n = 0, ret, end = 0, mode;

	if ((args = calloc(argc + 1, sizeof(*args))) == NULL) {
		fprintf(stderr, "agent-sandbox: %s\n", strerror(errno));
		return CLI_EXIT_FAIL;
	}
	for (i = 0; i < argc; i++) {
		if (!end && i > 0 && strcmp(argv[i], "--") == 0)
			end = 1;
		if (!end && i > 0 && strcmp(argv[i], "--json") == 0) {
			json = 1;
			continue;
		}
		if (!end && i > 0 && (strcmp(argv[i], "-h") == 0 ||
		    strcmp(argv[i], "--help") == 0)) {
			free(args);
			return cli_help(v->name);
		}
		args[n++] = argv[i];
	}
	memset(&cli, 0, sizeof(cli));
	cli.json = json;
	if (rest_client_init(&cli.rc, NULL, NULL, err, sizeof(err)) == -1) {
		fprintf(stderr, "agent-sandbox: %s\n", err);
		free(args);
		return CLI_EXIT_FAIL;
	}
	/*
	 * The filter allows no name lookup: resolve now.  A name that does
	 * not resolve fails the verb's first request, after its usage was
	 * checked.
	 */
	(void)rest_client_resolve(&cli.rc, &rerr);
	/*
	 * A reader of stdout that goes away (exec ... | head -1) shows as
	 * EPIPE, which the verbs turn into a quiet exit.
	 */
	signal(SIGPIPE, SIG_IGN);
	log_init(LOG_TO_STDERR, LOG_LEVEL_WARN, "agent-sandbox");
	if ((mode = client_seccomp_mode("agent-sandbox")) == -1 ||
	    (v->run == cli_cp && cli_cp_signals() == -1) ||
	    cli_seccomp_load(mode, verb_filter(v)) == -1) {
		fprintf(stderr, "agent-sandbox: cannot install the seccomp "
		    "filter\n");
		rest_client_free(&cli.rc);
		free(args);
		return CLI_EXIT_FAIL;
	}
	optind = 0;	/* glibc: start getopt afresh for the verb */
	ret = v->run(&cli, n, args);
	/* Output that could not be written is a failure too. */
	if (fflush(stdout) == EOF || ferror(stdout)) {
		if (stdout_gone())
			ret = CLI_EXIT_PIPE;
		else {
			fprintf(stderr, "agent-sandbox: cannot write to "
			    "stdout\n");
			if (ret == CLI_EXIT_OK)
				ret = CLI_EXIT_FAIL;
		}
	}
	rest_client_free(&cli.rc);
	free(args);
	return ret;
}

int
main(int argc, char *argv[])
{
	const struct cli_verb	*v;
	int			 i, json = 0;

	if (argc < 2)
		usage();
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
		if (argc != 2)
			usage();
		printf("agent-sandbox %s\n", PACKAGE_VERSION);
		return 0;
	}
	if (strcmp(argv[1], "serve") == 0)
		return serve(argc - 1, argv + 1);
	/* The OpenAPI document: common/openapi.c. */
	if (strcmp(argv[1], "openapi") == 0)
		return openapi_main(argc - 1, argv + 1);
	/* A keys file entry (cli_hash_key.c): local, like the two above. */
	if (strcmp(argv[1], "hash-key") == 0)
		return hash_key_main(argc - 1, argv + 1);
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (strcmp(argv[i], "-h") == 0 ||
		    strcmp(argv[i], "--help") == 0)
			return cli_help(NULL);
		else {
			fprintf(stderr, "agent-sandbox: unknown option '%s'\n",
			    argv[i]);
			usage();
		}
	}
	if (i == argc)
		usage();
	if (strcmp(argv[i], "help") == 0) {
		if (argc - i > 2)
			usage();
		return cli_help(argc - i == 2 ? argv[i + 1] : NULL);
	}
	if ((v = cli_verb_find(argv[i])) == NULL) {
		fprintf(stderr, "agent-sandbox: unknown command '%s'\n",
		    argv[i]);
		usage();
	}
	return client_verb(v, argc - i, argv + i, json);
}
