/*
 * A process that outlives its request (MSG_DOCKER_PROCESS_START): an exec
 * of the client's command under the PID wrapper, with the tty and stdin
 * it asked for, whose stream is pumped into the socket managerd passed:
 * output out as frames (a tty's bytes all as stream 1), stdin in.
 *
 * What managerd may rely on:
 *  - one MSG_ERROR and nothing else when it never started: the sandbox
 *    is not there, not ours or not running, Docker failed (ERR_BACKEND,
 *    a stream broken before the wrapper's PID line too), or the stream
 *    ended (or stayed unreadable) before that line;
 *  - then the command never ran: its wrapper runs it only once let go
 *    (a newline on its stdin, always attached; on a tty the end-of-file
 *    character), which happens after the PID line, and exits when its
 *    stdin ends first;
 *  - else DOCKER_PROCESS_STARTED {exec id, PID} once that line came,
 *    then, when Docker closed the stream and all output is in the socket,
 *    the socket closed and DOCKER_EXEC_EXIT {exit code or -1, 0}; or,
 *    when Docker still runs the command then (the stream was cut on our
 *    side, or Docker ended it early), MSG_ERROR (ERR_BACKEND) instead,
 *    never an exit that did not happen: the process is lost to managerd,
 *    and its signals still reach it;
 *  - no frame goes into the socket before the PID line was read;
 *  - no timeout here: managerd ends it with DOCKER_PROCESS_SIGNAL;
 *  - at most PROXY_PROCESSES_MAX at once: one more is refused at once
 *    (ERR_LIMIT_EXCEEDED), and its stream never takes the Docker
 *    requests kept for the calls that end processes (DOCKER_HTTP_RESERVE);
 *  - a socket nobody reads any more (EPIPE) never ends the process: its
 *    output is read from Docker and dropped, so the command never waits
 *    on a full pipe;
 *  - the socket's end of file (managerd's shutdown(SHUT_WR)) ends the
 *    stdin: a half-close of Docker's connection, so the command reads end
 *    of file; for a tty, the terminal's end-of-file character instead
 *    (Docker closes a tty exec's output when its stdin is closed);
 *  - stdin is read from the socket only once the command was let go; on
 *    a tty, that is once its size is set too; without stdin_open its
 *    first read is an end of file, with a tty or without.
 * Memory is bounded both ways: reading Docker stops while the socket
 * holds more than it takes, reading the socket while Docker has
 * STDIN_QUEUE_MAX of stdin queued.
 */
#include <sys/socket.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
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

/* Stdin queued for Docker before the socket is left unread. */
#define STDIN_QUEUE_MAX		(64 * 1024)
#define STDIN_READ		(16 * 1024)
/* Output before the PID line: the reason the command did not start. */
#define EARLY_MAX		1024
/* A first line that is no PID: how long to wait for the rest of it. */
#define NO_PID_GRACE_SECONDS	10
/* The terminal's end of file (VEOF), as the line discipline reads it. */
#define TTY_EOF			'\004'

#if PROXY_PROCESSES_MAX > DOCKER_HTTP_MAX_LIVE - DOCKER_HTTP_RESERVE
#error "the processes' streams would take the requests kept in reserve"
#endif

enum process_state {
	PR_LOOKUP,
	PR_CREATE,
	PR_STREAM,
	PR_DRAIN,
	PR_WAIT
};

/* A resize on its way, which may come back after the process ended. */
struct process_sizing {
	struct process		*p;	/* NULL once it ended */
};

