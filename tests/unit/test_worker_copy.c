/*
 * The archive worker's SNAPSHOT_COPY job: Docker's tar of
 * "/workspace/." stored byte for byte when the rewrite would keep every
 * member unchanged, and JOB_NEEDS_REWRITE at the first member it would
 * change.  Archives are built byte by byte as Docker writes them (or as
 * a hostile sandbox might have its workspace look); each job runs in a
 * forked child under the worker's real filters.
 */
#include <sys/types.h>

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "worker_fixture.h"

/* A header of Docker's with mode and ids set: tb_header, then patched. */
static void
member(struct tb *tb, const char *name, char type, const char *data,
    const char *link, unsigned int mode)
{
	size_t		 at = tb->len, len = data != NULL ? strlen(data) : 0;
	unsigned char	*h;
	unsigned int	 sum = 0, i;

	tb_header(tb, name, type, len, link);
	h = tb->buf + at;
	snprintf((char *)h + 100, 8, "%07o", mode);
	memset(h + 148, ' ', 8);
	for (i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
	if (len > 0)
		tb_data(tb, data, len);
}

/* A workspace as Docker archives it: root first, names under "./". */
static void
docker_ws(struct tb *tb)
{
	tb_init(tb);
	member(tb, "./", '5', NULL, NULL, 0755);
	member(tb, "./app/", '5', NULL, NULL, 02750);
	member(tb, "./app/secret", '0', "s3cret\n", NULL, 0600);
	member(tb, "./run.sh", '0', "#!/bin/sh\necho hi\n", NULL, 01755);
	member(tb, "./link", '2', NULL, "app/secret", 0777);
	member(tb, "./abs", '2', NULL, "/etc/hostname", 0777);
	member(tb, "./hard", '1', NULL, "./app/secret", 0600);
}

/* The job on tb through a pipe, into a new file; its result. */
static int
copy_job(const struct tb *tb, uint64_t max, int *out, struct tar_result *res)
{
	struct archive_job	 j = { .kind = ARCHIVE_JOB_SNAPSHOT_COPY };
	int			 in;

	j.max_bytes = max;
	in = feed_pipe(tb->buf, tb->len);
	*out = tmpfd();
	run_job(&j, in, *out, res);
	close(in);
	return res->errnum;
}

static void
test_copy_is_byte_for_byte(void **state)
{
	struct tar_result	 res;
	struct tb		 tb;
	struct got		 g[16];
	char			*copy;
	size_t			 len, n;
	int			 out;

	(void)state;
	docker_ws(&tb);
	tb_end(&tb);
	assert_int_equal(copy_job(&tb, 1 << 20, &out, &res), 0);
	assert_int_equal(res.bytes, tb.len);
	copy = slurp(out, &len);
	assert_int_equal(len, tb.len);
	assert_memory_equal(copy, tb.buf, len);
	rewind_fd(out);
	n = readback_raw(out, g, 16);
	assert_int_equal(n, 7);
	assert_string_equal(g[2].name, "./app/secret");
	assert_string_equal(g[6].link, "./app/secret");
	got_free(g, n);
	free(copy);
	close(out);
	tar_result_free(&res);
	tb_free(&tb);
}

/*
 * Members big enough that their data is spliced from the pipe into the
 * file (tar_read.c), beside ones too small to be: the copy is still the
 * archive byte for byte, and a limit in the middle of a spliced member
 * still stops it there.  The first is over two WRITEBACK_STEPs, so the
 * job starts the file's writeback twice under its real filter.
 */
static void
test_copy_big_members(void **state)
{
	static const size_t	 sizes[] = { 2 * WRITEBACK_STEP + 7, 65536,
	    65535, 300 * 1024 };
	struct tar_result	 res;
	struct tb		 tb;
	char			*data, *copy, name[32];
	size_t			 i, j, len;
	int			 out;

	(void)state;
	tb_init(&tb);
	member(&tb, "./", '5', NULL, NULL, 0755);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		assert_non_null(data = malloc(sizes[i]));
		for (j = 0; j < sizes[i]; j++)
			data[j] = (char)((j * 31 + i) % 253);
		snprintf(name, sizeof(name), "./f%zu", i);
		tb_header(&tb, name, '0', sizes[i], NULL);
		tb_data(&tb, data, sizes[i]);
		free(data);
	}
	tb_end(&tb);
	assert_int_equal(copy_job(&tb, tb.len, &out, &res), 0);
	assert_int_equal(res.bytes, tb.len);
	copy = slurp(out, &len);
	assert_int_equal(len, tb.len);
	assert_memory_equal(copy, tb.buf, len);
	free(copy);
	close(out);
	tar_result_free(&res);
	assert_int_equal(copy_job(&tb, 2 * 1024 * 1024, &out, &res), EFBIG);
	assert_true(fd_size(out) <= 2 * 1024 * 1024);
	close(out);
	tar_result_free(&res);
	tb_free(&tb);
}

