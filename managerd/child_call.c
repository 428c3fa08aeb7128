/*
 * Calls to the children that start on demand (netns-helper and
 * egress-proxy, docs/architecture.md "Egress policy"): a server with no
 * policy in use never starts them, so the first call starts its child
 * and waits, queued, for its READY.  Each call gets an id the child
 * echoes; a reply to no call of ours, or of a type the call does not
 * expect, is a lie and fatal, as dockerd-proxy's are (dispatch_proxy.c).
 * A call that cannot be answered (the child could not start within
 * CALL_START_SECONDS, or died with the call in flight) fails with
 * ERR_UNAVAILABLE, from the event loop, never from inside child_call().
 * So does every call in flight when one of them has had no word for
 * CALL_ANSWER_SECONDS: the child is hung (each of its answers comes at
 * once, the netns-helper's within its own 2 s alarm), so it is stopped,
 * and started again when next needed; a late answer cannot come.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "log.h"
#include "managerd.h"

/* How long a queued call waits for its child to come up. */
#define CALL_START_SECONDS	10
/* How long a call sent waits for a word of its answer. */
#define CALL_ANSWER_SECONDS	10

struct child_call {
	TAILQ_ENTRY(child_call)	 entry;
	uint32_t		 id;
	uint32_t		 type;
	uint32_t		 more_type;
	uint32_t		 reply_type;
	int			 fd;		/* until sent */
	struct msgw		*w;		/* until sent */
	proxy_done_cb		 done;
	void			*arg;
	const char		*why;		/* failing */
	double			 queued_at;	/* clock_monotonic() */
	double			 heard_at;	/* sent, or its last word */
};
TAILQ_HEAD(child_call_list, child_call);

struct child_calls {
	struct child_call_list	 queued;	/* waiting for READY */
	struct child_call_list	 sent;
	struct child_call_list	 failing;
	struct event		*ev_fail;
	struct event		*ev_timeout;
	struct event		*ev_answer;	/* CALL_ANSWER_SECONDS */
	int			 init;
};

static struct child_calls	 calls[CHILD_MAX];
static uint32_t			 next_id = 1;

static struct child_calls *
calls_of(enum child_id id)
{
	struct child_calls	*cc = &calls[id];

	if (!cc->init) {
		TAILQ_INIT(&cc->queued);
		TAILQ_INIT(&cc->sent);
		TAILQ_INIT(&cc->failing);
		cc->init = 1;
	}
	return cc;
}

static void
call_free(struct child_call *call)
{
	if (call->fd != -1)
		close(call->fd);
	free(call->w);
	free(call);
}

static void
calls_fail_cb(evutil_socket_t fd, short events, void *arg)
{
	struct child_calls	*cc = arg;
	struct child_call	*call;
	struct imsg		 imsg;
	struct msgw		 w;

	while ((call = TAILQ_FIRST(&cc->failing)) != NULL) {
		TAILQ_REMOVE(&cc->failing, call, entry);
		error_imsg(&imsg, &w, call->id, ERR_UNAVAILABLE, call->why);
		call->done(&imsg, call->arg);
		call_free(call);
	}
}

/* The call (in no list) fails with why, soon. */
static void
call_fail(struct child_calls *cc, struct child_call *call, const char *why)
{
	call->why = why;
	TAILQ_INSERT_TAIL(&cc->failing, call, entry);
	if (cc->ev_fail == NULL && (cc->ev_fail = event_new(env->base, -1, 0,
	    calls_fail_cb, cc)) == NULL)
		fatalx("%s: event_new", __func__);
	event_active(cc->ev_fail, 0, 0);
}

/* Every call of list fails with why, soon. */
static void
calls_fail(struct child_calls *cc, struct child_call_list *list,
    const char *why)
{
	struct child_call	*call;

	while ((call = TAILQ_FIRST(list)) != NULL) {
		TAILQ_REMOVE(list, call, entry);
		call_fail(cc, call, why);
	}
}

static void	calls_wait(enum child_id, struct child_calls *);

/* A timer's timeout, seconds from now (none past: at once). */
static void
timeval_in(struct timeval *tv, double left)
{
	if (left < 0)
		left = 0;
	tv->tv_sec = (time_t)left;
	tv->tv_usec = (suseconds_t)((left - (double)tv->tv_sec) * 1e6);
}

