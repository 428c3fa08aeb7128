/*
 * Write a tar into a sandbox (API.md §11.5, §11.6): PUT
 * /containers/<id>/archive, its body read from the descriptor managerd
 * passed along (a pipe, or a regular file) a piece at a time.  Reading
 * stops while Docker has more than DOCKER_HTTP_UPLOAD_HIWAT queued and
 * goes on when the queue drains, so an upload of any size costs the same
 * memory.  Every byte passes tar_check.c on its way: whoever made the
 * tar, Docker extracts only what the check lets through.
 *
 * Docker starts unpacking (a re-executed dockerd, some 40 ms here) only
 * once the first bytes of the body have come: it looks at them for a
 * compression.  A primed write (ARCHIVE_PUT_PRIME, an upload whose body
 * is still arriving) therefore opens with a pax header of ours
 * (docker_archive_prime.c) and waits for the tar; one that never comes
 * leaves Docker an empty archive, which changes nothing.  A primed write
 * may also wait (ARCHIVE_PUT_WAIT) for a tar that managerd's spool file
 * will hold whole: none of the file is read until ARCHIVE_PUT_GO says
 * its length.  A regular file is read from its start, whatever the
 * offset its descriptor shares with others.
 */
#include <sys/queue.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "docker_http.h"
#include "log.h"
#include "proxy.h"
#include "xmalloc.h"

#define PUT_MAX_BODY	(64 * 1024)
#define PUT_PIECE	(64 * 1024)

struct archive_write {
	TAILQ_ENTRY(archive_write) entry;
	struct proxy		*px;
	uint32_t		 peerid;
	struct archive_put	*ap;
	int			 fd;		/* -1 once closed */
	int			 file;		/* fd is a regular file */
	int			 waiting;	/* WAIT: no GO yet */
	struct event		*ev_read;
	struct docker_request	*req;
	uint64_t		 sent;
	int			 ended;		/* the whole body is queued */
	int			 refused;	/* Docker stopped reading */
	struct tar_check	 tc;
	unsigned char		 buf[PUT_PIECE];
};

static void
write_fd_close(struct archive_write *w)
{
	if (w->fd == -1)
		return;
	if (w->ev_read != NULL)
		event_del(w->ev_read);
	close(w->fd);
	w->fd = -1;
}

static void
write_free(struct archive_write *w)
{
	TAILQ_REMOVE(&w->px->puts, w, entry);
	if (w->req != NULL)
		docker_request_cancel(w->req);
	write_fd_close(w);
	if (w->ev_read != NULL)
		event_free(w->ev_read);
	tar_check_free(&w->tc);
	archive_put_free(w->ap);
	free(w->ap);
	free(w);
}

static void
write_fail(struct archive_write *w, enum error_kind kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
write_fail(struct archive_write *w, enum error_kind kind, const char *fmt, ...)
{
	char	 text[MSG_MAX_STRING + 1];	/* a whole path and more */
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	log_debug("archive put %u in sandbox %s: %s", w->peerid, w->ap->id,
	    text);
	peer_send_error(&w->px->parent, w->peerid, kind, "%s", text);
	write_free(w);
}

static int
write_out(void *arg, const void *buf, size_t len)
{
	struct archive_write	*w = arg;

	return docker_request_write(w->req, buf, len);
}

/*
 * The check refused the tar: nothing more of it goes to Docker.  One that
 * stops early was cut off on its way (the archive worker or apid that
 * wrote it died: every archive managerd passes is written whole by the
 * server), which is no fault of the client's: 502.
 */
static void
write_refused(struct archive_write *w)
{
	enum error_kind	 kind = ERR_INVALID_REQUEST;

	log_warnx("refusing an archive write into %s: %s", w->ap->id,
	    w->tc.err);
	if (w->tc.forbidden)
		kind = ERR_FORBIDDEN;
	else if (w->tc.cut)
		kind = ERR_BACKEND;
	write_fail(w, kind, "%s: the archive is refused: %s", w->ap->path,
	    w->tc.err);
}

/*
 * Queue what can be read until Docker has enough, the source is empty
 * for now (a pipe: wait for EV_READ), or it ended.  -1 when w is gone.
 */
static int
write_pump(struct archive_write *w)
{
	ssize_t	 n;
	int	 werr = 0;

	while (!w->ended && !w->refused &&
	    docker_request_pending(w->req) <= DOCKER_HTTP_UPLOAD_HIWAT) {
		if (w->file)
			n = pread(w->fd, w->buf, sizeof(w->buf),
			    (off_t)w->sent);
		else
			n = read(w->fd, w->buf, sizeof(w->buf));
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			/* Unwatched, nothing would ever call again. */
			if (event_add(w->ev_read, NULL) == -1) {
				write_fail(w, ERR_INTERNAL, "%s: cannot watch "
				    "the tar pipe", w->ap->path);
				return -1;
			}
			return 0;
		}
		if (n == -1) {
			write_fail(w, ERR_INTERNAL, "%s: reading the tar: %s",
			    w->ap->path, strerror(errno));
			return -1;
		}
		if (n == 0) {
			if (w->ap->length >= 0 &&
			    w->sent != (uint64_t)w->ap->length) {
				write_fail(w, ERR_INTERNAL, "%s: the tar ended "
				    "after %llu of %lld bytes", w->ap->path,
				    (unsigned long long)w->sent,
				    (long long)w->ap->length);
				return -1;
			}
			/* A primed write left unused: Docker unpacks nothing. */
			if (!((w->ap->flags & ARCHIVE_PUT_PRIME) &&
			    w->sent == 0) && tar_check_end(&w->tc) == -1) {
				write_refused(w);
				return -1;
			}
			if (docker_request_write_end(w->req) == -1) {
				werr = errno;
				break;
			}
			w->ended = 1;
			write_fd_close(w);
			return 0;
		}
		if (w->ap->length >= 0 &&
		    (uint64_t)n > (uint64_t)w->ap->length - w->sent) {
			write_fail(w, ERR_INTERNAL, "%s: the tar is longer "
			    "than %lld bytes", w->ap->path,
			    (long long)w->ap->length);
			return -1;
		}
		if (tar_check_feed(&w->tc, w->buf, (size_t)n, write_out,
		    w) == -1) {
			if (w->tc.state == TC_REFUSED) {
				write_refused(w);
				return -1;
			}
			werr = errno;
			break;
		}
		w->sent += (uint64_t)n;
	}
	if (werr == 0)
		return 0;
	if (werr == EPIPE) {
		/* Docker stopped reading: its answer is on its way. */
		w->refused = 1;
		write_fd_close(w);
		return 0;
	}
	write_fail(w, ERR_INTERNAL, "%s: uploading: %s", w->ap->path,
	    strerror(werr));
	return -1;
}

