/*
 * managerd's sandbox logic at its message boundary: requests go in through
 * dispatch_apid() as apid would send them, the test plays dockerd-proxy
 * (it reads managerd's DOCKER_* messages off a real socketpair and answers
 * through dispatch_proxy()), and reads the answers apid would get.  The
 * wall clock is ours; the store writes to a temporary data directory.
 * Covers REFERENCE-TESTS.md H 41-51 (manager parts) and 58.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
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

#include "log.h"
#include "managerd.h"

struct managerd		*env;

static struct managerd	 menv;
static struct imsgbuf	 apid_side, proxy_side;
static char		 datadir[64];
static double		 now;
static uint32_t		 next_apid_id;
static int		 recover_result;

static double
fake_wall(void)
{
	return now;
}

/* dispatch_*() report a child's MSG_READY; nothing to do here. */
void
child_ready(struct child *c)
{
	c->ready = 1;
}

static void
peer_gone(struct peer *p)
{
	fail_msg("%s went away", p->name);
}

static void
setup_env(char **settings)
{
	static char	 insecure[] = "AGENT_SANDBOX_INSECURE_NO_AUTH=true";
	static char	 quota[] = "AGENT_SANDBOX_MAX_SANDBOXES=3";
	char		*envp[32], dirsetting[128], err[256];
	size_t		 n = 0;
	int		 a[2], p[2];

	memset(&menv, 0, sizeof(menv));
	env = &menv;
	TAILQ_INIT(&env->calls);
	env->next_call_id = 1;
	strlcpy(datadir, "/tmp/test_manager.XXXXXX", sizeof(datadir));
	assert_non_null(mkdtemp(datadir));
	snprintf(dirsetting, sizeof(dirsetting), "AGENT_SANDBOX_DATA_DIR=%s",
	    datadir);
	envp[n++] = insecure;
	envp[n++] = quota;
	envp[n++] = dirsetting;
	while (settings != NULL && *settings != NULL)
		envp[n++] = *settings++;
	envp[n] = NULL;
	if (config_load(&env->conf, envp, err, sizeof(err)) == -1)
		fail_msg("config: %s", err);
	env->datadir_fd = open(datadir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(env->datadir_fd != -1);
	assert_int_equal(mkdirat(env->datadir_fd, "sandboxes", 0700), 0);
	assert_int_equal(mkdirat(env->datadir_fd, "snapshots", 0700), 0);

	assert_non_null(env->base = event_base_new());
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0, a), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0, p), 0);
	peer_init(&env->apid_peer, env->base, a[0], "apid", dispatch_apid,
	    peer_gone, NULL);
	peer_init(&env->proxy_peer, env->base, p[0], "dockerd-proxy",
	    dispatch_proxy, peer_gone, NULL);
	imsgbuf_init(&apid_side, a[1]);
	imsgbuf_init(&proxy_side, p[1]);
	now = 1700000000.0;
	clock_wall = fake_wall;
	next_apid_id = 100;
	reaper_init(env->base);
}

static int
setup(void **state)
{
	setup_env(NULL);
	return 0;
}

/* The data directory holds two flat directories of files. */
static void
remove_dir(int parent, const char *name)
{
	struct dirent	*de;
	DIR		*d;
	int		 fd;

	if ((fd = openat(parent, name, O_RDONLY | O_DIRECTORY)) == -1 ||
	    (d = fdopendir(fd)) == NULL) {
		if (fd != -1)
			close(fd);
		unlinkat(parent, name, 0);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0)
			unlinkat(dirfd(d), de->d_name, 0);
	}
	closedir(d);
	unlinkat(parent, name, AT_REMOVEDIR);
}

static int
teardown(void **state)
{
	struct imsg	 imsg;

	/* Nothing may be left unanswered or unread. */
	assert_int_equal(imsgbuf_flush(&env->apid_peer.ibuf), 0);
	assert_int_equal(imsgbuf_flush(&env->proxy_peer.ibuf), 0);
	imsgbuf_read(&apid_side);
	imsgbuf_read(&proxy_side);
	assert_int_equal(imsg_get(&apid_side, &imsg), 0);
	assert_int_equal(imsg_get(&proxy_side, &imsg), 0);
	assert_true(TAILQ_EMPTY(&env->calls));
	assert_int_equal(exec_count(), 0);

	reaper_stop();
	sandbox_table_clear();
	peer_stop(&env->apid_peer);
	peer_stop(&env->proxy_peer);
	close(env->apid_peer.ibuf.sock);
	close(env->proxy_peer.ibuf.sock);
	imsgbuf_clear(&apid_side);
	imsgbuf_clear(&proxy_side);
	close(apid_side.sock);
	close(proxy_side.sock);
	event_base_free(env->base);
	remove_dir(env->datadir_fd, "sandboxes");
	remove_dir(env->datadir_fd, "snapshots");
	close(env->datadir_fd);
	rmdir(datadir);
	config_free(&env->conf);
	return 0;
}

/* --- the message boundary ------------------------------------------------- */

static void
fake_imsg(struct imsg *imsg, uint32_t type, uint32_t peerid, int fd,
    struct msgw *w)
{
	memset(imsg, 0, sizeof(*imsg));
	imsg->hdr.type = type;
	imsg->hdr.peerid = peerid;
	imsg->fd = fd;
	if (w != NULL && w->len > 0) {
		imsg->len = w->len;
		imsg->hdr.len = (uint32_t)w->len;
		imsg->data = malloc(w->len);
		assert_non_null(imsg->data);
		memcpy(imsg->data, w->buf, w->len);
	}
}

/* apid -> managerd; returns the request's id. */
static uint32_t
from_apid(uint32_t type, int fd, struct msgw *w)
{
	struct imsg	 imsg;
	uint32_t	 id = next_apid_id++;

	fake_imsg(&imsg, type, id, fd, w);
	dispatch_apid(&env->apid_peer, &imsg);
	imsg_free(&imsg);
	return id;
}

/* dockerd-proxy -> managerd. */
static void
from_proxy(uint32_t type, uint32_t peerid, struct msgw *w)
{
	struct imsg	 imsg;

	fake_imsg(&imsg, type, peerid, -1, w);
	dispatch_proxy(&env->proxy_peer, &imsg);
	imsg_free(&imsg);
}

static int
next_msg(struct peer *p, struct imsgbuf *side, struct imsg *imsg)
{
	int	 r;

	assert_int_equal(imsgbuf_flush(&p->ibuf), 0);
	if ((r = imsg_get(side, imsg)) != 0)
		return r;
	if (imsgbuf_read(side) <= 0)
		return 0;
	return imsg_get(side, imsg);
}

