/*
 * The zygote: apid's jobs, each run in a process of its own (job.c).
 * A job comes as its descriptors (ARCHIVE_FD) and then the job itself
 * (ARCHIVE_JOB), all with one id; the zygote forks, hands the child
 * the descriptors and a result pipe, and keeps nothing of the job's but
 * that pipe.  When SIGCHLD says the child is gone, its result (or how it
 * died) goes back as ARCHIVE_DONE.  apid is the only peer on this
 * channel and it is our own process: a message out of protocol from it
 * is fatal.  The children are not: nothing a child writes into its pipe
 * is trusted further than a job's result, and its death is the job's
 * failure, never the zygote's.
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "log.h"
#include "worker.h"

/* Room for a whole result; more is a malformed one. */
#define RESULT_READ_MAX	2048

struct job {
	TAILQ_ENTRY(job)	 entry;
	uint32_t		 id;
	int			 fds[2];
	int			 nfds;
	pid_t			 pid;		/* 0: its ARCHIVE_JOB is to come */
	int			 result;	/* read end of its result pipe */
	int			 orphan;	/* its channel went: no DONE */
	int			 fd_lost;	/* one came dropped: fails */
};
TAILQ_HEAD(jobs, job);

static struct {
	struct event_base	*base;
	enum seccomp_mode	 mode;
	struct peer		 apid;
	int			 connected;
	struct jobs		 jobs;
	unsigned int		 njobs;		/* of the current channel */
	/*
	 * Jobs of the channel that found no memory for their record: their
	 * descriptors are closed and their ARCHIVE_JOB is answered ENOMEM.
	 * They count in njobs, so ARCHIVE_JOBS_MAX bounds them too.
	 */
	uint32_t		 refused[ARCHIVE_JOBS_MAX];
	unsigned int		 nrefused;
	struct event		*sigchld;
} z;

static void
job_free(struct job *job)
{
	int	 i;

	for (i = 0; i < job->nfds; i++)
		if (job->fds[i] != -1)
			close(job->fds[i]);
	if (job->result != -1)
		close(job->result);
	TAILQ_REMOVE(&z.jobs, job, entry);
	free(job);
}

/* A job of the current channel (orphans may share an id). */
static struct job *
job_find(uint32_t id)
{
	struct job	*job;

	TAILQ_FOREACH(job, &z.jobs, entry)
		if (!job->orphan && job->id == id)
			return job;
	return NULL;
}

static void
job_answer(struct job *job, const struct tar_result *res)
{
	struct msgw	 w;

	if (job->orphan)
		return;
	z.njobs--;
	msgw_init(&w);
	msg_put_tar_result(&w, res);
	if (peer_send(&z.apid, MSG_ARCHIVE_DONE, job->id, -1, &w) == -1)
		fatalx("cannot answer archive job %u", job->id);
}

/* The channel is gone: waiting jobs go, running ones end unheard. */
static void
channel_drop(void)
{
	struct job	*job, *next;

	if (!z.connected)
		return;
	peer_stop(&z.apid);
	close(z.apid.ibuf.sock);
	z.connected = 0;
	z.njobs = 0;
	z.nrefused = 0;
	TAILQ_FOREACH_SAFE(job, &z.jobs, entry, next) {
		if (job->pid == 0)
			job_free(job);
		else
			job->orphan = 1;
	}
}

static void
apid_closed(struct peer *p)
{
	log_info("apid closed its channel");
	channel_drop();
}

/* Start the job's process; 0, or -1 with errno (nothing started). */
static int
job_fork(struct job *job, const struct archive_job *aj)
{
	int	 res[2], fds[2], i;
	pid_t	 pid;

	if (pipe2(res, O_CLOEXEC | O_NONBLOCK) == -1)
		return -1;
	fds[0] = job->fds[0];
	fds[1] = job->nfds > 1 ? job->fds[1] : -1;
	if ((pid = fork()) == -1) {
		close(res[0]);
		close(res[1]);
		return -1;
	}
	if (pid == 0)
		job_child(aj, fds, res[1], z.mode);
	/* The child has them now: its end is the pipes' only other one. */
	close(res[1]);
	for (i = 0; i < job->nfds; i++) {
		close(job->fds[i]);
		job->fds[i] = -1;
	}
	job->pid = pid;
	job->result = res[0];
	return 0;
}

