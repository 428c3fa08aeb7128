/*
 * Tests for client/cli_attach.c and cli_tty.c: attach and shell, each
 * run in a forked child (its stdin a file, /dev/null or a pty; stdout
 * and stderr files) against a fake server on a thread of the parent,
 * which plays one connection after another: HTTP answers and one
 * WebSocket, whose frames from the client it records.  The end of a
 * piped stdin is a stdin_close text frame after the last of its bytes,
 * on the same WebSocket; the server's error frames are said once; shell
 * deletes its process after a signal during its start or its handshake;
 * and a signal from outside (SIGQUIT, SIGUSR1, SIGALRM, a real-time
 * one, even SIGSEGV) ends a session on a raw terminal with the terminal
 * restored and 128 plus its number, rather than killing the CLI.
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli.h"
#include "memcheck.h"
#include "websocket.h"

#define KEY		"test-key-0123456789abcdef"
#define SB		"sb_0123456789abcdef"
#define PROC		"proc_0123456789abcdef"
#define PROC_PATH	"/v1/sandboxes/" SB "/processes/" PROC
#define STDIN_CLOSE	"{\"type\":\"stdin_close\"}"
#define EXIT_3		"{\"type\":\"exit\",\"status\":\"exited\"," \
			"\"exit_code\":3}"
#define IDLE_MS		5000	/* a connection, or a client, that does
				   not come: the fake gives up */

/* cli_attach_args' usage errors go here (agent-sandbox.c has it). */
int
cli_usage(const char *verb)
{
	(void)verb;
	return CLI_EXIT_USAGE;
}

/* --- the fake server ----------------------------------------------------- */

enum step_kind { HTTP, WEBSOCKET };

/* One connection the fake takes, in turn. */
struct step {
	enum step_kind	 kind;
	const char	*answer;	/* HTTP: all of it */
	int		 signal_first;	/* to the child, then the answer */
	/* WEBSOCKET, after the 101: */
	const char	*output;	/* a binary frame */
	const char	*texts[3];	/* text frames */
	int		 signal_after;	/* to the child at its first text */
	int		 exit_now;	/* the exit frame and the close */
	int		 exit_on_close;	/* ... once stdin_close came */
};

struct fake {
	int			 lfd;
	int			 port;
	pthread_t		 th;
	const struct step	*steps;
	size_t			 nsteps;
	pid_t			 child;
	char			 log[8192];	/* each request's first line */
	size_t			 loglen;
	unsigned char		*bin;		/* the client's binary frames */
	size_t			 binlen;
	char			 texts[4096];	/* its text frames, a line each */
	size_t			 textslen;
	int			 bin_after_text;
	int			 got_close;
	int			 signalled;	/* signal_after sent */
};

static struct fake	 fk;

/* The thread asserts nothing: cmocka's checks are the main thread's. */
static void
send_all(int fd, const void *p, size_t n)
{
	(void)send(fd, p, n, MSG_NOSIGNAL);
}

/* A frame as a server sends it: unmasked. */
static void
send_frame(int fd, int opcode, const void *data, size_t len)
{
	unsigned char	 head[10];
	size_t		 n = 0;

	head[n++] = 0x80 | opcode;
	if (len < 126)
		head[n++] = len;
	else {
		head[n++] = 126;
		head[n++] = len >> 8;
		head[n++] = len & 0xff;
	}
	send_all(fd, head, n);
	send_all(fd, data, len);
}

static void
send_exit(int fd)
{
	send_frame(fd, 1, EXIT_3, strlen(EXIT_3));
	send_frame(fd, 8, "\x03\xe8", 2);
}

/* Reads until the head's end and a Content-Length body: the head. */
static void
read_request(int fd, char *req, size_t size)
{
	size_t		 n = 0, want = 0;
	const char	*end, *cl;
	ssize_t		 r;

	req[0] = '\0';
	for (;;) {
		if ((end = strstr(req, "\r\n\r\n")) != NULL) {
			cl = strcasestr(req, "\r\nContent-Length: ");
			want = (size_t)(end + 4 - req) +
			    (cl != NULL && cl < end ? strtoul(cl + 18, NULL,
			    10) : 0);
			if (n >= want)
				break;
		}
		if (n + 1 >= size ||
		    (r = recv(fd, req + n, size - 1 - n, 0)) <= 0)
			break;
		n += r;
		req[n] = '\0';
	}
}

