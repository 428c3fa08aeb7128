/*
 * managerd's file read (API.md §4.9, §6.2): the checks and their order,
 * what goes to dockerd-proxy, symlink resolution, paths of any bytes, the
 * replies apid gets, and that every copy of apid's pipe is closed at the
 * end.  The test plays apid and dockerd-proxy (manager_fixture.c).
 */
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
#include "manager_fixture.h"

/* --- helpers -------------------------------------------------------------- */

/* The next ARCHIVE_GET of path for want: its call; *fd: the copy. */
static uint32_t
expect_get_want(const char *id, const char *path, uint8_t want, int *fd)
{
	struct archive_get	 ag;
	struct imsg		 imsg;
	uint32_t		 call;

	call = expect_proxy(MSG_DOCKER_ARCHIVE_GET, &imsg);
	assert_true(imsg.fd != -1);
	*fd = imsg_take_fd(&imsg);
	assert_int_equal(msg_get_archive_get(&imsg, &ag), 0);
	imsg_free(&imsg);
	assert_string_equal(ag.id, id);
	assert_string_equal(ag.path, path);
	assert_int_equal(ag.want, want);
	if (want == ARCHIVE_WANT_FILE)
		assert_int_equal(ag.max_bytes, env->conf.max_file_bytes);
	archive_get_free(&ag);
	return call;
}

static uint32_t
expect_get(const char *id, const char *path, int *fd)
{
	return expect_get_want(id, path, ARCHIVE_WANT_FILE, fd);
}

/* The next ARCHIVE_HEAD (a stat alone), of path in sandbox id. */
static uint32_t
expect_stat_only(const char *id, const char *path)
{
	struct archive_head	 ah;
	struct imsg		 imsg;
	uint32_t		 call;

	call = expect_proxy(MSG_DOCKER_ARCHIVE_HEAD, &imsg);
	assert_int_equal(imsg.fd, -1);
	assert_int_equal(msg_get_archive_head(&imsg, &ah), 0);
	imsg_free(&imsg);
	assert_string_equal(ah.id, id);
	assert_string_equal(ah.path, path);
	archive_head_free(&ah);
	return call;
}

/* The proxy is done with a lookup: it closes its copy, then DONE. */
static void
lookup_done(uint32_t call, int fd)
{
	close(fd);
	from_proxy(MSG_DOCKER_DONE, call, NULL);
}

/* A symlink at path pointing to target: the lookup after it is next. */
static void
symlink_step(const char *id, const char *path, const char *target)
{
	uint32_t	 call;
	int		 fd;

	call = expect_get(id, path, &fd);
	stat_answer(call, ARCHIVE_KIND_SYMLINK, strlen(target), target);
	no_apid_message();
	no_proxy_message();
	lookup_done(call, fd);
}

/* FILE_READ_STARTED: the size, and the member (NULL: the first file). */
static void
expect_read_started_in(uint32_t req, uint64_t size, const char *member)
{
	struct file_read_started	 rs;
	struct imsg			 imsg;

	assert_int_equal(to_apid(&imsg), 1);
	assert_int_equal(imsg.hdr.type, MSG_FILE_READ_STARTED);
	assert_int_equal(imsg.hdr.peerid, req);
	assert_int_equal(msg_get_file_read_started(&imsg, &rs), 0);
	assert_int_equal(rs.size, size);
	if (member == NULL)
		assert_null(rs.member);
	else
		assert_string_equal(rs.member, member);
	file_read_started_free(&rs);
	imsg_free(&imsg);
}

static void
expect_read_started(uint32_t req, uint64_t size)
{
	expect_read_started_in(req, size, NULL);
}

/* The lookup at path is refused with text after its stat. */
static void
read_refused(const char *id, const char *path, uint8_t kind, uint64_t size,
    const char *target, enum error_kind ek, const char *text)
{
	uint32_t	 req, call;
	int		 rfd, fd;

	req = send_file_request(MSG_FILE_READ, id, path, &rfd);
	call = expect_get(id, path, &fd);
	stat_answer(call, kind, size, target);
	expect_apid_error(req, ek, text);
	lookup_done(call, fd);
	no_apid_message();
	no_proxy_message();
	assert_pipe_closed(rfd);
}

/* --- read ----------------------------------------------------------------- */

static void
test_read_plain(void **state)
{
	char		 id[SANDBOX_ID_LEN + 1], buf[16];
	uint32_t	 req, call;
	int		 rfd, fd, base;

	create_ok(0, id, sizeof(id));
	base = count_fds();
	req = send_file_request(MSG_FILE_READ, id, "notes/../a.txt", &rfd);
	call = expect_get(id, "/workspace/a.txt", &fd);
	no_apid_message();
	stat_answer(call, ARCHIVE_KIND_FILE, 5, "");
	expect_read_started(req, 5);
	/* The proxy's copy is apid's pipe. */
	assert_int_equal(write(fd, "hello", 5), 5);
	assert_int_equal(read(rfd, buf, sizeof(buf)), 5);
	assert_memory_equal(buf, "hello", 5);
	lookup_done(call, fd);
	expect_apid(req, MSG_OK);
	no_proxy_message();
	assert_pipe_closed(rfd);
	assert_int_equal(count_fds(), base);
}

