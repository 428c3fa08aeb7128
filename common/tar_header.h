/*
 * Tar header blocks for the two processes that read tar streams: the
 * archive worker (every archive Docker makes of a sandbox, and our
 * snapshots) and dockerd-proxy (every archive written into a sandbox).
 * ustar and star headers, pax extended records ('x') and GNU long names
 * ('L', 'K'), read the way Go's archive/tar reads them, since Docker
 * extracts with it.  How the blocks arrive is each reader's own: a
 * blocking descriptor in the worker, event-driven pieces in the proxy.
 *
 * Errors are static strings: NULL means the block or record was fine.
 */
#ifndef AS_TAR_HEADER_H
#define AS_TAR_HEADER_H

#include <stddef.h>
#include <stdint.h>

#define TAR_BLOCK	512
#define TAR_NAME_MAX	(64 * 1024)	/* a pax path or a GNU long name */
#define TAR_PAX_MAX	(1024 * 1024)	/* one pax header's records */

/* Offsets of the POSIX.1-2001 ustar header fields. */
#define TAR_H_NAME	0
#define TAR_H_MODE	100
#define TAR_H_UID	108
#define TAR_H_GID	116
#define TAR_H_SIZE	124
#define TAR_H_MTIME	136
#define TAR_H_CHKSUM	148
#define TAR_H_TYPE	156
#define TAR_H_LINKNAME	157
#define TAR_H_MAGIC	257
#define TAR_H_VERSION	263
#define TAR_H_PREFIX	345

enum tar_type {
	TAR_REG,
	TAR_DIR,
	TAR_SYMLINK,
	TAR_HARDLINK,
	TAR_OTHER		/* devices, FIFOs, unknown types */
};

struct tar_member {
	enum tar_type	 type;
	char		 typeflag;
	char		*name;		/* bytes, NUL-ended */
	char		*link;		/* symlink or hard link; else NULL */
	uint32_t	 mode;		/* permission bits */
	uint64_t	 uid;
	uint64_t	 gid;
	int64_t		 mtime;
	uint64_t	 size;		/* data bytes that follow */
	int		 xattrs;	/* pax records gave it xattrs */
};

#define PAX_SIZE	0x01
#define PAX_UID		0x02
#define PAX_GID		0x04
#define PAX_MTIME	0x08
#define PAX_XATTR	0x10	/* SCHILY.xattr.* or LIBARCHIVE.xattr.* */

/* What the extended headers before a member said about it. */
struct tar_ext {
	char		*pax_path;
	char		*pax_link;
	char		*gnu_name;
	char		*gnu_link;
	int		 pax_has;	/* PAX_* */
	int64_t		 pax_num[4];	/* size, uid, gid, mtime */
};

extern const char tar_enomem[];		/* "out of memory" */

uint64_t	 tar_padding(uint64_t size);
int		 tar_block_is_zero(const unsigned char *);
/* Octal (space or NUL padded) or GNU base-256: 0, or -1 if malformed. */
int		 tar_number(const unsigned char *, size_t width, int64_t *);
/* Octal digits and a NUL where they fit, else base-256. */
void		 tar_number_put(unsigned char *, size_t width, uint64_t);
int		 tar_checksum_ok(const unsigned char *blk);
void		 tar_checksum_put(unsigned char *blk);
/* A header block's data size (0 or more), or -1. */
int		 tar_header_size(const unsigned char *blk, int64_t *);

/* An 'x' header's records (s is changed); a later one replaces all. */
const char	*tar_pax_parse(struct tar_ext *, char *s, size_t len);
/* An 'L' or 'K' header's data, up to its first NUL, into *dst. */
const char	*tar_gnu_long(char **dst, const char *data, size_t len);
int		 tar_ext_pending(const struct tar_ext *);
void		 tar_ext_clear(struct tar_ext *);

/*
 * The member a header block describes with what ext said, which is
 * then cleared; m is cleared first.  size is the block's own.
 */
const char	*tar_member_make(struct tar_member *, struct tar_ext *,
		    const unsigned char *blk, int64_t size);
void		 tar_member_clear(struct tar_member *);

#endif /* AS_TAR_HEADER_H */
