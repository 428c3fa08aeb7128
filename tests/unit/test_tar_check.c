/*
 * Tests for dockerd-proxy/tar_check.c: the check on every tar written
 * into a sandbox.  Archives are made with libarchive (pax, GNU and ustar,
 * as other tar writers make them) or by hand where no honest writer
 * would go; each refused one must stop before any byte of the refused
 * member went out, and an accepted one must come out the same length,
 * owned by the sandbox user, whatever the pieces it came in.
 */
#include <sys/stat.h>

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <archive.h>
#include <archive_entry.h>
#include <cmocka.h>

#include "proxy.h"

#define UID		1000
#define GID		1001
#define TAR_CAP		(1024 * 1024)

struct spec {
	const char	*name;
	mode_t		 type;		/* AE_IF*; 0: a regular file */
	mode_t		 perm;		/* 0: 0644 */
	const char	*link;		/* a symlink's target */
	const char	*hardlink;
	const char	*data;
	int64_t		 uid;		/* 0: UID */
	const char	*xattr;		/* a name, value "v" */
};

struct tarbuf {
	unsigned char	*p;
	size_t		 len;
};

struct sink {
	unsigned char	*p;
	size_t		 len;
	int		 fail;		/* EPIPE from the next write */
};

static int
sink_out(void *arg, const void *buf, size_t len)
{
	struct sink	*s = arg;

	if (s->fail) {
		errno = EPIPE;
		return -1;
	}
	assert_true(s->len + len <= TAR_CAP);
	memcpy(s->p + s->len, buf, len);
	s->len += len;
	return 0;
}

static void
add_spec(struct archive *a, const struct spec *sp)
{
	struct archive_entry	*e;
	size_t			 size = sp->data != NULL ? strlen(sp->data) : 0;

	assert_non_null(e = archive_entry_new());
	archive_entry_set_pathname(e, sp->name);
	archive_entry_set_filetype(e, sp->type != 0 ? sp->type : AE_IFREG);
	archive_entry_set_perm(e, sp->perm != 0 ? sp->perm : 0644);
	archive_entry_set_uid(e, sp->uid != 0 ? sp->uid : UID);
	archive_entry_set_gid(e, sp->uid != 0 ? sp->uid : GID);
	archive_entry_set_mtime(e, 1700000000, 0);
	if (sp->link != NULL)
		archive_entry_set_symlink(e, sp->link);
	if (sp->hardlink != NULL)
		archive_entry_set_hardlink(e, sp->hardlink);
	if (sp->xattr != NULL)
		archive_entry_xattr_add_entry(e, sp->xattr, "v", 1);
	archive_entry_set_size(e, (la_int64_t)size);
	assert_true(archive_write_header(a, e) >= ARCHIVE_WARN);
	if (size > 0)
		assert_int_equal(archive_write_data(a, sp->data, size),
		    (la_ssize_t)size);
	archive_entry_free(e);
}

/* specs, ended by a NULL name, as a tar of format (ARCHIVE_FORMAT_*). */
static struct tarbuf
make_tar(int format, const struct spec *specs)
{
	struct archive	*a;
	struct tarbuf	 t;
	size_t		 used = 0;

	assert_non_null(t.p = malloc(TAR_CAP));
	assert_non_null(a = archive_write_new());
	assert_int_equal(archive_write_set_format(a, format), ARCHIVE_OK);
	if (format == ARCHIVE_FORMAT_TAR_PAX_INTERCHANGE ||
	    format == ARCHIVE_FORMAT_TAR_PAX_RESTRICTED)
		assert_int_equal(archive_write_set_options(a,
		    "hdrcharset=BINARY"), ARCHIVE_OK);
	assert_int_equal(archive_write_open_memory(a, t.p, TAR_CAP, &used),
	    ARCHIVE_OK);
	for (; specs->name != NULL; specs++)
		add_spec(a, specs);
	assert_int_equal(archive_write_close(a), ARCHIVE_OK);
	archive_write_free(a);
	t.len = used;
	return t;
}

/* Feeds t in pieces of step bytes (0: whole); the feed's and end's rc. */
static int
check(const struct tarbuf *t, size_t step, uint32_t uid, struct sink *s,
    struct tar_check *tc)
{
	size_t	 off, n;
	int	 rc = 0;

	tar_check_init(tc, uid, GID);
	for (off = 0; off < t->len && rc == 0; off += n) {
		n = step == 0 || t->len - off < step ? t->len - off : step;
		rc = tar_check_feed(tc, t->p + off, n, sink_out, s);
	}
	if (rc == 0)
		rc = tar_check_end(tc);
	return rc;
}