struct process {
	TAILQ_ENTRY(process)	 entry;
	struct proxy		*px;
	uint32_t		 peerid;
	struct docker_process	 spec;
	enum process_state	 state;
	char			 cid[DOCKER_ID_LEN + 1];
	char			 eid[DOCKER_ID_LEN + 1];
	int			 fd;		/* the socket; -1 once closed */
	struct event		*ev_write;	/* it takes output again */
	struct event		*ev_read;	/* stdin waits in it */
	struct event		*ev_grace;
	struct evbuffer		*out;		/* frames not yet written */
	struct docker_request	*stream;
	int			 paused;	/* Docker left unread */
	int			 started;	/* PROCESS_STARTED sent */
	int			 discard;	/* nobody reads the socket */
	int			 malformed;
	int			 cut;		/* the stream ended in an error */
	int			 reading;	/* ev_read added */
	int			 stdin_ended;	/* the socket's EOF came */
	int			 stdin_dead;	/* Docker takes no more */
	int			 line_start;	/* a tty's stdin: after a newline */
	struct process_sizing	*sizing;
	int			 sized;		/* a tty's size is set (or none) */
	int			 released;	/* its wrapper was let go */
	char			 early[EARLY_MAX];
	size_t			 early_len;
	struct frame_parser	 fp;
};

static void	process_flush_and_continue(struct process *);
static void	process_pid_found(struct process *);

/* --- the end -------------------------------------------------------------- */

static void
process_socket_close(struct process *p)
{
	if (p->fd == -1)
		return;
	event_del(p->ev_write);
	event_del(p->ev_read);
	p->reading = 0;
	close(p->fd);
	p->fd = -1;
}

static void
process_free(struct process *p)
{
	TAILQ_REMOVE(&p->px->processes, p, entry);
	p->px->nprocesses--;
	if (p->sizing != NULL)
		p->sizing->p = NULL;
	if (p->stream != NULL)
		docker_request_cancel(p->stream);
	process_socket_close(p);
	event_free(p->ev_write);
	event_free(p->ev_read);
	event_free(p->ev_grace);
	evbuffer_free(p->out);
	docker_process_free(&p->spec);
	free(p);
}

