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

/*
 * Sandboxes being created (not in the table yet, but counted) and
 * snapshots being written (each counted as its bound until it is done):
 * lists through their own entries, so that counting allocates nothing.
 */
static TAILQ_HEAD(, sandbox)	 pending = TAILQ_HEAD_INITIALIZER(pending);
static TAILQ_HEAD(, snapshot_hold) holds = TAILQ_HEAD_INITIALIZER(holds);

/*
 * Who a request is: NULL (sees all) only for managerd's own work (id 0);
 * an id that names no request, should one ever get here, sees nothing.
 */
static const struct caller *
caller_of(uint32_t apid_id)
{
	static char			 none[] = "", nobody[] = "\n";
	static const struct caller	 unknown = { none, nobody, 0, none,
	    none };
	const struct caller		*c;

	if (apid_id == 0)
		return NULL;
	return (c = apid_request_caller(apid_id)) != NULL ? c : &unknown;
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

/*
 * The caller's key's quotas: none for managerd's own work, a flat key or
 * no key; for a keys file's key that managerd's table does not have (a
 * request apid checked against the table a reload just replaced), none
 * allowed rather than no limit.
 */
static const struct key_quota *
quota_of(uint32_t apid_id)
{
	static const struct key_quota	 nothing = { 0, 0, 0, 0, 0, 1 };
	const struct caller		*c = caller_of(apid_id);
	const struct key_quota		*q;

	if (c == NULL || c->key_name[0] == '\0' ||
	    caller_flat_key(c->key_name))
		return NULL;
	return (q = keys_quota(c->key_name)) != NULL ? q : &nothing;
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

	memset(u, 0, sizeof(*u));
	for (sb = sandbox_first(); sb != NULL; sb = sandbox_next(sb))
		usage_add(u, sb, tenant);
	TAILQ_FOREACH(sb, &pending, pending_entry)
		usage_add(u, sb, tenant);
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
	if (sb->pending)
		return;
	TAILQ_INSERT_TAIL(&pending, sb, pending_entry);
	sb->pending = 1;
}

void
tenant_pending_end(struct sandbox *sb)
{
	if (!sb->pending)
		return;
	TAILQ_REMOVE(&pending, sb, pending_entry);
	sb->pending = 0;
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
	struct snapshot_hold	*h;
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
	TAILQ_FOREACH(h, &holds, entry)
		if (strcmp(h->tenant, tenant) == 0)
			used += h->bytes;
	return used >= (uint64_t)q->snapshot_bytes ? 0 :
	    q->snapshot_bytes - (int64_t)used;
}

void
tenant_snapshot_hold(struct snapshot_hold *h, const char *tenant,
    uint64_t bytes)
{
	tenant_snapshot_release(h);
	strlcpy(h->tenant, tenant, sizeof(h->tenant));
	h->bytes = bytes;
	TAILQ_INSERT_TAIL(&holds, h, entry);
	h->held = 1;
}

void
tenant_snapshot_release(struct snapshot_hold *h)
{
	if (!h->held)
		return;
	TAILQ_REMOVE(&holds, h, entry);
	h->held = 0;
}

int64_t
tenant_snapshot_quota(uint32_t apid_id)
{
	const struct key_quota	*q = quota_of(apid_id);

	return q != NULL ? q->snapshot_bytes : KEY_NO_LIMIT;
}
