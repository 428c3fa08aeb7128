/*
 * An attachment: a process's output and stdin over a WebSocket (RFC
 * 6455), once .../attach has answered 101 and taken the connection's
 * socket (route_attach.c).  libwslay does the framing (masks, fragments,
 * UTF-8 of text, ping and pong, the closing handshake) over the taken
 * bufferevent; this file moves what it carries:
 *
 *	output pipe (PROCESS_OUTPUT events) -> a binary frame per data
 *	event (gaps dropped); the exit event -> a text frame
 *	{"type": "exit", ...}, then close 1000.
 *	client binary frames -> a stdin pipe (PROCESS_STDIN, opened at the
 *	first one); a text frame {"type": "resize", ...} -> PROCESS_RESIZE.
 *	{"type": "stdin_close"} -> that pipe finished, and once managerd
 *	answered it (its bytes are in), a PROCESS_STDIN with close_at_end
 *	and an empty pipe: the process's stdin ends after every byte sent
 *	before.  Binary frames after it are refused.
 *	managerd refusing any -> a text frame {"type": "error", ...}.
 *
 * Everything is bounded: a client message is at most ATTACH_MSG_MAX
 * bytes in at most ATTACH_MSG_FRAMES frames (1009 beyond), the output
 * pipe is read only while less than ATTACH_OUT_HIGH waits for the
 * client, and the client is read only while its stdin backlog (and
 * whatever it makes us answer) is small.
 * One resize is out at a time; a newer one waits, replacing any other.
 * A quiet client is pinged, so that a dead one is found by TCP (and a
 * send that does not move by the connection's send timeout) rather than
 * held for ever; nothing else times an attachment.
 *
 * When the client goes (or the socket fails) the output pipe is closed,
 * which is all managerd needs: the process runs on; what the client sent
 * for stdin still goes in, then the pipe's end.  The attachment itself is
 * freed once managerd has answered its calls (a STDIN is answered when
 * its pipe ends), since their replies point to it; until then it keeps
 * only what they need, the socket's side (wslay, the buffers, the event
 * parser) freed at the end.
 */
#include <sys/queue.h>

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <wslay/wslay.h>

#include "apid.h"
#include "log.h"

/* Stop reading a client that leaves this much of our output unread. */
#define ATTACH_CLIENT_HIGH	(4 * ATTACH_OUT_HIGH)
#define ATTACH_PING_SEC		30	/* a quiet client is pinged */
#define ATTACH_CLOSE_WAIT_SEC	5	/* for its close after ours */

struct attach {
	struct bufferevent	*bev;
	struct http_server	*srv;
	wslay_event_context_ptr	 ws;
	struct process_ref	 ref;		/* ours, for STDIN and RESIZE */
	struct caller		 caller;	/* the handshake's */
	struct pipe_reader	 out;		/* the output's events */
	struct pev_parser	*pev;		/* 32 KiB: freed at the end */
	struct pipe_writer	 in;		/* to the process's stdin */
	struct apid_request	*stdin_call;	/* until managerd answers */
	int			 stdin_refused;	/* frames are dropped */
	int			 stdin_broken;	/* managerd closed its end */
	int			 stdin_closing;	/* the client's stdin_close */
	int			 close_sent;	/* its PROCESS_STDIN */
	struct apid_request	*resize_call;
	int			 resize_waiting;
	uint32_t		 cols, rows;	/* the newest size asked */
	struct event		*timer;		/* ping, or the close wait */
	unsigned int		 frames;	/* of the message coming */
	int			 closing;	/* our close frame is queued */
	int			 failed;	/* a framing error: it is out */
	int			 draining;	/* over once its output left */
	int			 ended;		/* the socket is closed */
};

static void	attach_pump(struct attach *);

/*
 * Once ended: the socket, then the stdin pipe, held a place under the
 * connection cap, given back once the pipe is closed; a is freed once
 * nothing more will call back.
 */
