/*
 * POST /v1/sandboxes/{sb}/processes/{p}/stdin?close= (docs/rest-api.md
 * "Processes"): the body's bytes to the process's stdin.  apid makes a
 * pipe and sends its read end with PROCESS_STDIN; it writes the body
 * into the write end and closes it; managerd answers MSG_OK once every
 * byte up to that end of file went into the process's stdin (and closed
 * it, with close=true), or MSG_ERROR at any point.
 *
 * The body is read whole first (at most 1 MiB, as a JSON body, so the
 * router's 413 serves), not streamed: a body over the limit must not
 * reach the process half-way, and once managerd has the pipe nothing
 * could take back what went in.  Any content type: these are raw bytes.
 *
 * managerd answers only once the process took the bytes, which may be
 * never, and a client that left does not end the call.  So calls are
 * bounded: at most apid->stdin_calls_max wait for managerd, holding at
 * most apid->stdin_bytes_max of bodies not yet written, else a 503 with
 * Retry-After.  A call whose client left while its pipe is still being
 * written keeps that descriptor: it counts against the connection cap
 * as a taken socket does, until the pipe is closed.
 */
#include <sys/queue.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "apid.h"
#include "log.h"

struct stdin_state {
	struct http_request	*req;
	struct http_server	*srv;		/* its connection's */
	struct pipe_writer	 pw;
	size_t			 bytes;		/* in apid->stdin_bytes */
	int			 writing;	/* the pipe is still ours */
	int			 broken;	/* managerd closed its end */
	int			 taken;		/* counted as a taken socket */
};

/* The pipe is no more ours: its bytes and descriptor leave the counts. */
static void
stdin_unhold(struct stdin_state *st)
{
	apid->stdin_bytes -= st->bytes;
	st->bytes = 0;
	if (st->taken) {
		st->taken = 0;
		http_server_untake(st->srv);
	}
}

static void
stdin_free(struct stdin_state *st)
{
	pipe_writer_close(&st->pw);
	stdin_unhold(st);
	apid->stdin_calls--;
	free(st);
}

/*
 * The body is in the pipe and the pipe closed (or managerd closed its
 * end early, and its MSG_ERROR will say why): its answer decides.
 */
static void
stdin_written(void *arg, int ok)
{
	struct stdin_state	*st = arg;

	st->writing = 0;
	st->broken = !ok;
	stdin_unhold(st);
}

/* The client left; a pipe still being written holds its descriptor. */
static void
stdin_gone(struct apid_request *ar)
{
	struct stdin_state	*st = ar->arg;

	if (st->writing && st->srv != NULL && !st->taken) {
		st->taken = 1;
		http_server_take(st->srv);
	}
}

static int
stdin_reply(struct apid_request *ar, struct imsg *imsg)
{
	struct stdin_state	*st = ar->arg;

	if (imsg->hdr.type == MSG_ERROR)
		reply_error_msg(st->req, imsg);
	else if (imsg->hdr.type != MSG_OK || imsg->len != 0)
		peer_bad_message(&apid->parent, imsg, "wrong reply");
	else if (st->writing)
		/* managerd cannot have read to an end of file not yet made. */
		peer_bad_message(&apid->parent, imsg, "before the end");
	else if (st->broken)
		/* Nor to one it closed its end before. */
		peer_bad_message(&apid->parent, imsg, "after its pipe broke");
	else
		http_reply(st->req, 204, NULL, NULL);
	stdin_free(st);
	return APID_REPLY_DONE;
}

/* The pipe, the body in it, and the message with its read end. */
static int
stdin_send(struct stdin_state *st, struct process_stdin *s)
{
	struct apid_request	*ar;
	struct msgw		 w;
	int			 fds[2], saved;

	if (pipe2(fds, O_CLOEXEC) == -1) {
		respond_errno(st->req, errno, "cannot make a pipe");
		return -1;
	}
	if (pipe_writer_open(&st->pw, fds[1]) == -1 ||
	    (st->req->body != NULL &&
	    pipe_writer_add_buffer(&st->pw, st->req->body) == -1)) {
		saved = errno;
		close(fds[0]);
		respond_errno(st->req, saved, "cannot write the pipe");
		return -1;
	}
	pipe_writer_finish(&st->pw);
	st->writing = 1;
	msgw_init(&w);
	msg_put_process_stdin(&w, s);
	/* The read end goes with the message, ours no more. */
	if ((ar = apid_request_send(st->req, MSG_PROCESS_STDIN, &w, fds[0],
	    stdin_reply, st)) == NULL) {
		respond_error(st->req, ERR_INTERNAL, "cannot reach managerd");
		return -1;
	}
	ar->gone = stdin_gone;
	return 0;
}

/* 0 if the call fits the bounds (and is counted), else the 503 sent. */
static int
stdin_admit(struct http_request *req, size_t len)
{
	if (apid->stdin_calls >= apid->stdin_calls_max ||
	    len > apid->stdin_bytes_max - apid->stdin_bytes) {
		http_add_field(req, "Retry-After", "1");
		respond_error(req, ERR_UNAVAILABLE, "too many writes to stdin "
		    "are waiting for their processes; try again later");
		return -1;
	}
	apid->stdin_calls++;
	apid->stdin_bytes += len;
	return 0;
}

void
route_process_stdin(struct http_request *req, char **params)
{
	struct stdin_state	*st;
	struct process_stdin	 s;
	json_object		*errors;
	size_t			 len;

	s.close_at_end = 0;
	errors = json_object_new_array();
	if (query_get_bool(req, errors, "close", &s.close_at_end) == -1) {
		json_object_put(errors);
		respond_error(req, ERR_INTERNAL, "out of memory");
		return;
	}
	if (query_respond(req, errors) || process_ref_check(req, params) == -1)
		return;
	len = req->body != NULL ? evbuffer_get_length(req->body) : 0;
	if (stdin_admit(req, len) == -1)
		return;
	if ((st = calloc(1, sizeof(*st))) == NULL) {
		apid->stdin_calls--;
		apid->stdin_bytes -= len;
		respond_error(req, ERR_INTERNAL, "out of memory");
		return;
	}
	st->req = req;
	st->srv = req->conn != NULL ? req->conn->srv : NULL;
	st->bytes = len;
	pipe_writer_init(&st->pw, "process stdin", NULL, stdin_written, st);
	s.ref.sandbox_id = params[0];
	s.ref.process_id = params[1];
	if (stdin_send(st, &s) == -1)
		stdin_free(st);
}
