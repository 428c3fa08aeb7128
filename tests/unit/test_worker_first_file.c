/*
 * The archive worker's FIRST_FILE job on a file of megabytes, as a
 * download's: from Docker's pipe into apid's, the bytes arrive whole and
 * in order, with a member before the file and padding after it; an
 * archive cut inside the file fails as truncated, never as a whole file;
 * a reader that leaves fails the job (EPIPE, not a signal); and an
 * archive from a regular file into a file works the same.  (Splicing
 * the file from pipe to pipe was tried: it saved the job 20 ms of CPU
 * per 100 MiB but cost apid and dockerd-proxy more, and made the
 * download 25% slower.)  Each job runs in a forked child under the
 * worker's real filters.
 */
#include <sys/types.h>
#include <sys/wait.h>

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

#define BIG	(3 * 1024 * 1024 + 5)	/* several reads and a tail */

static char *
pattern(size_t len)
{
	char	*b;
	size_t	 i;

	assert_non_null(b = malloc(len));
	for (i = 0; i < len; i++)
		b[i] = (char)((i * 7) % 251);
	return b;
}

/* A small member, then the big file, then the end; cut at cut if set. */
static void
archive(struct tb *tb, const char *data, size_t cut)
{
	tb_init(tb);
	tb_header(tb, "first.txt", '0', 6, NULL);
	tb_data(tb, "hello\n", 6);
	tb_header(tb, "big.bin", '0', BIG, NULL);
	tb_data(tb, data, BIG);
	tb_end(tb);
	if (cut > 0)
		tb->len = cut;
}

/*
 * FIRST_FILE of big.bin from in into a pipe whose reader, a child, keeps
 * what it reads in out (and leaves after leave bytes, if set).  The job's
 * bytes, or -1 with errno and message set.
 */
static ssize_t
first_file(int in, int out, size_t leave, int *errnum, char *msg,
    size_t msglen)
{
	struct archive_job	 j = { .kind = ARCHIVE_JOB_FIRST_FILE };
	struct tar_result	 res;
	ssize_t			 rv;
	pid_t			 reader;
	int			 p[2];

	assert_int_equal(pipe(p), 0);
	if ((reader = fork()) == 0) {
		char	 buf[65536];
		size_t	 got = 0;
		ssize_t	 n;

		close(p[1]);
		while ((leave == 0 || got < leave) &&
		    (n = read(p[0], buf, sizeof(buf))) > 0) {
			(void)write_all(out, buf, (size_t)n);
			got += (size_t)n;
		}
		_exit(0);
	}
	close(p[0]);
	j.max_bytes = 1 << 30;
	j.name = (char *)(uintptr_t)"big.bin";
	run_job(&j, in, p[1], &res);
	close(p[1]);
	/*
	 * The reader, done (unless run_job's reaping took it already); not
	 * feed_pipe's child, which may wait on in until the test closes it.
	 */
	(void)waitpid(reader, NULL, 0);
	*errnum = res.errnum;
	snprintf(msg, msglen, "%s", res.message != NULL ? res.message : "");
	rv = res.errnum == 0 ? (ssize_t)res.bytes : -1;
	tar_result_free(&res);
	return rv;
}

static void
test_big_file_whole(void **state)
{
	struct tb	 tb;
	char		*data = pattern(BIG), *got, msg[256] = "";
	size_t		 len;
	int		 in, out, errnum;

	(void)state;
	archive(&tb, data, 0);
	in = feed_pipe(tb.buf, tb.len);
	out = tmpfd();
	assert_int_equal(first_file(in, out, 0, &errnum, msg, sizeof(msg)),
	    BIG);
	got = slurp(out, &len);
	assert_int_equal(len, BIG);
	assert_memory_equal(got, data, BIG);
	free(got);
	close(in);
	close(out);
	tb_free(&tb);
	free(data);
}

/* Cut 2 MiB into the file: a failure that says so, never a whole file. */
static void
test_truncated_inside_the_file(void **state)
{
	struct tb	 tb;
	char		*data = pattern(BIG), msg[256] = "";
	int		 in, out, errnum;

	(void)state;
	archive(&tb, data, 3 * 512 + 2 * 1024 * 1024);
	in = feed_pipe(tb.buf, tb.len);
	out = tmpfd();
	assert_int_equal(first_file(in, out, 0, &errnum, msg, sizeof(msg)),
	    -1);
	assert_int_equal(errnum, EIO);
	assert_non_null(strstr(msg, "truncated"));
	assert_int_equal(fd_size(out), 2 * 1024 * 1024);
	close(in);
	close(out);
	tb_free(&tb);
	free(data);
}

/* apid's end closes after 1 MiB: EPIPE, and the child is not killed. */
static void
test_reader_leaves(void **state)
{
	struct tb	 tb;
	char		*data = pattern(BIG), msg[256] = "";
	int		 in, out, errnum;

	(void)state;
	archive(&tb, data, 0);
	in = feed_pipe(tb.buf, tb.len);
	out = tmpfd();
	assert_int_equal(first_file(in, out, 1024 * 1024, &errnum, msg,
	    sizeof(msg)), -1);
	assert_int_equal(errnum, EPIPE);
	assert_non_null(strstr(msg, "extracting the file"));
	close(in);
	close(out);
	tb_free(&tb);
	free(data);
}

/* Docker's tar from a regular file, the file into one: no pipe at all. */
static void
test_not_a_pipe(void **state)
{
	struct archive_job	 j = { .kind = ARCHIVE_JOB_FIRST_FILE };
	struct tar_result	 res;
	struct tb		 tb;
	char			*data = pattern(BIG), *got;
	size_t			 len;
	int			 in, out;

	(void)state;
	archive(&tb, data, 0);
	in = tb_file(&tb);
	out = tmpfd();
	j.max_bytes = 1 << 30;
	j.name = (char *)(uintptr_t)"big.bin";
	run_job(&j, in, out, &res);
	assert_int_equal(res.errnum, 0);
	assert_int_equal(res.bytes, BIG);
	tar_result_free(&res);
	got = slurp(out, &len);
	assert_int_equal(len, BIG);
	assert_memory_equal(got, data, BIG);
	free(got);
	close(in);
	close(out);
	tb_free(&tb);
	free(data);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_big_file_whole),
		cmocka_unit_test(test_truncated_inside_the_file),
		cmocka_unit_test(test_reader_leaves),
		cmocka_unit_test(test_not_a_pipe),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
