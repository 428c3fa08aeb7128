/*
 * managerd's exec (REFERENCE-TESTS.md H 50-51, manager parts): both
 * command forms, the checks and their order, the proxy's errors,
 * cancellation; and command_blank().  The test plays apid and
 * dockerd-proxy (manager_fixture.c).
 */
#include <setjmp.h>
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

/* --- H 50-51: exec -------------------------------------------------------- */

static void
exec_set_argv(struct exec_request *e, const char *const *argv)
{
	size_t	 n, i;

	for (n = 0; argv[n] != NULL; n++)
		;
	e->argc = n;
	e->argv = calloc(n + 1, sizeof(char *));
	assert_non_null(e->argv);
	for (i = 0; i < n; i++)
		e->argv[i] = strdup(argv[i]);
}

static void
exec_sent_free(struct exec_sent *x)
{
	docker_exec_free(&x->dx);
	close(x->passed);
	assert_pipe_closed(x->rfd);
}

static void
exec_finish(struct exec_sent *x, int64_t code, int timed_out)
{
	struct exec_exit	 ex;
	struct imsg		 imsg;
	struct msgw		 w;

	from_proxy(MSG_DOCKER_EXEC_STARTED, x->call, NULL);
	expect_apid(x->req, MSG_EXEC_STARTED);
	ex.exit_code = code;
	ex.timed_out = timed_out;
	msgw_init(&w);
	msg_put_exec_exit(&w, &ex);
	from_proxy(MSG_DOCKER_EXEC_EXIT, x->call, &w);
	assert_int_equal(to_apid(&imsg), 1);
	assert_int_equal(imsg.hdr.type, MSG_EXEC_EXIT);
	assert_int_equal(imsg.hdr.peerid, x->req);
	assert_int_equal(msg_get_exec_exit(&imsg, &ex), 0);
	assert_int_equal(ex.exit_code, code);
	assert_int_equal(ex.timed_out, timed_out);
	imsg_free(&imsg);
}

static void
test_exec_shell_form(void **state)
{
	char			 id[SANDBOX_ID_LEN + 1], buf[8];
	struct exec_request	 e;
	struct exec_sent	 x;

	create_ok(0, id, sizeof(id));
	exec_request_init(&e, id);
	exec_set_shell(&e, "echo hi");
	e.workdir = strdup("src");
	assert_int_equal(env_list_add(&e.env, "EXTRA", "x"), 0);
	exec_sent(&e, &x);
	assert_string_equal(x.dx.id, id);
	assert_int_equal(x.dx.argc, 3);
	assert_string_equal(x.dx.argv[0], "/bin/sh");
	assert_string_equal(x.dx.argv[1], "-c");
	assert_string_equal(x.dx.argv[2], "echo hi");
	assert_null(x.dx.argv[3]);
	assert_string_equal(x.dx.workdir, "/workspace/src");
	assert_int_equal(x.dx.env.count, 1);
	assert_string_equal(x.dx.env.keys[0], "EXTRA");
	assert_string_equal(x.dx.env.values[0], "x");
	assert_true(x.dx.timeout_seconds == 60.0);
	/* The proxy got apid's pipe itself. */
	assert_int_equal(write(x.passed, "hi\n", 3), 3);
	assert_int_equal(read(x.rfd, buf, sizeof(buf)), 3);
	assert_memory_equal(buf, "hi\n", 3);
	exec_finish(&x, 0, 0);
	exec_sent_free(&x);
}