/* Before PROCESS_STARTED: the one reply is an error. */
static void
process_fail(struct process *p, enum error_kind kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
process_fail(struct process *p, enum error_kind kind, const char *fmt, ...)
{
	char	 text[2048];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	log_debug("process %u in sandbox %s: %s", p->peerid, p->spec.id,
	    text);
	peer_send_error(&p->px->parent, p->peerid, kind, "%s", text);
	process_free(p);
}

/* The stream ended, or stayed useless, before the PID line. */
static void
process_fail_unstarted(struct process *p)
{
	char	 said[EARLY_MAX + 1];
	size_t	 i, n = 0;

	if (p->malformed) {
		process_fail(p, ERR_BACKEND, "sandbox %s: malformed output "
		    "stream from Docker", p->spec.id);
		return;
	}
	for (i = 0; i < p->early_len; i++)
		if (p->early[i] >= ' ' && p->early[i] < 0x7f)
			said[n++] = p->early[i];
	said[n] = '\0';
	process_fail(p, ERR_INVALID_REQUEST, "sandbox %s: the command did "
	    "not start%s%s", p->spec.id, n > 0 ? ": " : "", said);
}

static void
process_exited(void *arg, int64_t exit_code, int running)
{
	struct process		*p = arg;
	struct exec_exit	 x;
	struct msgw		 w;

	/* Lost, not ended: it still runs, and its signals still reach it. */
	if (running) {
		log_warnx("process %u in sandbox %s: its stream %s, and Docker "
		    "still runs it", p->peerid, p->spec.id,
		    p->cut ? "was cut" : "ended");
		peer_send_error(&p->px->parent, p->peerid, ERR_BACKEND,
		    "sandbox %s: the process's stream from Docker %s while "
		    "it runs", p->spec.id, p->cut ? "broke" : "ended");
		process_free(p);
		return;
	}
	x.exit_code = exit_code;
	x.timed_out = 0;
	msgw_init(&w);
	msg_put_exec_exit(&w, &x);
	peer_send(&p->px->parent, MSG_DOCKER_EXEC_EXIT, p->peerid, -1, &w);
	log_debug("process %u in sandbox %s: exit %lld", p->peerid,
	    p->spec.id, (long long)exit_code);
	process_free(p);
}

/* All output is in the socket (or dropped): close it, ask the exit. */
static void
process_drained(struct process *p)
{
	process_socket_close(p);
	p->state = PR_WAIT;
	exec_wait(p->px, p->eid, process_exited, p);
}

/* --- the output ----------------------------------------------------------- */

static void
process_emit(void *arg, int stream, const unsigned char *data, size_t len)
{
	struct process	*p = arg;
	unsigned char	 head[FRAME_HEADER_LEN];
	size_t		 n;

	/* Before the PID line only a failure speaks: keep it for the error. */
	if (p->fp.pid <= 0) {
		n = EARLY_MAX - p->early_len;
		n = n < len ? n : len;
		memcpy(p->early + p->early_len, data, n);
		p->early_len += n;
		return;
	}
	if (!p->started)
		process_pid_found(p);
	if (p->discard)
		return;
	frame_header(head, stream, (uint32_t)len);
	if (evbuffer_add(p->out, head, sizeof(head)) == -1 ||
	    evbuffer_add(p->out, data, len) == -1)
		fatalx("%s: out of memory", __func__);
}

/* Nobody reads the socket any more: drop the output, never the process. */
static void
process_discard(struct process *p)
{
	log_info("process %u in sandbox %s: its output's reader went away; "
	    "dropping the output", p->peerid, p->spec.id);
	p->discard = 1;
	evbuffer_drain(p->out, evbuffer_get_length(p->out));
	event_del(p->ev_write);
}

/* 1 when all output is out (or dropped); 0 while the socket is full. */
static int
process_flush(struct process *p)
{
	int	 n;

	while (!p->discard && evbuffer_get_length(p->out) > 0) {
		n = evbuffer_write(p->out, p->fd);
		if (n > 0 || (n == -1 && errno == EINTR))
			continue;
		if (n == 0 || errno == EAGAIN || errno == EWOULDBLOCK) {
			event_add(p->ev_write, NULL);
			return 0;
		}
		if (errno != EPIPE)
			log_warn("process %u: writing its output", p->peerid);
		process_discard(p);
	}
	return 1;
}

static void
process_flush_and_continue(struct process *p)
{
	if (!process_flush(p))
		return;
	if (p->paused && p->stream != NULL) {
		p->paused = 0;
		docker_request_resume(p->stream);
	}
	if (p->state == PR_DRAIN)
		process_drained(p);
}

static void
process_writable(evutil_socket_t fd, short what, void *arg)
{
	process_flush_and_continue(arg);
}

/* --- stdin ---------------------------------------------------------------- */

static void
stdin_watch(struct process *p, int on)
{
	if (on == p->reading || p->fd == -1)
		return;
	p->reading = on;
	if (on)
		event_add(p->ev_read, NULL);
	else
		event_del(p->ev_read);
}

static void
stdin_write(struct process *p, const void *data, size_t len)
{
	if (p->stdin_dead)
		return;
	if (docker_request_write_raw(p->stream, data, len) == 0)
		return;
	/* It closed its stdin or ended: what still comes is dropped. */
	log_debug("process %u: its stdin takes no more: %s", p->peerid,
	    strerror(errno));
	p->stdin_dead = 1;
}

/*
 * Without a tty, the half-close.  With one, Docker would close the
 * output along with the stdin: the terminal's end of file instead, twice
 * when a line was begun (the first only hands that line over).
 */
static void
stdin_end(struct process *p)
{
	static const char	 eof[2] = { TTY_EOF, TTY_EOF };

	p->stdin_ended = 1;
	stdin_watch(p, 0);
	log_debug("process %u: end of its stdin", p->peerid);
	if (p->spec.tty)
		stdin_write(p, eof, p->line_start ? 1 : 2);
	else if (!p->stdin_dead &&
	    docker_request_shutdown_write(p->stream) == -1)
		log_debug("process %u: closing its stdin: %s", p->peerid,
		    strerror(errno));
}

static void
process_readable(evutil_socket_t fd, short what, void *arg)
{
	struct process	*p = arg;
	unsigned char	 buf[STDIN_READ];
	size_t		 queued, room;
	ssize_t		 n;

	queued = docker_request_pending(p->stream);
	if (!p->stdin_dead && queued >= STDIN_QUEUE_MAX) {
		stdin_watch(p, 0);	/* the drain callback goes on */
		return;
	}
	room = p->stdin_dead ? sizeof(buf) : STDIN_QUEUE_MAX - queued;
	n = read(fd, buf, room < sizeof(buf) ? room : sizeof(buf));
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		if (n == -1)
			log_debug("process %u: reading its stdin: %s",
			    p->peerid, strerror(errno));
		stdin_end(p);
		return;
	}
	p->line_start = buf[n - 1] == '\n' || buf[n - 1] == '\r';
	stdin_write(p, buf, (size_t)n);
}

