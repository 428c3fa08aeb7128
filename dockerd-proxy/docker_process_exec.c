/*
 * A process's exec as managerd names it, by sandbox and Docker exec id:
 * its state (MSG_DOCKER_PROCESS_INSPECT, which managerd asks after a
 * restart of its own) and its tty's size (MSG_DOCKER_PROCESS_RESIZE).
 * The exec id is only managerd's word: Docker must say the exec belongs
 * to the container of that sandbox, which must be ours, before anything
 * of it is told or changed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "proxy.h"
#include "xmalloc.h"

#define INSPECT_MAX_BODY	(4 * 1024 * 1024)

struct exec_query {
	struct proxy	*px;
	uint32_t	 peerid;
	int		 resize;	/* else an inspect */
	char		 id[SANDBOX_ID_LEN + 1];
	char		 eid[DOCKER_ID_LEN + 1];
	uint32_t	 cols, rows;
	char		 cid[DOCKER_ID_LEN + 1];
	int		 container_running;
};

/* What GET /exec/<id>/json says, read strictly. */
struct exec_info {
	char		 cid[DOCKER_ID_LEN + 1];
	int		 running;
	int		 has_exit_code;
	int64_t		 exit_code;
	int		 tty;
};

static void
query_error(struct exec_query *q, enum error_kind kind, const char *text)
{
	peer_send_error(&q->px->parent, q->peerid, kind, "%s", text);
	free(q);
}

static void
query_state(struct exec_query *q, const struct docker_process_state *st)
{
	struct msgw	 w;

	msgw_init(&w);
	msg_put_docker_process_state(&w, st);
	peer_send(&q->px->parent, MSG_DOCKER_PROCESS_STATE, q->peerid, -1, &w);
	free(q);
}

static void
query_gone(struct exec_query *q)
{
	struct docker_process_state	 st;
	char				 text[128];

	if (q->resize) {
		snprintf(text, sizeof(text), "sandbox %s: the process is no "
		    "longer running", q->id);
		query_error(q, ERR_CONFLICT, text);
		return;
	}
	memset(&st, 0, sizeof(st));
	query_state(q, &st);
}

static int
info_parse(json_object *obj, struct exec_info *x)
{
	json_object	*config, *tty;
	const char	*cid;

	memset(x, 0, sizeof(*x));
	cid = json_get_string(obj, "ContainerID");
	if (!valid_docker_id(cid) || exec_state_parse(obj, &x->running,
	    &x->has_exit_code, &x->exit_code) == -1)
		return -1;
	strlcpy(x->cid, cid, sizeof(x->cid));
	if (json_object_object_get_ex(obj, "ProcessConfig", &config) &&
	    json_object_object_get_ex(config, "tty", &tty) &&
	    json_object_is_type(tty, json_type_boolean))
		x->tty = json_object_get_boolean(tty);
	return 0;
}

static void
query_resized(void *arg, enum error_kind kind, const char *text)
{
	struct exec_query	*q = arg;

	if (kind != 0) {
		query_error(q, kind, text);
		return;
	}
	peer_send(&q->px->parent, MSG_DOCKER_DONE, q->peerid, -1, NULL);
	free(q);
}

/* The exec is the sandbox's: answer the inspect, or resize its tty. */
static void
query_answer(struct exec_query *q, const struct exec_info *x)
{
	struct docker_process_state	 st;
	char				 text[128];

	if (!q->resize) {
		st.exists = 1;
		/* Docker may not have marked the execs of a stopped one. */
		st.running = x->running && q->container_running;
		st.has_exit_code = !st.running && x->has_exit_code;
		st.exit_code = st.has_exit_code ? x->exit_code : 0;
		query_state(q, &st);
		return;
	}
	if (!x->tty) {
		snprintf(text, sizeof(text), "sandbox %s: the process has no "
		    "tty", q->id);
		query_error(q, ERR_CONFLICT, text);
		return;
	}
	if (!x->running || !q->container_running) {
		query_gone(q);
		return;
	}
	exec_resize(q->px, q->id, q->eid, q->cols, q->rows, query_resized, q);
}

static void
query_inspected(const struct docker_result *res, void *arg)
{
	struct exec_query	*q = arg;
	struct exec_info	 x;
	json_object		*obj;
	enum error_kind		 kind;
	char			 what[96], text[2048];
	int			 bad;

	if (docker_result_answered(res) && res->status == 404) {
		query_gone(q);
		return;
	}
	snprintf(what, sizeof(what), "sandbox %s: exec %.12s", q->id, q->eid);
	if (!docker_result_answered(res) || res->status != 200) {
		kind = docker_result_error(res, what, text, sizeof(text));
		query_error(q, kind, text);
		return;
	}
	obj = docker_json_parse(res->resp);
	bad = info_parse(obj, &x);
	json_object_put(obj);
	if (bad) {
		snprintf(text, sizeof(text), "%s: Docker's answer lacks its "
		    "state", what);
		query_error(q, ERR_BACKEND, text);
		return;
	}
	if (strcmp(x.cid, q->cid) != 0) {
		snprintf(text, sizeof(text), "refusing to %s exec %s: not of "
		    "sandbox %s", q->resize ? "resize" : "inspect", q->eid,
		    q->id);
		log_warnx("%s", text);
		query_error(q, ERR_FORBIDDEN, text);
		return;
	}
	query_answer(q, &x);
}

static void
query_found(void *arg, const char *cid, int running, enum error_kind kind,
    const char *text)
{
	struct exec_query	*q = arg;
	char			 path[256];

	/* No container, no exec in it: the process is gone with it. */
	if (kind == ERR_NOT_FOUND) {
		query_gone(q);
		return;
	}
	if (kind != 0) {
		query_error(q, kind, text);
		return;
	}
	strlcpy(q->cid, cid, sizeof(q->cid));
	q->container_running = running;
	if (docker_path(path, sizeof(path), DOCKER_API "/exec/%s/json",
	    q->eid) == -1)
		fatalx("%s: path", __func__);
	docker_call(q->px, "GET", path, NULL, INSPECT_MAX_BODY,
	    query_inspected, q);
}

static void
query_start(struct proxy *px, uint32_t peerid,
    const struct docker_process_exec *x, int resize)
{
	struct exec_query	*q;

	q = xcalloc(1, sizeof(*q));
	q->px = px;
	q->peerid = peerid;
	q->resize = resize;
	strlcpy(q->id, x->id, sizeof(q->id));
	strlcpy(q->eid, x->exec_id, sizeof(q->eid));
	q->cols = x->cols;
	q->rows = x->rows;
	exec_container(px, x->id, resize ? "resize a process in" :
	    "inspect a process in", 0, query_found, q);
}

void
docker_process_inspect(struct proxy *px, uint32_t peerid,
    const struct docker_process_exec *x)
{
	query_start(px, peerid, x, 0);
}

void
docker_process_resize(struct proxy *px, uint32_t peerid,
    const struct docker_process_exec *x)
{
	query_start(px, peerid, x, 1);
}