static void
test_read_symlinks(void **state)
{
	char		 id[SANDBOX_ID_LEN + 1];
	uint32_t	 req, call;
	int		 rfd, fd, base;

	create_ok(0, id, sizeof(id));
	base = count_fds();
	req = send_file_request(MSG_FILE_READ, id, "/workspace/dir/link", &rfd);
	/* Relative: from the link's directory. */
	symlink_step(id, "/workspace/dir/link", "../other/./x");
	/* Absolute: replaces it. */
	symlink_step(id, "/workspace/other/x", "/etc//conf/");
	/* At the root, ".." stays there. */
	symlink_step(id, "/etc/conf", "../../y");
	symlink_step(id, "/y", "//z");
	symlink_step(id, "//z", "w");
	call = expect_get(id, "//w", &fd);
	stat_answer(call, ARCHIVE_KIND_FILE, 0, "");
	expect_read_started(req, 0);
	lookup_done(call, fd);
	expect_apid(req, MSG_OK);
	assert_pipe_closed(rfd);
	assert_int_equal(count_fds(), base);
}

/* 8 lookups at most: 7 links and a file are fine, 8 links are not. */
static void
test_read_symlink_loop(void **state)
{
	char		 id[SANDBOX_ID_LEN + 1], path[32], next[32];
	uint32_t	 req, call;
	int		 rfd, fd, i, base;

	create_ok(0, id, sizeof(id));
	base = count_fds();
	req = send_file_request(MSG_FILE_READ, id, "l0", &rfd);
	for (i = 0; i < 7; i++) {
		snprintf(path, sizeof(path), "/workspace/l%d", i);
		snprintf(next, sizeof(next), "l%d", i + 1);
		symlink_step(id, path, next);
	}
	call = expect_get(id, "/workspace/l7", &fd);
	stat_answer(call, ARCHIVE_KIND_FILE, 3, "");
	expect_read_started(req, 3);
	lookup_done(call, fd);
	expect_apid(req, MSG_OK);
	assert_pipe_closed(rfd);

	/* A loop of 9 links. */
	req = send_file_request(MSG_FILE_READ, id, "/workspace/m0", &rfd);
	for (i = 0; i < 7; i++) {
		snprintf(path, sizeof(path), "/workspace/m%d", i);
		snprintf(next, sizeof(next), "m%d", (i + 1) % 9);
		symlink_step(id, path, next);
	}
	call = expect_get(id, "/workspace/m7", &fd);
	stat_answer(call, ARCHIVE_KIND_SYMLINK, 2, "m8");
	expect_apid_error(req, ERR_INVALID_REQUEST,
	    "/workspace/m0: too many levels of symbolic links");
	lookup_done(call, fd);
	no_apid_message();
	no_proxy_message();
	assert_pipe_closed(rfd);
	assert_int_equal(count_fds(), base);
}

static void
test_read_refusals(void **state)
{
	static char	 setting[] = "AGENT_SANDBOX_MAX_FILE_BYTES=1024";
	static char	*settings[] = { setting, NULL };
	char		 id[SANDBOX_ID_LEN + 1];
	uint32_t	 req, call;
	int		 rfd, fd, base;

	teardown(state);
	setup_env(settings);
	create_ok(0, id, sizeof(id));
	base = count_fds();
	read_refused(id, "/workspace/d", ARCHIVE_KIND_DIR, 4096, "",
	    ERR_INVALID_REQUEST, "/workspace/d is a directory");
	read_refused(id, "/workspace/big", ARCHIVE_KIND_FILE, 2048, "",
	    ERR_PAYLOAD_TOO_LARGE,
	    "/workspace/big is larger than 1024 bytes");
	read_refused(id, "/workspace/big", ARCHIVE_KIND_FILE, 1025, "",
	    ERR_PAYLOAD_TOO_LARGE,
	    "/workspace/big is larger than 1024 bytes");
	/* Exactly the cap is fine. */
	req = send_file_request(MSG_FILE_READ, id, "/workspace/max", &rfd);
	call = expect_get(id, "/workspace/max", &fd);
	stat_answer(call, ARCHIVE_KIND_FILE, 1024, "");
	expect_read_started(req, 1024);
	lookup_done(call, fd);
	expect_apid(req, MSG_OK);
	assert_pipe_closed(rfd);
	read_refused(id, "/dev/null", ARCHIVE_KIND_OTHER, 0, "",
	    ERR_INVALID_REQUEST, "/dev/null is not a regular file");
	/* A symlink Docker gives no target for is not a file either. */
	read_refused(id, "/workspace/l", ARCHIVE_KIND_SYMLINK, 3, "",
	    ERR_INVALID_REQUEST, "/workspace/l is not a regular file");
	assert_int_equal(count_fds(), base);
}

