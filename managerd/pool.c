/*
 * The warm pool (AGENT_SANDBOX_WARM_POOL, docs/configuration.md "Warm
 * pool"): per image, sandboxes created and started ahead with the
 * defaults, so that a create they can serve is one record write away.
 *
 * A pooled sandbox is a sandbox of its own, id and all, made by the usual
 * DOCKER_CREATE (workspace already the sandbox user's), but out of the
 * table: no tenant sees it, no TTL runs for it, no request reaches it.
 * Each holds one slot of max_sandboxes (quota_reserve), which its claim
 * hands to the claiming request, and which a create the pool cannot serve
 * takes from it when the server is otherwise full (pool_evict).
 *
 * A create is served when it asks for a pool's image with the defaults of
 * network (none) and root filesystem (read-only); its CPU, memory and
 * pids limits, when they are not the defaults, are put on the container
 * with Docker's update call before the answer, and its environment, which
 * a running container's cannot take, goes with every exec and process
 * (the record says "pooled").  Its TTL starts at the claim.
 *
 * A pooled container that died (Docker's events, or the stock-taking
 * after a stream came up) is dropped and replaced, never handed out; one
 * whose claim failed half-way is destroyed, never pooled again.  At the
 * next start, reconciliation destroys every pooled container (they have
 * no record) and the pool fills again.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "log.h"
#include "managerd.h"

#define POOL_RETRY_MIN_S	1
#define POOL_RETRY_MAX_S	60

struct pool_entry {
	TAILQ_ENTRY(pool_entry)	 entry;
	struct pool_image	*pi;
	struct sandbox		*sb;	/* out of the table */
	int			 alive;	/* seen running by the stock-taking */
};
TAILQ_HEAD(pool_entries, pool_entry);

struct pool_image {
	const char		*image;		/* the configuration's */
	long			 want;
	size_t			 ready;
	int			 filling;	/* a DOCKER_CREATE out */
	struct pool_entries	 entries;
	struct event		*ev_retry;
	unsigned int		 failures;
};

static struct pool_image	 images[POOL_IMAGES_MAX];
static size_t			 nimages;
static int			 started;

/* A claim between its take and its answer. */
struct claim {
	uint32_t	 apid_id;
	int64_t		 ttl;
	struct sandbox	*sb;
	int		 saved_errno;
};

static void	pool_fill(struct pool_image *);

static void
pool_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	pool_fill(arg);
}

/* At start-up, before anything runs: the images must be allowed. */
int
pool_init(char *err, size_t len)
{
	const struct config	*conf = &env->conf;
	const char		*image;
	size_t			 i;
	int			 ok;

	for (i = 0; i < conf->pool.count; i++) {
		image = conf->pool.images[i];
		ok = strcmp(conf->allowed_images_match, "parts") == 0 ?
		    image_allowed_parts(conf->allowed_images,
		    conf->allowed_images_count, image) :
		    image_allowed(conf->allowed_images,
		    conf->allowed_images_count, image);
		if (!ok) {
			snprintf(err, len, "AGENT_SANDBOX_WARM_POOL names %s, "
			    "which AGENT_SANDBOX_ALLOWED_IMAGES does not allow",
			    image);
			return -1;
		}
		images[i].image = image;
		images[i].want = conf->pool.counts[i];
		TAILQ_INIT(&images[i].entries);
	}
	nimages = conf->pool.count;
	return 0;
}

/* Reconciliation is over: whatever is made now is not an orphan. */
void
pool_start(void)
{
	size_t	 i;

	started = 1;
	for (i = 0; i < nimages; i++) {
		if ((images[i].ev_retry = evtimer_new(env->base, pool_retry_cb,
		    &images[i])) == NULL)
			fatal("evtimer_new");
		pool_fill(&images[i]);
	}
}

static void
pool_retry_later(struct pool_image *pi)
{
	struct timeval	 tv = { POOL_RETRY_MIN_S, 0 };
	unsigned int	 i;

	for (i = 0; i < pi->failures && tv.tv_sec < POOL_RETRY_MAX_S; i++)
		tv.tv_sec *= 2;
	if (tv.tv_sec > POOL_RETRY_MAX_S)
		tv.tv_sec = POOL_RETRY_MAX_S;
	if (evtimer_add(pi->ev_retry, &tv) == -1)
		fatal("evtimer_add");
}

