/*
 * GET /openapi.json: the OpenAPI document (common/openapi.c), rendered
 * once at start-up and served without authentication, as /healthz is.
 */
#include <event2/buffer.h>

#include <stdlib.h>

#include "apid.h"
#include "log.h"
#include "openapi.h"

static char	*openapi_text;
static size_t	 openapi_len;

/* Before the seccomp filter: nothing changes it afterwards. */
void
route_openapi_init(void)
{
	if ((openapi_text = openapi_document(&openapi_len)) == NULL)
		fatalx("cannot build the OpenAPI document");
}

void
route_openapi(struct http_request *req, char **params)
{
	struct evbuffer	*buf;

	if (openapi_text == NULL || (buf = evbuffer_new()) == NULL) {
		respond_error(req, ERR_INTERNAL, "out of memory");
		return;
	}
	if (evbuffer_add_reference(buf, openapi_text, openapi_len, NULL,
	    NULL) == -1) {
		evbuffer_free(buf);
		respond_error(req, ERR_INTERNAL, "out of memory");
		return;
	}
	respond_buffer(req, 200, "application/json", buf);
	evbuffer_free(buf);
}