/* Messages name the path the client asked for, normalized. */
static void
test_read_refusal_names_request(void **state)
{
	char		 id[SANDBOX_ID_LEN + 1];
	uint32_t	 req, call;
	int		 rfd, fd;

	create_ok(0, id, sizeof(id));
	req = send_file_request(MSG_FILE_READ, id, "./l", &rfd);
	symlink_step(id, "/workspace/l", "/srv");
	call = expect_get(id, "/srv", &fd);
	stat_answer(call, ARCHIVE_KIND_DIR, 0, "");
	expect_apid_error(req, ERR_INVALID_REQUEST,
	    "/workspace/l is a directory");
	lookup_done(call, fd);
	assert_pipe_closed(rfd);
}

static void
test_read_proxy_errors(void **state)
{
	char		 id[SANDBOX_ID_LEN + 1];
	uint32_t	 req, call;
	int		 rfd, fd, base;

	create_ok(0, id, sizeof(id));
	base = count_fds();
	req = send_file_request(MSG_FILE_READ, id, "missing", &rfd);
	call = expect_get(id, "/workspace/missing", &fd);
	close(fd);
	error_reply(call, ERR_NOT_FOUND, "/workspace/missing: not found");
	expect_apid_error(req, ERR_NOT_FOUND, "/workspace/missing: not found");
	assert_pipe_closed(rfd);

	/* After the start: still an error (apid aborts the response). */
	req = send_file_request(MSG_FILE_READ, id, "f", &rfd);
	call = expect_get(id, "/workspace/f", &fd);
	stat_answer(call, ARCHIVE_KIND_FILE, 10, "");
	expect_read_started(req, 10);
	close(fd);
	error_reply(call, ERR_BACKEND, "/workspace/f: the reader went away");
	expect_apid_error(req, ERR_BACKEND,
	    "/workspace/f: the reader went away");
	assert_pipe_closed(rfd);

	/* An error after a refusal: apid heard once already. */
	req = send_file_request(MSG_FILE_READ, id, "d", &rfd);
	call = expect_get(id, "/workspace/d", &fd);
	stat_answer(call, ARCHIVE_KIND_DIR, 0, "");
	expect_apid_error(req, ERR_INVALID_REQUEST,
	    "/workspace/d is a directory");
	close(fd);
	error_reply(call, ERR_BACKEND, "late");
	no_apid_message();
	assert_pipe_closed(rfd);

	/* Between two lookups. */
	req = send_file_request(MSG_FILE_READ, id, "l", &rfd);
	symlink_step(id, "/workspace/l", "gone");
	call = expect_get(id, "/workspace/gone", &fd);
	close(fd);
	error_reply(call, ERR_NOT_FOUND, "/workspace/gone: not found");
	expect_apid_error(req, ERR_NOT_FOUND, "/workspace/gone: not found");
	assert_pipe_closed(rfd);
	assert_int_equal(count_fds(), base);
}

static void
test_read_rejects(void **state)
{
	char		 id[SANDBOX_ID_LEN + 1];
	uint32_t	 req;
	int		 rfd, base;

	create_ok(0, id, sizeof(id));
	base = count_fds();
	/* The sandbox first, then the path. */
	req = send_file_request(MSG_FILE_READ, "sb_nope", "", &rfd);
	expect_apid_error(req, ERR_NOT_FOUND, "sandbox sb_nope not found");
	assert_pipe_closed(rfd);
	req = send_file_request(MSG_FILE_READ, id, "", &rfd);
	expect_apid_error(req, ERR_INVALID_REQUEST,
	    "path must be a non-empty string");
	assert_pipe_closed(rfd);
	no_proxy_message();
	assert_int_equal(count_fds(), base);
}

/*
 * Names are bytes: they reach the proxy as they came and links are
 * joined bytewise.  A target Docker sent with U+FFFD in it (bytes that
 * are not UTF-8 in JSON) is followed as it is.  A name that is not
 * UTF-8 is looked at with a stat alone (Docker's tar of such a file
 * leaves it out).
 */
