/*
 * POST /v1/sandboxes (API.md §4.2): the checks in the reference's order,
 * a quota slot, the container from dockerd-proxy, then the record on disk
 * before the client hears of it.  A failure at any step leaves nothing
 * behind and gives the slot back.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "format.h"
#include "log.h"
#include "managerd.h"

struct create_call {
	uint32_t	 apid_id;
	int64_t		 ttl;
	struct sandbox	*sb;		/* in the table once recorded */
	int		 saved_errno;	/* why the record failed */
	/* why its way out could not be made (kind 0: it was) */
	enum error_kind	 kind;
	char		 why[512];
};

static void
create_call_free(struct create_call *cc)
{
	if (cc->sb != NULL)
		sandbox_release(cc->sb);
	free(cc);
}

static int
reply_image_refused(uint32_t apid_id, const char *image)
{
	char	*repr;
	int	 rc;

	if ((repr = format_pyrepr(image)) == NULL)
		return apid_error(apid_id, ERR_INTERNAL, "out of memory");
	rc = apid_error(apid_id, ERR_FORBIDDEN,
	    "image %s is not in the server's allowed_images list", repr);
	free(repr);
	return rc;
}

/* Below the least CPU: why it is the least on this server. */
static void
reply_cpus_floor(uint32_t apid_id, const struct config *conf)
{
	if (config_runs_gvisor(conf))
		apid_error(apid_id, ERR_INVALID_REQUEST, "cpus must be at "
		    "least 0.1 on this server: its runtime is gVisor (runsc), "
		    "whose kernel runs inside the sandbox's CPU limit and "
		    "would not start in time with less");
	else
		apid_error(apid_id, ERR_INVALID_REQUEST, "cpus must be at "
		    "least 0.01: Docker cannot limit a sandbox to less");
}

/*
 * Steps 1-7 of §4.2, first failure wins (answered here).  On success the
 * spec holds the resolved values; the env is moved out of the request.
 * A fork checks its spec here too (§4.17).
 */
int
create_check(uint32_t apid_id, struct create_request *req,
    const struct egress_policy *inherited, struct sandbox_spec *spec,
    struct egress_policy *egress, int64_t *ttl)
{
	struct config	*conf = &env->conf;
	const char	*image, *key;
	char		 max[FORMAT_PYFLOAT_LEN];

	memset(spec, 0, sizeof(*spec));
	memset(egress, 0, sizeof(*egress));
	image = req->image != NULL && req->image[0] != '\0' ? req->image :
	    conf->default_image;
	if (!(strcmp(conf->allowed_images_match, "parts") == 0 ?
	    image_allowed_parts(conf->allowed_images,
	    conf->allowed_images_count, image) :
	    image_allowed(conf->allowed_images, conf->allowed_images_count,
	    image))) {
		reply_image_refused(apid_id, image);
		return -1;
	}
	spec->cpus = req->has_cpus ? req->cpus : conf->default_cpus;
	if (!(spec->cpus > 0 && spec->cpus <= conf->max_cpus)) {
		format_pyfloat(conf->max_cpus, max, sizeof(max));
		apid_error(apid_id, ERR_INVALID_REQUEST,
		    "cpus must be in (0, %s]", max);
		return -1;
	}
	/* Not the reference's: no CPU limit to Docker, or no start. */
	if (spec->cpus < config_cpus_min(conf)) {
		reply_cpus_floor(apid_id, conf);
		return -1;
	}
	spec->memory_mb = req->has_memory_mb ? req->memory_mb :
	    conf->default_memory_mb;
	if (spec->memory_mb < 16 || spec->memory_mb > conf->max_memory_mb) {
		apid_error(apid_id, ERR_INVALID_REQUEST,
		    "memory_mb must be in [16, %ld]", conf->max_memory_mb);
		return -1;
	}
	spec->pids_limit = req->has_pids_limit ? req->pids_limit :
	    conf->default_pids_limit;
	if (spec->pids_limit < 8 || spec->pids_limit > conf->max_pids_limit) {
		apid_error(apid_id, ERR_INVALID_REQUEST,
		    "pids_limit must be in [8, %ld]", conf->max_pids_limit);
		return -1;
	}
	if (network_choose(apid_id, req->network, req->network_policy,
	    inherited, spec, egress) == -1)
		return -1;
	if ((key = env_invalid_key(&req->env)) != NULL) {
		egress_policy_free(egress);
		reply_bad_env(apid_id, key);
		return -1;
	}
	if (!conf->allow_runtime_env &&
	    (key = env_list_reserved_key(&req->env)) != NULL) {
		egress_policy_free(egress);
		apid_error(apid_id, ERR_FORBIDDEN, "this server does not allow "
		    "the environment key %s: container runtimes read it "
		    "(AGENT_SANDBOX_ALLOW_RUNTIME_ENV)", key);
		return -1;
	}
	*ttl = req->has_timeout_seconds ? req->timeout_seconds :
	    conf->default_timeout_seconds;
	if (*ttl < 1 || *ttl > conf->max_timeout_seconds) {
		egress_policy_free(egress);
		apid_error(apid_id, ERR_INVALID_REQUEST,
		    "timeout_seconds must be in [1, %ld]",
		    conf->max_timeout_seconds);
		return -1;
	}
	if ((spec->image = strdup(image)) == NULL) {
		egress_policy_free(egress);
		apid_error(apid_id, ERR_INTERNAL, "out of memory");
		return -1;
	}
	spec->read_only_rootfs = req->read_only_rootfs;
	spec->env = req->env;
	memset(&req->env, 0, sizeof(req->env));
	return 0;
}

