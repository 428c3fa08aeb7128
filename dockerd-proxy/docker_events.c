/*
 * Following Docker's event stream for managerd (MSG_DOCKER_EVENTS_FOLLOW):
 * GET /events of this instance's containers, in windows of
 * EVENTS_WINDOW_S seconds (until= ends each; since= starts the next where
 * the last one ended, so nothing falls between them).  A window keeps
 * the request under its read deadline, so a hung Docker is found here as
 * everywhere else, and shows as a broken stream.
 *
 * Each event of a sandbox's own container goes to managerd as
 * MSG_DOCKER_EVENT, in Docker's order.  UP goes once the first window's
 * head came, with since= a little before the moment managerd takes stock
 * after it: whatever happens after that stock-taking's list is in the
 * stream, replayed from Docker's memory if need be.  A window that fails
 * or ends early (Docker went away) is DOWN, then the next try in
 * EVENTS_RETRY_S seconds, and a new UP with a new since= once it works:
 * Docker may have lost its memory of events with a restart, so managerd
 * takes stock again.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "docker_http.h"
#include "log.h"
#include "proxy.h"
#include "sandbox_msg.h"

/* Below the read deadline, so that a window always ends first. */
#define EVENTS_WINDOW_S		25
#define EVENTS_RETRY_S		1
/* since= this far before an UP: Docker's and our clock are the same. */
#define EVENTS_BACK_NS		1000000000LL
/* A window that ends more than this early broke (Docker went away). */
#define EVENTS_EARLY_NS		1000000000LL
#define EVENTS_LINE_MAX		(64 * 1024)
#define NS			1000000000LL

static struct {
	struct proxy		*px;
	struct docker_request	*req;
	struct docker_lines	 lines;
	struct event		*ev_retry;
	int			 live;		/* UP sent, no DOWN since */
	int			 head;		/* this window's head came */
	int64_t			 since_ns;	/* of the window out */
	int64_t			 until_ns;
	int			 warned;	/* of a refused stream */
} evs;

static void	events_window(void);

static int64_t
now_ns(void)
{
	struct timespec	 ts;

	if (clock_gettime(CLOCK_REALTIME, &ts) == -1)
		fatal("clock_gettime");
	return (int64_t)ts.tv_sec * NS + ts.tv_nsec;
}

static void
events_send(uint32_t type, struct msgw *w)
{
	if (peer_send(&evs.px->parent, type, 0, -1, w) == -1)
		fatalx("cannot send %s", msg_type_name(type));
}

static void
event_line(void *arg, const char *line, size_t len)
{
	struct docker_event	 ev;
	struct msgw		 w;

	if (!docker_event_parse(line, len, evs.px->settings.instance_id, &ev))
		return;
	if (ev.action == DOCKER_EVENT_DESTROY)
		container_cache_forget(ev.id);
	msgw_init(&w);
	msg_put_docker_event(&w, &ev);
	events_send(MSG_DOCKER_EVENT, &w);
	/* A window replays from its since=: the last one is far enough. */
	if (ev.time_ns > evs.since_ns)
		evs.since_ns = ev.time_ns;
}

static int
events_body(struct docker_request *req, const unsigned char *data,
    size_t len, void *arg)
{
	if (len == 0 && !evs.head) {
		evs.head = 1;
		evs.warned = 0;
		if (!evs.live) {
			evs.live = 1;
			log_info("following Docker's events");
			events_send(MSG_DOCKER_EVENTS_UP, NULL);
		}
		return 0;
	}
	docker_lines_feed(&evs.lines, data, len);
	return 0;
}

static void
events_broken(const char *why)
{
	static const struct timeval	 tv = { EVENTS_RETRY_S, 0 };

	if (!evs.warned)
		log_warnx("Docker's event stream: %s; sandbox states are "
		    "asked of Docker until it is back", why);
	evs.warned = 1;
	if (evs.live) {
		evs.live = 0;
		events_send(MSG_DOCKER_EVENTS_DOWN, NULL);
	}
	if (evtimer_add(evs.ev_retry, &tv) == -1)
		fatal("evtimer_add");
}

