/*
 * Snapshots (API.md §4.12, §4.14-4.16, §7.1).  A snapshot is made under
 * the sandbox's lock: the proxy streams Docker's tar of /workspace into
 * apid's pipe, apid rewrites it (managerd never parses what a sandbox
 * produced) into snapshots/<snap>.tmp, which managerd created and passed
 * it (SNAPSHOT_SINK), and once both have finished the file becomes
 * <snap>.tar and its record <snap>.json.  The temporary file never
 * outlives the request.  A client that went away changes nothing: the
 * snapshot is still made.
 *
 * List, get and delete read the records from disk every time (§9).
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "log.h"
#include "managerd.h"

struct snap_op {
	TAILQ_ENTRY(snap_op)	 entry;	/* waiting for WRITTEN */
	uint32_t		 apid_id;
	struct sandbox		*sb;		/* locked by us */
	char			*name;
	char			 id[SNAPSHOT_ID_LEN + 1];
	char			 tmp[SNAPSHOT_PATH_MAX];
	int			 pipe_fd;	/* for the proxy */
	int			 file_fd;	/* ours, read-only */
	/*
	 * The tar is first asked for as "/workspace/." and copied as it
	 * is; once apid's SNAPSHOT_RETRY says it needs the rewrite, this
	 * is the new pipe, until the first request to the proxy ended.
	 */
	int			 copy;
	int			 retry_fd;
	int			 tmp_made;
	/* The proxy's side: ended, and its error if any. */
	int			 proxy_ended;
	uint32_t		 proxy_kind;
	char			 proxy_text[256];	/* with proxy_kind */
	int			 stat_seen;
	uint8_t			 stat_kind;
	/* apid's side. */
	int			 written;
	int32_t			 errnum;
	char			*message;
	/* The server's bound, or what is left of the tenant's quota. */
	uint64_t		 max_bytes;
	int			 quota_bound;
	struct snapshot_hold	 hold;		/* against the tenant's quota */
};

static TAILQ_HEAD(, snap_op)	writing = TAILQ_HEAD_INITIALIZER(writing);

static void
snap_op_free(struct snap_op *op)
{
	if (op->pipe_fd != -1)
		close(op->pipe_fd);
	if (op->file_fd != -1)
		close(op->file_fd);
	if (op->retry_fd != -1)
		close(op->retry_fd);
	if (op->tmp_made &&
	    unlinkat(env->datadir_fd, op->tmp, 0) == -1 && errno != ENOENT)
		log_warn("cannot remove %s", op->tmp);
	tenant_snapshot_release(&op->hold);
	free(op->name);
	free(op->message);
	free(op);
}

static void
snap_end(struct snap_op *op)
{
	struct sandbox	*sb = op->sb;

	snap_op_free(op);
	if (sb != NULL)
		sandbox_unlock(sb);
}

/* A new id (§3.1). */
static void
snapshot_make_id(char *buf, size_t len)
{
	if (id_make(buf, len, SNAPSHOT_ID_PREFIX) == -1)
		fatalx("%s: buffer too small", __func__);
}

/*
 * Past the bound: the server's limit is a 413 as it always was; what is
 * left of the tenant's quota, when smaller, a 403 quota_exceeded.
 */
static int
reply_too_large(const struct snap_op *op)
{
	if (op->quota_bound)
		return apid_error(op->apid_id, ERR_QUOTA_EXCEEDED,
		    "quota exceeded: the workspace is larger than the %llu "
		    "bytes left of its key's snapshot quota of %lld bytes",
		    (unsigned long long)op->max_bytes,
		    (long long)tenant_snapshot_quota(op->apid_id));
	return apid_error(op->apid_id, ERR_PAYLOAD_TOO_LARGE,
	    "workspace exceeds the snapshot limit of %lld bytes",
	    env->conf.max_snapshot_bytes);
}

static int
reply_snapshot(uint32_t apid_id, const struct snapshot_record *r)
{
	struct snapshot_info	 info;
	struct msgw		 w;
	char			 id[SNAPSHOT_ID_LEN + 1];

	strlcpy(id, r->id, sizeof(id));
	info.id = id;
	info.sandbox_id = r->sandbox_id;
	info.name = r->name;
	info.image = r->spec.image;
	info.size_bytes = r->size_bytes;
	info.created_at = r->created_at;
	msgw_init(&w);
	msg_put_snapshot_info(&w, &info);
	return apid_reply(apid_id, MSG_SNAPSHOT_INFO, &w);
}