/* The container of a sandbox we could not record is gone (or not). */
static void
create_undone(struct imsg *reply, void *arg)
{
	struct create_call	*cc = arg;
	uint32_t		 kind;
	char			*text;

	if (reply == NULL)
		log_warnx("sandbox %s was not recorded and cannot be removed "
		    "now; the next start removes it", cc->sb->rec.id);
	else if (reply->hdr.type == MSG_ERROR) {
		text = proxy_error_text(reply, &kind);
		log_warnx("sandbox %s was not recorded and cannot be removed "
		    "(%s); the next start removes it", cc->sb->rec.id, text);
		free(text);
	} else if (reply->len != 0)
		peer_bad_message(&env->proxy_peer, reply, "unexpected payload");
	quota_release();
	if (cc->kind != 0)
		apid_error(cc->apid_id, cc->kind, "cannot give sandbox %s its "
		    "network: %s", cc->sb->rec.id, cc->why);
	else
		apid_error(cc->apid_id, storage_error(cc->saved_errno,
		    ERR_INTERNAL), "cannot record sandbox %s: %s",
		    cc->sb->rec.id, strerror(cc->saved_errno));
	create_call_free(cc);
}

static void	create_record(struct create_call *);

/*
 * A policy sandbox has its way out before anyone hears of it; one whose
 * listener could not be made is undone, as one that was not recorded.
 */
static void
create_attached(enum error_kind kind, const char *why, void *arg)
{
	struct create_call	*cc = arg;

	if (kind == 0) {
		create_record(cc);
		return;
	}
	cc->kind = kind;
	strlcpy(cc->why, why, sizeof(cc->why));
	egress_forget(cc->sb);
	if (proxy_destroy(cc->sb->rec.id, create_undone, cc) == 0)
		create_undone(NULL, cc);
}

static void
create_done(struct imsg *reply, void *arg)
{
	struct create_call	*cc = arg;

	metrics_sandbox_created("create", reply->hdr.type != MSG_ERROR);
	if (reply->hdr.type == MSG_ERROR) {
		quota_release();
		relay_error(reply, cc->apid_id);
		create_call_free(cc);
		return;
	}
	if (reply->len != 0)
		peer_bad_message(&env->proxy_peer, reply, "unexpected payload");
	if (cc->sb->rec.egress.mode != EGRESS_NONE)
		egress_attach(cc->sb, create_attached, cc);
	else
		create_record(cc);
}

static void
create_record(struct create_call *cc)
{
	struct sandbox		*sb = cc->sb;

	/* §4.2 step 10: the clock is read once the container is up. */
	sb->rec.created_at = clock_wall();
	sb->rec.expires_at = sb->rec.created_at + (double)cc->ttl;
	if (store_sandbox_write(env->datadir_fd, &sb->rec) == -1) {
		cc->saved_errno = errno;
		log_warn("cannot record sandbox %s", sb->rec.id);
		/* In place if only the directory's fsync failed. */
		(void)store_sandbox_remove(env->datadir_fd, sb->rec.id);
		egress_forget(sb);
		/* The slot stays taken until the container is gone. */
		if (proxy_destroy(sb->rec.id, create_undone, cc) == 0)
			create_undone(NULL, cc);
		return;
	}
	quota_release();
	cc->sb = NULL;
	sandbox_insert(sb);
	reaper_schedule();
	apid_reply_info(cc->apid_id, sb, 1, SANDBOX_REASON_NONE);
	/* Not the image: a client's string has no place in the log. */
	log_info("sandbox %s created", sb->rec.id);
	create_call_free(cc);
}

