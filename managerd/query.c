/*
 * GET /v1/sandboxes/{id} and GET /v1/sandboxes (API.md §4.3-4.4): the
 * records with their live state.  While Docker's events are followed
 * (events.c) that state is in memory and no Docker call is made;
 * otherwise it is asked of Docker, a list once for every sandbox instead
 * of once per sandbox.  Neither takes the sandbox lock (the reference's
 * don't).
 */
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "managerd.h"

struct get_call {
	uint32_t	 apid_id;
	struct sandbox	*sb;		/* held */
};

struct list_item {
	char		 id[SANDBOX_ID_LEN + 1];
	int		 container;
	int		 running;
};

struct list_call {
	uint32_t	 apid_id;
	struct label_filter filter;
	struct list_item *items;
	size_t		 count;
	size_t		 cap;
	int		 failed;	/* out of memory */
	int		 from_memory;	/* every state known: no items */
};

static void
list_call_free(struct list_call *lc)
{
	label_filter_free(&lc->filter);
	free(lc->items);
	free(lc);
}

/*
 * A MSG_DOCKER_STATE_RESULT, checked whole: a running container has a
 * pid and an id, one that exists an id, one that does not neither.
 */
void
docker_state_parse(struct imsg *reply, struct docker_state *st)
{
	struct msgr	 r;
	uint8_t		 exists, running;
	char		*container;

	msgr_init(&r, reply);
	exists = msgr_u8(&r);
	running = msgr_u8(&r);
	st->pid = msgr_u32(&r);
	container = msgr_str(&r, CONTAINER_ID_LEN);
	if (msgr_end(&r) == -1 || exists > 1 || running > 1 ||
	    (running && !exists) || container == NULL ||
	    (running != (st->pid != 0)) || st->pid > INT32_MAX ||
	    (exists ? !id_is_container(container) : container[0] != '\0')) {
		free(container);
		peer_bad_message(&env->proxy_peer, reply, "malformed state");
	}
	st->exists = exists;
	st->running = running;
	strlcpy(st->container, container, sizeof(st->container));
	free(container);
}

/* A MSG_DOCKER_STATE_RESULT: 1 if the container runs, else 0. */
int
docker_state_running(struct imsg *reply, int *reason)
{
	struct docker_state	 st;

	docker_state_parse(reply, &st);
	if (reason != NULL)
		*reason = st.running ? SANDBOX_REASON_NONE : st.exists ?
		    SANDBOX_REASON_EXITED : SANDBOX_REASON_REMOVED;
	return st.running;
}

static void
get_done(struct imsg *reply, void *arg)
{
	struct get_call	*gc = arg;

	apid_reply_state(gc->apid_id, gc->sb, reply);
	sandbox_release(gc->sb);
	free(gc);
}

void
sandbox_get(uint32_t apid_id, const char *id)
{
	struct get_call	*gc;
	struct sandbox	*sb;
	struct msgw	 w;

	if ((sb = sandbox_find_for(apid_id, id)) == NULL) {
		apid_not_found(apid_id, id);
		return;
	}
	if (sandbox_state_known(sb)) {
		apid_reply_info(apid_id, sb, sb->st.running, sb->st.reason);
		return;
	}
	if ((gc = calloc(1, sizeof(*gc))) == NULL) {
		apid_error(apid_id, ERR_INTERNAL, "out of memory");
		return;
	}
	gc->apid_id = apid_id;
	gc->sb = sb;
	sandbox_hold(sb);
	msgw_init(&w);
	msg_put_string(&w, sb->rec.id);
	if (proxy_call(MSG_DOCKER_STATE, -1, &w, 0, MSG_DOCKER_STATE_RESULT,
	    get_done, gc) == 0) {
		apid_error(apid_id, ERR_INTERNAL, "cannot reach dockerd-proxy");
		sandbox_release(sb);
		free(gc);
	}
}

static int
item_cmp(const void *a, const void *b)
{
	return strcmp(((const struct list_item *)a)->id,
	    ((const struct list_item *)b)->id);
}

