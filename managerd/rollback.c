/* Placeholder: replaced by rollback. */
#include "managerd.h"

void
sandbox_rollback(uint32_t apid_id, struct rollback_request *req)
{
	(void)req;
	apid_error(apid_id, ERR_INTERNAL, "not implemented");
}