static void
log_line(const char *req)
{
	size_t	 n = strcspn(req, "\r\n");

	if (fk.loglen + n + 2 > sizeof(fk.log))
		return;
	memcpy(fk.log + fk.loglen, req, n);
	fk.loglen += n;
	fk.log[fk.loglen++] = '\n';
	fk.log[fk.loglen] = '\0';
}

/* A frame of the client's at p (masked, as it must be): 0 if partial. */
static size_t
client_frame(unsigned char *p, size_t n, int *opcode,
    unsigned char **data, size_t *len)
{
	size_t	 hl = 2, i;
	uint64_t l;

	if (n < 2)
		return 0;
	l = p[1] & 0x7f;
	if (l == 126) {
		if (n < 4)
			return 0;
		l = (uint64_t)p[2] << 8 | p[3];
		hl = 4;
	} else if (l == 127) {
		if (n < 10)
			return 0;
		for (l = 0, i = 0; i < 8; i++)
			l = l << 8 | p[2 + i];
		hl = 10;
	}
	if (!(p[1] & 0x80) || n < hl + 4 + l)
		return 0;
	*data = p + hl + 4;
	for (i = 0; i < l; i++)
		(*data)[i] ^= p[hl + i % 4];
	*opcode = p[0] & 0x0f;
	*len = l;
	return hl + 4 + l;
}

/* One frame of the client's: recorded, answered as the step says. */
static void
client_message(int fd, const struct step *st, int opcode,
    const unsigned char *data, size_t len)
{
	if (opcode == 2) {
		if ((fk.bin = realloc(fk.bin, fk.binlen + len + 1)) == NULL)
			abort();
		memcpy(fk.bin + fk.binlen, data, len);
		fk.binlen += len;
		if (fk.textslen > 0)
			fk.bin_after_text = 1;
	} else if (opcode == 1 && fk.textslen + len + 2 <= sizeof(fk.texts)) {
		memcpy(fk.texts + fk.textslen, data, len);
		fk.textslen += len;
		fk.texts[fk.textslen++] = '\n';
		fk.texts[fk.textslen] = '\0';
		if (st->exit_on_close && len == strlen(STDIN_CLOSE) &&
		    memcmp(data, STDIN_CLOSE, len) == 0)
			send_exit(fd);
		/* The first resize: the session runs, its terminal raw. */
		if (st->signal_after && !fk.signalled) {
			kill(fk.child, st->signal_after);
			fk.signalled = 1;
		}
	} else if (opcode == 8) {
		if (!st->exit_now && !st->exit_on_close)
			send_frame(fd, 8, "\x03\xe8", 2);
		fk.got_close = 1;
	}
}

/* After the 101: the step's frames, then the client's, till it goes. */
static void
websocket(int fd, const char *req, const struct step *st)
{
	char		 head[256], acc[WS_ACCEPT_LEN + 1];
	char		 key[WS_KEY_LEN + 1] = "";
	unsigned char	*buf = NULL, *data;
	const char	*k;
	struct pollfd	 pfd = { fd, POLLIN, 0 };
	size_t		 have = 0, off, n, len, i;
	ssize_t		 r;
	int		 op;

	if ((k = strstr(req, "Sec-WebSocket-Key: ")) != NULL)
		strlcpy(key, k + 19, sizeof(key));
	if (ws_accept_key(key, acc) == -1)
		strlcpy(acc, "-", sizeof(acc));
	snprintf(head, sizeof(head), "HTTP/1.1 101 Switching Protocols\r\n"
	    "Upgrade: websocket\r\nConnection: Upgrade\r\n"
	    "Sec-WebSocket-Accept: %s\r\n\r\n", acc);
	send_all(fd, head, strlen(head));
	if (st->output != NULL)
		send_frame(fd, 2, st->output, strlen(st->output));
	for (i = 0; i < 3 && st->texts[i] != NULL; i++)
		send_frame(fd, 1, st->texts[i], strlen(st->texts[i]));
	if (st->exit_now)
		send_exit(fd);
	while (poll(&pfd, 1, IDLE_MS) == 1) {
		if ((buf = realloc(buf, have + 65536)) == NULL)
			abort();
		if ((r = recv(fd, buf + have, 65536, 0)) <= 0)
			break;
		have += r;
		for (off = 0; (n = client_frame(buf + off, have - off, &op,
		    &data, &len)) > 0; off += n)
			client_message(fd, st, op, data, len);
		memmove(buf, buf + off, have - off);
		have -= off;
	}
	free(buf);
}

