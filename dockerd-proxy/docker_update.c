/*
 * A pooled sandbox's limits (MSG_DOCKER_UPDATE, managerd/pool.c): the
 * CPU, memory and process limits of the request that claimed it, put on
 * its running container with POST /containers/{id}/update.  The spec is
 * held to the create's rules (hardening_check_create) and the body is
 * hardening.c's.  The container found by the sandbox's name must be ours;
 * the update then goes by that name, not by its id, so that a socket
 * proxy's allowlist can let updates of sandboxes through and no other
 * (docs/socket-proxy.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "proxy.h"
#include "xmalloc.h"

#define UPDATE_MAX_BODY	(64 * 1024)

struct update {
	struct proxy		*px;
	uint32_t		 peerid;
	struct docker_create	 dc;
};

static void
update_free(struct update *u)
{
	docker_create_free(&u->dc);
	free(u);
}

static void
update_done(const struct docker_result *res, void *arg)
{
	struct update	*u = arg;
	enum error_kind	 kind;
	char		 what[64], text[2048];

	if (docker_result_answered(res) && res->status == 200)
		peer_send(&u->px->parent, MSG_DOCKER_DONE, u->peerid, -1, NULL);
	else {
		snprintf(what, sizeof(what), "update sandbox %s", u->dc.id);
		kind = docker_result_error(res, what, text, sizeof(text));
		peer_send_error(&u->px->parent, u->peerid, kind, "%s", text);
	}
	update_free(u);
}

static void
update_found(void *arg, const char *cid, int running, enum error_kind kind,
    const char *text)
{
	struct update	*u = arg;
	json_object	*body;
	char		 name[DOCKER_NAME_MAX], path[256];

	if (cid == NULL) {
		peer_send_error(&u->px->parent, u->peerid, kind, "%s", text);
		update_free(u);
		return;
	}
	sandbox_container_name(u->dc.id, name, sizeof(name));
	if (docker_path(path, sizeof(path), DOCKER_API
	    "/containers/%s/update", name) == -1)
		fatalx("%s: path", __func__);
	body = hardening_update_body(&u->dc.spec);
	docker_call(u->px, "POST", path, body, UPDATE_MAX_BODY, update_done,
	    u);
	json_object_put(body);
}

void
docker_update(struct proxy *px, uint32_t peerid, struct docker_create *dc)
{
	struct update	*u;
	const char	*why;

	u = xcalloc(1, sizeof(*u));
	u->px = px;
	u->peerid = peerid;
	u->dc = *dc;
	memset(dc, 0, sizeof(*dc));
	if ((why = hardening_check_create(&px->settings.policy, &u->dc)) !=
	    NULL) {
		peer_send_error(&px->parent, peerid, ERR_INVALID_REQUEST,
		    "update sandbox %s: %s", u->dc.id, why);
		update_free(u);
		return;
	}
	exec_container(px, u->dc.id, "update", 1, update_found, u);
}
