/*
 * GET /v1/sandboxes/{id}/stats (docs/rest-api.md "Stats"): managerd's
 * MSG_SANDBOX_STATS_RESULT as a document of groups, each null when its
 * figures are unknown (a stopped sandbox has none; a sandbox without a
 * network has no network figures; an image without du no workspace).
 */
#include <sys/queue.h>

#include <stdint.h>

#include "apid.h"
#include "stats_msg.h"

static json_object *
group2(const char *k1, uint64_t v1, const char *k2, json_object *v2)
{
	json_object	*g = json_object_new_object();

	json_object_object_add(g, k1, json_object_new_int64((int64_t)v1));
	/* v2 may be NULL: a JSON null. */
	json_object_object_add(g, k2, v2);
	return g;
}

static json_object *
num(uint64_t v)
{
	return json_object_new_int64((int64_t)v);
}

static json_object *
group1(const char *k, uint64_t v)
{
	json_object	*g = json_object_new_object();

	json_object_object_add(g, k, num(v));
	return g;
}

static json_object *
stats_json(const struct sandbox_stats *s)
{
	json_object	*o, *cpu = NULL;

	o = json_object_new_object();
	json_object_object_add(o, "status",
	    json_object_new_string(s->running ? "running" : "stopped"));
	if (s->has_cpu) {
		cpu = json_object_new_object();
		json_object_object_add(cpu, "usage_seconds",
		    json_object_new_double((double)s->cpu_ns / 1e9));
		json_object_object_add(cpu, "percent", s->has_cpu_percent ?
		    json_object_new_double(s->cpu_percent) : NULL);
	}
	json_object_object_add(o, "cpu", cpu);
	json_object_object_add(o, "memory", s->has_memory ?
	    group2("usage_bytes", s->memory_bytes, "limit_bytes",
	    num(s->memory_limit)) : NULL);
	json_object_object_add(o, "pids", s->has_pids ?
	    group2("current", s->pids, "limit", s->has_pids_limit ?
	    num(s->pids_limit) : NULL) : NULL);
	json_object_object_add(o, "workspace", s->has_workspace ?
	    group1("bytes", s->workspace_bytes) : NULL);
	json_object_object_add(o, "network", s->has_network ?
	    group2("rx_bytes", s->rx_bytes, "tx_bytes", num(s->tx_bytes)) :
	    NULL);
	return o;
}

static int
stats_reply(struct apid_request *ar, struct imsg *imsg)
{
	struct sandbox_stats	 st;
	json_object		*o;

	if (imsg->hdr.type == MSG_ERROR) {
		reply_error_msg(ar->req, imsg);
		return APID_REPLY_DONE;
	}
	if (imsg->hdr.type != MSG_SANDBOX_STATS_RESULT ||
	    msg_get_sandbox_stats(imsg, &st) == -1)
		peer_bad_message(&apid->parent, imsg, "malformed stats");
	o = stats_json(&st);
	respond_json(ar->req, 200, o);
	json_object_put(o);
	return APID_REPLY_DONE;
}

void
route_sandbox_stats(struct http_request *req, char **params)
{
	struct msgw	 w;

	if (sandbox_id_check(req, params[0]) == -1)
		return;
	msgw_init(&w);
	msg_put_string(&w, params[0]);
	route_forward(req, MSG_SANDBOX_STATS, &w, stats_reply, NULL);
}
