/*
 * Calls to dockerd-proxy and their replies.  Each call gets an id that the
 * proxy echoes; a reply to an id we did not ask for, or of a type the call
 * does not expect, means the proxy is confused or compromised: fatal.
 * While the proxy is down (dead, or starting again) every call fails at
 * once with a 502.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "log.h"
#include "managerd.h"

/*
 * Calls that can get no answer from a proxy: made while it is down, or
 * cut off by its death.  Each gets an error as its reply, 502 for apid's
 * requests, from the event loop: never from inside proxy_call, whose
 * caller has not finished setting up its own state yet.
 */
static struct proxy_calls	 failing = TAILQ_HEAD_INITIALIZER(failing);

static void
proxy_fail_cb(evutil_socket_t fd, short events, void *arg)
{
	struct proxy_call	*call;
	struct imsg		 imsg;
	struct msgw		 w;

	while ((call = TAILQ_FIRST(&failing)) != NULL) {
		TAILQ_REMOVE(&failing, call, entry);
		error_imsg(&imsg, &w, call->id, ERR_BACKEND, call->why);
		call->done(&imsg, call->arg);
		free(call);
	}
}

static void
proxy_fail(struct proxy_call *call, const char *why)
{
	static const struct timeval	 now = { 0, 0 };

	call->why = why;
	TAILQ_INSERT_TAIL(&failing, call, entry);
	/* Once: the first to run fails every call queued by then. */
	if (TAILQ_NEXT(call, entry) == NULL &&
	    TAILQ_FIRST(&failing) == call &&
	    event_base_once(env->base, -1, EV_TIMEOUT, proxy_fail_cb, NULL,
	    &now) == -1)
		fatalx("%s: event_base_once", __func__);
}

uint32_t
proxy_call(uint32_t type, int fd, struct msgw *w, uint32_t more_type,
    uint32_t reply_type, proxy_done_cb done, void *arg)
{
	struct proxy_call	*call;

	if ((call = calloc(1, sizeof(*call))) == NULL) {
		if (fd != -1)
			close(fd);
		return 0;
	}
	call->id = env->next_call_id++;
	if (env->next_call_id == 0)
		env->next_call_id = 1;
	call->more_type = more_type;
	call->reply_type = reply_type;
	call->done = done;
	call->arg = arg;
	if (!child_up(CHILD_PROXY)) {
		if (fd != -1)
			close(fd);
		proxy_fail(call, "dockerd-proxy is restarting");
		return call->id;
	}
	if (peer_send(&env->proxy_peer, type, call->id, fd, w) == -1) {
		free(call);
		return 0;
	}
	TAILQ_INSERT_TAIL(&env->calls, call, entry);
	return call->id;
}

/* Without a proxy there is nothing to cancel: its calls are failing. */
int
proxy_send(uint32_t type, uint32_t peerid, struct msgw *w)
{
	if (!child_up(CHILD_PROXY))
		return 0;
	return peer_send(&env->proxy_peer, type, peerid, -1, w);
}

/*
 * The proxy is gone: every call it had fails with 502, the records stay
 * as they are (nothing is reconciled, nothing destroyed), and the new
 * proxy starts with no call pending.
 */
void
proxy_calls_fail(void)
{
	struct proxy_call	*call;

	while ((call = TAILQ_FIRST(&env->calls)) != NULL) {
		TAILQ_REMOVE(&env->calls, call, entry);
		proxy_fail(call, "dockerd-proxy restarted");
	}
}

uint32_t
proxy_destroy(const char *id, proxy_done_cb done, void *arg)
{
	struct msgw	 w;

	msgw_init(&w);
	msg_put_string(&w, id);
	return proxy_call(MSG_DOCKER_DESTROY, -1, &w, 0, MSG_DOCKER_DONE, done,
	    arg);
}

/*
 * The reply to a best-effort destroy, or NULL if it could not be asked
 * for: a failure is logged, and the next start removes what is left.
 */
void
proxy_destroy_logged(struct imsg *reply, const char *what, const char *id)
{
	uint32_t	 kind;
	char		*text;

	if (reply == NULL)
		log_warnx("cannot ask for the destruction of %s %s; the next "
		    "start removes it", what, id);
	else if (reply->hdr.type == MSG_ERROR) {
		text = proxy_error_text(reply, &kind);
		log_warnx("cannot destroy %s %s (%s); the next start removes "
		    "it", what, id, text);
		free(text);
	} else if (reply->len != 0)
		peer_bad_message(&env->proxy_peer, reply, "unexpected payload");
}

