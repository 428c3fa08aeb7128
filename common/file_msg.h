/*
 * Payloads of the file, snapshot and archive messages (see msg.h for
 * which message carries which), with encode/decode pairs in the style of
 * sandbox_msg.h: decoders check every field and the exact length, return
 * -1 on failure and leave nothing allocated; *_free releases the strings.
 */
#ifndef AS_FILE_MSG_H
#define AS_FILE_MSG_H

#include <stddef.h>
#include <stdint.h>

#include "msg.h"
#include "sandbox_msg.h"

#define MSG_MAX_SNAPSHOT_NAME	1024	/* bytes; the API allows 128 chars */
#define MSG_MAX_LINK_TARGET	4096

/*
 * FILE_READ and FILE_LIST.  path is what the client gave, except that a
 * path holding a NUL travels as "" (both are "path must be a non-empty
 * string"); managerd normalizes and checks it.  NULL path: the default
 * (/workspace), for a listing without ?path=.
 */
struct file_request {
	char		*sandbox_id;
	char		*path;
};

/*
 * FILE_LIST's output (stdout of the listing command, parsed by apid):
 * per entry "<st_mode in hex> <st_size> <mtime seconds>\n<name>\0", in
 * any order; bytes that do not fit this shape are skipped.
 */
#define FILE_LIST_OUTPUT_MAX	(16 * 1024 * 1024)

/*
 * FILE_WRITE_BEGIN: after apid's 413 checks; managerd checks the rest.
 */
#define FILE_WRITE_SIZE_UNKNOWN	UINT64_MAX	/* BEGIN of a chunked body */
struct file_write {
	char		*sandbox_id;
	char		*path;		/* as for file_request, never NULL */
	uint32_t	 mode;		/* parsed octal; may exceed 0777 */
	uint64_t	 size;		/* body bytes */
};

/*
 * FILE_WRITE_READY: what apid puts in the upload tar, in this order.
 * name is relative to /workspace ("src/lib/app.py"), normalized, with
 * the symlinks on the way resolved.  dirs[i] is the directory member of
 * the i-th parent of name ("src/", then "src/lib/"), one per '/' in
 * name, owned by uid:gid; existing directories keep their mode and
 * mtime, new ones get 0755 and now.  Last, the file: mode, uid:gid,
 * mtime and the body.
 */
#define FILE_WRITE_MAX_DIRS	512
struct file_write_dir {
	uint32_t	 mode;		/* permission bits, at most 07777 */
	int64_t		 mtime;
	uint32_t	 mtime_nsec;
};
struct file_write_ready {
	char			*name;
	uint32_t		 uid;
	uint32_t		 gid;
	uint32_t		 mode;
	int64_t			 mtime;
	uint32_t		 ndirs;
	/* Inline: apid's jobs take shallow copies of this. */
	struct file_write_dir	 dirs[FILE_WRITE_MAX_DIRS];
};

/*
 * FILE_READ_STARTED: the file's size, and where it is in the tar that
 * comes: NULL, the first regular file (Docker's tar of the file itself);
 * else the member of this name (a tar of its directory, for a name that
 * Docker leaves out of the tar of the file alone).
 */
struct file_read_started {
	uint64_t	 size;
	char		*member;
};

/* FILE_INFO: API.md §3.7. */
struct file_info {
	char		*name;
	char		*path;
	char		*type;		/* "file", "directory", ... */
	uint64_t	 size;
	double		 modified_at;
};

/* SNAPSHOT_CREATE */
struct snapshot_create {
	char		*sandbox_id;
	char		*name;		/* NULL: none */
};

/* SNAPSHOT_INFO: API.md §3.4. */
struct snapshot_info {
	char		*id;
	char		*sandbox_id;
	char		*name;		/* NULL: none */
	char		*image;
	uint64_t	 size_bytes;
	double		 created_at;
};

/* SANDBOX_ROLLBACK */
struct rollback_request {
	char		*sandbox_id;
	char		*snapshot_id;
};

