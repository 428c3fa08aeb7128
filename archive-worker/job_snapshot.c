/*
 * SNAPSHOT and CHECK (API.md §7.1, §7.3): Docker's export of /workspace
 * rewritten into a snapshot, and a stored snapshot checked before it is
 * imported.  The rules on members are ours: relative names without a
 * ".." component, inside the workspace, hard-link targets too; only
 * files, directories, symlinks and hard links are kept or accepted.
 */
#include <sys/types.h>

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <archive.h>
#include <archive_entry.h>

#include "worker.h"

#define COPY_BUF	(64 * 1024)
#define WS_PREFIX	"workspace/"
#define WS_PREFIX_LEN	(sizeof(WS_PREFIX) - 1)
#define QUOTE_MAX	200

/*
 * A member name (or hard-link target) safe to extract under a directory:
 * non-empty, relative, and without a ".." component.
 */
static int
name_safe(const char *name)
{
	const char	*p, *slash;
	size_t		 len;

	if (name == NULL || *name == '\0' || *name == '/')
		return 0;
	for (p = name;; p = slash + 1) {
		slash = strchr(p, '/');
		len = slash != NULL ? (size_t)(slash - p) : strlen(p);
		if (len == 2 && p[0] == '.' && p[1] == '.')
			return 0;
		if (slash == NULL)
			return 1;
	}
}

/*
 * The name of a member of Docker's /workspace archive with "workspace/"
 * stripped: "" for the root entry, NULL if outside the workspace.
 */
static const char *
strip_workspace(const char *name)
{
	const char	*rest;

	if (name == NULL)
		return NULL;
	if (strcmp(name, "workspace") == 0)
		return "";
	if (strncmp(name, WS_PREFIX, WS_PREFIX_LEN) != 0)
		return NULL;
	rest = name + WS_PREFIX_LEN;
	if (*rest != '\0' && !name_safe(rest))
		return NULL;
	return rest;
}

/*
 * No setuid bits, and setgid only on directories (where it passes the
 * group on and grants nothing): dockerd-proxy refuses to write anything
 * else into a sandbox, and a snapshot must be one it can restore.
 */
static uint32_t
snapshot_perm(const struct tar_member *m)
{
	return m->mode & (m->type == TAR_DIR ? 03777 : 01777);
}

/* A fresh header: only what a snapshot keeps, nothing else carried over. */
static struct archive_entry *
snapshot_entry(const struct tar_member *m, const char *name,
    const char *link)
{
	struct archive_entry	*e;

	if ((e = archive_entry_new()) == NULL)
		return NULL;
	archive_entry_set_pathname(e, name);
	archive_entry_set_perm(e, snapshot_perm(m));
	archive_entry_set_uid(e, (la_int64_t)m->uid);
	archive_entry_set_gid(e, (la_int64_t)m->gid);
	archive_entry_set_mtime(e, m->mtime, 0);
	archive_entry_set_size(e, 0);
	if (link != NULL) {
		archive_entry_set_filetype(e, AE_IFREG);
		archive_entry_set_hardlink(e, link);
	} else if (m->type == TAR_SYMLINK) {
		archive_entry_set_filetype(e, AE_IFLNK);
		archive_entry_set_symlink(e, m->link);
	} else if (m->type == TAR_DIR) {
		archive_entry_set_filetype(e, AE_IFDIR);
	} else {
		archive_entry_set_filetype(e, AE_IFREG);
		archive_entry_set_size(e, (la_int64_t)m->size);
	}
	return e;
}

/* The current member's data into the snapshot. */
static int
copy_data(struct tar_reader *r, struct tar_out *o, struct job_result *res)
{
	char	 buf[COPY_BUF];
	ssize_t	 n;

	while ((n = tar_data(r, buf, sizeof(buf))) > 0) {
		if (archive_write_data(o->a, buf, (size_t)n) != n)
			return job_fail(res, o->err != 0 ? o->err : EIO,
			    "writing snapshot: %s", tar_out_error(o));
	}
	if (n == -1)
		return job_fail(res, errno, "reading archive: %s",
		    tar_error(r));
	return 0;
}

/*
 * What one member of Docker's archive becomes: 1 to keep it with *name
 * and *link (a hard link's target) set, 0 to leave it out, -1 if the
 * archive may not become a snapshot.
 */
