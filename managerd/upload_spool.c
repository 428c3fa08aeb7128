/*
 * The files an upload's body is spooled into (API.md §4.10): unnamed in
 * <data_dir>/uploads/, so that nothing outlives its request, and what a
 * crash left there with a name removed at the next start.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "managerd.h"

#define UPLOADS_DIR	"uploads"

/* An unnamed file in uploads/, which is made if it is missing. */
static int
spool_tmpfile(void)
{
	int	 flags = O_TMPFILE | O_RDWR | O_CLOEXEC, fd;

	fd = openat(env->datadir_fd, UPLOADS_DIR, flags, 0600);
	if (fd == -1 && errno == ENOENT) {
		if (mkdirat(env->datadir_fd, UPLOADS_DIR, 0700) == -1 &&
		    errno != EEXIST)
			return -1;
		fd = openat(env->datadir_fd, UPLOADS_DIR, flags, 0600);
	}
	return fd;
}

/* Without O_TMPFILE: a fresh name, gone again at once. */
static int
spool_named(void)
{
	unsigned char	 raw[8];
	char		 name[sizeof(UPLOADS_DIR) + 32];
	size_t		 i, n;
	int		 fd, saved;

	arc4random_buf(raw, sizeof(raw));
	n = (size_t)snprintf(name, sizeof(name), "%s/", UPLOADS_DIR);
	for (i = 0; i < sizeof(raw); i++)
		n += (size_t)snprintf(name + n, sizeof(name) - n, "%02x",
		    raw[i]);
	strlcat(name, ".spool", sizeof(name));
	fd = openat(env->datadir_fd, name, O_RDWR | O_CREAT | O_EXCL |
	    O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd == -1)
		return -1;
	if (unlinkat(env->datadir_fd, name, 0) == -1) {
		saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

int
upload_spool_open(int tmpfile)
{
	int	 fd;

	if (tmpfile && (fd = spool_tmpfile()) != -1)
		return fd;
	/* Kernels before 3.11 (EISDIR) and some file systems lack it. */
	if (tmpfile && errno != EOPNOTSUPP && errno != EISDIR &&
	    errno != EINVAL)
		return -1;
	if ((fd = spool_named()) == -1 && errno == ENOENT &&
	    mkdirat(env->datadir_fd, UPLOADS_DIR, 0700) == 0)
		fd = spool_named();
	return fd;
}

void
upload_leftovers_remove(void)
{
	struct dirent	*de;
	DIR		*d;
	int		 fd;

	if (mkdirat(env->datadir_fd, UPLOADS_DIR, 0700) == -1 &&
	    errno != EEXIST)
		log_warn("cannot create %s", UPLOADS_DIR);
	fd = openat(env->datadir_fd, UPLOADS_DIR,
	    O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd == -1 || (d = fdopendir(fd)) == NULL) {
		log_warn("cannot look for upload leftovers");
		if (fd != -1)
			close(fd);
		return;
	}
	/* A spool lives for one request: whatever has a name is left over. */
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) == -1)
			log_warn("cannot remove %s/%s", UPLOADS_DIR,
			    de->d_name);
	}
	closedir(d);
}
