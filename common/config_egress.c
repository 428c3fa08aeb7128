/*
 * Egress policies' settings (issue 15, docs/architecture.md "Egress"):
 * what a client's "network": true means, and the egress proxy's
 * resolvers, the ranges the operator counts as public, and how many
 * connections each sandbox's log keeps.
 */
#include <arpa/inet.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_internal.h"
#include "egress_policy.h"

/* Nameservers the proxy asks, at most: as many as resolv.conf has. */
#define EGRESS_DNS_MAX	3

static const char *const network_true_words[] = {
	"public", "public",
	"bridge", "bridge",
	NULL, NULL
};

/* Each one an IPv4 or IPv6 address, no port, no name: evdns's own form. */
static int
egress_dns_check(struct loader *ld, const char *raw)
{
	char		**list;
	size_t		  n, i;
	unsigned char	  a[16];
	int		  rc = 0;

	if ((list = config_parse_list(raw, &n)) == NULL)
		return cfg_fail(ld, "out of memory");
	if (n > EGRESS_DNS_MAX)
		rc = cfg_fail(ld, "AGENT_SANDBOX_EGRESS_DNS names more than "
		    "3 nameservers");
	for (i = 0; rc == 0 && i < n; i++) {
		if (inet_pton(AF_INET, list[i], a) != 1 &&
		    inet_pton(AF_INET6, list[i], a) != 1)
			rc = cfg_fail_raw(ld, RAW_VALUE,
			    "AGENT_SANDBOX_EGRESS_DNS", raw);
	}
	config_list_free(list);
	return rc;
}

static int
egress_public_check(struct loader *ld, const char *raw)
{
	struct egress_extra	 extra;
	char			 why[256], msg[400];

	if (egress_extra_parse(raw, &extra, why, sizeof(why)) == 0)
		return 0;
	snprintf(msg, sizeof(msg), "AGENT_SANDBOX_EGRESS_PUBLIC: %s", why);
	return cfg_fail(ld, msg);
}

int
config_load_egress(struct loader *ld)
{
	struct config	*c = ld->conf;

	if (cfg_get_word(ld, "AGENT_SANDBOX_NETWORK_TRUE", network_true_words,
	    "public", RAW_VALUE, &c->network_true) == -1 ||
	    cfg_get_str(ld, "AGENT_SANDBOX_EGRESS_DNS", "",
	    &c->egress_dns) == -1 ||
	    egress_dns_check(ld, c->egress_dns) == -1 ||
	    cfg_get_str(ld, "AGENT_SANDBOX_EGRESS_PUBLIC", "",
	    &c->egress_public) == -1 ||
	    egress_public_check(ld, c->egress_public) == -1 ||
	    cfg_get_long(ld, "AGENT_SANDBOX_EGRESS_LOG_SIZE",
	    EGRESS_LOG_DEFAULT, 1, EGRESS_LOG_MAX, &c->egress_log_size) == -1)
		return -1;
	return 0;
}

void
config_free_egress(struct config *c)
{
	free(c->network_true);
	free(c->egress_dns);
	free(c->egress_public);
	c->network_true = c->egress_dns = c->egress_public = NULL;
}
