/*
 * Tests for apid's tar helpers (API.md §6.2, §7.1, §7.3, §16 item 5):
 * input archives are built here with libarchive in temporary files and
 * the output is read back with libarchive.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>
#include <cmocka.h>

#include "tar_snapshot.h"

#define MAXMEM	16

struct mem {
	const char	*name;
	mode_t		 type;		/* AE_IF*; 0 with hardlink set */
	mode_t		 perm;
	int64_t		 uid, gid;
	time_t		 mtime;
	const char	*data;		/* NULL: len bytes of a pattern */
	size_t		 len;
	const char	*symlink;
	const char	*hardlink;
};

struct got {
	char		*name;
	mode_t		 type;
	mode_t		 perm;
	int64_t		 uid, gid;
	time_t		 mtime;
	char		*symlink;
	char		*hardlink;
	char		*data;
	size_t		 len;
};

static int
tmpfd(void)
{
	char	 path[] = "/tmp/test_apid_tar.XXXXXX";
	int	 fd;

	fd = mkstemp(path);
	assert_true(fd != -1);
	assert_int_equal(unlink(path), 0);
	return fd;
}

static void
rewind_fd(int fd)
{
	assert_true(lseek(fd, 0, SEEK_SET) == 0);
}

/* A pax archive of the members, rewound. */
static int
build(const struct mem *m, size_t n)
{
	struct archive		*w;
	struct archive_entry	*e;
	char			*buf;
	size_t			 i, j;
	int			 fd;

	fd = tmpfd();
	w = archive_write_new();
	assert_non_null(w);
	assert_int_equal(archive_write_set_format_pax(w), ARCHIVE_OK);
	assert_int_equal(archive_write_open_fd(w, fd), ARCHIVE_OK);
	for (i = 0; i < n; i++) {
		e = archive_entry_new();
		archive_entry_set_pathname(e, m[i].name);
		archive_entry_set_filetype(e, m[i].type != 0 ? m[i].type :
		    AE_IFREG);
		archive_entry_set_perm(e, m[i].perm);
		archive_entry_set_uid(e, m[i].uid);
		archive_entry_set_gid(e, m[i].gid);
		archive_entry_set_mtime(e, m[i].mtime, 0);
		if (m[i].symlink != NULL)
			archive_entry_set_symlink(e, m[i].symlink);
		if (m[i].hardlink != NULL)
			archive_entry_set_hardlink(e, m[i].hardlink);
		archive_entry_set_size(e, (la_int64_t)m[i].len);
		assert_int_equal(archive_write_header(w, e), ARCHIVE_OK);
		if (m[i].len > 0) {
			buf = malloc(m[i].len);
			assert_non_null(buf);
			for (j = 0; j < m[i].len; j++)
				buf[j] = m[i].data != NULL ? m[i].data[j] :
				    (char)((j * 7 + i) & 0xff);
			assert_int_equal(archive_write_data(w, buf, m[i].len),
			    (la_ssize_t)m[i].len);
			free(buf);
		}
		archive_entry_free(e);
	}
	assert_int_equal(archive_write_close(w), ARCHIVE_OK);
	archive_write_free(w);
	rewind_fd(fd);
	return fd;
}

static char *
xstrdup_or_null(const char *s)
{
	char	*d;

	if (s == NULL)
		return NULL;
	d = strdup(s);
	assert_non_null(d);
	return d;
}

