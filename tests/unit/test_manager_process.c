/*
 * Tests for managerd's processes (managerd/process*.c) with the test as
 * apid and dockerd-proxy: the start and its record, client_id retries
 * while it starts and after, frames from the proxy into readers' pipes,
 * gaps for a reader behind the ring, stdin through the socket and its
 * end of file, the end of a process (exit, lost when the proxy dies or
 * its frames lie), a lie before the start, DELETE and the sandbox's end,
 * and the memory a deleted process leaves (none, whatever its readers).
 */
#include <sys/socket.h>

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

#include "manager_fixture.h"
#include "process.h"

#define EXEC_ID	"0123456789abcdef0123456789abcdef" \
		"0123456789abcdef0123456789abcdef"

struct started {
	uint32_t	 req;		/* apid's START */
	uint32_t	 call;		/* the proxy's START */
	int		 sock;		/* the proxy's end */
	struct process_info info;
};

static char	 sandbox_id[SANDBOX_ID_LEN + 1];

static int
proc_setup(void **state)
{
	static char	 ring[] = "AGENT_SANDBOX_PROCESS_OUTPUT_BYTES=65536";
	static char	 per[] = "AGENT_SANDBOX_MAX_PROCESSES_PER_SANDBOX=4";
	char		*settings[] = { ring, per, NULL };

	setup_env(settings);
	create_ok(600, sandbox_id, sizeof(sandbox_id));
	return 0;
}

static uint32_t
send_start(const char *cmd, const char *client_id, int stdin_open)
{
	struct process_request	 pr;
	char			*argv[2];
	struct msgw		 w;

	memset(&pr, 0, sizeof(pr));
	pr.sandbox_id = sandbox_id;
	pr.shell = 1;
	argv[0] = (char *)(uintptr_t)cmd;
	argv[1] = NULL;
	pr.argc = 1;
	pr.argv = argv;
	pr.stdin_open = stdin_open;
	pr.client_id = (char *)(uintptr_t)client_id;
	msgw_init(&w);
	msg_put_process_request(&w, &pr);
	return from_apid(MSG_PROCESS_START, -1, &w);
}

/* The proxy's START: its socket and the shell's argv. */
static uint32_t
expect_start(int *sock, const char *cmd)
{
	struct docker_process	 dp;
	struct imsg		 imsg;
	uint32_t		 call;

	call = expect_proxy(MSG_DOCKER_PROCESS_START, &imsg);
	assert_int_equal(msg_get_docker_process(&imsg, &dp), 0);
	assert_int_equal(dp.argc, 3);
	assert_string_equal(dp.argv[0], "/bin/sh");
	assert_string_equal(dp.argv[2], cmd);
	assert_string_equal(dp.workdir, "/workspace");
	docker_process_free(&dp);
	assert_true(imsg.fd != -1);
	*sock = imsg.fd;
	imsg.fd = -1;
	imsg_free(&imsg);
	return call;
}

static void
proxy_started(uint32_t call, int64_t pid)
{
	struct docker_process_started	 s;
	struct msgw			 w;
	char				 id[] = EXEC_ID;

	s.exec_id = id;
	s.pid = pid;
	msgw_init(&w);
	msg_put_docker_process_started(&w, &s);
	from_proxy(MSG_DOCKER_PROCESS_STARTED, call, &w);
}

static void
expect_process(uint32_t req, struct process_info *pi)
{
	struct imsg	 imsg;

	assert_int_equal(to_apid(&imsg), 1);
	if (imsg.hdr.type != MSG_PROCESS_INFO)
		fail_msg("apid got %s, not PROCESS_INFO",
		    msg_type_name(imsg.hdr.type));
	assert_int_equal(imsg.hdr.peerid, req);
	assert_int_equal(msg_get_process_info(&imsg, pi), 0);
	imsg_free(&imsg);
}

/* An error whose text starts with prefix. */
static void
expect_error_prefix(uint32_t req, enum error_kind kind, const char *prefix)
{
	struct imsg	 imsg;
	struct msgr	 r;
	char		*text;

	assert_int_equal(to_apid(&imsg), 1);
	assert_int_equal(imsg.hdr.type, MSG_ERROR);
	assert_int_equal(imsg.hdr.peerid, req);
	msgr_init(&r, &imsg);
	assert_int_equal(msgr_u32(&r), kind);
	text = msgr_str(&r, MSG_MAX_STRING);
	assert_non_null(text);
	if (strncmp(text, prefix, strlen(prefix)) != 0)
		fail_msg("error \"%s\" does not start with \"%s\"", text,
		    prefix);
	free(text);
	imsg_free(&imsg);
}

