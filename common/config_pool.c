/*
 * AGENT_SANDBOX_WARM_POOL (docs/configuration.md "Warm pool"): per image,
 * how many sandbox containers managerd keeps created and started ahead,
 * "IMAGE=N[,IMAGE=N...]".  Unset or empty: no pool.  An image is a
 * Docker reference (no blank, '=' or ','), named once; N in
 * [1, POOL_IMAGE_MAX]; the counts together at most max_sandboxes, which
 * counts pooled containers too.  Whether each image is allowed is
 * managerd's check (its allowlist code), at start-up.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_internal.h"

/* "<before><part, at most 200 bytes><after>" as the error. */
static int
pool_fail(struct loader *ld, const char *before, const char *part,
    const char *after)
{
	char	 msg[512];

	snprintf(msg, sizeof(msg), "AGENT_SANDBOX_WARM_POOL%s%.200s%s",
	    before, part, after);
	return cfg_fail(ld, msg);
}

/* One "IMAGE=N"; part is NUL-terminated and changed in place. */
static int
pool_entry(struct loader *ld, char *part, struct config_pool *p)
{
	char		*eq, *end;
	long		 n;
	size_t		 i;

	if ((eq = strrchr(part, '=')) == NULL || eq == part)
		return pool_fail(ld, ": each entry is IMAGE=COUNT, not ",
		    part, "");
	*eq = '\0';
	for (i = 0; part[i] != '\0'; i++)
		if ((unsigned char)part[i] <= ' ' || part[i] == '=' ||
		    (unsigned char)part[i] >= 0x7f)
			return pool_fail(ld, ": ", part,
			    " is not an image reference");
	errno = 0;
	n = strtol(eq + 1, &end, 10);
	if (eq[1] < '0' || eq[1] > '9' || *end != '\0' || errno != 0 ||
	    n < 1 || n > POOL_IMAGE_MAX)
		return pool_fail(ld, ": the count of ", part,
		    " must be a whole number in [1, 64]");
	for (i = 0; i < p->count; i++)
		if (strcmp(p->images[i], part) == 0)
			return pool_fail(ld, " names ", part, " twice");
	if (p->count == POOL_IMAGES_MAX)
		return cfg_fail(ld, "AGENT_SANDBOX_WARM_POOL: at most 16 "
		    "images");
	if ((p->images[p->count] = strdup(part)) == NULL)
		return cfg_fail(ld, "out of memory");
	p->counts[p->count++] = n;
	p->total += n;
	return 0;
}

int
config_load_pool(struct loader *ld)
{
	struct config_pool	*p = &ld->conf->pool;
	char			*raw, *part, *next;
	int			 rc = 0;

	if (cfg_get_str(ld, "AGENT_SANDBOX_WARM_POOL", "", &raw) == -1)
		return -1;
	for (part = raw; rc == 0 && part != NULL && *raw != '\0';
	    part = next) {
		if ((next = strchr(part, ',')) != NULL)
			*next++ = '\0';
		rc = pool_entry(ld, part, p);
	}
	free(raw);
	if (rc == 0 && p->total > ld->conf->max_sandboxes)
		rc = cfg_fail(ld, "AGENT_SANDBOX_WARM_POOL keeps more sandboxes "
		    "than max_sandboxes allows (pooled ones count)");
	return rc;
}

void
config_free_pool(struct config *c)
{
	size_t	 i;

	for (i = 0; i < c->pool.count; i++)
		free(c->pool.images[i]);
	memset(&c->pool, 0, sizeof(c->pool));
}