char *
error_text(struct peer *from, struct imsg *imsg, uint32_t *kindp)
{
	struct msgr	 r;
	uint32_t	 kind;
	char		*text;

	msgr_init(&r, imsg);
	kind = msgr_u32(&r);
	text = msgr_str(&r, MSG_MAX_STRING);
	if (msgr_end(&r) == -1 || kind < ERR_INVALID_REQUEST ||
	    kind > ERR_KIND_MAX || text == NULL)
		peer_bad_message(from, imsg, "malformed error");
	*kindp = kind;
	return text;
}

char *
proxy_error_text(struct imsg *imsg, uint32_t *kindp)
{
	return error_text(&env->proxy_peer, imsg, kindp);
}

void
error_imsg(struct imsg *imsg, struct msgw *w, uint32_t peerid,
    enum error_kind kind, const char *text)
{
	msgw_init(w);
	msgw_u32(w, kind);
	msgw_str(w, text);
	memset(imsg, 0, sizeof(*imsg));
	imsg->hdr.type = MSG_ERROR;
	imsg->hdr.peerid = peerid;
	imsg->hdr.len = (uint32_t)w->len;
	imsg->fd = -1;
	imsg->len = w->len;
	imsg->data = w->buf;
}

/*
 * A MSG_DOCKER_LIST_ITEM: str id, u8 container, u8 running (which needs a
 * container); fatal if malformed.  1 with the id copied when it is a
 * sandbox id, 0 (id "") for a label this server did not write.
 */
int
docker_list_item(struct imsg *reply, char *id, size_t len, int *container,
    int *running)
{
	struct msgr	 r;
	char		*s;
	uint8_t		 c, run;
	int		 ours;

	msgr_init(&r, reply);
	s = msgr_str(&r, MSG_MAX_ID);
	c = msgr_u8(&r);
	run = msgr_u8(&r);
	if (msgr_end(&r) == -1 || s == NULL || c > 1 || run > 1 ||
	    (run && !c))
		peer_bad_message(&env->proxy_peer, reply, "malformed item");
	ours = id_is_sandbox(s) && strlen(s) < len;
	strlcpy(id, ours ? s : "", len);
	free(s);
	*container = c;
	*running = run;
	return ours;
}

/* Check an error reply's payload, then pass it on to apid unchanged. */
void
relay_error(struct imsg *imsg, uint32_t apid_id)
{
	uint32_t	 kind;
	char		*text;

	text = proxy_error_text(imsg, &kind);
	apid_error(apid_id, kind, "%s", text);
	free(text);
}

static struct proxy_call *
proxy_call_find(uint32_t id)
{
	struct proxy_call	*call;

	TAILQ_FOREACH(call, &env->calls, entry) {
		if (call->id == id)
			return call;
	}
	return NULL;
}

void
dispatch_proxy(struct peer *p, struct imsg *imsg)
{
	struct proxy_call	*call;
	uint32_t		 type = imsg->hdr.type;

	if (type == MSG_READY) {
		child_ready(CHILD_PROXY, imsg);
		return;
	}
	if (type == MSG_DOCKER_EVENT || type == MSG_DOCKER_EVENTS_UP ||
	    type == MSG_DOCKER_EVENTS_DOWN) {
		if (imsg->fd != -1)
			peer_bad_message(p, imsg, "unexpected descriptor");
		events_dispatch(p, imsg);
		return;
	}
	if (imsg->fd != -1)
		peer_bad_message(p, imsg, "unexpected descriptor");
	if ((call = proxy_call_find(imsg->hdr.peerid)) == NULL)
		peer_bad_message(p, imsg, "reply to no pending call");
	if (call->more_type != 0 && type == call->more_type) {
		call->done(imsg, call->arg);
		return;
	}
	if (type != call->reply_type && type != MSG_ERROR)
		peer_bad_message(p, imsg, "wrong reply type");
	TAILQ_REMOVE(&env->calls, call, entry);
	call->done(imsg, call->arg);
	free(call);
}
