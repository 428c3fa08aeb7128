/* Placeholder: replaced by file read, write and list. */
#include <unistd.h>

#include "managerd.h"

void
file_read(uint32_t apid_id, struct file_request *req, int fd)
{
	(void)req;
	close(fd);
	apid_error(apid_id, ERR_INTERNAL, "not implemented");
}

void
file_write(uint32_t apid_id, struct file_write *req, int fd)
{
	(void)req;
	close(fd);
	apid_error(apid_id, ERR_INTERNAL, "not implemented");
}

void
file_list(uint32_t apid_id, struct file_request *req, int fd)
{
	(void)req;
	close(fd);
	apid_error(apid_id, ERR_INTERNAL, "not implemented");
}
