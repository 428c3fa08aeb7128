/*
 * managerd's restart reconciliation (REFERENCE-TESTS.md H 58): records
 * against what Docker still has, with the test playing dockerd-proxy
 * (manager_fixture.c).
 */
#include <sys/stat.h>

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "log.h"
#include "manager_fixture.h"

/* --- H 58: restart reconciliation ----------------------------------------- */

static int		 recover_result;

static void
recover_done(int ok)
{
	recover_result = ok;
}

static void
write_record(const char *id, double created, double expires)
{
	struct sandbox_record	 rec;

	memset(&rec, 0, sizeof(rec));
	strlcpy(rec.id, id, sizeof(rec.id));
	rec.spec.image = strdup("python:3.12-slim");
	rec.spec.cpus = 1.0;
	rec.spec.memory_mb = 512;
	rec.spec.pids_limit = 256;
	rec.spec.read_only_rootfs = 1;
	rec.created_at = created;
	rec.expires_at = expires;
	assert_int_equal(store_sandbox_write(env->datadir_fd, &rec), 0);
	sandbox_record_free(&rec);
}

static void
test_recover(void **state)
{
	static const char	 kept[] = "sb_1111111111111111";
	static const char	 stopped[] = "sb_2222222222222222";
	static const char	 vanished[] = "sb_3333333333333333";
	static const char	 orphan[] = "sb_4444444444444444";
	struct sandbox		*sb;
	uint32_t		 call, d1, d2;
	int			 fd;

	reaper_stop();		/* managerd starts it after reconciliation */
	write_record(kept, 1699999000.25, 1700000123.456789);
	write_record(stopped, 1699999001, 1700000500);
	write_record(vanished, 1699999002, 1700000500);
	fd = openat(env->datadir_fd, "snapshots/snap_0123456789abcdef.tmp",
	    O_CREAT | O_WRONLY, 0600);
	assert_true(fd != -1);
	close(fd);

	recover_result = -1;
	recover_start(recover_done);
	call = expect_proxy(MSG_DOCKER_LIST, NULL);
	list_item(call, kept, 1, 1);
	list_item(call, stopped, 1, 0);
	list_item(call, orphan, 0, 0);		/* a volume alone */
	list_item(call, kept, 0, 0);		/* its volume */
	from_proxy(MSG_DOCKER_LIST_END, call, NULL);
	d1 = expect_proxy_id(MSG_DOCKER_DESTROY, stopped);
	d2 = expect_proxy_id(MSG_DOCKER_DESTROY, orphan);
	no_proxy_message();
	assert_int_equal(recover_result, -1);	/* not before the destroys */
	from_proxy(MSG_DOCKER_DONE, d1, NULL);
	error_reply(d2, ERR_BACKEND, "volume in use");	/* logged only */
	assert_int_equal(recover_result, 1);

	assert_int_equal(sandbox_count(), 1);
	assert_non_null(sb = sandbox_find(kept));
	assert_true(sb->rec.expires_at == 1700000123.456789);
	assert_true(sb->rec.created_at == 1699999000.25);
	assert_true(record_exists(kept));
	assert_false(record_exists(stopped));
	assert_false(record_exists(vanished));
	assert_int_equal(faccessat(env->datadir_fd,
	    "snapshots/snap_0123456789abcdef.tmp", F_OK, 0), -1);

	/* The kept sandbox is reaped when its old expiry comes. */
	reaper_init(env->base);
	assert_true(reaper_next() == 1700000123.456789);
	no_apid_message();
}

/*
 * A record that cannot be read for now (here a directory by its name) is
 * left in place, and its sandbox is no orphan: Docker keeps it.  A record
 * that cannot be parsed is still dropped, and its sandbox destroyed.
 */
static void
test_recover_unreadable_record(void **state)
{
	static const char	 unread[] = "sb_5555555555555555";
	static const char	 unread_stopped[] = "sb_6666666666666666";
	static const char	 garbled[] = "sb_7777777777777777";
	static const char	 kept[] = "sb_1111111111111111";
	uint32_t		 call, d1;
	int			 fd;

	reaper_stop();
	write_record(kept, 1699999000, 1700000500);
	assert_int_equal(mkdirat(env->datadir_fd,
	    "sandboxes/sb_5555555555555555.json", 0700), 0);
	assert_int_equal(mkdirat(env->datadir_fd,
	    "sandboxes/sb_6666666666666666.json", 0700), 0);
	fd = openat(env->datadir_fd, "sandboxes/sb_7777777777777777.json",
	    O_CREAT | O_WRONLY, 0600);
	assert_true(fd != -1);
	assert_int_equal(write(fd, "{", 1), 1);
	close(fd);

	recover_result = -1;
	recover_start(recover_done);
	call = expect_proxy(MSG_DOCKER_LIST, NULL);
	list_item(call, unread, 1, 1);
	list_item(call, unread_stopped, 1, 0);
	list_item(call, garbled, 1, 1);
	list_item(call, kept, 1, 1);
	from_proxy(MSG_DOCKER_LIST_END, call, NULL);
	d1 = expect_proxy_id(MSG_DOCKER_DESTROY, garbled);
	no_proxy_message();
	from_proxy(MSG_DOCKER_DONE, d1, NULL);
	assert_int_equal(recover_result, 1);

	/* Only the readable record is served; the others stay on disk. */
	assert_int_equal(sandbox_count(), 1);
	assert_non_null(sandbox_find(kept));
	assert_null(sandbox_find(unread));
	assert_int_equal(faccessat(env->datadir_fd,
	    "sandboxes/sb_5555555555555555.json", F_OK, 0), 0);
	assert_int_equal(faccessat(env->datadir_fd,
	    "sandboxes/sb_6666666666666666.json", F_OK, 0), 0);
	assert_false(record_exists(garbled));
	assert_int_equal(unlinkat(env->datadir_fd,
	    "sandboxes/sb_5555555555555555.json", AT_REMOVEDIR), 0);
	assert_int_equal(unlinkat(env->datadir_fd,
	    "sandboxes/sb_6666666666666666.json", AT_REMOVEDIR), 0);
	no_apid_message();
}

static void
test_recover_without_docker(void **state)
{
	uint32_t	 call;

	write_record("sb_1111111111111111", 1, 2);
	recover_result = -1;
	recover_start(recover_done);
	call = expect_proxy(MSG_DOCKER_LIST, NULL);
	error_reply(call, ERR_BACKEND, "Docker is unreachable: refused");
	assert_int_equal(recover_result, 0);
	/* Nothing was touched. */
	assert_true(record_exists("sb_1111111111111111"));
	assert_int_equal(sandbox_count(), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f)	cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(test_recover),
		T(test_recover_unreadable_record),
		T(test_recover_without_docker),
#undef T
	};

	log_init(LOG_TO_STDERR, LOG_LEVEL_WARN, "test_manager_recover");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
