/*
 * Restart reconciliation (API.md §8.5), before apid gets its listener:
 * ask Docker which sandboxes it holds (the proxy lists only this server's
 * instance), keep a record only if its container runs, drop the other
 * records, and destroy what Docker holds without a kept record (orphans,
 * including the stopped sandboxes just dropped).  A sandbox whose record
 * is there but cannot be read for now is left alone, in Docker and on
 * disk.  Kept sandboxes keep their expires_at.  If Docker cannot be reached
 * the server does not start.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "managerd.h"
#include "xmalloc.h"

struct docker_item {
	char		 id[SANDBOX_ID_LEN + 1];
	int		 running;
	int		 kept;
};

struct recover {
	void			(*done)(int ok);
	struct docker_item	*items;
	size_t			 count;
	size_t			 destroying;
	size_t			 kept;
	size_t			 dropped;
	size_t			 orphans;
};

static struct recover	rc;

static void
recover_finish(int ok)
{
	void	(*done)(int) = rc.done;

	if (ok)
		log_info("reconciled with Docker: %zu sandboxes kept, %zu "
		    "records dropped, %zu orphans destroyed", rc.kept,
		    rc.dropped, rc.orphans);
	free(rc.items);
	memset(&rc, 0, sizeof(rc));
	if (ok)
		processes_recover();
	done(ok);
}

static struct docker_item *
item_find(const char *id)
{
	size_t	 i;

	for (i = 0; i < rc.count; i++) {
		if (strcmp(rc.items[i].id, id) == 0)
			return &rc.items[i];
	}
	return NULL;
}

/* Containers and volumes come separately: one item per sandbox id. */
static void
item_add(struct imsg *reply)
{
	struct docker_item	*it;
	char			 id[SANDBOX_ID_LEN + 1];
	int			 container, running;

	if (!docker_list_item(reply, id, sizeof(id), &container, &running)) {
		/* A label we did not write: leave that resource alone. */
		log_warnx("Docker holds a resource labelled with a malformed "
		    "sandbox id; ignoring it");
		return;
	}
	if ((it = item_find(id)) == NULL) {
		rc.items = xreallocarray(rc.items, rc.count + 1,
		    sizeof(*rc.items));
		it = &rc.items[rc.count++];
		memset(it, 0, sizeof(*it));
		strlcpy(it->id, id, sizeof(it->id));
	}
	it->running |= running;
}

/* store_sandbox_load hands over each record it could read. */
static void
recover_record(struct sandbox_record *rec, void *arg)
{
	struct docker_item	*it;
	struct sandbox		*sb;

	it = item_find(rec->id);
	if (it == NULL || !it->running || sandbox_find(rec->id) != NULL) {
		log_info("sandbox %s is %s: dropping its record", rec->id,
		    it == NULL ? "gone from Docker" : "not running");
		if (store_sandbox_remove(env->datadir_fd, rec->id) == -1)
			log_warn("cannot remove the record of %s", rec->id);
		rc.dropped++;
		sandbox_record_free(rec);
		free(rec);
		return;
	}
	sb = sandbox_new();
	if (sb == NULL)
		fatal("%s", __func__);
	sb->rec = *rec;
	free(rec);
	sandbox_insert(sb);
	it->kept = 1;
	rc.kept++;
}

/*
 * A record store_sandbox_load left in place unread (a transient error):
 * its sandbox may well be one to keep, so it is not an orphan either.
 */
static void
recover_skipped(const char *id, void *arg)
{
	struct docker_item	*it;

	if ((it = item_find(id)) == NULL)
		return;
	log_warnx("cannot read the record of sandbox %s: leaving it in "
	    "Docker", id);
	it->kept = 1;
}

/*
 * A tar whose record is missing: what a crash leaves between a
 * snapshot's tar and its record (snapshot.c), or between the removal of
 * its record and of its tar (store_snapshot.c).  It is no snapshot.
 */
