/*
 * The archive worker's tar jobs (API.md §6.2, §7.1, §7.3, §16 item 5):
 * FIRST_FILE, SNAPSHOT and CHECK, each run as the worker runs it, in a
 * forked process under the zygote's and the job's seccomp filters.
 * Archives come from libarchive (as a well-behaved tar writer) or are
 * built byte by byte (as Docker writes them, or as a hostile sandbox
 * might); output is read back with libarchive and with the worker's own
 * reader, which shows names as raw bytes.
 */
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

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

#include "worker_fixture.h"

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

/* A pax archive of the members (libarchive's), rewound. */
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

/* The jobs, with the shape the tests had when they ran in apid. */
static int
job_result(const struct tar_result *res, char *err, size_t errlen)
{
	if (err != NULL)
		snprintf(err, errlen, "%s", res->message != NULL ?
		    res->message : "");
	errno = res->errnum;
	return res->errnum == 0 ? 0 : -1;
}

static int64_t
tar_snapshot_rewrite(int in, int out, uint64_t max, char *err,
    size_t errlen)
{
	struct archive_job	 j = { .kind = ARCHIVE_JOB_SNAPSHOT };
	struct tar_result	 res;
	int64_t			 rv;

	j.max_bytes = max;
	run_job(&j, in, out, &res);
	rv = job_result(&res, err, errlen) == 0 ? (int64_t)res.bytes : -1;
	tar_result_free(&res);
	return rv;
}

static int
tar_snapshot_check(int fd, char *err, size_t errlen)
{
	struct archive_job	 j = { .kind = ARCHIVE_JOB_CHECK };
	struct tar_result	 res;
	int			 rv;

	run_job(&j, fd, -1, &res);
	rv = job_result(&res, err, errlen);
	tar_result_free(&res);
	return rv;
}

static ssize_t
tar_member_file(int in, uint64_t max, const char *member, int out)
{
	struct archive_job	 j = { .kind = ARCHIVE_JOB_FIRST_FILE };
	struct tar_result	 res;
	ssize_t			 rv;

	j.max_bytes = max;
	j.name = (char *)(uintptr_t)member;
	run_job(&j, in, out, &res);
	rv = job_result(&res, NULL, 0) == 0 ? (ssize_t)res.bytes : -1;
	tar_result_free(&res);
	return rv;
}

static ssize_t
tar_first_file(int in, uint64_t max, int out)
{
	return tar_member_file(in, max, NULL, out);
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
	assert_int_equal(g[0].type, TAR_DIR);
	assert_int_equal(g[0].mode, 0750);
	assert_int_equal(g[0].gid, 1001);
	assert_int_equal(g[0].mtime, 1700000001);

	assert_string_equal(g[1].name, "app/secret");
	assert_int_equal(g[1].type, TAR_REG);
	assert_int_equal(g[1].mode, 0600);
	assert_int_equal(g[1].uid, 1000);
	assert_int_equal(g[1].gid, 1000);
	assert_int_equal(g[1].mtime, 1700000002);
	assert_int_equal(g[1].len, 7);
	assert_memory_equal(g[1].data, "s3cret\n", 7);

	assert_string_equal(g[2].name, "run.sh");
	assert_int_equal(g[2].mode, 0755);
	assert_int_equal(g[2].uid, 0);
	assert_int_equal(g[2].len, 18);
	assert_memory_equal(g[2].data, "#!/bin/sh\necho hi\n", 18);

	assert_string_equal(g[3].name, "link");
	assert_int_equal(g[3].type, TAR_SYMLINK);
	assert_string_equal(g[3].link, "app/secret");
	assert_string_equal(g[4].name, "abs");
	assert_string_equal(g[4].link, "/etc/hostname");

	/* §16 item 5: the hard-link target loses its prefix too. */
	assert_string_equal(g[5].name, "hard");
	assert_int_equal(g[5].type, TAR_HARDLINK);
	assert_string_equal(g[5].link, "app/secret");
	assert_int_equal(g[5].len, 0);

	got_free(g, cnt);
	rewind_fd(out);
	assert_int_equal(tar_snapshot_check(out, err, sizeof(err)), 0);
	close(in);
	close(out);
}