static void
test_exec_argv_form(void **state)
{
	static const char *const argv[] = { "printf", "%s|", "a b", "$HOME",
	    NULL };
	static const char *const fail3[] = { "fail", "3", NULL };
	char			 id[SANDBOX_ID_LEN + 1];
	struct exec_request	 e;
	struct exec_sent	 x;

	create_ok(0, id, sizeof(id));
	exec_request_init(&e, id);
	exec_set_argv(&e, argv);
	e.has_timeout = 1;
	e.timeout_seconds = 0.5;
	exec_sent(&e, &x);
	assert_int_equal(x.dx.argc, 4);
	assert_string_equal(x.dx.argv[0], "printf");
	assert_string_equal(x.dx.argv[1], "%s|");
	assert_string_equal(x.dx.argv[2], "a b");
	assert_string_equal(x.dx.argv[3], "$HOME");
	assert_string_equal(x.dx.workdir, "/workspace");
	assert_true(x.dx.timeout_seconds == 0.5);
	exec_finish(&x, 0, 0);
	exec_sent_free(&x);

	/* Exit codes and timeouts are relayed as they are. */
	exec_request_init(&e, id);
	exec_set_argv(&e, fail3);
	e.workdir = strdup("");
	exec_sent(&e, &x);
	assert_string_equal(x.dx.workdir, "/workspace");
	exec_finish(&x, 3, 0);
	exec_sent_free(&x);
	exec_request_init(&e, id);
	exec_set_shell(&e, "hang");
	e.workdir = strdup("/tmp/../etc//");
	exec_sent(&e, &x);
	assert_string_equal(x.dx.workdir, "/etc");
	exec_finish(&x, 137, 1);
	exec_sent_free(&x);
}

static void
expect_exec_refused(struct exec_request *e, enum error_kind kind,
    const char *text)
{
	uint32_t	 req;
	int		 rfd;

	req = send_exec(e, &rfd);
	expect_apid_error(req, kind, text);
	no_proxy_message();
	assert_pipe_closed(rfd);
}

static void
test_exec_rejects(void **state)
{
	static const char *const none[] = { NULL };
	static const char *const empty[] = { "", NULL };
	char			 id[SANDBOX_ID_LEN + 1];
	struct exec_request	 e;
	struct exec_sent	 x;

	create_ok(0, id, sizeof(id));
	exec_request_init(&e, "sb_nope");
	exec_set_shell(&e, "");
	expect_exec_refused(&e, ERR_NOT_FOUND, "sandbox sb_nope not found");
	exec_request_init(&e, id);
	exec_set_shell(&e, "");
	expect_exec_refused(&e, ERR_INVALID_REQUEST,
	    "command must not be empty");
	exec_request_init(&e, id);
	exec_set_shell(&e, "  \t\n ");
	expect_exec_refused(&e, ERR_INVALID_REQUEST,
	    "command must not be empty");
	/* Python's str.strip() knows Unicode spaces (U+3000, U+00A0). */
	exec_request_init(&e, id);
	exec_set_shell(&e, "\xe3\x80\x80\xc2\xa0");
	expect_exec_refused(&e, ERR_INVALID_REQUEST,
	    "command must not be empty");
	exec_request_init(&e, id);
	exec_set_argv(&e, none);
	expect_exec_refused(&e, ERR_INVALID_REQUEST,
	    "command must be a non-empty string or list of strings");
	exec_request_init(&e, id);
	exec_set_shell(&e, "true");
	e.has_timeout = 1;
	e.timeout_seconds = 1e9;
	expect_exec_refused(&e, ERR_INVALID_REQUEST,
	    "timeout_seconds must be in (0, 3600]");
	exec_request_init(&e, id);
	exec_set_shell(&e, "true");
	assert_int_equal(env_list_add(&e.env, "A=B", "x"), 0);
	expect_exec_refused(&e, ERR_INVALID_REQUEST,
	    "invalid environment variable name 'A=B'");
	/* Order: the command before the timeout before the env. */
	exec_request_init(&e, id);
	exec_set_argv(&e, none);
	e.has_timeout = 1;
	e.timeout_seconds = 1e9;
	expect_exec_refused(&e, ERR_INVALID_REQUEST,
	    "command must be a non-empty string or list of strings");
	exec_request_init(&e, id);
	exec_set_shell(&e, "true");
	e.has_timeout = 1;
	e.timeout_seconds = 4000;
	assert_int_equal(env_list_add(&e.env, "", "x"), 0);
	expect_exec_refused(&e, ERR_INVALID_REQUEST,
	    "timeout_seconds must be in (0, 3600]");

	/* [""] is Docker's to refuse (§5.1). */
	exec_request_init(&e, id);
	exec_set_argv(&e, empty);
	exec_sent(&e, &x);
	assert_int_equal(x.dx.argc, 1);
	assert_string_equal(x.dx.argv[0], "");
	error_reply(x.call, ERR_INVALID_REQUEST, "exec failed");
	expect_apid_error(x.req, ERR_INVALID_REQUEST, "exec failed");
	exec_sent_free(&x);
}

