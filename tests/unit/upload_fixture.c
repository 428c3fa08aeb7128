/*
 * The upload tests' shared part (test_manager_file_write.c,
 * test_manager_file_walk.c): a sandbox, the upload's messages as apid
 * and the proxy send them, and whole uploads built from those.
 */
#include <sys/stat.h>

#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <event2/event.h>

#include "upload_fixture.h"

char	 sandbox[SANDBOX_ID_LEN + 1];

void
from_apid_id(uint32_t type, uint32_t peerid, int fd, struct msgw *w)
{
	struct imsg	 imsg;

	caller_before(type, peerid);
	fake_imsg(&imsg, type, peerid, fd, w);
	dispatch_apid(&env->apid_peer, &imsg);
	imsg_free(&imsg);
}

void
put_write(struct msgw *w, const char *id, const char *path, uint32_t mode,
    uint64_t size)
{
	struct file_write	 f;

	f.sandbox_id = (char *)(uintptr_t)id;
	f.path = (char *)(uintptr_t)path;
	f.mode = mode;
	f.size = size;
	msgw_init(w);
	msg_put_file_write(w, &f);
}

uint32_t
send_begin(const char *id, const char *path, uint32_t mode, uint64_t size)
{
	struct msgw	 w;

	put_write(&w, id, path, mode, size);
	return from_apid(MSG_FILE_WRITE_BEGIN, -1, &w);
}

void
send_commit(uint32_t req, uint64_t bytes)
{
	struct msgw	 w;

	msgw_init(&w);
	msg_put_u64(&w, bytes);
	from_apid_id(MSG_FILE_WRITE_COMMIT, req, -1, &w);
}

uint32_t
expect_head(const char *path)
{
	struct archive_head	 ah;
	struct imsg		 imsg;
	uint32_t		 call;

	call = expect_proxy(MSG_DOCKER_ARCHIVE_HEAD, &imsg);
	assert_int_equal(imsg.fd, -1);
	assert_int_equal(msg_get_archive_head(&imsg, &ah), 0);
	imsg_free(&imsg);
	assert_string_equal(ah.id, sandbox);
	assert_string_equal(ah.path, path);
	archive_head_free(&ah);
	return call;
}

void
head_missing(uint32_t call, const char *path)
{
	char	 text[MSG_MAX_PATH + 32];

	snprintf(text, sizeof(text), "%s: not found", path);
	error_reply(call, ERR_NOT_FOUND, text);
}

/* The proxy answers the walk's questions, and no more is asked. */
void
walk(const struct step *s)
{
	uint32_t	 call;

	for (; s->path != NULL; s++) {
		no_apid_message();
		call = expect_head(s->path);
		if (s->kind == MISSING)
			head_missing(call, s->path);
		else
			stat_answer(call, (uint8_t)s->kind, 1,
			    s->target != NULL ? s->target : "");
	}
}

static void
assert_plan(const struct file_write_ready *r, const char *name, uint32_t mode)
{
	assert_string_equal(r->name, name);
	assert_int_equal(r->uid, env->conf.sandbox_uid);
	assert_int_equal(r->gid, env->conf.sandbox_gid);
	assert_int_equal(r->mode, mode);
	assert_int_equal(r->mtime, (int64_t)now);
}

