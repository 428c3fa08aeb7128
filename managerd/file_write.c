/*
 * Uploads (API.md §4.10, §6.3).  Two protocols while apid moves to the
 * second:
 *
 * FILE_WRITE, one step: the path is checked lexically, the proxy starts
 * the archive upload with apid's tar pipe, apid writes the tar from the
 * body it holds.
 *
 * FILE_WRITE_BEGIN, COMMIT or ABORT: before apid reads the body the path
 * is resolved inside the sandbox (file_walk.c) and apid gets a spool file
 * for it (FILE_SPOOL); only once the whole body is in the spool does the
 * upload start, with a tar whose directory members keep the existing
 * directories as they are.  A client that goes away half-way costs one
 * ABORT: Docker never hears of it and the old file stays.
 *
 * Either way the bytes pass between apid and the proxy; managerd only
 * hands out the descriptors.
 */
#include <sys/queue.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "managerd.h"

#define WORKSPACE	"/workspace"
#define WORKSPACE_LEN	(sizeof(WORKSPACE) - 1)
#define UPLOADS_DIR	"uploads"
#define NEW_DIR_MODE	0755

enum upload_state {
	UPLOAD_WALKING,		/* the path is being resolved */
	UPLOAD_SPOOLING,	/* apid has the spool: COMMIT or ABORT next */
	UPLOAD_PUTTING		/* the proxy uploads: its answer next */
};

struct upload {
	TAILQ_ENTRY(upload)	 entry;
	uint32_t		 apid_id;
	enum upload_state	 state;
	uint32_t		 mode;
	uint64_t		 declared;	/* FILE_WRITE_SIZE_UNKNOWN */
	uint64_t		 bytes;
	struct file_walk	 walk;		/* the plan */
};

static TAILQ_HEAD(, upload)	uploads = TAILQ_HEAD_INITIALIZER(uploads);

static struct upload *
upload_find(uint32_t apid_id)
{
	struct upload	*up;

	TAILQ_FOREACH(up, &uploads, entry) {
		if (up->apid_id == apid_id)
			return up;
	}
	return NULL;
}

