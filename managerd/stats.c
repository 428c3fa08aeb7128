/*
 * GET /v1/sandboxes/{id}/stats (docs/rest-api.md "Stats"): the figures
 * dockerd-proxy reads from Docker and the workspace probe, relayed.  No
 * lock, as for a get: the figures are of the moment, and a rollback or a
 * snapshot in progress need not wait for them nor they for it (during a
 * rollback's swap the container may be gone: the proxy's 404 then).
 */
#include <stdlib.h>

#include "log.h"
#include "managerd.h"
#include "stats_msg.h"

struct stats_call {
	uint32_t	 apid_id;
};

static void
stats_done(struct imsg *reply, void *arg)
{
	struct stats_call	*sc = arg;
	struct sandbox_stats	 st;
	struct msgw		 w;

	if (reply->hdr.type == MSG_ERROR)
		relay_error(reply, sc->apid_id);
	else {
		if (msg_get_sandbox_stats(reply, &st) == -1)
			peer_bad_message(&env->proxy_peer, reply,
			    "malformed stats");
		msgw_init(&w);
		msg_put_sandbox_stats(&w, &st);
		apid_reply(sc->apid_id, MSG_SANDBOX_STATS_RESULT, &w);
	}
	free(sc);
}

void
sandbox_stats(uint32_t apid_id, const char *id)
{
	struct stats_call	*sc;
	struct sandbox		*sb;
	struct msgw		 w;

	if ((sb = sandbox_find_for(apid_id, id)) == NULL) {
		apid_not_found(apid_id, id);
		return;
	}
	if ((sc = calloc(1, sizeof(*sc))) == NULL) {
		apid_error(apid_id, ERR_INTERNAL, "out of memory");
		return;
	}
	sc->apid_id = apid_id;
	msgw_init(&w);
	msg_put_string(&w, sb->rec.id);
	if (proxy_call(MSG_DOCKER_STATS, -1, &w, 0, MSG_DOCKER_STATS_RESULT,
	    stats_done, sc) == 0) {
		apid_error(apid_id, ERR_INTERNAL, "cannot reach dockerd-proxy");
		free(sc);
	}
}
