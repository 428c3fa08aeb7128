/*
 * Tar jobs: apid parses no archive itself (DESIGN.md §1).  Each job goes
 * to the archive worker on the channel managerd handed us: its
 * descriptors, one ARCHIVE_FD each, then ARCHIVE_JOB; the worker's
 * ARCHIVE_DONE ends it and done runs, on the loop, exactly once per
 * started job.  A descriptor belongs to its message once queued: when
 * it has gone, apid holds no copy, so the other end of a pipe sees EOF
 * (or EPIPE) the moment the worker's job ends, and closing that other
 * end is how a job is stopped.
 *
 * At most ARCHIVE_JOBS_MAX jobs are in flight; more wait here, in the
 * order they came, holding their descriptors.  When the channel goes
 * (the worker died, or managerd sent a new one) every job sent or
 * waiting fails with EPIPE, from the loop's next turn: done is never
 * called from inside tar_job_start().
 */
#include <sys/types.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "apid.h"
#include "log.h"

#define WORKER_GONE	"the archive worker went away"
#define WORKER_DOWN	"the archive worker is not running"

struct tar_job {
	TAILQ_ENTRY(tar_job)	 entry;
	uint32_t		 id;
	int			 fds[2];	/* ours until queued */
	int			 nfds;
	struct archive_job	 aj;
	void			(*done)(const struct tar_result *, void *);
	void			*arg;
};
TAILQ_HEAD(tar_jobs, tar_job);

static struct {
	struct event_base	*base;
	struct peer		 peer;
	int			 connected;
	struct tar_jobs		 waiting;
	struct tar_jobs		 running;
	struct tar_jobs		 failed;	/* their done on the next turn */
	unsigned int		 nrunning;
	uint32_t		 next_id;
	struct event		*fail_ev;
} w;

static void
job_free(struct tar_job *job)
{
	int	 i;

	for (i = 0; i < job->nfds; i++)
		if (job->fds[i] != -1)
			close(job->fds[i]);
	archive_job_free(&job->aj);
	free(job);
}

static void
fail_cb(evutil_socket_t fd, short events, void *arg)
{
	struct tar_jobs		 jobs;
	struct tar_job		*job;
	struct tar_result	 res;
	char			 text[] = WORKER_GONE;

	/* done may start jobs: take the list first. */
	TAILQ_INIT(&jobs);
	TAILQ_CONCAT(&jobs, &w.failed, entry);
	while ((job = TAILQ_FIRST(&jobs)) != NULL) {
		TAILQ_REMOVE(&jobs, job, entry);
		res.errnum = EPIPE;
		res.bytes = 0;
		res.message = text;
		job->done(&res, job->arg);
		job_free(job);
	}
}

/* The channel is gone: every job on it fails. */
static void
worker_drop(const char *why)
{
	if (!w.connected)
		return;
	log_warnx("archive worker: %s", why);
	peer_stop(&w.peer);
	close(w.peer.ibuf.sock);
	w.connected = 0;
	w.nrunning = 0;
	TAILQ_CONCAT(&w.failed, &w.running, entry);
	TAILQ_CONCAT(&w.failed, &w.waiting, entry);
	event_active(w.fail_ev, EV_TIMEOUT, 1);
}

static void
worker_closed(struct peer *p)
{
	worker_drop("it closed its channel");
}

/* Queue the job's messages; -1 if the channel cannot take them. */
static int
job_send(struct tar_job *job)
{
	struct msgw	 m;
	int		 i;

	for (i = 0; i < job->nfds; i++) {
		if (peer_send(&w.peer, MSG_ARCHIVE_FD, job->id, job->fds[i],
		    NULL) == -1) {
			job->fds[i] = -1;	/* closed by peer_send */
			return -1;
		}
		job->fds[i] = -1;
	}
	msgw_init(&m);
	msg_put_archive_job(&m, &job->aj);
	return peer_send(&w.peer, MSG_ARCHIVE_JOB, job->id, -1, &m);
}

/* Send what may go now. */
static void
jobs_pump(void)
{
	struct tar_job	*job;

	while (w.connected && w.nrunning < ARCHIVE_JOBS_MAX &&
	    (job = TAILQ_FIRST(&w.waiting)) != NULL) {
		TAILQ_REMOVE(&w.waiting, job, entry);
		TAILQ_INSERT_TAIL(&w.running, job, entry);
		w.nrunning++;
		if (job_send(job) == -1) {
			worker_drop("cannot queue a job for it");
			return;
		}
	}
}

static void
worker_done(struct peer *p, struct imsg *imsg)
{
	struct tar_result	 res;
	struct tar_job		*job;

	if (imsg->fd != -1 || msg_get_tar_result(imsg, &res) == -1)
		peer_bad_message(p, imsg, "malformed result");
	TAILQ_FOREACH(job, &w.running, entry)
		if (job->id == imsg->hdr.peerid)
			break;
	if (job == NULL)
		peer_bad_message(p, imsg, "the result of no job");
	TAILQ_REMOVE(&w.running, job, entry);
	w.nrunning--;
	job->done(&res, job->arg);
	tar_result_free(&res);
	job_free(job);
	jobs_pump();
}

