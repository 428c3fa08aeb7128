/*
 * POST /v1/sandboxes/{id}/exec and .../exec/stream (API.md §3.5, §3.6,
 * §4.7, §4.8, §5.3).  apid makes a pipe and sends its write end with
 * EXEC_START; managerd answers EXEC_STARTED (or one MSG_ERROR, which is
 * still a normal JSON error), the pipe carries Docker-style frames until
 * EOF, and EXEC_EXIT brings the exit code.  The request is over when both
 * the pipe hit EOF and EXEC_EXIT came, in either order; an MSG_ERROR
 * after EXEC_STARTED ends it early (a stream just stops, without an exit
 * line; a blocking exec answers 502).
 *
 * Backpressure: a stream reads the pipe only while the client's output
 * buffer is small and resumes when it has drained (pipe_reader.c); a
 * slow client fills the pipe, which stops the proxy and Docker.
 * A client that goes away gets the exec cancelled (MSG_EXEC_CANCEL) and
 * its pipe closed; the state stays until EXEC_EXIT or MSG_ERROR says
 * managerd is done with the id, and then the detached request is
 * answered, which frees it.
 */
#include <sys/queue.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "apid.h"
#include "log.h"

struct exec_state {
	struct apid_request	*ar;
	struct http_request	*req;
	int			 stream;	/* .../exec/stream */
	struct pipe_reader	 out;		/* the output's frames */
	int			 started;	/* EXEC_STARTED came */
	int			 reply_started;	/* the 200 went out */
	int			 exited;	/* EXEC_EXIT came */
	int			 gone;		/* the client left */
	struct exec_exit	 exit;
	struct timespec		 t0;
	struct frame_parser	 fp;
	struct capture		 cap;		/* blocking exec */
	struct stream_events	*se;		/* streaming exec */
	struct event		*later;		/* exec_finish_later */
};

static int64_t
elapsed_ms(const struct exec_state *st)
{
	struct timespec	 now;
	int64_t		 ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (int64_t)(now.tv_sec - st->t0.tv_sec) * 1000 +
	    (now.tv_nsec - st->t0.tv_nsec) / 1000000;
	return ms < 0 ? 0 : ms;
}

static void
exec_free(struct exec_state *st)
{
	pipe_reader_close(&st->out);
	if (st->later != NULL)
		event_free(st->later);
	capture_free(&st->cap);
	if (st->se != NULL) {
		stream_events_free(st->se);
		free(st->se);
	}
	free(st);
}

static int
exec_emit(void *arg, struct evbuffer *line)
{
	struct exec_state	*st = arg;

	if (st->gone) {
		evbuffer_drain(line, evbuffer_get_length(line));
		return 0;
	}
	http_reply_chunk(st->req, line);
	return 0;
}

/* The end of a blocking exec: the six keys of §3.5. */
static void
exec_reply_result(struct exec_state *st)
{
	struct evbuffer	*b;
	char		*out = NULL, *err = NULL;
	size_t		 outlen = 0, errlen = 0;

	if ((b = evbuffer_new()) == NULL ||
	    (out = capture_decode(&st->cap, EXEC_STDOUT, &outlen)) == NULL ||
	    (err = capture_decode(&st->cap, EXEC_STDERR, &errlen)) == NULL ||
	    jsonout_exec_result(b, out, outlen, err, errlen,
	    st->exit.exit_code, st->exit.timed_out, st->cap.truncated,
	    elapsed_ms(st)) == -1) {
		log_warnx("exec: out of memory for the result");
		respond_error(st->req, ERR_INTERNAL, "out of memory");
	} else
		respond_buffer(st->req, 200, "application/json", b);
	free(out);
	free(err);
	if (b != NULL)
		evbuffer_free(b);
}

/*
 * The last word to the client (or to the detached request, which the
 * reply frees).  The caller has unhooked the request from managerd's
 * replies or is about to.  Output lost on the way (the pipe failed) is
 * a backend failure, never a complete-looking result.
 */
