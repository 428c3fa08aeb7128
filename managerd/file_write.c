/*
 * Uploads (API.md §4.10, §6.3), in two phases: FILE_WRITE_BEGIN, then
 * COMMIT or ABORT.  Before apid reads the body the path is resolved
 * inside the sandbox (file_walk.c) and apid gets a spool file for it
 * (FILE_SPOOL); only once the whole body is in the spool does the tar go
 * to Docker, with directory members that keep the existing directories
 * as they are.  A client that goes away half-way costs one ABORT: Docker
 * gets no byte of the file, and the old file stays.
 *
 * The archive PUT itself starts early, primed (ARCHIVE_PUT_PRIME), as
 * the body begins to arrive: Docker's own set-up (a re-executed dockerd
 * that unpacks) then overlaps the body, and at COMMIT the tar pipe is
 * handed to apid with FILE_WRITE_READY.  Docker holds the container's
 * lock for as long as that PUT lasts, which would keep every other call
 * on the sandbox (exec, stat, kill) waiting for a slow client; so a body
 * that is not whole within PRIME_WAIT_MS loses its primed PUT (the pipe
 * is closed: Docker unpacks an empty archive and lets go) and the PUT is
 * made again at COMMIT, primed as well, so that a tar that never comes
 * is an empty archive there too and apid's answer says why.
 *
 * An upload whose size was declared (Content-Length) is spooled as its
 * tar: FILE_SPOOL carries the plan, apid's UPLOAD job writes the tar,
 * body and all, into the spool, and the primed PUT waits on that file
 * (ARCHIVE_PUT_WAIT) instead of a pipe, for ARCHIVE_PUT_GO with its
 * length at COMMIT (0: none, where a pipe would be closed unused).  The
 * proxy then reads a file, and no process stands between the spool and
 * Docker.  A chunked body, of a size known only at its end, is spooled
 * bare and its tar made at COMMIT, through the pipe.
 *
 * The bytes pass between apid and the proxy; managerd hands out the
 * descriptors, keeps the tar pipe's write end until COMMIT, and a
 * descriptor of a tar spool until the upload ends.
 */
#include <sys/queue.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "bulk_pipe.h"
#include "log.h"
#include "managerd.h"

#define WORKSPACE	"/workspace"
#define WORKSPACE_LEN	(sizeof(WORKSPACE) - 1)
#define NEW_DIR_MODE	0755
/*
 * How long a primed PUT waits for its body: the 10 MiB a local client
 * sends in some 10 ms, or 100 MiB, many times over; never long enough
 * to hold up another call on the sandbox for more than a moment.
 */
#define PRIME_WAIT_MS	250

enum upload_state {
	UPLOAD_WALKING,		/* the path is being resolved */
	UPLOAD_SPOOLING,	/* apid has the spool: COMMIT or ABORT next */
	UPLOAD_PUTTING,		/* committed: the PUT's answer is apid's */
	UPLOAD_ENDING		/* over; an abandoned PUT still runs */
};

/* The archive PUT of an upload. */
enum put_state {
	PUT_NONE,		/* none in flight */
	PUT_PRIMED,		/* primed; tar_fd is its pipe, the body comes */
	PUT_ABANDONED,		/* primed, its pipe closed unused: answer next */
	PUT_LIVE		/* apid writes its tar: its answer is final */
};

struct upload {
	TAILQ_ENTRY(upload)	 entry;
	uint32_t		 apid_id;
	enum upload_state	 state;
	uint32_t		 mode;
	uint64_t		 declared;	/* FILE_WRITE_SIZE_UNKNOWN */
	uint64_t		 bytes;
	enum put_state		 put;
	uint32_t		 put_call;	/* the PUT's, for GO */
	int			 tar_fd;	/* PUT_PRIMED: the pipe's end */
	int			 spool_fd;	/* a tar spool; else -1 */
	struct event		*ev_prime;	/* PRIME_WAIT_MS */
	struct file_walk	 walk;		/* the plan */
};

static TAILQ_HEAD(, upload)	uploads = TAILQ_HEAD_INITIALIZER(uploads);