static int
to_proxy(struct imsg *imsg)
{
	return next_msg(&env->proxy_peer, &proxy_side, imsg);
}

static int
to_apid(struct imsg *imsg)
{
	return next_msg(&env->apid_peer, &apid_side, imsg);
}

static void
no_proxy_message(void)
{
	struct imsg	 imsg;

	if (to_proxy(&imsg) == 1)
		fail_msg("unexpected %s to the proxy",
		    msg_type_name(imsg.hdr.type));
}

static void
no_apid_message(void)
{
	struct imsg	 imsg;

	if (to_apid(&imsg) == 1)
		fail_msg("unexpected %s to apid", msg_type_name(imsg.hdr.type));
}

/* The next message to the proxy must be of this type; returns its id. */
static uint32_t
expect_proxy(uint32_t type, struct imsg *out)
{
	struct imsg	 imsg;

	assert_int_equal(to_proxy(&imsg), 1);
	if (imsg.hdr.type != type)
		fail_msg("proxy got %s, not %s", msg_type_name(imsg.hdr.type),
		    msg_type_name(type));
	if (out != NULL)
		*out = imsg;
	else
		imsg_free(&imsg);
	return imsg.hdr.peerid;
}

/* A proxy request whose payload is one id: check it. */
static uint32_t
expect_proxy_id(uint32_t type, const char *id)
{
	struct imsg	 imsg;
	uint32_t	 call;
	char		*s;

	call = expect_proxy(type, &imsg);
	assert_non_null(s = msg_get_string(&imsg, MSG_MAX_ID));
	assert_string_equal(s, id);
	free(s);
	imsg_free(&imsg);
	return call;
}

static void
expect_apid_error(uint32_t id, enum error_kind kind, const char *text)
{
	struct imsg	 imsg;
	struct msgr	 r;
	char		*s;

	assert_int_equal(to_apid(&imsg), 1);
	if (imsg.hdr.type != MSG_ERROR)
		fail_msg("apid got %s, not an error",
		    msg_type_name(imsg.hdr.type));
	assert_int_equal(imsg.hdr.peerid, id);
	msgr_init(&r, &imsg);
	assert_int_equal(msgr_u32(&r), kind);
	s = msgr_str(&r, MSG_MAX_STRING);
	assert_int_equal(msgr_end(&r), 0);
	assert_string_equal(s, text);
	free(s);
	imsg_free(&imsg);
}

static void
expect_apid(uint32_t id, uint32_t type)
{
	struct imsg	 imsg;

	assert_int_equal(to_apid(&imsg), 1);
	if (imsg.hdr.type != type)
		fail_msg("apid got %s, not %s", msg_type_name(imsg.hdr.type),
		    msg_type_name(type));
	assert_int_equal(imsg.hdr.peerid, id);
	assert_int_equal(imsg.len, 0);
	imsg_free(&imsg);
}

static void
expect_info(uint32_t id, struct sandbox_info *info)
{
	struct imsg	 imsg;

	assert_int_equal(to_apid(&imsg), 1);
	if (imsg.hdr.type != MSG_SANDBOX_INFO)
		fail_msg("apid got %s, not SANDBOX_INFO",
		    msg_type_name(imsg.hdr.type));
	assert_int_equal(imsg.hdr.peerid, id);
	assert_int_equal(msg_get_sandbox_info(&imsg, info), 0);
	imsg_free(&imsg);
}

static void
error_reply(uint32_t call, enum error_kind kind, const char *text)
{
	struct msgw	 w;

	msgw_init(&w);
	msgw_u32(&w, kind);
	msgw_str(&w, text);
	from_proxy(MSG_ERROR, call, &w);
}

static void
state_reply(uint32_t call, int exists, int running)
{
	struct msgw	 w;

	msgw_init(&w);
	msgw_u8(&w, exists);
	msgw_u8(&w, running);
	from_proxy(MSG_DOCKER_STATE_RESULT, call, &w);
}

static void
list_item(uint32_t call, const char *id, int container, int running)
{
	struct msgw	 w;

	msgw_init(&w);
	msgw_str(&w, id);
	msgw_u8(&w, container);
	msgw_u8(&w, running);
	from_proxy(MSG_DOCKER_LIST_ITEM, call, &w);
}

/* --- requests ------------------------------------------------------------- */

/* A create request as the SDK sends it: network, read_only_rootfs, env. */
static void
create_request_init(struct create_request *c)
{
	memset(c, 0, sizeof(*c));
	c->read_only_rootfs = 1;
}

static uint32_t
send_create(struct create_request *c)
{
	struct msgw	 w;
	uint32_t	 id;

	msgw_init(&w);
	msg_put_create_request(&w, c);
	id = from_apid(MSG_SANDBOX_CREATE, -1, &w);
	create_request_free(c);
	return id;
}

static uint32_t
send_create_ttl(int64_t ttl)
{
	struct create_request	 c;

	create_request_init(&c);
	if (ttl > 0) {
		c.has_timeout_seconds = 1;
		c.timeout_seconds = ttl;
	}
	return send_create(&c);
}

/* Answer a pending DOCKER_CREATE; fills *dc if not NULL. */
static uint32_t
expect_create(struct docker_create *dc)
{
	struct docker_create	 d;
	struct imsg		 imsg;
	uint32_t		 call;

	call = expect_proxy(MSG_DOCKER_CREATE, &imsg);
	assert_int_equal(msg_get_docker_create(&imsg, &d), 0);
	imsg_free(&imsg);
	if (dc != NULL)
		*dc = d;
	else
		docker_create_free(&d);
	return call;
}

/* A whole successful create; the new id goes to id. */
static void
create_ok(int64_t ttl, char *id, size_t len)
{
	struct sandbox_info	 info;
	uint32_t		 req, call;

	req = send_create_ttl(ttl);
	call = expect_create(NULL);
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	expect_info(req, &info);
	assert_true(info.running);
	strlcpy(id, info.id, len);
	sandbox_info_free(&info);
}

static uint32_t
send_id(uint32_t type, const char *id)
{
	struct msgw	 w;

	msgw_init(&w);
	msg_put_string(&w, id);
	return from_apid(type, -1, &w);
}

static uint32_t
send_timeout(const char *id, int64_t secs)
{
	struct msgw	 w;

	msgw_init(&w);
	msgw_str(&w, id);
	msgw_i64(&w, secs);
	return from_apid(MSG_SANDBOX_TIMEOUT, -1, &w);
}

static void
destroy_ok(const char *id)
{
	uint32_t	 req, call;

	req = send_id(MSG_SANDBOX_DELETE, id);
	call = expect_proxy_id(MSG_DOCKER_DESTROY, id);
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	expect_apid(req, MSG_OK);
}

