/*
 * managerd's snapshots, rollback and fork (API.md §4.12-4.17, §7): the
 * test plays apid (it writes the tar into the SNAPSHOT_SINK file and
 * answers TAR_CHECK) and dockerd-proxy (manager_fixture.c).
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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

#include "archive_msg.h"
#include "manager_fixture.h"

#define TAR_BYTES	"a tar, rewritten by apid"

/* --- helpers -------------------------------------------------------------- */

static int	recovered = -1;

static void
recover_done(int ok)
{
	recovered = ok;
}

/* How many files in snapshots/ end with suffix. */
static int
count_files(const char *suffix)
{
	struct dirent	*de;
	DIR		*d;
	size_t		 len, slen = strlen(suffix);
	int		 fd, n = 0;

	fd = openat(env->datadir_fd, "snapshots", O_RDONLY | O_DIRECTORY);
	assert_true(fd != -1);
	assert_non_null(d = fdopendir(fd));
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (de->d_name[0] != '.' && len >= slen &&
		    strcmp(de->d_name + len - slen, suffix) == 0)
			n++;
	}
	closedir(d);
	return n;
}

static void
from_apid_id(uint32_t type, uint32_t peerid, struct msgw *w)
{
	struct imsg	 imsg;

	caller_before(type, peerid);
	fake_imsg(&imsg, type, peerid, -1, w);
	dispatch_apid(&env->apid_peer, &imsg);
	imsg_free(&imsg);
}

static void
tar_result(uint32_t type, uint32_t peerid, int32_t errnum, uint64_t bytes,
    const char *message)
{
	struct tar_result	 res;
	struct msgw		 w;

	res.errnum = errnum;
	res.bytes = bytes;
	res.message = (char *)(uintptr_t)message;
	msgw_init(&w);
	msg_put_tar_result(&w, &res);
	from_apid_id(type, peerid, &w);
}

static void
stat_reply(uint32_t call, uint8_t kind)
{
	struct archive_stat	 st;
	struct msgw		 w;
	char			 empty[] = "";

	memset(&st, 0, sizeof(st));
	st.kind = kind;
	st.size = 4096;
	st.link_target = empty;
	msgw_init(&w);
	msg_put_archive_stat(&w, &st);
	from_proxy(MSG_DOCKER_ARCHIVE_STAT, call, &w);
}

struct snap_sent {
	uint32_t	 req;		/* apid's SNAPSHOT_CREATE */
	uint32_t	 call;		/* the ARCHIVE_GET */
	int		 sink;		/* apid's temporary file */
	int		 pipe;		/* what the proxy got */
	uint64_t	 max;
};

static uint32_t
send_snapshot(const char *sandbox_id, const char *name, int *pipe_r)
{
	struct snapshot_create	 sc;
	struct msgw		 w;
	int			 p[2];
	char			 sbid[MSG_MAX_ID], nm[64];

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	strlcpy(sbid, sandbox_id, sizeof(sbid));
	sc.sandbox_id = sbid;
	sc.name = NULL;
	if (name != NULL) {
		strlcpy(nm, name, sizeof(nm));
		sc.name = nm;
	}
	msgw_init(&w);
	msg_put_snapshot_create(&w, &sc);
	*pipe_r = p[0];
	return from_apid(MSG_SNAPSHOT_CREATE, p[1], &w);
}

/* managerd's SNAPSHOT_SINK: for a copy (copy 1) or the rewrite. */
static void
expect_sink(struct snap_sent *s, int copy)
{
	struct imsg	 imsg;
	int		 got;

	assert_int_equal(to_apid(&imsg), 1);
	assert_int_equal(imsg.hdr.type, MSG_SNAPSHOT_SINK);
	assert_int_equal(imsg.hdr.peerid, s->req);
	assert_true(imsg.fd != -1);
	s->sink = imsg_take_fd(&imsg);
	assert_int_equal(msg_get_snapshot_sink(&imsg, &s->max, &got), 0);
	assert_int_equal(got, copy);
	imsg_free(&imsg);
}

/* The ARCHIVE_GET of the workspace's tar, as path. */
static void
expect_export(struct snap_sent *s, const char *sandbox_id, const char *path)
{
	struct archive_get	 ag;
	struct imsg		 imsg;

	s->call = expect_proxy(MSG_DOCKER_ARCHIVE_GET, &imsg);
	assert_true(imsg.fd != -1);
	s->pipe = imsg_take_fd(&imsg);
	assert_int_equal(msg_get_archive_get(&imsg, &ag), 0);
	assert_string_equal(ag.id, sandbox_id);
	assert_string_equal(ag.path, path);
	assert_int_equal(ag.want, ARCHIVE_WANT_TREE);
	archive_get_free(&ag);
	imsg_free(&imsg);
}

/* A snapshot request up to the point where apid and the proxy work. */
static void
snapshot_started(const char *sandbox_id, const char *name,
    struct snap_sent *s)
{
	int			 pr;

	s->req = send_snapshot(sandbox_id, name, &pr);
	close(pr);
	expect_sink(s, 1);
	/* The temporary file exists while the export runs. */
	assert_int_equal(count_files(".tmp"), 1);
	expect_export(s, sandbox_id, "/workspace/.");
}

/* apid writes the tar into the sink and reports it. */
static void
apid_writes(struct snap_sent *s, const char *bytes)
{
	size_t	 len = strlen(bytes);

	assert_int_equal(write(s->sink, bytes, len), (ssize_t)len);
	close(s->sink);
	s->sink = -1;
	tar_result(MSG_SNAPSHOT_WRITTEN, s->req, 0, len, NULL);
}

static void
proxy_exports(struct snap_sent *s)
{
	stat_reply(s->call, ARCHIVE_KIND_DIR);
	close(s->pipe);
	s->pipe = -1;
	from_proxy(MSG_DOCKER_DONE, s->call, NULL);
}

static void
expect_snapshot(uint32_t req, struct snapshot_info *info)
{
	struct imsg	 imsg;

	assert_int_equal(to_apid(&imsg), 1);
	if (imsg.hdr.type != MSG_SNAPSHOT_INFO)
		fail_msg("apid got %s, not SNAPSHOT_INFO",
		    msg_type_name(imsg.hdr.type));
	assert_int_equal(imsg.hdr.peerid, req);
	assert_int_equal(msg_get_snapshot_info(&imsg, info), 0);
	imsg_free(&imsg);
}

