/*
 * apid's tar jobs (apid/tar_job.c) with the test playing the archive
 * worker on a socketpair: what each kind sends (its descriptors, then
 * the job), that apid keeps no copy of a descriptor it sent, that done
 * runs once per job and never inside tar_job_start(), the limit of jobs
 * in flight, a channel that goes or is replaced, no worker at all, a bad
 * spec, and a worker that lies (fatal).
 */
#include <sys/socket.h>
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

#include "apid.h"

static struct event_base	*base;
static struct peer		 managerd;	/* only its name is used */
static struct imsgbuf		 worker;	/* our end, as the worker */

struct done_log {
	int		 calls;
	int32_t		 errnum;
	uint64_t	 bytes;
	char		 message[128];
};

static int	in_start;	/* set while tar_job_start() runs */

static void
job_done(const struct tar_result *res, void *arg)
{
	struct done_log	*d = arg;

	if (in_start)
		fail_msg("done called from inside tar_job_start()");
	d->calls++;
	d->errnum = res->errnum;
	d->bytes = res->bytes;
	snprintf(d->message, sizeof(d->message), "%s", res->message != NULL ?
	    res->message : "");
}

static int
start(const struct tar_job_spec *spec)
{
	int	 rc;

	in_start = 1;
	rc = tar_job_start(spec);
	in_start = 0;
	return rc;
}

/* Let the loop run: queued output goes out, input is dispatched. */
static void
spin(void)
{
	int	 i;

	for (i = 0; i < 20; i++)
		event_base_loop(base, EVLOOP_NONBLOCK);
}

/* A new channel from managerd; our end becomes the worker. */
static void
connect_worker(void)
{
	struct imsg	 imsg;
	int		 sp[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
	    sp), 0);
	assert_int_equal(fcntl(sp[0], F_SETFL, O_NONBLOCK), 0);
	memset(&imsg, 0, sizeof(imsg));
	imsg.hdr.type = MSG_APID_WORKER_CHANNEL;
	imsg.fd = sp[0];
	tar_jobs_channel(&managerd, &imsg);
	imsgbuf_init(&worker, sp[1]);
}

static void
disconnect_worker(void)
{
	imsgbuf_clear(&worker);
	close(worker.sock);
	spin();
}

static void
recv_msg(struct imsg *imsg, uint32_t type)
{
	spin();
	assert_int_equal(peer_recv_blocking(&worker, imsg), 1);
	if (imsg->hdr.type != type)
		fail_msg("the worker got %s, not %s",
		    msg_type_name(imsg->hdr.type), msg_type_name(type));
}

/* Nothing more for the worker right now. */
static void
expect_nothing(void)
{
	struct pollfd	 pfd = { 0, POLLIN, 0 };

	spin();
	pfd.fd = worker.sock;
	assert_int_equal(poll(&pfd, 1, 50), 0);
}

static void
send_done(uint32_t id, int32_t errnum, uint64_t bytes, const char *text)
{
	struct tar_result	 res;
	struct msgw		 w;

	res.errnum = errnum;
	res.bytes = bytes;
	res.message = (char *)(uintptr_t)text;
	msgw_init(&w);
	msg_put_tar_result(&w, &res);
	assert_int_equal(imsg_compose(&worker, MSG_ARCHIVE_DONE, id, -1,
	    w.buf, w.len), 0);
	assert_int_equal(imsgbuf_flush(&worker), 0);
	spin();
}

/* The pipe's write end says EPIPE: nobody holds its read end. */
static void
expect_reader_gone(int wfd)
{
	signal(SIGPIPE, SIG_IGN);
	errno = 0;
	assert_int_equal(write(wfd, "x", 1), -1);
	assert_int_equal(errno, EPIPE);
}

