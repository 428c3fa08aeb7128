/*
 * Pipes that carry bulk bytes: tar streams and file contents.  A pipe
 * holds 64 KiB by default, so a large transfer costs a switch between
 * writer and reader every 64 KiB; at 1 MiB (what an unprivileged process
 * may ask for, /proc/sys/fs/pipe-max-size) the switches are sixteen
 * times rarer while what is in flight stays bounded.  A kernel that
 * refuses the larger size leaves a working, smaller pipe.
 */
#include <fcntl.h>
#include <unistd.h>

#include "bulk_pipe.h"

int
bulk_pipe(int fds[2], int flags)
{
	if (pipe2(fds, O_CLOEXEC | flags) == -1)
		return -1;
	(void)fcntl(fds[1], F_SETPIPE_SZ, BULK_PIPE_SIZE);
	return 0;
}
