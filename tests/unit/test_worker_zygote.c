/*
 * The archive worker's zygote, run in a forked process under its real
 * filter with the test playing apid and managerd on socketpairs: jobs go
 * in as ARCHIVE_FD and ARCHIVE_JOB and come back as ARCHIVE_DONE; a job
 * whose process is killed by SIGSYS (a forbidden call, made through a
 * hook that only test builds have), SIGSEGV or SIGKILL is a failed job
 * that says so, and the zygote serves the next one; a lying apid kills
 * the zygote; an apid that goes away leaves its running jobs unheard.
 */
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
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
#include <event2/event.h>

#include "log.h"
#include "memcheck.h"
#include "worker_fixture.h"

#define HOOK_SIGSYS	31	/* CHECK jobs with this max_bytes misbehave */
#define HOOK_SIGSEGV	11
#define HOOK_SILENT	1	/* exits 0 without a result */
#define HOOK_EXIT3	3	/* exits 3 */

struct zygote_run {
	pid_t		 pid;
	struct imsgbuf	 apid;		/* our end, as apid */
	struct imsgbuf	 parent;	/* our end, as managerd */
};

/*
 * In a job's process, after its filter: what the test asked for.  Not
 * instrumented in a sanitizer build, so that the store through NULL is
 * the plain SIGSEGV a bug in a job would be, not a sanitizer's report.
 */
static volatile int *volatile nowhere;

static void __attribute__((no_sanitize_address, no_sanitize_undefined))
misbehave(const struct archive_job *j)
{
	if (j->kind != ARCHIVE_JOB_CHECK)
		return;
	if (j->max_bytes == HOOK_SIGSYS)
		(void)syscall(SYS_socket, AF_INET, SOCK_STREAM, 0);
	if (j->max_bytes == HOOK_SIGSEGV) {
		MEMCHECK_EXPECT_CRASH();
		*nowhere = 1;
	}
	if (j->max_bytes == HOOK_SILENT)
		_exit(0);
	if (j->max_bytes == HOOK_EXIT3)
		_exit(3);
}

static void
managerd_gone(struct peer *p)
{
	_exit(0);
}

static __attribute__((noreturn)) void
zygote_child(int apid_sock, int parent_sock)
{
	static struct peer	 parent;
	struct event_config	*cfg;
	struct event_base	*base;
	sigset_t		 chld;

	/* As managerd's spawner starts it: SIGCHLD blocked. */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	(void)sigprocmask(SIG_BLOCK, &chld, NULL);
	alarm(60);
	log_init(LOG_TO_STDERR, LOG_LEVEL_WARN, "archive-worker");
	signal(SIGPIPE, SIG_IGN);
	/* cmocka's handlers are the test's, not the worker's. */
	signal(SIGSEGV, SIG_DFL);
	signal(SIGSYS, SIG_DFL);
	if ((cfg = event_config_new()) == NULL)
		_exit(2);
	event_config_avoid_method(cfg, "select");
	event_config_avoid_method(cfg, "poll");
	if ((base = event_base_new_with_config(cfg)) == NULL)
		_exit(2);
	event_config_free(cfg);
	zygote_init(base, SECCOMP_MODE_KILL);
	if (worker_seccomp_load(SECCOMP_MODE_KILL) == -1)
		_exit(3);
	peer_init(&parent, base, parent_sock, "managerd",
	    zygote_dispatch_parent, managerd_gone, NULL);
	zygote_channel(apid_sock);
	event_base_dispatch(base);
	_exit(4);
}

static void
zygote_start(struct zygote_run *z)
{
	int	 a[2], p[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, a),
	    0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p),
	    0);
	assert_int_equal(fcntl(a[1], F_SETFL, O_NONBLOCK), 0);
	assert_int_equal(fcntl(p[1], F_SETFL, O_NONBLOCK), 0);
	job_test_hook = misbehave;
	fflush(NULL);
	z->pid = fork();
	assert_true(z->pid != -1);
	if (z->pid == 0) {
		close(a[0]);
		close(p[0]);
		zygote_child(a[1], p[1]);
	}
	close(a[1]);
	close(p[1]);
	imsgbuf_init(&z->apid, a[0]);
	imsgbuf_init(&z->parent, p[0]);
}

