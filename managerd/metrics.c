/*
 * managerd's families for GET /metrics (docs/metrics.md), and the scrape:
 * apid asks (METRICS_REQUEST, with its resident bytes), managerd asks the
 * proxy for its text (DOCKER_METRICS), relays it line for line, checked,
 * then renders its own and ends.  Sandboxes and processes are counted in
 * managerd's tables at the scrape; nothing asks Docker.  The resident
 * set of every daemon is one family, rendered here; so are the children's
 * restarts, which managerd's supervision counts.
 */
#include <stdlib.h>

#include <event2/event.h>

#include "log.h"
#include "managerd.h"
#include "metrics.h"
#include "metrics_msg.h"
#include "process.h"

static struct metric_family sandboxes = {
	.name = "agent_sandbox_sandboxes",
	.help = "Sandboxes in managerd's table: \"creating\" (a create or "
	    "fork under way), \"active\", \"expired\" (past its expiry, for "
	    "the reaper); and \"pooled\", ready in the warm pool.",
	.type = METRIC_GAUGE, .labels = { "state", NULL }
};
static struct metric_family creates = {
	.name = "agent_sandbox_sandbox_creates_total",
	.help = "Sandbox creations (\"create\") and forks of a snapshot "
	    "(\"fork\") that reached Docker, by outcome.",
	.type = METRIC_COUNTER, .labels = { "kind", "outcome", NULL }
};
static struct metric_family destroys = {
	.name = "agent_sandbox_sandbox_destroys_total",
	.help = "Sandboxes destroyed by DELETE, by outcome.",
	.type = METRIC_COUNTER, .labels = { "outcome", NULL }
};
static struct metric_family reaps = {
	.name = "agent_sandbox_sandbox_reaps_total",
	.help = "Expired sandboxes destroyed by the reaper, by outcome.",
	.type = METRIC_COUNTER, .labels = { "outcome", NULL }
};
static struct metric_family execs = {
	.name = "agent_sandbox_exec_duration_seconds",
	.help = "Commands run by exec (and file listings), from the request to "
	    "Docker to their exit, by outcome.",
	.type = METRIC_HISTOGRAM, .labels = { "outcome", NULL },
	.bounds = metric_seconds_bounds, .nbounds = METRIC_SECONDS_NBOUNDS
};
static struct metric_family snapshot_bytes = {
	.name = "agent_sandbox_snapshot_bytes_total",
	.help = "Bytes of the snapshot tars managerd stored.",
	.type = METRIC_COUNTER
};
static struct metric_family processes = {
	.name = "agent_sandbox_processes",
	.help = "Background processes managerd keeps, \"running\" or "
	    "\"ended\".",
	.type = METRIC_GAUGE, .labels = { "state", NULL }
};
static struct metric_family rss = {
	.name = "agent_sandbox_daemon_resident_memory_bytes",
	.help = "Resident set of each daemon, from its /proc/self/statm.",
	.type = METRIC_GAUGE, .labels = { "daemon", NULL }
};
static struct metric_family restarts = {
	.name = "agent_sandbox_daemon_restarts_total",
	.help = "Times managerd started a child daemon again after it died.",
	.type = METRIC_COUNTER, .labels = { "daemon", NULL }
};

static int	 rss_fd = -1;

static const char *
outcome(int ok)
{
	return ok ? "ok" : "error";
}

/* Before the chroot; every series that must show from the start. */
void
metrics_init(void)
{
	static const char *const ok[] = { "ok" }, *const error[] = { "error" };
	static const char *const kinds[] = { "create", "fork" };
	const char	*v[2];
	unsigned int	 n;

	if ((rss_fd = metric_rss_open()) == -1)
		log_warn("/proc/self/statm: managerd's memory goes unreported");
	for (n = 0; n < 2; n++) {
		v[0] = kinds[n];
		v[1] = ok[0];
		metric_add(&creates, v, 0);
		v[1] = error[0];
		metric_add(&creates, v, 0);
	}
	metric_add(&destroys, ok, 0);
	metric_add(&destroys, error, 0);
	metric_add(&reaps, ok, 0);
	metric_add(&reaps, error, 0);
	for (n = 0; n < CHILD_MAX; n++)
		metric_add(&restarts, &child_kinds[n].name, 0);
	metric_add(&snapshot_bytes, NULL, 0);
}

void
metrics_sandbox_created(const char *kind, int ok)
{
	const char	*v[2];

	v[0] = kind;
	v[1] = outcome(ok);
	metric_add(&creates, v, 1);
}

void
metrics_sandbox_destroyed(int reaped, int ok)
{
	const char	*v = outcome(ok);

	metric_add(reaped ? &reaps : &destroys, &v, 1);
}

void
metrics_exec_done(double seconds, int timed_out)
{
	const char	*v = timed_out ? "timed_out" : "exited";

	metric_observe(&execs, &v, seconds);
}

void
metrics_snapshot_stored(uint64_t bytes)
{
	metric_add(&snapshot_bytes, NULL, (double)bytes);
}

void
metrics_child_restarted(enum child_id id)
{
	if (id < CHILD_MAX)
		metric_add(&restarts, &child_kinds[id].name, 1);
}