static int
record_exists(const char *id)
{
	char		 path[64];
	struct stat	 st;

	snprintf(path, sizeof(path), "sandboxes/%s.json", id);
	return fstatat(env->datadir_fd, path, &st, 0) == 0;
}

/* --- H 41-46: create ------------------------------------------------------ */

static void
test_create_defaults(void **state)
{
	struct create_request	 c;
	struct docker_create	 dc;
	struct sandbox_info	 info;
	uint32_t		 req, call;

	create_request_init(&c);
	req = send_create(&c);
	call = expect_create(&dc);
	assert_int_equal(strlen(dc.id), SANDBOX_ID_LEN);
	assert_true(sandbox_id_valid(dc.id));
	assert_string_equal(dc.spec.image, "python:3.12-slim");
	assert_true(dc.spec.cpus == 1.0);
	assert_int_equal(dc.spec.memory_mb, 512);
	assert_int_equal(dc.spec.pids_limit, 256);
	assert_false(dc.spec.network);
	assert_true(dc.spec.read_only_rootfs);
	assert_int_equal(dc.spec.env.count, 0);
	assert_int_equal(dc.uid, 1000);
	assert_int_equal(dc.gid, 1000);
	assert_int_equal(dc.tmp_size_mb, 256);
	assert_string_equal(dc.runtime, "");
	assert_string_equal(dc.network_name, "agent-sandbox-net");
	/* Nothing is recorded, and nobody answered, before Docker is done. */
	assert_false(record_exists(dc.id));
	no_apid_message();

	now += 5;	/* pulling and starting take time */
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	expect_info(req, &info);
	assert_string_equal(info.id, dc.id);
	assert_true(info.running);
	assert_string_equal(info.image, "python:3.12-slim");
	assert_true(info.cpus == 1.0);
	assert_false(info.network);
	assert_true(info.read_only_rootfs);
	assert_true(info.created_at == now);
	assert_true(info.expires_at == now + 900);
	assert_null(info.source_snapshot_id);
	assert_true(record_exists(dc.id));
	assert_true(reaper_next() == now + 900);
	assert_int_equal(sandbox_count(), 1);
	assert_int_equal(quota_pending(), 0);
	sandbox_info_free(&info);
	docker_create_free(&dc);

	/* "" means the default image too; the request's values go through. */
	create_request_init(&c);
	c.image = strdup("");
	c.has_cpus = 1;
	c.cpus = 0.5;
	c.has_memory_mb = 1;
	c.memory_mb = 256;
	c.network = 1;
	c.read_only_rootfs = 0;
	assert_int_equal(env_list_add(&c.env, "MODE", "test"), 0);
	req = send_create(&c);
	call = expect_create(&dc);
	assert_string_equal(dc.spec.image, "python:3.12-slim");
	assert_true(dc.spec.cpus == 0.5);
	assert_int_equal(dc.spec.memory_mb, 256);
	assert_true(dc.spec.network);
	assert_false(dc.spec.read_only_rootfs);
	assert_int_equal(dc.spec.env.count, 1);
	assert_string_equal(dc.spec.env.keys[0], "MODE");
	assert_string_equal(dc.spec.env.values[0], "test");
	docker_create_free(&dc);
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	expect_info(req, &info);
	assert_true(info.cpus == 0.5);
	assert_true(info.network);
	sandbox_info_free(&info);
}

static void
expect_create_refused(struct create_request *c, enum error_kind kind,
    const char *text)
{
	uint32_t	 req;

	req = send_create(c);
	expect_apid_error(req, kind, text);
	no_proxy_message();
}

static void
test_create_rejects(void **state)
{
	struct create_request	 c;

	create_request_init(&c);
	c.has_cpus = 1;
	c.cpus = 100;
	expect_create_refused(&c, ERR_INVALID_REQUEST,
	    "cpus must be in (0, 4.0]");
	create_request_init(&c);
	c.has_cpus = 1;
	c.cpus = 0;
	expect_create_refused(&c, ERR_INVALID_REQUEST,
	    "cpus must be in (0, 4.0]");
	create_request_init(&c);
	c.has_memory_mb = 1;
	c.memory_mb = 8;
	expect_create_refused(&c, ERR_INVALID_REQUEST,
	    "memory_mb must be in [16, 4096]");
	create_request_init(&c);
	c.has_memory_mb = 1;
	c.memory_mb = 1000000;
	expect_create_refused(&c, ERR_INVALID_REQUEST,
	    "memory_mb must be in [16, 4096]");
	create_request_init(&c);
	c.has_pids_limit = 1;
	c.pids_limit = 2;
	expect_create_refused(&c, ERR_INVALID_REQUEST,
	    "pids_limit must be in [8, 4096]");
	create_request_init(&c);
	c.has_timeout_seconds = 1;
	c.timeout_seconds = 0;
	expect_create_refused(&c, ERR_INVALID_REQUEST,
	    "timeout_seconds must be in [1, 86400]");
	create_request_init(&c);
	c.has_timeout_seconds = 1;
	c.timeout_seconds = 86401;
	expect_create_refused(&c, ERR_INVALID_REQUEST,
	    "timeout_seconds must be in [1, 86400]");
	create_request_init(&c);
	assert_int_equal(env_list_add(&c.env, "OK", "1"), 0);
	assert_int_equal(env_list_add(&c.env, "A=B", "1"), 0);
	expect_create_refused(&c, ERR_INVALID_REQUEST,
	    "invalid environment variable name 'A=B'");
	create_request_init(&c);
	assert_int_equal(env_list_add(&c.env, "", "1"), 0);
	expect_create_refused(&c, ERR_INVALID_REQUEST,
	    "invalid environment variable name ''");

	/* The first failing check wins: §4.2's order. */
	create_request_init(&c);
	c.has_cpus = 1;
	c.cpus = 100;
	c.has_memory_mb = 1;
	c.memory_mb = 8;
	expect_create_refused(&c, ERR_INVALID_REQUEST,
	    "cpus must be in (0, 4.0]");
	create_request_init(&c);
	c.has_pids_limit = 1;
	c.pids_limit = 2;
	c.network = 1;
	c.has_timeout_seconds = 1;
	c.timeout_seconds = 0;
	expect_create_refused(&c, ERR_INVALID_REQUEST,
	    "pids_limit must be in [8, 4096]");
	assert_int_equal(sandbox_count(), 0);
	assert_int_equal(quota_pending(), 0);
}

static int
setup_allowlist(void **state)
{
	static char	 images[] =
	    "AGENT_SANDBOX_ALLOWED_IMAGES=python:*,docker.io/library/*";
	static char	 network[] = "AGENT_SANDBOX_ALLOW_NETWORK=false";
	static char	 cpus[] = "AGENT_SANDBOX_MAX_CPUS=2";
	static char	 image[] = "AGENT_SANDBOX_DEFAULT_IMAGE=alpine:3.20";
	char		*settings[] = { images, network, cpus, image, NULL };

	setup_env(settings);
	return 0;
}

