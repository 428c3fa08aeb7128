/*
 * The sandbox ids Docker knows for this server (API.md §11.7, §8.5): every
 * id with a container or a volume carrying our managed and instance
 * labels, workspace-prep containers aside.  One LIST_ITEM per id, then
 * LIST_END.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "proxy.h"
#include "xmalloc.h"

#define LIST_MAX_BODY	(16 * 1024 * 1024)

struct list_item {
	char	 id[SANDBOX_ID_LEN + 1];
	int	 container;
	int	 running;
};

struct list_query {
	struct proxy		*px;
	uint32_t		 peerid;
	struct list_item	*items;
	size_t			 count;
};

static struct list_item *
list_find(struct list_query *q, const char *id)
{
	size_t	 i;

	for (i = 0; i < q->count; i++)
		if (strcmp(q->items[i].id, id) == 0)
			return &q->items[i];
	q->items = xreallocarray(q->items, q->count + 1, sizeof(*q->items));
	memset(&q->items[q->count], 0, sizeof(*q->items));
	strlcpy(q->items[q->count].id, id, sizeof(q->items[q->count].id));
	return &q->items[q->count++];
}

/* The filter every listing uses: our objects, of this server only. */
static int
list_path(struct proxy *px, const char *what, char *path, size_t len)
{
	json_object	*filters, *labels;
	char		 instance[128];
	int		 r;

	snprintf(instance, sizeof(instance), LABEL_INSTANCE "=%s",
	    px->settings.instance_id);
	if ((filters = json_object_new_object()) == NULL ||
	    (labels = json_object_new_array()) == NULL ||
	    json_object_array_add(labels,
	    json_object_new_string(LABEL_MANAGED "=true")) != 0 ||
	    json_object_array_add(labels, json_object_new_string(instance)) !=
	    0 || json_object_object_add(filters, "label", labels) != 0)
		fatalx("%s: out of memory", __func__);
	if (strcmp(what, "containers") == 0)
		r = docker_path(path, len, DOCKER_API
		    "/containers/json?all=1&filters=%s",
		    json_object_to_json_string_ext(filters,
		    JSON_C_TO_STRING_PLAIN));
	else
		r = docker_path(path, len, DOCKER_API "/volumes?filters=%s",
		    json_object_to_json_string_ext(filters,
		    JSON_C_TO_STRING_PLAIN));
	json_object_put(filters);
	return r;
}

static void
list_fail(struct list_query *q, const struct docker_result *res)
{
	enum error_kind	 kind;
	char		 text[1024];

	kind = docker_result_error(res, "list sandboxes", text, sizeof(text));
	if (kind == ERR_NOT_FOUND)
		kind = ERR_BACKEND;
	peer_send_error(&q->px->parent, q->peerid, kind, "%s", text);
	free(q->items);
	free(q);
}

/*
 * The sandbox id on one listed object, or NULL to skip it.  The filter
 * matched our labels, but labels are what an image may bring too (a
 * container gets its image's labels): the object is a sandbox's only if
 * its name is the one this server gives that sandbox's container (or
 * volume).  The workspace-prep container, the name with "-init", is not
 * a sandbox.
 */
static const char *
list_object_id(json_object *obj, int volume)
{
	json_object	*labels, *names;
	const char	*id, *name;
	char		 want[DOCKER_NAME_MAX + 1];

	if (!json_object_object_get_ex(obj, "Labels", &labels))
		return NULL;
	id = json_get_string(labels, LABEL_ID);
	if (!id_is_sandbox(id)) {
		log_warnx("ignoring a Docker object labelled with the bad "
		    "sandbox id %s", id != NULL ? id : "(none)");
		return NULL;
	}
	if (volume) {
		sandbox_volume_name(id, want, sizeof(want));
		name = json_get_string(obj, "Name");
	} else {
		/* Docker lists a container's names with a leading "/". */
		want[0] = '/';
		sandbox_container_name(id, want + 1, sizeof(want) - 1);
		name = json_object_object_get_ex(obj, "Names", &names) &&
		    json_object_is_type(names, json_type_array) &&
		    json_object_array_length(names) == 1 ?
		    json_object_get_string(json_object_array_get_idx(names,
		    0)) : NULL;
	}
	if (name == NULL || strcmp(name, want) != 0)
		return NULL;
	return id;
}

static void
list_volumes_done(const struct docker_result *res, void *arg)
{
	struct list_query	*q = arg;
	json_object		*obj, *vols, *vol;
	const char		*id;
	struct msgw		 w;
	size_t			 i, n;

	if (!docker_result_answered(res) || res->status != 200) {
		list_fail(q, res);
		return;
	}
	obj = docker_json_parse(res->resp);
	if (json_object_object_get_ex(obj, "Volumes", &vols) &&
	    json_object_is_type(vols, json_type_array)) {
		n = json_object_array_length(vols);
		for (i = 0; i < n; i++) {
			vol = json_object_array_get_idx(vols, i);
			if ((id = list_object_id(vol, 1)) != NULL)
				list_find(q, id);
		}
	}
	json_object_put(obj);
	for (i = 0; i < q->count; i++) {
		msgw_init(&w);
		msgw_str(&w, q->items[i].id);
		msgw_u8(&w, q->items[i].container);
		msgw_u8(&w, q->items[i].running);
		peer_send(&q->px->parent, MSG_DOCKER_LIST_ITEM, q->peerid, -1,
		    &w);
	}
	peer_send(&q->px->parent, MSG_DOCKER_LIST_END, q->peerid, -1, NULL);
	free(q->items);
	free(q);
}

static void
list_containers_done(const struct docker_result *res, void *arg)
{
	struct list_query	*q = arg;
	struct list_item	*item;
	json_object		*arr, *c;
	const char		*id, *state;
	char			 path[1024];
	size_t			 i, n;

	if (!docker_result_answered(res) || res->status != 200) {
		list_fail(q, res);
		return;
	}
	arr = docker_json_parse(res->resp);
	if (json_object_is_type(arr, json_type_array)) {
		n = json_object_array_length(arr);
		for (i = 0; i < n; i++) {
			c = json_object_array_get_idx(arr, i);
			if ((id = list_object_id(c, 0)) == NULL)
				continue;
			item = list_find(q, id);
			item->container = 1;
			state = json_get_string(c, "State");
			if (state != NULL && strcmp(state, "running") == 0)
				item->running = 1;
		}
	}
	json_object_put(arr);
	if (list_path(q->px, "volumes", path, sizeof(path)) == -1)
		fatalx("%s: path", __func__);
	docker_call(q->px, "GET", path, NULL, LIST_MAX_BODY,
	    list_volumes_done, q);
}

void
docker_list(struct proxy *px, uint32_t peerid)
{
	struct list_query	*q;
	char			 path[1024];

	q = xcalloc(1, sizeof(*q));
	q->px = px;
	q->peerid = peerid;
	if (list_path(px, "containers", path, sizeof(path)) == -1)
		fatalx("%s: path", __func__);
	docker_call(px, "GET", path, NULL, LIST_MAX_BODY,
	    list_containers_done, q);
}
