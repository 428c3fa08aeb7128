/*
 * managerd's uploads (API.md §4.10, §6.3): the checks and their order,
 * for the one-step FILE_WRITE and the two-phase FILE_WRITE_BEGIN; the
 * spool, COMMIT and ABORT, the cap on a chunked body, and apid lying.
 * Where an upload lands is test_manager_file_walk.c's.  The test plays
 * apid and dockerd-proxy (manager_fixture.c, upload_fixture.c).
 */
#include <sys/stat.h>

#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "log.h"
#include "upload_fixture.h"

/* --- checks before anything is asked -------------------------------------- */

static void
write_refused(int twophase, const char *id, const char *path, uint32_t mode,
    uint64_t size, enum error_kind kind, const char *text)
{
	uint32_t	 req;
	int		 wfd = -1;

	if (twophase)
		req = send_begin(id, path, mode, size);
	else
		req = send_write(id, path, mode, size, &wfd);
	expect_apid_error(req, kind, text);
	no_proxy_message();
	if (wfd != -1)
		assert_no_reader(wfd);
}

/* §4.10's order, both ways: sandbox, path, size, mode. */
static void
test_write_rejects(void **state)
{
	static const char	*outside[] = { "/etc/x", "/workspace", "../x",
	    "/workspace/..", "/workspacex/a", "//workspace/a", "a/../../b",
	    NULL };
	size_t			 i;
	int			 base = count_fds(), two;

	for (two = 0; two < 2; two++) {
		write_refused(two, "sb_nope", "/etc/x", 01000, 11,
		    ERR_NOT_FOUND, "sandbox sb_nope not found");
		write_refused(two, sandbox, "", 0644, 0, ERR_INVALID_REQUEST,
		    "path must be a non-empty string");
		for (i = 0; outside[i] != NULL; i++)
			write_refused(two, sandbox, outside[i], 01000, 11,
			    ERR_INVALID_REQUEST, LIMITED);
		write_refused(two, sandbox, "a", 01000, 11,
		    ERR_PAYLOAD_TOO_LARGE, "file exceeds 10 bytes");
		write_refused(two, sandbox, "a", 01000, 10,
		    ERR_INVALID_REQUEST, "mode must be between 0 and 0o777");
		write_refused(two, sandbox, "a", 07777, 0, ERR_INVALID_REQUEST,
		    "mode must be between 0 and 0o777");
	}
	/* A chunked body is checked at COMMIT. */
	write_refused(1, sandbox, "a", 01000, FILE_WRITE_SIZE_UNKNOWN,
	    ERR_INVALID_REQUEST, "mode must be between 0 and 0o777");
	assert_int_equal(count_fds(), base);
}

/* --- one step (FILE_WRITE) ------------------------------------------------ */

static void
test_write_ok(void **state)
{
	struct file_write_ready	 r;
	uint32_t		 req, call;
	char			 buf[8];
	int			 wfd, fd, base = count_fds();

	req = send_write(sandbox, "src//./app.py", 0640, 3, &wfd);
	call = expect_put(sandbox, &fd);
	expect_ready(req, "src/app.py", 0640, &r);
	assert_int_equal(env->conf.sandbox_uid, 1234);
	assert_int_equal(env->conf.sandbox_gid, 5678);
	/* Lexically, without a look: every parent a new directory. */
	assert_int_equal(r.ndirs, 1);
	assert_new_dir(&r.dirs[0]);
	file_write_ready_free(&r);
	assert_int_equal(write(wfd, "tar", 3), 3);
	close(wfd);
	assert_int_equal(read(fd, buf, sizeof(buf)), 3);
	assert_int_equal(read(fd, buf, sizeof(buf)), 0);
	close(fd);
	no_apid_message();
	now = 1700000001.5;
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	expect_file_info(req, "/workspace/src/app.py", 3);
	no_proxy_message();
	assert_int_equal(count_fds(), base);
}

static void
test_write_proxy_error(void **state)
{
	const char		*text = LIMITED ": /workspace/evil is a "
	    "symlink or not a directory";
	struct file_write_ready	 r;
	uint32_t		 req, call;
	int			 wfd, fd, base = count_fds();

	req = send_write(sandbox, "/workspace/evil/passwd", 0640, 0, &wfd);
	call = expect_put(sandbox, &fd);
	expect_ready(req, "evil/passwd", 0640, &r);
	file_write_ready_free(&r);
	close(fd);
	error_reply(call, ERR_INVALID_REQUEST, text);
	expect_apid_error(req, ERR_INVALID_REQUEST, text);
	assert_no_reader(wfd);
	assert_int_equal(count_fds(), base);
}

