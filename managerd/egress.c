/*
 * A policy sandbox's way out (docs/architecture.md "Egress policy"):
 * its container has no network, and its only route is a listener on its
 * own 127.0.0.1:EGRESS_PORT that the egress proxy serves.  Attaching a
 * sandbox is four calls in a row:
 *
 *	dockerd-proxy	DOCKER_STATE	-> the container's pid and full id
 *	netns-helper	NETNS_LISTEN	-> a socket listening in its netns
 *	egress-proxy	EGRESS_POLICY	-> the record's policy, applied
 *	egress-proxy	EGRESS_LISTEN	-> the socket, served
 *
 * A sandbox is attached again whenever its listener may be gone: the
 * egress proxy restarted (its sockets died with it), Docker started its
 * container again (a new network namespace), or managerd started again.
 * Until then the sandbox has no way out at all: this fails closed.
 */
#include <arpa/inet.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit.h"
#include "log.h"
#include "managerd.h"

struct attach_op {
	struct sandbox		*sb;		/* held */
	egress_done_cb		 done;
	void			*arg;
	uint32_t		 pid;
	int			 fd;		/* the listener, until sent */
};

static void	forget_id(const char *);

/*
 * The attach is over.  A sandbox deleted meanwhile may have left state
 * in the proxy (its FORGET went before the calls it had queued): forget
 * it again.  A start that came meanwhile attaches it once more.
 */
static void
attach_end(struct attach_op *op, enum error_kind kind, const char *why)
{
	struct sandbox	*sb = op->sb;

	sb->egress_attaching = 0;
	if (op->fd != -1)
		close(op->fd);
	if (sb->gone)
		egress_forget(sb);
	op->done(kind, why, op->arg);
	if (sb->egress_again && !sb->gone) {
		sb->egress_again = 0;
		egress_reattach(sb);
	}
	sandbox_release(sb);
	free(op);
}

/*
 * A MSG_ERROR from peer p ends the attach with its text.  The kind a
 * helper or Docker gave says what went wrong for them ("pid gone" is
 * their 404, "port in use" their 409): to the client the sandbox exists
 * and its network could not be made, a backend's failure.  What says
 * "try again" (503, 504) and our own 500 stay.  ERR_CONFLICT is kept for
 * a container that is not running (attach_state).
 */
static void
attach_error(struct attach_op *op, struct peer *p, struct imsg *reply,
    const char *what)
{
	uint32_t	 kind;
	char		*text, why[MSG_MAX_STRING];

	text = error_text(p, reply, &kind);
	log_warnx("sandbox %s: %s: %s", op->sb->rec.id, what, text);
	snprintf(why, sizeof(why), "%s: %s", what, text);
	free(text);
	if (kind != ERR_UNAVAILABLE && kind != ERR_TIMEOUT &&
	    kind != ERR_INTERNAL)
		kind = ERR_BACKEND;
	attach_end(op, (enum error_kind)kind, why);
}

static int
attach_gone(struct attach_op *op)
{
	if (!op->sb->gone)
		return 0;
	attach_end(op, ERR_NOT_FOUND, "the sandbox was deleted");
	return 1;
}

static void
attach_listened(struct imsg *reply, void *arg)
{
	struct attach_op	*op = arg;

	if (reply->hdr.type == MSG_ERROR) {
		attach_error(op, env->child[CHILD_EGRESS].peer, reply,
		    "cannot hand its listener to the egress proxy");
		return;
	}
	if (reply->len != 0)
		peer_bad_message(env->child[CHILD_EGRESS].peer, reply,
		    "unexpected payload");
	op->sb->egress_attached = 1;
	op->sb->egress_pid = op->pid;
	log_debug("sandbox %s: its egress listener is served",
	    op->sb->rec.id);
	attach_end(op, 0, NULL);
}

static void
attach_applied(struct imsg *reply, void *arg)
{
	struct attach_op	*op = arg;
	struct msgw		 w;
	int			 fd;

	if (reply->hdr.type == MSG_ERROR) {
		attach_error(op, env->child[CHILD_EGRESS].peer, reply,
		    "cannot apply its policy in the egress proxy");
		return;
	}
	if (reply->len != 0)
		peer_bad_message(env->child[CHILD_EGRESS].peer, reply,
		    "unexpected payload");
	if (attach_gone(op))
		return;
	msgw_init(&w);
	msgw_str(&w, op->sb->rec.id);
	fd = op->fd;
	op->fd = -1;
	if (child_call(CHILD_EGRESS, MSG_EGRESS_LISTEN, fd, &w, 0,
	    MSG_EGRESS_DONE, attach_listened, op) == 0)
		attach_end(op, ERR_INTERNAL, "cannot reach the egress proxy");
}