static void
start_one(struct started *s, const char *cmd, int stdin_open)
{
	s->req = send_start(cmd, NULL, stdin_open);
	s->call = expect_start(&s->sock, cmd);
	proxy_started(s->call, 42);
	expect_process(s->req, &s->info);
	assert_int_equal(s->info.status, PROCESS_RUNNING);
	assert_int_equal(s->info.existed, 0);
}

static void
frame(int sock, int stream, const void *data, uint32_t len)
{
	unsigned char	 head[8] = { (unsigned char)stream, 0, 0, 0,
	    (unsigned char)(len >> 24), (unsigned char)(len >> 16),
	    (unsigned char)(len >> 8), (unsigned char)len };

	assert_int_equal(write(sock, head, 8), 8);
	assert_int_equal(write(sock, data, len), (ssize_t)len);
	run_deferred();
}

static void
proxy_exit(uint32_t call, int sock, int64_t code)
{
	struct exec_exit	 x = { code, 0 };
	struct msgw		 w;

	close(sock);
	run_deferred();
	msgw_init(&w);
	msg_put_exec_exit(&w, &x);
	from_proxy(MSG_DOCKER_EXEC_EXIT, call, &w);
}

static uint32_t
send_ref(uint32_t type, const char *pid)
{
	struct process_ref	 ref;
	struct msgw		 w;

	ref.sandbox_id = sandbox_id;
	ref.process_id = (char *)(uintptr_t)pid;
	msgw_init(&w);
	msg_put_process_ref(&w, &ref);
	return from_apid(type, -1, &w);
}

/* A PROCESS_OUTPUT: our end of its pipe once it started. */
static int
open_reader(const char *pid, uint64_t after, int follow)
{
	struct process_output	 o;
	struct msgw		 w;
	uint32_t		 req;
	int			 p[2];

	assert_int_equal(pipe(p), 0);
	o.ref.sandbox_id = sandbox_id;
	o.ref.process_id = (char *)(uintptr_t)pid;
	o.after = after;
	o.follow = follow;
	msgw_init(&w);
	msg_put_process_output(&w, &o);
	req = from_apid(MSG_PROCESS_OUTPUT, p[1], &w);
	expect_apid(req, MSG_PROCESS_OUTPUT_STARTED);
	return p[0];
}

struct got {
	char		 text[4096];
	size_t		 len;
	uint64_t	 gap, last_seq;
	int		 exits;
	enum process_status status;
};

static int
got_event(void *arg, enum pev_type type, uint64_t value,
    const unsigned char *data, size_t len, const struct pev_exit *x)
{
	struct got	*g = arg;

	if (type == PEV_GAP)
		g->gap += value;
	else if (type == PEV_EXIT) {
		g->exits++;
		g->status = x->status;
	} else {
		if (g->len + len < sizeof(g->text)) {
			memcpy(g->text + g->len, data, len);
			g->len += len;
		}
		g->last_seq = value;
	}
	return 0;
}

/* What the pipe holds now; *eof once managerd closed it. */
static void
read_events(int fd, struct pev_parser *pp, struct got *g, int *eof)
{
	unsigned char	 buf[65536];
	ssize_t		 n;
	int		 flags;

	flags = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, flags | O_NONBLOCK);
	*eof = 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		assert_int_equal(pev_parser_feed(pp, buf, (size_t)n, got_event,
		    g), 0);
	if (n == 0)
		*eof = 1;
}

static void
test_start_record_and_output(void **state)
{
	struct pev_parser	*pp = calloc(1, sizeof(*pp));
	struct started		 s;
	struct got		 g;
	char			 path[64];
	int			 rfd, eof;

	start_one(&s, "echo hi", 0);
	snprintf(path, sizeof(path), "processes/%s.json", s.info.id);
	assert_int_equal(faccessat(env->datadir_fd, path, F_OK, 0), 0);
	frame(s.sock, 1, "hello ", 6);
	frame(s.sock, 2, "oops\n", 5);
	rfd = open_reader(s.info.id, 0, 1);
	memset(&g, 0, sizeof(g));
	read_events(rfd, pp, &g, &eof);
	assert_int_equal(g.len, 11);
	assert_memory_equal(g.text, "hello oops\n", 11);
	assert_int_equal(eof, 0);
	/* Live output reaches the follower; then the end. */
	frame(s.sock, 1, "world\n", 6);
	read_events(rfd, pp, &g, &eof);
	assert_int_equal(g.last_seq, 17);
	proxy_exit(s.call, s.sock, 0);
	read_events(rfd, pp, &g, &eof);
	assert_int_equal(g.exits, 1);
	assert_int_equal(g.status, PROCESS_EXITED);
	assert_int_equal(eof, 1);
	close(rfd);
	process_info_free(&s.info);
	/* GET says the same, and after= gives exactly the rest. */
	send_ref(MSG_PROCESS_GET, "proc_0000000000000000");
	expect_apid_error(next_apid_id - 1, ERR_NOT_FOUND,
	    "process proc_0000000000000000 not found");
	rfd = open_reader(TAILQ_FIRST(&all_processes)->rec.id, 11, 0);
	memset(&g, 0, sizeof(g));
	pev_parser_init(pp);
	read_events(rfd, pp, &g, &eof);
	assert_int_equal(g.len, 6);
	assert_memory_equal(g.text, "world\n", 6);
	assert_int_equal(g.exits, 1);
	close(rfd);
	free(pp);
}

