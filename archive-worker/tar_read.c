/*
 * Reading a tar stream: the archives Docker makes of a sandbox's files,
 * and the snapshots we wrote.  ustar, pax extended headers ('x': path,
 * linkpath, size, uid, gid, mtime) and GNU long names ('L', 'K'), read
 * from a descriptor with blocking reads, never seeking.
 *
 * Ours rather than libarchive's reader because of names: libarchive
 * converts a pax path from UTF-8 to the locale's charset, through iconv
 * in the C locale (which opens gconv modules, and the seccomp filter
 * kills that) and with Unicode normalization in a UTF-8 one; neither
 * keeps a name's bytes.  Here a name is the bytes the archive holds.
 *
 * Where formats leave a choice, this reader does what Go's archive/tar
 * does, because Docker reads and writes archives with it: a snapshot is
 * checked against the members Docker will extract from it.  Anything
 * else fails with EIO: a bad checksum, a number that does not parse,
 * sparse members, data after the end-of-archive block, or an archive
 * that stops before that block.
 */
#include <sys/types.h>

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "worker.h"

/* Offsets in a header block (POSIX.1-2001 ustar). */
#define H_NAME		0
#define H_MODE		100
#define H_UID		108
#define H_GID		116
#define H_SIZE		124
#define H_MTIME		136
#define H_CHKSUM	148
#define H_TYPE		156
#define H_LINKNAME	157
#define H_MAGIC		257
#define H_VERSION	263
#define H_PREFIX	345
#define H_STAR_TRAILER	508
#define PREFIX_LEN	155
#define STAR_PREFIX_LEN	131

