/*
 * Tests for dockerd-proxy/proxy_dispatch.c's process messages and the
 * waiting archive PUT: what a well-formed DOCKER_PROCESS_* or
 * ARCHIVE_PUT_GO hands to its operation (stand-ins here that record
 * it), and that a lying managerd (no socket, a malformed payload, a size
 * where there is none, a descriptor where there is none, a waiting PUT
 * of a pipe, a GO nothing waits for) is fatal, in a forked child, before
 * any operation runs.  A socket the kernel dropped on its way in is a
 * 503, not a lie.
 */
#include <sys/socket.h>

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

#include <cmocka.h>

#include "assert_fatal.h"
#include "proxy.h"

#define SANDBOX		"sb_00112233aabbccdd"
#define EXEC_ID		"0123456789abcdef0123456789abcdef" \
			"0123456789abcdef0123456789abcdef"

/* What the operations were handed. */
static struct {
	int				 starts, signals, inspects, resizes;
	int				 follows, updates, puts, gos;
	uint8_t				 put_flags;
	uint64_t			 go_length;
	int				 go_answer;	/* what GO returns */
	struct docker_process		 d;
	int				 fd;
	struct docker_process_signal	 s;
	struct docker_process_exec	 x;
} got;

static struct proxy	 px;
static int		 managerd_end;	/* the test's end of the channel */

/* --- the operations, recorded --------------------------------------------- */

void
docker_process_start(struct proxy *p, uint32_t peerid,
    struct docker_process *d, int fd)
{
	got.starts++;
	docker_process_free(&got.d);
	got.d = *d;
	memset(d, 0, sizeof(*d));
	if (got.fd != -1)
		close(got.fd);
	got.fd = fd;
}

void
docker_process_signal(struct proxy *p, uint32_t peerid,
    const struct docker_process_signal *s)
{
	got.signals++;
	got.s = *s;
	got.s.id = NULL;
}

static void
record_exec(const struct docker_process_exec *x)
{
	docker_process_exec_free(&got.x);
	got.x.id = strdup(x->id);
	got.x.exec_id = strdup(x->exec_id);
	got.x.cols = x->cols;
	got.x.rows = x->rows;
}

void
docker_process_inspect(struct proxy *p, uint32_t peerid,
    const struct docker_process_exec *x)
{
	got.inspects++;
	record_exec(x);
}

void
docker_process_resize(struct proxy *p, uint32_t peerid,
    const struct docker_process_exec *x)
{
	got.resizes++;
	record_exec(x);
}

/* The other operations are not this test's: reaching one is a failure. */
void
docker_ping(struct proxy *p, uint32_t peerid)
{
	fail();
}

void
docker_create(struct proxy *p, uint32_t peerid, struct docker_create *dc)
{
	fail();
}

void
docker_destroy(struct proxy *p, uint32_t peerid, const char *id)
{
	fail();
}

void
docker_state(struct proxy *p, uint32_t peerid, const char *id)
{
	fail();
}

void
docker_stats(struct proxy *p, uint32_t peerid, const char *id)
{
	fail();
}

void
docker_list(struct proxy *p, uint32_t peerid)
{
	fail();
}

void
docker_events_follow(struct proxy *p)
{
	got.follows++;
}

void
docker_update(struct proxy *p, uint32_t peerid, struct docker_create *dc)
{
	got.updates++;
	assert_string_equal(dc->id, SANDBOX);
	docker_create_free(dc);
}

void
proxy_metrics_send(struct peer *p, uint32_t peerid)
{
	fail();
}

void
docker_exec(struct proxy *p, uint32_t peerid, struct docker_exec *de,
    int fd)
{
	fail();
}

void
docker_exec_cancel(struct proxy *p, uint32_t peerid)
{
	fail();
}

void
docker_archive_get(struct proxy *p, uint32_t peerid, struct archive_get *ag,
    int fd)
{
	fail();
}

void
docker_archive_put(struct proxy *p, uint32_t peerid, struct archive_put *ap,
    int fd)
{
	got.puts++;
	got.put_flags = ap->flags;
	archive_put_free(ap);
	free(ap);
	close(fd);
}

