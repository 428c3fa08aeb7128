/*
 * Sandbox states from Docker's event stream (dockerd-proxy/docker_events.c),
 * so that GET /v1/sandboxes and GET /v1/sandboxes/{id} answer from memory
 * and a container that died shows it at once, with why.
 *
 * The proxy says UP when its stream is there; managerd then takes stock
 * with one container list, and from its answer on (the stream is "live")
 * every sandbox's state is what the list and the events after it say.
 * DOWN, or the proxy's death, ends that: until the next UP's list, gets
 * and lists ask Docker as they did before (query.c).  An epoch counts the
 * UPs: a state set in an older one is not known.
 *
 * Events come from another connection than the answers to our own calls,
 * so a rollback's reply can overtake the removal of the container it
 * replaced.  Docker's clock (each event's time) is the host's, as is
 * ours: a sandbox's floor is when managerd asked for its new container,
 * and an event from before the floor is an older container's.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "managerd.h"

static struct {
	int		 live;		/* UP, and its list answered */
	uint64_t	 epoch;		/* UPs so far */
	int64_t		 list_ns;	/* when the stock-taking list went */
} evs;

int64_t
events_now_ns(void)
{
	struct timespec	 ts;

	if (clock_gettime(CLOCK_REALTIME, &ts) == -1)
		fatal("clock_gettime");
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int
events_live(void)
{
	return evs.live;
}

int
sandbox_state_known(const struct sandbox *sb)
{
	return evs.live && sb->st.epoch == evs.epoch;
}

/* A create, fork or rollback is about to ask for a new container. */
void
sandbox_state_replacing(struct sandbox *sb)
{
	sb->st.floor_ns = events_now_ns();
	sb->st.epoch = 0;
}

/* Its container started, unless an event of it already said more. */
void
sandbox_state_started(struct sandbox *sb)
{
	if (sb->st.seen_ns < sb->st.floor_ns) {
		sb->st.running = 1;
		sb->st.reason = SANDBOX_REASON_NONE;
		sb->st.oom = 0;
	}
	if (sb->st.epoch == 0 || sb->st.seen_ns < sb->st.floor_ns)
		sb->st.epoch = evs.epoch;
}

static void
state_set(struct sandbox *sb, int running, int reason)
{
	sb->st.running = running;
	sb->st.reason = running ? SANDBOX_REASON_NONE : reason;
	sb->st.epoch = evs.epoch;
}

static void
event_apply(const struct docker_event *ev)
{
	struct sandbox	*sb;

	if ((sb = sandbox_find(ev->id)) == NULL) {
		pool_event(ev);
		return;
	}
	if (ev->time_ns < sb->st.floor_ns)
		return;
	if (ev->time_ns > sb->st.seen_ns)
		sb->st.seen_ns = ev->time_ns;
	switch (ev->action) {
	case DOCKER_EVENT_START:
		sb->st.oom = 0;
		state_set(sb, 1, SANDBOX_REASON_NONE);
		/* A new namespace: its egress listener is made again. */
		egress_reattach(sb);
		break;
	case DOCKER_EVENT_OOM:
		sb->st.oom = 1;
		break;
	case DOCKER_EVENT_DIE:
		state_set(sb, 0, sb->st.oom ? SANDBOX_REASON_OOM_KILLED :
		    SANDBOX_REASON_EXITED);
		log_info("sandbox %s: its container stopped (status %lld%s)",
		    sb->rec.id, (long long)ev->exit_code,
		    sb->st.oom ? ", after an out-of-memory kill" : "");
		break;
	case DOCKER_EVENT_DESTROY:
		state_set(sb, 0, SANDBOX_REASON_REMOVED);
		break;
	}
}

/* The stock-taking list: each sandbox no event has spoken for since. */
struct stock {
	uint64_t	 epoch;
	int		 failed;
};

static void
stock_item(struct imsg *reply)
{
	struct sandbox	*sb = NULL;
	char		 id[SANDBOX_ID_LEN + 1];
	int		 container, running, ours;

	ours = docker_list_item(reply, id, sizeof(id), &container, &running);
	if (ours && (sb = sandbox_find(id)) == NULL)
		pool_stock_item(id, running);
	if (sb == NULL || sb->st.seen_ns >= evs.list_ns ||
	    sb->st.floor_ns >= evs.list_ns)
		return;
	state_set(sb, running, container ? SANDBOX_REASON_EXITED :
	    SANDBOX_REASON_REMOVED);
	sb->st.listed = evs.epoch;
}

/* Listed: every other sandbox of that time has no container. */
static void
stock_end(void)
{
	struct sandbox	*sb;

	for (sb = sandbox_first(); sb != NULL; sb = sandbox_next(sb)) {
		if (sb->st.listed == evs.epoch || sb->st.seen_ns >=
		    evs.list_ns || sb->st.floor_ns >= evs.list_ns)
			continue;
		state_set(sb, 0, SANDBOX_REASON_REMOVED);
	}
	pool_stock_end(evs.list_ns);
	evs.live = 1;
	log_info("sandbox states follow Docker's events");
}

static void
stock_done(struct imsg *reply, void *arg)
{
	struct stock	*st = arg;

	if (st->epoch != evs.epoch) {
		/* A DOWN or another UP came: that one's list counts. */
		if (reply->hdr.type != MSG_DOCKER_LIST_ITEM)
			free(st);
		return;
	}
	switch (reply->hdr.type) {
	case MSG_DOCKER_LIST_ITEM:
		stock_item(reply);
		return;
	case MSG_ERROR:
		log_warnx("cannot take stock of the sandboxes' containers; "
		    "their states are asked of Docker");
		break;
	default:
		if (reply->len != 0)
			peer_bad_message(&env->proxy_peer, reply,
			    "unexpected payload");
		stock_end();
		break;
	}
	free(st);
}

static void
events_up(void)
{
	struct stock	*st;

	evs.live = 0;
	evs.epoch++;
	if ((st = calloc(1, sizeof(*st))) == NULL) {
		log_warnx("out of memory: sandbox states are asked of Docker");
		return;
	}
	st->epoch = evs.epoch;
	evs.list_ns = events_now_ns();
	pool_stock_begin();
	if (proxy_call(MSG_DOCKER_LIST, -1, NULL, MSG_DOCKER_LIST_ITEM,
	    MSG_DOCKER_LIST_END, stock_done, st) == 0)
		free(st);
}

/* The stream is gone: nothing is known until the next UP's list. */
void
events_down(void)
{
	if (evs.live)
		log_info("sandbox states are asked of Docker again");
	evs.live = 0;
	evs.epoch++;
}

/* A proxy is READY: it follows the events from now on. */
void
events_follow(void)
{
	events_down();
	if (peer_send(&env->proxy_peer, MSG_DOCKER_EVENTS_FOLLOW, 0, -1,
	    NULL) == -1)
		fatalx("cannot send DOCKER_EVENTS_FOLLOW");
}

/* MSG_DOCKER_EVENTS_UP, _DOWN, MSG_DOCKER_EVENT from the proxy. */
void
events_dispatch(struct peer *p, struct imsg *imsg)
{
	struct docker_event	 ev;

	if (imsg->hdr.peerid != 0)
		peer_bad_message(p, imsg, "an event with a call's id");
	switch (imsg->hdr.type) {
	case MSG_DOCKER_EVENT:
		if (msg_get_docker_event(imsg, &ev) == -1)
			peer_bad_message(p, imsg, "malformed event");
		event_apply(&ev);
		break;
	case MSG_DOCKER_EVENTS_UP:
	case MSG_DOCKER_EVENTS_DOWN:
		if (imsg->len != 0)
			peer_bad_message(p, imsg, "unexpected payload");
		if (imsg->hdr.type == MSG_DOCKER_EVENTS_UP)
			events_up();
		else
			events_down();
		break;
	}
}