static int
rewrite_names(const struct tar_member *m, const char **name,
    const char **link, struct job_result *res)
{
	char	 q[QUOTE_MAX], ql[QUOTE_MAX];

	*link = NULL;
	if ((*name = strip_workspace(m->name)) == NULL)
		return job_fail(res, EINVAL, "member outside the workspace: "
		    "%s", name_quote(m->name, q, sizeof(q)));
	if (**name == '\0') {
		if (m->type != TAR_DIR)
			return job_fail(res, EINVAL,
			    "workspace root is not a directory");
		return 0;
	}
	if (m->type == TAR_HARDLINK) {
		*link = strip_workspace(m->link);
		if (*link == NULL || **link == '\0')
			return job_fail(res, EINVAL, "hard link %s points "
			    "outside the workspace: %s",
			    name_quote(*name, q, sizeof(q)),
			    name_quote(m->link, ql, sizeof(ql)));
		return 1;
	}
	/* FIFOs, sockets, devices: not kept. */
	return m->type == TAR_REG || m->type == TAR_DIR ||
	    m->type == TAR_SYMLINK;
}

static int
rewrite_member(struct tar_reader *r, struct tar_member *m,
    struct tar_out *o, struct job_result *res)
{
	struct archive_entry	*e;
	const char		*name, *link;
	int			 rc;

	if ((rc = rewrite_names(m, &name, &link, res)) <= 0)
		return rc;
	if ((e = snapshot_entry(m, name, link)) == NULL)
		return job_fail(res, ENOMEM, "out of memory");
	rc = archive_write_header(o->a, e);
	archive_entry_free(e);
	if (rc < ARCHIVE_WARN)
		return job_fail(res, o->err, "writing snapshot: %s",
		    tar_out_error(o));
	if (link == NULL && m->type == TAR_REG &&
	    copy_data(r, o, res) == -1)
		return -1;
	if (archive_write_finish_entry(o->a) < ARCHIVE_WARN)
		return job_fail(res, o->err, "writing snapshot: %s",
		    tar_out_error(o));
	return 0;
}

static int
rewrite(struct tar_reader *r, struct tar_out *o, struct job_result *res)
{
	struct tar_member	*m;
	int			 rc;

	while ((rc = tar_next(r, &m)) == 1)
		if (rewrite_member(r, m, o, res) == -1)
			return -1;
	if (rc == -1)
		return job_fail(res, errno, "reading archive: %s",
		    tar_error(r));
	if (tar_out_close(o) == -1)
		return job_fail(res, o->err, "writing snapshot: %s",
		    tar_out_error(o));
	res->bytes = o->written;
	return 0;
}

int
job_snapshot(const struct archive_job *j, const int fds[2],
    struct job_result *res)
{
	struct tar_reader	 r;
	struct tar_out		 o;
	int			 rv = -1;

	if (tar_reader_init(&r, fds[0]) == -1)
		return job_fail(res, ENOMEM, "out of memory");
	if (tar_out_open(&o, fds[1], j->max_bytes, TAR_OUT_SNAPSHOT) == -1) {
		job_fail(res, errno, "cannot start the snapshot archive");
		goto done;
	}
	rv = rewrite(&r, &o, res);
	/* The write callback knows best why the writer failed. */
	if (rv == -1 && o.over)
		job_fail(res, EFBIG, "workspace exceeds the snapshot limit of "
		    "%llu bytes", (unsigned long long)j->max_bytes);
	if (rv == -1)
		tar_out_abandon(&o);
	tar_out_free(&o);
 done:
	tar_reader_free(&r);
	return rv;
}

/*
 * SNAPSHOT_COPY: Docker's tar of "/workspace/." stored byte for byte,
 * read once as it is copied.  Its names are already relative ("./",
 * "./a/b", hard-link targets too), so when every member is one the
 * rewrite would keep unchanged the copy is the snapshot, without the
 * rewrite's second tar (most workspaces).  The first member it would
 * change -- a FIFO, socket or device it leaves out, a setuid bit it
 * clears, extended attributes it drops, a name it would refuse -- ends
 * the job with JOB_NEEDS_REWRITE, and managerd asks for the rewrite.
 */
