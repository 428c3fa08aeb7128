/*
 * bulk_pipe.c: a pipe2() for bulk bytes (tar streams, file contents),
 * grown to BULK_PIPE_SIZE, for apid and managerd, which both make them.
 */
#ifndef AS_BULK_PIPE_H
#define AS_BULK_PIPE_H

#define BULK_PIPE_SIZE	(1024 * 1024)

/* pipe2(fds, O_CLOEXEC | flags); a refused size leaves 64 KiB. */
int	bulk_pipe(int fds[2], int flags);

#endif /* AS_BULK_PIPE_H */
