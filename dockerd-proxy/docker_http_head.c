/*
 * Request heads for the Docker Engine API: the request line, Host,
 * User-Agent, Connection or Upgrade, and the body's headers, each value
 * checked so that nothing a caller passes can end a line early.
 */
#include <errno.h>
#include <string.h>

#include <event2/buffer.h>

#include "docker_http.h"

static int
valid_method(const char *method)
{
	size_t	 i;

	if (method[0] == '\0' || strlen(method) > 32)
		return 0;
	for (i = 0; method[i] != '\0'; i++)
		if (!docker_http_is_tchar((unsigned char)method[i]))
			return 0;
	return 1;
}

/* Visible ASCII only: no space, no control character, no 8-bit byte. */
static int
valid_path(const char *path)
{
	size_t	 i;

	if (path[0] != '/' || strlen(path) > DOCKER_HTTP_MAX_PATH)
		return 0;
	for (i = 0; path[i] != '\0'; i++)
		if (path[i] <= ' ' || path[i] >= 0x7f)
			return 0;
	return 1;
}

/* A header value: printable ASCII and spaces, nothing that ends a line. */
static int
valid_header_value(const char *value)
{
	size_t	 i;

	if (strlen(value) > 256)
		return 0;
	for (i = 0; value[i] != '\0'; i++)
		if (value[i] < ' ' || value[i] >= 0x7f)
			return 0;
	return 1;
}

int
docker_http_request_head(struct evbuffer *out, const char *method,
    const char *path, const char *content_type, long long content_length,
    int flags)
{
	const char	*connection;
	int		 r;

	if (method == NULL || path == NULL || !valid_method(method) ||
	    !valid_path(path) || (content_type != NULL &&
	    !valid_header_value(content_type)) ||
	    content_length < DOCKER_HTTP_CHUNKED ||
	    (flags & ~(DOCKER_HTTP_UPGRADE | DOCKER_HTTP_HEAD_1_0)) != 0 ||
	    ((flags & DOCKER_HTTP_UPGRADE) && (flags & DOCKER_HTTP_HEAD_1_0))) {
		errno = EINVAL;
		return -1;
	}
	/*
	 * "close" with the upgrade too: should Docker answer an error rather
	 * than the stream, it then closes the connection, which is what lets
	 * a socket proxy check only the first request on it (see
	 * etc/haproxy-socket-proxy.cfg); the stream itself is not HTTP.
	 */
	if (flags & DOCKER_HTTP_UPGRADE)
		connection = "Connection: Upgrade, close\r\nUpgrade: tcp\r\n";
	else
		connection = "Connection: close\r\n";
	r = evbuffer_add_printf(out, "%s %s HTTP/1.%d\r\nHost: docker\r\n"
	    "User-Agent: agent-sandbox\r\n%s", method, path,
	    (flags & DOCKER_HTTP_HEAD_1_0) ? 0 : 1, connection);
	if (r != -1 && content_type != NULL) {
		if (content_length == DOCKER_HTTP_CHUNKED)
			r = evbuffer_add_printf(out, "Content-Type: %s\r\n"
			    "Transfer-Encoding: chunked\r\n", content_type);
		else
			r = evbuffer_add_printf(out, "Content-Type: %s\r\n"
			    "Content-Length: %lld\r\n", content_type,
			    content_length);
	}
	if (r != -1)
		r = evbuffer_add(out, "\r\n", 2);
	if (r == -1) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

