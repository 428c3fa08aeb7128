/*
 * SPOOL: an upload's body, as the client sent it, from apid's pipe into
 * the spool file managerd made, so that the upload's tar can say the
 * size before its first byte.  Nothing here looks at the bytes.
 */
#include <sys/types.h>

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "worker.h"

#define COPY_BUF	(256 * 1024)	/* a bulk pipe holds 1 MiB */

int
job_spool(const struct archive_job *j, const int fds[2],
    struct job_result *res)
{
	static char	 buf[COPY_BUF];
	ssize_t		 n;

	for (;;) {
		n = read(fds[0], buf, sizeof(buf));
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return job_fail(res, errno, "reading the body: %s",
			    strerror(errno));
		if (n == 0)
			return 0;
		if ((uint64_t)n > j->max_bytes - res->bytes)
			return job_fail(res, EFBIG, "the body is larger than "
			    "%llu bytes", (unsigned long long)j->max_bytes);
		if (write_all(fds[1], buf, (size_t)n) == -1)
			return job_fail(res, errno, "writing the spool file: "
			    "%s", strerror(errno));
		res->bytes += (uint64_t)n;
	}
}