static void
pool_entry_free(struct pool_entry *e)
{
	if (e->sb != NULL)
		sandbox_release(e->sb);
	free(e);
}

static void
pool_created(struct imsg *reply, void *arg)
{
	struct pool_entry	*e = arg;
	struct pool_image	*pi = e->pi;
	uint32_t		 kind;
	char			*text;

	pi->filling = 0;
	if (reply->hdr.type == MSG_ERROR) {
		text = proxy_error_text(reply, &kind);
		if (pi->failures++ == 0)
			log_warnx("warm pool: cannot create a sandbox of %s: "
			    "%s; trying again", pi->image, text);
		free(text);
		quota_release();
		pool_entry_free(e);
		pool_retry_later(pi);
		return;
	}
	if (reply->len != 0)
		peer_bad_message(&env->proxy_peer, reply, "unexpected payload");
	pi->failures = 0;
	e->alive = 1;
	TAILQ_INSERT_TAIL(&pi->entries, e, entry);
	pi->ready++;
	log_debug("warm pool: %s ready (%zu of %ld of %s)", e->sb->rec.id,
	    pi->ready, pi->want, pi->image);
	pool_fill(pi);
}

/* The pool's spec: the defaults, no network, a read-only root. */
static int
pool_spec(struct pool_image *pi, struct sandbox_spec *s)
{
	const struct config	*conf = &env->conf;

	memset(s, 0, sizeof(*s));
	if ((s->image = strdup(pi->image)) == NULL)
		return -1;
	s->cpus = conf->default_cpus;
	s->memory_mb = conf->default_memory_mb;
	s->pids_limit = conf->default_pids_limit;
	s->read_only_rootfs = 1;
	return 0;
}

/* One more sandbox of this image, one at a time, while a slot is free. */
static void
pool_fill(struct pool_image *pi)
{
	struct pool_entry	*e;

	if (!started || env->stopping || pi->filling ||
	    pi->ready >= (size_t)pi->want ||
	    evtimer_pending(pi->ev_retry, NULL))
		return;
	if (!child_up(CHILD_PROXY) || quota_reserve() == -1) {
		pool_retry_later(pi);
		return;
	}
	if ((e = calloc(1, sizeof(*e))) == NULL ||
	    (e->sb = sandbox_new()) == NULL ||
	    pool_spec(pi, &e->sb->rec.spec) == -1) {
		log_warnx("warm pool: out of memory");
		goto fail;
	}
	e->pi = pi;
	sandbox_make_id(e->sb->rec.id, sizeof(e->sb->rec.id));
	pi->filling = 1;
	if (sandbox_docker_create(e->sb, pool_created, e) == 0)
		return;
	pi->filling = 0;
	log_warnx("warm pool: cannot reach dockerd-proxy");
fail:
	quota_release();
	if (e != NULL)
		pool_entry_free(e);
	pool_retry_later(pi);
}

static void
pool_destroyed(struct imsg *reply, void *arg)
{
	char	*id = arg;

	proxy_destroy_logged(reply, "pooled sandbox", id);
	free(id);
}

/* Out of the pool for good: its slot back, its container destroyed. */
static void
pool_drop(struct pool_entry *e, const char *why)
{
	struct pool_image	*pi = e->pi;
	char			*id;

	TAILQ_REMOVE(&pi->entries, e, entry);
	pi->ready--;
	log_info("warm pool: %s of %s dropped: %s", e->sb->rec.id, pi->image,
	    why);
	if ((id = strdup(e->sb->rec.id)) == NULL ||
	    proxy_destroy(id, pool_destroyed, id) == 0) {
		log_warnx("warm pool: cannot destroy %s now; the next start "
		    "does", e->sb->rec.id);
		free(id);
	}
	quota_release();
	pool_entry_free(e);
}

