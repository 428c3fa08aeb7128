/*
 * The clients' real seccomp filters (agent-sandbox-mcp's, the CLI verbs'
 * with and without cp's file calls or attach's terminal calls), each
 * loaded in a forked child: what a client must never do kills it with
 * SIGSYS, and what it does (a REST call to a name that needs a lookup,
 * reading stdin, cp's file dance, raw mode on a pty, its size, the
 * session's signals, by cli_tty.c itself) still works under the filter.
 */
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <netdb.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli.h"
#include "client_seccomp.h"
#include "rest.h"
#include "seccomp_child.h"

static int
load_mcp(enum seccomp_mode mode)
{
	return mcp_seccomp_load(mode);
}

static int
load_cli(enum seccomp_mode mode)
{
	return cli_seccomp_load(mode, 0);
}

static int
load_cli_files(enum seccomp_mode mode)
{
	return cli_seccomp_load(mode, CLI_SECCOMP_FILES);
}

static int
load_cli_tty(enum seccomp_mode mode)
{
	return cli_seccomp_load(mode, CLI_SECCOMP_TTY);
}

/* forbidden calls */

static void
call_rename(void)
{
	syscall(SYS_rename, "/nonexistent/a", "/nonexistent/b");
}

static void
call_unlink(void)
{
	syscall(SYS_unlink, "/nonexistent/a");
}

static void
call_socket_udp(void)
{
	syscall(SYS_socket, AF_INET, SOCK_DGRAM, 0);
}

static void
call_socket_raw(void)
{
	syscall(SYS_socket, AF_INET6, SOCK_RAW, IPPROTO_RAW);
}

static void
call_sendto_addr(void)
{
	struct sockaddr_in	 sin;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	syscall(SYS_sendto, 0, "x", 1, 0, &sin, sizeof(sin));
}

static void
call_bind(void)
{
	struct sockaddr_in	 sin;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	syscall(SYS_bind, 0, &sin, sizeof(sin));
}

/* A terminal's size set rather than read. */
static void
call_ioctl_tiocswinsz(void)
{
	struct winsize	 ws;

	memset(&ws, 0, sizeof(ws));
	syscall(SYS_ioctl, 0, TIOCSWINSZ, &ws);
}

/* A handler for a signal: one a session catches, or one it never does. */
static void
sigaction_ign(int signo)
{
	struct sigaction	 sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigaction(signo, &sa, NULL);
}

static void
call_sigaction_segv(void)
{
	sigaction_ign(SIGSEGV);
}

static void
call_sigaction_quit(void)
{
	sigaction_ign(SIGQUIT);
}

static void
call_sigaction_chld(void)
{
	sigaction_ign(SIGCHLD);
}

static void
call_sigaction_sys(void)
{
	sigaction_ign(SIGSYS);
}

static void
call_setsockopt_other(void)
{
	int	 one = 1;

	syscall(SYS_setsockopt, 0, SOL_SOCKET, SO_REUSEADDR, &one,
	    sizeof(one));
}

/* What no client may do, cp included. */
static const struct forbidden	 never[] = {
	{ "execve", call_execve },
	{ "socket(AF_UNIX)", call_socket_unix },
	{ "socket(AF_NETLINK)", call_socket_netlink },
	{ "socket(AF_INET, SOCK_DGRAM)", call_socket_udp },
	{ "socket(AF_INET6, SOCK_RAW)", call_socket_raw },
	{ "sendto with an address", call_sendto_addr },
	{ "bind", call_bind },
	{ "setsockopt(SO_REUSEADDR)", call_setsockopt_other },
	{ "ptrace", call_ptrace },
	{ "kill", call_kill },
	{ "fork", call_fork },
	{ "mmap(PROT_EXEC)", call_mmap_exec },
	{ "ioctl(TIOCSTI)", call_ioctl_tiocsti },
	{ "fcntl(F_DUPFD)", call_fcntl_dupfd },
	{ "prctl", call_prctl },
	{ "setuid", call_setuid },
};

