/*
 * Writing a tar with libarchive into a descriptor: a snapshot, or the
 * tar of an upload.  Names go out as the bytes they are (hdrcharset
 * BINARY: no conversion, so libarchive never reaches iconv); the write
 * callback counts what goes out and refuses past the limit, and a
 * writer given up on writes nothing more.
 */
#include <sys/types.h>

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <archive.h>

#include "worker.h"

#define SNAPSHOT_BLOCK	(64 * 1024)	/* each write(2) of a snapshot */
/*
 * Each write(2) of an upload's tar into the proxy's pipe: every write
 * wakes the proxy, and at tar's 10 KiB record a 10 MiB upload was a
 * thousand wake-ups, which on a small host competed with Docker's own
 * unpacking of the same bytes.
 */
#define UPLOAD_BLOCK	(256 * 1024)
#define TAR_RECORD	10240		/* tar's record: the last write */

static la_ssize_t
out_write(struct archive *a, void *arg, const void *buf, size_t len)
{
	struct tar_out	*o = arg;

	if (o->dead) {
		archive_set_error(a, EIO, "the archive was given up");
		return -1;
	}
	if (o->over || len > o->max - o->written) {
		o->over = 1;
		archive_set_error(a, EFBIG, "past the size limit");
		return -1;
	}
	if (write_all(o->fd, buf, len) == -1) {
		o->err = errno;
		archive_set_error(a, errno, "write: %s", strerror(errno));
		return -1;
	}
	o->written += len;
	writeback_note(&o->wb, o->fd, o->written);
	return (la_ssize_t)len;
}

/*
 * A snapshot is ustar with pax only for what ustar cannot say (long
 * names, large ids), in 64 KiB writes; an upload's tar is pax, so that
 * the mtimes of existing directories keep their nanoseconds, in 256 KiB
 * writes.  Either ends padded to tar's record.
 */
static int
out_format(struct archive *a, int format)
{
	int	 upload = format == TAR_OUT_UPLOAD;

	if ((upload ? archive_write_set_format_pax(a) :
	    archive_write_set_format_pax_restricted(a)) != ARCHIVE_OK)
		return -1;
	return archive_write_set_bytes_per_block(a, upload ? UPLOAD_BLOCK :
	    SNAPSHOT_BLOCK) == ARCHIVE_OK &&
	    archive_write_set_bytes_in_last_block(a, TAR_RECORD) ==
	    ARCHIVE_OK ? 0 : -1;
}

int
tar_out_open(struct tar_out *o, int fd, uint64_t max, int format)
{
	memset(o, 0, sizeof(*o));
	o->fd = fd;
	o->max = max;
	/* An upload goes to the proxy's pipe or a spool nobody fsyncs. */
	o->wb.off = format == TAR_OUT_UPLOAD;
	if ((o->a = archive_write_new()) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	if (out_format(o->a, format) == -1 ||
	    archive_write_set_options(o->a, "hdrcharset=BINARY") !=
	    ARCHIVE_OK ||
	    archive_write_open(o->a, o, NULL, out_write, NULL) !=
	    ARCHIVE_OK) {
		archive_write_free(o->a);
		o->a = NULL;
		errno = EIO;
		return -1;
	}
	return 0;
}

/*
 * Nothing more reaches the descriptor (the callback refuses once dead
 * is set), so no padding or end blocks make a broken archive look
 * whole.  It is still closed: libarchive (3.6) frees its output block
 * only on close, which archive_write_free skips for a failed archive.
 */
void
tar_out_abandon(struct tar_out *o)
{
	o->dead = 1;
	archive_write_fail(o->a);
	(void)archive_write_close(o->a);
}

int
tar_out_close(struct tar_out *o)
{
	return archive_write_close(o->a) == ARCHIVE_OK ? 0 : -1;
}

void
tar_out_free(struct tar_out *o)
{
	if (o->a != NULL)
		archive_write_free(o->a);
	o->a = NULL;
}

const char *
tar_out_error(struct tar_out *o)
{
	const char	*s;

	if (o->err != 0)
		return strerror(o->err);
	if ((s = archive_error_string(o->a)) != NULL)
		return s;
	return "unknown archive error";
}
