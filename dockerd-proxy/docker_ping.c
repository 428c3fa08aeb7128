/* GET /_ping: is the Docker daemon there and answering? */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "docker_http.h"
#include "log.h"
#include "proxy.h"

#define PING_MAX_BODY	256

struct ping {
	struct proxy	*px;
	uint32_t	 peerid;
};

static void
ping_done(struct docker_request *req, enum docker_http_error error,
    const struct docker_response *resp, void *arg)
{
	struct ping	*ping = arg;
	struct peer	*parent = &ping->px->parent;
	struct msgw	 w;

	if (error != DOCKER_HTTP_OK && docker_request_errno(req) != 0)
		peer_send_error(parent, ping->peerid,
		    docker_http_error_kind(error),
		    "Docker is unreachable: %s: %s",
		    docker_http_strerror(error),
		    strerror(docker_request_errno(req)));
	else if (error != DOCKER_HTTP_OK)
		peer_send_error(parent, ping->peerid,
		    docker_http_error_kind(error),
		    "Docker is unreachable: %s", docker_http_strerror(error));
	else if (resp->status != 200)
		peer_send_error(parent, ping->peerid, ERR_BACKEND,
		    "Docker is unreachable: _ping answered HTTP %d",
		    resp->status);
	else {
		msgw_init(&w);
		msgw_str(&w, "docker");
		peer_send(parent, MSG_DOCKER_PONG, ping->peerid, -1, &w);
	}
	free(ping);
}

void
docker_ping(struct proxy *px, uint32_t peerid)
{
	struct docker_request_spec	 spec;
	struct ping			*ping;

	if ((ping = malloc(sizeof(*ping))) == NULL) {
		peer_send_error(&px->parent, peerid, ERR_INTERNAL,
		    "out of memory");
		return;
	}
	ping->px = px;
	ping->peerid = peerid;
	memset(&spec, 0, sizeof(spec));
	spec.method = "GET";
	spec.path = "/v1.41/_ping";
	spec.max_body = PING_MAX_BODY;
	spec.on_done = ping_done;
	spec.arg = ping;
	spec.deadline_ms = DOCKER_DEADLINE_PING_MS;
	if (docker_request_new(px->base, px->settings.docker_endpoint,
	    &spec) == NULL) {
		peer_send_error(&px->parent, peerid,
		    docker_start_error_kind(errno),
		    "Docker is unreachable: cannot start a request: %s",
		    strerror(errno));
		free(ping);
	}
}
