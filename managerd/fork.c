/*
 * POST /v1/snapshots/{snap}/fork (API.md §4.17, §7.4): a new sandbox from
 * a snapshot.  Its spec is the snapshot's with the request's overrides,
 * checked exactly as a create's against the current settings (the TTL is
 * the given one or the server's default, never the source's); then a
 * quota slot, apid's check of the tar, the container through create's
 * path, the import, and the record.  A failure at any step leaves nothing
 * behind (a sandbox whose import failed is destroyed) and gives the slot
 * back.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "managerd.h"

struct fork_op {
	uint32_t		 apid_id;
	int64_t			 ttl;
	struct sandbox		*sb;	/* not in the table yet */
	struct snapshot_tar	 tar;
	uint32_t		 kind;	/* the failure being undone */
	char			*cause;
};

/* Ends the fork: the slot goes back, nothing is left but a success. */
static void
fork_end(struct fork_op *op)
{
	quota_release();
	snapshot_tar_close(&op->tar);
	if (op->sb != NULL)
		sandbox_release(op->sb);
	free(op->cause);
	free(op);
}

static void
fork_undone(struct imsg *reply, void *arg)
{
	struct fork_op	*op = arg;

	proxy_destroy_logged(reply, "forked sandbox", op->sb->rec.id);
	apid_error(op->apid_id, op->kind, "%s",
	    op->cause != NULL ? op->cause : "fork failed");
	fork_end(op);
}

/* The container exists but the fork failed: destroy it, then answer. */
static void
fork_undo(struct fork_op *op, uint32_t kind, const char *cause)
{
	egress_forget(op->sb);
	op->kind = kind;
	op->cause = strdup(cause);
	/* The slot stays taken until the container is gone. */
	if (proxy_destroy(op->sb->rec.id, fork_undone, op) == 0)
		fork_undone(NULL, op);
}

static void
fork_attached(enum error_kind kind, const char *why, void *arg)
{
	struct fork_op	*op = arg;
	struct sandbox	*sb = op->sb;
	char		 cause[MSG_MAX_STRING];
	int		 saved;

	if (kind != 0) {
		snprintf(cause, sizeof(cause), "cannot give sandbox %s its "
		    "network: %s", sb->rec.id, why);
		fork_undo(op, kind, cause);
		return;
	}
	sb->rec.created_at = clock_wall();
	sb->rec.expires_at = sb->rec.created_at + (double)op->ttl;
	if (store_sandbox_write(env->datadir_fd, &sb->rec) == -1) {
		saved = errno;
		snprintf(cause, sizeof(cause), "cannot record sandbox %s: %s",
		    sb->rec.id, strerror(saved));
		log_warnx("%s", cause);
		/* In place if only the directory's fsync failed. */
		(void)store_sandbox_remove(env->datadir_fd, sb->rec.id);
		fork_undo(op, storage_error(saved, ERR_INTERNAL), cause);
		return;
	}
	sandbox_insert(sb);
	op->sb = NULL;		/* the table's now */
	reaper_schedule();
	/* §3.3: a fork's response says "running" without asking. */
	apid_reply_info(op->apid_id, sb, 1, SANDBOX_REASON_NONE);
	log_info("sandbox %s forked from snapshot %s", sb->rec.id,
	    sb->rec.source_snapshot_id);
	fork_end(op);
}

/* Its files are in: a policy sandbox gets its way out, then a record. */
static void
fork_imported(void *arg, enum error_kind kind, const char *text)
{
	struct fork_op	*op = arg;

	if (kind != 0) {
		fork_undo(op, kind, text);
		return;
	}
	if (op->sb->rec.egress.mode != EGRESS_NONE)
		egress_attach(op->sb, fork_attached, op);
	else
		fork_attached(0, NULL, op);
}

static void
fork_created(struct imsg *reply, void *arg)
{
	struct fork_op	*op = arg;

	metrics_sandbox_created("fork", reply->hdr.type != MSG_ERROR);
	if (reply->hdr.type == MSG_ERROR) {
		relay_error(reply, op->apid_id);
		fork_end(op);
		return;
	}
	if (reply->len != 0)
		peer_bad_message(&env->proxy_peer, reply, "unexpected payload");
	if (snapshot_tar_put(&op->tar, op->sb->rec.id, fork_imported,
	    op) == -1)
		fork_undo(op, ERR_INTERNAL, "cannot reach dockerd-proxy");
}