static void
test_create_allowlist(void **state)
{
	struct create_request	 c;
	struct docker_create	 dc;
	uint32_t		 call;

	create_request_init(&c);
	c.image = strdup("python:3.12-slim");
	send_create(&c);
	call = expect_create(&dc);
	assert_string_equal(dc.spec.image, "python:3.12-slim");
	docker_create_free(&dc);
	error_reply(call, ERR_BACKEND, "no Docker today");
	expect_apid_error(next_apid_id - 1, ERR_BACKEND, "no Docker today");

	create_request_init(&c);
	c.image = strdup("evil/miner:latest");
	expect_create_refused(&c, ERR_FORBIDDEN, "image 'evil/miner:latest' "
	    "is not in the server's allowed_images list");
	/* Python's repr() picks its quotes. */
	create_request_init(&c);
	c.image = strdup("it's");
	expect_create_refused(&c, ERR_FORBIDDEN, "image \"it's\" is not in "
	    "the server's allowed_images list");
	/* The default image is subject to the list too. */
	create_request_init(&c);
	expect_create_refused(&c, ERR_FORBIDDEN, "image 'alpine:3.20' "
	    "is not in the server's allowed_images list");
}

static void
test_create_network_forbidden(void **state)
{
	struct create_request	 c;

	create_request_init(&c);
	c.image = strdup("python:3");
	c.network = 1;
	expect_create_refused(&c, ERR_FORBIDDEN,
	    "this server does not allow sandboxes with network access");
	/* The maximum is printed as a Python float. */
	create_request_init(&c);
	c.image = strdup("python:3");
	c.has_cpus = 1;
	c.cpus = 2.5;
	expect_create_refused(&c, ERR_INVALID_REQUEST,
	    "cpus must be in (0, 2.0]");
}

static void
test_quota(void **state)
{
	char		 id[3][SANDBOX_ID_LEN + 1];
	uint32_t	 req;
	int		 i;

	for (i = 0; i < 3; i++)
		create_ok(0, id[i], sizeof(id[i]));
	req = send_create_ttl(0);
	expect_apid_error(req, ERR_LIMIT_EXCEEDED,
	    "the server already runs the maximum of 3 sandboxes");
	no_proxy_message();
	/* A destroyed sandbox frees its slot. */
	destroy_ok(id[1]);
	create_ok(0, id[1], sizeof(id[1]));
	assert_int_equal(sandbox_count(), 3);
}

static void
test_quota_failures_do_not_leak(void **state)
{
	char		 id[SANDBOX_ID_LEN + 1];
	uint32_t	 req, call;
	int		 i;

	for (i = 0; i < 5; i++) {
		req = send_create_ttl(0);
		call = expect_create(NULL);
		error_reply(call, ERR_INVALID_REQUEST,
		    "cannot pull image python:3.12-slim: not found");
		expect_apid_error(req, ERR_INVALID_REQUEST,
		    "cannot pull image python:3.12-slim: not found");
		assert_int_equal(quota_pending(), 0);
	}
	assert_int_equal(sandbox_count(), 0);
	create_ok(0, id, sizeof(id));
	assert_int_equal(sandbox_count(), 1);
}

static void
test_quota_counts_creates_in_flight(void **state)
{
	uint32_t	 req[4], call[3];
	struct sandbox_info info;
	int		 i;

	for (i = 0; i < 3; i++) {
		req[i] = send_create_ttl(0);
		call[i] = expect_create(NULL);
	}
	assert_int_equal(quota_pending(), 3);
	req[3] = send_create_ttl(0);
	expect_apid_error(req[3], ERR_LIMIT_EXCEEDED,
	    "the server already runs the maximum of 3 sandboxes");
	no_proxy_message();

	/* One fails: its slot is free for the next. */
	error_reply(call[1], ERR_BACKEND, "Docker is unreachable: gone");
	expect_apid_error(req[1], ERR_BACKEND, "Docker is unreachable: gone");
	req[1] = send_create_ttl(0);
	call[1] = expect_create(NULL);
	req[3] = send_create_ttl(0);
	expect_apid_error(req[3], ERR_LIMIT_EXCEEDED,
	    "the server already runs the maximum of 3 sandboxes");

	for (i = 0; i < 3; i++) {
		from_proxy(MSG_DOCKER_DONE, call[i], NULL);
		expect_info(req[i], &info);
		sandbox_info_free(&info);
	}
	assert_int_equal(sandbox_count(), 3);
	assert_int_equal(quota_pending(), 0);
	req[3] = send_create_ttl(0);
	expect_apid_error(req[3], ERR_LIMIT_EXCEEDED,
	    "the server already runs the maximum of 3 sandboxes");
}

/* A record that cannot be written: the container goes, nothing is held. */
static void
test_create_record_failure(void **state)
{
	struct docker_create	 dc;
	uint32_t		 req, call;
	int			 fd;

	assert_int_equal(unlinkat(env->datadir_fd, "sandboxes",
	    AT_REMOVEDIR), 0);
	fd = openat(env->datadir_fd, "sandboxes", O_CREAT | O_WRONLY, 0600);
	assert_true(fd != -1);
	close(fd);

	req = send_create_ttl(0);
	call = expect_create(&dc);
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	call = expect_proxy_id(MSG_DOCKER_DESTROY, dc.id);
	/* The slot stays taken until the container is gone. */
	assert_int_equal(quota_pending(), 1);
	no_apid_message();
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	assert_int_equal(quota_pending(), 0);
	assert_int_equal(sandbox_count(), 0);
	{
		struct imsg	 imsg;
		struct msgr	 r;
		char		*s;

		assert_int_equal(to_apid(&imsg), 1);
		assert_int_equal(imsg.hdr.type, MSG_ERROR);
		assert_int_equal(imsg.hdr.peerid, req);
		msgr_init(&r, &imsg);
		assert_int_equal(msgr_u32(&r), ERR_INTERNAL);
		s = msgr_str(&r, MSG_MAX_STRING);
		assert_non_null(s);
		assert_non_null(strstr(s, "cannot record sandbox"));
		assert_non_null(strstr(s, dc.id));
		free(s);
		imsg_free(&imsg);
	}
	docker_create_free(&dc);
	assert_int_equal(unlinkat(env->datadir_fd, "sandboxes", 0), 0);
	assert_int_equal(mkdirat(env->datadir_fd, "sandboxes", 0700), 0);
}

/* --- H 47: destroy, get, list --------------------------------------------- */

