/*
 * Requests from apid.  apid is the least trusted of our processes (it
 * parses everything clients send), so every message is checked again here:
 * a payload that does not decode is fatal, a value out of bounds is an
 * error answer (the handlers check those).
 */
#include <stdlib.h>

#include "archive_msg.h"
#include "log.h"
#include "managerd.h"

struct health_call {
	uint32_t	 apid_id;
};

static void
health_done(struct imsg *reply, void *arg)
{
	struct health_call	*hc = arg;
	struct msgw		 w;
	struct msgr		 r;
	char			*backend;

	if (reply->hdr.type == MSG_ERROR) {
		relay_error(reply, hc->apid_id);
		free(hc);
		return;
	}
	/* The broker names its backend; managerd knows no Docker details. */
	msgr_init(&r, reply);
	backend = msgr_str(&r, 64);
	if (msgr_end(&r) == -1 || backend == NULL)
		peer_bad_message(&env->proxy_peer, reply, "malformed pong");
	msgw_init(&w);
	msgw_str(&w, backend);
	apid_reply(hc->apid_id, MSG_HEALTH_RESULT, &w);
	free(backend);
	free(hc);
}

static void
apid_health(struct peer *p, struct imsg *imsg)
{
	struct health_call	*hc;

	if (imsg->len != 0)
		peer_bad_message(p, imsg, "unexpected payload");
	if ((hc = malloc(sizeof(*hc))) == NULL) {
		apid_error(imsg->hdr.peerid, ERR_INTERNAL, "out of memory");
		return;
	}
	hc->apid_id = imsg->hdr.peerid;
	if (proxy_call(MSG_DOCKER_PING, -1, NULL, 0, MSG_DOCKER_PONG,
	    health_done, hc) == 0) {
		apid_error(hc->apid_id, ERR_INTERNAL,
		    "cannot reach dockerd-proxy");
		free(hc);
	}
}

static void
apid_create(struct peer *p, struct imsg *imsg)
{
	struct create_request	 req;

	if (msg_get_create_request(imsg, &req) == -1)
		peer_bad_message(p, imsg, "malformed create request");
	sandbox_create(imsg->hdr.peerid, &req);
	create_request_free(&req);
}

static void
apid_list(struct peer *p, struct imsg *imsg)
{
	struct label_filter	 f;

	if (msg_get_label_filter(imsg, &f) == -1)
		peer_bad_message(p, imsg, "malformed label filter");
	sandbox_list(imsg->hdr.peerid, &f);
}

static void
apid_patch(struct peer *p, struct imsg *imsg)
{
	struct label_patch	 patch;

	if (msg_get_label_patch(imsg, &patch) == -1)
		peer_bad_message(p, imsg, "malformed label patch");
	sandbox_patch(imsg->hdr.peerid, &patch);
}

/* GET, DELETE, STATS: the payload is the sandbox id as the client gave it. */
static void
apid_by_id(struct peer *p, struct imsg *imsg)
{
	char	*id;

	if ((id = msg_get_string(imsg, MSG_MAX_ID)) == NULL)
		peer_bad_message(p, imsg, "malformed sandbox id");
	if (imsg->hdr.type == MSG_SANDBOX_GET)
		sandbox_get(imsg->hdr.peerid, id);
	else if (imsg->hdr.type == MSG_SANDBOX_STATS)
		sandbox_stats(imsg->hdr.peerid, id);
	else if (imsg->hdr.type == MSG_NETWORK_GET)
		network_get(imsg->hdr.peerid, id);
	else if (imsg->hdr.type == MSG_NETWORK_LOG)
		network_log(imsg->hdr.peerid, id);
	else
		sandbox_delete(imsg->hdr.peerid, id);
	free(id);
}

/* PUT .../network: the id, then the policy's JSON text (network.c). */
static void
apid_network_put(struct peer *p, struct imsg *imsg)
{
	struct msgr	 r;
	char		*id, *text;

	msgr_init(&r, imsg);
	id = msgr_str(&r, MSG_MAX_ID);
	text = msgr_str(&r, EGRESS_POLICY_TEXT_MAX);
	if (msgr_end(&r) == -1 || id == NULL || text == NULL) {
		free(id);
		free(text);
		peer_bad_message(p, imsg, "malformed network request");
	}
	network_put(imsg->hdr.peerid, id, text);
	free(id);
	free(text);
}

static void
apid_timeout(struct peer *p, struct imsg *imsg)
{
	struct msgr	 r;
	char		*id;
	int64_t		 secs;

	msgr_init(&r, imsg);
	id = msgr_str(&r, MSG_MAX_ID);
	secs = msgr_i64(&r);
	if (msgr_end(&r) == -1 || id == NULL)
		peer_bad_message(p, imsg, "malformed timeout request");
	sandbox_set_timeout(imsg->hdr.peerid, id, secs);
	free(id);
}

