/*
 * archive-worker: the only process that parses tar streams a sandbox
 * made.  A zygote that never parses anything itself: for each job apid
 * sends it forks a process that gives up everything but the job's
 * descriptors, loads a second, stricter seccomp filter, does the job
 * with blocking I/O, writes its result into a pipe and exits.
 */
#ifndef AS_ARCHIVE_WORKER_H
#define AS_ARCHIVE_WORKER_H

#include <sys/queue.h>
#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#include "archive_msg.h"
#include "file_msg.h"
#include "peer.h"
#include "seccomp.h"
#include "tar_header.h"

/* What a job tells the zygote (and the zygote apid), as tar_result. */
#define JOB_MESSAGE_MAX	512
struct job_result {
	int32_t		 errnum;
	uint64_t	 bytes;
	char		 message[JOB_MESSAGE_MAX];
};

/* zygote.c: the jobs, on the loop. */
void	zygote_init(struct event_base *, enum seccomp_mode);
/* A (new) channel to apid from managerd: the old one's jobs are orphans. */
void	zygote_channel(int fd);
/* managerd's messages (WORKER_APID_CHANNEL). */
void	zygote_dispatch_parent(struct peer *, struct imsg *);

/* job.c: the job's own process, from fork to _exit. */
__attribute__((noreturn)) void job_child(const struct archive_job *,
	    const int fds[2], int result_fd, enum seccomp_mode);
/* The job itself: 0, or -1 with res->errnum and res->message set. */
int	job_run(const struct archive_job *, const int fds[2],
	    struct job_result *);
#ifdef ARCHIVE_WORKER_TESTS
/* Test builds only: called in a job's process once its filter is on. */
extern void	(*job_test_hook)(const struct archive_job *);
#endif

/* The kinds (archive_msg.h); each returns as job_run does. */
int	job_first_file(const struct archive_job *, const int fds[2],
	    struct job_result *);
int	job_snapshot(const struct archive_job *, const int fds[2],
	    struct job_result *);
int	job_snapshot_copy(const struct archive_job *, const int fds[2],
	    struct job_result *);
int	job_check(const struct archive_job *, const int fds[2],
	    struct job_result *);
int	job_spool(const struct archive_job *, const int fds[2],
	    struct job_result *);
int	job_upload(const struct archive_job *, const int fds[2],
	    struct job_result *);

/* job_error.c */
int	job_fail(struct job_result *, int errnum, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
/*
 * A name as a message may show it: printable ASCII as it is, any other
 * byte (and '\') as \xHH, cut with "..." to fit size.
 */
const char *name_quote(const char *name, char *buf, size_t size);
/* 0, or -1 with errno (EPIPE once the reader went away). */
int	write_all(int fd, const void *, size_t);

/*
 * The kernel's writeback of a snapshot file, started every
 * WRITEBACK_STEP bytes written to it (job_error.c says why).
 */
struct writeback {
	uint64_t	 started;	/* writeback started up to here */
	int		 off;		/* the file is no file */
};
void	writeback_note(struct writeback *, int fd, uint64_t written);

/*
 * worker_seccomp.c: the zygote's filter, and each job's on top of it
 * (declared in common/seccomp.h with the other processes' filters).
 */

/*
 * tar_read.c: a tar stream read from a descriptor (see the file for the
 * formats and why it is ours).
 */
#define TAR_READ_BUF	(256 * 1024)	/* each read(2) of an archive */
/* A copy's unread data is spliced (tar_read.c) in pieces of at most. */
#define SPLICE_MAX	(1024 * 1024)
#define SPLICE_MIN	(64 * 1024)	/* and only from this much on */
/* A copy's kernel writeback is started after each (tar_read.c). */
#define WRITEBACK_STEP	(4 * 1024 * 1024)

/*
 * Where a reader copies every byte it reads, as it reads it: a snapshot
 * stored as Docker made it (SNAPSHOT_COPY), at most max bytes.
 */
struct tar_copy {
	int			 fd;
	uint64_t		 max;
	uint64_t		 written;
	int			 over;		/* max would have been passed */
	int			 err;		/* errno of a failed write(2) */
	int			 no_splice;	/* the input is no pipe */
	struct writeback	 wb;
};

struct tar_reader {
	int			 fd;
	unsigned char		*buf;
	size_t			 off;
	size_t			 len;
	uint64_t		 offset;	/* bytes taken from fd */
	uint64_t		 data_left;	/* of the current member */
	uint64_t		 pad_left;
	int			 ended;		/* end-of-archive read */
	int			 failed;
	struct tar_ext		 ext;		/* for the next member */
	struct tar_member	 m;
	struct tar_copy		*copy;		/* NULL: none */
	char			 err[256];
};

int	tar_reader_init(struct tar_reader *, int fd);
void	tar_reader_free(struct tar_reader *);
/*
 * 1 and *m (valid until the next call) for the next member, 0 at the
 * end of the archive, -1 (errno EIO or ENOMEM, tar_error() says why).
 */
int	tar_next(struct tar_reader *, struct tar_member **m);
/* The current member's data: bytes read, 0 at its end, or -1. */
ssize_t	tar_data(struct tar_reader *, void *, size_t);
uint64_t tar_offset(const struct tar_reader *);
const char *tar_error(const struct tar_reader *);

/*
 * tar_write.c: libarchive writing to a descriptor, names as bytes.
 * Nothing past max bytes is written; once abandoned, nothing at all.
 */
struct archive;
struct tar_out {
	struct archive	*a;
	int		 fd;
	uint64_t	 max;
	uint64_t	 written;
	int		 over;		/* max would have been passed */
	int		 err;		/* errno of a failed write(2) */
	int		 dead;		/* abandoned */
	struct writeback wb;		/* off for an upload */
};
#define TAR_OUT_SNAPSHOT	0	/* ustar, pax only where needed */
#define TAR_OUT_UPLOAD		1	/* pax: mtimes keep nanoseconds */
int	tar_out_open(struct tar_out *, int fd, uint64_t max, int format);
/* Stop, without padding or end blocks that would make it look whole. */
void	tar_out_abandon(struct tar_out *);
/* Ends a whole archive (padding, end blocks): 0, or -1. */
int	tar_out_close(struct tar_out *);
void	tar_out_free(struct tar_out *);
const char *tar_out_error(struct tar_out *);

#endif /* AS_ARCHIVE_WORKER_H */