static void
test_destroy(void **state)
{
	char			 id[SANDBOX_ID_LEN + 1], msg[64];
	struct sandbox_info	 info;
	uint32_t		 req, call;

	create_ok(0, id, sizeof(id));
	req = send_id(MSG_SANDBOX_GET, id);
	call = expect_proxy_id(MSG_DOCKER_STATE, id);
	state_reply(call, 1, 1);
	expect_info(req, &info);
	assert_string_equal(info.id, id);
	assert_true(info.running);
	sandbox_info_free(&info);

	destroy_ok(id);
	assert_false(record_exists(id));
	assert_int_equal(sandbox_count(), 0);
	snprintf(msg, sizeof(msg), "sandbox %s not found", id);
	req = send_id(MSG_SANDBOX_GET, id);
	expect_apid_error(req, ERR_NOT_FOUND, msg);
	req = send_id(MSG_SANDBOX_DELETE, id);
	expect_apid_error(req, ERR_NOT_FOUND, msg);
	no_proxy_message();
	req = send_id(MSG_SANDBOX_GET, "../../etc/passwd");
	expect_apid_error(req, ERR_NOT_FOUND,
	    "sandbox ../../etc/passwd not found");
}

static void
test_destroy_error_keeps_record(void **state)
{
	char		 id[SANDBOX_ID_LEN + 1];
	uint32_t	 req, call;

	create_ok(0, id, sizeof(id));
	req = send_id(MSG_SANDBOX_DELETE, id);
	call = expect_proxy_id(MSG_DOCKER_DESTROY, id);
	error_reply(call, ERR_BACKEND, "sandbox x: Docker said 500");
	expect_apid_error(req, ERR_BACKEND, "sandbox x: Docker said 500");
	assert_true(record_exists(id));
	assert_int_equal(sandbox_count(), 1);
	destroy_ok(id);
}

/* Two destroys of one sandbox: the second waits, then gets 404. */
static void
test_destroy_serialized(void **state)
{
	char		 id[SANDBOX_ID_LEN + 1], msg[64];
	uint32_t	 req1, req2, req3, call;

	create_ok(0, id, sizeof(id));
	req1 = send_id(MSG_SANDBOX_DELETE, id);
	call = expect_proxy_id(MSG_DOCKER_DESTROY, id);
	req2 = send_id(MSG_SANDBOX_DELETE, id);
	req3 = send_timeout(id, 100);
	no_proxy_message();
	no_apid_message();
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	snprintf(msg, sizeof(msg), "sandbox %s not found", id);
	expect_apid(req1, MSG_OK);
	expect_apid_error(req2, ERR_NOT_FOUND, msg);
	expect_apid_error(req3, ERR_NOT_FOUND, msg);
	no_proxy_message();
	assert_int_equal(sandbox_count(), 0);
}

/* A get answered after its sandbox was destroyed still has the data. */
static void
test_get_during_destroy(void **state)
{
	char			 id[SANDBOX_ID_LEN + 1];
	struct sandbox_info	 info;
	uint32_t		 get, del, dcall, scall;

	create_ok(0, id, sizeof(id));
	get = send_id(MSG_SANDBOX_GET, id);
	scall = expect_proxy_id(MSG_DOCKER_STATE, id);
	del = send_id(MSG_SANDBOX_DELETE, id);
	dcall = expect_proxy_id(MSG_DOCKER_DESTROY, id);
	from_proxy(MSG_DOCKER_DONE, dcall, NULL);
	expect_apid(del, MSG_OK);
	state_reply(scall, 0, 0);
	expect_info(get, &info);
	assert_string_equal(info.id, id);
	assert_false(info.running);
	sandbox_info_free(&info);
}

static void
test_list(void **state)
{
	char			 id[3][SANDBOX_ID_LEN + 1];
	struct sandbox_info	 info;
	uint32_t		 req, call;
	int			 i;

	/* created_at order, whatever the ids. */
	for (i = 0; i < 3; i++) {
		now += 1;
		create_ok(0, id[i], sizeof(id[i]));
	}
	req = from_apid(MSG_SANDBOX_LIST, -1, NULL);
	call = expect_proxy(MSG_DOCKER_LIST, NULL);
	list_item(call, id[2], 1, 1);
	list_item(call, id[0], 1, 0);
	list_item(call, "sb_0000000000000000", 1, 1);	/* not ours */
	list_item(call, "weird/label", 0, 0);
	no_apid_message();
	from_proxy(MSG_DOCKER_LIST_END, call, NULL);
	for (i = 0; i < 3; i++) {
		expect_info(req, &info);
		assert_string_equal(info.id, id[i]);
		assert_int_equal(info.running, i == 2);
		sandbox_info_free(&info);
	}
	expect_apid(req, MSG_SANDBOX_LIST_END);

	/* Docker down: that error only. */
	req = from_apid(MSG_SANDBOX_LIST, -1, NULL);
	call = expect_proxy(MSG_DOCKER_LIST, NULL);
	list_item(call, id[2], 1, 1);
	error_reply(call, ERR_BACKEND, "Docker is unreachable: refused");
	expect_apid_error(req, ERR_BACKEND, "Docker is unreachable: refused");
	no_apid_message();

	/* No sandboxes: just the end. */
	for (i = 0; i < 3; i++)
		destroy_ok(id[i]);
	req = from_apid(MSG_SANDBOX_LIST, -1, NULL);
	call = expect_proxy(MSG_DOCKER_LIST, NULL);
	from_proxy(MSG_DOCKER_LIST_END, call, NULL);
	expect_apid(req, MSG_SANDBOX_LIST_END);
}

/* --- H 48-49: TTL --------------------------------------------------------- */

static void
test_reaper(void **state)
{
	char			 s[SANDBOX_ID_LEN + 1], l[SANDBOX_ID_LEN + 1];
	struct sandbox_info	 info;
	double			 t0 = now;
	uint32_t		 req, call;

	assert_true(reaper_next() == -1);
	create_ok(1000, l, sizeof(l));
	assert_true(reaper_next() == t0 + 1000);
	create_ok(10, s, sizeof(s));
	/* The timer follows the next expiry, not a polling period. */
	assert_true(reaper_next() == t0 + 10);

	now += 9;
	reaper_run();
	no_proxy_message();
	now += 2;
	reaper_run();
	call = expect_proxy_id(MSG_DOCKER_DESTROY, s);
	no_proxy_message();
	/* While it goes, the timer waits for the next one, not for it. */
	assert_true(reaper_next() == t0 + 1000);
	/* A second run does not queue another destroy behind it. */
	reaper_run();
	no_proxy_message();
	assert_true(TAILQ_EMPTY(&sandbox_find(s)->ops));
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	no_apid_message();
	assert_false(record_exists(s));
	assert_true(record_exists(l));
	assert_true(reaper_next() == t0 + 1000);

	req = from_apid(MSG_SANDBOX_LIST, -1, NULL);
	call = expect_proxy(MSG_DOCKER_LIST, NULL);
	list_item(call, l, 1, 1);
	from_proxy(MSG_DOCKER_LIST_END, call, NULL);
	expect_info(req, &info);
	assert_string_equal(info.id, l);
	sandbox_info_free(&info);
	expect_apid(req, MSG_SANDBOX_LIST_END);
}

