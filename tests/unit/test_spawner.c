/*
 * The spawner's side of its channel (managerd/spawner.c): what managerd
 * may ask (a start, a kill), what comes back (the child's channel with its
 * settings already in it, its exit, a failure), and a lying managerd,
 * which is fatal.  The children are small scripts standing in for apid
 * and dockerd-proxy in a libexec directory of the test's.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "assert_fatal.h"
#include "keys_file.h"
#include "log.h"
#include "manager_fixture.h"
#include "proc.h"

static char		 libexec[64], setting[128];
static struct spawner	 sp;
static struct imsgbuf	 managerd;	/* the test's end: managerd's */

/* dockerd-proxy sends what it reads back; apid sleeps. */
static void
write_script(const char *name, const char *body)
{
	char	 path[PATH_MAX];
	FILE	*f;

	snprintf(path, sizeof(path), "%s/%s", libexec, name);
	assert_non_null(f = fopen(path, "w"));
	fprintf(f, "#!/bin/sh\n%s\n", body);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, 0755), 0);
}

static int
spawner_setup(void **state)
{
	char	*settings[] = { setting, NULL };
	int	 sv[2];

	strlcpy(libexec, "/tmp/test_spawner.XXXXXX", sizeof(libexec));
	assert_non_null(mkdtemp(libexec));
	write_script("dockerd-proxy", "exec cat <&3 >&3 2>/dev/null");
	write_script("apid", "exec sleep 30");
	snprintf(setting, sizeof(setting), "AGENT_SANDBOX_LIBEXEC_DIR=%s",
	    libexec);
	setup_env(settings);
	env->conf.instance_id = strdup("0123456789abcdef");
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0, sv), 0);
	memset(&sp, 0, sizeof(sp));
	imsgbuf_init(&sp.ibuf, sv[0]);
	imsgbuf_init(&managerd, sv[1]);
	sp.conf = &env->conf;
	/* Any descriptor does as apid's listener here. */
	assert_true((sp.listener = dup(STDERR_FILENO)) != -1);
	return 0;
}

static void
unlink_script(const char *name)
{
	char	 path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", libexec, name);
	unlink(path);
}

static int
spawner_teardown(void **state)
{
	imsgbuf_clear(&sp.ibuf);
	close(sp.ibuf.sock);
	imsgbuf_clear(&managerd);
	close(managerd.sock);
	close(sp.listener);
	unlink_script("dockerd-proxy");
	unlink_script("apid");
	rmdir(libexec);
	return teardown(state);
}

/* managerd -> spawner: one message, payload u32 child (or none). */
static void
from_managerd(uint32_t type, uint32_t peerid, int fd, int64_t child,
    int extra)
{
	struct imsg	 imsg;
	struct msgw	 w;

	msgw_init(&w);
	if (child != -1)
		msgw_u32(&w, (uint32_t)child);
	if (extra)
		msgw_u32(&w, 0);
	fake_imsg(&imsg, type, peerid, fd, &w);
	spawner_dispatch(&sp, &imsg);
	imsg_free(&imsg);
}

/* The next message to managerd, waiting up to 5 s (reaping meanwhile). */
static void
to_managerd(struct imsg *imsg, uint32_t type)
{
	struct timespec	 step = { 0, 10 * 1000 * 1000 };
	int		 i, r;

	for (i = 0; i < 500; i++) {
		spawner_reap(&sp);
		assert_int_equal(imsgbuf_flush(&sp.ibuf), 0);
		if ((r = imsg_get(&managerd, imsg)) == 0 &&
		    imsgbuf_read(&managerd) > 0)
			r = imsg_get(&managerd, imsg);
		assert_int_not_equal(r, -1);
		if (r == 1) {
			if (imsg->hdr.type != type)
				fail_msg("managerd got %s, not %s",
				    msg_type_name(imsg->hdr.type),
				    msg_type_name(type));
			return;
		}
		nanosleep(&step, NULL);
	}
	fail_msg("no %s for managerd", msg_type_name(type));
}