/* A create the pool cannot serve needs a slot: a pooled one gives it. */
int
pool_evict(void)
{
	struct pool_image	*pi = NULL;
	size_t			 i;

	for (i = 0; i < nimages; i++)
		if (images[i].ready > 0 && (pi == NULL ||
		    images[i].ready > pi->ready))
			pi = &images[i];
	if (pi == NULL)
		return -1;
	pool_drop(TAILQ_FIRST(&pi->entries), "its slot went to a create");
	return 0;
}

static struct pool_entry *
pool_entry_find(const char *id)
{
	struct pool_entry	*e;
	size_t			 i;

	for (i = 0; i < nimages; i++)
		TAILQ_FOREACH(e, &images[i].entries, entry)
			if (strcmp(e->sb->rec.id, id) == 0)
				return e;
	return NULL;
}

/* Docker's event of a container that is no sandbox of the table. */
void
pool_event(const struct docker_event *ev)
{
	struct pool_entry	*e;
	struct pool_image	*pi;

	if ((e = pool_entry_find(ev->id)) == NULL ||
	    ev->time_ns < e->sb->st.floor_ns ||
	    (ev->action != DOCKER_EVENT_DIE &&
	    ev->action != DOCKER_EVENT_DESTROY))
		return;
	pi = e->pi;
	pool_drop(e, "its container stopped");
	pool_fill(pi);
}

/* The stock-taking after an UP: which pooled containers still run. */
void
pool_stock_begin(void)
{
	struct pool_entry	*e;
	size_t			 i;

	for (i = 0; i < nimages; i++)
		TAILQ_FOREACH(e, &images[i].entries, entry)
			e->alive = 0;
}

void
pool_stock_item(const char *id, int running)
{
	struct pool_entry	*e;

	if ((e = pool_entry_find(id)) != NULL && running)
		e->alive = 1;
}

/* Those the list did not see running, and that are older, go. */
void
pool_stock_end(int64_t list_ns)
{
	struct pool_entry	*e, *next;
	size_t			 i;

	for (i = 0; i < nimages; i++) {
		TAILQ_FOREACH_SAFE(e, &images[i].entries, entry, next)
			if (!e->alive && e->sb->st.floor_ns < list_ns)
				pool_drop(e, "its container is not running");
		pool_fill(&images[i]);
	}
}

/* --- claims --------------------------------------------------------------- */

static struct pool_image *
pool_for(const struct sandbox_spec *s)
{
	size_t	 i;

	/* Without the events, a pooled container's death would go unseen. */
	if (s->network || !s->read_only_rootfs || !events_live())
		return NULL;
	for (i = 0; i < nimages; i++)
		if (strcmp(images[i].image, s->image) == 0)
			return &images[i];
	return NULL;
}

static void
claim_free(struct claim *c)
{
	if (c->sb != NULL)
		sandbox_release(c->sb);
	free(c);
}

/* A claim that failed past its take: the container goes, the slot too. */
static void
claim_fail(struct claim *c, enum error_kind kind, const char *text)
{
	char	*id;

	if ((id = strdup(c->sb->rec.id)) == NULL ||
	    proxy_destroy(id, pool_destroyed, id) == 0)
		free(id);
	quota_release();
	metrics_sandbox_created("create", 0);
	apid_error(c->apid_id, kind, "%s", text);
	claim_free(c);
}

static void
claim_finish(struct claim *c)
{
	struct sandbox	*sb = c->sb;
	char		 text[256];

	sb->rec.created_at = clock_wall();
	sb->rec.expires_at = sb->rec.created_at + (double)c->ttl;
	if (store_sandbox_write(env->datadir_fd, &sb->rec) == -1) {
		c->saved_errno = errno;
		log_warn("cannot record sandbox %s", sb->rec.id);
		(void)store_sandbox_remove(env->datadir_fd, sb->rec.id);
		snprintf(text, sizeof(text), "cannot record sandbox %s: %s",
		    sb->rec.id, strerror(c->saved_errno));
		claim_fail(c, storage_error(c->saved_errno, ERR_INTERNAL),
		    text);
		return;
	}
	quota_release();	/* the table's slot now */
	c->sb = NULL;
	sandbox_insert(sb);
	reaper_schedule();
	sandbox_state_started(sb);
	metrics_sandbox_created("create", 1);
	apid_reply_info(c->apid_id, sb, 1, SANDBOX_REASON_NONE);
	log_info("sandbox %s created from the warm pool", sb->rec.id);
	claim_free(c);
}