/* The timer is armed for real: once due, the event loop reaps. */
static void
test_reaper_timer_fires(void **state)
{
	char		 id[SANDBOX_ID_LEN + 1];
	uint32_t	 call;

	create_ok(1, id, sizeof(id));
	now += 1;
	reaper_schedule();	/* due now: the timer is set to 0 */
	assert_int_equal(event_base_loop(env->base, EVLOOP_ONCE), 0);
	call = expect_proxy_id(MSG_DOCKER_DESTROY, id);
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	assert_true(reaper_next() == -1);
}

/* A failed reap is tried again reap_interval_seconds later. */
static void
test_reaper_retries(void **state)
{
	char		 id[SANDBOX_ID_LEN + 1];
	uint32_t	 call;

	create_ok(5, id, sizeof(id));
	now += 6;
	reaper_run();
	call = expect_proxy_id(MSG_DOCKER_DESTROY, id);
	error_reply(call, ERR_BACKEND, "Docker is unreachable: gone");
	no_apid_message();
	assert_true(record_exists(id));
	assert_true(reaper_next() == now + 10.0);
	now += 5;
	reaper_run();
	no_proxy_message();
	now += 5;
	reaper_run();
	call = expect_proxy_id(MSG_DOCKER_DESTROY, id);
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	assert_int_equal(sandbox_count(), 0);
}

static void
test_timeout_extends_life(void **state)
{
	char			 id[SANDBOX_ID_LEN + 1];
	struct sandbox_info	 info;
	uint32_t		 req, call;

	create_ok(10, id, sizeof(id));
	now += 9;
	req = send_timeout(id, 100);
	call = expect_proxy_id(MSG_DOCKER_STATE, id);
	/* On disk before the answer. */
	assert_true(reaper_next() == now + 100);
	state_reply(call, 1, 1);
	expect_info(req, &info);
	assert_true(info.expires_at == now + 100);
	assert_true(info.running);
	sandbox_info_free(&info);
	now += 50;
	reaper_run();
	no_proxy_message();
	assert_int_equal(sandbox_count(), 1);

	/* The bound is checked before the sandbox's existence. */
	req = send_timeout("sb_nope", 86401);
	expect_apid_error(req, ERR_INVALID_REQUEST,
	    "timeout_seconds must be in [1, 86400]");
	req = send_timeout("sb_nope", 60);
	expect_apid_error(req, ERR_NOT_FOUND, "sandbox sb_nope not found");
	req = send_timeout(id, 0);
	expect_apid_error(req, ERR_INVALID_REQUEST,
	    "timeout_seconds must be in [1, 86400]");
	no_proxy_message();
}

/* The new expiry survives a restart: it is what the record says. */
static void
record_expiry_cb(struct sandbox_record *rec, void *arg)
{
	*(double *)arg = rec->expires_at;
	sandbox_record_free(rec);
	free(rec);
}

static void
test_timeout_is_persisted(void **state)
{
	char			 id[SANDBOX_ID_LEN + 1];
	struct sandbox_info	 info;
	double			 expires = 0;
	uint32_t		 req, call;

	create_ok(10, id, sizeof(id));
	req = send_timeout(id, 3600);
	call = expect_proxy_id(MSG_DOCKER_STATE, id);
	assert_int_equal(store_sandbox_load_all(env->datadir_fd,
	    record_expiry_cb, &expires), 0);
	assert_true(expires == now + 3600);
	/* Docker's state is unknown, the new expiry holds all the same. */
	error_reply(call, ERR_BACKEND, "Docker is unreachable: gone");
	expect_apid_error(req, ERR_BACKEND, "Docker is unreachable: gone");
	req = send_id(MSG_SANDBOX_GET, id);
	call = expect_proxy_id(MSG_DOCKER_STATE, id);
	state_reply(call, 1, 0);
	expect_info(req, &info);
	assert_true(info.expires_at == now + 3600);
	assert_false(info.running);
	sandbox_info_free(&info);
}

/* --- H 50-51: exec -------------------------------------------------------- */

struct exec_sent {
	uint32_t		 req;
	uint32_t		 call;
	struct docker_exec	 dx;
	int			 rfd;		/* the test's end of the pipe */
	int			 passed;	/* what the proxy received */
};

static void
exec_request_init(struct exec_request *e, const char *id)
{
	memset(e, 0, sizeof(*e));
	e->sandbox_id = strdup(id);
	assert_non_null(e->sandbox_id);
}

static void
exec_set_shell(struct exec_request *e, const char *cmd)
{
	e->shell = 1;
	e->argc = 1;
	e->argv = calloc(2, sizeof(char *));
	assert_non_null(e->argv);
	e->argv[0] = strdup(cmd);
}

static void
exec_set_argv(struct exec_request *e, const char *const *argv)
{
	size_t	 n, i;

	for (n = 0; argv[n] != NULL; n++)
		;
	e->argc = n;
	e->argv = calloc(n + 1, sizeof(char *));
	assert_non_null(e->argv);
	for (i = 0; i < n; i++)
		e->argv[i] = strdup(argv[i]);
}

