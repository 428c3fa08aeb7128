/*
 * GET /healthz: no authentication; asks the backend through managerd.
 *
 * Concurrent health checks share one ping.  A request is answered by a
 * ping that started after it arrived: while one is in flight, the
 * requests that come wait for the next, which starts when it ends.  So
 * a health answer is never older than its request, and a load balancer
 * polling hard costs Docker one ping per round trip, not one per probe.
 */
#include <stdlib.h>

#include <event2/buffer.h>

#include "apid.h"
#include "log.h"

struct health_round {
	struct http_request	**reqs;
	size_t			  n;
	size_t			  cap;
};

static struct health_round	 current, next;
static int			 in_flight;

static int
round_add(struct health_round *r, struct http_request *req)
{
	struct http_request	**p;
	size_t			  cap;

	if (r->n == r->cap) {
		cap = r->cap == 0 ? 16 : r->cap * 2;
		if ((p = reallocarray(r->reqs, cap, sizeof(*p))) == NULL)
			return -1;
		r->reqs = p;
		r->cap = cap;
	}
	r->reqs[r->n++] = req;
	return 0;
}

static json_object *
health_json(struct imsg *imsg)
{
	struct msgr	 r;
	json_object	*obj;
	char		*backend;

	msgr_init(&r, imsg);
	backend = msgr_str(&r, 64);
	if (msgr_end(&r) == -1 || backend == NULL)
		peer_bad_message(&apid->parent, imsg, "malformed result");
	obj = json_object_new_object();
	json_object_object_add(obj, "status", json_object_new_string("ok"));
	json_object_object_add(obj, "backend", json_object_new_string(backend));
	json_object_object_add(obj, "version",
	    json_object_new_string(PACKAGE_VERSION));
	free(backend);
	return obj;
}

static void
answer_ok(struct http_request *req, const char *text, size_t len)
{
	struct evbuffer	*b;

	if ((b = evbuffer_new()) == NULL || evbuffer_add(b, text, len) == -1) {
		if (b != NULL)
			evbuffer_free(b);
		respond_error(req, ERR_INTERNAL, "out of memory");
		return;
	}
	respond_buffer(req, 200, "application/json", b);
	evbuffer_free(b);
}

/* Every request of the round gets the same answer, rendered once. */
static void
round_answer(struct health_round *r, struct imsg *imsg)
{
	json_object	*obj = NULL;
	const char	*text = NULL;
	size_t		 i, len = 0;

	if (imsg != NULL && imsg->hdr.type == MSG_HEALTH_RESULT) {
		obj = health_json(imsg);
		text = json_object_to_json_string_length(obj,
		    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE,
		    &len);
	}
	for (i = 0; i < r->n; i++) {
		if (text != NULL)
			answer_ok(r->reqs[i], text, len);
		else if (imsg != NULL)
			reply_error_msg(r->reqs[i], imsg);
		else
			respond_error(r->reqs[i], ERR_INTERNAL,
			    "cannot reach managerd");
	}
	r->n = 0;
	if (obj != NULL)
		json_object_put(obj);
}

static int	health_reply(struct apid_request *, struct imsg *);

static void
ping_start(void)
{
	in_flight = 1;
	/* Not tied to one request: each is answered by the round. */
	if (apid_request_send(current.reqs[0], MSG_HEALTH_REQUEST, NULL, -1,
	    health_reply, NULL) != NULL)
		return;
	in_flight = 0;
	round_answer(&current, NULL);
}

static int
health_reply(struct apid_request *ar, struct imsg *imsg)
{
	struct health_round	 done;

	if (imsg->hdr.type != MSG_HEALTH_RESULT && imsg->hdr.type != MSG_ERROR)
		peer_bad_message(&apid->parent, imsg, "wrong reply type");
	/* The next round becomes the current one before answers go out. */
	done = current;
	current = next;
	next = done;
	round_answer(&next, imsg);
	in_flight = 0;
	if (current.n > 0)
		ping_start();
	return APID_REPLY_DONE;
}

void
route_health(struct http_request *req, char **params)
{
	struct health_round	*r = in_flight ? &next : &current;

	if (round_add(r, req) == -1) {
		respond_error(req, ERR_INTERNAL, "out of memory");
		return;
	}
	if (!in_flight)
		ping_start();
}
