/*
 * The archive worker's SPOOL and UPLOAD jobs (API.md §4.10), each run as
 * the worker runs it, in a forked process under the zygote's and the
 * job's seccomp filters.  The upload tar is read back with libarchive
 * and with the worker's own reader (names as raw bytes).
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
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

#define MAXMEM	8
#define MTIME	1700000000

/* The job managerd's FILE_WRITE_READY describes: parents new, 0755. */
static void
upload_job(struct archive_job *j, const char *name, uint32_t mode,
    uint64_t size)
{
	const char	*p;
	uint32_t	 i;

	memset(j, 0, sizeof(*j));
	j->kind = ARCHIVE_JOB_UPLOAD;
	assert_non_null(j->name = strdup(name));
	j->uid = 1000;
	j->gid = 1001;
	j->mode = mode;
	j->mtime = MTIME;
	j->size = size;
	for (p = name; (p = strchr(p, '/')) != NULL; p++)
		j->ndirs++;
	if (j->ndirs == 0)
		return;
	assert_non_null(j->dirs = calloc(j->ndirs, sizeof(*j->dirs)));
	for (i = 0; i < j->ndirs; i++) {
		j->dirs[i].mode = 0755;
		j->dirs[i].mtime = MTIME;
	}
}

static int
spool_of(const void *body, size_t len)
{
	int	 fd = tmpfd();

	assert_int_equal(write_all(fd, body, len), 0);
	rewind_fd(fd);
	return fd;
}

static void
expect_dir(const struct got *g, const char *name)
{
	assert_string_equal(g->name, name);
	assert_int_equal(g->type, TAR_DIR);
	assert_int_equal(g->mode, 0755);
	assert_int_equal(g->uid, 1000);
	assert_int_equal(g->gid, 1001);
	assert_true(g->mtime == MTIME);
	assert_int_equal(g->len, 0);
}

/* Upload the body under name; the members come back in g. */
static size_t
upload(const char *name, uint32_t mode, const void *body, size_t len,
    struct got *g)
{
	struct archive_job	 j;
	struct tar_result	 res;
	int			 in, out;
	size_t			 n;

	upload_job(&j, name, mode, len);
	in = spool_of(body, len);
	out = tmpfd();
	run_job(&j, in, out, &res);
	if (res.errnum != 0)
		fail_msg("upload of %s: %s", name, res.message);
	assert_true(res.bytes > 0);
	assert_true((off_t)res.bytes == fd_size(out));
	assert_int_equal(res.bytes % 10240, 0);
	n = readback(out, g, MAXMEM);
	close(in);
	close(out);
	archive_job_free(&j);
	tar_result_free(&res);
	return n;
}

static void
test_upload_parents(void **state)
{
	struct got	 g[MAXMEM];
	unsigned char	 body[16384];
	size_t		 i, n;

	for (i = 0; i < sizeof(body); i++)
		body[i] = (unsigned char)(i & 0xff);
	n = upload("a/b/f.txt", 0640, body, sizeof(body), g);
	assert_int_equal(n, 3);
	expect_dir(&g[0], "a/");
	expect_dir(&g[1], "a/b/");
	assert_string_equal(g[2].name, "a/b/f.txt");
	assert_int_equal(g[2].type, TAR_REG);
	assert_int_equal(g[2].mode, 0640);
	assert_int_equal(g[2].uid, 1000);
	assert_int_equal(g[2].gid, 1001);
	assert_true(g[2].mtime == MTIME);
	assert_int_equal(g[2].len, sizeof(body));
	assert_memory_equal(g[2].data, body, sizeof(body));
	got_free(g, n);
}

static void
test_upload_no_parent(void **state)
{
	struct got	 g[MAXMEM];
	size_t		 n;

	n = upload("run.sh", 0755, "#!/bin/sh\necho hi\n", 18, g);
	assert_int_equal(n, 1);
	assert_string_equal(g[0].name, "run.sh");
	assert_int_equal(g[0].mode, 0755);
	assert_int_equal(g[0].len, 18);
	assert_memory_equal(g[0].data, "#!/bin/sh\necho hi\n", 18);
	got_free(g, n);
}

