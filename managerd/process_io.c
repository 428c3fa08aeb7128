/*
 * The bytes of a process (process.h): its output from dockerd-proxy's
 * socket into the ring, from the ring into each reader's pipe, and stdin
 * from apid's pipes into the socket.
 *
 * The socket is always read: the ring takes everything and drops the
 * oldest, so the process never waits for managerd, and managerd never
 * holds more than the ring.  Each reader has at most READER_BUFFER bytes
 * queued for its pipe and a position in the output; when the ring has
 * dropped what it had not read yet, it gets a gap event and goes on
 * from the oldest kept byte.  Stdin is the one flow that pushes back:
 * at most STDIN_BUFFER bytes wait for the socket, and apid's pipes are
 * read only while there is room, so a client writing faster than the
 * process reads is slowed down through TCP.
 *
 * The frames from the proxy are checked as a peer's message would be: a
 * stream byte other than stdout or stderr, padding that is not zero, an
 * empty or oversized frame, or a frame cut by the end of the stream is a
 * lie, and the process is lost (its stream can no longer be believed).
 */
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "log.h"
#include "managerd.h"
#include "process.h"

#define FRAME_MAX	(32 * 1024)
#define READ_MAX	(64 * 1024)	/* from the socket per wake-up */
#define READER_BUFFER	(64 * 1024)
#define STDIN_BUFFER	(64 * 1024)
/* Stdin pipes open on one process at once (requests, attachments). */
#define STDIN_PIPES_MAX	16

static void	stdin_flush(struct process *);
static void	stdin_pause(struct process *);
static void	stdin_resume(struct process *);

/* --- output from the proxy ------------------------------------------------ */

/*
 * The stream cannot be believed any more.  Before the start (the proxy
 * writes nothing before STARTED) the start fails; after it, the process
 * runs on in Docker, lost.
 */
static void
output_lost(struct process *p, const char *why)
{
	log_warnx("process %s: %s; its output is lost from here", p->rec.id,
	    why);
	process_io_close(p);
	if (p->phase == PHASE_STARTING) {
		process_start_failed(p, ERR_BACKEND, why);
		return;
	}
	p->eof = 1;
	p->exit_seen = 1;
	process_end(p, END_LOST);
}

static int
frame_head(struct process *p)
{
	const unsigned char	*h = p->fhead;

	p->fstream = h[0];
	p->fleft = (uint32_t)h[4] << 24 | (uint32_t)h[5] << 16 |
	    (uint32_t)h[6] << 8 | h[7];
	p->flen = 0;
	if ((p->fstream != 1 && p->fstream != 2) || h[1] | h[2] | h[3] ||
	    p->fleft == 0 || p->fleft > FRAME_MAX)
		return -1;
	return 0;
}

/* One frame whole: into the ring, and the readers woken. */
static void
frame_done(struct process *p)
{
	int	 stream = p->fstream == 1 ? PEV_STDOUT : PEV_STDERR;

	p->fhead_len = 0;
	if (ring_append(&p->ring, stream, p->fbuf, p->flen) == -1)
		log_warnx("process %s: out of memory: %u bytes of output "
		    "dropped", p->rec.id, p->flen);
	process_readers_kick(p);
}

static int
frames_feed(struct process *p, const unsigned char *buf, size_t n)
{
	size_t	 take;

	while (n > 0) {
		if (p->fhead_len < sizeof(p->fhead)) {
			take = sizeof(p->fhead) - p->fhead_len;
			take = take < n ? take : n;
			memcpy(p->fhead + p->fhead_len, buf, take);
			p->fhead_len += take;
			buf += take;
			n -= take;
			if (p->fhead_len < sizeof(p->fhead))
				break;
			if (frame_head(p) == -1)
				return -1;
		}
		take = p->fleft < n ? p->fleft : n;
		memcpy(p->fbuf + p->flen, buf, take);
		p->flen += (uint32_t)take;
		p->fleft -= (uint32_t)take;
		buf += take;
		n -= take;
		if (p->fleft == 0)
			frame_done(p);
	}
	return 0;
}

static void
output_eof(struct process *p)
{
	if (p->fhead_len != 0) {
		output_lost(p, "the stream ended inside a frame");
		return;
	}
	if (p->ev_read != NULL)
		event_del(p->ev_read);
	p->eof = 1;
	process_maybe_ended(p);
}

