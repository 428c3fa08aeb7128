/*
 * The archive worker, which parses the tar of sandboxes for apid: all it
 * says to managerd is READY.  managerd's part in its work is the channel
 * between the two: one socketpair made at start-up, each end handed to
 * its process once that is ready, so that apid holds its end before any
 * reply that makes it start an archive job.
 */
#include <sys/socket.h>

#include <unistd.h>

#include "log.h"
#include "managerd.h"

void
dispatch_worker(struct peer *p, struct imsg *imsg)
{
	if (imsg->hdr.type != MSG_READY)
		peer_bad_message(p, imsg, "not for managerd");
	if (imsg->len != 0 || imsg->fd != -1)
		peer_bad_message(p, imsg, "unexpected payload");
	child_ready(&env->worker);
}

void
worker_channel_open(void)
{
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0,
	    env->worker_channel) == -1)
		fatal("socketpair");
}

void
worker_channel_give(struct child *c)
{
	struct peer	*p;
	uint32_t	 type;
	int		*end;

	if (c == &env->apid) {
		p = &env->apid_peer;
		type = MSG_APID_WORKER_CHANNEL;
		end = &env->worker_channel[0];
	} else if (c == &env->worker) {
		p = &env->worker_peer;
		type = MSG_WORKER_APID_CHANNEL;
		end = &env->worker_channel[1];
	} else
		return;
	if (*end == -1)
		return;
	/* The message owns the descriptor from here, sent or not. */
	if (peer_send(p, type, 0, *end, NULL) == -1)
		fatalx("cannot hand %s its channel to the archive worker",
		    c->name);
	*end = -1;
}
