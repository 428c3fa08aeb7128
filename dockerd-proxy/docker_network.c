/*
 * The bridge network for sandboxes created with network: true (API.md
 * §11.1 item 4): reused when it exists and is one this server made,
 * created otherwise, never deleted.  Ensures run one at a
 * time, so two creates cannot race to make the network twice.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "proxy.h"
#include "xmalloc.h"

#define NETWORK_MAX_BODY	(1024 * 1024)
#define ICC_OPTION		"com.docker.network.bridge.enable_icc"

struct network_wait {
	TAILQ_ENTRY(network_wait) entry;
	struct proxy		*px;
	char			 name[DOCKER_NAME_MAX * 2 + 1];
	int			 retried;
	network_cb		 cb;
	void			*arg;
};

static void	network_inspect(struct network_wait *);

static void
network_finish(struct network_wait *w, enum error_kind kind,
    const char *text)
{
	struct proxy		*px = w->px;
	struct network_wait	*next;

	TAILQ_REMOVE(&px->network_queue, w, entry);
	if ((next = TAILQ_FIRST(&px->network_queue)) != NULL)
		network_inspect(next);
	w->cb(w->arg, kind, text);
	free(w);
}

/*
 * 1 if the network is one this server made: a bridge whose containers
 * cannot reach each other, with the label hardening_network_body gives.
 * Only whoever holds the Docker socket can label a network, so a network
 * an administrator made for something else is never joined.
 */
static int
network_is_ours(json_object *net)
{
	json_object	*opts, *labels;
	const char	*driver, *icc, *managed;

	driver = json_get_string(net, "Driver");
	if (!json_object_object_get_ex(net, "Options", &opts) ||
	    !json_object_object_get_ex(net, "Labels", &labels))
		return 0;
	icc = json_get_string(opts, ICC_OPTION);
	managed = json_get_string(labels, LABEL_MANAGED);
	return driver != NULL && strcmp(driver, "bridge") == 0 &&
	    icc != NULL && strcmp(icc, "false") == 0 &&
	    managed != NULL && strcmp(managed, "true") == 0;
}

static void
network_created(const struct docker_result *res, void *arg)
{
	struct network_wait	*w = arg;
	enum error_kind		 kind;
	char			 what[256], text[1024];

	if (docker_result_answered(res) && res->status == 201) {
		log_info("created network %s", w->name);
		network_finish(w, 0, NULL);
		return;
	}
	/* Made by someone else in between: look again, once. */
	if (docker_result_answered(res) && res->status == 409 && !w->retried) {
		w->retried = 1;
		network_inspect(w);
		return;
	}
	snprintf(what, sizeof(what), "network %s", w->name);
	kind = docker_result_error(res, what, text, sizeof(text));
	if (kind == ERR_NOT_FOUND)
		kind = ERR_BACKEND;
	network_finish(w, kind, text);
}

static void
network_create(struct network_wait *w)
{
	json_object	*body;

	body = hardening_network_body(w->name);
	docker_call(w->px, "POST", DOCKER_API "/networks/create", body,
	    NETWORK_MAX_BODY, network_created, w);
	json_object_put(body);
}

static void
network_inspected(const struct docker_result *res, void *arg)
{
	struct network_wait	*w = arg;
	json_object		*net;
	const char		*name;
	enum error_kind		 kind;
	char			 what[256], text[1024];
	int			 ok;

	if (docker_result_answered(res) && res->status == 404) {
		network_create(w);
		return;
	}
	if (!docker_result_answered(res) || res->status != 200) {
		snprintf(what, sizeof(what), "network %s", w->name);
		kind = docker_result_error(res, what, text, sizeof(text));
		network_finish(w, kind, text);
		return;
	}
	net = docker_json_parse(res->resp);
	/* Docker also finds a network by an id prefix: want the name. */
	name = json_get_string(net, "Name");
	if (net != NULL && name != NULL && strcmp(name, w->name) != 0 &&
	    !w->retried) {
		json_object_put(net);
		network_create(w);
		return;
	}
	ok = net != NULL && name != NULL && strcmp(name, w->name) == 0 &&
	    network_is_ours(net);
	json_object_put(net);
	if (ok) {
		network_finish(w, 0, NULL);
		return;
	}
	snprintf(text, sizeof(text), "network %s was not made by this "
	    "server: not a bridge labelled %s=true with inter-container "
	    "traffic disabled", w->name, LABEL_MANAGED);
	log_warnx("%s", text);
	network_finish(w, ERR_BACKEND, text);
}

static void
network_inspect(struct network_wait *w)
{
	char	 path[512];

	if (docker_path(path, sizeof(path), DOCKER_API "/networks/%s",
	    w->name) == -1)
		fatalx("%s: network name too long", __func__);
	docker_call(w->px, "GET", path, NULL, NETWORK_MAX_BODY,
	    network_inspected, w);
}

void
network_ensure(struct proxy *px, const char *name, network_cb cb, void *arg)
{
	struct network_wait	*w;

	w = xcalloc(1, sizeof(*w));
	w->px = px;
	if (strlcpy(w->name, name, sizeof(w->name)) >= sizeof(w->name))
		fatalx("%s: network name too long", __func__);
	w->cb = cb;
	w->arg = arg;
	TAILQ_INSERT_TAIL(&px->network_queue, w, entry);
	if (TAILQ_FIRST(&px->network_queue) == w)
		network_inspect(w);
}
