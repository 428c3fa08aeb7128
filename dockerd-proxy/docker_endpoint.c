/*
 * Where dockerd-proxy finds Docker: a unix socket path, or a TCP address
 * for a socket proxy (docs/socket-proxy.md).  A host name is resolved
 * once, at start, before the jail (which has no resolver, no files and no
 * UDP); every request then parses the numeric form, which takes no system
 * call, so the jail and its seccomp filter are the same for every request.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>

#include "docker_host.h"
#include "docker_http.h"

static int
endpoint_unix(const char *path, struct docker_endpoint *ep)
{
	struct sockaddr_un	*sun = (struct sockaddr_un *)&ep->addr;

	sun->sun_family = AF_UNIX;
	if (strlcpy(sun->sun_path, path, sizeof(sun->sun_path)) >=
	    sizeof(sun->sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	ep->family = AF_UNIX;
	ep->len = sizeof(*sun);
	return 0;
}

static int
endpoint_inet(const struct docker_host_tcp *t, struct docker_endpoint *ep)
{
	struct sockaddr_in	*sin = (struct sockaddr_in *)&ep->addr;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)&ep->addr;

	ep->family = t->family;
	ep->port = t->port;
	if (t->family == AF_INET) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)t->port);
		ep->len = sizeof(*sin);
		return inet_pton(AF_INET, t->host, &sin->sin_addr) == 1 ?
		    0 : -1;
	}
	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = htons((uint16_t)t->port);
	ep->len = sizeof(*sin6);
	return inet_pton(AF_INET6, t->host, &sin6->sin6_addr) == 1 ? 0 : -1;
}

int
docker_endpoint_parse(const char *s, struct docker_endpoint *ep)
{
	struct docker_host_tcp	 t;
	const char		*why;

	memset(ep, 0, sizeof(*ep));
	if (s == NULL || s[0] == '\0')
		goto invalid;
	if (s[0] == '/')
		return endpoint_unix(s, ep);
	if (docker_host_tcp_parse(s, &t, &why) == -1 ||
	    t.family == AF_UNSPEC || endpoint_inet(&t, ep) == -1)
		goto invalid;
	return 0;
invalid:
	errno = EINVAL;
	return -1;
}

/* The numeric form of what a resolver gave. */
static int
endpoint_format(const struct addrinfo *ai, unsigned int port, char *out,
    size_t outlen)
{
	char		 num[INET6_ADDRSTRLEN];
	const void	*a;
	int		 n;

	if (ai->ai_family == AF_INET)
		a = &((const struct sockaddr_in *)ai->ai_addr)->sin_addr;
	else
		a = &((const struct sockaddr_in6 *)ai->ai_addr)->sin6_addr;
	if (inet_ntop(ai->ai_family, a, num, sizeof(num)) == NULL)
		return -1;
	n = snprintf(out, outlen, ai->ai_family == AF_INET6 ?
	    "tcp://[%s]:%u" : "tcp://%s:%u", num, port);
	return n < 0 || (size_t)n >= outlen ? -1 : 0;
}

int
docker_endpoint_resolve(const char *in, char *out, size_t outlen, char *err,
    size_t errlen)
{
	struct docker_host_tcp	 t;
	struct addrinfo		 hints, *res = NULL, *ai;
	const char		*why;
	int			 rc, found = 0;

	if (in[0] == '/' || docker_host_tcp_parse(in, &t, &why) == -1 ||
	    t.family != AF_UNSPEC) {
		if (strlcpy(out, in, outlen) >= outlen) {
			snprintf(err, errlen, "%s: too long", in);
			return -1;
		}
		return 0;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if ((rc = getaddrinfo(t.host, NULL, &hints, &res)) != 0) {
		snprintf(err, errlen, "cannot resolve %s: %s", t.host,
		    gai_strerror(rc));
		return -1;
	}
	/* The first address the resolver prefers, for the whole run. */
	for (ai = res; ai != NULL && !found; ai = ai->ai_next)
		found = (ai->ai_family == AF_INET ||
		    ai->ai_family == AF_INET6) &&
		    endpoint_format(ai, t.port, out, outlen) == 0;
	freeaddrinfo(res);
	if (!found) {
		snprintf(err, errlen, "%s has no IPv4 or IPv6 address", t.host);
		return -1;
	}
	return 0;
}