static void
process_stdin_drained(struct docker_request *req, void *arg)
{
	struct process	*p = arg;

	if (p->spec.stdin_open && !p->stdin_ended && p->released)
		stdin_watch(p, 1);
}

/*
 * The wrapper waits on its stdin: once the PID line came (so the stream
 * is up and the PID known), and on a tty once the size is set too, a
 * newline (on a tty the end-of-file character) lets it run the command,
 * and the client's stdin may follow.  Without stdin_open, the command's
 * stdin is empty: the half-close (on a tty a second end of file), for
 * its first read.
 */
static void
process_release(struct process *p)
{
	static const char	 eof[2] = { TTY_EOF, TTY_EOF };

	if (p->released || !p->sized || !p->started || p->stream == NULL)
		return;
	p->released = 1;
	if (p->spec.tty)
		stdin_write(p, eof, p->spec.stdin_open ? 1 : 2);
	else {
		stdin_write(p, "\n", 1);
		if (!p->spec.stdin_open)
			stdin_end(p);
	}
	if (p->spec.stdin_open)
		stdin_watch(p, 1);
}

/* --- the stream ----------------------------------------------------------- */

/* The PID line came: managerd hears of it, then output and stdin flow. */
static void
process_pid_found(struct process *p)
{
	struct docker_process_started	 s;
	struct msgw			 w;
	unsigned char			 head[FRAME_HEADER_LEN];

	p->started = 1;
	evtimer_del(p->ev_grace);
	s.exec_id = p->eid;
	s.pid = p->fp.pid;
	msgw_init(&w);
	msg_put_docker_process_started(&w, &s);
	peer_send(&p->px->parent, MSG_DOCKER_PROCESS_STARTED, p->peerid, -1,
	    &w);
	log_debug("process %u in sandbox %s: exec %.12s, pid %lld", p->peerid,
	    p->spec.id, p->eid, p->fp.pid);
	/* What the shell said on stderr before it: output after all. */
	if (p->early_len > 0) {
		frame_header(head, FRAME_STDERR, (uint32_t)p->early_len);
		if (evbuffer_add(p->out, head, sizeof(head)) == -1 ||
		    evbuffer_add(p->out, p->early, p->early_len) == -1)
			fatalx("%s: out of memory", __func__);
	}
	process_release(p);
}

static int
process_body(struct docker_request *req, const unsigned char *data,
    size_t len, void *arg)
{
	struct process	*p = arg;
	struct timeval	 tv = { NO_PID_GRACE_SECONDS, 0 };

	if (frame_parser_feed(&p->fp, data, len, process_emit, p) == -1) {
		log_warnx("process %u in sandbox %s: malformed output stream",
		    p->peerid, p->spec.id);
		p->malformed = 1;
		/* It could no longer be followed: it must not run on. */
		if (p->fp.pid > 0)
			sandbox_kill(p->px, p->spec.id, p->cid, p->fp.pid);
		return -1;
	}
	if (!p->started && p->fp.pid > 0)
		process_pid_found(p);
	if (!p->started && p->fp.pid == -1 &&
	    !evtimer_pending(p->ev_grace, NULL))
		evtimer_add(p->ev_grace, &tv);
	if (!process_flush(p) && !p->paused) {
		p->paused = 1;
		docker_request_pause(req);
	}
	return 0;
}

