/*
 * The sandbox verbs: create, ls, inspect, rm and timeout (API.md §4.2 to
 * §4.6).
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The server takes as many (labels.h LABEL_FILTERS_MAX). */
#define LS_FILTERS_MAX	32

/*
 * The body of POST /v1/sandboxes: network, read_only_rootfs and env
 * always (as the SDK sends them), the rest only when given.
 */
static int
create_body(int argc, char **argv, json_object *body)
{
	static const struct option longopts[] = {
		{ "image", required_argument, NULL, 'i' },
		{ "cpus", required_argument, NULL, 'c' },
		{ "memory", required_argument, NULL, 'm' },
		{ "pids", required_argument, NULL, 'p' },
		{ "ttl", required_argument, NULL, 't' },
		{ "network", no_argument, NULL, 'n' },
		{ "writable-rootfs", no_argument, NULL, 'w' },
		{ "env", required_argument, NULL, 'e' },
		{ "label", required_argument, NULL, 'l' },
		{ "allow", required_argument, NULL, 'a' },
		{ NULL, 0, NULL, 0 },
	};
	json_object	*env, *labels = NULL, *policy = NULL;
	double		 cpus;
	long long	 n;
	int		 ch, network = 0, writable = 0, ret = -1;

	if ((env = json_object_new_object()) == NULL) {
		cli_warn("out of memory");
		return -1;
	}
	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (ch) {
		case 'i':
			if (cli_put(body, "image",
			    json_object_new_string(optarg)) == -1)
				goto out;
			break;
		case 'c':
			if (cli_parse_number(optarg, &cpus) == -1 ||
			    cli_put(body, "cpus",
			    json_object_new_double(cpus)) == -1)
				goto out;
			break;
		case 'm':
		case 'p':
		case 't':
			if (cli_parse_int(optarg, 0, INT_MAX, &n) == -1 ||
			    cli_put(body, ch == 'm' ? "memory_mb" : ch == 'p' ?
			    "pids_limit" : "timeout_seconds",
			    json_object_new_int64(n)) == -1)
				goto out;
			break;
		case 'n':
			network = 1;
			break;
		case 'a':
			if (cli_allow_add(&policy, optarg) == -1)
				goto out;
			break;
		case 'w':
			writable = 1;
			break;
		case 'e':
			if (cli_parse_env(env, optarg) == -1)
				goto out;
			break;
		case 'l':
			if (labels == NULL &&
			    (labels = json_object_new_object()) == NULL)
				goto out;
			if (cli_parse_label(labels, optarg) == -1)
				goto out;
			break;
		default:
			goto out;
		}
	}
	if (optind != argc)
		goto out;
	if (network && policy != NULL) {
		cli_warn("--network or --allow, not both: --allow is an "
		    "allowlist, --network what the server makes of true");
		goto out;
	}
	/* Only when given: a server before labels refuses the field. */
	if (labels != NULL) {
		if (cli_put(body, "labels", labels) == -1) {
			labels = NULL;
			goto out;
		}
		labels = NULL;
	}
	if (cli_put(body, "network", policy != NULL ? policy :
	    json_object_new_boolean(network)) == -1) {
		policy = NULL;
		goto out;
	}
	policy = NULL;
	if (cli_put(body, "read_only_rootfs",
	    json_object_new_boolean(!writable)) == -1)
		goto out;
	ret = cli_put(body, "env", env);
	env = NULL;
 out:
	json_object_put(env);
	json_object_put(labels);
	json_object_put(policy);
	return ret;
}

int
cli_create(struct cli *cli, int argc, char **argv)
{
	json_object	*body, *sb;

	if ((body = json_object_new_object()) == NULL) {
		cli_warn("out of memory");
		return CLI_EXIT_FAIL;
	}
	if (create_body(argc, argv, body) == -1) {
		json_object_put(body);
		return cli_usage(argv[0]);
	}
	if (cli_call(cli, "POST", "/v1/sandboxes", body, &sb) == -1) {
		json_object_put(body);
		return CLI_EXIT_FAIL;
	}
	json_object_put(body);
	cli_sandbox_created(cli, sb);
	json_object_put(sb);
	return CLI_EXIT_OK;
}

/* ls's --label filters, argv's own strings: n of them, -1 on a bad one. */
static int
ls_filters(int argc, char **argv, const char **filters, size_t max)
{
	static const struct option longopts[] = {
		{ "label", required_argument, NULL, 'l' },
		{ NULL, 0, NULL, 0 },
	};
	size_t	 n = 0;
	int	 ch;

	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (ch != 'l' || cli_check_filter(optarg) == -1)
			return -1;
		if (n == max) {
			cli_warn("at most %zu --label filters", max);
			return -1;
		}
		filters[n++] = optarg;
	}
	return optind == argc ? (int)n : -1;
}

int
cli_ls(struct cli *cli, int argc, char **argv)
{
	struct rest_error	 err;
	json_object		*list, **sb;
	const char		*filters[LS_FILTERS_MAX];
	size_t			 n;
	int			 nf, ret = CLI_EXIT_OK;

	if ((nf = ls_filters(argc, argv, filters, LS_FILTERS_MAX)) == -1)
		return cli_usage(argv[0]);
	if (rest_sandbox_list(&cli->rc, filters, (size_t)nf, &list,
	    &err) == -1)
		return cli_api_error(&err);
	if (cli->json)
		cli_print_json(list);
	else if ((sb = cli_members(list, "sandboxes", &n)) == NULL)
		ret = CLI_EXIT_FAIL;
	else {
		cli_sandbox_table(sb, n);
		free(sb);
	}
	json_object_put(list);
	return ret;
}

