/*
 * The operations managerd may ask for.  This switch is the whole interface
 * of the process that holds the Docker socket: there is no pass-through.
 */
#include "log.h"
#include "proxy.h"

void
proxy_dispatch_parent(struct peer *p, struct imsg *imsg)
{
	struct proxy	*px = p->arg;

	if (imsg->fd != -1)
		peer_bad_message(p, imsg, "unexpected descriptor");
	switch (imsg->hdr.type) {
	case MSG_DOCKER_PING:
		if (imsg->len != 0)
			peer_bad_message(p, imsg, "unexpected payload");
		docker_ping(px, imsg->hdr.peerid);
		break;
	default:
		peer_bad_message(p, imsg, "not an operation of dockerd-proxy");
	}
}