/* A snapshot that failed once its tar was renamed: record, then tar. */
static void
snap_unstore(const char *id)
{
	if (store_snapshot_remove(env->datadir_fd, id) == -1)
		log_warn("cannot remove snapshot %s; the next start removes "
		    "a tar left without its record", id);
}

/* The tar is complete: make it the snapshot, then its record. */
static void
snap_store(struct snap_op *op)
{
	struct snapshot_record	 rec;
	struct stat		 st;
	char			 dst[SNAPSHOT_PATH_MAX];
	int			 saved;

	if (fstat(op->file_fd, &st) == -1) {
		apid_error(op->apid_id, ERR_INTERNAL, "cannot snapshot %s: %s",
		    op->sb->rec.id, strerror(errno));
		return;
	}
	/* The file's size is authoritative, not what apid counted. */
	if ((unsigned long long)st.st_size >
	    (unsigned long long)op->max_bytes) {
		reply_too_large(op);
		return;
	}
	if (st.st_size == 0) {
		apid_error(op->apid_id, ERR_BACKEND, "cannot snapshot %s: the "
		    "archive is empty", op->sb->rec.id);
		return;
	}
	/*
	 * The tar is durable under its name before the record that makes
	 * it a snapshot is written: a crash in between leaves a tar without
	 * a record, which is no snapshot and which the next start removes,
	 * never a record without its tar.
	 */
	(void)snapshot_path(dst, sizeof(dst), op->id, ".tar");
	if (fsync(op->file_fd) == -1 ||
	    renameat(env->datadir_fd, op->tmp, env->datadir_fd, dst) == -1) {
		saved = errno;
		log_warn("cannot store snapshot %s", op->id);
		apid_error(op->apid_id, storage_error(saved, ERR_INTERNAL),
		    "cannot store snapshot %s: %s", op->id, strerror(saved));
		return;
	}
	op->tmp_made = 0;
	if (store_snapshot_sync_dir(env->datadir_fd) == -1) {
		saved = errno;
		log_warn("cannot store snapshot %s", op->id);
		snap_unstore(op->id);
		apid_error(op->apid_id, storage_error(saved, ERR_INTERNAL),
		    "cannot store snapshot %s: %s", op->id, strerror(saved));
		return;
	}
	memset(&rec, 0, sizeof(rec));
	strlcpy(rec.id, op->id, sizeof(rec.id));
	rec.name = op->name;
	rec.sandbox_id = op->sb->rec.id;
	rec.size_bytes = (uint64_t)st.st_size;
	/* §4.12: the time after the export finished. */
	rec.created_at = clock_wall();
	rec.spec = op->sb->rec.spec;
	rec.egress = op->sb->rec.egress;	/* borrowed, as the spec */
	/* A snapshot is its sandbox's tenant's (tenant.c). */
	strlcpy(rec.tenant, op->sb->rec.tenant, sizeof(rec.tenant));
	if (store_snapshot_write(env->datadir_fd, &rec) == -1) {
		saved = errno;
		log_warn("cannot record snapshot %s", op->id);
		/* The record may be in place if only the last fsync failed. */
		snap_unstore(op->id);
		apid_error(op->apid_id, storage_error(saved, ERR_INTERNAL),
		    "cannot record snapshot %s: %s", op->id, strerror(saved));
		return;
	}
	log_info("snapshot %s of sandbox %s made", op->id, op->sb->rec.id);
	metrics_snapshot_stored(rec.size_bytes);
	reply_snapshot(op->apid_id, &rec);
}

/*
 * Both the proxy and apid have finished: the first failure wins.  A
 * rewrite whose process died (EPIPE: it writes a file, not a pipe), or
 * that refused a member (EINVAL), went first, and the proxy's broken
 * pipe only follows from it.
 */
