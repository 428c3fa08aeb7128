/*
 * Where managerd's two-phase upload lands (API.md §4.10 step 7, §16.1):
 * the walk of the path inside the sandbox, one ARCHIVE_HEAD at a time,
 * the file itself only on a path a symlink led to.
 * Directories kept as they are, new ones made, symlinks inside and
 * outside /workspace, dangling ones, loops, files in the way, the
 * limits, names of any bytes, the proxy's errors, and the tar's plan
 * apid gets.  The test plays apid and dockerd-proxy (manager_fixture.c,
 * upload_fixture.c).
 */
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

/* Existing directories keep their mode and time; the rest are new. */
static void
test_upload_nested_new_dirs(void **state)
{
	struct file_write_ready	 r;
	struct archive_stat	 st;
	uint32_t		 req, call;
	int			 base = count_fds();

	req = send_begin(sandbox, "a/b/c/f.txt", 0640, 4);
	call = expect_head("/workspace/a");
	no_apid_message();
	memset(&st, 0, sizeof(st));
	st.kind = ARCHIVE_KIND_DIR;
	st.mode = 02775;
	st.mtime = -1500000000;
	st.mtime_nsec = 123456789;
	st.link_target = (char *)(uintptr_t)"";
	stat_answer_full(call, &st);
	/* The first missing one: no more questions. */
	head_missing(expect_head("/workspace/a/b"), "/workspace/a/b");
	upload_rest(req, 4, 4, "a/b/c/f.txt", "/workspace/a/b/c/f.txt", &r);
	assert_int_equal(r.ndirs, 3);
	assert_int_equal(r.dirs[0].mode, 02775);
	assert_int_equal(r.dirs[0].mtime, -1500000000);
	assert_int_equal(r.dirs[0].mtime_nsec, 123456789);
	assert_new_dir(&r.dirs[1]);
	assert_new_dir(&r.dirs[2]);
	file_write_ready_free(&r);
	assert_int_equal(count_fds(), base);
}

/*
 * The last name is not looked at: the upload replaces whatever is there
 * (a file, a symlink, a fifo), and the PUT refuses a directory.  On a
 * path a symlink led to it is, so that a directory's refusal names the
 * path asked for.
 */
static void
test_upload_final_name(void **state)
{
	static const int	 kinds[] = { ARCHIVE_KIND_FILE,
	    ARCHIVE_KIND_SYMLINK, ARCHIVE_KIND_OTHER, MISSING };
	const struct step	 none[] = { { NULL, 0, NULL } };
	struct step		 linked[] = {
	    { "/workspace/l", ARCHIVE_KIND_SYMLINK, "/workspace/r" },
	    { "/workspace/r", ARCHIVE_KIND_DIR, NULL },
	    { "/workspace/r/f", 0, "" }, { NULL, 0, NULL } };
	const struct step	 linked_dir[] = {
	    { "/workspace/l", ARCHIVE_KIND_SYMLINK, "/workspace/r" },
	    { "/workspace/r", ARCHIVE_KIND_DIR, NULL },
	    { "/workspace/r/d", ARCHIVE_KIND_DIR, NULL }, { NULL, 0, NULL } };
	struct file_write_ready	 r;
	size_t			 i;

	upload_ok("f", none, "f", &r);
	assert_int_equal(r.ndirs, 0);
	file_write_ready_free(&r);
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		linked[2].kind = kinds[i];
		upload_ok("l/f", linked, "r/f", &r);
		assert_int_equal(r.ndirs, 1);
		file_write_ready_free(&r);
	}
	upload_refused("l/d", linked_dir, ERR_INVALID_REQUEST,
	    "/workspace/l/d is a directory");
}

/* Allowed now: the write goes where the link leads, and the plan says. */
static void
test_upload_symlink_inside(void **state)
{
	const struct step	 deep[] = {
	    { "/workspace/l", ARCHIVE_KIND_SYMLINK, "/workspace/real/x" },
	    { "/workspace/real", ARCHIVE_KIND_DIR, NULL },
	    { "/workspace/real/x", ARCHIVE_KIND_DIR, NULL },
	    { "/workspace/real/x/sub", ARCHIVE_KIND_DIR, NULL },
	    { "/workspace/real/x/sub/f", MISSING, NULL }, { NULL, 0, NULL } };
	const struct step	 relative[] = {
	    { "/workspace/a", ARCHIVE_KIND_DIR, NULL },
	    { "/workspace/a/l", ARCHIVE_KIND_SYMLINK, "../b" },
	    { "/workspace/b", ARCHIVE_KIND_DIR, NULL },
	    { "/workspace/b/f", ARCHIVE_KIND_FILE, NULL }, { NULL, 0, NULL } };
	const struct step	 root[] = {
	    { "/workspace/l", ARCHIVE_KIND_SYMLINK, "/workspace" },
	    { "/workspace/f", MISSING, NULL }, { NULL, 0, NULL } };
	struct file_write_ready	 r;

	upload_ok("l/sub/f", deep, "real/x/sub/f", &r);
	assert_int_equal(r.ndirs, 3);
	assert_int_equal(r.dirs[2].mtime, 1600000000);
	file_write_ready_free(&r);
	upload_ok("a/l/f", relative, "b/f", &r);
	assert_int_equal(r.ndirs, 1);
	file_write_ready_free(&r);
	upload_ok("l/f", root, "f", &r);
	assert_int_equal(r.ndirs, 0);
	file_write_ready_free(&r);
}

