/*
 * Peers that lie: a malformed message from apid, dockerd-proxy or the
 * spawner is fatal to managerd.  The test plays all three
 * (manager_fixture.c).
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

#include "assert_fatal.h"
#include "log.h"
#include "manager_fixture.h"

/* --- peers that lie ------------------------------------------------------- */

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

/* The pid and id each answer needs, and none where none can be. */
static uint32_t
lie_state_call(void)
{
	char		 id[SANDBOX_ID_LEN + 1];

	create_ok(0, id, sizeof(id));
	send_id(MSG_SANDBOX_GET, id);
	return expect_proxy_id(MSG_DOCKER_STATE, id);
}

static void
lie_state_running_without_pid(void)
{
	state_reply_raw(lie_state_call(), 1, 1, 0, FIXTURE_CONTAINER);
}

static void
lie_state_stopped_with_pid(void)
{
	state_reply_raw(lie_state_call(), 1, 0, 77, FIXTURE_CONTAINER);
}

static void
lie_state_short_container(void)
{
	state_reply_raw(lie_state_call(), 1, 1, 77, "0123456789ab");
}

static void
lie_state_gone_with_container(void)
{
	state_reply_raw(lie_state_call(), 0, 0, 0, FIXTURE_CONTAINER);
}

static void
lie_state_pid_too_big(void)
{
	state_reply_raw(lie_state_call(), 1, 1, 0x80000000u,
	    FIXTURE_CONTAINER);
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

/* apid numbers its requests anew only when it is a new apid. */
static void
lie_request_id_reused(void)
{
	send_create_ttl(0);
	next_apid_id--;
	send_create_ttl(0);
}

static void
lie_ready_twice(void)
{
	from_apid(MSG_READY, -1, NULL);
}

/* spawner -> managerd (children.c). */
static void
from_spawner(uint32_t type, int fd, uint32_t child, uint32_t pid,
    int status)
{
	struct imsg	 imsg;
	struct msgw	 w;

	env->spawner_peer.name = "spawner";
	msgw_init(&w);
	msgw_u32(&w, child);
	msgw_u32(&w, pid);
	if (status != -1)
		msgw_u32(&w, (uint32_t)status);
	fake_imsg(&imsg, type, 0, fd, &w);
	dispatch_spawner(&env->spawner_peer, &imsg);
	imsg_free(&imsg);
}

static void
lie_spawner_start_unasked(void)
{
	from_spawner(MSG_SPAWN_STARTED, dup(0), CHILD_APID, 4242, -1);
}

static void
lie_spawner_start_without_channel(void)
{
	env->child[CHILD_PROXY].state = CHILD_STARTING;
	from_spawner(MSG_SPAWN_STARTED, -1, CHILD_PROXY, 4242, -1);
}

static void
lie_spawner_exit_of_a_stranger(void)
{
	from_spawner(MSG_SPAWN_EXIT, -1, CHILD_PROXY, 4242, 0);
}

static void
lie_spawner_no_such_child(void)
{
	from_spawner(MSG_SPAWN_EXIT, -1, CHILD_MAX, 4242, 0);
}

static void
lie_spawner_exit_with_descriptor(void)
{
	from_spawner(MSG_SPAWN_EXIT, dup(0), CHILD_PROXY, 4242, 0);
}

static void
lie_spawner_wrong_type(void)
{
	from_spawner(MSG_SPAWN_START, -1, CHILD_PROXY, 0, -1);
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
	assert_fatal(lie_state_running_without_pid,
	    "bad DOCKER_STATE_RESULT message from "
	    "dockerd-proxy: malformed state");
	assert_fatal(lie_state_stopped_with_pid,
	    "bad DOCKER_STATE_RESULT message from "
	    "dockerd-proxy: malformed state");
	assert_fatal(lie_state_short_container,
	    "bad DOCKER_STATE_RESULT message from "
	    "dockerd-proxy: malformed state");
	assert_fatal(lie_state_gone_with_container,
	    "bad DOCKER_STATE_RESULT message from "
	    "dockerd-proxy: malformed state");
	assert_fatal(lie_state_pid_too_big,
	    "bad DOCKER_STATE_RESULT message from "
	    "dockerd-proxy: malformed state");
	assert_fatal(lie_proxy_undo_with_payload,
	    "bad DOCKER_DONE message from dockerd-proxy: unexpected payload");
	assert_fatal(lie_request_id_reused,
	    "bad SANDBOX_CREATE message from apid: a request id already in "
	    "use");
	assert_fatal(lie_ready_twice,
	    "bad READY message from apid: a second READY");
	assert_fatal(lie_spawner_start_unasked,
	    "bad SPAWN_STARTED message from spawner: a start nobody asked "
	    "for");
	assert_fatal(lie_spawner_start_without_channel,
	    "bad SPAWN_STARTED message from spawner: malformed start");
	assert_fatal(lie_spawner_exit_of_a_stranger,
	    "bad SPAWN_EXIT message from spawner: an exit of no child of "
	    "ours");
	assert_fatal(lie_spawner_no_such_child,
	    "bad SPAWN_EXIT message from spawner: no such child");
	assert_fatal(lie_spawner_exit_with_descriptor,
	    "bad SPAWN_EXIT message from spawner: unexpected descriptor");
	assert_fatal(lie_spawner_wrong_type,
	    "bad SPAWN_START message from spawner: not a message the "
	    "spawner sends");
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