static void
apid_exec(struct peer *p, struct imsg *imsg)
{
	struct exec_request	 req;

	if (imsg->fd == -1)
		peer_bad_message(p, imsg, "no output pipe");
	if (msg_get_exec_request(imsg, &req) == -1)
		peer_bad_message(p, imsg, "malformed exec request");
	exec_start(imsg->hdr.peerid, &req, imsg_take_fd(imsg));
	exec_request_free(&req);
}

static void
apid_exec_cancel(struct peer *p, struct imsg *imsg)
{
	if (imsg->len != 0)
		peer_bad_message(p, imsg, "unexpected payload");
	exec_cancel(imsg->hdr.peerid);
}

static void
apid_file(struct peer *p, struct imsg *imsg)
{
	struct file_request	 req;

	if (imsg->fd == -1)
		peer_bad_message(p, imsg, "no pipe");
	if (msg_get_file_request(imsg, &req) == -1)
		peer_bad_message(p, imsg, "malformed file request");
	if (imsg->hdr.type == MSG_FILE_READ) {
		if (req.path == NULL)
			peer_bad_message(p, imsg, "no path to read");
		file_read(imsg->hdr.peerid, &req, imsg_take_fd(imsg));
	} else
		file_list(imsg->hdr.peerid, &req, imsg_take_fd(imsg));
	file_request_free(&req);
}

/* The two-phase upload decodes its own messages. */
static void
apid_upload(struct peer *p, struct imsg *imsg)
{
	if (imsg->hdr.type == MSG_FILE_WRITE_BEGIN)
		file_write_begin(p, imsg);
	else if (imsg->hdr.type == MSG_FILE_WRITE_COMMIT)
		file_write_commit(p, imsg);
	else
		file_write_abort(p, imsg);
}

static void
apid_snapshot_create(struct peer *p, struct imsg *imsg)
{
	struct snapshot_create	 req;

	if (imsg->fd == -1)
		peer_bad_message(p, imsg, "no pipe");
	if (msg_get_snapshot_create(imsg, &req) == -1)
		peer_bad_message(p, imsg, "malformed snapshot request");
	snapshot_create(imsg->hdr.peerid, &req, imsg_take_fd(imsg));
	snapshot_create_free(&req);
}

static void
apid_snapshot_written(struct peer *p, struct imsg *imsg)
{
	struct tar_result	 res;

	if (msg_get_tar_result(imsg, &res) == -1)
		peer_bad_message(p, imsg, "malformed tar result");
	if (imsg->hdr.type == MSG_SNAPSHOT_RETRY) {
		if (imsg->fd == -1 || res.errnum != JOB_NEEDS_REWRITE)
			peer_bad_message(p, imsg, "a retry needs a pipe and "
			    "the copy's reason");
		snapshot_retry(imsg->hdr.peerid, &res, imsg_take_fd(imsg));
	} else
		snapshot_written(imsg->hdr.peerid, &res);
	tar_result_free(&res);
}

static void
apid_snapshot_list(struct peer *p, struct imsg *imsg)
{
	char	*sandbox_id;

	if (msg_get_snapshot_list(imsg, &sandbox_id) == -1)
		peer_bad_message(p, imsg, "malformed snapshot list request");
	snapshot_list(imsg->hdr.peerid, sandbox_id);
	free(sandbox_id);
}

static void
apid_snapshot_by_id(struct peer *p, struct imsg *imsg)
{
	char	*id;

	if ((id = msg_get_string(imsg, MSG_MAX_ID)) == NULL)
		peer_bad_message(p, imsg, "malformed snapshot id");
	if (imsg->hdr.type == MSG_SNAPSHOT_GET)
		snapshot_get(imsg->hdr.peerid, id);
	else
		snapshot_delete(imsg->hdr.peerid, id);
	free(id);
}

static void
apid_rollback(struct peer *p, struct imsg *imsg)
{
	struct rollback_request	 req;

	if (msg_get_rollback_request(imsg, &req) == -1)
		peer_bad_message(p, imsg, "malformed rollback request");
	sandbox_rollback(imsg->hdr.peerid, &req);
	rollback_request_free(&req);
}

static void
apid_fork(struct peer *p, struct imsg *imsg)
{
	struct fork_request	 req;

	if (msg_get_fork_request(imsg, &req) == -1)
		peer_bad_message(p, imsg, "malformed fork request");
	snapshot_fork(imsg->hdr.peerid, &req);
	fork_request_free(&req);
}

