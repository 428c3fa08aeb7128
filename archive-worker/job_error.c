/*
 * How a job says what went wrong: an errno and a line of text for
 * apid's logs and error replies.  Names in that text come from the
 * sandbox, so they are shown escaped: a newline or a byte that is not
 * UTF-8 must not reach a log line or a JSON string as it is.  And how
 * it writes: all of a buffer, and a snapshot file's writeback.
 */
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "worker.h"

int
job_fail(struct job_result *res, int errnum, const char *fmt, ...)
{
	va_list	 ap;

	res->errnum = errnum != 0 ? errnum : EIO;
	res->bytes = 0;
	va_start(ap, fmt);
	(void)vsnprintf(res->message, sizeof(res->message), fmt, ap);
	va_end(ap);
	return -1;
}

const char *
name_quote(const char *name, char *buf, size_t size)
{
	static const char	 hex[] = "0123456789abcdef";
	const unsigned char	*p = (const unsigned char *)name;
	size_t			 n = 0;

	if (size < 8)
		return "";
	if (name == NULL) {
		strlcpy(buf, "(no name)", size);
		return buf;
	}
	for (; *p != '\0'; p++) {
		if (n + 4 + 4 > size) {		/* room for \xHH and "..." */
			memcpy(buf + n, "...", 4);
			return buf;
		}
		if (*p >= 0x20 && *p < 0x7f && *p != '\\') {
			buf[n++] = (char)*p;
			continue;
		}
		buf[n++] = '\\';
		buf[n++] = 'x';
		buf[n++] = hex[*p >> 4];
		buf[n++] = hex[*p & 0xf];
	}
	buf[n] = '\0';
	return buf;
}

int
write_all(int fd, const void *buf, size_t len)
{
	const char	*p = buf;
	ssize_t		 n;

	while (len > 0) {
		n = write(fd, p, len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * written bytes are in the file.  Every WRITEBACK_STEP of them the
 * kernel is told to start writing them out, without waiting, so that
 * the fsync that makes a snapshot durable (managerd's) finds most of it
 * on disk: the disk works while Docker's tar still comes, not after.
 * Only a hint; a failure (the descriptor is no file) shows in that
 * fsync if anywhere, and ends the hints.
 */
void
writeback_note(struct writeback *wb, int fd, uint64_t written)
{
	if (wb->off || written - wb->started < WRITEBACK_STEP)
		return;
	if (sync_file_range(fd, (off_t)wb->started,
	    (off_t)(written - wb->started), SYNC_FILE_RANGE_WRITE) == -1)
		wb->off = 1;
	wb->started = written;
}