/* Sends the request with a fresh pipe's write end. */
static uint32_t
send_exec(struct exec_request *e, int *rfd)
{
	struct msgw	 w;
	uint32_t	 id;
	int		 p[2];

	assert_int_equal(pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
	msgw_init(&w);
	msg_put_exec_request(&w, e);
	exec_request_free(e);
	id = from_apid(MSG_EXEC_START, p[1], &w);
	*rfd = p[0];
	return id;
}

/* The pipe's write end was closed by managerd: the reader sees EOF. */
static void
assert_pipe_closed(int rfd)
{
	char	 c;

	assert_int_equal(read(rfd, &c, 1), 0);
	close(rfd);
}

static void
exec_sent(struct exec_request *e, struct exec_sent *x)
{
	struct imsg	 imsg;

	x->req = send_exec(e, &x->rfd);
	x->call = expect_proxy(MSG_DOCKER_EXEC, &imsg);
	assert_true(imsg.fd != -1);
	x->passed = imsg_take_fd(&imsg);
	assert_int_equal(msg_get_docker_exec(&imsg, &x->dx), 0);
	imsg_free(&imsg);
}

static void
exec_sent_free(struct exec_sent *x)
{
	docker_exec_free(&x->dx);
	close(x->passed);
	assert_pipe_closed(x->rfd);
}

static void
exec_finish(struct exec_sent *x, int64_t code, int timed_out)
{
	struct exec_exit	 ex;
	struct imsg		 imsg;
	struct msgw		 w;

	from_proxy(MSG_DOCKER_EXEC_STARTED, x->call, NULL);
	expect_apid(x->req, MSG_EXEC_STARTED);
	ex.exit_code = code;
	ex.timed_out = timed_out;
	msgw_init(&w);
	msg_put_exec_exit(&w, &ex);
	from_proxy(MSG_DOCKER_EXEC_EXIT, x->call, &w);
	assert_int_equal(to_apid(&imsg), 1);
	assert_int_equal(imsg.hdr.type, MSG_EXEC_EXIT);
	assert_int_equal(imsg.hdr.peerid, x->req);
	assert_int_equal(msg_get_exec_exit(&imsg, &ex), 0);
	assert_int_equal(ex.exit_code, code);
	assert_int_equal(ex.timed_out, timed_out);
	imsg_free(&imsg);
}

static void
test_exec_shell_form(void **state)
{
	char			 id[SANDBOX_ID_LEN + 1], buf[8];
	struct exec_request	 e;
	struct exec_sent	 x;

	create_ok(0, id, sizeof(id));
	exec_request_init(&e, id);
	exec_set_shell(&e, "echo hi");
	e.workdir = strdup("src");
	assert_int_equal(env_list_add(&e.env, "EXTRA", "x"), 0);
	exec_sent(&e, &x);
	assert_string_equal(x.dx.id, id);
	assert_int_equal(x.dx.argc, 3);
	assert_string_equal(x.dx.argv[0], "/bin/sh");
	assert_string_equal(x.dx.argv[1], "-c");
	assert_string_equal(x.dx.argv[2], "echo hi");
	assert_null(x.dx.argv[3]);
	assert_string_equal(x.dx.workdir, "/workspace/src");
	assert_int_equal(x.dx.env.count, 1);
	assert_string_equal(x.dx.env.keys[0], "EXTRA");
	assert_string_equal(x.dx.env.values[0], "x");
	assert_string_equal(x.dx.user, "1000:1000");
	assert_true(x.dx.timeout_seconds == 60.0);
	/* The proxy got apid's pipe itself. */
	assert_int_equal(write(x.passed, "hi\n", 3), 3);
	assert_int_equal(read(x.rfd, buf, sizeof(buf)), 3);
	assert_memory_equal(buf, "hi\n", 3);
	exec_finish(&x, 0, 0);
	exec_sent_free(&x);
}

static void
test_exec_argv_form(void **state)
{
	static const char *const argv[] = { "printf", "%s|", "a b", "$HOME",
	    NULL };
	static const char *const fail3[] = { "fail", "3", NULL };
	char			 id[SANDBOX_ID_LEN + 1];
	struct exec_request	 e;
	struct exec_sent	 x;

	create_ok(0, id, sizeof(id));
	exec_request_init(&e, id);
	exec_set_argv(&e, argv);
	e.has_timeout = 1;
	e.timeout_seconds = 0.5;
	exec_sent(&e, &x);
	assert_int_equal(x.dx.argc, 4);
	assert_string_equal(x.dx.argv[0], "printf");
	assert_string_equal(x.dx.argv[1], "%s|");
	assert_string_equal(x.dx.argv[2], "a b");
	assert_string_equal(x.dx.argv[3], "$HOME");
	assert_string_equal(x.dx.workdir, "/workspace");
	assert_true(x.dx.timeout_seconds == 0.5);
	exec_finish(&x, 0, 0);
	exec_sent_free(&x);

	/* Exit codes and timeouts are relayed as they are. */
	exec_request_init(&e, id);
	exec_set_argv(&e, fail3);
	e.workdir = strdup("");
	exec_sent(&e, &x);
	assert_string_equal(x.dx.workdir, "/workspace");
	exec_finish(&x, 3, 0);
	exec_sent_free(&x);
	exec_request_init(&e, id);
	exec_set_shell(&e, "hang");
	e.workdir = strdup("/tmp/../etc//");
	exec_sent(&e, &x);
	assert_string_equal(x.dx.workdir, "/etc");
	exec_finish(&x, 137, 1);
	exec_sent_free(&x);
}

static void
expect_exec_refused(struct exec_request *e, enum error_kind kind,
    const char *text)
{
	uint32_t	 req;
	int		 rfd;

	req = send_exec(e, &rfd);
	expect_apid_error(req, kind, text);
	no_proxy_message();
	assert_pipe_closed(rfd);
}

static void
test_exec_rejects(void **state)
{
	static const char *const none[] = { NULL };
	static const char *const empty[] = { "", NULL };
	char			 id[SANDBOX_ID_LEN + 1];
	struct exec_request	 e;
	struct exec_sent	 x;

	create_ok(0, id, sizeof(id));
	exec_request_init(&e, "sb_nope");
	exec_set_shell(&e, "");
	expect_exec_refused(&e, ERR_NOT_FOUND, "sandbox sb_nope not found");
	exec_request_init(&e, id);
	exec_set_shell(&e, "");
	expect_exec_refused(&e, ERR_INVALID_REQUEST,
	    "command must not be empty");
	exec_request_init(&e, id);
	exec_set_shell(&e, "  \t\n ");
	expect_exec_refused(&e, ERR_INVALID_REQUEST,
	    "command must not be empty");
	/* Python's str.strip() knows Unicode spaces (U+3000, U+00A0). */
	exec_request_init(&e, id);
	exec_set_shell(&e, "\xe3\x80\x80\xc2\xa0");
	expect_exec_refused(&e, ERR_INVALID_REQUEST,
	    "command must not be empty");
	exec_request_init(&e, id);
	exec_set_argv(&e, none);
	expect_exec_refused(&e, ERR_INVALID_REQUEST,
	    "command must be a non-empty string or list of strings");
	exec_request_init(&e, id);
	exec_set_shell(&e, "true");
	e.has_timeout = 1;
	e.timeout_seconds = 1e9;
	expect_exec_refused(&e, ERR_INVALID_REQUEST,
	    "timeout_seconds must be in (0, 3600]");
	exec_request_init(&e, id);
	exec_set_shell(&e, "true");
	assert_int_equal(env_list_add(&e.env, "A=B", "x"), 0);
	expect_exec_refused(&e, ERR_INVALID_REQUEST,
	    "invalid environment variable name 'A=B'");
	/* Order: the command before the timeout before the env. */
	exec_request_init(&e, id);
	exec_set_argv(&e, none);
	e.has_timeout = 1;
	e.timeout_seconds = 1e9;
	expect_exec_refused(&e, ERR_INVALID_REQUEST,
	    "command must be a non-empty string or list of strings");
	exec_request_init(&e, id);
	exec_set_shell(&e, "true");
	e.has_timeout = 1;
	e.timeout_seconds = 4000;
	assert_int_equal(env_list_add(&e.env, "", "x"), 0);
	expect_exec_refused(&e, ERR_INVALID_REQUEST,
	    "timeout_seconds must be in (0, 3600]");

	/* [""] is Docker's to refuse (§5.1). */
	exec_request_init(&e, id);
	exec_set_argv(&e, empty);
	exec_sent(&e, &x);
	assert_int_equal(x.dx.argc, 1);
	assert_string_equal(x.dx.argv[0], "");
	error_reply(x.call, ERR_INVALID_REQUEST, "exec failed");
	expect_apid_error(x.req, ERR_INVALID_REQUEST, "exec failed");
	exec_sent_free(&x);
}

/* The proxy's errors before the start reach apid as they are. */
static void
test_exec_backend_errors(void **state)
{
	char			 id[SANDBOX_ID_LEN + 1], msg[64];
	struct exec_request	 e;
	struct exec_sent	 x;

	create_ok(0, id, sizeof(id));
	exec_request_init(&e, id);
	exec_set_shell(&e, "true");
	exec_sent(&e, &x);
	snprintf(msg, sizeof(msg), "sandbox %s is not running", id);
	error_reply(x.call, ERR_INVALID_REQUEST, msg);
	expect_apid_error(x.req, ERR_INVALID_REQUEST, msg);
	exec_sent_free(&x);
	assert_int_equal(exec_count(), 0);
}

static void
test_exec_cancel(void **state)
{
	char			 id[SANDBOX_ID_LEN + 1];
	struct exec_request	 e;
	struct exec_sent	 x;
	struct imsg		 imsg;

	create_ok(0, id, sizeof(id));
	exec_request_init(&e, id);
	exec_set_shell(&e, "sleep 300");
	exec_sent(&e, &x);
	from_proxy(MSG_DOCKER_EXEC_STARTED, x.call, NULL);
	expect_apid(x.req, MSG_EXEC_STARTED);

	/* Exec takes no lock: a timeout on the sandbox goes through. */
	{
		struct sandbox_info	 info;
		uint32_t		 req, call;

		req = send_timeout(id, 60);
		call = expect_proxy_id(MSG_DOCKER_STATE, id);
		state_reply(call, 1, 1);
		expect_info(req, &info);
		sandbox_info_free(&info);
	}

	/* The client went away: the proxy's call is cancelled, once. */
	fake_imsg(&imsg, MSG_EXEC_CANCEL, x.req, -1, NULL);
	dispatch_apid(&env->apid_peer, &imsg);
	dispatch_apid(&env->apid_peer, &imsg);
	imsg_free(&imsg);
	assert_int_equal(expect_proxy(MSG_DOCKER_EXEC_CANCEL, &imsg), x.call);
	assert_int_equal(imsg.len, 0);
	imsg_free(&imsg);
	no_proxy_message();
	{
		struct exec_exit	 ex = { 137, 1 };
		struct msgw		 w;

		msgw_init(&w);
		msg_put_exec_exit(&w, &ex);
		from_proxy(MSG_DOCKER_EXEC_EXIT, x.call, &w);
		assert_int_equal(to_apid(&imsg), 1);
		assert_int_equal(imsg.hdr.type, MSG_EXEC_EXIT);
		imsg_free(&imsg);
	}
	/* Too late to cancel: nothing goes to the proxy. */
	fake_imsg(&imsg, MSG_EXEC_CANCEL, x.req, -1, NULL);
	dispatch_apid(&env->apid_peer, &imsg);
	imsg_free(&imsg);
	no_proxy_message();
	exec_sent_free(&x);
}

/* --- H 58: restart reconciliation ----------------------------------------- */

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
}

