/*
 * The short execs that reach a command by the PID its wrapper printed:
 * a signal to its process group (MSG_DOCKER_PROCESS_SIGNAL), and the
 * kill that stops and SIGKILLs the group and every descendant (an exec's
 * timeout or cancel, a process's tree).  Each is a second exec in the
 * sandbox's container, as the sandbox user, run attached so that its end
 * is known, then its exit status asked; it prints nothing unless
 * something went wrong, and what it prints is only ever a log line.
 *
 * The PID comes from the wrapper's first line, or from managerd, which
 * took it from there.  That line is not beyond the sandbox's reach: on a
 * tty the terminal's slave is the sandbox user's, and another process of
 * the sandbox may write a line of its own there before the wrapper does
 * (or into a wrapper's stdout through /proc).  So each script first
 * checks that the PID leads a session, as every wrapper does, and
 * signals nothing if a live process of that PID does not: it exits
 * HARDENING_SCRIPT_REFUSED, and the signal is answered ERR_CONFLICT.  A
 * forged line can then name only a whole session of the sandbox's own,
 * never a group inside one; and whatever it names is in the container.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "docker_http.h"
#include "log.h"
#include "proxy.h"
#include "xmalloc.h"


struct helper {
	struct proxy	*px;
	char		 id[SANDBOX_ID_LEN + 1];
	char		 eid[DOCKER_ID_LEN + 1];
	char		 said[1024];	/* its output, as one line */
	helper_cb	 cb;
	void		*arg;
};

static void
helper_end(struct helper *h, enum error_kind kind, const char *text)
{
	h->cb(h->arg, kind, text);
	free(h);
}

struct said {
	char		*text;
	size_t		 len, n;
};

static void
said_emit(void *arg, int stream, const unsigned char *data, size_t len)
{
	struct said	*s = arg;
	size_t		 i;

	for (i = 0; i < len && s->n + 1 < s->len; i++)
		if (data[i] >= ' ' && data[i] < 0x7f)
			s->text[s->n++] = (char)data[i];
}

/* What its frames hold, stdout and stderr, as one printable line. */
static void
helper_said(const struct docker_response *resp, char *text, size_t len)
{
	struct frame_parser	*fp;
	struct said		 s = { text, len, 0 };

	fp = xcalloc(1, sizeof(*fp));
	frame_parser_init(fp, 0);
	if (resp->body != NULL &&
	    frame_parser_feed(fp, resp->body, resp->body_len, said_emit,
	    &s) == 0)
		(void)frame_parser_finish(fp, said_emit, &s);
	free(fp);
	text[s.n] = '\0';
}

/* Its exit status: only a refusal is an error (-1: Docker did not say). */
static void
helper_exited(void *arg, int64_t exit_code, int running)
{
	struct helper	*h = arg;
	char		 text[1100];

	if (exit_code == HARDENING_SCRIPT_REFUSED) {
		snprintf(text, sizeof(text), "sandbox %s: %s", h->id,
		    h->said[0] != '\0' ? h->said : "not signalled");
		helper_end(h, ERR_CONFLICT, text);
		return;
	}
	helper_end(h, 0, h->said);
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
		helper_said(resp, h->said, sizeof(h->said));
		exec_wait(h->px, h->eid, helper_exited, h);
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
	/* Bounded: a sandbox that stops it must not hold it, nor us. */
	static const struct exec_attach_cbs	 cbs = { NULL, NULL,
						    helper_done, 0, 1 };
	struct helper				*h = arg;
	char					 buf[256];

	if (kind != 0) {
		helper_end(h, kind, text);
		return;
	}
	strlcpy(h->eid, eid, sizeof(h->eid));
	if (exec_attach(h->px, eid, 0, &cbs, h) == NULL) {
		snprintf(buf, sizeof(buf), "sandbox %s: cannot start a Docker "
		    "request: %s", h->id, strerror(errno));
		helper_end(h, docker_start_error_kind(errno), buf);
	}
}

/* Runs body (not taken) in the container cid; cb gets how it went. */
void
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