static void
write_readable(evutil_socket_t fd, short what, void *arg)
{
	write_pump(arg);
}

static void
write_drain(struct docker_request *req, void *arg)
{
	struct archive_write	*w = arg;

	/* Waiting for the pipe already, or for GO: it will call. */
	if (w->waiting ||
	    (w->fd != -1 && event_pending(w->ev_read, EV_READ, NULL)))
		return;
	write_pump(w);
}

/* GO has come and the prime is queued: the tar, or an empty end. */
static void
write_go(struct archive_write *w)
{
	if (w->ap->length > 0) {
		write_pump(w);
		return;
	}
	if (docker_request_write_end(w->req) == -1) {
		write_fail(w, ERR_INTERNAL, "%s: ending the body: %s",
		    w->ap->path, strerror(errno));
		return;
	}
	w->ended = 1;
	write_fd_close(w);
}

int
docker_archive_put_go(struct proxy *px, uint32_t peerid, uint64_t length)
{
	struct archive_write	*w;

	TAILQ_FOREACH(w, &px->puts, entry)
		if (w->peerid == peerid)
			break;
	if (w == NULL) {
		/* It ended while GO was on its way. */
		log_debug("archive put %u: GO for no such PUT", peerid);
		return 0;
	}
	if (!w->waiting)
		return -1;
	w->waiting = 0;
	w->ap->length = (int64_t)length;
	/* Before the container's check is through, write_container goes. */
	if (w->req != NULL)
		write_go(w);
	return 0;
}

static void
write_done(struct docker_request *req, enum docker_http_error error,
    const struct docker_response *resp, void *arg)
{
	struct archive_write	*w = arg;
	struct docker_result	 res;
	enum error_kind		 kind;
	char			 msg[1024], text[MSG_MAX_STRING + 1];

	w->req = NULL;
	if (error == DOCKER_HTTP_OK && resp->status == 200) {
		log_debug("archive put %u in sandbox %s: %llu bytes to %s",
		    w->peerid, w->ap->id, (unsigned long long)w->sent,
		    w->ap->path);
		write_fd_close(w);
		peer_send(&w->px->parent, MSG_DOCKER_DONE, w->peerid, -1,
		    NULL);
		write_free(w);
		return;
	}
	if (error == DOCKER_HTTP_OK && resp->status >= 400) {
		docker_error_message(resp, msg, sizeof(msg));
		if ((kind = archive_put_error(msg, text, sizeof(text))) != 0) {
			write_fail(w, kind, "%s", text);
			return;
		}
		if (resp->status == 404) {
			if (container_gone_message(msg)) {
				container_cache_forget(w->ap->id);
				write_fail(w, ERR_NOT_FOUND,
				    "sandbox %s not found", w->ap->id);
			} else
				write_fail(w, ERR_NOT_FOUND, "%s: not found",
				    w->ap->path);
			return;
		}
	}
	res.error = error;
	res.errnum = docker_request_errno(req);
	res.status = resp->status;
	res.resp = resp;
	kind = docker_result_error(&res, w->ap->path, text, sizeof(text));
	if (docker_result_answered(&res) && res.status < 400)
		kind = ERR_BACKEND;
	write_fail(w, kind, "%s", text);
}