static void
no_message(void)
{
	struct imsg	 imsg;

	spawner_reap(&sp);
	assert_int_equal(imsgbuf_flush(&sp.ibuf), 0);
	if (imsgbuf_read(&managerd) > 0 && imsg_get(&managerd, &imsg) == 1)
		fail_msg("unexpected %s", msg_type_name(imsg.hdr.type));
}

/* SPAWN_STARTED of child n: its pid, and managerd's end of its channel. */
static pid_t
expect_started(uint32_t n, int *chan)
{
	struct imsg	 imsg;
	struct msgr	 r;
	uint32_t	 pid;

	to_managerd(&imsg, MSG_SPAWN_STARTED);
	msgr_init(&r, &imsg);
	assert_int_equal(msgr_u32(&r), n);
	pid = msgr_u32(&r);
	assert_int_equal(msgr_end(&r), 0);
	assert_true((*chan = imsg_take_fd(&imsg)) != -1);
	/* sp.pid[n] is 0 again already if it died at once (the reap). */
	assert_true(pid > 0 && (sp.pid[n] == (pid_t)pid || sp.pid[n] == 0));
	imsg_free(&imsg);
	return (pid_t)pid;
}

static int
expect_exit(uint32_t n, pid_t pid)
{
	struct imsg	 imsg;
	struct msgr	 r;
	uint32_t	 status;

	to_managerd(&imsg, MSG_SPAWN_EXIT);
	msgr_init(&r, &imsg);
	assert_int_equal(msgr_u32(&r), n);
	assert_int_equal(msgr_u32(&r), (uint32_t)pid);
	status = msgr_u32(&r);
	assert_int_equal(msgr_end(&r), 0);
	imsg_free(&imsg);
	assert_int_equal(sp.pid[n], 0);
	return (int)status;
}

/* The proxy's settings are in its channel before it runs: it echoes them. */
static void
test_start_writes_the_settings(void **state)
{
	struct proc_settings	 ps;
	struct imsgbuf		 chan;
	struct imsg		 imsg;
	struct msgr		 r;
	char			*sock, *iid, *runtime, *net;
	pid_t			 pid;
	int			 fd, i;

	from_managerd(MSG_SPAWN_START, 0, -1, CHILD_PROXY, 0);
	pid = expect_started(CHILD_PROXY, &fd);
	imsgbuf_init(&chan, fd);
	for (i = 0; i < 500; i++) {
		(void)imsgbuf_read(&chan);
		if (imsg_get(&chan, &imsg) == 1)
			break;
		usleep(10000);
	}
	assert_true(i < 500);
	assert_int_equal(imsg.hdr.type, MSG_PROXY_CONFIG);
	msgr_init(&r, &imsg);
	assert_int_equal(proc_settings_get(&r, &ps), 0);
	sock = msgr_str(&r, 4096);
	iid = msgr_str(&r, 64);
	/* The policy, from the spawner's own copy of the configuration. */
	assert_int_equal(msgr_u32(&r), env->conf.sandbox_uid);
	assert_int_equal(msgr_u32(&r), env->conf.sandbox_gid);
	assert_int_equal(msgr_i64(&r), env->conf.tmp_size_mb);
	runtime = msgr_str(&r, 256);
	net = msgr_str(&r, 256);
	assert_true(msgr_double(&r) == env->conf.max_cpus);
	assert_int_equal(msgr_i64(&r), env->conf.max_memory_mb);
	assert_int_equal(msgr_i64(&r), env->conf.max_pids_limit);
	assert_int_equal(msgr_u8(&r), env->conf.allow_network);
	assert_int_equal(msgr_u8(&r), env->conf.allow_runtime_env);
	assert_int_equal(msgr_end(&r), 0);
	assert_string_equal(ps.seccomp_mode, env->conf.seccomp_mode);
	assert_string_equal(sock, env->conf.docker_endpoint);
	assert_string_equal(iid, "0123456789abcdef");
	assert_string_equal(runtime, env->conf.docker_runtime);
	assert_string_equal(net, env->conf.network_name);
	proc_settings_free(&ps);
	free(sock);
	free(iid);
	free(runtime);
	free(net);
	imsg_free(&imsg);
	/* Its channel closed, it ends, and managerd hears how. */
	imsgbuf_clear(&chan);
	close(fd);
	(void)expect_exit(CHILD_PROXY, pid);
}

