/*
 * Run a command in a sandbox (API.md §5.2, §11.4) and pump its output
 * into the pipe managerd passed along: frames only, in Docker's 8-byte
 * format, stdout 1 and stderr 2.  When the pipe is full, reading from
 * Docker stops until it drains, so memory stays bounded whatever apid
 * does.
 *
 * The command runs under a wrapper that first prints its PID, then execs
 * the command, which keeps that PID as leader of its process group.  On
 * timeout, cancel, or a reader that went away, a second exec stops and
 * kills the group and every descendant of that PID, once it checked that
 * the PID leads a session as the wrapper does (docker_signal.c: the
 * sandbox's other processes may reach the wrapper's stdout too).
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "docker_http.h"
#include "log.h"
#include "proxy.h"
#include "xmalloc.h"

/* How long Docker may keep the stream open after a kill was sent. */
#define KILL_GRACE_SECONDS	10
/* A timer beyond this (about three years) is the same as none. */
#define TIMEOUT_MAX_SECONDS	1e8

enum exec_state {
	EX_INSPECT,
	EX_CREATE,
	EX_STREAM,
	EX_DRAIN,
	EX_POLL
};

struct exec {
	TAILQ_ENTRY(exec)	 entry;
	struct proxy		*px;
	uint32_t		 peerid;
	struct docker_exec	 spec;
	enum exec_state		 state;
	char			 cid[DOCKER_ID_LEN + 1];
	char			 eid[DOCKER_ID_LEN + 1];
	int			 fd;		/* the pipe; -1 once closed */
	struct event		*ev_pipe;
	struct evbuffer		*out;		/* frames not yet written */
	struct docker_request	*stream;
	int			 paused;
	struct event		*ev_timeout;
	struct event		*ev_grace;
	int			 started;	/* EXEC_STARTED sent */
	int			 timed_out;
	int			 kill_wanted;
	int			 kill_sent;
	int			 discard;	/* nobody reads the output */
	int			 cancelled;
	struct frame_parser	 fp;
};

static void	exec_flush_and_continue(struct exec *);

/* --- the kill ------------------------------------------------------------- */

static void
kill_start(struct exec *e)
{
	e->kill_sent = 1;
	sandbox_kill(e->px, e->spec.id, e->cid, e->fp.pid);
}

static void
exec_request_kill(struct exec *e, const char *why)
{
	struct timeval	 tv = { KILL_GRACE_SECONDS, 0 };

	if (!e->kill_wanted)
		log_debug("exec %u in sandbox %s: %s", e->peerid, e->spec.id,
		    why);
	e->kill_wanted = 1;
	if (!e->kill_sent && e->fp.pid > 0)
		kill_start(e);
	if (e->stream != NULL && !evtimer_pending(e->ev_grace, NULL))
		evtimer_add(e->ev_grace, &tv);
}

/* --- the end -------------------------------------------------------------- */

static void
exec_pipe_close(struct exec *e)
{
	if (e->fd == -1)
		return;
	event_del(e->ev_pipe);
	close(e->fd);
	e->fd = -1;
}

static void
exec_free(struct exec *e)
{
	TAILQ_REMOVE(&e->px->execs, e, entry);
	if (e->stream != NULL)
		docker_request_cancel(e->stream);
	exec_pipe_close(e);
	event_free(e->ev_pipe);
	event_free(e->ev_timeout);
	event_free(e->ev_grace);
	evbuffer_free(e->out);
	docker_exec_free(&e->spec);
	free(e);
}