/* Every member of the archive in fd; returns how many. */
static size_t
readback(int fd, struct got *g, size_t max)
{
	struct archive		*r;
	struct archive_entry	*e;
	size_t			 n = 0, cap;
	la_ssize_t		 k;

	rewind_fd(fd);
	r = archive_read_new();
	assert_non_null(r);
	archive_read_support_format_tar(r);
	assert_int_equal(archive_read_open_fd(r, fd, 10240), ARCHIVE_OK);
	while (archive_read_next_header(r, &e) == ARCHIVE_OK) {
		assert_true(n < max);
		memset(&g[n], 0, sizeof(g[n]));
		g[n].name = xstrdup_or_null(archive_entry_pathname(e));
		g[n].type = archive_entry_filetype(e);
		g[n].perm = archive_entry_perm(e);
		g[n].uid = archive_entry_uid(e);
		g[n].gid = archive_entry_gid(e);
		g[n].mtime = archive_entry_mtime(e);
		g[n].symlink = xstrdup_or_null(archive_entry_symlink(e));
		g[n].hardlink = xstrdup_or_null(archive_entry_hardlink(e));
		cap = (size_t)archive_entry_size(e) + 1;
		g[n].data = malloc(cap);
		assert_non_null(g[n].data);
		while ((k = archive_read_data(r, g[n].data + g[n].len,
		    cap - g[n].len)) > 0)
			g[n].len += (size_t)k;
		assert_true(k == 0);
		n++;
	}
	archive_read_free(r);
	return n;
}

static void
got_free(struct got *g, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++) {
		free(g[i].name);
		free(g[i].symlink);
		free(g[i].hardlink);
		free(g[i].data);
	}
}

static off_t
fd_size(int fd)
{
	struct stat	 st;

	assert_int_equal(fstat(fd, &st), 0);
	return st.st_size;
}

static const struct mem docker_ws[] = {
	{ "workspace/", AE_IFDIR, 0755, 1000, 1000, 1700000000, NULL, 0,
	    NULL, NULL },
	{ "workspace/app/", AE_IFDIR, 0750, 1000, 1001, 1700000001, NULL, 0,
	    NULL, NULL },
	{ "workspace/app/secret", AE_IFREG, 0600, 1000, 1000, 1700000002,
	    "s3cret\n", 7, NULL, NULL },
	{ "workspace/run.sh", AE_IFREG, 0755, 0, 0, 1700000003,
	    "#!/bin/sh\necho hi\n", 18, NULL, NULL },
	{ "workspace/link", AE_IFLNK, 0777, 1000, 1000, 1700000004, NULL, 0,
	    "app/secret", NULL },
	{ "workspace/abs", AE_IFLNK, 0777, 1000, 1000, 1700000005, NULL, 0,
	    "/etc/hostname", NULL },
	{ "workspace/hard", 0, 0600, 1000, 1000, 1700000002, NULL, 0,
	    NULL, "workspace/app/secret" },
};

static void
test_rewrite_strips_and_keeps(void **state)
{
	struct got	 g[MAXMEM];
	char		 err[256] = "";
	int		 in, out;
	int64_t		 n;
	size_t		 cnt;

	in = build(docker_ws, sizeof(docker_ws) / sizeof(docker_ws[0]));
	out = tmpfd();
	n = tar_snapshot_rewrite(in, out, 1 << 20, err, sizeof(err));
	assert_true(n > 0);
	assert_int_equal(n, fd_size(out));
	assert_int_equal(n % 10240, 0);
	cnt = readback(out, g, MAXMEM);
	assert_int_equal(cnt, 6);		/* root entry skipped */

	assert_string_equal(g[0].name, "app/");
	assert_int_equal(g[0].type, AE_IFDIR);
	assert_int_equal(g[0].perm, 0750);
	assert_int_equal(g[0].gid, 1001);
	assert_int_equal(g[0].mtime, 1700000001);

	assert_string_equal(g[1].name, "app/secret");
	assert_int_equal(g[1].type, AE_IFREG);
	assert_int_equal(g[1].perm, 0600);
	assert_int_equal(g[1].uid, 1000);
	assert_int_equal(g[1].gid, 1000);
	assert_int_equal(g[1].mtime, 1700000002);
	assert_int_equal(g[1].len, 7);
	assert_memory_equal(g[1].data, "s3cret\n", 7);

	assert_string_equal(g[2].name, "run.sh");
	assert_int_equal(g[2].perm, 0755);
	assert_int_equal(g[2].uid, 0);
	assert_int_equal(g[2].len, 18);
	assert_memory_equal(g[2].data, "#!/bin/sh\necho hi\n", 18);

	assert_string_equal(g[3].name, "link");
	assert_int_equal(g[3].type, AE_IFLNK);
	assert_string_equal(g[3].symlink, "app/secret");
	assert_string_equal(g[4].name, "abs");
	assert_string_equal(g[4].symlink, "/etc/hostname");

	/* §16 item 5: the hard-link target loses its prefix too. */
	assert_string_equal(g[5].name, "hard");
	assert_non_null(g[5].hardlink);
	assert_string_equal(g[5].hardlink, "app/secret");
	assert_int_equal(g[5].len, 0);

	got_free(g, cnt);
	rewind_fd(out);
	assert_int_equal(tar_snapshot_check(out, err, sizeof(err)), 0);
	close(in);
	close(out);
}