/* The policy the record holds now, to the proxy (a PUT's too). */
uint32_t
egress_send_policy(struct sandbox *sb, proxy_done_cb done, void *arg)
{
	struct msgw	 w;

	sb->egress_known = 1;
	msgw_init(&w);
	msgw_str(&w, sb->rec.id);
	msg_put_egress_policy(&w, &sb->rec.egress);
	if (w.overflow)
		fatalx("%s: a recorded policy does not fit", __func__);
	return child_call(CHILD_EGRESS, MSG_EGRESS_POLICY, -1, &w, 0,
	    MSG_EGRESS_DONE, done, arg);
}

static void
attach_socket(struct imsg *reply, void *arg)
{
	struct attach_op	*op = arg;

	if (reply->hdr.type == MSG_ERROR) {
		attach_error(op, env->child[CHILD_NETNS].peer, reply,
		    "cannot make its egress listener");
		return;
	}
	if (reply->len != 0)
		peer_bad_message(env->child[CHILD_NETNS].peer, reply,
		    "unexpected payload");
	if ((op->fd = imsg_take_fd(reply)) == -1) {
		attach_end(op, ERR_UNAVAILABLE, "managerd is out of "
		    "descriptors; try again");
		return;
	}
	if (attach_gone(op))
		return;
	if (egress_send_policy(op->sb, attach_applied, op) == 0)
		attach_end(op, ERR_INTERNAL, "cannot reach the egress proxy");
}

static void
attach_state(struct imsg *reply, void *arg)
{
	struct attach_op	*op = arg;
	struct docker_state	 st;
	struct msgw		 w;

	if (reply->hdr.type == MSG_ERROR) {
		attach_error(op, &env->proxy_peer, reply,
		    "cannot inspect its container");
		return;
	}
	docker_state_parse(reply, &st);
	if (attach_gone(op))
		return;
	if (!st.running) {
		attach_end(op, ERR_CONFLICT, "its container is not running");
		return;
	}
	if (op->sb->egress_attached && op->sb->egress_pid == st.pid) {
		attach_end(op, 0, NULL);	/* that container's is served */
		return;
	}
	op->pid = st.pid;
	op->sb->egress_attached = 0;
	msgw_init(&w);
	msgw_u32(&w, st.pid);
	msgw_str(&w, st.container);
	msgw_u32(&w, EGRESS_PORT);
	if (child_call(CHILD_NETNS, MSG_NETNS_LISTEN, -1, &w, 0,
	    MSG_NETNS_SOCKET, attach_socket, op) == 0)
		attach_end(op, ERR_INTERNAL, "cannot reach the netns helper");
}

void
egress_attach(struct sandbox *sb, egress_done_cb done, void *arg)
{
	struct attach_op	*op;
	struct msgw		 w;

	if ((op = calloc(1, sizeof(*op))) == NULL) {
		done(ERR_INTERNAL, "out of memory", arg);
		return;
	}
	op->sb = sb;
	op->done = done;
	op->arg = arg;
	op->fd = -1;
	sandbox_hold(sb);
	sb->egress_attaching = 1;
	msgw_init(&w);
	msg_put_string(&w, sb->rec.id);
	if (proxy_call(MSG_DOCKER_STATE, -1, &w, 0, MSG_DOCKER_STATE_RESULT,
	    attach_state, op) == 0)
		attach_end(op, ERR_INTERNAL, "cannot reach dockerd-proxy");
}

/* --- attaching again ---------------------------------------------------- */

static void
reattached(enum error_kind kind, const char *why, void *arg)
{
	char	*id = arg;

	if (kind != 0)
		log_warnx("sandbox %s has no way out until it is attached "
		    "again: %s", id, why);
	free(id);
}

/* A policy sandbox's listener may be gone: make it again if so. */
void
egress_reattach(struct sandbox *sb)
{
	char	*id;

	if (sb->rec.egress.mode == EGRESS_NONE || sb->gone ||
	    !sandbox_egress_possible())
		return;
	/* Its state may predate this start: once more when it ends. */
	if (sb->egress_attaching) {
		sb->egress_again = 1;
		return;
	}
	if ((id = strdup(sb->rec.id)) == NULL) {
		log_warnx("sandbox %s: out of memory; no way out", sb->rec.id);
		return;
	}
	egress_attach(sb, reattached, id);
}

/* Every policy sandbox in the table (start-up, a new egress proxy). */
void
egress_reattach_all(void)
{
	struct sandbox	*sb;

	for (sb = sandbox_first(); sb != NULL; sb = sandbox_next(sb))
		egress_reattach(sb);
}

/*
 * The proxy drops what it has of id (an unknown one is no lie).  Not
 * sent while it is down: a new proxy knows nothing.  One that cannot be
 * queued is logged: the proxy's next start forgets everything anyway.
 */
static void
forget_id(const char *id)
{
	struct msgw	 w;

	if (!child_up(CHILD_EGRESS))
		return;
	msgw_init(&w);
	msgw_str(&w, id);
	if (peer_send(env->child[CHILD_EGRESS].peer, MSG_EGRESS_FORGET, 0, -1,
	    &w) == -1)
		log_warnx("sandbox %s: cannot tell the egress proxy to forget "
		    "it", id);
}