static void
test_first_file_messages(void **state)
{
	struct tar_job_spec	 spec;
	struct archive_job	 aj;
	struct done_log		 d;
	struct imsg		 imsg;
	int			 tar[2], out[2], got_in, got_out;
	uint32_t		 id;
	char			 c;

	connect_worker();
	assert_int_equal(pipe(tar), 0);
	assert_int_equal(pipe(out), 0);
	memset(&spec, 0, sizeof(spec));
	memset(&d, 0, sizeof(d));
	spec.kind = TAR_JOB_FIRST_FILE;
	spec.in_fd = tar[0];
	spec.out_fd = out[1];
	spec.max_bytes = 4242;
	spec.done = job_done;
	spec.arg = &d;
	assert_int_equal(start(&spec), 0);

	recv_msg(&imsg, MSG_ARCHIVE_FD);
	id = imsg.hdr.peerid;
	assert_int_equal(imsg.len, 0);
	got_in = imsg_take_fd(&imsg);
	imsg_free(&imsg);
	recv_msg(&imsg, MSG_ARCHIVE_FD);
	assert_int_equal(imsg.hdr.peerid, id);
	got_out = imsg_take_fd(&imsg);
	imsg_free(&imsg);
	recv_msg(&imsg, MSG_ARCHIVE_JOB);
	assert_int_equal(imsg.hdr.peerid, id);
	assert_int_equal(msg_get_archive_job(&imsg, &aj), 0);
	assert_int_equal(aj.kind, ARCHIVE_JOB_FIRST_FILE);
	assert_true(aj.max_bytes == 4242);
	archive_job_free(&aj);
	imsg_free(&imsg);

	/* They are the job's pipes, in order, and apid kept no copy. */
	assert_int_equal(write(got_out, "y", 1), 1);
	assert_int_equal(read(out[0], &c, 1), 1);
	assert_int_equal(c, 'y');
	close(got_in);
	expect_reader_gone(tar[1]);
	close(got_out);
	assert_int_equal(read(out[0], &c, 1), 0);

	assert_int_equal(d.calls, 0);
	send_done(id, 0, 17, NULL);
	assert_int_equal(d.calls, 1);
	assert_int_equal(d.errnum, 0);
	assert_true(d.bytes == 17);
	close(tar[1]);
	close(out[0]);
	disconnect_worker();
	assert_int_equal(d.calls, 1);
}

static void
test_upload_job(void **state)
{
	struct tar_job_spec	 spec;
	struct archive_job	 aj;
	struct done_log		 d;
	struct imsg		 imsg;
	static struct file_write_ready	 fw;
	char			 name[] = "a/b c/\xe9";
	int			 spool[2], tar[2];
	uint32_t		 id;

	connect_worker();
	assert_int_equal(pipe(spool), 0);
	assert_int_equal(pipe(tar), 0);
	memset(&spec, 0, sizeof(spec));
	memset(&d, 0, sizeof(d));
	memset(&fw, 0, sizeof(fw));
	fw.name = name;
	fw.uid = 1000;
	fw.gid = 1001;
	fw.mode = 0640;
	fw.mtime = 1700000000;
	fw.ndirs = 2;
	fw.dirs[0] = (struct file_write_dir){ 02775, 1600000000, 5 };
	fw.dirs[1] = (struct file_write_dir){ 0700, -1, 999999999 };
	spec.kind = TAR_JOB_UPLOAD;
	spec.fds[0] = spool[0];
	spec.fds[1] = tar[1];
	spec.size = 99;
	spec.upload = &fw;
	spec.done = job_done;
	spec.arg = &d;
	assert_int_equal(start(&spec), 0);
	recv_msg(&imsg, MSG_ARCHIVE_FD);
	id = imsg.hdr.peerid;
	imsg_free(&imsg);
	recv_msg(&imsg, MSG_ARCHIVE_FD);
	imsg_free(&imsg);
	recv_msg(&imsg, MSG_ARCHIVE_JOB);
	assert_int_equal(msg_get_archive_job(&imsg, &aj), 0);
	imsg_free(&imsg);
	assert_int_equal(aj.kind, ARCHIVE_JOB_UPLOAD);
	assert_string_equal(aj.name, name);
	assert_true(aj.size == 99);
	assert_int_equal(aj.uid, 1000);
	assert_int_equal(aj.gid, 1001);
	assert_int_equal(aj.mode, 0640);
	assert_true(aj.mtime == 1700000000);
	/* FILE_WRITE_READY's parents, with the modes and mtimes found. */
	assert_int_equal(aj.ndirs, 2);
	assert_int_equal(aj.dirs[0].mode, 02775);
	assert_true(aj.dirs[0].mtime == 1600000000);
	assert_int_equal(aj.dirs[0].mtime_nsec, 5);
	assert_int_equal(aj.dirs[1].mode, 0700);
	assert_true(aj.dirs[1].mtime == -1);
	assert_int_equal(aj.dirs[1].mtime_nsec, 999999999);
	archive_job_free(&aj);
	send_done(id, EINVAL, 0, "the spool file holds 3 bytes, the upload 99");
	assert_int_equal(d.calls, 1);
	assert_int_equal(d.errnum, EINVAL);
	assert_string_equal(d.message,
	    "the spool file holds 3 bytes, the upload 99");
	close(spool[1]);
	close(tar[0]);

	/* Their count must be the name's parents'. */
	assert_int_equal(pipe(spool), 0);
	assert_int_equal(pipe(tar), 0);
	spec.fds[0] = spool[0];
	spec.fds[1] = tar[1];
	fw.ndirs = 1;
	errno = 0;
	assert_int_equal(start(&spec), -1);
	assert_int_equal(errno, EINVAL);
	close(spool[1]);
	close(tar[0]);
	disconnect_worker();
}

