/*
 * Payloads of the archive worker's messages (msg.h): the jobs apid
 * gives it (its settings are proc.h's common head alone).  Decoders check every field and
 * the exact length, return -1 on failure and leave nothing allocated;
 * *_free releases what a decoder allocated.
 */
#ifndef AS_ARCHIVE_MSG_H
#define AS_ARCHIVE_MSG_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "msg.h"

/*
 * What a job does, and its descriptors in the order of its ARCHIVE_FDs:
 *
 * FIRST_FILE	fd0 Docker's tar of one path, fd1 where the bytes of its
 *		first regular file go, at most max_bytes of them.  bytes:
 *		the file's bytes written.
 * SNAPSHOT	fd0 Docker's tar of /workspace, fd1 the temporary snapshot
 *		file; the rewrite (relative names, nothing outside the
 *		workspace) is at most max_bytes.  bytes: tar bytes written.
 * CHECK	fd0 a stored snapshot; every member is checked before an
 *		import.  bytes: archive bytes read.
 * SNAPSHOT_COPY fd0 Docker's tar of "/workspace/.", fd1 the temporary
 *		snapshot file: the tar copied as it is, at most max_bytes,
 *		if every member is one SNAPSHOT keeps unchanged; else the
 *		job ends at the first other one with JOB_NEEDS_REWRITE (the
 *		file then holds a part, to be truncated).  bytes: copied.
 * SPOOL	fd0 an upload's body, fd1 the spool file; fd0 is copied to
 *		its end, at most max_bytes (one more is EFBIG), without any
 *		parsing.  bytes: bytes copied.
 * UPLOAD	fd0 the spool file (at offset 0, size bytes), fd1 the tar
 *		for Docker's archive PUT: one directory member per dirs[]
 *		(the prefixes of name: "a/", "a/b/" for "a/b/c"), then the
 *		regular file name with exactly size bytes from fd0.  fd0
 *		giving fewer or more bytes fails the job, and the tar then
 *		stops without its end.  bytes: tar bytes written.
 *
 * Names are bytes: nothing converts them through a locale or iconv.
 */
enum archive_job_kind {
	ARCHIVE_JOB_FIRST_FILE = 1,
	ARCHIVE_JOB_SNAPSHOT,
	ARCHIVE_JOB_CHECK,
	ARCHIVE_JOB_SPOOL,
	ARCHIVE_JOB_UPLOAD,
	ARCHIVE_JOB_SNAPSHOT_COPY,
	ARCHIVE_JOB_KIND_MAX = ARCHIVE_JOB_SNAPSHOT_COPY
};

/*
 * A SNAPSHOT_COPY's errnum when the tar must be rewritten (SNAPSHOT)
 * instead: no failure of the snapshot, and no errno a job otherwise
 * reports.
 */
#define JOB_NEEDS_REWRITE	EXDEV

/* Jobs in flight on one channel: apid waits before it sends more. */
#define ARCHIVE_JOBS_MAX	256
/* Parents of an upload's name; each is one directory member. */
#define ARCHIVE_DIRS_MAX	512

struct archive_dir {
	uint32_t	 mode;		/* permission bits, at most 07777 */
	int64_t		 mtime;
	uint32_t	 mtime_nsec;	/* below 1000000000 */
};

/*
 * ARCHIVE_JOB: u32 kind, u64 max_bytes, u64 size, str name, u32 uid,
 * u32 gid, u32 mode, i64 mtime, u32 ndirs, then ndirs times {u32 mode,
 * i64 mtime, u32 mtime_nsec}.  name, uid, gid, mode, mtime and the dirs
 * are UPLOAD's (name NULL and ndirs 0 for the other kinds); size is
 * UPLOAD's, max_bytes FIRST_FILE's, SNAPSHOT's and SPOOL's.  An UPLOAD's
 * name is relative to /workspace, without empty, "." or ".." components
 * or a trailing '/', and it has exactly one dir per '/' in it.
 */
struct archive_job {
	uint32_t		 kind;
	uint64_t		 max_bytes;
	uint64_t		 size;
	char			*name;
	uint32_t		 uid;
	uint32_t		 gid;
	uint32_t		 mode;
	int64_t			 mtime;
	uint32_t		 ndirs;
	struct archive_dir	*dirs;
};

/* The descriptors a kind takes (1 or 2), or -1 for no such kind. */
int	archive_job_nfds(uint32_t kind);
/* 1 if the job is one the worker may be given, else 0. */
int	archive_job_valid(const struct archive_job *);

void	msg_put_archive_job(struct msgw *, const struct archive_job *);
int	msg_get_archive_job(const struct imsg *, struct archive_job *);
void	archive_job_free(struct archive_job *);

#endif /* AS_ARCHIVE_MSG_H */
