/*
 * Watching the Docker socket dockerd-proxy is confined with.  The jail
 * (proxy_jail.c) bind-mounts the socket file that existed when the proxy
 * started; a dockerd that stops, is killed or restarts leaves that file's
 * listener closed for good (a new dockerd binds a new file at the path),
 * so a refused connect means this proxy can never reach Docker again.
 * It then exits with PROC_EXIT_DOCKER_GONE, once the refused request's
 * answer is out, and managerd starts it again, confined with whatever
 * the path names by then.  A probe every second (a connect, nothing
 * sent) finds a dead socket with no request to find it.  Without the
 * jail (not root) the proxy connects by path and needs none of this, nor
 * behind a socket proxy (TCP), where a refused connect only means the
 * socket proxy is not there yet: the next request tries again.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "docker_http.h"
#include "log.h"
#include "proc.h"
#include "proxy.h"

#define WATCH_PROBE_SECONDS	1
/* How long the last answers may take to reach managerd before the exit. */
#define WATCH_FLUSH_USEC	50000
#define WATCH_FLUSH_TRIES	20

static struct proxy	*watched;
static struct event	*ev_probe, *ev_exit;
static int		 flush_tries;

static void
watch_exit(evutil_socket_t fd, short what, void *arg)
{
	struct timeval	 tv = { 0, WATCH_FLUSH_USEC };

	if (imsgbuf_pending(&watched->parent.ibuf) &&
	    ++flush_tries < WATCH_FLUSH_TRIES) {
		evtimer_add(ev_exit, &tv);
		return;
	}
	log_warnx("Docker's socket %s is dead (dockerd stopped or "
	    "restarted); exiting for managerd to start dockerd-proxy on the "
	    "new one", watched->settings.docker_endpoint);
	exit(PROC_EXIT_DOCKER_GONE);
}

/* From inside a request's start: exit from the loop, answers first. */
static void
watch_refused(void)
{
	struct timeval	 tv = { 0, WATCH_FLUSH_USEC };

	if (!evtimer_pending(ev_exit, NULL))
		evtimer_add(ev_exit, &tv);
}

static void
watch_probe(evutil_socket_t fd, short what, void *arg)
{
	struct sockaddr_un	 sun;
	int			 s;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	strlcpy(sun.sun_path, watched->settings.docker_endpoint,
	    sizeof(sun.sun_path));
	if ((s = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1)
		return;
	if (connect(s, (struct sockaddr *)&sun, sizeof(sun)) == -1 &&
	    errno == ECONNREFUSED)
		watch_refused();
	close(s);
}

void
docker_watch_start(struct proxy *px)
{
	struct timeval	 tv = { WATCH_PROBE_SECONDS, 0 };

	watched = px;
	if ((ev_exit = evtimer_new(px->base, watch_exit, NULL)) == NULL ||
	    (ev_probe = event_new(px->base, -1, EV_PERSIST, watch_probe,
	    NULL)) == NULL || event_add(ev_probe, &tv) == -1)
		fatalx("%s: cannot set up the socket watch", __func__);
	docker_http_on_refused(watch_refused);
}
