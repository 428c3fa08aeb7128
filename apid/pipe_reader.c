/*
 * Reading the pipe a route's bytes come through (an exec's frames, a
 * downloaded file) from the event loop.  A reader tied to a client reads
 * only while that client's output buffer is below HTTP_BACKLOG_HIGH: a
 * slow client fills the pipe, which stops whoever writes into it.  It
 * resumes by itself when the client's output has drained.  The request
 * must outlive the reader's owner or be freed first (a route's last
 * reply comes before it frees its state), since the drain callback
 * points into that state.
 */
#include <sys/queue.h>

#include <errno.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "apid.h"
#include "log.h"

#define PIPE_READ_SIZE		(64 * 1024)
/* Reads per wakeup, so one busy pipe cannot starve the others. */
#define PIPE_READS_PER_EVENT	4

/* One loop, one read at a time: the readers share the buffer. */
static unsigned char	 readbuf[PIPE_READ_SIZE];

static void	pipe_reader_drained(void *);

static void
pipe_reader_cb(evutil_socket_t fd, short events, void *arg)
{
	struct pipe_reader	*pr = arg;
	ssize_t			 n;
	int			 i;

	for (i = 0; i < PIPE_READS_PER_EVENT; i++) {
		/* The owner paused from its data callback. */
		if (!pr->reading)
			return;
		if (pr->client != NULL &&
		    http_request_backlog(pr->client) >= HTTP_BACKLOG_HIGH) {
			event_del(pr->ev);
			pr->reading = 0;
			http_request_on_drained(pr->client, pipe_reader_drained,
			    pr);
			return;
		}
		n = read(fd, readbuf, sizeof(readbuf));
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n == -1) {
			log_warn("%s: read from the pipe", pr->what);
			pr->failed = 1;
		}
		if (n <= 0)
			break;
		if (pr->data(pr->arg, readbuf, (size_t)n) == -1) {
			pr->failed = 1;
			break;
		}
	}
	if (i == PIPE_READS_PER_EVENT)
		return;
	/* EOF, a failing pipe or a refusing owner: the output is over. */
	pipe_reader_close(pr);
	pr->end(pr->arg);
}

void
pipe_reader_init(struct pipe_reader *pr, const char *what,
    struct http_request *client, pipe_data_cb data, void (*end)(void *),
    void *arg)
{
	pr->fd = -1;
	pr->ev = NULL;
	pr->reading = 0;
	pr->failed = 0;
	pr->what = what;
	pr->client = client;
	pr->data = data;
	pr->end = end;
	pr->arg = arg;
}

int
pipe_reader_open(struct pipe_reader *pr, int fd)
{
	if ((pr->ev = event_new(apid->base, fd, EV_READ | EV_PERSIST,
	    pipe_reader_cb, pr)) == NULL) {
		close(fd);
		return -1;
	}
	pr->fd = fd;
	return 0;
}

int
pipe_reader_resume(struct pipe_reader *pr)
{
	if (pr->reading || pr->fd == -1)
		return 0;
	if (event_add(pr->ev, NULL) == -1) {
		log_warnx("%s: cannot watch the pipe", pr->what);
		pr->failed = 1;
		pipe_reader_close(pr);
		return -1;
	}
	pr->reading = 1;
	return 0;
}

/*
 * The client's output drained.  Nothing else would end a reader that
 * cannot be watched again, so that ends it here, as a failing pipe does.
 */
static void
pipe_reader_drained(void *arg)
{
	struct pipe_reader	*pr = arg;

	if (pipe_reader_resume(pr) == -1)
		pr->end(pr->arg);
}

/*
 * Stop reading until pipe_reader_resume(), for an owner that paces the
 * pipe by something other than an HTTP client (an attachment's socket).
 */
void
pipe_reader_pause(struct pipe_reader *pr)
{
	if (pr->reading)
		event_del(pr->ev);
	pr->reading = 0;
}

void
pipe_reader_close(struct pipe_reader *pr)
{
	if (pr->ev != NULL) {
		event_free(pr->ev);
		pr->ev = NULL;
	}
	pr->reading = 0;
	if (pr->fd != -1) {
		close(pr->fd);
		pr->fd = -1;
	}
}