int
cli_inspect(struct cli *cli, int argc, char **argv)
{
	json_object	*sb;
	char		*path;
	int		 i;

	if ((i = cli_options(argc, argv)) == -1 || argc - i != 1 ||
	    cli_id(argv[0], argv[i]) == -1)
		return cli_usage(argv[0]);
	if ((path = cli_resource("sandboxes", argv[i], "")) == NULL)
		return CLI_EXIT_FAIL;
	if (cli_call(cli, "GET", path, NULL, &sb) == -1) {
		free(path);
		return CLI_EXIT_FAIL;
	}
	free(path);
	if (cli->json)
		cli_print_json(sb);
	else
		cli_key_values(sb);
	json_object_put(sb);
	return CLI_EXIT_OK;
}

/*
 * DELETE each of collection/ID: each ID removed is printed (or, with
 * --json, listed in {"deleted": [...]}); 1 if any failed.
 */
int
cli_delete_each(struct cli *cli, const char *collection, int argc,
    char **argv)
{
	json_object	*deleted, *out, *doc;
	char		*path;
	int		 first, i, ret = CLI_EXIT_OK;

	if ((first = cli_options(argc, argv)) == -1 || first == argc)
		return cli_usage(argv[0]);
	for (i = first; i < argc; i++)
		if (cli_id(argv[0], argv[i]) == -1)
			return cli_usage(argv[0]);
	if ((deleted = json_object_new_array()) == NULL) {
		cli_warn("out of memory");
		return CLI_EXIT_FAIL;
	}
	for (i = first; i < argc; i++) {
		if ((path = cli_resource(collection, argv[i], "")) == NULL ||
		    cli_call(cli, "DELETE", path, NULL, &out) == -1) {
			free(path);
			ret = CLI_EXIT_FAIL;
			continue;
		}
		free(path);
		json_object_put(out);
		if (!cli->json) {
			printf("%s\n", argv[i]);
			fflush(stdout);
		} else
			json_object_array_add(deleted,
			    json_object_new_string(argv[i]));
	}
	if (cli->json) {
		if ((doc = json_object_new_object()) != NULL &&
		    json_object_object_add(doc, "deleted", deleted) == 0)
			deleted = NULL;
		cli_print_json(doc);
		json_object_put(doc);
	}
	json_object_put(deleted);
	return ret;
}

int
cli_rm(struct cli *cli, int argc, char **argv)
{
	return cli_delete_each(cli, "sandboxes", argc, argv);
}

/*
 * POST {key: val} to /v1/sandboxes/<id><suffix> and show the sandbox the
 * server answers with (timeout, rollback).  val is taken.
 */
int
cli_sandbox_update(struct cli *cli, const char *id, const char *suffix,
    const char *key, json_object *val)
{
	json_object	*body, *sb;
	char		*path;

	if ((path = cli_resource("sandboxes", id, suffix)) == NULL) {
		json_object_put(val);
		return CLI_EXIT_FAIL;
	}
	if ((body = json_object_new_object()) == NULL ||
	    cli_put(body, key, val) == -1) {
		json_object_put(body);
		free(path);
		return CLI_EXIT_FAIL;
	}
	if (cli_post(cli, path, body, &sb) == -1)
		return CLI_EXIT_FAIL;
	if (cli->json)
		cli_print_json(sb);
	else
		cli_sandbox_table(&sb, 1);
	json_object_put(sb);
	return CLI_EXIT_OK;
}

int
cli_timeout(struct cli *cli, int argc, char **argv)
{
	long long	 secs;
	int		 i;

	if ((i = cli_options(argc, argv)) == -1 || argc - i != 2 ||
	    cli_id(argv[0], argv[i]) == -1 ||
	    cli_parse_int(argv[i + 1], 0, INT_MAX, &secs) == -1)
		return cli_usage(argv[0]);
	return cli_sandbox_update(cli, argv[i], "/timeout", "timeout_seconds",
	    json_object_new_int64(secs));
}

/* label ID K=V|K-...: a merge patch of the sandbox's labels. */
int
cli_label(struct cli *cli, int argc, char **argv)
{
	struct rest_error	 err;
	json_object		*patch, *sb;
	int			 i, j, ret;

	if ((i = cli_options(argc, argv)) == -1 || argc - i < 2 ||
	    cli_id(argv[0], argv[i]) == -1)
		return cli_usage(argv[0]);
	if ((patch = json_object_new_object()) == NULL) {
		cli_warn("out of memory");
		return CLI_EXIT_FAIL;
	}
	for (j = i + 1; j < argc; j++)
		if (cli_label_change(patch, argv[j]) == -1) {
			json_object_put(patch);
			return cli_usage(argv[0]);
		}
	ret = rest_sandbox_patch_labels(&cli->rc, argv[i], patch, &sb, &err);
	json_object_put(patch);
	if (ret == -1)
		return cli_api_error(&err);
	if (cli->json)
		cli_print_json(sb);
	else
		cli_sandbox_table(&sb, 1);
	json_object_put(sb);
	return CLI_EXIT_OK;
}
