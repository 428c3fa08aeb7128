/*
 * Requests from apid.  apid is the least trusted of our processes (it
 * parses everything clients send), so every message is checked again here.
 */
#include <stdlib.h>

#include "log.h"
#include "managerd.h"

struct health_call {
	uint32_t	 apid_id;
};

static void
health_done(struct imsg *reply, void *arg)
{
	struct health_call	*hc = arg;
	struct msgw		 w;
	struct msgr		 r;
	char			*backend;

	if (reply->hdr.type == MSG_ERROR) {
		relay_error(reply, hc->apid_id);
		free(hc);
		return;
	}
	/* The broker names its backend; managerd knows no Docker details. */
	msgr_init(&r, reply);
	backend = msgr_str(&r, 64);
	if (msgr_end(&r) == -1 || backend == NULL)
		peer_bad_message(&env->proxy_peer, reply, "malformed pong");
	msgw_init(&w);
	msgw_str(&w, backend);
	peer_send(&env->apid_peer, MSG_HEALTH_RESULT, hc->apid_id, -1, &w);
	free(backend);
	free(hc);
}

static void
apid_health(struct peer *p, struct imsg *imsg)
{
	struct health_call	*hc;

	if (imsg->len != 0)
		peer_bad_message(p, imsg, "unexpected payload");
	if ((hc = malloc(sizeof(*hc))) == NULL) {
		peer_send_error(p, imsg->hdr.peerid, ERR_INTERNAL,
		    "out of memory");
		return;
	}
	hc->apid_id = imsg->hdr.peerid;
	if (proxy_call(MSG_DOCKER_PING, NULL, MSG_DOCKER_PONG, health_done,
	    hc) == -1) {
		peer_send_error(p, hc->apid_id, ERR_INTERNAL,
		    "cannot reach dockerd-proxy");
		free(hc);
	}
}

void
dispatch_apid(struct peer *p, struct imsg *imsg)
{
	if (imsg->fd != -1 && imsg->hdr.type != MSG_READY)
		peer_bad_message(p, imsg, "unexpected descriptor");
	switch (imsg->hdr.type) {
	case MSG_READY:
		if (imsg->len != 0 || imsg->fd != -1)
			peer_bad_message(p, imsg, "unexpected payload");
		child_ready(&env->apid);
		break;
	case MSG_HEALTH_REQUEST:
		apid_health(p, imsg);
		break;
	default:
		peer_bad_message(p, imsg, "not a request apid may make");
	}
}