static void
attach_maybe_free(struct attach *a)
{
	if (!a->ended || pipe_writer_is_open(&a->in))
		return;
	if (a->srv != NULL)
		http_server_untake(a->srv);
	a->srv = NULL;
	if (a->stdin_call != NULL || a->resize_call != NULL)
		return;
	process_ref_free(&a->ref);
	caller_free(&a->caller);
	free(a);
}

/*
 * The socket side is over; what waits for managerd keeps a, and only
 * what its replies need: the rest goes now.
 */
static void
attach_end(struct attach *a)
{
	if (a->ended)
		return;
	a->ended = 1;
	pipe_reader_close(&a->out);
	free(a->pev);
	a->pev = NULL;
	/*
	 * What the client sent still goes in, then the end of file, and
	 * managerd answers the STDIN; the pipe keeps the socket's place
	 * under the cap until then (stdin_end).
	 */
	pipe_writer_finish(&a->in);
	if (a->timer != NULL)
		event_free(a->timer);
	a->timer = NULL;
	wslay_event_context_free(a->ws);
	a->ws = NULL;
	bufferevent_free(a->bev);
	a->bev = NULL;
	attach_maybe_free(a);
}

/* --- frames to the client ------------------------------------------------- */

static void
queue_msg(struct attach *a, uint8_t opcode, const void *data, size_t len)
{
	struct wslay_event_msg	 m = { opcode, (const uint8_t *)data, len };
	int			 rc;

	/* After our close nothing more goes (WSLAY_ERR_NO_MORE_MSG). */
	if ((rc = wslay_event_queue_msg(a->ws, &m)) != 0 &&
	    rc != WSLAY_ERR_NO_MORE_MSG)
		log_warnx("attach: cannot queue a frame: %d", rc);
}

static void
queue_text(struct attach *a, struct evbuffer *b)
{
	size_t	 len = evbuffer_get_length(b);

	queue_msg(a, WSLAY_TEXT_FRAME, evbuffer_pullup(b, -1), len);
	evbuffer_drain(b, len);
}

/* {"type": "error", "message": ...}: managerd refused stdin or a resize. */
static void
queue_error(struct attach *a, const char *message)
{
	struct evbuffer	*b;
	char		*text;
	size_t		 len;

	if ((b = evbuffer_new()) == NULL ||
	    (text = utf8_repair(message, strlen(message), &len)) == NULL) {
		if (b != NULL)
			evbuffer_free(b);
		return;
	}
	if (evbuffer_add(b, "{\"type\": \"error\", \"message\": ", 29) == 0 &&
	    jsonout_string(b, text, len, 1) == 0 && evbuffer_add(b, "}", 1) ==
	    0)
		queue_text(a, b);
	free(text);
	evbuffer_free(b);
}

/* Our close frame; then the client's is awaited, for a while. */
static void
queue_close(struct attach *a, uint16_t code, const char *reason)
{
	struct timeval	 tv = { ATTACH_CLOSE_WAIT_SEC, 0 };

	if (a->closing)
		return;
	a->closing = 1;
	(void)wslay_event_queue_close(a->ws, code, (const uint8_t *)reason,
	    strlen(reason));
	evtimer_add(a->timer, &tv);
}

/* --- the output pipe ------------------------------------------------------ */

static int
exit_frame(struct attach *a, const struct pev_exit *x)
{
	struct evbuffer	*b;
	int		 rc;

	if ((b = evbuffer_new()) == NULL)
		return -1;
	rc = jsonout_process_exit(b, process_status_name(x->status),
	    x->has_exit_code, x->exit_code, 0, NULL, 0);
	if (rc == 0)
		queue_text(a, b);
	evbuffer_free(b);
	/* Out before the close, which wslay would send first. */
	if (wslay_event_send(a->ws) != 0)
		return -1;
	queue_close(a, WSLAY_CODE_NORMAL_CLOSURE, "");
	return rc;
}

