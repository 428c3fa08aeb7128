/*
 * GET /v1/sandboxes/{sb}/processes/{p}/output?after=&follow=&encoding=
 * (docs/rest-api.md "Processes"): apid makes a pipe and sends its write
 * end with PROCESS_OUTPUT; managerd answers PROCESS_OUTPUT_STARTED (its
 * last message; or one MSG_ERROR, a normal JSON error), then writes the
 * events into the pipe and closes it.  Each event becomes one NDJSON
 * line (process_events.c) of a chunked 200.
 *
 * The answer ends well only when the stream did: at a boundary between
 * events, and with the exit event when following (managerd ends a
 * follow only after it, or when it gives up on the reader).  Anything
 * else, a malformed stream above all, aborts the reply, so that the
 * client cannot take a cut stream for a whole one.  Backpressure as for
 * an exec stream: the pipe is read only while the client's output
 * buffer is small, and managerd drops a reader that falls behind its
 * ring to a gap.  A client that goes away gets the pipe closed, which
 * is all managerd needs to forget it.
 */
#include <sys/queue.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "apid.h"
#include "log.h"

#define ENCODINGS	"'utf8' or 'base64'"

struct output_state {
	struct piped		 pd;
	struct process_events	 pe;
	int			 follow;
	int			 started;	/* OUTPUT_STARTED came */
	int			 reply_started;	/* the 200 went out */
};

static void
output_free(struct output_state *st)
{
	pipe_reader_close(&st->pd.pipe);
	process_events_free(&st->pe);
	free(st);
}

static int
output_emit(void *arg, struct evbuffer *line)
{
	struct output_state	*st = arg;

	http_reply_chunk(st->pd.req, line);
	return 0;
}

static int
output_data(void *arg, const unsigned char *buf, size_t n)
{
	struct output_state	*st = arg;

	if (process_events_feed(&st->pe, buf, n) == -1) {
		log_warnx("process output: a malformed event stream from "
		    "managerd");
		return -1;
	}
	return 0;
}

/* Every part has ended: the end of the stream, or its abort. */
static void
output_finish(void *arg)
{
	struct output_state	*st = arg;
	int			 whole;

	whole = !st->pd.pipe.failed && process_events_clean(&st->pe) &&
	    (!st->follow || process_events_ended(&st->pe));
	if (!whole && !st->pd.gone)
		log_warnx("process output: the stream was cut");
	if (whole)
		respond_end(st->pd.req, st->reply_started);
	else
		http_reply_abort(st->pd.req);
	output_free(st);
}

/* The client left: closing the pipe is all managerd needs. */
static void
output_gone(void *arg)
{
	struct output_state	*st = arg;

	piped_close(&st->pd);
}

static int
output_reply(struct apid_request *ar, struct imsg *imsg)
{
	struct output_state	*st = piped_arg(ar);

	if (imsg->hdr.type == MSG_ERROR && !st->started) {
		reply_error_msg(st->pd.req, imsg);
		output_free(st);
		return APID_REPLY_DONE;
	}
	if (imsg->hdr.type != MSG_PROCESS_OUTPUT_STARTED || st->started ||
	    imsg->len != 0)
		peer_bad_message(&apid->parent, imsg, "unexpected");
	st->started = 1;
	if (!st->pd.gone) {
		http_reply_start(st->pd.req, 200, "application/x-ndjson", -1);
		st->reply_started = 1;
		piped_resume(&st->pd);
	}
	return piped_done(&st->pd, PIPED_BACKEND);
}

static const struct piped_ops output_ops = {
	"process output", output_data, output_finish, output_gone
};

/* A seq: decimal digits only, within 64 bits. */
static int
seq_parse(const char *s, size_t len, uint64_t *out)
{
	size_t	 i;
	unsigned int d;

	*out = 0;
	if (len == 0 || strlen(s) != len)
		return -1;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		d = (unsigned int)(s[i] - '0');
		if (*out > (UINT64_MAX - d) / 10)
			return -1;
		*out = *out * 10 + d;
	}
	return 0;
}

/* encoding: Literal["utf8", "base64"] = "utf8". */
static int
output_encoding(struct http_request *req, json_object *errors, int *base64)
{
	json_object	*ctx;
	char		*v;
	size_t		 len;
	int		 rc;

	*base64 = 0;
	if ((rc = query_get(req, "encoding", &v, &len)) != 1)
		return rc;
	/* A value holding a NUL is neither. */
	if (strlen(v) == len && (strcmp(v, "base64") == 0 ||
	    strcmp(v, "utf8") == 0))
		*base64 = v[0] == 'b';
	else {
		ctx = json_object_new_object();
		json_object_object_add(ctx, "expected",
		    json_object_new_string(ENCODINGS));
		query_error(errors, "literal_error", "encoding",
		    "Input should be " ENCODINGS,
		    json_object_new_string_len(v, (int)len), ctx);
	}
	free(v);
	return 0;
}

/*
 * follow and encoding as FastAPI would check them (422); then after,
 * whose 400 the contract sets.  0, or -1 when answered.
 */
static int
output_query(struct http_request *req, struct process_output *o,
    int *base64)
{
	json_object	*errors = json_object_new_array();
	char		*v = NULL;
	size_t		 len;
	int		 rc;

	if (query_get_bool(req, errors, "follow", &o->follow) == -1 ||
	    output_encoding(req, errors, base64) == -1 ||
	    (rc = query_get(req, "after", &v, &len)) == -1) {
		json_object_put(errors);
		respond_error(req, ERR_INTERNAL, "out of memory");
		return -1;
	}
	if (query_respond(req, errors)) {
		free(v);
		return -1;
	}
	if (rc == 1 && seq_parse(v, len, &o->after) == -1) {
		respond_error(req, ERR_INVALID_REQUEST,
		    "after must be a non-negative integer");
		free(v);
		return -1;
	}
	free(v);
	return 0;
}

void
route_process_output(struct http_request *req, char **params)
{
	struct output_state	*st;
	struct process_output	 o;
	struct msgw		 w;
	int			 base64, wfd;

	memset(&o, 0, sizeof(o));
	if (output_query(req, &o, &base64) == -1 ||
	    process_ref_check(req, params) == -1)
		return;
	if ((st = calloc(1, sizeof(*st))) == NULL) {
		respond_error(req, ERR_INTERNAL, "out of memory");
		return;
	}
	st->follow = o.follow;
	piped_init(&st->pd, req, 1, PIPED_PIPE, &output_ops, st);
	if (process_events_init(&st->pe, base64, output_emit, st) == -1) {
		respond_error(req, ERR_INTERNAL, "out of memory");
		output_free(st);
		return;
	}
	if ((wfd = piped_pipe(&st->pd, 0)) == -1) {
		respond_errno(req, errno, "cannot make a pipe");
		output_free(st);
		return;
	}
	o.ref.sandbox_id = params[0];
	o.ref.process_id = params[1];
	msgw_init(&w);
	msg_put_process_output(&w, &o);
	/* The write end goes with the message, ours no more. */
	if (piped_send(&st->pd, MSG_PROCESS_OUTPUT, &w, wfd,
	    output_reply) == -1) {
		respond_error(req, ERR_INTERNAL, "cannot reach managerd");
		output_free(st);
	}
}