/* What only cp may do. */
static const struct forbidden	 files[] = {
	{ "openat", call_openat },
	{ "rename", call_rename },
	{ "unlink", call_unlink },
};

/* What only attach and shell may do, or not even they. */
static const struct forbidden	 tty[] = {
	{ "sigaction(SIGSEGV)", call_sigaction_segv },
	{ "sigaction(SIGQUIT)", call_sigaction_quit },
};
/* A signal whose default ends nothing; the filter's own SIGSYS. */
static const struct forbidden	 tty_never[] = {
	{ "ioctl(TIOCSWINSZ)", call_ioctl_tiocswinsz },
	{ "sigaction(SIGCHLD)", call_sigaction_chld },
	{ "sigaction(SIGSYS)", call_sigaction_sys },
};

static void
test_mcp_forbidden(void **state)
{
	(void)state;
	expect_killed(load_mcp, never, SC_NELEM(never));
	expect_killed(load_mcp, files, SC_NELEM(files));
}

static void
test_cli_forbidden(void **state)
{
	(void)state;
	expect_killed(load_cli, never, SC_NELEM(never));
	expect_killed(load_cli, files, SC_NELEM(files));
	expect_killed(load_cli, tty, SC_NELEM(tty));
}

static void
test_cli_tty_forbidden(void **state)
{
	(void)state;
	expect_killed(load_cli_tty, never, SC_NELEM(never));
	expect_killed(load_cli_tty, files, SC_NELEM(files));
	expect_killed(load_cli_tty, tty_never, SC_NELEM(tty_never));
}

static void
test_cli_files_forbidden(void **state)
{
	(void)state;
	expect_killed(load_cli_files, never, SC_NELEM(never));
}

/* what a client does: a REST call under the filter */

struct rest_run {
	load_fn		 load;
	const char	*url;
	int		 in;		/* a pipe, as stdin */
	const char	*dir;		/* cp's directory, or NULL */
	int		 pty;		/* attach's terminal, or -1 */
};

/* The parent's fake server: one request, one {"status":"ok"}. */
static int
serve_one(int listener)
{
	static const char	 reply[] = "HTTP/1.1 200 OK\r\n"
	    "Content-Type: application/json\r\nContent-Length: 15\r\n"
	    "Connection: close\r\n\r\n{\"status\":\"ok\"}";
	struct timeval		 tv = { CHILD_TIMEOUT, 0 };
	char			 buf[4096];
	size_t			 got = 0;
	ssize_t			 n;
	int			 fd, ret = -1;

	if (setsockopt(listener, SOL_SOCKET, SO_RCVTIMEO, &tv,
	    sizeof(tv)) == -1 || (fd = accept(listener, NULL, NULL)) == -1)
		return -1;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == -1)
		goto out;
	while (got < sizeof(buf) - 1) {
		if ((n = read(fd, buf + got, sizeof(buf) - 1 - got)) <= 0)
			goto out;
		got += (size_t)n;
		buf[got] = '\0';
		if (strstr(buf, "\r\n\r\n") != NULL)
			break;
	}
	if (strncmp(buf, "GET /healthz HTTP/1.1\r\n", 23) != 0 ||
	    strstr(buf, "Authorization: Bearer sk-test\r\n") == NULL)
		goto out;
	if (write(fd, reply, sizeof(reply) - 1) == (ssize_t)sizeof(reply) - 1)
		ret = 0;
 out:
	close(fd);
	return ret;
}

/*
 * attach's calls on a pty as stdin, cli_tty.c's own: raw mode and back,
 * the size, every signal a session catches caught and waited for in
 * ppoll.  SIGALRM goes back to the child's watchdog after.
 */