/* SNAPSHOT_FORK: the overrides of API.md §4.17 (has_* = given). */
struct fork_request {
	char		*snapshot_id;
	int		 has_timeout_seconds;
	int64_t		 timeout_seconds;
	int		 has_network;
	int		 network;
	/* as create_request's: an object's JSON text, network 0 */
	char		*network_policy;
	int		 has_cpus;
	double		 cpus;
	int		 has_memory_mb;
	int64_t		 memory_mb;
	struct label_list labels;	/* the new sandbox's: none inherited */
};

/*
 * SNAPSHOT_WRITTEN, TAR_CHECKED and ARCHIVE_DONE.  errnum 0: success and
 * bytes is what was written (or read); else an errno (EFBIG: past the
 * limit, EINVAL: a member that may not be there, EIO: a broken archive,
 * EPIPE: the other end went away, or the archive worker's process for
 * the job died) and message says what, for logs and error replies.
 */
struct tar_result {
	int32_t		 errnum;
	uint64_t	 bytes;
	char		*message;
};

/* ARCHIVE_GET: what the proxy fetches and when it streams the body. */
#define ARCHIVE_WANT_FILE	1	/* stream if a file of <= max_bytes */
#define ARCHIVE_WANT_TREE	2	/* stream if a directory */
struct archive_get {
	char		*id;		/* sandbox id */
	char		*path;		/* normalized, absolute */
	uint8_t		 want;
	uint64_t	 max_bytes;	/* ARCHIVE_WANT_FILE only */
};

/* ARCHIVE_HEAD: the path's stat alone. */
struct archive_head {
	char		*id;		/* sandbox id */
	char		*path;		/* absolute, any bytes but NUL */
};

/*
 * ARCHIVE_STAT: from Docker's X-Docker-Container-Path-Stat.  mode holds
 * the permission bits with setuid, setgid and sticky where chmod(2) has
 * them.  link_target is where Docker resolved a symlink to inside the
 * container, absolute; bytes that are not UTF-8 reach us as U+FFFD, for
 * Docker sends the stat as JSON.
 */
#define ARCHIVE_KIND_FILE	1
#define ARCHIVE_KIND_DIR	2
#define ARCHIVE_KIND_SYMLINK	3
#define ARCHIVE_KIND_OTHER	4	/* device, fifo, socket ... */
struct archive_stat {
	uint8_t		 kind;
	uint64_t	 size;
	uint32_t	 mode;		/* at most 07777 */
	int64_t		 mtime;
	uint32_t	 mtime_nsec;	/* below 1000000000 */
	char		*link_target;	/* "" unless a symlink */
};

/*
 * ARCHIVE_PUT.  ARCHIVE_PUT_NO_REPLACE asks Docker not to replace a
 * directory by a non-directory or the reverse (so a symlink where the
 * tar has a directory fails instead of being replaced); the proxy then
 * answers ERR_INVALID_REQUEST with a message that names the path.
 * ARCHIVE_PUT_PRIME: the proxy sends a pax header of its own (one
 * comment record) before the first byte of the tar, so that Docker sets
 * up its unpacking while the tar is still being made (an upload whose
 * body is still arriving); only with length -1.
 * ARCHIVE_PUT_WAIT, only with PRIME: the tar is a regular file still
 * being written; the proxy reads none of it until DOCKER_ARCHIVE_PUT_GO
 * says how long it is (0: there is none, the body ends empty).
 * length: bytes of the tar, or -1 when unknown (a pipe, or WAIT).
 */
#define ARCHIVE_PUT_NO_REPLACE	0x01
#define ARCHIVE_PUT_PRIME	0x02
#define ARCHIVE_PUT_WAIT	0x04
struct archive_put {
	char		*id;
	char		*path;
	uint8_t		 flags;
	int64_t		 length;
};

void	msg_put_file_request(struct msgw *, const struct file_request *);
int	msg_get_file_request(const struct imsg *, struct file_request *);
void	file_request_free(struct file_request *);

