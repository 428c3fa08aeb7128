/*
 * A sandbox's network as a client sees it (docs/rest-api.md "Network"):
 * what a create's or a fork's "network" becomes, GET and PUT of
 * /v1/sandboxes/{id}/network, its log, and the proxy variables every
 * exec of a policy sandbox gets.  The one parser of a client's policy
 * is egress_policy_parse(), here: apid checks only that it is an object.
 *
 * A sandbox is either on the shared bridge (spec.network, the
 * reference's "true" when AGENT_SANDBOX_NETWORK_TRUE=bridge) or has a
 * policy (rec.egress; mode none is no network at all).  The two never
 * mix: a bridge sandbox's policy cannot be set, because its traffic does
 * not go through the proxy.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "log.h"
#include "managerd.h"

#define PROXY_URL	"http://127.0.0.1:3128"

/*
 * What each policy sandbox's commands find in their environment (not
 * const: an env_list's strings are char *, and these are only read).
 */
static char proxy_vars[][12] = {
	"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
	"http_proxy", "https_proxy", "all_proxy",
};
static char proxy_url[] = PROXY_URL;
#define PROXY_VARS	(sizeof(proxy_vars) / sizeof(proxy_vars[0]))

/* 1 if this server's sandboxes can be given a policy at all. */
int
sandbox_egress_possible(void)
{
	/* gVisor's netstack has a loopback of its own (verified). */
	return !config_runs_gvisor(&env->conf);
}

/* A client's policy text: 0 with *p, or -1 answered (400). */
static int
policy_from_text(uint32_t apid_id, const char *text,
    struct egress_policy *p)
{
	struct json_tokener	*tok;
	json_object		*obj;
	char			 err[512];
	size_t			 len = strlen(text);
	int			 rc;

	if ((tok = json_tokener_new()) == NULL)
		return apid_error(apid_id, ERR_INTERNAL, "out of memory"), -1;
	obj = json_tokener_parse_ex(tok, text, (int)len);
	if (obj == NULL || tok->char_offset != (int)len ||
	    !json_object_is_type(obj, json_type_object)) {
		json_object_put(obj);
		json_tokener_free(tok);
		apid_error(apid_id, ERR_INVALID_REQUEST,
		    "network: the policy is not a JSON object");
		return -1;
	}
	json_tokener_free(tok);
	rc = egress_policy_parse(obj, NULL, p, err, sizeof(err));
	json_object_put(obj);
	if (rc == -1 && errno == ENOMEM)
		return apid_error(apid_id, ERR_INTERNAL, "out of memory"), -1;
	if (rc == -1)
		return apid_error(apid_id, ERR_INVALID_REQUEST, "network: %s",
		    err), -1;
	return 0;
}

/* The checks a policy other than none must pass here; -1 answered. */
static int
policy_allowed(uint32_t apid_id, const struct egress_policy *p)
{
	if (p->mode == EGRESS_NONE)
		return 0;
	if (!env->conf.allow_network) {
		apid_error(apid_id, ERR_FORBIDDEN, "this server does not allow "
		    "sandboxes with network access");
		return -1;
	}
	if (!sandbox_egress_possible()) {
		apid_error(apid_id, ERR_INVALID_REQUEST, "this server cannot "
		    "enforce egress policies: its runtime is gVisor (runsc), "
		    "whose sandboxes cannot reach the egress proxy; ask for "
		    "\"network\": false, or the operator for "
		    "AGENT_SANDBOX_NETWORK_TRUE=bridge and \"network\": true");
		return -1;
	}
	return 0;
}

/*
 * A create's or fork's network: the boolean, an object's text, or for a
 * fork that names none its snapshot's (inherited, with bridge).  Sets
 * spec->network (the bridge) and *p (the policy; mode none for no
 * network and for the bridge).  0, or -1 answered.
 */
int
network_choose(uint32_t apid_id, int network, const char *text,
    const struct egress_policy *inherited, struct sandbox_spec *spec,
    struct egress_policy *p)
{
	memset(p, 0, sizeof(*p));
	spec->network = 0;
	if (text != NULL) {
		if (policy_from_text(apid_id, text, p) == -1)
			return -1;
	} else if (inherited != NULL) {
		spec->network = network;
		if (egress_policy_copy(p, inherited) == -1)
			return apid_error(apid_id, ERR_INTERNAL,
			    "out of memory"), -1;
	} else if (network && strcmp(env->conf.network_true, "bridge") == 0)
		spec->network = 1;
	else
		p->mode = network ? EGRESS_PUBLIC : EGRESS_NONE;
	if (spec->network && !env->conf.allow_network) {
		apid_error(apid_id, ERR_FORBIDDEN, "this server does not allow "
		    "sandboxes with network access");
		return -1;
	}
	if (policy_allowed(apid_id, p) == -1) {
		egress_policy_free(p);
		return -1;
	}
	return 0;
}