static void
test_client_id_retries(void **state)
{
	struct process_info	 a, b, c;
	uint32_t		 r1, r2, r3, call;
	int			 sock;

	r1 = send_start("make", "build-1", 0);
	call = expect_start(&sock, "make");
	/* Retries while it starts wait for it; none reaches the proxy. */
	r2 = send_start("make", "build-1", 0);
	r3 = send_start("make", "build-1", 0);
	no_proxy_message();
	no_apid_message();
	proxy_started(call, 7);
	expect_process(r1, &a);
	expect_process(r2, &b);
	expect_process(r3, &c);
	assert_int_equal(a.existed, 0);
	assert_int_equal(b.existed, 1);
	assert_string_equal(a.id, b.id);
	assert_string_equal(a.id, c.id);
	process_info_free(&b);
	process_info_free(&c);
	/* After the start too; a different request with it is a conflict. */
	r2 = send_start("make", "build-1", 0);
	expect_process(r2, &b);
	assert_int_equal(b.existed, 1);
	process_info_free(&b);
	r3 = send_start("make test", "build-1", 0);
	expect_error_prefix(r3, ERR_CONFLICT, "client_id build-1 was used "
	    "for a different request (process ");
	process_info_free(&a);
	proxy_exit(call, sock, 0);
}

static void
test_gap_for_a_reader_behind(void **state)
{
	struct pev_parser	*pp = calloc(1, sizeof(*pp));
	static unsigned char	 piece[32768];
	struct started		 s;
	struct got		 g;
	int			 i, rfd, eof;

	start_one(&s, "yes", 0);
	memset(piece, 'y', sizeof(piece));
	for (i = 0; i < 8; i++)
		frame(s.sock, 1, piece, sizeof(piece));
	rfd = open_reader(s.info.id, 0, 0);
	memset(&g, 0, sizeof(g));
	read_events(rfd, pp, &g, &eof);
	assert_true(g.gap > 0);
	assert_int_equal(g.last_seq, 8 * sizeof(piece));
	assert_int_equal(eof, 1);
	close(rfd);
	process_info_free(&s.info);
	proxy_exit(s.call, s.sock, 0);
	free(pp);
}

static void
test_stdin_through_the_socket(void **state)
{
	struct process_stdin	 in;
	struct started		 s;
	struct msgw		 w;
	char			 buf[64];
	uint32_t		 req;
	int			 p[2];
	ssize_t			 n;

	start_one(&s, "cat", 1);
	assert_int_equal(pipe(p), 0);
	in.ref.sandbox_id = sandbox_id;
	in.ref.process_id = s.info.id;
	in.close_at_end = 1;
	msgw_init(&w);
	msg_put_process_stdin(&w, &in);
	req = from_apid(MSG_PROCESS_STDIN, p[0], &w);
	assert_int_equal(write(p[1], "input\n", 6), 6);
	close(p[1]);
	run_deferred();
	run_deferred();
	expect_apid(req, MSG_OK);
	n = read(s.sock, buf, sizeof(buf));
	assert_int_equal(n, 6);
	assert_memory_equal(buf, "input\n", 6);
	/* The end of file came as a half-close. */
	assert_int_equal(read(s.sock, buf, sizeof(buf)), 0);
	/* Its stdin is closed: another write is refused. */
	assert_int_equal(pipe(p), 0);
	req = from_apid(MSG_PROCESS_STDIN, p[0], &w);
	expect_error_prefix(req, ERR_CONFLICT, "process ");
	close(p[1]);
	process_info_free(&s.info);
	proxy_exit(s.call, s.sock, 0);
}