/* Docker refused the start: the reply is its error. */
static void
process_start_refused(struct process *p, struct docker_request *req,
    enum docker_http_error error, const struct docker_response *resp)
{
	struct docker_result	 res;
	char			 what[64], text[2048];

	if (error == DOCKER_HTTP_OK && resp->status == 409) {
		process_fail(p, ERR_INVALID_REQUEST, "sandbox %s is not "
		    "running", p->spec.id);
		return;
	}
	res.error = error;
	res.errnum = docker_request_errno(req);
	res.status = resp->status;
	res.resp = resp;
	snprintf(what, sizeof(what), "sandbox %s", p->spec.id);
	process_fail(p, docker_result_error(&res, what, text, sizeof(text)),
	    "%s", text);
}

static void
process_stream_done(struct docker_request *req, enum docker_http_error error,
    const struct docker_response *resp, void *arg)
{
	struct process	*p = arg;

	p->stream = NULL;
	p->paused = 0;
	stdin_watch(p, 0);
	if (!p->started && resp->status != 101 && resp->status != 200) {
		process_start_refused(p, req, error, resp);
		return;
	}
	if (frame_parser_finish(&p->fp, process_emit, p) == -1)
		log_debug("process %u: the stream ended inside a frame",
		    p->peerid);
	/* Ours or Docker's, not the command's: it was never let go. */
	if (!p->started && error != DOCKER_HTTP_OK &&
	    error != DOCKER_HTTP_CANCELLED) {
		process_fail(p, ERR_BACKEND, "sandbox %s: the stream from "
		    "Docker broke before the command started: %s", p->spec.id,
		    docker_http_strerror(error));
		return;
	}
	if (!p->started) {
		process_fail_unstarted(p);
		return;
	}
	if (error != DOCKER_HTTP_OK && error != DOCKER_HTTP_CANCELLED) {
		log_warnx("process %u in sandbox %s: %s", p->peerid,
		    p->spec.id, docker_http_strerror(error));
		p->cut = 1;
	}
	p->state = PR_DRAIN;
	process_flush_and_continue(p);
}

/*
 * The first line was no PID and the stream stays open: give up on it.
 * Nothing of the client's ran: its wrapper waits to be let go, and the
 * end of the stream ends its stdin.
 */
static void
process_grace_fire(evutil_socket_t fd, short what, void *arg)
{
	struct process	*p = arg;

	if (p->started || p->stream == NULL)
		return;
	log_warnx("process %u in sandbox %s: no PID line; giving up on its "
	    "stream", p->peerid, p->spec.id);
	process_fail_unstarted(p);
}

/* --- the start ------------------------------------------------------------ */

static void
process_sized(void *arg, enum error_kind kind, const char *text)
{
	struct process_sizing	*z = arg;
	struct process		*p = z->p;

	free(z);
	if (p == NULL)
		return;
	p->sizing = NULL;
	/* Better the wrong size than a command that never runs. */
	if (kind != 0)
		log_warnx("process %u in sandbox %s: its tty size: %s",
		    p->peerid, p->spec.id, text);
	p->sized = 1;
	process_release(p);
}

