/*
 * managerd's uploads (API.md §4.10, §6.3): the checks and their order;
 * the primed PUT, its expiry and its early end, on a tar spool (GO) and
 * on a bare one (READY's pipe); the spool, COMMIT and ABORT, the cap on
 * a chunked body, an empty tar spool, and apid lying.
 * Where an upload lands is test_manager_file_walk.c's.  The test plays
 * apid and dockerd-proxy (manager_fixture.c, upload_fixture.c).
 */
#include <sys/stat.h>

#include <dirent.h>
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
#include "upload_fixture.h"

/* --- checks before anything is asked -------------------------------------- */

static void
write_refused(const char *id, const char *path, uint32_t mode, uint64_t size,
    enum error_kind kind, const char *text)
{
	uint32_t	 req;

	req = send_begin(id, path, mode, size);
	expect_apid_error(req, kind, text);
	no_proxy_message();
}

/* §4.10's order: sandbox, path, size, mode. */
static void
test_write_rejects(void **state)
{
	static const char	*outside[] = { "/etc/x", "/workspace", "../x",
	    "/workspace/..", "/workspacex/a", "//workspace/a", "a/../../b",
	    NULL };
	size_t			 i;
	int			 base = count_fds();

	write_refused("sb_nope", "/etc/x", 01000, 11, ERR_NOT_FOUND,
	    "sandbox sb_nope not found");
	write_refused(sandbox, "", 0644, 0, ERR_INVALID_REQUEST,
	    "path must be a non-empty string");
	for (i = 0; outside[i] != NULL; i++)
		write_refused(sandbox, outside[i], 01000, 11,
		    ERR_INVALID_REQUEST, LIMITED);
	write_refused(sandbox, "a", 01000, 11, ERR_PAYLOAD_TOO_LARGE,
	    "file exceeds 10 bytes");
	write_refused(sandbox, "a", 01000, 10, ERR_INVALID_REQUEST,
	    "mode must be between 0 and 0o777");
	write_refused(sandbox, "a", 07777, 0, ERR_INVALID_REQUEST,
	    "mode must be between 0 and 0o777");
	/* A chunked body is checked at COMMIT. */
	write_refused(sandbox, "a", 01000, FILE_WRITE_SIZE_UNKNOWN,
	    ERR_INVALID_REQUEST, "mode must be between 0 and 0o777");
	assert_int_equal(count_fds(), base);
}

/* --- the primed PUT ------------------------------------------------------- */

/*
 * The two spools: a body of a declared size is spooled as its tar, which
 * the primed PUT waits on (GO); a chunked one bare, its tar through the
 * primed PUT's pipe (READY).
 */
#define KINDS		2
static const uint64_t	 kind_size[KINDS] = { 4, FILE_WRITE_SIZE_UNKNOWN };

/*
 * An upload that waits for its body: its id, the primed PUT.  The spool
 * gets what apid's job would write: the tar, or the bare body.
 */
static uint32_t
spooled_primed(uint64_t size, struct prime *p)
{
	struct file_spool	 fs;
	uint32_t		 req;
	int			 spool;

	req = send_begin(sandbox, "f", 0640, size);
	spool = expect_spool(req, size == FILE_WRITE_SIZE_UNKNOWN ? 10 : size,
	    &fs);
	assert_int_equal(fs.tar, size != FILE_WRITE_SIZE_UNKNOWN);
	file_spool_free(&fs);
	expect_prime(p, size != FILE_WRITE_SIZE_UNKNOWN);
	assert_int_equal(write(spool, "tar", 3), 3);
	close(spool);
	return req;
}

/* The proxy's DONE, and apid's FILE_INFO: the upload is over. */
static void
put_done(uint32_t req, uint32_t call, uint64_t bytes)
{
	no_apid_message();
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	expect_file_info(req, "/workspace/f", bytes);
	no_proxy_message();
	assert_int_equal(upload_count(), 0);
}

