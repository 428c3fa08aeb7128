/*
 * Does a sandbox's container exist, and is it running (API.md §11.3)?
 * A container of that name that this server did not make is refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "proxy.h"
#include "xmalloc.h"

#define INSPECT_MAX_BODY	(4 * 1024 * 1024)

struct state_query {
	struct proxy	*px;
	uint32_t	 peerid;
	char		 id[SANDBOX_ID_LEN + 1];
};

static void
state_reply(struct state_query *q, int exists, int running)
{
	struct msgw	 w;

	msgw_init(&w);
	msgw_u8(&w, exists ? 1 : 0);
	msgw_u8(&w, running ? 1 : 0);
	peer_send(&q->px->parent, MSG_DOCKER_STATE_RESULT, q->peerid, -1, &w);
}

static void
state_inspected(const struct docker_result *res, void *arg)
{
	struct state_query	*q = arg;
	json_object		*obj, *config, *labels = NULL, *state;
	const char		*status;
	enum error_kind		 kind;
	char			 name[DOCKER_NAME_MAX], what[64], text[1024];
	int			 ours, running;

	if (docker_result_answered(res) && res->status == 404) {
		state_reply(q, 0, 0);
		goto done;
	}
	if (!docker_result_answered(res) || res->status != 200) {
		snprintf(what, sizeof(what), "sandbox %s", q->id);
		kind = docker_result_error(res, what, text, sizeof(text));
		peer_send_error(&q->px->parent, q->peerid, kind, "%s", text);
		goto done;
	}
	obj = docker_json_parse(res->resp);
	if (json_object_object_get_ex(obj, "Config", &config))
		json_object_object_get_ex(config, "Labels", &labels);
	ours = labels_are_ours(labels, q->id, q->px->settings.instance_id);
	status = NULL;
	if (json_object_object_get_ex(obj, "State", &state))
		status = json_get_string(state, "Status");
	running = status != NULL && strcmp(status, "running") == 0;
	json_object_put(obj);
	if (!ours) {
		sandbox_container_name(q->id, name, sizeof(name));
		refuse_not_ours("inspect", name, text, sizeof(text));
		peer_send_error(&q->px->parent, q->peerid, ERR_FORBIDDEN, "%s",
		    text);
		goto done;
	}
	state_reply(q, 1, running);
done:
	free(q);
}

void
docker_state(struct proxy *px, uint32_t peerid, const char *id)
{
	struct state_query	*q;
	char			 name[DOCKER_NAME_MAX], path[256];

	q = xcalloc(1, sizeof(*q));
	q->px = px;
	q->peerid = peerid;
	strlcpy(q->id, id, sizeof(q->id));
	sandbox_container_name(id, name, sizeof(name));
	if (docker_path(path, sizeof(path), DOCKER_API "/containers/%s/json",
	    name) == -1)
		fatalx("%s: path", __func__);
	docker_call(px, "GET", path, NULL, INSPECT_MAX_BODY, state_inspected,
	    q);
}
