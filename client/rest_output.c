/*
 * A process's output (GET .../output): NDJSON events, each checked on
 * its own (rest_event_parse: a known type with the fields it needs, seq
 * and counts non-negative integers, base64 that decodes, an exit status
 * the API has) and against those before it (rest_event_order), and a
 * follow that waits as long as the caller says rather than the client's
 * timeout: forever for "logs -f", a few seconds for the MCP tool.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "process_msg.h"
#include "rest.h"
#include "rest_internal.h"
#include "websocket.h"

struct output {
	const struct rest_output_opts *o;
	uint64_t	 last;		/* the seq of the last byte accounted */
	int		 ended;		/* the exit event came */
	int		 bad;		/* a line broke the rules: why */
	rest_event_cb	 cb;
	void		*arg;
	unsigned char	*buf;		/* decoded data */
	size_t		 cap;
	char		 why[160];
};

/* A count: a non-negative JSON integer. */
static int
get_count(json_object *o, const char *key, uint64_t *out)
{
	json_object	*v;
	int64_t		 n;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_int) ||
	    (n = json_object_get_int64(v)) < 0)
		return -1;
	*out = (uint64_t)n;
	return 0;
}

/* The bytes of data's base64 into *buf, grown as needed. */
static int
decode(const char *s, size_t n, struct rest_event *ev, unsigned char **buf,
    size_t *cap)
{
	unsigned char	*nbuf;
	size_t		 need = n / 4 * 3 + 1;
	long		 r;

	if (need > *cap) {
		if ((nbuf = realloc(*buf, need)) == NULL)
			return -1;
		*buf = nbuf;
		*cap = need;
	}
	if ((r = b64_decode(s, n, *buf, *cap)) < 0)
		return -1;
	ev->data = *buf;
	ev->len = (size_t)r;
	return 0;
}

static int
parse_data(json_object *o, int base64, struct rest_event *ev,
    unsigned char **buf, size_t *cap, char *why, size_t whylen)
{
	json_object	*v;
	const char	*s;
	size_t		 n;

	if (get_count(o, "seq", &ev->seq) == -1) {
		snprintf(why, whylen, "an output event without a valid seq");
		return -1;
	}
	if (!json_object_object_get_ex(o, "data", &v) ||
	    !json_object_is_type(v, json_type_string)) {
		snprintf(why, whylen, "an output event without data");
		return -1;
	}
	s = json_object_get_string(v);
	n = json_object_get_string_len(v);
	if (!base64) {
		ev->data = (const unsigned char *)s;
		ev->len = n;
		return 0;
	}
	if (decode(s, n, ev, buf, cap) == -1) {
		snprintf(why, whylen, "an output event whose data is not "
		    "base64");
		return -1;
	}
	return 0;
}

/* A status the API has, as the exit event's status. */
static int
known_status(const char *s)
{
	int	 i;

	for (i = PROCESS_RUNNING; i <= PROCESS_STATUS_MAX; i++)
		if (strcmp(s, process_status_name(i)) == 0)
			return 1;
	return 0;
}

/* An optional time: absent or null is "", else short and plain. */
static int
get_time(json_object *o, const char *key, char *out, size_t outlen)
{
	json_object	*v;
	const char	*s;

	out[0] = '\0';
	if (!json_object_object_get_ex(o, key, &v) || v == NULL)
		return 0;
	if (!json_object_is_type(v, json_type_string))
		return -1;
	s = json_object_get_string(v);
	if (strlen(s) >= outlen || strspn(s, "0123456789-+:.TZ") != strlen(s))
		return -1;
	strlcpy(out, s, outlen);
	return 0;
}

static int
get_exit_code(json_object *o, struct rest_event *ev)
{
	json_object	*v;
	int64_t		 n;

	if (!json_object_object_get_ex(o, "exit_code", &v) || v == NULL)
		return 0;
	if (!json_object_is_type(v, json_type_int))
		return -1;
	n = json_object_get_int64(v);
	if (n < INT_MIN || n > INT_MAX)
		return -1;
	ev->has_exit_code = 1;
	ev->exit_code = (int)n;
	return 0;
}