static void
claim_updated(struct imsg *reply, void *arg)
{
	struct claim	*c = arg;
	uint32_t	 kind;
	char		*text, buf[2048];

	if (reply->hdr.type == MSG_ERROR) {
		text = proxy_error_text(reply, &kind);
		snprintf(buf, sizeof(buf), "%s", text);
		free(text);
		claim_fail(c, kind, buf);
		return;
	}
	if (reply->len != 0)
		peer_bad_message(&env->proxy_peer, reply, "unexpected payload");
	claim_finish(c);
}

static int
limits_differ(const struct sandbox_spec *a, const struct sandbox_spec *b)
{
	return a->cpus != b->cpus || a->memory_mb != b->memory_mb ||
	    a->pids_limit != b->pids_limit;
}

/* The request's own parts on the pooled sandbox; the spec is taken. */
static void
claim_take(struct claim *c, uint32_t apid_id, struct create_request *req,
    struct sandbox_spec *spec)
{
	struct sandbox	*sb = c->sb;

	sandbox_spec_free(&sb->rec.spec);
	sb->rec.spec = *spec;
	memset(spec, 0, sizeof(*spec));
	sb->rec.pooled = 1;
	strlcpy(sb->rec.tenant, tenant_of(apid_id), sizeof(sb->rec.tenant));
	sb->rec.labels = req->labels;	/* checked by its decoder */
	memset(&req->labels, 0, sizeof(req->labels));
	tenant_pending_add(sb);
}

/*
 * A create the pool can serve: 1 when it did (answered, or on its way),
 * 0 when the caller goes on (the spec is then untouched).  The checks
 * and the tenant's quota are behind it; the slot is the pooled one's.
 */
int
pool_create(uint32_t apid_id, struct create_request *req,
    struct sandbox_spec *spec, int64_t ttl)
{
	struct pool_image	*pi;
	struct pool_entry	*e;
	struct claim		*c;
	struct msgw		 w;
	struct docker_create	 dc;
	int			 update;

	if ((pi = pool_for(spec)) == NULL ||
	    (e = TAILQ_FIRST(&pi->entries)) == NULL ||
	    (c = calloc(1, sizeof(*c))) == NULL)
		return 0;
	TAILQ_REMOVE(&pi->entries, e, entry);
	pi->ready--;
	c->apid_id = apid_id;
	c->ttl = ttl;
	c->sb = e->sb;
	e->sb = NULL;
	pool_entry_free(e);
	update = limits_differ(&c->sb->rec.spec, spec);
	claim_take(c, apid_id, req, spec);
	pool_fill(pi);
	if (!update) {
		claim_finish(c);
		return 1;
	}
	memset(&dc, 0, sizeof(dc));
	dc.id = c->sb->rec.id;
	dc.spec = c->sb->rec.spec;
	msgw_init(&w);
	msg_put_docker_create(&w, &dc);
	if (w.overflow)
		claim_fail(c, ERR_INVALID_REQUEST,
		    "the sandbox's environment is too large");
	else if (proxy_call(MSG_DOCKER_UPDATE, -1, &w, 0, MSG_DOCKER_DONE,
	    claim_updated, c) == 0)
		claim_fail(c, ERR_INTERNAL, "cannot reach dockerd-proxy");
	return 1;
}

/* Slots the pool holds: its ready sandboxes and those being made. */
size_t
pool_slots(void)
{
	size_t	 i, n = 0;

	for (i = 0; i < nimages; i++)
		n += images[i].ready + (images[i].filling ? 1 : 0);
	return n;
}

/* For GET /metrics: pooled sandboxes ready now. */
size_t
pool_ready(void)
{
	size_t	 i, n = 0;

	for (i = 0; i < nimages; i++)
		n += images[i].ready;
	return n;
}
