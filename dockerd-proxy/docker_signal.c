/*
 * The short execs that reach a command by the PID its wrapper printed:
 * a signal to its process group (MSG_DOCKER_PROCESS_SIGNAL), and the
 * kill that stops and SIGKILLs the group and every descendant (an exec's
 * timeout or cancel, a process's tree).  Each is a second exec in the
 * sandbox's container, as the sandbox user, run attached so that its end
 * is known; it prints nothing unless something went wrong, and what it
 * prints is only ever a log line.  The PID comes from the wrapper's first
 * line or from managerd, which took it from there: never from anything
 * the sandbox can write later.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "docker_http.h"
#include "log.h"
#include "proxy.h"
#include "xmalloc.h"

/* What it ended with: kind 0 and what it printed, or an error. */
typedef void	(*helper_cb)(void *arg, enum error_kind, const char *text);

struct helper {
	struct proxy	*px;
	char		 id[SANDBOX_ID_LEN + 1];
	helper_cb	 cb;
	void		*arg;
};

static void
helper_end(struct helper *h, enum error_kind kind, const char *text)
{
	h->cb(h->arg, kind, text);
	free(h);
}

/* Its output, frames and all, as one printable line. */
static void
helper_said(const struct docker_response *resp, char *text, size_t len)
{
	size_t	 i, n = 0;

	for (i = 0; resp->body != NULL && i < resp->body_len && n + 1 < len;
	    i++)
		if (resp->body[i] >= ' ' && resp->body[i] < 0x7f)
			text[n++] = (char)resp->body[i];
	text[n] = '\0';
}

static void
helper_done(struct docker_request *req, enum docker_http_error error,
    const struct docker_response *resp, void *arg)
{
	struct helper		*h = arg;
	struct docker_result	 res;
	char			 what[64], text[1024];
	enum error_kind		 kind;

	if (error == DOCKER_HTTP_OK && (resp->status == 101 ||
	    resp->status == 200)) {
		helper_said(resp, text, sizeof(text));
		helper_end(h, 0, text);
		return;
	}
	res.error = error;
	res.errnum = docker_request_errno(req);
	res.status = resp->status;
	res.resp = resp;
	snprintf(what, sizeof(what), "sandbox %s", h->id);
	if (error == DOCKER_HTTP_OK && resp->status == 409) {
		snprintf(text, sizeof(text), "%s is not running", what);
		kind = ERR_INVALID_REQUEST;
	} else
		kind = docker_result_error(&res, what, text, sizeof(text));
	helper_end(h, kind, text);
}

static void
helper_created(void *arg, const char *eid, enum error_kind kind,
    const char *text)
{
	static const struct exec_attach_cbs	 cbs = { NULL, NULL,
						    helper_done, 0 };
	struct helper				*h = arg;
	char					 buf[256];

	if (kind != 0) {
		helper_end(h, kind, text);
		return;
	}
	if (exec_attach(h->px, eid, 0, &cbs, h) == NULL) {
		snprintf(buf, sizeof(buf), "sandbox %s: cannot start a Docker "
		    "request: %s", h->id, strerror(errno));
		helper_end(h, docker_start_error_kind(errno), buf);
	}
}

/* Runs body (not taken) in the container cid; cb gets how it went. */
static void
helper_run(struct proxy *px, const char *id, const char *cid,
    json_object *body, helper_cb cb, void *arg)
{
	struct helper	*h;

	h = xcalloc(1, sizeof(*h));
	h->px = px;
	strlcpy(h->id, id, sizeof(h->id));
	h->cb = cb;
	h->arg = arg;
	exec_create(px, id, cid, body, helper_created, h);
}

/* --- the kill ------------------------------------------------------------- */

struct kill_note {
	char		 id[SANDBOX_ID_LEN + 1];
};

static void
kill_done(void *arg, enum error_kind kind, const char *text)
{
	struct kill_note	*k = arg;

	if (kind != 0)
		log_warnx("the kill in sandbox %s failed: %s", k->id, text);
	else if (text[0] != '\0')
		log_warnx("the kill in sandbox %s said: %s", k->id, text);
	else
		log_debug("killed the command in sandbox %s", k->id);
	free(k);
}

/* Independent of the command's exec: either may end first. */
void
sandbox_kill(struct proxy *px, const char *id, const char *cid,
    long long pid)
{
	struct kill_note	*k;
	json_object		*body;

	k = xcalloc(1, sizeof(*k));
	strlcpy(k->id, id, sizeof(k->id));
	log_info("killing process group %lld in sandbox %s", pid, id);
	body = hardening_kill_body(&px->settings.policy, pid);
	helper_run(px, id, cid, body, kill_done, k);
	json_object_put(body);
}

/* --- MSG_DOCKER_PROCESS_SIGNAL -------------------------------------------- */

struct signal_req {
	struct proxy	*px;
	uint32_t	 peerid;
	char		 id[SANDBOX_ID_LEN + 1];
	long long	 pid;
	int		 signo;
	int		 tree;
};

/*
 * The exec ran: done.  Whether the group still existed is not ours to
 * judge (kill prints why not, which goes to the log): managerd knows
 * whether the process is still running from its stream.
 */
static void
signal_done(void *arg, enum error_kind kind, const char *text)
{
	struct signal_req	*r = arg;

	if (kind != 0)
		peer_send_error(&r->px->parent, r->peerid, kind, "%s", text);
	else {
		if (text[0] != '\0')
			log_info("signal to process group %lld in sandbox %s: "
			    "%s", r->pid, r->id, text);
		peer_send(&r->px->parent, MSG_DOCKER_DONE, r->peerid, -1,
		    NULL);
	}
	free(r);
}

static void
signal_found(void *arg, const char *cid, int running, enum error_kind kind,
    const char *text)
{
	struct signal_req	*r = arg;
	json_object		*body;

	if (kind != 0) {
		peer_send_error(&r->px->parent, r->peerid, kind, "%s", text);
		free(r);
		return;
	}
	if (r->tree) {
		log_info("killing process tree %lld in sandbox %s",
		    r->pid, r->id);
		body = hardening_kill_body(&r->px->settings.policy, r->pid);
	} else {
		log_debug("signal %s to process group %lld in sandbox %s",
		    process_signal_name(r->signo), r->pid,
		    r->id);
		body = hardening_signal_body(&r->px->settings.policy,
		    r->pid, r->signo);
	}
	helper_run(r->px, r->id, cid, body, signal_done, r);
	json_object_put(body);
}

void
docker_process_signal(struct proxy *px, uint32_t peerid,
    const struct docker_process_signal *s)
{
	struct signal_req	*r;

	r = xcalloc(1, sizeof(*r));
	r->px = px;
	r->peerid = peerid;
	strlcpy(r->id, s->id, sizeof(r->id));
	r->pid = s->pid;
	r->signo = (int)s->signo;
	r->tree = s->tree;
	exec_container(px, s->id, "signal a process in", 1, signal_found, r);
}
