/*
 * A ustar archive of exactly one directory entry, built by hand: the
 * upload that gives /workspace to the sandbox user.  Docker applies the
 * header's uid, gid and mode to an existing directory it extracts over,
 * so no process has to run in the container to chown the volume.
 */
#include <string.h>

#include "proxy.h"
#include "tar_header.h"

int
tar_dir_archive(unsigned char out[TAR_DIR_ARCHIVE_LEN], const char *name,
    unsigned int mode, uint32_t uid, uint32_t gid, long long mtime)
{
	unsigned char	*h = out;
	size_t		 len;

	len = strlen(name);
	if (len == 0 || len >= 100 || name[len - 1] != '/' ||
	    mode > 07777 || mtime < 0)
		return -1;
	memset(out, 0, TAR_DIR_ARCHIVE_LEN);
	memcpy(h + TAR_H_NAME, name, len);
	tar_number_put(h + TAR_H_MODE, 8, mode);
	tar_number_put(h + TAR_H_UID, 8, uid);
	tar_number_put(h + TAR_H_GID, 8, gid);
	tar_number_put(h + TAR_H_SIZE, 12, 0);
	tar_number_put(h + TAR_H_MTIME, 12, (uint64_t)mtime);
	h[TAR_H_TYPE] = '5';
	memcpy(h + TAR_H_MAGIC, "ustar", 6);
	memcpy(h + TAR_H_VERSION, "00", 2);
	tar_checksum_put(h);
	/* The two zero blocks that end the archive are already there. */
	return 0;
}