static const char *
copy_refusal(const struct tar_member *m, int *root_seen)
{
	const char	*rest;

	if (strcmp(m->name, "./") == 0 || strcmp(m->name, ".") == 0) {
		if (*root_seen || m->type != TAR_DIR)
			return "a second or odd workspace root";
		*root_seen = 1;
	} else if (strncmp(m->name, "./", 2) != 0 ||
	    !name_safe(rest = m->name + 2) || *rest == '/')
		return "a name not under \"./\"";
	if (!*root_seen)
		return "no workspace root first";
	if (m->type == TAR_HARDLINK && (strncmp(m->link, "./", 2) != 0 ||
	    !name_safe(m->link + 2) || m->link[2] == '\0'))
		return "a hard link whose target is not under \"./\"";
	if (m->type == TAR_OTHER)
		return "a FIFO, socket or device";
	if (m->mode != snapshot_perm(m))
		return "a setuid or setgid bit";
	if (m->xattrs)
		return "extended attributes";
	return NULL;
}

int
job_snapshot_copy(const struct archive_job *j, const int fds[2],
    struct job_result *res)
{
	struct tar_reader	 r;
	struct tar_copy		 c;
	struct tar_member	*m;
	const char		*why;
	char			 q[QUOTE_MAX];
	int			 rc, root_seen = 0, rv = -1;

	memset(&c, 0, sizeof(c));
	c.fd = fds[1];
	c.max = j->max_bytes;
	if (tar_reader_init(&r, fds[0]) == -1)
		return job_fail(res, ENOMEM, "out of memory");
	r.copy = &c;
	while ((rc = tar_next(&r, &m)) == 1) {
		if ((why = copy_refusal(m, &root_seen)) != NULL) {
			job_fail(res, JOB_NEEDS_REWRITE, "%s: %s", why,
			    name_quote(m->name, q, sizeof(q)));
			goto done;
		}
	}
	if (c.over)
		job_fail(res, EFBIG, "workspace exceeds the snapshot limit of "
		    "%llu bytes", (unsigned long long)j->max_bytes);
	else if (c.err != 0)
		job_fail(res, c.err, "writing snapshot: %s",
		    strerror(c.err));
	else if (rc == -1)
		job_fail(res, errno, "reading archive: %s", tar_error(&r));
	else if (!root_seen)
		job_fail(res, JOB_NEEDS_REWRITE, "no workspace root");
	else {
		res->bytes = c.written;
		rv = 0;
	}
 done:
	tar_reader_free(&r);
	return rv;
}

/* 0 if a stored snapshot may hold this member, else -1 (EINVAL). */
static int
check_member(const struct tar_member *m, struct job_result *res)
{
	char	 q[QUOTE_MAX], ql[QUOTE_MAX];

	if (!name_safe(m->name))
		return job_fail(res, EINVAL, "unsafe member name: %s",
		    name_quote(m->name, q, sizeof(q)));
	if (m->type == TAR_HARDLINK && !name_safe(m->link))
		return job_fail(res, EINVAL, "unsafe hard link target of %s: "
		    "%s", name_quote(m->name, q, sizeof(q)),
		    name_quote(m->link, ql, sizeof(ql)));
	if (m->type != TAR_REG && m->type != TAR_DIR &&
	    m->type != TAR_SYMLINK && m->type != TAR_HARDLINK)
		return job_fail(res, EINVAL, "special file in snapshot: %s",
		    name_quote(m->name, q, sizeof(q)));
	return 0;
}

int
job_check(const struct archive_job *j, const int fds[2],
    struct job_result *res)
{
	struct tar_reader	 r;
	struct tar_member	*m;
	int			 rc, rv = -1;

	(void)j;
	if (tar_reader_init(&r, fds[0]) == -1)
		return job_fail(res, ENOMEM, "out of memory");
	while ((rc = tar_next(&r, &m)) == 1)
		if (check_member(m, res) == -1)
			goto done;
	if (rc == -1) {
		job_fail(res, errno, "reading snapshot: %s", tar_error(&r));
		goto done;
	}
	res->bytes = tar_offset(&r);
	rv = 0;
 done:
	tar_reader_free(&r);
	return rv;
}
