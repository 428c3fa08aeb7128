/*
 * GET /metrics (docs/metrics.md): AGENT_SANDBOX_METRICS_KEY, when set,
 * is the bearer token a scrape must carry.  Held like an API key: at
 * least as long, never quoted in an error, wiped when freed.
 */
#include <stdlib.h>
#include <string.h>

#include "config_internal.h"
#include "format.h"

#define METRICS_KEY_MIN_CHARS	16

/* A token a header carries as it is: no blank, no control character. */
static int
metrics_key_ok(const char *key)
{
	const unsigned char	*p;

	for (p = (const unsigned char *)key; *p != '\0'; p++)
		if (*p <= 0x20 || *p == 0x7f)
			return 0;
	return 1;
}

int
config_load_metrics(struct loader *ld)
{
	struct config	*c = ld->conf;

	if (cfg_get_str(ld, "AGENT_SANDBOX_METRICS_KEY", "",
	    &c->metrics_key) == -1)
		return -1;
	if (c->metrics_key[0] == '\0') {
		free(c->metrics_key);
		c->metrics_key = NULL;
		return 0;
	}
	if (format_pystrlen(c->metrics_key) < METRICS_KEY_MIN_CHARS)
		return cfg_fail(ld, "AGENT_SANDBOX_METRICS_KEY must be at "
		    "least 16 characters long");
	if (!metrics_key_ok(c->metrics_key))
		return cfg_fail(ld, "AGENT_SANDBOX_METRICS_KEY must not hold "
		    "blanks or control characters");
	return 0;
}

void
config_free_metrics(struct config *c)
{
	if (c->metrics_key == NULL)
		return;
	explicit_bzero(c->metrics_key, strlen(c->metrics_key));
	free(c->metrics_key);
	c->metrics_key = NULL;
}
