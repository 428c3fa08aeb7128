/*
 * Importing a stored snapshot (API.md §7.3), shared by rollback and fork:
 * apid checks every member of the tar first (TAR_CHECK), so that a tar
 * that may not be restored is refused before anything is touched; then
 * the proxy streams it into a fresh sandbox's /workspace (ARCHIVE_PUT).
 * The tar is opened twice, one open file for each reader, so neither
 * depends on where the other stopped.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "managerd.h"

struct import_call {
	char		 id[SNAPSHOT_ID_LEN + 1];
	import_cb	 done;
	void		*arg;
};

int
reply_snapshot_not_found(uint32_t apid_id, const char *id)
{
	return apid_error(apid_id, ERR_NOT_FOUND, "snapshot %s not found", id);
}

int
reply_snapshot_error(uint32_t apid_id, const char *id)
{
	if (errno == ENOENT)
		return reply_snapshot_not_found(apid_id, id);
	return apid_error(apid_id, descriptor_error(errno, ERR_INTERNAL),
	    "cannot read snapshot %s: %s", id, strerror(errno));
}

int
snapshot_tar_open(const char *id, struct snapshot_tar *t)
{
	struct snapshot_record	 rec;
	struct stat		 st;
	char			 path[SNAPSHOT_PATH_MAX];
	int			 saved;

	memset(t, 0, sizeof(*t));
	t->check_fd = t->put_fd = -1;
	/* The record must read back too, or there is no snapshot. */
	if (store_snapshot_load(env->datadir_fd, id, &rec) == -1)
		return -1;
	snapshot_record_free(&rec);
	if (snapshot_path(path, sizeof(path), id, ".tar") == -1)
		return -1;
	strlcpy(t->id, id, sizeof(t->id));
	if ((t->check_fd = openat(env->datadir_fd, path,
	    O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1 ||
	    (t->put_fd = openat(env->datadir_fd, path,
	    O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1 ||
	    fstat(t->put_fd, &st) == -1)
		goto fail;
	if (!S_ISREG(st.st_mode)) {
		errno = ENOENT;
		goto fail;
	}
	t->size = (int64_t)st.st_size;
	return 0;
fail:
	saved = errno;
	snapshot_tar_close(t);
	errno = saved;
	return -1;
}

void
snapshot_tar_close(struct snapshot_tar *t)
{
	if (t->check_fd != -1)
		close(t->check_fd);
	if (t->put_fd != -1)
		close(t->put_fd);
	t->check_fd = t->put_fd = -1;
}

/*
 * A check that did not run, or did not finish, says nothing of the
 * snapshot: its process died (EPIPE), there was no archive worker to run
 * it (ENXIO, while one starts again) or no memory (ENOMEM); out of
 * descriptors is 503.  0: the snapshot's fault (EIO too: a tar that
 * cannot be read).
 */
static enum error_kind
check_fault(int errnum)
{
	if (descriptor_error(errnum, 0) == ERR_UNAVAILABLE)
		return ERR_UNAVAILABLE;
	if (errnum == EPIPE || errnum == ENXIO)
		return ERR_BACKEND;
	if (errnum == ENOMEM)
		return ERR_INTERNAL;
	return 0;
}

static void
tar_checked(struct imsg *reply, void *arg)
{
	struct import_call	*ic = arg;
	struct tar_result	 res;
	uint32_t		 kind;
	char			*text = NULL;

	/* No apid to check it (apid_call.c): the import cannot go on. */
	if (reply->hdr.type == MSG_ERROR) {
		text = error_text(&env->apid_peer, reply, &kind);
		ic->done(ic->arg, kind, text);
		free(text);
		free(ic);
		return;
	}
	if (reply->fd != -1 || msg_get_tar_result(reply, &res) == -1)
		peer_bad_message(&env->apid_peer, reply,
		    "malformed tar result");
	if (res.errnum == 0)
		ic->done(ic->arg, 0, NULL);
	else if ((kind = check_fault(res.errnum)) != 0) {
		if (asprintf(&text, "cannot check snapshot %s: %s", ic->id,
		    res.message != NULL ? res.message : strerror(res.errnum))
		    == -1)
			text = NULL;
		ic->done(ic->arg, kind,
		    text != NULL ? text : "the snapshot cannot be checked");
	} else {
		if (asprintf(&text, "snapshot %s cannot be restored: %s",
		    ic->id, res.message != NULL ? res.message :
		    strerror(res.errnum)) == -1)
			text = NULL;
		ic->done(ic->arg, ERR_INVALID_REQUEST, text != NULL ? text :
		    "the snapshot cannot be restored");
	}
	free(text);
	tar_result_free(&res);
	free(ic);
}

int
snapshot_tar_check(struct snapshot_tar *t, import_cb done, void *arg)
{
	struct import_call	*ic;
	int			 fd = t->check_fd;

	t->check_fd = -1;
	if ((ic = calloc(1, sizeof(*ic))) == NULL) {
		close(fd);
		return -1;
	}
	strlcpy(ic->id, t->id, sizeof(ic->id));
	ic->done = done;
	ic->arg = arg;
	if (apid_call(MSG_TAR_CHECK, fd, NULL, MSG_TAR_CHECKED, tar_checked,
	    ic) == 0) {
		free(ic);
		return -1;
	}
	return 0;
}

static void
tar_put(struct imsg *reply, void *arg)
{
	struct import_call	*ic = arg;
	uint32_t		 kind;
	char			*text;

	if (reply->hdr.type == MSG_ERROR) {
		text = proxy_error_text(reply, &kind);
		ic->done(ic->arg, kind, text);
		free(text);
	} else {
		if (reply->len != 0)
			peer_bad_message(&env->proxy_peer, reply,
			    "unexpected payload");
		ic->done(ic->arg, 0, NULL);
	}
	free(ic);
}

int
snapshot_tar_put(struct snapshot_tar *t, const char *sandbox_id,
    import_cb done, void *arg)
{
	struct import_call	*ic;
	struct archive_put	 ap;
	struct msgw		 w;
	char			 id[SANDBOX_ID_LEN + 1];
	char			 path[] = "/workspace";
	int			 fd = t->put_fd;

	t->put_fd = -1;
	if ((ic = calloc(1, sizeof(*ic))) == NULL) {
		close(fd);
		return -1;
	}
	strlcpy(ic->id, t->id, sizeof(ic->id));
	ic->done = done;
	ic->arg = arg;
	memset(&ap, 0, sizeof(ap));
	strlcpy(id, sandbox_id, sizeof(id));
	ap.id = id;
	ap.path = path;
	ap.flags = 0;
	ap.length = t->size;
	msgw_init(&w);
	msg_put_archive_put(&w, &ap);
	if (proxy_call(MSG_DOCKER_ARCHIVE_PUT, fd, &w, 0, MSG_DOCKER_DONE,
	    tar_put, ic) == 0) {
		free(ic);
		return -1;
	}
	return 0;
}
