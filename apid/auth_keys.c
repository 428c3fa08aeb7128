/*
 * The keys file's table as apid holds it (MSG_APID_KEYS: names, tenants,
 * admin flags, SHA-256 hashes and rates; never a plain key), and each
 * key's token bucket for its requests per second.  A new table replaces
 * the old once whole; a key it keeps by name keeps its bucket's tokens
 * (at most the new burst), so a reload gives nobody a fresh burst.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "apid.h"
#include "format.h"
#include "keys_file.h"
#include "log.h"

struct bucket {
	double		 tokens;
	double		 last;		/* monotonic seconds */
};

static struct keys_table	 table, loading;
static struct bucket		*buckets;	/* one per table entry */

static double
monotonic(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

const struct keys_table *
auth_keys(void)
{
	return &table;
}

/* Buckets for the new table: the old one's by name, else full. */
static struct bucket *
buckets_for(const struct keys_table *t, double now)
{
	struct bucket	*v;
	size_t		 i, j;

	if ((v = calloc(t->n + 1, sizeof(*v))) == NULL)
		return NULL;
	for (i = 0; i < t->n; i++) {
		v[i].tokens = (double)t->v[i].quota.burst;
		v[i].last = now;
		for (j = 0; j < table.n; j++)
			if (strcmp(table.v[j].name, t->v[i].name) == 0 &&
			    buckets[j].tokens < v[i].tokens) {
				v[i] = buckets[j];
				break;
			}
	}
	return v;
}

int
auth_keys_chunk(struct peer *p, struct imsg *imsg)
{
	struct bucket	*v;
	uint32_t	 total;

	if (imsg->fd != -1)
		peer_bad_message(p, imsg, "malformed keys");
	/*
	 * No memory for a chunk belongs to no request: apid exits, and
	 * managerd sends the whole table to the apid it starts again.
	 */
	if (msg_get_keys_chunk(imsg, &loading, &total) == -1) {
		if (errno == ENOMEM)
			fatal("%s", __func__);
		peer_bad_message(p, imsg, "malformed keys");
	}
	if (loading.n < total)
		return 0;
	/* No memory for the new one: the keys in use stay, as for a bad file. */
	if ((v = buckets_for(&loading, monotonic())) == NULL) {
		log_warnx("out of memory: the new keys are not in use");
		keys_table_free(&loading);
		memset(&loading, 0, sizeof(loading));
		return 0;
	}
	keys_table_free(&table);
	free(buckets);
	table = loading;
	buckets = v;
	memset(&loading, 0, sizeof(loading));
	return 1;
}

/*
 * 1 if the caller's key is still the one it was: a flat key by its place
 * in the list, no key at all with authentication off, else the keys
 * file's entry of that name with the same tenant and admin flag.
 */
int
auth_keys_same(const struct caller *c)
{
	const char	*n = c->key_name != NULL ? c->key_name : "";
	size_t		 i;

	/* Flat keys ("key-<n>", a name no keys file may give) and none. */
	if (*n == '\0' || caller_flat_key(n))
		return 1;
	for (i = 0; i < table.n; i++)
		if (strcmp(table.v[i].name, n) == 0)
			return strcmp(table.v[i].tenant, c->tenant != NULL ?
			    c->tenant : "") == 0 &&
			    table.v[i].admin == c->admin;
	return 0;
}

long
auth_keys_match(const char *candidate)
{
	unsigned char	 h[KEY_HASH_LEN];
	long		 i;

	key_hash(candidate, strlen(candidate), h);
	i = keys_table_match(&table, h);
	explicit_bzero(h, sizeof(h));
	return i;
}

/*
 * One request of entry i: 0 if its bucket had a token, else the whole
 * seconds (>= 1) until it will have one.
 */
long
auth_keys_take(long i)
{
	const struct key_quota	*q;
	struct bucket		*b;
	double			 now = monotonic(), wait;

	if (i < 0 || (size_t)i >= table.n)
		return 0;
	q = &table.v[i].quota;
	if (q->rate <= 0)
		return 0;
	b = &buckets[i];
	b->tokens += (now - b->last) * q->rate;
	if (b->tokens > (double)q->burst)
		b->tokens = (double)q->burst;
	b->last = now;
	if (b->tokens >= 1) {
		b->tokens -= 1;
		return 0;
	}
	wait = fp_ceil((1 - b->tokens) / q->rate);
	/* A rate of almost nothing: a day is as good a wait as any. */
	if (!(wait < RETRY_AFTER_MAX))
		return RETRY_AFTER_MAX;
	return wait < 1 ? 1 : (long)wait;
}
