/*
 * managerd's file read, write and list (API.md §4.9-4.11, §6): the checks
 * and their order, what goes to dockerd-proxy, symlink resolution, the
 * replies apid gets, and that every copy of apid's pipe is closed at the
 * end.  The test plays apid and dockerd-proxy (manager_fixture.c).
 */
#include <dirent.h>
#include <errno.h>
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

static int
count_fds(void)
{
	struct dirent	*de;
	DIR		*d;
	int		 n = 0;

	assert_non_null(d = opendir("/proc/self/fd"));
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* Every writer of the pipe is gone: the reader sees EOF. */
static void
assert_pipe_closed(int rfd)
{
	char	 c;

	assert_int_equal(read(rfd, &c, 1), 0);
	close(rfd);
}

/* Every reader of the pipe is gone: writing fails. */
static void
assert_no_reader(int wfd)
{
	assert_int_equal(write(wfd, "x", 1), -1);
	assert_int_equal(errno, EPIPE);
	close(wfd);
}

/* FILE_READ or FILE_LIST with a fresh pipe's write end; *rfd: ours. */
static uint32_t
send_file_request(uint32_t type, const char *id, const char *path, int *rfd)
{
	struct file_request	 f;
	struct msgw		 w;
	int			 p[2];

	assert_int_equal(pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
	f.sandbox_id = (char *)(uintptr_t)id;
	f.path = (char *)(uintptr_t)path;
	msgw_init(&w);
	msg_put_file_request(&w, &f);
	*rfd = p[0];
	return from_apid(type, p[1], &w);
}

/* FILE_WRITE with a fresh pipe's read end; *wfd: ours. */
static uint32_t
send_write(const char *id, const char *path, uint32_t mode, uint64_t size,
    int *wfd)
{
	struct file_write	 f;
	struct msgw		 w;
	int			 p[2];

	assert_int_equal(pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
	f.sandbox_id = (char *)(uintptr_t)id;
	f.path = (char *)(uintptr_t)path;
	f.mode = mode;
	f.size = size;
	msgw_init(&w);
	msg_put_file_write(&w, &f);
	*wfd = p[1];
	return from_apid(MSG_FILE_WRITE, p[0], &w);
}

/* The next ARCHIVE_GET: checks it and returns its call; *fd: the copy. */
static uint32_t
expect_get(const char *id, const char *path, int *fd)
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
	assert_int_equal(ag.want, ARCHIVE_WANT_FILE);
	assert_int_equal(ag.max_bytes, env->conf.max_file_bytes);
	archive_get_free(&ag);
	return call;
}

static void
stat_reply(uint32_t call, uint8_t kind, uint64_t size, const char *target)
{
	struct archive_stat	 st;
	struct msgw		 w;

	memset(&st, 0, sizeof(st));
	st.kind = kind;
	st.size = size;
	st.link_target = (char *)(uintptr_t)target;
	msgw_init(&w);
	msg_put_archive_stat(&w, &st);
	from_proxy(MSG_DOCKER_ARCHIVE_STAT, call, &w);
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
	stat_reply(call, ARCHIVE_KIND_SYMLINK, strlen(target), target);
	no_apid_message();
	no_proxy_message();
	lookup_done(call, fd);
}

static void
expect_read_started(uint32_t req, uint64_t size)
{
	struct imsg	 imsg;
	uint64_t	 got;

	assert_int_equal(to_apid(&imsg), 1);
	assert_int_equal(imsg.hdr.type, MSG_FILE_READ_STARTED);
	assert_int_equal(imsg.hdr.peerid, req);
	assert_int_equal(msg_get_u64(&imsg, &got), 0);
	assert_int_equal(got, size);
	imsg_free(&imsg);
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
	stat_reply(call, kind, size, target);
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
	stat_reply(call, ARCHIVE_KIND_FILE, 5, "");
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
	stat_reply(call, ARCHIVE_KIND_FILE, 0, "");
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
	stat_reply(call, ARCHIVE_KIND_FILE, 3, "");
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
	stat_reply(call, ARCHIVE_KIND_SYMLINK, 2, "m8");
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
	stat_reply(call, ARCHIVE_KIND_FILE, 1024, "");
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
	stat_reply(call, ARCHIVE_KIND_DIR, 0, "");
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
	stat_reply(call, ARCHIVE_KIND_FILE, 10, "");
	expect_read_started(req, 10);
	close(fd);
	error_reply(call, ERR_BACKEND, "/workspace/f: the reader went away");
	expect_apid_error(req, ERR_BACKEND,
	    "/workspace/f: the reader went away");
	assert_pipe_closed(rfd);

	/* An error after a refusal: apid heard once already. */
	req = send_file_request(MSG_FILE_READ, id, "d", &rfd);
	call = expect_get(id, "/workspace/d", &fd);
	stat_reply(call, ARCHIVE_KIND_DIR, 0, "");
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

/* --- write ---------------------------------------------------------------- */

static void
write_refused(const char *id, const char *path, uint32_t mode, uint64_t size,
    enum error_kind kind, const char *text)
{
	uint32_t	 req;
	int		 wfd;

	req = send_write(id, path, mode, size, &wfd);
	expect_apid_error(req, kind, text);
	no_proxy_message();
	assert_no_reader(wfd);
}

static void
test_write_rejects(void **state)
{
	static char	 setting[] = "AGENT_SANDBOX_MAX_FILE_BYTES=10";
	static char	*settings[] = { setting, NULL };
	static const char	*outside[] = { "/etc/x", "/workspace", "../x",
	    "/workspace/..", "/workspacex/a", "//workspace/a", "a/../../b",
	    NULL };
	const char	*limited = "writes are limited to files under /workspace";
	char		 id[SANDBOX_ID_LEN + 1];
	size_t		 i;
	int		 base;

	teardown(state);
	setup_env(settings);
	create_ok(0, id, sizeof(id));
	base = count_fds();
	/* Order: sandbox, path, size, mode. */
	write_refused("sb_nope", "/etc/x", 01000, 11, ERR_NOT_FOUND,
	    "sandbox sb_nope not found");
	write_refused(id, "", 0644, 0, ERR_INVALID_REQUEST,
	    "path must be a non-empty string");
	for (i = 0; outside[i] != NULL; i++)
		write_refused(id, outside[i], 01000, 11, ERR_INVALID_REQUEST,
		    limited);
	write_refused(id, "a", 01000, 11, ERR_PAYLOAD_TOO_LARGE,
	    "file exceeds 10 bytes");
	write_refused(id, "a", 01000, 10, ERR_INVALID_REQUEST,
	    "mode must be between 0 and 0o777");
	write_refused(id, "a", 07777, 0, ERR_INVALID_REQUEST,
	    "mode must be between 0 and 0o777");
	assert_int_equal(count_fds(), base);
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
expect_ready(uint32_t req, const char *name, uint32_t mode)
{
	struct file_write_ready	 r;
	struct imsg		 imsg;

	assert_int_equal(to_apid(&imsg), 1);
	assert_int_equal(imsg.hdr.type, MSG_FILE_WRITE_READY);
	assert_int_equal(imsg.hdr.peerid, req);
	assert_int_equal(msg_get_file_write_ready(&imsg, &r), 0);
	imsg_free(&imsg);
	assert_string_equal(r.name, name);
	assert_int_equal(r.uid, env->conf.sandbox_uid);
	assert_int_equal(r.gid, env->conf.sandbox_gid);
	assert_int_equal(r.mode, mode);
	assert_int_equal(r.mtime, (int64_t)now);
	file_write_ready_free(&r);
}

static void
test_write_ok(void **state)
{
	static char	 setting[] = "AGENT_SANDBOX_SANDBOX_USER=1234:5678";
	static char	*settings[] = { setting, NULL };
	char		 id[SANDBOX_ID_LEN + 1], buf[8];
	struct file_info fi;
	struct imsg	 imsg;
	uint32_t	 req, call;
	int		 wfd, fd, base;

	teardown(state);
	setup_env(settings);
	create_ok(0, id, sizeof(id));
	base = count_fds();
	now = 1700000000.75;
	req = send_write(id, "src//./app.py", 0755, 3, &wfd);
	call = expect_put(id, &fd);
	expect_ready(req, "src/app.py", 0755);
	assert_int_equal(env->conf.sandbox_uid, 1234);
	assert_int_equal(env->conf.sandbox_gid, 5678);
	/* The proxy reads what apid writes. */
	assert_int_equal(write(wfd, "tar", 3), 3);
	close(wfd);
	assert_int_equal(read(fd, buf, sizeof(buf)), 3);
	assert_int_equal(read(fd, buf, sizeof(buf)), 0);
	close(fd);
	no_apid_message();
	now = 1700000001.5;
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	assert_int_equal(to_apid(&imsg), 1);
	assert_int_equal(imsg.hdr.type, MSG_FILE_INFO);
	assert_int_equal(imsg.hdr.peerid, req);
	assert_int_equal(msg_get_file_info(&imsg, &fi), 0);
	imsg_free(&imsg);
	assert_string_equal(fi.name, "app.py");
	assert_string_equal(fi.path, "/workspace/src/app.py");
	assert_string_equal(fi.type, "file");
	assert_int_equal(fi.size, 3);
	assert_true(fi.modified_at == 1700000001.5);
	file_info_free(&fi);
	no_proxy_message();
	assert_int_equal(count_fds(), base);
}

static void
test_write_proxy_error(void **state)
{
	const char	*text = "writes are limited to files under /workspace: "
	    "/workspace/evil is a symlink or not a directory";
	char		 id[SANDBOX_ID_LEN + 1];
	uint32_t	 req, call;
	int		 wfd, fd, base;

	create_ok(0, id, sizeof(id));
	base = count_fds();
	req = send_write(id, "/workspace/evil/passwd", 0644, 0, &wfd);
	call = expect_put(id, &fd);
	expect_ready(req, "evil/passwd", 0644);
	close(fd);
	error_reply(call, ERR_INVALID_REQUEST, text);
	expect_apid_error(req, ERR_INVALID_REQUEST, text);
	assert_no_reader(wfd);
	assert_int_equal(count_fds(), base);
}

/* --- list ----------------------------------------------------------------- */

struct list_sent {
	uint32_t		 req;
	uint32_t		 call;
	int			 rfd;
	int			 passed;
	struct docker_exec	 dx;
};

static void
list_sent(const char *id, const char *path, struct list_sent *l)
{
	struct imsg	 imsg;

	l->req = send_file_request(MSG_FILE_LIST, id, path, &l->rfd);
	l->call = expect_proxy(MSG_DOCKER_EXEC, &imsg);
	assert_true(imsg.fd != -1);
	l->passed = imsg_take_fd(&imsg);
	assert_int_equal(msg_get_docker_exec(&imsg, &l->dx), 0);
	imsg_free(&imsg);
}

static void
list_sent_free(struct list_sent *l)
{
	docker_exec_free(&l->dx);
	close(l->passed);
	assert_pipe_closed(l->rfd);
}

static void
expect_list_started(uint32_t req, const char *dir)
{
	struct imsg	 imsg;
	char		*s;

	assert_int_equal(to_apid(&imsg), 1);
	assert_int_equal(imsg.hdr.type, MSG_FILE_LIST_STARTED);
	assert_int_equal(imsg.hdr.peerid, req);
	assert_non_null(s = msg_get_string(&imsg, MSG_MAX_PATH));
	assert_string_equal(s, dir);
	free(s);
	imsg_free(&imsg);
}

static void
exit_reply(uint32_t call, int64_t code, int timed_out)
{
	struct exec_exit	 ex;
	struct msgw		 w;

	ex.exit_code = code;
	ex.timed_out = timed_out;
	msgw_init(&w);
	msg_put_exec_exit(&w, &ex);
	from_proxy(MSG_DOCKER_EXEC_EXIT, call, &w);
}

static void
expect_exit(uint32_t req, int64_t code, int timed_out)
{
	struct exec_exit	 ex;
	struct imsg		 imsg;

	assert_int_equal(to_apid(&imsg), 1);
	assert_int_equal(imsg.hdr.type, MSG_EXEC_EXIT);
	assert_int_equal(imsg.hdr.peerid, req);
	assert_int_equal(msg_get_exec_exit(&imsg, &ex), 0);
	assert_int_equal(ex.exit_code, code);
	assert_int_equal(ex.timed_out, timed_out);
	imsg_free(&imsg);
}

static void
test_list_default(void **state)
{
	char		 id[SANDBOX_ID_LEN + 1];
	struct list_sent l;
	int		 base;

	create_ok(0, id, sizeof(id));
	base = count_fds();
	list_sent(id, NULL, &l);
	assert_string_equal(l.dx.id, id);
	assert_int_equal(l.dx.argc, 5);
	assert_string_equal(l.dx.argv[0], "/bin/sh");
	assert_string_equal(l.dx.argv[1], "-c");
	assert_non_null(strstr(l.dx.argv[2], "stat -c '%f %s %Y'"));
	assert_string_equal(l.dx.argv[3], "sh");
	assert_string_equal(l.dx.argv[4], "/workspace");
	assert_null(l.dx.argv[5]);
	assert_int_equal(l.dx.env.count, 0);
	assert_string_equal(l.dx.workdir, "/");
	assert_string_equal(l.dx.user, "1000:1000");
	assert_true(l.dx.timeout_seconds == 60.0);
	no_apid_message();
	from_proxy(MSG_DOCKER_EXEC_STARTED, l.call, NULL);
	expect_list_started(l.req, "/workspace");
	exit_reply(l.call, 0, 0);
	expect_exit(l.req, 0, 0);
	assert_int_equal(exec_count(), 0);
	list_sent_free(&l);
	assert_int_equal(count_fds(), base);
}

static void
test_list_paths(void **state)
{
	char		 id[SANDBOX_ID_LEN + 1];
	struct list_sent l;
	uint32_t	 req;
	int		 rfd, base;

	create_ok(0, id, sizeof(id));
	base = count_fds();
	list_sent(id, "data/../etc/", &l);
	assert_string_equal(l.dx.argv[4], "/workspace/etc");
	from_proxy(MSG_DOCKER_EXEC_STARTED, l.call, NULL);
	expect_list_started(l.req, "/workspace/etc");
	/* The exit codes go to apid as they are (2: 404, 3: 400). */
	exit_reply(l.call, 2, 0);
	expect_exit(l.req, 2, 0);
	list_sent_free(&l);

	list_sent(id, "/etc", &l);
	assert_string_equal(l.dx.argv[4], "/etc");
	from_proxy(MSG_DOCKER_EXEC_STARTED, l.call, NULL);
	expect_list_started(l.req, "/etc");
	exit_reply(l.call, 3, 0);
	expect_exit(l.req, 3, 0);
	list_sent_free(&l);

	req = send_file_request(MSG_FILE_LIST, "sb_nope", "", &rfd);
	expect_apid_error(req, ERR_NOT_FOUND, "sandbox sb_nope not found");
	assert_pipe_closed(rfd);
	req = send_file_request(MSG_FILE_LIST, id, "", &rfd);
	expect_apid_error(req, ERR_INVALID_REQUEST,
	    "path must be a non-empty string");
	assert_pipe_closed(rfd);
	no_proxy_message();

	/* The proxy's error before the start. */
	list_sent(id, "x", &l);
	error_reply(l.call, ERR_BACKEND, "sandbox is not running");
	expect_apid_error(l.req, ERR_BACKEND, "sandbox is not running");
	list_sent_free(&l);
	assert_int_equal(exec_count(), 0);
	assert_int_equal(count_fds(), base);
}

static void
test_list_cancel(void **state)
{
	char		 id[SANDBOX_ID_LEN + 1];
	struct list_sent l;
	struct imsg	 imsg;

	create_ok(0, id, sizeof(id));
	list_sent(id, NULL, &l);
	from_proxy(MSG_DOCKER_EXEC_STARTED, l.call, NULL);
	expect_list_started(l.req, "/workspace");
	fake_imsg(&imsg, MSG_EXEC_CANCEL, l.req, -1, NULL);
	dispatch_apid(&env->apid_peer, &imsg);
	imsg_free(&imsg);
	assert_int_equal(expect_proxy(MSG_DOCKER_EXEC_CANCEL, &imsg), l.call);
	imsg_free(&imsg);
	exit_reply(l.call, 137, 0);
	expect_exit(l.req, 137, 0);
	list_sent_free(&l);
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
		T(test_write_rejects),
		T(test_write_ok),
		T(test_write_proxy_error),
		T(test_list_default),
		T(test_list_paths),
		T(test_list_cancel),
#undef T
	};

	signal(SIGPIPE, SIG_IGN);
	log_init(LOG_TO_STDERR, LOG_LEVEL_WARN, "test_manager_files");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
