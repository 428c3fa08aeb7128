/* Placeholder: replaced by fork. */
#include "managerd.h"

void
snapshot_fork(uint32_t apid_id, struct fork_request *req)
{
	(void)req;
	apid_error(apid_id, ERR_INTERNAL, "not implemented");
}