/* Close our ends; the zygote leaves at managerd's EOF.  Its status. */
static int
zygote_stop(struct zygote_run *z)
{
	int	 status;

	imsgbuf_clear(&z->apid);
	imsgbuf_clear(&z->parent);
	close(z->apid.sock);
	close(z->parent.sock);
	assert_int_equal(waitpid(z->pid, &status, 0), z->pid);
	return status;
}

static void
compose(struct imsgbuf *b, uint32_t type, uint32_t id, int fd,
    const void *data, size_t len)
{
	assert_int_equal(imsg_compose(b, type, id, fd, data, len), 0);
	assert_int_equal(imsgbuf_flush(b), 0);
}

/* A job: its descriptors (taken) and the job. */
static void
send_job(struct zygote_run *z, uint32_t id, const struct archive_job *j,
    int fd0, int fd1)
{
	struct msgw	 w;

	compose(&z->apid, MSG_ARCHIVE_FD, id, fd0, NULL, 0);
	if (fd1 != -1)
		compose(&z->apid, MSG_ARCHIVE_FD, id, fd1, NULL, 0);
	msgw_init(&w);
	msg_put_archive_job(&w, j);
	compose(&z->apid, MSG_ARCHIVE_JOB, id, -1, w.buf, w.len);
}

/* The next ARCHIVE_DONE; returns its id. */
static uint32_t
recv_done(struct zygote_run *z, struct tar_result *res)
{
	struct imsg	 imsg;
	uint32_t	 id;

	assert_int_equal(peer_recv_blocking(&z->apid, &imsg), 1);
	assert_int_equal(imsg.hdr.type, MSG_ARCHIVE_DONE);
	assert_int_equal(imsg.fd, -1);
	assert_int_equal(msg_get_tar_result(&imsg, res), 0);
	id = imsg.hdr.peerid;
	imsg_free(&imsg);
	return id;
}

/* Nothing from the zygote within ms. */
static void
expect_silence(struct zygote_run *z, int ms)
{
	struct pollfd	 pfd = { z->apid.sock, POLLIN, 0 };

	assert_int_equal(poll(&pfd, 1, ms), 0);
}

static int
small_tar(const char *name, const char *data)
{
	struct tb	 t;
	int		 fd;

	tb_init(&t);
	tb_header(&t, name, '0', strlen(data), NULL);
	tb_data(&t, data, strlen(data));
	tb_end(&t);
	fd = tb_file(&t);
	tb_free(&t);
	return fd;
}

/* The same on a pipe, as Docker's tar comes to a job. */
static int
small_tar_pipe(const char *name, const char *data)
{
	struct tb	 t;
	int		 fd;

	tb_init(&t);
	tb_header(&t, name, '0', strlen(data), NULL);
	tb_data(&t, data, strlen(data));
	tb_end(&t);
	fd = feed_pipe(t.buf, t.len);
	tb_free(&t);
	return fd;
}

static void
expect_exit_zero_status(int status)
{
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("the zygote ended with status %#x", status);
}

static void
check_job(struct archive_job *j, uint64_t max_bytes)
{
	memset(j, 0, sizeof(*j));
	j->kind = ARCHIVE_JOB_CHECK;
	j->max_bytes = max_bytes;
}

/* A CHECK that passes, on job id: the zygote is alive and well. */
static void
expect_serving(struct zygote_run *z, uint32_t id)
{
	struct archive_job	 j;
	struct tar_result	 res;

	check_job(&j, 0);
	send_job(z, id, &j, small_tar("f", "ok"), -1);
	assert_int_equal(recv_done(z, &res), id);
	assert_int_equal(res.errnum, 0);
	assert_null(res.message);
	tar_result_free(&res);
}