static void
test_upload_empty(void **state)
{
	struct got	 g[MAXMEM];
	size_t		 n;

	n = upload("d/empty", 0600, "", 0, g);
	assert_int_equal(n, 2);
	expect_dir(&g[0], "d/");
	assert_string_equal(g[1].name, "d/empty");
	assert_int_equal(g[1].type, TAR_REG);
	assert_int_equal(g[1].mode, 0600);
	assert_int_equal(g[1].len, 0);
	got_free(g, n);
}

static void
test_upload_long_names(void **state)
{
	struct got	 g[MAXMEM];
	char		 name[400], dir1[160], dir2[320];
	size_t		 n;

	/* A 150-byte directory, then a 300-byte path to the file. */
	memset(name, 'x', sizeof(name));
	memcpy(name, "long", 4);
	name[150] = '/';
	name[250] = '/';
	name[300] = '\0';
	memcpy(dir1, name, 151);
	dir1[151] = '\0';
	memcpy(dir2, name, 251);
	dir2[251] = '\0';
	n = upload(name, 0644, "data", 4, g);
	assert_int_equal(n, 3);
	expect_dir(&g[0], dir1);
	expect_dir(&g[1], dir2);
	assert_string_equal(g[2].name, name);
	assert_int_equal(strlen(g[2].name), 300);
	assert_memory_equal(g[2].data, "data", 4);
	got_free(g, n);
}

static void
test_upload_special_mode(void **state)
{
	struct got	 g[MAXMEM];
	size_t		 n;

	/* managerd refuses these first; the tar still says what it got. */
	n = upload("s", 04755, "x", 1, g);
	assert_int_equal(n, 1);
	assert_int_equal(g[0].mode, 04755);
	got_free(g, n);
}

/* Existing parents keep their mode and mtime, nanoseconds included. */
static void
test_upload_dirs_keep_metadata(void **state)
{
	struct archive_job	 j;
	struct tar_result	 res;
	struct archive		*r;
	struct archive_entry	*e;
	int			 in, out, i = 0;

	upload_job(&j, "old/new/f", 0644, 1);
	j.dirs[0] = (struct archive_dir){ 02775, 1600000000, 123456789 };
	j.dirs[1] = (struct archive_dir){ 0700, -1, 999999999 };
	in = spool_of("x", 1);
	out = tmpfd();
	run_job(&j, in, out, &res);
	assert_int_equal(res.errnum, 0);
	rewind_fd(out);
	assert_non_null(r = archive_read_new());
	archive_read_support_format_tar(r);
	assert_int_equal(archive_read_open_fd(r, out, 10240), ARCHIVE_OK);
	while (archive_read_next_header(r, &e) == ARCHIVE_OK && i < 2) {
		assert_int_equal(archive_entry_filetype(e), AE_IFDIR);
		assert_int_equal(archive_entry_perm(e), j.dirs[i].mode);
		assert_true(archive_entry_mtime(e) == j.dirs[i].mtime);
		assert_int_equal(archive_entry_mtime_nsec(e),
		    j.dirs[i].mtime_nsec);
		i++;
	}
	assert_int_equal(i, 2);
	archive_read_free(r);
	archive_job_free(&j);
	close(in);
	close(out);
}

