/*
 * agent-sandbox: the command-line entry point.  "serve" runs managerd with
 * the given host and port; "--version" prints the version.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char	**environ;

static void
usage(void)
{
	fprintf(stderr,
	    "usage: agent-sandbox --version\n"
	    "       agent-sandbox serve [--host HOST] [--port PORT]\n");
	exit(2);
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

int
main(int argc, char *argv[])
{
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
	fprintf(stderr, "agent-sandbox: unknown command '%s'\n", argv[1]);
	usage();
}