/* The tables as they are now. */
static void
count_tables(void)
{
	static const char *const st[] = { "creating", "active", "expired",
	    "pooled" };
	static const char *const ps[] = { "running", "ended" };
	struct sandbox	*sb;
	struct process	*p;
	double		 now = clock_wall(), n[4] = { 0, 0, 0, 0 };
	double		 np[2] = { 0, 0 };
	size_t		 i;

	/* The pool's slots are reservations too, not creations. */
	n[0] = (double)(quota_pending() - pool_slots());
	n[3] = (double)pool_ready();
	for (sb = sandbox_first(); sb != NULL; sb = sandbox_next(sb))
		n[sb->rec.expires_at <= now ? 2 : 1]++;
	TAILQ_FOREACH(p, &all_processes, entry)
		np[p->rec.running ? 0 : 1]++;
	for (i = 0; i < 4; i++)
		metric_set(&sandboxes, &st[i], n[i]);
	for (i = 0; i < 2; i++)
		metric_set(&processes, &ps[i], np[i]);
}

static void
render_own(struct metric_text *t, uint64_t apid_rss, uint64_t proxy_rss)
{
	static const char *const m[] = { "managerd" }, *const a[] = { "apid" },
	    *const p[] = { "dockerd-proxy" };

	count_tables();
	metric_set(&rss, m, (double)metric_rss_bytes(rss_fd));
	metric_set(&rss, a, (double)apid_rss);
	metric_set(&rss, p, (double)proxy_rss);
	metric_render(t, &sandboxes);
	metric_render(t, &creates);
	metric_render(t, &destroys);
	metric_render(t, &reaps);
	metric_render(t, &execs);
	metric_render(t, &snapshot_bytes);
	metric_render(t, &processes);
	metric_render(t, &rss);
	metric_render(t, &restarts);
}

/*
 * One scrape, while the proxy's part comes.  The proxy's text is kept
 * whole until its end, so that apid gets all of it or none; a proxy that
 * does not answer within METRICS_PROXY_WAIT (stopped, or busy for that
 * long) leaves the scrape to managerd's part.  The scrape is freed with
 * the call's last reply, which its death brings too.
 */
#define METRICS_PROXY_WAIT	2	/* seconds */

struct scrape {
	uint32_t		 apid_id;
	uint64_t		 apid_rss;
	struct metric_text	 proxy;		/* its text so far */
	struct event		*timer;
	int			 answered;
};

static void
scrape_free(struct scrape *s)
{
	if (s->timer != NULL)
		event_free(s->timer);
	metric_text_free(&s->proxy);
	free(s);
}

static int
send_to_apid(void *arg, struct msgw *w)
{
	struct scrape	*s = arg;

	return apid_reply(s->apid_id, MSG_METRICS_TEXT, w);
}

/* The proxy's text (if it came), then managerd's, then the end. */
static void
scrape_answer(struct scrape *s, int with_proxy, uint64_t proxy_rss)
{
	struct metric_text	 t;

	s->answered = 1;
	metric_text_init(&t);
	if (with_proxy)
		metric_text_add(&t, s->proxy.buf, s->proxy.len);
	render_own(&t, s->apid_rss, proxy_rss);
	if (t.error || metrics_text_send(t.buf, t.len, send_to_apid, s) == -1)
		apid_error(s->apid_id, ERR_INTERNAL,
		    "cannot render managerd's metrics");
	else
		apid_reply(s->apid_id, MSG_METRICS_END, NULL);
	metric_text_free(&t);
}

static void
scrape_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct scrape	*s = arg;

	log_warnx("dockerd-proxy did not send its metrics within %d s",
	    METRICS_PROXY_WAIT);
	scrape_answer(s, 0, 0);
}

/* A piece of the proxy's text, checked, kept for the answer. */
static void
proxy_text(struct scrape *s, struct imsg *reply)
{
	struct metrics_text	 mt;

	if (msg_get_metrics_text(reply, &mt) == -1 ||
	    mt.len > METRIC_TEXT_MAX - s->proxy.len)
		peer_bad_message(&env->proxy_peer, reply, "malformed metrics");
	metric_text_add(&s->proxy, mt.text, mt.len);
	metrics_text_free(&mt);
}

static void
proxy_done(struct imsg *reply, void *arg)
{
	struct scrape		*s = arg;
	struct metrics_rss	 r;

	switch (reply->hdr.type) {
	case MSG_DOCKER_METRICS_TEXT:
		proxy_text(s, reply);
		return;
	case MSG_DOCKER_METRICS_END:
		if (msg_get_metrics_rss(reply, &r) == -1)
			peer_bad_message(&env->proxy_peer, reply,
			    "malformed metrics end");
		if (!s->answered)
			scrape_answer(s, !s->proxy.error, r.rss_bytes);
		break;
	default:
		/* No proxy now: managerd's part alone, its memory unknown. */
		if (!s->answered)
			scrape_answer(s, 0, 0);
	}
	scrape_free(s);
}

void
metrics_scrape(struct peer *p, struct imsg *imsg)
{
	struct timeval		 wait = { METRICS_PROXY_WAIT, 0 };
	struct metrics_rss	 r;
	struct scrape		*s;

	if (msg_get_metrics_rss(imsg, &r) == -1)
		peer_bad_message(p, imsg, "malformed metrics request");
	if ((s = calloc(1, sizeof(*s))) == NULL) {
		apid_error(imsg->hdr.peerid, ERR_INTERNAL, "out of memory");
		return;
	}
	s->apid_id = imsg->hdr.peerid;
	s->apid_rss = r.rss_bytes;
	metric_text_init(&s->proxy);
	if ((s->timer = evtimer_new(env->base, scrape_timeout, s)) == NULL ||
	    evtimer_add(s->timer, &wait) == -1 ||
	    proxy_call(MSG_DOCKER_METRICS, -1, NULL, MSG_DOCKER_METRICS_TEXT,
	    MSG_DOCKER_METRICS_END, proxy_done, s) == 0) {
		scrape_answer(s, 0, 0);
		scrape_free(s);
	}
}