static void
test_upload_names_are_bytes(void **state)
{
	static const char *const names[] = {
		"caf\xc3\xa9.txt",
		"sp ace/\xc3\xbcnic\xc3\xb8" "de.txt",
		"cafe\xcc\x81/\xe2\x84\xaa",
		"\xe9t\xe9/latin-1",
		"bad \xff\xfe/x",
		"new\nline/and\ttab",
	};
	struct got	 g[MAXMEM];
	char		 long_name[256], deep[256];
	size_t		 i, n;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		n = upload(names[i], 0644, "v", 1, g);
		assert_string_equal(g[n - 1].name, names[i]);
		got_free(g, n);
	}
	memset(long_name, 'n', 255);
	long_name[255] = '\0';
	memcpy(long_name, "\xc3\xa9", 2);
	n = upload(long_name, 0644, "v", 1, g);
	assert_int_equal(n, 1);
	assert_string_equal(g[0].name, long_name);
	got_free(g, n);
	/* 100 levels: 100 directory members, then the file. */
	for (i = 0; i < 100; i++)
		memcpy(deep + 2 * i, "d/", 2);
	memcpy(deep + 200, "f", 2);
	{
		struct archive_job	 j;
		struct tar_result	 res;
		struct got		 all[101];
		int			 in, out;

		upload_job(&j, deep, 0644, 1);
		assert_int_equal(j.ndirs, 100);
		in = spool_of("v", 1);
		out = tmpfd();
		run_job(&j, in, out, &res);
		assert_int_equal(res.errnum, 0);
		assert_int_equal(readback_raw(out, all, 101), 101);
		assert_int_equal(strlen(all[99].name), 200);
		assert_memory_equal(all[99].name, deep, 200);
		assert_string_equal(all[0].name, "d/");
		assert_string_equal(all[100].name, deep);
		got_free(all, 101);
		archive_job_free(&j);
		close(in);
		close(out);
	}
}

/* 1 if the worker's reader reads the whole archive without an error. */
static int
archive_whole(int fd)
{
	struct tar_reader	 r;
	struct tar_member	*m;
	char			 buf[8192];
	ssize_t			 n;
	int			 rc;

	rewind_fd(fd);
	assert_int_equal(tar_reader_init(&r, fd), 0);
	while ((rc = tar_next(&r, &m)) == 1)
		while ((n = tar_data(&r, buf, sizeof(buf))) > 0)
			;
	tar_reader_free(&r);
	return rc == 0;
}

/*
 * A spool that does not hold the upload's size: the job fails, and the
 * tar stops before the file is whole (a long one before its last bytes),
 * without end blocks, so that Docker fails the PUT.
 */
static void
test_upload_spool_size_lies(void **state)
{
	struct archive_job	 j;
	struct tar_result	 res;
	char			*body;
	size_t			 len = 200000;
	int			 in, out;

	assert_non_null(body = malloc(len + 1));
	memset(body, 'b', len + 1);
	upload_job(&j, "dir/f", 0644, len);

	in = spool_of(body, len - 1);
	out = tmpfd();
	run_job(&j, in, out, &res);
	assert_int_equal(res.errnum, EINVAL);
	assert_non_null(strstr(res.message, "199999 bytes, its size 200000"));
	assert_false(archive_whole(out));
	assert_true(fd_size(out) < (off_t)len);
	tar_result_free(&res);
	close(in);
	close(out);

	in = spool_of(body, len + 1);
	out = tmpfd();
	run_job(&j, in, out, &res);
	assert_int_equal(res.errnum, EINVAL);
	assert_non_null(strstr(res.message, "more bytes"));
	assert_false(archive_whole(out));
	assert_true(fd_size(out) < (off_t)len);
	tar_result_free(&res);
	close(in);
	close(out);

	/* The same body, the right size: the whole tar. */
	in = spool_of(body, len);
	out = tmpfd();
	run_job(&j, in, out, &res);
	assert_int_equal(res.errnum, 0);
	assert_true(archive_whole(out));
	tar_result_free(&res);
	close(in);
	close(out);
	archive_job_free(&j);
	free(body);
}

