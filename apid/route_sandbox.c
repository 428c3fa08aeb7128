/*
 * The sandbox routes (API.md §4.2-4.6): create, list, get, delete and
 * reset TTL.  apid validates the body's schema, managerd does the rest;
 * its SANDBOX_INFO replies become Sandbox objects (§3.3).
 */
#include <sys/queue.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "apid.h"
#include "format.h"
#include "log.h"

/* {} when there are none: a client may always read the field. */
static json_object *
labels_json(const struct label_list *l)
{
	json_object	*o = json_object_new_object();
	size_t		 i;

	for (i = 0; i < l->count; i++)
		json_object_object_add(o, l->keys[i],
		    json_object_new_string(l->values[i]));
	return o;
}

json_object *
sandbox_info_json(const struct sandbox_info *si)
{
	json_object	*o;
	const char	*reason;
	char		 num[FORMAT_PYFLOAT_LEN], ts[FORMAT_TIMESTAMP_LEN];

	o = json_object_new_object();
	json_object_object_add(o, "id", json_object_new_string(si->id));
	json_object_object_add(o, "status",
	    json_object_new_string(si->running ? "running" : "stopped"));
	reason = sandbox_reason_name(si->reason);
	json_object_object_add(o, "status_reason", reason != NULL ?
	    json_object_new_string(reason) : NULL);
	json_object_object_add(o, "image", json_object_new_string(si->image));
	format_pyfloat(si->cpus, num, sizeof(num));
	json_object_object_add(o, "cpus",
	    json_object_new_double_s(si->cpus, num));
	json_object_object_add(o, "memory_mb",
	    json_object_new_int64(si->memory_mb));
	json_object_object_add(o, "pids_limit",
	    json_object_new_int64(si->pids_limit));
	json_object_object_add(o, "network",
	    json_object_new_boolean(si->network));
	json_object_object_add(o, "read_only_rootfs",
	    json_object_new_boolean(si->read_only_rootfs));
	format_timestamp(si->created_at, ts, sizeof(ts));
	json_object_object_add(o, "created_at", json_object_new_string(ts));
	format_timestamp(si->expires_at, ts, sizeof(ts));
	json_object_object_add(o, "expires_at", json_object_new_string(ts));
	json_object_object_add(o, "source_snapshot_id",
	    si->source_snapshot_id != NULL ?
	    json_object_new_string(si->source_snapshot_id) : NULL);
	json_object_object_add(o, "labels", labels_json(&si->labels));
	return o;
}

/*
 * A path id longer than any message may carry names no sandbox; answer
 * as managerd would.
 */
int
sandbox_id_check(struct http_request *req, const char *id)
{
	char	*msg;

	if (strlen(id) <= MSG_MAX_ID)
		return 0;
	if (asprintf(&msg, "sandbox %s not found", id) == -1) {
		respond_error(req, ERR_INTERNAL, "out of memory");
		return -1;
	}
	respond_error(req, ERR_NOT_FOUND, msg);
	free(msg);
	return -1;
}

void
route_sandbox_create(struct http_request *req, char **params)
{
	struct create_request	 c;
	struct msgw		 w;

	if (body_read_create(req, &c) == -1)
		return;
	msgw_init(&w);
	msg_put_create_request(&w, &c);
	create_request_free(&c);
	route_forward(req, MSG_SANDBOX_CREATE, &w, reply_sandbox_201, NULL);
}

static json_object *
list_item(struct imsg *imsg)
{
	struct sandbox_info	 si;
	json_object		*o;

	if (msg_get_sandbox_info(imsg, &si) == -1)
		return NULL;
	o = sandbox_info_json(&si);
	sandbox_info_free(&si);
	return o;
}

/* SANDBOX_INFO per sandbox, then LIST_END. */
static int
list_reply(struct apid_request *ar, struct imsg *imsg)
{
	static const struct reply_list_kind	 k = { MSG_SANDBOX_INFO,
	    MSG_SANDBOX_LIST_END, "sandboxes", list_item,
	    "malformed sandbox" };

	return reply_list(ar, imsg, &k);
}

struct filter_parse {
	struct label_filter	 filter;
	char			*bad;		/* the value refused */
	size_t			 badlen;	/* NULs count */
	const char		*why;
	int			 errnum;
};