static int
write_prime(struct archive_write *w)
{
	unsigned char	 blk[2 * TAR_BLOCK];

	archive_prime(blk);
	return docker_request_write(w->req, blk, sizeof(blk));
}

static void
write_container(void *arg, const char *cid, enum error_kind kind,
    const char *text)
{
	struct archive_write		*w = arg;
	struct docker_request_spec	 spec;
	char				 path[DOCKER_HTTP_MAX_PATH + 1];
	int				 r;

	if (cid == NULL) {
		write_fail(w, kind, "%s", text);
		return;
	}
	if (w->ap->flags & ARCHIVE_PUT_NO_REPLACE)
		r = docker_path(path, sizeof(path), DOCKER_API
		    "/containers/%s/archive?path=%s&noOverwriteDirNonDir=true",
		    cid, w->ap->path);
	else
		r = docker_path(path, sizeof(path), DOCKER_API
		    "/containers/%s/archive?path=%s", cid, w->ap->path);
	if (r == -1) {
		write_fail(w, ERR_INVALID_REQUEST, "path too long");
		return;
	}
	memset(&spec, 0, sizeof(spec));
	spec.method = "PUT";
	spec.path = path;
	spec.content_type = "application/x-tar";
	spec.flags = DOCKER_HTTP_UPLOAD;
	/* A prime's bytes are more than the tar: chunked, whatever GO says. */
	spec.upload_len = (w->ap->flags & ARCHIVE_PUT_PRIME) ? -1 :
	    w->ap->length;
	spec.max_body = PUT_MAX_BODY;
	spec.on_drain = write_drain;
	spec.on_done = write_done;
	spec.arg = w;
	log_debug("docker PUT %s", path);
	if ((w->req = docker_request_new(w->px->base,
	    w->px->settings.docker_endpoint, &spec)) == NULL) {
		write_fail(w, docker_start_error_kind(errno), "%s: cannot "
		    "start a Docker request: %s", w->ap->path, strerror(errno));
		return;
	}
	if ((w->ap->flags & ARCHIVE_PUT_PRIME) && write_prime(w) == -1) {
		write_fail(w, ERR_INTERNAL, "%s: cannot queue the prime: %s",
		    w->ap->path, strerror(errno));
		return;
	}
	if (w->waiting)
		return;
	if (w->ap->flags & ARCHIVE_PUT_WAIT)
		write_go(w);
	else
		write_pump(w);
}

void
docker_archive_put(struct proxy *px, uint32_t peerid, struct archive_put *ap,
    int fd)
{
	struct archive_write	*w;
	struct stat		 st;
	int			 flags;

	w = xcalloc(1, sizeof(*w));
	w->px = px;
	w->peerid = peerid;
	w->ap = ap;
	w->fd = fd;
	w->waiting = (ap->flags & ARCHIVE_PUT_WAIT) != 0;
	TAILQ_INSERT_TAIL(&px->puts, w, entry);
	tar_check_init(&w->tc, px->settings.policy.uid,
	    px->settings.policy.gid);
	if ((w->ev_read = event_new(px->base, fd, EV_READ, write_readable,
	    w)) == NULL)
		fatalx("%s: out of memory", __func__);
	if (fstat(fd, &st) == -1 || (!S_ISFIFO(st.st_mode) &&
	    !S_ISREG(st.st_mode))) {
		write_fail(w, ERR_INTERNAL, "the tar is not a pipe or a file");
		return;
	}
	w->file = S_ISREG(st.st_mode);
	if (ap->length < -1) {
		write_fail(w, ERR_INTERNAL, "bad tar length %lld",
		    (long long)ap->length);
		return;
	}
	/*
	 * Uploads, rollbacks and forks all unpack into the workspace; no
	 * other directory of a sandbox is ever written, whatever managerd
	 * asks.
	 */
	if (strcmp(ap->path, WORKSPACE) != 0) {
		log_warnx("refusing an archive write to %s in %s", ap->path,
		    ap->id);
		write_fail(w, ERR_FORBIDDEN, "archive writes go to %s only",
		    WORKSPACE);
		return;
	}
	if (S_ISFIFO(st.st_mode) && ((flags = fcntl(fd, F_GETFL)) == -1 ||
	    fcntl(fd, F_SETFL, flags | O_NONBLOCK) == -1)) {
		write_fail(w, ERR_INTERNAL, "cannot make the tar pipe "
		    "non-blocking: %s", strerror(errno));
		return;
	}
	archive_container(px, ap->id, "write files to", write_container, w);
}