static int
out_event(void *arg, enum pev_type type, uint64_t value,
    const unsigned char *data, size_t len, const struct pev_exit *x)
{
	struct attach	*a = arg;

	switch (type) {
	case PEV_STDOUT:
	case PEV_STDERR:
		queue_msg(a, WSLAY_BINARY_FRAME, data, len);
		return 0;
	case PEV_GAP:
		return 0;	/* a terminal shows what comes next */
	default:
		return exit_frame(a, x);
	}
}

/*
 * The pipe's bytes as frames, written to the client's buffer at once;
 * a full buffer pauses the pipe (resumed as it drains).  a must not be
 * ended from here: the pipe reader still runs.
 */
static int
out_data(void *arg, const unsigned char *buf, size_t n)
{
	struct attach	*a = arg;

	if (pev_parser_feed(a->pev, buf, n, out_event, a) == -1) {
		log_warnx("attach: a malformed event stream from managerd");
		return -1;
	}
	if (wslay_event_send(a->ws) != 0)
		return -1;
	if (evbuffer_get_length(bufferevent_get_output(a->bev)) >=
	    ATTACH_OUT_HIGH)
		pipe_reader_pause(&a->out);
	return 0;
}

/* The output ended: after the exit, or cut (managerd gave up, a lie). */
static void
out_end(void *arg)
{
	struct attach	*a = arg;

	if (!a->pev->ended || a->out.failed || !pev_parser_clean(a->pev)) {
		log_warnx("attach: the output stream was cut");
		queue_close(a, WSLAY_CODE_INTERNAL_SERVER_ERROR,
		    "the output stream was cut");
	}
	attach_pump(a);
}

/* --- stdin ---------------------------------------------------------------- */

/* managerd's MSG_ERROR: its text (a malformed one is a lie). */
static char *
error_text(struct imsg *imsg)
{
	struct msgr	 r;
	uint32_t	 kind;
	char		*text;

	msgr_init(&r, imsg);
	kind = msgr_u32(&r);
	text = msgr_str(&r, MSG_MAX_STRING);
	if (msgr_end(&r) == -1 || text == NULL || kind < ERR_INVALID_REQUEST ||
	    kind > ERR_KIND_MAX)
		peer_bad_message(&apid->parent, imsg, "malformed error");
	return text;
}

/* A reply came; the session goes on, or a finishes freeing. */
static void
after_call(struct attach *a)
{
	if (a->ended)
		attach_maybe_free(a);
	else
		attach_pump(a);
}

static void	stdin_close_step(struct attach *);

/* OK once the pipe's end of file went in (we closed it), or refused. */
static int
stdin_reply(struct apid_request *ar, struct imsg *imsg)
{
	struct attach	*a = ar->arg;
	char		*text;

	a->stdin_call = NULL;
	if (imsg->hdr.type == MSG_ERROR) {
		text = error_text(imsg);
		if (!a->ended)
			queue_error(a, text);
		free(text);
		a->stdin_refused = 1;
		pipe_writer_close(&a->in);
	} else if (imsg->hdr.type != MSG_OK || imsg->len != 0)
		peer_bad_message(&apid->parent, imsg, "wrong reply");
	else if (pipe_writer_is_open(&a->in))
		peer_bad_message(&apid->parent, imsg, "before the end");
	else if (a->stdin_broken)
		peer_bad_message(&apid->parent, imsg, "after its pipe broke");
	a->stdin_broken = 0;
	stdin_close_step(a);
	after_call(a);
	return APID_REPLY_DONE;
}

/* The pipe took its backlog: the client may be read again. */
static void
stdin_drained(void *arg)
{
	struct attach	*a = arg;

	if (!a->ended)
		attach_pump(a);
}

/*
 * managerd closed its end (its answer says why), or, once the socket
 * ended, the pipe took the rest and was closed.
 */
static void
stdin_end(void *arg, int ok)
{
	struct attach	*a = arg;

	a->stdin_broken = !ok;
	if (a->ended)
		attach_maybe_free(a);
	else
		attach_pump(a);
}

