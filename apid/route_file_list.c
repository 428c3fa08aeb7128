/*
 * GET /v1/sandboxes/{sb}/files/list?path= (API.md §4.11): a listing.  It
 * is an exec under managerd's control whose output pipe carries frames,
 * like POST .../exec (route_exec.c); its stdout is parsed by file_list.c
 * once EXEC_EXIT has come and the pipe is at EOF, in either order
 * (piped.c).
 */
#include <sys/queue.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


#include "apid.h"
#include "log.h"

#define LIST_STDERR_MAX		4096

struct file_listing {
	struct piped		 pd;		/* the output's frames */
	char			*dir;		/* FILE_LIST_STARTED */
	int			 started;
	struct exec_exit	 exit;
	struct frame_parser	 fp;
	struct capture		 out;		/* stdout, up to the max */
	struct capture		 err;		/* stderr, its start */
	int			 too_large;	/* or out of memory */
};

static void
list_free(struct file_listing *st)
{
	pipe_reader_close(&st->pd.pipe);
	free(st->dir);
	capture_free(&st->out);
	capture_free(&st->err);
	free(st);
}

static int
list_frame(void *arg, int stream, const unsigned char *data, size_t len,
    int end)
{
	struct file_listing	*st = arg;

	if (stream == FRAME_STDOUT)
		return capture_add(&st->out, EXEC_STDOUT, data, len);
	if (stream == FRAME_STDERR)
		return capture_add(&st->err, EXEC_STDOUT, data, len);
	return 0;
}

/* Python's str.strip() of stderr, as text. */
static char *
list_stderr(struct file_listing *st)
{
	struct utf8_decoder	 d;
	const struct capture_buf *b = &st->err.stream[EXEC_STDOUT];
	const char		*s = b->data != NULL ? b->data : "";
	size_t			 len = b->len, n;
	char			*out;

	while (len > 0 && isspace((unsigned char)*s)) {
		s++;
		len--;
	}
	while (len > 0 && isspace((unsigned char)s[len - 1]))
		len--;
	if ((out = malloc(UTF8_DECODE_BOUND(len) + 1)) == NULL)
		return NULL;
	utf8_decoder_init(&d);
	n = utf8_decode(&d, s, len, 1, out);
	out[n] = '\0';
	return out;
}

static void
list_respond(struct file_listing *st)
{
	struct file_entries	 fe;
	json_object		*o;
	char			*msg = NULL, *err;

	if (st->too_large || st->out.truncated) {
		if (asprintf(&msg, "cannot list %s: listing too large",
		    st->dir) == -1)
			msg = NULL;
		respond_error(st->pd.req, ERR_BACKEND, msg != NULL ? msg :
		    "listing too large");
	} else if (st->pd.pipe.failed) {
		/* What came is not the whole listing: no partial answer. */
		if (asprintf(&msg, "cannot list %s: the output was lost",
		    st->dir) == -1)
			msg = NULL;
		respond_error(st->pd.req, ERR_BACKEND, msg != NULL ? msg :
		    "the listing's output was lost");
	} else if (st->exit.exit_code == 0) {
		if (file_list_parse(st->out.stream[EXEC_STDOUT].data != NULL ?
		    st->out.stream[EXEC_STDOUT].data : "",
		    st->out.stream[EXEC_STDOUT].len, &fe) == -1) {
			if (errno == E2BIG && asprintf(&msg, "cannot list %s: "
			    "more than %d entries", st->dir,
			    FILE_LIST_MAX_ENTRIES) != -1) {
				respond_error(st->pd.req, ERR_BACKEND, msg);
				free(msg);
			} else
				respond_error(st->pd.req, ERR_INTERNAL,
				    "out of memory");
			return;
		}
		if ((o = file_list_json(st->dir, &fe)) == NULL)
			respond_error(st->pd.req, ERR_INTERNAL, "out of memory");
		else {
			respond_json(st->pd.req, 200, o);
			json_object_put(o);
		}
		file_entries_free(&fe);
	} else if (st->exit.exit_code == 2) {
		if (asprintf(&msg, "%s: not found", st->dir) == -1)
			msg = NULL;
		respond_error(st->pd.req, ERR_NOT_FOUND, msg != NULL ? msg :
		    "not found");
	} else if (st->exit.exit_code == 3) {
		if (asprintf(&msg, "%s is not a directory", st->dir) == -1)
			msg = NULL;
		respond_error(st->pd.req, ERR_INVALID_REQUEST, msg != NULL ? msg :
		    "not a directory");
	} else {
		err = list_stderr(st);
		if (asprintf(&msg, "cannot list %s: %s", st->dir,
		    err != NULL ? err : "") == -1)
			msg = NULL;
		free(err);
		respond_error(st->pd.req, ERR_BACKEND, msg != NULL ? msg :
		    "cannot list");
	}
	free(msg);
}

