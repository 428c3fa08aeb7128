/*
 * The snapshot verbs: snapshot, snapshots, rollback, fork and
 * snapshot-rm (API.md §4.12 to §4.17).
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int
cli_snapshot(struct cli *cli, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "name", required_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	json_object	*body, *snap;
	const char	*name = NULL;
	char		*path;
	int		 ch;

	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (ch != 'n')
			return cli_usage(argv[0]);
		name = optarg;
	}
	if (argc - optind != 1 || cli_id(argv[0], argv[optind]) == -1)
		return cli_usage(argv[0]);
	if ((path = cli_resource("sandboxes", argv[optind],
	    "/snapshots")) == NULL)
		return CLI_EXIT_FAIL;
	/* As the SDK: {"name": null} when there is none. */
	if ((body = json_object_new_object()) == NULL ||
	    json_object_object_add(body, "name", name != NULL ?
	    json_object_new_string(name) : NULL) != 0) {
		cli_warn("out of memory");
		json_object_put(body);
		free(path);
		return CLI_EXIT_FAIL;
	}
	if (cli_post(cli, path, body, &snap) == -1)
		return CLI_EXIT_FAIL;
	if (cli->json)
		cli_print_json(snap);
	else
		printf("%s\n", cli_str(snap, "id"));
	json_object_put(snap);
	return CLI_EXIT_OK;
}

int
cli_snapshots(struct cli *cli, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "sandbox", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	json_object	*list, **snap;
	const char	*sandbox = NULL;
	char		*esc, *path;
	size_t		 n;
	int		 ch, ret = CLI_EXIT_OK;

	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (ch != 's')
			return cli_usage(argv[0]);
		sandbox = optarg;
	}
	if (optind != argc)
		return cli_usage(argv[0]);
	if (sandbox == NULL)
		path = strdup("/v1/snapshots");
	else if ((esc = rest_escape(sandbox)) == NULL)
		path = NULL;
	else {
		if (asprintf(&path, "/v1/snapshots?sandbox_id=%s", esc) == -1)
			path = NULL;
		free(esc);
	}
	if (path == NULL) {
		cli_warn("out of memory");
		return CLI_EXIT_FAIL;
	}
	if (cli_call(cli, "GET", path, NULL, &list) == -1) {
		free(path);
		return CLI_EXIT_FAIL;
	}
	free(path);
	if (cli->json)
		cli_print_json(list);
	else if ((snap = cli_members(list, "snapshots", &n)) == NULL)
		ret = CLI_EXIT_FAIL;
	else {
		cli_snapshot_table(snap, n);
		free(snap);
	}
	json_object_put(list);
	return ret;
}

int
cli_rollback(struct cli *cli, int argc, char **argv)
{
	int	 i;

	if ((i = cli_options(argc, argv)) == -1 || argc - i != 2 ||
	    cli_id(argv[0], argv[i]) == -1 ||
	    cli_id(argv[0], argv[i + 1]) == -1)
		return cli_usage(argv[0]);
	return cli_sandbox_update(cli, argv[i], "/rollback", "snapshot_id",
	    json_object_new_string(argv[i + 1]));
}

/* The overrides of a fork, only those given (API.md §4.17). */
static int
fork_body(int argc, char **argv, json_object *body)
{
	static const struct option longopts[] = {
		{ "ttl", required_argument, NULL, 't' },
		{ "cpus", required_argument, NULL, 'c' },
		{ "memory", required_argument, NULL, 'm' },
		{ "network", no_argument, NULL, 'n' },
		{ "label", required_argument, NULL, 'l' },
		{ "allow", required_argument, NULL, 'a' },
		{ NULL, 0, NULL, 0 },
	};
	json_object	*labels = NULL, *policy = NULL;
	double		 cpus;
	long long	 n;
	int		 ch, network = 0;

	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (ch) {
		case 't':
		case 'm':
			if (cli_parse_int(optarg, 0, INT_MAX, &n) == -1 ||
			    cli_put(body, ch == 't' ? "timeout_seconds" :
			    "memory_mb", json_object_new_int64(n)) == -1)
				return -1;
			break;
		case 'c':
			if (cli_parse_number(optarg, &cpus) == -1 ||
			    cli_put(body, "cpus",
			    json_object_new_double(cpus)) == -1)
				return -1;
			break;
		case 'n':
			network = 1;
			break;
		case 'a':
			/* The body owns it from the first one on. */
			if (policy == NULL) {
				if (cli_allow_add(&policy, optarg) == -1) {
					json_object_put(policy);
					return -1;
				}
				if (cli_put(body, "network", policy) == -1)
					return -1;
			} else if (cli_allow_add(&policy, optarg) == -1)
				return -1;
			break;
		case 'l':
			/* The body owns them from the first one on. */
			if (labels == NULL && ((labels =
			    json_object_new_object()) == NULL ||
			    cli_put(body, "labels", labels) == -1))
				return -1;
			if (cli_parse_label(labels, optarg) == -1)
				return -1;
			break;
		default:
			return -1;
		}
	}
	if (argc - optind != 1 || cli_id(argv[0], argv[optind]) == -1)
		return -1;
	if (network && policy != NULL) {
		cli_warn("--network or --allow, not both: --allow is an "
		    "allowlist, --network what the server makes of true");
		return -1;
	}
	if (network && cli_put(body, "network",
	    json_object_new_boolean(1)) == -1)
		return -1;
	return 0;
}

int
cli_fork(struct cli *cli, int argc, char **argv)
{
	json_object	*body, *sb;
	char		*path;

	if ((body = json_object_new_object()) == NULL) {
		cli_warn("out of memory");
		return CLI_EXIT_FAIL;
	}
	if (fork_body(argc, argv, body) == -1) {
		json_object_put(body);
		return cli_usage(argv[0]);
	}
	if ((path = cli_resource("snapshots", argv[optind], "/fork")) ==
	    NULL) {
		json_object_put(body);
		return CLI_EXIT_FAIL;
	}
	if (cli_post(cli, path, body, &sb) == -1)
		return CLI_EXIT_FAIL;
	cli_sandbox_created(cli, sb);
	json_object_put(sb);
	return CLI_EXIT_OK;
}

int
cli_snapshot_rm(struct cli *cli, int argc, char **argv)
{
	return cli_delete_each(cli, "snapshots", argc, argv);
}
