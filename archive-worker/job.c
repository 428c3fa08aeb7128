/*
 * A job's own process, forked by the zygote: it keeps the job's
 * descriptors and its result pipe and closes everything else (the
 * channels, the event loop, other jobs' pipes), loads the job filter on
 * top of the zygote's (no fork, no socket, no open, no sendmsg: it can
 * only read and write what it was given), does the job with blocking
 * I/O and writes a tar_result into the pipe.  Whatever a hostile
 * archive makes it do, it can reach nothing but its own descriptors.
 */
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "worker.h"

#ifdef ARCHIVE_WORKER_TESTS
void	(*job_test_hook)(const struct archive_job *);
#endif

int
job_run(const struct archive_job *j, const int fds[2],
    struct job_result *res)
{
	memset(res, 0, sizeof(*res));
	switch (j->kind) {
	case ARCHIVE_JOB_FIRST_FILE:
		return job_first_file(j, fds, res);
	case ARCHIVE_JOB_SNAPSHOT:
		return job_snapshot(j, fds, res);
	case ARCHIVE_JOB_SNAPSHOT_COPY:
		return job_snapshot_copy(j, fds, res);
	case ARCHIVE_JOB_CHECK:
		return job_check(j, fds, res);
	case ARCHIVE_JOB_SPOOL:
		return job_spool(j, fds, res);
	case ARCHIVE_JOB_UPLOAD:
		return job_upload(j, fds, res);
	default:
		return job_fail(res, EINVAL, "unknown archive job");
	}
}

static int
fd_cmp(const void *a, const void *b)
{
	int	 x = *(const int *)a, y = *(const int *)b;

	return x < y ? -1 : x > y;
}

/* Close every descriptor from 3 up but the ones in keep (-1: none). */
static int
close_others(const int keep[3])
{
	unsigned int	 next = 3;
	int		 k[3];
	size_t		 i;

	memcpy(k, keep, sizeof(k));
	qsort(k, 3, sizeof(k[0]), fd_cmp);
	for (i = 0; i < 3; i++) {
		if (k[i] < (int)next)
			continue;
		if ((unsigned int)k[i] > next &&
		    close_range(next, (unsigned int)k[i] - 1, 0) == -1)
			return -1;
		next = (unsigned int)k[i] + 1;
	}
	return close_range(next, ~0U, 0);
}

/* The job's reads and writes wait: apid's pipes may be non-blocking. */
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

/* One write, well below PIPE_BUF: the zygote reads it whole or not. */
static void
result_send(int fd, const struct job_result *res)
{
	struct tar_result	 t;
	struct msgw		 w;

	t.errnum = res->errnum;
	t.bytes = res->errnum == 0 ? res->bytes : 0;
	t.message = res->errnum == 0 ? NULL : (char *)(uintptr_t)res->message;
	msgw_init(&w);
	msg_put_tar_result(&w, &t);
	(void)write_all(fd, w.buf, w.len);
}

void
job_child(const struct archive_job *j, const int fds[2], int result_fd,
    enum seccomp_mode mode)
{
	struct job_result	 res;
	const int		 keep[3] = { fds[0], fds[1], result_fd };

	memset(&res, 0, sizeof(res));
	if (close_others(keep) == -1 || set_blocking(fds[0]) == -1 ||
	    set_blocking(fds[1]) == -1) {
		job_fail(&res, errno, "cannot set up the archive job: %s",
		    strerror(errno));
		goto out;
	}
	if (job_seccomp_load(mode) == -1) {
		job_fail(&res, EPERM, "cannot confine the archive job");
		goto out;
	}
#ifdef ARCHIVE_WORKER_TESTS
	if (job_test_hook != NULL)
		job_test_hook(j);
#endif
	(void)job_run(j, fds, &res);
 out:
	result_send(result_fd, &res);
	_exit(0);
}