/* The exit event; its seq is optional (the WebSocket's has none). */
static int
parse_exit(json_object *o, struct rest_event *ev, char *why, size_t whylen)
{
	json_object	*v;
	const char	*s;

	if (!json_object_object_get_ex(o, "status", &v) ||
	    !json_object_is_type(v, json_type_string) ||
	    strlen(s = json_object_get_string(v)) >= sizeof(ev->status) ||
	    !known_status(s)) {
		snprintf(why, whylen, "an exit event without a valid status");
		return -1;
	}
	strlcpy(ev->status, s, sizeof(ev->status));
	if (get_exit_code(o, ev) == -1 ||
	    get_time(o, "ended_at", ev->ended_at, sizeof(ev->ended_at)) == -1 ||
	    (json_object_object_get_ex(o, "seq", NULL) &&
	    get_count(o, "seq", &ev->seq) == -1)) {
		snprintf(why, whylen, "an exit event with a bad exit_code, "
		    "ended_at or seq");
		return -1;
	}
	return 0;
}

int
rest_event_parse(json_object *o, int base64, struct rest_event *ev,
    unsigned char **buf, size_t *cap, char *why, size_t whylen)
{
	json_object	*v;
	const char	*type;

	memset(ev, 0, sizeof(*ev));
	ev->obj = o;
	if (!json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, "type", &v) ||
	    !json_object_is_type(v, json_type_string)) {
		snprintf(why, whylen, "an event without a type");
		return -1;
	}
	type = json_object_get_string(v);
	if (strcmp(type, "stdout") == 0 || strcmp(type, "stderr") == 0) {
		ev->type = type[3] == 'o' ? REST_EVENT_STDOUT :
		    REST_EVENT_STDERR;
		return parse_data(o, base64, ev, buf, cap, why, whylen);
	}
	if (strcmp(type, "gap") == 0) {
		ev->type = REST_EVENT_GAP;
		if (get_count(o, "dropped_bytes", &ev->dropped) == 0)
			return 0;
		snprintf(why, whylen, "a gap without a valid dropped_bytes");
		return -1;
	}
	if (strcmp(type, "exit") == 0) {
		ev->type = REST_EVENT_EXIT;
		return parse_exit(o, ev, why, whylen);
	}
	return 1;
}

int
rest_event_order(struct rest_event *ev, int base64, uint64_t *last,
    char *why, size_t whylen)
{
	uint64_t	 start;

	switch (ev->type) {
	case REST_EVENT_STDOUT:
	case REST_EVENT_STDERR:
		if (ev->len == 0) {
			snprintf(why, whylen, "an output event without bytes "
			    "(seq %llu)", (unsigned long long)ev->seq);
			return -1;
		}
		if (ev->seq <= *last || (base64 && ev->seq < ev->len))
			goto back;
		/* Text has no byte count: only its end is known. */
		if (!base64)
			break;
		start = ev->seq - ev->len;
		if (start > *last) {
			snprintf(why, whylen, "a hole: an event from byte %llu "
			    "with no gap since byte %llu",
			    (unsigned long long)start,
			    (unsigned long long)*last);
			return -1;
		}
		/* start < *last < seq: cut what was already accounted. */
		ev->data += *last - start;
		ev->len -= *last - start;
		break;
	case REST_EVENT_GAP:
		if (ev->dropped > UINT64_MAX - *last) {
			snprintf(why, whylen, "a gap of %llu bytes past the "
			    "largest seq", (unsigned long long)ev->dropped);
			return -1;
		}
		*last += ev->dropped;
		return 0;
	case REST_EVENT_EXIT:
		if (ev->seq != 0 && ev->seq < *last)
			goto back;
		return 0;
	}
	*last = ev->seq;
	return 0;
back:
	snprintf(why, whylen, "an event's seq %llu goes back "
	    "(the last byte seen was %llu)", (unsigned long long)ev->seq,
	    (unsigned long long)*last);
	return -1;
}

