/* Placeholder: replaced by the snapshot, rollback and fork bodies. */
#include "apid.h"

int
body_parse_snapshot_create(const char *ctype, const void *b, size_t len,
    char **name, struct body_error *err)
{
	(void)ctype; (void)b; (void)len; *name = NULL;
	return set_error(err, 400, "invalid_request", "not implemented");
}

int
body_parse_rollback(const char *ctype, const void *b, size_t len,
    char **snapshot_id, struct body_error *err)
{
	(void)ctype; (void)b; (void)len; *snapshot_id = NULL;
	return set_error(err, 400, "invalid_request", "not implemented");
}

int
body_parse_fork(const char *ctype, const void *b, size_t len,
    struct fork_request *f, struct body_error *err)
{
	(void)ctype; (void)b; (void)len; (void)f;
	return set_error(err, 400, "invalid_request", "not implemented");
}
