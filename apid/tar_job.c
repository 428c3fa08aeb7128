/*
 * Tar jobs: libarchive reads and writes block, and the event loop must
 * not, so each job runs its libarchive call on a detached thread of its
 * own.  The thread touches nothing but its job; when it is done it writes
 * the job's address into one process-wide notification pipe, and the loop
 * reads it back, calls done and frees the job.  So done runs on the loop,
 * exactly once per started job.
 *
 * Between start and done the job is the thread's alone: the loop keeps
 * only the notification pipe.  The one libevent object the thread uses
 * is an upload's body, an evbuffer the job owns outright (its chains
 * moved out of the request, no callbacks, not bound to any event base),
 * which it reads, drains and frees; nothing of the event loop's.
 *
 * The thread closes the job's descriptors as soon as its call returns:
 * the reader of out_fd sees EOF (or the writer of in_fd EPIPE) at once,
 * not after the loop's next turn.  apid ignores SIGPIPE (apid.c), so a
 * reader that went away is an EPIPE that ends the job.
 */
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "apid.h"
#include "log.h"
#include "tar_snapshot.h"

/* libarchive's and our own buffers live on the heap: a small stack. */
#define TAR_JOB_STACK		(256 * 1024)
#define TAR_JOB_ERRLEN		512
/* What a download's tar may still hold after its file: padding. */
#define FIRST_FILE_DRAIN_MAX	(1024 * 1024)
#define NOTIFY_BATCH		64

struct tar_job {
	struct tar_job_spec		 spec;
	struct file_write_ready		 upload;	/* own copy */
	struct tar_result		 result;
	char				 err[TAR_JOB_ERRLEN];
};

static int		 notify_fd[2] = { -1, -1 };
static struct event	*notify_ev;
/* The archive worker's channel: held, until the jobs move there. */
static int		 worker_fd = -1;

static void
job_free(struct tar_job *job)
{
	if (job->spec.in_fd != -1)
		close(job->spec.in_fd);
	if (job->spec.out_fd != -1)
		close(job->spec.out_fd);
	if (job->spec.body != NULL)
		evbuffer_free(job->spec.body);
	free(job->upload.name);
	free(job->result.message);
	free(job);
}

/*
 * Docker's tar of one file ends with padding after the file's data; read
 * it so the writer is not told EPIPE for a download that went well.
 */
static void
drain(int fd)
{
	char	 buf[8192];
	size_t	 total = 0;
	ssize_t	 n;

	while (total < FIRST_FILE_DRAIN_MAX) {
		n = read(fd, buf, sizeof(buf));
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		total += (size_t)n;
	}
}

static void
job_run(struct tar_job *job)
{
	struct tar_job_spec	*s = &job->spec;
	int64_t			 r = -1;
	ssize_t			 n;
	off_t			 off;

	errno = 0;
	switch (s->kind) {
	case TAR_JOB_FIRST_FILE:
		n = tar_first_file(s->in_fd, s->max_bytes, s->out_fd);
		if (n >= 0) {
			r = n;
			drain(s->in_fd);
		} else if (errno == ENOENT)
			strlcpy(job->err, "not a regular file",
			    sizeof(job->err));
		else if (errno == EFBIG)
			strlcpy(job->err, "larger than the limit",
			    sizeof(job->err));
		else
			snprintf(job->err, sizeof(job->err),
			    "extracting the file: %s", strerror(errno));
		break;
	case TAR_JOB_SNAPSHOT:
		r = tar_snapshot_rewrite(s->in_fd, s->out_fd, s->max_bytes,
		    job->err, sizeof(job->err));
		break;
	case TAR_JOB_CHECK:
		if (tar_snapshot_check(s->in_fd, job->err,
		    sizeof(job->err)) == 0) {
			off = lseek(s->in_fd, 0, SEEK_CUR);
			r = off > 0 ? off : 0;
		}
		break;
	case TAR_JOB_UPLOAD:
		r = tar_upload(s->out_fd, &job->upload, s->body, job->err,
		    sizeof(job->err));
		break;
	default:
		errno = EINVAL;
		strlcpy(job->err, "unknown tar job", sizeof(job->err));
		break;
	}
	if (r >= 0) {
		job->result.errnum = 0;
		job->result.bytes = (uint64_t)r;
		return;
	}
	job->result.errnum = errno != 0 ? errno : EIO;
	if (job->err[0] == '\0')
		snprintf(job->err, sizeof(job->err), "%s",
		    strerror(job->result.errnum));
}

static void *
job_thread(void *arg)
{
	struct tar_job	*job = arg;
	ssize_t		 n;

	job_run(job);
	/* Close now: the other ends learn at once that the job is over. */
	if (job->spec.in_fd != -1) {
		close(job->spec.in_fd);
		job->spec.in_fd = -1;
	}
	if (job->spec.out_fd != -1) {
		close(job->spec.out_fd);
		job->spec.out_fd = -1;
	}
	if (job->spec.body != NULL) {
		evbuffer_free(job->spec.body);
		job->spec.body = NULL;
	}
	/* A pointer is less than PIPE_BUF: the write is atomic. */
	do {
		n = write(notify_fd[1], &job, sizeof(job));
	} while (n == -1 && errno == EINTR);
	if (n != sizeof(job))
		fatal("tar job: cannot notify the event loop");
	return NULL;
}

