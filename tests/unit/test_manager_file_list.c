/*
 * managerd's directory listing (API.md §4.11, §6.4): the exec it asks
 * the proxy for, the replies apid gets, cancellation.  The test plays
 * apid and dockerd-proxy (manager_fixture.c).
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
		T(test_list_default),
		T(test_list_paths),
		T(test_list_cancel),
#undef T
	};

	signal(SIGPIPE, SIG_IGN);
	log_init(LOG_TO_STDERR, LOG_LEVEL_WARN, "test_manager_file_list");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