static void
test_lies_and_death_make_it_lost(void **state)
{
	static const unsigned char	 bad[8] = { 3, 0, 0, 0, 0, 0, 0, 1 };
	struct process_info		 pi;
	struct started			 s, t;
	uint32_t			 req;

	start_one(&s, "a", 0);
	assert_int_equal(write(s.sock, bad, sizeof(bad)), 8);
	run_deferred();
	req = send_ref(MSG_PROCESS_GET, s.info.id);
	expect_process(req, &pi);
	assert_int_equal(pi.status, PROCESS_LOST);
	assert_int_equal(pi.running, 1);
	process_info_free(&pi);
	proxy_exit(s.call, s.sock, 0);
	start_one(&t, "b", 0);
	proxy_dies();
	run_deferred();
	req = send_ref(MSG_PROCESS_GET, t.info.id);
	expect_process(req, &pi);
	assert_int_equal(pi.status, PROCESS_LOST);
	process_info_free(&pi);
	process_info_free(&s.info);
	process_info_free(&t.info);
	close(t.sock);
}

static void
test_delete_and_sandbox_end(void **state)
{
	struct docker_process_signal	 ds;
	struct started			 s, t;
	struct imsg			 imsg;
	uint32_t			 req, call;
	char				 path[64];

	start_one(&s, "sleep 100", 0);
	req = send_ref(MSG_PROCESS_DELETE, s.info.id);
	call = expect_proxy(MSG_DOCKER_PROCESS_SIGNAL, &imsg);
	assert_int_equal(msg_get_docker_process_signal(&imsg, &ds), 0);
	assert_int_equal(ds.tree, 1);
	assert_int_equal(ds.signo, SIGKILL);
	assert_int_equal(ds.pid, 42);
	free(ds.id);
	imsg_free(&imsg);
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	expect_apid(req, MSG_OK);
	snprintf(path, sizeof(path), "processes/%s.json", s.info.id);
	assert_int_equal(faccessat(env->datadir_fd, path, F_OK, 0), -1);
	/* A destroyed sandbox takes its processes and records along. */
	start_one(&t, "sleep 200", 0);
	destroy_ok(sandbox_id);
	snprintf(path, sizeof(path), "processes/%s.json", t.info.id);
	assert_int_equal(faccessat(env->datadir_fd, path, F_OK, 0), -1);
	assert_null(TAILQ_FIRST(&all_processes));
	process_info_free(&s.info);
	process_info_free(&t.info);
	proxy_exit(s.call, s.sock, 137);
	proxy_exit(t.call, t.sock, 137);
}

static void
test_limit(void **state)
{
	struct started	 s[4];
	uint32_t	 req;
	int		 i;

	for (i = 0; i < 4; i++)
		start_one(&s[i], "sleep 1", 0);
	req = send_start("one more", NULL, 0);
	expect_error_prefix(req, ERR_LIMIT_EXCEEDED, "sandbox ");
	for (i = 0; i < 4; i++) {
		process_info_free(&s[i].info);
		proxy_exit(s[i].call, s[i].sock, 0);
	}
}

/* Frames before STARTED are a lie: the start and its retries fail. */
static void
test_lie_before_the_start(void **state)
{
	static const unsigned char	 bad[8] = { 9, 0, 0, 0, 0, 0, 0, 1 };
	uint32_t			 r1, r2, call;
	int				 sock;

	r1 = send_start("x", "c-1", 0);
	call = expect_start(&sock, "x");
	r2 = send_start("x", "c-1", 0);
	assert_int_equal(write(sock, bad, sizeof(bad)), 8);
	run_deferred();
	expect_error_prefix(r1, ERR_BACKEND, "process proc_");
	expect_error_prefix(r2, ERR_BACKEND, "process proc_");
	assert_null(TAILQ_FIRST(&all_processes));
	/* The proxy's own answer later finds nothing to answer. */
	error_reply(call, ERR_BACKEND, "stream broken");
	no_apid_message();
	close(sock);
}

/* A stdin pipe that failed owes nothing to the next one. */
static void
test_stdin_after_a_failure(void **state)
{
	struct process_stdin	 in;
	struct started		 s;
	struct msgw		 w;
	uint32_t		 req;
	int			 p[2], q[2];

	start_one(&s, "cat", 1);
	in.ref.sandbox_id = sandbox_id;
	in.ref.process_id = s.info.id;
	in.close_at_end = 0;
	msgw_init(&w);
	msg_put_process_stdin(&w, &in);
	/* The proxy's end shuts its reading side: writes fail. */
	assert_int_equal(shutdown(s.sock, SHUT_RD), 0);
	assert_int_equal(pipe(p), 0);
	req = from_apid(MSG_PROCESS_STDIN, p[0], &w);
	assert_int_equal(write(p[1], "lost\n", 5), 5);
	close(p[1]);
	run_deferred();
	run_deferred();
	expect_error_prefix(req, ERR_CONFLICT, "process ");
	assert_int_equal(pipe(q), 0);
	req = from_apid(MSG_PROCESS_STDIN, q[0], &w);
	close(q[1]);
	run_deferred();
	run_deferred();
	expect_apid(req, MSG_OK);
	process_info_free(&s.info);
	proxy_exit(s.call, s.sock, 0);
}

