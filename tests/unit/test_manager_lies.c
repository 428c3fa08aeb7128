/*
 * Peers that lie: a malformed message from apid or dockerd-proxy is fatal
 * to managerd.  The test plays both (manager_fixture.c).
 */
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "log.h"
#include "manager_fixture.h"

/* --- peers that lie ------------------------------------------------------- */

/*
 * Run f in a child: a malformed message must be fatal there.  Exit status 1
 * alone proves nothing, for a failed cmocka assertion in the child exits 1
 * as well: the child's last words must be managerd's fatal log line,
 * peer_bad_message()'s "bad TYPE message from PEER: why".
 */
static void
assert_fatal(void (*f)(void), const char *fatal)
{
	char	 out[8192], want[256];
	size_t	 got = 0;
	ssize_t	 n;
	pid_t	 pid;
	int	 fds[2], status;

	assert_int_equal(pipe(fds), 0);
	assert_true((pid = fork()) != -1);
	if (pid == 0) {
		/* The child's last words (and cmocka's, if any) go to us. */
		close(fds[0]);
		dup2(fds[1], STDOUT_FILENO);
		dup2(fds[1], STDERR_FILENO);
		close(fds[1]);
		f();
		_exit(0);
	}
	close(fds[1]);
	/* Read to the end, keeping what fits, so that the child may exit. */
	for (;;) {
		if (got < sizeof(out) - 1)
			n = read(fds[0], out + got, sizeof(out) - 1 - got);
		else
			n = read(fds[0], want, sizeof(want));
		if (n == -1 && errno == EINTR)
			continue;
		assert_true(n != -1);
		if (n == 0)
			break;
		if (got < sizeof(out) - 1)
			got += (size_t)n;
	}
	out[got] = '\0';
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	/* log.c's fatalx(), as the log line ends. */
	(void)snprintf(want, sizeof(want),
	    " CRITICAL test_manager_lies: %s\n", fatal);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 1 ||
	    strstr(out, want) == NULL)
		fail_msg("expected managerd's \"%s\" and exit status 1; the "
		    "child (wait status %#x) said:\n%s", fatal, status, out);
}

static void
lie_create_trailing_byte(void)
{
	struct create_request	 c;
	struct msgw		 w;

	create_request_init(&c);
	msgw_init(&w);
	msg_put_create_request(&w, &c);
	msgw_u8(&w, 0);
	from_apid(MSG_SANDBOX_CREATE, -1, &w);
}

static void
lie_get_without_id(void)
{
	from_apid(MSG_SANDBOX_GET, -1, NULL);
}

static void
lie_exec_without_pipe(void)
{
	struct exec_request	 e;
	struct msgw		 w;

	exec_request_init(&e, "sb_0123456789abcdef");
	exec_set_shell(&e, "true");
	msgw_init(&w);
	msg_put_exec_request(&w, &e);
	exec_request_free(&e);
	from_apid(MSG_EXEC_START, -1, &w);
}

static void
lie_list_with_descriptor(void)
{
	from_apid(MSG_SANDBOX_LIST, dup(0), NULL);
}

static void
lie_proxy_reply_to_nothing(void)
{
	from_proxy(MSG_DOCKER_DONE, 4242, NULL);
}

static void
lie_proxy_wrong_type(void)
{
	uint32_t	 call;

	send_create_ttl(0);
	call = expect_create(NULL);
	from_proxy(MSG_DOCKER_STATE_RESULT, call, NULL);
}

static void
lie_proxy_started_twice(void)
{
	char			 id[SANDBOX_ID_LEN + 1];
	struct exec_request	 e;
	struct exec_sent	 x;

	create_ok(0, id, sizeof(id));
	exec_request_init(&e, id);
	exec_set_shell(&e, "true");
	exec_sent(&e, &x);
	from_proxy(MSG_DOCKER_EXEC_STARTED, x.call, NULL);
	from_proxy(MSG_DOCKER_EXEC_STARTED, x.call, NULL);
}

static void
lie_proxy_bad_state(void)
{
	char		 id[SANDBOX_ID_LEN + 1];
	uint32_t	 call;

	create_ok(0, id, sizeof(id));
	send_id(MSG_SANDBOX_GET, id);
	call = expect_proxy_id(MSG_DOCKER_STATE, id);
	state_reply(call, 0, 1);	/* running without a container */
}

/* A create that could not be recorded is undone: a DONE with a payload. */
static void
lie_proxy_undo_with_payload(void)
{
	struct msgw	 w;
	uint32_t	 call;

	/* No data directory: the record cannot be written. */
	close(env->datadir_fd);
	env->datadir_fd = -1;
	send_create_ttl(0);
	call = expect_create(NULL);
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	call = expect_proxy(MSG_DOCKER_DESTROY, NULL);
	msgw_init(&w);
	msgw_u8(&w, 0);
	from_proxy(MSG_DOCKER_DONE, call, &w);
}

static void
test_lies_are_fatal(void **state)
{
	assert_fatal(lie_create_trailing_byte,
	    "bad SANDBOX_CREATE message from apid: malformed create request");
	assert_fatal(lie_get_without_id,
	    "bad SANDBOX_GET message from apid: malformed sandbox id");
	assert_fatal(lie_exec_without_pipe,
	    "bad EXEC_START message from apid: no output pipe");
	assert_fatal(lie_list_with_descriptor,
	    "bad SANDBOX_LIST message from apid: unexpected descriptor");
	assert_fatal(lie_proxy_reply_to_nothing,
	    "bad DOCKER_DONE message from "
	    "dockerd-proxy: reply to no pending call");
	assert_fatal(lie_proxy_wrong_type,
	    "bad DOCKER_STATE_RESULT message from "
	    "dockerd-proxy: wrong reply type");
	assert_fatal(lie_proxy_started_twice,
	    "bad DOCKER_EXEC_STARTED message from "
	    "dockerd-proxy: unexpected start");
	assert_fatal(lie_proxy_bad_state,
	    "bad DOCKER_STATE_RESULT message from "
	    "dockerd-proxy: malformed state");
	assert_fatal(lie_proxy_undo_with_payload,
	    "bad DOCKER_DONE message from dockerd-proxy: unexpected payload");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f)	cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(test_lies_are_fatal),
#undef T
	};

	log_init(LOG_TO_STDERR, LOG_LEVEL_WARN, "test_manager_lies");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
