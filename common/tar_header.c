/*
 * Tar header blocks, pax records and GNU long names (tar_header.h): the
 * format, shared by the archive worker's reader and dockerd-proxy's
 * check of what it writes into a sandbox.  Where formats leave a choice
 * this does what Go's archive/tar does, because Docker reads archives
 * with it: what we check is what Docker will extract.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tar_header.h"

#define H_STAR_TRAILER	508
#define H_GNU_ATIME	345
#define H_GNU_CTIME	357
#define PREFIX_LEN	155
#define STAR_PREFIX_LEN	131

const char tar_enomem[] = "out of memory";

uint64_t
tar_padding(uint64_t size)
{
	return (TAR_BLOCK - size % TAR_BLOCK) % TAR_BLOCK;
}

int
tar_block_is_zero(const unsigned char *blk)
{
	size_t	 i;

	for (i = 0; i < TAR_BLOCK; i++)
		if (blk[i] != 0)
			return 0;
	return 1;
}

/* GNU base-256: the top bit of the first byte set, two's complement. */
static int
number_base256(const unsigned char *p, size_t width, int64_t *v)
{
	uint64_t	 x = 0;
	size_t		 i;
	unsigned char	 inv, c;

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

int
tar_number(const unsigned char *p, size_t width, int64_t *v)
{
	uint64_t	 x = 0;
	size_t		 i, end;

	if (width > 0 && (p[0] & 0x80) != 0)
		return number_base256(p, width, v);
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

/* Go's archive/tar and libarchive both read the base-256 form. */
void
tar_number_put(unsigned char *field, size_t width, uint64_t v)
{
	uint64_t	 max = 1;
	size_t		 i;

	for (i = 0; i < width - 1 && i < 21; i++)
		max *= 8;
	if (width - 1 > 21 || v < max) {
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

/* The checksum counts its own field as eight spaces. */
static void
block_sums(const unsigned char *blk, int64_t *usum, int64_t *ssum)
{
	size_t	 i;

	*usum = *ssum = 0;
	for (i = 0; i < TAR_BLOCK; i++) {
		if (i >= TAR_H_CHKSUM && i < TAR_H_CHKSUM + 8) {
			*usum += ' ';
			*ssum += ' ';
		} else {
			*usum += blk[i];
			*ssum += (signed char)blk[i];
		}
	}
}

/* The stored checksum must be the sum of the bytes, unsigned or signed. */
int
tar_checksum_ok(const unsigned char *blk)
{
	int64_t	 stored, usum, ssum;

	if (tar_number(blk + TAR_H_CHKSUM, 8, &stored) == -1)
		return 0;
	block_sums(blk, &usum, &ssum);
	return stored == usum || stored == ssum;
}

/* Six octal digits, a NUL and a space, as tar has always written it. */
void
tar_checksum_put(unsigned char *blk)
{
	int64_t	 usum, ssum;

	block_sums(blk, &usum, &ssum);
	tar_number_put(blk + TAR_H_CHKSUM, 7, (uint64_t)usum);
	blk[TAR_H_CHKSUM + 7] = ' ';
}

int
tar_header_size(const unsigned char *blk, int64_t *size)
{
	return tar_number(blk + TAR_H_SIZE, 12, size) == -1 || *size < 0 ?
	    -1 : 0;
}

/* A header string: its bytes up to the first NUL or the field's end. */
static char *
field_string(const unsigned char *p, size_t width)
{
	const unsigned char	*nul = memchr(p, '\0', width);

	return strndup((const char *)p,
	    nul != NULL ? (size_t)(nul - p) : width);
}

static int
is_ascii(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s >= 0x80)
			return 0;
	return 1;
}

/*
 * How long a prefix the header has, as Go's getFormat and readHeader
 * decide: ustar's magic (whatever the version) has one of 155 bytes,
 * star's of 131; GNU's has none, unless its access or change time does
 * not parse, when Go takes those bytes as a ustar prefix after all (if
 * they are ASCII: checked by the caller).  0: no prefix.
 */
static size_t
prefix_len(const unsigned char *blk)
{
	int64_t	 t;

	if (memcmp(blk + TAR_H_MAGIC, "ustar\0", 6) == 0)
		return memcmp(blk + H_STAR_TRAILER, "tar\0", 4) == 0 ?
		    STAR_PREFIX_LEN : PREFIX_LEN;
	if (memcmp(blk + TAR_H_MAGIC, "ustar ", 6) != 0 ||
	    memcmp(blk + TAR_H_VERSION, " \0", 2) != 0)
		return 0;			/* V7 */
	if ((blk[H_GNU_ATIME] != 0 &&
	    tar_number(blk + H_GNU_ATIME, 12, &t) == -1) ||
	    (blk[H_GNU_CTIME] != 0 &&
	    tar_number(blk + H_GNU_CTIME, 12, &t) == -1))
		return PREFIX_LEN;
	return 0;
}

/* "name", or "prefix/name" where the format has a prefix (Go's rules). */
static char *
header_name(const unsigned char *blk)
{
	char	*name, *prefix, *both;
	size_t	 plen;

	if ((plen = prefix_len(blk)) == 0)
		return field_string(blk + TAR_H_NAME, 100);
	if ((prefix = field_string(blk + TAR_H_PREFIX, plen)) == NULL)
		return NULL;
	/* GNU's fallback takes only an ASCII prefix. */
	if (memcmp(blk + TAR_H_MAGIC, "ustar ", 6) == 0 && !is_ascii(prefix))
		prefix[0] = '\0';
	if ((name = field_string(blk + TAR_H_NAME, 100)) == NULL ||
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

/* An empty value leaves the header's own, as Go's mergePAX does. */
static const char *
pax_string(char **dst, const char *v, size_t vlen)
{
	if (memchr(v, '\0', vlen) != NULL)
		return "a pax record with a NUL";
	free(*dst);
	*dst = NULL;
	if (vlen == 0)
		return NULL;
	return (*dst = strndup(v, vlen)) == NULL ? tar_enomem : NULL;
}

static int
pax_number_key(const char *k)
{
	if (strcmp(k, "size") == 0)
		return PAX_SIZE;
	if (strcmp(k, "uid") == 0)
		return PAX_UID;
	if (strcmp(k, "gid") == 0)
		return PAX_GID;
	if (strcmp(k, "mtime") == 0)
		return PAX_MTIME;
	return 0;
}

/* One record's key and value into ext. */
static const char *
pax_record(struct tar_ext *ext, const char *k, const char *v, size_t vlen)
{
	int64_t	 n;
	int	 bit;

	if (strncmp(k, "GNU.sparse.", 11) == 0)
		return "sparse files are not supported";
	if (strcmp(k, "path") == 0)
		return pax_string(&ext->pax_path, v, vlen);
	if (strcmp(k, "linkpath") == 0)
		return pax_string(&ext->pax_link, v, vlen);
	if (strncmp(k, "SCHILY.xattr.", 13) == 0 ||
	    strncmp(k, "LIBARCHIVE.xattr.", 17) == 0) {
		ext->pax_has |= PAX_XATTR;
		return NULL;
	}
	if ((bit = pax_number_key(k)) == 0)
		return NULL;	/* atime, hdrcharset...: nothing Docker uses */
	if (vlen == 0) {
		ext->pax_has &= ~bit;	/* the header's value, as in Go */
		return NULL;
	}
	if (memchr(v, '\0', vlen) != NULL || (bit == PAX_MTIME ?
	    pax_time(v, &n) : pax_decimal(v, &n)) == -1)
		return "a malformed pax number";
	ext->pax_has |= bit;
	ext->pax_num[bit == PAX_SIZE ? 0 : bit == PAX_UID ? 1 :
	    bit == PAX_GID ? 2 : 3] = n;
	return NULL;
}

/* "<len> <key>=<value>\n" records; len counts the whole record. */
const char *
tar_pax_parse(struct tar_ext *ext, char *s, size_t len)
{
	const char	*err;
	char		*rec, *sp, *eq;
	size_t		 n, i;

	free(ext->pax_path);
	free(ext->pax_link);
	ext->pax_path = ext->pax_link = NULL;
	ext->pax_has = 0;
	while (len > 0) {
		for (n = 0, i = 0; i < len && i < 8 && s[i] >= '0' &&
		    s[i] <= '9'; i++)
			n = n * 10 + (size_t)(s[i] - '0');
		if (i == 0 || i >= len || s[i] != ' ' || n < 5 || n > len ||
		    s[n - 1] != '\n')
			return "a malformed pax record";
		rec = s + i + 1;
		s[n - 1] = '\0';
		sp = s + n - 1;		/* the record's end */
		if ((eq = memchr(rec, '=', (size_t)(sp - rec))) == NULL ||
		    eq == rec || memchr(rec, '\0', (size_t)(eq - rec)) != NULL)
			return "a malformed pax record";
		*eq = '\0';
		if ((err = pax_record(ext, rec, eq + 1,
		    (size_t)(sp - eq - 1))) != NULL)
			return err;
		s += n;
		len -= n;
	}
	return NULL;
}

/* An empty name (or one that starts with NUL) is no name, as in Go. */
const char *
tar_gnu_long(char **dst, const char *data, size_t len)
{
	const char	*nul = memchr(data, '\0', len);

	free(*dst);
	*dst = NULL;
	if (nul != NULL)
		len = (size_t)(nul - data);
	if (len == 0)
		return NULL;
	return (*dst = strndup(data, len)) == NULL ? tar_enomem : NULL;
}

int
tar_ext_pending(const struct tar_ext *ext)
{
	return ext->pax_has != 0 || ext->pax_path != NULL ||
	    ext->pax_link != NULL || ext->gnu_name != NULL ||
	    ext->gnu_link != NULL;
}

void
tar_ext_clear(struct tar_ext *ext)
{
	free(ext->pax_path);
	free(ext->pax_link);
	free(ext->gnu_name);
	free(ext->gnu_link);
	memset(ext, 0, sizeof(*ext));
}

void
tar_member_clear(struct tar_member *m)
{
	free(m->name);
	free(m->link);
	memset(m, 0, sizeof(*m));
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

/*
 * Names and link: the header's, unless an extended header said more;
 * a GNU long name wins over a pax path, as Go merges the pax records
 * first and then the GNU names.
 */
static const char *
member_names(struct tar_member *m, struct tar_ext *ext,
    const unsigned char *blk)
{
	if ((m->name = header_name(blk)) == NULL ||
	    (m->link = field_string(blk + TAR_H_LINKNAME, 100)) == NULL)
		return tar_enomem;
	take_pending(&m->name, &ext->pax_path);
	take_pending(&m->link, &ext->pax_link);
	take_pending(&m->name, &ext->gnu_name);
	take_pending(&m->link, &ext->gnu_link);
	return NULL;
}

const char *
tar_member_make(struct tar_member *m, struct tar_ext *ext,
    const unsigned char *blk, int64_t size)
{
	const char	*err;
	int64_t		 mode, uid, gid, mtime;
	int		 header_only;

	tar_member_clear(m);
	if (tar_number(blk + TAR_H_MODE, 8, &mode) == -1 ||
	    tar_number(blk + TAR_H_UID, 8, &uid) == -1 ||
	    tar_number(blk + TAR_H_GID, 8, &gid) == -1 ||
	    tar_number(blk + TAR_H_MTIME, 12, &mtime) == -1)
		return "a header with a malformed number";
	if ((err = member_names(m, ext, blk)) != NULL)
		return err;
	if (ext->pax_has & PAX_SIZE)
		size = ext->pax_num[0];
	m->uid = (uint64_t)((ext->pax_has & PAX_UID) ? ext->pax_num[1] : uid);
	m->gid = (uint64_t)((ext->pax_has & PAX_GID) ? ext->pax_num[2] : gid);
	m->mtime = (ext->pax_has & PAX_MTIME) ? ext->pax_num[3] : mtime;
	m->mode = (uint32_t)(mode & 07777);
	m->typeflag = (char)blk[TAR_H_TYPE];
	m->type = member_type(m->typeflag, m->name, &header_only);
	if (size < 0)
		return "a member of negative size";
	m->size = header_only ? 0 : (uint64_t)size;
	if (m->type != TAR_SYMLINK && m->type != TAR_HARDLINK) {
		free(m->link);
		m->link = NULL;
	}
	m->xattrs = (ext->pax_has & PAX_XATTR) != 0;
	tar_ext_clear(ext);
	return NULL;
}