static struct sink
sink_new(void)
{
	struct sink	 s = { NULL, 0, 0 };

	assert_non_null(s.p = malloc(TAR_CAP));
	return s;
}

/*
 * The archive is refused with a reason holding want (forbidden when it
 * is well-formed), not a byte of the
 * member named bad went out, and what did go out is the same whatever
 * the pieces (a stray byte after the end, in a later piece than the
 * zeros before it, was once seen to change that).
 */
static void
assert_refused(const struct tarbuf *t, const char *want, const char *bad,
    int forbidden)
{
	static const size_t	 steps[] = { 0, 1, 511, 512, 513, 4096 };
	struct tar_check	 tc;
	struct sink		 s, whole = { NULL, 0, 0 };
	size_t			 i;

	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		s = sink_new();
		assert_int_equal(check(t, steps[i], UID, &s, &tc), -1);
		assert_int_equal(tc.state, TC_REFUSED);
		assert_int_equal(tc.forbidden, forbidden);
		/* Only the two ends of a stream that stops early are cut. */
		assert_int_equal(tc.cut, strcmp(tc.err, "the archive is "
		    "truncated") == 0 || strcmp(tc.err, "the archive ends "
		    "without its end-of-archive block") == 0);
		if (strstr(tc.err, want) == NULL)
			fail_msg("refused for \"%s\", not \"%s\"", tc.err,
			    want);
		if (bad != NULL)
			assert_null(memmem(s.p, s.len, bad, strlen(bad)));
		tar_check_free(&tc);
		if (i == 0) {
			whole = s;
			continue;
		}
		assert_int_equal(s.len, whole.len);
		assert_memory_equal(s.p, whole.p, s.len);
		free(s.p);
	}
	free(whole.p);
}

static void
refused(int format, const struct spec *specs, const char *want,
    const char *bad)
{
	struct tarbuf	 t = make_tar(format, specs);

	assert_refused(&t, want, bad, 1);
	free(t.p);
}

/* Read back: every member owned by uid:GID, the data as it was. */
static void
assert_owned(const struct sink *s, int64_t uid, const char *name,
    const char *data)
{
	struct archive		*a;
	struct archive_entry	*e;
	char			 buf[256];
	la_ssize_t		 n;
	int			 seen = 0;

	assert_non_null(a = archive_read_new());
	assert_int_equal(archive_read_support_format_tar(a), ARCHIVE_OK);
	assert_int_equal(archive_read_open_memory(a, s->p, s->len),
	    ARCHIVE_OK);
	while (archive_read_next_header(a, &e) == ARCHIVE_OK) {
		assert_int_equal(archive_entry_uid(e), uid);
		assert_int_equal(archive_entry_gid(e), GID);
		if (strcmp(archive_entry_pathname(e), name) != 0)
			continue;
		n = archive_read_data(a, buf, sizeof(buf));
		assert_int_equal(n, (la_ssize_t)strlen(data));
		assert_memory_equal(buf, data, strlen(data));
		seen = 1;
	}
	assert_true(seen);
	archive_read_free(a);
}

static const struct spec honest[] = {
	{ .name = "dir/", .type = AE_IFDIR, .perm = 02775 },
	{ .name = "dir/f.txt", .data = "hello", .uid = 4242 },
	{ .name = "dir/caf\xc3\xa9 \xff\xfe.bin", .data = "bytes" },
	{ .name = "link", .type = AE_IFLNK, .link = "/etc/passwd" },
	{ .name = "dir/hard", .hardlink = "dir/f.txt" },
	{ .name = "dot/", .type = AE_IFDIR },
	{ .name = "./dot//slashes", .data = "x" },
	{ .name = "a-name-longer-than-one-hundred-bytes-"
	    "0123456789012345678901234567890123456789012345678901234567890123"
	    "/", .type = AE_IFDIR },
	{ .name = "a-name-longer-than-one-hundred-bytes-"
	    "0123456789012345678901234567890123456789012345678901234567890123"
	    "/and-a-file-in-it", .data = "long" },
	{ .name = NULL }
};