/* A whole snapshot of sandbox_id; its id goes to id. */
static void
snapshot_ok(const char *sandbox_id, const char *name, char *id)
{
	struct snapshot_info	 info;
	struct snap_sent	 s;

	snapshot_started(sandbox_id, name, &s);
	apid_writes(&s, TAR_BYTES);
	proxy_exports(&s);
	expect_snapshot(s.req, &info);
	strlcpy(id, info.id, SNAPSHOT_ID_LEN + 1);
	snapshot_info_free(&info);
}

static int
snapshot_file_exists(const char *id, const char *suffix)
{
	char		 path[SNAPSHOT_PATH_MAX];
	struct stat	 st;

	snprintf(path, sizeof(path), "snapshots/%s%s", id, suffix);
	return fstatat(env->datadir_fd, path, &st, 0) == 0;
}

/* A sandbox (its id to sb) and a snapshot of it (to snap). */
static void
sandbox_and_snapshot(char *sb, char *snap)
{
	create_ok(0, sb, SANDBOX_ID_LEN + 1);
	snapshot_ok(sb, NULL, snap);
}

/* --- snapshot ------------------------------------------------------------- */

static void
snapshot_success(int written_first)
{
	struct snapshot_record	 rec;
	struct snapshot_info	 info;
	struct snap_sent	 s;
	char			 sb[SANDBOX_ID_LEN + 1];

	create_ok(0, sb, sizeof(sb));
	now += 10;
	snapshot_started(sb, "before the change", &s);
	assert_true(s.max == 1073741824);
	if (written_first) {
		apid_writes(&s, TAR_BYTES);
		no_apid_message();
		now += 1;
		proxy_exports(&s);
	} else {
		proxy_exports(&s);
		no_apid_message();
		now += 1;
		apid_writes(&s, TAR_BYTES);
	}
	expect_snapshot(s.req, &info);
	assert_true(id_is_snapshot(info.id));
	assert_string_equal(info.sandbox_id, sb);
	assert_string_equal(info.name, "before the change");
	assert_string_equal(info.image, "python:3.12-slim");
	assert_true(info.size_bytes == strlen(TAR_BYTES));
	assert_true(info.created_at == now);
	assert_true(snapshot_file_exists(info.id, ".tar"));
	assert_true(snapshot_file_exists(info.id, ".json"));
	assert_int_equal(count_files(".tmp"), 0);
	assert_int_equal(store_snapshot_load(env->datadir_fd, info.id, &rec),
	    0);
	assert_string_equal(rec.sandbox_id, sb);
	assert_true(rec.created_at == now);
	assert_true(rec.spec.cpus == 1.0);
	snapshot_record_free(&rec);
	snapshot_info_free(&info);
}

static void
test_snapshot_written_first(void **state)
{
	snapshot_success(1);
}

static void
test_snapshot_done_first(void **state)
{
	snapshot_success(0);
}

/* apid's SNAPSHOT_RETRY, with the write end of a new pipe. */
static int
apid_retries(struct snap_sent *s, const char *why)
{
	struct tar_result	 res;
	struct imsg		 imsg;
	struct msgw		 w;
	int			 p[2];

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	memset(&res, 0, sizeof(res));
	res.errnum = JOB_NEEDS_REWRITE;
	res.message = (char *)(uintptr_t)why;
	msgw_init(&w);
	msg_put_tar_result(&w, &res);
	caller_before(MSG_SNAPSHOT_RETRY, s->req);
	fake_imsg(&imsg, MSG_SNAPSHOT_RETRY, s->req, p[1], &w);
	dispatch_apid(&env->apid_peer, &imsg);
	imsg_free(&imsg);
	return p[0];
}

/*
 * The copy stops at a member the rewrite would change: the tar is asked
 * for again as "/workspace", into the retry's pipe, and the file starts
 * empty for the rewrite, whichever of apid and the proxy ends first.
 */
static void
snapshot_retried(int retry_first)
{
	struct snapshot_info	 info;
	struct snap_sent	 s;
	struct stat		 st;
	char			 sb[SANDBOX_ID_LEN + 1];
	int			 rfd;

	create_ok(0, sb, sizeof(sb));
	snapshot_started(sb, NULL, &s);
	assert_int_equal(write(s.sink, "part of a copy", 14), 14);
	close(s.sink);
	if (!retry_first) {
		stat_reply(s.call, ARCHIVE_KIND_DIR);
		close(s.pipe);
		error_reply(s.call, ERR_BACKEND, "/workspace/.: the reader "
		    "went away");
		no_apid_message();
	}
	rfd = apid_retries(&s, "a FIFO: ./ff");
	if (retry_first) {
		no_proxy_message();
		no_apid_message();
		stat_reply(s.call, ARCHIVE_KIND_DIR);
		close(s.pipe);
		error_reply(s.call, ERR_BACKEND, "/workspace/.: the reader "
		    "went away");
	}
	expect_sink(&s, 0);
	assert_int_equal(fstat(s.sink, &st), 0);
	assert_int_equal(st.st_size, 0);
	expect_export(&s, sb, "/workspace");
	close(rfd);
	apid_writes(&s, TAR_BYTES);
	proxy_exports(&s);
	expect_snapshot(s.req, &info);
	assert_true(info.size_bytes == strlen(TAR_BYTES));
	assert_int_equal(count_files(".tmp"), 0);
	snapshot_info_free(&info);
}

static void
test_snapshot_retry_first(void **state)
{
	snapshot_retried(1);
}

static void
test_snapshot_retry_after_export(void **state)
{
	snapshot_retried(0);
}

/* A rewrite that fails fails the snapshot; nothing stays. */
static void
test_snapshot_retry_fails(void **state)
{
	struct snap_sent	 s;
	char			 sb[SANDBOX_ID_LEN + 1], text[160];
	int			 rfd;

	create_ok(0, sb, sizeof(sb));
	snapshot_started(sb, NULL, &s);
	close(s.sink);
	rfd = apid_retries(&s, "extended attributes: ./cap");
	stat_reply(s.call, ARCHIVE_KIND_DIR);
	close(s.pipe);
	error_reply(s.call, ERR_BACKEND, "the reader went away");
	expect_sink(&s, 0);
	expect_export(&s, sb, "/workspace");
	close(rfd);
	close(s.sink);
	tar_result(MSG_SNAPSHOT_WRITTEN, s.req, EINVAL, 0, "member outside "
	    "the workspace: x");
	close(s.pipe);
	error_reply(s.call, ERR_BACKEND, "/workspace: the reader went away");
	snprintf(text, sizeof(text), "cannot snapshot %s: member outside the "
	    "workspace: x", sb);
	expect_apid_error(s.req, ERR_BACKEND, text);
	assert_int_equal(count_files(""), 0);
}

