/*
 * Forwarding a request to managerd and the replies that several routes
 * answer alike: MSG_ERROR as the error envelope, one SANDBOX_INFO as a
 * Sandbox object (API.md §3.3), a list of items and its end as one JSON
 * object, MSG_OK as 204 No Content.
 */
#include <sys/queue.h>


#include "apid.h"

void
route_forward(struct http_request *req, uint32_t type, struct msgw *w,
    apid_reply_cb reply, void *arg)
{
	if (w != NULL && w->overflow) {
		respond_error(req, ERR_INVALID_REQUEST,
		    "request too large to forward");
		return;
	}
	if (apid_request_send(req, type, w, -1, reply, arg) == NULL)
		respond_error(req, ERR_INTERNAL, "cannot reach managerd");
}

void
reply_error_msg(struct http_request *req, struct imsg *imsg)
{
	if (respond_error_imsg(req, imsg) == -1)
		peer_bad_message(&apid->parent, imsg, "malformed error");
}

static int
reply_sandbox(struct apid_request *ar, struct imsg *imsg, int status)
{
	struct sandbox_info	 si;
	json_object		*o;

	if (imsg->hdr.type == MSG_ERROR) {
		reply_error_msg(ar->req, imsg);
		return APID_REPLY_DONE;
	}
	if (imsg->hdr.type != MSG_SANDBOX_INFO)
		peer_bad_message(&apid->parent, imsg, "wrong reply type");
	if (msg_get_sandbox_info(imsg, &si) == -1)
		peer_bad_message(&apid->parent, imsg, "malformed sandbox");
	o = sandbox_info_json(&si);
	respond_json(ar->req, status, o);
	json_object_put(o);
	sandbox_info_free(&si);
	return APID_REPLY_DONE;
}

int
reply_sandbox_200(struct apid_request *ar, struct imsg *imsg)
{
	return reply_sandbox(ar, imsg, 200);
}

int
reply_sandbox_201(struct apid_request *ar, struct imsg *imsg)
{
	return reply_sandbox(ar, imsg, 201);
}

int
reply_list(struct apid_request *ar, struct imsg *imsg,
    const struct reply_list_kind *k)
{
	json_object	*list = ar->arg, *root, *o;

	if (imsg->hdr.type == k->item_type) {
		if ((o = k->item_json(imsg)) == NULL)
			peer_bad_message(&apid->parent, imsg, k->malformed);
		json_object_array_add(list, o);
		return APID_REPLY_MORE;
	}
	if (imsg->hdr.type == k->end_type) {
		if (imsg->len != 0)
			peer_bad_message(&apid->parent, imsg, "not empty");
		root = json_object_new_object();
		json_object_object_add(root, k->key, list);
		respond_json(ar->req, 200, root);
		json_object_put(root);
		return APID_REPLY_DONE;
	}
	if (imsg->hdr.type != MSG_ERROR)
		peer_bad_message(&apid->parent, imsg, "wrong reply type");
	reply_error_msg(ar->req, imsg);
	json_object_put(list);
	return APID_REPLY_DONE;
}

int
reply_no_content(struct apid_request *ar, struct imsg *imsg)
{
	if (imsg->hdr.type == MSG_ERROR) {
		reply_error_msg(ar->req, imsg);
		return APID_REPLY_DONE;
	}
	if (imsg->hdr.type != MSG_OK || imsg->len != 0)
		peer_bad_message(&apid->parent, imsg, "wrong reply");
	http_reply(ar->req, 204, NULL, NULL);
	return APID_REPLY_DONE;
}
