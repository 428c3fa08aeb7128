/*
 * UPLOAD (API.md §4.10): the tar Docker's archive PUT extracts into
 * /workspace.  One directory member per parent of the name, as managerd
 * described them (so an existing directory keeps its mode and mtime, and
 * Docker refuses to put a directory over anything else), then the file
 * with exactly size bytes of the body: from a bare spool into the tar
 * pipe to the proxy, or from apid's body pipe into a tar spool, which
 * the proxy reads once it is whole.  A body of fewer or more bytes
 * fails the job before the file's last bytes go out, and the tar stops
 * there without its end: Docker then fails the PUT, or apid aborts.
 */
#include <sys/types.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

#include "worker.h"

#define COPY_BUF	(256 * 1024)	/* one block of the tar (tar_write.c) */

static int
add_member(struct tar_out *o, const char *name, mode_t type, uint32_t perm,
    const struct archive_job *j, int64_t mtime, long nsec, int64_t size)
{
	struct archive_entry	*e;
	int			 rc;

	if ((e = archive_entry_new()) == NULL)
		return -1;
	archive_entry_set_pathname(e, name);
	archive_entry_set_filetype(e, type);
	archive_entry_set_perm(e, perm & 07777);
	archive_entry_set_uid(e, j->uid);
	archive_entry_set_gid(e, j->gid);
	archive_entry_set_mtime(e, mtime, nsec);
	archive_entry_set_size(e, size);
	rc = archive_write_header(o->a, e);
	archive_entry_free(e);
	return rc < ARCHIVE_WARN ? -1 : 0;
}

/* "a/", "a/b/" for "a/b/f.txt", each with its dir entry. */
static int
add_parents(struct tar_out *o, const struct archive_job *j)
{
	const char	*slash = j->name;
	char		*dir;
	uint32_t	 i;
	int		 rc;

	for (i = 0; i < j->ndirs; i++) {
		if ((slash = strchr(slash, '/')) == NULL)
			return -1;	/* archive_job_valid() said there is */
		if ((dir = strndup(j->name, (size_t)(++slash - j->name))) ==
		    NULL)
			return -1;
		rc = add_member(o, dir, AE_IFDIR, j->dirs[i].mode, j,
		    j->dirs[i].mtime, (long)j->dirs[i].mtime_nsec, 0);
		free(dir);
		if (rc == -1)
			return -1;
	}
	return 0;
}

static ssize_t
read_some(int fd, void *buf, size_t len)
{
	ssize_t	 n;

	do {
		n = read(fd, buf, len);
	} while (n == -1 && errno == EINTR);
	return n;
}

/* 0 if fd is at its end, else -1 (more bytes, or a read error). */
static int
at_end(int fd, struct job_result *res)
{
	char	 c;
	ssize_t	 n;

	if ((n = read_some(fd, &c, 1)) == 0)
		return 0;
	if (n == -1)
		return job_fail(res, errno, "reading the upload's body: %s",
		    strerror(errno));
	return job_fail(res, EINVAL, "the upload's body has more bytes than "
	    "its size");
}

/* Exactly size bytes; the last ones go only once fd is known to end. */
static int
add_body(struct tar_out *o, int fd, uint64_t size, struct job_result *res)
{
	static char	 buf[COPY_BUF];
	uint64_t	 left = size;
	ssize_t		 n;

	if (size == 0)
		return at_end(fd, res);
	while (left > 0) {
		n = read_some(fd, buf, left < sizeof(buf) ? (size_t)left :
		    sizeof(buf));
		if (n == -1)
			return job_fail(res, errno, "reading the upload's "
			    "body: %s", strerror(errno));
		if (n == 0)
			return job_fail(res, EINVAL, "the upload's body has "
			    "%llu bytes, its size %llu",
			    (unsigned long long)(size - left),
			    (unsigned long long)size);
		left -= (uint64_t)n;
		if (left == 0 && at_end(fd, res) == -1)
			return -1;
		if (archive_write_data(o->a, buf, (size_t)n) != n)
			return job_fail(res, o->err, "writing the upload "
			    "archive: %s", tar_out_error(o));
	}
	return 0;
}

static int
upload(struct tar_out *o, const struct archive_job *j, int fd,
    struct job_result *res)
{
	if (add_parents(o, j) == -1 ||
	    add_member(o, j->name, AE_IFREG, j->mode, j, j->mtime, 0,
	    (int64_t)j->size) == -1)
		return job_fail(res, o->err, "writing the upload archive: %s",
		    tar_out_error(o));
	if (add_body(o, fd, j->size, res) == -1)
		return -1;
	if (archive_write_finish_entry(o->a) < ARCHIVE_WARN ||
	    tar_out_close(o) == -1)
		return job_fail(res, o->err, "writing the upload archive: %s",
		    tar_out_error(o));
	res->bytes = o->written;
	return 0;
}

int
job_upload(const struct archive_job *j, const int fds[2],
    struct job_result *res)
{
	struct tar_out	 o;
	int		 rv;

	if (!archive_job_valid(j))
		return job_fail(res, EINVAL, "cannot upload to this name");
	/* A spool file is read from its start; a pipe is read as it is. */
	if (lseek(fds[0], 0, SEEK_SET) == -1 && errno != ESPIPE)
		return job_fail(res, errno, "cannot rewind the spool file: %s",
		    strerror(errno));
	if (tar_out_open(&o, fds[1], UINT64_MAX, TAR_OUT_UPLOAD) == -1)
		return job_fail(res, errno, "cannot start the upload archive");
	if ((rv = upload(&o, j, fds[0], res)) == -1)
		tar_out_abandon(&o);
	tar_out_free(&o);
	return rv;
}