static void
test_read_odd_names(void **state)
{
	char		 id[SANDBOX_ID_LEN + 1], last[300];
	uint32_t	 req, call;
	int		 rfd, fd;

	create_ok(0, id, sizeof(id));
	req = send_file_request(MSG_FILE_READ, id, "caf\xe9/a b\nc/l\xff",
	    &rfd);
	call = expect_stat_only(id, "/workspace/caf\xe9/a b\nc/l\xff");
	stat_answer(call, ARCHIVE_KIND_SYMLINK, 5, "t\xe9\n x");
	call = expect_stat_only(id, "/workspace/caf\xe9/a b\nc/t\xe9\n x");
	snprintf(last, sizeof(last), "/workspace/d\xef\xbf\xbd/");
	memset(last + strlen(last), 'e', 255);
	last[16 + 255] = '\0';
	stat_answer(call, ARCHIVE_KIND_SYMLINK, strlen(last), last);
	call = expect_get(id, last, &fd);
	stat_answer(call, ARCHIVE_KIND_DIR, 0, "");
	/* Refusals name the path as the client gave it. */
	expect_apid_error(req, ERR_INVALID_REQUEST,
	    "/workspace/caf\xe9/a b\nc/l\xff is a directory");
	lookup_done(call, fd);
	assert_pipe_closed(rfd);
}

static void
read_refused_by_stat_only(const char *id)
{
	char		 text[128];
	uint32_t	 req, call;
	int		 rfd, fd;

	/* Over the limit: said from the stat, Docker's tar never asked. */
	req = send_file_request(MSG_FILE_READ, id, "big\xff", &rfd);
	call = expect_stat_only(id, "/workspace/big\xff");
	stat_answer(call, ARCHIVE_KIND_FILE, env->conf.max_file_bytes + 1, "");
	snprintf(text, sizeof(text), "/workspace/big\xff is larger than %lld "
	    "bytes", env->conf.max_file_bytes);
	expect_apid_error(req, ERR_PAYLOAD_TOO_LARGE, text);
	no_proxy_message();
	assert_pipe_closed(rfd);
	/* Missing: the proxy's 404, relayed. */
	req = send_file_request(MSG_FILE_READ, id, "gone\xff", &rfd);
	call = expect_stat_only(id, "/workspace/gone\xff");
	error_reply(call, ERR_NOT_FOUND, "/workspace/gone\xff: not found");
	expect_apid_error(req, ERR_NOT_FOUND, "/workspace/gone\xff: not found");
	assert_pipe_closed(rfd);
	/* The directory is no directory any more. */
	req = send_file_request(MSG_FILE_READ, id, "d/f\xff", &rfd);
	call = expect_stat_only(id, "/workspace/d/f\xff");
	stat_answer(call, ARCHIVE_KIND_FILE, 1, "");
	call = expect_get_want(id, "/workspace/d", ARCHIVE_WANT_TREE, &fd);
	stat_answer(call, ARCHIVE_KIND_FILE, 1, "");
	expect_apid_error(req, ERR_INVALID_REQUEST,
	    "/workspace/d/f\xff is not a regular file");
	lookup_done(call, fd);
	no_apid_message();
	assert_pipe_closed(rfd);
}

/*
 * A file whose name is not UTF-8 comes through its directory's tar, as
 * the member "<dir>/<name>", with the size its stat gave.
 */
static void
test_read_through_the_directory(void **state)
{
	char		 id[SANDBOX_ID_LEN + 1], buf[8];
	uint32_t	 req, call;
	int		 rfd, fd, base;

	create_ok(0, id, sizeof(id));
	base = count_fds();
	req = send_file_request(MSG_FILE_READ, id, "sub/caf\xe9.txt", &rfd);
	call = expect_stat_only(id, "/workspace/sub/caf\xe9.txt");
	no_apid_message();
	stat_answer(call, ARCHIVE_KIND_FILE, 5, "");
	call = expect_get_want(id, "/workspace/sub", ARCHIVE_WANT_TREE, &fd);
	stat_answer(call, ARCHIVE_KIND_DIR, 4096, "");
	expect_read_started_in(req, 5, "sub/caf\xe9.txt");
	assert_int_equal(write(fd, "tar", 3), 3);
	assert_int_equal(read(rfd, buf, sizeof(buf)), 3);
	lookup_done(call, fd);
	expect_apid(req, MSG_OK);
	assert_pipe_closed(rfd);
	assert_int_equal(count_fds(), base);
	/* The stat refuses as for any name; a directory gone meanwhile too. */
	read_refused_by_stat_only(id);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f)	cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(test_read_plain),
		T(test_read_symlinks),
		T(test_read_symlink_loop),
		T(test_read_refusals),
		T(test_read_refusal_names_request),
		T(test_read_proxy_errors),
		T(test_read_rejects),
		T(test_read_odd_names),
		T(test_read_through_the_directory),
#undef T
	};

	signal(SIGPIPE, SIG_IGN);
	log_init(LOG_TO_STDERR, LOG_LEVEL_WARN, "test_manager_file_read");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
