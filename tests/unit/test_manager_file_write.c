/*
 * managerd's uploads (API.md §4.10, §6.3, §16.1): the checks and their
 * order, for the one-step FILE_WRITE and the two-phase FILE_WRITE_BEGIN;
 * the walk of the path inside the sandbox (directories, symlinks inside
 * and outside /workspace, dangling ones, loops, files in the way, the
 * limits), the spool, COMMIT and ABORT, the tar's plan apid gets, names
 * of any bytes, and apid lying.  The test plays apid and dockerd-proxy
 * (manager_fixture.c).
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
#include "manager_fixture.h"

#define LIMITED		"writes are limited to files under /workspace"
#define MISSING		0	/* a step's answer: ERR_NOT_FOUND */

/* One ARCHIVE_HEAD of a walk: what is asked about, what the proxy says. */
struct step {
	const char	*path;
	int		 kind;		/* ARCHIVE_KIND_*, or MISSING */
	const char	*target;	/* of a symlink */
};

static char	 sandbox[SANDBOX_ID_LEN + 1];

/* --- helpers -------------------------------------------------------------- */

static void
from_apid_id(uint32_t type, uint32_t peerid, int fd, struct msgw *w)
{
	struct imsg	 imsg;

	fake_imsg(&imsg, type, peerid, fd, w);
	dispatch_apid(&env->apid_peer, &imsg);
	imsg_free(&imsg);
}

static void
put_write(struct msgw *w, const char *id, const char *path, uint32_t mode,
    uint64_t size)
{
	struct file_write	 f;

	f.sandbox_id = (char *)(uintptr_t)id;
	f.path = (char *)(uintptr_t)path;
	f.mode = mode;
	f.size = size;
	msgw_init(w);
	msg_put_file_write(w, &f);
}