/* The proxy's errors before the start reach apid as they are. */
static void
test_exec_backend_errors(void **state)
{
	char			 id[SANDBOX_ID_LEN + 1], msg[64];
	struct exec_request	 e;
	struct exec_sent	 x;

	create_ok(0, id, sizeof(id));
	exec_request_init(&e, id);
	exec_set_shell(&e, "true");
	exec_sent(&e, &x);
	snprintf(msg, sizeof(msg), "sandbox %s is not running", id);
	error_reply(x.call, ERR_INVALID_REQUEST, msg);
	expect_apid_error(x.req, ERR_INVALID_REQUEST, msg);
	exec_sent_free(&x);
	assert_int_equal(exec_count(), 0);
}

static void
test_exec_cancel(void **state)
{
	char			 id[SANDBOX_ID_LEN + 1];
	struct exec_request	 e;
	struct exec_sent	 x;
	struct imsg		 imsg;

	create_ok(0, id, sizeof(id));
	exec_request_init(&e, id);
	exec_set_shell(&e, "sleep 300");
	exec_sent(&e, &x);
	from_proxy(MSG_DOCKER_EXEC_STARTED, x.call, NULL);
	expect_apid(x.req, MSG_EXEC_STARTED);

	/* Exec takes no lock: a timeout on the sandbox goes through. */
	{
		struct sandbox_info	 info;
		uint32_t		 req, call;

		req = send_timeout(id, 60);
		call = expect_proxy_id(MSG_DOCKER_STATE, id);
		state_reply(call, 1, 1);
		expect_info(req, &info);
		sandbox_info_free(&info);
	}

	/* The client went away: the proxy's call is cancelled, once. */
	fake_imsg(&imsg, MSG_EXEC_CANCEL, x.req, -1, NULL);
	dispatch_apid(&env->apid_peer, &imsg);
	dispatch_apid(&env->apid_peer, &imsg);
	imsg_free(&imsg);
	assert_int_equal(expect_proxy(MSG_DOCKER_EXEC_CANCEL, &imsg), x.call);
	assert_int_equal(imsg.len, 0);
	imsg_free(&imsg);
	no_proxy_message();
	{
		struct exec_exit	 ex = { 137, 1 };
		struct msgw		 w;

		msgw_init(&w);
		msg_put_exec_exit(&w, &ex);
		from_proxy(MSG_DOCKER_EXEC_EXIT, x.call, &w);
		assert_int_equal(to_apid(&imsg), 1);
		assert_int_equal(imsg.hdr.type, MSG_EXEC_EXIT);
		imsg_free(&imsg);
	}
	/* Too late to cancel: nothing goes to the proxy. */
	fake_imsg(&imsg, MSG_EXEC_CANCEL, x.req, -1, NULL);
	dispatch_apid(&env->apid_peer, &imsg);
	imsg_free(&imsg);
	no_proxy_message();
	exec_sent_free(&x);
}

/* --- small pieces --------------------------------------------------------- */

static void
test_command_blank(void **state)
{
	assert_true(command_blank(""));
	assert_true(command_blank(" \t\r\n\v\f\x1c\x1f"));
	assert_true(command_blank("\xc2\x85\xe2\x80\xa8\xe1\x9a\x80"));
	assert_false(command_blank("a"));
	assert_false(command_blank(" a "));
	assert_false(command_blank("\xc2"));		/* truncated */
	assert_false(command_blank("\xe0\x80\xa0"));	/* overlong space */
	assert_false(command_blank("\xe2\x80\x8b"));	/* zero width */
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f)	cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(test_exec_shell_form),
		T(test_exec_argv_form),
		T(test_exec_rejects),
		T(test_exec_backend_errors),
		T(test_exec_cancel),
		T(test_command_blank),
#undef T
	};

	log_init(LOG_TO_STDERR, LOG_LEVEL_WARN, "test_manager_exec");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
