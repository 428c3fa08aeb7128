/*
 * The sandbox containers archive calls have found to be ours
 * (archive_container in docker_archive.c): sandbox id -> Docker's id of
 * its container, so that a read, a write or a snapshot need not inspect
 * the container first (1-3 ms each, before Docker can start on it).
 *
 * What makes this safe: Docker never gives an id to a second container,
 * and a container's labels cannot change, so an id once found ours is
 * ours for as long as it exists.  A stale entry can only name a
 * container that is gone, and Docker answers that 404 "No such
 * container", which the callers tell apart from a path that does not
 * exist and answer as the inspect would have ("sandbox ... not found"),
 * forgetting the entry.  Entries are forgotten too when this process
 * starts and ends the removal of a sandbox's container, starts making
 * one, and on Docker's destroy event of one.
 *
 * An inspect still in flight when an entry is forgotten may answer with
 * the container being removed: every forget moves the epoch on, and the
 * answer of an inspect asked in an older epoch is not kept (it is still
 * used once: it was the container when it was asked).  So no old id
 * comes back after the removal's end, whatever order Docker answers in.
 *
 * At most CACHE_SLOTS entries, the oldest replaced first: the bound is
 * the memory's, and a miss only costs the inspect.
 */
#include <stdint.h>
#include <string.h>

#include "proxy.h"

#define CACHE_SLOTS	64

static struct {
	char	id[SANDBOX_ID_LEN + 1];
	char	cid[DOCKER_ID_LEN + 1];
} slots[CACHE_SLOTS];
static size_t	next_slot;
static uint64_t	epoch;

static int
slot_of(const char *id)
{
	size_t	 i;

	for (i = 0; i < CACHE_SLOTS; i++)
		if (slots[i].id[0] != '\0' && strcmp(slots[i].id, id) == 0)
			return (int)i;
	return -1;
}

/* The container of sandbox id found ours before, or NULL. */
const char *
container_cache_get(const char *id)
{
	int	 i = slot_of(id);

	return i == -1 ? NULL : slots[i].cid;
}

/* When an inspect is asked: what container_cache_put wants. */
uint64_t
container_cache_epoch(void)
{
	return epoch;
}

void
container_cache_put(const char *id, const char *cid, uint64_t asked)
{
	int	 i;

	if (asked != epoch || strlen(id) > SANDBOX_ID_LEN ||
	    strlen(cid) != DOCKER_ID_LEN)
		return;
	if ((i = slot_of(id)) == -1) {
		i = (int)next_slot;
		next_slot = (next_slot + 1) % CACHE_SLOTS;
	}
	strlcpy(slots[i].id, id, sizeof(slots[i].id));
	strlcpy(slots[i].cid, cid, sizeof(slots[i].cid));
}

void
container_cache_forget(const char *id)
{
	int	 i;

	epoch++;
	if ((i = slot_of(id)) != -1)
		memset(&slots[i], 0, sizeof(slots[i]));
}

/* Docker's 404 for a container that does not exist (any more). */
int
container_gone_message(const char *message)
{
	return strstr(message, "No such container") != NULL;
}