static struct upload *
upload_new(uint32_t apid_id, const struct file_write *req)
{
	struct upload	*up;

	if ((up = calloc(1, sizeof(*up))) == NULL) {
		apid_error(apid_id, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	up->apid_id = apid_id;
	up->mode = req->mode;
	up->declared = req->size;
	up->bytes = req->size;
	TAILQ_INSERT_TAIL(&uploads, up, entry);
	return up;
}

static void
upload_free(struct upload *up)
{
	TAILQ_REMOVE(&uploads, up, entry);
	free(up);
}

size_t
upload_count(void)
{
	struct upload	*up;
	size_t		 n = 0;

	TAILQ_FOREACH(up, &uploads, entry)
		n++;
	return n;
}

/*
 * §4.10 steps 3-6, in that order; the size only when apid knows it.
 * Returns the sandbox, or NULL once apid has its answer.
 */
static struct sandbox *
write_check(uint32_t apid_id, const struct file_write *req, char *path)
{
	long long	 max = env->conf.max_file_bytes;
	struct sandbox	*sb;

	if ((sb = sandbox_find_for(apid_id, req->sandbox_id)) == NULL) {
		apid_not_found(apid_id, req->sandbox_id);
		return NULL;
	}
	if (file_path(apid_id, req->path, path) == -1)
		return NULL;
	if (!path_in_workspace(path)) {
		apid_error(apid_id, ERR_INVALID_REQUEST,
		    "writes are limited to files under /workspace");
		return NULL;
	}
	if (req->size != FILE_WRITE_SIZE_UNKNOWN && req->size > (uint64_t)max) {
		apid_error(apid_id, ERR_PAYLOAD_TOO_LARGE,
		    "file exceeds %lld bytes", max);
		return NULL;
	}
	if (req->mode > 0777) {
		apid_error(apid_id, ERR_INVALID_REQUEST,
		    "mode must be between 0 and 0o777");
		return NULL;
	}
	return sb;
}

/* --- the upload ----------------------------------------------------------- */

/* What the tar holds: existing directories as they are, new ones now. */
static void
ready_fill(const struct upload *up, struct file_write_ready *r)
{
	const struct file_walk	*wk = &up->walk;
	double			 now = clock_wall();
	int64_t			 sec = (int64_t)now;
	uint32_t		 i, nsec;

	nsec = (uint32_t)((now - (double)sec) * 1e9);
	if (nsec > 999999999U)
		nsec = 999999999U;
	r->name = (char *)(uintptr_t)(wk->phys + WORKSPACE_LEN + 1);
	r->uid = env->conf.sandbox_uid;
	r->gid = env->conf.sandbox_gid;
	r->mode = up->mode;
	r->mtime = sec;
	r->ndirs = wk->ndirs;
	for (i = 0; i < wk->ndirs; i++) {
		if (i < wk->nexisting) {
			r->dirs[i] = wk->dirs[i];
			continue;
		}
		r->dirs[i].mode = NEW_DIR_MODE;
		r->dirs[i].mtime = sec;
		r->dirs[i].mtime_nsec = nsec;
	}
}

static void
upload_put_done(struct imsg *reply, void *arg)
{
	static char		 file[] = "file";
	struct upload		*up = arg;
	struct file_info	 fi;
	struct msgw		 w;

	if (reply->hdr.type == MSG_DOCKER_DONE) {
		if (reply->len != 0)
			peer_bad_message(&env->proxy_peer, reply,
			    "unexpected payload");
		fi.name = strrchr(up->walk.requested, '/') + 1;
		fi.path = up->walk.requested;
		fi.type = file;
		fi.size = up->bytes;
		fi.modified_at = clock_wall();
		msgw_init(&w);
		msg_put_file_info(&w, &fi);
		apid_reply(up->apid_id, MSG_FILE_INFO, &w);
	} else
		relay_error(reply, up->apid_id);
	upload_free(up);
}

/*
 * The proxy extracts the tar apid writes into fd (consumed) in
 * /workspace, refusing to put a directory over anything else; then apid
 * hears what to write.
 */
static void
upload_put(struct upload *up, int fd)
{
	struct file_write_ready	 ready;
	struct archive_put	 ap;
	struct msgw		 w;
	static char		 workspace[] = WORKSPACE;

	ap.id = up->walk.id;
	ap.path = workspace;
	ap.flags = ARCHIVE_PUT_NO_REPLACE;
	ap.length = -1;
	msgw_init(&w);
	msg_put_archive_put(&w, &ap);
	if (proxy_call(MSG_DOCKER_ARCHIVE_PUT, fd, &w, 0, MSG_DOCKER_DONE,
	    upload_put_done, up) == 0) {
		apid_error(up->apid_id, ERR_INTERNAL,
		    "cannot reach dockerd-proxy");
		upload_free(up);
		return;
	}
	up->state = UPLOAD_PUTTING;
	ready_fill(up, &ready);
	msgw_init(&w);
	msg_put_file_write_ready(&w, &ready);
	apid_reply(up->apid_id, MSG_FILE_WRITE_READY, &w);
}

/* --- one step (FILE_WRITE) ------------------------------------------------ */

/*
 * Lexically: every parent a new directory, as apid's own tar has it.
 * -1 once apid has its answer.
 */
static int
plan_lexical(struct upload *up, const char *sandbox_id, const char *path)
{
	struct file_walk	*wk = &up->walk;
	const char		*p;

	strlcpy(wk->id, sandbox_id, sizeof(wk->id));
	strlcpy(wk->requested, path, sizeof(wk->requested));
	strlcpy(wk->phys, path, sizeof(wk->phys));
	for (p = path + WORKSPACE_LEN + 1; (p = strchr(p, '/')) != NULL; p++)
		wk->ndirs++;
	/* The file and its parents, as the walk counts them. */
	if (wk->ndirs + 1 > FILE_WRITE_MAX_DIRS) {
		apid_error(up->apid_id, ERR_INVALID_REQUEST, "%s: more than %d "
		    "path components", path, FILE_WRITE_MAX_DIRS);
		return -1;
	}
	return 0;
}

void
file_write(uint32_t apid_id, struct file_write *req, int fd)
{
	struct sandbox	*sb;
	struct upload	*up;
	char		 path[MSG_MAX_PATH + 1];

	if ((sb = write_check(apid_id, req, path)) == NULL ||
	    (up = upload_new(apid_id, req)) == NULL) {
		close(fd);
		return;
	}
	if (plan_lexical(up, sb->rec.id, path) == -1) {
		upload_free(up);
		close(fd);
		return;
	}
	upload_put(up, fd);
}

/* --- two phases (FILE_WRITE_BEGIN) ---------------------------------------- */

/* An unnamed file in uploads/, which is made if it is missing. */
static int
spool_tmpfile(void)
{
	int	 flags = O_TMPFILE | O_RDWR | O_CLOEXEC, fd;

	fd = openat(env->datadir_fd, UPLOADS_DIR, flags, 0600);
	if (fd == -1 && errno == ENOENT) {
		if (mkdirat(env->datadir_fd, UPLOADS_DIR, 0700) == -1 &&
		    errno != EEXIST)
			return -1;
		fd = openat(env->datadir_fd, UPLOADS_DIR, flags, 0600);
	}
	return fd;
}

/* Without O_TMPFILE: a fresh name, gone again at once. */
static int
spool_named(void)
{
	unsigned char	 raw[8];
	char		 name[sizeof(UPLOADS_DIR) + 32];
	size_t		 i, n;
	int		 fd, saved;

	arc4random_buf(raw, sizeof(raw));
	n = (size_t)snprintf(name, sizeof(name), "%s/", UPLOADS_DIR);
	for (i = 0; i < sizeof(raw); i++)
		n += (size_t)snprintf(name + n, sizeof(name) - n, "%02x",
		    raw[i]);
	strlcat(name, ".spool", sizeof(name));
	fd = openat(env->datadir_fd, name, O_RDWR | O_CREAT | O_EXCL |
	    O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd == -1)
		return -1;
	if (unlinkat(env->datadir_fd, name, 0) == -1) {
		saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

int
upload_spool_open(int tmpfile)
{
	int	 fd;

	if (tmpfile && (fd = spool_tmpfile()) != -1)
		return fd;
	/* Kernels before 3.11 (EISDIR) and some file systems lack it. */
	if (tmpfile && errno != EOPNOTSUPP && errno != EISDIR &&
	    errno != EINVAL)
		return -1;
	if ((fd = spool_named()) == -1 && errno == ENOENT &&
	    mkdirat(env->datadir_fd, UPLOADS_DIR, 0700) == 0)
		fd = spool_named();
	return fd;
}

void
upload_leftovers_remove(void)
{
	struct dirent	*de;
	DIR		*d;
	int		 fd;

	if (mkdirat(env->datadir_fd, UPLOADS_DIR, 0700) == -1 &&
	    errno != EEXIST)
		log_warn("cannot create %s", UPLOADS_DIR);
	fd = openat(env->datadir_fd, UPLOADS_DIR,
	    O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd == -1 || (d = fdopendir(fd)) == NULL) {
		log_warn("cannot look for upload leftovers");
		if (fd != -1)
			close(fd);
		return;
	}
	/* A spool lives for one request: whatever has a name is left over. */
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) == -1)
			log_warn("cannot remove %s/%s", UPLOADS_DIR,
			    de->d_name);
	}
	closedir(d);
}

/* apid may read the body now, into the spool it gets. */
static void
upload_spool(struct upload *up)
{
	struct msgw	 w;
	uint64_t	 max;
	int		 fd, saved;

	if ((fd = upload_spool_open(1)) == -1) {
		saved = errno;
		log_warn("upload %u: cannot create a spool", up->apid_id);
		apid_error(up->apid_id, storage_error(saved, ERR_INTERNAL),
		    "cannot create a spool for the upload: %s",
		    strerror(saved));
		upload_free(up);
		return;
	}
	max = up->declared != FILE_WRITE_SIZE_UNKNOWN ? up->declared :
	    (uint64_t)env->conf.max_file_bytes;
	msgw_init(&w);
	msg_put_u64(&w, max);
	/*
	 * The descriptor is ours no more: sent, or closed on failure (also
	 * when the apid that asked is gone: no COMMIT or ABORT will come).
	 */
	if (apid_reply_fd(up->apid_id, MSG_FILE_SPOOL, fd, &w) == -1) {
		apid_request_close(up->apid_id);
		upload_free(up);
		return;
	}
	up->state = UPLOAD_SPOOLING;
}

static void
begin_walked(struct file_walk *wk, enum error_kind kind, const char *text)
{
	struct upload	*up = wk->arg;

	if (kind != 0) {
		apid_error(up->apid_id, kind, "%s", text);
		upload_free(up);
		return;
	}
	upload_spool(up);
}

void
file_write_begin(struct peer *p, struct imsg *imsg)
{
	struct file_write	 req;
	struct sandbox		*sb;
	struct upload		*up;
	uint32_t		 apid_id = imsg->hdr.peerid;
	char			 path[MSG_MAX_PATH + 1];

	if (msg_get_file_write(imsg, &req) == -1)
		peer_bad_message(p, imsg, "malformed file write");
	if (upload_find(apid_id) != NULL)
		peer_bad_message(p, imsg, "a second upload with one id");
	if ((sb = write_check(apid_id, &req, path)) != NULL &&
	    (up = upload_new(apid_id, &req)) != NULL)
		file_walk_start(&up->walk, sb->rec.id, path, begin_walked,
		    up);
	file_write_free(&req);
}

/* The upload that waits for apid's COMMIT or ABORT; fatal if none. */
static struct upload *
spooling(struct peer *p, struct imsg *imsg)
{
	struct upload	*up;

	if ((up = upload_find(imsg->hdr.peerid)) == NULL ||
	    up->state != UPLOAD_SPOOLING)
		peer_bad_message(p, imsg, "no upload waits for its body");
	return up;
}

void
file_write_commit(struct peer *p, struct imsg *imsg)
{
	long long	 max = env->conf.max_file_bytes;
	struct upload	*up;
	uint64_t	 bytes;

	up = spooling(p, imsg);
	if (imsg->fd == -1)
		peer_bad_message(p, imsg, "no tar pipe");
	if (msg_get_u64(imsg, &bytes) == -1)
		peer_bad_message(p, imsg, "malformed commit");
	/* apid framed the body by its length: any other count is a lie. */
	if (up->declared != FILE_WRITE_SIZE_UNKNOWN && bytes != up->declared)
		peer_bad_message(p, imsg, "not the size it declared");
	up->bytes = bytes;
	if (bytes > (uint64_t)max) {
		apid_error(up->apid_id, ERR_PAYLOAD_TOO_LARGE,
		    "file exceeds %lld bytes", max);
		upload_free(up);
		return;
	}
	/* Destroyed while the body came: nothing to ask Docker. */
	if (sandbox_find(up->walk.id) == NULL) {
		apid_not_found(up->apid_id, up->walk.id);
		upload_free(up);
		return;
	}
	upload_put(up, imsg_take_fd(imsg));
}

/* The COMMIT's tar pipe was dropped: the upload fails, for a moment. */
void
file_write_lost(struct peer *p, struct imsg *imsg)
{
	struct upload	*up;

	up = spooling(p, imsg);
	apid_error(up->apid_id, ERR_UNAVAILABLE,
	    "managerd is out of descriptors; try again");
	upload_free(up);
}

void
file_write_abort(struct peer *p, struct imsg *imsg)
{
	struct upload	*up;

	up = spooling(p, imsg);
	if (imsg->len != 0)
		peer_bad_message(p, imsg, "unexpected payload");
	log_debug("upload %u to %s: abandoned", up->apid_id,
	    up->walk.requested);
	/* No reply ends it: the request is over here. */
	apid_request_close(up->apid_id);
	upload_free(up);
}

/*
 * The apid that asked died.  An upload that waits for its body will
 * never get it; one that is resolving its path stops at FILE_SPOOL
 * (whose reply is dropped); one being put finishes, its answer dropped.
 */
void
file_write_orphaned(uint32_t apid_id)
{
	struct upload	*up;

	if ((up = upload_find(apid_id)) == NULL || up->state !=
	    UPLOAD_SPOOLING)
		return;
	log_debug("upload %u to %s: apid went away", up->apid_id,
	    up->walk.requested);
	apid_request_close(up->apid_id);
	upload_free(up);
}