static void
test_snapshot_unknown_sandbox(void **state)
{
	uint32_t	 req;
	int		 pr;
	char		 c;

	req = send_snapshot("sb_0000000000000000", NULL, &pr);
	expect_apid_error(req, ERR_NOT_FOUND,
	    "sandbox sb_0000000000000000 not found");
	/* The pipe's write end was closed. */
	assert_int_equal(read(pr, &c, 1), 0);
	close(pr);
	no_proxy_message();
	assert_int_equal(count_files(""), 0);
}

/* The fixture's settings and the one the test starts with as its state. */
static int
setup_with(void **state)
{
	char	*settings[] = { *state, NULL };

	setup_env(settings);
	return 0;
}

static char	small_limit[] = "AGENT_SANDBOX_MAX_SNAPSHOT_BYTES=10";
static char	no_network[] = "AGENT_SANDBOX_ALLOW_NETWORK=false";

static void
test_snapshot_too_large(void **state)
{
	struct snap_sent	 s;
	char			 sb[SANDBOX_ID_LEN + 1];

	create_ok(0, sb, sizeof(sb));
	/* apid stopped at the limit. */
	snapshot_started(sb, NULL, &s);
	assert_true(s.max == 10);
	assert_int_equal(write(s.sink, "0123456789", 10), 10);
	close(s.sink);
	tar_result(MSG_SNAPSHOT_WRITTEN, s.req, EFBIG, 10, "too large");
	close(s.pipe);
	error_reply(s.call, ERR_BACKEND, "broken pipe");
	expect_apid_error(s.req, ERR_PAYLOAD_TOO_LARGE,
	    "workspace exceeds the snapshot limit of 10 bytes");
	assert_int_equal(count_files(""), 0);

	/* apid's count is not what counts: the file's size is. */
	snapshot_started(sb, NULL, &s);
	assert_int_equal(write(s.sink, "0123456789A", 11), 11);
	close(s.sink);
	tar_result(MSG_SNAPSHOT_WRITTEN, s.req, 0, 5, NULL);
	proxy_exports(&s);
	expect_apid_error(s.req, ERR_PAYLOAD_TOO_LARGE,
	    "workspace exceeds the snapshot limit of 10 bytes");
	assert_int_equal(count_files(""), 0);
}

static void
test_snapshot_failures(void **state)
{
	struct snapshot_info	 info;
	struct snap_sent	 s;
	char			 sb[SANDBOX_ID_LEN + 1], text[160];

	create_ok(0, sb, sizeof(sb));
	/* The proxy's error is relayed; nothing stays. */
	snapshot_started(sb, NULL, &s);
	close(s.pipe);
	error_reply(s.call, ERR_BACKEND, "Docker is down");
	no_apid_message();
	close(s.sink);
	tar_result(MSG_SNAPSHOT_WRITTEN, s.req, EIO, 0, "truncated archive");
	expect_apid_error(s.req, ERR_BACKEND, "Docker is down");
	assert_int_equal(count_files(""), 0);

	/*
	 * The archive worker's process died: that is what happened, and
	 * the proxy's broken pipe only follows from it.
	 */
	snapshot_started(sb, NULL, &s);
	close(s.sink);
	tar_result(MSG_SNAPSHOT_WRITTEN, s.req, EPIPE, 0, "the archive "
	    "worker died: killed by signal 9 (SIGKILL)");
	close(s.pipe);
	error_reply(s.call, ERR_BACKEND, "/workspace: the reader went away");
	snprintf(text, sizeof(text), "cannot snapshot %s: the archive worker "
	    "died: killed by signal 9 (SIGKILL)", sb);
	expect_apid_error(s.req, ERR_BACKEND, text);
	assert_int_equal(count_files(""), 0);

	/* The sandbox stays usable: the lock was given back. */
	snapshot_started(sb, NULL, &s);
	apid_writes(&s, TAR_BYTES);
	proxy_exports(&s);
	expect_snapshot(s.req, &info);
	snapshot_info_free(&info);
}

static void
test_snapshot_apid_error(void **state)
{
	struct snap_sent	 s;
	char			 sb[SANDBOX_ID_LEN + 1], text[128];

	create_ok(0, sb, sizeof(sb));
	snapshot_started(sb, NULL, &s);
	close(s.sink);
	tar_result(MSG_SNAPSHOT_WRITTEN, s.req, EINVAL, 0,
	    "member '../x' is outside the archive");
	proxy_exports(&s);
	snprintf(text, sizeof(text), "cannot snapshot %s: member '../x' is "
	    "outside the archive", sb);
	expect_apid_error(s.req, ERR_BACKEND, text);
	assert_int_equal(count_files(""), 0);

	/* An empty file is no snapshot. */
	snapshot_started(sb, NULL, &s);
	close(s.sink);
	tar_result(MSG_SNAPSHOT_WRITTEN, s.req, 0, 0, NULL);
	proxy_exports(&s);
	snprintf(text, sizeof(text), "cannot snapshot %s: the archive is "
	    "empty", sb);
	expect_apid_error(s.req, ERR_BACKEND, text);
	assert_int_equal(count_files(""), 0);

	/* /workspace replaced by a symlink: the proxy sends no body. */
	snapshot_started(sb, NULL, &s);
	close(s.sink);
	tar_result(MSG_SNAPSHOT_WRITTEN, s.req, 0, 0, NULL);
	stat_reply(s.call, ARCHIVE_KIND_SYMLINK);
	close(s.pipe);
	from_proxy(MSG_DOCKER_DONE, s.call, NULL);
	snprintf(text, sizeof(text), "cannot snapshot %s: /workspace is not "
	    "a directory", sb);
	expect_apid_error(s.req, ERR_BACKEND, text);
	assert_int_equal(count_files(""), 0);
}

/* Snapshot and destroy of one sandbox take turns (§8.4). */
static void
test_snapshot_lock(void **state)
{
	struct snapshot_info	 info;
	struct snap_sent	 s;
	char			 sb[SANDBOX_ID_LEN + 1], text[64];
	uint32_t		 del, call, req2;
	int			 pr;

	create_ok(0, sb, sizeof(sb));
	snapshot_started(sb, NULL, &s);
	del = send_id(MSG_SANDBOX_DELETE, sb);
	req2 = send_snapshot(sb, NULL, &pr);
	no_proxy_message();		/* the destroy waits */
	apid_writes(&s, TAR_BYTES);
	proxy_exports(&s);
	expect_snapshot(s.req, &info);
	snapshot_info_free(&info);
	call = expect_proxy_id(MSG_DOCKER_DESTROY, sb);
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	expect_apid(del, MSG_OK);
	/* The snapshot queued after the destroy finds no sandbox. */
	snprintf(text, sizeof(text), "sandbox %s not found", sb);
	expect_apid_error(req2, ERR_NOT_FOUND, text);
	close(pr);
}

