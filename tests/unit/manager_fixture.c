/*
 * The fixture of the test_manager_*.c programs: managerd's sandbox logic
 * at its message boundary.  Requests go in through dispatch_apid() as
 * apid would send them, the test plays dockerd-proxy (it reads managerd's
 * DOCKER_* messages off a real socketpair and answers through
 * dispatch_proxy()), and reads the answers apid would get.  The wall
 * clock is ours; the store writes to a temporary data directory.
 */
#include <sys/socket.h>
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

#include "manager_fixture.h"

struct managerd		*env;
double			 now;
uint32_t		 next_apid_id;

static struct managerd	 menv;
static struct imsgbuf	 apid_side, proxy_side, worker_side;
/* netns-helper and egress-proxy: up and READY from the start. */
static struct imsgbuf	 netns_side, egress_side;
static struct imsgbuf	 spawner_side;	/* what managerd asks the spawner */
static char		 datadir[64];

static double
fake_wall(void)
{
	return now;
}

/*
 * managerd.c's, which is not in here: a test that stops the service ends
 * the test program with status 100 + status and this line, which only a
 * test that forks for it expects.
 */
void
shutdown_all(int status)
{
	fprintf(stderr, "shutdown_all(%d)\n", status);
	exit(100 + status);
}

static void
peer_gone(struct peer *p)
{
	fail_msg("%s went away", p->name);
}

void
setup_env(char **settings)
{
	static char	 insecure[] = "AGENT_SANDBOX_INSECURE_NO_AUTH=true";
	static char	 quota[] = "AGENT_SANDBOX_MAX_SANDBOXES=3";
	/* The reference's "true" unless a test asks for a policy's. */
	static char	 bridge[] = "AGENT_SANDBOX_NETWORK_TRUE=bridge";
	char		*envp[32], dirsetting[128], err[256];
	size_t		 n = 0;
	int		 a[2], p[2], w[2], nh[2], eg[2], sp[2];

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
	envp[n++] = bridge;	/* after the test's: the first one counts */
	envp[n] = NULL;
	if (config_load(&env->conf, envp, err, sizeof(err)) == -1)
		fail_msg("config: %s", err);
	env->datadir_fd = open(datadir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(env->datadir_fd != -1);
	assert_int_equal(mkdirat(env->datadir_fd, "sandboxes", 0700), 0);
	assert_int_equal(mkdirat(env->datadir_fd, "snapshots", 0700), 0);

	assert_non_null(env->base = event_base_new());
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0, w), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0, a), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0, p), 0);
	peer_init(&env->apid_peer, env->base, a[0], "apid", dispatch_apid,
	    peer_gone, NULL);
	peer_init(&env->proxy_peer, env->base, p[0], "dockerd-proxy",
	    dispatch_proxy, peer_gone, NULL);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0, nh), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0, eg), 0);
	peer_init(&env->netns_peer, env->base, nh[0], "netns-helper",
	    dispatch_netns, peer_gone, NULL);
	peer_init(&env->egress_peer, env->base, eg[0], "egress-proxy",
	    dispatch_egress, peer_gone, NULL);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0, sp), 0);
	peer_init(&env->spawner_peer, env->base, sp[0], "spawner",
	    dispatch_spawner, peer_gone, NULL);
	imsgbuf_init(&spawner_side, sp[1]);
	/* The archive worker only ever gets channel ends: worker_drain(). */
	peer_init(&env->worker_peer, env->base, w[0], "archive-worker",
	    dispatch_worker, peer_gone, NULL);
	/* The children run and have said READY. */
	children_init();
	env->child[CHILD_APID].state = env->child[CHILD_PROXY].state =
	    env->child[CHILD_WORKER].state = CHILD_UP;
	env->child[CHILD_APID].ready = env->child[CHILD_PROXY].ready =
	    env->child[CHILD_WORKER].ready = 1;
	env->child[CHILD_APID].was_ready = 1;
	env->child[CHILD_PROXY].was_ready = 1;
	env->child[CHILD_WORKER].was_ready = 1;
	env->child[CHILD_NETNS].state = env->child[CHILD_EGRESS].state =
	    CHILD_UP;
	env->child[CHILD_NETNS].ready = env->child[CHILD_EGRESS].ready = 1;
	env->child[CHILD_NETNS].was_ready = 1;
	env->child[CHILD_EGRESS].was_ready = 1;
	imsgbuf_init(&netns_side, nh[1]);
	imsgbuf_init(&egress_side, eg[1]);
	imsgbuf_init(&apid_side, a[1]);
	imsgbuf_init(&proxy_side, p[1]);
	imsgbuf_init(&worker_side, w[1]);
	now = 1700000000.0;
	clock_wall = fake_wall;
	next_apid_id = 100;
	reaper_init(env->base);
}