/*
 * dockerd-proxy refuses setuid bits, and setgid on anything but a
 * directory: a snapshot leaves them out, so that it can be restored.
 */
static const struct mem setid_ws[] = {
	{ "workspace/", AE_IFDIR, 0755, 1000, 1000, 1700000000, NULL, 0,
	    NULL, NULL },
	{ "workspace/shared/", AE_IFDIR, 06775, 1000, 1000, 1700000000, NULL,
	    0, NULL, NULL },
	{ "workspace/tool", AE_IFREG, 06755, 1000, 1000, 1700000000, "#!", 2,
	    NULL, NULL },
	{ "workspace/tmp/", AE_IFDIR, 01777, 1000, 1000, 1700000000, NULL, 0,
	    NULL, NULL },
};

static void
test_rewrite_drops_setid_bits(void **state)
{
	struct got	 g[MAXMEM];
	char		 err[256] = "";
	int		 in, out;
	size_t		 cnt;

	in = build(setid_ws, sizeof(setid_ws) / sizeof(setid_ws[0]));
	out = tmpfd();
	assert_true(tar_snapshot_rewrite(in, out, 1 << 20, err,
	    sizeof(err)) > 0);
	cnt = readback(out, g, MAXMEM);
	assert_int_equal(cnt, 3);
	assert_string_equal(g[0].name, "shared/");
	assert_int_equal(g[0].mode, 02775);
	assert_string_equal(g[1].name, "tool");
	assert_int_equal(g[1].mode, 0755);
	assert_string_equal(g[2].name, "tmp/");
	assert_int_equal(g[2].mode, 01777);
	got_free(g, cnt);
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

/*
 * A workspace over two WRITEBACK_STEPs: the rewrite starts the file's
 * writeback twice under the job's real filter, and the file is still
 * the whole snapshot.
 */
static void
test_rewrite_big(void **state)
{
	const struct mem	 ws[] = {
		{ "workspace/", AE_IFDIR, 0755, 1000, 1000, 1, NULL, 0,
		    NULL, NULL },
		{ "workspace/big", AE_IFREG, 04755, 1000, 1000, 1, NULL,
		    2 * WRITEBACK_STEP + 5, NULL, NULL },
	};
	struct got		 g[2];
	char			 err[256] = "";
	int			 in, out;
	int64_t			 n;

	(void)state;
	in = build(ws, 2);
	out = tmpfd();
	n = tar_snapshot_rewrite(in, out, 1 << 30, err, sizeof(err));
	assert_true(n > 2 * WRITEBACK_STEP + 5);
	assert_int_equal(fd_size(out), n);
	assert_int_equal(readback_raw(out, g, 2), 1);
	assert_string_equal(g[0].name, "big");
	assert_int_equal(g[0].len, 2 * WRITEBACK_STEP + 5);
	assert_int_equal(g[0].mode & 07777, 0755);
	got_free(g, 1);
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

/*
 * Names are bytes (issue 9): whatever a sandbox names a file, the name
 * comes through FIRST_FILE, SNAPSHOT and CHECK unchanged, under the
 * filters that killed apid when libarchive converted a pax path.
 */
static const char *const odd_names[] = {
	"caf\xc3\xa9.txt",		/* café, precomposed */
	"\xc3\xbcnic\xc3\xb8" "de.txt",	/* ünicøde */
	"cafe\xcc\x81",			/* the same é decomposed: NFD */
	"\xe2\x84\xaa",			/* KELVIN SIGN, which NFC makes K */
	"\xe9t\xe9.txt",		/* Latin-1 */
	"bad \xff\xfe utf-8",		/* not UTF-8 at all */
	"\xed\xa0\x80 surrogate",	/* CESU-8 */
	"sp ace/x y",
	"new\nline",
	"tab\tand\rcr",
	"back\\slash",
	"-rf",
};

static int
is_ascii(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s >= 0x80)
			return 0;
	return 1;
}

/*
 * A member header the way Go's archive/tar (Docker's) writes one: ustar
 * if the name fits, split into prefix and name if it can be, else a pax
 * path record (raw bytes, no hdrcharset).
 */
static void
go_header(struct tb *t, const char *name, char type, size_t size)
{
	const char	*slash;
	char		 prefix[160];
	size_t		 len = strlen(name), plen;

	if (is_ascii(name) && len <= 100) {
		tb_header(t, name, type, size, NULL);
		return;
	}
	for (slash = strchr(name, '/'); is_ascii(name) && slash != NULL;
	    slash = strchr(slash + 1, '/')) {
		plen = (size_t)(slash - name);
		if (plen <= 155 && len - plen - 1 <= 100 && slash[1] != '\0') {
			memcpy(prefix, name, plen);
			prefix[plen] = '\0';
			tb_header_prefix(t, prefix, slash + 1, type, size);
			return;
		}
	}
	tb_pax(t, "path", name, len);
	tb_header(t, "placeholder", type, size, NULL);
}

/*
 * A named member of a directory's tar (Docker's, of sub): exactly that
 * name, whatever its bytes, skipping the files before it; none of that
 * name is ENOENT.
 */
static int
docker_sub(void)
{
	struct tb	 t;
	int		 fd;

	tb_init(&t);
	tb_header(&t, "sub/", '5', 0, NULL);
	go_header(&t, "sub/caf\xe9.txt.bak", '0', 6);
	tb_data(&t, "not it", 6);
	go_header(&t, "sub/a", '0', 7);
	tb_data(&t, "skipped", 7);
	go_header(&t, "sub/caf\xe9.txt", '0', 5);
	tb_data(&t, "latin", 5);
	tb_end(&t);
	fd = tb_file(&t);
	tb_free(&t);
	return fd;
}

static void
test_first_file_by_name(void **state)
{
	char	 buf[16];
	int	 in, out;

	in = docker_sub();
	out = tmpfd();
	assert_int_equal(tar_member_file(in, 1024, "sub/caf\xe9.txt", out), 5);
	rewind_fd(out);
	assert_int_equal(read(out, buf, sizeof(buf)), 5);
	assert_memory_equal(buf, "latin", 5);
	close(in);
	close(out);
	in = docker_sub();
	out = tmpfd();
	errno = 0;
	assert_int_equal(tar_member_file(in, 1024, "sub/caf\xe9", out), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(fd_size(out), 0);
	close(in);
	close(out);
}

/* Docker's archive of /workspace holding one file. */
static int
docker_workspace(const char *name, const char *data, int gnu)
{
	struct tb	 t;
	char		*full;
	int		 fd;

	assert_true(asprintf(&full, "workspace/%s", name) != -1);
	tb_init(&t);
	tb_header(&t, "workspace/", '5', 0, NULL);
	if (gnu) {
		tb_gnu_long(&t, 'L', full);
		tb_header(&t, "cut-short", '0', strlen(data), NULL);
	} else
		go_header(&t, full, '0', strlen(data));
	tb_data(&t, data, strlen(data));
	tb_end(&t);
	fd = tb_file(&t);
	tb_free(&t);
	free(full);
	return fd;
}

static void
name_through_jobs(const char *name, int gnu)
{
	struct tb	 t;
	struct got	 g[2];
	char		 err[512] = "", buf[64], *base;
	int		 in, out;

	/* FIRST_FILE: Docker's archive of the file alone. */
	base = strrchr(name, '/') != NULL ? strrchr(name, '/') + 1 :
	    (char *)(uintptr_t)name;
	tb_init(&t);
	if (gnu) {
		tb_gnu_long(&t, 'L', base);
		tb_header(&t, "cut-short", '0', 5, NULL);
	} else
		go_header(&t, base, '0', 5);
	tb_data(&t, "bytes", 5);
	tb_end(&t);
	in = tb_file(&t);
	out = tmpfd();
	assert_int_equal(tar_first_file(in, 100, out), 5);
	rewind_fd(out);
	assert_int_equal(read(out, buf, sizeof(buf)), 5);
	assert_memory_equal(buf, "bytes", 5);
	close(in);
	close(out);
	tb_free(&t);

	/* SNAPSHOT, then CHECK of what it wrote. */
	in = docker_workspace(name, "hi\n", gnu);
	out = tmpfd();
	if (tar_snapshot_rewrite(in, out, 1 << 20, err, sizeof(err)) <= 0)
		fail_msg("snapshot of %s: %s", name, err);
	assert_int_equal(readback_raw(out, g, 2), 1);
	assert_string_equal(g[0].name, name);
	assert_int_equal(g[0].len, 3);
	assert_memory_equal(g[0].data, "hi\n", 3);
	got_free(g, 1);
	/* libarchive, a reader that is not ours, sees the same bytes. */
	assert_int_equal(readback(out, g, 2), 1);
	assert_string_equal(g[0].name, name);
	got_free(g, 1);
	rewind_fd(out);
	if (tar_snapshot_check(out, err, sizeof(err)) != 0)
		fail_msg("check of %s: %s", name, err);
	close(in);
	close(out);
}

static void
test_names_are_bytes(void **state)
{
	char	 long_name[256], deep[256];
	size_t	 i;

	for (i = 0; i < sizeof(odd_names) / sizeof(odd_names[0]); i++) {
		name_through_jobs(odd_names[i], 0);
		name_through_jobs(odd_names[i], 1);
	}
	/* 255 bytes, the longest a Linux file name can be. */
	memset(long_name, 'n', 255);
	long_name[255] = '\0';
	memcpy(long_name, "\xc3\xa9", 2);
	name_through_jobs(long_name, 0);
	name_through_jobs(long_name, 1);
	/* 100 levels deep: ustar's prefix and name fields. */
	for (i = 0; i < 100; i++)
		memcpy(deep + 2 * i, "d/", 2);
	memcpy(deep + 200, "file", 5);
	name_through_jobs(deep, 0);
	name_through_jobs(deep, 1);
}

/* Links keep their bytes too, rewritten or not. */
static void
test_link_names_are_bytes(void **state)
{
	static const char	 target[] = "caf\xc3\xa9 \xe9\n.txt",
				 full[] = "workspace/caf\xc3\xa9 \xe9\n.txt";
	struct tb		 t;
	struct got		 g[4];
	char			 err[256];
	int			 in, out;

	tb_init(&t);
	tb_header(&t, "workspace/", '5', 0, NULL);
	tb_pax(&t, "path", full, strlen(full));
	tb_header(&t, "x", '0', 2, NULL);
	tb_data(&t, "ok", 2);
	tb_pax(&t, "linkpath", target, strlen(target));
	tb_header(&t, "workspace/sym", '2', 0, NULL);
	tb_pax(&t, "linkpath", full, strlen(full));
	tb_header(&t, "workspace/hard", '1', 0, NULL);
	tb_end(&t);
	in = tb_file(&t);
	tb_free(&t);
	out = tmpfd();
	assert_true(tar_snapshot_rewrite(in, out, 1 << 20, err,
	    sizeof(err)) > 0);
	assert_int_equal(readback_raw(out, g, 4), 3);
	assert_string_equal(g[0].name, target);
	assert_int_equal(g[1].type, TAR_SYMLINK);
	assert_string_equal(g[1].link, target);
	assert_int_equal(g[2].type, TAR_HARDLINK);
	assert_string_equal(g[2].link, target);
	got_free(g, 3);
	close(in);
	close(out);
}

/* The jobs read pipes, as in production: Docker's tar comes in one. */
static void
test_jobs_on_pipes(void **state)
{
	struct tb	 t;
	struct got	 g[2];
	char		 err[256], *data;
	size_t		 len;
	int		 in, out, p[2];

	tb_init(&t);
	tb_header(&t, "workspace/", '5', 0, NULL);
	tb_pax(&t, "path", "workspace/\xc3\xbcnic\xc3\xb8" "de.txt",
	    strlen("workspace/\xc3\xbcnic\xc3\xb8" "de.txt"));
	tb_header(&t, "x", '0', 70000, NULL);
	assert_non_null(data = malloc(70000));
	memset(data, 'z', 70000);
	tb_data(&t, data, 70000);
	free(data);
	tb_end(&t);
	in = feed_pipe(t.buf, t.len);
	out = tmpfd();
	assert_true(tar_snapshot_rewrite(in, out, 1 << 20, err,
	    sizeof(err)) > 0);
	assert_int_equal(readback_raw(out, g, 2), 1);
	assert_string_equal(g[0].name, "\xc3\xbcnic\xc3\xb8" "de.txt");
	assert_int_equal(g[0].len, 70000);
	got_free(g, 1);
	close(in);
	close(out);

	/* FIRST_FILE from a pipe into a pipe, read while it runs. */
	in = feed_pipe(t.buf, t.len);
	assert_int_equal(pipe(p), 0);
	out = tmpfd();
	if (fork() == 0) {
		char	 buf[8192];
		ssize_t	 n;

		close(p[1]);
		while ((n = read(p[0], buf, sizeof(buf))) > 0)
			(void)write_all(out, buf, (size_t)n);
		_exit(0);
	}
	close(p[0]);
	assert_int_equal(tar_first_file(in, 1 << 20, p[1]), 70000);
	close(p[1]);
	close(in);
	while (wait(NULL) > 0)
		;
	free(slurp(out, &len));
	assert_int_equal(len, 70000);
	close(out);
	tb_free(&t);
}

/* What a hostile or broken archive does to each job: a clean failure. */
struct bad_case {
	const char	*what;
	int		 snapshot_errnum;	/* as Docker's /workspace */
	int		 first_file_errnum;	/* 0: not tried */
	int		 check_ok;	/* fine as a stored snapshot */
};

static void
expect_fails(const struct tb *t, const struct bad_case *c)
{
	char	 err[512] = "";
	int	 in, out;

	in = tb_file(t);
	out = tmpfd();
	if (tar_snapshot_rewrite(in, out, 1 << 20, err, sizeof(err)) != -1)
		fail_msg("%s: the snapshot succeeded", c->what);
	if (errno != c->snapshot_errnum)
		fail_msg("%s: errno %d (%s), not %d", c->what, errno, err,
		    c->snapshot_errnum);
	assert_true(err[0] != '\0');
	close(out);
	rewind_fd(in);
	if (tar_snapshot_check(in, err, sizeof(err)) != (c->check_ok ? 0 : -1))
		fail_msg("%s: the check %s", c->what, c->check_ok ?
		    "failed" : "passed");
	if (c->first_file_errnum != 0) {
		rewind_fd(in);
		out = tmpfd();
		if (tar_first_file(in, 1 << 20, out) != -1 ||
		    errno != c->first_file_errnum)
			fail_msg("%s: first file: errno %d, not %d", c->what,
			    errno, c->first_file_errnum);
		close(out);
	}
	close(in);
}

static void
ws_start(struct tb *t)
{
	tb_init(t);
	tb_header(t, "workspace/", '5', 0, NULL);
}

static void
test_truncated_and_garbage(void **state)
{
	static const struct bad_case	 trunc_header = { "cut in a header",
	    EIO, EIO, 0 }, trunc_data = { "cut in the data", EIO, EIO, 0 },
	    no_end = { "no end-of-archive blocks", EIO, 0, 0 },
	    garbage = { "garbage", EIO, EIO, 0 },
	    after_end = { "data after the end", EIO, 0, 0 },
	    bad_sum = { "a bad checksum", EIO, EIO, 0 };
	struct tb	 t, u;
	unsigned char	 junk[4096];
	size_t		 i;

	for (i = 0; i < sizeof(junk); i++)
		junk[i] = (unsigned char)(i * 131 + 7);
	ws_start(&t);
	tb_header(&t, "workspace/f", '0', 1000, NULL);
	tb_data(&t, junk, 1000);
	tb_end(&t);
	tb_init(&u);
	tb_bytes(&u, t.buf, 512 + 100);
	expect_fails(&u, &trunc_header);
	tb_free(&u);
	tb_init(&u);
	tb_bytes(&u, t.buf, 1024 + 500);
	expect_fails(&u, &trunc_data);
	tb_free(&u);
	tb_init(&u);
	tb_bytes(&u, t.buf, t.len - 1024);
	expect_fails(&u, &no_end);
	tb_free(&u);
	/* One zero block, then more: Go's reader says ErrHeader too. */
	tb_init(&u);
	tb_bytes(&u, t.buf, t.len - 512);
	tb_header(&u, "workspace/hidden", '0', 0, NULL);
	tb_end(&u);
	expect_fails(&u, &after_end);
	tb_free(&u);
	t.buf[512 + 10] ^= 0x40;	/* a byte of the file's name */
	expect_fails(&t, &bad_sum);
	tb_free(&t);

	tb_init(&u);
	tb_bytes(&u, junk, sizeof(junk));
	expect_fails(&u, &garbage);
	tb_free(&u);
}

static void
test_huge_sizes(void **state)
{
	static const unsigned char	 octal_max[12] = "77777777777",
	    b256_huge[12] = { 0x80, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0 },
	    b256_neg[12] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	    0xff, 0xff, 0xff, 0xfe }, bad_digit[12] = "0000000009\0";
	static const struct bad_case	 declared = { "8 GiB declared, "
	    "little there", EIO, EFBIG, 0 }, b256 = { "base-256 2^62",
	    EIO, EFBIG, 0 }, negative = { "a negative size", EIO, EIO, 0 },
	    digit = { "a 9 in an octal size", EIO, EIO, 0 },
	    pax_huge = { "pax size 2^62", EIO, EFBIG, 0 },
	    pax_bad = { "pax size -1", EIO, EIO, 0 };
	struct tb	 t;

	ws_start(&t);
	tb_header_size_field(&t, "workspace/f", '0', octal_max);
	tb_data(&t, "abc", 3);
	tb_end(&t);
	expect_fails(&t, &declared);
	tb_free(&t);
	ws_start(&t);
	tb_header_size_field(&t, "workspace/f", '0', b256_huge);
	tb_end(&t);
	expect_fails(&t, &b256);
	tb_free(&t);
	ws_start(&t);
	tb_header_size_field(&t, "workspace/f", '0', b256_neg);
	tb_end(&t);
	expect_fails(&t, &negative);
	tb_free(&t);
	ws_start(&t);
	tb_header_size_field(&t, "workspace/f", '0', bad_digit);
	tb_end(&t);
	expect_fails(&t, &digit);
	tb_free(&t);
	ws_start(&t);
	tb_pax(&t, "size", "4611686018427387904", 19);
	tb_header(&t, "workspace/f", '0', 3, NULL);
	tb_data(&t, "abc", 3);
	tb_end(&t);
	expect_fails(&t, &pax_huge);
	tb_free(&t);
	ws_start(&t);
	tb_pax(&t, "size", "-1", 2);
	tb_header(&t, "workspace/f", '0', 3, NULL);
	tb_data(&t, "abc", 3);
	tb_end(&t);
	expect_fails(&t, &pax_bad);
	tb_free(&t);
}

/* A member over the limit: the download and the snapshot both refuse. */
static void
test_member_over_max(void **state)
{
	struct tb	 t;
	char		 err[256], data[4096];
	int		 in, out;

	memset(data, 'x', sizeof(data));
	ws_start(&t);
	tb_header(&t, "workspace/big", '0', sizeof(data), NULL);
	tb_data(&t, data, sizeof(data));
	tb_end(&t);
	in = tb_file(&t);
	out = tmpfd();
	assert_int_equal(tar_first_file(in, sizeof(data) - 1, out), -1);
	assert_int_equal(errno, EFBIG);
	assert_int_equal(fd_size(out), 0);
	close(out);
	rewind_fd(in);
	out = tmpfd();
	assert_int_equal(tar_snapshot_rewrite(in, out, 2048, err,
	    sizeof(err)), -1);
	assert_int_equal(errno, EFBIG);
	assert_true(fd_size(out) <= 2048);
	close(out);
	close(in);
	tb_free(&t);
}

static void
test_hostile_members(void **state)
{
	static const struct bad_case	 hl_out = { "a hard link out",
	    EINVAL, 0, 1 }, dotdot = { "pax path with ..", EINVAL, 0, 0 },
	    abs = { "GNU long name, absolute", EINVAL, 0, 0 },
	    prefix = { "ustar prefix outside", EINVAL, 0, 1 },
	    sparse = { "a GNU sparse member", EIO, EIO, 0 },
	    pax_sparse = { "pax GNU.sparse", EIO, EIO, 0 },
	    nul = { "NUL in a pax path", EIO, EIO, 0 },
	    bad_rec = { "a pax record that lies", EIO, EIO, 0 },
	    big_pax = { "a 2 MiB pax header", EIO, EIO, 0 },
	    long_gnu = { "a 100 KiB GNU name", EIO, EIO, 0 },
	    dangling = { "a pax header and no member", EIO, 0, 0 },
	    root = { "root as a file", EINVAL, 0, 1 };
	struct tb	 t;
	char		*big;

	ws_start(&t);
	tb_header(&t, "workspace/h", '1', 0, "etc/passwd");
	tb_end(&t);
	expect_fails(&t, &hl_out);
	tb_free(&t);
	ws_start(&t);
	tb_pax(&t, "path", "workspace/a/../../etc/x", 23);
	tb_header(&t, "workspace/innocent", '0', 0, NULL);
	tb_end(&t);
	expect_fails(&t, &dotdot);
	tb_free(&t);
	ws_start(&t);
	tb_gnu_long(&t, 'L', "/etc/cron.d/evil");
	tb_header(&t, "workspace/innocent", '0', 0, NULL);
	tb_end(&t);
	expect_fails(&t, &abs);
	tb_free(&t);
	ws_start(&t);
	tb_header_prefix(&t, "etc", "passwd", '0', 0);
	tb_end(&t);
	expect_fails(&t, &prefix);
	tb_free(&t);
	ws_start(&t);
	tb_header(&t, "workspace/sparse", 'S', 0, NULL);
	tb_end(&t);
	expect_fails(&t, &sparse);
	tb_free(&t);
	ws_start(&t);
	tb_pax(&t, "GNU.sparse.major", "1", 1);
	tb_header(&t, "workspace/s", '0', 0, NULL);
	tb_end(&t);
	expect_fails(&t, &pax_sparse);
	tb_free(&t);
	ws_start(&t);
	tb_pax(&t, "path", "workspace/ok\0../../x", 20);
	tb_header(&t, "workspace/s", '0', 0, NULL);
	tb_end(&t);
	expect_fails(&t, &nul);
	tb_free(&t);
	ws_start(&t);
	tb_pax_raw(&t, "99 path=x\n", 10);
	tb_header(&t, "workspace/s", '0', 0, NULL);
	tb_end(&t);
	expect_fails(&t, &bad_rec);
	tb_free(&t);
	assert_non_null(big = malloc(2 * 1024 * 1024 + 1));
	memset(big, 'a', 2 * 1024 * 1024);
	big[2 * 1024 * 1024] = '\0';
	ws_start(&t);
	tb_pax(&t, "comment", big, 2 * 1024 * 1024);
	tb_header(&t, "workspace/s", '0', 0, NULL);
	tb_end(&t);
	expect_fails(&t, &big_pax);
	tb_free(&t);
	big[100 * 1024] = '\0';
	ws_start(&t);
	tb_gnu_long(&t, 'L', big);
	tb_header(&t, "workspace/s", '0', 0, NULL);
	tb_end(&t);
	expect_fails(&t, &long_gnu);
	tb_free(&t);
	free(big);
	ws_start(&t);
	tb_pax(&t, "path", "workspace/x", 11);
	tb_end(&t);
	expect_fails(&t, &dangling);
	tb_free(&t);
	tb_init(&t);
	tb_header(&t, "workspace", '0', 0, NULL);
	tb_end(&t);
	expect_fails(&t, &root);
	tb_free(&t);
}

/* Devices and FIFOs: left out of a snapshot, refused in a stored one. */
static void
test_special_members(void **state)
{
	static const char	 types[] = { '3', '4', '6', 'V', 'D' };
	struct tb		 t;
	struct got		 g[2];
	char			 err[256];
	size_t			 i;
	int			 in, out;

	for (i = 0; i < sizeof(types); i++) {
		ws_start(&t);
		tb_header(&t, "workspace/special", types[i], 0, NULL);
		tb_header(&t, "workspace/f", '0', 1, NULL);
		tb_data(&t, "f", 1);
		tb_end(&t);
		in = tb_file(&t);
		out = tmpfd();
		assert_true(tar_snapshot_rewrite(in, out, 1 << 20, err,
		    sizeof(err)) > 0);
		assert_int_equal(readback_raw(out, g, 2), 1);
		assert_string_equal(g[0].name, "f");
		got_free(g, 1);
		close(in);
		close(out);
		tb_free(&t);

		tb_init(&t);
		tb_header(&t, "special", types[i], 0, NULL);
		tb_end(&t);
		in = tb_file(&t);
		errno = 0;
		assert_int_equal(tar_snapshot_check(in, err, sizeof(err)), -1);
		assert_int_equal(errno, EINVAL);
		assert_non_null(strstr(err, "special"));
		close(in);
		tb_free(&t);
	}
}

/* A name in a message is escaped: no newline reaches a log line. */
static void
test_names_in_messages_escaped(void **state)
{
	struct tb	 t;
	char		 err[512];
	int		 in;

	tb_init(&t);
	tb_pax(&t, "path", "../evil\nINFO fake log line \xff",
	    strlen("../evil\nINFO fake log line \xff"));
	tb_header(&t, "x", '0', 0, NULL);
	tb_end(&t);
	in = tb_file(&t);
	assert_int_equal(tar_snapshot_check(in, err, sizeof(err)), -1);
	assert_int_equal(errno, EINVAL);
	assert_null(strchr(err, '\n'));
	assert_non_null(strstr(err, "../evil\\x0aINFO fake log line \\xff"));
	close(in);
	tb_free(&t);
}

/* CHECK reads to the end of the archive and says how far that was. */
static void
test_check_counts_bytes(void **state)
{
	struct archive_job	 j = { .kind = ARCHIVE_JOB_CHECK };
	struct tar_result	 res;
	struct tb		 t;
	int			 in;

	tb_init(&t);
	tb_header(&t, "f", '0', 3, NULL);
	tb_data(&t, "abc", 3);
	tb_end(&t);
	in = tb_file(&t);
	run_job(&j, in, -1, &res);
	assert_int_equal(res.errnum, 0);
	assert_true(res.bytes == t.len);
	tar_result_free(&res);
	close(in);
	tb_free(&t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rewrite_strips_and_keeps),
		cmocka_unit_test(test_rewrite_drops_setid_bits),
		cmocka_unit_test(test_rewrite_empty_workspace),
		cmocka_unit_test(test_rewrite_long_name),
		cmocka_unit_test(test_rewrite_skips_fifo),
		cmocka_unit_test(test_rewrite_size_cap),
		cmocka_unit_test(test_rewrite_big),
		cmocka_unit_test(test_rewrite_failed_stays_broken),
		cmocka_unit_test(test_malicious),
		cmocka_unit_test(test_check_not_tar),
		cmocka_unit_test(test_first_file),
		cmocka_unit_test(test_first_file_by_name),
		cmocka_unit_test(test_first_file_binary),
		cmocka_unit_test(test_first_file_none),
		cmocka_unit_test(test_first_file_too_big),
		cmocka_unit_test(test_names_are_bytes),
		cmocka_unit_test(test_link_names_are_bytes),
		cmocka_unit_test(test_jobs_on_pipes),
		cmocka_unit_test(test_truncated_and_garbage),
		cmocka_unit_test(test_huge_sizes),
		cmocka_unit_test(test_member_over_max),
		cmocka_unit_test(test_hostile_members),
		cmocka_unit_test(test_special_members),
		cmocka_unit_test(test_names_in_messages_escaped),
		cmocka_unit_test(test_check_counts_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
