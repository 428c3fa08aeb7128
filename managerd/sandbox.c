/*
 * The sandbox table: every sandbox managerd holds, by id, with its lock
 * (API.md §8.4) and the quota's in-flight reservations (§8.3).  A sandbox
 * leaves the table when it is destroyed but lives on, marked gone, while
 * a call or a queued operation still refers to it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "managerd.h"

RB_HEAD(sandbox_tree, sandbox);

static int	sandbox_cmp(struct sandbox *, struct sandbox *);
/* libbsd's tree.h leaves __unused undefined (glibc uses the name). */
#define __unused	__attribute__((__unused__))
RB_GENERATE_STATIC(sandbox_tree, sandbox, node, sandbox_cmp)
#undef __unused

static struct sandbox_tree	table = RB_INITIALIZER(&table);
static size_t			held;		/* in the table */
static size_t			pending;	/* creations in flight */
static uint64_t			next_seq;

static int
sandbox_cmp(struct sandbox *a, struct sandbox *b)
{
	return strcmp(a->rec.id, b->rec.id);
}

struct sandbox *
sandbox_new(void)
{
	struct sandbox	*sb;

	if ((sb = calloc(1, sizeof(*sb))) == NULL)
		return NULL;
	TAILQ_INIT(&sb->ops);
	sb->refs = 1;		/* the creator's, then the table's */
	return sb;
}

static void
sandbox_free(struct sandbox *sb)
{
	tenant_pending_end(sb);
	sandbox_record_free(&sb->rec);
	free(sb);
}

struct sandbox *
sandbox_find(const char *id)
{
	struct sandbox	 key;

	if (strlen(id) >= sizeof(key.rec.id))
		return NULL;
	strlcpy(key.rec.id, id, sizeof(key.rec.id));
	return RB_FIND(sandbox_tree, &table, &key);
}

/* The table takes over the creator's reference. */
void
sandbox_insert(struct sandbox *sb)
{
	if (RB_INSERT(sandbox_tree, &table, sb) != NULL)
		fatalx("%s: sandbox %s is already in the table", __func__,
		    sb->rec.id);
	sb->in_table = 1;
	tenant_pending_end(sb);		/* counted in the table now */
	sb->seq = next_seq++;
	held++;
}

void
sandbox_remove(struct sandbox *sb)
{
	if (!sb->in_table)
		return;
	RB_REMOVE(sandbox_tree, &table, sb);
	sb->in_table = 0;
	processes_sandbox_gone(sb->rec.id);
	egress_forget(sb);
	sb->gone = 1;
	held--;
	sandbox_release(sb);
}

void
sandbox_hold(struct sandbox *sb)
{
	sb->refs++;
}

void
sandbox_release(struct sandbox *sb)
{
	if (sb->refs == 0)
		fatalx("%s: sandbox %s released too often", __func__,
		    sb->rec.id);
	if (--sb->refs == 0)
		sandbox_free(sb);
}

/*
 * The operation holds a reference until it unlocks, so a sandbox that is
 * destroyed meanwhile stays readable; such an operation finds it gone.
 */
int
sandbox_lock(struct sandbox *sb, sandbox_op_cb run, void *arg)
{
	struct sandbox_op	*op;

	if (sb->busy) {
		if ((op = calloc(1, sizeof(*op))) == NULL)
			return -1;
		op->run = run;
		op->arg = arg;
		sandbox_hold(sb);
		TAILQ_INSERT_TAIL(&sb->ops, op, entry);
		return 0;
	}
	sb->busy = 1;
	sandbox_hold(sb);
	run(sb, arg);
	return 0;
}

void
sandbox_unlock(struct sandbox *sb)
{
	struct sandbox_op	*op;
	sandbox_op_cb		 run;
	void			*arg;

	if (!sb->busy)
		fatalx("%s: sandbox %s is not locked", __func__, sb->rec.id);
	if ((op = TAILQ_FIRST(&sb->ops)) == NULL) {
		sb->busy = 0;
		sandbox_release(sb);
		return;
	}
	TAILQ_REMOVE(&sb->ops, op, entry);
	run = op->run;
	arg = op->arg;
	free(op);
	/* The next operation's own reference keeps sb alive. */
	sandbox_release(sb);
	run(sb, arg);
}

static int
sandbox_order(const void *a, const void *b)
{
	const struct sandbox	*x = *(struct sandbox *const *)a;
	const struct sandbox	*y = *(struct sandbox *const *)b;

	if (x->rec.created_at < y->rec.created_at)
		return -1;
	if (x->rec.created_at > y->rec.created_at)
		return 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

struct sandbox *
sandbox_first(void)
{
	return RB_MIN(sandbox_tree, &table);
}

struct sandbox *
sandbox_next(struct sandbox *sb)
{
	return RB_NEXT(sandbox_tree, &table, sb);
}

struct sandbox **
sandbox_sorted(size_t *count)
{
	struct sandbox	**v, *sb;
	size_t		  n = 0;

	*count = 0;
	if (held == 0)
		return NULL;
	if ((v = reallocarray(NULL, held, sizeof(*v))) == NULL)
		return NULL;
	RB_FOREACH(sb, sandbox_tree, &table)
		v[n++] = sb;
	qsort(v, n, sizeof(*v), sandbox_order);
	*count = n;
	return v;
}

size_t
sandbox_count(void)
{
	return held;
}

/* A new id (API.md §3.1) that no sandbox in the table has. */
void
sandbox_make_id(char *buf, size_t len)
{
	do {
		if (id_make(buf, len, SANDBOX_ID_PREFIX) == -1)
			fatalx("%s: buffer too small", __func__);
	} while (sandbox_find(buf) != NULL);
}

/*
 * One slot per creation from the moment its checks pass until it is in
 * the table or has failed, so concurrent creations never exceed the quota.
 */
int
quota_reserve(void)
{
	if (held + pending >= (size_t)env->conf.max_sandboxes)
		return -1;
	pending++;
	return 0;
}

void
quota_release(void)
{
	if (pending == 0)
		fatalx("%s: no reservation", __func__);
	pending--;
}

size_t
quota_pending(void)
{
	return pending;
}

/* Only when nothing is in flight: queued operations are dropped. */
void
sandbox_table_clear(void)
{
	struct sandbox		*sb, *next;
	struct sandbox_op	*op;

	RB_FOREACH_SAFE(sb, sandbox_tree, &table, next) {
		RB_REMOVE(sandbox_tree, &table, sb);
		while ((op = TAILQ_FIRST(&sb->ops)) != NULL) {
			TAILQ_REMOVE(&sb->ops, op, entry);
			free(op);
		}
		sandbox_free(sb);
	}
	held = 0;
	pending = 0;
	next_seq = 0;
}
