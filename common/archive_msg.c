/*
 * Encode/decode pairs for the archive worker's payloads (archive_msg.h).
 * An archive job that is not one the worker may run is malformed: apid
 * checks the same rules before it sends, so only a lying peer sends one.
 */
#include <stdlib.h>
#include <string.h>

#include "archive_msg.h"
#include "sandbox_msg.h"

#define DIR_WIRE_LEN	(4 + 8 + 4)	/* u32 mode, i64 mtime, u32 nsec */
#define NSEC_PER_SEC	1000000000U

int
archive_job_nfds(uint32_t kind)
{
	switch (kind) {
	case ARCHIVE_JOB_CHECK:
		return 1;
	case ARCHIVE_JOB_FIRST_FILE:
	case ARCHIVE_JOB_SNAPSHOT:
	case ARCHIVE_JOB_SNAPSHOT_COPY:
	case ARCHIVE_JOB_SPOOL:
	case ARCHIVE_JOB_UPLOAD:
		return 2;
	default:
		return -1;
	}
}

/*
 * An upload's name: relative, no empty, "." or ".." component, no
 * trailing '/'.  Returns the number of '/' in it, or -1.
 */
static int
upload_name_slashes(const char *name)
{
	const char	*p, *end;
	size_t		 len;
	int		 slashes = 0;

	if (name == NULL || *name == '\0' || strlen(name) > MSG_MAX_PATH)
		return -1;
	for (p = name;; p = end + 1) {
		if ((end = strchr(p, '/')) == NULL)
			end = p + strlen(p);
		len = (size_t)(end - p);
		if (len == 0 || (len == 1 && p[0] == '.') ||
		    (len == 2 && p[0] == '.' && p[1] == '.'))
			return -1;
		if (*end == '\0')
			return slashes;
		slashes++;
	}
}

static int
upload_valid(const struct archive_job *j)
{
	uint32_t	 i;
	int		 slashes;

	if ((slashes = upload_name_slashes(j->name)) == -1 ||
	    (uint32_t)slashes != j->ndirs || j->ndirs > ARCHIVE_DIRS_MAX ||
	    j->mode > 07777 || j->size > INT64_MAX)
		return 0;
	if (j->ndirs > 0 && j->dirs == NULL)
		return 0;
	for (i = 0; i < j->ndirs; i++)
		if (j->dirs[i].mode > 07777 ||
		    j->dirs[i].mtime_nsec >= NSEC_PER_SEC)
			return 0;
	return 1;
}

/* FIRST_FILE may name the member it wants (a path, as for UPLOAD). */
static int
first_file_valid(const struct archive_job *j)
{
	return j->ndirs == 0 && (j->name == NULL ||
	    upload_name_slashes(j->name) != -1);
}

int
archive_job_valid(const struct archive_job *j)
{
	if (archive_job_nfds(j->kind) == -1)
		return 0;
	if (j->kind == ARCHIVE_JOB_UPLOAD)
		return upload_valid(j);
	if (j->kind == ARCHIVE_JOB_FIRST_FILE)
		return first_file_valid(j);
	return j->name == NULL && j->ndirs == 0;
}

void
archive_job_free(struct archive_job *j)
{
	free(j->name);
	free(j->dirs);
	memset(j, 0, sizeof(*j));
}

void
msg_put_archive_job(struct msgw *w, const struct archive_job *j)
{
	uint32_t	 i;

	msgw_u32(w, j->kind);
	msgw_u64(w, j->max_bytes);
	msgw_u64(w, j->size);
	msgw_str(w, j->name);
	msgw_u32(w, j->uid);
	msgw_u32(w, j->gid);
	msgw_u32(w, j->mode);
	msgw_i64(w, j->mtime);
	msgw_u32(w, j->ndirs);
	for (i = 0; i < j->ndirs; i++) {
		msgw_u32(w, j->dirs[i].mode);
		msgw_i64(w, j->dirs[i].mtime);
		msgw_u32(w, j->dirs[i].mtime_nsec);
	}
}

/* The dirs are the rest of the payload: its length is checked first. */
static void
get_dirs(struct msgr *r, struct archive_job *j)
{
	uint32_t	 i;

	j->ndirs = msgr_u32(r);
	if (r->error || j->ndirs > ARCHIVE_DIRS_MAX ||
	    r->len - r->off != (size_t)j->ndirs * DIR_WIRE_LEN) {
		r->error = 1;
		j->ndirs = 0;
		return;
	}
	if (j->ndirs == 0)
		return;
	if ((j->dirs = calloc(j->ndirs, sizeof(*j->dirs))) == NULL) {
		r->error = 1;
		j->ndirs = 0;
		return;
	}
	for (i = 0; i < j->ndirs; i++) {
		j->dirs[i].mode = msgr_u32(r);
		j->dirs[i].mtime = msgr_i64(r);
		j->dirs[i].mtime_nsec = msgr_u32(r);
	}
}

int
msg_get_archive_job(const struct imsg *imsg, struct archive_job *j)
{
	struct msgr	 r;

	memset(j, 0, sizeof(*j));
	msgr_init(&r, imsg);
	j->kind = msgr_u32(&r);
	j->max_bytes = msgr_u64(&r);
	j->size = msgr_u64(&r);
	j->name = msgr_str(&r, MSG_MAX_PATH);
	j->uid = msgr_u32(&r);
	j->gid = msgr_u32(&r);
	j->mode = msgr_u32(&r);
	j->mtime = msgr_i64(&r);
	get_dirs(&r, j);
	if (msgr_end(&r) == -1 || !archive_job_valid(j)) {
		archive_job_free(j);
		return -1;
	}
	return 0;
}