/* A PUT that apid writes "tar" into, and Docker takes. */
static void
put_through(uint32_t req, struct prime *p, uint64_t bytes)
{
	struct file_write_ready	 r;
	char			 buf[8];
	int			 wfd;

	expect_ready(req, "f", 0640, &r, &wfd);
	file_write_ready_free(&r);
	assert_int_equal(write(wfd, "tar", 3), 3);
	close(wfd);
	assert_int_equal(read(p->fd, buf, sizeof(buf)), 3);
	assert_int_equal(read(p->fd, buf, sizeof(buf)), 0);
	close(p->fd);
	put_done(req, p->call, bytes);
}

/*
 * COMMIT, once Docker has let go of an earlier PUT: a new one.  Of a
 * bare spool primed too (an empty tar is then apid's to judge); of a
 * tar spool, the whole file, unprimed.
 */
static void
put_again(uint32_t req, int tar, uint64_t bytes)
{
	struct prime	 again;
	uint32_t	 call;
	int		 fd;

	if (!tar) {
		expect_prime(&again, 0);
		put_through(req, &again, bytes);
		return;
	}
	call = expect_put(sandbox, 0, 3, &fd);
	close(fd);
	put_done(req, call, bytes);
}

/* COMMIT with the primed PUT still waiting: it gets the tar. */
static void
put_primed(uint32_t req, struct prime *p, uint64_t bytes)
{
	if (!p->wait) {
		put_through(req, p, bytes);
		return;
	}
	expect_go(p->call, 3);
	close(p->fd);
	put_done(req, p->call, bytes);
}

static void
test_upload_primed(void **state)
{
	struct prime	 p;
	uint32_t	 req;
	int		 kind, base = count_fds();

	for (kind = 0; kind < KINDS; kind++) {
		req = spooled_primed(kind_size[kind], &p);
		no_apid_message();
		no_proxy_message();
		send_commit(req, 4);
		put_primed(req, &p, 4);
	}
	assert_int_equal(count_fds(), base);
}

/*
 * A body slower than PRIME_WAIT_MS: the primed PUT gets no tar, and
 * COMMIT makes a PUT again once Docker has let go of it -- whether
 * COMMIT comes before that answer or after.
 */
static void
test_upload_prime_expires(void **state)
{
	struct prime	 p;
	uint32_t	 req;
	int		 kind, late, base = count_fds();

	for (kind = 0; kind < KINDS; kind++)
	for (late = 0; late < 2; late++) {
		req = spooled_primed(kind_size[kind], &p);
		wait_prime_expiry(&p);
		if (!p.wait)
			assert_prime_unused(&p);
		no_apid_message();
		if (late) {
			from_proxy(MSG_DOCKER_DONE, p.call, NULL);
			no_proxy_message();
			send_commit(req, 4);
		} else {
			send_commit(req, 4);
			/* Not while Docker still holds the container. */
			no_proxy_message();
			no_apid_message();
			from_proxy(MSG_DOCKER_DONE, p.call, NULL);
		}
		put_again(req, p.wait, 4);
	}
	assert_int_equal(count_fds(), base);
}

/* Docker ends the primed PUT before the body is whole: COMMIT asks again. */
static void
test_upload_prime_fails(void **state)
{
	struct prime	 p;
	uint32_t	 req;
	int		 kind, base = count_fds();

	for (kind = 0; kind < KINDS; kind++) {
		req = spooled_primed(kind_size[kind], &p);
		error_reply(p.call, ERR_BACKEND, "docker went away");
		/* No GO for a PUT that is over. */
		no_proxy_message();
		if (p.wait)
			close(p.fd);
		else
			assert_prime_unused(&p);
		no_apid_message();
		send_commit(req, 4);
		put_again(req, p.wait, 4);
	}
	assert_int_equal(count_fds(), base);
}