static void
job_start(struct job *job, const struct archive_job *aj)
{
	struct tar_result	 res;
	char			 text[128];

	/* A descriptor dropped on its way in: we are out of them. */
	errno = EMFILE;
	if (!job->fd_lost && job_fork(job, aj) == 0)
		return;
	res.errnum = errno != 0 ? errno : EAGAIN;
	log_warnx("cannot start archive job %u: %s", job->id,
	    strerror(res.errnum));
	res.bytes = 0;
	snprintf(text, sizeof(text), "cannot start the archive job: %s",
	    strerror(res.errnum));
	res.message = text;
	job_answer(job, &res);
	job_free(job);
}

static int
job_refused(uint32_t id)
{
	unsigned int	 i;

	for (i = 0; i < z.nrefused; i++)
		if (z.refused[i] == id)
			return (int)i;
	return -1;
}

/* No memory for a new job's record: it is failed when its JOB comes. */
static void
job_refuse(struct imsg *imsg)
{
	int	 fd;

	log_warnx("archive job %u: out of memory", imsg->hdr.peerid);
	if ((fd = imsg_take_fd(imsg)) != -1)
		close(fd);
	z.refused[z.nrefused++] = imsg->hdr.peerid;
	z.njobs++;
}

/* Its ARCHIVE_JOB: the answer, under the same rule as any other job's. */
static void
job_refused_answer(int i)
{
	static char		 text[] = "cannot start the archive job: "
	    "out of memory";
	struct job		 job;
	struct tar_result	 res;

	memset(&job, 0, sizeof(job));
	job.id = z.refused[i];
	z.refused[i] = z.refused[--z.nrefused];
	memset(&res, 0, sizeof(res));
	res.errnum = ENOMEM;
	res.message = text;
	job_answer(&job, &res);
}

static void
on_fd(struct peer *p, struct imsg *imsg)
{
	struct job	*job;
	int		 fd;

	if (imsg->len != 0 || (imsg->fd == -1 && !imsg->fd_lost))
		peer_bad_message(p, imsg, "needs a descriptor and nothing else");
	if (job_refused(imsg->hdr.peerid) != -1) {
		if ((fd = imsg_take_fd(imsg)) != -1)
			close(fd);
		return;
	}
	if ((job = job_find(imsg->hdr.peerid)) == NULL) {
		if (z.njobs >= ARCHIVE_JOBS_MAX)
			peer_bad_message(p, imsg, "too many jobs at once");
		if ((job = calloc(1, sizeof(*job))) == NULL) {
			job_refuse(imsg);
			return;
		}
		job->id = imsg->hdr.peerid;
		job->fds[0] = job->fds[1] = job->result = -1;
		TAILQ_INSERT_TAIL(&z.jobs, job, entry);
		z.njobs++;
	}
	if (job->pid != 0 || job->nfds == 2)
		peer_bad_message(p, imsg, "one descriptor too many");
	/* Counted all the same: the job's ARCHIVE_JOB answers for it. */
	job->fd_lost |= imsg->fd_lost;
	job->fds[job->nfds++] = imsg_take_fd(imsg);
}

static void
on_job(struct peer *p, struct imsg *imsg)
{
	struct archive_job	 aj;
	struct job		*job;
	int			 i;

	if (imsg->fd != -1 || msg_get_archive_job(imsg, &aj) == -1)
		peer_bad_message(p, imsg, "malformed job");
	if ((i = job_refused(imsg->hdr.peerid)) != -1) {
		job_refused_answer(i);
		archive_job_free(&aj);
		return;
	}
	job = job_find(imsg->hdr.peerid);
	if (job == NULL || job->pid != 0 ||
	    job->nfds != archive_job_nfds(aj.kind))
		peer_bad_message(p, imsg, "not the descriptors of this job");
	job_start(job, &aj);
	archive_job_free(&aj);
}

static void
apid_dispatch(struct peer *p, struct imsg *imsg)
{
	switch (imsg->hdr.type) {
	case MSG_ARCHIVE_FD:
		on_fd(p, imsg);
		break;
	case MSG_ARCHIVE_JOB:
		on_job(p, imsg);
		break;
	default:
		peer_bad_message(p, imsg, "not an archive job message");
	}
}

/* What a child wrote: text from a process that may be hostile. */
static void
result_sanitize(struct tar_result *res)
{
	char	*p;

	if (res->message == NULL)
		return;
	for (p = res->message; *p != '\0'; p++)
		if (*p < 0x20 || *p > 0x7e)
			*p = '?';
}

