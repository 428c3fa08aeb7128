/* Placeholder: replaced by archive get and put. */
#include <stdlib.h>
#include <unistd.h>

#include "log.h"
#include "proxy.h"

static void
not_yet(struct proxy *px, uint32_t peerid)
{
	peer_send_error(&px->parent, peerid, ERR_INTERNAL, "not implemented");
}

void
docker_archive_get(struct proxy *px, uint32_t peerid, struct archive_get *ag,
    int fd)
{
	close(fd);
	archive_get_free(ag);
	free(ag);
	not_yet(px, peerid);
}

void
docker_archive_put(struct proxy *px, uint32_t peerid, struct archive_put *ap,
    int fd)
{
	close(fd);
	archive_put_free(ap);
	free(ap);
	not_yet(px, peerid);
}
