/*
 * The upload tests' shared part (upload_fixture.c): the sandbox they
 * write to, the upload's messages, and the proxy's answers to a walk,
 * given as steps.
 */
#ifndef AS_UPLOAD_FIXTURE_H
#define AS_UPLOAD_FIXTURE_H

#include "manager_fixture.h"

#define LIMITED		"writes are limited to files under /workspace"
#define MISSING		0	/* a step's answer: ERR_NOT_FOUND */

/* One ARCHIVE_HEAD of a walk: what is asked about, what the proxy says. */
struct step {
	const char	*path;
	int		 kind;		/* ARCHIVE_KIND_*, or MISSING */
	const char	*target;	/* of a symlink */
};

/* Made by setup_sandbox: sandbox user 1234:5678, 10 bytes at most. */
extern char	 sandbox[SANDBOX_ID_LEN + 1];
int	 setup_sandbox(void **state);

void	 from_apid_id(uint32_t type, uint32_t peerid, int fd, struct msgw *);
void	 put_write(struct msgw *, const char *id, const char *path,
	    uint32_t mode, uint64_t size);
uint32_t send_begin(const char *id, const char *path, uint32_t mode,
	    uint64_t size);
/* COMMIT of bytes in the spool (it carries no descriptor). */
void	 send_commit(uint32_t req, uint64_t bytes);

uint32_t expect_head(const char *path);
void	 head_missing(uint32_t call, const char *path);
/* The proxy answers the walk's questions, and no more is asked. */
void	 walk(const struct step *);
/*
 * FILE_SPOOL: an empty, unlinked, regular file open for both, and what
 * the body goes there as (into *fs: fs->plan for a tar spool).
 */
int	 expect_spool(uint32_t req, uint64_t max, struct file_spool *fs);
/*
 * The proxy's ARCHIVE_PUT (NO_REPLACE and flags) of length: checks it;
 * *fd: what the proxy got (a pipe, or a regular file when it is the tar
 * spool's, checked too).
 */
uint32_t expect_put(const char *id, uint8_t flags, int64_t length, int *fd);

/*
 * The primed PUT: its call and what the proxy reads, the tar pipe or,
 * for a tar spool (wait), the spool itself, waiting for GO.
 */
struct prime {
	uint32_t	 call;
	int		 fd;
	int		 wait;
};
void	 expect_prime(struct prime *, int wait);
/* ARCHIVE_PUT_GO for call, of length bytes. */
void	 expect_go(uint32_t call, uint64_t length);
/* The primed PUT gets no tar: its pipe closed empty, or GO 0. */
void	 assert_prime_unused(struct prime *);
/* That, and the proxy's DONE for it. */
void	 prime_unused(struct prime *);
/* The event loop runs until PRIME_WAIT_MS gives up on the primed PUT. */
void	 wait_prime_expiry(struct prime *);
/* FILE_WRITE_READY; *wfd: the tar pipe it carries. */
void	 expect_ready(uint32_t req, const char *name, uint32_t mode,
	    struct file_write_ready *, int *wfd);
/* A directory member the upload makes: 0755 and now. */
void	 assert_new_dir(const struct file_write_dir *);
void	 expect_file_info(uint32_t req, const char *path, uint64_t size);

/*
 * After the walk: the spool (a tar spool when the BEGIN said its size),
 * apid's COMMIT of bytes, the upload, the plan in *r (named name, mode
 * 0640: FILE_SPOOL's or READY's) and the FILE_INFO for path.
 */
void	 upload_rest(uint32_t req, uint64_t max, uint64_t bytes,
	    const char *name, const char *path, struct file_write_ready *r);
/* A whole upload of 4 bytes through path, landing as name. */
void	 upload_ok(const char *path, const struct step *, const char *name,
	    struct file_write_ready *);
void	 upload_refused(const char *path, const struct step *,
	    enum error_kind, const char *text);

#endif /* AS_UPLOAD_FIXTURE_H */
