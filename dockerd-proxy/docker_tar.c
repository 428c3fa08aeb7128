/*
 * A ustar archive of exactly one directory entry, built by hand: the
 * upload that gives /workspace to the sandbox user.  Docker applies the
 * header's uid, gid and mode to an existing directory it extracts over,
 * so no process has to run in the container to chown the volume.
 */
#include <string.h>

#include "proxy.h"

/* Offsets and sizes of POSIX ustar header fields. */
#define T_NAME		0
#define T_NAME_LEN	100
#define T_MODE		100
#define T_UID		108
#define T_GID		116
#define T_SIZE		124
#define T_MTIME		136
#define T_CHKSUM	148
#define T_TYPEFLAG	156
#define T_MAGIC		257
#define T_VERSION	263

/*
 * A numeric field: octal digits and a NUL when they fit, else GNU's
 * base-256 form (the top bit of the first byte set), which Go's
 * archive/tar and libarchive both read.
 */
static void
tar_number(unsigned char *field, size_t width, unsigned long long v)
{
	unsigned long long	 max = 1;
	size_t			 i;

	for (i = 0; i < width - 1; i++)
		max *= 8;
	if (v < max) {
		field[width - 1] = '\0';
		for (i = width - 1; i > 0; i--) {
			field[i - 1] = (unsigned char)('0' + (v & 7));
			v >>= 3;
		}
		return;
	}
	for (i = width; i > 1; i--) {
		field[i - 1] = (unsigned char)(v & 0xff);
		v >>= 8;
	}
	field[0] = 0x80;
}

int
tar_dir_archive(unsigned char out[TAR_DIR_ARCHIVE_LEN], const char *name,
    unsigned int mode, uint32_t uid, uint32_t gid, long long mtime)
{
	unsigned char	*h = out;
	unsigned int	 sum = 0;
	size_t		 i, len;

	len = strlen(name);
	if (len == 0 || len >= T_NAME_LEN || name[len - 1] != '/' ||
	    mode > 07777 || mtime < 0)
		return -1;
	memset(out, 0, TAR_DIR_ARCHIVE_LEN);
	memcpy(h + T_NAME, name, len);
	tar_number(h + T_MODE, 8, mode);
	tar_number(h + T_UID, 8, uid);
	tar_number(h + T_GID, 8, gid);
	tar_number(h + T_SIZE, 12, 0);
	tar_number(h + T_MTIME, 12, (unsigned long long)mtime);
	h[T_TYPEFLAG] = '5';
	memcpy(h + T_MAGIC, "ustar", 6);
	memcpy(h + T_VERSION, "00", 2);
	/* The checksum counts its own field as eight spaces. */
	memset(h + T_CHKSUM, ' ', 8);
	for (i = 0; i < TAR_BLOCK; i++)
		sum += h[i];
	tar_number(h + T_CHKSUM, 7, sum);
	h[T_CHKSUM + 7] = ' ';
	/* The two zero blocks that end the archive are already there. */
	return 0;
}