/* §4.2 step 8; a fork takes its slot the same way (§4.17). */
int
create_reserve(uint32_t apid_id)
{
	/* Pooled sandboxes hold slots too: one gives its own. */
	if (quota_reserve() == -1 && (pool_evict() == -1 ||
	    quota_reserve() == -1)) {
		apid_error(apid_id, ERR_LIMIT_EXCEEDED,
		    "the server already runs the maximum of %ld sandboxes",
		    env->conf.max_sandboxes);
		return -1;
	}
	return 0;
}

/*
 * DOCKER_CREATEs the proxy has: one the proxy's death cuts off may have
 * left a container, a volume or an init container in Docker, for a
 * sandbox nobody records.  Once a proxy is back, those are destroyed
 * (their ids are fresh, or a rollback's that ended by removing its
 * sandbox: no record names them).  Nothing else is ever destroyed for a
 * proxy's restart.  Docker finishes a request whose client died: a
 * destroy at once could remove a volume that a container create still in
 * Docker then makes again, unlabelled, where no destroy may touch it.  So
 * the destroy waits a moment, and is done once more later for what Docker
 * was slower still to finish.
 */
unsigned int	create_orphan_delays[2] = { 2, 10 };	/* seconds */

struct docker_create_call {
	TAILQ_ENTRY(docker_create_call)	 entry;
	char				 id[SANDBOX_ID_LEN + 1];
	struct sandbox			*sb;	/* until the reply */
	proxy_done_cb			 done;
	void				*arg;
	int				 cut_off;
	int				 tries;		/* destroys asked for */
	struct event			*ev;
};
TAILQ_HEAD(docker_create_calls, docker_create_call);
static struct docker_create_calls creating =
    TAILQ_HEAD_INITIALIZER(creating);
static struct docker_create_calls orphans = TAILQ_HEAD_INITIALIZER(orphans);

static void	orphan_destroy(struct docker_create_call *);

static void
docker_created(struct imsg *reply, void *arg)
{
	struct docker_create_call	*dcc = arg;
	proxy_done_cb			 done = dcc->done;

	arg = dcc->arg;
	if (reply->hdr.type == MSG_DOCKER_DONE)
		sandbox_state_started(dcc->sb);
	dcc->sb = NULL;
	TAILQ_REMOVE(&creating, dcc, entry);
	if (dcc->cut_off)
		TAILQ_INSERT_TAIL(&orphans, dcc, entry);
	else
		free(dcc);
	done(reply, arg);
}

void
create_proxy_lost(void)
{
	struct docker_create_call	*dcc;

	TAILQ_FOREACH(dcc, &creating, entry)
		dcc->cut_off = 1;
}

static void
orphan_free(struct docker_create_call *dcc)
{
	if (dcc->ev != NULL)
		event_free(dcc->ev);
	free(dcc);
}

static void
orphan_again(evutil_socket_t fd, short events, void *arg)
{
	orphan_destroy(arg);
}

/* The next destroy of the schedule, or the end of it. */
static void
orphan_schedule(struct docker_create_call *dcc)
{
	struct timeval	 tv = { 0, 0 };

	if (dcc->tries == 2) {
		orphan_free(dcc);
		return;
	}
	tv.tv_sec = create_orphan_delays[dcc->tries];
	if (dcc->ev == NULL &&
	    (dcc->ev = evtimer_new(env->base, orphan_again, dcc)) == NULL)
		fatal("%s", __func__);
	if (evtimer_add(dcc->ev, &tv) == -1)
		fatalx("%s: evtimer_add", __func__);
}

