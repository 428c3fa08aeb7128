/*
 * Shared by the archive worker's tests (worker_fixture.h).
 */
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
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

#include <archive.h>
#include <archive_entry.h>
#include <cmocka.h>

#include "worker_fixture.h"

#define JOB_TIMEOUT	30

int
tmpfd(void)
{
	char	 path[] = "/tmp/test_worker.XXXXXX";
	int	 fd;

	fd = mkstemp(path);
	assert_true(fd != -1);
	assert_int_equal(unlink(path), 0);
	return fd;
}

void
rewind_fd(int fd)
{
	assert_true(lseek(fd, 0, SEEK_SET) == 0);
}

off_t
fd_size(int fd)
{
	struct stat	 st;

	assert_int_equal(fstat(fd, &st), 0);
	return st.st_size;
}

int
feed_pipe(const void *buf, size_t len)
{
	int	 fds[2];
	pid_t	 pid;

	assert_int_equal(pipe(fds), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid != -1);
	if (pid == 0) {
		signal(SIGPIPE, SIG_IGN);
		close(fds[0]);
		(void)write_all(fds[1], buf, len);
		_exit(0);
	}
	close(fds[1]);
	return fds[0];
}

char *
slurp(int fd, size_t *len)
{
	char	*buf;
	off_t	 size = fd_size(fd);
	ssize_t	 n;

	rewind_fd(fd);
	buf = malloc((size_t)size + 1);
	assert_non_null(buf);
	*len = 0;
	while ((n = read(fd, buf + *len, (size_t)size + 1 - *len)) > 0)
		*len += (size_t)n;
	assert_int_equal(*len, (size_t)size);
	return buf;
}