/* Whole, byte by byte, across blocks: the same bytes come out. */
static void
test_accepted_whatever_the_pieces(void **state)
{
	static const int	 formats[] = { ARCHIVE_FORMAT_TAR_PAX_INTERCHANGE,
	    ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, ARCHIVE_FORMAT_TAR_GNUTAR };
	static const size_t	 steps[] = { 1, 7, 512, 1000, 65536 };
	struct tar_check	 tc;
	struct tarbuf		 t;
	struct sink		 whole, s;
	size_t			 i, j;

	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		t = make_tar(formats[i], honest);
		whole = sink_new();
		if (check(&t, 0, UID, &whole, &tc) != 0)
			fail_msg("format %d refused: %s", formats[i], tc.err);
		tar_check_free(&tc);
		assert_int_equal(whole.len, t.len);
		assert_owned(&whole, UID, "dir/f.txt", "hello");
		for (j = 0; j < sizeof(steps) / sizeof(steps[0]); j++) {
			s = sink_new();
			assert_int_equal(check(&t, steps[j], UID, &s, &tc), 0);
			tar_check_free(&tc);
			assert_int_equal(s.len, whole.len);
			assert_memory_equal(s.p, whole.p, s.len);
			free(s.p);
		}
		free(whole.p);
		free(t.p);
	}
}

static void
test_devices_and_fifos(void **state)
{
	const struct spec	 chr[] = { { .name = "ok", .data = "1" },
	    { .name = "null", .type = AE_IFCHR }, { .name = NULL } };
	const struct spec	 blk[] = { { .name = "sda", .type = AE_IFBLK },
	    { .name = NULL } };
	const struct spec	 fifo[] = { { .name = "pipe", .type = AE_IFIFO },
	    { .name = NULL } };

	refused(ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, chr, "a character device",
	    "null");
	refused(ARCHIVE_FORMAT_TAR_USTAR, blk, "a block device", "sda");
	refused(ARCHIVE_FORMAT_TAR_GNUTAR, fifo, "a FIFO", "pipe");
}

static void
test_setuid_and_setgid(void **state)
{
	const struct spec	 suid[] = { { .name = "sh", .perm = 04755,
	    .data = "#!" }, { .name = NULL } };
	const struct spec	 sgid[] = { { .name = "sg", .perm = 02755,
	    .data = "#!" }, { .name = NULL } };
	const struct spec	 dsuid[] = { { .name = "d/", .type = AE_IFDIR,
	    .perm = 04755 }, { .name = NULL } };

	refused(ARCHIVE_FORMAT_TAR_USTAR, suid, "a setuid bit", "sh");
	refused(ARCHIVE_FORMAT_TAR_USTAR, sgid, "a setgid bit", "sg");
	refused(ARCHIVE_FORMAT_TAR_USTAR, dsuid, "a setuid bit", "d/");
}

static void
test_names_outside(void **state)
{
	static const char	*names[] = { "/etc/passwd", "../x", "a/../../x",
	    "a/..", "..", "./../x", "//etc/x" };
	struct spec		 sp[2] = { { .data = "x" }, { .name = NULL } };
	size_t			 i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		sp[0].name = names[i];
		refused(ARCHIVE_FORMAT_TAR_PAX_INTERCHANGE, sp,
		    "its name is absolute", NULL);
	}
}

static void
test_member_under_a_symlink_of_the_archive(void **state)
{
	static const char	*children[] = { "a/passwd", "./a//passwd",
	    "a/b/c", "b/../a/x" };
	struct spec		 sp[] = {
		{ .name = "a", .type = AE_IFLNK, .link = "/etc" },
		{ .data = "root::0:0::/:/bin/sh" }, { .name = NULL } };
	size_t			 i;

	for (i = 0; i < sizeof(children) / sizeof(children[0]); i++) {
		sp[1].name = children[i];
		refused(ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, sp, i < 3 ?
		    "goes through a symlink" : "has a \"..\"", "root::");
	}
	/* A directory named like the link does not make it safe. */
	{
		const struct spec	 again[] = {
			{ .name = "a", .type = AE_IFLNK, .link = "/etc" },
			{ .name = "a/", .type = AE_IFDIR },
			{ .name = "a/x", .data = "root::" },
			{ .name = NULL } };

		refused(ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, again,
		    "goes through a symlink", "root::");
	}
}

