/*
 * FIRST_FILE (API.md §4.9): Docker's tar of one path holds the file a
 * download asked for (managerd made sure it is a regular file of at
 * most max_bytes); its bytes go to the pipe apid forwards to the client.
 * With a name, the tar is of the file's directory and the file is the
 * member of exactly that name: Docker leaves a file whose name is not
 * UTF-8 out of the tar of the file alone, but not out of its parent's.
 */
#include <sys/types.h>

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "worker.h"

#define COPY_BUF	(64 * 1024)
/* What Docker's tar may still hold after its file: padding, the end. */
#define DRAIN_MAX	(1024 * 1024)

/* Read what follows, so the writer is not told EPIPE for a good one. */
static void
drain(int fd)
{
	char	 buf[8192];
	size_t	 total = 0;
	ssize_t	 n;

	while (total < DRAIN_MAX) {
		n = read(fd, buf, sizeof(buf));
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		total += (size_t)n;
	}
}

static int
copy_file(struct tar_reader *r, int out, struct job_result *res)
{
	char	 buf[COPY_BUF];
	ssize_t	 n;

	while ((n = tar_data(r, buf, sizeof(buf))) > 0) {
		if (write_all(out, buf, (size_t)n) == -1)
			return job_fail(res, errno, "extracting the file: %s",
			    strerror(errno));
		res->bytes += (uint64_t)n;
	}
	if (n == -1)
		return job_fail(res, errno, "extracting the file: %s",
		    tar_error(r));
	return 0;
}

int
job_first_file(const struct archive_job *j, const int fds[2],
    struct job_result *res)
{
	struct tar_reader	 r;
	struct tar_member	*m;
	int			 rc, rv = -1;

	if (tar_reader_init(&r, fds[0]) == -1)
		return job_fail(res, ENOMEM, "out of memory");
	while ((rc = tar_next(&r, &m)) == 1 && (m->type != TAR_REG ||
	    (j->name != NULL && strcmp(m->name, j->name) != 0)))
		;
	if (rc == 0)
		job_fail(res, ENOENT, "not a regular file");
	else if (rc == -1)
		job_fail(res, errno, "extracting the file: %s", tar_error(&r));
	else if (m->size > j->max_bytes)
		job_fail(res, EFBIG, "larger than the limit");
	else if ((rv = copy_file(&r, fds[1], res)) == 0)
		drain(fds[0]);
	tar_reader_free(&r);
	return rv;
}
