/*
 * managerd's directory listing (API.md §4.11, §6.4): the exec it asks
 * the proxy for, the directory escaped past Docker's JSON, the replies
 * apid gets, cancellation.  The script itself runs here too, under the
 * local /bin/sh, on names of any bytes.  The test plays apid and
 * dockerd-proxy (manager_fixture.c).
 */
#include <sys/stat.h>
#include <sys/wait.h>

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

/* --- list ----------------------------------------------------------------- */

struct list_sent {
	uint32_t		 req;
	uint32_t		 call;
	int			 rfd;
	int			 passed;
	struct docker_exec	 dx;
	struct imsg		 started;	/* FILE_LIST_STARTED */
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

/* --- names of any bytes -------------------------------------------------- */

/* A listing whose exec the proxy starts and that exits at once. */
static void
list_through(struct list_sent *l)
{
	from_proxy(MSG_DOCKER_EXEC_STARTED, l->call, NULL);
	assert_int_equal(to_apid(&l->started), 1);
	exit_reply(l->call, 0, 0);
	expect_exit(l->req, 0, 0);
	list_sent_free(l);
}

static void
test_list_odd_names(void **state)
{
	/* Latin-1, a backslash, a newline, a space, UTF-8, a surrogate. */
	static const char	 dir[] = "/workspace/caf\xe9/a\\b\nc \xc3\xbc"
	    "\xed\xa0\x80";
	char			 id[SANDBOX_ID_LEN + 1], *s;
	struct list_sent	 l;

	create_ok(0, id, sizeof(id));
	list_sent(id, dir, &l);
	/* Only what JSON would not carry as it is, and the backslash. */
	assert_int_equal(l.dx.argc, 5);
	assert_string_equal(l.dx.argv[4], "/workspace/caf\\0351/a\\0134b\nc "
	    "\xc3\xbc\\0355\\0240\\0200");
	assert_null(l.dx.argv[5]);
	list_through(&l);
	/* apid joins entry names to the directory as it was asked for. */
	assert_int_equal(l.started.hdr.type, MSG_FILE_LIST_STARTED);
	assert_non_null(s = msg_get_string(&l.started, MSG_MAX_PATH));
	assert_string_equal(s, dir);
	free(s);
	imsg_free(&l.started);
}

/* "/workspace" and n components of 255 bytes 0xe9. */
static char *
deep_latin1(int n)
{
	char	*p;
	int	 i;

	assert_non_null(p = malloc(10 + (size_t)n * 256 + 1));
	memcpy(p, "/workspace", 10);
	for (i = 0; i < n; i++) {
		p[10 + i * 256] = '/';
		memset(p + 10 + i * 256 + 1, 0xe9, 255);
	}
	p[10 + n * 256] = '\0';
	return p;
}

static void
test_list_long_names(void **state)
{
	char			 id[SANDBOX_ID_LEN + 1], *dir, *joined;
	struct list_sent	 l;
	uint32_t		 req;
	size_t			 len0;
	int			 rfd, i;

	create_ok(0, id, sizeof(id));
	/* 9 x 256 bytes escape to 11 KiB: two arguments, cut at escapes. */
	dir = deep_latin1(9);
	list_sent(id, dir, &l);
	assert_int_equal(l.dx.argc, 6);
	len0 = strlen(l.dx.argv[4]);
	assert_true(len0 <= MSG_MAX_ARG && len0 > MSG_MAX_ARG - 5);
	assert_int_equal(asprintf(&joined, "%s%s", l.dx.argv[4],
	    l.dx.argv[5]), (int)(10 + 9 * (1 + 255 * 5)));
	assert_int_equal(memcmp(joined, "/workspace/\\0351\\0351", 20), 0);
	for (i = 0; joined[i] != '\0'; i++)
		assert_true(joined[i] == '/' || joined[i] == '\\' ||
		    (joined[i] >= '0' && joined[i] <= '9') || i < 10);
	free(joined);
	list_through(&l);
	imsg_free(&l.started);
	free(dir);

	/* 10 would not fit in a message to the proxy. */
	dir = deep_latin1(10);
	req = send_file_request(MSG_FILE_LIST, id, dir, &rfd);
	expect_apid_error(req, ERR_INVALID_REQUEST, "path is too long");
	no_proxy_message();
	assert_pipe_closed(rfd);
	free(dir);
}

/*
 * The script and its arguments as managerd made them for path, run by
 * the local /bin/sh: "<mode hex> <size> <mtime>\n<name>\0" per entry
 * into out.  Returns its exit status.
 */
static int
run_listing(const char *id, const char *path, char *out, size_t outlen,
    size_t *got)
{
	struct list_sent	 l;
	ssize_t			 n;
	pid_t			 pid;
	int			 p[2], status;

	list_sent(id, path, &l);
	assert_int_equal(pipe(p), 0);
	assert_true((pid = fork()) != -1);
	if (pid == 0) {
		dup2(p[1], STDOUT_FILENO);
		execv(l.dx.argv[0], l.dx.argv);
		_exit(127);
	}
	close(p[1]);
	*got = 0;
	while (*got < outlen &&
	    (n = read(p[0], out + *got, outlen - *got)) > 0)
		*got += (size_t)n;
	close(p[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	list_through(&l);
	imsg_free(&l.started);
	return WEXITSTATUS(status);
}

/* Does the listing hold an entry named name? */
static int
listed(const char *out, size_t len, const char *name)
{
	const char	*p = out, *nl, *end;

	while (p < out + len) {
		if ((nl = memchr(p, '\n', (size_t)(out + len - p))) == NULL ||
		    (end = memchr(nl, '\0', (size_t)(out + len - nl))) == NULL)
			return 0;
		if (strcmp(nl + 1, name) == 0)
			return 1;
		p = end + 1;
	}
	return 0;
}

static void
make_file(int dfd, const char *name)
{
	int	 fd;

	assert_true((fd = openat(dfd, name, O_WRONLY | O_CREAT, 0644)) != -1);
	close(fd);
}

static void
test_list_script_runs(void **state)
{
	static const char	*names[] = { "caf\xe9", "a b\nc", ".hidden",
	    "back\\slash", "\xc3\xbc", "x\\0101", NULL };
	char			 id[SANDBOX_ID_LEN + 1], out[8192], big[256];
	char			 top[] = "/tmp/test_list.XXXXXX", dir[128];
	char			 path[192];
	size_t			 got, i;
	int			 dfd;

	create_ok(0, id, sizeof(id));
	assert_non_null(mkdtemp(top));
	/* The directory itself: Latin-1, a backslash, a trailing newline. */
	snprintf(dir, sizeof(dir), "%s/l\xe9\\x\n", top);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_true((dfd = open(dir, O_RDONLY | O_DIRECTORY)) != -1);
	for (i = 0; names[i] != NULL; i++)
		make_file(dfd, names[i]);
	memset(big, 0xe9, 255);
	big[255] = '\0';
	make_file(dfd, big);
	assert_int_equal(run_listing(id, dir, out, sizeof(out), &got), 0);
	for (i = 0; names[i] != NULL; i++)
		assert_true(listed(out, got, names[i]));
	assert_true(listed(out, got, big));
	assert_false(listed(out, got, "x\\A"));

	/* Missing: 2; not a directory: 3. */
	snprintf(path, sizeof(path), "%s/nope\xe9", dir);
	assert_int_equal(run_listing(id, path, out, sizeof(out), &got), 2);
	snprintf(path, sizeof(path), "%s/caf\xe9", dir);
	assert_int_equal(run_listing(id, path, out, sizeof(out), &got), 3);
	for (i = 0; names[i] != NULL; i++)
		assert_int_equal(unlinkat(dfd, names[i], 0), 0);
	assert_int_equal(unlinkat(dfd, big, 0), 0);
	close(dfd);
	assert_int_equal(rmdir(dir), 0);
	assert_int_equal(rmdir(top), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f)	cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(test_list_default),
		T(test_list_paths),
		T(test_list_cancel),
		T(test_list_odd_names),
		T(test_list_long_names),
		T(test_list_script_runs),
#undef T
	};

	signal(SIGPIPE, SIG_IGN);
	log_init(LOG_TO_STDERR, LOG_LEVEL_WARN, "test_manager_file_list");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