static void
test_kill(void **state)
{
	pid_t	 pid;
	int	 fd, status;

	/* Nothing runs: nothing to kill, and no lie either. */
	from_managerd(MSG_SPAWN_KILL, 0, -1, CHILD_APID, 0);
	no_message();
	from_managerd(MSG_SPAWN_START, 0, -1, CHILD_APID, 0);
	pid = expect_started(CHILD_APID, &fd);
	from_managerd(MSG_SPAWN_KILL, 0, -1, CHILD_APID, 0);
	status = expect_exit(CHILD_APID, pid);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	close(fd);
}

/* An exec that fails is an exit like another: status 127. */
static void
test_exec_fails(void **state)
{
	pid_t	 pid;
	int	 fd, status;

	unlink_script("apid");
	from_managerd(MSG_SPAWN_START, 0, -1, CHILD_APID, 0);
	pid = expect_started(CHILD_APID, &fd);
	status = expect_exit(CHILD_APID, pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 127);
	close(fd);
}

/* Settings that cannot be made: SPAWN_FAILED, and nothing runs. */
static void
test_settings_too_large(void **state)
{
	struct imsg	 imsg;
	struct msgr	 r;
	char		*keys[2], **saved;
	size_t		 nsaved;

	saved = env->conf.api_keys;
	nsaved = env->conf.api_keys_count;
	assert_non_null(keys[0] = malloc(IMSG_MAX_PAYLOAD + 1));
	memset(keys[0], 'k', IMSG_MAX_PAYLOAD);
	keys[0][IMSG_MAX_PAYLOAD] = '\0';
	keys[1] = NULL;
	env->conf.api_keys = keys;
	env->conf.api_keys_count = 1;
	from_managerd(MSG_SPAWN_START, 0, -1, CHILD_APID, 0);
	to_managerd(&imsg, MSG_SPAWN_FAILED);
	msgr_init(&r, &imsg);
	assert_int_equal(msgr_u32(&r), CHILD_APID);
	assert_int_equal(msgr_u32(&r), EMSGSIZE);
	assert_int_equal(msgr_end(&r), 0);
	imsg_free(&imsg);
	assert_int_equal(sp.pid[CHILD_APID], 0);
	env->conf.api_keys = saved;
	env->conf.api_keys_count = nsaved;
	free(keys[0]);
}

/* --- a lying managerd ------------------------------------------------------ */

static void
lie_start_with_descriptor(void)
{
	from_managerd(MSG_SPAWN_START, 0, dup(0), CHILD_APID, 0);
}

static void
lie_start_with_request_id(void)
{
	from_managerd(MSG_SPAWN_START, 7, -1, CHILD_APID, 0);
}

static void
lie_start_trailing_bytes(void)
{
	from_managerd(MSG_SPAWN_START, 0, -1, CHILD_APID, 1);
}

static void
lie_start_no_payload(void)
{
	from_managerd(MSG_SPAWN_START, 0, -1, -1, 0);
}

static void
lie_start_no_such_child(void)
{
	from_managerd(MSG_SPAWN_START, 0, -1, CHILD_MAX, 0);
}

static void
lie_start_running(void)
{
	sp.pid[CHILD_PROXY] = getpid();
	from_managerd(MSG_SPAWN_START, 0, -1, CHILD_PROXY, 0);
}

static void
lie_kill_no_such_child(void)
{
	from_managerd(MSG_SPAWN_KILL, 0, -1, 0xffffffff, 0);
}

static void
lie_not_a_request(void)
{
	from_managerd(MSG_SPAWN_EXIT, 0, -1, CHILD_APID, 0);
}