static void *
serve(void *arg)
{
	const struct step	*st;
	struct pollfd		 pfd = { fk.lfd, POLLIN, 0 };
	sigset_t		 all;
	char			 req[8192];
	size_t			 i;
	int			 fd;

	(void)arg;
	/* The signals are the child's; none of ours. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (i = 0; i < fk.nsteps; i++) {
		st = &fk.steps[i];
		if (poll(&pfd, 1, IDLE_MS) != 1 ||
		    (fd = accept(fk.lfd, NULL, NULL)) == -1)
			break;
		read_request(fd, req, sizeof(req));
		log_line(req);
		if (st->signal_first)
			kill(fk.child, st->signal_first);
		if (st->kind == HTTP)
			send_all(fd, st->answer, strlen(st->answer));
		else
			websocket(fd, req, st);
		close(fd);
	}
	return NULL;
}

/* --- the child: the verb with these streams ------------------------------ */

struct run {
	int		(*verb)(struct cli *, int, char **);
	const char	*args[8];
	int		 in;		/* its stdin */
	char		 out[64];	/* its stdout's and stderr's files */
	char		 err[64];
	int		 status;	/* waitpid's */
};

static int
child(struct run *r)
{
	struct rlimit	 no_core = { 0, 0 };
	struct cli	 cli;
	char		 url[64], why[256], *argv[8];
	int		 out, err, argc, ret;

	(void)setrlimit(RLIMIT_CORE, &no_core);
	signal(SIGPIPE, SIG_IGN);
	alarm(20);
	if ((out = open(r->out, O_WRONLY | O_CREAT | O_TRUNC, 0600)) == -1 ||
	    (err = open(r->err, O_WRONLY | O_CREAT | O_TRUNC, 0600)) == -1 ||
	    dup2(r->in, STDIN_FILENO) == -1 ||
	    dup2(out, STDOUT_FILENO) == -1 || dup2(err, STDERR_FILENO) == -1)
		return 90;
	memset(&cli, 0, sizeof(cli));
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", fk.port);
	if (rest_client_init(&cli.rc, url, KEY, why, sizeof(why)) == -1)
		return 91;
	cli.rc.timeout = 5;
	for (argc = 0; r->args[argc] != NULL; argc++)
		if ((argv[argc] = strdup(r->args[argc])) == NULL)
			return 92;
	argv[argc] = NULL;
	ret = r->verb(&cli, argc, argv);
	while (argc > 0)
		free(argv[--argc]);
	rest_client_free(&cli.rc);
	fflush(NULL);
	return ret;
}

/* The verb in a child against these steps; its end in r->status. */
static void
play(struct run *r, const struct step *steps, size_t nsteps)
{
	struct sockaddr_in	 sin;
	socklen_t		 sl = sizeof(sin);
	pid_t			 pid;

	free(fk.bin);
	memset(&fk, 0, sizeof(fk));
	fk.steps = steps;
	fk.nsteps = nsteps;
	assert_true((fk.lfd = socket(AF_INET, SOCK_STREAM, 0)) != -1);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fk.lfd, (struct sockaddr *)&sin, sizeof(sin)),
	    0);
	assert_int_equal(listen(fk.lfd, 4), 0);
	assert_int_equal(getsockname(fk.lfd, (struct sockaddr *)&sin, &sl),
	    0);
	fk.port = ntohs(sin.sin_port);
	snprintf(r->out, sizeof(r->out), "/tmp/test_cli_attach.out.%d",
	    (int)getpid());
	snprintf(r->err, sizeof(r->err), "/tmp/test_cli_attach.err.%d",
	    (int)getpid());
	fflush(NULL);
	assert_true((pid = fork()) != -1);
	if (pid == 0) {
		close(fk.lfd);
		_exit(child(r));
	}
	fk.child = pid;
	assert_int_equal(pthread_create(&fk.th, NULL, serve, NULL), 0);
	assert_int_equal(waitpid(pid, &r->status, 0), pid);
	pthread_join(fk.th, NULL);
	close(fk.lfd);
}

/* What the child wrote to this file; malloc'd. */
static char *
slurp(const char *path)
{
	FILE	*fp;
	char	*s;
	long	 n;

	assert_non_null(fp = fopen(path, "r"));
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	rewind(fp);
	assert_non_null(s = malloc(n + 1));
	assert_int_equal(fread(s, 1, n, fp), (size_t)n);
	s[n] = '\0';
	fclose(fp);
	unlink(path);
	return s;
}