/* Chunked: the spool takes up to the cap; more is 413 at COMMIT. */
static void
test_upload_too_large(void **state)
{
	/* A name in /workspace: the walk asks nothing. */
	const struct step	 steps[] = { { NULL, 0, NULL } };
	struct file_write_ready	 r;
	struct file_spool	 fs;
	struct prime		 p;
	uint32_t		 req;
	int			 base = count_fds();

	req = send_begin(sandbox, "f", 0640, FILE_WRITE_SIZE_UNKNOWN);
	walk(steps);
	close(expect_spool(req, 10, &fs));
	assert_false(fs.tar);
	expect_prime(&p, 0);
	send_commit(req, 11);
	expect_apid_error(req, ERR_PAYLOAD_TOO_LARGE, "file exceeds 10 bytes");
	/* Docker got no tar; the upload lasts until it lets go. */
	assert_int_equal(upload_count(), 1);
	prime_unused(&p);
	assert_int_equal(upload_count(), 0);
	no_apid_message();
	no_proxy_message();
	/* Exactly the cap is fine. */
	req = send_begin(sandbox, "f", 0640, FILE_WRITE_SIZE_UNKNOWN);
	walk(steps);
	upload_rest(req, 10, 10, "f", "/workspace/f", &r);
	file_write_ready_free(&r);
	assert_int_equal(count_fds(), base);
}

/* The client went away: Docker gets no tar, apid no answer. */
static void
test_upload_abort(void **state)
{
	struct prime	 p;
	uint32_t	 req;
	int		 kind, base = count_fds();

	for (kind = 0; kind < KINDS; kind++) {
		req = spooled_primed(kind_size[kind], &p);
		assert_int_equal(upload_count(), 1);
		from_apid_id(MSG_FILE_WRITE_ABORT, req, -1, NULL);
		assert_prime_unused(&p);
		assert_int_equal(upload_count(), 1);
		from_proxy(MSG_DOCKER_DONE, p.call, NULL);
		assert_int_equal(upload_count(), 0);
		no_apid_message();
		no_proxy_message();
	}
	assert_int_equal(count_fds(), base);
}

/*
 * apid dies while an upload waits for its body (or resolves its path):
 * the upload and its request are dropped, nothing reaches the next apid.
 */
static void
test_upload_apid_dies(void **state)
{
	struct prime	 p;
	uint32_t	 req, call;
	int		 kind, base = count_fds();

	for (kind = 0; kind < KINDS; kind++) {
		req = spooled_primed(kind_size[kind], &p);
		apid_dies();
		apid_back();
		assert_prime_unused(&p);
		from_proxy(MSG_DOCKER_DONE, p.call, NULL);
		assert_int_equal(upload_count(), 0);
		assert_int_equal(apid_request_count(), 0);
		/* After COMMIT, waiting for an abandoned PUT: the same. */
		req = spooled_primed(kind_size[kind], &p);
		wait_prime_expiry(&p);
		if (!p.wait)
			assert_prime_unused(&p);
		send_commit(req, 4);
		apid_dies();
		apid_back();
		error_reply(p.call, ERR_BACKEND, "late");
		assert_int_equal(upload_count(), 0);
		assert_int_equal(apid_request_count(), 0);
		no_proxy_message();
	}
	/* Dying while the path is walked: the spool is never sent. */
	send_begin(sandbox, "a/f", 0640, 4);
	call = expect_head("/workspace/a");
	apid_dies();
	apid_back();
	head_missing(call, "/workspace/a");
	no_apid_message();
	assert_int_equal(upload_count(), 0);
	assert_int_equal(apid_request_count(), 0);
	no_proxy_message();
	assert_int_equal(count_fds(), base);
}

/* Destroyed while the body came in: 404 at COMMIT, no tar for Docker. */
static void
test_upload_sandbox_gone(void **state)
{
	char		 text[64];
	struct prime	 p;
	uint32_t	 req;
	int		 kind, base = count_fds();

	for (kind = 0; kind < KINDS; kind++) {
		if (kind > 0)
			create_ok(0, sandbox, sizeof(sandbox));
		req = spooled_primed(kind_size[kind], &p);
		destroy_ok(sandbox);
		send_commit(req, 4);
		snprintf(text, sizeof(text), "sandbox %s not found", sandbox);
		expect_apid_error(req, ERR_NOT_FOUND, text);
		assert_prime_unused(&p);
		error_reply(p.call, ERR_NOT_FOUND, text);
		assert_int_equal(upload_count(), 0);
		no_proxy_message();
	}
	assert_int_equal(count_fds(), base);
}

/*
 * A tar spool apid's job left empty is no upload: 500, Docker gets
 * nothing; the same for the PUT made again after an expiry.
 */
