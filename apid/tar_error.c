/*
 * How the tar code (tar_snapshot.c, tar_upload.c) words its errors: into
 * the caller's buffer, with libarchive's own text where it has one.
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
