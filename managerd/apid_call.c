/*
 * managerd's own requests to apid (MSG_TAR_CHECK: apid reads a stored
 * snapshot, since managerd never parses bytes a sandbox produced).  Our
 * calls have their own ids; a reply to an id we did not ask for, or of a
 * type the call does not expect, means apid lies: fatal, as for the proxy.
 */
#include <sys/queue.h>

#include <stdlib.h>
#include <unistd.h>

#include "log.h"
#include "managerd.h"

struct apid_call {
	TAILQ_ENTRY(apid_call)	 entry;
	uint32_t		 id;
	uint32_t		 reply_type;
	proxy_done_cb		 done;
	void			*arg;
};

static TAILQ_HEAD(, apid_call)	calls = TAILQ_HEAD_INITIALIZER(calls);
static uint32_t			next_id = 1;

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
