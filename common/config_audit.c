/*
 * The audit log's settings (managerd/audit.c): where the lines go.
 */
#include "config_internal.h"

static const char *const audit_words[] = {
	"file", "file",
	"syslog", "syslog",
	"off", "off",
	NULL, NULL
};

int
config_load_audit(struct loader *ld)
{
	return cfg_get_word(ld, "AGENT_SANDBOX_AUDIT_LOG", audit_words, "file",
	    RAW_VALUE, &ld->conf->audit_log);
}
