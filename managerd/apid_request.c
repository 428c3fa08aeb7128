/*
 * apid's requests as managerd keeps them.  apid numbers its requests
 * itself, and a new apid starts again from 1; so every request gets an
 * id of managerd's own, unique among those alive whichever apid sent
 * them, and the handlers see only that one.  A reply for a request whose
 * apid has died is dropped here: sent to the next apid it would answer
 * another client's request of the same number, or be a reply to nothing
 * (fatal there).  A request lives until its last reply: MSG_ERROR, or
 * any reply but its kind's interim one.
 *
 * Each request comes right after its caller (MSG_CALLER: who asks, for
 * the tenant checks and the audit log), which it keeps for its life.
 *
 * When apid dies its requests become orphans.  What they set going runs
 * on (a create already with the proxy completes and its record stays)
 * except what serves only the client that is gone: a command is
 * cancelled, a snapshot waiting for apid's half is failed.
 */
#include <sys/tree.h>

#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "log.h"
#include "managerd.h"

/* Up to two kinds of reply that leave a request open (0: unused). */
#define REQUEST_INTERIMS	2

struct request_kind {
	uint32_t	 type;
	uint32_t	 interim[REQUEST_INTERIMS];
	void		(*orphaned)(uint32_t id);	/* NULL: runs on */
};

static const struct request_kind request_kinds[] = {
	{ MSG_HEALTH_REQUEST, { 0 }, NULL },
	{ MSG_SANDBOX_CREATE, { 0 }, NULL },
	{ MSG_SANDBOX_LIST, { MSG_SANDBOX_INFO }, NULL },
	{ MSG_SANDBOX_GET, { 0 }, NULL },
	{ MSG_SANDBOX_DELETE, { 0 }, NULL },
	{ MSG_SANDBOX_TIMEOUT, { 0 }, NULL },
	{ MSG_EXEC_START, { MSG_EXEC_STARTED }, exec_cancel },
	{ MSG_FILE_READ, { MSG_FILE_READ_STARTED }, NULL },
	{ MSG_FILE_WRITE_BEGIN, { MSG_FILE_SPOOL, MSG_FILE_WRITE_READY },
	    file_write_orphaned },
	{ MSG_FILE_LIST, { MSG_FILE_LIST_STARTED }, exec_cancel },
	{ MSG_SNAPSHOT_CREATE, { MSG_SNAPSHOT_SINK }, snapshot_abandoned },
	{ MSG_SNAPSHOT_LIST, { MSG_SNAPSHOT_INFO }, NULL },
	{ MSG_SNAPSHOT_GET, { 0 }, NULL },
	{ MSG_SNAPSHOT_DELETE, { 0 }, NULL },
	{ MSG_SANDBOX_ROLLBACK, { 0 }, NULL },
	{ MSG_SNAPSHOT_FORK, { 0 }, NULL },
	{ MSG_PROCESS_START, { 0 }, NULL },
	{ MSG_PROCESS_LIST, { MSG_PROCESS_INFO }, NULL },
	{ MSG_PROCESS_GET, { 0 }, NULL },
	{ MSG_PROCESS_OUTPUT, { 0 }, NULL },
	{ MSG_PROCESS_STDIN, { 0 }, NULL },
	{ MSG_PROCESS_SIGNAL, { 0 }, NULL },
	{ MSG_PROCESS_DELETE, { 0 }, NULL },
	{ MSG_PROCESS_RESIZE, { 0 }, NULL },
	{ MSG_METRICS_REQUEST, { MSG_METRICS_TEXT }, NULL },
	{ MSG_SANDBOX_PATCH, { 0 }, NULL },
	{ MSG_SANDBOX_STATS, { 0 }, NULL },
	{ MSG_NETWORK_GET, { 0 }, NULL },
	{ MSG_NETWORK_PUT, { 0 }, NULL },
	{ MSG_NETWORK_LOG, { MSG_NETWORK_LOG_TEXT }, NULL },
};

