/*
 * managerd's own requests to apid (MSG_TAR_CHECK: apid reads a stored
 * snapshot, since managerd never parses bytes a sandbox produced).  Our
 * calls have their own ids; a reply to an id we did not ask for, or of a
 * type the call does not expect, means apid lies: fatal, as for the proxy.
 * Without an apid a call fails with MSG_ERROR (ERR_BACKEND), which done
 * must take as well; apid itself never sends one.
 */
#include <sys/queue.h>

#include <stdlib.h>
#include <unistd.h>

#include <event2/event.h>

#include "log.h"
#include "managerd.h"

struct apid_call {
	TAILQ_ENTRY(apid_call)	 entry;
	uint32_t		 id;
	uint32_t		 reply_type;
	proxy_done_cb		 done;
	void			*arg;
};

TAILQ_HEAD(apid_calls, apid_call);
static struct apid_calls	calls = TAILQ_HEAD_INITIALIZER(calls);
static uint32_t			next_id = 1;

/*
 * Calls no apid will answer, made while it is down or cut off by its
 * death: an error each (502), from the event loop (see dispatch_proxy.c).
 */
static struct apid_calls	failing = TAILQ_HEAD_INITIALIZER(failing);

static void
apid_fail_cb(evutil_socket_t fd, short events, void *arg)
{
	struct apid_call	*call;
	struct imsg		 imsg;
	struct msgw		 w;

	while ((call = TAILQ_FIRST(&failing)) != NULL) {
		TAILQ_REMOVE(&failing, call, entry);
		error_imsg(&imsg, &w, call->id, ERR_BACKEND,
		    "apid restarted");
		call->done(&imsg, call->arg);
		free(call);
	}
}

static void
apid_fail(struct apid_call *call)
{
	static const struct timeval	 now = { 0, 0 };

	TAILQ_INSERT_TAIL(&failing, call, entry);
	/* Once: the first to run fails every call queued by then. */
	if (TAILQ_NEXT(call, entry) == NULL &&
	    TAILQ_FIRST(&failing) == call &&
	    event_base_once(env->base, -1, EV_TIMEOUT, apid_fail_cb, NULL,
	    &now) == -1)
		fatalx("%s: event_base_once", __func__);
}

void
apid_calls_fail(void)
{
	struct apid_call	*call;

	while ((call = TAILQ_FIRST(&calls)) != NULL) {
		TAILQ_REMOVE(&calls, call, entry);
		apid_fail(call);
	}
}

uint32_t
apid_call(uint32_t type, int fd, struct msgw *w, uint32_t reply_type,
    proxy_done_cb done, void *arg)
{
	struct apid_call	*call;

	if ((call = calloc(1, sizeof(*call))) == NULL) {
		if (fd != -1)
			close(fd);
		return 0;
	}
	call->id = next_id++;
	if (next_id == 0)
		next_id = 1;
	call->reply_type = reply_type;
	call->done = done;
	call->arg = arg;
	if (!child_up(CHILD_APID)) {
		if (fd != -1)
			close(fd);
		apid_fail(call);
		return call->id;
	}
	if (peer_send(&env->apid_peer, type, call->id, fd, w) == -1) {
		free(call);
		return 0;
	}
	TAILQ_INSERT_TAIL(&calls, call, entry);
	return call->id;
}

void
apid_call_reply(struct peer *p, struct imsg *imsg)
{
	struct apid_call	*call;

	TAILQ_FOREACH(call, &calls, entry) {
		if (call->id == imsg->hdr.peerid)
			break;
	}
	if (call == NULL)
		peer_bad_message(p, imsg, "reply to no pending call");
	if (imsg->hdr.type != call->reply_type)
		peer_bad_message(p, imsg, "wrong reply type");
	TAILQ_REMOVE(&calls, call, entry);
	call->done(imsg, call->arg);
	free(call);
}