/* PROCESS_STDIN with a pipe's read end, which is ours no more. */
static int
stdin_call_send(struct attach *a, int fd, int close_at_end)
{
	struct process_stdin	 s;
	struct msgw		 w;

	s.ref = a->ref;
	s.close_at_end = close_at_end;
	msgw_init(&w);
	msg_put_process_stdin(&w, &s);
	a->stdin_call = apid_request_send_as(&a->caller, NULL,
	    MSG_PROCESS_STDIN, &w, fd, stdin_reply, a);
	return a->stdin_call != NULL ? 0 : -1;
}

static int
stdin_open(struct attach *a)
{
	int	 fds[2];

	if (pipe2(fds, O_CLOEXEC) == -1)
		return -1;
	if (pipe_writer_open(&a->in, fds[1]) == -1) {
		close(fds[0]);
		return -1;
	}
	if (stdin_call_send(a, fds[0], 0) == -1) {
		pipe_writer_close(&a->in);
		return -1;
	}
	return 0;
}

/*
 * After stdin_close, once no call is out (the pipe's, answered when its
 * bytes are in the process's stdin): an empty pipe with close_at_end,
 * which managerd answers once it closed the process's stdin.  Also
 * after the socket ended: the client asked for it.
 */
static void
stdin_close_step(struct attach *a)
{
	int	 fds[2];

	if (!a->stdin_closing || a->close_sent || a->stdin_call != NULL)
		return;
	a->close_sent = 1;
	if (pipe2(fds, O_CLOEXEC) == -1) {
		if (!a->ended)
			queue_error(a, "cannot close the process's stdin");
		return;
	}
	close(fds[1]);
	if (stdin_call_send(a, fds[0], 1) == -1 && !a->ended)
		queue_error(a, "cannot close the process's stdin");
}

/* {"type": "stdin_close"}: the pipe's bytes go in, then its end. */
static void
client_stdin_close(struct attach *a)
{
	if (a->stdin_closing)
		return;		/* a second one changes nothing */
	a->stdin_closing = 1;
	pipe_writer_finish(&a->in);
	stdin_close_step(a);
}

/* A binary frame: to stdin, its pipe opened at the first. */
static void
client_stdin(struct attach *a, const uint8_t *data, size_t len)
{
	if (a->stdin_closing) {
		queue_error(a, "stdin is closed");
		return;
	}
	if (a->stdin_refused || len == 0)
		return;
	/* Closed under a call still out: managerd's answer is coming. */
	if (!pipe_writer_is_open(&a->in) && a->stdin_call != NULL)
		return;
	if (!pipe_writer_is_open(&a->in) && stdin_open(a) == -1) {
		a->stdin_refused = 1;
		queue_error(a, "cannot reach the process's stdin");
		return;
	}
	if (pipe_writer_add(&a->in, data, len) == -1) {
		a->stdin_refused = 1;
		pipe_writer_close(&a->in);
		queue_error(a, "out of memory for stdin");
	}
}

/* --- resize --------------------------------------------------------------- */

static void	resize_send(struct attach *);

static int
resize_reply(struct apid_request *ar, struct imsg *imsg)
{
	struct attach	*a = ar->arg;
	char		*text;

	a->resize_call = NULL;
	if (imsg->hdr.type == MSG_ERROR) {
		text = error_text(imsg);
		if (!a->ended)
			queue_error(a, text);
		free(text);
	} else if (imsg->hdr.type != MSG_OK || imsg->len != 0)
		peer_bad_message(&apid->parent, imsg, "wrong reply");
	if (a->resize_waiting && !a->ended)
		resize_send(a);
	after_call(a);
	return APID_REPLY_DONE;
}

static void
resize_send(struct attach *a)
{
	struct process_resize	 r;
	struct msgw		 w;

	a->resize_waiting = 0;
	r.ref = a->ref;
	r.cols = a->cols;
	r.rows = a->rows;
	msgw_init(&w);
	msg_put_process_resize(&w, &r);
	if ((a->resize_call = apid_request_send_as(&a->caller, NULL,
	    MSG_PROCESS_RESIZE, &w, -1, resize_reply, a)) == NULL)
		queue_error(a, "cannot reach managerd");
}

