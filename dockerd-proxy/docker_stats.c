/*
 * MSG_DOCKER_STATS: a sandbox's figures.  The container is found by its
 * name and must be ours (exec_container: anything else is refused, as
 * for every call); a stopped one has no figures.  Then Docker's one-shot
 * stats (GET /containers/{id}/stats?stream=false&one-shot=true, parsed by
 * docker_stats_parse.c) and the workspace probe: du's total of
 * /workspace, an exec as the sandbox user.  The probe depends on the
 * image's /bin/sh and du (busybox and coreutils have both); without them,
 * or when it fails, the workspace is unknown and the rest is answered.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "proxy.h"
#include "stats_msg.h"
#include "xmalloc.h"

struct stats_query {
	struct proxy		*px;
	uint32_t		 peerid;
	char			 id[SANDBOX_ID_LEN + 1];
	char			 cid[DOCKER_ID_LEN + 1];
	struct sandbox_stats	 st;
};

static void
stats_reply(struct stats_query *q)
{
	struct msgw	 w;

	msgw_init(&w);
	msg_put_sandbox_stats(&w, &q->st);
	peer_send(&q->px->parent, MSG_DOCKER_STATS_RESULT, q->peerid, -1, &w);
	free(q);
}

static void
stats_fail(struct stats_query *q, enum error_kind kind, const char *text)
{
	peer_send_error(&q->px->parent, q->peerid, kind, "%s", text);
	free(q);
}

static void
stats_probed(void *arg, enum error_kind kind, const char *text)
{
	struct stats_query	*q = arg;

	if (kind == 0 && du_said_parse(text, &q->st.workspace_bytes) == 0)
		q->st.has_workspace = 1;
	else
		log_debug("sandbox %s: no workspace size: %s", q->id,
		    kind != 0 ? text : "du said nothing of use");
	stats_reply(q);
}

static void
stats_read(const struct docker_result *res, void *arg)
{
	struct stats_query	*q = arg;
	json_object		*body;
	const char		*why;
	char			 what[64], text[1024];

	snprintf(what, sizeof(what), "sandbox %s", q->id);
	if (!docker_result_answered(res) || res->status != 200) {
		stats_fail(q, docker_result_error(res, what, text,
		    sizeof(text)), text);
		return;
	}
	if (docker_stats_parse(res->resp->body, res->resp->body_len, &q->st,
	    &why) == -1) {
		snprintf(text, sizeof(text), "%s: %s", what, why);
		stats_fail(q, ERR_BACKEND, text);
		return;
	}
	body = hardening_workspace_du_body(&q->px->settings.policy);
	helper_run(q->px, q->id, q->cid, body, stats_probed, q);
	json_object_put(body);
}

static void
stats_found(void *arg, const char *cid, int running, enum error_kind kind,
    const char *text)
{
	struct stats_query	*q = arg;
	char			 path[256];

	if (kind != 0) {
		stats_fail(q, kind, text);
		return;
	}
	if (!running) {
		stats_reply(q);		/* all unknown: st is zeros */
		return;
	}
	strlcpy(q->cid, cid, sizeof(q->cid));
	if (docker_path(path, sizeof(path), DOCKER_API
	    "/containers/%s/stats?stream=false&one-shot=true", cid) == -1)
		fatalx("%s: path", __func__);
	docker_call(q->px, "GET", path, NULL, STATS_MAX_BODY, stats_read, q);
}

void
docker_stats(struct proxy *px, uint32_t peerid, const char *id)
{
	struct stats_query	*q;

	q = xcalloc(1, sizeof(*q));
	q->px = px;
	q->peerid = peerid;
	strlcpy(q->id, id, sizeof(q->id));
	exec_container(px, id, "read the stats of", 0, stats_found, q);
}
