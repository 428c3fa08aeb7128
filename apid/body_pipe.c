/*
 * The bridge from an upload's body, which apid still holds whole in
 * memory (route_file_write.c), to the archive worker's UPLOAD job, which
 * reads the file's bytes from a descriptor: the body is written from
 * the loop into a pipe, the job's fd0, as fast as the job reads it,
 * and the pipe is closed after its last byte (the job checks it got
 * exactly the upload's size).  It goes once uploads are spooled.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "apid.h"
#include "log.h"

struct body_pipe {
	struct evbuffer	*body;
	int		 fd;		/* the write end */
	struct event	*ev;
};

static void
pipe_free(struct body_pipe *bp)
{
	if (bp->ev != NULL)
		event_free(bp->ev);
	if (bp->fd != -1)
		close(bp->fd);
	evbuffer_free(bp->body);
	free(bp);
	/*
	 * The body came in small chains that glibc keeps in its heap once
	 * freed: give the pages back, or apid would stay at its largest
	 * upload.
	 */
	malloc_trim(0);
}

static void
pipe_writable(evutil_socket_t fd, short events, void *arg)
{
	struct body_pipe	*bp = arg;

	if (evbuffer_write(bp->body, fd) == -1) {
		if (errno == EAGAIN || errno == EINTR)
			return;
		/* The job ended (EPIPE): it says why. */
		log_debug("upload body: %s", strerror(errno));
		pipe_free(bp);
		return;
	}
	if (evbuffer_get_length(bp->body) == 0)
		pipe_free(bp);
}

int
body_pipe_start(struct evbuffer *body)
{
	struct body_pipe	*bp;
	int			 fds[2], flags;

	if ((bp = calloc(1, sizeof(*bp))) == NULL) {
		evbuffer_free(body);
		return -1;
	}
	bp->body = body;
	bp->fd = -1;
	if (bulk_pipe(fds, 0) == -1) {
		pipe_free(bp);
		return -1;
	}
	bp->fd = fds[1];
	if ((flags = fcntl(bp->fd, F_GETFL)) == -1 ||
	    fcntl(bp->fd, F_SETFL, flags | O_NONBLOCK) == -1 ||
	    (evbuffer_get_length(body) > 0 &&
	    ((bp->ev = event_new(apid->base, bp->fd, EV_WRITE | EV_PERSIST,
	    pipe_writable, bp)) == NULL || event_add(bp->ev, NULL) == -1))) {
		close(fds[0]);
		pipe_free(bp);
		return -1;
	}
	/* An empty body: the job reads EOF at once. */
	if (evbuffer_get_length(body) == 0)
		pipe_free(bp);
	return fds[0];
}
