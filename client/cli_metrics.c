/*
 * agent-sandbox metrics: GET /metrics (docs/metrics.md) to stdout, as the
 * server writes it.  The key is AGENT_SANDBOX_METRICS_KEY when set (the
 * server's metrics key, which is no API key), else the API key, which a
 * server without a metrics key does not ask for.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* Far more than any scrape: each daemon's part is at most 1 MiB. */
#define METRICS_MAX	(8 << 20)

static int
use_metrics_key(struct rest_client *rc)
{
	const char	*key = getenv("AGENT_SANDBOX_METRICS_KEY");
	char		*copy;

	if (key == NULL || *key == '\0')
		return 0;
	if ((copy = strdup(key)) == NULL)
		return -1;
	if (rc->key != NULL) {
		explicit_bzero(rc->key, strlen(rc->key));
		free(rc->key);
	}
	rc->key = copy;
	return 0;
}

int
cli_metrics(struct cli *cli, int argc, char **argv)
{
	struct rest_error	 err;

	if (cli_options(argc, argv) != argc)
		return cli_usage(argv[0]);
	if (use_metrics_key(&cli->rc) == -1) {
		cli_warn("out of memory");
		return CLI_EXIT_FAIL;
	}
	if (rest_get_to_fd(&cli->rc, "/metrics", STDOUT_FILENO, METRICS_MAX,
	    NULL, NULL, &err) == -1)
		return cli_api_error(&err);
	return CLI_EXIT_OK;
}