/* At most READ_MAX bytes: 1 if more may wait, 0 once it is all read. */
static int
sock_read_some(struct process *p)
{
	unsigned char	 buf[8192];
	size_t		 total = 0;
	ssize_t		 n;

	while (total < READ_MAX) {
		if ((n = read(p->sock, buf, sizeof(buf))) == -1) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				output_lost(p, strerror(errno));
			return 0;
		}
		if (n == 0) {
			output_eof(p);
			return 0;
		}
		total += (size_t)n;
		if (frames_feed(p, buf, (size_t)n) == -1) {
			output_lost(p, "malformed output frames");
			return 0;
		}
	}
	return 1;
}

static void
sock_readable(evutil_socket_t fd, short what, void *arg)
{
	(void)sock_read_some(arg);
}

/* All the socket holds: the proxy died after writing it. */
void
process_io_drain(struct process *p)
{
	while (p->sock != -1 && !p->eof && sock_read_some(p))
		continue;
}

static void
sock_writable(evutil_socket_t fd, short what, void *arg)
{
	stdin_flush(arg);
}

int
process_io_start(struct process *p, int sock)
{
	p->sock = sock;
	if ((p->fbuf = malloc(FRAME_MAX)) == NULL ||
	    (p->in = evbuffer_new()) == NULL ||
	    (p->ev_read = event_new(env->base, sock, EV_READ | EV_PERSIST,
	    sock_readable, p)) == NULL ||
	    (p->ev_write = event_new(env->base, sock, EV_WRITE,
	    sock_writable, p)) == NULL ||
	    event_add(p->ev_read, NULL) == -1) {
		process_io_close(p);
		return -1;
	}
	return 0;
}

void
process_io_close(struct process *p)
{
	if (p->ev_read != NULL)
		event_free(p->ev_read);
	if (p->ev_write != NULL)
		event_free(p->ev_write);
	p->ev_read = p->ev_write = NULL;
	if (p->in != NULL)
		evbuffer_free(p->in);
	p->in = NULL;
	free(p->fbuf);
	p->fbuf = NULL;
	if (p->sock != -1)
		close(p->sock);
	p->sock = -1;
}

/* apid's pipe, made non-blocking: -1 (closed, answered) if it cannot be. */
static int
pipe_ready(uint32_t apid_id, int fd)
{
	int	 flags;

	if ((flags = fcntl(fd, F_GETFL)) == -1 ||
	    fcntl(fd, F_SETFL, flags | O_NONBLOCK) == -1) {
		apid_error(apid_id, ERR_INTERNAL, "cannot use the pipe: %s",
		    strerror(errno));
		close(fd);
		return -1;
	}
	return 0;
}

/* --- readers ----------------------------------------------------------- */

static void	reader_pump(struct proc_reader *);

static void
reader_free(struct proc_reader *r)
{
	struct process	*p = r->p;

	TAILQ_REMOVE(&p->readers, r, entry);
	if (r->ev != NULL)
		event_free(r->ev);
	if (r->out != NULL)
		evbuffer_free(r->out);
	if (r->fd != -1)
		close(r->fd);
	free(r);
	process_release(p);
}

static void
reader_writable(evutil_socket_t fd, short what, void *arg)
{
	reader_pump(arg);
}

/* The exit event, last: what the process's end was. */
static void
reader_add_exit(struct proc_reader *r)
{
	const struct process_record	*rec = &r->p->rec;
	unsigned char			 ev[PEV_HEADER_LEN + PEV_EXIT_LEN];
	struct pev_exit			 x;
	size_t				 n;

	memset(&x, 0, sizeof(x));
	x.status = rec->status;
	x.has_exit_code = rec->has_exit_code;
	x.exit_code = rec->exit_code;
	x.ended_at_ms = rec->has_ended_at ? (uint64_t)(rec->ended_at * 1e3) :
	    0;
	n = pev_exit_event(ev, r->p->ring.total, &x);
	if (evbuffer_add(r->out, ev, n) == -1)
		fatalx("%s: out of memory", __func__);
	r->ending = 1;
}