static void
apid_process_start(struct peer *p, struct imsg *imsg)
{
	struct process_request	 req;

	if (msg_get_process_request(imsg, &req) == -1)
		peer_bad_message(p, imsg, "malformed process request");
	process_start(imsg->hdr.peerid, &req, imsg->data, imsg->len);
	process_request_free(&req);
}

/* LIST names a sandbox; GET and DELETE a process. */
static void
apid_process_ref(struct peer *p, struct imsg *imsg)
{
	struct process_ref	 ref;
	char			*id;

	if (imsg->hdr.type == MSG_PROCESS_LIST) {
		if ((id = msg_get_string(imsg, MSG_MAX_ID)) == NULL)
			peer_bad_message(p, imsg, "malformed sandbox id");
		process_list(imsg->hdr.peerid, id);
		free(id);
		return;
	}
	if (msg_get_process_ref(imsg, &ref) == -1)
		peer_bad_message(p, imsg, "malformed process ref");
	if (imsg->hdr.type == MSG_PROCESS_GET)
		process_get(imsg->hdr.peerid, &ref);
	else
		process_delete(imsg->hdr.peerid, &ref);
	process_ref_free(&ref);
}

/* OUTPUT and STDIN bring their pipe. */
static void
apid_process_pipe(struct peer *p, struct imsg *imsg)
{
	struct process_output	 o;
	struct process_stdin	 s;

	if (imsg->fd == -1)
		peer_bad_message(p, imsg, "no pipe");
	if (imsg->hdr.type == MSG_PROCESS_OUTPUT) {
		if (msg_get_process_output(imsg, &o) == -1)
			peer_bad_message(p, imsg, "malformed output request");
		process_output(imsg->hdr.peerid, &o, imsg_take_fd(imsg));
		process_ref_free(&o.ref);
		return;
	}
	if (msg_get_process_stdin(imsg, &s) == -1)
		peer_bad_message(p, imsg, "malformed stdin request");
	process_stdin(imsg->hdr.peerid, &s, imsg_take_fd(imsg));
	process_ref_free(&s.ref);
}

static void
apid_process_control(struct peer *p, struct imsg *imsg)
{
	struct process_signal	 s;
	struct process_resize	 r;

	if (imsg->hdr.type == MSG_PROCESS_SIGNAL) {
		if (msg_get_process_signal(imsg, &s) == -1)
			peer_bad_message(p, imsg, "malformed signal request");
		process_signal(imsg->hdr.peerid, &s);
		process_ref_free(&s.ref);
		return;
	}
	if (msg_get_process_resize(imsg, &r) == -1)
		peer_bad_message(p, imsg, "malformed resize request");
	process_resize(imsg->hdr.peerid, &r);
	process_ref_free(&r.ref);
}

/* Requests that bring a descriptor with them. */
static int
carries_fd(uint32_t type)
{
	switch (type) {
	case MSG_EXEC_START:
	case MSG_FILE_READ:
	case MSG_FILE_LIST:
	case MSG_SNAPSHOT_CREATE:
	case MSG_SNAPSHOT_RETRY:
	case MSG_PROCESS_OUTPUT:
	case MSG_PROCESS_STDIN:
		return 1;
	default:
		return 0;
	}
}

/*
 * From here on a request's id is managerd's (apid_request.c): a new
 * request gets one, a follow-up names the request it follows by it.
 * -1: the message is done with (a new request already refused).
 */
static int
request_id(struct peer *p, struct imsg *imsg)
{
	uint32_t	 id;

	if (imsg->hdr.type != MSG_CALLER && !apid_request_opens(imsg->hdr.type))
		apid_request_no_caller(p, imsg);
	switch (imsg->hdr.type) {
	case MSG_CALLER:
		apid_request_caller_take(p, imsg);
		break;
	case MSG_READY:
	case MSG_CHANNEL_AGAIN:
	case MSG_TAR_CHECKED:	/* a reply to one of our calls: our id */
		break;
	case MSG_EXEC_CANCEL:
		/* 0 if the command ended meanwhile: nothing to cancel. */
		imsg->hdr.peerid = apid_request_find(imsg->hdr.peerid);
		break;
	case MSG_FILE_WRITE_COMMIT:
	case MSG_FILE_WRITE_ABORT:
		/* An upload that waits for its body names itself by its id. */
		if ((id = apid_request_find(imsg->hdr.peerid)) == 0)
			peer_bad_message(p, imsg, "no upload has that id");
		imsg->hdr.peerid = id;
		break;
	case MSG_SNAPSHOT_WRITTEN:
	case MSG_SNAPSHOT_RETRY:
		/* Our final reply waits for it: the request is still open. */
		if ((id = apid_request_find(imsg->hdr.peerid)) == 0)
			fatalx("bad %s message from apid: no snapshot is being "
			    "written for request %u",
			    msg_type_name(imsg->hdr.type), imsg->hdr.peerid);
		imsg->hdr.peerid = id;
		break;
	default:
		if ((imsg->hdr.peerid = apid_request_open(p, imsg)) == 0)
			return -1;
		break;
	}
	return 0;
}

