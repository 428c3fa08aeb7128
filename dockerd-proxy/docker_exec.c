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
 * kills the group and every descendant of that PID.  Nothing the sandbox
 * can write decides what is killed.
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

#define INSPECT_MAX_BODY	(4 * 1024 * 1024)
#define EXEC_MAX_BODY		(64 * 1024)
/* How long Docker may keep the stream open after a kill was sent. */
#define KILL_GRACE_SECONDS	10
#define EXIT_POLLS		50
#define EXIT_POLL_USEC		50000
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
	struct event		*ev_poll;
	int			 polls;
	int			 started;	/* EXEC_STARTED sent */
	int			 timed_out;
	int			 kill_wanted;
	int			 kill_sent;
	int			 discard;	/* nobody reads the output */
	int			 cancelled;
	struct frame_parser	 fp;
};

struct exec_kill {
	struct proxy	*px;
	char		 sandbox[SANDBOX_ID_LEN + 1];
	char		 cid[DOCKER_ID_LEN + 1];
	char		 kid[DOCKER_ID_LEN + 1];
};

static void	exec_flush_and_continue(struct exec *);

/* --- the kill ------------------------------------------------------------- */

static void
kill_free(struct exec_kill *k)
{
	free(k);
}

static void
kill_done(struct docker_request *req, enum docker_http_error error,
    const struct docker_response *resp, void *arg)
{
	struct exec_kill	*k = arg;
	char			 text[256];
	size_t			 i, n = 0;

	if (error != DOCKER_HTTP_OK || (resp->status != 101 &&
	    resp->status != 200)) {
		log_warnx("the kill in sandbox %s failed: %s (HTTP %d)",
		    k->sandbox, docker_http_strerror(error), resp->status);
		kill_free(k);
		return;
	}
	/* The script prints nothing; whatever it said is worth a log line. */
	for (i = 0; resp->body != NULL && i < resp->body_len &&
	    n + 1 < sizeof(text); i++)
		if (resp->body[i] >= ' ' && resp->body[i] < 0x7f)
			text[n++] = (char)resp->body[i];
	text[n] = '\0';
	if (n > 0)
		log_warnx("the kill in sandbox %s said: %s", k->sandbox, text);
	else
		log_debug("killed the command in sandbox %s", k->sandbox);
	kill_free(k);
}

static void
kill_created(const struct docker_result *res, void *arg)
{
	struct exec_kill		*k = arg;
	struct docker_request_spec	 spec;
	json_object			*obj, *body;
	const char			*kid, *text;
	char				 path[256];

	if (!docker_result_answered(res) || res->status != 201) {
		log_warnx("the kill in sandbox %s failed: exec create: HTTP %d",
		    k->sandbox, res->status);
		kill_free(k);
		return;
	}
	obj = docker_json_parse(res->resp);
	kid = json_get_string(obj, "Id");
	if (!valid_docker_id(kid)) {
		json_object_put(obj);
		log_warnx("the kill in sandbox %s failed: no exec id",
		    k->sandbox);
		kill_free(k);
		return;
	}
	strlcpy(k->kid, kid, sizeof(k->kid));
	json_object_put(obj);
	if (docker_path(path, sizeof(path), DOCKER_API "/exec/%s/start",
	    k->kid) == -1)
		fatalx("%s: path", __func__);
	body = hardening_exec_start_body(0, 0);
	text = json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN);
	memset(&spec, 0, sizeof(spec));
	spec.method = "POST";
	spec.path = path;
	spec.content_type = "application/json";
	spec.body = text;
	spec.body_len = strlen(text);
	spec.flags = DOCKER_HTTP_UPGRADE;
	spec.max_body = EXEC_MAX_BODY;
	spec.on_done = kill_done;
	spec.arg = k;
	if (docker_request_new(k->px->base, k->px->settings.docker_socket,
	    &spec) == NULL) {
		log_warn("the kill in sandbox %s failed", k->sandbox);
		kill_free(k);
	}
	json_object_put(body);
}