/* What the rewrite would change ends the copy; the reason names it. */
static void
expect_rewrite(void (*add)(struct tb *), const char *why)
{
	struct tar_result	 res;
	struct tb		 tb;
	int			 out;

	docker_ws(&tb);
	add(&tb);
	member(&tb, "./after", '0', "x", NULL, 0644);
	tb_end(&tb);
	assert_int_equal(copy_job(&tb, 1 << 20, &out, &res),
	    JOB_NEEDS_REWRITE);
	assert_non_null(res.message);
	if (strstr(res.message, why) == NULL)
		fail_msg("\"%s\" does not say \"%s\"", res.message, why);
	close(out);
	tar_result_free(&res);
	tb_free(&tb);
}

static void add_fifo(struct tb *t) { member(t, "./ff", '6', NULL, NULL, 0644); }
static void add_chr(struct tb *t) { member(t, "./null", '3', NULL, NULL, 0666); }
static void add_suid(struct tb *t) { member(t, "./su", '0', "x", NULL, 04755); }
static void add_sgid(struct tb *t) { member(t, "./sg", '0', "x", NULL, 02755); }
static void add_outside(struct tb *t) { member(t, "workspace/a", '0', "x", NULL, 0644); }
static void add_dotdot(struct tb *t) { member(t, "./a/../../etc", '0', "x", NULL, 0644); }
static void add_abs(struct tb *t) { member(t, "/etc/passwd", '0', "x", NULL, 0644); }
static void add_hard_out(struct tb *t) { member(t, "./h", '1', NULL, "/etc/shadow", 0644); }
static void add_hard_up(struct tb *t) { member(t, "./h", '1', NULL, "./../x", 0644); }
static void add_root2(struct tb *t) { member(t, "./", '5', NULL, NULL, 0755); }

static void
add_xattr(struct tb *t)
{
	tb_pax(t, "SCHILY.xattr.security.capability", "\x01\x02", 2);
	member(t, "./cap", '0', "x", NULL, 0755);
}

static void
add_bad_utf8(struct tb *t)
{
	/* Bytes are names: kept, not a reason to rewrite (tested below). */
	member(t, "./\xff\xfe", '0', "x", NULL, 0644);
	member(t, "./p", '6', NULL, NULL, 0644);
}

static void
test_copy_refuses_what_the_rewrite_changes(void **state)
{
	(void)state;
	expect_rewrite(add_fifo, "FIFO");
	expect_rewrite(add_chr, "device");
	expect_rewrite(add_suid, "setuid");
	expect_rewrite(add_sgid, "setgid");
	expect_rewrite(add_xattr, "extended attributes");
	expect_rewrite(add_outside, "workspace/a");
	expect_rewrite(add_dotdot, "not under");
	expect_rewrite(add_abs, "/etc/passwd");
	expect_rewrite(add_hard_out, "hard link");
	expect_rewrite(add_hard_up, "hard link");
	expect_rewrite(add_root2, "root");
	expect_rewrite(add_bad_utf8, "./p");
}