/*
 * Its listener, policy and log go: the sandbox is gone.  Only for one
 * the proxy was told of (egress_send_policy), whatever its mode now.
 */
void
egress_forget(struct sandbox *sb)
{
	sb->egress_attached = 0;
	if (sb->egress_known)
		forget_id(sb->rec.id);
}

/* --- the audit log ----------------------------------------------------- */

struct egress_audit_msg {
	char			*id, *host, *address, *reason;
	struct audit_egress	 e;
};

static void
egress_audit_free(struct egress_audit_msg *m)
{
	free(m->id);
	free(m->host);
	free(m->address);
	free(m->reason);
}

/* EGRESS_AUDIT (msg.h), checked whole: a lie is fatal. */
static void
egress_audit_get(struct peer *p, struct imsg *imsg,
    struct egress_audit_msg *m)
{
	struct msgr	 r;
	uint8_t		 allowed;

	memset(m, 0, sizeof(*m));
	msgr_init(&r, imsg);
	m->id = msgr_str(&r, SANDBOX_ID_LEN);
	m->host = msgr_str(&r, EGRESS_NAME_MAX * 4);
	m->e.port = msgr_u32(&r);
	m->address = msgr_str(&r, INET6_ADDRSTRLEN);
	allowed = msgr_u8(&r);
	m->reason = msgr_str(&r, EGRESS_WHY_MAX);
	m->e.bytes_sent = msgr_u64(&r);
	m->e.bytes_received = msgr_u64(&r);
	if (msgr_end(&r) == -1 || imsg->hdr.peerid != 0 || m->id == NULL ||
	    !id_is_sandbox(m->id) || m->host == NULL || m->address == NULL ||
	    m->reason == NULL || allowed > 1 || m->e.port > 65535) {
		egress_audit_free(m);
		peer_bad_message(p, imsg, "malformed audit record");
	}
	m->e.allowed = allowed;
	m->e.host = m->host;
	m->e.address = m->address;
	m->e.reason = m->reason;
}

/* One line per connection, the sandbox's tenant's, when the log is on. */
void
egress_audit(struct peer *p, struct imsg *imsg)
{
	struct egress_audit_msg	 m;
	struct audit_record	 ar;
	struct sandbox		*sb;

	egress_audit_get(p, imsg, &m);
	memset(&ar, 0, sizeof(ar));
	ar.time = clock_wall();
	ar.route = "EGRESS";
	ar.sandbox_id = m.id;
	if ((sb = sandbox_find(m.id)) != NULL && sb->rec.tenant[0] != '\0')
		ar.tenant = sb->rec.tenant;
	ar.status = m.e.allowed ? 200 : 403;
	ar.error = m.e.allowed ? NULL : "egress_refused";
	ar.egress = &m.e;
	audit_write(&ar);
	egress_audit_free(&m);
}

/* --- the two children --------------------------------------------------- */

void
netns_ready(int again)
{
	child_calls_ready(CHILD_NETNS);
}

void
netns_lost(void)
{
	child_calls_lost(CHILD_NETNS);
}

void
egress_ready(int again)
{
	child_calls_ready(CHILD_EGRESS);
	if (again)
		egress_reattach_all();
}

/* Its listeners died with it: every sandbox is to be attached again. */
void
egress_lost(void)
{
	struct sandbox	*sb;

	for (sb = sandbox_first(); sb != NULL; sb = sandbox_next(sb))
		sb->egress_attached = 0;
	child_calls_lost(CHILD_EGRESS);
}

void
dispatch_netns(struct peer *p, struct imsg *imsg)
{
	uint32_t	 type = imsg->hdr.type;

	if ((imsg->fd != -1 || imsg->fd_lost) && type != MSG_NETNS_SOCKET)
		peer_bad_message(p, imsg, "unexpected descriptor");
	switch (type) {
	case MSG_READY:
		child_ready(CHILD_NETNS, imsg);
		break;
	case MSG_NETNS_SOCKET:
		if (imsg->fd == -1 && !imsg->fd_lost)
			peer_bad_message(p, imsg, "no socket");
		/* FALLTHROUGH */
	case MSG_ERROR:
		child_calls_reply(CHILD_NETNS, p, imsg);
		break;
	default:
		peer_bad_message(p, imsg, "not a message the helper sends");
	}
}

void
dispatch_egress(struct peer *p, struct imsg *imsg)
{
	if (imsg->fd != -1 || imsg->fd_lost)
		peer_bad_message(p, imsg, "unexpected descriptor");
	switch (imsg->hdr.type) {
	case MSG_READY:
		child_ready(CHILD_EGRESS, imsg);
		break;
	case MSG_EGRESS_AUDIT:
		egress_audit(p, imsg);
		break;
	case MSG_EGRESS_DONE:
	case MSG_EGRESS_LOG_TEXT:
	case MSG_EGRESS_LOG_END:
	case MSG_ERROR:
		child_calls_reply(CHILD_EGRESS, p, imsg);
		break;
	default:
		peer_bad_message(p, imsg, "not a message the egress proxy "
		    "sends");
	}
}
