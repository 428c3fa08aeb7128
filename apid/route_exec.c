/*
 * POST /v1/sandboxes/{id}/exec and .../exec/stream (API.md §3.5, §3.6,
 * §4.7, §4.8, §5.3).  apid makes a pipe and sends its write end with
 * EXEC_START; managerd answers EXEC_STARTED (or one MSG_ERROR, which is
 * still a normal JSON error), the pipe carries Docker-style frames until
 * EOF, and EXEC_EXIT brings the exit code.  The request is over when both
 * the pipe hit EOF and EXEC_EXIT came, in either order (piped.c); an
 * MSG_ERROR after EXEC_STARTED ends it early (a stream just stops,
 * without an exit line; a blocking exec answers 502).
 *
 * Backpressure: a stream reads the pipe only while the client's output
 * buffer is small and resumes when it has drained (pipe_reader.c); a
 * slow client fills the pipe, which stops the proxy and Docker.
 * A client that goes away gets the exec cancelled (MSG_EXEC_CANCEL) and
 * its pipe closed; managerd still ends the call with EXEC_EXIT or
 * MSG_ERROR, and then the detached request is answered, which frees it.
 */
#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>

#include "apid.h"
#include "log.h"

struct exec_state {
	struct piped		 pd;
	int			 stream;	/* .../exec/stream */
	int			 started;	/* EXEC_STARTED came */
	int			 reply_started;	/* the 200 went out */
	int			 failed;	/* MSG_ERROR after STARTED */
	char			*error;		/* its text */
	struct exec_exit	 exit;
	struct timespec		 t0;
	struct frame_parser	 fp;
	struct capture		 cap;		/* blocking exec */
	struct stream_events	*se;		/* streaming exec */
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
	pipe_reader_close(&st->pd.pipe);
	capture_free(&st->cap);
	if (st->se != NULL) {
		stream_events_free(st->se);
		free(st->se);
	}
	free(st->error);
	free(st);
}

static int
exec_emit(void *arg, struct evbuffer *line)
{
	struct exec_state	*st = arg;

	http_reply_chunk(st->pd.req, line);
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
		respond_error(st->pd.req, ERR_INTERNAL, "out of memory");
	} else
		respond_buffer(st->pd.req, 200, "application/json", b);
	free(out);
	free(err);
	if (b != NULL)
		evbuffer_free(b);
}

static void
exec_finish_stream(struct exec_state *st)
{
	if (!st->failed && !st->pd.pipe.failed && st->reply_started &&
	    (stream_events_flush(st->se, EXEC_STDOUT) == -1 ||
	    stream_events_flush(st->se, EXEC_STDERR) == -1 ||
	    stream_events_exit(st->se, st->exit.exit_code,
	    st->exit.timed_out, elapsed_ms(st)) == -1))
		log_warnx("exec: out of memory for the last events");
	/* A failure just ends the stream, without an exit line. */
	respond_end(st->pd.req, st->reply_started);
}

/*
 * Every part has ended: the last word to the client (or to the detached
 * request, which it frees).  Output lost on the way (the pipe failed) is
 * a backend failure, never a complete-looking result.
 */