static int
filter_add(char *value, size_t len, void *arg)
{
	struct filter_parse	*fp = arg;
	int			 rc;

	rc = label_filter_parse(&fp->filter, value, len, &fp->why);
	if (rc == -1) {
		fp->errnum = errno;
		fp->bad = value;
		fp->badlen = len;
		return -1;
	}
	free(value);
	return 0;
}

/* ?label=k=v or ?label=k, repeated; 0, or -1 answered. */
static int
list_filter(struct http_request *req, struct label_filter *f)
{
	struct filter_parse	 fp;
	char			*repr, *msg = NULL;

	memset(&fp, 0, sizeof(fp));
	/* Bytes: %XX that is not UTF-8 is refused, not made U+FFFD. */
	if (query_each(req->query, "label", 0, filter_add, &fp) != -1) {
		*f = fp.filter;
		return 0;
	}
	label_filter_free(&fp.filter);
	if (fp.errnum == E2BIG && asprintf(&msg, "at most %d label filters "
	    "are supported", LABEL_FILTERS_MAX) == -1)
		msg = NULL;
	else if (fp.errnum == EINVAL && (repr = body_pyrepr(fp.bad,
	    fp.badlen)) != NULL) {
		if (asprintf(&msg, "invalid label filter %s: %s", repr,
		    fp.why) == -1)
			msg = NULL;
		free(repr);
	}
	if (msg != NULL)
		respond_error(req, ERR_INVALID_REQUEST, msg);
	else
		respond_error(req, ERR_INTERNAL, "out of memory");
	free(msg);
	free(fp.bad);
	return -1;
}

void
route_sandbox_list(struct http_request *req, char **params)
{
	struct label_filter	 f;
	struct msgw		 w;
	json_object		*list;

	if (list_filter(req, &f) == -1)
		return;
	msgw_init(&w);
	msg_put_label_filter(&w, &f);
	label_filter_free(&f);
	list = json_object_new_array();
	if (apid_request_send(req, MSG_SANDBOX_LIST, &w, -1, list_reply,
	    list) == NULL) {
		json_object_put(list);
		respond_error(req, ERR_INTERNAL, "cannot reach managerd");
	}
}

void
route_sandbox_get(struct http_request *req, char **params)
{
	struct msgw	 w;

	if (sandbox_id_check(req, params[0]) == -1)
		return;
	msgw_init(&w);
	msg_put_string(&w, params[0]);
	route_forward(req, MSG_SANDBOX_GET, &w, reply_sandbox_200, NULL);
}

void
route_sandbox_delete(struct http_request *req, char **params)
{
	struct msgw	 w;

	if (sandbox_id_check(req, params[0]) == -1)
		return;
	msgw_init(&w);
	msg_put_string(&w, params[0]);
	route_forward(req, MSG_SANDBOX_DELETE, &w, reply_no_content, NULL);
}

void
route_sandbox_timeout(struct http_request *req, char **params)
{
	struct msgw	 w;
	int64_t		 secs;

	/* FastAPI validates the body before the handler looks at the id. */
	if (body_read_timeout(req, &secs) == -1 ||
	    sandbox_id_check(req, params[0]) == -1)
		return;
	msgw_init(&w);
	msgw_str(&w, params[0]);
	msgw_i64(&w, secs);
	route_forward(req, MSG_SANDBOX_TIMEOUT, &w, reply_sandbox_200, NULL);
}

void
route_sandbox_patch(struct http_request *req, char **params)
{
	struct label_patch	 p;
	struct msgw		 w;

	/* As for a TTL reset: the body is checked before the id. */
	if (body_read_patch(req, &p) == -1)
		return;
	if (sandbox_id_check(req, params[0]) == -1) {
		label_patch_free(&p);
		return;
	}
	if ((p.id = strdup(params[0])) == NULL) {
		respond_error(req, ERR_INTERNAL, "out of memory");
		label_patch_free(&p);
		return;
	}
	msgw_init(&w);
	msg_put_label_patch(&w, &p);
	label_patch_free(&p);
	route_forward(req, MSG_SANDBOX_PATCH, &w, reply_sandbox_200, NULL);
}
