/*
 * POST /v1/sandboxes/{id}/rollback (API.md §4.13, §7.2): restore a
 * snapshot in place, under the sandbox's lock.  apid checks the tar
 * first; then the container and volume are destroyed and created again
 * with the same id and the sandbox's own spec (not the snapshot's), the
 * tar is imported, and the record gets the snapshot as its
 * source_snapshot_id.  id, spec, created_at and expires_at stay; no quota
 * slot is used.
 *
 * Failures (stricter than the reference, §16.3):
 * - before the destroy (no such snapshot or sandbox, a tar that may not
 *   be restored, the proxy unreachable, the record that cannot be taken
 *   off the disk) the sandbox is left exactly as it was;
 * - during or after the destroy (destroy, create, import or the record
 *   failing) the sandbox is removed completely: whatever Docker may hold
 *   of it is destroyed (best effort; the next start removes what is
 *   left), its record is deleted and it leaves the table.  The error keeps
 *   its cause's kind and says "<cause>; sandbox <id> was removed".  A
 *   record never points at nothing.
 *
 * A crash (managerd killed) in the middle of a rollback: the record file
 * is deleted (and the directory fsync'd) just before the destroy is
 * asked for, and written again only once the import succeeded.  So a
 * restart (recover.c, §8.5) finds either
 * - the old record and the untouched container (killed before the
 *   destroy): the sandbox is kept as it was;
 * - no record (killed between the destroy and the new record): whatever
 *   Docker holds of the sandbox -- the old container, nothing, or a new
 *   container whose workspace was never restored -- is an orphan and is
 *   destroyed, which is the "removed completely" of a failure above;
 * - the new record and the restored container (killed after it): the
 *   rollback is complete, only its answer was lost.
 * Never a kept record over a half-restored workspace.  The snapshot
 * itself is only read.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "managerd.h"

struct rollback_op {
	uint32_t		 apid_id;
	char			 snap[SNAPSHOT_ID_LEN + 1];
	struct sandbox		*sb;		/* locked by us */
	struct snapshot_tar	 tar;
	uint32_t		 kind;		/* why it was removed */
	char			*cause;
	int			 replied;	/* before the removal */
};

static void
rollback_end(struct rollback_op *op)
{
	struct sandbox	*sb = op->sb;

	snapshot_tar_close(&op->tar);
	free(op->cause);
	free(op);
	sb->replacing = 0;
	sandbox_unlock(sb);
}

static void
rollback_lost_answer(struct rollback_op *op)
{
	apid_error(op->apid_id, op->kind, "%s; sandbox %s was removed",
	    op->cause != NULL ? op->cause : "rollback failed", op->sb->rec.id);
	op->replied = 1;
}

/* The best-effort destroy of a lost sandbox is done: forget it. */
static void
rollback_removed(struct imsg *reply, void *arg)
{
	struct rollback_op	*op = arg;
	struct sandbox		*sb = op->sb;

	proxy_destroy_logged(reply, "sandbox", sb->rec.id);
	if (store_sandbox_remove(env->datadir_fd, sb->rec.id) == -1)
		log_warn("cannot remove the record of sandbox %s", sb->rec.id);
	log_warnx("rollback of sandbox %s failed: it was removed", sb->rec.id);
	if (!op->replied)
		rollback_lost_answer(op);
	sandbox_remove(sb);
	reaper_schedule();
	rollback_end(op);
}

/*
 * A failure during or after the destroy: the sandbox is lost.  If Docker
 * is hung (a deadline passed), the best-effort destroy would wait out a
 * deadline of its own: the client hears first.
 */
static void
rollback_lost(struct rollback_op *op, uint32_t kind, const char *cause)
{
	op->kind = kind;
	op->cause = strdup(cause);
	if (kind == ERR_TIMEOUT)
		rollback_lost_answer(op);
	if (proxy_destroy(op->sb->rec.id, rollback_removed, op) == 0)
		rollback_removed(NULL, op);
}

