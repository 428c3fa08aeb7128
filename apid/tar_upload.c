/*
 * The tar an upload travels in (API.md §6.3): a directory member for
 * every parent of the name, then the file, as FILE_WRITE_READY describes
 * them, written to a descriptor (the pipe managerd hands to the proxy,
 * which gives it to Docker's archive PUT).  Runs on a tar job's thread.
 */
#include <sys/types.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>
#include <event2/buffer.h>

#include "apid.h"
#include "tar_snapshot.h"

#define UPLOAD_BLOCK	10240

struct upload_out {
	int		 fd;
	uint64_t	 written;
	int		 err;		/* errno of a failed write(2) */
	int		 dead;		/* failed: write nothing more */
};

static la_ssize_t
upload_write(struct archive *a, void *arg, const void *buf, size_t len)
{
	struct upload_out	*o = arg;
	const char		*p = buf;
	size_t			 left = len;
	ssize_t			 n;

	if (o->dead) {
		archive_set_error(a, EIO, "the upload failed");
		return -1;
	}
	while (left > 0) {
		n = write(o->fd, p, left);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			o->err = errno;
			archive_set_error(a, errno, "write: %s",
			    strerror(errno));
			return -1;
		}
		p += n;
		left -= (size_t)n;
	}
	o->written += len;
	return (la_ssize_t)len;
}

static int
add_member(struct archive *w, const char *name, mode_t type, mode_t perm,
    const struct file_write_ready *fw, int64_t size)
{
	struct archive_entry	*e;
	int			 rc;

	if ((e = archive_entry_new()) == NULL)
		return -1;
	archive_entry_set_pathname(e, name);
	archive_entry_set_filetype(e, type);
	archive_entry_set_perm(e, perm);
	archive_entry_set_uid(e, fw->uid);
	archive_entry_set_gid(e, fw->gid);
	archive_entry_set_mtime(e, fw->mtime, 0);
	archive_entry_set_size(e, size);
	rc = archive_write_header(w, e);
	archive_entry_free(e);
	return rc < ARCHIVE_WARN ? -1 : 0;
}

/* "a/", "a/b/" for "a/b/f.txt": each parent, in order, as a directory. */
static int
add_parents(struct archive *w, const struct file_write_ready *fw)
{
	const char	*slash;
	char		*dir;
	size_t		 len;
	int		 rc;

	for (slash = strchr(fw->name, '/'); slash != NULL;
	    slash = strchr(slash + 1, '/')) {
		len = (size_t)(slash - fw->name) + 1;
		if (len == 1 || slash[-1] == '/')
			continue;	/* "/x" or "a//b": no empty member */
		if ((dir = strndup(fw->name, len)) == NULL)
			return -1;
		rc = add_member(w, dir, AE_IFDIR, 0755, fw, 0);
		free(dir);
		if (rc == -1)
			return -1;
	}
	return 0;
}

/* Hand the body to the writer chain by chain, releasing what went. */
static int
add_body(struct archive *w, struct evbuffer *body)
{
	unsigned char	*p;
	size_t		 n;

	while ((n = evbuffer_get_contiguous_space(body)) > 0) {
		if ((p = evbuffer_pullup(body, (ssize_t)n)) == NULL)
			return -1;
		if (archive_write_data(w, p, n) != (la_ssize_t)n)
			return -1;
		if (evbuffer_drain(body, n) == -1)
			return -1;
	}
	return 0;
}

int64_t
tar_upload(int out_fd, const struct file_write_ready *fw,
    struct evbuffer *body, char *err, size_t errlen)
{
	struct upload_out	 o;
	struct archive		*w;
	size_t			 len = evbuffer_get_length(body);
	int64_t			 rv = -1;
	int			 saved = EIO;

	memset(&o, 0, sizeof(o));
	o.fd = out_fd;
	if (fw->name == NULL || fw->name[0] == '\0' ||
	    fw->name[strlen(fw->name) - 1] == '/' || len > INT64_MAX) {
		tar_seterr(err, errlen, "cannot upload to this name");
		errno = EINVAL;
		return -1;
	}
	if ((w = archive_write_new()) == NULL) {
		tar_seterr(err, errlen, "out of memory");
		errno = ENOMEM;
		return -1;
	}
	/* ustar, with a pax header only for what ustar cannot say. */
	if (archive_write_set_format_pax_restricted(w) != ARCHIVE_OK ||
	    archive_write_set_options(w, "hdrcharset=BINARY") != ARCHIVE_OK ||
	    archive_write_set_bytes_per_block(w, UPLOAD_BLOCK) != ARCHIVE_OK ||
	    archive_write_open(w, &o, NULL, upload_write, NULL) !=
	    ARCHIVE_OK) {
		tar_seterr(err, errlen, "cannot start the upload archive: %s",
		    tar_arerr(w));
		goto done;
	}
	if (add_parents(w, fw) == -1 ||
	    add_member(w, fw->name, AE_IFREG, fw->mode & 07777, fw,
	    (int64_t)len) == -1 ||
	    add_body(w, body) == -1 ||
	    archive_write_finish_entry(w) < ARCHIVE_WARN ||
	    archive_write_close(w) != ARCHIVE_OK) {
		tar_seterr(err, errlen, "writing the upload archive: %s",
		    o.err != 0 ? strerror(o.err) : tar_arerr(w));
		goto done;
	}
	if (o.written > INT64_MAX) {
		saved = EOVERFLOW;
		goto done;
	}
	rv = (int64_t)o.written;
 done:
	if (rv == -1 && o.err != 0)
		saved = o.err;
	/*
	 * A failed archive must not be closed cleanly: closing pads a short
	 * member with zeros and ends the tar, which Docker would accept.
	 */
	if (rv == -1)
		tar_write_abandon(w, &o.dead);
	archive_write_free(w);
	if (rv == -1)
		errno = saved;
	return rv;
}
