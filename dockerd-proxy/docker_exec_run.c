/*
 * What every exec of ours is made of: the sandbox's container, looked up
 * by its name and held to our labels; the exec created in it; its stream
 * attached; and, once that stream ended, its exit code.  The commands
 * (docker_exec.c), the processes (docker_process.c) and the short execs
 * that signal or kill (docker_signal.c) are put together from these, so
 * that each rule (which container, which errors) is written once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "docker_http.h"
#include "log.h"
#include "proxy.h"
#include "xmalloc.h"

#define INSPECT_MAX_BODY	(4 * 1024 * 1024)
#define CREATE_MAX_BODY		(64 * 1024)
/* Docker sets the exit code a moment after it closes the stream. */
#define EXIT_POLLS		50
#define EXIT_POLL_USEC		50000

/* --- the container ---------------------------------------------------------- */

struct container_lookup {
	struct proxy		*px;
	char			 id[SANDBOX_ID_LEN + 1];
	const char		*op;
	int			 need_running;
	exec_container_cb	 cb;
	void			*arg;
};

/* Our labels and a valid Id: the container's id into cid, else "". */
static void
container_ours(struct container_lookup *l, json_object *obj, char *cid,
    size_t len, int *running)
{
	json_object	*config, *labels = NULL, *state, *r;
	const char	*id;

	cid[0] = '\0';
	*running = 0;
	if (json_object_object_get_ex(obj, "Config", &config))
		json_object_object_get_ex(config, "Labels", &labels);
	if (json_object_object_get_ex(obj, "State", &state) &&
	    json_object_object_get_ex(state, "Running", &r) &&
	    json_object_is_type(r, json_type_boolean))
		*running = json_object_get_boolean(r);
	id = json_get_string(obj, "Id");
	if (labels_are_ours(labels, l->id, l->px->settings.instance_id) &&
	    valid_docker_id(id))
		strlcpy(cid, id, len);
}

static void
container_inspected(const struct docker_result *res, void *arg)
{
	struct container_lookup	*l = arg;
	json_object		*obj;
	enum error_kind		 kind;
	char			 cid[DOCKER_ID_LEN + 1], name[DOCKER_NAME_MAX];
	char			 what[64], text[2048];
	int			 running;

	snprintf(what, sizeof(what), "sandbox %s", l->id);
	if (!docker_result_answered(res) || res->status != 200) {
		kind = docker_result_error(res, what, text, sizeof(text));
		l->cb(l->arg, NULL, 0, kind, text);
		goto done;
	}
	obj = docker_json_parse(res->resp);
	container_ours(l, obj, cid, sizeof(cid), &running);
	json_object_put(obj);
	if (cid[0] == '\0') {
		sandbox_container_name(l->id, name, sizeof(name));
		refuse_not_ours(l->op, name, text, sizeof(text));
		l->cb(l->arg, NULL, 0, ERR_FORBIDDEN, text);
	} else if (l->need_running && !running) {
		snprintf(text, sizeof(text), "%s is not running", what);
		l->cb(l->arg, NULL, 0, ERR_INVALID_REQUEST, text);
	} else
		l->cb(l->arg, cid, running, 0, NULL);
done:
	free(l);
}

void
exec_container(struct proxy *px, const char *id, const char *op,
    int need_running, exec_container_cb cb, void *arg)
{
	struct container_lookup	*l;
	char			 name[DOCKER_NAME_MAX], path[256];

	l = xcalloc(1, sizeof(*l));
	l->px = px;
	strlcpy(l->id, id, sizeof(l->id));
	l->op = op;
	l->need_running = need_running;
	l->cb = cb;
	l->arg = arg;
	sandbox_container_name(id, name, sizeof(name));
	if (docker_path(path, sizeof(path), DOCKER_API "/containers/%s/json",
	    name) == -1)
		fatalx("%s: path", __func__);
	docker_call(px, "GET", path, NULL, INSPECT_MAX_BODY,
	    container_inspected, l);
}

/* --- the exec ------------------------------------------------------------- */

struct exec_make {
	char			 id[SANDBOX_ID_LEN + 1];
	exec_created_cb		 cb;
	void			*arg;
};