static struct upload *
upload_find(uint32_t apid_id)
{
	struct upload	*up;

	/* An ended one waits for Docker only: the request is not its. */
	TAILQ_FOREACH(up, &uploads, entry) {
		if (up->apid_id == apid_id && up->state != UPLOAD_ENDING)
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
	up->tar_fd = -1;
	up->spool_fd = -1;
	TAILQ_INSERT_TAIL(&uploads, up, entry);
	return up;
}

static void
upload_free(struct upload *up)
{
	TAILQ_REMOVE(&uploads, up, entry);
	if (up->tar_fd != -1)
		close(up->tar_fd);
	if (up->spool_fd != -1)
		close(up->spool_fd);
	if (up->ev_prime != NULL)
		event_free(up->ev_prime);
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
put_answer(struct imsg *reply, struct upload *up)
{
	static char		 file[] = "file";
	struct file_info	 fi;
	struct msgw		 w;

	if (reply->hdr.type != MSG_DOCKER_DONE) {
		relay_error(reply, up->apid_id);
		return;
	}
	if (reply->len != 0)
		peer_bad_message(&env->proxy_peer, reply, "unexpected payload");
	fi.name = strrchr(up->walk.requested, '/') + 1;
	fi.path = up->walk.requested;
	fi.type = file;
	fi.size = up->bytes;
	fi.modified_at = clock_wall();
	msgw_init(&w);
	msg_put_file_info(&w, &fi);
	apid_reply(up->apid_id, MSG_FILE_INFO, &w);
}

static void	upload_put_late(struct upload *);
static void	upload_end(struct upload *);

/* A waiting PUT's tar is whole in its file, length bytes (0: none). */
static int
put_go(struct upload *up, uint64_t length)
{
	struct msgw	 w;

	msgw_init(&w);
	msg_put_u64(&w, length);
	return proxy_send(MSG_DOCKER_ARCHIVE_PUT_GO, up->put_call, &w);
}

/*
 * The primed PUT gets no tar: its pipe closes unused, or a waiting one
 * hears GO 0 (unless Docker ended it already).  Docker unpacks nothing.
 */
static void
prime_drop(struct upload *up, int put_ended)
{
	if (up->ev_prime != NULL)
		evtimer_del(up->ev_prime);
	if (up->spool_fd == -1) {
		close(up->tar_fd);
		up->tar_fd = -1;
	} else if (!put_ended && put_go(up, 0) == -1)
		log_warnx("upload %u: cannot end the primed PUT", up->apid_id);
}

/* The answer to a PUT that got no tar: only the log hears of it. */
static void
put_unused(struct imsg *reply, const struct upload *up, const char *what)
{
	uint32_t	 kind;
	char		*text;

	if (reply->hdr.type == MSG_DOCKER_DONE) {
		if (reply->len != 0)
			peer_bad_message(&env->proxy_peer, reply,
			    "unexpected payload");
		return;
	}
	text = proxy_error_text(reply, &kind);
	log_debug("upload %u: %s: %s", up->apid_id, what, text);
	free(text);
}

static void
upload_put_done(struct imsg *reply, void *arg)
{
	struct upload	*up = arg;

	switch (up->put) {
	case PUT_LIVE:
		/* ENDING: apid never got the pipe, nor hears of this. */
		if (up->state != UPLOAD_ENDING)
			put_answer(reply, up);
		upload_free(up);
		break;
	case PUT_PRIMED:
		/* Docker ended it before the tar came: COMMIT asks again. */
		put_unused(reply, up, "the primed PUT ended early");
		prime_drop(up, 1);
		up->put = PUT_NONE;
		break;
	case PUT_ABANDONED:
		put_unused(reply, up, "the abandoned PUT");
		up->put = PUT_NONE;
		if (up->state == UPLOAD_ENDING)
			upload_free(up);
		else if (up->state == UPLOAD_PUTTING)
			upload_put_late(up);
		break;
	default:
		fatalx("%s: upload %u has no PUT", __func__, up->apid_id);
	}
}

/*
 * The proxy extracts the tar in fd (consumed) into /workspace, refusing
 * to put a directory over anything else.  -1 (ECONNRESET) if it cannot
 * be asked.
 */
static int
put_call(struct upload *up, uint8_t flags, int fd, int64_t length)
{
	struct archive_put	 ap;
	struct msgw		 w;
	static char		 workspace[] = WORKSPACE;

	ap.id = up->walk.id;
	ap.path = workspace;
	ap.flags = ARCHIVE_PUT_NO_REPLACE | flags;
	ap.length = length;
	msgw_init(&w);
	msg_put_archive_put(&w, &ap);
	/* Its reply comes from the event loop, never from in here. */
	if ((up->put_call = proxy_call(MSG_DOCKER_ARCHIVE_PUT, fd, &w, 0,
	    MSG_DOCKER_DONE, upload_put_done, up)) == 0) {
		errno = ECONNRESET;
		return -1;
	}
	return 0;
}

/* A PUT of what is written into *wfd.  -1 if it cannot be asked. */
static int
put_start(struct upload *up, uint8_t flags, int *wfd)
{
	int	 fds[2];

	if (bulk_pipe(fds, 0) == -1)
		return -1;		/* errno says why */
	if (put_call(up, flags, fds[0], -1) == -1) {
		close(fds[1]);
		return -1;
	}
	*wfd = fds[1];
	return 0;
}

/*
 * A PUT of the tar spool, which is whole (length bytes), or, with
 * ARCHIVE_PUT_WAIT, will be at GO.  -1 if it cannot be asked.
 */
static int
put_start_spool(struct upload *up, uint8_t flags, int64_t length)
{
	int	 fd;

	if ((fd = fcntl(up->spool_fd, F_DUPFD_CLOEXEC, 0)) == -1)
		return -1;
	return put_call(up, flags, fd, length);
}

/*
 * The tar spool's length, or -1 (errno set).  apid's job ended before
 * COMMIT, and a tar is never empty: an empty spool is no upload.
 */
static off_t
spool_length(const struct upload *up)
{
	struct stat	 st;

	if (fstat(up->spool_fd, &st) == -1)
		return -1;
	if (st.st_size == 0) {
		errno = ENODATA;
		return -1;
	}
	return st.st_size;
}

/* apid hears what to write, and gets the pipe to write it into. */
static void
upload_ready(struct upload *up, int wfd)
{
	struct file_write_ready	 ready;
	struct msgw		 w;

	up->state = UPLOAD_PUTTING;
	up->put = PUT_LIVE;
	ready_fill(up, &ready);
	msgw_init(&w);
	msg_put_file_write_ready(&w, &ready);
	/* Sent, or closed: then Docker gets an empty tar, apid an error. */
	if (apid_reply_fd(up->apid_id, MSG_FILE_WRITE_READY, wfd, &w) == 0)
		return;
	if (apid_error(up->apid_id, ERR_UNAVAILABLE, "cannot hand apid the "
	    "upload's tar pipe; try again") == -1)
		apid_request_close(up->apid_id);
	up->state = UPLOAD_ENDING;
}

/* No PUT could be asked for (errno says why): apid hears, and it ends. */
static void
upload_put_failed(struct upload *up)
{
	int	 saved = errno;

	if (saved == ECONNRESET)
		apid_error(up->apid_id, ERR_INTERNAL,
		    "cannot reach dockerd-proxy");
	else
		apid_error(up->apid_id, descriptor_error(saved,
		    ERR_INTERNAL), "cannot hand the upload's tar to "
		    "dockerd-proxy: %s", strerror(saved));
	upload_free(up);
}

/*
 * After the body, the PUT of a bare spool is primed too: a tar that
 * never comes (apid out of descriptors, its job gone) is an empty
 * archive to Docker, and apid, whose job did not write it, answers the
 * error it knows.  A tar spool is whole: its PUT reads it at once.
 */
static void
upload_put_late(struct upload *up)
{
	off_t	 len;
	int	 wfd;

	if (up->spool_fd != -1) {
		if ((len = spool_length(up)) != -1 &&
		    put_start_spool(up, 0, len) == 0) {
			up->state = UPLOAD_PUTTING;
			up->put = PUT_LIVE;
			return;
		}
		upload_put_failed(up);
		return;
	}
	if (put_start(up, ARCHIVE_PUT_PRIME, &wfd) == -1) {
		upload_put_failed(up);
		return;
	}
	upload_ready(up, wfd);
}

static void
prime_expired(evutil_socket_t fd, short events, void *arg)
{
	struct upload	*up = arg;

	log_debug("upload %u: no whole body within %d ms; the PUT waits for "
	    "it", up->apid_id, PRIME_WAIT_MS);
	prime_drop(up, 0);
	up->put = PUT_ABANDONED;
}

/* Docker sets up while the body comes; without a PUT, COMMIT makes one. */
static void
upload_prime(struct upload *up)
{
	struct timeval	 tv = { 0, PRIME_WAIT_MS * 1000 };

	if (up->ev_prime == NULL && (up->ev_prime = evtimer_new(env->base,
	    prime_expired, up)) == NULL)
		fatalx("%s: evtimer_new", __func__);
	if (up->spool_fd != -1 ? put_start_spool(up, ARCHIVE_PUT_PRIME |
	    ARCHIVE_PUT_WAIT, -1) == -1 :
	    put_start(up, ARCHIVE_PUT_PRIME, &up->tar_fd) == -1) {
		log_debug("upload %u: cannot prime a PUT", up->apid_id);
		up->tar_fd = -1;
		return;
	}
	up->put = PUT_PRIMED;
	evtimer_add(up->ev_prime, &tv);
}

/*
 * Committed, the primed PUT waiting on a tar spool: GO with its length.
 * The spool's size cannot be known: Docker gets nothing, apid a 500.
 */
static void
upload_go_spool(struct upload *up)
{
	off_t	 len;

	evtimer_del(up->ev_prime);
	if ((len = spool_length(up)) == -1) {
		apid_error(up->apid_id, ERR_INTERNAL, "cannot read the "
		    "upload's spool: %s", strerror(errno));
		upload_end(up);
		return;
	}
	up->state = UPLOAD_PUTTING;
	up->put = PUT_LIVE;
	if (put_go(up, (uint64_t)len) == -1)
		log_warnx("upload %u: cannot start the primed PUT's tar",
		    up->apid_id);
}

/*
 * Committed: the primed PUT's pipe goes to apid, or its spool is whole,
 * or a PUT starts now.
 */
static void
upload_go(struct upload *up)
{
	int	 wfd;

	switch (up->put) {
	case PUT_PRIMED:
		if (up->spool_fd != -1) {
			upload_go_spool(up);
			break;
		}
		evtimer_del(up->ev_prime);
		wfd = up->tar_fd;
		up->tar_fd = -1;
		upload_ready(up, wfd);
		break;
	case PUT_ABANDONED:
		up->state = UPLOAD_PUTTING;	/* upload_put_done goes on */
		break;
	default:
		upload_put_late(up);
	}
}

/* Over without a tar: now, or once an abandoned PUT has answered. */
static void
upload_end(struct upload *up)
{
	if (up->put == PUT_PRIMED) {
		prime_drop(up, 0);
		up->put = PUT_ABANDONED;
	}
	if (up->put == PUT_ABANDONED)
		up->state = UPLOAD_ENDING;
	else
		upload_free(up);
}

/* --- two phases (FILE_WRITE_BEGIN) ---------------------------------------- */

/*
 * What apid spools: with a declared size, the tar (the plan; managerd
 * keeps a descriptor of the spool for the proxy), else the bare body.
 * Without a descriptor to spare the spool is bare: slower, no worse.
 */
static void
spool_fill(struct upload *up, int fd, struct file_spool *fs)
{
	memset(fs, 0, sizeof(*fs));
	if (up->declared == FILE_WRITE_SIZE_UNKNOWN) {
		fs->max_bytes = (uint64_t)env->conf.max_file_bytes;
		return;
	}
	fs->max_bytes = up->declared;
	if ((up->spool_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) == -1) {
		log_warn("upload %u: a bare spool", up->apid_id);
		return;
	}
	fs->tar = 1;
	ready_fill(up, &fs->plan);
}

/* apid may read the body now, into the spool it gets. */
static void
upload_spool(struct upload *up)
{
	struct file_spool	 fs;
	struct msgw		 w;
	int			 fd, saved;

	if ((fd = upload_spool_open(1)) == -1) {
		saved = errno;
		log_warn("upload %u: cannot create a spool", up->apid_id);
		apid_error(up->apid_id, storage_error(saved, ERR_INTERNAL),
		    "cannot create a spool for the upload: %s",
		    strerror(saved));
		upload_free(up);
		return;
	}
	spool_fill(up, fd, &fs);
	msgw_init(&w);
	msg_put_file_spool(&w, &fs);	/* fs.plan borrows from up */
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
	upload_prime(up);
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
	if (msg_get_u64(imsg, &bytes) == -1)
		peer_bad_message(p, imsg, "malformed commit");
	/* apid framed the body by its length: any other count is a lie. */
	if (up->declared != FILE_WRITE_SIZE_UNKNOWN && bytes != up->declared)
		peer_bad_message(p, imsg, "not the size it declared");
	up->bytes = bytes;
	if (bytes > (uint64_t)max) {
		apid_error(up->apid_id, ERR_PAYLOAD_TOO_LARGE,
		    "file exceeds %lld bytes", max);
		upload_end(up);
		return;
	}
	/* Destroyed while the body came: nothing to ask Docker. */
	if (sandbox_find(up->walk.id) == NULL) {
		apid_not_found(up->apid_id, up->walk.id);
		upload_end(up);
		return;
	}
	upload_go(up);
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
	upload_end(up);
}

/*
 * The apid that asked died.  An upload that waits for its body, or for
 * an abandoned PUT's answer before it puts, will never be answered; one
 * that is resolving its path stops at FILE_SPOOL (whose reply is
 * dropped); one being put finishes, its answer dropped.
 */
void
file_write_orphaned(uint32_t apid_id)
{
	struct upload	*up;

	if ((up = upload_find(apid_id)) == NULL)
		return;
	if (up->state != UPLOAD_SPOOLING && !(up->state == UPLOAD_PUTTING &&
	    up->put == PUT_ABANDONED))
		return;
	log_debug("upload %u to %s: apid went away", up->apid_id,
	    up->walk.requested);
	apid_request_close(up->apid_id);
	upload_end(up);
}