/* A tty size: an integer 1..PROCESS_TTY_MAX, else 0. */
static uint32_t
tty_size(const struct jv *v)
{
	if (v == NULL || v->type != JV_INT || v->u.i.big != NULL ||
	    v->u.i.v < 1 || v->u.i.v > PROCESS_TTY_MAX)
		return 0;
	return (uint32_t)v->u.i.v;
}

/*
 * A text frame (wslay checked its UTF-8): {"type": "resize", "cols": C,
 * "rows": R} or {"type": "stdin_close"}, and nothing else.  Other JSON
 * is a message we do not take (1003); text that is no such object
 * breaks the protocol's data (1007).
 */
static void
client_text(struct attach *a, const uint8_t *msg, size_t len)
{
	struct pyjson_error	 err;
	struct jv		 v;
	const struct jv		*type;
	uint32_t		 cols, rows;

	if (pyjson_parse(msg, len, &v, &err) != PYJSON_OK) {
		queue_close(a, WSLAY_CODE_INVALID_FRAME_PAYLOAD_DATA,
		    "a text frame must be JSON");
		return;
	}
	type = v.type == JV_OBJECT ? member(&v, "type") : NULL;
	if (type == NULL || type->type != JV_STRING)
		queue_close(a, WSLAY_CODE_INVALID_FRAME_PAYLOAD_DATA,
		    "a text frame needs a type");
	else if (has_nul(type) || (strcmp(type->u.s.s, "resize") != 0 &&
	    strcmp(type->u.s.s, "stdin_close") != 0))
		queue_close(a, WSLAY_CODE_UNSUPPORTED_DATA,
		    "only resize and stdin_close messages are taken");
	else if (strcmp(type->u.s.s, "stdin_close") == 0) {
		if (v.u.o.n != 1)
			queue_close(a, WSLAY_CODE_INVALID_FRAME_PAYLOAD_DATA,
			    "stdin_close takes nothing else");
		else
			client_stdin_close(a);
	} else if (v.u.o.n != 3 || (cols = tty_size(member(&v, "cols"))) == 0 ||
	    (rows = tty_size(member(&v, "rows"))) == 0)
		queue_close(a, WSLAY_CODE_INVALID_FRAME_PAYLOAD_DATA,
		    "resize takes cols and rows, 1 to 1000");
	else {
		a->cols = cols;
		a->rows = rows;
		a->resize_waiting = 1;
		if (a->resize_call == NULL)
			resize_send(a);
	}
	jv_free(&v);
}

/* --- wslay's callbacks ---------------------------------------------------- */

static ssize_t
ws_recv(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, int flags,
    void *arg)
{
	struct attach	*a = arg;
	int		 n;

	n = evbuffer_remove(bufferevent_get_input(a->bev), buf, len);
	if (n <= 0) {
		wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
		return -1;
	}
	return n;
}

/* Into the socket's buffer, which the pump keeps bounded. */
static ssize_t
ws_send(wslay_event_context_ptr ctx, const uint8_t *data, size_t len,
    int flags, void *arg)
{
	struct attach	*a = arg;

	if (evbuffer_add(bufferevent_get_output(a->bev), data, len) == -1) {
		wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
		return -1;
	}
	return (ssize_t)len;
}

/*
 * A frame begins: a fragment past ATTACH_MSG_FRAMES closes 1009, and no
 * more is read (of what wslay keeps, nothing more is added).
 */
static void
ws_frame_start(wslay_event_context_ptr ctx,
    const struct wslay_event_on_frame_recv_start_arg *f, void *arg)
{
	struct attach	*a = arg;

	if (f->opcode == WSLAY_TEXT_FRAME || f->opcode == WSLAY_BINARY_FRAME)
		a->frames = 1;
	else if (f->opcode == WSLAY_CONTINUATION_FRAME)
		a->frames++;
	if (a->frames <= ATTACH_MSG_FRAMES)
		return;
	queue_close(a, WSLAY_CODE_MESSAGE_TOO_BIG, "too many fragments");
	wslay_event_shutdown_read(ctx);
}