int
docker_archive_put_go(struct proxy *p, uint32_t peerid, uint64_t length)
{
	got.gos++;
	got.go_length = length;
	return got.go_answer;
}

void
docker_archive_head(struct proxy *p, uint32_t peerid,
    struct archive_head *ah)
{
	fail();
}

/* --- messages from managerd ----------------------------------------------- */

static void
from_managerd(uint32_t type, int fd, int fd_lost, struct msgw *w)
{
	struct imsg	 imsg;

	memset(&imsg, 0, sizeof(imsg));
	imsg.hdr.type = type;
	imsg.hdr.peerid = 42;
	imsg.fd = fd;
	imsg.fd_lost = fd_lost;
	if (w != NULL) {
		imsg.len = w->len;
		imsg.data = w->buf;
	}
	imsg.hdr.len = (uint32_t)imsg.len;
	proxy_dispatch_parent(&px.parent, &imsg);
	if (imsg.fd != -1)
		close(imsg.fd);
}

static void
process_init(struct docker_process *d)
{
	memset(d, 0, sizeof(*d));
	d->id = strdup(SANDBOX);
	d->argc = 2;
	d->argv = calloc(3, sizeof(char *));
	assert_non_null(d->argv);
	d->argv[0] = strdup("python3");
	d->argv[1] = strdup("-i");
	d->workdir = strdup("/workspace");
	d->tty = 1;
	d->stdin_open = 1;
	d->cols = 120;
	d->rows = 40;
}

/* A DOCKER_PROCESS_START payload, after change(d) if given. */
static void
start_payload(struct msgw *w, void (*change)(struct docker_process *))
{
	struct docker_process	 d;

	process_init(&d);
	if (change != NULL)
		change(&d);
	msgw_init(w);
	msg_put_docker_process(w, &d);
	docker_process_free(&d);
}

static int
a_socket(void)
{
	int	 sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	close(sv[1]);
	return sv[0];
}

static void
signal_payload(struct msgw *w, long long pid, uint32_t signo, int tree)
{
	static char			 id[] = SANDBOX;
	struct docker_process_signal	 s;

	s.id = id;
	s.pid = pid;
	s.signo = signo;
	s.tree = tree;
	msgw_init(w);
	msg_put_docker_process_signal(w, &s);
}

static void
exec_payload(struct msgw *w, const char *eid, uint32_t cols, uint32_t rows)
{
	struct docker_process_exec	 x;

	x.id = strdup(SANDBOX);
	x.exec_id = strdup(eid);
	assert_non_null(x.id);
	assert_non_null(x.exec_id);
	x.cols = cols;
	x.rows = rows;
	msgw_init(w);
	msg_put_docker_process_exec(w, &x);
	docker_process_exec_free(&x);
}

/* --- well-formed ---------------------------------------------------------- */

static void
test_start(void **state)
{
	struct msgw	 w;
	int		 fd;

	start_payload(&w, NULL);
	fd = a_socket();
	from_managerd(MSG_DOCKER_PROCESS_START, fd, 0, &w);
	assert_int_equal(got.starts, 1);
	assert_int_equal(got.fd, fd);
	assert_string_equal(got.d.id, SANDBOX);
	assert_int_equal(got.d.argc, 2);
	assert_string_equal(got.d.argv[1], "-i");
	assert_null(got.d.argv[2]);
	assert_string_equal(got.d.workdir, "/workspace");
	assert_true(got.d.tty && got.d.stdin_open);
	assert_int_equal(got.d.cols, 120);
	assert_int_equal(got.d.rows, 40);
}

