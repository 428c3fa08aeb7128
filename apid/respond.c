/*
 * Writing responses: compact JSON bodies, and the error envelope
 * {"error":{"code":...,"message":...}}.  The mapping from error kinds to
 * HTTP statuses and codes lives here, in one table.
 */
#include <sys/queue.h>

#include <event2/buffer.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apid.h"
#include "log.h"

static const struct {
	enum error_kind	 kind;
	int		 status;
	const char	*code;
} error_table[] = {
	{ ERR_INVALID_REQUEST,	400, "invalid_request" },
	{ ERR_UNAUTHORIZED,	401, "unauthorized" },
	{ ERR_FORBIDDEN,	403, "forbidden" },
	{ ERR_NOT_FOUND,	404, "not_found" },
	{ ERR_CONFLICT,		409, "conflict" },
	{ ERR_PAYLOAD_TOO_LARGE, 413, "payload_too_large" },
	{ ERR_LIMIT_EXCEEDED,	429, "limit_exceeded" },
	{ ERR_INTERNAL,		500, "internal_error" },
	{ ERR_BACKEND,		502, "backend_error" },
	{ ERR_INSUFFICIENT_STORAGE, 507, "insufficient_storage" },
	{ ERR_UNAVAILABLE,	503, "unavailable" },
	{ ERR_TIMEOUT,		504, "backend_timeout" },
	{ ERR_QUOTA_EXCEEDED,	403, "quota_exceeded" },
};

const char *
respond_reason(int status)
{
	return http_reason(status);
}

void
respond_json(struct http_request *req, int status, json_object *obj)
{
	struct evbuffer	*buf;
	const char	*text;
	size_t		 len;

	text = json_object_to_json_string_length(obj,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
	if ((buf = evbuffer_new()) == NULL || text == NULL ||
	    evbuffer_add(buf, text, len) == -1) {
		log_warnx("%s: out of memory", __func__);
		if (buf != NULL)
			evbuffer_free(buf);
		http_reply_abort(req);
		return;
	}
	http_reply(req, status, "application/json", buf);
	evbuffer_free(buf);
}

/* A body already built (exec results), with its content type. */
void
respond_buffer(struct http_request *req, int status,
    const char *content_type, struct evbuffer *buf)
{
	http_reply(req, status, content_type, buf);
}

/*
 * A descriptor or another local resource the request needed is not
 * there: out of descriptors is 503 (the client may try again), anything
 * else ours.  The text says what could not be done and why.
 */
void
respond_errno(struct http_request *req, int errnum, const char *what)
{
	char	 msg[256];

	if (descriptor_error(errnum, 0) == ERR_UNAVAILABLE)
		snprintf(msg, sizeof(msg), "%s: apid is out of descriptors; "
		    "try again", what);
	else
		snprintf(msg, sizeof(msg), "%s: %s", what, strerror(errnum));
	respond_error(req, descriptor_error(errnum, ERR_INTERNAL), msg);
}

void
respond_error_status(struct http_request *req, int status, const char *code,
    const char *message)
{
	json_object	*root, *err;
	char		*text;
	size_t		 len;

	/* A message may name a path with any bytes: JSON carries U+FFFD. */
	if ((text = utf8_repair(message, strlen(message), &len)) == NULL) {
		http_reply_abort(req);
		return;
	}
	root = json_object_new_object();
	err = json_object_new_object();
	json_object_object_add(err, "code", json_object_new_string(code));
	json_object_object_add(err, "message",
	    json_object_new_string_len(text, (int)len));
	free(text);
	json_object_object_add(root, "error", err);
	if (status == 401)
		http_add_field(req, "WWW-Authenticate", "Bearer");
	respond_json(req, status, root);
	json_object_put(root);
}

void
respond_error(struct http_request *req, enum error_kind kind,
    const char *message)
{
	size_t	 i;

	for (i = 0; i < sizeof(error_table) / sizeof(error_table[0]); i++) {
		if (error_table[i].kind == kind) {
			respond_error_status(req, error_table[i].status,
			    error_table[i].code, message);
			return;
		}
	}
	respond_error_status(req, 500, "internal_error", message);
}

/*
 * Answer with the MSG_ERROR managerd sent.  Returns -1 if the message is
 * malformed (the caller treats that as a protocol violation).
 */
int
respond_error_imsg(struct http_request *req, struct imsg *imsg)
{
	struct msgr	 r;
	uint32_t	 kind;
	char		*text;

	msgr_init(&r, imsg);
	kind = msgr_u32(&r);
	text = msgr_str(&r, MSG_MAX_STRING);
	if (msgr_end(&r) == -1 || text == NULL || kind < ERR_INVALID_REQUEST ||
	    kind > ERR_KIND_MAX) {
		free(text);
		return -1;
	}
	respond_error(req, kind, text);
	free(text);
	return 0;
}

void
respond_end(struct http_request *req, int reply_started)
{
	if (reply_started)
		http_reply_end(req);
	else
		http_reply_abort(req);
}