static void
snap_finish(struct snap_op *op)
{
	if (op->errnum == EFBIG)
		reply_too_large(op);
	else if (storage_error(op->errnum, 0) == ERR_INSUFFICIENT_STORAGE)
		apid_error(op->apid_id, ERR_INSUFFICIENT_STORAGE, "cannot "
		    "snapshot %s: the data directory is full (%s)",
		    op->sb->rec.id, strerror(op->errnum));
	else if (descriptor_error(op->errnum, 0) == ERR_UNAVAILABLE)
		apid_error(op->apid_id, ERR_UNAVAILABLE, "cannot snapshot %s "
		    "now: out of descriptors (%s)", op->sb->rec.id,
		    op->message != NULL ? op->message : strerror(op->errnum));
	else if (op->errnum == EPIPE || op->errnum == EINVAL)
		apid_error(op->apid_id, ERR_BACKEND, "cannot snapshot %s: %s",
		    op->sb->rec.id, op->message != NULL ? op->message :
		    strerror(op->errnum));
	else if (op->proxy_kind != 0)
		apid_error(op->apid_id, op->proxy_kind, "%s", op->proxy_text);
	else if (op->stat_kind != ARCHIVE_KIND_DIR)
		apid_error(op->apid_id, ERR_BACKEND, "cannot snapshot %s: "
		    "/workspace is not a directory", op->sb->rec.id);
	else if (op->errnum != 0)
		apid_error(op->apid_id, ERR_BACKEND, "cannot snapshot %s: %s",
		    op->sb->rec.id, op->message != NULL ? op->message :
		    strerror(op->errnum));
	else
		snap_store(op);
	snap_end(op);
}

static void	snap_rewrite(struct snap_op *);

static void
snap_proxy_failed(struct snap_op *op, uint32_t kind, const char *text)
{
	op->proxy_ended = 1;
	op->proxy_kind = kind;
	/* Kept whole up to a bound: an error text is one line of Docker's. */
	strlcpy(op->proxy_text, text, sizeof(op->proxy_text));
}

static void
snap_archived(struct imsg *reply, void *arg)
{
	struct snap_op		*op = arg;
	struct archive_stat	 st;
	uint32_t		 kind;
	char			*text;

	switch (reply->hdr.type) {
	case MSG_DOCKER_ARCHIVE_STAT:
		if (op->stat_seen || msg_get_archive_stat(reply, &st) == -1)
			peer_bad_message(&env->proxy_peer, reply,
			    "malformed or repeated stat");
		op->stat_seen = 1;
		op->stat_kind = st.kind;
		archive_stat_free(&st);
		return;
	case MSG_ERROR:
		text = proxy_error_text(reply, &kind);
		snap_proxy_failed(op, kind, text);
		free(text);
		break;
	default:
		if (reply->len != 0 || !op->stat_seen)
			peer_bad_message(&env->proxy_peer, reply,
			    "unexpected payload, or no stat");
		op->proxy_ended = 1;
		break;
	}
	if (op->written)
		snap_finish(op);
	else if (op->retry_fd != -1)
		snap_rewrite(op);
}

/* -1 with EEXIST if a record or tar of that id exists, or errno. */
static int
snapshot_id_free(const char *id)
{
	static const char *const suffixes[] = { ".json", ".tar" };
	struct stat	 st;
	char		 path[SNAPSHOT_PATH_MAX];
	size_t		 i;

	for (i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		(void)snapshot_path(path, sizeof(path), id, suffixes[i]);
		if (fstatat(env->datadir_fd, path, &st,
		    AT_SYMLINK_NOFOLLOW) == 0) {
			errno = EEXIST;
			return -1;
		}
		if (errno != ENOENT)
			return -1;
	}
	return 0;
}

/* SNAPSHOT_SINK: the file, for a copy or for the rewrite. */
static int
snap_sink(struct snap_op *op, int sink)
{
	struct msgw	 w;

	msgw_init(&w);
	msg_put_snapshot_sink(&w, op->max_bytes, op->copy);
	return apid_reply_fd(op->apid_id, MSG_SNAPSHOT_SINK, sink, &w);
}

/*
 * Docker's tar of the workspace into op->pipe_fd: of "/workspace/." for
 * a copy (its names already relative), of "/workspace" for the rewrite.
 */
static void
snap_ask_proxy(struct snap_op *op)
{
	struct archive_get	 ag;
	struct msgw		 w;
	char			 copy_path[] = "/workspace/.";
	char			 path[] = "/workspace";
	int			 fd;

	memset(&ag, 0, sizeof(ag));
	ag.id = op->sb->rec.id;
	ag.path = op->copy ? copy_path : path;
	ag.want = ARCHIVE_WANT_TREE;
	ag.max_bytes = 0;
	msgw_init(&w);
	msg_put_archive_get(&w, &ag);
	fd = op->pipe_fd;
	op->pipe_fd = -1;
	if (proxy_call(MSG_DOCKER_ARCHIVE_GET, fd, &w,
	    MSG_DOCKER_ARCHIVE_STAT, MSG_DOCKER_DONE, snap_archived, op) == 0)
		snap_proxy_failed(op, ERR_INTERNAL,
		    "cannot reach dockerd-proxy");
}