/*
 * We were out of descriptors when apid passed the request's pipe: the
 * request fails, not apid.  An upload that waited for its body ends.
 */
static void
apid_fd_lost(struct peer *p, struct imsg *imsg)
{
	log_warnx("%s %u: its descriptor was dropped: out of descriptors",
	    msg_type_name(imsg->hdr.type), imsg->hdr.peerid);
	if (imsg->hdr.type == MSG_SNAPSHOT_RETRY)
		snapshot_retry_lost(imsg->hdr.peerid);
	else
		apid_error(imsg->hdr.peerid, ERR_UNAVAILABLE,
		    "managerd is out of descriptors; try again");
}

void
dispatch_apid(struct peer *p, struct imsg *imsg)
{
	if ((imsg->fd != -1 || imsg->fd_lost) && !carries_fd(imsg->hdr.type))
		peer_bad_message(p, imsg, "unexpected descriptor");
	if (request_id(p, imsg) == -1)
		return;
	if (imsg->fd_lost) {
		apid_fd_lost(p, imsg);
		return;
	}
	switch (imsg->hdr.type) {
	case MSG_READY:
		child_ready(CHILD_APID, imsg);
		break;
	case MSG_CHANNEL_AGAIN:
		worker_channel_again(p, imsg);
		break;
	case MSG_CALLER:	/* kept for its request (request_id) */
		break;
	case MSG_HEALTH_REQUEST:
		apid_health(p, imsg);
		break;
	case MSG_METRICS_REQUEST:
		metrics_scrape(p, imsg);
		break;
	case MSG_SANDBOX_CREATE:
		apid_create(p, imsg);
		break;
	case MSG_SANDBOX_LIST:
		apid_list(p, imsg);
		break;
	case MSG_SANDBOX_GET:
	case MSG_SANDBOX_DELETE:
	case MSG_SANDBOX_STATS:
	case MSG_NETWORK_GET:
	case MSG_NETWORK_LOG:
		apid_by_id(p, imsg);
		break;
	case MSG_NETWORK_PUT:
		apid_network_put(p, imsg);
		break;
	case MSG_SANDBOX_TIMEOUT:
		apid_timeout(p, imsg);
		break;
	case MSG_SANDBOX_PATCH:
		apid_patch(p, imsg);
		break;
	case MSG_EXEC_START:
		apid_exec(p, imsg);
		break;
	case MSG_EXEC_CANCEL:
		apid_exec_cancel(p, imsg);
		break;
	case MSG_FILE_READ:
	case MSG_FILE_LIST:
		apid_file(p, imsg);
		break;
	case MSG_FILE_WRITE_BEGIN:
	case MSG_FILE_WRITE_COMMIT:
	case MSG_FILE_WRITE_ABORT:
		apid_upload(p, imsg);
		break;
	case MSG_SNAPSHOT_CREATE:
		apid_snapshot_create(p, imsg);
		break;
	case MSG_SNAPSHOT_WRITTEN:
	case MSG_SNAPSHOT_RETRY:
		apid_snapshot_written(p, imsg);
		break;
	case MSG_SNAPSHOT_LIST:
		apid_snapshot_list(p, imsg);
		break;
	case MSG_SNAPSHOT_GET:
	case MSG_SNAPSHOT_DELETE:
		apid_snapshot_by_id(p, imsg);
		break;
	case MSG_SANDBOX_ROLLBACK:
		apid_rollback(p, imsg);
		break;
	case MSG_SNAPSHOT_FORK:
		apid_fork(p, imsg);
		break;
	case MSG_TAR_CHECKED:
		apid_call_reply(p, imsg);
		break;
	case MSG_PROCESS_START:
		apid_process_start(p, imsg);
		break;
	case MSG_PROCESS_LIST:
	case MSG_PROCESS_GET:
	case MSG_PROCESS_DELETE:
		apid_process_ref(p, imsg);
		break;
	case MSG_PROCESS_OUTPUT:
	case MSG_PROCESS_STDIN:
		apid_process_pipe(p, imsg);
		break;
	case MSG_PROCESS_SIGNAL:
	case MSG_PROCESS_RESIZE:
		apid_process_control(p, imsg);
		break;
	default:
		peer_bad_message(p, imsg, "not a request apid may make");
	}
}
