/*
 * Tar streams a sandbox produced: Docker's export of /workspace rewritten
 * into a snapshot, a stored snapshot checked before import, and the first
 * file of a download.  libarchive does the parsing; the rules on names
 * (relative, no "..", inside the workspace) are ours.
 */
#include <sys/types.h>

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

#include "tar_snapshot.h"

#define TAR_BLOCK	10240		/* tar record size: the last write */
#define IO_BLOCK	(64 * 1024)	/* each read(2) and write(2) */
#define COPY_BUF	(64 * 1024)
#define WS_PREFIX	"workspace/"
#define WS_PREFIX_LEN	(sizeof(WS_PREFIX) - 1)

/* Where the write callback sends a snapshot, and how much it may. */
struct tar_out {
	int		 fd;
	uint64_t	 max;
	uint64_t	 written;
	int		 over;		/* max would have been passed */
	int		 err;		/* errno of a failed write(2) */
	int		 dead;		/* failed: write nothing more */
};

static int
write_all(int fd, const void *buf, size_t len)
{
	const char	*p = buf;
	ssize_t		 n;

	while (len > 0) {
		n = write(fd, p, len);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

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
	for (p = name; *p != '\0'; p = slash + 1) {
		slash = strchr(p, '/');
		len = slash != NULL ? (size_t)(slash - p) : strlen(p);
		if (len == 2 && p[0] == '.' && p[1] == '.')
			return 0;
		if (slash == NULL)
			break;
	}
	return 1;
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

static struct archive *
reader_open(int fd)
{
	struct archive	*a;

	if ((a = archive_read_new()) == NULL)
		return NULL;
	if (archive_read_support_format_tar(a) != ARCHIVE_OK ||
	    archive_read_support_format_gnutar(a) != ARCHIVE_OK ||
	    archive_read_open_fd(a, fd, IO_BLOCK) != ARCHIVE_OK) {
		archive_read_free(a);
		return NULL;
	}
	return a;
}

/* Warnings (an unconvertible name) still give a usable header. */
static int
next_header(struct archive *a, struct archive_entry **ae)
{
	int	 r;

	r = archive_read_next_header(a, ae);
	if (r == ARCHIVE_WARN)
		r = ARCHIVE_OK;
	return r;
}

static la_ssize_t
out_write(struct archive *a, void *arg, const void *buf, size_t len)
{
	struct tar_out	*o = arg;

	if (o->dead) {
		archive_set_error(a, EIO, "the snapshot failed");
		return -1;
	}
	if (o->over || o->written + len > o->max) {
		o->over = 1;
		archive_set_error(a, EFBIG, "snapshot limit");
		return -1;
	}
	if (write_all(o->fd, buf, len) == -1) {
		o->err = errno;
		archive_set_error(a, errno, "write: %s", strerror(errno));
		return -1;
	}
	o->written += len;
	return (la_ssize_t)len;
}

static struct archive *
writer_open(struct tar_out *o)
{
	struct archive	*w;

	if ((w = archive_write_new()) == NULL)
		return NULL;
	/*
	 * pax only where ustar cannot say it (names over 100 bytes, large
	 * ids); names pass through as bytes, whatever the locale.
	 */
	if (archive_write_set_format_pax_restricted(w) != ARCHIVE_OK ||
	    archive_write_set_options(w, "hdrcharset=BINARY") != ARCHIVE_OK ||
	    archive_write_set_bytes_per_block(w, IO_BLOCK) != ARCHIVE_OK ||
	    archive_write_set_bytes_in_last_block(w, TAR_BLOCK) != ARCHIVE_OK ||
	    archive_write_open(w, o, NULL, out_write, NULL) != ARCHIVE_OK) {
		archive_write_free(w);
		return NULL;
	}
	return w;
}

/* A fresh header: only what a snapshot keeps, nothing else carried over. */
static struct archive_entry *
snapshot_entry(struct archive_entry *in, const char *name, const char *link)
{
	struct archive_entry	*e;
	mode_t			 type;

	if ((e = archive_entry_new()) == NULL)
		return NULL;
	type = archive_entry_filetype(in);
	archive_entry_set_pathname(e, name);
	archive_entry_set_perm(e, archive_entry_perm(in) & 07777);
	archive_entry_set_uid(e, archive_entry_uid(in));
	archive_entry_set_gid(e, archive_entry_gid(in));
	archive_entry_set_mtime(e, archive_entry_mtime(in), 0);
	if (link != NULL) {
		archive_entry_set_filetype(e, AE_IFREG);
		archive_entry_set_hardlink(e, link);
		archive_entry_set_size(e, 0);
	} else if (type == AE_IFLNK) {
		archive_entry_set_filetype(e, AE_IFLNK);
		archive_entry_set_symlink(e, archive_entry_symlink(in));
		archive_entry_set_size(e, 0);
	} else if (type == AE_IFDIR) {
		archive_entry_set_filetype(e, AE_IFDIR);
		archive_entry_set_size(e, 0);
	} else {
		archive_entry_set_filetype(e, AE_IFREG);
		archive_entry_set_size(e, archive_entry_size(in));
	}
	return e;
}

/* Copy the current member's data; -1 with the reader's or writer's error. */
static int
copy_data(struct archive *r, struct archive *w, char *err, size_t errlen)
{
	char		 buf[COPY_BUF];
	la_ssize_t	 n;

	for (;;) {
		n = archive_read_data(r, buf, sizeof(buf));
		if (n == 0)
			return 0;
		if (n < 0) {
			tar_seterr(err, errlen, "reading archive: %s", tar_arerr(r));
			errno = EIO;
			return -1;
		}
		if (archive_write_data(w, buf, (size_t)n) != n) {
			tar_seterr(err, errlen, "writing snapshot: %s", tar_arerr(w));
			return -1;
		}
	}
}

int64_t
tar_snapshot_rewrite(int in_fd, int out_fd, uint64_t max_bytes, char *err,
    size_t errlen)
{
	struct tar_out		 o;
	struct archive		*r, *w = NULL;
	struct archive_entry	*in, *e;
	const char		*name, *link, *hl;
	mode_t			 type;
	int64_t			 rv = -1;
	int			 rc, saved = EIO;

	memset(&o, 0, sizeof(o));
	o.fd = out_fd;
	o.max = max_bytes;
	if ((r = reader_open(in_fd)) == NULL) {
		tar_seterr(err, errlen, "cannot read the workspace archive");
		errno = EIO;
		return -1;
	}
	if ((w = writer_open(&o)) == NULL) {
		tar_seterr(err, errlen, "cannot start the snapshot archive");
		goto done;
	}
	while ((rc = next_header(r, &in)) == ARCHIVE_OK) {
		type = archive_entry_filetype(in);
		hl = archive_entry_hardlink(in);
		name = strip_workspace(archive_entry_pathname(in));
		if (name == NULL) {
			tar_seterr(err, errlen, "member outside the workspace: %s",
			    archive_entry_pathname(in) != NULL ?
			    archive_entry_pathname(in) : "(no name)");
			saved = EINVAL;
			goto done;
		}
		if (*name == '\0') {
			if (type != AE_IFDIR || hl != NULL) {
				tar_seterr(err, errlen,
				    "workspace root is not a directory");
				saved = EINVAL;
				goto done;
			}
			continue;
		}
		link = NULL;
		if (hl != NULL) {
			link = strip_workspace(hl);
			if (link == NULL || *link == '\0') {
				tar_seterr(err, errlen, "hard link %s points outside "
				    "the workspace: %s", name, hl);
				saved = EINVAL;
				goto done;
			}
		} else if (type != AE_IFREG && type != AE_IFDIR &&
		    type != AE_IFLNK)
			continue;	/* FIFOs, sockets, devices: not kept */
		if ((e = snapshot_entry(in, name, link)) == NULL) {
			tar_seterr(err, errlen, "out of memory");
			saved = ENOMEM;
			goto done;
		}
		rc = archive_write_header(w, e);
		archive_entry_free(e);
		if (rc < ARCHIVE_WARN) {
			tar_seterr(err, errlen, "writing snapshot: %s", tar_arerr(w));
			goto done;
		}
		if (link == NULL && type == AE_IFREG &&
		    copy_data(r, w, err, errlen) == -1) {
			saved = errno;
			goto done;
		}
		if (archive_write_finish_entry(w) < ARCHIVE_WARN) {
			tar_seterr(err, errlen, "writing snapshot: %s", tar_arerr(w));
			goto done;
		}
	}
	if (rc != ARCHIVE_EOF) {
		tar_seterr(err, errlen, "reading archive: %s", tar_arerr(r));
		goto done;
	}
	if (archive_write_close(w) != ARCHIVE_OK) {
		tar_seterr(err, errlen, "writing snapshot: %s", tar_arerr(w));
		goto done;
	}
	if (o.written > INT64_MAX) {
		tar_seterr(err, errlen, "snapshot too large");
		saved = EOVERFLOW;
		goto done;
	}
	rv = (int64_t)o.written;
 done:
	/* The callback knows best why the writer failed. */
	if (rv == -1 && o.over) {
		tar_seterr(err, errlen, "workspace exceeds the snapshot limit of "
		    "%llu bytes", (unsigned long long)max_bytes);
		saved = EFBIG;
	} else if (rv == -1 && o.err != 0)
		saved = o.err;
	if (w != NULL && rv == -1)
		tar_write_abandon(w, &o.dead);
	if (w != NULL)
		archive_write_free(w);
	archive_read_free(r);
	if (rv == -1)
		errno = saved;
	return rv;
}

int
tar_snapshot_check(int fd, char *err, size_t errlen)
{
	struct archive		*r;
	struct archive_entry	*in;
	const char		*name, *hl;
	mode_t			 type;
	int			 rc, rv = -1;

	if ((r = reader_open(fd)) == NULL) {
		tar_seterr(err, errlen, "cannot read the snapshot");
		errno = EIO;
		return -1;
	}
	while ((rc = next_header(r, &in)) == ARCHIVE_OK) {
		name = archive_entry_pathname(in);
		hl = archive_entry_hardlink(in);
		type = archive_entry_filetype(in);
		if (!name_safe(name)) {
			tar_seterr(err, errlen, "unsafe member name: %s",
			    name != NULL ? name : "(no name)");
			goto bad;
		}
		if (hl != NULL && !name_safe(hl)) {
			tar_seterr(err, errlen, "unsafe hard link target of %s: %s",
			    name, hl);
			goto bad;
		}
		if (hl == NULL && type != AE_IFREG && type != AE_IFDIR &&
		    type != AE_IFLNK) {
			tar_seterr(err, errlen, "special file in snapshot: %s",
			    name);
			goto bad;
		}
	}
	if (rc != ARCHIVE_EOF) {
		tar_seterr(err, errlen, "reading snapshot: %s", tar_arerr(r));
		archive_read_free(r);
		errno = EIO;
		return -1;
	}
	rv = 0;
 bad:
	archive_read_free(r);
	if (rv == -1)
		errno = EINVAL;
	return rv;
}

int
snapshot_id_valid(const char *id)
{
	size_t	 i;

	if (id == NULL || strncmp(id, "snap_", 5) != 0)
		return 0;
	for (i = 5; i < 5 + 16; i++)
		if (!((id[i] >= '0' && id[i] <= '9') ||
		    (id[i] >= 'a' && id[i] <= 'f')))
			return 0;
	return id[i] == '\0';
}

ssize_t
tar_first_file(int fd, uint64_t max_bytes, int out_fd)
{
	struct archive		*r;
	struct archive_entry	*in;
	char			 buf[COPY_BUF];
	uint64_t		 total = 0;
	la_ssize_t		 n;
	int			 rc, saved = ENOENT;

	if ((r = reader_open(fd)) == NULL) {
		errno = EIO;
		return -1;
	}
	while ((rc = next_header(r, &in)) == ARCHIVE_OK) {
		if (archive_entry_filetype(in) == AE_IFREG &&
		    archive_entry_hardlink(in) == NULL)
			break;
	}
	if (rc != ARCHIVE_OK) {
		saved = rc == ARCHIVE_EOF ? ENOENT : EIO;
		goto fail;
	}
	if (archive_entry_size_is_set(in) && archive_entry_size(in) >= 0 &&
	    (uint64_t)archive_entry_size(in) > max_bytes) {
		saved = EFBIG;
		goto fail;
	}
	while ((n = archive_read_data(r, buf, sizeof(buf))) > 0) {
		total += (uint64_t)n;
		if (total > max_bytes || total > SSIZE_MAX) {
			saved = EFBIG;
			goto fail;
		}
		if (write_all(out_fd, buf, (size_t)n) == -1) {
			saved = errno;
			goto fail;
		}
	}
	if (n < 0) {
		saved = EIO;
		goto fail;
	}
	archive_read_free(r);
	return (ssize_t)total;
 fail:
	archive_read_free(r);
	errno = saved;
	return -1;
}
