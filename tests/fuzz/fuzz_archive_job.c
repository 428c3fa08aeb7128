/*
 * The archive worker's reading jobs (archive-worker/job_snapshot.c,
 * job_first_file.c, tar_read.c): a tar stream a sandbox made, as Docker
 * hands it over.  Input: the first byte picks the job (SNAPSHOT, CHECK,
 * FIRST_FILE with or without a member name, and a size limit); the rest
 * is the archive.
 *
 * Whatever the archive, a job ends with 0 or a failure that has an
 * errno and a message.  A snapshot the rewrite made passes CHECK, and
 * the bytes it reports are the bytes it wrote, within the limit; a
 * FIRST_FILE writes exactly the bytes it reports, within the limit.
 */

#include <sys/mman.h>
#include <sys/types.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "worker.h"

static int	 in_fd = -1, out_fd = -1, check_fd = -1;

static int
memfd(const char *name)
{
	int	 fd;

	if ((fd = memfd_create(name, MFD_CLOEXEC)) == -1)
		abort();
	return fd;
}

/* fd emptied and filled with data, read from its start. */
static void
refill(int fd, const void *data, size_t len)
{
	CHECK(ftruncate(fd, 0) == 0);
	CHECK(lseek(fd, 0, SEEK_SET) == 0);
	CHECK(len == 0 || write(fd, data, len) == (ssize_t)len);
	CHECK(lseek(fd, 0, SEEK_SET) == 0);
}

static uint64_t
fd_size(int fd)
{
	off_t	 end = lseek(fd, 0, SEEK_END);

	CHECK(end >= 0);
	return (uint64_t)end;
}

static void
check_result(int rv, const struct job_result *res)
{
	if (rv == 0) {
		CHECK(res->errnum == 0);
		return;
	}
	CHECK(rv == -1);
	CHECK(res->errnum != 0);
	CHECK(res->message[0] != '\0');
	CHECK(memchr(res->message, '\0', sizeof(res->message)) != NULL);
}

/* The snapshot the rewrite wrote is one CHECK takes, whole. */
static void
recheck(uint64_t written)
{
	struct archive_job	 j = { .kind = ARCHIVE_JOB_CHECK };
	struct job_result	 res;
	int			 fds[2] = { out_fd, check_fd }, rv;

	CHECK(lseek(out_fd, 0, SEEK_SET) == 0);
	rv = job_run(&j, fds, &res);
	if (rv != 0)
		harness_fail(__FILE__, __LINE__, res.message);
	CHECK(res.bytes <= written);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	static const uint32_t	 kinds[4] = { ARCHIVE_JOB_SNAPSHOT,
	    ARCHIVE_JOB_CHECK, ARCHIVE_JOB_FIRST_FILE, ARCHIVE_JOB_FIRST_FILE };
	static const uint64_t	 limits[4] = { UINT64_MAX, 4096, 100, 0 };
	struct archive_job	 j;
	struct job_result	 res;
	int			 fds[2], rv;
	uint8_t			 sel;

	if (len < 1)
		return 0;
	if (in_fd == -1) {
		in_fd = memfd("in");
		out_fd = memfd("out");
		check_fd = memfd("check");
	}
	sel = data[0];
	refill(in_fd, data + 1, len - 1);
	refill(out_fd, NULL, 0);
	memset(&j, 0, sizeof(j));
	j.kind = kinds[sel & 3];
	j.max_bytes = limits[(sel >> 2) & 3];
	if ((sel & 3) == 3)
		j.name = "workspace/a";
	fds[0] = in_fd;
	fds[1] = out_fd;
	rv = job_run(&j, fds, &res);
	check_result(rv, &res);
	if (rv == 0 && j.kind != ARCHIVE_JOB_CHECK) {
		CHECK(res.bytes == fd_size(out_fd));
		CHECK(res.bytes <= j.max_bytes);
	}
	if (rv == 0 && j.kind == ARCHIVE_JOB_SNAPSHOT)
		recheck(res.bytes);
	return 0;
}