static void
test_rewrite_empty_workspace(void **state)
{
	static const struct mem m[] = {
		{ "workspace/", AE_IFDIR, 0755, 1000, 1000, 1, NULL, 0,
		    NULL, NULL },
	};
	struct got	 g[1];
	char		 err[256];
	int		 in, out;
	int64_t		 n;

	in = build(m, 1);
	out = tmpfd();
	n = tar_snapshot_rewrite(in, out, 1 << 20, err, sizeof(err));
	assert_int_equal(n, 10240);		/* size_bytes > 0 (§7.1) */
	assert_int_equal(readback(out, g, 1), 0);
	rewind_fd(out);
	assert_int_equal(tar_snapshot_check(out, err, sizeof(err)), 0);
	close(in);
	close(out);
}

static void
test_rewrite_long_name(void **state)
{
	struct mem	 m[2];
	struct got	 g[2];
	char		 inname[256], want[201], err[256];
	int		 in, out;
	size_t		 cnt;

	memset(want, 'a', 200);
	want[200] = '\0';
	memcpy(want + 50, "/", 1);
	memcpy(want + 120, "/", 1);
	snprintf(inname, sizeof(inname), "workspace/%s", want);
	memset(m, 0, sizeof(m));
	m[0] = (struct mem){ "workspace/", AE_IFDIR, 0755, 1000, 1000, 5,
	    NULL, 0, NULL, NULL };
	m[1] = (struct mem){ inname, AE_IFREG, 0644, 1000, 1000, 5, "x", 1,
	    NULL, NULL };
	in = build(m, 2);
	out = tmpfd();
	assert_true(tar_snapshot_rewrite(in, out, 1 << 20, err,
	    sizeof(err)) > 0);
	cnt = readback(out, g, 2);
	assert_int_equal(cnt, 1);
	assert_int_equal(strlen(g[0].name), 200);
	assert_string_equal(g[0].name, want);
	assert_memory_equal(g[0].data, "x", 1);
	got_free(g, cnt);
	close(in);
	close(out);
}

static void
test_rewrite_skips_fifo(void **state)
{
	static const struct mem m[] = {
		{ "workspace/", AE_IFDIR, 0755, 1000, 1000, 1, NULL, 0,
		    NULL, NULL },
		{ "workspace/pipe", AE_IFIFO, 0644, 1000, 1000, 1, NULL, 0,
		    NULL, NULL },
		{ "workspace/f", AE_IFREG, 0644, 1000, 1000, 1, "f", 1,
		    NULL, NULL },
	};
	struct got	 g[3];
	char		 err[256];
	int		 in, out;
	size_t		 cnt;

	in = build(m, 3);
	out = tmpfd();
	assert_true(tar_snapshot_rewrite(in, out, 1 << 20, err,
	    sizeof(err)) > 0);
	cnt = readback(out, g, 3);
	assert_int_equal(cnt, 1);
	assert_string_equal(g[0].name, "f");
	got_free(g, cnt);
	close(in);
	close(out);
}

