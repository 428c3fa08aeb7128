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
 *
 * Out of descriptors, none of this is fatal: a socketpair managerd cannot
 * make, or an end that reached its process without its descriptor (the
 * process says so: CHANNEL_AGAIN), is made again a second later, and
 * every second until descriptors allow; meanwhile apid's archive jobs
 * fail with 503.
 */
#include <sys/socket.h>

#include <errno.h>
#include <unistd.h>

#include <event2/event.h>

#include "log.h"
#include "managerd.h"

#define CHANNEL_RETRY_SECONDS	1

static struct event	*ev_renew;

static void	channel_renew(evutil_socket_t, short, void *);

void
dispatch_worker(struct peer *p, struct imsg *imsg)
{
	if (imsg->hdr.type == MSG_CHANNEL_AGAIN) {
		worker_channel_again(p, imsg);
		return;
	}
	if (imsg->hdr.type != MSG_READY)
		peer_bad_message(p, imsg, "not for managerd");
	child_ready(CHILD_WORKER, imsg);
}

/* A new pair for both, a second from now. */
static void
channel_renew_later(void)
{
	struct timeval	 tv = { CHANNEL_RETRY_SECONDS, 0 };

	if (ev_renew == NULL && (ev_renew = evtimer_new(env->base,
	    channel_renew, NULL)) == NULL)
		fatalx("%s: evtimer_new", __func__);
	if (!evtimer_pending(ev_renew, NULL))
		evtimer_add(ev_renew, &tv);
}

void
worker_channel_again(struct peer *p, struct imsg *imsg)
{
	if (imsg->len != 0 || imsg->fd != -1 || imsg->fd_lost)
		peer_bad_message(p, imsg, "CHANNEL_AGAIN carries nothing");
	log_warnx("%s lost its end of the apid - archive-worker channel; "
	    "making another", p->name);
	channel_renew_later();
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
	    pair) == -1) {
		if (errno != EMFILE && errno != ENFILE)
			fatal("socketpair for apid and the archive worker");
		log_warn("socketpair for apid and the archive worker");
		channel_renew_later();
		return;
	}
	channel_give(id, pair[0]);
	if (child_up(other))
		channel_give(other, pair[1]);
	else
		env->worker_channel_pending[other] = pair[1];
}

/* Both are up: a fresh pair for the two (each drops the old channel). */
static void
channel_renew(evutil_socket_t fd, short what, void *arg)
{
	if (!child_up(CHILD_APID) || !child_up(CHILD_WORKER))
		return;		/* the one coming up gets a pair then */
	worker_channel_lost();
	worker_channel_ready(CHILD_APID);
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
