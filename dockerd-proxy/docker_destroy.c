/*
 * Destroy a sandbox, API.md §11.2: its container, the workspace-prep
 * container if one was left behind, then its volume, retrying while Docker
 * still sees the volume in use.  Each object is inspected first and only
 * removed when its labels say this server made it; what does not exist is
 * already destroyed.  A container someone else is removing at that moment
 * (create removes its workspace-prep container without waiting) is looked
 * at again until it is gone.  Create uses the same teardown to undo a
 * failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "proxy.h"
#include "xmalloc.h"

#define INSPECT_MAX_BODY	(4 * 1024 * 1024)
#define DELETE_MAX_BODY		(64 * 1024)
#define VOLUME_ATTEMPTS		10
#define VOLUME_RETRY_USEC	200000
#define CONTAINER_ATTEMPTS	10
#define CONTAINER_RETRY_USEC	100000

enum teardown_step {
	TD_CONTAINER,
	TD_PREP,
	TD_VOLUME,
	TD_DONE
};

struct teardown {
	struct proxy		*px;
	char			 id[SANDBOX_ID_LEN + 1];
	enum teardown_step	 step;
	char			 name[DOCKER_NAME_MAX];
	int			 attempts;	/* of this step */
	struct event		*ev_retry;
	enum error_kind		 kind;		/* first failure, 0 if none */
	char			 text[1024];
	teardown_cb		 cb;
	void			*arg;
};

static void	teardown_next(struct teardown *);
static void	volume_delete(struct teardown *);

static void
teardown_fail(struct teardown *t, enum error_kind kind, const char *text)
{
	if (t->kind != 0)
		return;
	t->kind = kind;
	strlcpy(t->text, text, sizeof(t->text));
}

static void
teardown_result_fail(struct teardown *t, const struct docker_result *res)
{
	enum error_kind	 kind;
	char		 what[64], text[1024];

	snprintf(what, sizeof(what), "sandbox %s", t->id);
	kind = docker_result_error(res, what, text, sizeof(text));
	teardown_fail(t, kind == ERR_NOT_FOUND ? ERR_BACKEND : kind, text);
}

static void
teardown_refuse(struct teardown *t)
{
	char	 text[256];

	refuse_not_ours("destroy", t->name, text, sizeof(text));
	teardown_fail(t, ERR_FORBIDDEN, text);
}

/*
 * Past a deadline Docker is hung, and every further step would wait out
 * its own: stop at the first, so the caller answers within one deadline
 * of it.  What is left is destroyed by the next try, or by the next
 * start's reconciliation.
 */
static void
teardown_step_done(struct teardown *t, enum teardown_step next)
{
	if (t->kind == ERR_TIMEOUT)
		next = TD_DONE;
	t->step = next;
	t->attempts = 0;
	teardown_next(t);
}

static void
container_deleted(const struct docker_result *res, void *arg)
{
	struct teardown	*t = arg;
	struct timeval	 tv = { 0, CONTAINER_RETRY_USEC };

	/* "Removal already in progress": inspect again, until a 404. */
	if (docker_result_answered(res) && res->status == 409 &&
	    ++t->attempts < CONTAINER_ATTEMPTS) {
		log_debug("container %s is busy, looking again", t->name);
		evtimer_add(t->ev_retry, &tv);
		return;
	}
	if (!docker_result_answered(res) ||
	    (res->status != 204 && res->status != 404))
		teardown_result_fail(t, res);
	else
		log_debug("removed container %s", t->name);
	teardown_step_done(t, t->step + 1);
}

static void
container_inspected(const struct docker_result *res, void *arg)
{
	struct teardown	*t = arg;
	json_object	*obj = NULL, *config, *labels = NULL;
	const char	*cid;
	char		 path[256];

	if (docker_result_answered(res) && res->status == 404)
		goto next;
	if (!docker_result_answered(res) || res->status != 200) {
		teardown_result_fail(t, res);
		goto next;
	}
	obj = docker_json_parse(res->resp);
	if (json_object_object_get_ex(obj, "Config", &config))
		json_object_object_get_ex(config, "Labels", &labels);
	cid = json_get_string(obj, "Id");
	if (!labels_are_ours(labels, t->id, t->px->settings.instance_id) ||
	    !valid_docker_id(cid)) {
		teardown_refuse(t);
		goto next;
	}
	/* By id: the name could have changed hands since the inspect. */
	if (docker_path(path, sizeof(path), DOCKER_API
	    "/containers/%s?force=true&v=true", cid) == -1)
		fatalx("%s: path", __func__);
	json_object_put(obj);
	docker_call(t->px, "DELETE", path, NULL, DELETE_MAX_BODY,
	    container_deleted, t);
	return;
next:
	json_object_put(obj);
	teardown_step_done(t, t->step + 1);
}