static int
tar_without_record(int dfd, const char *name, size_t len)
{
	struct stat	 st;
	char		 id[SNAPSHOT_ID_LEN + 1], json[SNAPSHOT_ID_LEN + 6];

	if (len != SNAPSHOT_ID_LEN + 4 || strcmp(name + SNAPSHOT_ID_LEN,
	    ".tar") != 0)
		return 0;
	memcpy(id, name, SNAPSHOT_ID_LEN);
	id[SNAPSHOT_ID_LEN] = '\0';
	if (!id_is_snapshot(id))
		return 0;
	snprintf(json, sizeof(json), "%s.json", id);
	return fstatat(dfd, json, &st, AT_SYMLINK_NOFOLLOW) == -1 &&
	    errno == ENOENT;
}

/* §8.5 step 5: exports and deletions a crash interrupted. */
static void
remove_snapshot_leftovers(void)
{
	struct dirent	*de;
	DIR		*d;
	size_t		 len;
	int		 fd;

	fd = openat(env->datadir_fd, "snapshots",
	    O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd == -1 || (d = fdopendir(fd)) == NULL) {
		if (errno != ENOENT)
			log_warn("cannot look for snapshot leftovers");
		if (fd != -1)
			close(fd);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if ((len <= 4 || strcmp(de->d_name + len - 4, ".tmp") != 0) &&
		    !tar_without_record(dirfd(d), de->d_name, len))
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) == -1)
			log_warn("cannot remove snapshots/%s", de->d_name);
	}
	closedir(d);
}

static void
orphan_destroyed(struct imsg *reply, void *arg)
{
	struct docker_item	*it = arg;
	uint32_t		 kind;
	char			*text;

	if (reply->hdr.type == MSG_ERROR) {
		text = proxy_error_text(reply, &kind);
		log_warnx("cannot destroy orphan sandbox %s: %s", it->id, text);
		free(text);
	} else {
		if (reply->len != 0)
			peer_bad_message(&env->proxy_peer, reply,
			    "unexpected payload");
		log_info("orphan sandbox %s destroyed", it->id);
		rc.orphans++;
	}
	if (--rc.destroying == 0)
		recover_finish(1);
}

static void
recover_reconcile(void)
{
	size_t	 i;

	if (store_sandbox_load(env->datadir_fd, recover_record,
	    recover_skipped, NULL) == -1) {
		log_warn("cannot read the sandbox records");
		recover_finish(0);
		return;
	}
	remove_snapshot_leftovers();
	upload_leftovers_remove();
	for (i = 0; i < rc.count; i++) {
		if (rc.items[i].kept)
			continue;
		if (proxy_destroy(rc.items[i].id, orphan_destroyed,
		    &rc.items[i]) == 0)
			fatalx("cannot reach dockerd-proxy");
		rc.destroying++;
	}
	if (rc.destroying == 0)
		recover_finish(1);
}

static void
recover_listed(struct imsg *reply, void *arg)
{
	uint32_t	 kind;
	char		*text;

	switch (reply->hdr.type) {
	case MSG_DOCKER_LIST_ITEM:
		item_add(reply);
		break;
	case MSG_ERROR:
		text = proxy_error_text(reply, &kind);
		log_warnx("cannot list this server's sandboxes in Docker: %s",
		    text);
		free(text);
		recover_finish(0);
		break;
	default:
		if (reply->len != 0)
			peer_bad_message(&env->proxy_peer, reply,
			    "unexpected payload");
		recover_reconcile();
		break;
	}
}

void
recover_start(void (*done)(int ok))
{
	memset(&rc, 0, sizeof(rc));
	rc.done = done;
	if (proxy_call(MSG_DOCKER_LIST, -1, NULL, MSG_DOCKER_LIST_ITEM,
	    MSG_DOCKER_LIST_END, recover_listed, NULL) == 0)
		recover_finish(0);
}
