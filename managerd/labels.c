/*
 * PATCH /v1/sandboxes/{id} (docs/rest-api.md "Labels"): a JSON merge
 * patch of a sandbox's labels, under the sandbox's lock like a TTL reset
 * (so it waits for a rollback or a snapshot to end, and finds a sandbox
 * destroyed meanwhile gone: 404), the bounds applied to the result, the
 * record on disk before the answer.  And the list's filter.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "managerd.h"

struct patch_op {
	uint32_t		 apid_id;
	struct label_patch	 patch;
	struct sandbox		*sb;
};

static void
patch_op_free(struct patch_op *op)
{
	label_patch_free(&op->patch);
	free(op);
}

static void
patch_state(struct imsg *reply, void *arg)
{
	struct patch_op	*op = arg;

	apid_reply_state(op->apid_id, op->sb, reply);
	sandbox_unlock(op->sb);
	patch_op_free(op);
}

/* The labels the patch makes of cur, in out: 0, or -1 answered. */
static int
patch_apply(struct patch_op *op, const struct label_list *cur,
    struct label_list *out)
{
	const struct label_patch	*p = &op->patch;
	size_t				 i;

	memset(out, 0, sizeof(*out));
	if (p->clear)
		return 0;
	if (labels_copy(out, cur) == -1)
		goto oom;
	for (i = 0; i < p->set.count; i++)
		if (labels_set(out, p->set.keys[i], p->set.values[i]) == -1)
			goto oom;
	for (i = 0; i < p->nremove; i++)
		labels_remove(out, p->remove[i]);
	if (out->count > LABELS_MAX) {
		labels_free(out);
		apid_error(op->apid_id, ERR_INVALID_REQUEST,
		    "a sandbox has at most %d labels", LABELS_MAX);
		return -1;
	}
	return 0;
oom:
	labels_free(out);
	apid_error(op->apid_id, ERR_INTERNAL, "out of memory");
	return -1;
}

/* The new labels on disk, then in memory: -1 answered, nothing changed. */
static int
patch_record(struct patch_op *op, struct label_list *next)
{
	struct sandbox		*sb = op->sb;
	struct label_list	 old = sb->rec.labels;
	int			 saved;

	sb->rec.labels = *next;
	if (store_sandbox_write(env->datadir_fd, &sb->rec) == -1) {
		saved = errno;
		log_warn("cannot record sandbox %s", sb->rec.id);
		sb->rec.labels = old;
		labels_free(next);
		apid_error(op->apid_id, storage_error(saved, ERR_INTERNAL),
		    "cannot record sandbox %s: %s", sb->rec.id,
		    strerror(saved));
		return -1;
	}
	labels_free(&old);
	return 0;
}

static void
patch_run(struct sandbox *sb, void *arg)
{
	struct patch_op		*op = arg;
	struct label_list	 next;
	struct msgw		 w;

	op->sb = sb;
	if (sb->gone) {
		apid_not_found(op->apid_id, sb->rec.id);
		goto done;
	}
	if (patch_apply(op, &sb->rec.labels, &next) == -1 ||
	    patch_record(op, &next) == -1)
		goto done;
	log_info("sandbox %s: labels changed (%zu now)", sb->rec.id,
	    sb->rec.labels.count);
	msgw_init(&w);
	msg_put_string(&w, sb->rec.id);
	if (proxy_call(MSG_DOCKER_STATE, -1, &w, 0, MSG_DOCKER_STATE_RESULT,
	    patch_state, op) == 0) {
		apid_error(op->apid_id, ERR_INTERNAL,
		    "cannot reach dockerd-proxy");
		goto done;
	}
	return;
done:
	patch_op_free(op);
	sandbox_unlock(sb);
}

/* Takes the patch's contents. */
void
sandbox_patch(uint32_t apid_id, struct label_patch *patch)
{
	struct patch_op	*op;
	struct sandbox	*sb;

	if ((sb = sandbox_find_for(apid_id, patch->id)) == NULL) {
		apid_not_found(apid_id, patch->id);
		label_patch_free(patch);
		return;
	}
	if ((op = calloc(1, sizeof(*op))) == NULL) {
		apid_error(apid_id, ERR_INTERNAL, "out of memory");
		label_patch_free(patch);
		return;
	}
	op->apid_id = apid_id;
	op->patch = *patch;
	memset(patch, 0, sizeof(*patch));
	if (sandbox_lock(sb, patch_run, op) == -1) {
		apid_error(apid_id, ERR_INTERNAL, "out of memory");
		patch_op_free(op);
	}
}
