/*
 * Tar helpers for snapshots and file downloads (API.md §6.2, §7.1, §7.3).
 * They parse sandbox-controlled tar streams, so per DESIGN.md §1 only
 * apid may call them.  Each reads from and writes to descriptors it is
 * given and holds nothing between calls.
 */
#ifndef AS_APID_TAR_SNAPSHOT_H
#define AS_APID_TAR_SNAPSHOT_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

/*
 * Re-emit Docker's archive of /workspace without the root entry and with
 * "workspace/" stripped from member names and hard-link targets.  Returns
 * the bytes written, or -1 with errno set and a message in err: EFBIG
 * once the output passes max_bytes, EINVAL for a member outside the
 * workspace.  out_fd then holds garbage.
 */
int64_t	tar_snapshot_rewrite(int, int, uint64_t, char *, size_t);

/*
 * 0 if every member of a stored snapshot is a relative file, directory,
 * symlink or hard link with no ".." component; else -1 (EINVAL) and a
 * message naming the member.
 */
int	tar_snapshot_check(int, char *, size_t);

/* 1 if id is "snap_" followed by 16 lowercase hex digits, else 0. */
int	snapshot_id_valid(const char *);

/*
 * Copy the first regular file of a tar to out_fd.  Returns its size, or
 * -1 with errno: ENOENT for no regular file, EFBIG when larger than
 * max_bytes (some bytes may already be written), EIO for a bad archive.
 */
ssize_t	tar_first_file(int, uint64_t, int);

/* tar_error.c: how the tar code words its errors. */
struct archive;
void	tar_seterr(char *err, size_t errlen, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
const char *tar_arerr(struct archive *);
/* Stop a writer whose write callback refuses once *dead is set. */
void	tar_write_abandon(struct archive *, int *dead);

#endif