static void
test_jobs(void **state)
{
	struct zygote_run	 z;
	struct archive_job	 j;
	struct tar_result	 res;
	char			 buf[16];
	int			 out, seen[64], i;
	uint32_t		 id;

	zygote_start(&z);
	/* A download: Docker's tar on a pipe, the file's bytes out. */
	memset(&j, 0, sizeof(j));
	j.kind = ARCHIVE_JOB_FIRST_FILE;
	j.max_bytes = 100;
	out = tmpfd();
	send_job(&z, 7, &j, small_tar_pipe("caf\xc3\xa9", "hello"), dup(out));
	assert_int_equal(recv_done(&z, &res), 7);
	assert_int_equal(res.errnum, 0);
	assert_true(res.bytes == 5);
	rewind_fd(out);
	assert_int_equal(read(out, buf, sizeof(buf)), 5);
	assert_memory_equal(buf, "hello", 5);
	close(out);

	/* Many at once, each answered once. */
	memset(seen, 0, sizeof(seen));
	for (i = 0; i < 64; i++) {
		check_job(&j, 0);
		send_job(&z, 100 + (uint32_t)i, &j, small_tar("f", "x"), -1);
	}
	for (i = 0; i < 64; i++) {
		id = recv_done(&z, &res);
		assert_true(id >= 100 && id < 164);
		assert_int_equal(res.errnum, 0);
		seen[id - 100]++;
	}
	for (i = 0; i < 64; i++)
		assert_int_equal(seen[i], 1);
	/* A failing job is answered with why. */
	check_job(&j, 0);
	send_job(&z, 9, &j, small_tar("../x", "x"), -1);
	assert_int_equal(recv_done(&z, &res), 9);
	assert_int_equal(res.errnum, EINVAL);
	assert_string_equal(res.message, "unsafe member name: ../x");
	tar_result_free(&res);
	expect_exit_zero_status(zygote_stop(&z));
}

static void
test_job_dies(void **state)
{
	struct zygote_run	 z;
	struct archive_job	 j;
	struct tar_result	 res;

	zygote_start(&z);
	/* Under valgrind no filter is loaded (memcheck.c): nothing kills. */
	if (!under_memcheck()) {
		check_job(&j, HOOK_SIGSYS);
		send_job(&z, 1, &j, small_tar("f", "x"), -1);
		assert_int_equal(recv_done(&z, &res), 1);
		assert_int_equal(res.errnum, EPIPE);
		assert_string_equal(res.message, "the archive worker died: "
		    "killed by signal 31 (SIGSYS: a forbidden system call)");
		tar_result_free(&res);
	}
	expect_serving(&z, 2);

	check_job(&j, HOOK_SIGSEGV);
	send_job(&z, 3, &j, small_tar("f", "x"), -1);
	assert_int_equal(recv_done(&z, &res), 3);
	assert_int_equal(res.errnum, EPIPE);
	assert_string_equal(res.message, "the archive worker died: killed by "
	    "signal 11 (SIGSEGV)");
	tar_result_free(&res);
	expect_serving(&z, 4);

	check_job(&j, HOOK_SILENT);
	send_job(&z, 5, &j, small_tar("f", "x"), -1);
	assert_int_equal(recv_done(&z, &res), 5);
	assert_int_equal(res.errnum, EPIPE);
	assert_string_equal(res.message, "the archive worker's job sent no "
	    "valid result");
	tar_result_free(&res);
	check_job(&j, HOOK_EXIT3);
	send_job(&z, 6, &j, small_tar("f", "x"), -1);
	assert_int_equal(recv_done(&z, &res), 6);
	assert_int_equal(res.errnum, EPIPE);
	assert_string_equal(res.message, "the archive worker died: exited "
	    "with status 3");
	tar_result_free(&res);
	expect_serving(&z, 7);
	expect_exit_zero_status(zygote_stop(&z));
}