/* The next event from the ring into out: 0 if there was none. */
static int
reader_add_next(struct proc_reader *r)
{
	const struct ring	*ring = &r->p->ring;
	struct ring_chunk	*c;
	unsigned char		 head[PEV_HEADER_LEN];
	uint32_t		 skip;

	if (r->pos < ring_dropped(ring)) {
		pev_header(head, PEV_GAP, 0, ring_dropped(ring) - r->pos);
		r->pos = ring_dropped(ring);
		if (evbuffer_add(r->out, head, sizeof(head)) == -1)
			fatalx("%s: out of memory", __func__);
		return 1;
	}
	if ((c = ring_next(ring, r->pos, &skip)) == NULL)
		return 0;
	pev_header(head, (enum pev_type)c->stream, c->len - skip, c->seq);
	if (evbuffer_add(r->out, head, sizeof(head)) == -1 ||
	    evbuffer_add(r->out, c->data + skip, c->len - skip) == -1)
		fatalx("%s: out of memory", __func__);
	r->pos = c->seq;
	return 1;
}

static void
reader_fill(struct proc_reader *r)
{
	while (!r->ending && evbuffer_get_length(r->out) < READER_BUFFER) {
		if (reader_add_next(r))
			continue;
		if (r->p->phase == PHASE_ENDED)
			reader_add_exit(r);
		else if (!r->follow)
			r->ending = 1;
		break;
	}
}

/*
 * Fill, write what the pipe takes, and wait for it to drain or for
 * more output; a reader that went away, or got everything, is freed.
 */
static void
reader_pump(struct proc_reader *r)
{
	int	 n;

	for (;;) {
		reader_fill(r);
		if (evbuffer_get_length(r->out) == 0) {
			if (r->ending)
				reader_free(r);
			return;
		}
		n = evbuffer_write(r->out, r->fd);
		if (n > 0 || (n == -1 && errno == EINTR))
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			event_add(r->ev, NULL);
			return;
		}
		if (n == -1 && errno != EPIPE)
			log_warn("process %s: writing to a reader",
			    r->p->rec.id);
		reader_free(r);
		return;
	}
}

void
process_readers_kick(struct process *p)
{
	struct proc_reader	*r, *next;

	TAILQ_FOREACH_SAFE(r, &p->readers, entry, next)
		if (!event_pending(r->ev, EV_WRITE, NULL))
			reader_pump(r);
}

/*
 * The process is forgotten: its readers are cut off (their pipes end
 * without an exit event), so that a reader apid no longer drains cannot
 * keep a deleted process and its ring in memory.
 */
void
process_readers_cut(struct process *p)
{
	struct proc_reader	*r;

	while ((r = TAILQ_FIRST(&p->readers)) != NULL)
		reader_free(r);
}

void
process_reader_add(uint32_t apid_id, struct process *p, uint64_t after,
    int follow, int fd)
{
	struct proc_reader	*r;

	if (pipe_ready(apid_id, fd) == -1)
		return;
	if (after > p->ring.total) {
		close(fd);
		apid_error(apid_id, ERR_INVALID_REQUEST, "after must be at "
		    "most output_bytes (%llu)",
		    (unsigned long long)p->ring.total);
		return;
	}
	if ((r = calloc(1, sizeof(*r))) == NULL ||
	    (r->out = evbuffer_new()) == NULL ||
	    (r->ev = event_new(env->base, fd, EV_WRITE, reader_writable, r)) ==
	    NULL) {
		if (r != NULL && r->out != NULL)
			evbuffer_free(r->out);
		free(r);
		close(fd);
		apid_error(apid_id, ERR_INTERNAL, "out of memory");
		return;
	}
	r->p = p;
	r->fd = fd;
	r->pos = after;
	r->follow = follow;
	process_hold(p);
	TAILQ_INSERT_TAIL(&p->readers, r, entry);
	apid_reply(apid_id, MSG_PROCESS_OUTPUT_STARTED, NULL);
	reader_pump(r);
}

/* --- stdin ---------------------------------------------------------------- */

static void
stdin_free(struct proc_stdin *s)
{
	struct process	*p = s->p;

	TAILQ_REMOVE(&p->stdins, s, entry);
	p->nstdins--;
	if (s->ev != NULL)
		event_free(s->ev);
	if (s->fd != -1)
		close(s->fd);
	free(s);
	process_release(p);
}

/* Every pipe whose bytes are all in the socket: answered. */
static void
stdin_answer(struct process *p)
{
	struct proc_stdin	*s, *next;

	TAILQ_FOREACH_SAFE(s, &p->stdins, entry, next) {
		if (!s->eof || s->end > p->in_written)
			continue;
		if (s->close_at_end && !p->in_closed)
			continue;	/* answered once stdin is closed */
		apid_reply(s->apid_id, MSG_OK, NULL);
		stdin_free(s);
	}
}