struct apid_request {
	RB_ENTRY(apid_request)	 by_id;
	RB_ENTRY(apid_request)	 by_peerid;	/* while its apid lives */
	uint32_t		 id;		/* ours */
	uint32_t		 peerid;	/* apid's */
	const struct request_kind *kind;
	struct caller		 caller;
	int			 orphan;
	int			 orphan_due;	/* its orphaned() to run */
	struct audit_pending	*audit;		/* NULL: not audited */
};

static int
id_cmp(struct apid_request *a, struct apid_request *b)
{
	return a->id < b->id ? -1 : a->id > b->id;
}

static int
peerid_cmp(struct apid_request *a, struct apid_request *b)
{
	return a->peerid < b->peerid ? -1 : a->peerid > b->peerid;
}

RB_HEAD(requests_by_id, apid_request);
RB_HEAD(requests_by_peerid, apid_request);
/* libbsd's tree.h leaves __unused undefined (glibc uses the name). */
#define __unused	__attribute__((__unused__))
RB_GENERATE_STATIC(requests_by_id, apid_request, by_id, id_cmp)
RB_GENERATE_STATIC(requests_by_peerid, apid_request, by_peerid, peerid_cmp)
#undef __unused

static struct requests_by_id	 by_id = RB_INITIALIZER(&by_id);
static struct requests_by_peerid by_peerid = RB_INITIALIZER(&by_peerid);
static uint32_t			 next_id = 1;
static size_t			 nrequests;
/* The caller that came, for the request that must come next. */
static struct caller		 pending;
static uint32_t			 pending_peerid;
static int			 has_pending;

static const struct request_kind *
request_kind(uint32_t type)
{
	size_t	 i;

	for (i = 0; i < sizeof(request_kinds) / sizeof(request_kinds[0]);
	    i++) {
		if (request_kinds[i].type == type)
			return &request_kinds[i];
	}
	return NULL;
}

int
apid_request_opens(uint32_t type)
{
	return request_kind(type) != NULL;
}

/* MSG_ERROR, or any reply but the kind's interim ones, is the last. */
static int
request_interim(const struct request_kind *kind, uint32_t type)
{
	size_t	 i;

	if (type == MSG_ERROR)
		return 0;
	for (i = 0; i < REQUEST_INTERIMS; i++) {
		if (kind->interim[i] != 0 && kind->interim[i] == type)
			return 1;
	}
	return 0;
}

static struct apid_request *
request_find(uint32_t id)
{
	struct apid_request	 key;

	key.id = id;
	return RB_FIND(requests_by_id, &by_id, &key);
}

/* An id no live request has: the counter wraps, and skips those in use. */
static uint32_t
request_new_id(void)
{
	uint32_t	 id;

	do {
		id = next_id++;
		if (next_id == 0)
			next_id = 1;
	} while (request_find(id) != NULL);
	return id;
}

static void
request_end(struct apid_request *r)
{
	RB_REMOVE(requests_by_id, &by_id, r);
	if (!r->orphan)
		RB_REMOVE(requests_by_peerid, &by_peerid, r);
	nrequests--;
	caller_free(&r->caller);
	free(r);
}

/*
 * MSG_CALLER: kept until its request comes, which must be the very next
 * message.  apid sends the two together: anything else between them, a
 * second caller, or a caller for another id is a lie.
 */
void
apid_request_caller_take(struct peer *p, struct imsg *imsg)
{
	if (has_pending)
		peer_bad_message(p, imsg, "two callers in a row");
	if (msg_get_caller(imsg, &pending) == -1)
		peer_bad_message(p, imsg, "malformed caller");
	pending_peerid = imsg->hdr.peerid;
	has_pending = 1;
}

/* Any message but a request, while a caller waits for one: a lie. */
void
apid_request_no_caller(struct peer *p, struct imsg *imsg)
{
	if (has_pending)
		peer_bad_message(p, imsg, "a caller not followed by its "
		    "request");
}

const struct caller *
apid_request_caller(uint32_t id)
{
	struct apid_request	*r;

	return (r = request_find(id)) != NULL ? &r->caller : NULL;
}

/*
 * No memory for the request's record: it fails (500) under apid's own id,
 * as it would have after; apid's follow-ups then name no request.
 */