static int
tty_calls(void)
{
	struct sigaction	 sa;
	struct cli_tty		 t;
	struct timespec		 ts = { 0, 1000000 };
	struct pollfd		 pfd;
	sigset_t		 wait, alrm;
	int			 cols, rows;

	if (!isatty(STDIN_FILENO) || cli_tty_raw(&t) == -1 || !t.raw)
		return -1;
	cli_tty_restore(&t);
	if (t.raw || cli_tty_size(&cols, &rows) == -1 || cols != 132 ||
	    rows != 40)
		return -1;
	if (cli_signals_catch(&wait) == -1)
		return -1;
	pfd.fd = STDIN_FILENO;
	pfd.events = POLLIN;
	if (ppoll(&pfd, 1, &ts, &wait) == -1)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	return sigaction(SIGALRM, &sa, NULL) == -1 ||
	    sigprocmask(SIG_UNBLOCK, &alrm, NULL) == -1 ? -1 : 0;
}

/* cp's calls: a download's temporary file renamed, stdin spooled. */
static int
cp_calls(const char *dir)
{
	char		 tmp[256], target[256];
	struct stat	 st;
	mode_t		 mask;
	FILE		*fp;
	int		 fd, dfd;

	snprintf(tmp, sizeof(tmp), "%s/.f.XXXXXX", dir);
	snprintf(target, sizeof(target), "%s/f", dir);
	if ((fd = mkostemp(tmp, O_CLOEXEC)) == -1 || write(fd, "abc", 3) != 3)
		return -1;
	mask = umask(022);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) == -1 || close(fd) == -1 ||
	    rename(tmp, target) == -1)
		return -1;
	if ((fd = open(target, O_RDONLY | O_CLOEXEC | O_NOCTTY)) == -1 ||
	    fstat(fd, &st) == -1 || st.st_size != 3 ||
	    lseek(fd, 0, SEEK_CUR) != 0 || (dfd = dup(fd)) == -1)
		return -1;
	close(dfd);
	close(fd);
	if (stat(target, &st) == -1 || unlink(target) == -1)
		return -1;
	if ((fp = tmpfile()) == NULL || fputs("spool", fp) == EOF ||
	    fflush(fp) == EOF || lseek(fileno(fp), 0, SEEK_SET) == -1)
		return -1;
	fclose(fp);
	return 0;
}

static int
rest_child(void *arg)
{
	struct rest_run		*run = arg;
	struct rest_client	 rc, bad;
	struct rest_error	 err;
	json_object		*out = NULL, *v;
	char			 errbuf[256], buf[8];

	/* A name, so that the lookup is real (and happens first). */
	if (rest_client_init(&rc, run->url, "sk-test", errbuf,
	    sizeof(errbuf)) == -1 || rest_client_resolve(&rc, &err) == -1)
		return 2;
	/* A name that did not resolve: later calls fail, look nothing up. */
	if (rest_client_init(&bad, "http://unresolvable:1", NULL, errbuf,
	    sizeof(errbuf)) == -1)
		return 3;
	bad.resolved = 1;
	bad.gai_error = EAI_NONAME;

	/* attach's stdin is its terminal before the filter comes. */
	if (run->pty != -1 && dup2(run->pty, STDIN_FILENO) == -1)
		return 9;
	if (run->load(SECCOMP_MODE_KILL) != 0)
		return 4;
	if (rest_json(&rc, "GET", "/healthz", NULL, &out, &err) != 200 ||
	    !json_object_object_get_ex(out, "status", &v) ||
	    strcmp(json_object_get_string(v), "ok") != 0)
		return 5;
	json_object_put(out);
	if (rest_json(&bad, "GET", "/healthz", NULL, &out, &err) != -1 ||
	    err.status != 0 || strstr(err.message, "cannot resolve") == NULL)
		return 6;
	/* Standard input; whether stderr is a terminal. */
	if (read(run->in, buf, sizeof(buf)) != 2 || memcmp(buf, "{}", 2) != 0)
		return 7;
	(void)isatty(STDERR_FILENO);
	if (run->dir != NULL && cp_calls(run->dir) == -1)
		return 8;
	if (run->pty != -1 && tty_calls() == -1)
		return 10;
	rest_client_free(&bad);
	rest_client_free(&rc);
	return 0;
}