int
setup(void **state)
{
	setup_env(NULL);
	return 0;
}

/* The data directory holds flat directories of files. */
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

int
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
	assert_int_equal(imsgbuf_flush(&env->netns_peer.ibuf), 0);
	assert_int_equal(imsgbuf_flush(&env->egress_peer.ibuf), 0);
	imsgbuf_read(&netns_side);
	imsgbuf_read(&egress_side);
	assert_int_equal(imsg_get(&netns_side, &imsg), 0);
	assert_int_equal(imsg_get(&egress_side, &imsg), 0);
	assert_int_equal(imsgbuf_flush(&env->spawner_peer.ibuf), 0);
	imsgbuf_read(&spawner_side);
	assert_int_equal(imsg_get(&spawner_side, &imsg), 0);
	assert_true(TAILQ_EMPTY(&env->calls));
	assert_int_equal(exec_count(), 0);
	assert_int_equal(upload_count(), 0);

	reaper_stop();
	child_calls_clear();
	processes_clear();
	sandbox_table_clear();
	peer_stop(&env->apid_peer);
	peer_stop(&env->proxy_peer);
	peer_stop(&env->worker_peer);
	peer_stop(&env->netns_peer);
	peer_stop(&env->egress_peer);
	peer_stop(&env->spawner_peer);
	close(env->netns_peer.ibuf.sock);
	close(env->egress_peer.ibuf.sock);
	close(env->spawner_peer.ibuf.sock);
	imsgbuf_clear(&spawner_side);
	close(spawner_side.sock);
	imsgbuf_clear(&netns_side);
	imsgbuf_clear(&egress_side);
	close(netns_side.sock);
	close(egress_side.sock);
	close(env->apid_peer.ibuf.sock);
	close(env->proxy_peer.ibuf.sock);
	close(env->worker_peer.ibuf.sock);
	imsgbuf_clear(&apid_side);
	imsgbuf_clear(&proxy_side);
	imsgbuf_clear(&worker_side);
	close(apid_side.sock);
	close(proxy_side.sock);
	close(worker_side.sock);
	event_base_free(env->base);
	remove_dir(env->datadir_fd, "sandboxes");
	remove_dir(env->datadir_fd, "snapshots");
	remove_dir(env->datadir_fd, "uploads");
	close(env->datadir_fd);
	rmdir(datadir);
	config_free(&env->conf);
	return 0;
}

/* --- a child's death and return ------------------------------------------ */

void
child_down(enum child_id id)
{
	env->child[id].state = CHILD_DOWN;
	env->child[id].ready = 0;
	child_kinds[id].lost();
}

void
child_up_again(enum child_id id)
{
	env->child[id].state = CHILD_UP;
	env->child[id].ready = 1;
	child_kinds[id].ready(1);
}

static int	next_msg(struct peer *, struct imsgbuf *, struct imsg *);

/* What managerd asked the spawner next (1), or nothing (0). */
int
to_spawner(uint32_t *type, uint32_t *child)
{
	struct imsg	 imsg;
	struct msgr	 r;

	if (next_msg(&env->spawner_peer, &spawner_side, &imsg) != 1)
		return 0;
	*type = imsg.hdr.type;
	assert_int_equal(imsg.len, 4);
	msgr_init(&r, &imsg);
	*child = msgr_u32(&r);
	assert_int_equal(msgr_end(&r), 0);
	imsg_free(&imsg);
	return 1;
}