static void
test_upload_symlink_outside(void **state)
{
	static const char	*targets[] = { "/etc", "/", "/workspacex/a",
	    "//workspace/a", "../../etc", NULL };
	struct step		 steps[] = {
	    { "/workspace/evil", ARCHIVE_KIND_SYMLINK, NULL },
	    { NULL, 0, NULL } };
	size_t			 i;

	for (i = 0; targets[i] != NULL; i++) {
		steps[0].target = targets[i];
		upload_refused("evil/passwd", steps, ERR_INVALID_REQUEST,
		    LIMITED);
	}
}

/* A link to nothing, or to a file, is not a directory (mkdir -p says). */
static void
test_upload_not_a_directory(void **state)
{
	const char		*linked = "cannot create /workspace/l/x: "
	    "/workspace/l is not a directory";
	const struct step	 dangling[] = {
	    { "/workspace/l", ARCHIVE_KIND_SYMLINK, "/workspace/none" },
	    { "/workspace/none", MISSING, NULL }, { NULL, 0, NULL } };
	const struct step	 deep_dangling[] = {
	    { "/workspace/l", ARCHIVE_KIND_SYMLINK, "/workspace/m/n" },
	    { "/workspace/m", MISSING, NULL }, { NULL, 0, NULL } };
	const struct step	 to_file[] = {
	    { "/workspace/l", ARCHIVE_KIND_SYMLINK, "/workspace/file" },
	    { "/workspace/file", ARCHIVE_KIND_FILE, NULL }, { NULL, 0, NULL } };
	const struct step	 file[] = {
	    { "/workspace/a", ARCHIVE_KIND_DIR, NULL },
	    { "/workspace/a/b", ARCHIVE_KIND_FILE, NULL }, { NULL, 0, NULL } };
	const struct step	 after_link[] = {
	    { "/workspace/l", ARCHIVE_KIND_SYMLINK, "/workspace/r" },
	    { "/workspace/r", ARCHIVE_KIND_DIR, NULL },
	    { "/workspace/r/x", ARCHIVE_KIND_OTHER, NULL },
	    { NULL, 0, NULL } };

	upload_refused("l/x/f", dangling, ERR_INVALID_REQUEST, linked);
	upload_refused("l/x/f", deep_dangling, ERR_INVALID_REQUEST, linked);
	upload_refused("l/x/f", to_file, ERR_INVALID_REQUEST, linked);
	upload_refused("a/b/c/f", file, ERR_INVALID_REQUEST,
	    "cannot create /workspace/a/b/c: /workspace/a/b is not a "
	    "directory");
	/* Messages name what the client asked for, not the link's target. */
	upload_refused("l/x/f", after_link, ERR_INVALID_REQUEST,
	    "cannot create /workspace/l/x: /workspace/l/x is not a "
	    "directory");
}

/* 8 links are followed; the 9th, or one Docker cannot resolve, is not. */
static void
test_upload_link_limits(void **state)
{
	const char		*many = "/workspace/l0/f: too many levels of "
	    "symbolic links";
	const struct step	 loop[] = {
	    { "/workspace/l0", ARCHIVE_KIND_SYMLINK, "" }, { NULL, 0, NULL } };
	struct step		 chain[11];
	struct file_write_ready	 r;
	char			 paths[10][32], targets[10][32];
	int			 i;

	upload_refused("l0/f", loop, ERR_INVALID_REQUEST, many);
	/* l0 -> l1 -> ... each a new walk from /workspace. */
	for (i = 0; i < 10; i++) {
		snprintf(paths[i], sizeof(paths[i]), "/workspace/l%d", i);
		snprintf(targets[i], sizeof(targets[i]), "/workspace/l%d",
		    i + 1);
		chain[i].path = paths[i];
		chain[i].kind = ARCHIVE_KIND_SYMLINK;
		chain[i].target = targets[i];
	}
	chain[8].kind = ARCHIVE_KIND_DIR;
	memset(&chain[9], 0, sizeof(chain[9]));
	snprintf(targets[9], sizeof(targets[9]), "/workspace/l8/f");
	chain[9].path = targets[9];
	chain[9].kind = MISSING;
	memset(&chain[10], 0, sizeof(chain[10]));
	upload_ok("l0/f", chain, "l8/f", &r);
	file_write_ready_free(&r);
	chain[8].kind = ARCHIVE_KIND_SYMLINK;
	memset(&chain[9], 0, sizeof(chain[9]));
	upload_refused("l0/f", chain, ERR_INVALID_REQUEST, many);
}

