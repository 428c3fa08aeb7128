/*
 * The process routes that are one message and one answer
 * (docs/rest-api.md "Processes"): start, list, get, delete, signal and
 * resize.  apid validates the bodies (body_process.c), managerd does the
 * rest; its PROCESS_INFO replies become Process objects.  Output, stdin,
 * attachments and their tokens have files of their own.
 */
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apid.h"
#include "format.h"

/* Text from managerd as a JSON string: U+FFFD for what is not UTF-8. */
static json_object *
text_json(const char *s)
{
	json_object	*o;
	char		*t;
	size_t		 len;

	if (s == NULL || (t = utf8_repair(s, strlen(s), &len)) == NULL)
		return NULL;
	o = json_object_new_string_len(t, (int)len);
	free(t);
	return o;
}

/* As the client gave it: a shell line as a string, else the list. */
static json_object *
command_json(const struct process_info *pi)
{
	json_object	*a;
	size_t		 i;

	if (pi->shell)
		return text_json(pi->argv[0]);
	a = json_object_new_array();
	for (i = 0; i < pi->argc; i++)
		json_object_array_add(a, text_json(pi->argv[i]));
	return a;
}

static json_object *
time_json(int has, double t)
{
	char	 ts[FORMAT_TIMESTAMP_LEN];

	if (!has)
		return NULL;
	format_timestamp(t, ts, sizeof(ts));
	return json_object_new_string(ts);
}

static json_object *
tty_size_json(const struct process_info *pi, uint32_t n)
{
	return pi->tty && n > 0 ? json_object_new_int64(n) : NULL;
}

static void
add(json_object *o, const char *key, json_object *v)
{
	json_object_object_add(o, key, v);
}

/* The fields after the command, from status to the byte counts. */
static void
process_state_json(json_object *o, const struct process_info *pi)
{
	char	 num[FORMAT_PYFLOAT_LEN];

	add(o, "status", json_object_new_string(
	    process_status_name(pi->status)));
	add(o, "running", json_object_new_boolean(pi->running));
	add(o, "exit_code", pi->has_exit_code ?
	    json_object_new_int64(pi->exit_code) : NULL);
	add(o, "started_at", time_json(1, pi->started_at));
	add(o, "ended_at", time_json(pi->has_ended_at, pi->ended_at));
	format_pyfloat(pi->timeout_seconds, num, sizeof(num));
	add(o, "timeout_seconds", pi->has_timeout ?
	    json_object_new_double_s(pi->timeout_seconds, num) : NULL);
	add(o, "tty", json_object_new_boolean(pi->tty));
	add(o, "stdin", json_object_new_boolean(pi->stdin_open));
	add(o, "cols", tty_size_json(pi, pi->cols));
	add(o, "rows", tty_size_json(pi, pi->rows));
	add(o, "client_id", text_json(pi->client_id));
	add(o, "output_bytes", json_object_new_int64((int64_t)
	    pi->output_bytes));
	add(o, "kept_bytes", json_object_new_int64((int64_t)pi->kept_bytes));
	add(o, "dropped_bytes", json_object_new_int64((int64_t)
	    pi->dropped_bytes));
}

/* The Process object, its fields in the order of the table. */
json_object *
process_info_json(const struct process_info *pi)
{
	json_object	*o = json_object_new_object();

	add(o, "id", json_object_new_string(pi->id));
	add(o, "sandbox_id", json_object_new_string(pi->sandbox_id));
	add(o, "command", command_json(pi));
	add(o, "workdir", text_json(pi->workdir));
	process_state_json(o, pi);
	return o;
}

/*
 * Path ids longer than a message may carry name nothing: answered as
 * managerd would.  Any other string is for managerd to look up.
 */
int
process_ref_check(struct http_request *req, char **params)
{
	char	*msg;

	if (sandbox_id_check(req, params[0]) == -1)
		return -1;
	if (strlen(params[1]) <= MSG_MAX_ID)
		return 0;
	if (asprintf(&msg, "process %s not found", params[1]) == -1) {
		respond_error(req, ERR_INTERNAL, "out of memory");
		return -1;
	}
	respond_error(req, ERR_NOT_FOUND, msg);
	free(msg);
	return -1;
}

void
process_ref_put(struct msgw *w, char **params)
{
	struct process_ref	 ref = { params[0], params[1] };

	msgw_init(w);
	msg_put_process_ref(w, &ref);
}

