/*
 * Socket activation (sd_listen_fds(3)'s protocol): systemd binds the
 * API's address itself (agent-sandbox.socket) and passes the listening
 * socket as descriptor 3, with LISTEN_PID (ours) and LISTEN_FDS (1).
 * managerd then uses it instead of binding AGENT_SANDBOX_HOST:PORT, and
 * hands it to apid through the spawner as it would its own.
 *
 * Only what apid can serve is taken: one stream socket, listening, of
 * the inet, inet6 or unix family.  Anything else is refused at start-up
 * with a clear message, as a configuration error.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "notify.h"

#define ACTIVATION_FD	3	/* SD_LISTEN_FDS_START */

static char	 where[INET6_ADDRSTRLEN + 128];

int
activation_check_env(const char *listen_pid, const char *listen_fds,
    pid_t self, char *err, size_t errlen)
{
	long long	 pid, n;

	if (listen_pid == NULL || listen_fds == NULL)
		return 0;
	/* Meant for another process (a parent's, inherited): not ours. */
	if (config_parse_long(listen_pid, &pid) == -1 ||
	    pid != (long long)self)
		return 0;
	if (config_parse_long(listen_fds, &n) == -1 || n < 0) {
		snprintf(err, errlen, "LISTEN_FDS is not a number");
		return -1;
	}
	if (n == 0)
		return 0;
	if (n != 1) {
		snprintf(err, errlen, "LISTEN_FDS=%lld: managerd takes exactly "
		    "one socket (one ListenStream= in the socket unit)", n);
		return -1;
	}
	return 1;
}

static int
sockopt_int(int fd, int opt, int *v)
{
	socklen_t	 len = sizeof(*v);

	return getsockopt(fd, SOL_SOCKET, opt, v, &len);
}

int
activation_check_fd(int fd, char *err, size_t errlen)
{
	int	 type, domain, listening;

	if (sockopt_int(fd, SO_TYPE, &type) == -1) {
		snprintf(err, errlen, "descriptor %d is not a socket: %s", fd,
		    strerror(errno));
		return -1;
	}
	if (sockopt_int(fd, SO_DOMAIN, &domain) == -1 ||
	    sockopt_int(fd, SO_ACCEPTCONN, &listening) == -1) {
		snprintf(err, errlen, "descriptor %d: %s", fd, strerror(errno));
		return -1;
	}
	if (type != SOCK_STREAM || (domain != AF_INET && domain != AF_INET6 &&
	    domain != AF_UNIX)) {
		snprintf(err, errlen, "descriptor %d is not a TCP or unix "
		    "stream socket (ListenStream= only)", fd);
		return -1;
	}
	if (!listening) {
		snprintf(err, errlen, "descriptor %d is a socket that is not "
		    "listening", fd);
		return -1;
	}
	return 0;
}

int
activation_listener(void)
{
	char	 err[256];
	int	 rc, fl;

	rc = activation_check_env(getenv("LISTEN_PID"), getenv("LISTEN_FDS"),
	    getpid(), err, sizeof(err));
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	if (rc == 0)
		return -1;
	if (rc == -1 || activation_check_fd(ACTIVATION_FD, err,
	    sizeof(err)) == -1) {
		fprintf(stderr, "configuration error: socket activation: %s\n",
		    err);
		exit(2);
	}
	if (fcntl(ACTIVATION_FD, F_SETFD, FD_CLOEXEC) == -1 ||
	    (fl = fcntl(ACTIVATION_FD, F_GETFL)) == -1 ||
	    fcntl(ACTIVATION_FD, F_SETFL, fl | O_NONBLOCK) == -1)
		fatal("socket activation: descriptor %d", ACTIVATION_FD);
	return ACTIVATION_FD;
}

/*
 * The address the listener really has: with socket activation the
 * configured host and port mean nothing, and the log says where clients
 * must go.
 */
void
listener_set_where(int fd, const char *host, int port, int activated)
{
	struct sockaddr_storage	 ss;
	struct sockaddr_in	*sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)&ss;
	socklen_t		 len = sizeof(ss);
	char			 a[INET6_ADDRSTRLEN];

	snprintf(where, sizeof(where), "%s:%d", host, port);
	if (!activated || getsockname(fd, (struct sockaddr *)&ss, &len) == -1)
		return;
	if (ss.ss_family == AF_INET &&
	    inet_ntop(AF_INET, &sin->sin_addr, a, sizeof(a)) != NULL)
		snprintf(where, sizeof(where), "%s:%d (socket from systemd)",
		    a, ntohs(sin->sin_port));
	else if (ss.ss_family == AF_INET6 &&
	    inet_ntop(AF_INET6, &sin6->sin6_addr, a, sizeof(a)) != NULL)
		snprintf(where, sizeof(where), "[%s]:%d (socket from systemd)",
		    a, ntohs(sin6->sin6_port));
	else if (ss.ss_family == AF_UNIX)
		snprintf(where, sizeof(where), "%.100s (socket from systemd)",
		    ((struct sockaddr_un *)&ss)->sun_path[0] != '\0' ?
		    ((struct sockaddr_un *)&ss)->sun_path : "unix socket");
}

const char *
listener_where(void)
{
	return where;
}