/* The pids of the zygote's children. */
static size_t
zygote_children(pid_t zygote, pid_t *pids, size_t max)
{
	char	 path[64], buf[1024], *p, *end;
	FILE	*f;
	size_t	 n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children",
	    (int)zygote, (int)zygote);
	assert_non_null(f = fopen(path, "r"));
	if (fgets(buf, sizeof(buf), f) == NULL)
		buf[0] = '\0';
	fclose(f);
	for (p = buf; n < max; p = end) {
		pids[n] = (pid_t)strtol(p, &end, 10);
		if (end == p)
			break;
		n++;
	}
	return n;
}

/* A job whose process someone kills: that job fails, nothing else. */
static void
test_job_killed(void **state)
{
	struct zygote_run	 z;
	struct archive_job	 j;
	struct tar_result	 res;
	pid_t			 kids[4];
	int			 p[2], tries;

	zygote_start(&z);
	assert_int_equal(pipe(p), 0);
	check_job(&j, 0);
	send_job(&z, 5, &j, p[0], -1);	/* reads a pipe nobody fills */
	for (tries = 0; zygote_children(z.pid, kids, 4) != 1; tries++) {
		assert_true(tries < 500);
		usleep(10000);
	}
	assert_int_equal(kill(kids[0], SIGKILL), 0);
	assert_int_equal(recv_done(&z, &res), 5);
	assert_int_equal(res.errnum, EPIPE);
	assert_string_equal(res.message, "the archive worker died: killed by "
	    "signal 9 (SIGKILL)");
	tar_result_free(&res);
	close(p[1]);
	expect_serving(&z, 6);
	expect_exit_zero_status(zygote_stop(&z));
}

/*
 * apid goes away with a job running: the job ends unheard, and a new
 * channel from managerd serves at once, even a job of the same id.
 */
static void
test_apid_goes_away(void **state)
{
	struct zygote_run	 z;
	struct archive_job	 j;
	int			 p[2], a[2];

	zygote_start(&z);
	assert_int_equal(pipe(p), 0);
	check_job(&j, 0);
	send_job(&z, 1, &j, p[0], -1);
	/* A job that has its descriptors but not its ARCHIVE_JOB yet. */
	compose(&z.apid, MSG_ARCHIVE_FD, 2, small_tar("f", "x"), NULL, 0);
	imsgbuf_clear(&z.apid);
	close(z.apid.sock);

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, a),
	    0);
	assert_int_equal(fcntl(a[1], F_SETFL, O_NONBLOCK), 0);
	compose(&z.parent, MSG_WORKER_APID_CHANNEL, 0, a[1], NULL, 0);
	imsgbuf_init(&z.apid, a[0]);
	expect_serving(&z, 1);
	expect_serving(&z, 2);
	/* The orphan ends now, and nobody hears of it. */
	close(p[1]);
	expect_silence(&z, 300);
	expect_serving(&z, 3);
	expect_exit_zero_status(zygote_stop(&z));
}

/* Each lie from apid, to a fresh zygote: it dies (status 1). */
static void
lie(void (*tell)(struct zygote_run *), const char *what)
{
	struct zygote_run	 z;
	int			 status;
	struct pollfd		 pfd;
	char			 c;

	zygote_start(&z);
	tell(&z);
	/* Its death closes the channel: wait for that before ours go. */
	pfd.fd = z.apid.sock;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, 10000) != 1 || read(z.apid.sock, &c, 1) != 0)
		fail_msg("%s: the zygote lives on", what);
	status = zygote_stop(&z);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 1)
		fail_msg("%s: the zygote did not die of it (status %#x)", what,
		    status);
}

static void
lie_fd_payload(struct zygote_run *z)
{
	compose(&z->apid, MSG_ARCHIVE_FD, 1, small_tar("f", "x"), "x", 1);
}

static void
lie_fd_without_fd(struct zygote_run *z)
{
	compose(&z->apid, MSG_ARCHIVE_FD, 1, -1, NULL, 0);
}

