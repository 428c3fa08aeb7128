/*
 * Peers that lie: a malformed message from apid or dockerd-proxy is fatal
 * to managerd.  The test plays both (manager_fixture.c).
 */
#include <sys/wait.h>

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include "log.h"
#include "manager_fixture.h"

/* --- peers that lie ------------------------------------------------------- */

/* Run f in a child: a malformed message must be fatal there. */
static void
assert_fatal(void (*f)(void))
{
	pid_t	 pid;
	int	 status;

	assert_true((pid = fork()) != -1);
	if (pid == 0) {
		/* The child's last words are expected: keep them quiet. */
		dup2(open("/dev/null", O_WRONLY), STDERR_FILENO);
		f();
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 1);
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
	assert_fatal(lie_create_trailing_byte);
	assert_fatal(lie_get_without_id);
	assert_fatal(lie_exec_without_pipe);
	assert_fatal(lie_list_with_descriptor);
	assert_fatal(lie_proxy_reply_to_nothing);
	assert_fatal(lie_proxy_wrong_type);
	assert_fatal(lie_proxy_started_twice);
	assert_fatal(lie_proxy_bad_state);
	assert_fatal(lie_proxy_undo_with_payload);
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