static void
exec_finish(struct exec_state *st)
{
	pipe_reader_close(&st->out);
	if (st->out.failed) {
		log_warnx("exec: output lost: the pipe failed");
		if (st->stream)
			respond_end(st->req, st->reply_started);
		else
			respond_error(st->req, ERR_BACKEND,
			    "the command's output was lost");
	} else if (st->stream) {
		if (!st->gone && st->reply_started &&
		    (stream_events_flush(st->se, EXEC_STDOUT) == -1 ||
		    stream_events_flush(st->se, EXEC_STDERR) == -1 ||
		    stream_events_exit(st->se, st->exit.exit_code,
		    st->exit.timed_out, elapsed_ms(st)) == -1))
			log_warnx("exec: out of memory for the last events");
		respond_end(st->req, st->reply_started);
	} else
		exec_reply_result(st);
	exec_free(st);
}

/* An MSG_ERROR after EXEC_STARTED: the backend failed mid-way. */
static void
exec_fail(struct exec_state *st, struct imsg *imsg)
{
	struct msgr	 r;
	char		*text;

	pipe_reader_close(&st->out);
	if (st->stream) {
		/* The stream just ends, without an exit line. */
		respond_end(st->req, st->reply_started);
	} else {
		msgr_init(&r, imsg);
		(void)msgr_u32(&r);
		text = msgr_str(&r, MSG_MAX_STRING);
		if (msgr_end(&r) == -1 || text == NULL)
			peer_bad_message(&apid->parent, imsg, "bad error");
		respond_error(st->req, ERR_BACKEND, text);
		free(text);
	}
	exec_free(st);
}

static int
exec_frame(void *arg, int stream, const unsigned char *data, size_t len,
    int end)
{
	struct exec_state	*st = arg;
	int			 which;

	if (stream == FRAME_STDOUT)
		which = EXEC_STDOUT;
	else if (stream == FRAME_STDERR)
		which = EXEC_STDERR;
	else
		return 0;	/* not output: skip */
	if (st->stream)
		return stream_events_add(st->se, which, data, len, end);
	if (capture_add(&st->cap, which, data, len) == -1) {
		log_warn("exec: output lost");
		st->cap.truncated = 1;
	}
	return 0;
}

static int
exec_data(void *arg, const unsigned char *buf, size_t n)
{
	struct exec_state	*st = arg;

	if (frame_parser_feed(&st->fp, buf, n, exec_frame, st) == -1) {
		log_warnx("exec: out of memory for events");
		return -1;
	}
	return 0;
}

/* EOF (or a failing pipe, which ends the output the same way). */
static void
exec_pipe_end(void *arg)
{
	struct exec_state	*st = arg;

	if (st->exited) {
		apid_request_release(st->ar);
		exec_finish(st);
	}
}

/* After the client left with EXEC_EXIT already in: finish off the stack. */
static void
exec_finish_later(evutil_socket_t fd, short events, void *arg)
{
	struct exec_state	*st = arg;

	apid_request_release(st->ar);
	exec_finish(st);
}

static void
exec_gone(struct apid_request *ar)
{
	struct exec_state	*st = ar->arg;

	st->gone = 1;
	pipe_reader_close(&st->out);
	if (!st->exited) {
		/* managerd answers with EXEC_EXIT or MSG_ERROR. */
		if (peer_compose(&apid->parent, MSG_EXEC_CANCEL, ar->id, -1,
		    NULL, 0) == -1)
			log_warnx("exec: cannot cancel");
		return;
	}
	/*
	 * We are inside the connection's teardown: not here, but on the
	 * loop's next turn, through an event made with the state (which
	 * cannot fail now).
	 */
	event_active(st->later, EV_TIMEOUT, 1);
}

