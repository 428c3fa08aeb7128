/*
 * Writing a pipe whose reader is managerd (a process's stdin: a POST's
 * body, an attachment's binary frames) from the event loop.  What the
 * pipe cannot take at once waits in pend, which the owner bounds by
 * pausing its source while pipe_writer_backlog() is large and going on
 * at drained.  Bytes are written on the loop's next turn, never inside
 * pipe_writer_add(), so that no callback runs in the middle of the
 * owner's own work: drained when pend has gone into the pipe, end once,
 * when the reader went away (ok 0) or, after pipe_writer_finish(), when
 * everything was written and the pipe closed (ok 1).
 */
#include <sys/queue.h>

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "apid.h"
#include "log.h"

/* 0 when pend is all in the pipe, 1 if some waits, -1 broken. */
static int
writer_flush(struct pipe_writer *pw)
{
	int	 n;

	while (evbuffer_get_length(pw->pend) > 0) {
		if ((n = evbuffer_write(pw->pend, pw->fd)) > 0)
			continue;
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 1;
		/* EPIPE: managerd closed its end and says why itself. */
		return -1;
	}
	return 0;
}

static void
writer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct pipe_writer	*pw = arg;
	int			 rc;

	rc = pw->broken ? -1 : writer_flush(pw);
	if (rc == 1 && event_add(pw->ev, NULL) == 0)
		return;
	if (rc != 0 || pw->finishing) {
		if (rc != 0)
			log_debug("%s: the pipe's reader went away", pw->what);
		pipe_writer_close(pw);
		pw->end(pw->arg, rc == 0);
		return;
	}
	if (pw->drained != NULL)
		pw->drained(pw->arg);
}

/* The next turn of the loop writes (or reports) what there is. */
static void
writer_kick(struct pipe_writer *pw)
{
	if (!event_pending(pw->ev, EV_WRITE, NULL))
		event_active(pw->ev, EV_WRITE, 1);
}

void
pipe_writer_init(struct pipe_writer *pw, const char *what,
    void (*drained)(void *), void (*end)(void *, int), void *arg)
{
	pw->fd = -1;
	pw->ev = NULL;
	pw->pend = NULL;
	pw->finishing = 0;
	pw->broken = 0;
	pw->what = what;
	pw->drained = drained;
	pw->end = end;
	pw->arg = arg;
}

int
pipe_writer_open(struct pipe_writer *pw, int fd)
{
	if (fcntl(fd, F_SETFL, O_NONBLOCK) == -1 ||
	    (pw->pend = evbuffer_new()) == NULL ||
	    (pw->ev = event_new(apid->base, fd, EV_WRITE, writer_cb,
	    pw)) == NULL) {
		close(fd);
		if (pw->pend != NULL)
			evbuffer_free(pw->pend);
		pw->pend = NULL;
		return -1;
	}
	pw->fd = fd;
	return 0;
}

int
pipe_writer_is_open(const struct pipe_writer *pw)
{
	return pw->fd != -1;
}

/* 0, or -1 when out of memory (the pipe is then as good as broken). */
int
pipe_writer_add(struct pipe_writer *pw, const void *data, size_t len)
{
	if (pw->fd == -1 || pw->finishing)
		return -1;
	if (evbuffer_add(pw->pend, data, len) == -1)
		pw->broken = 1;
	writer_kick(pw);
	return pw->broken ? -1 : 0;
}

int
pipe_writer_add_buffer(struct pipe_writer *pw, struct evbuffer *b)
{
	if (pw->fd == -1 || pw->finishing)
		return -1;
	if (evbuffer_add_buffer(pw->pend, b) == -1)
		pw->broken = 1;
	writer_kick(pw);
	return pw->broken ? -1 : 0;
}

size_t
pipe_writer_backlog(const struct pipe_writer *pw)
{
	return pw->pend != NULL ? evbuffer_get_length(pw->pend) : 0;
}

/* Close once everything is written; end tells when. */
void
pipe_writer_finish(struct pipe_writer *pw)
{
	if (pw->fd == -1)
		return;
	pw->finishing = 1;
	writer_kick(pw);
}

/* At once, whatever is left, and without a callback. */
void
pipe_writer_close(struct pipe_writer *pw)
{
	if (pw->ev != NULL) {
		event_free(pw->ev);
		pw->ev = NULL;
	}
	if (pw->fd != -1) {
		close(pw->fd);
		pw->fd = -1;
	}
	if (pw->pend != NULL) {
		evbuffer_free(pw->pend);
		pw->pend = NULL;
	}
}