static void
orphan_destroyed(struct imsg *reply, void *arg)
{
	struct docker_create_call	*dcc = arg;

	/* The proxy died again: the next one goes on with it. */
	if (reply->hdr.type == MSG_ERROR && !child_up(CHILD_PROXY)) {
		dcc->tries--;
		TAILQ_INSERT_TAIL(&orphans, dcc, entry);
		return;
	}
	if (reply->hdr.type != MSG_ERROR && dcc->tries == 1)
		log_info("sandbox %s, whose creation dockerd-proxy's restart "
		    "cut off, destroyed", dcc->id);
	proxy_destroy_logged(reply, "sandbox", dcc->id);
	orphan_schedule(dcc);
}

static void
orphan_destroy(struct docker_create_call *dcc)
{
	dcc->tries++;
	if (proxy_destroy(dcc->id, orphan_destroyed, dcc) == 0) {
		proxy_destroy_logged(NULL, "sandbox", dcc->id);
		orphan_free(dcc);
	}
}

void
create_proxy_ready(void)
{
	struct docker_create_call	*dcc;

	while ((dcc = TAILQ_FIRST(&orphans)) != NULL) {
		TAILQ_REMOVE(&orphans, dcc, entry);
		orphan_schedule(dcc);
	}
}

/* The container and volume of a sandbox: create, fork and rollback. */
int
sandbox_docker_create(struct sandbox *sb, proxy_done_cb done, void *arg)
{
	struct docker_create_call	*dcc;
	struct docker_create		 dc;
	struct msgw			 w;
	char				 idbuf[SANDBOX_ID_LEN + 1];

	strlcpy(idbuf, sb->rec.id, sizeof(idbuf));
	memset(&dc, 0, sizeof(dc));
	dc.id = idbuf;
	dc.spec = sb->rec.spec;
	msgw_init(&w);
	msg_put_docker_create(&w, &dc);
	if (w.overflow) {
		errno = E2BIG;
		return -1;
	}
	if ((dcc = calloc(1, sizeof(*dcc))) == NULL)
		return -1;
	strlcpy(dcc->id, sb->rec.id, sizeof(dcc->id));
	dcc->sb = sb;
	dcc->done = done;
	dcc->arg = arg;
	sandbox_state_replacing(sb);
	if (proxy_call(MSG_DOCKER_CREATE, -1, &w, 0, MSG_DOCKER_DONE,
	    docker_created, dcc) == 0) {
		free(dcc);
		errno = EPIPE;
		return -1;
	}
	TAILQ_INSERT_TAIL(&creating, dcc, entry);
	return 0;
}

void
sandbox_create(uint32_t apid_id, struct create_request *req)
{
	struct create_call	*cc;
	struct sandbox_spec	 spec;
	struct egress_policy	 egress;
	int64_t			 ttl;

	if (create_check(apid_id, req, NULL, &spec, &egress, &ttl) == -1)
		return;
	if (tenant_quota_check(apid_id, &spec) == -1)
		goto fail;
	/* A pooled container gets no listener yet: a policy is made here. */
	if (egress.mode == EGRESS_NONE && pool_create(apid_id, req, &spec,
	    ttl))
		return;
	if (create_reserve(apid_id) == -1)
		goto fail;
	if ((cc = calloc(1, sizeof(*cc))) == NULL ||
	    (cc->sb = sandbox_new()) == NULL) {
		free(cc);
		quota_release();
		apid_error(apid_id, ERR_INTERNAL, "out of memory");
		goto fail;
	}
	cc->sb->rec.egress = egress;
	cc->apid_id = apid_id;
	cc->ttl = ttl;
	sandbox_make_id(cc->sb->rec.id, sizeof(cc->sb->rec.id));
	cc->sb->rec.spec = spec;
	strlcpy(cc->sb->rec.tenant, tenant_of(apid_id),
	    sizeof(cc->sb->rec.tenant));
	tenant_pending_add(cc->sb);
	cc->sb->rec.labels = req->labels;	/* checked by its decoder */
	memset(&req->labels, 0, sizeof(req->labels));
	if (sandbox_docker_create(cc->sb, create_done, cc) == -1) {
		quota_release();
		if (errno == E2BIG)
			apid_error(apid_id, ERR_INVALID_REQUEST,
			    "the sandbox's environment is too large");
		else
			apid_error(apid_id, ERR_INTERNAL,
			    "cannot reach dockerd-proxy");
		create_call_free(cc);
	}
	return;
fail:
	sandbox_spec_free(&spec);
	egress_policy_free(&egress);
}
