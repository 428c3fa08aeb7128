/*
 * One line of Docker's event stream (GET /events), e.g.
 *
 *   {"Type":"container","Action":"die","Actor":{"ID":"<64 hex>",
 *    "Attributes":{"exitCode":"137","io.agent-sandbox.id":"sb_...",...}},
 *    "time":1764650000,"timeNano":1764650000123456789}
 *
 * Docker copies a container's labels into every event's attributes, so
 * the labels say whose container it is, as they do for the lists: ours,
 * this instance's, a sandbox's own (the -init container is not watched).
 * The stream is filtered on those labels already; they are checked again
 * because nothing Docker sends is taken on trust.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proxy.h"
#include "sandbox_msg.h"

static const struct {
	const char	*name;
	int		 action;
} actions[] = {
	{ "start",	DOCKER_EVENT_START },
	{ "die",	DOCKER_EVENT_DIE },
	{ "oom",	DOCKER_EVENT_OOM },
	{ "destroy",	DOCKER_EVENT_DESTROY },
};

static int
event_action(const char *name)
{
	size_t	 i;

	for (i = 0; name != NULL && i < sizeof(actions) / sizeof(actions[0]);
	    i++)
		if (strcmp(name, actions[i].name) == 0)
			return actions[i].action;
	return 0;
}

/* "0" to "255"; anything else (Docker's is a decimal string) is 0. */
static int64_t
event_exit_code(const char *s)
{
	char	*end;
	long	 v;

	if (s == NULL || *s < '0' || *s > '9')
		return 0;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v > 255)
		return 0;
	return v;
}

static int
event_fill(json_object *obj, const char *instance_id, struct docker_event *ev)
{
	json_object	*actor, *attrs, *t;
	const char	*id, *role;

	if (!json_object_is_type(obj, json_type_object) ||
	    json_get_string(obj, "Type") == NULL ||
	    strcmp(json_get_string(obj, "Type"), "container") != 0 ||
	    (ev->action = event_action(json_get_string(obj, "Action"))) == 0 ||
	    !json_object_object_get_ex(obj, "Actor", &actor) ||
	    !json_object_object_get_ex(actor, "Attributes", &attrs) ||
	    !json_object_is_type(attrs, json_type_object) ||
	    !json_object_object_get_ex(obj, "timeNano", &t) ||
	    !json_object_is_type(t, json_type_int))
		return 0;
	id = json_get_string(attrs, LABEL_ID);
	role = json_get_string(attrs, LABEL_ROLE);
	if (id == NULL || !id_is_sandbox(id) || role == NULL ||
	    strcmp(role, "sandbox") != 0 ||
	    !labels_are_ours(attrs, id, instance_id))
		return 0;
	/* json-c clamps a number too large for an int64 to INT64_MAX. */
	ev->time_ns = json_object_get_int64(t);
	if (ev->time_ns <= 0 || ev->time_ns == INT64_MAX)
		return 0;
	strlcpy(ev->id, id, sizeof(ev->id));
	if (ev->action == DOCKER_EVENT_DIE)
		ev->exit_code = event_exit_code(json_get_string(attrs,
		    "exitCode"));
	return 1;
}

int
docker_event_parse(const char *line, size_t len, const char *instance_id,
    struct docker_event *ev)
{
	json_tokener	*tok;
	json_object	*obj;
	int		 r;

	memset(ev, 0, sizeof(*ev));
	if (len > INT32_MAX || (tok = json_tokener_new()) == NULL)
		return 0;
	obj = json_tokener_parse_ex(tok, line, (int)len);
	/* One object and nothing after it: "{...}{...}" is not an event. */
	r = obj != NULL &&
	    json_tokener_get_error(tok) == json_tokener_success &&
	    json_tokener_get_parse_end(tok) == len &&
	    event_fill(obj, instance_id, ev);
	json_tokener_free(tok);
	json_object_put(obj);
	if (!r)
		memset(ev, 0, sizeof(*ev));
	return r;
}