/* Chunked: the spool takes up to the cap; more is 413 at COMMIT. */
static void
test_upload_too_large(void **state)
{
	const struct step	 steps[] = {
	    { "/workspace/f", MISSING, NULL }, { NULL, 0, NULL } };
	struct file_write_ready	 r;
	uint32_t		 req;
	int			 spool, wfd, base = count_fds();

	req = send_begin(sandbox, "f", 0640, FILE_WRITE_SIZE_UNKNOWN);
	walk(steps);
	spool = expect_spool(req, 10);
	close(spool);
	send_commit(req, 11, &wfd);
	expect_apid_error(req, ERR_PAYLOAD_TOO_LARGE, "file exceeds 10 bytes");
	no_proxy_message();
	assert_no_reader(wfd);
	/* Exactly the cap is fine. */
	req = send_begin(sandbox, "f", 0640, FILE_WRITE_SIZE_UNKNOWN);
	walk(steps);
	upload_rest(req, 10, 10, "f", "/workspace/f", &r);
	file_write_ready_free(&r);
	assert_int_equal(count_fds(), base);
}

/* The client went away: nothing is asked of Docker, nothing answered. */
static void
test_upload_abort(void **state)
{
	const struct step	 steps[] = {
	    { "/workspace/f", ARCHIVE_KIND_FILE, NULL }, { NULL, 0, NULL } };
	uint32_t		 req;
	int			 base = count_fds();

	req = send_begin(sandbox, "f", 0640, 4);
	walk(steps);
	close(expect_spool(req, 4));
	assert_int_equal(upload_count(), 1);
	from_apid_id(MSG_FILE_WRITE_ABORT, req, -1, NULL);
	assert_int_equal(upload_count(), 0);
	no_apid_message();
	no_proxy_message();
	assert_int_equal(count_fds(), base);
}

/*
 * apid dies while an upload waits for its body (or resolves its path):
 * the upload and its request are dropped, nothing reaches the next apid.
 */
static void
test_upload_apid_dies(void **state)
{
	const struct step	 steps[] = {
	    { "/workspace/f", ARCHIVE_KIND_FILE, NULL }, { NULL, 0, NULL } };
	uint32_t		 req, call;
	int			 base = count_fds();

	req = send_begin(sandbox, "f", 0640, 4);
	walk(steps);
	close(expect_spool(req, 4));
	apid_dies();
	apid_back();
	assert_int_equal(upload_count(), 0);
	assert_int_equal(apid_request_count(), 0);
	/* Dying while the path is walked: the spool is never sent. */
	send_begin(sandbox, "f", 0640, 4);
	call = expect_head("/workspace/f");
	apid_dies();
	apid_back();
	head_missing(call, "/workspace/f");
	no_apid_message();
	assert_int_equal(upload_count(), 0);
	assert_int_equal(apid_request_count(), 0);
	no_proxy_message();
	assert_int_equal(count_fds(), base);
}

/* Destroyed while the body came in: 404 at COMMIT, Docker not asked. */
static void
test_upload_sandbox_gone(void **state)
{
	char		 text[64];
	uint32_t	 req;
	int		 wfd, base = count_fds();

	req = send_begin(sandbox, "f", 0640, 4);
	head_missing(expect_head("/workspace/f"), "/workspace/f");
	close(expect_spool(req, 4));
	destroy_ok(sandbox);
	send_commit(req, 4, &wfd);
	snprintf(text, sizeof(text), "sandbox %s not found", sandbox);
	expect_apid_error(req, ERR_NOT_FOUND, text);
	no_proxy_message();
	assert_no_reader(wfd);
	assert_int_equal(count_fds(), base);
}

/* --- the spool ------------------------------------------------------------ */