/*
 * apid dies while it writes the snapshot: no SNAPSHOT_WRITTEN will come.
 * The snapshot fails, its file goes, the lock is free, and nothing goes
 * to the next apid.
 */
static void
test_snapshot_apid_dies(void **state)
{
	struct snap_sent	 s;
	char			 sb[SANDBOX_ID_LEN + 1];

	create_ok(0, sb, sizeof(sb));
	snapshot_started(sb, NULL, &s);
	close(s.sink);
	apid_dies();
	apid_back();
	close(s.pipe);
	error_reply(s.call, ERR_BACKEND, "broken pipe");
	no_apid_message();
	assert_int_equal(count_files(""), 0);
	assert_int_equal(apid_request_count(), 0);
	destroy_ok(sb);
}

/* --- list, get, delete ---------------------------------------------------- */

static void
expect_list(uint32_t req, const char **ids, size_t n)
{
	struct snapshot_info	 info;
	struct imsg		 imsg;
	size_t			 i;

	for (i = 0; i < n; i++) {
		expect_snapshot(req, &info);
		assert_string_equal(info.id, ids[i]);
		snapshot_info_free(&info);
	}
	assert_int_equal(to_apid(&imsg), 1);
	assert_int_equal(imsg.hdr.type, MSG_SNAPSHOT_LIST_END);
	assert_int_equal(imsg.hdr.peerid, req);
	imsg_free(&imsg);
}

static uint32_t
send_list(const char *filter)
{
	struct msgw	 w;

	msgw_init(&w);
	msg_put_snapshot_list(&w, filter);
	return from_apid(MSG_SNAPSHOT_LIST, -1, &w);
}

/*
 * More snapshots than the queue to apid holds at once (IMSG_MAX_QUEUED):
 * the listing waits for apid to read, and every one arrives, in order,
 * then LIST_END.
 */
#define MANY_SNAPSHOTS	2200

static void
test_list_many(void **state)
{
	struct snapshot_record	 r;
	struct snapshot_info	 info;
	struct imsg		 imsg;
	char			 path[SNAPSHOT_PATH_MAX], *text;
	char			 name[1001], image[1001];
	size_t			 i, n = 0;
	uint32_t		 req;
	int			 fd, ended = 0;

	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	memset(image, 'i', sizeof(image) - 1);
	image[sizeof(image) - 1] = '\0';
	for (i = 0; i < MANY_SNAPSHOTS; i++) {
		/* Written plainly: thousands of fsyncs would take long. */
		memset(&r, 0, sizeof(r));
		snprintf(r.id, sizeof(r.id), "snap_%016zx", i);
		r.name = name;
		r.sandbox_id = (char *)(uintptr_t)"sb_0123456789abcdef";
		r.size_bytes = 10240;
		r.created_at = 1700000000.0 + (double)(MANY_SNAPSHOTS - i);
		r.spec.image = image;
		assert_non_null(text = store_snapshot_to_json(&r));
		snprintf(path, sizeof(path), "snapshots/%s.json", r.id);
		fd = openat(env->datadir_fd, path, O_WRONLY | O_CREAT, 0600);
		assert_true(fd != -1);
		assert_int_equal(write(fd, text, strlen(text)),
		    (ssize_t)strlen(text));
		close(fd);
		free(text);
		snprintf(path, sizeof(path), "snapshots/%s.tar", r.id);
		fd = openat(env->datadir_fd, path, O_WRONLY | O_CREAT, 0600);
		assert_true(fd != -1);
		close(fd);
	}
	req = send_list(NULL);
	while (!ended) {
		if (to_apid_some(&imsg) == 0) {
			assert_int_not_equal(event_base_loop(env->base,
			    EVLOOP_ONCE), -1);
			continue;
		}
		assert_int_equal(imsg.hdr.peerid, req);
		if (imsg.hdr.type == MSG_SNAPSHOT_LIST_END)
			ended = 1;
		else {
			assert_int_equal(imsg.hdr.type, MSG_SNAPSHOT_INFO);
			assert_int_equal(msg_get_snapshot_info(&imsg, &info),
			    0);
			/* Oldest first: the last written. */
			snprintf(path, sizeof(path), "snap_%016zx",
			    (size_t)MANY_SNAPSHOTS - 1 - n);
			assert_string_equal(info.id, path);
			assert_string_equal(info.name, name);
			snapshot_info_free(&info);
			n++;
		}
		imsg_free(&imsg);
	}
	assert_int_equal(n, MANY_SNAPSHOTS);
}