static void
test_signal_resize_inspect(void **state)
{
	struct msgw	 w;

	signal_payload(&w, 4242, SIGHUP, 0);
	from_managerd(MSG_DOCKER_PROCESS_SIGNAL, -1, 0, &w);
	assert_int_equal(got.signals, 1);
	assert_int_equal(got.s.pid, 4242);
	assert_int_equal(got.s.signo, SIGHUP);
	assert_false(got.s.tree);
	signal_payload(&w, 2, SIGKILL, 1);
	from_managerd(MSG_DOCKER_PROCESS_SIGNAL, -1, 0, &w);
	assert_int_equal(got.signals, 2);
	assert_true(got.s.tree);

	exec_payload(&w, EXEC_ID, 1000, 1);
	from_managerd(MSG_DOCKER_PROCESS_RESIZE, -1, 0, &w);
	assert_int_equal(got.resizes, 1);
	assert_string_equal(got.x.exec_id, EXEC_ID);
	assert_int_equal(got.x.cols, 1000);
	assert_int_equal(got.x.rows, 1);
	exec_payload(&w, EXEC_ID, 0, 0);
	from_managerd(MSG_DOCKER_PROCESS_INSPECT, -1, 0, &w);
	assert_int_equal(got.inspects, 1);
	assert_string_equal(got.x.id, SANDBOX);
}

/* Out of descriptors on the way in: a 503 for now, nothing started. */
static void
test_start_socket_dropped(void **state)
{
	struct imsgbuf	 ibuf;
	struct imsg	 imsg;
	struct msgr	 r;
	struct msgw	 w;
	int		 starts = got.starts;
	char		*text;

	start_payload(&w, NULL);
	from_managerd(MSG_DOCKER_PROCESS_START, -1, 1, &w);
	assert_int_equal(got.starts, starts);
	assert_int_equal(imsgbuf_flush(&px.parent.ibuf), 0);
	imsgbuf_init(&ibuf, managerd_end);
	assert_true(imsgbuf_read(&ibuf) > 0);
	assert_int_equal(imsg_get(&ibuf, &imsg), 1);
	assert_int_equal(imsg.hdr.type, MSG_ERROR);
	assert_int_equal(imsg.hdr.peerid, 42);
	msgr_init(&r, &imsg);
	assert_int_equal(msgr_u32(&r), ERR_UNAVAILABLE);
	text = msgr_str(&r, 1024);
	assert_non_null(text);
	assert_non_null(strstr(text, "out of descriptors"));
	free(text);
	imsg_free(&imsg);
	imsgbuf_clear(&ibuf);
}

/* --- lies ----------------------------------------------------------------- */

static void
no_argv(struct docker_process *d)
{
	free(d->argv[0]);
	free(d->argv[1]);
	d->argv[0] = NULL;
	d->argc = 0;
}

static void
relative_workdir(struct docker_process *d)
{
	free(d->workdir);
	d->workdir = strdup("workspace");
}

static void
too_wide(struct docker_process *d)
{
	d->cols = PROCESS_TTY_MAX + 1;
}

static void
bad_id(struct docker_process *d)
{
	free(d->id);
	d->id = strdup("sb_../../x");
}

static void
bad_env(struct docker_process *d)
{
	assert_int_equal(env_list_add(&d->env, "A=B", "c"), 0);
}

static void	(*lie_change)(struct docker_process *);

static void
lie_start(void)
{
	struct msgw	 w;

	start_payload(&w, lie_change);
	from_managerd(MSG_DOCKER_PROCESS_START, a_socket(), 0, &w);
}

static void
lie_start_without_socket(void)
{
	struct msgw	 w;

	start_payload(&w, NULL);
	from_managerd(MSG_DOCKER_PROCESS_START, -1, 0, &w);
}

static void
lie_start_trailing_byte(void)
{
	struct msgw	 w;

	start_payload(&w, NULL);
	msgw_u8(&w, 0);
	from_managerd(MSG_DOCKER_PROCESS_START, a_socket(), 0, &w);
}

static void
test_start_lies(void **state)
{
	static const struct {
		void		(*change)(struct docker_process *);
		const char	*why;
	} lies[] = {
		{ no_argv, "malformed payload" },
		{ relative_workdir, "malformed payload" },
		{ too_wide, "malformed payload" },
		{ bad_id, "malformed payload" },
		{ bad_env, "bad environment variable" },
	};
	char	 want[256];
	size_t	 i;

	for (i = 0; i < sizeof(lies) / sizeof(lies[0]); i++) {
		lie_change = lies[i].change;
		snprintf(want, sizeof(want), "bad DOCKER_PROCESS_START message "
		    "from managerd: %s", lies[i].why);
		assert_fatal(lie_start, want);
	}
	assert_fatal(lie_start_without_socket, "bad DOCKER_PROCESS_START "
	    "message from managerd: no process socket");
	assert_fatal(lie_start_trailing_byte, "bad DOCKER_PROCESS_START "
	    "message from managerd: malformed payload");
	assert_int_equal(got.starts, 0);
}

