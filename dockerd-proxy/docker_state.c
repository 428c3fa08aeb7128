/*
 * Does a sandbox's container exist, and is it running (API.md §11.3)?
 * A container of that name that this server did not make is refused.
 * The answer carries the container's full id and, while it runs, the pid
 * of its first process: what managerd's netns-helper needs to make a
 * policy sandbox's proxy listener (docs/architecture.md, "Egress").
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
state_reply(struct state_query *q, int exists, int running, uint32_t pid,
    const char *container)
{
	struct msgw	 w;

	msgw_init(&w);
	msgw_u8(&w, exists ? 1 : 0);
	msgw_u8(&w, running ? 1 : 0);
	msgw_u32(&w, pid);
	msgw_str(&w, container);
	peer_send(&q->px->parent, MSG_DOCKER_STATE_RESULT, q->peerid, -1, &w);
}

/*
 * State.Pid of a running container, 0 otherwise.  Docker's answer is
 * checked like any other input: a pid out of range is no pid.
 */
static uint32_t
state_pid(json_object *state, int running)
{
	json_object	*v;
	int64_t		 pid;

	if (!running || !json_object_object_get_ex(state, "Pid", &v) ||
	    !json_object_is_type(v, json_type_int))
		return 0;
	pid = json_object_get_int64(v);
	return pid > 0 && pid <= INT32_MAX ? (uint32_t)pid : 0;
}

/*
 * What the answer says, from Docker's inspect: running, the pid and the
 * 64-hex id.  -1 if a running container has no pid, or the id is not
 * one.
 */
static int
state_fields(json_object *obj, int *running, uint32_t *pid,
    char container[CONTAINER_ID_LEN + 1])
{
	json_object	*state = NULL;
	const char	*status = NULL, *cid;

	if (json_object_object_get_ex(obj, "State", &state))
		status = json_get_string(state, "Status");
	*running = status != NULL && strcmp(status, "running") == 0;
	*pid = state_pid(state, *running);
	cid = json_get_string(obj, "Id");
	if (!id_is_container(cid) || (*running && *pid == 0))
		return -1;
	strlcpy(container, cid, CONTAINER_ID_LEN + 1);
	return 0;
}

static void
state_inspected(const struct docker_result *res, void *arg)
{
	struct state_query	*q = arg;
	json_object		*obj, *config, *labels = NULL;
	enum error_kind		 kind;
	char			 name[DOCKER_NAME_MAX], what[64], text[1024];
	char			 container[CONTAINER_ID_LEN + 1];
	int			 ours, running, valid;
	uint32_t		 pid;

	if (docker_result_answered(res) && res->status == 404) {
		state_reply(q, 0, 0, 0, "");
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
	valid = state_fields(obj, &running, &pid, container) == 0;
	json_object_put(obj);
	if (!ours) {
		sandbox_container_name(q->id, name, sizeof(name));
		refuse_not_ours("inspect", name, text, sizeof(text));
		peer_send_error(&q->px->parent, q->peerid, ERR_FORBIDDEN, "%s",
		    text);
	} else if (!valid)
		peer_send_error(&q->px->parent, q->peerid, ERR_BACKEND,
		    "Docker's inspect of sandbox %s has no valid Id or "
		    "State.Pid", q->id);
	else
		state_reply(q, 1, running, pid, container);
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