static void
test_list_get_delete(void **state)
{
	struct snapshot_info	 info;
	char			 a[SANDBOX_ID_LEN + 1];
	char			 b[SANDBOX_ID_LEN + 1];
	char			 s1[SNAPSHOT_ID_LEN + 1];
	char			 s2[SNAPSHOT_ID_LEN + 1];
	char			 s3[SNAPSHOT_ID_LEN + 1];
	const char		*ids[3];
	char			 text[64], path[SNAPSHOT_PATH_MAX];
	uint32_t		 req;
	int			 fd;

	create_ok(0, a, sizeof(a));
	create_ok(0, b, sizeof(b));
	now = 1700000300;
	snapshot_ok(a, NULL, s1);
	now = 1700000100;
	snapshot_ok(b, "b", s2);
	now = 1700000200;
	snapshot_ok(a, "a2", s3);
	/* Corrupt and partial records are skipped. */
	fd = openat(env->datadir_fd, "snapshots/snap_00000000000000aa.json",
	    O_CREAT | O_WRONLY, 0600);
	assert_int_equal(write(fd, "{", 1), 1);
	close(fd);
	fd = openat(env->datadir_fd, "snapshots/snap_00000000000000aa.tar",
	    O_CREAT | O_WRONLY, 0600);
	close(fd);

	ids[0] = s2; ids[1] = s3; ids[2] = s1;
	expect_list(send_list(NULL), ids, 3);
	ids[0] = s3; ids[1] = s1;
	expect_list(send_list(a), ids, 2);
	expect_list(send_list(""), ids, 0);
	expect_list(send_list("sb_none"), ids, 0);

	req = send_id(MSG_SNAPSHOT_GET, s2);
	expect_snapshot(req, &info);
	assert_string_equal(info.id, s2);
	assert_string_equal(info.sandbox_id, b);
	assert_string_equal(info.name, "b");
	assert_true(info.created_at == 1700000100);
	snapshot_info_free(&info);
	req = send_id(MSG_SNAPSHOT_GET, s1);
	expect_snapshot(req, &info);
	assert_null(info.name);
	snapshot_info_free(&info);

	req = send_id(MSG_SNAPSHOT_GET, "snap_00000000000000aa");
	expect_apid_error(req, ERR_NOT_FOUND,
	    "snapshot snap_00000000000000aa not found");
	req = send_id(MSG_SNAPSHOT_GET, "../sandboxes/x");
	expect_apid_error(req, ERR_NOT_FOUND,
	    "snapshot ../sandboxes/x not found");
	req = send_id(MSG_SNAPSHOT_DELETE, "snap_zz");
	expect_apid_error(req, ERR_NOT_FOUND, "snapshot snap_zz not found");

	req = send_id(MSG_SNAPSHOT_DELETE, s2);
	expect_apid(req, MSG_OK);
	assert_false(snapshot_file_exists(s2, ".tar"));
	assert_false(snapshot_file_exists(s2, ".json"));
	snprintf(text, sizeof(text), "snapshot %s not found", s2);
	req = send_id(MSG_SNAPSHOT_DELETE, s2);
	expect_apid_error(req, ERR_NOT_FOUND, text);
	req = send_id(MSG_SNAPSHOT_GET, s2);
	expect_apid_error(req, ERR_NOT_FOUND, text);
	/* A missing tar means a missing snapshot. */
	snprintf(path, sizeof(path), "snapshots/%s.tar", s3);
	assert_int_equal(unlinkat(env->datadir_fd, path, 0), 0);
	snprintf(text, sizeof(text), "snapshot %s not found", s3);
	req = send_id(MSG_SNAPSHOT_GET, s3);
	expect_apid_error(req, ERR_NOT_FOUND, text);
	ids[0] = s1;
	expect_list(send_list(NULL), ids, 1);
}

/* --- rollback ------------------------------------------------------------- */

static uint32_t
send_rollback(const char *sb, const char *snap)
{
	struct rollback_request	 rr;
	struct msgw		 w;
	char			 a[MSG_MAX_ID], b[MSG_MAX_ID];

	strlcpy(a, sb, sizeof(a));
	strlcpy(b, snap, sizeof(b));
	rr.sandbox_id = a;
	rr.snapshot_id = b;
	msgw_init(&w);
	msg_put_rollback_request(&w, &rr);
	return from_apid(MSG_SANDBOX_ROLLBACK, -1, &w);
}

/* apid is asked to check the stored tar; returns the call's id. */
static uint32_t
expect_tar_check(void)
{
	struct imsg	 imsg;
	char		 buf[64];
	ssize_t		 n;
	int		 fd;

	assert_int_equal(to_apid(&imsg), 1);
	if (imsg.hdr.type != MSG_TAR_CHECK)
		fail_msg("apid got %s, not TAR_CHECK",
		    msg_type_name(imsg.hdr.type));
	assert_int_equal(imsg.len, 0);
	assert_true((fd = imsg_take_fd(&imsg)) != -1);
	n = read(fd, buf, sizeof(buf));
	assert_int_equal(n, (ssize_t)strlen(TAR_BYTES));
	close(fd);
	imsg_free(&imsg);
	return imsg.hdr.peerid;
}

/* The proxy is asked to import the tar into sb; returns the call. */
static uint32_t
expect_put(const char *sb)
{
	struct archive_put	 ap;
	struct imsg		 imsg;
	uint32_t		 call;
	char			 buf[64];

	call = expect_proxy(MSG_DOCKER_ARCHIVE_PUT, &imsg);
	assert_true(imsg.fd != -1);
	assert_int_equal(read(imsg.fd, buf, sizeof(buf)),
	    (ssize_t)strlen(TAR_BYTES));
	assert_int_equal(msg_get_archive_put(&imsg, &ap), 0);
	assert_string_equal(ap.id, sb);
	assert_string_equal(ap.path, "/workspace");
	assert_int_equal(ap.length, (int64_t)strlen(TAR_BYTES));
	archive_put_free(&ap);
	imsg_free(&imsg);
	return call;
}

/* apid finds nothing wrong with the stored tar. */
static void
tar_accepted(void)
{
	tar_result(MSG_TAR_CHECKED, expect_tar_check(), 0, 1, NULL);
}

/* A rollback of sb to snap up to the destroy: returns the proxy call. */
static uint32_t
rollback_destroying(const char *sb, const char *snap, uint32_t *req)
{
	*req = send_rollback(sb, snap);
	tar_accepted();
	return expect_proxy_id(MSG_DOCKER_DESTROY, sb);
}

static void
test_rollback(void **state)
{
	struct sandbox_info	 info;
	struct docker_create	 dc;
	struct sandbox		*sb;
	char			 a[SANDBOX_ID_LEN + 1];
	char			 b[SANDBOX_ID_LEN + 1];
	char			 snap[SNAPSHOT_ID_LEN + 1];
	double			 created, expires;
	uint32_t		 req, call;

	create_ok(0, a, sizeof(a));
	create_ok(0, b, sizeof(b));
	snapshot_ok(a, NULL, snap);
	sb = sandbox_find(b);
	created = sb->rec.created_at;
	expires = sb->rec.expires_at;
	now += 100;
	/* Any snapshot into any sandbox, with the sandbox's own spec. */
	req = send_rollback(b, snap);
	call = expect_tar_check();
	no_proxy_message();
	tar_result(MSG_TAR_CHECKED, call, 0, strlen(TAR_BYTES), NULL);
	call = expect_proxy_id(MSG_DOCKER_DESTROY, b);
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	call = expect_create(&dc);
	assert_string_equal(dc.id, b);
	assert_string_equal(dc.spec.image, "python:3.12-slim");
	docker_create_free(&dc);
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	call = expect_put(b);
	no_apid_message();
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	call = expect_proxy_id(MSG_DOCKER_STATE, b);
	state_reply(call, 1, 1);
	expect_info(req, &info);
	assert_string_equal(info.id, b);
	assert_true(info.running);
	assert_string_equal(info.source_snapshot_id, snap);
	assert_true(info.created_at == created);
	assert_true(info.expires_at == expires);
	sandbox_info_free(&info);
	assert_int_equal(sandbox_count(), 2);
	assert_int_equal(quota_pending(), 0);
	assert_string_equal(sandbox_find(b)->rec.source_snapshot_id, snap);
}