static void
test_hard_links_leaving_the_tree(void **state)
{
	static const char	*targets[] = { "/etc/shadow", "../../etc/shadow",
	    "a/shadow", "." };
	static const char	*want[] = { "hard link target is absolute",
	    "hard link target is absolute", "target goes through a symlink",
	    "a hard link to the target itself" };
	struct spec		 sp[] = {
		{ .name = "a", .type = AE_IFLNK, .link = "/etc" },
		{ .name = "h" }, { .name = NULL } };
	size_t			 i;

	for (i = 0; i < sizeof(targets) / sizeof(targets[0]); i++) {
		sp[1].hardlink = targets[i];
		refused(ARCHIVE_FORMAT_TAR_USTAR, sp, want[i], NULL);
	}
}

static void
test_extended_attributes_and_foreign_owners(void **state)
{
	const struct spec	 xattr[] = { { .name = "f", .data = "x",
	    .xattr = "security.capability" }, { .name = NULL } };
	const struct spec	 big[] = { { .name = "f", .data = "x",
	    .uid = 300000 }, { .name = NULL } };
	struct tar_check	 tc;
	struct tarbuf		 t;
	struct sink		 s;

	refused(ARCHIVE_FORMAT_TAR_PAX_INTERCHANGE, xattr,
	    "extended attributes", NULL);
	/* libarchive says a uid this large in a pax record. */
	refused(ARCHIVE_FORMAT_TAR_PAX_INTERCHANGE, big, "a pax uid", NULL);
	/* Unless it is the sandbox user's own. */
	t = make_tar(ARCHIVE_FORMAT_TAR_PAX_INTERCHANGE, big);
	s = sink_new();
	tar_check_init(&tc, 300000, 300000);
	assert_int_equal(tar_check_feed(&tc, t.p, t.len, sink_out, &s), 0);
	assert_int_equal(tar_check_end(&tc), 0);
	assert_int_equal(s.len, t.len);
	tar_check_free(&tc);
	free(s.p);
	free(t.p);
}

/* A hand-made header block: name, type flag, size; checksum right. */
static void
block(unsigned char *b, const char *name, char type, uint64_t size)
{
	memset(b, 0, TAR_BLOCK);
	memcpy(b, name, strlen(name));
	tar_number_put(b + TAR_H_MODE, 8, 0644);
	tar_number_put(b + TAR_H_UID, 8, 0);
	tar_number_put(b + TAR_H_GID, 8, 0);
	tar_number_put(b + TAR_H_SIZE, 12, size);
	tar_number_put(b + TAR_H_MTIME, 12, 0);
	b[TAR_H_TYPE] = (unsigned char)type;
	memcpy(b + TAR_H_MAGIC, "ustar", 6);
	memcpy(b + TAR_H_VERSION, "00", 2);
	tar_checksum_put(b);
}

static void
test_hand_made(void **state)
{
	unsigned char	 raw[8 * TAR_BLOCK];
	struct tarbuf	 t = { raw, 0 };

	/* A global pax header: honest writers here never make one. */
	memset(raw, 0, sizeof(raw));
	block(raw, "g", 'g', 0);
	t.len = 3 * TAR_BLOCK;
	assert_refused(&t, "a global pax header", NULL, 1);
	/* A bad checksum. */
	block(raw, "f", '0', 0);
	raw[TAR_H_CHKSUM]++;
	assert_refused(&t, "bad checksum", NULL, 0);
	/* Data after the end of the archive. */
	block(raw, "f", '0', 0);
	memset(raw + TAR_BLOCK, 0, 2 * TAR_BLOCK);
	raw[2 * TAR_BLOCK + 7] = 1;
	assert_refused(&t, "data after the end", NULL, 0);
	raw[2 * TAR_BLOCK + 7] = 0;
	raw[3 * TAR_BLOCK + 300] = 1;
	t.len = 4 * TAR_BLOCK;
	assert_refused(&t, "data after the end", NULL, 0);
	/* No end-of-archive block; cut in a member's data. */
	t.len = TAR_BLOCK;
	assert_refused(&t, "ends without its end-of-archive", NULL, 0);
	block(raw, "f", '0', 100);
	t.len = TAR_BLOCK + 50;
	assert_refused(&t, "truncated", NULL, 0);
	/* An extended header too long to hold, and one with no member. */
	block(raw, "x", 'x', TAR_CHECK_EXT_MAX + 1);
	t.len = sizeof(raw);
	assert_refused(&t, "an extended header of", NULL, 0);
	block(raw, "L", 'L', 4);
	memcpy(raw + TAR_BLOCK, "abc", 4);
	memset(raw + 2 * TAR_BLOCK, 0, 2 * TAR_BLOCK);
	t.len = 4 * TAR_BLOCK;
	assert_refused(&t, "an extended header without a member", "abc", 0);
}

