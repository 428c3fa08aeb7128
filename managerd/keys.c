/*
 * The keys file's table as managerd keeps it (docs/security.md
 * "Tenants").  managerd reads the file once, before it confines itself
 * (keys_startup); after that it cannot (chrooted into the data
 * directory), so on SIGHUP it asks its spawner, which keeps the
 * configuration, to read it again (keys_reload): the spawner answers
 * with the new table in chunks (MSG_SPAWN_KEYS), or logs why the file
 * does not parse and answers nothing, the table in use staying.  A whole
 * new table replaces the old, and goes to apid, as the table does each
 * time apid is READY.  managerd itself checks no key: it keeps the
 * quotas (keys_quota), apid the hashes it compares.
 */
#include <stdlib.h>
#include <string.h>

#include "keys_file.h"
#include "log.h"
#include "managerd.h"

static struct keys_table	 current;
static struct keys_table	 loading;	/* chunks of the next */

void
keys_startup(const struct keys_table *t)
{
	keys_table_free(&current);
	current = *t;
}

const struct keys_table *
keys_current(void)
{
	return &current;
}

const struct key_quota *
keys_quota(const char *key_name)
{
	const struct key_entry	*e;

	if (key_name == NULL || (e = keys_table_find(&current, key_name)) ==
	    NULL)
		return NULL;
	return &e->quota;
}

/* The table in keys_file.h's chunks, on p as type. */
static void
keys_send(struct peer *p, uint32_t type)
{
	struct msgw	 w;
	size_t		 first = 0;

	do {
		msgw_init(&w);
		msg_put_keys_chunk(&w, &current, first);
		if (peer_send(p, type, 0, -1, &w) == -1)
			fatalx("cannot send the keys to %s", p->name);
		first += KEYS_PER_MESSAGE;
	} while (first < current.n);
}

/* apid is READY (children.c), or the table changed while it runs. */
void
keys_send_apid(void)
{
	if (env->conf.keys_file == NULL || env->conf.keys_file[0] == '\0')
		return;
	if (!child_up(CHILD_APID))
		return;
	keys_send(&env->apid_peer, MSG_APID_KEYS);
}

/* SIGHUP: without a keys file there is nothing to read again. */
void
keys_reload(void)
{
	if (env->conf.keys_file == NULL || env->conf.keys_file[0] == '\0')
		return;
	log_info("reloading the keys file");
	if (peer_send(&env->spawner_peer, MSG_SPAWN_KEYS_RELOAD, 0, -1,
	    NULL) == -1)
		log_warnx("cannot ask the spawner for the keys file");
}

/* MSG_SPAWN_KEYS: a chunk; the last one makes the table current. */
void
keys_spawner_chunk(struct peer *p, struct imsg *imsg)
{
	uint32_t	 total;

	if (msg_get_keys_chunk(imsg, &loading, &total) == -1)
		peer_bad_message(p, imsg, "malformed keys");
	if (loading.n < total)
		return;
	keys_table_free(&current);
	current = loading;
	memset(&loading, 0, sizeof(loading));
	log_info("keys file reloaded: %zu keys", current.n);
	keys_send_apid();
}