static void
process_attach(struct process *p)
{
	static const struct exec_attach_cbs	 cbs = { process_body,
						    process_stdin_drained,
						    process_stream_done, 1, 0 };

	p->stream = exec_attach(p->px, p->eid, p->spec.tty, &cbs, p);
	if (p->stream == NULL) {
		process_fail(p, docker_start_error_kind(errno), "sandbox %s: "
		    "cannot start a Docker request: %s", p->spec.id,
		    strerror(errno));
		return;
	}
	p->state = PR_STREAM;
	if (!p->spec.tty || p->spec.cols == 0 || p->spec.rows == 0) {
		p->sized = 1;
		return;
	}
	/* Docker holds it until the exec runs; the wrapper waits for it. */
	p->sizing = xcalloc(1, sizeof(*p->sizing));
	p->sizing->p = p;
	exec_resize(p->px, p->spec.id, p->eid, p->spec.cols, p->spec.rows,
	    process_sized, p->sizing);
}

static void
process_created(void *arg, const char *eid, enum error_kind kind,
    const char *text)
{
	struct process	*p = arg;

	if (kind != 0) {
		process_fail(p, kind, "%s", text);
		return;
	}
	strlcpy(p->eid, eid, sizeof(p->eid));
	process_attach(p);
}

static void
process_found(void *arg, const char *cid, int running, enum error_kind kind,
    const char *text)
{
	struct process	*p = arg;
	json_object	*body;

	if (kind != 0) {
		process_fail(p, kind, "%s", text);
		return;
	}
	strlcpy(p->cid, cid, sizeof(p->cid));
	p->state = PR_CREATE;
	body = hardening_process_body(&p->px->settings.policy, &p->spec);
	exec_create(p->px, p->spec.id, p->cid, body, process_created, p);
	json_object_put(body);
}

/* A stream socket of the unix family, made non-blocking; -1 if not. */
static int
process_socket_ready(int fd)
{
	struct stat	 st;
	socklen_t	 len = sizeof(int);
	int		 domain, type, flags;

	if (fstat(fd, &st) == -1 || !S_ISSOCK(st.st_mode) ||
	    getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) == -1 ||
	    len != sizeof(int) || domain != AF_UNIX)
		return -1;
	len = sizeof(int);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == -1 ||
	    len != sizeof(int) || type != SOCK_STREAM)
		return -1;
	if ((flags = fcntl(fd, F_GETFL)) == -1 ||
	    fcntl(fd, F_SETFL, flags | O_NONBLOCK) == -1)
		return -1;
	return 0;
}

void
docker_process_start(struct proxy *px, uint32_t peerid,
    struct docker_process *d, int fd)
{
	struct process	*p;

	/* managerd has a limit of its own, but is not trusted to keep it. */
	if (px->nprocesses >= PROXY_PROCESSES_MAX) {
		log_warnx("process %u in sandbox %s refused: already %zu",
		    peerid, d->id, px->nprocesses);
		peer_send_error(&px->parent, peerid, ERR_LIMIT_EXCEEDED,
		    "dockerd-proxy already follows %d processes",
		    PROXY_PROCESSES_MAX);
		close(fd);
		docker_process_free(d);
		return;
	}
	p = xcalloc(1, sizeof(*p));
	p->px = px;
	p->peerid = peerid;
	p->spec = *d;
	memset(d, 0, sizeof(*d));
	p->fd = fd;
	p->line_start = 1;
	if (p->spec.tty)
		frame_parser_init_tty(&p->fp, 1);
	else
		frame_parser_init(&p->fp, 1);
	if ((p->out = evbuffer_new()) == NULL ||
	    (p->ev_write = event_new(px->base, fd, EV_WRITE, process_writable,
	    p)) == NULL ||
	    (p->ev_read = event_new(px->base, fd, EV_READ | EV_PERSIST,
	    process_readable, p)) == NULL ||
	    (p->ev_grace = evtimer_new(px->base, process_grace_fire, p)) ==
	    NULL)
		fatalx("%s: out of memory", __func__);
	TAILQ_INSERT_TAIL(&px->processes, p, entry);
	px->nprocesses++;
	if (process_socket_ready(fd) == -1) {
		process_fail(p, ERR_INTERNAL, "process socket is not a unix "
		    "stream socket");
		return;
	}
	exec_container(px, p->spec.id, "start a process in", 1,
	    process_found, p);
}
