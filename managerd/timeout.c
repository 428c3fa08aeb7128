/*
 * POST /v1/sandboxes/{id}/timeout (API.md §4.6): a new expiry, now + TTL,
 * on disk before the answer, under the sandbox's lock.  The TTL bound is
 * checked before the sandbox's existence, as the reference does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "managerd.h"

struct timeout_op {
	uint32_t	 apid_id;
	int64_t		 secs;
	struct sandbox	*sb;
};

static void
timeout_state(struct imsg *reply, void *arg)
{
	struct timeout_op	*op = arg;

	apid_reply_state(op->apid_id, op->sb, reply);
	sandbox_unlock(op->sb);
	free(op);
}

static void
timeout_run(struct sandbox *sb, void *arg)
{
	struct timeout_op	*op = arg;
	struct msgw		 w;
	double			 old;
	int			 saved;

	op->sb = sb;
	if (sb->gone) {
		apid_not_found(op->apid_id, sb->rec.id);
		goto done;
	}
	old = sb->rec.expires_at;
	sb->rec.expires_at = clock_wall() + (double)op->secs;
	if (store_sandbox_write(env->datadir_fd, &sb->rec) == -1) {
		saved = errno;
		log_warn("cannot record sandbox %s", sb->rec.id);
		sb->rec.expires_at = old;
		apid_error(op->apid_id, storage_error(saved, ERR_INTERNAL),
		    "cannot record sandbox %s: %s", sb->rec.id,
		    strerror(saved));
		goto done;
	}
	sb->retry_at = 0;
	reaper_schedule();
	msgw_init(&w);
	msg_put_string(&w, sb->rec.id);
	if (proxy_call(MSG_DOCKER_STATE, -1, &w, 0, MSG_DOCKER_STATE_RESULT,
	    timeout_state, op) == 0) {
		apid_error(op->apid_id, ERR_INTERNAL,
		    "cannot reach dockerd-proxy");
		goto done;
	}
	return;
done:
	free(op);
	sandbox_unlock(sb);
}

void
sandbox_set_timeout(uint32_t apid_id, const char *id, int64_t secs)
{
	struct timeout_op	*op;
	struct sandbox		*sb;

	if (secs < 1 || secs > env->conf.max_timeout_seconds) {
		apid_error(apid_id, ERR_INVALID_REQUEST,
		    "timeout_seconds must be in [1, %ld]",
		    env->conf.max_timeout_seconds);
		return;
	}
	if ((sb = sandbox_find_for(apid_id, id)) == NULL) {
		apid_not_found(apid_id, id);
		return;
	}
	if ((op = calloc(1, sizeof(*op))) == NULL) {
		apid_error(apid_id, ERR_INTERNAL, "out of memory");
		return;
	}
	op->apid_id = apid_id;
	op->secs = secs;
	if (sandbox_lock(sb, timeout_run, op) == -1) {
		apid_error(apid_id, ERR_INTERNAL, "out of memory");
		free(op);
	}
}