static void
test_upload_spool_empty(void **state)
{
	struct file_spool	 fs;
	struct prime		 p;
	uint32_t		 req;
	int			 late, base = count_fds();

	for (late = 0; late < 2; late++) {
		req = send_begin(sandbox, "f", 0640, 4);
			close(expect_spool(req, 4, &fs));
		file_spool_free(&fs);
		expect_prime(&p, 1);
		if (late) {
			wait_prime_expiry(&p);
			from_proxy(MSG_DOCKER_DONE, p.call, NULL);
		}
		send_commit(req, 4);
		if (late) {
			expect_apid_error(req, ERR_INTERNAL, "cannot hand the "
			    "upload's tar to dockerd-proxy: No data available");
		} else {
			expect_apid_error(req, ERR_INTERNAL, "cannot read the "
			    "upload's spool: No data available");
			prime_unused(&p);
		}
		assert_int_equal(upload_count(), 0);
		no_proxy_message();
	}
	assert_int_equal(count_fds(), base);
}

/* --- the spool ------------------------------------------------------------ */

static int
uploads_entries(void)
{
	struct dirent	*de;
	DIR		*d;
	int		 fd, n = 0;

	fd = openat(env->datadir_fd, "uploads", O_RDONLY | O_DIRECTORY);
	assert_true(fd != -1);
	assert_non_null(d = fdopendir(fd));
	while ((de = readdir(d)) != NULL)
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

/* Either way a spool has no name, so nothing outlives its request. */
static void
test_spool_files(void **state)
{
	struct stat	 st;
	int		 fd, tmpfile, leftover;

	for (tmpfile = 0; tmpfile < 2; tmpfile++) {
		/* Made when missing. */
		unlinkat(env->datadir_fd, "uploads", AT_REMOVEDIR);
		assert_true((fd = upload_spool_open(tmpfile)) != -1);
		assert_int_equal(fstat(fd, &st), 0);
		assert_true(S_ISREG(st.st_mode));
		assert_int_equal(st.st_nlink, 0);
		assert_int_equal(st.st_mode & 07777, 0600);
		assert_int_equal(write(fd, "x", 1), 1);
		assert_int_equal(pread(fd, &st, 1, 0), 1);
		assert_int_equal(uploads_entries(), 0);
		close(fd);
	}
	/* What a crash left with a name goes at the next start. */
	leftover = openat(env->datadir_fd, "uploads/0123.spool",
	    O_WRONLY | O_CREAT, 0600);
	assert_true(leftover != -1);
	close(leftover);
	assert_int_equal(uploads_entries(), 1);
	upload_leftovers_remove();
	assert_int_equal(uploads_entries(), 0);
}

/* --- apid lying ----------------------------------------------------------- */

/* An upload whose spool apid has; returns its id. */
static uint32_t
spooled(uint64_t size)
{
	struct prime	 p;
	uint32_t	 req;

	req = spooled_primed(size, &p);
	close(p.fd);
	return req;
}

static void
lie_commit_without_begin(void)
{
	send_commit(4242, 4);
}

static void
lie_commit_while_walking(void)
{
	send_commit(send_begin(sandbox, "a/f", 0640, 4), 4);
}

static void
lie_commit_twice(void)
{
	uint32_t	 req = spooled(4);

	send_commit(req, 4);
	send_commit(req, 4);
}

static void
lie_commit_other_size(void)
{
	send_commit(spooled(4), 5);
}

/* The tar pipe is managerd's to give: a COMMIT brings none. */
static void
lie_commit_with_pipe(void)
{
	struct msgw	 w;

	msgw_init(&w);
	msg_put_u64(&w, 4);
	from_apid_id(MSG_FILE_WRITE_COMMIT, spooled(4), dup(0), &w);
}

static void
lie_commit_short(void)
{
	struct msgw	 w;

	msgw_init(&w);
	msgw_u32(&w, 4);
	from_apid_id(MSG_FILE_WRITE_COMMIT, spooled(4), -1, &w);
}

static void
lie_abort_without_begin(void)
{
	from_apid_id(MSG_FILE_WRITE_ABORT, 4242, -1, NULL);
}

static void
lie_abort_with_payload(void)
{
	struct msgw	 w;

	msgw_init(&w);
	msgw_u8(&w, 0);
	from_apid_id(MSG_FILE_WRITE_ABORT, spooled(4), -1, &w);
}

static void
lie_abort_with_descriptor(void)
{
	from_apid_id(MSG_FILE_WRITE_ABORT, spooled(4), dup(0), NULL);
}

static void
lie_begin_twice(void)
{
	struct msgw	 w;

	put_write(&w, sandbox, "f", 0640, 4);
	from_apid_id(MSG_FILE_WRITE_BEGIN, 4242, -1, &w);
	from_apid_id(MSG_FILE_WRITE_BEGIN, 4242, -1, &w);
}

static void
lie_begin_truncated(void)
{
	struct msgw	 w;

	put_write(&w, sandbox, "f", 0640, 4);
	w.len--;
	from_apid_id(MSG_FILE_WRITE_BEGIN, 4242, -1, &w);
}

static void
lie_proxy_bad_stat(void)
{
	struct msgw	 w;

	send_begin(sandbox, "a/f", 0640, 4);
	msgw_init(&w);
	msgw_u8(&w, ARCHIVE_KIND_FILE);
	from_proxy(MSG_DOCKER_ARCHIVE_STAT, expect_head("/workspace/a"), &w);
}

/* The proxy's answer to a primed PUT that got no tar is checked too. */
static void
lie_proxy_primed_done_with_payload(void)
{
	struct msgw	 w;
	struct prime	 p;

	(void)spooled_primed(4, &p);
	msgw_init(&w);
	msgw_u8(&w, 1);
	from_proxy(MSG_DOCKER_DONE, p.call, &w);
}

static void
test_upload_lies(void **state)
{
	const char	*none = "no upload waits for its body";
	const char	*noid = "no upload has that id";
	char		 want[128];

#define LIE(f, type, why)	do {					\
	snprintf(want, sizeof(want), "bad %s message from apid: %s",	\
	    type, why);							\
	expect_fatal(f, want);						\
} while (0)
	LIE(lie_commit_without_begin, "FILE_WRITE_COMMIT", noid);
	LIE(lie_commit_while_walking, "FILE_WRITE_COMMIT", none);
	LIE(lie_commit_twice, "FILE_WRITE_COMMIT", none);
	LIE(lie_commit_other_size, "FILE_WRITE_COMMIT",
	    "not the size it declared");
	LIE(lie_commit_with_pipe, "FILE_WRITE_COMMIT",
	    "unexpected descriptor");
	LIE(lie_commit_short, "FILE_WRITE_COMMIT", "malformed commit");
	LIE(lie_abort_without_begin, "FILE_WRITE_ABORT", noid);
	LIE(lie_abort_with_payload, "FILE_WRITE_ABORT", "unexpected payload");
	LIE(lie_abort_with_descriptor, "FILE_WRITE_ABORT",
	    "unexpected descriptor");
	LIE(lie_begin_twice, "FILE_WRITE_BEGIN",
	    "a request id already in use");
	LIE(lie_begin_truncated, "FILE_WRITE_BEGIN", "malformed file write");
#undef LIE
	expect_fatal(lie_proxy_bad_stat, "bad DOCKER_ARCHIVE_STAT message "
	    "from dockerd-proxy: malformed stat");
	expect_fatal(lie_proxy_primed_done_with_payload, "bad DOCKER_DONE "
	    "message from dockerd-proxy: unexpected payload");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f)	cmocka_unit_test_setup_teardown(f, setup_sandbox, teardown)
		T(test_write_rejects),
		T(test_upload_primed),
		T(test_upload_prime_expires),
		T(test_upload_prime_fails),
		T(test_upload_too_large),
		T(test_upload_abort),
		T(test_upload_sandbox_gone),
		T(test_upload_apid_dies),
		T(test_upload_spool_empty),
		T(test_spool_files),
		T(test_upload_lies),
#undef T
	};

	signal(SIGPIPE, SIG_IGN);
	log_init(LOG_TO_STDERR, LOG_LEVEL_WARN, "test_manager_file_write");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