void	msg_put_file_write(struct msgw *, const struct file_write *);
int	msg_get_file_write(const struct imsg *, struct file_write *);
void	file_write_free(struct file_write *);

/*
 * FILE_SPOOL: the most bytes the body may have and, when the upload's
 * size was declared (tar set), the tar to spool instead of the bare
 * body: the plan FILE_WRITE_READY would carry, the file of that size.
 */
struct file_spool {
	uint64_t		 max_bytes;
	int			 tar;
	struct file_write_ready	 plan;		/* when tar */
};
void	msg_put_file_spool(struct msgw *, const struct file_spool *);
int	msg_get_file_spool(const struct imsg *, struct file_spool *);
void	file_spool_free(struct file_spool *);

void	msg_put_file_write_ready(struct msgw *,
	    const struct file_write_ready *);
int	msg_get_file_write_ready(const struct imsg *,
	    struct file_write_ready *);
void	file_write_ready_free(struct file_write_ready *);

void	msg_put_file_read_started(struct msgw *,
	    const struct file_read_started *);
int	msg_get_file_read_started(const struct imsg *,
	    struct file_read_started *);
void	file_read_started_free(struct file_read_started *);

void	msg_put_file_info(struct msgw *, const struct file_info *);
int	msg_get_file_info(const struct imsg *, struct file_info *);
void	file_info_free(struct file_info *);

void	msg_put_snapshot_create(struct msgw *, const struct snapshot_create *);
int	msg_get_snapshot_create(const struct imsg *, struct snapshot_create *);
void	snapshot_create_free(struct snapshot_create *);

void	msg_put_snapshot_info(struct msgw *, const struct snapshot_info *);
int	msg_get_snapshot_info(const struct imsg *, struct snapshot_info *);
void	snapshot_info_free(struct snapshot_info *);

/* SNAPSHOT_LIST: sandbox_id NULL = no filter. */
void	msg_put_snapshot_list(struct msgw *, const char *sandbox_id);
int	msg_get_snapshot_list(const struct imsg *, char **sandbox_id);

void	msg_put_rollback_request(struct msgw *,
	    const struct rollback_request *);
int	msg_get_rollback_request(const struct imsg *,
	    struct rollback_request *);
void	rollback_request_free(struct rollback_request *);

void	msg_put_fork_request(struct msgw *, const struct fork_request *);
int	msg_get_fork_request(const struct imsg *, struct fork_request *);
void	fork_request_free(struct fork_request *);

void	msg_put_tar_result(struct msgw *, const struct tar_result *);
int	msg_get_tar_result(const struct imsg *, struct tar_result *);
void	tar_result_free(struct tar_result *);

void	msg_put_archive_get(struct msgw *, const struct archive_get *);
int	msg_get_archive_get(const struct imsg *, struct archive_get *);
void	archive_get_free(struct archive_get *);

void	msg_put_archive_head(struct msgw *, const struct archive_head *);
int	msg_get_archive_head(const struct imsg *, struct archive_head *);
void	archive_head_free(struct archive_head *);

void	msg_put_archive_stat(struct msgw *, const struct archive_stat *);
int	msg_get_archive_stat(const struct imsg *, struct archive_stat *);
void	archive_stat_free(struct archive_stat *);

void	msg_put_archive_put(struct msgw *, const struct archive_put *);
int	msg_get_archive_put(const struct imsg *, struct archive_put *);
void	archive_put_free(struct archive_put *);

/* FILE_READ_STARTED, FILE_SPOOL, FILE_WRITE_COMMIT: one u64. */
void	msg_put_u64(struct msgw *, uint64_t);
int	msg_get_u64(const struct imsg *, uint64_t *);
/* SNAPSHOT_SINK: u64 max_bytes, u8 copy (0 or 1). */
void	msg_put_snapshot_sink(struct msgw *, uint64_t max_bytes, int copy);
int	msg_get_snapshot_sink(const struct imsg *, uint64_t *max_bytes,
	    int *copy);

#endif /* AS_FILE_MSG_H */
