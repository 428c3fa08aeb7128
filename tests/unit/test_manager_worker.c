/*
 * managerd and the archive worker (dispatch_worker.c): the channel
 * between apid and the worker is a new socketpair whenever one of the two
 * comes up, each end handed to its process once that one is ready (an
 * end for a process still down waits, and is dropped when the other
 * dies); the worker may say READY and nothing else.
 */
#include <sys/socket.h>

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "assert_fatal.h"
#include "manager_fixture.h"

/* The next message to id is its channel end: return the descriptor. */
static int
channel_end(enum child_id id)
{
	struct imsg	 imsg;
	uint32_t	 type;
	int		 fd;

	type = id == CHILD_APID ? MSG_APID_WORKER_CHANNEL :
	    MSG_WORKER_APID_CHANNEL;
	assert_int_equal(to_child(id, &imsg), 1);
	if (imsg.hdr.type != type)
		fail_msg("%s got %s", child_kinds[id].name,
		    msg_type_name(imsg.hdr.type));
	assert_int_equal(imsg.len, 0);
	assert_true((fd = imsg_take_fd(&imsg)) != -1);
	imsg_free(&imsg);
	return fd;
}

static void
nothing_for(enum child_id id)
{
	struct imsg	 imsg;

	if (to_child(id, &imsg) == 1)
		fail_msg("%s got %s", child_kinds[id].name,
		    msg_type_name(imsg.hdr.type));
}

/* The two ends are one channel: what goes in one comes out the other. */
static void
connected(int a, int w)
{
	char	 c;

	assert_int_equal(write(a, "j", 1), 1);
	assert_int_equal(read(w, &c, 1), 1);
	assert_int_equal(c, 'j');
	assert_int_equal(write(w, "d", 1), 1);
	assert_int_equal(read(a, &c, 1), 1);
	assert_int_equal(c, 'd');
	close(a);
	close(w);
}

static void
test_restarts_make_a_new_pair(void **state)
{
	int	 a, w;

	/* apid is back: both get an end of a new channel. */
	child_down(CHILD_APID);
	child_up_again(CHILD_APID);
	a = channel_end(CHILD_APID);
	w = channel_end(CHILD_WORKER);
	connected(a, w);
	/* The worker is back: the same. */
	child_down(CHILD_WORKER);
	child_up_again(CHILD_WORKER);
	w = channel_end(CHILD_WORKER);
	a = channel_end(CHILD_APID);
	connected(a, w);
}

/* An end for a process that is still starting waits for its READY. */
static void
test_an_end_waits(void **state)
{
	int	 a, w;

	child_down(CHILD_WORKER);
	child_down(CHILD_APID);
	child_up_again(CHILD_APID);
	a = channel_end(CHILD_APID);
	nothing_for(CHILD_WORKER);
	child_up_again(CHILD_WORKER);
	w = channel_end(CHILD_WORKER);
	nothing_for(CHILD_APID);
	connected(a, w);

	/* The waiting end goes when its peer dies: the next pair is new. */
	child_down(CHILD_WORKER);
	child_down(CHILD_APID);
	child_up_again(CHILD_APID);
	close(channel_end(CHILD_APID));
	child_down(CHILD_APID);
	child_up_again(CHILD_WORKER);
	w = channel_end(CHILD_WORKER);
	nothing_for(CHILD_APID);
	child_up_again(CHILD_APID);
	a = channel_end(CHILD_APID);
	nothing_for(CHILD_WORKER);
	connected(a, w);
}

static void
worker_says(uint32_t type)
{
	struct imsg	 imsg;

	fake_imsg(&imsg, type, 0, -1, NULL);
	dispatch_worker(&env->worker_peer, &imsg);
}

static void
lie_job(void)
{
	worker_says(MSG_ARCHIVE_DONE);
}

static void
lie_second_ready(void)
{
	worker_says(MSG_READY);
}

static void
test_worker_lies(void **state)
{
	assert_fatal(lie_job, "bad ARCHIVE_DONE message from archive-worker: "
	    "not for managerd");
	assert_fatal(lie_second_ready, "bad READY message from "
	    "archive-worker: a second READY");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_restarts_make_a_new_pair,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_an_end_waits, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_worker_lies, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