int
to_child(enum child_id id, struct imsg *imsg)
{
	if (id == CHILD_APID)
		return next_msg(&env->apid_peer, &apid_side, imsg);
	if (id == CHILD_WORKER)
		return next_msg(&env->worker_peer, &worker_side, imsg);
	if (id == CHILD_NETNS)
		return next_msg(&env->netns_peer, &netns_side, imsg);
	if (id == CHILD_EGRESS)
		return next_msg(&env->egress_peer, &egress_side, imsg);
	return next_msg(&env->proxy_peer, &proxy_side, imsg);
}

/*
 * What managerd sent the archive worker (its new channel ends) is read
 * and dropped, the descriptors closed: no test here is about them.
 */
static void
worker_drain(void)
{
	struct imsg	 imsg;

	assert_int_equal(imsgbuf_flush(&env->worker_peer.ibuf), 0);
	while (imsgbuf_read(&worker_side) > 0)
		while (imsg_get(&worker_side, &imsg) == 1)
			imsg_free(&imsg);
}

static void
child_dies(enum child_id id)
{
	env->child[id].state = CHILD_DOWN;
	env->child[id].ready = 0;
	child_kinds[id].lost();
}

static void
child_back(enum child_id id)
{
	env->child[id].state = CHILD_UP;
	env->child[id].ready = 1;
	child_kinds[id].ready(1);
	worker_drain();
}

void
apid_dies(void)
{
	child_dies(CHILD_APID);
}

void
apid_back(void)
{
	child_back(CHILD_APID);
}

void
proxy_dies(void)
{
	child_dies(CHILD_PROXY);
}

void
proxy_back(void)
{
	child_back(CHILD_PROXY);
}

void
run_deferred(void)
{
	assert_true(event_base_loop(env->base,
	    EVLOOP_ONCE | EVLOOP_NONBLOCK) != -1);
}

/* --- the message boundary ------------------------------------------------- */

void
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

/* Who the test's requests come from; an admin by default. */
static char	 tc_name[] = "key-1", tc_tenant[] = "",
		 tc_addr[] = "127.0.0.1:40000", tc_route[] = "POST /test";
struct caller	 test_caller = { tc_name, tc_tenant, 1, tc_addr, tc_route };

void
send_caller(uint32_t peerid, const struct caller *c)
{
	struct imsg	 imsg;
	struct msgw	 w;

	msgw_init(&w);
	msg_put_caller(&w, c);
	fake_imsg(&imsg, MSG_CALLER, peerid, -1, &w);
	dispatch_apid(&env->apid_peer, &imsg);
	imsg_free(&imsg);
}

void
caller_before(uint32_t type, uint32_t peerid)
{
	if (apid_request_opens(type))
		send_caller(peerid, &test_caller);
}

/* apid -> managerd; returns the request's id. */
uint32_t
from_apid(uint32_t type, int fd, struct msgw *w)
{
	struct imsg	 imsg;
	uint32_t	 id = next_apid_id++;

	caller_before(type, id);
	fake_imsg(&imsg, type, id, fd, w);
	dispatch_apid(&env->apid_peer, &imsg);
	imsg_free(&imsg);
	return id;
}

/* dockerd-proxy -> managerd. */
void
from_proxy(uint32_t type, uint32_t peerid, struct msgw *w)
{
	struct imsg	 imsg;

	fake_imsg(&imsg, type, peerid, -1, w);
	dispatch_proxy(&env->proxy_peer, &imsg);
	imsg_free(&imsg);
}

void
from_child(enum child_id id, uint32_t type, uint32_t peerid, int fd,
    struct msgw *w)
{
	struct imsg	 imsg;

	fake_imsg(&imsg, type, peerid, fd, w);
	child_kinds[id].dispatch(env->child[id].peer, &imsg);
	imsg_free(&imsg);
}

