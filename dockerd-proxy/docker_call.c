/*
 * One buffered Docker request with an optional JSON body, and the mapping
 * of its failure to an error reply (API.md §11.9).  Every operation but
 * the exec stream goes through here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "docker_http.h"
#include "log.h"
#include "proxy.h"
#include "xmalloc.h"

struct call {
	docker_call_cb	 cb;
	void		*arg;
	int		 errnum;
};

static const struct docker_response	 no_response;

static void
call_done(struct docker_request *req, enum docker_http_error error,
    const struct docker_response *resp, void *arg)
{
	struct call		*call = arg;
	struct docker_result	 res;

	res.error = error;
	res.errnum = docker_request_errno(req);
	res.status = resp->status;
	res.resp = resp;
	call->cb(&res, call->arg);
	free(call);
}

/* The request could not start: report it from the loop all the same. */
static void
call_failed(evutil_socket_t fd, short what, void *arg)
{
	struct call		*call = arg;
	struct docker_result	 res;

	if (call->errnum == ENOMEM)
		res.error = DOCKER_HTTP_NOMEM;
	else if (docker_start_error_kind(call->errnum) == ERR_UNAVAILABLE)
		res.error = DOCKER_HTTP_BUSY;
	else
		res.error = DOCKER_HTTP_CONNECT;
	res.errnum = call->errnum;
	res.status = 0;
	res.resp = &no_response;
	call->cb(&res, call->arg);
	free(call);
}

void
docker_call_raw(struct proxy *px, const char *method, const char *path,
    const char *content_type, const void *body, size_t len, size_t max_body,
    docker_call_cb cb, void *arg)
{
	struct timeval	 now = { 0, 0 };
	struct call	*call;

	call = xcalloc(1, sizeof(*call));
	call->cb = cb;
	call->arg = arg;
	log_debug("docker %s %s", method, path);
	if (docker_request_start(px->base, px->settings.docker_endpoint, method,
	    path, content_type, body, len, max_body, NULL, call_done, call) !=
	    NULL)
		return;
	call->errnum = errno;
	if (event_base_once(px->base, -1, EV_TIMEOUT, call_failed, call,
	    &now) == -1)
		fatalx("%s: event_base_once", __func__);
}

void
docker_call(struct proxy *px, const char *method, const char *path,
    json_object *body, size_t max_body, docker_call_cb cb, void *arg)
{
	const char	*text = NULL;

	if (body != NULL && (text = json_object_to_json_string_ext(body,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)) == NULL)
		fatalx("%s: cannot serialize a request body", __func__);
	docker_call_raw(px, method, path, text != NULL ? "application/json" :
	    NULL, text, text != NULL ? strlen(text) : 0, max_body, cb, arg);
}

enum error_kind
docker_http_error_kind(int error)
{
	if (error == DOCKER_HTTP_TIMEOUT)
		return ERR_TIMEOUT;
	if (error == DOCKER_HTTP_BUSY)
		return ERR_UNAVAILABLE;
	return ERR_BACKEND;
}

/* Out of request slots or descriptors is for now; the rest is Docker's. */
enum error_kind
docker_start_error_kind(int errnum)
{
	if (errnum == EAGAIN)
		return ERR_UNAVAILABLE;
	return descriptor_error(errnum, ERR_BACKEND);
}

int
docker_result_answered(const struct docker_result *res)
{
	return res->error == DOCKER_HTTP_OK && res->status != 0;
}

static enum error_kind
result_error(const struct docker_result *res, const char *what, char *text,
    size_t len, int plain)
{
	char	 msg[1024];

	if (res->error != DOCKER_HTTP_OK) {
		if (res->errnum != 0)
			snprintf(text, len, "%s: %s: %s", what,
			    docker_http_strerror(res->error),
			    strerror(res->errnum));
		else
			snprintf(text, len, "%s: %s", what,
			    docker_http_strerror(res->error));
		/* No socket for the request: out of descriptors, for now. */
		if (docker_http_error_kind(res->error) == ERR_BACKEND)
			return descriptor_error(res->errnum, ERR_BACKEND);
		return docker_http_error_kind(res->error);
	}
	if (res->status == 404 && !plain) {
		snprintf(text, len, "%s: not found", what);
		return ERR_NOT_FOUND;
	}
	docker_error_message(res->resp, msg, sizeof(msg));
	snprintf(text, len, "%s: %s", what, msg);
	if (res->status >= 400 && res->status < 500)
		return ERR_INVALID_REQUEST;
	return ERR_BACKEND;
}

enum error_kind
docker_result_error(const struct docker_result *res, const char *what,
    char *text, size_t len)
{
	return result_error(res, what, text, len, 0);
}

/* The same, but a 404 is a 4xx like any other, with Docker's words. */
enum error_kind
docker_result_error_plain(const struct docker_result *res, const char *what,
    char *text, size_t len)
{
	return result_error(res, what, text, len, 1);
}
