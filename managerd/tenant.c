/*
 * Tenants (docs/security.md "Tenants"): what a request's caller
 * (apid_request_caller) may see, and the quotas of its key.
 *
 * A sandbox or snapshot record carries the tenant of the key that made
 * it ("" for a flat key's, and for every record from before tenants).
 * A caller sees a record of its own tenant, an admin every record; any
 * other is answered exactly as an id that does not exist (404, the same
 * text), so that ids of other tenants do not leak.  The lookups below
 * are the one place each kind is looked up for a request; a process is
 * its sandbox's.
 *
 * Quotas are the caller's key's (keys.c), counted over its tenant: all
 * the tenant's sandboxes (those being created too), their cpus and
 * memory summed, and the bytes of its stored snapshots.  A flat key has
 * none.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "keys_file.h"
#include "log.h"
#include "managerd.h"

_Static_assert(TENANT_MAX == KEY_NAME_MAX, "a tenant is a keys file name");

/* Sandboxes being created: not in the table yet, but counted. */
static struct sandbox	**pending;
static size_t		  npending, pending_cap;

/* Snapshots being written: each counts as its bound until it is done. */
struct snap_hold {
	char		 tenant[TENANT_MAX + 1];
	uint64_t	 bytes;
	int		 used;
};
static struct snap_hold	*holds;
static size_t		 nholds;

/* NULL (no such request: managerd's own work) sees all. */
static const struct caller *
caller_of(uint32_t apid_id)
{
	return apid_request_caller(apid_id);
}

int
tenant_sees(const struct caller *c, const char *tenant)
{
	return c == NULL || c->admin || strcmp(c->tenant, tenant) == 0;
}

const char *
tenant_of(uint32_t apid_id)
{
	const struct caller	*c = caller_of(apid_id);

	return c != NULL ? c->tenant : "";
}

int
tenant_sandbox_visible(uint32_t apid_id, const struct sandbox *sb)
{
	return tenant_sees(caller_of(apid_id), sb->rec.tenant);
}

struct sandbox *
sandbox_find_for(uint32_t apid_id, const char *id)
{
	struct sandbox	*sb;

	if ((sb = sandbox_find(id)) == NULL ||
	    !tenant_sandbox_visible(apid_id, sb))
		return NULL;
	return sb;
}

int
snapshot_load_for(uint32_t apid_id, const char *id,
    struct snapshot_record *rec)
{
	if (store_snapshot_load(env->datadir_fd, id, rec) == -1)
		return -1;
	if (!tenant_sees(caller_of(apid_id), rec->tenant)) {
		snapshot_record_free(rec);
		errno = ENOENT;
		return -1;
	}
	return 0;
}

/* --- quotas ---------------------------------------------------------- */

static const struct key_quota *
quota_of(uint32_t apid_id)
{
	const struct caller	*c = caller_of(apid_id);

	return c != NULL ? keys_quota(c->key_name) : NULL;
}

struct usage {
	int64_t		 sandboxes;
	double		 cpus;
	int64_t		 memory_mb;
};

static void
usage_add(struct usage *u, const struct sandbox *sb, const char *tenant)
{
	if (strcmp(sb->rec.tenant, tenant) != 0)
		return;
	u->sandboxes++;
	u->cpus += sb->rec.spec.cpus;
	u->memory_mb += sb->rec.spec.memory_mb;
}

static void
usage_of(const char *tenant, struct usage *u)
{
	struct sandbox	*sb;
	size_t		 i;

	memset(u, 0, sizeof(*u));
	for (sb = sandbox_first(); sb != NULL; sb = sandbox_next(sb))
		usage_add(u, sb, tenant);
	for (i = 0; i < npending; i++)
		usage_add(u, pending[i], tenant);
}

/*
 * A new sandbox of spec for the caller's tenant: 0 if it fits the key's
 * quotas, else -1 with the 403 sent.
 */
