/*
 * Calls to dockerd-proxy and their replies.  Each call gets an id that the
 * proxy echoes; a reply to an id we did not ask for, or of a type the call
 * does not expect, means the proxy is confused or compromised: fatal.
 */
#include <stdlib.h>

#include "log.h"
#include "managerd.h"

int
proxy_call(uint32_t type, struct msgw *w, uint32_t reply_type,
    proxy_done_cb done, void *arg)
{
	struct proxy_call	*call;

	if ((call = calloc(1, sizeof(*call))) == NULL)
		return -1;
	call->id = env->next_call_id++;
	if (env->next_call_id == 0)
		env->next_call_id = 1;
	call->reply_type = reply_type;
	call->done = done;
	call->arg = arg;
	if (peer_send(&env->proxy_peer, type, call->id, -1, w) == -1) {
		free(call);
		return -1;
	}
	TAILQ_INSERT_TAIL(&env->calls, call, entry);
	return 0;
}

/* Check an error reply's payload, then pass it on to apid unchanged. */
void
relay_error(struct imsg *imsg, uint32_t apid_id)
{
	struct msgr	 r;
	uint32_t	 kind;
	char		*text;

	msgr_init(&r, imsg);
	kind = msgr_u32(&r);
	text = msgr_str(&r, MSG_MAX_STRING);
	if (msgr_end(&r) == -1 || kind < ERR_INVALID_REQUEST ||
	    kind > ERR_KIND_MAX || text == NULL)
		peer_bad_message(&env->proxy_peer, imsg, "malformed error");
	peer_send_error(&env->apid_peer, apid_id, kind, "%s", text);
	free(text);
}

static struct proxy_call *
proxy_call_take(uint32_t id)
{
	struct proxy_call	*call;

	TAILQ_FOREACH(call, &env->calls, entry) {
		if (call->id == id) {
			TAILQ_REMOVE(&env->calls, call, entry);
			return call;
		}
	}
	return NULL;
}

void
dispatch_proxy(struct peer *p, struct imsg *imsg)
{
	struct proxy_call	*call;

	if (imsg->hdr.type == MSG_READY) {
		if (imsg->len != 0 || imsg->fd != -1)
			peer_bad_message(p, imsg, "unexpected payload");
		child_ready(&env->proxy);
		return;
	}
	if (imsg->fd != -1)
		peer_bad_message(p, imsg, "unexpected descriptor");
	if ((call = proxy_call_take(imsg->hdr.peerid)) == NULL)
		peer_bad_message(p, imsg, "reply to no pending call");
	if (imsg->hdr.type != call->reply_type && imsg->hdr.type != MSG_ERROR)
		peer_bad_message(p, imsg, "wrong reply type");
	call->done(imsg, call->arg);
	free(call);
}
