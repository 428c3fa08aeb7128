/*
 * Which of apid's requests the audit log records, and what it takes from
 * them: the clock from arrival, the ids from the request's leading
 * fields and from its last reply (a new sandbox's id, a snapshot's, a
 * process's), the outcome from that reply.  Taken here, centrally, from
 * the payloads as common/msg.h declares them, so that no handler has to
 * remember to tell the log anything.
 *
 * Requests that change nothing (health, gets, lists, reads, output) are
 * not audited: they have no line here.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "error_kind.h"
#include "log.h"
#include "managerd.h"

/* What the request's leading string fields are, in order. */
enum audit_field { F_NONE, F_SANDBOX, F_SNAPSHOT, F_PROCESS };

struct audit_kind {
	uint32_t	 type;
	const char	*route;		/* as apid routes it (API.md §4) */
	int		 status;	/* its success status */
	enum audit_field fields[2];
};

#define SB	"/v1/sandboxes/{sandbox_id}"
#define SNAP	"/v1/snapshots/{snapshot_id}"
#define PROC	SB "/processes/{process_id}"

/* Routes as apid's templates name them (apid/http.c route_template). */
static const struct audit_kind audit_kinds[] = {
	{ MSG_SANDBOX_CREATE, "POST /v1/sandboxes", 201, { F_NONE } },
	{ MSG_SANDBOX_DELETE, "DELETE " SB, 204, { F_SANDBOX } },
	{ MSG_SANDBOX_TIMEOUT, "POST " SB "/timeout", 200, { F_SANDBOX } },
	{ MSG_SANDBOX_PATCH, "PATCH " SB, 200, { F_SANDBOX } },
	{ MSG_NETWORK_PUT, "PUT " SB "/network", 200, { F_SANDBOX } },
	{ MSG_EXEC_START, "POST " SB "/exec", 200, { F_SANDBOX } },
	{ MSG_FILE_WRITE_BEGIN, "PUT " SB "/files", 200, { F_SANDBOX } },
	{ MSG_SNAPSHOT_CREATE, "POST " SB "/snapshots", 201, { F_SANDBOX } },
	{ MSG_SNAPSHOT_DELETE, "DELETE " SNAP, 204, { F_SNAPSHOT } },
	{ MSG_SANDBOX_ROLLBACK, "POST " SB "/rollback", 200,
	    { F_SANDBOX, F_SNAPSHOT } },
	{ MSG_SNAPSHOT_FORK, "POST " SNAP "/fork", 201, { F_SNAPSHOT } },
	{ MSG_PROCESS_START, "POST " SB "/processes", 201, { F_SANDBOX } },
	{ MSG_PROCESS_STDIN, "POST " PROC "/stdin", 204,
	    { F_SANDBOX, F_PROCESS } },
	{ MSG_PROCESS_SIGNAL, "POST " PROC "/signal", 204,
	    { F_SANDBOX, F_PROCESS } },
	{ MSG_PROCESS_DELETE, "DELETE " PROC, 204, { F_SANDBOX, F_PROCESS } },
	{ MSG_PROCESS_RESIZE, "POST " PROC "/resize", 204,
	    { F_SANDBOX, F_PROCESS } },
};

/* Requests that change nothing: no line, on purpose. */
static const uint32_t audit_reads[] = {
	MSG_HEALTH_REQUEST, MSG_SANDBOX_LIST, MSG_SANDBOX_GET, MSG_FILE_READ,
	MSG_FILE_LIST, MSG_SNAPSHOT_LIST, MSG_SNAPSHOT_GET, MSG_PROCESS_LIST,
	MSG_PROCESS_GET, MSG_PROCESS_OUTPUT, MSG_METRICS_REQUEST,
	MSG_SANDBOX_STATS, MSG_NETWORK_GET, MSG_NETWORK_LOG,
};

struct audit_pending {
	const struct audit_kind	*kind;
	double			 wall;
	double			 mono;
	char			*ids[4];	/* by enum audit_field */
	int			 lost;		/* an id had no memory */
};

static const struct audit_kind *
audit_kind(uint32_t type)
{
	size_t	 i;

	for (i = 0; i < sizeof(audit_kinds) / sizeof(audit_kinds[0]); i++) {
		if (audit_kinds[i].type == type)
			return &audit_kinds[i];
	}
	return NULL;
}

int
audit_decided(uint32_t type)
{
	size_t	 i;

	for (i = 0; i < sizeof(audit_reads) / sizeof(audit_reads[0]); i++) {
		if (audit_reads[i] == type)
			return 1;
	}
	return audit_kind(type) != NULL;
}

