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
/* FILE_SPOOL: an empty, unlinked, regular file open for both. */
int	 expect_spool(uint32_t req, uint64_t max);
/*
 * The proxy's ARCHIVE_PUT (NO_REPLACE and flags): checks it; *fd: what
 * the proxy got.
 */
uint32_t expect_put(const char *id, uint8_t flags, int *fd);
/* The primed PUT that follows a walk that found a place. */
uint32_t expect_prime(int *pfd);
/* pfd's writer is gone with nothing written (and pfd is closed). */
void	 assert_pipe_unused(int pfd);
/* That, and the proxy's DONE for it. */
void	 prime_unused(uint32_t call, int pfd);
/* The event loop runs until PRIME_WAIT_MS closes the pipe pfd reads. */
void	 wait_prime_expiry(int pfd);
/* FILE_WRITE_READY; *wfd: the tar pipe it carries. */
void	 expect_ready(uint32_t req, const char *name, uint32_t mode,
	    struct file_write_ready *, int *wfd);
/* A directory member the upload makes: 0755 and now. */
void	 assert_new_dir(const struct file_write_dir *);
void	 expect_file_info(uint32_t req, const char *path, uint64_t size);

/*
 * After the walk: the spool, apid's COMMIT of bytes, the upload, the
 * plan in *r (named name, mode 0640) and the FILE_INFO for path.
 */
void	 upload_rest(uint32_t req, uint64_t max, uint64_t bytes,
	    const char *name, const char *path, struct file_write_ready *r);
/* A whole upload of 4 bytes through path, landing as name. */
void	 upload_ok(const char *path, const struct step *, const char *name,
	    struct file_write_ready *);
void	 upload_refused(const char *path, const struct step *,
	    enum error_kind, const char *text);

#endif /* AS_UPLOAD_FIXTURE_H */
