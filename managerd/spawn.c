/*
 * The listening socket, which managerd creates so that apid never
 * resolves names or binds.
 */
#include <sys/socket.h>

#include <netdb.h>
#include <netinet/in.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "managerd.h"

/*
 * Bind and listen on host:port.  The host may be a name or an address;
 * the first address that binds wins.
 */
int
listener_open(const char *host, int port, char *err, size_t errlen)
{
	struct addrinfo	 hints, *res, *ai;
	char		 portstr[16];
	int		 fd = -1, on = 1, rc, saved = 0;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE;
	snprintf(portstr, sizeof(portstr), "%d", port);
	if ((rc = getaddrinfo(host, portstr, &hints, &res)) != 0) {
		snprintf(err, errlen, "cannot resolve %s: %s", host,
		    gai_strerror(rc));
		return -1;
	}
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		fd = socket(ai->ai_family,
		    ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    ai->ai_protocol);
		if (fd == -1) {
			saved = errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
		    listen(fd, SOMAXCONN) == 0)
			break;
		saved = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd == -1)
		snprintf(err, errlen, "cannot listen on %s:%d: %s", host, port,
		    strerror(saved));
	return fd;
}