static void
keys_file_write(const char *path, const char *text)
{
	FILE	*f;

	assert_non_null(f = fopen(path, "w"));
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

/*
 * SIGHUP's reload (keys.c): the spawner reads the file again and sends
 * the table, 70 keys in two chunks; a file that does not parse is
 * answered with nothing (and logged), the table in use staying.
 */
static void
test_keys_reload(void **state)
{
	struct keys_table	 t;
	struct imsg		 imsg;
	char			 path[PATH_MAX], *text, *p;
	uint32_t		 total;
	size_t			 k;

	snprintf(path, sizeof(path), "%s/keys.json", libexec);
	assert_non_null(text = malloc(70 * 128 + 32));
	p = text + sprintf(text, "{\"keys\": [");
	for (k = 0; k < 70; k++)
		p += sprintf(p, "%s{\"name\": \"k%zu\", \"tenant\": \"t\", "
		    "\"sha256\": \"%064zx\"}", k ? "," : "", k, k);
	sprintf(p, "]}");
	keys_file_write(path, text);
	free(text);
	free(env->conf.keys_file);
	assert_non_null(env->conf.keys_file = strdup(path));
	from_managerd(MSG_SPAWN_KEYS_RELOAD, 0, -1, -1, 0);
	memset(&t, 0, sizeof(t));
	do {
		to_managerd(&imsg, MSG_SPAWN_KEYS);
		assert_int_equal(msg_get_keys_chunk(&imsg, &t, &total), 0);
		imsg_free(&imsg);
	} while (t.n < total);
	assert_int_equal(t.n, 70);
	assert_string_equal(t.v[69].name, "k69");
	keys_table_free(&t);
	keys_file_write(path, "{\"keys\": [");
	from_managerd(MSG_SPAWN_KEYS_RELOAD, 0, -1, -1, 0);
	no_message();
	unlink(path);
}

static void
lie_keys_reload_payload(void)
{
	from_managerd(MSG_SPAWN_KEYS_RELOAD, 0, -1, 1, 0);
}

static void
lie_keys_reload_without_file(void)
{
	from_managerd(MSG_SPAWN_KEYS_RELOAD, 0, -1, -1, 0);
}

static void
test_lies_are_fatal(void **state)
{
	assert_fatal(lie_start_with_descriptor,
	    "bad SPAWN_START message from managerd: unexpected descriptor");
	assert_fatal(lie_start_with_request_id,
	    "bad SPAWN_START message from managerd: unexpected request id");
	assert_fatal(lie_start_trailing_bytes,
	    "bad SPAWN_START message from managerd: malformed payload");
	assert_fatal(lie_start_no_payload,
	    "bad SPAWN_START message from managerd: malformed payload");
	assert_fatal(lie_start_no_such_child,
	    "bad SPAWN_START message from managerd: no such child");
	assert_fatal(lie_start_running,
	    "bad SPAWN_START message from managerd: that child runs");
	assert_fatal(lie_kill_no_such_child,
	    "bad SPAWN_KILL message from managerd: no such child");
	assert_fatal(lie_not_a_request,
	    "bad SPAWN_EXIT message from managerd: not a request managerd "
	    "may make");
	assert_fatal(lie_keys_reload_payload,
	    "bad SPAWN_KEYS_RELOAD message from managerd: unexpected payload");
	assert_fatal(lie_keys_reload_without_file,
	    "bad SPAWN_KEYS_RELOAD message from managerd: there is no keys "
	    "file");
	/* Nothing was started by any of them. */
	no_message();
}

int
main(void)
{
	const struct CMUnitTest	 tests[] = {
#define T(f)	cmocka_unit_test_setup_teardown(f, spawner_setup, \
		    spawner_teardown)
		T(test_start_writes_the_settings),
		T(test_kill),
		T(test_exec_fails),
		T(test_settings_too_large),
		T(test_keys_reload),
		T(test_lies_are_fatal),
#undef T
	};

	log_init(LOG_TO_STDERR, LOG_LEVEL_WARN, "test_spawner");
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