static void
rollback_lost_reply(struct rollback_op *op, struct imsg *reply)
{
	uint32_t	 kind;
	char		*text;

	text = proxy_error_text(reply, &kind);
	rollback_lost(op, kind, text);
	free(text);
}

static void
rollback_state(struct imsg *reply, void *arg)
{
	struct rollback_op	*op = arg;
	uint32_t		 kind;
	char			*text;
	int			 running = 0, reason = SANDBOX_REASON_NONE;

	/* The rollback is done; a state we cannot learn reads "stopped". */
	if (reply->hdr.type == MSG_ERROR) {
		text = proxy_error_text(reply, &kind);
		log_warnx("sandbox %s: cannot learn its state: %s",
		    op->sb->rec.id, text);
		free(text);
	} else
		running = docker_state_running(reply, &reason);
	apid_reply_info(op->apid_id, op->sb, running, reason);
	rollback_end(op);
}

static void
rollback_imported(void *arg, enum error_kind kind, const char *text)
{
	struct rollback_op	*op = arg;
	struct sandbox		*sb = op->sb;
	struct msgw		 w;
	char			*old, cause[256];
	int			 saved;

	if (kind != 0) {
		rollback_lost(op, kind, text);
		return;
	}
	old = sb->rec.source_snapshot_id;
	if ((sb->rec.source_snapshot_id = strdup(op->snap)) == NULL) {
		sb->rec.source_snapshot_id = old;
		rollback_lost(op, ERR_INTERNAL, "out of memory");
		return;
	}
	if (store_sandbox_write(env->datadir_fd, &sb->rec) == -1) {
		saved = errno;
		snprintf(cause, sizeof(cause), "cannot record sandbox %s: %s",
		    sb->rec.id, strerror(saved));
		log_warnx("%s", cause);
		free(sb->rec.source_snapshot_id);
		sb->rec.source_snapshot_id = old;
		rollback_lost(op, storage_error(saved, ERR_INTERNAL),
		    cause);
		return;
	}
	free(old);
	log_info("sandbox %s rolled back to snapshot %s", sb->rec.id,
	    op->snap);
	/* §4.13: the fresh status. */
	msgw_init(&w);
	msg_put_string(&w, sb->rec.id);
	if (proxy_call(MSG_DOCKER_STATE, -1, &w, 0, MSG_DOCKER_STATE_RESULT,
	    rollback_state, op) == 0) {
		apid_reply_info(op->apid_id, sb, 0, SANDBOX_REASON_NONE);
		rollback_end(op);
	}
}

static void
rollback_created(struct imsg *reply, void *arg)
{
	struct rollback_op	*op = arg;

	if (reply->hdr.type == MSG_ERROR) {
		rollback_lost_reply(op, reply);
		return;
	}
	if (reply->len != 0)
		peer_bad_message(&env->proxy_peer, reply, "unexpected payload");
	if (snapshot_tar_put(&op->tar, op->sb->rec.id, rollback_imported,
	    op) == -1)
		rollback_lost(op, ERR_INTERNAL, "cannot reach dockerd-proxy");
}

static void
rollback_destroyed(struct imsg *reply, void *arg)
{
	struct rollback_op	*op = arg;

	if (reply->hdr.type == MSG_ERROR) {
		rollback_lost_reply(op, reply);
		return;
	}
	if (reply->len != 0)
		peer_bad_message(&env->proxy_peer, reply, "unexpected payload");
	if (sandbox_docker_create(op->sb, rollback_created, op) == -1)
		rollback_lost(op, ERR_INTERNAL, errno == E2BIG ?
		    "the sandbox's environment is too large" :
		    "cannot reach dockerd-proxy");
}

/*
 * The record written back when the rollback stops before the destroy; if
 * it cannot be (logged), the sandbox lives on without one and the next
 * start removes it.
 */