/* "a/a/.../a": at most FILE_WRITE_MAX_DIRS components. */
static void
test_upload_components(void **state)
{
	const struct step	 first[] = {
	    { "/workspace/a", MISSING, NULL }, { NULL, 0, NULL } };
	struct file_write_ready	*r;
	char			*path, *name, *want;
	uint32_t		 req;
	int			 i, n = FILE_WRITE_MAX_DIRS;

	assert_non_null(path = malloc(11 + 2 * (size_t)n + 2));
	assert_non_null(r = malloc(sizeof(*r)));
	for (i = 0; i < n; i++)
		memcpy(path + 11 + 2 * i, "a/", 2);
	memcpy(path, "/workspace/", 11);
	path[11 + 2 * n - 1] = '\0';
	name = path + 11;
	req = send_begin(sandbox, name, 0640, 4);
	walk(first);
	upload_rest(req, 4, 4, name, path, r);
	assert_int_equal(r->ndirs, n - 1);
	assert_new_dir(&r->dirs[n - 2]);
	file_write_ready_free(r);
	/* One more. */
	path[11 + 2 * n - 1] = '/';
	path[11 + 2 * n] = 'a';
	path[11 + 2 * n + 1] = '\0';
	assert_non_null(want = malloc(strlen(path) + 64));
	sprintf(want, "%s: more than %d path components", path, n);
	req = send_begin(sandbox, name, 0640, 4);
	expect_apid_error(req, ERR_INVALID_REQUEST, want);
	no_proxy_message();
	free(want);
	free(r);
	free(path);
}

/* Names are bytes: Latin-1, a newline, a space, a 255-byte name. */
static void
test_upload_odd_names(void **state)
{
	struct step		 steps[] = {
	    { "/workspace/caf\xe9", ARCHIVE_KIND_DIR, NULL },
	    { "/workspace/caf\xe9/a b\nc", ARCHIVE_KIND_SYMLINK,
	      "/workspace/d\xef\xbf\xbd" },
	    { "/workspace/d\xef\xbf\xbd", ARCHIVE_KIND_DIR, NULL },
	    { NULL, MISSING, NULL }, { NULL, 0, NULL } };
	struct file_write_ready	 r;
	char			 path[400], last[400], name[400];

	memcpy(path, "caf\xe9/a b\nc/", 11);
	memset(path + 11, 0xff, 255);
	path[266] = '\0';
	snprintf(last, sizeof(last), "/workspace/d\xef\xbf\xbd/%s",
	    path + 11);
	steps[3].path = last;
	snprintf(name, sizeof(name), "d\xef\xbf\xbd/%s", path + 11);
	upload_ok(path, steps, name, &r);
	assert_int_equal(r.ndirs, 1);
	file_write_ready_free(&r);
}

/* The proxy's errors, on the walk's questions and on the PUT itself. */
static void
test_upload_proxy_errors(void **state)
{
	struct file_spool	 fs;
	struct prime		 p;
	uint32_t		 req;
	int			 spool, base = count_fds();

	/* Only "<that path>: not found" is a missing component. */
	req = send_begin(sandbox, "a/f", 0640, 4);
	error_reply(expect_head("/workspace/a"), ERR_NOT_FOUND,
	    "sandbox x not found");
	expect_apid_error(req, ERR_NOT_FOUND, "sandbox x not found");
	req = send_begin(sandbox, "a/f", 0640, 4);
	error_reply(expect_head("/workspace/a"), ERR_NOT_FOUND,
	    "/workspace/a/f: not found");
	expect_apid_error(req, ERR_NOT_FOUND, "/workspace/a/f: not found");
	req = send_begin(sandbox, "a/f", 0640, 4);
	error_reply(expect_head("/workspace/a"), ERR_BACKEND, "docker died");
	expect_apid_error(req, ERR_BACKEND, "docker died");
	no_proxy_message();

	/* The upload itself fails: Docker's answer is apid's. */
	req = send_begin(sandbox, "f", 0640, 4);
	spool = expect_spool(req, 4, &fs);
	assert_true(fs.tar);
	file_spool_free(&fs);
	expect_prime(&p, 1);
	assert_int_equal(write(spool, "tar", 3), 3);
	close(spool);
	send_commit(req, 4);
	expect_go(p.call, 3);
	close(p.fd);
	error_reply(p.call, ERR_INVALID_REQUEST,
	    "/workspace/f is a directory");
	expect_apid_error(req, ERR_INVALID_REQUEST,
	    "/workspace/f is a directory");
	assert_int_equal(upload_count(), 0);
	assert_int_equal(count_fds(), base);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f)	cmocka_unit_test_setup_teardown(f, setup_sandbox, teardown)
		T(test_upload_nested_new_dirs),
		T(test_upload_final_name),
		T(test_upload_symlink_inside),
		T(test_upload_symlink_outside),
		T(test_upload_not_a_directory),
		T(test_upload_link_limits),
		T(test_upload_components),
		T(test_upload_odd_names),
		T(test_upload_proxy_errors),
#undef T
	};

	signal(SIGPIPE, SIG_IGN);
	log_init(LOG_TO_STDERR, LOG_LEVEL_WARN, "test_manager_file_walk");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