/* One PROCESS_INFO (or MSG_ERROR) as the whole answer. */
static int
reply_process(struct apid_request *ar, struct imsg *imsg, int created)
{
	struct process_info	 pi;
	json_object		*o;

	if (imsg->hdr.type == MSG_ERROR) {
		reply_error_msg(ar->req, imsg);
		return APID_REPLY_DONE;
	}
	if (imsg->hdr.type != MSG_PROCESS_INFO)
		peer_bad_message(&apid->parent, imsg, "wrong reply type");
	if (msg_get_process_info(imsg, &pi) == -1)
		peer_bad_message(&apid->parent, imsg, "malformed process");
	o = process_info_json(&pi);
	/* A retry with the same client_id found the first run: 200. */
	respond_json(ar->req, created && !pi.existed ? 201 : 200, o);
	json_object_put(o);
	process_info_free(&pi);
	return APID_REPLY_DONE;
}

static int
reply_process_created(struct apid_request *ar, struct imsg *imsg)
{
	return reply_process(ar, imsg, 1);
}

static int
reply_process_200(struct apid_request *ar, struct imsg *imsg)
{
	return reply_process(ar, imsg, 0);
}

void
route_process_create(struct http_request *req, char **params)
{
	struct process_request	 p;
	struct body_error	 e;
	struct msgw		 w;
	const void		*data;
	size_t			 len;

	data = body_bytes(req, &len);
	if (body_parse_process(body_ctype(req), data, len, &p, &e) == -1) {
		body_respond_error(req, &e);
		return;
	}
	if (sandbox_id_check(req, params[0]) == -1) {
		process_request_free(&p);
		return;
	}
	if ((p.sandbox_id = strdup(params[0])) == NULL) {
		respond_error(req, ERR_INTERNAL, "out of memory");
		process_request_free(&p);
		return;
	}
	msgw_init(&w);
	msg_put_process_request(&w, &p);
	process_request_free(&p);
	route_forward(req, MSG_PROCESS_START, &w, reply_process_created, NULL);
}

static json_object *
list_item(struct imsg *imsg)
{
	struct process_info	 pi;
	json_object		*o;

	if (msg_get_process_info(imsg, &pi) == -1)
		return NULL;
	o = process_info_json(&pi);
	process_info_free(&pi);
	return o;
}

/* PROCESS_INFO per process, in the order they were started, then END. */
static int
list_reply(struct apid_request *ar, struct imsg *imsg)
{
	static const struct reply_list_kind	 k = { MSG_PROCESS_INFO,
	    MSG_PROCESS_LIST_END, "processes", list_item,
	    "malformed process" };

	return reply_list(ar, imsg, &k);
}

void
route_process_list(struct http_request *req, char **params)
{
	json_object	*list;
	struct msgw	 w;

	if (sandbox_id_check(req, params[0]) == -1)
		return;
	msgw_init(&w);
	msg_put_string(&w, params[0]);
	list = json_object_new_array();
	if (apid_request_send(req, MSG_PROCESS_LIST, &w, -1, list_reply,
	    list) == NULL) {
		json_object_put(list);
		respond_error(req, ERR_INTERNAL, "cannot reach managerd");
	}
}

void
route_process_get(struct http_request *req, char **params)
{
	struct msgw	 w;

	if (process_ref_check(req, params) == -1)
		return;
	process_ref_put(&w, params);
	route_forward(req, MSG_PROCESS_GET, &w, reply_process_200, NULL);
}

void
route_process_delete(struct http_request *req, char **params)
{
	struct msgw	 w;

	if (process_ref_check(req, params) == -1)
		return;
	process_ref_put(&w, params);
	route_forward(req, MSG_PROCESS_DELETE, &w, reply_no_content, NULL);
}

void
route_process_signal(struct http_request *req, char **params)
{
	struct process_signal	 s;
	struct body_error	 e;
	struct msgw		 w;
	const void		*data;
	size_t			 len;

	/* The body is validated first, as FastAPI does before the ids. */
	data = body_bytes(req, &len);
	if (body_parse_signal(body_ctype(req), data, len, &s.signo, &e) ==
	    -1) {
		body_respond_error(req, &e);
		return;
	}
	if (process_ref_check(req, params) == -1)
		return;
	s.ref.sandbox_id = params[0];
	s.ref.process_id = params[1];
	msgw_init(&w);
	msg_put_process_signal(&w, &s);
	route_forward(req, MSG_PROCESS_SIGNAL, &w, reply_no_content, NULL);
}

void
route_process_resize(struct http_request *req, char **params)
{
	struct process_resize	 s;
	struct body_error	 e;
	struct msgw		 w;
	const void		*data;
	size_t			 len;

	data = body_bytes(req, &len);
	if (body_parse_resize(body_ctype(req), data, len, &s.cols, &s.rows,
	    &e) == -1) {
		body_respond_error(req, &e);
		return;
	}
	if (process_ref_check(req, params) == -1)
		return;
	s.ref.sandbox_id = params[0];
	s.ref.process_id = params[1];
	msgw_init(&w);
	msg_put_process_resize(&w, &s);
	route_forward(req, MSG_PROCESS_RESIZE, &w, reply_no_content, NULL);
}
