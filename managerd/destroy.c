/*
 * DELETE /v1/sandboxes/{id} (API.md §4.5) and the reaper's destroy: the
 * same path, under the sandbox's lock.  Docker first (container and
 * volume), then the record file and the table entry; a Docker error keeps
 * the record.  A destroy that waited for another finds the sandbox gone
 * and answers 404, as a second DELETE does.
 */
#include <stdlib.h>

#include "log.h"
#include "managerd.h"

struct destroy_op {
	uint32_t	 apid_id;
	/* The reaper's: no client, done() instead. */
	void		(*done)(struct sandbox *, int ok);
	struct sandbox	*sb;
};

static void
destroy_finish(struct destroy_op *op, int ok)
{
	struct sandbox	*sb = op->sb;

	if (op->done != NULL)
		op->done(sb, ok);
	free(op);
	sandbox_unlock(sb);
}

static void
destroy_done(struct imsg *reply, void *arg)
{
	struct destroy_op	*op = arg;
	struct sandbox		*sb = op->sb;
	uint32_t		 kind;
	char			*text;

	if (reply->hdr.type == MSG_ERROR) {
		if (op->done == NULL)
			relay_error(reply, op->apid_id);
		else {
			text = proxy_error_text(reply, &kind);
			log_warnx("cannot destroy expired sandbox %s: %s",
			    sb->rec.id, text);
			free(text);
		}
		destroy_finish(op, 0);
		return;
	}
	if (reply->len != 0)
		peer_bad_message(&env->proxy_peer, reply, "unexpected payload");
	/* The container is gone: a record left behind is dropped at start. */
	if (store_sandbox_remove(env->datadir_fd, sb->rec.id) == -1)
		log_warn("cannot remove the record of sandbox %s", sb->rec.id);
	log_info("sandbox %s destroyed%s", sb->rec.id,
	    op->done != NULL ? " (expired)" : "");
	sandbox_remove(sb);
	reaper_schedule();
	if (op->done == NULL)
		apid_reply(op->apid_id, MSG_OK, NULL);
	destroy_finish(op, 1);
}

static void
destroy_run(struct sandbox *sb, void *arg)
{
	struct destroy_op	*op = arg;

	op->sb = sb;
	if (sb->gone) {
		if (op->done == NULL)
			apid_not_found(op->apid_id, sb->rec.id);
		destroy_finish(op, 1);
		return;
	}
	/*
	 * A reap that waited for the lock may find the expiry moved by a
	 * timeout that held it: the client was told the sandbox lives on.
	 */
	if (op->done != NULL && sb->rec.expires_at > clock_wall()) {
		destroy_finish(op, 1);
		return;
	}
	if (proxy_destroy(sb->rec.id, destroy_done, op) == 0) {
		if (op->done == NULL)
			apid_error(op->apid_id, ERR_INTERNAL,
			    "cannot reach dockerd-proxy");
		else
			log_warnx("cannot ask for the destruction of %s",
			    sb->rec.id);
		destroy_finish(op, 0);
	}
}

void
sandbox_delete(uint32_t apid_id, const char *id)
{
	struct destroy_op	*op;
	struct sandbox		*sb;

	if ((sb = sandbox_find(id)) == NULL) {
		apid_not_found(apid_id, id);
		return;
	}
	if ((op = calloc(1, sizeof(*op))) == NULL) {
		apid_error(apid_id, ERR_INTERNAL, "out of memory");
		return;
	}
	op->apid_id = apid_id;
	if (sandbox_lock(sb, destroy_run, op) == -1) {
		apid_error(apid_id, ERR_INTERNAL, "out of memory");
		free(op);
	}
}

int
sandbox_destroy(struct sandbox *sb, void (*done)(struct sandbox *, int))
{
	struct destroy_op	*op;

	if ((op = calloc(1, sizeof(*op))) == NULL)
		return -1;
	op->done = done;
	if (sandbox_lock(sb, destroy_run, op) == -1) {
		free(op);
		return -1;
	}
	return 0;
}