static void
volume_deleted(const struct docker_result *res, void *arg)
{
	struct teardown	*t = arg;
	struct timeval	 tv = { 0, VOLUME_RETRY_USEC };

	if (docker_result_answered(res) &&
	    (res->status == 204 || res->status == 404)) {
		log_debug("removed volume %s", t->name);
		teardown_step_done(t, TD_DONE);
		return;
	}
	/* Still in use for a moment after its container went. */
	if (docker_result_answered(res) && res->status == 409 &&
	    ++t->attempts < VOLUME_ATTEMPTS) {
		evtimer_add(t->ev_retry, &tv);
		return;
	}
	teardown_result_fail(t, res);
	teardown_step_done(t, TD_DONE);
}

static void
teardown_retry(evutil_socket_t fd, short what, void *arg)
{
	struct teardown	*t = arg;

	if (t->step == TD_VOLUME)
		volume_delete(t);
	else
		teardown_next(t);
}

static void
volume_delete(struct teardown *t)
{
	char	 path[256];

	if (docker_path(path, sizeof(path), DOCKER_API
	    "/volumes/%s?force=true", t->name) == -1)
		fatalx("%s: path", __func__);
	docker_call(t->px, "DELETE", path, NULL, DELETE_MAX_BODY,
	    volume_deleted, t);
}

static void
volume_inspected(const struct docker_result *res, void *arg)
{
	struct teardown	*t = arg;
	json_object	*obj, *labels = NULL;
	int		 ours;

	if (docker_result_answered(res) && res->status == 404) {
		teardown_step_done(t, TD_DONE);
		return;
	}
	if (!docker_result_answered(res) || res->status != 200) {
		teardown_result_fail(t, res);
		teardown_step_done(t, TD_DONE);
		return;
	}
	obj = docker_json_parse(res->resp);
	json_object_object_get_ex(obj, "Labels", &labels);
	ours = labels_are_ours(labels, t->id, t->px->settings.instance_id);
	json_object_put(obj);
	if (!ours) {
		teardown_refuse(t);
		teardown_step_done(t, TD_DONE);
		return;
	}
	volume_delete(t);
}

static void
teardown_next(struct teardown *t)
{
	char	 path[256];

	switch (t->step) {
	case TD_CONTAINER:
	case TD_PREP:
		if (t->step == TD_CONTAINER)
			sandbox_container_name(t->id, t->name,
			    sizeof(t->name));
		else
			sandbox_prep_name(t->id, t->name, sizeof(t->name));
		if (docker_path(path, sizeof(path), DOCKER_API
		    "/containers/%s/json", t->name) == -1)
			fatalx("%s: path", __func__);
		docker_call(t->px, "GET", path, NULL, INSPECT_MAX_BODY,
		    container_inspected, t);
		break;
	case TD_VOLUME:
		sandbox_volume_name(t->id, t->name, sizeof(t->name));
		if (docker_path(path, sizeof(path), DOCKER_API "/volumes/%s",
		    t->name) == -1)
			fatalx("%s: path", __func__);
		docker_call(t->px, "GET", path, NULL, INSPECT_MAX_BODY,
		    volume_inspected, t);
		break;
	case TD_DONE:
		/* An inspect answered during the removal is forgotten too. */
		container_cache_forget(t->id);
		t->cb(t->arg, t->kind, t->kind != 0 ? t->text : NULL);
		event_free(t->ev_retry);
		free(t);
		break;
	}
}

void
sandbox_teardown(struct proxy *px, const char *id, teardown_cb cb, void *arg)
{
	struct teardown	*t;

	t = xcalloc(1, sizeof(*t));
	t->px = px;
	strlcpy(t->id, id, sizeof(t->id));
	t->step = TD_CONTAINER;
	t->cb = cb;
	t->arg = arg;
	if ((t->ev_retry = evtimer_new(px->base, teardown_retry, t)) == NULL)
		fatalx("%s: evtimer_new", __func__);
	teardown_next(t);
}

struct destroy {
	struct proxy	*px;
	uint32_t	 peerid;
};

static void
destroy_done(void *arg, enum error_kind kind, const char *text)
{
	struct destroy	*d = arg;

	if (kind != 0)
		peer_send_error(&d->px->parent, d->peerid, kind, "%s", text);
	else
		peer_send(&d->px->parent, MSG_DOCKER_DONE, d->peerid, -1,
		    NULL);
	free(d);
}

void
docker_destroy(struct proxy *px, uint32_t peerid, const char *id)
{
	struct destroy	*d;

	d = xcalloc(1, sizeof(*d));
	d->px = px;
	d->peerid = peerid;
	log_debug("destroy sandbox %s", id);
	container_cache_forget(id);
	sandbox_teardown(px, id, destroy_done, d);
}