static void
test_copy_needs_root_first(void **state)
{
	struct tar_result	 res;
	struct tb		 tb;
	int			 out;

	(void)state;
	tb_init(&tb);
	member(&tb, "./a", '0', "x", NULL, 0644);
	member(&tb, "./", '5', NULL, NULL, 0755);
	tb_end(&tb);
	assert_int_equal(copy_job(&tb, 1 << 20, &out, &res),
	    JOB_NEEDS_REWRITE);
	close(out);
	tar_result_free(&res);
	tb_free(&tb);
	/* An empty archive has no root either: the rewrite says why. */
	tb_init(&tb);
	tb_end(&tb);
	assert_int_equal(copy_job(&tb, 1 << 20, &out, &res),
	    JOB_NEEDS_REWRITE);
	close(out);
	tar_result_free(&res);
	tb_free(&tb);
}

static void
test_copy_size_cap(void **state)
{
	struct tar_result	 res;
	struct tb		 tb;
	char			 big[200000];
	int			 out;

	(void)state;
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	docker_ws(&tb);
	member(&tb, "./big", '0', big, NULL, 0644);
	tb_end(&tb);
	assert_int_equal(copy_job(&tb, tb.len - 1, &out, &res), EFBIG);
	assert_non_null(strstr(res.message, "snapshot limit"));
	assert_true(fd_size(out) <= (off_t)tb.len - 1);
	close(out);
	tar_result_free(&res);
	/* Exactly the limit is fine. */
	assert_int_equal(copy_job(&tb, tb.len, &out, &res), 0);
	assert_int_equal(fd_size(out), (off_t)tb.len);
	close(out);
	tar_result_free(&res);
	tb_free(&tb);
}

/* A cut or garbled archive fails as the rewrite would: no rewrite asked. */
static void
test_copy_truncated_and_garbage(void **state)
{
	struct tar_result	 res;
	struct tb		 tb;
	int			 out;
	size_t			 full;

	(void)state;
	docker_ws(&tb);
	tb_end(&tb);
	full = tb.len;
	tb.len = full - 1024 - 100;	/* inside the last member */
	assert_int_equal(copy_job(&tb, 1 << 20, &out, &res), EIO);
	close(out);
	tar_result_free(&res);
	tb.len = full;
	tb.buf[600] ^= 0x55;	/* the second header's checksum */
	assert_int_equal(copy_job(&tb, 1 << 20, &out, &res), EIO);
	close(out);
	tar_result_free(&res);
	tb_free(&tb);
}

/* Names are bytes, and long ones come in pax records: all kept. */
static void
test_copy_keeps_odd_names(void **state)
{
	struct tar_result	 res;
	struct tb		 tb;
	struct got		 g[16];
	char			 longname[300];
	size_t			 n;
	int			 out;

	(void)state;
	memset(longname, 'n', sizeof(longname));
	memcpy(longname, "./", 2);
	longname[sizeof(longname) - 1] = '\0';
	tb_init(&tb);
	member(&tb, "./", '5', NULL, NULL, 0755);
	member(&tb, "./caf\xc3\xa9", '0', "a", NULL, 0644);
	member(&tb, "./\xff\n\x01", '0', "b", NULL, 0644);
	tb_pax(&tb, "path", longname, strlen(longname));
	member(&tb, "./short", '0', "c", NULL, 0644);
	tb_end(&tb);
	assert_int_equal(copy_job(&tb, 1 << 20, &out, &res), 0);
	rewind_fd(out);
	n = readback_raw(out, g, 16);
	assert_int_equal(n, 4);
	assert_string_equal(g[2].name, "./\xff\n\x01");
	assert_string_equal(g[3].name, longname);
	got_free(g, n);
	close(out);
	tar_result_free(&res);
	tb_free(&tb);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copy_is_byte_for_byte),
		cmocka_unit_test(test_copy_refuses_what_the_rewrite_changes),
		cmocka_unit_test(test_copy_needs_root_first),
		cmocka_unit_test(test_copy_size_cap),
		cmocka_unit_test(test_copy_big_members),
		cmocka_unit_test(test_copy_truncated_and_garbage),
		cmocka_unit_test(test_copy_keeps_odd_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