static void
rest_round(load_fn load, const char *dir, int pty, const char *what)
{
	struct rest_run		 run;
	struct sockaddr_in	 sin;
	socklen_t		 len = sizeof(sin);
	char			 url[64];
	int			 listener, p[2], served, status;
	pid_t			 pid;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	listener = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(listener != -1);
	assert_int_equal(bind(listener, (struct sockaddr *)&sin,
	    sizeof(sin)), 0);
	assert_int_equal(listen(listener, 4), 0);
	assert_int_equal(getsockname(listener, (struct sockaddr *)&sin, &len),
	    0);
	snprintf(url, sizeof(url), "http://localhost:%d",
	    (int)ntohs(sin.sin_port));
	assert_int_equal(pipe(p), 0);
	assert_int_equal(write(p[1], "{}", 2), 2);
	close(p[1]);

	run.load = load;
	run.url = url;
	run.in = p[0];
	run.dir = dir;
	run.pty = pty;
	fflush(NULL);
	pid = fork();
	assert_true(pid != -1);
	if (pid == 0) {
		close(listener);
		alarm(CHILD_TIMEOUT);
		_exit(rest_child(&run));
	}
	close(p[0]);
	served = serve_one(listener) == 0;
	close(listener);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	expect_exit_zero(status, what);
	assert_true(served);
}

static void
test_mcp_allowed(void **state)
{
	(void)state;
	rest_round(load_mcp, NULL, -1, "agent-sandbox-mcp under its filter");
}

static void
test_cli_allowed(void **state)
{
	(void)state;
	rest_round(load_cli, NULL, -1, "agent-sandbox under its filter");
}

static void
test_cli_files_allowed(void **state)
{
	char	 dir[] = "/tmp/test_client_seccomp.XXXXXX";

	(void)state;
	assert_non_null(mkdtemp(dir));
	rest_round(load_cli_files, dir, -1,
	    "agent-sandbox cp under its filter");
	/* The child removed what it made. */
	assert_int_equal(rmdir(dir), 0);
}

static void
test_cli_tty_allowed(void **state)
{
	struct winsize	 ws;
	int		 master, slave;

	(void)state;
	master = posix_openpt(O_RDWR | O_NOCTTY);
	assert_true(master != -1);
	assert_int_equal(grantpt(master), 0);
	assert_int_equal(unlockpt(master), 0);
	slave = open(ptsname(master), O_RDWR | O_NOCTTY);
	assert_true(slave != -1);
	memset(&ws, 0, sizeof(ws));
	ws.ws_col = 132;
	ws.ws_row = 40;
	assert_int_equal(ioctl(master, TIOCSWINSZ, &ws), 0);
	rest_round(load_cli_tty, NULL, slave,
	    "agent-sandbox attach under its filter");
	close(slave);
	close(master);
}

static void
test_mode_env(void **state)
{
	(void)state;
	assert_int_equal(unsetenv("AGENT_SANDBOX_SECCOMP"), 0);
	assert_int_equal(client_seccomp_mode("test"), SECCOMP_MODE_KILL);
	assert_int_equal(setenv("AGENT_SANDBOX_SECCOMP", "trap", 1), 0);
	assert_int_equal(client_seccomp_mode("test"), SECCOMP_MODE_TRAP);
	assert_int_equal(setenv("AGENT_SANDBOX_SECCOMP", "off", 1), 0);
	fflush(NULL);
	assert_int_equal(client_seccomp_mode("test"), -1);
	assert_int_equal(unsetenv("AGENT_SANDBOX_SECCOMP"), 0);
}

int
main(void)
{
	const struct CMUnitTest	 tests[] = {
		cmocka_unit_test(test_mode_env),
		cmocka_unit_test(test_mcp_forbidden),
		cmocka_unit_test(test_mcp_allowed),
		cmocka_unit_test(test_cli_forbidden),
		cmocka_unit_test(test_cli_allowed),
		cmocka_unit_test(test_cli_files_forbidden),
		cmocka_unit_test(test_cli_files_allowed),
		cmocka_unit_test(test_cli_tty_forbidden),
		cmocka_unit_test(test_cli_tty_allowed),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