/* All the child wrote (it is gone, so it is all there); -1 if none. */
static int
result_read(struct job *job, struct tar_result *res)
{
	unsigned char	 buf[RESULT_READ_MAX];
	struct imsg	 imsg;
	size_t		 len = 0;
	ssize_t		 n;

	while (len < sizeof(buf)) {
		n = read(job->result, buf + len, sizeof(buf) - len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	memset(&imsg, 0, sizeof(imsg));
	imsg.fd = -1;
	imsg.data = buf;
	imsg.len = len;
	if (len == 0 || len == sizeof(buf) || msg_get_tar_result(&imsg, res)
	    == -1)
		return -1;
	result_sanitize(res);
	return 0;
}

static void
death_message(int status, char *buf, size_t size)
{
	const char	*abbrev;
	int		 sig;

	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		snprintf(buf, size, "the archive worker's job sent no valid "
		    "result");
		return;
	}
	if (WIFEXITED(status)) {
		snprintf(buf, size, "the archive worker died: exited with "
		    "status %d", WEXITSTATUS(status));
		return;
	}
	sig = WTERMSIG(status);
	if (sig == SIGSYS)
		snprintf(buf, size, "the archive worker died: killed by "
		    "signal %d (SIGSYS: a forbidden system call)", sig);
	else if ((abbrev = sigabbrev_np(sig)) != NULL)
		snprintf(buf, size, "the archive worker died: killed by "
		    "signal %d (SIG%s)", sig, abbrev);
	else
		snprintf(buf, size, "the archive worker died: killed by "
		    "signal %d", sig);
}

static void
job_reaped(struct job *job, int status)
{
	struct tar_result	 res;
	char			 text[128];

	memset(&res, 0, sizeof(res));
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
	    result_read(job, &res) == 0) {
		job_answer(job, &res);
		tar_result_free(&res);
	} else {
		death_message(status, text, sizeof(text));
		if (!job->orphan)
			log_warnx("archive job %u: %s", job->id, text);
		res.errnum = EPIPE;
		res.message = text;
		job_answer(job, &res);
	}
	job_free(job);
}

static void
sigchld_cb(evutil_socket_t sig, short events, void *arg)
{
	struct job	*job;
	pid_t		 pid;
	int		 status;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		TAILQ_FOREACH(job, &z.jobs, entry)
			if (job->pid == pid)
				break;
		if (job != NULL)
			job_reaped(job, status);
	}
}

void
zygote_init(struct event_base *base, enum seccomp_mode mode)
{
	sigset_t	 set;

	z.base = base;
	z.mode = mode;
	TAILQ_INIT(&z.jobs);
	/*
	 * Watched before the filter: it needs sigaction.  A blocked mask
	 * outlives exec, and the spawner blocks SIGCHLD for its own wait:
	 * without this, no job would ever be reaped.
	 */
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_UNBLOCK, &set, NULL) == -1)
		fatal("sigprocmask");
	if ((z.sigchld = evsignal_new(base, SIGCHLD, sigchld_cb, NULL)) ==
	    NULL || evsignal_add(z.sigchld, NULL) == -1)
		fatalx("cannot watch SIGCHLD");
}

/* managerd's messages: only ever a new channel to apid. */
void
zygote_dispatch_parent(struct peer *p, struct imsg *imsg)
{
	if (imsg->hdr.type != MSG_WORKER_APID_CHANNEL)
		peer_bad_message(p, imsg, "not for the archive worker");
	if (imsg->len == 0 && imsg->fd_lost) {
		log_warnx("the channel to apid came without its descriptor; "
		    "asking for another");
		if (peer_send(p, MSG_CHANNEL_AGAIN, 0, -1, NULL) == -1)
			fatalx("cannot ask managerd for a channel");
		return;
	}
	if (imsg->len != 0 || imsg->fd == -1)
		peer_bad_message(p, imsg, "needs a descriptor and nothing else");
	zygote_channel(imsg_take_fd(imsg));
}

void
zygote_channel(int fd)
{
	if (z.connected)
		log_info("a new channel to apid replaces the old one");
	channel_drop();
	peer_init(&z.apid, z.base, fd, "apid", apid_dispatch, apid_closed,
	    NULL);
	z.connected = 1;
}