/* --- small pieces --------------------------------------------------------- */

static void
test_command_blank(void **state)
{
	assert_true(command_blank(""));
	assert_true(command_blank(" \t\r\n\v\f\x1c\x1f"));
	assert_true(command_blank("\xc2\x85\xe2\x80\xa8\xe1\x9a\x80"));
	assert_false(command_blank("a"));
	assert_false(command_blank(" a "));
	assert_false(command_blank("\xc2"));		/* truncated */
	assert_false(command_blank("\xe0\x80\xa0"));	/* overlong space */
	assert_false(command_blank("\xe2\x80\x8b"));	/* zero width */
}

static void
test_sandbox_ids(void **state)
{
	char	 a[SANDBOX_ID_LEN + 1], b[SANDBOX_ID_LEN + 1];

	sandbox_make_id(a, sizeof(a));
	sandbox_make_id(b, sizeof(b));
	assert_true(sandbox_id_valid(a));
	assert_string_not_equal(a, b);
	assert_false(sandbox_id_valid("sb_0123456789ABCDEF"));
	assert_false(sandbox_id_valid("sb_0123456789abcde"));
	assert_false(sandbox_id_valid("sb_0123456789abcdef0"));
	assert_false(sandbox_id_valid("xb_0123456789abcdef"));
	assert_true(sandbox_id_valid("sb_0123456789abcdef"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f)	cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(test_create_defaults),
		T(test_create_rejects),
		cmocka_unit_test_setup_teardown(test_create_allowlist,
		    setup_allowlist, teardown),
		cmocka_unit_test_setup_teardown(test_create_network_forbidden,
		    setup_allowlist, teardown),
		T(test_quota),
		T(test_quota_failures_do_not_leak),
		T(test_quota_counts_creates_in_flight),
		T(test_create_record_failure),
		T(test_destroy),
		T(test_destroy_error_keeps_record),
		T(test_destroy_serialized),
		T(test_get_during_destroy),
		T(test_list),
		T(test_reaper),
		T(test_reaper_timer_fires),
		T(test_reaper_retries),
		T(test_timeout_extends_life),
		T(test_timeout_is_persisted),
		T(test_exec_shell_form),
		T(test_exec_argv_form),
		T(test_exec_rejects),
		T(test_exec_backend_errors),
		T(test_exec_cancel),
		T(test_recover),
		T(test_recover_without_docker),
		T(test_lies_are_fatal),
		T(test_command_blank),
		T(test_sandbox_ids),
#undef T
	};

	log_init(LOG_TO_STDERR, LOG_LEVEL_WARN, "test_manager");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
