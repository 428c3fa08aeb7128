/* Placeholder: replaced by snapshot create, list, get, delete. */
#include <unistd.h>

#include "managerd.h"

void
snapshot_create(uint32_t apid_id, struct snapshot_create *req, int fd)
{
	(void)req;
	close(fd);
	apid_error(apid_id, ERR_INTERNAL, "not implemented");
}

void
snapshot_written(uint32_t apid_id, struct tar_result *res)
{
	(void)apid_id; (void)res;
}

void
snapshot_list(uint32_t apid_id, const char *sandbox_id)
{
	(void)sandbox_id;
	apid_error(apid_id, ERR_INTERNAL, "not implemented");
}

void
snapshot_get(uint32_t apid_id, const char *id)
{
	(void)id;
	apid_error(apid_id, ERR_INTERNAL, "not implemented");
}

void
snapshot_delete(uint32_t apid_id, const char *id)
{
	(void)id;
	apid_error(apid_id, ERR_INTERNAL, "not implemented");
}