static int
exec_reply(struct apid_request *ar, struct imsg *imsg)
{
	struct exec_state	*st = ar->arg;

	switch (imsg->hdr.type) {
	case MSG_EXEC_STARTED:
		if (st->started || imsg->len != 0)
			peer_bad_message(&apid->parent, imsg, "unexpected");
		st->started = 1;
		if (st->gone)
			return APID_REPLY_MORE;
		if (st->stream) {
			http_reply_start(st->req, 200, "application/x-ndjson",
			    -1);
			st->reply_started = 1;
		}
		(void)pipe_reader_resume(&st->out);
		return APID_REPLY_MORE;
	case MSG_EXEC_EXIT:
		if (!st->started || st->exited)
			peer_bad_message(&apid->parent, imsg, "unexpected");
		if (msg_get_exec_exit(imsg, &st->exit) == -1)
			peer_bad_message(&apid->parent, imsg, "malformed");
		st->exited = 1;
		if (st->out.fd != -1)
			return APID_REPLY_MORE;	/* finish at EOF */
		exec_finish(st);
		return APID_REPLY_DONE;
	case MSG_ERROR:
		if (!st->started) {
			/* Nothing went out: a normal error (§3.6 rule 6). */
			reply_error_msg(st->req, imsg);
			exec_free(st);
			return APID_REPLY_DONE;
		}
		exec_fail(st, imsg);
		return APID_REPLY_DONE;
	default:
		peer_bad_message(&apid->parent, imsg, "wrong reply type");
	}
}

static void
exec_start(struct http_request *req, char **params, int stream)
{
	struct exec_state	*st;
	struct exec_request	 x;
	struct msgw		 w;
	int			 fds[2];

	if ((st = calloc(1, sizeof(*st))) == NULL) {
		respond_error(req, ERR_INTERNAL, "out of memory");
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &st->t0);
	st->req = req;
	st->stream = stream;
	pipe_reader_init(&st->out, "exec", stream ? req : NULL, exec_data,
	    exec_pipe_end, st);
	frame_parser_init(&st->fp);
	capture_init(&st->cap, apid->max_exec_output_bytes);
	if ((st->later = event_new(apid->base, -1, 0, exec_finish_later,
	    st)) == NULL) {
		respond_error(req, ERR_INTERNAL, "out of memory");
		exec_free(st);
		return;
	}
	if (body_read_exec(req, &x) == -1) {
		exec_free(st);
		return;
	}
	if (sandbox_id_check(req, params[0]) == -1) {
		exec_request_free(&x);
		exec_free(st);
		return;
	}
	if ((x.sandbox_id = strdup(params[0])) == NULL) {
		respond_error(req, ERR_INTERNAL, "out of memory");
		exec_request_free(&x);
		exec_free(st);
		return;
	}
	msgw_init(&w);
	msg_put_exec_request(&w, &x);
	exec_request_free(&x);
	if (w.overflow) {
		respond_error(req, ERR_INVALID_REQUEST,
		    "request too large to forward");
		exec_free(st);
		return;
	}
	if (stream) {
		if ((st->se = malloc(sizeof(*st->se))) == NULL ||
		    stream_events_init(st->se, exec_emit, st) == -1) {
			respond_error(req, ERR_INTERNAL, "out of memory");
			exec_free(st);
			return;
		}
	}
	if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) == -1) {
		log_warn("exec: pipe2");
		respond_error(req, ERR_INTERNAL, "cannot make a pipe");
		exec_free(st);
		return;
	}
	if (pipe_reader_open(&st->out, fds[0]) == -1) {
		close(fds[1]);
		respond_error(req, ERR_INTERNAL, "out of memory");
		exec_free(st);
		return;
	}
	/* The write end goes with the message, ours no more. */
	if ((st->ar = apid_request_send(req, MSG_EXEC_START, &w, fds[1],
	    exec_reply, st)) == NULL) {
		respond_error(req, ERR_INTERNAL, "cannot reach managerd");
		exec_free(st);
		return;
	}
	st->ar->gone = exec_gone;
}

void
route_exec(struct http_request *req, char **params)
{
	exec_start(req, params, 0);
}

void
route_exec_stream(struct http_request *req, char **params)
{
	exec_start(req, params, 1);
}
