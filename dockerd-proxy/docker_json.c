/*
 * Reading Docker's JSON answers: bodies are already capped by the HTTP
 * client (max_body); here they are parsed with json-c, error messages are
 * pulled out, and labels are checked for ownership.
 */
#include <stdio.h>
#include <string.h>

#include "docker_http.h"
#include "log.h"
#include "proxy.h"

/* How much of a non-JSON error body goes into a message. */
#define ERROR_TEXT_MAX	512

json_object *
docker_json_parse(const struct docker_response *resp)
{
	json_tokener	*tok;
	json_object	*obj;

	if (resp == NULL || resp->body == NULL || resp->body_len == 0 ||
	    resp->body_len > INT32_MAX)
		return NULL;
	if ((tok = json_tokener_new()) == NULL)
		return NULL;
	obj = json_tokener_parse_ex(tok, (const char *)resp->body,
	    (int)resp->body_len);
	if (json_tokener_get_error(tok) != json_tokener_success) {
		json_object_put(obj);
		obj = NULL;
	}
	json_tokener_free(tok);
	return obj;
}

const char *
json_get_string(json_object *obj, const char *key)
{
	json_object	*v;

	if (obj == NULL || !json_object_is_type(obj, json_type_object) ||
	    !json_object_object_get_ex(obj, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

/* Control characters would break a log line; Docker sends none anyway. */
static void
copy_printable(char *dst, size_t len, const char *src, size_t srclen)
{
	size_t	 i, n = 0;

	for (i = 0; i < srclen && src[i] != '\0' && n + 1 < len; i++) {
		if (src[i] == '\n' || src[i] == '\r')
			break;
		dst[n++] = ((unsigned char)src[i] < ' ' || src[i] == 0x7f) ?
		    ' ' : src[i];
	}
	/* Docker's messages end in a newline or a space now and then. */
	while (n > 0 && dst[n - 1] == ' ')
		n--;
	dst[n] = '\0';
}

void
docker_error_message(const struct docker_response *resp, char *buf,
    size_t len)
{
	json_object	*obj;
	const char	*msg;
	size_t		 n;

	if (len == 0)
		return;
	buf[0] = '\0';
	if ((obj = docker_json_parse(resp)) != NULL) {
		if ((msg = json_get_string(obj, "message")) != NULL)
			copy_printable(buf, len, msg, strlen(msg));
		json_object_put(obj);
	}
	if (buf[0] == '\0' && resp != NULL && resp->body != NULL) {
		n = resp->body_len < ERROR_TEXT_MAX ? resp->body_len :
		    ERROR_TEXT_MAX;
		copy_printable(buf, len, (const char *)resp->body, n);
	}
	if (buf[0] == '\0')
		snprintf(buf, len, "HTTP %d", resp != NULL ? resp->status : 0);
}

/*
 * A streamed answer's line (a pull's, an import's) that says it failed:
 * {"error": ...} or {"errorDetail": {"message": ...}}; else NULL.
 */
const char *
docker_stream_error(json_object *obj)
{
	json_object	*detail;
	const char	*msg;

	msg = json_get_string(obj, "error");
	if (msg == NULL && json_object_object_get_ex(obj, "errorDetail",
	    &detail))
		msg = json_get_string(detail, "message");
	return msg;
}

int
labels_are_ours(json_object *labels, const char *id, const char *instance_id)
{
	const char	*managed, *label_id, *instance;

	managed = json_get_string(labels, LABEL_MANAGED);
	label_id = json_get_string(labels, LABEL_ID);
	instance = json_get_string(labels, LABEL_INSTANCE);
	return managed != NULL && strcmp(managed, "true") == 0 &&
	    label_id != NULL && strcmp(label_id, id) == 0 &&
	    instance != NULL && strcmp(instance, instance_id) == 0;
}

void
refuse_not_ours(const char *op, const char *name, char *text, size_t len)
{
	snprintf(text, len, "refusing to %s %s: not managed by this server",
	    op, name);
	log_warnx("%s", text);
}