static const struct mem big_ws[] = {
	{ "workspace/", AE_IFDIR, 0755, 1000, 1000, 1, NULL, 0, NULL, NULL },
	{ "workspace/a", AE_IFREG, 0644, 1000, 1000, 1, NULL, 65536, NULL,
	    NULL },
	{ "workspace/b", AE_IFREG, 0644, 1000, 1000, 1, NULL, 65536, NULL,
	    NULL },
	{ "workspace/c", AE_IFREG, 0644, 1000, 1000, 1, NULL, 65536, NULL,
	    NULL },
};

static void
test_rewrite_size_cap(void **state)
{
	char	 err[256] = "";
	int	 in, out;
	int64_t	 full;

	in = build(big_ws, 4);
	out = tmpfd();
	errno = 0;
	assert_int_equal(tar_snapshot_rewrite(in, out, 50000, err,
	    sizeof(err)), -1);
	assert_int_equal(errno, EFBIG);
	assert_string_equal(err,
	    "workspace exceeds the snapshot limit of 50000 bytes");
	assert_true(fd_size(out) <= 50000 + 10240);
	close(in);
	close(out);

	/* Exactly the size it needs is enough; one byte less is not. */
	in = build(big_ws, 4);
	out = tmpfd();
	full = tar_snapshot_rewrite(in, out, 1 << 30, err, sizeof(err));
	assert_true(full > 3 * 65536);
	close(in);
	close(out);
	in = build(big_ws, 4);
	out = tmpfd();
	assert_int_equal(tar_snapshot_rewrite(in, out, (uint64_t)full, err,
	    sizeof(err)), full);
	close(in);
	close(out);
	in = build(big_ws, 4);
	out = tmpfd();
	assert_int_equal(tar_snapshot_rewrite(in, out, (uint64_t)full - 1,
	    err, sizeof(err)), -1);
	assert_int_equal(errno, EFBIG);
	close(in);
	close(out);
}

/* One hostile member after a normal start, for both functions. */
/*
 * A rewrite that fails half-way leaves only the whole blocks it had
 * written: no padding, no end of archive, nothing that reads as whole
 * (and, under valgrind, nothing of the writer left allocated).
 */
static void
test_rewrite_failed_stays_broken(void **state)
{
	char	 err[256] = "";
	int	 in, out;

	in = build(big_ws, 4);
	out = tmpfd();
	assert_int_equal(tar_snapshot_rewrite(in, out, 150000, err,
	    sizeof(err)), -1);
	assert_int_equal(errno, EFBIG);
	assert_int_equal(fd_size(out), 2 * 65536);
	rewind_fd(out);
	errno = 0;
	assert_int_equal(tar_snapshot_check(out, err, sizeof(err)), -1);
	assert_int_equal(errno, EIO);
	close(in);
	close(out);
}

static void
refused(const struct mem *bad, const char *want_in_msg)
{
	struct mem	 m[3];
	char		 err[256];
	int		 in, out;

	m[0] = (struct mem){ "workspace/", AE_IFDIR, 0755, 1000, 1000, 1,
	    NULL, 0, NULL, NULL };
	m[1] = (struct mem){ "workspace/ok", AE_IFREG, 0644, 1000, 1000, 1,
	    "ok", 2, NULL, NULL };
	m[2] = *bad;
	in = build(m, 3);
	out = tmpfd();
	err[0] = '\0';
	errno = 0;
	assert_int_equal(tar_snapshot_rewrite(in, out, 1 << 20, err,
	    sizeof(err)), -1);
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(err, want_in_msg));
	close(in);
	close(out);
}

static void
check_refused(const struct mem *bad, const char *want_in_msg)
{
	struct mem	 m[2];
	char		 err[256];
	int		 in;

	m[0] = (struct mem){ "ok", AE_IFREG, 0644, 1000, 1000, 1, "ok", 2,
	    NULL, NULL };
	m[1] = *bad;
	in = build(m, 2);
	err[0] = '\0';
	errno = 0;
	assert_int_equal(tar_snapshot_check(in, err, sizeof(err)), -1);
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(err, want_in_msg));
	close(in);
}