static void
exec_made(const struct docker_result *res, void *arg)
{
	struct exec_make	*m = arg;
	json_object		*obj;
	const char		*eid;
	char			 what[64], text[2048], eidbuf[DOCKER_ID_LEN + 1];
	enum error_kind		 kind;

	snprintf(what, sizeof(what), "sandbox %s", m->id);
	eidbuf[0] = '\0';
	if (docker_result_answered(res) && res->status == 409) {
		snprintf(text, sizeof(text), "%s is not running", what);
		m->cb(m->arg, NULL, ERR_INVALID_REQUEST, text);
		goto done;
	}
	if (!docker_result_answered(res) || res->status != 201) {
		kind = docker_result_error(res, what, text, sizeof(text));
		m->cb(m->arg, NULL, kind, text);
		goto done;
	}
	obj = docker_json_parse(res->resp);
	eid = json_get_string(obj, "Id");
	if (valid_docker_id(eid))
		strlcpy(eidbuf, eid, sizeof(eidbuf));
	json_object_put(obj);
	if (eidbuf[0] == '\0') {
		snprintf(text, sizeof(text), "%s: Docker answered without an "
		    "exec id", what);
		m->cb(m->arg, NULL, ERR_BACKEND, text);
	} else
		m->cb(m->arg, eidbuf, 0, NULL);
done:
	free(m);
}

void
exec_create(struct proxy *px, const char *id, const char *cid,
    json_object *body, exec_created_cb cb, void *arg)
{
	struct exec_make	*m;
	char			 path[256];

	m = xcalloc(1, sizeof(*m));
	strlcpy(m->id, id, sizeof(m->id));
	m->cb = cb;
	m->arg = arg;
	if (docker_path(path, sizeof(path), DOCKER_API "/containers/%s/exec",
	    cid) == -1)
		fatalx("%s: path", __func__);
	docker_call(px, "POST", path, body, CREATE_MAX_BODY, exec_made, m);
}

struct docker_request *
exec_attach(struct proxy *px, const char *eid, int tty,
    const struct exec_attach_cbs *cbs, void *arg)
{
	struct docker_request_spec	 spec;
	struct docker_request		*req;
	json_object			*body;
	const char			*text;
	char				 path[256];

	if (docker_path(path, sizeof(path), DOCKER_API "/exec/%s/start",
	    eid) == -1)
		fatalx("%s: path", __func__);
	body = hardening_exec_start_body(0, tty);
	text = json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN);
	memset(&spec, 0, sizeof(spec));
	spec.method = "POST";
	spec.path = path;
	spec.content_type = "application/json";
	spec.body = text;
	spec.body_len = strlen(text);
	spec.flags = DOCKER_HTTP_UPGRADE |
	    (cbs->lasting ? DOCKER_HTTP_LASTING : 0) |
	    (cbs->bounded ? DOCKER_HTTP_BOUNDED : 0);
	spec.max_body = EXEC_ATTACH_MAX_BODY;
	spec.on_body = cbs->on_body;
	spec.on_drain = cbs->on_drain;
	spec.on_done = cbs->on_done;
	spec.arg = arg;
	log_debug("docker POST %s", path);
	req = docker_request_new(px->base, px->settings.docker_endpoint, &spec);
	json_object_put(body);
	return req;
}

/* --- its end -------------------------------------------------------------- */

int
exec_state_parse(json_object *obj, int *running, int *has_exit_code,
    int64_t *exit_code)
{
	json_object	*r, *code;

	if (!json_object_object_get_ex(obj, "Running", &r) ||
	    !json_object_is_type(r, json_type_boolean))
		return -1;
	*running = json_object_get_boolean(r);
	*has_exit_code = 0;
	*exit_code = -1;
	/* null while it runs, and for a while after Docker saw it end. */
	if (!*running && json_object_object_get_ex(obj, "ExitCode", &code) &&
	    json_object_is_type(code, json_type_int)) {
		*has_exit_code = 1;
		*exit_code = json_object_get_int64(code);
	}
	return 0;
}

struct exec_waiter {
	struct proxy		*px;
	char			 eid[DOCKER_ID_LEN + 1];
	struct event		*ev_poll;
	int			 polls;
	int			 running;	/* as Docker last said */
	exec_exit_cb		 cb;
	void			*arg;
};