static void
worker_dispatch(struct peer *p, struct imsg *imsg)
{
	if (imsg->hdr.type != MSG_ARCHIVE_DONE)
		peer_bad_message(p, imsg, "not for apid");
	worker_done(p, imsg);
}

int
tar_jobs_init(struct event_base *base)
{
	w.base = base;
	w.next_id = 1;
	TAILQ_INIT(&w.waiting);
	TAILQ_INIT(&w.running);
	TAILQ_INIT(&w.failed);
	if ((w.fail_ev = event_new(base, -1, 0, fail_cb, NULL)) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

void
tar_jobs_channel(struct peer *p, struct imsg *imsg)
{
	if (imsg->len == 0 && imsg->fd_lost) {
		/* Out of descriptors: archive jobs wait for the next one. */
		log_warnx("the channel to the archive worker came without its "
		    "descriptor; asking for another");
		if (peer_send(p, MSG_CHANNEL_AGAIN, 0, -1, NULL) == -1)
			fatalx("cannot ask managerd for a channel");
		return;
	}
	if (imsg->len != 0 || imsg->fd == -1)
		peer_bad_message(p, imsg, "needs a descriptor and nothing else");
	worker_drop("a new channel replaces the old one");
	peer_init(&w.peer, w.base, imsg_take_fd(imsg), "archive-worker",
	    worker_dispatch, worker_closed, NULL);
	w.connected = 1;
}

/* The descriptors of a spec, in the worker's order; how many. */
static int
spec_fds(const struct tar_job_spec *s, int fds[2])
{
	switch (s->kind) {
	case TAR_JOB_FIRST_FILE:
	case TAR_JOB_SNAPSHOT:
	case TAR_JOB_SNAPSHOT_COPY:
		fds[0] = s->in_fd;
		fds[1] = s->out_fd;
		return 2;
	case TAR_JOB_CHECK:
		fds[0] = s->in_fd;
		fds[1] = -1;
		return 1;
	case TAR_JOB_SPOOL:
	case TAR_JOB_UPLOAD:
		fds[0] = s->fds[0];
		fds[1] = s->fds[1];
		return 2;
	default:
		fds[0] = fds[1] = -1;
		return 0;
	}
}

/*
 * An upload as FILE_WRITE_READY describes it: the file, and one dir per
 * parent of its name, with the modes and mtimes managerd found.
 */
static int
upload_job(struct archive_job *aj, const struct tar_job_spec *s)
{
	const struct file_write_ready	*fw = s->upload;
	uint32_t			 i;

	if (fw == NULL || fw->name == NULL ||
	    fw->ndirs > FILE_WRITE_MAX_DIRS)
		return 0;	/* no name: archive_job_valid() refuses it */
	if ((aj->name = strdup(fw->name)) == NULL)
		return -1;
	aj->size = s->size;
	aj->uid = fw->uid;
	aj->gid = fw->gid;
	aj->mode = fw->mode;
	aj->mtime = fw->mtime;
	if ((aj->ndirs = fw->ndirs) == 0)
		return 0;
	if ((aj->dirs = calloc(aj->ndirs, sizeof(*aj->dirs))) == NULL)
		return -1;
	for (i = 0; i < aj->ndirs; i++) {
		aj->dirs[i].mode = fw->dirs[i].mode;
		aj->dirs[i].mtime = fw->dirs[i].mtime;
		aj->dirs[i].mtime_nsec = fw->dirs[i].mtime_nsec;
	}
	return 0;
}

/* The job as the worker gets it; -1 (errno) if it may not have it. */
static int
job_make(struct tar_job *job, const struct tar_job_spec *s)
{
	job->aj.kind = (uint32_t)s->kind;
	job->aj.max_bytes = s->max_bytes;
	if (s->kind == TAR_JOB_UPLOAD && upload_job(&job->aj, s) == -1) {
		errno = ENOMEM;
		return -1;
	}
	if (s->kind == TAR_JOB_FIRST_FILE && s->member != NULL &&
	    (job->aj.name = strdup(s->member)) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	if (s->done == NULL || !archive_job_valid(&job->aj) ||
	    job->nfds != archive_job_nfds(job->aj.kind) ||
	    job->fds[0] == -1 || (job->nfds > 1 && job->fds[1] == -1)) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

int
tar_job_start(const struct tar_job_spec *spec)
{
	struct tar_job	*job;
	int		 fds[2], nfds, saved, i;

	nfds = spec_fds(spec, fds);
	if ((job = calloc(1, sizeof(*job))) == NULL) {
		saved = errno;
		for (i = 0; i < nfds; i++)
			if (fds[i] != -1)
				close(fds[i]);
		errno = saved;
		return -1;
	}
	job->nfds = nfds;
	memcpy(job->fds, fds, sizeof(fds));
	if (job_make(job, spec) == -1 || !w.connected) {
		saved = w.connected ? errno : ENXIO;
		if (!w.connected)
			log_warnx("tar job: %s", WORKER_DOWN);
		job_free(job);
		errno = saved;
		return -1;
	}
	job->done = spec->done;
	job->arg = spec->arg;
	job->id = w.next_id++;
	if (w.next_id == 0)
		w.next_id = 1;
	TAILQ_INSERT_TAIL(&w.waiting, job, entry);
	jobs_pump();
	return 0;
}
