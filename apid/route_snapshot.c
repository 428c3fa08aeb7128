/* Placeholder: replaced by the snapshot routes. */
#include "apid.h"

#define NOT_YET(fn) \
void fn(struct evhttp_request *req, char **params) \
{ (void)params; respond_error(req, ERR_INTERNAL, "not implemented"); }

NOT_YET(route_snapshot_create)
NOT_YET(route_sandbox_rollback)
NOT_YET(route_snapshot_list)
NOT_YET(route_snapshot_get)
NOT_YET(route_snapshot_delete)
NOT_YET(route_snapshot_fork)