/*
 * While a rollback runs past its check, the sandbox has no record on
 * disk: managerd killed then leaves Docker's remains to a restart as
 * orphans (destroyed), never a kept record over a half-restored
 * workspace.  The record is back once the import succeeded.
 */
static void
test_rollback_record_order(void **state)
{
	struct sandbox_info	 info;
	char			 a[SANDBOX_ID_LEN + 1];
	char			 snap[SNAPSHOT_ID_LEN + 1];
	uint32_t		 req, call, put, list;

	sandbox_and_snapshot(a, snap);
	req = send_rollback(a, snap);
	call = expect_tar_check();
	assert_true(record_exists(a));
	tar_result(MSG_TAR_CHECKED, call, 0, strlen(TAR_BYTES), NULL);
	call = expect_proxy_id(MSG_DOCKER_DESTROY, a);
	assert_false(record_exists(a));
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	call = expect_create(NULL);
	assert_false(record_exists(a));
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	put = expect_put(a);
	assert_false(record_exists(a));

	/* What a restart now would find: a running container, no record. */
	reaper_stop();
	recover_start(recover_done);
	list = expect_proxy(MSG_DOCKER_LIST, NULL);
	list_item(list, a, 1, 1);
	from_proxy(MSG_DOCKER_LIST_END, list, NULL);
	call = expect_proxy_id(MSG_DOCKER_DESTROY, a);
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	assert_int_equal(recovered, 1);
	reaper_init(env->base);

	/* Here no restart happened: the rollback completes. */
	from_proxy(MSG_DOCKER_DONE, put, NULL);
	assert_true(record_exists(a));
	call = expect_proxy_id(MSG_DOCKER_STATE, a);
	state_reply(call, 1, 1);
	expect_info(req, &info);
	assert_string_equal(info.source_snapshot_id, snap);
	sandbox_info_free(&info);
}

static void
test_rollback_not_found(void **state)
{
	char		 a[SANDBOX_ID_LEN + 1], snap[SNAPSHOT_ID_LEN + 1];
	uint32_t	 req;

	sandbox_and_snapshot(a, snap);
	/* The snapshot is looked up first. */
	req = send_rollback("sb_0000000000000000", "snap_0000000000000000");
	expect_apid_error(req, ERR_NOT_FOUND,
	    "snapshot snap_0000000000000000 not found");
	req = send_rollback(a, "../../sandboxes/x");
	expect_apid_error(req, ERR_NOT_FOUND,
	    "snapshot ../../sandboxes/x not found");
	req = send_rollback("sb_0000000000000000", snap);
	expect_apid_error(req, ERR_NOT_FOUND,
	    "sandbox sb_0000000000000000 not found");
	no_proxy_message();
}

static void
test_rollback_bad_tar(void **state)
{
	char		 a[SANDBOX_ID_LEN + 1], snap[SNAPSHOT_ID_LEN + 1];
	char		 text[192];
	uint32_t	 req, call;

	sandbox_and_snapshot(a, snap);
	req = send_rollback(a, snap);
	call = expect_tar_check();
	tar_result(MSG_TAR_CHECKED, call, EINVAL, 0,
	    "member '/etc/passwd' is not relative");
	snprintf(text, sizeof(text), "snapshot %s cannot be restored: member "
	    "'/etc/passwd' is not relative", snap);
	expect_apid_error(req, ERR_INVALID_REQUEST, text);
	/* Untouched. */
	no_proxy_message();
	assert_non_null(sandbox_find(a));
	assert_true(record_exists(a));
	assert_null(sandbox_find(a)->rec.source_snapshot_id);

	/* A check that died says so, and is not the snapshot's fault. */
	req = send_rollback(a, snap);
	call = expect_tar_check();
	tar_result(MSG_TAR_CHECKED, call, EPIPE, 0, "the archive worker "
	    "died: killed by signal 31 (SIGSYS: a forbidden system call)");
	snprintf(text, sizeof(text), "cannot check snapshot %s: the archive "
	    "worker died: killed by signal 31 (SIGSYS: a forbidden system "
	    "call)", snap);
	expect_apid_error(req, ERR_BACKEND, text);
	no_proxy_message();
	assert_true(record_exists(a));

	/* Nor one that could not start: the worker was starting again. */
	req = send_rollback(a, snap);
	call = expect_tar_check();
	tar_result(MSG_TAR_CHECKED, call, ENXIO, 0,
	    "cannot start the snapshot check");
	snprintf(text, sizeof(text), "cannot check snapshot %s: cannot start "
	    "the snapshot check", snap);
	expect_apid_error(req, ERR_BACKEND, text);
	no_proxy_message();
	assert_true(record_exists(a));
	/* And not locked: a delete goes through. */
	destroy_ok(a);
}

/*
 * apid dies while it checks the stored tar: the check fails (502) and the
 * rollback ends before anything changed; its answer goes nowhere.
 */
static void
test_rollback_apid_dies(void **state)
{
	char		 a[SANDBOX_ID_LEN + 1], snap[SNAPSHOT_ID_LEN + 1];

	sandbox_and_snapshot(a, snap);
	(void)send_rollback(a, snap);
	(void)expect_tar_check();
	apid_dies();
	run_deferred();
	apid_back();
	no_apid_message();
	no_proxy_message();
	assert_non_null(sandbox_find(a));
	assert_true(record_exists(a));
	assert_int_equal(apid_request_count(), 0);
	destroy_ok(a);
}

/*
 * The check cut off (apid_calls_fail(), as at apid's death) fails the
 * rollback with a 502 before anything changed.  Here the request itself
 * is not cut off, so that its answer can be seen.
 */
static void
test_rollback_check_cut_off(void **state)
{
	char		 a[SANDBOX_ID_LEN + 1], snap[SNAPSHOT_ID_LEN + 1];
	uint32_t	 req;

	sandbox_and_snapshot(a, snap);
	req = send_rollback(a, snap);
	(void)expect_tar_check();
	apid_calls_fail();
	run_deferred();
	expect_apid_error(req, ERR_BACKEND, "apid restarted");
	no_proxy_message();
	assert_non_null(sandbox_find(a));
	assert_true(record_exists(a));
	destroy_ok(a);
}