static void
check_spec(struct tar_job_spec *spec, int fd, struct done_log *d)
{
	memset(spec, 0, sizeof(*spec));
	spec->kind = TAR_JOB_CHECK;
	spec->in_fd = fd;
	spec->out_fd = -1;
	spec->done = job_done;
	spec->arg = d;
}

/* ARCHIVE_JOBS_MAX in flight; the next goes when one is done. */
static void
test_jobs_in_flight(void **state)
{
	static struct done_log	 d[ARCHIVE_JOBS_MAX + 10];
	struct tar_job_spec	 spec;
	struct imsg		 imsg;
	uint32_t		 first = 0, id;
	int			 i, fd;

	connect_worker();
	memset(d, 0, sizeof(d));
	for (i = 0; i < ARCHIVE_JOBS_MAX + 10; i++) {
		assert_true((fd = open("/dev/null", O_RDONLY)) != -1);
		check_spec(&spec, fd, &d[i]);
		assert_int_equal(start(&spec), 0);
	}
	for (i = 0; i < 2 * ARCHIVE_JOBS_MAX; i++) {
		recv_msg(&imsg, i % 2 == 0 ? MSG_ARCHIVE_FD : MSG_ARCHIVE_JOB);
		if (i == 0)
			first = imsg.hdr.peerid;
		imsg_free(&imsg);
	}
	expect_nothing();
	send_done(first, 0, 0, NULL);
	assert_int_equal(d[0].calls, 1);
	recv_msg(&imsg, MSG_ARCHIVE_FD);
	id = imsg.hdr.peerid;
	imsg_free(&imsg);
	recv_msg(&imsg, MSG_ARCHIVE_JOB);
	assert_int_equal(imsg.hdr.peerid, id);
	imsg_free(&imsg);
	expect_nothing();

	/* The worker goes: every other job fails, once, from the loop. */
	disconnect_worker();
	for (i = 0; i < ARCHIVE_JOBS_MAX + 10; i++) {
		assert_int_equal(d[i].calls, 1);
		if (i > 0) {
			assert_int_equal(d[i].errnum, EPIPE);
			assert_string_equal(d[i].message,
			    "the archive worker went away");
		}
	}
}