/* The canonical JSON text of sb's network (malloc'd), NULL ENOMEM. */
static char *
network_text(const struct sandbox *sb)
{
	json_object	*obj;
	char		*s;

	if (sb->rec.spec.network)
		return strdup("{\"mode\": \"bridge\"}");
	if ((obj = egress_policy_to_json(&sb->rec.egress)) == NULL)
		return NULL;
	s = strdup(json_object_to_json_string_ext(obj,
	    JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(obj);
	return s;
}

static void
reply_network(uint32_t apid_id, const struct sandbox *sb)
{
	struct msgw	 w;
	char		*text;

	if ((text = network_text(sb)) == NULL) {
		apid_error(apid_id, ERR_INTERNAL, "out of memory");
		return;
	}
	msgw_init(&w);
	msgw_str(&w, text);
	free(text);
	apid_reply(apid_id, MSG_NETWORK_INFO, &w);
}

void
network_get(uint32_t apid_id, const char *id)
{
	struct sandbox	*sb;

	if ((sb = sandbox_find_for(apid_id, id)) == NULL) {
		apid_not_found(apid_id, id);
		return;
	}
	reply_network(apid_id, sb);
}

/* --- PUT ------------------------------------------------------------------ */

struct put_op {
	uint32_t		 apid_id;
	struct sandbox		*sb;		/* held */
};

static void
put_end(struct put_op *op)
{
	sandbox_release(op->sb);
	free(op);
}

static void
put_applied(struct imsg *reply, void *arg)
{
	struct put_op	*op = arg;
	uint32_t	 kind;
	char		*text;

	if (op->sb->gone)
		egress_forget(op->sb);	/* its FORGET may have gone first */
	if (reply->hdr.type == MSG_ERROR) {
		text = error_text(env->child[CHILD_EGRESS].peer, reply, &kind);
		apid_error(op->apid_id, (enum error_kind)kind, "the new policy "
		    "is recorded but not applied yet: %s", text);
		free(text);
	} else if (reply->len != 0)
		peer_bad_message(env->child[CHILD_EGRESS].peer, reply,
		    "unexpected payload");
	else
		reply_network(op->apid_id, op->sb);
	put_end(op);
}

/* A sandbox that had no listener gets one for its first policy. */
static void
put_attached(enum error_kind kind, const char *why, void *arg)
{
	struct put_op	*op = arg;

	/* A stopped one is attached when it starts (events.c). */
	if (kind != 0 && kind != ERR_CONFLICT)
		apid_error(op->apid_id, kind, "the new policy is recorded, "
		    "but the sandbox has no way out yet: %s", why);
	else
		reply_network(op->apid_id, op->sb);
	put_end(op);
}

/* The record holds p (taken) on disk before anyone hears of it. */
static int
put_record(uint32_t apid_id, struct sandbox *sb, struct egress_policy *p)
{
	struct egress_policy	 old = sb->rec.egress;
	int			 saved;

	sb->rec.egress = *p;
	if (store_sandbox_write(env->datadir_fd, &sb->rec) == -1) {
		saved = errno;
		sb->rec.egress = old;
		egress_policy_free(p);
		apid_error(apid_id, storage_error(saved, ERR_INTERNAL),
		    "cannot record sandbox %s: %s", sb->rec.id,
		    strerror(saved));
		return -1;
	}
	egress_policy_free(&old);
	memset(p, 0, sizeof(*p));
	return 0;
}

static void
put_apply(struct put_op *op)
{
	struct sandbox	*sb = op->sb;

	if (sb->egress_attached || sb->egress_attaching) {
		if (egress_send_policy(sb, put_applied, op) == 0) {
			apid_error(op->apid_id, ERR_INTERNAL,
			    "cannot reach the egress proxy");
			put_end(op);
		}
	} else if (sb->rec.egress.mode != EGRESS_NONE)
		egress_attach(sb, put_attached, op);
	else {
		reply_network(op->apid_id, sb);
		put_end(op);
	}
}

void
network_put(uint32_t apid_id, const char *id, const char *text)
{
	struct egress_policy	 p;
	struct sandbox		*sb;
	struct put_op		*op;

	if ((sb = sandbox_find_for(apid_id, id)) == NULL) {
		apid_not_found(apid_id, id);
		return;
	}
	if (sb->rec.spec.network) {
		apid_error(apid_id, ERR_CONFLICT, "sandbox %s is on the shared "
		    "bridge, whose traffic no policy filters; its network "
		    "cannot be changed", sb->rec.id);
		return;
	}
	if (policy_from_text(apid_id, text, &p) == -1)
		return;
	if (policy_allowed(apid_id, &p) == -1) {
		egress_policy_free(&p);
		return;
	}
	if ((op = calloc(1, sizeof(*op))) == NULL) {
		apid_error(apid_id, ERR_INTERNAL, "out of memory");
		egress_policy_free(&p);
		return;
	}
	if (put_record(apid_id, sb, &p) == -1) {
		free(op);
		return;
	}
	log_info("sandbox %s: network policy changed", sb->rec.id);
	op->apid_id = apid_id;
	op->sb = sb;
	sandbox_hold(sb);
	put_apply(op);
}

/* --- the log ---------------------------------------------------------------- */

static void
log_piece(struct imsg *reply, void *arg)
{
	uint32_t	*apid_id = arg, kind;
	struct msgw	 w;
	char		*text;

	switch (reply->hdr.type) {
	case MSG_EGRESS_LOG_TEXT:
		if ((text = msg_get_string(reply, EGRESS_LOG_PIECE)) == NULL)
			peer_bad_message(env->child[CHILD_EGRESS].peer, reply,
			    "malformed log text");
		msgw_init(&w);
		msgw_str(&w, text);
		free(text);
		apid_reply(*apid_id, MSG_NETWORK_LOG_TEXT, &w);
		return;
	case MSG_EGRESS_LOG_END:
		if (reply->len != 0)
			peer_bad_message(env->child[CHILD_EGRESS].peer, reply,
			    "unexpected payload");
		msgw_init(&w);
		apid_reply(*apid_id, MSG_NETWORK_LOG_END, &w);
		break;
	default:
		text = error_text(env->child[CHILD_EGRESS].peer, reply, &kind);
		apid_error(*apid_id, (enum error_kind)kind, "%s", text);
		free(text);
		break;
	}
	free(apid_id);
}

/* A log nobody kept: no policy sandbox has run since the start. */
static void
log_empty(uint32_t apid_id)
{
	struct msgw	 w;

	msgw_init(&w);
	msgw_str(&w, "{\"entries\": [], \"dropped\": 0}");
	apid_reply(apid_id, MSG_NETWORK_LOG_TEXT, &w);
	msgw_init(&w);
	apid_reply(apid_id, MSG_NETWORK_LOG_END, &w);
}

void
network_log(uint32_t apid_id, const char *id)
{
	struct sandbox	*sb;
	struct msgw	 w;
	uint32_t	*arg;

	if ((sb = sandbox_find_for(apid_id, id)) == NULL) {
		apid_not_found(apid_id, id);
		return;
	}
	if (!env->child[CHILD_EGRESS].was_ready &&
	    env->child[CHILD_EGRESS].state == CHILD_DOWN) {
		log_empty(apid_id);
		return;
	}
	if ((arg = malloc(sizeof(*arg))) == NULL) {
		apid_error(apid_id, ERR_INTERNAL, "out of memory");
		return;
	}
	*arg = apid_id;
	msgw_init(&w);
	msgw_str(&w, sb->rec.id);
	if (child_call(CHILD_EGRESS, MSG_EGRESS_LOG, -1, &w,
	    MSG_EGRESS_LOG_TEXT, MSG_EGRESS_LOG_END, log_piece, arg) == 0) {
		free(arg);
		apid_error(apid_id, ERR_INTERNAL, "cannot reach the egress "
		    "proxy");
	}
}

/* --- the environment of its commands --------------------------------------- */

/*
 * Add the proxy variables the request does not set (its own win) to out,
 * which has room for PROXY_VARS more.
 */
void
network_env_add(const struct sandbox *sb, const struct env_list *req,
    struct env_list *out)
{
	size_t	 i;

	if (sb->rec.egress.mode == EGRESS_NONE)
		return;
	for (i = 0; i < PROXY_VARS; i++) {
		if (env_list_has(req, proxy_vars[i]) ||
		    env_list_has(out, proxy_vars[i]))
			continue;
		out->keys[out->count] = proxy_vars[i];
		out->values[out->count++] = proxy_url;
	}
}

size_t
network_env_count(const struct sandbox *sb)
{
	return sb->rec.egress.mode == EGRESS_NONE ? 0 : PROXY_VARS;
}