static void
test_malicious(void **state)
{
	static const struct mem dotdot = { "../etc/passwd", AE_IFREG, 0644,
	    0, 0, 1, "x", 1, NULL, NULL };
	static const struct mem abs = { "/etc/passwd", AE_IFREG, 0644,
	    0, 0, 1, "x", 1, NULL, NULL };
	static const struct mem wsdotdot = { "workspace/../etc/passwd",
	    AE_IFREG, 0644, 0, 0, 1, "x", 1, NULL, NULL };
	static const struct mem mid = { "workspace/a/../../etc/passwd",
	    AE_IFREG, 0644, 0, 0, 1, "x", 1, NULL, NULL };
	static const struct mem hlabs = { "workspace/h", 0, 0644, 0, 0, 1,
	    NULL, 0, NULL, "/etc/passwd" };
	static const struct mem hldot = { "workspace/h", 0, 0644, 0, 0, 1,
	    NULL, 0, NULL, "workspace/../etc/passwd" };
	static const struct mem chk_hl = { "h", 0, 0644, 0, 0, 1, NULL, 0,
	    NULL, "../etc/passwd" };
	static const struct mem chk_hlabs = { "h", 0, 0644, 0, 0, 1, NULL,
	    0, NULL, "/etc/shadow" };
	static const struct mem chk_fifo = { "pipe", AE_IFIFO, 0644, 0, 0,
	    1, NULL, 0, NULL, NULL };
	static const struct mem chk_dev = { "sda", AE_IFBLK, 0600, 0, 0, 1,
	    NULL, 0, NULL, NULL };
	static const struct mem chk_chr = { "null", AE_IFCHR, 0666, 0, 0, 1,
	    NULL, 0, NULL, NULL };
	static const struct mem chk_mid = { "a/../../x", AE_IFREG, 0644, 0,
	    0, 1, "x", 1, NULL, NULL };
	static const struct mem chk_dots = { "..", AE_IFDIR, 0755, 0, 0, 1,
	    NULL, 0, NULL, NULL };

	refused(&dotdot, "../etc/passwd");
	refused(&abs, "/etc/passwd");
	refused(&wsdotdot, "workspace/../etc/passwd");
	refused(&mid, "workspace/a/../../etc/passwd");
	refused(&hlabs, "/etc/passwd");
	refused(&hldot, "workspace/../etc/passwd");

	check_refused(&dotdot, "../etc/passwd");
	check_refused(&abs, "/etc/passwd");
	check_refused(&chk_mid, "a/../../x");
	check_refused(&chk_dots, "..");
	check_refused(&chk_hl, "../etc/passwd");
	check_refused(&chk_hlabs, "/etc/shadow");
	check_refused(&chk_fifo, "pipe");
	check_refused(&chk_dev, "sda");
	check_refused(&chk_chr, "null");
}

static void
test_check_not_tar(void **state)
{
	char	 err[256] = "";
	int	 fd;

	fd = tmpfd();
	assert_int_equal(write(fd, "hello, not a tar at all\n", 24), 24);
	rewind_fd(fd);
	assert_int_equal(tar_snapshot_check(fd, err, sizeof(err)), -1);
	assert_true(err[0] != '\0');
	close(fd);
}

static void
test_snapshot_id(void **state)
{
	static const struct {
		const char	*id;
		int		 ok;
	} t[] = {
		{ "snap_9a8b7c6d5e4f3a2b", 1 },
		{ "snap_0000000000000000", 1 },
		{ "snap_ffffffffffffffff", 1 },
		{ "snap_9A8B7C6D5E4F3A2B", 0 },
		{ "SNAP_9a8b7c6d5e4f3a2b", 0 },
		{ "snap_9a8b7c6d5e4f3a2", 0 },
		{ "snap_9a8b7c6d5e4f3a2b0", 0 },
		{ "snap_", 0 },
		{ "", 0 },
		{ "../sandboxes/x", 0 },
		{ "snap_../sandboxes/xx", 0 },
		{ "snap_9a8b7c6d5e4f3a2g", 0 },
		{ "snap_ghijklmnopqrstuv", 0 },
		{ "snap_9a8b7c6d5e4f3a2b/", 0 },
		{ "snap_9a8b7c6d 5e4f3a2", 0 },
		{ "sb_9a8b7c6d5e4f3a2b", 0 },
	};
	size_t	 i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		assert_int_equal(snapshot_id_valid(t[i].id), t[i].ok);
	assert_int_equal(snapshot_id_valid(NULL), 0);
}