static void
notify_cb(evutil_socket_t fd, short events, void *arg)
{
	struct tar_job	*jobs[NOTIFY_BATCH], *job;
	ssize_t		 n;
	size_t		 i;
	int		 trim = 0;

	n = read(fd, jobs, sizeof(jobs));
	if (n == -1 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0 || n % (ssize_t)sizeof(jobs[0]) != 0)
		fatalx("tar job: broken notification pipe");
	for (i = 0; i < (size_t)n / sizeof(jobs[0]); i++) {
		job = jobs[i];
		if (job->result.errnum != 0 &&
		    (job->result.message = strdup(job->err)) == NULL)
			log_warnx("tar job: out of memory for a message");
		job->spec.done(&job->result, job->spec.arg);
		trim = trim || job->spec.kind == TAR_JOB_UPLOAD;
		job_free(job);
	}
	/*
	 * An upload's body came in small chains that glibc keeps in its
	 * heap once freed: give the pages back, or apid's memory would stay
	 * at its largest upload.
	 */
	if (trim)
		malloc_trim(0);
}

static void *
warm_thread(void *arg)
{
	return arg;
}

/*
 * glibc sets up its thread machinery (signal handlers of its own) on the
 * first pthread_create; do that before the seccomp filter, so that the
 * jobs' threads need only clone and their own bookkeeping.
 */
static int
warm_up_threads(void)
{
	pthread_t	 tid;
	int		 rc;

	if ((rc = pthread_create(&tid, NULL, warm_thread, NULL)) != 0 ||
	    (rc = pthread_join(tid, NULL)) != 0) {
		errno = rc;
		return -1;
	}
	return 0;
}

/* Before the privileges are dropped (apid.c). */
int
tar_jobs_init(struct event_base *base)
{
	int	 flags;

	if (warm_up_threads() == -1)
		return -1;

	if (pipe2(notify_fd, O_CLOEXEC) == -1)
		return -1;
	/* Only the loop's end is non-blocking; threads may wait to write. */
	if ((flags = fcntl(notify_fd[0], F_GETFL)) == -1 ||
	    fcntl(notify_fd[0], F_SETFL, flags | O_NONBLOCK) == -1)
		goto fail;
	if ((notify_ev = event_new(base, notify_fd[0], EV_READ | EV_PERSIST,
	    notify_cb, NULL)) == NULL || event_add(notify_ev, NULL) == -1)
		goto fail;
	return 0;
 fail:
	if (notify_ev != NULL)
		event_free(notify_ev);
	notify_ev = NULL;
	close(notify_fd[0]);
	close(notify_fd[1]);
	notify_fd[0] = notify_fd[1] = -1;
	errno = EIO;
	return -1;
}

void
tar_jobs_channel(struct peer *p, struct imsg *imsg)
{
	if (imsg->len != 0 || imsg->fd == -1)
		peer_bad_message(p, imsg, "needs a descriptor and nothing else");
	if (worker_fd != -1)
		close(worker_fd);
	worker_fd = imsg_take_fd(imsg);
}

/* libarchive waits on its descriptors: they must block. */
static int
set_blocking(int fd)
{
	int	 flags;

	if (fd == -1)
		return 0;
	if ((flags = fcntl(fd, F_GETFL)) == -1)
		return -1;
	if ((flags & O_NONBLOCK) == 0)
		return 0;
	return fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
}

static int
spec_valid(const struct tar_job_spec *s)
{
	if (s->done == NULL)
		return 0;
	switch (s->kind) {
	case TAR_JOB_FIRST_FILE:
	case TAR_JOB_SNAPSHOT:
		return s->in_fd != -1 && s->out_fd != -1 && s->body == NULL;
	case TAR_JOB_CHECK:
		return s->in_fd != -1 && s->out_fd == -1 && s->body == NULL;
	case TAR_JOB_UPLOAD:
		return s->in_fd == -1 && s->out_fd != -1 &&
		    s->body != NULL && s->upload != NULL &&
		    s->upload->name != NULL;
	default:
		return 0;
	}
}

int
tar_job_start(const struct tar_job_spec *spec)
{
	struct tar_job	*job;
	pthread_attr_t	 attr;
	pthread_t	 tid;
	sigset_t	 all, old;
	int		 rc, saved;

	if ((job = calloc(1, sizeof(*job))) == NULL) {
		saved = errno;
		goto fail_spec;
	}
	job->spec = *spec;
	if (notify_ev == NULL || !spec_valid(spec)) {
		saved = notify_ev == NULL ? ENXIO : EINVAL;
		goto fail_job;
	}
	if (spec->kind == TAR_JOB_UPLOAD) {
		job->upload = *spec->upload;
		if ((job->upload.name = strdup(spec->upload->name)) == NULL) {
			saved = ENOMEM;
			goto fail_job;
		}
		/* The caller's may go as soon as we return. */
		job->spec.upload = &job->upload;
	} else
		job->spec.upload = NULL;
	if (set_blocking(spec->in_fd) == -1 ||
	    set_blocking(spec->out_fd) == -1) {
		saved = errno;
		goto fail_job;
	}
	if ((rc = pthread_attr_init(&attr)) != 0) {
		saved = rc;
		goto fail_job;
	}
	(void)pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	(void)pthread_attr_setstacksize(&attr, TAR_JOB_STACK);
	/* Signals are the loop's business, never a job's. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&tid, &attr, job_thread, job);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		saved = rc;
		goto fail_job;
	}
	return 0;
 fail_job:
	job_free(job);
	errno = saved;
	return -1;
 fail_spec:
	if (spec->in_fd != -1)
		close(spec->in_fd);
	if (spec->out_fd != -1)
		close(spec->out_fd);
	if (spec->body != NULL)
		evbuffer_free(spec->body);
	errno = saved;
	return -1;
}