/* A new channel: jobs on the old one fail, new ones use the new one. */
static void
test_channel_replaced(void **state)
{
	struct tar_job_spec	 spec;
	struct done_log		 d1, d2;
	struct imsg		 imsg;
	struct imsgbuf		 old;
	uint32_t		 id;

	memset(&d1, 0, sizeof(d1));
	memset(&d2, 0, sizeof(d2));
	connect_worker();
	check_spec(&spec, open("/dev/null", O_RDONLY), &d1);
	assert_int_equal(start(&spec), 0);
	spin();
	old = worker;
	connect_worker();
	spin();
	assert_int_equal(d1.calls, 1);
	assert_int_equal(d1.errnum, EPIPE);
	check_spec(&spec, open("/dev/null", O_RDONLY), &d2);
	assert_int_equal(start(&spec), 0);
	recv_msg(&imsg, MSG_ARCHIVE_FD);
	id = imsg.hdr.peerid;
	imsg_free(&imsg);
	recv_msg(&imsg, MSG_ARCHIVE_JOB);
	imsg_free(&imsg);
	send_done(id, 0, 1, NULL);
	assert_int_equal(d2.calls, 1);
	assert_int_equal(d2.errnum, 0);
	imsgbuf_clear(&old);
	close(old.sock);
	disconnect_worker();
	assert_int_equal(d1.calls, 1);
}

/* Refused at once, with the descriptors closed and done never called. */
static void
test_refused(void **state)
{
	static struct file_write_ready	 fw;
	struct tar_job_spec	 spec;
	struct done_log		 d;
	char			 name[] = "/etc/passwd";
	int			 p[2], q[2];

	memset(&d, 0, sizeof(d));
	assert_int_equal(pipe(p), 0);
	check_spec(&spec, p[0], &d);
	errno = 0;
	assert_int_equal(start(&spec), -1);	/* no worker yet */
	assert_int_equal(errno, ENXIO);
	expect_reader_gone(p[1]);
	close(p[1]);

	connect_worker();
	assert_int_equal(pipe(p), 0);
	assert_int_equal(pipe(q), 0);
	memset(&spec, 0, sizeof(spec));
	memset(&fw, 0, sizeof(fw));
	fw.name = name;
	fw.mode = 0644;
	fw.ndirs = 1;
	spec.kind = TAR_JOB_UPLOAD;
	spec.fds[0] = p[0];
	spec.fds[1] = q[1];
	spec.upload = &fw;
	spec.done = job_done;
	spec.arg = &d;
	errno = 0;
	assert_int_equal(start(&spec), -1);	/* an absolute name */
	assert_int_equal(errno, EINVAL);
	expect_reader_gone(p[1]);
	assert_int_equal(read(q[0], name, 1), 0);
	close(p[1]);
	close(q[0]);

	check_spec(&spec, -1, &d);
	assert_int_equal(start(&spec), -1);	/* a CHECK of nothing */
	assert_int_equal(errno, EINVAL);
	expect_nothing();
	disconnect_worker();
	assert_int_equal(d.calls, 0);
}

/* A worker that answers no job, or sends what it may not, is fatal. */
static void
test_lying_worker(void **state)
{
	static const uint32_t	 lies[] = { 12345, MSG_ARCHIVE_JOB };
	struct tar_job_spec	 spec;
	struct done_log		 d;
	size_t			 i;
	pid_t			 pid;
	int			 status;

	for (i = 0; i < sizeof(lies) / sizeof(lies[0]); i++) {
		fflush(NULL);
		assert_true((pid = fork()) != -1);
		if (pid == 0) {
			/* The child's own epoll set, not the parent's. */
			(void)event_reinit(base);
			connect_worker();
			check_spec(&spec, open("/dev/null", O_RDONLY), &d);
			(void)start(&spec);
			spin();
			if (i == 0)
				send_done(lies[i], 0, 0, NULL);
			else {
				(void)imsg_compose(&worker, lies[i], 1, -1,
				    NULL, 0);
				(void)imsgbuf_flush(&worker);
				spin();
			}
			_exit(0);
		}
		assert_int_equal(waitpid(pid, &status, 0), pid);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 1)
			fail_msg("lie %zu: status %#x", i, status);
	}
}

static int
setup(void **state)
{
	assert_non_null(base = event_base_new());
	memset(&managerd, 0, sizeof(managerd));
	managerd.name = "managerd";
	assert_int_equal(tar_jobs_init(base), 0);
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_file_messages),
		cmocka_unit_test(test_upload_job),
		cmocka_unit_test(test_jobs_in_flight),
		cmocka_unit_test(test_channel_replaced),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_lying_worker),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, setup, NULL);
}