/* Reap the feeders: a job's input children may still be around. */
static void
reap_feeders(void)
{
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

void
run_job(const struct archive_job *j, int fd0, int fd1, struct tar_result *res)
{
	unsigned char	 buf[4096];
	struct imsg	 imsg;
	int		 rp[2], fds[2] = { fd0, fd1 }, status;
	size_t		 len = 0;
	ssize_t		 n;
	pid_t		 pid;

	assert_int_equal(pipe(rp), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid != -1);
	if (pid == 0) {
		alarm(JOB_TIMEOUT);
		close(rp[0]);
		signal(SIGPIPE, SIG_IGN);
		/* cmocka's handlers are the test's, not the worker's. */
		signal(SIGSEGV, SIG_DFL);
		signal(SIGSYS, SIG_DFL);
		if (worker_seccomp_load(SECCOMP_MODE_KILL) == -1)
			_exit(3);
		job_child(j, fds, rp[1], SECCOMP_MODE_KILL);
	}
	close(rp[1]);
	while ((n = read(rp[0], buf + len, sizeof(buf) - len)) > 0)
		len += (size_t)n;
	close(rp[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	reap_feeders();
	if (WIFSIGNALED(status))
		fail_msg("the job was killed by signal %d", WTERMSIG(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	memset(&imsg, 0, sizeof(imsg));
	imsg.fd = -1;
	imsg.data = buf;
	imsg.len = len;
	assert_int_equal(msg_get_tar_result(&imsg, res), 0);
}

void
tb_init(struct tb *t)
{
	memset(t, 0, sizeof(*t));
}

void
tb_free(struct tb *t)
{
	free(t->buf);
	memset(t, 0, sizeof(*t));
}

void
tb_bytes(struct tb *t, const void *p, size_t n)
{
	if (t->len + n > t->cap) {
		t->cap = (t->len + n) * 2 + 1024;
		t->buf = realloc(t->buf, t->cap);
		assert_non_null(t->buf);
	}
	memcpy(t->buf + t->len, p, n);
	t->len += n;
}

static void
octal(unsigned char *p, size_t width, uint64_t v)
{
	char	 tmp[32];

	snprintf(tmp, sizeof(tmp), "%0*llo", (int)width - 1,
	    (unsigned long long)v);
	assert_int_equal(strlen(tmp), width - 1);
	memcpy(p, tmp, width);
}

static void
checksum(unsigned char *blk)
{
	unsigned int	 sum = 0;
	size_t		 i;
	char		 tmp[8];

	memset(blk + 148, ' ', 8);
	for (i = 0; i < 512; i++)
		sum += blk[i];
	snprintf(tmp, sizeof(tmp), "%06o", sum);
	memcpy(blk + 148, tmp, 7);	/* six digits, NUL, the space */
}

static void
header_common(unsigned char *blk, const char *name, char type,
    const char *link)
{
	assert_true(strlen(name) <= 100);
	memcpy(blk, name, strlen(name));
	octal(blk + 100, 8, type == '5' ? 0755 : 0644);
	octal(blk + 108, 8, 1000);
	octal(blk + 116, 8, 1000);
	octal(blk + 136, 12, 1700000000);
	blk[156] = (unsigned char)type;
	if (link != NULL) {
		assert_true(strlen(link) <= 100);
		memcpy(blk + 157, link, strlen(link));
	}
	memcpy(blk + 257, "ustar\0" "00", 8);
}

void
tb_header(struct tb *t, const char *name, char type, uint64_t size,
    const char *link)
{
	unsigned char	 blk[512];

	memset(blk, 0, sizeof(blk));
	header_common(blk, name, type, link);
	octal(blk + 124, 12, size);
	checksum(blk);
	tb_bytes(t, blk, sizeof(blk));
}

void
tb_header_prefix(struct tb *t, const char *prefix, const char *name,
    char type, uint64_t size)
{
	unsigned char	 blk[512];

	memset(blk, 0, sizeof(blk));
	header_common(blk, name, type, NULL);
	assert_true(strlen(prefix) <= 155);
	memcpy(blk + 345, prefix, strlen(prefix));
	octal(blk + 124, 12, size);
	checksum(blk);
	tb_bytes(t, blk, sizeof(blk));
}

void
tb_header_size_field(struct tb *t, const char *name, char type,
    const unsigned char size[12])
{
	unsigned char	 blk[512];

	memset(blk, 0, sizeof(blk));
	header_common(blk, name, type, NULL);
	memcpy(blk + 124, size, 12);
	checksum(blk);
	tb_bytes(t, blk, sizeof(blk));
}

void
tb_data(struct tb *t, const void *p, size_t n)
{
	static const unsigned char	 zero[512];

	tb_bytes(t, p, n);
	if (n % 512 != 0)
		tb_bytes(t, zero, 512 - n % 512);
}

void
tb_pax_raw(struct tb *t, const void *records, size_t len)
{
	tb_header(t, "PaxHeaders/x", 'x', len, NULL);
	tb_data(t, records, len);
}

void
tb_pax(struct tb *t, const char *key, const char *value, size_t vlen)
{
	char	*rec;
	size_t	 body, len, digits;

	/* "<len> key=value\n", where len counts its own digits too. */
	body = 1 + strlen(key) + 1 + vlen + 1;
	for (digits = 1; ; digits++) {
		len = digits + body;
		if (snprintf(NULL, 0, "%zu", len) == (int)digits)
			break;
	}
	rec = malloc(len + 1);
	assert_non_null(rec);
	snprintf(rec, len + 1, "%zu %s=", len, key);
	memcpy(rec + digits + 1 + strlen(key) + 1, value, vlen);
	rec[len - 1] = '\n';
	tb_pax_raw(t, rec, len);
	free(rec);
}

void
tb_gnu_long(struct tb *t, char type, const char *name)
{
	unsigned char	 blk[512];
	size_t		 len = strlen(name) + 1;

	memset(blk, 0, sizeof(blk));
	memcpy(blk, "././@LongLink", 13);
	octal(blk + 100, 8, 0644);
	octal(blk + 108, 8, 0);
	octal(blk + 116, 8, 0);
	octal(blk + 124, 12, len);
	octal(blk + 136, 12, 0);
	blk[156] = (unsigned char)type;
	memcpy(blk + 257, "ustar  \0", 8);	/* GNU's magic */
	checksum(blk);
	tb_bytes(t, blk, sizeof(blk));
	tb_data(t, name, len);
}

void
tb_end(struct tb *t)
{
	static const unsigned char	 zero[1024];

	tb_bytes(t, zero, sizeof(zero));
}

int
tb_file(const struct tb *t)
{
	int	 fd = tmpfd();

	assert_int_equal(write_all(fd, t->buf, t->len), 0);
	rewind_fd(fd);
	return fd;
}

static char *
dup_or_null(const char *s)
{
	char	*d;

	if (s == NULL)
		return NULL;
	assert_non_null(d = strdup(s));
	return d;
}

static enum tar_type
entry_type(struct archive_entry *e)
{
	if (archive_entry_hardlink(e) != NULL)
		return TAR_HARDLINK;
	switch (archive_entry_filetype(e)) {
	case AE_IFREG:
		return TAR_REG;
	case AE_IFDIR:
		return TAR_DIR;
	case AE_IFLNK:
		return TAR_SYMLINK;
	default:
		return TAR_OTHER;
	}
}

size_t
readback(int fd, struct got *g, size_t max)
{
	struct archive		*r;
	struct archive_entry	*e;
	size_t			 n = 0, cap;
	la_ssize_t		 k;
	int			 rc;

	rewind_fd(fd);
	assert_non_null(r = archive_read_new());
	archive_read_support_format_tar(r);
	assert_int_equal(archive_read_open_fd(r, fd, 10240), ARCHIVE_OK);
	while ((rc = archive_read_next_header(r, &e)) == ARCHIVE_OK ||
	    rc == ARCHIVE_WARN) {
		assert_true(n < max);
		memset(&g[n], 0, sizeof(g[n]));
		g[n].name = dup_or_null(archive_entry_pathname(e));
		g[n].type = entry_type(e);
		g[n].mode = archive_entry_perm(e);
		g[n].uid = (uint64_t)archive_entry_uid(e);
		g[n].gid = (uint64_t)archive_entry_gid(e);
		g[n].mtime = archive_entry_mtime(e);
		g[n].link = dup_or_null(g[n].type == TAR_HARDLINK ?
		    archive_entry_hardlink(e) : archive_entry_symlink(e));
		cap = (size_t)archive_entry_size(e) + 1;
		assert_non_null(g[n].data = malloc(cap));
		while ((k = archive_read_data(r, g[n].data + g[n].len,
		    cap - g[n].len)) > 0)
			g[n].len += (size_t)k;
		assert_true(k == 0);
		n++;
	}
	assert_int_equal(rc, ARCHIVE_EOF);
	archive_read_free(r);
	return n;
}

size_t
readback_raw(int fd, struct got *g, size_t max)
{
	struct tar_reader	 r;
	struct tar_member	*m;
	size_t			 n = 0;
	ssize_t			 k;
	int			 rc;

	rewind_fd(fd);
	assert_int_equal(tar_reader_init(&r, fd), 0);
	while ((rc = tar_next(&r, &m)) == 1) {
		assert_true(n < max);
		memset(&g[n], 0, sizeof(g[n]));
		g[n].name = dup_or_null(m->name);
		g[n].type = m->type;
		g[n].mode = m->mode;
		g[n].uid = m->uid;
		g[n].gid = m->gid;
		g[n].mtime = m->mtime;
		g[n].link = dup_or_null(m->link);
		assert_non_null(g[n].data = malloc((size_t)m->size + 1));
		while ((k = tar_data(&r, g[n].data + g[n].len,
		    (size_t)m->size + 1 - g[n].len)) > 0)
			g[n].len += (size_t)k;
		assert_true(k == 0);
		n++;
	}
	if (rc != 0)
		fail_msg("readback_raw: %s", tar_error(&r));
	tar_reader_free(&r);
	return n;
}

void
got_free(struct got *g, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++) {
		free(g[i].name);
		free(g[i].link);
		free(g[i].data);
	}
}