/*
 * The copy stopped and the first request to the proxy has ended: the
 * file starts again, empty, for the rewrite of a second tar.
 */
static void
snap_rewrite(struct snap_op *op)
{
	int	 sink, saved;

	op->pipe_fd = op->retry_fd;
	op->retry_fd = -1;
	op->proxy_ended = 0;
	op->proxy_kind = 0;
	op->proxy_text[0] = '\0';
	op->stat_seen = 0;
	op->stat_kind = 0;
	if ((sink = openat(env->datadir_fd, op->tmp, O_WRONLY | O_TRUNC |
	    O_CLOEXEC | O_NOFOLLOW)) == -1 || snap_sink(op, sink) == -1) {
		saved = errno;
		TAILQ_REMOVE(&writing, op, entry);
		apid_error(op->apid_id, storage_error(saved, ERR_INTERNAL),
		    "cannot snapshot %s: cannot start the rewrite: %s",
		    op->sb->rec.id, strerror(saved));
		snap_end(op);
		return;
	}
	snap_ask_proxy(op);
}

static void
snap_run(struct sandbox *sb, void *arg)
{
	struct snap_op		*op = arg;
	int			 sink, saved;

	op->sb = sb;
	if (sb->gone) {
		apid_not_found(op->apid_id, sb->rec.id);
		snap_end(op);
		return;
	}
	/* An id no snapshot, finished or in the making, has. */
	do {
		snapshot_make_id(op->id, sizeof(op->id));
		(void)snapshot_path(op->tmp, sizeof(op->tmp), op->id, ".tmp");
		if (snapshot_id_free(op->id) == -1) {
			sink = -1;
			continue;
		}
		sink = openat(env->datadir_fd, op->tmp, O_WRONLY | O_CREAT |
		    O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	} while (sink == -1 && errno == EEXIST);
	if (sink == -1) {
		saved = errno;
		log_warn("cannot create %s", op->tmp);
		apid_error(op->apid_id, storage_error(saved, ERR_INTERNAL),
		    "cannot create a snapshot file: %s", strerror(saved));
		snap_end(op);
		return;
	}
	op->tmp_made = 1;
	/* Our own open file, for its size and fsync once apid is done. */
	if ((op->file_fd = openat(env->datadir_fd, op->tmp,
	    O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1) {
		saved = errno;
		close(sink);
		apid_error(op->apid_id, storage_error(saved, ERR_INTERNAL),
		    "cannot open a snapshot file: %s", strerror(saved));
		snap_end(op);
		return;
	}
	op->copy = 1;
	/* Not sent (apid died meanwhile): an error ends the request. */
	if (snap_sink(op, sink) == -1) {
		apid_error(op->apid_id, ERR_INTERNAL,
		    "cannot pass the snapshot file to apid");
		snap_end(op);
		return;
	}
	/* From here apid answers with SNAPSHOT_WRITTEN, whatever happens. */
	TAILQ_INSERT_TAIL(&writing, op, entry);
	snap_ask_proxy(op);
}

void
snapshot_create(uint32_t apid_id, struct snapshot_create *req, int fd)
{
	struct snap_op	*op;
	struct sandbox	*sb;
	int64_t		 room;

	if ((sb = sandbox_find_for(apid_id, req->sandbox_id)) == NULL) {
		close(fd);
		apid_not_found(apid_id, req->sandbox_id);
		return;
	}
	if ((room = tenant_snapshot_room(apid_id, sb->rec.tenant)) == 0) {
		close(fd);
		apid_error(apid_id, ERR_QUOTA_EXCEEDED, "quota exceeded: the "
		    "tenant's snapshots already hold its key's snapshot quota "
		    "of %lld bytes", (long long)tenant_snapshot_quota(apid_id));
		return;
	}
	if ((op = calloc(1, sizeof(*op))) == NULL) {
		close(fd);
		apid_error(apid_id, ERR_INTERNAL, "out of memory");
		return;
	}
	op->apid_id = apid_id;
	op->max_bytes = (uint64_t)env->conf.max_snapshot_bytes;
	if (room > 0 && (uint64_t)room < op->max_bytes) {
		op->max_bytes = (uint64_t)room;
		op->quota_bound = 1;
	}
	if (room > 0)
		tenant_snapshot_hold(&op->hold, sb->rec.tenant, op->max_bytes);
	op->pipe_fd = fd;
	op->file_fd = -1;
	op->retry_fd = -1;
	op->name = req->name;
	req->name = NULL;
	if (sandbox_lock(sb, snap_run, op) == -1) {
		apid_error(apid_id, ERR_INTERNAL, "out of memory");
		snap_op_free(op);
	}
}

static struct snap_op *
snap_writing(uint32_t apid_id, uint32_t type)
{
	struct snap_op	*op;

	TAILQ_FOREACH(op, &writing, entry) {
		if (op->apid_id == apid_id)
			return op;
	}
	fatalx("bad %s message from apid: no snapshot is being written for "
	    "request %u", msg_type_name(type), apid_id);
}

void
snapshot_written(uint32_t apid_id, struct tar_result *res)
{
	struct snap_op	*op = snap_writing(apid_id, MSG_SNAPSHOT_WRITTEN);

	TAILQ_REMOVE(&writing, op, entry);
	op->written = 1;
	op->errnum = res->errnum;
	op->message = res->message;
	res->message = NULL;
	if (op->proxy_ended)
		snap_finish(op);
}


/*
 * The copy found a member the rewrite would change (a FIFO, a setuid
 * bit, extended attributes...): the snapshot is made again, rewritten,
 * once the first request to the proxy has ended (the copy's end of its
 * pipe is closed, so it ends soon).
 */
void
snapshot_retry(uint32_t apid_id, const struct tar_result *res, int fd)
{
	struct snap_op	*op = snap_writing(apid_id, MSG_SNAPSHOT_RETRY);

	if (!op->copy || op->retry_fd != -1)
		fatalx("bad %s message from apid: request %u was no copy",
		    msg_type_name(MSG_SNAPSHOT_RETRY), apid_id);
	log_info("snapshot of sandbox %s: rewritten (%s)", op->sb->rec.id,
	    res->message != NULL ? res->message : "no reason given");
	op->copy = 0;
	op->retry_fd = fd;
	if (op->proxy_ended)
		snap_rewrite(op);
}

/* The retry's pipe was dropped on its way in: the snapshot fails. */
void
snapshot_retry_lost(uint32_t apid_id)
{
	struct tar_result	 res;
	char			 text[] = "managerd is out of descriptors";

	memset(&res, 0, sizeof(res));
	res.errnum = EMFILE;
	res.message = text;
	snapshot_written(apid_id, &res);
}

/*
 * apid died: a snapshot it was writing gets no SNAPSHOT_WRITTEN.  Its ends
 * of the pipe and the file died with it, so the proxy's side ends too;
 * the snapshot fails as a write that failed, and its file is removed.
 * One that has not reached that point fails when it does (snap_run).
 */
void
snapshot_abandoned(uint32_t apid_id)
{
	struct snap_op		*op;
	struct tar_result	 res;

	TAILQ_FOREACH(op, &writing, entry) {
		if (op->apid_id == apid_id)
			break;
	}
	if (op == NULL)
		return;
	memset(&res, 0, sizeof(res));
	res.errnum = EPIPE;
	res.message = strdup("apid died while writing it");
	snapshot_written(apid_id, &res);
	free(res.message);
}

/* --- list, get, delete ---------------------------------------------------- */

static int
snapshot_order(const void *a, const void *b)
{
	const struct snapshot_record	*x = a, *y = b;

	if (x->created_at < y->created_at)
		return -1;
	if (x->created_at > y->created_at)
		return 1;
	return strcmp(x->id, y->id);
}

/*
 * A listing goes out one SNAPSHOT_INFO per snapshot.  The queue to apid
 * is bounded (IMSG_MAX_QUEUED), and thousands of snapshots with long
 * names would overflow it and lose the answer: past LIST_QUEUE_HIGH
 * bytes queued the listing pauses until apid has read some.  The records
 * are read from disk in one go (§9: no cache), which for thousands of
 * snapshots holds the loop for as many small file reads.
 */
#define LIST_QUEUE_HIGH		(1024 * 1024)
#define LIST_PAUSE_USEC		10000

struct snap_list {
	uint32_t		 apid_id;
	struct snapshot_record	*v;
	size_t			 count;
	size_t			 next;
	struct event		*ev;
};

static void	snap_list_send(struct snap_list *);

static void
snap_list_resume(evutil_socket_t fd, short events, void *arg)
{
	snap_list_send(arg);
}

static void
snap_list_free(struct snap_list *l)
{
	while (l->next < l->count)
		snapshot_record_free(&l->v[l->next++]);
	if (l->ev != NULL)
		event_free(l->ev);
	free(l->v);
	free(l);
}

static void
snap_list_send(struct snap_list *l)
{
	struct timeval	 tv = { 0, LIST_PAUSE_USEC };

	for (; l->next < l->count; l->next++) {
		if (env->apid_peer.ibuf.queued > LIST_QUEUE_HIGH) {
			if (l->ev == NULL && (l->ev = evtimer_new(env->base,
			    snap_list_resume, l)) == NULL) {
				apid_error(l->apid_id, ERR_INTERNAL,
				    "out of memory");
				snap_list_free(l);
				return;
			}
			evtimer_add(l->ev, &tv);
			return;
		}
		reply_snapshot(l->apid_id, &l->v[l->next]);
		snapshot_record_free(&l->v[l->next]);
	}
	apid_reply(l->apid_id, MSG_SNAPSHOT_LIST_END, NULL);
	snap_list_free(l);
}

/* Only the caller's tenant's (tenant.c); an admin sees them all. */
static void
snap_list_visible(struct snap_list *l)
{
	const struct caller	*c = apid_request_caller(l->apid_id);
	size_t			 i, n = 0;

	for (i = 0; i < l->count; i++) {
		if (tenant_sees(c, l->v[i].tenant))
			l->v[n++] = l->v[i];
		else
			snapshot_record_free(&l->v[i]);
	}
	l->count = n;
}

void
snapshot_list(uint32_t apid_id, const char *sandbox_id)
{
	struct snap_list	*l;
	int			 saved;

	if ((l = calloc(1, sizeof(*l))) == NULL) {
		apid_error(apid_id, ERR_INTERNAL, "out of memory");
		return;
	}
	l->apid_id = apid_id;
	/* "?sandbox_id=" (empty) matches nothing, as any other id. */
	if (store_snapshot_load_all(env->datadir_fd, sandbox_id, &l->v,
	    &l->count) == -1) {
		saved = errno;
		log_warn("cannot read the snapshots");
		apid_error(apid_id, ERR_INTERNAL, "cannot read the snapshots: "
		    "%s", strerror(saved));
		free(l);
		return;
	}
	snap_list_visible(l);
	if (l->count > 0)
		qsort(l->v, l->count, sizeof(*l->v), snapshot_order);
	snap_list_send(l);
}

/* 0: found; -1: answered (404, or the store could not be read). */
static int
snapshot_lookup(uint32_t apid_id, const char *id,
    struct snapshot_record *rec)
{
	if (snapshot_load_for(apid_id, id, rec) == 0)
		return 0;
	if (errno == ENOENT)
		reply_snapshot_not_found(apid_id, id);
	else {
		log_warn("cannot read snapshot %s", id);
		apid_error(apid_id, ERR_INTERNAL, "cannot read snapshot %s: %s",
		    id, strerror(errno));
	}
	return -1;
}

void
snapshot_get(uint32_t apid_id, const char *id)
{
	struct snapshot_record	 rec;

	if (snapshot_lookup(apid_id, id, &rec) == -1)
		return;
	reply_snapshot(apid_id, &rec);
	snapshot_record_free(&rec);
}

void
snapshot_delete(uint32_t apid_id, const char *id)
{
	struct snapshot_record	 rec;
	int			 saved;

	if (snapshot_lookup(apid_id, id, &rec) == -1)
		return;
	snapshot_record_free(&rec);
	if (store_snapshot_remove(env->datadir_fd, id) == -1) {
		saved = errno;
		log_warn("cannot remove snapshot %s", id);
		apid_error(apid_id, ERR_INTERNAL, "cannot remove snapshot %s: "
		    "%s", id, strerror(saved));
		return;
	}
	log_info("snapshot %s deleted", id);
	apid_reply(apid_id, MSG_OK, NULL);
}