static void
expect_exit(const struct run *r, int code)
{
	if (WIFSIGNALED(r->status))
		fail_msg("the CLI was killed by signal %d",
		    WTERMSIG(r->status));
	assert_true(WIFEXITED(r->status));
	assert_int_equal(WEXITSTATUS(r->status), code);
}

static const char	 get_piped[] = "HTTP/1.1 200 OK\r\n"
    "Content-Type: application/json\r\nContent-Length: 60\r\n\r\n"
    "{\"id\": \"" PROC "\", \"tty\": false, \"stdin\": true}";
static const char	 get_tty[] = "HTTP/1.1 200 OK\r\n"
    "Content-Type: application/json\r\nContent-Length: 59\r\n\r\n"
    "{\"id\": \"" PROC "\", \"tty\": true, \"stdin\": true}";
static const char	 created[] = "HTTP/1.1 201 Created\r\n"
    "Content-Type: application/json\r\nContent-Length: 59\r\n\r\n"
    "{\"id\": \"" PROC "\", \"tty\": true, \"stdin\": true}";
static const char	 deleted[] = "HTTP/1.1 204 No Content\r\n\r\n";

/* --- the tests ----------------------------------------------------------- */

/*
 * Piped stdin: every byte in binary frames, then stdin_close on the
 * same WebSocket (no POST .../stdin of its own), then the output until
 * the exit.
 */
static void
test_stdin_close_frame(void **state)
{
	const struct step	 steps[] = {
		{ .kind = HTTP, .answer = get_piped },
		{ .kind = WEBSOCKET, .output = "hello\n", .exit_on_close = 1 },
	};
	struct run		 r = { .verb = cli_attach,
	    .args = { "attach", SB, PROC, NULL } };
	unsigned char		*data;
	char			 path[] = "/tmp/test_cli_attach.in.XXXXXX";
	char			*out, *err;
	size_t			 n = 300000, i;
	int			 fd;

	(void)state;
	assert_true(strlen(get_piped) == strcspn(get_piped, "{") + 60);
	assert_true(strlen(created) == strcspn(created, "{") + 59);
	assert_non_null(data = malloc(n));
	for (i = 0; i < n; i++)
		data[i] = (unsigned char)(i * 7 + (i >> 9));
	assert_true((fd = mkstemp(path)) != -1);
	assert_int_equal(write(fd, data, n), (ssize_t)n);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	unlink(path);
	r.in = fd;
	play(&r, steps, 2);
	close(fd);
	out = slurp(r.out);
	err = slurp(r.err);
	if (strcmp(err, "") != 0)
		fail_msg("stderr: %s", err);
	expect_exit(&r, 3);
	assert_string_equal(out, "hello\n");
	assert_int_equal(fk.binlen, n);
	assert_memory_equal(fk.bin, data, n);
	assert_string_equal(fk.texts, STDIN_CLOSE "\n");
	assert_false(fk.bin_after_text);
	assert_string_equal(fk.log, "GET " PROC_PATH " HTTP/1.1\n"
	    "GET " PROC_PATH "/attach HTTP/1.1\n");
	free(out);
	free(err);
	free(data);
}

/* The server's error frames: the first one said, without its escapes. */
static void
test_error_frames(void **state)
{
	const struct step	 steps[] = {
		{ .kind = HTTP, .answer = get_piped },
		{ .kind = WEBSOCKET, .texts = {
		    "{\"type\": \"error\", \"message\": \"stdin is closed"
		    "\\u001b[2J\"}",
		    "{\"type\": \"error\", \"message\": \"again\"}" },
		    .exit_now = 1 },
	};
	struct run		 r = { .verb = cli_attach,
	    .args = { "attach", "--no-stdin", SB, PROC, NULL } };
	char			*out, *err;

	(void)state;
	assert_true((r.in = open("/dev/null", O_RDONLY)) != -1);
	play(&r, steps, 2);
	close(r.in);
	out = slurp(r.out);
	err = slurp(r.err);
	expect_exit(&r, 3);
	assert_string_equal(err, "agent-sandbox: " PROC ": stdin is closed "
	    "[2J\n");
	assert_string_equal(fk.texts, "");
	free(out);
	free(err);
}