static int
reader_fail(struct tar_reader *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int
reader_fail(struct tar_reader *r, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	(void)vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	r->failed = 1;
	errno = EIO;
	return -1;
}

int
tar_reader_init(struct tar_reader *r, int fd)
{
	memset(r, 0, sizeof(*r));
	r->fd = fd;
	if ((r->buf = malloc(TAR_READ_BUF)) == NULL)
		return -1;
	return 0;
}

static void
pending_clear(struct tar_reader *r)
{
	free(r->pax_path);
	free(r->pax_link);
	free(r->gnu_name);
	free(r->gnu_link);
	r->pax_path = r->pax_link = r->gnu_name = r->gnu_link = NULL;
	r->pax_has = 0;
}

static void
member_clear(struct tar_member *m)
{
	free(m->name);
	free(m->link);
	memset(m, 0, sizeof(*m));
}

void
tar_reader_free(struct tar_reader *r)
{
	pending_clear(r);
	member_clear(&r->m);
	free(r->buf);
	r->buf = NULL;
}

/* More bytes into the buffer: 1, 0 at end of file, -1 on error. */
static int
refill(struct tar_reader *r)
{
	ssize_t	 n;

	if (r->off < r->len)
		return 1;
	do {
		n = read(r->fd, r->buf, TAR_READ_BUF);
	} while (n == -1 && errno == EINTR);
	if (n == -1)
		return reader_fail(r, "reading the archive: %s",
		    strerror(errno));
	r->off = 0;
	r->len = (size_t)n;
	return n > 0;
}

/*
 * Up to len bytes into dst (NULL: dropped).  Returns what it took (0 at
 * end of file), or -1.
 */
static ssize_t
take(struct tar_reader *r, void *dst, size_t len)
{
	size_t	 n;
	int	 rc;

	if ((rc = refill(r)) <= 0)
		return rc;
	n = r->len - r->off;
	if (n > len)
		n = len;
	if (dst != NULL)
		memcpy(dst, r->buf + r->off, n);
	r->off += n;
	r->offset += n;
	return (ssize_t)n;
}

/* Exactly len bytes: 1, 0 at end of file before the first, -1. */
static int
take_all(struct tar_reader *r, void *dst, size_t len)
{
	unsigned char	*p = dst;
	size_t		 got = 0;
	ssize_t		 n;

	while (got < len) {
		if ((n = take(r, p != NULL ? p + got : NULL, len - got)) == -1)
			return -1;
		if (n == 0) {
			if (got == 0)
				return 0;
			return reader_fail(r, "the archive is truncated");
		}
		got += (size_t)n;
	}
	return 1;
}

/* Drop n bytes (data of a member nobody read, padding). */
static int
skip(struct tar_reader *r, uint64_t n)
{
	ssize_t	 k;

	while (n > 0) {
		k = take(r, NULL, n > SIZE_MAX ? SIZE_MAX : (size_t)n);
		if (k == -1)
			return -1;
		if (k == 0)
			return reader_fail(r, "the archive is truncated");
		n -= (uint64_t)k;
	}
	return 0;
}

static uint64_t
padding(uint64_t size)
{
	return (TAR_BLOCK - size % TAR_BLOCK) % TAR_BLOCK;
}

/* A header string: its bytes up to the first NUL or the field's end. */
static char *
field_string(const unsigned char *p, size_t width)
{
	const unsigned char	*nul = memchr(p, '\0', width);

	return strndup((const char *)p,
	    nul != NULL ? (size_t)(nul - p) : width);
}

/*
 * A numeric field: octal, padded with spaces and NULs at either end, or
 * base-256 when the first byte has its top bit set.  -1 if malformed.
 */
static int
field_number(const unsigned char *p, size_t width, int64_t *v)
{
	uint64_t	 x = 0;
	size_t		 i, end;
	unsigned char	 inv, c;

	if (width > 0 && (p[0] & 0x80) != 0) {
		inv = (p[0] & 0x40) != 0 ? 0xff : 0;
		for (i = 0; i < width; i++) {
			c = p[i] ^ inv;
			if (i == 0)
				c &= 0x7f;
			if ((x >> 56) != 0)
				return -1;
			x = x << 8 | c;
		}
		if ((x >> 63) != 0)
			return -1;
		*v = inv != 0 ? ~(int64_t)x : (int64_t)x;
		return 0;
	}
	for (i = 0; i < width && (p[i] == ' ' || p[i] == '\0'); i++)
		;
	for (end = width; end > i && (p[end - 1] == ' ' ||
	    p[end - 1] == '\0'); end--)
		;
	for (; i < end && p[i] != '\0'; i++) {
		if (p[i] < '0' || p[i] > '7' || (x >> 60) != 0)
			return -1;
		x = x << 3 | (uint64_t)(p[i] - '0');
	}
	if ((x >> 63) != 0)
		return -1;
	*v = (int64_t)x;
	return 0;
}

/* The stored checksum must be the sum of the bytes, unsigned or signed. */
static int
checksum_ok(const unsigned char *blk)
{
	int64_t		 stored;
	int64_t		 usum = 0, ssum = 0;
	size_t		 i;

	if (field_number(blk + H_CHKSUM, 8, &stored) == -1)
		return 0;
	for (i = 0; i < TAR_BLOCK; i++) {
		if (i >= H_CHKSUM && i < H_CHKSUM + 8) {
			usum += ' ';
			ssum += ' ';
		} else {
			usum += blk[i];
			ssum += (signed char)blk[i];
		}
	}
	return stored == usum || stored == ssum;
}

static int
block_is_zero(const unsigned char *blk)
{
	size_t	 i;

	for (i = 0; i < TAR_BLOCK; i++)
		if (blk[i] != 0)
			return 0;
	return 1;
}

/* "name", or "prefix/name" in the ustar (and star) formats. */
static char *
header_name(const unsigned char *blk)
{
	char	*name, *prefix, *both;
	size_t	 plen = PREFIX_LEN;

	if (memcmp(blk + H_MAGIC, "ustar\0", 6) != 0 ||
	    memcmp(blk + H_VERSION, "00", 2) != 0)
		return field_string(blk + H_NAME, 100);
	if (memcmp(blk + H_STAR_TRAILER, "tar\0", 4) == 0)
		plen = STAR_PREFIX_LEN;
	if ((prefix = field_string(blk + H_PREFIX, plen)) == NULL)
		return NULL;
	if ((name = field_string(blk + H_NAME, 100)) == NULL ||
	    prefix[0] == '\0') {
		free(prefix);
		return name;
	}
	if (asprintf(&both, "%s/%s", prefix, name) == -1)
		both = NULL;
	free(prefix);
	free(name);
	return both;
}

/* The data of an extended header, NUL-ended, at most max bytes. */
static char *
special_data(struct tar_reader *r, uint64_t size, uint64_t max,
    const char *what)
{
	char	*data;

	if (size > max) {
		reader_fail(r, "%s of %llu bytes is too long", what,
		    (unsigned long long)size);
		return NULL;
	}
	if ((data = malloc((size_t)size + 1)) == NULL) {
		reader_fail(r, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	if (take_all(r, data, (size_t)size) != 1 ||
	    skip(r, padding(size)) == -1) {
		if (!r->failed)
			reader_fail(r, "the archive is truncated");
		free(data);
		return NULL;
	}
	data[size] = '\0';
	return data;
}

/* A pax decimal: digits only, at most INT64_MAX. */
static int
pax_decimal(const char *s, int64_t *v)
{
	uint64_t	 x = 0;

	if (*s == '\0')
		return -1;
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9' ||
		    x > ((uint64_t)INT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -1;
		x = x * 10 + (uint64_t)(*s - '0');
	}
	*v = (int64_t)x;
	return 0;
}

/* A pax time, "[-]seconds[.fraction]": the whole seconds. */
static int
pax_time(const char *s, int64_t *v)
{
	char	 secs[32];
	size_t	 n;
	int	 neg = *s == '-';

	s += neg;
	n = strcspn(s, ".");
	if (n == 0 || n >= sizeof(secs) ||
	    (s[n] == '.' && strspn(s + n + 1, "0123456789") !=
	    strlen(s + n + 1)))
		return -1;
	memcpy(secs, s, n);
	secs[n] = '\0';
	if (pax_decimal(secs, v) == -1)
		return -1;
	if (neg)
		*v = -*v;
	return 0;
}

static int
pax_string(char **dst, const char *v, size_t vlen)
{
	if (memchr(v, '\0', vlen) != NULL)
		return -1;
	free(*dst);
	return (*dst = strndup(v, vlen)) == NULL ? -1 : 0;
}

/* One record's key and value into the pending state; -1 if refused. */
static int
pax_record(struct tar_reader *r, const char *k, const char *v, size_t vlen)
{
	int64_t	 n;
	int	 bit;

	if (strncmp(k, "GNU.sparse.", 11) == 0)
		return reader_fail(r, "sparse files are not supported");
	if (strcmp(k, "path") == 0)
		return pax_string(&r->pax_path, v, vlen);
	if (strcmp(k, "linkpath") == 0)
		return pax_string(&r->pax_link, v, vlen);
	if (strcmp(k, "size") == 0)
		bit = PAX_SIZE;
	else if (strcmp(k, "uid") == 0)
		bit = PAX_UID;
	else if (strcmp(k, "gid") == 0)
		bit = PAX_GID;
	else if (strcmp(k, "mtime") == 0)
		bit = PAX_MTIME;
	else
		return 0;	/* atime, xattrs, hdrcharset...: not ours */
	if (memchr(v, '\0', vlen) != NULL || (bit == PAX_MTIME ?
	    pax_time(v, &n) : pax_decimal(v, &n)) == -1)
		return -1;
	r->pax_has |= bit;
	r->pax_num[bit == PAX_SIZE ? 0 : bit == PAX_UID ? 1 :
	    bit == PAX_GID ? 2 : 3] = n;
	return 0;
}

/* "<len> <key>=<value>\n" records; len counts the whole record. */
static int
pax_parse(struct tar_reader *r, char *s, size_t len)
{
	char	*rec, *sp, *eq;
	size_t	 n, i;

	while (len > 0) {
		for (n = 0, i = 0; i < len && i < 8 && s[i] >= '0' &&
		    s[i] <= '9'; i++)
			n = n * 10 + (size_t)(s[i] - '0');
		if (i == 0 || i >= len || s[i] != ' ' || n < 5 || n > len ||
		    s[n - 1] != '\n')
			return reader_fail(r, "a malformed pax record");
		rec = s + i + 1;
		s[n - 1] = '\0';
		sp = s + n - 1;		/* the record's end */
		if ((eq = memchr(rec, '=', (size_t)(sp - rec))) == NULL ||
		    eq == rec || memchr(rec, '\0', (size_t)(eq - rec)) != NULL)
			return reader_fail(r, "a malformed pax record");
		*eq = '\0';
		if (pax_record(r, rec, eq + 1, (size_t)(sp - eq - 1)) == -1)
			return r->failed ? -1 :
			    reader_fail(r, "a malformed pax record: %s", rec);
		s += n;
		len -= n;
	}
	return 0;
}

/* A later 'x' header replaces an earlier one, as in Go. */
static int
read_pax(struct tar_reader *r, uint64_t size)
{
	char	*data;
	int	 rc;

	if ((data = special_data(r, size, TAR_PAX_MAX, "a pax header")) ==
	    NULL)
		return -1;
	free(r->pax_path);
	free(r->pax_link);
	r->pax_path = r->pax_link = NULL;
	r->pax_has = 0;
	rc = pax_parse(r, data, (size_t)size);
	free(data);
	return rc;
}

/* 'L' and 'K': the next member's name or link target, up to a NUL. */
static int
read_gnu_long(struct tar_reader *r, uint64_t size, char **dst)
{
	char	*data;

	if ((data = special_data(r, size, TAR_NAME_MAX, "a long name")) ==
	    NULL)
		return -1;
	free(*dst);
	*dst = strndup(data, strlen(data));
	free(data);
	if (*dst == NULL) {
		errno = ENOMEM;
		return reader_fail(r, "out of memory");
	}
	return 0;
}

static enum tar_type
member_type(char flag, const char *name, int *header_only)
{
	size_t	 len = strlen(name);

	*header_only = 1;
	switch (flag) {
	case '1':
		return TAR_HARDLINK;
	case '2':
		return TAR_SYMLINK;
	case '5':
		return TAR_DIR;
	case '3':
	case '4':
	case '6':
		return TAR_OTHER;
	case '\0':
		/* Old archives mark a directory by its trailing '/'. */
		if (len > 0 && name[len - 1] == '/')
			return TAR_DIR;
		/* FALLTHROUGH */
	case '0':
	case '7':
		*header_only = 0;
		return TAR_REG;
	default:
		*header_only = 0;	/* unknown: its data is skipped */
		return TAR_OTHER;
	}
}

/* Take over a pending string (if any) as the member's. */
static void
take_pending(char **dst, char **pending)
{
	if (*pending == NULL)
		return;
	free(*dst);
	*dst = *pending;
	*pending = NULL;
}

/* The member of a header block, with what the extended headers said. */
static int
member_make(struct tar_reader *r, const unsigned char *blk, int64_t size)
{
	struct tar_member	*m = &r->m;
	int64_t			 mode, uid, gid, mtime;
	int			 header_only;

	if (field_number(blk + H_MODE, 8, &mode) == -1 ||
	    field_number(blk + H_UID, 8, &uid) == -1 ||
	    field_number(blk + H_GID, 8, &gid) == -1 ||
	    field_number(blk + H_MTIME, 12, &mtime) == -1)
		return reader_fail(r, "a header with a malformed number");
	if ((m->name = header_name(blk)) == NULL ||
	    (m->link = field_string(blk + H_LINKNAME, 100)) == NULL) {
		errno = ENOMEM;
		return reader_fail(r, "out of memory");
	}
	take_pending(&m->name, &r->gnu_name);
	take_pending(&m->link, &r->gnu_link);
	take_pending(&m->name, &r->pax_path);
	take_pending(&m->link, &r->pax_link);
	if (r->pax_has & PAX_SIZE)
		size = r->pax_num[0];
	m->uid = (uint64_t)((r->pax_has & PAX_UID) ? r->pax_num[1] : uid);
	m->gid = (uint64_t)((r->pax_has & PAX_GID) ? r->pax_num[2] : gid);
	m->mtime = (r->pax_has & PAX_MTIME) ? r->pax_num[3] : mtime;
	m->mode = (uint32_t)(mode & 07777);
	m->typeflag = (char)blk[H_TYPE];
	m->type = member_type(m->typeflag, m->name, &header_only);
	if (size < 0)
		return reader_fail(r, "a member of negative size");
	m->size = header_only ? 0 : (uint64_t)size;
	if (m->type != TAR_SYMLINK && m->type != TAR_HARDLINK) {
		free(m->link);
		m->link = NULL;
	}
	pending_clear(r);
	r->data_left = m->size;
	r->pad_left = padding(m->size);
	return 0;
}

/* After a zero block: a second one (or the end of the file) ends it. */
static int
end_of_archive(struct tar_reader *r, unsigned char *blk)
{
	int	 rc;

	if ((rc = take_all(r, blk, TAR_BLOCK)) == -1)
		return -1;
	if (rc == 1 && !block_is_zero(blk))
		return reader_fail(r, "data after the end of the archive");
	if (r->pax_has != 0 || r->pax_path != NULL || r->pax_link != NULL ||
	    r->gnu_name != NULL || r->gnu_link != NULL)
		return reader_fail(r, "an extended header without a member");
	r->ended = 1;
	return 0;
}

/* One header block: 1 a member, 0 the end, 2 an extended header, -1. */
static int
next_block(struct tar_reader *r)
{
	unsigned char	 blk[TAR_BLOCK];
	int64_t		 size;
	int		 rc;

	if ((rc = take_all(r, blk, TAR_BLOCK)) == -1)
		return -1;
	if (rc == 0)
		return reader_fail(r, "the archive ends without its "
		    "end-of-archive blocks");
	if (block_is_zero(blk))
		return end_of_archive(r, blk);
	if (!checksum_ok(blk))
		return reader_fail(r, "not a tar header (bad checksum at "
		    "offset %llu)", (unsigned long long)(r->offset - TAR_BLOCK));
	if (field_number(blk + H_SIZE, 12, &size) == -1 || size < 0)
		return reader_fail(r, "a header with a malformed size");
	switch (blk[H_TYPE]) {
	case 'x':
		return read_pax(r, (uint64_t)size) == -1 ? -1 : 2;
	case 'g':
		/* Global records: Docker ignores them, so do we. */
		pending_clear(r);
		return skip(r, (uint64_t)size + padding((uint64_t)size)) ==
		    -1 ? -1 : 2;
	case 'L':
		return read_gnu_long(r, (uint64_t)size, &r->gnu_name) == -1 ?
		    -1 : 2;
	case 'K':
		return read_gnu_long(r, (uint64_t)size, &r->gnu_link) == -1 ?
		    -1 : 2;
	case 'S':
		return reader_fail(r, "sparse files are not supported");
	default:
		return member_make(r, blk, size) == -1 ? -1 : 1;
	}
}

int
tar_next(struct tar_reader *r, struct tar_member **mp)
{
	int	 rc;

	*mp = NULL;
	if (r->failed) {
		errno = EIO;
		return -1;
	}
	if (r->ended)
		return 0;
	if (skip(r, r->data_left + r->pad_left) == -1)
		return -1;
	r->data_left = 0;
	r->pad_left = 0;
	member_clear(&r->m);
	while ((rc = next_block(r)) == 2)
		;
	if (rc == 1)
		*mp = &r->m;
	return rc;
}

ssize_t
tar_data(struct tar_reader *r, void *buf, size_t len)
{
	ssize_t	 n;

	if (r->failed) {
		errno = EIO;
		return -1;
	}
	if (r->data_left == 0)
		return 0;
	if (len > r->data_left)
		len = (size_t)r->data_left;
	if ((n = take(r, buf, len)) == -1)
		return -1;
	if (n == 0)
		return reader_fail(r, "the archive is truncated");
	r->data_left -= (uint64_t)n;
	return n;
}

uint64_t
tar_offset(const struct tar_reader *r)
{
	return r->offset;
}

const char *
tar_error(const struct tar_reader *r)
{
	return r->err[0] != '\0' ? r->err : "a broken archive";
}