static void
rollback_restore(struct rollback_op *op)
{
	if (store_sandbox_write(env->datadir_fd, &op->sb->rec) == -1)
		log_warn("cannot write the record of sandbox %s back; the "
		    "next start removes the sandbox", op->sb->rec.id);
}

/*
 * Take the sandbox's record off the disk, durably, before its container
 * is destroyed.  -1: answered, nothing else changed (the record is back,
 * or logged if it cannot be).
 */
static int
rollback_unrecord(struct rollback_op *op)
{
	const char	*id = op->sb->rec.id;
	int		 saved;

	if (store_sandbox_remove(env->datadir_fd, id) == -1) {
		saved = errno;
		log_warn("rollback of sandbox %s: cannot remove its record", id);
		apid_error(op->apid_id, ERR_INTERNAL, "cannot update the record "
		    "of sandbox %s: %s", id, strerror(saved));
		return -1;
	}
	if (store_sandbox_sync_dir(env->datadir_fd) == -1) {
		saved = errno;
		log_warn("rollback of sandbox %s: cannot sync its record's "
		    "removal", id);
		rollback_restore(op);
		apid_error(op->apid_id, ERR_INTERNAL, "cannot update the record "
		    "of sandbox %s: %s", id, strerror(saved));
		return -1;
	}
	/* The container goes next, and its processes with it. */
	processes_sandbox_gone(id);
	op->sb->replacing = 1;
	return 0;
}

static void
rollback_checked(void *arg, enum error_kind kind, const char *text)
{
	struct rollback_op	*op = arg;

	if (kind != 0) {
		/* Nothing was touched. */
		apid_error(op->apid_id, kind, "%s", text);
		rollback_end(op);
		return;
	}
	/* The record goes before the container: see the top of the file. */
	if (rollback_unrecord(op) == -1) {
		rollback_end(op);
		return;
	}
	if (proxy_destroy(op->sb->rec.id, rollback_destroyed, op) == 0) {
		rollback_restore(op);
		apid_error(op->apid_id, ERR_INTERNAL,
		    "cannot reach dockerd-proxy");
		rollback_end(op);
	}
}

static void
rollback_run(struct sandbox *sb, void *arg)
{
	struct rollback_op	*op = arg;

	op->sb = sb;
	if (sb->gone) {
		apid_not_found(op->apid_id, sb->rec.id);
		rollback_end(op);
		return;
	}
	/* The snapshot may have been deleted while we waited. */
	if (snapshot_tar_open(op->snap, &op->tar) == -1) {
		reply_snapshot_error(op->apid_id, op->snap);
		rollback_end(op);
		return;
	}
	if (snapshot_tar_check(&op->tar, rollback_checked, op) == -1) {
		apid_error(op->apid_id, ERR_INTERNAL, "cannot reach apid");
		rollback_end(op);
	}
}

void
sandbox_rollback(uint32_t apid_id, struct rollback_request *req)
{
	struct snapshot_record	 rec;
	struct rollback_op	*op;
	struct sandbox		*sb;

	/* §4.13: the snapshot is looked up before the sandbox. */
	if (snapshot_load_for(apid_id, req->snapshot_id, &rec) == -1) {
		reply_snapshot_error(apid_id, req->snapshot_id);
		return;
	}
	snapshot_record_free(&rec);
	if ((sb = sandbox_find_for(apid_id, req->sandbox_id)) == NULL) {
		apid_not_found(apid_id, req->sandbox_id);
		return;
	}
	if ((op = calloc(1, sizeof(*op))) == NULL) {
		apid_error(apid_id, ERR_INTERNAL, "out of memory");
		return;
	}
	op->apid_id = apid_id;
	op->tar.check_fd = op->tar.put_fd = -1;
	strlcpy(op->snap, req->snapshot_id, sizeof(op->snap));
	if (sandbox_lock(sb, rollback_run, op) == -1) {
		apid_error(apid_id, ERR_INTERNAL, "out of memory");
		free(op);
	}
}