static void
list_finish(void *arg)
{
	struct file_listing	*st = arg;

	list_respond(st);
	list_free(st);
}

static int
list_data(void *arg, const unsigned char *buf, size_t n)
{
	struct file_listing	*st = arg;

	if (frame_parser_feed(&st->fp, buf, n, list_frame, st) == -1) {
		log_warnx("listing: out of memory");
		st->too_large = 1;
		return -1;
	}
	return 0;
}

/* managerd treats a listing as an exec: it ends it. */
static void
list_gone(void *arg)
{
	struct file_listing	*st = arg;

	if (piped_pending(&st->pd, PIPED_BACKEND) &&
	    peer_compose(&apid->parent, MSG_EXEC_CANCEL, st->pd.ar->id, -1,
	    NULL, 0) == -1)
		log_warnx("listing: cannot cancel");
	piped_close(&st->pd);
}

static int
list_reply(struct apid_request *ar, struct imsg *imsg)
{
	struct file_listing	*st = piped_arg(ar);

	switch (imsg->hdr.type) {
	case MSG_FILE_LIST_STARTED:
		if (st->started)
			peer_bad_message(&apid->parent, imsg, "unexpected");
		if ((st->dir = msg_get_string(imsg, MSG_MAX_PATH)) == NULL)
			peer_bad_message(&apid->parent, imsg, "malformed");
		st->started = 1;
		piped_resume(&st->pd);
		return APID_REPLY_MORE;
	case MSG_EXEC_EXIT:
		if (!st->started || !piped_pending(&st->pd, PIPED_BACKEND) ||
		    msg_get_exec_exit(imsg, &st->exit) == -1)
			peer_bad_message(&apid->parent, imsg, "unexpected");
		return piped_done(&st->pd, PIPED_BACKEND);
	case MSG_ERROR:
		reply_error_msg(st->pd.req, imsg);
		list_free(st);
		return APID_REPLY_DONE;
	default:
		peer_bad_message(&apid->parent, imsg, "wrong reply type");
	}
}

static const struct piped_ops list_ops = {
	"listing", list_data, list_finish, list_gone
};

void
route_file_list(struct http_request *req, char **params)
{
	struct file_listing	*st;
	struct file_request	 fr;
	struct msgw		 w;
	char			*path;
	size_t			 len;
	int			 wfd, rc;

	if ((rc = query_get_bytes(req, "path", &path, &len)) == -1) {
		respond_error(req, ERR_INTERNAL, "out of memory");
		return;
	}
	if (sandbox_id_check(req, params[0]) == -1) {
		free(path);
		return;
	}
	if (path != NULL)
		query_refuse_nul(path, len);
	fr.sandbox_id = params[0];
	fr.path = path;		/* NULL: managerd lists /workspace */
	msgw_init(&w);
	msg_put_file_request(&w, &fr);
	if (w.overflow || (path != NULL && strlen(path) > MSG_MAX_PATH)) {
		respond_error(req, ERR_INVALID_REQUEST, "path is too long");
		free(path);
		return;
	}
	free(path);
	if ((st = calloc(1, sizeof(*st))) == NULL) {
		respond_error(req, ERR_INTERNAL, "out of memory");
		return;
	}
	piped_init(&st->pd, req, 0, PIPED_PIPE, &list_ops, st);
	frame_parser_init(&st->fp);
	capture_init(&st->out, FILE_LIST_OUTPUT_MAX);
	capture_init(&st->err, LIST_STDERR_MAX);
	if ((wfd = piped_pipe(&st->pd, 0)) == -1) {
		respond_errno(req, errno, "cannot make a pipe");
		list_free(st);
		return;
	}
	if (piped_send(&st->pd, MSG_FILE_LIST, &w, wfd, list_reply) == -1) {
		respond_error(req, ERR_INTERNAL, "cannot reach managerd");
		list_free(st);
	}
}