static void
stdin_close_now(struct process *p)
{
	p->in_closed = 1;
	if (p->sock != -1 && shutdown(p->sock, SHUT_WR) == -1)
		log_warn("process %s: closing its stdin", p->rec.id);
}

static void
stdin_flush(struct process *p)
{
	int	 n;

	while (p->in != NULL && evbuffer_get_length(p->in) > 0) {
		n = evbuffer_write(p->in, p->sock);
		if (n > 0) {
			p->in_written += (uint64_t)n;
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			event_add(p->ev_write, NULL);
			return;
		}
		log_warn("process %s: writing its stdin", p->rec.id);
		process_stdins_fail(p, "its stdin is gone");
		return;
	}
	if (p->in_closing && !p->in_closed)
		stdin_close_now(p);
	stdin_answer(p);
	stdin_resume(p);
}

/*
 * read(2) into our own buffer, not evbuffer_read: that asks the kernel
 * how much is waiting (ioctl FIONREAD), which managerd's filter forbids.
 */
static void
stdin_readable(evutil_socket_t fd, short what, void *arg)
{
	struct proc_stdin	*s = arg;
	struct process		*p = s->p;
	unsigned char		 buf[16384];
	ssize_t			 n;

	n = read(fd, buf, sizeof(buf));
	if (n == -1 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n > 0) {
		if (evbuffer_add(p->in, buf, (size_t)n) == -1)
			fatalx("%s: out of memory", __func__);
		p->in_read += (uint64_t)n;
		if (evbuffer_get_length(p->in) >= STDIN_BUFFER)
			stdin_pause(p);
		stdin_flush(p);
		return;
	}
	/* Its end of file (or a pipe that broke: apid went). */
	event_del(s->ev);
	s->eof = 1;
	s->end = p->in_read;
	if (s->close_at_end)
		p->in_closing = 1;
	stdin_flush(p);
}

/* Full: no pipe is read until the socket took some. */
static void
stdin_pause(struct process *p)
{
	struct proc_stdin	*s;

	TAILQ_FOREACH(s, &p->stdins, entry)
		if (s->ev != NULL)
			event_del(s->ev);
}

/* Room again: read on from every pipe not at its end. */
static void
stdin_resume(struct process *p)
{
	struct proc_stdin	*s;

	if (p->in == NULL || evbuffer_get_length(p->in) >= STDIN_BUFFER)
		return;
	TAILQ_FOREACH(s, &p->stdins, entry)
		if (!s->eof && s->ev != NULL)
			event_add(s->ev, NULL);
}

void
process_stdins_fail(struct process *p, const char *why)
{
	struct proc_stdin	*s;

	while ((s = TAILQ_FIRST(&p->stdins)) != NULL) {
		apid_error(s->apid_id, ERR_CONFLICT, "process %s: %s",
		    p->rec.id, why);
		stdin_free(s);
	}
	/* What was dropped is not owed to the next pipe. */
	if (p->in != NULL)
		evbuffer_drain(p->in, evbuffer_get_length(p->in));
	p->in_read = p->in_written;
}

void
process_stdin_add(uint32_t apid_id, struct process *p, int close_at_end,
    int fd)
{
	struct proc_stdin	*s;

	if (pipe_ready(apid_id, fd) == -1)
		return;
	if (!p->rec.stdin_open || p->in_closing || p->in_closed ||
	    p->phase != PHASE_RUNNING || p->sock == -1) {
		close(fd);
		apid_error(apid_id, ERR_CONFLICT, "process %s %s", p->rec.id,
		    !p->rec.stdin_open ? "was started without stdin" :
		    p->phase != PHASE_RUNNING ? "is not running" :
		    "has its stdin closed");
		return;
	}
	if (p->nstdins >= STDIN_PIPES_MAX) {
		close(fd);
		apid_error(apid_id, ERR_LIMIT_EXCEEDED, "process %s already has "
		    "%d writers of its stdin", p->rec.id, STDIN_PIPES_MAX);
		return;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL ||
	    (s->ev = event_new(env->base, fd, EV_READ | EV_PERSIST,
	    stdin_readable, s)) == NULL) {
		free(s);
		close(fd);
		apid_error(apid_id, ERR_INTERNAL, "out of memory");
		return;
	}
	s->p = p;
	s->apid_id = apid_id;
	s->fd = fd;
	s->close_at_end = close_at_end;
	process_hold(p);
	TAILQ_INSERT_TAIL(&p->stdins, s, entry);
	p->nstdins++;
	stdin_resume(p);
}
