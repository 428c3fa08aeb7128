/*
 * Reading a tar stream: the archives Docker makes of a sandbox's files,
 * and the snapshots we wrote, from a descriptor with blocking reads,
 * never seeking.  The format (ustar, pax 'x' records, GNU long names) is
 * common/tar_header.c's, shared with dockerd-proxy's check of what it
 * writes into a sandbox.
 *
 * Ours rather than libarchive's reader because of names: libarchive
 * converts a pax path from UTF-8 to the locale's charset, through iconv
 * in the C locale (which opens gconv modules, and the seccomp filter
 * kills that) and with Unicode normalization in a UTF-8 one; neither
 * keeps a name's bytes.  Here a name is the bytes the archive holds.
 *
 * Anything Go's archive/tar (Docker's) would read differently fails with
 * EIO: a bad checksum, a number that does not parse, sparse members,
 * data after the end-of-archive block, or an archive that stops before
 * that block.
 */
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "worker.h"

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

void
tar_reader_free(struct tar_reader *r)
{
	tar_ext_clear(&r->ext);
	tar_member_clear(&r->m);
	free(r->buf);
	r->buf = NULL;
}

/* What was just read into the buffer, to the copy too. */
static int
copy_out(struct tar_reader *r, size_t n)
{
	struct tar_copy	*c = r->copy;

	if (c->over || n > c->max - c->written) {
		c->over = 1;
		return reader_fail(r, "past the size limit");
	}
	if (write_all(c->fd, r->buf, n) == -1) {
		c->err = errno;
		return reader_fail(r, "writing the copy: %s",
		    strerror(errno));
	}
	c->written += n;
	writeback_note(&c->wb, c->fd, c->written);
	return 0;
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
	if (n > 0 && r->copy != NULL && copy_out(r, (size_t)n) == -1)
		return -1;
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

/*
 * In a copy, data nobody reads moves from the archive's pipe into the
 * copy with splice(2) once the buffer is empty, not through it: a
 * snapshot's 100 MiB are copied once (into the page cache), not twice.
 * Bytes moved, 0 to read them instead (not a pipe, too few to bother,
 * or near the size limit, where the buffered way fails at the right
 * byte), or -1 (end of file is the caller's "truncated").
 */
static ssize_t
copy_direct(struct tar_reader *r, uint64_t n)
{
	struct tar_copy	*c = r->copy;
	size_t		 want = SPLICE_MAX;
	ssize_t		 k;

	if (c == NULL || c->no_splice || r->off < r->len ||
	    n < SPLICE_MIN || n > c->max - c->written)
		return 0;
	if (n < want)
		want = (size_t)n;
	do {
		k = splice(r->fd, NULL, c->fd, NULL, want, SPLICE_F_MOVE);
	} while (k == -1 && errno == EINTR);
	if (k == -1 && errno == EINVAL) {
		c->no_splice = 1;
		return 0;
	}
	if (k == -1) {
		/* The pipe does not fail: the copy's file did. */
		c->err = errno;
		return reader_fail(r, "writing the copy: %s",
		    strerror(errno));
	}
	if (k == 0)
		return reader_fail(r, "the archive is truncated");
	c->written += (uint64_t)k;
	writeback_note(&c->wb, c->fd, c->written);
	r->offset += (uint64_t)k;
	return k;
}

/* Drop n bytes (data of a member nobody read, padding). */
static int
skip(struct tar_reader *r, uint64_t n)
{
	ssize_t	 k;

	while (n > 0) {
		if ((k = copy_direct(r, n)) == 0)
			k = take(r, NULL, n > SIZE_MAX ? SIZE_MAX : (size_t)n);
		if (k == -1)
			return -1;
		if (k == 0)
			return reader_fail(r, "the archive is truncated");
		n -= (uint64_t)k;
	}
	return 0;
}

/* A format error from tar_header.c: ENOMEM stays ENOMEM. */
static int
reader_err(struct tar_reader *r, const char *err)
{
	reader_fail(r, "%s", err);
	if (err == tar_enomem)
		errno = ENOMEM;
	return -1;
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
		reader_err(r, tar_enomem);
		return NULL;
	}
	if (take_all(r, data, (size_t)size) != 1 ||
	    skip(r, tar_padding(size)) == -1) {
		if (!r->failed)
			reader_fail(r, "the archive is truncated");
		free(data);
		return NULL;
	}
	data[size] = '\0';
	return data;
}

/* A later 'x' header replaces an earlier one, as in Go. */
static int
read_pax(struct tar_reader *r, uint64_t size)
{
	const char	*err;
	char		*data;

	if ((data = special_data(r, size, TAR_PAX_MAX, "a pax header")) ==
	    NULL)
		return -1;
	err = tar_pax_parse(&r->ext, data, (size_t)size);
	free(data);
	return err != NULL ? reader_err(r, err) : 0;
}

/* 'L' and 'K': the next member's name or link target, up to a NUL. */
static int
read_gnu_long(struct tar_reader *r, uint64_t size, char **dst)
{
	const char	*err;
	char		*data;

	if ((data = special_data(r, size, TAR_NAME_MAX, "a long name")) ==
	    NULL)
		return -1;
	err = tar_gnu_long(dst, data, (size_t)size);
	free(data);
	return err != NULL ? reader_err(r, err) : 0;
}

/* The member of a header block, with what the extended headers said. */
static int
member_make(struct tar_reader *r, const unsigned char *blk, int64_t size)
{
	const char	*err;

	if ((err = tar_member_make(&r->m, &r->ext, blk, size)) != NULL)
		return reader_err(r, err);
	r->data_left = r->m.size;
	r->pad_left = tar_padding(r->m.size);
	return 0;
}

/* After a zero block: a second one (or the end of the file) ends it. */
static int
end_of_archive(struct tar_reader *r, unsigned char *blk)
{
	int	 rc;

	if ((rc = take_all(r, blk, TAR_BLOCK)) == -1)
		return -1;
	if (rc == 1 && !tar_block_is_zero(blk))
		return reader_fail(r, "data after the end of the archive");
	if (tar_ext_pending(&r->ext))
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
	if (tar_block_is_zero(blk))
		return end_of_archive(r, blk);
	if (!tar_checksum_ok(blk))
		return reader_fail(r, "not a tar header (bad checksum at "
		    "offset %llu)", (unsigned long long)(r->offset - TAR_BLOCK));
	if (tar_header_size(blk, &size) == -1)
		return reader_fail(r, "a header with a malformed size");
	switch (blk[TAR_H_TYPE]) {
	case 'x':
		return read_pax(r, (uint64_t)size) == -1 ? -1 : 2;
	case 'g':
		/* Global records: Docker ignores them, so do we. */
		tar_ext_clear(&r->ext);
		return skip(r, (uint64_t)size + tar_padding((uint64_t)size)) ==
		    -1 ? -1 : 2;
	case 'L':
		return read_gnu_long(r, (uint64_t)size, &r->ext.gnu_name) ==
		    -1 ? -1 : 2;
	case 'K':
		return read_gnu_long(r, (uint64_t)size, &r->ext.gnu_link) ==
		    -1 ? -1 : 2;
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
	tar_member_clear(&r->m);
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