/* Each queued call waits CALL_START_SECONDS from its own queuing. */
static void
calls_timeout_cb(evutil_socket_t fd, short events, void *arg)
{
	enum child_id		 id = (enum child_id)(intptr_t)arg;
	struct child_calls	*cc = calls_of(id);
	struct child_call	*call;
	double			 now = clock_monotonic();
	int			 n = 0;

	while ((call = TAILQ_FIRST(&cc->queued)) != NULL &&
	    now - call->queued_at >= CALL_START_SECONDS - 0.001) {
		TAILQ_REMOVE(&cc->queued, call, entry);
		call_fail(cc, call, "a helper process of the server could "
		    "not be started");
		n++;
	}
	if (n > 0)
		log_warnx("%s did not start within %d seconds",
		    child_kinds[id].name, CALL_START_SECONDS);
	if (!TAILQ_EMPTY(&cc->queued))
		calls_wait(id, cc);
}

/* The timer, for the oldest queued call, and its child asked for. */
static void
calls_wait(enum child_id id, struct child_calls *cc)
{
	struct child_call	*oldest = TAILQ_FIRST(&cc->queued);
	struct timeval		 tv;
	double			 left;

	if (cc->ev_timeout == NULL && (cc->ev_timeout = evtimer_new(env->base,
	    calls_timeout_cb, (void *)(intptr_t)id)) == NULL)
		fatalx("%s: evtimer_new", __func__);
	left = oldest == NULL ? 0 : CALL_START_SECONDS -
	    (clock_monotonic() - oldest->queued_at);
	timeval_in(&tv, left);
	if (!evtimer_pending(cc->ev_timeout, NULL))
		evtimer_add(cc->ev_timeout, &tv);
	child_demand(id);
}

static void	calls_answer_wait(enum child_id, struct child_calls *);

/* A call in flight has had no word for too long: the child is hung. */
static void
calls_answer_cb(evutil_socket_t fd, short events, void *arg)
{
	enum child_id		 id = (enum child_id)(intptr_t)arg;
	struct child_calls	*cc = calls_of(id);
	struct child_call	*call;
	double			 now = clock_monotonic();

	TAILQ_FOREACH(call, &cc->sent, entry) {
		if (now - call->heard_at >= CALL_ANSWER_SECONDS - 0.001)
			break;
	}
	if (call == NULL) {
		calls_answer_wait(id, cc);
		return;
	}
	log_warnx("%s did not answer within %d seconds: it is stopped, and "
	    "started again when next needed", child_kinds[id].name,
	    CALL_ANSWER_SECONDS);
	calls_fail(cc, &cc->sent, "a helper process of the server did not "
	    "answer; try again");
	child_hung(id);
}

/* The timer, for the call in flight heard from longest ago (or none). */
static void
calls_answer_wait(enum child_id id, struct child_calls *cc)
{
	struct child_call	*call;
	struct timeval		 tv;
	double			 oldest = -1;

	TAILQ_FOREACH(call, &cc->sent, entry) {
		if (oldest < 0 || call->heard_at < oldest)
			oldest = call->heard_at;
	}
	if (oldest < 0) {
		if (cc->ev_answer != NULL)
			evtimer_del(cc->ev_answer);
		return;
	}
	if (cc->ev_answer == NULL && (cc->ev_answer = evtimer_new(env->base,
	    calls_answer_cb, (void *)(intptr_t)id)) == NULL)
		fatalx("%s: evtimer_new", __func__);
	timeval_in(&tv, CALL_ANSWER_SECONDS - (clock_monotonic() - oldest));
	evtimer_add(cc->ev_answer, &tv);
}

/* -1 if it could not be queued for the peer (then the caller fails it). */
static int
call_send(enum child_id id, struct child_call *call)
{
	int	 fd = call->fd;

	call->fd = -1;
	if (peer_send(env->child[id].peer, call->type, call->id, fd,
	    call->w) == -1)
		return -1;
	free(call->w);
	call->w = NULL;
	call->heard_at = clock_monotonic();
	TAILQ_INSERT_TAIL(&calls_of(id)->sent, call, entry);
	calls_answer_wait(id, calls_of(id));
	return 0;
}