static void	exec_wait_poll(struct exec_waiter *);

static void
exec_wait_end(struct exec_waiter *w, int64_t exit_code)
{
	w->cb(w->arg, exit_code, w->running);
	event_free(w->ev_poll);
	free(w);
}

static void
exec_wait_polled(const struct docker_result *res, void *arg)
{
	struct exec_waiter	*w = arg;
	struct timeval		 tv = { 0, EXIT_POLL_USEC };
	json_object		*obj;
	int			 running, has_code = 0;
	int64_t			 code = -1;

	/* The container went, and the exec with it. */
	if (docker_result_answered(res) && res->status == 404) {
		w->running = 0;
		exec_wait_end(w, -1);
		return;
	}
	/* Docker is hung: asking again would wait out deadline after deadline. */
	if (res->error == DOCKER_HTTP_TIMEOUT) {
		exec_wait_end(w, -1);
		return;
	}
	if (docker_result_answered(res) && res->status == 200) {
		obj = docker_json_parse(res->resp);
		if (exec_state_parse(obj, &running, &has_code, &code) == -1)
			has_code = 0;
		else
			w->running = running;
		json_object_put(obj);
	}
	if (has_code || ++w->polls >= EXIT_POLLS) {
		exec_wait_end(w, has_code ? code : -1);
		return;
	}
	evtimer_add(w->ev_poll, &tv);
}

static void
exec_wait_poll(struct exec_waiter *w)
{
	char	 path[256];

	if (docker_path(path, sizeof(path), DOCKER_API "/exec/%s/json",
	    w->eid) == -1)
		fatalx("%s: path", __func__);
	docker_call(w->px, "GET", path, NULL, INSPECT_MAX_BODY,
	    exec_wait_polled, w);
}

static void
exec_wait_timer(evutil_socket_t fd, short what, void *arg)
{
	exec_wait_poll(arg);
}

void
exec_wait(struct proxy *px, const char *eid, exec_exit_cb cb, void *arg)
{
	struct exec_waiter	*w;

	w = xcalloc(1, sizeof(*w));
	w->px = px;
	strlcpy(w->eid, eid, sizeof(w->eid));
	w->cb = cb;
	w->arg = arg;
	if ((w->ev_poll = evtimer_new(px->base, exec_wait_timer, w)) == NULL)
		fatalx("%s: out of memory", __func__);
	exec_wait_poll(w);
}

/* --- its tty -------------------------------------------------------------- */

struct exec_sizing {
	char			 id[SANDBOX_ID_LEN + 1];
	exec_resized_cb		 cb;
	void			*arg;
};

static void
exec_sized(const struct docker_result *res, void *arg)
{
	struct exec_sizing	*z = arg;
	char			 what[64], text[2048];
	enum error_kind		 kind;

	if (docker_result_answered(res) && res->status >= 200 &&
	    res->status < 300) {
		z->cb(z->arg, 0, NULL);
		free(z);
		return;
	}
	snprintf(what, sizeof(what), "sandbox %s", z->id);
	kind = docker_result_error(res, what, text, sizeof(text));
	if (docker_result_answered(res) && res->status == 409)
		kind = ERR_CONFLICT;
	z->cb(z->arg, kind, text);
	free(z);
}

/*
 * Docker waits up to 10 s for the exec to have started, so this may go
 * out right after the start; its API 1.41 has no size for the create.
 */
void
exec_resize(struct proxy *px, const char *id, const char *eid,
    uint32_t cols, uint32_t rows, exec_resized_cb cb, void *arg)
{
	struct exec_sizing	*z;
	char			 path[256], h[16], w[16];

	z = xcalloc(1, sizeof(*z));
	strlcpy(z->id, id, sizeof(z->id));
	z->cb = cb;
	z->arg = arg;
	snprintf(h, sizeof(h), "%u", rows);
	snprintf(w, sizeof(w), "%u", cols);
	if (docker_path(path, sizeof(path),
	    DOCKER_API "/exec/%s/resize?h=%s&w=%s", eid, h, w) == -1)
		fatalx("%s: path", __func__);
	docker_call(px, "POST", path, NULL, INSPECT_MAX_BODY, exec_sized, z);
}
