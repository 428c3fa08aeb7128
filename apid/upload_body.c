/*
 * An upload's body, from the client's connection into a pipe (the
 * archive worker's SPOOL or UPLOAD job reads the other end into the
 * spool file), as it comes.  A body of a declared length is spliced by
 * the connection itself (http_splice.c); a chunked one comes here.
 * What the pipe cannot take at once waits here, and the body is paused
 * until the pipe drains: a slow spool pushes back on the client
 * through TCP, and apid holds at most one read's worth of it.
 * done runs once: when the whole body is in the pipe and the pipe is
 * closed (ok), or when the body failed (too large, the client gone, the
 * reader gone), with the pipe closed too.
 */
#include <sys/queue.h>

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "apid.h"
#include "log.h"

static void
writer_close(struct upload_body *ub)
{
	if (ub->ev != NULL) {
		event_free(ub->ev);
		ub->ev = NULL;
	}
	if (ub->fd != -1) {
		close(ub->fd);
		ub->fd = -1;
	}
}

static void
writer_end(struct upload_body *ub, int ok)
{
	void	(*done)(void *, int) = ub->done;

	writer_close(ub);
	if (done == NULL)
		return;
	ub->done = NULL;
	done(ub->arg, ok);
}

/* Write what waits; 0 when all of it went, 1 if some waits, -1 broken. */
static int
writer_flush(struct upload_body *ub)
{
	int	 n;

	while (evbuffer_get_length(ub->pend) > 0) {
		if ((n = evbuffer_write(ub->pend, ub->fd)) > 0)
			continue;
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			return 1;
		/* The reader went away: the job failed, and says why. */
		return -1;
	}
	return 0;
}

static void
writer_progress(struct upload_body *ub)
{
	int	 rc;

	if ((rc = writer_flush(ub)) == -1) {
		ub->broken = 1;
		writer_end(ub, 0);
		return;
	}
	if (rc == 1) {
		http_body_pause(ub->req);
		if (event_add(ub->ev, NULL) == -1) {
			ub->broken = 1;
			writer_end(ub, 0);
		}
		return;
	}
	if (ub->ended)
		writer_end(ub, 1);
	else
		http_body_resume(ub->req);
}

static void
writer_writable(evutil_socket_t fd, short what, void *arg)
{
	writer_progress(arg);
}

/*
 * Straight into the pipe while nothing waits before it: the bytes are
 * then copied once here, not into pend and out again.  What the pipe
 * does not take now is left in *data, *len.  -1: the reader is gone.
 */
static int
writer_direct(struct upload_body *ub, const char **data, size_t *len)
{
	ssize_t	 n;

	if (evbuffer_get_length(ub->pend) > 0)
		return 0;
	while (*len > 0) {
		if ((n = write(ub->fd, *data, *len)) > 0) {
			*data += n;
			*len -= (size_t)n;
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			return 0;
		return -1;
	}
	return 0;
}

static void
body_data(void *arg, const char *data, size_t len)
{
	struct upload_body	*ub = arg;

	if (ub->fd == -1)
		return;
	ub->bytes += len;
	if (writer_direct(ub, &data, &len) == -1) {
		ub->broken = 1;
		writer_end(ub, 0);
		return;
	}
	if (len == 0)
		return;
	if (evbuffer_add(ub->pend, data, len) == -1) {
		log_warnx("upload: out of memory for the body");
		ub->broken = 1;
		writer_end(ub, 0);
		return;
	}
	if (!event_pending(ub->ev, EV_WRITE, NULL))
		writer_progress(ub);
}

static void
body_end(void *arg, int ok)
{
	struct upload_body	*ub = arg;

	if (!ok || ub->fd == -1) {
		writer_end(ub, 0);
		return;
	}
	ub->ended = 1;
	if (!event_pending(ub->ev, EV_WRITE, NULL))
		writer_progress(ub);
}

/* A spliced body ended: the connection closed the pipe before this. */
static void
splice_end(void *arg, int ok)
{
	struct upload_body	*ub = arg;

	ub->bytes = ub->req->head.body_bytes;
	if (!ok && ub->req->sink_broken)
		ub->broken = 1;
	writer_end(ub, ok);
}

/*
 * Start reading req's body into fd (the pipe's write end, which it
 * takes), at most max bytes: spliced when it has a Content-Length, else
 * through here.  0, or -1 with the pipe closed and done never called
 * (the declared length is over max, or no memory).
 */
int
upload_body_start(struct upload_body *ub, struct http_request *req, int fd,
    uint64_t max, void (*done)(void *, int), void *arg)
{
	int	 rc;

	ub->req = req;
	ub->fd = -1;
	ub->done = done;
	ub->arg = arg;
	if (fcntl(fd, F_SETFL, O_NONBLOCK) == -1) {
		close(fd);
		return -1;
	}
	/* The connection's from here on, even if it ends the body now. */
	if ((rc = http_body_splice(req, max, fd, splice_end, ub)) == 0)
		return 0;
	ub->fd = fd;
	if (rc == -1 || (ub->pend = evbuffer_new()) == NULL ||
	    (ub->ev = event_new(apid->base, fd, EV_WRITE, writer_writable,
	    ub)) == NULL ||
	    http_body_stream(req, max, body_data, body_end, ub) == -1) {
		ub->done = NULL;
		writer_close(ub);
		return -1;
	}
	return 0;
}

void
upload_body_free(struct upload_body *ub)
{
	ub->done = NULL;
	writer_close(ub);
	if (ub->pend != NULL) {
		evbuffer_free(ub->pend);
		ub->pend = NULL;
	}
}
