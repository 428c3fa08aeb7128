/*
 * systemd's service notifications (sd_notify(3)'s protocol, Type=notify):
 * READY=1 once reconciliation is over and apid listens, STOPPING=1,
 * RELOADING=1 around a SIGHUP reload, STATUS= lines, and WATCHDOG=1
 * every half WATCHDOG_USEC.
 *
 * Written here rather than taken from libsystemd: sd_notify() opens and
 * connects a new socket to $NOTIFY_SOCKET on every call, which cannot
 * work once managerd is chrooted into its data directory (the path is
 * not there) and confined by seccomp (no socket(2), no connect(2)).  So
 * the datagram socket is opened and connected once, before the chroot,
 * and every notification is one send(2) on it.
 *
 * The variables are read and removed from the environment at start-up,
 * before the spawner forks: the children must not notify on managerd's
 * behalf, nor take its watchdog.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "config.h"
#include "log.h"
#include "notify.h"

static struct {
	struct sockaddr_un	 addr;
	socklen_t		 addrlen;	/* 0: no NOTIFY_SOCKET */
	char			 shown[sizeof(((struct sockaddr_un *)0)->
				    sun_path) + 1];
	int			 fd;
	uint64_t		 watchdog_usec;	/* 0: no watchdog */
	struct event		*ev_watchdog;
	int			 ready;		/* READY=1 was sent */
} ntf = { .fd = -1 };

int
notify_parse_address(const char *value, struct sockaddr_un *sun,
    socklen_t *len, char *err, size_t errlen)
{
	size_t	 n;

	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	n = strlen(value);
	if (value[0] != '/' && value[0] != '@') {
		snprintf(err, errlen, "not an absolute path or an abstract "
		    "name (\"@...\"); only unix sockets are supported");
		return -1;
	}
	if (n < 2 || n > sizeof(sun->sun_path) ||
	    (value[0] == '/' && n == sizeof(sun->sun_path))) {
		snprintf(err, errlen, "%s", n < 2 ? "too short" : "too long");
		return -1;
	}
	memcpy(sun->sun_path, value, n);
	/* An abstract name starts with a NUL and is not NUL-terminated. */
	if (value[0] == '@')
		sun->sun_path[0] = '\0';
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n +
	    (value[0] == '/' ? 1 : 0));
	return 0;
}

int
notify_parse_watchdog(const char *usec, const char *pid, pid_t self,
    uint64_t *out, char *err, size_t errlen)
{
	long long	 v, p;

	*out = 0;
	if (usec == NULL)
		return 0;
	if (pid != NULL) {
		if (config_parse_long(pid, &p) == -1 || p <= 0) {
			snprintf(err, errlen, "WATCHDOG_PID is not a pid");
			return -1;
		}
		if (p != (long long)self)
			return 0;	/* another process's watchdog */
	}
	if (config_parse_long(usec, &v) == -1 || v <= 0) {
		snprintf(err, errlen, "WATCHDOG_USEC is not a positive number "
		    "of microseconds");
		return -1;
	}
	*out = (uint64_t)v;
	return 0;
}

void
notify_setup(void)
{
	const char	*sock;
	char		 err[128];

	if ((sock = getenv("NOTIFY_SOCKET")) != NULL && *sock != '\0') {
		if (notify_parse_address(sock, &ntf.addr, &ntf.addrlen, err,
		    sizeof(err)) == -1)
			log_warnx("NOTIFY_SOCKET %s: %s; systemd will not be "
			    "notified", sock, err);
		else
			strlcpy(ntf.shown, sock, sizeof(ntf.shown));
	}
	if (notify_parse_watchdog(getenv("WATCHDOG_USEC"),
	    getenv("WATCHDOG_PID"), getpid(), &ntf.watchdog_usec, err,
	    sizeof(err)) == -1)
		log_warnx("%s: no watchdog", err);
	unsetenv("NOTIFY_SOCKET");
	unsetenv("WATCHDOG_USEC");
	unsetenv("WATCHDOG_PID");
}

/*
 * Before the chroot.  A socket that is not there (systemd gone, a wrong
 * path) is a warning: the service runs, unnotified.
 */
void
notify_open(void)
{
	int	 fd;

	if (ntf.addrlen == 0)
		return;
	if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1) {
		log_warn("NOTIFY_SOCKET: socket");
		return;
	}
	if (connect(fd, (struct sockaddr *)&ntf.addr, ntf.addrlen) == -1) {
		log_warn("cannot connect to NOTIFY_SOCKET %s; systemd will "
		    "not be notified", ntf.shown);
		close(fd);
		return;
	}
	ntf.fd = fd;
}

int
notify_enabled(void)
{
	return ntf.fd != -1;
}

void
notify_send(const char *fmt, ...)
{
	char	 msg[512];
	va_list	 ap;
	int	 n;

	if (ntf.fd == -1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(msg))
		return;
	/*
	 * MSG_DONTWAIT: a supervisor that does not read must not stall the
	 * event loop; a lost notification is logged, never fatal.
	 */
	if (send(ntf.fd, msg, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL) == -1)
		log_debug("notify %.*s: %s", (int)strcspn(msg, "\n"), msg,
		    strerror(errno));
}

void
notify_ready(const char *where)
{
	ntf.ready = 1;
	notify_send("READY=1\nSTATUS=serving on %s", where);
}

/*
 * After a reload: READY=1 again, unless the first one is still to come
 * (a SIGHUP during reconciliation must not announce a server that does
 * not serve yet).
 */
void
notify_reloaded(const char *where)
{
	if (ntf.ready)
		notify_ready(where);
	else
		notify_send("STATUS=reconciling with Docker");
}

void
notify_stopping(void)
{
	notify_send("STOPPING=1\nSTATUS=stopping");
}

/* systemd 253's Type=notify-reload wants the monotonic time with it. */
void
notify_reloading(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	notify_send("RELOADING=1\nMONOTONIC_USEC=%llu\nSTATUS=reloading",
	    (unsigned long long)ts.tv_sec * 1000000ULL +
	    (unsigned long long)ts.tv_nsec / 1000ULL);
}

static void
watchdog_cb(evutil_socket_t fd, short events, void *arg)
{
	notify_send("WATCHDOG=1");
}

/*
 * The event loop's own heartbeat: a managerd stuck in a call, or in a
 * loop, stops sending, and systemd kills and restarts it.
 */
void
notify_watchdog_start(struct event_base *base)
{
	struct timeval	 tv;
	uint64_t	 half;

	if (ntf.fd == -1 || ntf.watchdog_usec == 0)
		return;
	half = ntf.watchdog_usec / 2;
	if (half == 0)
		half = 1;
	tv.tv_sec = (time_t)(half / 1000000);
	tv.tv_usec = (suseconds_t)(half % 1000000);
	if ((ntf.ev_watchdog = event_new(base, -1, EV_PERSIST, watchdog_cb,
	    NULL)) == NULL || event_add(ntf.ev_watchdog, &tv) == -1)
		fatalx("cannot start the watchdog timer");
	notify_send("WATCHDOG=1");
	log_info("systemd watchdog: every %llu ms",
	    (unsigned long long)(half / 1000));
}
