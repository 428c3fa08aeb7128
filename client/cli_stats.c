/*
 * agent-sandbox stats ID: a sandbox's figures (GET .../stats) as lines
 * of text, or with --json the server's document.  An unknown figure (a
 * stopped sandbox, no network, an image without du) is "-".
 */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

/* o[group][key] as an integer: 0 with *out, -1 when null or absent. */
static int
figure(json_object *o, const char *group, const char *key, int64_t *out)
{
	json_object	*g, *v;

	if (!json_object_object_get_ex(o, group, &g) || g == NULL ||
	    !json_object_object_get_ex(g, key, &v) || v == NULL ||
	    !json_object_is_type(v, json_type_int))
		return -1;
	*out = json_object_get_int64(v);
	return 0;
}

static const char *
size_or_dash(json_object *o, const char *group, const char *key,
    char *buf, size_t len)
{
	int64_t	 n;

	if (figure(o, group, key, &n) == -1)
		return "-";
	cli_human_size(n, buf, len);
	return buf;
}

static void
print_cpu(json_object *o)
{
	json_object	*cpu, *v;
	double		 secs;

	if (!json_object_object_get_ex(o, "cpu", &cpu) || cpu == NULL ||
	    !json_object_object_get_ex(cpu, "usage_seconds", &v) ||
	    v == NULL) {
		printf("cpu:       -\n");
		return;
	}
	secs = json_object_get_double(v);
	printf("cpu:       %.2f s used", secs);
	if (json_object_object_get_ex(cpu, "percent", &v) && v != NULL)
		printf(", %.1f%% of a CPU", json_object_get_double(v));
	printf("\n");
}

static void
print_stats(const char *id, json_object *o)
{
	char	 a[32], b[32];
	int64_t	 cur, lim;

	printf("sandbox:   %s (%s)\n", id, cli_str(o, "status"));
	print_cpu(o);
	printf("memory:    %s of %s\n",
	    size_or_dash(o, "memory", "usage_bytes", a, sizeof(a)),
	    size_or_dash(o, "memory", "limit_bytes", b, sizeof(b)));
	if (figure(o, "pids", "current", &cur) == -1)
		printf("pids:      -\n");
	else if (figure(o, "pids", "limit", &lim) == -1)
		printf("pids:      %lld\n", (long long)cur);
	else
		printf("pids:      %lld of %lld\n", (long long)cur,
		    (long long)lim);
	printf("workspace: %s\n",
	    size_or_dash(o, "workspace", "bytes", a, sizeof(a)));
	printf("network:   rx %s, tx %s\n",
	    size_or_dash(o, "network", "rx_bytes", a, sizeof(a)),
	    size_or_dash(o, "network", "tx_bytes", b, sizeof(b)));
	fflush(stdout);
}

int
cli_stats(struct cli *cli, int argc, char **argv)
{
	struct rest_error	 err;
	json_object		*o;
	int			 i;

	if ((i = cli_options(argc, argv)) == -1 || argc - i != 1 ||
	    cli_id(argv[0], argv[i]) == -1)
		return cli_usage(argv[0]);
	if (rest_sandbox_stats(&cli->rc, argv[i], &o, &err) == -1)
		return cli_api_error(&err);
	if (cli->json)
		cli_print_json(o);
	else
		print_stats(argv[i], o);
	json_object_put(o);
	return CLI_EXIT_OK;
}
