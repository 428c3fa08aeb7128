/*
 * Record files in the data directory, sandbox records (store.c) and
 * snapshot records (store_snapshot.c) alike: a file is replaced
 * atomically (temp file, fsync, rename, fsync of the directory) and read
 * back whole, bounded by STORE_RECORD_MAX.
 *
 * Only openat, renameat, unlinkat, fsync, fstat and plain
 * read/write/close are used: managerd is chrooted into the data directory
 * and under seccomp when this runs.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "managerd.h"

static int
write_all(int fd, const char *p, size_t len)
{
	ssize_t	 n;

	while (len > 0) {
		if ((n = write(fd, p, len)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0) {
			errno = EIO;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int
store_sync_dir(int datafd, const char *dir)
{
	int	 fd, saved;

	if ((fd = openat(datafd, dir,
	    O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return -1;
	if (fsync(fd) == -1) {
		saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	return close(fd);
}

int
store_write_file(int datafd, const char *dir, const char *tmp,
    const char *dst, const char *text)
{
	int	 fd = -1, made = 0, saved;

	if ((fd = openat(datafd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
	    O_NOFOLLOW, 0600)) == -1)
		goto fail;
	made = 1;
	if (write_all(fd, text, strlen(text)) == -1 || fsync(fd) == -1)
		goto fail;
	if (close(fd) == -1) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	if (renameat(datafd, tmp, datafd, dst) == -1)
		goto fail;
	made = 0;
	if (store_sync_dir(datafd, dir) == -1)
		goto fail;
	return 0;
fail:
	saved = errno;
	if (fd != -1)
		close(fd);
	if (made)
		(void)unlinkat(datafd, tmp, 0);
	errno = saved;
	return -1;
}

enum store_read
store_read_file(int dfd, const char *name, char **textp)
{
	struct stat	 st;
	char		*buf = NULL;
	size_t		 size, got = 0;
	ssize_t		 n;
	int		 fd, saved;
	enum store_read	 res = STORE_READ_BAD;

	*textp = NULL;
	/* No following symlinks, no blocking on a FIFO. */
	if ((fd = openat(dfd, name,
	    O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)) == -1)
		return errno == ELOOP ? STORE_READ_BAD : STORE_READ_FAILED;
	if (fstat(fd, &st) == -1) {
		res = STORE_READ_FAILED;
		goto done;
	}
	if (S_ISDIR(st.st_mode)) {
		errno = EISDIR;
		res = STORE_READ_FAILED;
		goto done;
	}
	if (!S_ISREG(st.st_mode) || st.st_size < 0 ||
	    st.st_size > STORE_RECORD_MAX)
		goto done;
	size = (size_t)st.st_size;
	/* One byte more than fstat said, to notice a file that grew. */
	if ((buf = malloc(size + 2)) == NULL) {
		res = STORE_READ_FAILED;
		goto done;
	}
	while (got <= size) {
		if ((n = read(fd, buf + got, size + 1 - got)) == -1) {
			if (errno == EINTR)
				continue;
			res = STORE_READ_FAILED;
			goto done;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	if (got != size || memchr(buf, '\0', got) != NULL)
		goto done;
	buf[got] = '\0';
	*textp = buf;
	buf = NULL;
	res = STORE_READ_OK;
done:
	saved = errno;
	free(buf);
	close(fd);
	errno = saved;
	return res;
}