static void
set_id(struct audit_pending *a, enum audit_field f, const char *id)
{
	if (f == F_NONE || id == NULL)
		return;
	free(a->ids[f]);
	/* The line would name the wrong ids: it is lost instead. */
	if ((a->ids[f] = strdup(id)) == NULL)
		a->lost = 1;
}

/*
 * The ids as the client named them, before any check: a request for an
 * id that does not exist is audited with that id.  A payload that does
 * not decode is the handler's to refuse; here it just names nothing.
 */
static void
request_ids(struct audit_pending *a, const struct imsg *imsg)
{
	struct msgr	 r;
	char		*s;
	size_t		 i;

	msgr_init(&r, imsg);
	for (i = 0; i < 2 && a->kind->fields[i] != F_NONE; i++) {
		if ((s = msgr_str(&r, MSG_MAX_ID)) == NULL)
			return;
		set_id(a, a->kind->fields[i], s);
		free(s);
	}
}

struct audit_pending *
audit_begin(const struct imsg *imsg)
{
	const struct audit_kind	*kind;
	struct audit_pending	*a;

	if ((kind = audit_kind(imsg->hdr.type)) == NULL)
		return NULL;
	if ((a = calloc(1, sizeof(*a))) == NULL) {
		audit_lose("out of memory");
		return NULL;
	}
	a->kind = kind;
	a->wall = clock_wall();
	a->mono = clock_monotonic();
	request_ids(a, imsg);
	return a;
}

/* The ids a success made: a new sandbox, snapshot or process. */
static void
reply_ids(struct audit_pending *a, struct imsg *imsg, int *status)
{
	struct sandbox_info	 si;
	struct snapshot_info	 sn;
	struct process_info	 pi;

	switch (imsg->hdr.type) {
	case MSG_SANDBOX_INFO:
		if (msg_get_sandbox_info(imsg, &si) == -1)
			return;
		set_id(a, F_SANDBOX, si.id);
		sandbox_info_free(&si);
		break;
	case MSG_SNAPSHOT_INFO:
		if (msg_get_snapshot_info(imsg, &sn) == -1)
			return;
		set_id(a, F_SNAPSHOT, sn.id);
		snapshot_info_free(&sn);
		break;
	case MSG_PROCESS_INFO:
		if (msg_get_process_info(imsg, &pi) == -1)
			return;
		set_id(a, F_PROCESS, pi.id);
		/* A client_id retry found the first run: apid says 200. */
		if (pi.existed)
			*status = 200;
		process_info_free(&pi);
		break;
	}
}

/* "" (no key without auth, the flat keys' tenant...) is left out. */
static const char *
nonempty(const char *s)
{
	return s != NULL && *s != '\0' ? s : NULL;
}

static void
audit_finish(struct audit_pending *a, const struct caller *c, int status,
    const char *error, int client_gone)
{
	struct audit_record	 r;

	memset(&r, 0, sizeof(r));
	if (a->lost) {
		audit_lose("out of memory");
		goto done;
	}
	r.time = a->wall;
	r.duration = clock_monotonic() - a->mono;
	if (c != NULL) {
		r.key = nonempty(c->key_name);
		r.tenant = nonempty(c->tenant);
		r.client = nonempty(c->client_addr);
		r.route = nonempty(c->route);
	}
	/* apid's template names /exec and /exec/stream apart; ours not. */
	if (r.route == NULL)
		r.route = a->kind->route;
	r.sandbox_id = a->ids[F_SANDBOX];
	r.snapshot_id = a->ids[F_SNAPSHOT];
	r.process_id = a->ids[F_PROCESS];
	r.status = status;
	r.error = error;
	r.client_gone = client_gone;
	audit_write(&r);
done:
	free(a->ids[F_SANDBOX]);
	free(a->ids[F_SNAPSHOT]);
	free(a->ids[F_PROCESS]);
	free(a);
}

void
audit_end(struct audit_pending *a, const struct caller *c, uint32_t type,
    const void *payload, size_t len, int client_gone)
{
	struct imsg	 imsg;
	struct msgr	 r;
	int		 status;
	uint32_t	 kind;

	if (a == NULL)
		return;
	memset(&imsg, 0, sizeof(imsg));
	imsg.hdr.type = type;
	imsg.fd = -1;
	imsg.len = len;
	imsg.data = (unsigned char *)(uintptr_t)payload;
	if (type == MSG_ERROR) {
		msgr_init(&r, &imsg);
		kind = msgr_u32(&r);
		audit_finish(a, c, error_kind_status(kind),
		    error_kind_code(kind), client_gone);
		return;
	}
	status = a->kind->status;
	reply_ids(a, &imsg, &status);
	audit_finish(a, c, status, NULL, client_gone);
}

void
audit_end_unanswered(struct audit_pending *a, const struct caller *c)
{
	if (a != NULL)
		audit_finish(a, c, 0, "no_answer", 0);
}