static long long	 lie_pid;
static uint32_t		 lie_signo;

static void
lie_signal(void)
{
	struct msgw	 w;

	signal_payload(&w, lie_pid, lie_signo, 0);
	from_managerd(MSG_DOCKER_PROCESS_SIGNAL, -1, 0, &w);
}

static void
lie_signal_with_socket(void)
{
	struct msgw	 w;

	signal_payload(&w, 100, SIGTERM, 0);
	from_managerd(MSG_DOCKER_PROCESS_SIGNAL, a_socket(), 0, &w);
}

static void
test_signal_lies(void **state)
{
	static const struct {
		long long	 pid;
		uint32_t	 signo;
	} lies[] = {
		/* Our own group, init, everything; then no API signal. */
		{ 1, SIGTERM }, { 0, SIGTERM }, { -100, SIGTERM },
		{ 1LL << 31, SIGTERM }, { 100, SIGQUIT }, { 100, 0 },
		{ 100, SIGSTOP },
	};
	size_t	 i;

	for (i = 0; i < sizeof(lies) / sizeof(lies[0]); i++) {
		lie_pid = lies[i].pid;
		lie_signo = lies[i].signo;
		assert_fatal(lie_signal, "bad DOCKER_PROCESS_SIGNAL message "
		    "from managerd: malformed payload");
	}
	assert_fatal(lie_signal_with_socket, "bad DOCKER_PROCESS_SIGNAL "
	    "message from managerd: unexpected descriptor");
	assert_int_equal(got.signals, 0);
}

static uint32_t		 lie_type, lie_cols, lie_rows;
static const char	*lie_eid;

static void
lie_exec(void)
{
	struct msgw	 w;

	exec_payload(&w, lie_eid, lie_cols, lie_rows);
	from_managerd(lie_type, -1, 0, &w);
}

static void
test_exec_lies(void **state)
{
	static const struct {
		uint32_t	 type;
		const char	*eid;
		uint32_t	 cols, rows;
		const char	*why;
	} lies[] = {
		{ MSG_DOCKER_PROCESS_RESIZE, EXEC_ID, 0, 24, "bad tty size" },
		{ MSG_DOCKER_PROCESS_RESIZE, EXEC_ID, 80, 0, "bad tty size" },
		{ MSG_DOCKER_PROCESS_RESIZE, EXEC_ID, 80, 1001,
		    "malformed payload" },
		{ MSG_DOCKER_PROCESS_INSPECT, EXEC_ID, 80, 24,
		    "a size in an inspect" },
		{ MSG_DOCKER_PROCESS_INSPECT, "../../containers/x/json", 0, 0,
		    "malformed payload" },
		{ MSG_DOCKER_PROCESS_INSPECT, "0123456789ABCDEF0123456789ABCDEF"
		    "0123456789ABCDEF0123456789ABCDEF", 0, 0,
		    "malformed payload" },
		{ MSG_DOCKER_PROCESS_RESIZE, "", 80, 24, "malformed payload" },
	};
	char	 want[256];
	size_t	 i;

	for (i = 0; i < sizeof(lies) / sizeof(lies[0]); i++) {
		lie_type = lies[i].type;
		lie_eid = lies[i].eid;
		lie_cols = lies[i].cols;
		lie_rows = lies[i].rows;
		snprintf(want, sizeof(want), "bad %s message from managerd: %s",
		    msg_type_name(lie_type), lies[i].why);
		assert_fatal(lie_exec, want);
	}
	assert_int_equal(got.inspects + got.resizes, 0);
}

/* --- the waiting archive PUT ----------------------------------------------- */

static void
put_payload(struct msgw *w, uint8_t flags)
{
	static char		 id[] = SANDBOX, path[] = "/workspace";
	struct archive_put	 ap;

	ap.id = id;
	ap.path = path;
	ap.flags = flags;
	ap.length = -1;
	msgw_init(w);
	msg_put_archive_put(w, &ap);
}