/* A whole message; wslay answers pings and closes itself. */
static void
ws_msg(wslay_event_context_ptr ctx,
    const struct wslay_event_on_msg_recv_arg *m, void *arg)
{
	struct attach	*a = arg;

	/* After our close only the client's close matters. */
	if (a->closing)
		return;
	if (m->opcode == WSLAY_BINARY_FRAME)
		client_stdin(a, m->msg, m->msg_length);
	else if (m->opcode == WSLAY_TEXT_FRAME)
		client_text(a, m->msg, m->msg_length);
}

/* --- the socket ----------------------------------------------------------- */

/*
 * wslay's frame layer refuses a control frame over 125 bytes or not
 * final, or a length not in its shortest form, by failing outright
 * (WSLAY_ERR_CALLBACK_FAILURE, since our recv never fails), with a
 * close frame without a code queued.  RFC 6455 §7.1.7 asks for 1002
 * before the socket goes: unless our own close is queued already, that
 * one is written by hand instead (wslay writes no more), then the
 * socket drains and ends.
 */
static void
ws_failed(struct attach *a)
{
	static const unsigned char	 close_1002[] = { 0x88, 2, 0x03, 0xea };

	if (!a->closing) {
		wslay_event_shutdown_write(a->ws);
		(void)evbuffer_add(bufferevent_get_output(a->bev), close_1002,
		    sizeof(close_1002));
		a->closing = 1;
	}
	a->failed = 1;
}

/* What came, through wslay: -1 if it failed (no memory). */
static int
ws_read(struct attach *a)
{
	int	 rc;

	if ((rc = wslay_event_recv(a->ws)) == WSLAY_ERR_CALLBACK_FAILURE) {
		ws_failed(a);
		return 0;
	}
	return rc == 0 ? 0 : -1;
}

/*
 * Read the client only while what it makes us hold is small; what came
 * while it was paused is read on resuming, since no new byte may come
 * to say it is there.  -1 if wslay failed (no memory).
 */
static int
client_flow(struct attach *a)
{
	struct evbuffer	*in = bufferevent_get_input(a->bev);
	size_t		 out;

	out = evbuffer_get_length(bufferevent_get_output(a->bev));
	if (pipe_writer_backlog(&a->in) >= ATTACH_MSG_MAX ||
	    out >= ATTACH_CLIENT_HIGH || !wslay_event_want_read(a->ws)) {
		bufferevent_disable(a->bev, EV_READ);
		return 0;
	}
	if (bufferevent_get_enabled(a->bev) & EV_READ)
		return 0;
	bufferevent_enable(a->bev, EV_READ);
	if (evbuffer_get_length(in) > 0)
		return ws_read(a);
	return 0;
}

/*
 * After anything happened: the client's flow, what wslay queued sent,
 * and whether the session is over.  It is when our close frame is out
 * and the client's came (or wslay stopped reading, after a protocol
 * error), or a framing error's close is written: once that frame has
 * left the buffer.  Or at once when wslay failed otherwise.  Each
 * caller calls it last: a may be gone after it.
 */
static void
attach_pump(struct attach *a)
{
	if ((!a->draining && client_flow(a) == -1) ||
	    wslay_event_send(a->ws) != 0 ||
	    (!a->failed && !wslay_event_get_write_enabled(a->ws) &&
	    !wslay_event_get_close_sent(a->ws))) {
		attach_end(a);
		return;
	}
	if (!a->failed && (!wslay_event_get_close_sent(a->ws) ||
	    (!wslay_event_get_close_received(a->ws) &&
	    wslay_event_want_read(a->ws))))
		return;
	a->draining = 1;
	bufferevent_disable(a->bev, EV_READ);
	if (evbuffer_get_length(bufferevent_get_output(a->bev)) == 0)
		attach_end(a);
}