/* An unlinked regular file open for both, empty when size is 0. */
static void
assert_spool_file(int fd, off_t size)
{
	struct stat	 st;

	assert_int_equal(fstat(fd, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_size, size);
	assert_int_equal(st.st_nlink, 0);
	assert_int_equal(fcntl(fd, F_GETFL) & O_ACCMODE, O_RDWR);
}

int
expect_spool(uint32_t req, uint64_t max, struct file_spool *fs)
{
	struct imsg	 imsg;
	int		 fd;

	assert_int_equal(to_apid(&imsg), 1);
	if (imsg.hdr.type != MSG_FILE_SPOOL)
		fail_msg("apid got %s", msg_type_name(imsg.hdr.type));
	assert_int_equal(imsg.hdr.peerid, req);
	assert_int_equal(msg_get_file_spool(&imsg, fs), 0);
	assert_true(fs->max_bytes == max);
	assert_true((fd = imsg_take_fd(&imsg)) != -1);
	imsg_free(&imsg);
	assert_spool_file(fd, 0);
	return fd;
}

uint32_t
expect_put(const char *id, uint8_t flags, int64_t length, int *fd)
{
	struct archive_put	 ap;
	struct imsg		 imsg;
	uint32_t		 call;

	call = expect_proxy(MSG_DOCKER_ARCHIVE_PUT, &imsg);
	assert_true(imsg.fd != -1);
	*fd = imsg_take_fd(&imsg);
	assert_int_equal(msg_get_archive_put(&imsg, &ap), 0);
	imsg_free(&imsg);
	assert_string_equal(ap.id, id);
	assert_string_equal(ap.path, "/workspace");
	assert_int_equal(ap.flags, ARCHIVE_PUT_NO_REPLACE | flags);
	assert_true(ap.length == length);
	archive_put_free(&ap);
	return call;
}

void
expect_prime(struct prime *p, int wait)
{
	struct stat	 st;

	p->wait = wait;
	p->call = expect_put(sandbox, ARCHIVE_PUT_PRIME |
	    (wait ? ARCHIVE_PUT_WAIT : 0), -1, &p->fd);
	assert_int_equal(fstat(p->fd, &st), 0);
	assert_true(wait ? S_ISREG(st.st_mode) : S_ISFIFO(st.st_mode));
}

void
expect_go(uint32_t call, uint64_t length)
{
	struct imsg	 imsg;
	uint64_t	 got;

	assert_int_equal(expect_proxy(MSG_DOCKER_ARCHIVE_PUT_GO, &imsg),
	    call);
	assert_int_equal(imsg.fd, -1);
	assert_int_equal(msg_get_u64(&imsg, &got), 0);
	imsg_free(&imsg);
	assert_true(got == length);
}

void
assert_prime_unused(struct prime *p)
{
	char	 c;

	if (p->wait)
		expect_go(p->call, 0);
	else
		assert_int_equal(read(p->fd, &c, 1), 0);
	close(p->fd);
	p->fd = -1;
}

void
prime_unused(struct prime *p)
{
	assert_prime_unused(p);
	from_proxy(MSG_DOCKER_DONE, p->call, NULL);
}

/* The expiry has come: the pipe reads its end, or GO 0 has gone. */
static int
prime_expired(struct prime *p)
{
	struct pollfd	 pfd;
	struct imsg	 imsg;
	uint64_t	 got;

	if (!p->wait) {
		pfd.fd = p->fd;
		pfd.events = POLLIN;
		return poll(&pfd, 1, 0) == 1;
	}
	if (to_proxy(&imsg) != 1)
		return 0;
	assert_int_equal(imsg.hdr.type, MSG_DOCKER_ARCHIVE_PUT_GO);
	assert_int_equal(imsg.hdr.peerid, p->call);
	assert_int_equal(msg_get_u64(&imsg, &got), 0);
	imsg_free(&imsg);
	assert_true(got == 0);
	return 1;
}

void
wait_prime_expiry(struct prime *p)
{
	int	 i;

	for (i = 0; i < 100; i++) {
		if (prime_expired(p)) {
			if (p->wait) {
				close(p->fd);
				p->fd = -1;
			}
			return;
		}
		assert_true(event_base_loop(env->base, EVLOOP_ONCE) != -1);
	}
	fail_msg("the primed PUT was never given up");
}

void
expect_ready(uint32_t req, const char *name, uint32_t mode,
    struct file_write_ready *r, int *wfd)
{
	struct imsg	 imsg;

	assert_int_equal(to_apid(&imsg), 1);
	assert_int_equal(imsg.hdr.type, MSG_FILE_WRITE_READY);
	assert_int_equal(imsg.hdr.peerid, req);
	assert_int_equal(msg_get_file_write_ready(&imsg, r), 0);
	assert_true((*wfd = imsg_take_fd(&imsg)) != -1);
	imsg_free(&imsg);
	assert_plan(r, name, mode);
}

/* A directory member the upload makes: 0755 and now. */
void
assert_new_dir(const struct file_write_dir *d)
{
	assert_int_equal(d->mode, 0755);
	assert_int_equal(d->mtime, (int64_t)now);
	assert_int_equal(d->mtime_nsec,
	    (uint32_t)((now - (double)(int64_t)now) * 1e9));
}

void
expect_file_info(uint32_t req, const char *path, uint64_t size)
{
	struct file_info	 fi;
	struct imsg		 imsg;

	assert_int_equal(to_apid(&imsg), 1);
	assert_int_equal(imsg.hdr.type, MSG_FILE_INFO);
	assert_int_equal(imsg.hdr.peerid, req);
	assert_int_equal(msg_get_file_info(&imsg, &fi), 0);
	imsg_free(&imsg);
	assert_string_equal(fi.name, strrchr(path, '/') + 1);
	assert_string_equal(fi.path, path);
	assert_string_equal(fi.type, "file");
	assert_true(fi.size == size);
	assert_true(fi.modified_at == now);
	file_info_free(&fi);
}

/* A bare spool's upload: READY's pipe, into which apid writes "tar". */
static void
rest_through_pipe(uint32_t req, struct prime *p, const char *name,
    struct file_write_ready *r)
{
	char	 buf[8];
	int	 wfd;

	no_proxy_message();
	expect_ready(req, name, 0640, r, &wfd);
	assert_int_equal(write(wfd, "tar", 3), 3);
	close(wfd);
	assert_int_equal(read(p->fd, buf, sizeof(buf)), 3);
	close(p->fd);
}

/*
 * After the walk: the primed PUT and the spool, apid's COMMIT of bytes,
 * the tar (in the spool, or through READY's pipe), the plan in *r
 * (named name) and the FILE_INFO for path.
 */
void
upload_rest(uint32_t req, uint64_t max, uint64_t bytes, const char *name,
    const char *path, struct file_write_ready *r)
{
	struct file_spool	 fs;
	struct prime		 p;
	int			 spool;

	spool = expect_spool(req, max, &fs);
	expect_prime(&p, fs.tar);
	/* What apid's job writes: the body, or the tar with it. */
	assert_int_equal(write(spool, "tar", 3), 3);
	close(spool);
	no_apid_message();
	no_proxy_message();
	send_commit(req, bytes);
	if (fs.tar) {
		assert_plan(&fs.plan, name, 0640);
		*r = fs.plan;
		memset(&fs.plan, 0, sizeof(fs.plan));
		/* The proxy reads the spool, now whole. */
		expect_go(p.call, 3);
		assert_spool_file(p.fd, 3);
		close(p.fd);
	} else
		rest_through_pipe(req, &p, name, r);
	file_spool_free(&fs);
	no_apid_message();
	from_proxy(MSG_DOCKER_DONE, p.call, NULL);
	expect_file_info(req, path, bytes);
	no_proxy_message();
}

/* A whole upload of 4 bytes through path, landing as name. */
void
upload_ok(const char *path, const struct step *steps, const char *name,
    struct file_write_ready *r)
{
	char		 want[MSG_MAX_PATH + 1];
	uint32_t	 req;

	snprintf(want, sizeof(want), "/workspace/%s", path);
	req = send_begin(sandbox, path, 0640, 4);
	walk(steps);
	upload_rest(req, 4, 4, name, want, r);
}

void
upload_refused(const char *path, const struct step *steps,
    enum error_kind kind, const char *text)
{
	uint32_t	 req;

	req = send_begin(sandbox, path, 0640, 4);
	walk(steps);
	expect_apid_error(req, kind, text);
	no_proxy_message();
}

int
setup_sandbox(void **state)
{
	static char	 user[] = "AGENT_SANDBOX_SANDBOX_USER=1234:5678";
	static char	 max[] = "AGENT_SANDBOX_MAX_FILE_BYTES=10";
	static char	*settings[] = { user, max, NULL };

	setup_env(settings);
	create_ok(0, sandbox, sizeof(sandbox));
	now = 1700000000.25;
	return 0;
}