static void
lie_job_without_fds(struct zygote_run *z)
{
	struct archive_job	 j;
	struct msgw		 w;

	check_job(&j, 0);
	msgw_init(&w);
	msg_put_archive_job(&w, &j);
	compose(&z->apid, MSG_ARCHIVE_JOB, 1, -1, w.buf, w.len);
}

static void
lie_too_few_fds(struct zygote_run *z)
{
	struct archive_job	 j;
	struct msgw		 w;

	memset(&j, 0, sizeof(j));
	j.kind = ARCHIVE_JOB_FIRST_FILE;
	compose(&z->apid, MSG_ARCHIVE_FD, 1, small_tar("f", "x"), NULL, 0);
	msgw_init(&w);
	msg_put_archive_job(&w, &j);
	compose(&z->apid, MSG_ARCHIVE_JOB, 1, -1, w.buf, w.len);
}

static void
lie_three_fds(struct zygote_run *z)
{
	int	 i;

	for (i = 0; i < 3; i++)
		compose(&z->apid, MSG_ARCHIVE_FD, 1, small_tar("f", "x"),
		    NULL, 0);
}

static void
lie_fd_for_running_job(struct zygote_run *z)
{
	struct archive_job	 j;
	int			 p[2];

	assert_int_equal(pipe(p), 0);
	check_job(&j, 0);
	send_job(z, 1, &j, p[0], -1);
	compose(&z->apid, MSG_ARCHIVE_FD, 1, p[1], NULL, 0);
}

static void
lie_malformed_job(struct zygote_run *z)
{
	compose(&z->apid, MSG_ARCHIVE_FD, 1, small_tar("f", "x"), NULL, 0);
	compose(&z->apid, MSG_ARCHIVE_JOB, 1, -1, "\x03\0\0", 3);
}

static void
lie_wrong_type(struct zygote_run *z)
{
	struct msgw		 w;
	struct tar_result	 res = { 0, 0, NULL };

	msgw_init(&w);
	msg_put_tar_result(&w, &res);
	compose(&z->apid, MSG_ARCHIVE_DONE, 1, -1, w.buf, w.len);
}

static void
lie_too_many_jobs(struct zygote_run *z)
{
	uint32_t	 i;
	int		 fd = small_tar("f", "x");

	for (i = 0; i <= ARCHIVE_JOBS_MAX; i++)
		compose(&z->apid, MSG_ARCHIVE_FD, i, dup(fd), NULL, 0);
	close(fd);
}

static void
lie_managerd_wrong_type(struct zygote_run *z)
{
	compose(&z->parent, MSG_ARCHIVE_FD, 0, small_tar("f", "x"), NULL, 0);
}

static void
lie_channel_without_fd(struct zygote_run *z)
{
	compose(&z->parent, MSG_WORKER_APID_CHANNEL, 0, -1, NULL, 0);
}

static void
test_lies_are_fatal(void **state)
{
	lie(lie_fd_payload, "ARCHIVE_FD with a payload");
	lie(lie_fd_without_fd, "ARCHIVE_FD without a descriptor");
	lie(lie_job_without_fds, "ARCHIVE_JOB without descriptors");
	lie(lie_too_few_fds, "FIRST_FILE with one descriptor");
	lie(lie_three_fds, "three descriptors");
	lie(lie_fd_for_running_job, "a descriptor for a running job");
	lie(lie_malformed_job, "a malformed ARCHIVE_JOB");
	lie(lie_wrong_type, "ARCHIVE_DONE to the worker");
	lie(lie_too_many_jobs, "ARCHIVE_JOBS_MAX + 1 jobs");
	lie(lie_managerd_wrong_type, "managerd sends a job message");
	lie(lie_channel_without_fd, "a channel without a descriptor");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jobs),
		cmocka_unit_test(test_job_dies),
		cmocka_unit_test(test_job_killed),
		cmocka_unit_test(test_apid_goes_away),
		cmocka_unit_test(test_lies_are_fatal),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