/* shell: a signal while it starts, or in its handshake, still deletes. */
static void
shell_signalled(int in_start, int signo)
{
	const struct step	 steps[] = {
		{ .kind = HTTP, .answer = created,
		    .signal_first = in_start ? signo : 0 },
		{ .kind = WEBSOCKET, .signal_first = in_start ? 0 : signo },
		{ .kind = HTTP, .answer = deleted },
	};
	struct run		 r = { .verb = cli_shell,
	    .args = { "shell", SB, NULL } };
	char			*out, *err;

	assert_true((r.in = open("/dev/null", O_RDONLY)) != -1);
	play(&r, steps, 3);
	close(r.in);
	out = slurp(r.out);
	err = slurp(r.err);
	expect_exit(&r, 128 + signo);
	assert_string_equal(fk.log, "POST /v1/sandboxes/" SB "/processes "
	    "HTTP/1.1\nGET " PROC_PATH "/attach HTTP/1.1\n"
	    "DELETE " PROC_PATH " HTTP/1.1\n");
	free(out);
	free(err);
}

static void
test_shell_signal_in_start(void **state)
{
	(void)state;
	shell_signalled(1, SIGTERM);
}

static void
test_shell_signal_in_handshake(void **state)
{
	(void)state;
	shell_signalled(0, SIGINT);
}

/*
 * A signal from outside, on a raw terminal: the session ends with the
 * terminal as it was and 128 + the signal, the CLI not killed by it.
 */
static void
raw_signalled(int signo)
{
	const struct step	 steps[] = {
		{ .kind = HTTP, .answer = get_tty },
		{ .kind = WEBSOCKET, .signal_after = signo },
	};
	struct run		 r = { .verb = cli_attach,
	    .args = { "attach", SB, PROC, NULL } };
	struct termios		 before, after;
	struct winsize		 ws = { .ws_row = 40, .ws_col = 132 };
	char			*out, *err;
	int			 master;

	assert_true((master = posix_openpt(O_RDWR | O_NOCTTY)) != -1);
	assert_int_equal(grantpt(master), 0);
	assert_int_equal(unlockpt(master), 0);
	/* A size: the session's first frame says it, once it runs. */
	assert_int_equal(ioctl(master, TIOCSWINSZ, &ws), 0);
	assert_true((r.in = open(ptsname(master), O_RDWR | O_NOCTTY)) != -1);
	assert_int_equal(tcgetattr(r.in, &before), 0);
	assert_true(before.c_lflag & ICANON);
	play(&r, steps, 2);
	assert_int_equal(tcgetattr(r.in, &after), 0);
	close(r.in);
	close(master);
	out = slurp(r.out);
	err = slurp(r.err);
	if (WIFSIGNALED(r.status) || !(after.c_lflag & ICANON))
		fail_msg("signal %d: %s, the terminal %s", signo,
		    WIFSIGNALED(r.status) ? "killed" : "not killed",
		    after.c_lflag & ICANON ? "restored" : "left raw");
	expect_exit(&r, 128 + signo);
	assert_int_equal(after.c_lflag, before.c_lflag);
	assert_int_equal(after.c_iflag, before.c_iflag);
	assert_int_equal(after.c_oflag, before.c_oflag);
	assert_string_equal(fk.texts,
	    "{\"type\":\"resize\",\"cols\":132,\"rows\":40}\n");
	free(out);
	free(err);
}

static void
test_raw_signals(void **state)
{
	(void)state;
	raw_signalled(SIGQUIT);
	raw_signalled(SIGUSR1);
	raw_signalled(SIGALRM);
	raw_signalled(SIGRTMIN + 1);
	raw_signalled(SIGHUP);
	/*
	 * A fault's signal, sent: the terminal back, the session ended.  Not
	 * under valgrind, which takes a SIGSEGV for its own and ends the
	 * process with its report (status 1) instead of the default action.
	 */
	if (!under_memcheck())
		raw_signalled(SIGSEGV);
}

int
main(void)
{
	const struct CMUnitTest	 tests[] = {
		cmocka_unit_test(test_stdin_close_frame),
		cmocka_unit_test(test_error_frames),
		cmocka_unit_test(test_shell_signal_in_start),
		cmocka_unit_test(test_shell_signal_in_handshake),
		cmocka_unit_test(test_raw_signals),
	};
	int	 r;

	signal(SIGPIPE, SIG_IGN);
	r = cmocka_run_group_tests(tests, NULL, NULL);
	free(fk.bin);
	return r;
}