static void
test_rollback_create_fails(void **state)
{
	char		 a[SANDBOX_ID_LEN + 1], snap[SNAPSHOT_ID_LEN + 1];
	char		 text[128];
	uint32_t	 req, call;

	sandbox_and_snapshot(a, snap);
	call = rollback_destroying(a, snap, &req);
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	call = expect_create(NULL);
	error_reply(call, ERR_BACKEND, "image pull failed");
	/* Whatever was made is destroyed; then the sandbox is gone. */
	call = expect_proxy_id(MSG_DOCKER_DESTROY, a);
	no_apid_message();
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	snprintf(text, sizeof(text), "image pull failed; sandbox %s was "
	    "removed", a);
	expect_apid_error(req, ERR_BACKEND, text);
	assert_null(sandbox_find(a));
	assert_false(record_exists(a));
	assert_int_equal(sandbox_count(), 0);
	/* The snapshot stays. */
	assert_true(snapshot_file_exists(snap, ".tar"));
}

static void
test_rollback_import_fails(void **state)
{
	char		 a[SANDBOX_ID_LEN + 1], snap[SNAPSHOT_ID_LEN + 1];
	char		 text[128];
	uint32_t	 req, call;

	sandbox_and_snapshot(a, snap);
	call = rollback_destroying(a, snap, &req);
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	call = expect_create(NULL);
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	call = expect_put(a);
	error_reply(call, ERR_INVALID_REQUEST, "cannot extract app/x");
	call = expect_proxy_id(MSG_DOCKER_DESTROY, a);
	error_reply(call, ERR_BACKEND, "Docker is down");	/* logged */
	snprintf(text, sizeof(text), "cannot extract app/x; sandbox %s was "
	    "removed", a);
	expect_apid_error(req, ERR_INVALID_REQUEST, text);
	assert_null(sandbox_find(a));
	assert_false(record_exists(a));

	/* The destroy itself failing removes it too. */
	create_ok(0, a, sizeof(a));
	call = rollback_destroying(a, snap, &req);
	error_reply(call, ERR_BACKEND, "volume in use");
	call = expect_proxy_id(MSG_DOCKER_DESTROY, a);
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	snprintf(text, sizeof(text), "volume in use; sandbox %s was removed",
	    a);
	expect_apid_error(req, ERR_BACKEND, text);
	assert_false(record_exists(a));
	assert_int_equal(sandbox_count(), 0);
}

/* --- fork ----------------------------------------------------------------- */

static uint32_t
send_fork(struct fork_request *fr, const char *snap)
{
	struct msgw	 w;
	char		 id[MSG_MAX_ID];

	strlcpy(id, snap, sizeof(id));
	fr->snapshot_id = id;
	msgw_init(&w);
	msg_put_fork_request(&w, fr);
	return from_apid(MSG_SNAPSHOT_FORK, -1, &w);
}

static void
test_fork(void **state)
{
	struct fork_request	 fr;
	struct sandbox_info	 info;
	struct docker_create	 dc;
	char			 a[SANDBOX_ID_LEN + 1];
	char			 snap[SNAPSHOT_ID_LEN + 1];
	uint32_t		 req, call;

	create_ok(3600, a, sizeof(a));
	snapshot_ok(a, NULL, snap);
	/* The source is gone: a fork does not need it. */
	destroy_ok(a);
	now += 50;
	memset(&fr, 0, sizeof(fr));
	fr.has_cpus = 1;
	fr.cpus = 0.5;
	fr.has_network = 1;
	fr.network = 1;
	req = send_fork(&fr, snap);
	assert_int_equal(quota_pending(), 1);
	tar_accepted();
	call = expect_create(&dc);
	assert_true(id_is_sandbox(dc.id));
	assert_string_not_equal(dc.id, a);
	assert_true(dc.spec.cpus == 0.5);
	assert_true(dc.spec.network);
	assert_int_equal(dc.spec.memory_mb, 512);
	assert_true(dc.spec.read_only_rootfs);
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	call = expect_put(dc.id);
	no_apid_message();
	assert_false(record_exists(dc.id));
	now += 1;
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	expect_info(req, &info);
	assert_string_equal(info.id, dc.id);
	assert_true(info.running);
	assert_string_equal(info.source_snapshot_id, snap);
	assert_true(info.cpus == 0.5);
	assert_true(info.created_at == now);
	/* The server's default TTL, not the source's. */
	assert_true(info.expires_at == now + 900);
	assert_true(record_exists(dc.id));
	assert_int_equal(sandbox_count(), 1);
	assert_int_equal(quota_pending(), 0);
	sandbox_info_free(&info);
	docker_create_free(&dc);
}

static void
test_fork_checks(void **state)
{
	struct fork_request	 fr;
	char			 a[SANDBOX_ID_LEN + 1];
	char			 snap[SNAPSHOT_ID_LEN + 1];
	uint32_t		 req;

	memset(&fr, 0, sizeof(fr));
	req = send_fork(&fr, "snap_0000000000000000");
	expect_apid_error(req, ERR_NOT_FOUND,
	    "snapshot snap_0000000000000000 not found");

	sandbox_and_snapshot(a, snap);
	fr.has_cpus = 1;
	fr.cpus = 100;
	expect_apid_error(send_fork(&fr, snap), ERR_INVALID_REQUEST,
	    "cpus must be in (0, 4.0]");
	memset(&fr, 0, sizeof(fr));
	fr.has_memory_mb = 1;
	fr.memory_mb = 8;
	expect_apid_error(send_fork(&fr, snap), ERR_INVALID_REQUEST,
	    "memory_mb must be in [16, 4096]");
	memset(&fr, 0, sizeof(fr));
	fr.has_network = 1;
	fr.network = 1;
	expect_apid_error(send_fork(&fr, snap), ERR_FORBIDDEN,
	    "this server does not allow sandboxes with network access");
	memset(&fr, 0, sizeof(fr));
	fr.has_timeout_seconds = 1;
	fr.timeout_seconds = 86401;
	expect_apid_error(send_fork(&fr, snap), ERR_INVALID_REQUEST,
	    "timeout_seconds must be in [1, 86400]");
	/* Valid, but the fixture's quota of 3 is used up. */
	create_ok(0, a, sizeof(a));
	create_ok(0, a, sizeof(a));
	memset(&fr, 0, sizeof(fr));
	expect_apid_error(send_fork(&fr, snap), ERR_LIMIT_EXCEEDED,
	    "the server already runs the maximum of 3 sandboxes");
	no_proxy_message();
	assert_int_equal(quota_pending(), 0);
}