/* An unlinked regular file, as managerd's tar spool is. */
static int
a_file(void)
{
	int	 fd;

	fd = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	assert_true(fd != -1);
	return fd;
}

static void
go_payload(struct msgw *w, uint64_t length)
{
	msgw_init(w);
	msg_put_u64(w, length);
}

static void
test_put_wait_go(void **state)
{
	struct msgw	 w;

	put_payload(&w, ARCHIVE_PUT_NO_REPLACE | ARCHIVE_PUT_PRIME |
	    ARCHIVE_PUT_WAIT);
	from_managerd(MSG_DOCKER_ARCHIVE_PUT, a_file(), 0, &w);
	assert_int_equal(got.puts, 1);
	assert_int_equal(got.put_flags, ARCHIVE_PUT_NO_REPLACE |
	    ARCHIVE_PUT_PRIME | ARCHIVE_PUT_WAIT);
	go_payload(&w, 10496000);
	from_managerd(MSG_DOCKER_ARCHIVE_PUT_GO, -1, 0, &w);
	go_payload(&w, INT64_MAX);
	from_managerd(MSG_DOCKER_ARCHIVE_PUT_GO, -1, 0, &w);
	assert_int_equal(got.gos, 2);
	assert_true(got.go_length == INT64_MAX);
}

static void
lie_put_wait_unprimed(void)
{
	struct msgw	 w;

	put_payload(&w, ARCHIVE_PUT_NO_REPLACE | ARCHIVE_PUT_WAIT);
	from_managerd(MSG_DOCKER_ARCHIVE_PUT, a_file(), 0, &w);
}

static void
lie_put_wait_pipe(void)
{
	struct msgw	 w;
	int		 p[2];

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	close(p[1]);
	put_payload(&w, ARCHIVE_PUT_PRIME | ARCHIVE_PUT_WAIT);
	from_managerd(MSG_DOCKER_ARCHIVE_PUT, p[0], 0, &w);
}

static void
lie_go_huge(void)
{
	struct msgw	 w;

	go_payload(&w, (uint64_t)INT64_MAX + 1);
	from_managerd(MSG_DOCKER_ARCHIVE_PUT_GO, -1, 0, &w);
}

static void
lie_go_short(void)
{
	struct msgw	 w;

	msgw_init(&w);
	msgw_u32(&w, 7);
	from_managerd(MSG_DOCKER_ARCHIVE_PUT_GO, -1, 0, &w);
}

static void
lie_go_file(void)
{
	struct msgw	 w;

	go_payload(&w, 1);
	from_managerd(MSG_DOCKER_ARCHIVE_PUT_GO, a_file(), 0, &w);
}

/* The operation says the PUT of that id waits for no GO. */
static void
lie_go_not_waiting(void)
{
	struct msgw	 w;

	got.go_answer = -1;
	go_payload(&w, 1);
	from_managerd(MSG_DOCKER_ARCHIVE_PUT_GO, -1, 0, &w);
}

static void
test_put_wait_lies(void **state)
{
	static const struct {
		void		(*f)(void);
		uint32_t	 type;
		const char	*why;
	} lies[] = {
		{ lie_put_wait_unprimed, MSG_DOCKER_ARCHIVE_PUT,
		    "malformed payload" },
		{ lie_put_wait_pipe, MSG_DOCKER_ARCHIVE_PUT,
		    "a waiting PUT's tar is no file" },
		{ lie_go_huge, MSG_DOCKER_ARCHIVE_PUT_GO, "malformed payload" },
		{ lie_go_short, MSG_DOCKER_ARCHIVE_PUT_GO, "malformed payload" },
		{ lie_go_file, MSG_DOCKER_ARCHIVE_PUT_GO,
		    "unexpected descriptor" },
		{ lie_go_not_waiting, MSG_DOCKER_ARCHIVE_PUT_GO,
		    "that PUT waits for no GO" },
	};
	char	 want[256];
	size_t	 i;

	for (i = 0; i < sizeof(lies) / sizeof(lies[0]); i++) {
		snprintf(want, sizeof(want), "bad %s message from managerd: %s",
		    msg_type_name(lies[i].type), lies[i].why);
		assert_fatal(lies[i].f, want);
	}
	assert_int_equal(got.puts, 0);
}

