/*
 * How the tar code (tar_snapshot.c, tar_upload.c) words its errors: into
 * the caller's buffer, with libarchive's own text where it has one; and
 * how it gives up on an archive it was writing.
 */
#include <stdarg.h>
#include <stdio.h>

#include <archive.h>

#include "tar_snapshot.h"

void
tar_seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list	 ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	(void)vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

const char *
tar_arerr(struct archive *a)
{
	const char	*s = archive_error_string(a);

	return s != NULL ? s : "unknown archive error";
}

/*
 * Give up on a writer: nothing more reaches the output (the write
 * callback refuses once *dead is set), so no padding or end blocks make
 * a broken archive look whole.  It is still closed: libarchive (3.6)
 * frees its output block only on close, which archive_write_free skips
 * for an archive in the failed state.
 */
void
tar_write_abandon(struct archive *w, int *dead)
{
	*dead = 1;
	archive_write_fail(w);
	(void)archive_write_close(w);
}