static int
uploads_entries(void)
{
	struct dirent	*de;
	DIR		*d;
	int		 fd, n = 0;

	fd = openat(env->datadir_fd, "uploads", O_RDONLY | O_DIRECTORY);
	assert_true(fd != -1);
	assert_non_null(d = fdopendir(fd));
	while ((de = readdir(d)) != NULL)
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

/* Either way a spool has no name, so nothing outlives its request. */
static void
test_spool_files(void **state)
{
	struct stat	 st;
	int		 fd, tmpfile, leftover;

	for (tmpfile = 0; tmpfile < 2; tmpfile++) {
		/* Made when missing. */
		unlinkat(env->datadir_fd, "uploads", AT_REMOVEDIR);
		assert_true((fd = upload_spool_open(tmpfile)) != -1);
		assert_int_equal(fstat(fd, &st), 0);
		assert_true(S_ISREG(st.st_mode));
		assert_int_equal(st.st_nlink, 0);
		assert_int_equal(st.st_mode & 07777, 0600);
		assert_int_equal(write(fd, "x", 1), 1);
		assert_int_equal(pread(fd, &st, 1, 0), 1);
		assert_int_equal(uploads_entries(), 0);
		close(fd);
	}
	/* What a crash left with a name goes at the next start. */
	leftover = openat(env->datadir_fd, "uploads/0123.spool",
	    O_WRONLY | O_CREAT, 0600);
	assert_true(leftover != -1);
	close(leftover);
	assert_int_equal(uploads_entries(), 1);
	upload_leftovers_remove();
	assert_int_equal(uploads_entries(), 0);
}

/* --- apid lying ----------------------------------------------------------- */

/* An upload whose spool apid has; returns its id. */
static uint32_t
spooled(uint64_t size)
{
	uint32_t	 req;

	req = send_begin(sandbox, "f", 0640, size);
	head_missing(expect_head("/workspace/f"), "/workspace/f");
	close(expect_spool(req, size));
	return req;
}

static void
lie_commit_without_begin(void)
{
	int	 wfd;

	send_commit(4242, 4, &wfd);
}

static void
lie_commit_while_walking(void)
{
	int	 wfd;

	send_commit(send_begin(sandbox, "f", 0640, 4), 4, &wfd);
}

static void
lie_commit_twice(void)
{
	uint32_t	 req = spooled(4);
	int		 wfd;

	send_commit(req, 4, &wfd);
	send_commit(req, 4, &wfd);
}

static void
lie_commit_other_size(void)
{
	int	 wfd;

	send_commit(spooled(4), 5, &wfd);
}

static void
lie_commit_without_pipe(void)
{
	struct msgw	 w;

	msgw_init(&w);
	msg_put_u64(&w, 4);
	from_apid_id(MSG_FILE_WRITE_COMMIT, spooled(4), -1, &w);
}

static void
lie_commit_short(void)
{
	struct msgw	 w;

	msgw_init(&w);
	msgw_u32(&w, 4);
	from_apid_id(MSG_FILE_WRITE_COMMIT, spooled(4), dup(0), &w);
}

static void
lie_abort_without_begin(void)
{
	from_apid_id(MSG_FILE_WRITE_ABORT, 4242, -1, NULL);
}

static void
lie_abort_with_payload(void)
{
	struct msgw	 w;

	msgw_init(&w);
	msgw_u8(&w, 0);
	from_apid_id(MSG_FILE_WRITE_ABORT, spooled(4), -1, &w);
}

static void
lie_abort_with_descriptor(void)
{
	from_apid_id(MSG_FILE_WRITE_ABORT, spooled(4), dup(0), NULL);
}

static void
lie_begin_twice(void)
{
	struct msgw	 w;

	put_write(&w, sandbox, "f", 0640, 4);
	from_apid_id(MSG_FILE_WRITE_BEGIN, 4242, -1, &w);
	from_apid_id(MSG_FILE_WRITE_BEGIN, 4242, -1, &w);
}

static void
lie_begin_truncated(void)
{
	struct msgw	 w;

	put_write(&w, sandbox, "f", 0640, 4);
	w.len--;
	from_apid_id(MSG_FILE_WRITE_BEGIN, 4242, -1, &w);
}

static void
lie_proxy_bad_stat(void)
{
	struct msgw	 w;

	send_begin(sandbox, "f", 0640, 4);
	msgw_init(&w);
	msgw_u8(&w, ARCHIVE_KIND_FILE);
	from_proxy(MSG_DOCKER_ARCHIVE_STAT, expect_head("/workspace/f"), &w);
}

static void
test_upload_lies(void **state)
{
	const char	*none = "no upload waits for its body";
	const char	*noid = "no upload has that id";
	char		 want[128];

#define LIE(f, type, why)	do {					\
	snprintf(want, sizeof(want), "bad %s message from apid: %s",	\
	    type, why);							\
	expect_fatal(f, want);						\
} while (0)
	LIE(lie_commit_without_begin, "FILE_WRITE_COMMIT", noid);
	LIE(lie_commit_while_walking, "FILE_WRITE_COMMIT", none);
	LIE(lie_commit_twice, "FILE_WRITE_COMMIT", none);
	LIE(lie_commit_other_size, "FILE_WRITE_COMMIT",
	    "not the size it declared");
	LIE(lie_commit_without_pipe, "FILE_WRITE_COMMIT", "no tar pipe");
	LIE(lie_commit_short, "FILE_WRITE_COMMIT", "malformed commit");
	LIE(lie_abort_without_begin, "FILE_WRITE_ABORT", noid);
	LIE(lie_abort_with_payload, "FILE_WRITE_ABORT", "unexpected payload");
	LIE(lie_abort_with_descriptor, "FILE_WRITE_ABORT",
	    "unexpected descriptor");
	LIE(lie_begin_twice, "FILE_WRITE_BEGIN",
	    "a request id already in use");
	LIE(lie_begin_truncated, "FILE_WRITE_BEGIN", "malformed file write");
#undef LIE
	expect_fatal(lie_proxy_bad_stat, "bad DOCKER_ARCHIVE_STAT message "
	    "from dockerd-proxy: malformed stat");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f)	cmocka_unit_test_setup_teardown(f, setup_sandbox, teardown)
		T(test_write_rejects),
		T(test_write_ok),
		T(test_write_proxy_error),
		T(test_upload_too_large),
		T(test_upload_abort),
		T(test_upload_sandbox_gone),
		T(test_upload_apid_dies),
		T(test_spool_files),
		T(test_upload_lies),
#undef T
	};

	signal(SIGPIPE, SIG_IGN);
	log_init(LOG_TO_STDERR, LOG_LEVEL_WARN, "test_manager_file_write");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