static int
setup(void **state)
{
	int	 sv[2];

	memset(&got, 0, sizeof(got));
	got.fd = -1;
	memset(&px, 0, sizeof(px));
	if ((px.base = event_base_new()) == NULL ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == -1)
		return -1;
	peer_init(&px.parent, px.base, sv[0], "managerd",
	    proxy_dispatch_parent, NULL, &px);
	managerd_end = sv[1];
	return 0;
}

static int
teardown(void **state)
{
	docker_process_free(&got.d);
	docker_process_exec_free(&got.x);
	if (got.fd != -1)
		close(got.fd);
	peer_stop(&px.parent);
	close(managerd_end);
	event_base_free(px.base);
	return 0;
}

/* FOLLOW is empty; with anything in it, or a descriptor, it is a lie. */
static void
lie_follow_payload(void)
{
	struct msgw	 w;

	msgw_init(&w);
	msgw_u8(&w, 1);
	from_managerd(MSG_DOCKER_EVENTS_FOLLOW, -1, 0, &w);
}

static void
lie_follow_socket(void)
{
	from_managerd(MSG_DOCKER_EVENTS_FOLLOW, a_socket(), 0, NULL);
}

/* What only the proxy sends is not an operation. */
static void
lie_event_to_proxy(void)
{
	from_managerd(MSG_DOCKER_EVENTS_UP, -1, 0, NULL);
}

static void
test_events_follow(void **state)
{
	from_managerd(MSG_DOCKER_EVENTS_FOLLOW, -1, 0, NULL);
	assert_int_equal(got.follows, 1);
	assert_fatal(lie_follow_payload, "bad DOCKER_EVENTS_FOLLOW message "
	    "from managerd: unexpected payload");
	assert_fatal(lie_follow_socket, "bad DOCKER_EVENTS_FOLLOW message "
	    "from managerd: unexpected descriptor");
	assert_fatal(lie_event_to_proxy, "bad DOCKER_EVENTS_UP message "
	    "from managerd: not an operation of dockerd-proxy");
	assert_int_equal(got.follows, 1);
}

static void
update_payload(struct msgw *w, const char *id)
{
	struct docker_create	 dc;
	char			 idbuf[64], image[] = "busybox";

	memset(&dc, 0, sizeof(dc));
	strlcpy(idbuf, id, sizeof(idbuf));
	dc.id = idbuf;
	dc.spec.image = image;
	dc.spec.cpus = 0.5;
	dc.spec.memory_mb = 64;
	dc.spec.pids_limit = 32;
	msgw_init(w);
	msg_put_docker_create(w, &dc);
}

static void
lie_update_id(void)
{
	struct msgw	 w;

	update_payload(&w, "../../etc");
	from_managerd(MSG_DOCKER_UPDATE, -1, 0, &w);
}

static void
lie_update_trailing(void)
{
	struct msgw	 w;

	update_payload(&w, SANDBOX);
	msgw_u8(&w, 0);
	from_managerd(MSG_DOCKER_UPDATE, -1, 0, &w);
}

/* An update carries a create's payload, checked as a create's. */
static void
test_update(void **state)
{
	struct msgw	 w;

	update_payload(&w, SANDBOX);
	from_managerd(MSG_DOCKER_UPDATE, -1, 0, &w);
	assert_int_equal(got.updates, 1);
	assert_fatal(lie_update_id, "bad DOCKER_UPDATE message from "
	    "managerd: bad sandbox id");
	assert_fatal(lie_update_trailing, "bad DOCKER_UPDATE message from "
	    "managerd: malformed payload");
	assert_int_equal(got.updates, 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_start, setup, teardown),
		cmocka_unit_test_setup_teardown(test_signal_resize_inspect,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_start_socket_dropped,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_start_lies, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_signal_lies, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_exec_lies, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_events_follow, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_put_wait_go, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_put_wait_lies, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_update, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