/* Independent of the exec: it may end before the kill does. */
static void
kill_start(struct exec *e)
{
	struct exec_kill	*k;
	json_object		*body;
	char			 path[256];

	e->kill_sent = 1;
	k = xcalloc(1, sizeof(*k));
	k->px = e->px;
	strlcpy(k->sandbox, e->spec.id, sizeof(k->sandbox));
	strlcpy(k->cid, e->cid, sizeof(k->cid));
	log_info("killing process group %lld in sandbox %s", e->fp.pid,
	    e->spec.id);
	if (docker_path(path, sizeof(path), DOCKER_API "/containers/%s/exec",
	    k->cid) == -1)
		fatalx("%s: path", __func__);
	body = hardening_kill_body(&e->px->settings.policy, e->fp.pid);
	docker_call(e->px, "POST", path, body, EXEC_MAX_BODY, kill_created,
	    k);
	json_object_put(body);
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
	event_free(e->ev_poll);
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

static void	exec_poll(struct exec *);

static void
exec_polled(const struct docker_result *res, void *arg)
{
	struct exec	*e = arg;
	struct timeval	 tv = { 0, EXIT_POLL_USEC };
	json_object	*obj, *running, *code;
	int		 settled = 0;
	int64_t		 exit_code = -1;

	if (docker_result_answered(res) && res->status == 404) {
		/* The container went, and the exec with it. */
		exec_finish(e, -1);
		return;
	}
	/* Docker is hung: asking again would wait out deadline after deadline. */
	if (res->error == DOCKER_HTTP_TIMEOUT) {
		exec_finish(e, -1);
		return;
	}
	if (docker_result_answered(res) && res->status == 200) {
		obj = docker_json_parse(res->resp);
		if (json_object_object_get_ex(obj, "Running", &running) &&
		    json_object_is_type(running, json_type_boolean) &&
		    !json_object_get_boolean(running) &&
		    json_object_object_get_ex(obj, "ExitCode", &code) &&
		    json_object_is_type(code, json_type_int)) {
			settled = 1;
			exit_code = json_object_get_int64(code);
		}
		json_object_put(obj);
	}
	if (settled) {
		exec_finish(e, exit_code);
		return;
	}
	if (++e->polls >= EXIT_POLLS) {
		exec_finish(e, -1);
		return;
	}
	evtimer_add(e->ev_poll, &tv);
}

static void
exec_poll(struct exec *e)
{
	char	 path[256];

	if (docker_path(path, sizeof(path), DOCKER_API "/exec/%s/json",
	    e->eid) == -1)
		fatalx("%s: path", __func__);
	docker_call(e->px, "GET", path, NULL, INSPECT_MAX_BODY, exec_polled,
	    e);
}

static void
exec_poll_timer(evutil_socket_t fd, short what, void *arg)
{
	exec_poll(arg);
}

/* Everything was written (or dropped): close the pipe, ask the exit. */
static void
exec_drained(struct exec *e)
{
	exec_pipe_close(e);
	evtimer_del(e->ev_timeout);
	evtimer_del(e->ev_grace);
	e->state = EX_POLL;
	e->polls = 0;
	exec_poll(e);
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
	struct docker_request_spec	 spec;
	struct timeval			 tv;
	json_object			*body;
	const char			*text;
	char				 path[256];
	double				 t;

	if (docker_path(path, sizeof(path), DOCKER_API "/exec/%s/start",
	    e->eid) == -1)
		fatalx("%s: path", __func__);
	body = hardening_exec_start_body(0, 0);
	text = json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN);
	memset(&spec, 0, sizeof(spec));
	spec.method = "POST";
	spec.path = path;
	spec.content_type = "application/json";
	spec.body = text;
	spec.body_len = strlen(text);
	spec.flags = DOCKER_HTTP_UPGRADE;
	spec.max_body = EXEC_MAX_BODY;
	spec.on_body = exec_body;
	spec.on_done = exec_stream_done;
	spec.arg = e;
	e->stream = docker_request_new(e->px->base,
	    e->px->settings.docker_socket, &spec);
	json_object_put(body);
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
exec_created(const struct docker_result *res, void *arg)
{
	struct exec	*e = arg;
	json_object	*obj;
	const char	*eid;

	if (docker_result_answered(res) && res->status == 409) {
		exec_fail(e, ERR_INVALID_REQUEST, "sandbox %s is not running",
		    e->spec.id);
		return;
	}
	if (!docker_result_answered(res) || res->status != 201) {
		exec_fail_result(e, res);
		return;
	}
	obj = docker_json_parse(res->resp);
	eid = json_get_string(obj, "Id");
	if (valid_docker_id(eid))
		strlcpy(e->eid, eid, sizeof(e->eid));
	json_object_put(obj);
	if (e->eid[0] == '\0') {
		exec_fail(e, ERR_BACKEND, "sandbox %s: Docker answered "
		    "without an exec id", e->spec.id);
		return;
	}
	if (e->cancelled) {
		exec_fail(e, ERR_INVALID_REQUEST, "exec in sandbox %s was "
		    "cancelled", e->spec.id);
		return;
	}
	exec_start_stream(e);
}

static void
exec_inspected(const struct docker_result *res, void *arg)
{
	struct exec	*e = arg;
	json_object	*obj, *config, *labels = NULL, *state, *running;
	const char	*cid;
	char		 name[DOCKER_NAME_MAX], path[256], text[256];
	int		 ours, is_running = 0;

	if (!docker_result_answered(res) || res->status != 200) {
		exec_fail_result(e, res);
		return;
	}
	obj = docker_json_parse(res->resp);
	if (json_object_object_get_ex(obj, "Config", &config))
		json_object_object_get_ex(config, "Labels", &labels);
	ours = labels_are_ours(labels, e->spec.id,
	    e->px->settings.instance_id);
	if (json_object_object_get_ex(obj, "State", &state) &&
	    json_object_object_get_ex(state, "Running", &running))
		is_running = json_object_get_boolean(running);
	cid = json_get_string(obj, "Id");
	if (ours && valid_docker_id(cid))
		strlcpy(e->cid, cid, sizeof(e->cid));
	json_object_put(obj);
	if (e->cid[0] == '\0') {
		sandbox_container_name(e->spec.id, name, sizeof(name));
		refuse_not_ours("exec in", name, text, sizeof(text));
		exec_fail(e, ERR_FORBIDDEN, "%s", text);
		return;
	}
	if (!is_running) {
		exec_fail(e, ERR_INVALID_REQUEST, "sandbox %s is not running",
		    e->spec.id);
		return;
	}
	if (e->cancelled) {
		exec_fail(e, ERR_INVALID_REQUEST, "exec in sandbox %s was "
		    "cancelled", e->spec.id);
		return;
	}
	e->state = EX_CREATE;
	if (docker_path(path, sizeof(path), DOCKER_API "/containers/%s/exec",
	    e->cid) == -1)
		fatalx("%s: path", __func__);
	obj = hardening_exec_body(&e->px->settings.policy, &e->spec);
	docker_call(e->px, "POST", path, obj, EXEC_MAX_BODY, exec_created, e);
	json_object_put(obj);
}

void
docker_exec(struct proxy *px, uint32_t peerid, struct docker_exec *de, int fd)
{
	struct exec	*e;
	struct stat	 st;
	char		 name[DOCKER_NAME_MAX], path[256];
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
	    (e->ev_grace = evtimer_new(px->base, exec_grace_fire, e)) == NULL ||
	    (e->ev_poll = evtimer_new(px->base, exec_poll_timer, e)) == NULL)
		fatalx("%s: out of memory", __func__);
	TAILQ_INSERT_TAIL(&px->execs, e, entry);

	if (fstat(fd, &st) == -1 || !S_ISFIFO(st.st_mode) ||
	    (flags = fcntl(fd, F_GETFL)) == -1 ||
	    fcntl(fd, F_SETFL, flags | O_NONBLOCK) == -1) {
		exec_fail(e, ERR_INTERNAL, "exec output is not a pipe");
		return;
	}
	sandbox_container_name(e->spec.id, name, sizeof(name));
	if (docker_path(path, sizeof(path), DOCKER_API "/containers/%s/json",
	    name) == -1)
		fatalx("%s: path", __func__);
	docker_call(px, "GET", path, NULL, INSPECT_MAX_BODY, exec_inspected,
	    e);
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