static void
test_first_file(void **state)
{
	static const struct mem m[] = {
		{ "d/", AE_IFDIR, 0755, 0, 0, 1, NULL, 0, NULL, NULL },
		{ "l", AE_IFLNK, 0777, 0, 0, 1, NULL, 0, "f", NULL },
		{ "f", AE_IFREG, 0644, 0, 0, 1, "hello", 5, NULL, NULL },
		{ "g", AE_IFREG, 0644, 0, 0, 1, "other", 5, NULL, NULL },
	};
	char	 buf[16];
	int	 in, out;

	in = build(m, 4);
	out = tmpfd();
	assert_int_equal(tar_first_file(in, 1024, out), 5);
	rewind_fd(out);
	assert_int_equal(read(out, buf, sizeof(buf)), 5);
	assert_memory_equal(buf, "hello", 5);
	close(in);
	close(out);

	/* Exactly the cap is allowed. */
	in = build(m, 4);
	out = tmpfd();
	assert_int_equal(tar_first_file(in, 5, out), 5);
	close(in);
	close(out);
}

static void
test_first_file_binary(void **state)
{
	static struct mem m[1] = {
		{ "bin", AE_IFREG, 0644, 0, 0, 1, NULL, 16384, NULL, NULL },
	};
	static char	 want[16384], got[16384 + 1];
	size_t		 i;
	int		 in, out;

	for (i = 0; i < sizeof(want); i++)
		want[i] = (char)(i & 0xff);
	m[0].data = want;
	in = build(m, 1);
	out = tmpfd();
	assert_int_equal(tar_first_file(in, 1 << 20, out), 16384);
	rewind_fd(out);
	assert_int_equal(read(out, got, sizeof(got)), 16384);
	assert_memory_equal(got, want, 16384);
	close(in);
	close(out);
}

static void
test_first_file_none(void **state)
{
	static const struct mem m[] = {
		{ "d/", AE_IFDIR, 0755, 0, 0, 1, NULL, 0, NULL, NULL },
		{ "l", AE_IFLNK, 0777, 0, 0, 1, NULL, 0, "x", NULL },
	};
	int	 in, out;

	in = build(m, 2);
	out = tmpfd();
	errno = 0;
	assert_int_equal(tar_first_file(in, 1024, out), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(fd_size(out), 0);
	close(in);
	close(out);
}

static void
test_first_file_too_big(void **state)
{
	static const struct mem m[] = {
		{ "big", AE_IFREG, 0644, 0, 0, 1, NULL, 2048, NULL, NULL },
	};
	int	 in, out;

	in = build(m, 1);
	out = tmpfd();
	errno = 0;
	assert_int_equal(tar_first_file(in, 1024, out), -1);
	assert_int_equal(errno, EFBIG);
	assert_int_equal(fd_size(out), 0);
	close(in);
	close(out);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rewrite_strips_and_keeps),
		cmocka_unit_test(test_rewrite_empty_workspace),
		cmocka_unit_test(test_rewrite_long_name),
		cmocka_unit_test(test_rewrite_skips_fifo),
		cmocka_unit_test(test_rewrite_size_cap),
		cmocka_unit_test(test_rewrite_failed_stays_broken),
		cmocka_unit_test(test_malicious),
		cmocka_unit_test(test_check_not_tar),
		cmocka_unit_test(test_snapshot_id),
		cmocka_unit_test(test_first_file),
		cmocka_unit_test(test_first_file_binary),
		cmocka_unit_test(test_first_file_none),
		cmocka_unit_test(test_first_file_too_big),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
