/* GET /healthz: no authentication; asks the backend through managerd. */
#include <stdlib.h>

#include "apid.h"
#include "log.h"

static int
health_reply(struct apid_request *ar, struct imsg *imsg)
{
	struct msgr	 r;
	json_object	*obj;
	char		*backend;

	if (imsg->hdr.type == MSG_ERROR) {
		if (respond_error_imsg(ar->req, imsg) == -1)
			peer_bad_message(&apid->parent, imsg, "bad error");
		return APID_REPLY_DONE;
	}
	if (imsg->hdr.type != MSG_HEALTH_RESULT)
		peer_bad_message(&apid->parent, imsg, "wrong reply type");
	msgr_init(&r, imsg);
	backend = msgr_str(&r, 64);
	if (msgr_end(&r) == -1 || backend == NULL)
		peer_bad_message(&apid->parent, imsg, "malformed result");
	obj = json_object_new_object();
	json_object_object_add(obj, "status", json_object_new_string("ok"));
	json_object_object_add(obj, "backend", json_object_new_string(backend));
	json_object_object_add(obj, "version",
	    json_object_new_string(PACKAGE_VERSION));
	respond_json(ar->req, 200, obj);
	json_object_put(obj);
	free(backend);
	return APID_REPLY_DONE;
}

void
route_health(struct http_request *req, char **params)
{
	if (apid_request_send(req, MSG_HEALTH_REQUEST, NULL, -1,
	    health_reply, NULL) == NULL)
		respond_error(req, ERR_INTERNAL, "cannot reach managerd");
}
