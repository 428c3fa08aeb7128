/*
 * The archive worker, which parses the tar of sandboxes for apid: all it
 * says to managerd is READY.  managerd's part in its work is the channel
 * between the two.  Whenever one of them comes up (at start-up, or again
 * after it died) while the other's end of their channel is gone with the
 * dead one, managerd makes a new socketpair and hands each end to its
 * process as soon as that process is ready; an end for a process that is
 * still starting waits here.  apid therefore holds its end before any
 * reply that makes it start an archive job, and either side drops an old
 * channel when a new one comes.
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
	child_ready(CHILD_WORKER, imsg);
}

void
worker_channel_init(void)
{
	unsigned int	 n;

	for (n = 0; n < CHILD_MAX; n++)
		env->worker_channel_pending[n] = -1;
}

static enum child_id
channel_other(enum child_id id)
{
	return id == CHILD_APID ? CHILD_WORKER : CHILD_APID;
}

/* Its end goes to id now (the message owns it, sent or not). */
static void
channel_give(enum child_id id, int fd)
{
	uint32_t	 type;

	type = id == CHILD_APID ? MSG_APID_WORKER_CHANNEL :
	    MSG_WORKER_APID_CHANNEL;
	if (peer_send(env->child[id].peer, type, 0, fd, NULL) == -1)
		fatalx("cannot hand %s its channel to %s",
		    child_kinds[id].name, child_kinds[channel_other(id)].name);
}

void
worker_channel_ready(enum child_id id)
{
	enum child_id	 other = channel_other(id);
	int		 pair[2];

	if (env->worker_channel_pending[id] != -1) {
		channel_give(id, env->worker_channel_pending[id]);
		env->worker_channel_pending[id] = -1;
		return;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0,
	    pair) == -1)
		fatal("socketpair for apid and the archive worker");
	channel_give(id, pair[0]);
	if (child_up(other))
		channel_give(other, pair[1]);
	else
		env->worker_channel_pending[other] = pair[1];
}

void
worker_channel_lost(void)
{
	unsigned int	 n;

	for (n = 0; n < CHILD_MAX; n++) {
		if (env->worker_channel_pending[n] != -1)
			close(env->worker_channel_pending[n]);
		env->worker_channel_pending[n] = -1;
	}
}