/* FILE_WRITE with a fresh pipe's read end; *wfd: ours. */
static uint32_t
send_write(const char *id, const char *path, uint32_t mode, uint64_t size,
    int *wfd)
{
	struct msgw	 w;
	int		 p[2];

	assert_int_equal(pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
	put_write(&w, id, path, mode, size);
	*wfd = p[1];
	return from_apid(MSG_FILE_WRITE, p[0], &w);
}

static uint32_t
send_begin(const char *id, const char *path, uint32_t mode, uint64_t size)
{
	struct msgw	 w;

	put_write(&w, id, path, mode, size);
	return from_apid(MSG_FILE_WRITE_BEGIN, -1, &w);
}

/* COMMIT with a fresh tar pipe's read end; *wfd: apid's end. */
static void
send_commit(uint32_t req, uint64_t bytes, int *wfd)
{
	struct msgw	 w;
	int		 p[2];

	assert_int_equal(pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
	msgw_init(&w);
	msg_put_u64(&w, bytes);
	*wfd = p[1];
	from_apid_id(MSG_FILE_WRITE_COMMIT, req, p[0], &w);
}

static uint32_t
expect_head(const char *path)
{
	struct archive_head	 ah;
	struct imsg		 imsg;
	uint32_t		 call;

	call = expect_proxy(MSG_DOCKER_ARCHIVE_HEAD, &imsg);
	assert_int_equal(imsg.fd, -1);
	assert_int_equal(msg_get_archive_head(&imsg, &ah), 0);
	imsg_free(&imsg);
	assert_string_equal(ah.id, sandbox);
	assert_string_equal(ah.path, path);
	archive_head_free(&ah);
	return call;
}

static void
head_missing(uint32_t call, const char *path)
{
	char	 text[MSG_MAX_PATH + 32];

	snprintf(text, sizeof(text), "%s: not found", path);
	error_reply(call, ERR_NOT_FOUND, text);
}

/* The proxy answers the walk's questions; then nothing more is asked. */
static void
walk(const struct step *s)
{
	uint32_t	 call;

	for (; s->path != NULL; s++) {
		no_apid_message();
		call = expect_head(s->path);
		if (s->kind == MISSING)
			head_missing(call, s->path);
		else
			stat_answer(call, (uint8_t)s->kind, 1,
			    s->target != NULL ? s->target : "");
	}
	no_proxy_message();
}

/* FILE_SPOOL: an empty, unlinked, regular file open for both. */
static int
expect_spool(uint32_t req, uint64_t max)
{
	struct imsg	 imsg;
	struct stat	 st;
	uint64_t	 got;
	int		 fd;

	assert_int_equal(to_apid(&imsg), 1);
	if (imsg.hdr.type != MSG_FILE_SPOOL)
		fail_msg("apid got %s", msg_type_name(imsg.hdr.type));
	assert_int_equal(imsg.hdr.peerid, req);
	assert_int_equal(msg_get_u64(&imsg, &got), 0);
	assert_true(got == max);
	assert_true((fd = imsg_take_fd(&imsg)) != -1);
	imsg_free(&imsg);
	assert_int_equal(fstat(fd, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_size, 0);
	assert_int_equal(st.st_nlink, 0);
	assert_int_equal(fcntl(fd, F_GETFL) & O_ACCMODE, O_RDWR);
	return fd;
}

/* The proxy's ARCHIVE_PUT: checks it; *fd: what the proxy got. */
static uint32_t
expect_put(const char *id, int *fd)
{
	struct archive_put	 ap;
	struct imsg		 imsg;
	uint32_t		 call;

	call = expect_proxy(MSG_DOCKER_ARCHIVE_PUT, &imsg);
	assert_true(imsg.fd != -1);
	*fd = imsg_take_fd(&imsg);
	assert_int_equal(msg_get_archive_put(&imsg, &ap), 0);
	imsg_free(&imsg);
	assert_string_equal(ap.id, id);
	assert_string_equal(ap.path, "/workspace");
	assert_int_equal(ap.flags, ARCHIVE_PUT_NO_REPLACE);
	assert_int_equal(ap.length, -1);
	archive_put_free(&ap);
	return call;
}

static void
expect_ready(uint32_t req, const char *name, uint32_t mode,
    struct file_write_ready *r)
{
	struct imsg	 imsg;

	assert_int_equal(to_apid(&imsg), 1);
	assert_int_equal(imsg.hdr.type, MSG_FILE_WRITE_READY);
	assert_int_equal(imsg.hdr.peerid, req);
	assert_int_equal(msg_get_file_write_ready(&imsg, r), 0);
	imsg_free(&imsg);
	assert_string_equal(r->name, name);
	assert_int_equal(r->uid, env->conf.sandbox_uid);
	assert_int_equal(r->gid, env->conf.sandbox_gid);
	assert_int_equal(r->mode, mode);
	assert_int_equal(r->mtime, (int64_t)now);
}

/* A directory member the upload makes: 0755 and now. */
static void
assert_new_dir(const struct file_write_dir *d)
{
	assert_int_equal(d->mode, 0755);
	assert_int_equal(d->mtime, (int64_t)now);
	assert_int_equal(d->mtime_nsec,
	    (uint32_t)((now - (double)(int64_t)now) * 1e9));
}

static void
expect_file_info(uint32_t req, const char *path, uint64_t size)
{
	struct file_info	 fi;
	struct imsg		 imsg;

	assert_int_equal(to_apid(&imsg), 1);
	assert_int_equal(imsg.hdr.type, MSG_FILE_INFO);
	assert_int_equal(imsg.hdr.peerid, req);
	assert_int_equal(msg_get_file_info(&imsg, &fi), 0);
	imsg_free(&imsg);
	assert_string_equal(fi.name, strrchr(path, '/') + 1);
	assert_string_equal(fi.path, path);
	assert_string_equal(fi.type, "file");
	assert_true(fi.size == size);
	assert_true(fi.modified_at == now);
	file_info_free(&fi);
}

/*
 * After the walk: the spool, apid's COMMIT of bytes, the upload, the
 * plan in *r (named name) and the FILE_INFO for path.
 */
static void
upload_rest(uint32_t req, uint64_t max, uint64_t bytes, const char *name,
    const char *path, struct file_write_ready *r)
{
	uint32_t	 call;
	char		 buf[8];
	int		 spool, wfd, pfd;

	spool = expect_spool(req, max);
	assert_int_equal(write(spool, "body", 4), 4);
	close(spool);
	no_apid_message();
	send_commit(req, bytes, &wfd);
	call = expect_put(sandbox, &pfd);
	expect_ready(req, name, 0640, r);
	/* The proxy reads the tar apid writes. */
	assert_int_equal(write(wfd, "tar", 3), 3);
	close(wfd);
	assert_int_equal(read(pfd, buf, sizeof(buf)), 3);
	close(pfd);
	no_apid_message();
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	expect_file_info(req, path, bytes);
	no_proxy_message();
}

/* A whole upload of 4 bytes through path, landing as name. */
static void
upload_ok(const char *path, const struct step *steps, const char *name,
    struct file_write_ready *r)
{
	char		 want[MSG_MAX_PATH + 1];
	uint32_t	 req;

	snprintf(want, sizeof(want), "/workspace/%s", path);
	req = send_begin(sandbox, path, 0640, 4);
	walk(steps);
	upload_rest(req, 4, 4, name, want, r);
}

static void
upload_refused(const char *path, const struct step *steps,
    enum error_kind kind, const char *text)
{
	uint32_t	 req;

	req = send_begin(sandbox, path, 0640, 4);
	walk(steps);
	expect_apid_error(req, kind, text);
	no_proxy_message();
}

static int
setup_sandbox(void **state)
{
	static char	 user[] = "AGENT_SANDBOX_SANDBOX_USER=1234:5678";
	static char	 max[] = "AGENT_SANDBOX_MAX_FILE_BYTES=10";
	static char	*settings[] = { user, max, NULL };

	setup_env(settings);
	create_ok(0, sandbox, sizeof(sandbox));
	now = 1700000000.25;
	return 0;
}

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

/* --- two phases: the walk ------------------------------------------------ */

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
	no_proxy_message();
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

/* The last name: a file, symlink or loop is replaced; a dir is not. */
static void
test_upload_final_name(void **state)
{
	static const int	 kinds[] = { ARCHIVE_KIND_FILE,
	    ARCHIVE_KIND_SYMLINK, ARCHIVE_KIND_OTHER, MISSING };
	struct step		 steps[] = { { "/workspace/f", 0, "" },
	    { NULL, 0, NULL } };
	const struct step	 dir[] = {
	    { "/workspace/d", ARCHIVE_KIND_DIR, NULL }, { NULL, 0, NULL } };
	struct file_write_ready	 r;
	size_t			 i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		steps[0].kind = kinds[i];
		upload_ok("f", steps, "f", &r);
		assert_int_equal(r.ndirs, 0);
		file_write_ready_free(&r);
	}
	upload_refused("d", dir, ERR_INVALID_REQUEST,
	    "/workspace/d is a directory");
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
	int			 i, wfd, n = FILE_WRITE_MAX_DIRS;

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
	req = send_write(sandbox, name, 0640, 4, &wfd);
	expect_apid_error(req, ERR_INVALID_REQUEST, want);
	assert_no_reader(wfd);
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

static void
test_upload_proxy_errors(void **state)
{
	struct file_write_ready	 r;
	uint32_t		 req, call;
	int			 wfd, pfd, base = count_fds();

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

	/* The upload itself fails. */
	req = send_begin(sandbox, "f", 0640, 4);
	head_missing(expect_head("/workspace/f"), "/workspace/f");
	close(expect_spool(req, 4));
	send_commit(req, 4, &wfd);
	call = expect_put(sandbox, &pfd);
	expect_ready(req, "f", 0640, &r);
	file_write_ready_free(&r);
	close(pfd);
	error_reply(call, ERR_INVALID_REQUEST, "/workspace/f is a directory");
	expect_apid_error(req, ERR_INVALID_REQUEST,
	    "/workspace/f is a directory");
	assert_no_reader(wfd);
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
	char		 want[128];

#define LIE(f, type, why)	do {					\
	snprintf(want, sizeof(want), "bad %s message from apid: %s",	\
	    type, why);							\
	expect_fatal(f, want);						\
} while (0)
	LIE(lie_commit_without_begin, "FILE_WRITE_COMMIT", none);
	LIE(lie_commit_while_walking, "FILE_WRITE_COMMIT", none);
	LIE(lie_commit_twice, "FILE_WRITE_COMMIT", none);
	LIE(lie_commit_other_size, "FILE_WRITE_COMMIT",
	    "not the size it declared");
	LIE(lie_commit_without_pipe, "FILE_WRITE_COMMIT", "no tar pipe");
	LIE(lie_commit_short, "FILE_WRITE_COMMIT", "malformed commit");
	LIE(lie_abort_without_begin, "FILE_WRITE_ABORT", none);
	LIE(lie_abort_with_payload, "FILE_WRITE_ABORT", "unexpected payload");
	LIE(lie_abort_with_descriptor, "FILE_WRITE_ABORT",
	    "unexpected descriptor");
	LIE(lie_begin_twice, "FILE_WRITE_BEGIN",
	    "a second upload with one id");
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
		T(test_upload_nested_new_dirs),
		T(test_upload_final_name),
		T(test_upload_symlink_inside),
		T(test_upload_symlink_outside),
		T(test_upload_not_a_directory),
		T(test_upload_link_limits),
		T(test_upload_components),
		T(test_upload_odd_names),
		T(test_upload_too_large),
		T(test_upload_abort),
		T(test_upload_proxy_errors),
		T(test_upload_sandbox_gone),
		T(test_spool_files),
		T(test_upload_lies),
#undef T
	};

	signal(SIGPIPE, SIG_IGN);
	log_init(LOG_TO_STDERR, LOG_LEVEL_WARN, "test_manager_file_write");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