static int
list_add(struct list_call *lc, struct imsg *reply)
{
	struct list_item	*v;
	char			 id[SANDBOX_ID_LEN + 1];
	int			 container, running;

	/* Only ids of ours can match a record; others are not listed. */
	if (!docker_list_item(reply, id, sizeof(id), &container, &running) ||
	    !container)
		return 0;
	if (lc->count == lc->cap) {
		if ((v = reallocarray(lc->items, lc->cap + 16,
		    sizeof(*v))) == NULL)
			return -1;
		lc->items = v;
		lc->cap += 16;
	}
	strlcpy(lc->items[lc->count].id, id, sizeof(lc->items[0].id));
	lc->items[lc->count].container = 1;
	lc->items[lc->count++].running = running;
	return 0;
}

/* A sandbox's state as the list answers it. */
static int
list_state(struct list_call *lc, struct sandbox *sb, int *reason)
{
	struct list_item	 key, *it = NULL;

	if (lc->from_memory) {
		*reason = sb->st.reason;
		return sb->st.running;
	}
	strlcpy(key.id, sb->rec.id, sizeof(key.id));
	if (lc->count > 0)
		it = bsearch(&key, lc->items, lc->count, sizeof(*lc->items),
		    item_cmp);
	*reason = it == NULL ? SANDBOX_REASON_REMOVED : it->running ?
	    SANDBOX_REASON_NONE : SANDBOX_REASON_EXITED;
	return it != NULL && it->running;
}

static void
list_send(struct list_call *lc)
{
	struct sandbox		**v;
	size_t			 i, n;
	int			 running, reason;

	v = sandbox_sorted(&n);
	if (v == NULL && sandbox_count() != 0) {
		apid_error(lc->apid_id, ERR_INTERNAL, "out of memory");
		return;
	}
	/* No item, no array: qsort and bsearch want one all the same. */
	if (lc->count > 0)
		qsort(lc->items, lc->count, sizeof(*lc->items), item_cmp);
	for (i = 0; i < n; i++) {
		if (!tenant_sandbox_visible(lc->apid_id, v[i]) ||
		    !label_filter_match(&lc->filter, &v[i]->rec.labels))
			continue;
		running = list_state(lc, v[i], &reason);
		apid_reply_info(lc->apid_id, v[i], running, reason);
	}
	apid_reply(lc->apid_id, MSG_SANDBOX_LIST_END, NULL);
	free(v);
}

/* 1 when every sandbox's state is known without asking Docker. */
static int
list_known(void)
{
	struct sandbox	*sb;

	if (!events_live())
		return 0;
	for (sb = sandbox_first(); sb != NULL; sb = sandbox_next(sb))
		if (!sandbox_state_known(sb))
			return 0;
	return 1;
}

static void
list_done(struct imsg *reply, void *arg)
{
	struct list_call	*lc = arg;

	switch (reply->hdr.type) {
	case MSG_DOCKER_LIST_ITEM:
		if (list_add(lc, reply) == -1)
			lc->failed = 1;
		return;
	case MSG_ERROR:
		relay_error(reply, lc->apid_id);
		break;
	default:
		if (reply->len != 0)
			peer_bad_message(&env->proxy_peer, reply,
			    "unexpected payload");
		if (lc->failed)
			apid_error(lc->apid_id, ERR_INTERNAL, "out of memory");
		else
			list_send(lc);
		break;
	}
	list_call_free(lc);
}

/*
 * The filter applies to the records (labels live there, not in Docker),
 * after Docker's answer: a sandbox's labels are those it has when the
 * list is sent.
 */
void
sandbox_list(uint32_t apid_id, struct label_filter *filter)
{
	struct list_call	*lc;

	if ((lc = calloc(1, sizeof(*lc))) == NULL) {
		apid_error(apid_id, ERR_INTERNAL, "out of memory");
		label_filter_free(filter);
		return;
	}
	lc->apid_id = apid_id;
	lc->filter = *filter;
	memset(filter, 0, sizeof(*filter));
	if (list_known()) {
		lc->from_memory = 1;
		list_send(lc);
		list_call_free(lc);
		return;
	}
	if (proxy_call(MSG_DOCKER_LIST, -1, NULL, MSG_DOCKER_LIST_ITEM,
	    MSG_DOCKER_LIST_END, list_done, lc) == 0) {
		apid_error(apid_id, ERR_INTERNAL, "cannot reach dockerd-proxy");
		list_call_free(lc);
	}
}