uint32_t
child_call(enum child_id id, uint32_t type, int fd, struct msgw *w,
    uint32_t more_type, uint32_t reply_type, proxy_done_cb done, void *arg)
{
	struct child_calls	*cc = calls_of(id);
	struct child_call	*call;

	if ((call = calloc(1, sizeof(*call))) == NULL ||
	    (call->w = malloc(sizeof(*w))) == NULL) {
		free(call);
		if (fd != -1)
			close(fd);
		return 0;
	}
	memcpy(call->w, w, sizeof(*w));
	call->id = next_id++;
	if (next_id == 0)
		next_id = 1;
	call->type = type;
	call->fd = fd;
	call->more_type = more_type;
	call->reply_type = reply_type;
	call->done = done;
	call->arg = arg;
	if (child_up(id)) {
		if (call_send(id, call) == -1) {
			call_free(call);
			return 0;
		}
		return call->id;
	}
	call->queued_at = clock_monotonic();
	TAILQ_INSERT_TAIL(&cc->queued, call, entry);
	calls_wait(id, cc);
	return call->id;
}

/* READY: what waited for it goes now. */
void
child_calls_ready(enum child_id id)
{
	struct child_calls	*cc = calls_of(id);
	struct child_call	*call;

	if (cc->ev_timeout != NULL)
		evtimer_del(cc->ev_timeout);
	while ((call = TAILQ_FIRST(&cc->queued)) != NULL) {
		TAILQ_REMOVE(&cc->queued, call, entry);
		if (call_send(id, call) == -1)
			call_fail(cc, call, "cannot reach a helper process");
	}
}

/*
 * Its channel is gone: the calls in flight fail; those queued wait for
 * the start that follows (child_died), within their time.
 */
void
child_calls_lost(enum child_id id)
{
	struct child_calls	*cc = calls_of(id);

	if (!TAILQ_EMPTY(&cc->sent))
		calls_fail(cc, &cc->sent, "a helper process of the server "
		    "restarted");
	calls_answer_wait(id, cc);
	if (!TAILQ_EMPTY(&cc->queued))
		calls_wait(id, cc);
}

static struct child_call *
call_find(struct child_calls *cc, uint32_t id)
{
	struct child_call	*call;

	TAILQ_FOREACH(call, &cc->sent, entry) {
		if (call->id == id)
			return call;
	}
	return NULL;
}

/* A reply from child id: its call's, of a type it expects, or a lie. */
void
child_calls_reply(enum child_id id, struct peer *p, struct imsg *imsg)
{
	struct child_calls	*cc = calls_of(id);
	struct child_call	*call;
	uint32_t		 type = imsg->hdr.type;

	if ((call = call_find(cc, imsg->hdr.peerid)) == NULL)
		peer_bad_message(p, imsg, "reply to no pending call");
	if (type != call->reply_type && type != MSG_ERROR &&
	    (call->more_type == 0 || type != call->more_type))
		peer_bad_message(p, imsg, "wrong reply type");
	if (type == call->more_type && call->more_type != 0) {
		call->heard_at = clock_monotonic();
		call->done(imsg, call->arg);
		return;
	}
	TAILQ_REMOVE(&cc->sent, call, entry);
	call->done(imsg, call->arg);
	call_free(call);
	calls_answer_wait(id, cc);
}

/* Every call and timer gone, as at the start (the tests' event bases). */
void
child_calls_clear(void)
{
	struct child_call_list	*lists[3];
	struct child_calls	*cc;
	struct child_call	*call;
	size_t			 i, l;

	for (i = 0; i < CHILD_MAX; i++) {
		if (!(cc = &calls[i])->init)
			continue;
		lists[0] = &cc->queued;
		lists[1] = &cc->sent;
		lists[2] = &cc->failing;
		for (l = 0; l < 3; l++) {
			while ((call = TAILQ_FIRST(lists[l])) != NULL) {
				TAILQ_REMOVE(lists[l], call, entry);
				call_free(call);
			}
		}
		if (cc->ev_fail != NULL)
			event_free(cc->ev_fail);
		if (cc->ev_timeout != NULL)
			event_free(cc->ev_timeout);
		if (cc->ev_answer != NULL)
			event_free(cc->ev_answer);
		memset(cc, 0, sizeof(*cc));
	}
}