/* Before EXEC_STARTED: the one reply is an error. */
static void
exec_fail(struct exec *e, enum error_kind kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
exec_fail(struct exec *e, enum error_kind kind, const char *fmt, ...)
{
	char	 text[2048];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	peer_send_error(&e->px->parent, e->peerid, kind, "%s", text);
	exec_free(e);
}

static void
exec_fail_result(struct exec *e, const struct docker_result *res)
{
	enum error_kind	 kind;
	char		 what[64], text[2048];

	snprintf(what, sizeof(what), "sandbox %s", e->spec.id);
	kind = docker_result_error(res, what, text, sizeof(text));
	exec_fail(e, kind, "%s", text);
}

static void
exec_finish(struct exec *e, int64_t exit_code)
{
	struct exec_exit	 x;
	struct msgw		 w;

	x.exit_code = exit_code;
	x.timed_out = e->timed_out;
	msgw_init(&w);
	msg_put_exec_exit(&w, &x);
	peer_send(&e->px->parent, MSG_DOCKER_EXEC_EXIT, e->peerid, -1, &w);
	log_debug("exec %u in sandbox %s: exit %lld%s", e->peerid, e->spec.id,
	    (long long)exit_code, e->timed_out ? " (timed out)" : "");
	exec_free(e);
}

static void
exec_exited(void *arg, int64_t exit_code, int running)
{
	exec_finish(arg, exit_code);
}

/* Everything was written (or dropped): close the pipe, ask the exit. */
static void
exec_drained(struct exec *e)
{
	exec_pipe_close(e);
	evtimer_del(e->ev_timeout);
	evtimer_del(e->ev_grace);
	e->state = EX_POLL;
	exec_wait(e->px, e->eid, exec_exited, e);
}

/* --- the output ----------------------------------------------------------- */

static void
exec_emit(void *arg, int stream, const unsigned char *data, size_t len)
{
	struct exec	*e = arg;
	unsigned char	 head[FRAME_HEADER_LEN];

	if (e->discard)
		return;
	frame_header(head, stream, (uint32_t)len);
	if (evbuffer_add(e->out, head, sizeof(head)) == -1 ||
	    evbuffer_add(e->out, data, len) == -1)
		fatalx("%s: out of memory", __func__);
}

/* Nobody will read what comes: drop it, close the pipe, kill. */
static void
exec_discard(struct exec *e, const char *why)
{
	e->discard = 1;
	evbuffer_drain(e->out, evbuffer_get_length(e->out));
	exec_pipe_close(e);
	if (e->paused && e->stream != NULL) {
		e->paused = 0;
		docker_request_resume(e->stream);
	}
	/* Once the stream ended the command is gone: nothing to kill. */
	if (e->state == EX_STREAM)
		exec_request_kill(e, why);
}

/* 1 when all output is out (or dropped); 0 while the pipe is full. */
static int
exec_flush(struct exec *e)
{
	int	 n;

	while (!e->discard && evbuffer_get_length(e->out) > 0) {
		n = evbuffer_write(e->out, e->fd);
		if (n > 0 || (n == -1 && errno == EINTR))
			continue;
		if (n == 0 || errno == EAGAIN || errno == EWOULDBLOCK) {
			event_add(e->ev_pipe, NULL);
			return 0;
		}
		if (errno != EPIPE)
			log_warn("exec %u: writing its output", e->peerid);
		exec_discard(e, "the output's reader went away");
	}
	return 1;
}

static void
exec_flush_and_continue(struct exec *e)
{
	if (!exec_flush(e))
		return;
	if (e->paused && e->stream != NULL) {
		e->paused = 0;
		docker_request_resume(e->stream);
	}
	if (e->state == EX_DRAIN)
		exec_drained(e);
}

static void
exec_pipe_writable(evutil_socket_t fd, short what, void *arg)
{
	exec_flush_and_continue(arg);
}

static void
exec_send_started(struct exec *e)
{
	if (e->started)
		return;
	e->started = 1;
	peer_send(&e->px->parent, MSG_DOCKER_EXEC_STARTED, e->peerid, -1,
	    NULL);
}

static int
exec_body(struct docker_request *req, const unsigned char *data, size_t len,
    void *arg)
{
	struct exec	*e = arg;

	exec_send_started(e);
	if (frame_parser_feed(&e->fp, data, len, exec_emit, e) == -1) {
		log_warnx("exec %u in sandbox %s: malformed output stream",
		    e->peerid, e->spec.id);
		exec_request_kill(e, "malformed stream");
		return -1;
	}
	if (e->kill_wanted && !e->kill_sent && e->fp.pid > 0)
		kill_start(e);
	if (!exec_flush(e) && !e->paused) {
		e->paused = 1;
		docker_request_pause(req);
	}
	return 0;
}

/* Docker closed the stream (or we gave up on it). */
static void
exec_stream_ended(struct exec *e)
{
	e->stream = NULL;
	e->paused = 0;
	if (frame_parser_finish(&e->fp, exec_emit, e) == -1)
		log_debug("exec %u: the stream ended inside a frame",
		    e->peerid);
	e->state = EX_DRAIN;
	exec_flush_and_continue(e);
}

static void
exec_stream_done(struct docker_request *req, enum docker_http_error error,
    const struct docker_response *resp, void *arg)
{
	struct exec		*e = arg;
	struct docker_result	 res;

	e->stream = NULL;
	if (!e->started) {
		if (error != DOCKER_HTTP_OK || (resp->status != 101 &&
		    resp->status != 200)) {
			res.error = error;
			res.errnum = docker_request_errno(req);
			res.status = resp->status;
			res.resp = resp;
			if (error == DOCKER_HTTP_OK && resp->status == 409)
				exec_fail(e, ERR_INVALID_REQUEST,
				    "sandbox %s is not running", e->spec.id);
			else
				exec_fail_result(e, &res);
			return;
		}
		exec_send_started(e);
	}
	if (error != DOCKER_HTTP_OK && error != DOCKER_HTTP_CANCELLED)
		log_warnx("exec %u in sandbox %s: %s", e->peerid, e->spec.id,
		    docker_http_strerror(error));
	exec_stream_ended(e);
}

static void
exec_timeout_fire(evutil_socket_t fd, short what, void *arg)
{
	struct exec	*e = arg;

	/* The command ended; only its output is still on its way. */
	if (e->state != EX_STREAM)
		return;
	e->timed_out = 1;
	log_info("exec %u in sandbox %s timed out", e->peerid, e->spec.id);
	exec_request_kill(e, "timed out");
}

/*
 * Killed, yet Docker keeps the stream open (a descendant escaped into a
 * session of its own and holds the output): stop waiting for it.
 */
static void
exec_grace_fire(evutil_socket_t fd, short what, void *arg)
{
	struct exec	*e = arg;
	struct timeval	 tv = { KILL_GRACE_SECONDS, 0 };

	if (e->stream == NULL)
		return;
	/* Still being read, only slowly: that is the reader's business. */
	if (e->paused && !e->discard) {
		evtimer_add(e->ev_grace, &tv);
		return;
	}
	log_warnx("exec %u in sandbox %s: output still open %d s after the "
	    "kill; giving up on it", e->peerid, e->spec.id,
	    KILL_GRACE_SECONDS);
	docker_request_cancel(e->stream);
	e->discard = 1;
	evbuffer_drain(e->out, evbuffer_get_length(e->out));
	exec_stream_ended(e);
}

/* --- the start ------------------------------------------------------------ */

static void
exec_start_stream(struct exec *e)
{
	static const struct exec_attach_cbs	 cbs = { exec_body, NULL,
						    exec_stream_done, 0, 0 };
	struct timeval				 tv;
	double					 t;

	e->stream = exec_attach(e->px, e->eid, 0, &cbs, e);
	if (e->stream == NULL) {
		exec_fail(e, docker_start_error_kind(errno), "sandbox %s: "
		    "cannot start a Docker request: %s", e->spec.id,
		    strerror(errno));
		return;
	}
	e->state = EX_STREAM;
	t = e->spec.timeout_seconds;
	if (t > TIMEOUT_MAX_SECONDS)
		t = TIMEOUT_MAX_SECONDS;
	tv.tv_sec = (time_t)t;
	tv.tv_usec = (suseconds_t)((t - floor(t)) * 1e6);
	evtimer_add(e->ev_timeout, &tv);
}

static void
exec_created(void *arg, const char *eid, enum error_kind kind,
    const char *text)
{
	struct exec	*e = arg;

	if (kind != 0) {
		exec_fail(e, kind, "%s", text);
		return;
	}
	strlcpy(e->eid, eid, sizeof(e->eid));
	if (e->cancelled) {
		exec_fail(e, ERR_INVALID_REQUEST, "exec in sandbox %s was "
		    "cancelled", e->spec.id);
		return;
	}
	exec_start_stream(e);
}

static void
exec_found(void *arg, const char *cid, int running, enum error_kind kind,
    const char *text)
{
	struct exec	*e = arg;
	json_object	*body;

	if (kind != 0) {
		exec_fail(e, kind, "%s", text);
		return;
	}
	if (e->cancelled) {
		exec_fail(e, ERR_INVALID_REQUEST, "exec in sandbox %s was "
		    "cancelled", e->spec.id);
		return;
	}
	strlcpy(e->cid, cid, sizeof(e->cid));
	e->state = EX_CREATE;
	body = hardening_exec_body(&e->px->settings.policy, &e->spec);
	exec_create(e->px, e->spec.id, e->cid, body, exec_created, e);
	json_object_put(body);
}

void
docker_exec(struct proxy *px, uint32_t peerid, struct docker_exec *de, int fd)
{
	struct exec	*e;
	struct stat	 st;
	int		 flags;

	e = xcalloc(1, sizeof(*e));
	e->px = px;
	e->peerid = peerid;
	e->spec = *de;
	memset(de, 0, sizeof(*de));
	e->fd = fd;
	frame_parser_init(&e->fp, 1);
	if ((e->out = evbuffer_new()) == NULL ||
	    (e->ev_pipe = event_new(px->base, fd, EV_WRITE, exec_pipe_writable,
	    e)) == NULL ||
	    (e->ev_timeout = evtimer_new(px->base, exec_timeout_fire, e)) ==
	    NULL ||
	    (e->ev_grace = evtimer_new(px->base, exec_grace_fire, e)) == NULL)
		fatalx("%s: out of memory", __func__);
	TAILQ_INSERT_TAIL(&px->execs, e, entry);

	if (fstat(fd, &st) == -1 || !S_ISFIFO(st.st_mode) ||
	    (flags = fcntl(fd, F_GETFL)) == -1 ||
	    fcntl(fd, F_SETFL, flags | O_NONBLOCK) == -1) {
		exec_fail(e, ERR_INTERNAL, "exec output is not a pipe");
		return;
	}
	exec_container(px, e->spec.id, "exec in", 1, exec_found, e);
}

void
docker_exec_cancel(struct proxy *px, uint32_t peerid)
{
	struct exec	*e;

	TAILQ_FOREACH(e, &px->execs, entry)
		if (e->peerid == peerid)
			break;
	if (e == NULL) {
		/* It ended while the cancel was on its way. */
		log_debug("cancel of exec %u: no such exec", peerid);
		return;
	}
	e->cancelled = 1;
	exec_discard(e, "cancelled");
	if (e->state == EX_DRAIN)
		exec_drained(e);
}