/* ndjson_step's line(): -1 stops at a bad line, at the end, or at cb's. */
static int
output_line(json_object *o, void *arg)
{
	struct output		*st = arg;
	struct rest_event	 ev;
	int			 r;

	r = rest_event_parse(o, st->o->base64, &ev, &st->buf, &st->cap,
	    st->why, sizeof(st->why));
	if (r == 1)
		return 0;
	if (r == -1 || rest_event_order(&ev, st->o->base64, &st->last,
	    st->why, sizeof(st->why)) == -1) {
		st->bad = 1;
		return -1;
	}
	/* Nothing follows the exit event. */
	if (ev.type == REST_EVENT_EXIT)
		st->ended = 1;
	if (st->cb(&ev, st->arg) != 0 || st->ended)
		return -1;
	return 0;
}

static char *
output_path(const char *sandbox, const char *process,
    const struct rest_output_opts *o)
{
	char	 q[96];

	snprintf(q, sizeof(q), "/output?after=%llu&follow=%s%s",
	    (unsigned long long)o->after, o->follow ? "true" : "false",
	    o->base64 ? "&encoding=base64" : "");
	return rest_process_path(sandbox, process, q);
}

/* Milliseconds from now to deadline, 0 once it passed. */
static long long
ms_left(const struct timespec *deadline)
{
	struct timespec	 now;
	long long	 ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (long long)(deadline->tv_sec - now.tv_sec) * 1000 +
	    (deadline->tv_nsec - now.tv_nsec) / 1000000;
	return ms > 0 ? ms : 0;
}

static void
deadline_in(int ms, struct timespec *deadline)
{
	clock_gettime(CLOCK_MONOTONIC, deadline);
	deadline->tv_sec += ms / 1000;
	deadline->tv_nsec += (long)(ms % 1000) * 1000000;
	if (deadline->tv_nsec >= 1000000000) {
		deadline->tv_sec++;
		deadline->tv_nsec -= 1000000000;
	}
}

/* The socket's receive timeout: ms, or 0 for none at all. */
static int
recv_timeout(struct conn *c, long long ms)
{
	struct timeval	 tv;

	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	return setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

/*
 * The body, step by step: 0 at its end, 1 when the wait ran out (a
 * receive that timed out then is the wait's, not a failure), -1.
 */
static int
output_read(struct conn *c, struct output *st, const struct timespec *dl,
    struct rest_error *err)
{
	struct ndjson	 nd;
	long long	 left;
	int		 r = 0, save = 0;
	int		 waits = st->o->follow && st->o->wait_ms > 0;

	memset(&nd, 0, sizeof(nd));
	/* A silent process is no stalled server: no timeout of our own. */
	if (st->o->follow && !waits && recv_timeout(c, 0) == -1) {
		save = errno;
		r = -2;
	}
	while (r == 0) {
		if (waits && (left = ms_left(dl)) == 0)
			r = 2;
		else if (waits && recv_timeout(c, left) == -1) {
			save = errno;
			r = -2;
		} else
			r = ndjson_step(c, &nd, output_line, st, err);
	}
	free(nd.buf);
	if (r == -2)
		seterr(err, 0, "connection_error", "socket: %s",
		    strerror(save));
	if (r == 2 || (waits && r == -1 && !st->bad && ms_left(dl) == 0))
		return 1;
	return r < 0 ? -1 : 0;
}

int
rest_process_output(struct rest_client *rc, const char *sandbox,
    const char *process, const struct rest_output_opts *o, rest_event_cb cb,
    void *arg, struct rest_error *err)
{
	struct timespec	 deadline;
	struct output	 st;
	struct conn	*c;
	char		*path;
	int		 r = -1;

	memset(&st, 0, sizeof(st));
	st.o = o;
	st.last = o->after;
	st.cb = cb;
	st.arg = arg;
	deadline_in(o->wait_ms, &deadline);
	if ((c = conn_new(err)) == NULL)
		return -1;
	if ((path = output_path(sandbox, process, o)) == NULL)
		seterr(err, 0, "connection_error", "%s", strerror(ENOMEM));
	else if (request_2xx(rc, c, "GET", path, NULL, err) == 0)
		r = output_read(c, &st, &deadline, err);
	if (st.bad) {
		seterr(err, c->status, "http_error", "the output has %s",
		    st.why);
		r = -1;
	}
	free(path);
	free(st.buf);
	conn_free(c);
	return r;
}