/*
 * A follower apid no longer drains does not keep a deleted process: its
 * pipe is cut (an end without the exit event) and the ring goes.
 */
static void
test_delete_cuts_readers(void **state)
{
	static unsigned char	 piece[32768];
	struct started		 s;
	uint32_t		 req, call;
	char			 buf[4096];
	ssize_t			 n;
	int			 i, rfd;

	start_one(&s, "yes", 0);
	memset(piece, 'y', sizeof(piece));
	rfd = open_reader(s.info.id, 0, 1);
	for (i = 0; i < 4; i++)
		frame(s.sock, 1, piece, sizeof(piece));
	req = send_ref(MSG_PROCESS_DELETE, s.info.id);
	call = expect_proxy(MSG_DOCKER_PROCESS_SIGNAL, NULL);
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	expect_apid(req, MSG_OK);
	assert_null(TAILQ_FIRST(&all_processes));
	/* What was queued, then the end: no exit event, the pipe closed. */
	while ((n = read(rfd, buf, sizeof(buf))) > 0)
		continue;
	assert_int_equal(n, 0);
	close(rfd);
	process_info_free(&s.info);
	proxy_exit(s.call, s.sock, 137);
}

/* An ended process holds no socket. */
static void
test_ended_closes_its_socket(void **state)
{
	struct started	 s;
	char		 c = 'x';

	start_one(&s, "true", 0);
	assert_int_equal(shutdown(s.sock, SHUT_WR), 0);
	run_deferred();
	proxy_exit(s.call, dup(s.sock), 0);
	run_deferred();
	/* managerd's end is closed: nothing reads what the proxy writes. */
	assert_int_equal(write(s.sock, &c, 1), -1);
	assert_int_equal(errno, EPIPE);
	close(s.sock);
	process_info_free(&s.info);
}

/* At most 16 writers of one process's stdin at once. */
static void
test_stdin_writers_bounded(void **state)
{
	struct process_stdin	 in;
	struct started		 s;
	struct msgw		 w;
	uint32_t		 req[16];
	int			 p[17][2], i;

	start_one(&s, "cat", 1);
	in.ref.sandbox_id = sandbox_id;
	in.ref.process_id = s.info.id;
	in.close_at_end = 0;
	msgw_init(&w);
	msg_put_process_stdin(&w, &in);
	for (i = 0; i < 16; i++) {
		assert_int_equal(pipe(p[i]), 0);
		req[i] = from_apid(MSG_PROCESS_STDIN, p[i][0], &w);
	}
	assert_int_equal(pipe(p[16]), 0);
	expect_error_prefix(from_apid(MSG_PROCESS_STDIN, p[16][0], &w),
	    ERR_LIMIT_EXCEEDED, "process ");
	close(p[16][1]);
	for (i = 0; i < 16; i++)
		close(p[i][1]);
	run_deferred();
	run_deferred();
	for (i = 0; i < 16; i++)
		expect_apid(req[i], MSG_OK);
	process_info_free(&s.info);
	proxy_exit(s.call, s.sock, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_start_record_and_output,
		    proc_setup, teardown),
		cmocka_unit_test_setup_teardown(test_client_id_retries,
		    proc_setup, teardown),
		cmocka_unit_test_setup_teardown(test_gap_for_a_reader_behind,
		    proc_setup, teardown),
		cmocka_unit_test_setup_teardown(test_stdin_through_the_socket,
		    proc_setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_lies_and_death_make_it_lost, proc_setup, teardown),
		cmocka_unit_test_setup_teardown(test_delete_and_sandbox_end,
		    proc_setup, teardown),
		cmocka_unit_test_setup_teardown(test_limit, proc_setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_lie_before_the_start,
		    proc_setup, teardown),
		cmocka_unit_test_setup_teardown(test_stdin_after_a_failure,
		    proc_setup, teardown),
		cmocka_unit_test_setup_teardown(test_delete_cuts_readers,
		    proc_setup, teardown),
		cmocka_unit_test_setup_teardown(test_ended_closes_its_socket,
		    proc_setup, teardown),
		cmocka_unit_test_setup_teardown(test_stdin_writers_bounded,
		    proc_setup, teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