/* The body may come through a pipe: apid's, into a tar spool. */
static void
test_upload_from_pipe(void **state)
{
	struct archive_job	 j;
	struct tar_result	 res;
	struct got		 g[MAXMEM];
	char			*body;
	size_t			 len = 300000, n;
	int			 in, out;

	assert_non_null(body = malloc(len));
	memset(body, 'p', len);
	upload_job(&j, "p/f", 0644, len);
	in = feed_pipe(body, len);
	out = tmpfd();
	run_job(&j, in, out, &res);
	assert_int_equal(res.errnum, 0);
	n = readback(out, g, MAXMEM);
	assert_int_equal(n, 2);
	assert_int_equal(g[1].len, len);
	assert_memory_equal(g[1].data, body, len);
	got_free(g, n);
	tar_result_free(&res);
	archive_job_free(&j);
	close(in);
	close(out);
	free(body);
}

static void
test_upload_broken_pipe(void **state)
{
	struct archive_job	 j;
	struct tar_result	 res;
	int			 in, fds[2];

	assert_int_equal(pipe(fds), 0);
	close(fds[0]);
	upload_job(&j, "f", 0644, 3);
	in = spool_of("abc", 3);
	run_job(&j, in, fds[1], &res);
	assert_int_equal(res.errnum, EPIPE);
	assert_true(res.message[0] != '\0');
	tar_result_free(&res);
	archive_job_free(&j);
	close(in);
	close(fds[1]);
}

/* The worker checks the job itself too: a name it may not write. */
static void
test_upload_bad_name(void **state)
{
	struct archive_job	 j;
	struct job_result	 res;
	int			 fds[2];

	upload_job(&j, "dir/", 0644, 0);
	fds[0] = spool_of("", 0);
	fds[1] = tmpfd();
	assert_int_equal(job_run(&j, fds, &res), -1);
	assert_int_equal(res.errnum, EINVAL);
	assert_int_equal(fd_size(fds[1]), 0);
	archive_job_free(&j);
	close(fds[0]);
	close(fds[1]);
}

static void
spool(int in, uint64_t max, struct tar_result *res, int *out)
{
	struct archive_job	 j = { .kind = ARCHIVE_JOB_SPOOL };

	j.max_bytes = max;
	*out = tmpfd();
	run_job(&j, in, *out, res);
}

static void
test_spool(void **state)
{
	struct tar_result	 res;
	char			*body, *got;
	size_t			 len = 1000000, n;
	int			 in, out;

	assert_non_null(body = malloc(len));
	for (n = 0; n < len; n++)
		body[n] = (char)(n * 13);
	/* Copied as it is, from a pipe as from apid. */
	in = feed_pipe(body, len);
	spool(in, len, &res, &out);
	assert_int_equal(res.errnum, 0);
	assert_true(res.bytes == len);
	got = slurp(out, &n);
	assert_int_equal(n, len);
	assert_memory_equal(got, body, len);
	free(got);
	close(in);
	close(out);
	/* One byte more than the limit is too large. */
	in = feed_pipe(body, len);
	spool(in, len - 1, &res, &out);
	assert_int_equal(res.errnum, EFBIG);
	assert_true(fd_size(out) <= (off_t)len - 1);
	tar_result_free(&res);
	close(in);
	close(out);
	/* An empty body is a spool of nothing. */
	in = feed_pipe("", 0);
	spool(in, 0, &res, &out);
	assert_int_equal(res.errnum, 0);
	assert_true(res.bytes == 0);
	close(in);
	close(out);
	free(body);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_upload_parents),
		cmocka_unit_test(test_upload_no_parent),
		cmocka_unit_test(test_upload_empty),
		cmocka_unit_test(test_upload_long_names),
		cmocka_unit_test(test_upload_special_mode),
		cmocka_unit_test(test_upload_dirs_keep_metadata),
		cmocka_unit_test(test_upload_names_are_bytes),
		cmocka_unit_test(test_upload_spool_size_lies),
		cmocka_unit_test(test_upload_from_pipe),
		cmocka_unit_test(test_upload_broken_pipe),
		cmocka_unit_test(test_upload_bad_name),
		cmocka_unit_test(test_spool),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