uint32_t
expect_child(enum child_id id, uint32_t type, struct imsg *out)
{
	struct imsg	 imsg;

	assert_int_equal(to_child(id, &imsg), 1);
	if (imsg.hdr.type != type)
		fail_msg("%s got %s, not %s", child_kinds[id].name,
		    msg_type_name(imsg.hdr.type), msg_type_name(type));
	if (out != NULL)
		*out = imsg;
	else
		imsg_free(&imsg);
	return imsg.hdr.peerid;
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

int
to_proxy(struct imsg *imsg)
{
	return next_msg(&env->proxy_peer, &proxy_side, imsg);
}

/*
 * A restarted apid gets a new channel to the archive worker: none of
 * these tests' business (test_manager_worker.c looks at it), so skipped.
 */
static int
worker_channel_skipped(int r, struct imsg *imsg)
{
	if (r != 1 || imsg->hdr.type != MSG_APID_WORKER_CHANNEL)
		return 0;
	imsg_free(imsg);
	return 1;
}

int
to_apid(struct imsg *imsg)
{
	int	 r;

	do {
		r = next_msg(&env->apid_peer, &apid_side, imsg);
	} while (worker_channel_skipped(r, imsg));
	return r;
}

/* Like to_apid, without waiting for managerd's whole queue to go out. */
static int
to_apid_some_once(struct imsg *imsg)
{
	int	 r;

	if ((r = imsg_get(&apid_side, imsg)) != 0)
		return r;
	assert_int_equal(imsgbuf_write(&env->apid_peer.ibuf), 0);
	if (imsgbuf_read(&apid_side) <= 0)
		return 0;
	return imsg_get(&apid_side, imsg);
}

int
to_apid_some(struct imsg *imsg)
{
	int	 r;

	do {
		r = to_apid_some_once(imsg);
	} while (worker_channel_skipped(r, imsg));
	return r;
}

void
no_proxy_message(void)
{
	struct imsg	 imsg;

	if (to_proxy(&imsg) == 1)
		fail_msg("unexpected %s to the proxy",
		    msg_type_name(imsg.hdr.type));
}

void
no_apid_message(void)
{
	struct imsg	 imsg;

	if (to_apid(&imsg) == 1)
		fail_msg("unexpected %s to apid", msg_type_name(imsg.hdr.type));
}

/* The next message to the proxy must be of this type; returns its id. */
uint32_t
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
uint32_t
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

void
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

void
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

void
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

void
error_reply(uint32_t call, enum error_kind kind, const char *text)
{
	struct msgw	 w;

	msgw_init(&w);
	msgw_u32(&w, kind);
	msgw_str(&w, text);
	from_proxy(MSG_ERROR, call, &w);
}

void
state_reply_raw(uint32_t call, int exists, int running, uint32_t pid,
    const char *container)
{
	struct msgw	 w;

	msgw_init(&w);
	msgw_u8(&w, exists);
	msgw_u8(&w, running);
	msgw_u32(&w, pid);
	msgw_str(&w, container);
	from_proxy(MSG_DOCKER_STATE_RESULT, call, &w);
}

void
state_reply(uint32_t call, int exists, int running)
{
	state_reply_raw(call, exists, running, running ? FIXTURE_PID : 0,
	    exists ? FIXTURE_CONTAINER : "");
}

void
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
void
create_request_init(struct create_request *c)
{
	memset(c, 0, sizeof(*c));
	c->read_only_rootfs = 1;
}

uint32_t
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

uint32_t
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
uint32_t
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
void
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

uint32_t
send_id(uint32_t type, const char *id)
{
	struct msgw	 w;

	msgw_init(&w);
	msg_put_string(&w, id);
	return from_apid(type, -1, &w);
}

/* MSG_SANDBOX_LIST, with no filter unless f. */
uint32_t
send_sandbox_list(const struct label_filter *f)
{
	struct label_filter	 none;
	struct msgw		 w;

	memset(&none, 0, sizeof(none));
	msgw_init(&w);
	msg_put_label_filter(&w, f != NULL ? f : &none);
	return from_apid(MSG_SANDBOX_LIST, -1, &w);
}

uint32_t
send_timeout(const char *id, int64_t secs)
{
	struct msgw	 w;

	msgw_init(&w);
	msgw_str(&w, id);
	msgw_i64(&w, secs);
	return from_apid(MSG_SANDBOX_TIMEOUT, -1, &w);
}

void
destroy_ok(const char *id)
{
	uint32_t	 req, call;

	req = send_id(MSG_SANDBOX_DELETE, id);
	call = expect_proxy_id(MSG_DOCKER_DESTROY, id);
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	expect_apid(req, MSG_OK);
}

int
record_exists(const char *id)
{
	char		 path[64];
	struct stat	 st;

	snprintf(path, sizeof(path), "sandboxes/%s.json", id);
	return fstatat(env->datadir_fd, path, &st, 0) == 0;
}

/* --- exec ----------------------------------------------------------------- */

void
exec_request_init(struct exec_request *e, const char *id)
{
	memset(e, 0, sizeof(*e));
	e->sandbox_id = strdup(id);
	assert_non_null(e->sandbox_id);
}

void
exec_set_shell(struct exec_request *e, const char *cmd)
{
	e->shell = 1;
	e->argc = 1;
	e->argv = calloc(2, sizeof(char *));
	assert_non_null(e->argv);
	e->argv[0] = strdup(cmd);
}

/* Sends the request with a fresh pipe's write end. */
uint32_t
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

void
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

/* --- files ---------------------------------------------------------------- */

int
count_fds(void)
{
	struct dirent	*de;
	DIR		*d;
	int		 n = 0;

	assert_non_null(d = opendir("/proc/self/fd"));
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

void
assert_pipe_closed(int rfd)
{
	char	 c;

	assert_int_equal(read(rfd, &c, 1), 0);
	close(rfd);
}

void
assert_no_reader(int wfd)
{
	assert_int_equal(write(wfd, "x", 1), -1);
	assert_int_equal(errno, EPIPE);
	close(wfd);
}

uint32_t
send_file_request(uint32_t type, const char *id, const char *path, int *rfd)
{
	struct file_request	 f;
	struct msgw		 w;
	int			 p[2];

	assert_int_equal(pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
	f.sandbox_id = (char *)(uintptr_t)id;
	f.path = (char *)(uintptr_t)path;
	msgw_init(&w);
	msg_put_file_request(&w, &f);
	*rfd = p[0];
	return from_apid(type, p[1], &w);
}

void
stat_answer_full(uint32_t call, const struct archive_stat *st)
{
	struct msgw	 w;

	msgw_init(&w);
	msg_put_archive_stat(&w, st);
	from_proxy(MSG_DOCKER_ARCHIVE_STAT, call, &w);
}

void
stat_answer(uint32_t call, uint8_t kind, uint64_t size, const char *target)
{
	struct archive_stat	 st;

	memset(&st, 0, sizeof(st));
	st.kind = kind;
	st.size = size;
	st.mode = kind == ARCHIVE_KIND_DIR ? 0755 : 0644;
	st.mtime = 1600000000;
	st.link_target = (char *)(uintptr_t)target;
	stat_answer_full(call, &st);
}

void
expect_fatal(void (*f)(void), const char *words)
{
	char		 out[8192], want[512], *line;
	size_t		 got = 0;
	ssize_t		 n;
	pid_t		 pid;
	int		 fds[2], status;

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
	/* A failed assertion in the child exits 1 too: the line decides. */
	(void)snprintf(want, sizeof(want), ": %s\n", words);
	line = strstr(out, " CRITICAL ");
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 1 || line == NULL ||
	    strstr(line, want) == NULL || strchr(line, '\n') + 1 !=
	    strstr(line, want) + strlen(want))
		fail_msg("expected managerd's fatal \"%s\"; the child (wait "
		    "status %#x) said:\n%s", words, status, out);
}
