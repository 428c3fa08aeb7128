/*
 * The Docker endpoint, as DOCKER_HOST names it: a unix socket path, or
 * tcp://HOST:PORT for a socket proxy (docs/socket-proxy.md).  managerd's
 * configuration checks it (config_docker.c) and hands dockerd-proxy the
 * endpoint in one of two forms: an absolute socket path, or tcp://HOST:PORT
 * with HOST a host name, an IPv4 literal or a bracketed IPv6 literal.
 * dockerd-proxy resolves a name once, before its jail, and from then on
 * uses the numeric form (docker_http.c parses it without a system call).
 */
#ifndef AS_DOCKER_HOST_H
#define AS_DOCKER_HOST_H

#include <stddef.h>

#define DOCKER_HOST_TCP_PREFIX	"tcp://"
/* RFC 1123: a name of at most 253 characters, labels of at most 63. */
#define DOCKER_HOST_NAME_MAX	253

struct docker_host_tcp {
	char		 host[DOCKER_HOST_NAME_MAX + 1]; /* no brackets */
	int		 family;	/* AF_INET(6), AF_UNSPEC: a name */
	unsigned int	 port;		/* 1..65535 */
};

/*
 * Split "tcp://HOST:PORT" (the prefix included).  0, or -1 with why set
 * to a static reason: no port, a port outside 1..65535 or with anything
 * but digits, an unclosed bracket, a bracket holding no IPv6 literal, a
 * host that is neither an IPv4 literal nor a valid host name, or
 * anything after the port (a path, a query).
 */
int	docker_host_tcp_parse(const char *, struct docker_host_tcp *,
	    const char **why);

/*
 * The address family of a checked endpoint (struct config's
 * docker_endpoint): AF_UNIX for a path, AF_INET or AF_INET6 for a
 * literal, AF_UNSPEC for a host name (either, once resolved).
 */
int	docker_host_family(const char *);

#endif /* AS_DOCKER_HOST_H */