/* An extended header ('x', 'L', 'K') with its data, at off: the end. */
static size_t
ext_at(unsigned char *raw, size_t off, char type, const char *data,
    size_t len)
{
	block(raw + off, "ext", type, len);
	memcpy(raw + off + TAR_BLOCK, data, len);
	return off + TAR_BLOCK + (len + TAR_BLOCK - 1) / TAR_BLOCK * TAR_BLOCK;
}

/* A member header at off, with its link: the end. */
static size_t
member_at(unsigned char *raw, size_t off, const char *name, char type,
    const char *link)
{
	block(raw + off, name, type, 0);
	if (link != NULL) {
		memcpy(raw + off + TAR_H_LINKNAME, link, strlen(link));
		tar_checksum_put(raw + off);
	}
	return off + TAR_BLOCK;
}

/*
 * Names are what Go's archive/tar (Docker's) reads, or a member could
 * pass the check under one name and be extracted under another: a GNU
 * long name wins over a pax path, empty values name nothing, a ustar
 * header has its prefix whatever its version, and a GNU header whose
 * times do not parse has one too.  Each pair below names "s/etc" to
 * Docker, through the symlink "s" made just before.  (All found in
 * review, each once accepted.)
 */
static void
test_names_as_docker_reads_them(void **state)
{
	unsigned char	 raw[16 * TAR_BLOCK];
	struct tarbuf	 t = { raw, 0 };
	size_t		 off;
	int		 i;

	for (i = 0; i < 5; i++) {
		memset(raw, 0, sizeof(raw));
		off = member_at(raw, 0, "s", '2', "/");
		switch (i) {
		case 0:		/* pax says "ok", GNU says "s/etc": GNU wins */
			off = ext_at(raw, off, 'x', "11 path=ok\n", 11);
			off = ext_at(raw, off, 'L', "s/etc", 6);
			off = member_at(raw, off, "ok", '5', NULL);
			break;
		case 1:		/* an empty pax path: the header's name */
			off = ext_at(raw, off, 'x', "8 path=\n", 8);
			off = member_at(raw, off, "s/etc", '5', NULL);
			break;
		case 2:		/* an empty GNU name: the header's name */
			off = ext_at(raw, off, 'L', "\0x", 2);
			off = member_at(raw, off, "s/etc", '5', NULL);
			break;
		case 3:		/* ustar magic, version "xx": still a prefix */
			block(raw + off, "passwd", '0', 0);
			memcpy(raw + off + TAR_H_VERSION, "xx", 2);
			memcpy(raw + off + TAR_H_PREFIX, "s/etc", 5);
			tar_checksum_put(raw + off);
			off += TAR_BLOCK;
			break;
		case 4:		/* GNU, its atime not a number: a prefix */
			block(raw + off, "passwd", '0', 0);
			memcpy(raw + off + TAR_H_MAGIC, "ustar  ", 8);
			memcpy(raw + off + TAR_H_PREFIX, "s/etc", 5);
			tar_checksum_put(raw + off);
			off += TAR_BLOCK;
			break;
		}
		t.len = off + 2 * TAR_BLOCK;
		assert_refused(&t, "goes through a symlink", NULL, 1);
	}
}

/*
 * Docker makes a member's missing directories itself, owned by root: in
 * /workspace they would be the sandbox user's to neither write nor
 * remove.  Honest archives (uploads, snapshots) name every directory
 * before what is in it.
 */
static void
test_parents_come_first(void **state)
{
	const struct spec	 orphan[] = { { .name = "a/b/f", .data = "x" },
	    { .name = NULL } };
	const struct spec	 half[] = { { .name = "a/", .type = AE_IFDIR },
	    { .name = "a/b/f", .data = "x" }, { .name = NULL } };
	const struct spec	 file_dir[] = { { .name = "a", .data = "x" },
	    { .name = "a/f", .data = "x" }, { .name = NULL } };
	const struct spec	 ordered[] = { { .name = "a/", .type = AE_IFDIR },
	    { .name = "a/b/", .type = AE_IFDIR }, { .name = "./a/b//f",
	    .data = "x" }, { .name = NULL } };
	struct tar_check	 tc;
	struct tarbuf		 t;
	struct sink		 s;

	refused(ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, orphan,
	    "its directory is not a member before it", NULL);
	refused(ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, half,
	    "its directory is not a member before it", NULL);
	refused(ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, file_dir,
	    "its directory is not a member before it", NULL);
	t = make_tar(ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, ordered);
	s = sink_new();
	assert_int_equal(check(&t, 0, UID, &s, &tc), 0);
	tar_check_free(&tc);
	free(s.p);
	free(t.p);
}