static void
fork_checked(void *arg, enum error_kind kind, const char *text)
{
	struct fork_op	*op = arg;

	if (kind != 0) {
		apid_error(op->apid_id, kind, "%s", text);
		fork_end(op);
		return;
	}
	if (sandbox_docker_create(op->sb, fork_created, op) == -1) {
		if (errno == E2BIG)
			apid_error(op->apid_id, ERR_INVALID_REQUEST,
			    "the sandbox's environment is too large");
		else
			apid_error(op->apid_id, ERR_INTERNAL,
			    "cannot reach dockerd-proxy");
		fork_end(op);
	}
}

/* The snapshot's spec as a create request, with the overrides. */
static void
fork_request_spec(struct create_request *c, struct sandbox_spec *spec,
    const struct fork_request *req)
{
	memset(c, 0, sizeof(*c));
	c->image = spec->image;
	c->has_cpus = 1;
	c->cpus = req->has_cpus ? req->cpus : spec->cpus;
	c->has_memory_mb = 1;
	c->memory_mb = req->has_memory_mb ? req->memory_mb : spec->memory_mb;
	c->has_pids_limit = 1;
	c->pids_limit = spec->pids_limit;
	c->network = req->has_network ? req->network : spec->network;
	c->network_policy = req->has_network ? req->network_policy : NULL;
	c->read_only_rootfs = spec->read_only_rootfs;
	c->has_timeout_seconds = req->has_timeout_seconds;
	c->timeout_seconds = req->timeout_seconds;
	c->env = spec->env;
	memset(&spec->env, 0, sizeof(spec->env));
}

void
snapshot_fork(uint32_t apid_id, struct fork_request *req)
{
	struct snapshot_record	 rec;
	struct create_request	 c;
	struct sandbox_spec	 spec;
	struct egress_policy	 egress;
	struct fork_op		*op;
	int64_t			 ttl;
	int			 rc;

	if (snapshot_load_for(apid_id, req->snapshot_id, &rec) == -1) {
		reply_snapshot_error(apid_id, req->snapshot_id);
		return;
	}
	fork_request_spec(&c, &rec.spec, req);
	/* A fork that names no network has its snapshot's. */
	rc = create_check(apid_id, &c, req->has_network ? NULL : &rec.egress,
	    &spec, &egress, &ttl);
	/* c borrowed the image and took the env (now in spec, or here). */
	env_list_free(&c.env);
	if (rc == -1) {
		snapshot_record_free(&rec);
		return;
	}
	if (tenant_quota_check(apid_id, &spec) == -1 ||
	    create_reserve(apid_id) == -1) {
		snapshot_record_free(&rec);
		sandbox_spec_free(&spec);
		egress_policy_free(&egress);
		return;
	}
	if ((op = calloc(1, sizeof(*op))) == NULL ||
	    (op->sb = sandbox_new()) == NULL ||
	    (op->sb->rec.source_snapshot_id = strdup(rec.id)) == NULL) {
		if (op != NULL && op->sb != NULL)
			sandbox_release(op->sb);
		free(op);
		snapshot_record_free(&rec);
		sandbox_spec_free(&spec);
		egress_policy_free(&egress);
		quota_release();
		apid_error(apid_id, ERR_INTERNAL, "out of memory");
		return;
	}
	op->apid_id = apid_id;
	op->ttl = ttl;
	op->tar.check_fd = op->tar.put_fd = -1;
	sandbox_make_id(op->sb->rec.id, sizeof(op->sb->rec.id));
	op->sb->rec.spec = spec;
	op->sb->rec.egress = egress;
	/* The fork is its caller's, whoever's the snapshot was. */
	strlcpy(op->sb->rec.tenant, tenant_of(apid_id),
	    sizeof(op->sb->rec.tenant));
	tenant_pending_add(op->sb);
	/* Only the request's labels: a fork is a new sandbox of its own. */
	op->sb->rec.labels = req->labels;
	memset(&req->labels, 0, sizeof(req->labels));
	if (snapshot_tar_open(rec.id, &op->tar) == -1) {
		reply_snapshot_error(apid_id, rec.id);
		snapshot_record_free(&rec);
		fork_end(op);
		return;
	}
	snapshot_record_free(&rec);
	if (snapshot_tar_check(&op->tar, fork_checked, op) == -1) {
		apid_error(apid_id, ERR_INTERNAL, "cannot reach apid");
		fork_end(op);
	}
}