static void
events_done(struct docker_request *req, enum docker_http_error error,
    const struct docker_response *resp, void *arg)
{
	char	 why[256];

	evs.req = NULL;
	docker_lines_end(&evs.lines);
	if (error == DOCKER_HTTP_OK && evs.head &&
	    now_ns() >= evs.until_ns - EVENTS_EARLY_NS) {
		/* The window is over: the next starts where it ended. */
		if (evs.since_ns < evs.until_ns)
			evs.since_ns = evs.until_ns;
		events_window();
		return;
	}
	if (error != DOCKER_HTTP_OK)
		snprintf(why, sizeof(why), "%s", docker_http_strerror(error));
	else if (resp->status != 200)
		snprintf(why, sizeof(why), "HTTP %d", resp->status);
	else
		snprintf(why, sizeof(why), "ended early");
	events_broken(why);
}

/* The label filter of every list (docker_list.c), for container events. */
static int
events_path(char *path, size_t len)
{
	json_object	*filters, *labels, *type;
	char		 instance[128], since[32], until[32];
	int		 r;

	snprintf(instance, sizeof(instance), LABEL_INSTANCE "=%s",
	    evs.px->settings.instance_id);
	snprintf(since, sizeof(since), "%lld.%09lld",
	    (long long)(evs.since_ns / NS), (long long)(evs.since_ns % NS));
	snprintf(until, sizeof(until), "%lld",
	    (long long)(evs.until_ns / NS));
	if ((filters = json_object_new_object()) == NULL ||
	    (labels = json_object_new_array()) == NULL ||
	    (type = json_object_new_array()) == NULL ||
	    json_object_array_add(type,
	    json_object_new_string("container")) != 0 ||
	    json_object_object_add(filters, "type", type) != 0 ||
	    json_object_array_add(labels,
	    json_object_new_string(LABEL_MANAGED "=true")) != 0 ||
	    json_object_array_add(labels, json_object_new_string(instance)) !=
	    0 || json_object_object_add(filters, "label", labels) != 0)
		fatalx("%s: out of memory", __func__);
	r = docker_path(path, len, DOCKER_API
	    "/events?since=%s&until=%s&filters=%s", since, until,
	    json_object_to_json_string_ext(filters, JSON_C_TO_STRING_PLAIN));
	json_object_put(filters);
	return r;
}

static void
events_window(void)
{
	struct docker_request_spec	 spec;
	char				 path[1024];

	if (!evs.live)
		evs.since_ns = now_ns() - EVENTS_BACK_NS;
	evs.until_ns = (now_ns() / NS + EVENTS_WINDOW_S) * NS;
	evs.head = 0;
	if (events_path(path, sizeof(path)) == -1)
		fatalx("%s: path", __func__);
	memset(&spec, 0, sizeof(spec));
	spec.method = "GET";
	spec.path = path;
	spec.flags = DOCKER_HTTP_ANNOUNCE | DOCKER_HTTP_LASTING;
	spec.max_body = 64 * 1024;
	spec.on_body = events_body;
	spec.on_done = events_done;
	if ((evs.req = docker_request_new(evs.px->base,
	    evs.px->settings.docker_endpoint, &spec)) == NULL)
		events_broken(strerror(errno));
}

static void
events_retry(evutil_socket_t fd, short what, void *arg)
{
	events_window();
}

void
docker_events_follow(struct proxy *px)
{
	if (evs.px != NULL)
		return;
	evs.px = px;
	if ((evs.ev_retry = evtimer_new(px->base, events_retry, NULL)) ==
	    NULL)
		fatal("evtimer_new");
	docker_lines_init(&evs.lines, EVENTS_LINE_MAX, event_line, NULL);
	events_window();
}