static void
attach_read_cb(struct bufferevent *bev, void *arg)
{
	struct attach	*a = arg;

	if (ws_read(a) == -1) {
		attach_end(a);
		return;
	}
	attach_pump(a);
}

/* The output drained below its low mark (or all of it went). */
static void
attach_write_cb(struct bufferevent *bev, void *arg)
{
	struct attach	*a = arg;

	if (a->draining) {
		if (evbuffer_get_length(bufferevent_get_output(bev)) == 0)
			attach_end(a);
		return;
	}
	if (pipe_reader_resume(&a->out) == -1) {
		out_end(a);
		return;
	}
	attach_pump(a);
}

static void
attach_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct attach	*a = arg;

	if (what & BEV_EVENT_TIMEOUT)
		log_debug("attach: the client stopped reading");
	attach_end(a);
}

/* While open, a ping now and then; once closing, the wait is over. */
static void
attach_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct attach	*a = arg;
	struct timeval	 tv = { ATTACH_PING_SEC, 0 };

	if (a->closing) {
		attach_end(a);
		return;
	}
	queue_msg(a, WSLAY_PING, "", 0);
	evtimer_add(a->timer, &tv);
	attach_pump(a);
}

static const struct wslay_event_callbacks ws_callbacks = {
	ws_recv, ws_send, NULL, ws_frame_start, NULL, NULL, ws_msg
};

/* Takes out_fd, also on failure. */
static int
attach_setup(struct attach *a, int out_fd)
{
	struct timeval	 ping = { ATTACH_PING_SEC, 0 };

	if ((a->pev = malloc(sizeof(*a->pev))) == NULL) {
		close(out_fd);
		return -1;
	}
	pev_parser_init(a->pev);
	if (pipe_reader_open(&a->out, out_fd) == -1)
		return -1;
	if (wslay_event_context_server_init(&a->ws, &ws_callbacks, a) != 0) {
		a->ws = NULL;
		return -1;
	}
	wslay_event_config_set_max_recv_msg_length(a->ws, ATTACH_MSG_MAX);
	if ((a->timer = evtimer_new(apid->base, attach_timer_cb, a)) ==
	    NULL || evtimer_add(a->timer, &ping) == -1)
		return -1;
	bufferevent_setcb(a->bev, attach_read_cb, attach_write_cb,
	    attach_event_cb, a);
	bufferevent_setwatermark(a->bev, EV_READ, 0, 2 * ATTACH_MSG_MAX);
	bufferevent_set_timeouts(a->bev, NULL, &a->srv->settings.send_timeout);
	bufferevent_enable(a->bev, EV_READ | EV_WRITE);
	return pipe_reader_resume(&a->out);
}

/*
 * The 101 is queued on bev: the WebSocket starts.  Takes bev (the socket
 * counts against srv's cap until it is freed), ref's strings (ref is
 * left empty) and out_fd (the output pipe's read end, non-blocking),
 * also on failure.
 */
int
attach_start(struct bufferevent *bev, struct http_server *srv,
    struct process_ref *ref, const struct caller *caller, int out_fd)
{
	struct attach	*a;

	if ((a = calloc(1, sizeof(*a))) == NULL ||
	    caller_copy(&a->caller, caller) == -1) {
		free(a);
		close(out_fd);
		process_ref_free(ref);
		bufferevent_free(bev);
		http_server_untake(srv);
		return -1;
	}
	a->bev = bev;
	a->srv = srv;
	a->ref = *ref;
	memset(ref, 0, sizeof(*ref));
	pipe_reader_init(&a->out, "attach", NULL, out_data, out_end, a);
	pipe_writer_init(&a->in, "attach stdin", stdin_drained, stdin_end, a);
	if (attach_setup(a, out_fd) == -1) {
		log_warnx("attach: cannot start the WebSocket");
		attach_end(a);
		return -1;
	}
	/* Frames the client sent right after its head are read now. */
	attach_read_cb(bev, a);
	return 0;
}