static void
request_refuse(uint32_t peerid)
{
	struct msgw	 w;

	caller_free(&pending);
	has_pending = 0;
	msgw_init(&w);
	msgw_u32(&w, ERR_INTERNAL);
	msgw_str(&w, "out of memory");
	if (peer_send(&env->apid_peer, MSG_ERROR, peerid, -1, &w) == -1)
		log_warnx("cannot answer apid's request %u", peerid);
}

/*
 * A type apid may send gets a line in request_kinds[] (or is a follow-up,
 * dispatch_apid.c): anything else is no request.
 */
uint32_t
apid_request_open(struct peer *p, struct imsg *imsg)
{
	const struct request_kind	*kind;
	struct apid_request		*r;

	if ((kind = request_kind(imsg->hdr.type)) == NULL)
		peer_bad_message(p, imsg, "not a request apid may make");
	if (!has_pending)
		peer_bad_message(p, imsg, "a request without its caller");
	if (pending_peerid != imsg->hdr.peerid)
		peer_bad_message(p, imsg, "its caller was for another request");
	/* Looked up first: nothing is allocated for a message that lies. */
	if (apid_request_find(imsg->hdr.peerid) != 0)
		peer_bad_message(p, imsg, "a request id already in use");
	if ((r = calloc(1, sizeof(*r))) == NULL) {
		request_refuse(imsg->hdr.peerid);
		return 0;
	}
	r->peerid = imsg->hdr.peerid;
	r->kind = kind;
	r->caller = pending;
	memset(&pending, 0, sizeof(pending));
	has_pending = 0;
	r->audit = audit_begin(imsg);
	log_debug("%s from %s, key \"%s\" of tenant \"%s\"%s",
	    r->caller.route, r->caller.client_addr, r->caller.key_name,
	    r->caller.tenant, r->caller.admin ? " (admin)" : "");
	RB_INSERT(requests_by_peerid, &by_peerid, r);
	r->id = request_new_id();
	RB_INSERT(requests_by_id, &by_id, r);
	nrequests++;
	return r->id;
}

uint32_t
apid_request_find(uint32_t peerid)
{
	struct apid_request	 key, *r;

	key.peerid = peerid;
	r = RB_FIND(requests_by_peerid, &by_peerid, &key);
	return r != NULL ? r->id : 0;
}

int
apid_request_reply(uint32_t id, uint32_t type, const struct msgw *w,
    uint32_t *peerid)
{
	struct apid_request	*r;
	int			 orphan;

	if ((r = request_find(id)) == NULL) {
		log_warnx("%s for request %u, which is over",
		    msg_type_name(type), id);
		return -1;
	}
	*peerid = r->peerid;
	orphan = r->orphan;
	if (!request_interim(r->kind, type)) {
		audit_end(r->audit, &r->caller, type, w != NULL ? w->buf :
		    NULL, w != NULL ? w->len : 0, orphan);
		request_end(r);
	}
	return orphan ? -1 : 0;
}

void
apid_request_close(uint32_t id)
{
	struct apid_request	*r;

	if ((r = request_find(id)) != NULL) {
		audit_end_unanswered(r->audit, &r->caller);
		request_end(r);
	}
}

/*
 * Every request of the apid that died.  The orphaned actions may answer
 * (and so end) the request they are given, or others: each is marked
 * first, then the tree is walked again from the id just done, so that
 * nothing freed is followed and nothing is allocated.
 */
void
apid_requests_orphan(void)
{
	struct apid_request	*r, key;

	/* A caller whose request never came went with its apid. */
	caller_free(&pending);
	has_pending = 0;
	while ((r = RB_ROOT(&by_peerid)) != NULL) {
		RB_REMOVE(requests_by_peerid, &by_peerid, r);
		r->orphan = 1;
		r->orphan_due = r->kind->orphaned != NULL;
	}
	r = RB_MIN(requests_by_id, &by_id);
	while (r != NULL) {
		if (!r->orphan_due) {
			r = RB_NEXT(requests_by_id, &by_id, r);
			continue;
		}
		r->orphan_due = 0;
		key.id = r->id;
		r->kind->orphaned(r->id);
		r = RB_NFIND(requests_by_id, &by_id, &key);
	}
}

size_t
apid_request_count(void)
{
	return nrequests;
}
