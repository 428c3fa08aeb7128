/*
 * What the archive worker's tests share: a job run the way the zygote
 * runs it (a forked process under the zygote's filter and the job's),
 * tar archives built byte by byte (so that a test says exactly what
 * Docker or a hostile sandbox would send), and archives read back.
 */
#ifndef WORKER_FIXTURE_H
#define WORKER_FIXTURE_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#include "worker.h"

/* A temporary regular file, already unlinked. */
int	tmpfd(void);
void	rewind_fd(int);
off_t	fd_size(int);
/* The read end of a pipe a child fills with len bytes of buf. */
int	feed_pipe(const void *buf, size_t len);
/* All of a descriptor from offset 0 (malloc'd). */
char	*slurp(int fd, size_t *len);

/*
 * Run a job in a child under the worker's real filters, as job_child()
 * does in production; the result comes back through a pipe.  A child
 * killed by a signal fails the test.  fd1 may be -1.
 */
void	run_job(const struct archive_job *, int fd0, int fd1,
	    struct tar_result *);

/* Tar built by hand. */
struct tb {
	unsigned char	*buf;
	size_t		 len;
	size_t		 cap;
};
void	tb_init(struct tb *);
void	tb_free(struct tb *);
void	tb_bytes(struct tb *, const void *, size_t);
/*
 * A ustar header; prefix may be NULL.  size goes into the header as
 * octal; use tb_header_raw for anything a ustar header can say.
 */
void	tb_header(struct tb *, const char *name, char type, uint64_t size,
	    const char *link);
void	tb_header_prefix(struct tb *, const char *prefix, const char *name,
	    char type, uint64_t size);
/* A header block with the given size field bytes (12 of them). */
void	tb_header_size_field(struct tb *, const char *name, char type,
	    const unsigned char size[12]);
void	tb_data(struct tb *, const void *, size_t);	/* and padding */
/* An 'x' header whose records are "key=value" (value len given). */
void	tb_pax(struct tb *, const char *key, const char *value, size_t vlen);
void	tb_pax_raw(struct tb *, const void *records, size_t len);
/* A GNU 'L' (or 'K') header holding name. */
void	tb_gnu_long(struct tb *, char type, const char *name);
void	tb_end(struct tb *);		/* two zero blocks */
/* The archive in a temporary file, rewound. */
int	tb_file(const struct tb *);

/* A member as read back. */
struct got {
	char		*name;
	enum tar_type	 type;
	uint32_t	 mode;
	uint64_t	 uid;
	uint64_t	 gid;
	int64_t		 mtime;
	char		*link;
	char		*data;
	size_t		 len;
};
/* Every member, read with libarchive (warnings about names allowed). */
size_t	readback(int fd, struct got *, size_t max);
/* The same with the worker's own reader: the names as raw bytes. */
size_t	readback_raw(int fd, struct got *, size_t max);
void	got_free(struct got *, size_t);

#endif /* WORKER_FIXTURE_H */