/* link(2) does not follow a symlink: a hard link to one is another. */
static void
test_hard_link_to_a_symlink_is_a_symlink(void **state)
{
	unsigned char	 raw[8 * TAR_BLOCK];
	struct tarbuf	 t = { raw, 0 };
	size_t		 off;

	memset(raw, 0, sizeof(raw));
	off = member_at(raw, 0, "s", '2', "/");
	off = member_at(raw, off, "h", '1', "s");
	off = member_at(raw, off, "h/etc", '5', NULL);
	t.len = off + 2 * TAR_BLOCK;
	assert_refused(&t, "goes through a symlink", NULL, 1);
}

/*
 * Framing as Go's: a '\0' member is a directory when its (final) name
 * ends in '/', and then has no data, so the blocks after it are headers
 * (here a device, refused), not data let through unchecked.
 */
static void
test_framing_follows_the_final_name(void **state)
{
	unsigned char	 raw[12 * TAR_BLOCK];
	struct tarbuf	 t = { raw, 0 };
	size_t		 off;

	memset(raw, 0, sizeof(raw));
	off = ext_at(raw, 0, 'x', "10 path=f\n", 10);
	off = ext_at(raw, off, 'L', "d/", 3);
	block(raw + off, "z", '\0', 2 * TAR_BLOCK);
	off += TAR_BLOCK;
	off = member_at(raw, off, "null", '3', NULL);
	t.len = off + 3 * TAR_BLOCK;
	assert_refused(&t, "a character device", NULL, 1);
}

static void
test_long_names_and_many_headers(void **state)
{
	unsigned char	*raw;
	struct tarbuf	 t;
	char		*name;
	size_t		 i, off = 0;

	/* A name over PATH_MAX, by pax. */
	assert_non_null(name = malloc(TAR_CHECK_NAME_MAX + 2));
	memset(name, 'n', TAR_CHECK_NAME_MAX + 1);
	name[TAR_CHECK_NAME_MAX + 1] = '\0';
	{
		struct spec	 sp[] = { { .name = name, .data = "x" },
		    { .name = NULL } };

		refused(ARCHIVE_FORMAT_TAR_PAX_INTERCHANGE, sp, "too long",
		    NULL);
	}
	free(name);
	/* 'L' after 'L' after 'L': no more than TAR_CHECK_HELD_MAX held. */
	assert_non_null(raw = calloc(1, 400 * TAR_BLOCK));
	for (i = 0; i < 199; i++, off += 2 * TAR_BLOCK) {
		block(raw + off, "L", 'L', 4);
		memcpy(raw + off + TAR_BLOCK, "abc", 4);
	}
	t.p = raw;
	t.len = 400 * TAR_BLOCK;
	assert_refused(&t, "bytes of headers", "abc", 0);
	free(raw);
}

static void
test_a_failing_sink_is_not_a_refusal(void **state)
{
	struct tarbuf		 t = make_tar(ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, honest);
	struct tar_check	 tc;
	struct sink		 s = sink_new();

	s.fail = 1;
	tar_check_init(&tc, UID, GID);
	errno = 0;
	assert_int_equal(tar_check_feed(&tc, t.p, t.len, sink_out, &s), -1);
	assert_int_equal(errno, EPIPE);
	assert_int_not_equal(tc.state, TC_REFUSED);
	tar_check_free(&tc);
	free(s.p);
	free(t.p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accepted_whatever_the_pieces),
		cmocka_unit_test(test_devices_and_fifos),
		cmocka_unit_test(test_setuid_and_setgid),
		cmocka_unit_test(test_names_outside),
		cmocka_unit_test(test_member_under_a_symlink_of_the_archive),
		cmocka_unit_test(test_hard_links_leaving_the_tree),
		cmocka_unit_test(test_extended_attributes_and_foreign_owners),
		cmocka_unit_test(test_hand_made),
		cmocka_unit_test(test_names_as_docker_reads_them),
		cmocka_unit_test(test_hard_link_to_a_symlink_is_a_symlink),
		cmocka_unit_test(test_parents_come_first),
		cmocka_unit_test(test_framing_follows_the_final_name),
		cmocka_unit_test(test_long_names_and_many_headers),
		cmocka_unit_test(test_a_failing_sink_is_not_a_refusal),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
