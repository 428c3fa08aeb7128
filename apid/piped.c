/*
 * A piped request: a call to managerd whose bytes come back through a
 * pipe read on the loop (an exec's frames, a listing's output, a
 * downloaded file), and sometimes an archive job on the way.  Each part
 * (the pipe, managerd's last message, the job) ends in its own time and
 * order, and the client may leave at any moment; the request is over,
 * and its route's finish callback runs exactly once, when every part has
 * ended.  One object for what exec, listing and download each did alone.
 *
 * Who frees managerd's call: when managerd's last message is also the
 * last part, the reply callback returns APID_REPLY_DONE and the
 * dispatcher frees it; when the pipe or the job ends last, piped does.
 */
#include <sys/queue.h>

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "apid.h"
#include "log.h"

static int
piped_data(void *arg, const unsigned char *buf, size_t n)
{
	struct piped	*pd = arg;

	return pd->ops->data(pd->arg, buf, n);
}

static void
piped_pipe_end(void *arg)
{
	(void)piped_done(arg, PIPED_PIPE);
}

void
piped_init(struct piped *pd, struct http_request *req, int paced,
    unsigned int parts, const struct piped_ops *ops, void *arg)
{
	pd->ar = NULL;
	pd->req = req;
	pd->pending = parts | PIPED_BACKEND;
	pd->gone = 0;
	pd->ops = ops;
	pd->arg = arg;
	pipe_reader_init(&pd->pipe, ops->what, paced ? req : NULL, piped_data,
	    piped_pipe_end, pd);
}

/*
 * Our end of a new pipe, read on the loop; returns the other (write)
 * end for managerd, or -1.  bulk: 1 MiB of room (file contents).
 */
int
piped_pipe(struct piped *pd, int bulk)
{
	int	 fds[2];

	if ((bulk ? bulk_pipe(fds, 0) : pipe2(fds, O_CLOEXEC)) == -1) {
		log_warn("%s: pipe", pd->ops->what);
		return -1;
	}
	if (fcntl(fds[0], F_SETFL, O_NONBLOCK) == -1 ||
	    pipe_reader_open(&pd->pipe, fds[0]) == -1) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	return fds[1];
}

static void
piped_gone(struct apid_request *ar)
{
	struct piped	*pd = ar->arg;

	pd->gone = 1;
	if (pd->ops->gone != NULL)
		pd->ops->gone(pd->arg);
}

int
piped_send(struct piped *pd, uint32_t type, struct msgw *w, int fd,
    apid_reply_cb reply)
{
	if ((pd->ar = apid_request_send(pd->req, type, w, fd, reply,
	    pd)) == NULL)
		return -1;
	pd->ar->gone = piped_gone;
	return 0;
}

/* The route's state from a reply callback's request. */
void *
piped_arg(struct apid_request *ar)
{
	return ((struct piped *)ar->arg)->arg;
}

/* Start (or go on) reading; a pipe that cannot be watched has ended. */
void
piped_resume(struct piped *pd)
{
	if (!pd->gone && pipe_reader_resume(&pd->pipe) == -1)
		(void)piped_done(pd, PIPED_PIPE);
}

/*
 * The pipe is closed (the client left, an error): what came is all
 * that will come.  Its end is counted as the pipe's part ending.
 */
void
piped_close(struct piped *pd)
{
	pipe_reader_close(&pd->pipe);
	(void)piped_done(pd, PIPED_PIPE);
}

/*
 * A part has ended.  From a reply callback on managerd's last message
 * (part PIPED_BACKEND), return what this returns.
 */
int
piped_done(struct piped *pd, unsigned int part)
{
	int	 backend_last = part == PIPED_BACKEND;

	if ((pd->pending & part) == 0)
		return APID_REPLY_MORE;
	pd->pending &= ~part;
	if (pd->pending != 0)
		return APID_REPLY_MORE;
	pipe_reader_close(&pd->pipe);
	/* managerd's call is ours to free unless its last message ends it. */
	if (!backend_last && pd->ar != NULL)
		apid_request_release(pd->ar);
	pd->ops->finish(pd->arg);
	return APID_REPLY_DONE;
}

/* Whether a part is still to end. */
int
piped_pending(const struct piped *pd, unsigned int part)
{
	return (pd->pending & part) != 0;
}