static void
test_fork_failures(void **state)
{
	struct fork_request	 fr;
	struct docker_create	 dc;
	char			 a[SANDBOX_ID_LEN + 1], text[128];
	char			 snap[SNAPSHOT_ID_LEN + 1];
	uint32_t		 req, call;

	sandbox_and_snapshot(a, snap);
	memset(&fr, 0, sizeof(fr));
	/* A tar that may not be restored: nothing is created. */
	req = send_fork(&fr, snap);
	call = expect_tar_check();
	tar_result(MSG_TAR_CHECKED, call, EIO, 0, "broken archive");
	snprintf(text, sizeof(text), "snapshot %s cannot be restored: broken "
	    "archive", snap);
	expect_apid_error(req, ERR_INVALID_REQUEST, text);
	no_proxy_message();
	assert_int_equal(quota_pending(), 0);

	/* The import fails: the new sandbox is destroyed, the slot freed. */
	req = send_fork(&fr, snap);
	tar_accepted();
	call = expect_create(&dc);
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	call = expect_put(dc.id);
	error_reply(call, ERR_BACKEND, "no space left on device");
	call = expect_proxy_id(MSG_DOCKER_DESTROY, dc.id);
	assert_int_equal(quota_pending(), 1);
	no_apid_message();
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	expect_apid_error(req, ERR_BACKEND, "no space left on device");
	assert_false(record_exists(dc.id));
	assert_null(sandbox_find(dc.id));
	assert_int_equal(sandbox_count(), 1);
	assert_int_equal(quota_pending(), 0);
	docker_create_free(&dc);

	/* The create fails: relayed. */
	req = send_fork(&fr, snap);
	tar_accepted();
	call = expect_create(NULL);
	error_reply(call, ERR_BACKEND, "image pull failed");
	expect_apid_error(req, ERR_BACKEND, "image pull failed");
	assert_int_equal(sandbox_count(), 1);
	assert_int_equal(quota_pending(), 0);
}

/* --- restart -------------------------------------------------------------- */

static void
test_recover_leftovers(void **state)
{
	static const char *const files[] = {
		"snapshots/snap_0000000000000001.tar",
		"snapshots/snap_0000000000000001.json",
		"snapshots/snap_0000000000000002.tmp",
		"snapshots/snap_0000000000000003.json.tmp",
		/* A crash between a tar and its record: no snapshot. */
		"snapshots/snap_0000000000000004.tar",
		/* Not ours to judge. */
		"snapshots/snap_0000000000000005.json",
		"snapshots/notes.tar",
	};
	size_t		 i;
	uint32_t	 call;
	int		 fd;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		fd = openat(env->datadir_fd, files[i], O_CREAT | O_WRONLY,
		    0600);
		assert_true(fd != -1);
		close(fd);
	}
	reaper_stop();
	recover_start(recover_done);
	call = expect_proxy(MSG_DOCKER_LIST, NULL);
	from_proxy(MSG_DOCKER_LIST_END, call, NULL);
	assert_int_equal(recovered, 1);
	assert_int_equal(faccessat(env->datadir_fd, files[0], F_OK, 0), 0);
	assert_int_equal(faccessat(env->datadir_fd, files[1], F_OK, 0), 0);
	assert_int_equal(faccessat(env->datadir_fd, files[2], F_OK, 0), -1);
	assert_int_equal(faccessat(env->datadir_fd, files[3], F_OK, 0), -1);
	assert_int_equal(faccessat(env->datadir_fd, files[4], F_OK, 0), -1);
	assert_int_equal(faccessat(env->datadir_fd, files[5], F_OK, 0), 0);
	assert_int_equal(faccessat(env->datadir_fd, files[6], F_OK, 0), 0);
	reaper_init(env->base);
}

/*
 * apid may not report a write or a check nobody asked for: fatal.  Run in
 * a child whose last words must be managerd's fatal log line.
 */
static void
assert_fatal(void (*f)(void), const char *words)
{
	char	 out[8192];
	size_t	 got = 0;
	ssize_t	 n;
	pid_t	 pid;
	int	 fds[2], status;

	assert_int_equal(pipe(fds), 0);
	assert_true((pid = fork()) != -1);
	if (pid == 0) {
		close(fds[0]);
		dup2(fds[1], STDOUT_FILENO);
		dup2(fds[1], STDERR_FILENO);
		close(fds[1]);
		f();
		_exit(0);
	}
	close(fds[1]);
	while (got < sizeof(out) - 1 &&
	    (n = read(fds[0], out + got, sizeof(out) - 1 - got)) > 0)
		got += (size_t)n;
	out[got] = '\0';
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 1 ||
	    strstr(out, "CRITICAL") == NULL || strstr(out, words) == NULL)
		fail_msg("expected a fatal \"%s\"; the child said:\n%s",
		    words, out);
}

static void
lie_written(void)
{
	tar_result(MSG_SNAPSHOT_WRITTEN, 12345, 0, 0, NULL);
}

static void
lie_checked(void)
{
	tar_result(MSG_TAR_CHECKED, 12345, 0, 0, NULL);
}

/* A retry of a snapshot that was already retried: a lie. */
static void
lie_retry_twice(void)
{
	struct snap_sent	 s;
	char			 sb[SANDBOX_ID_LEN + 1];

	create_ok(0, sb, sizeof(sb));
	snapshot_started(sb, NULL, &s);
	(void)apid_retries(&s, "a FIFO");
	(void)apid_retries(&s, "a FIFO");
}

static void
lie_retry_unknown(void)
{
	struct snap_sent	 s;

	s.req = 12345;
	(void)apid_retries(&s, "a FIFO");
}

static void
test_apid_lies(void **state)
{
	assert_fatal(lie_retry_twice, "was no copy");
	assert_fatal(lie_retry_unknown, "no snapshot is being written for "
	    "request 12345");
	assert_fatal(lie_written, "no snapshot is being written for request "
	    "12345");
	assert_fatal(lie_checked, "reply to no pending call");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_snapshot_written_first,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_snapshot_done_first,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_snapshot_retry_first,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_snapshot_retry_after_export,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_snapshot_retry_fails,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_snapshot_unknown_sandbox,
		    setup, teardown),
		cmocka_unit_test_prestate_setup_teardown(
		    test_snapshot_too_large, setup_with, teardown, small_limit),
		cmocka_unit_test_setup_teardown(test_snapshot_failures,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_snapshot_apid_error,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_snapshot_lock,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_snapshot_apid_dies,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_many, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_list_get_delete,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_rollback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rollback_record_order,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_rollback_not_found,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_rollback_bad_tar,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_rollback_apid_dies,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_rollback_check_cut_off,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_rollback_create_fails,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_rollback_import_fails,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_fork, setup, teardown),
		cmocka_unit_test_prestate_setup_teardown(test_fork_checks,
		    setup_with, teardown, no_network),
		cmocka_unit_test_setup_teardown(test_fork_failures,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_recover_leftovers,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_apid_lies, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