int
tenant_quota_check(uint32_t apid_id, const struct sandbox_spec *spec)
{
	const struct key_quota	*q;
	struct usage		 u;

	if ((q = quota_of(apid_id)) == NULL)
		return 0;
	usage_of(tenant_of(apid_id), &u);
	if (q->sandboxes != KEY_NO_LIMIT && u.sandboxes + 1 > q->sandboxes)
		return apid_error(apid_id, ERR_QUOTA_EXCEEDED, "quota exceeded: "
		    "the tenant has %" PRId64 " sandboxes and its key may have "
		    "%" PRId64, u.sandboxes, q->sandboxes), -1;
	/* A hundredth of a cpu is the least Docker limits: round so. */
	if (q->cpus >= 0 && (u.cpus + spec->cpus) * 100 > q->cpus * 100 +
	    0.5)
		return apid_error(apid_id, ERR_QUOTA_EXCEEDED, "quota exceeded: "
		    "the tenant's sandboxes would have %g cpus, and its key "
		    "may have %g", u.cpus + spec->cpus, q->cpus), -1;
	if (q->memory_mb != KEY_NO_LIMIT &&
	    u.memory_mb + spec->memory_mb > q->memory_mb)
		return apid_error(apid_id, ERR_QUOTA_EXCEEDED, "quota exceeded: "
		    "the tenant's sandboxes would have %" PRId64 " MB of "
		    "memory, and its key may have %" PRId64,
		    u.memory_mb + spec->memory_mb, q->memory_mb), -1;
	return 0;
}

/* The new sandbox counts from its checks until it is in the table. */
void
tenant_pending_add(struct sandbox *sb)
{
	struct sandbox	**v;

	if (npending == pending_cap) {
		if ((v = reallocarray(pending, pending_cap + 16,
		    sizeof(*v))) == NULL)
			fatal("%s", __func__);
		pending = v;
		pending_cap += 16;
	}
	pending[npending++] = sb;
}

void
tenant_pending_end(struct sandbox *sb)
{
	size_t	 i;

	for (i = 0; i < npending; i++)
		if (pending[i] == sb) {
			pending[i] = pending[--npending];
			return;
		}
}

/*
 * What tenant (a snapshot's: its sandbox's) may still store under the
 * caller's key's quota: -1 without one, else the bytes left (0: none).
 */
int64_t
tenant_snapshot_room(uint32_t apid_id, const char *tenant)
{
	const struct key_quota	*q;
	struct snapshot_record	*v;
	uint64_t		 used = 0;
	size_t			 i, n;

	if ((q = quota_of(apid_id)) == NULL ||
	    q->snapshot_bytes == KEY_NO_LIMIT)
		return -1;
	if (store_snapshot_load_all(env->datadir_fd, NULL, &v, &n) == -1) {
		log_warn("cannot read the snapshots for a quota");
		return 0;
	}
	for (i = 0; i < n; i++) {
		if (strcmp(v[i].tenant, tenant) == 0)
			used += v[i].size_bytes;
		snapshot_record_free(&v[i]);
	}
	free(v);
	for (i = 0; i < nholds; i++)
		if (holds[i].used && strcmp(holds[i].tenant, tenant) == 0)
			used += holds[i].bytes;
	return used >= (uint64_t)q->snapshot_bytes ? 0 :
	    q->snapshot_bytes - (int64_t)used;
}

/*
 * A snapshot of the tenant being written, bounded by bytes: counted as
 * that many until tenant_snapshot_release, so that snapshots made at the
 * same time cannot together pass the quota.  Returns the hold's handle.
 */
size_t
tenant_snapshot_hold(const char *tenant, uint64_t bytes)
{
	struct snap_hold	*v;
	size_t			 i;

	for (i = 0; i < nholds; i++)
		if (!holds[i].used)
			break;
	if (i == nholds) {
		if ((v = reallocarray(holds, nholds + 8, sizeof(*v))) == NULL)
			fatal("%s", __func__);
		memset(v + nholds, 0, 8 * sizeof(*v));
		holds = v;
		nholds += 8;
	}
	strlcpy(holds[i].tenant, tenant, sizeof(holds[i].tenant));
	holds[i].bytes = bytes;
	holds[i].used = 1;
	return i + 1;
}

void
tenant_snapshot_release(size_t hold)
{
	if (hold == 0 || hold > nholds || !holds[hold - 1].used)
		return;
	holds[hold - 1].used = 0;
}

int64_t
tenant_snapshot_quota(uint32_t apid_id)
{
	const struct key_quota	*q = quota_of(apid_id);

	return q != NULL ? q->snapshot_bytes : KEY_NO_LIMIT;
}