static void
exec_finish(void *arg)
{
	struct exec_state	*st = arg;

	if (st->stream)
		exec_finish_stream(st);
	else if (st->failed)
		respond_error(st->pd.req, ERR_BACKEND, st->error != NULL ?
		    st->error : "the command failed");
	else if (st->pd.pipe.failed) {
		log_warnx("exec: output lost: the pipe failed");
		respond_error(st->pd.req, ERR_BACKEND,
		    "the command's output was lost");
	} else
		exec_reply_result(st);
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

/* The client left: stop the command (managerd still ends the call). */
static void
exec_gone(void *arg)
{
	struct exec_state	*st = arg;
	uint32_t		 id = st->pd.ar->id;

	if (piped_pending(&st->pd, PIPED_BACKEND) &&
	    peer_compose(&apid->parent, MSG_EXEC_CANCEL, id, -1, NULL, 0) ==
	    -1)
		log_warnx("exec: cannot cancel");
	piped_close(&st->pd);
}

static void
exec_started(struct exec_state *st, struct imsg *imsg)
{
	if (st->started || imsg->len != 0)
		peer_bad_message(&apid->parent, imsg, "unexpected");
	st->started = 1;
	if (st->pd.gone)
		return;
	if (st->stream) {
		http_reply_start(st->pd.req, 200, "application/x-ndjson", -1);
		st->reply_started = 1;
	}
	piped_resume(&st->pd);
}

/* An MSG_ERROR: before STARTED a normal error; after it a failure. */
static int
exec_error(struct exec_state *st, struct imsg *imsg)
{
	struct msgr	 r;

	if (!st->started) {
		reply_error_msg(st->pd.req, imsg);
		exec_free(st);
		return APID_REPLY_DONE;
	}
	msgr_init(&r, imsg);
	(void)msgr_u32(&r);
	st->error = msgr_str(&r, MSG_MAX_STRING);
	if (msgr_end(&r) == -1 || st->error == NULL)
		peer_bad_message(&apid->parent, imsg, "bad error");
	st->failed = 1;
	piped_close(&st->pd);
	return piped_done(&st->pd, PIPED_BACKEND);
}

static int
exec_reply(struct apid_request *ar, struct imsg *imsg)
{
	struct exec_state	*st = piped_arg(ar);

	switch (imsg->hdr.type) {
	case MSG_EXEC_STARTED:
		exec_started(st, imsg);
		return APID_REPLY_MORE;
	case MSG_EXEC_EXIT:
		if (!st->started || !piped_pending(&st->pd, PIPED_BACKEND) ||
		    msg_get_exec_exit(imsg, &st->exit) == -1)
			peer_bad_message(&apid->parent, imsg, "unexpected");
		return piped_done(&st->pd, PIPED_BACKEND);
	case MSG_ERROR:
		return exec_error(st, imsg);
	default:
		peer_bad_message(&apid->parent, imsg, "wrong reply type");
	}
}

static const struct piped_ops exec_ops = {
	"exec", exec_data, exec_finish, exec_gone
};

/* The request's checks and the message for managerd; NULL if answered. */
static struct exec_state *
exec_prepare(struct http_request *req, char **params, int stream,
    struct msgw *w)
{
	struct exec_state	*st;
	struct exec_request	 x;

	if (body_read_exec(req, &x) == -1)
		return NULL;
	if (sandbox_id_check(req, params[0]) == -1) {
		exec_request_free(&x);
		return NULL;
	}
	if ((x.sandbox_id = strdup(params[0])) == NULL) {
		respond_error(req, ERR_INTERNAL, "out of memory");
		exec_request_free(&x);
		return NULL;
	}
	msgw_init(w);
	msg_put_exec_request(w, &x);
	exec_request_free(&x);
	if (w->overflow) {
		respond_error(req, ERR_INVALID_REQUEST,
		    "request too large to forward");
		return NULL;
	}
	if ((st = calloc(1, sizeof(*st))) == NULL ||
	    (stream && ((st->se = malloc(sizeof(*st->se))) == NULL ||
	    stream_events_init(st->se, exec_emit, st) == -1))) {
		if (st != NULL && st->se != NULL)
			free(st->se);
		free(st);
		respond_error(req, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	return st;
}

static void
exec_start(struct http_request *req, char **params, int stream)
{
	struct exec_state	*st;
	struct msgw		 w;
	int			 wfd;

	if ((st = exec_prepare(req, params, stream, &w)) == NULL)
		return;
	clock_gettime(CLOCK_MONOTONIC, &st->t0);
	st->stream = stream;
	piped_init(&st->pd, req, stream, PIPED_PIPE, &exec_ops, st);
	frame_parser_init(&st->fp);
	capture_init(&st->cap, apid->max_exec_output_bytes);
	if ((wfd = piped_pipe(&st->pd, 0)) == -1) {
		respond_errno(req, errno, "cannot make a pipe");
		exec_free(st);
		return;
	}
	/* The write end goes with the message, ours no more. */
	if (piped_send(&st->pd, MSG_EXEC_START, &w, wfd, exec_reply) == -1) {
		respond_error(req, ERR_INTERNAL, "cannot reach managerd");
		exec_free(st);
	}
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
