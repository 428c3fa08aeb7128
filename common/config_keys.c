/*
 * The keys file's setting (docs/configuration.md "Keys file"): its path
 * only.  The file itself is read by managerd before it confines itself
 * and by its spawner on SIGHUP (common/keys_file.c), not here: the
 * other programs that load the configuration have no use for it.
 */
#include "config_internal.h"

int
config_load_keys(struct loader *ld)
{
	struct config	*c = ld->conf;

	if (cfg_get_str(ld, "AGENT_SANDBOX_KEYS_FILE", "", &c->keys_file) ==
	    -1)
		return -1;
	if (c->keys_file[0] != '\0' && c->keys_file[0] != '/')
		return cfg_fail_raw(ld, RAW_ABSPATH, "AGENT_SANDBOX_KEYS_FILE",
		    c->keys_file);
	return 0;
}
