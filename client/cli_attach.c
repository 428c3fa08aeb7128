/*
 * attach and shell (docs/cli.md "Processes"): a process's terminal, or
 * its stdin and output, over a WebSocket (.../attach).  Standard input
 * goes out as binary frames, binary frames come back to stdout, the
 * window's size goes out at the start and on SIGWINCH, and the exit
 * frame gives the CLI's status.  On a terminal, and for a process with
 * a tty and stdin, the terminal is raw (every key is the process's) and
 * Ctrl-] detaches; it is restored on every way out.  Otherwise the end
 * of stdin closes the process's stdin, as docker exec -i does: a text
 * frame {"type": "stdin_close"} after the last of its bytes, on the same
 * WebSocket, so that none is overtaken; and the output is shown until
 * the process ends.  The server's {"type": "error"} frames (its stdin or
 * a resize refused) are said on stderr, the first one.  shell starts
 * /bin/sh on a tty first, its signals caught from then on, and deletes
 * it once the session ends, however it ends.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "ws_client.h"

#define DETACH_KEY	0x1d		/* Ctrl-], as telnet's escape */
#define STDIN_PIECE	(16 * 1024)
#define MAX_QUEUED	(1024 * 1024)	/* unsent input: stop reading */
#define CLOSE_WAIT_MS	2000		/* for the server's close */

struct session {
	struct cli		*cli;
	const char		*sandbox;
	const char		*process;
	struct ws_client	*ws;
	struct cli_tty		 tty;
	sigset_t		 wait;		/* the mask inside ppoll */
	int			 caught;	/* cli_signals_catch() done */
	int			 error_said;	/* an error frame came */
	int			 tty_process;	/* the process has a tty */
	int			 in_open;	/* stdin is still read */
	int			 got_exit;
	struct rest_event	 exit;
	int			 detached;
	int			 write_failed;	/* errno */
	struct timespec		 close_by;	/* once detached */
};

static int
on_output(const unsigned char *p, size_t n, void *arg)
{
	struct session	*s = arg;

	if (cli_write_all(STDOUT_FILENO, p, n) == -1) {
		s->write_failed = errno;
		return -1;
	}
	return 0;
}

/*
 * {"type": "error", "message": ...}: the first one on stderr, without
 * its control characters (a terminal's escapes must not act); a line of
 * its own on a raw terminal too.
 */
static void
say_error(struct session *s, json_object *o)
{
	json_object	*type, *msg;
	char		 text[256];
	const char	*m = "(no message)";
	size_t		 i;

	if (s->error_said || !json_object_object_get_ex(o, "type", &type) ||
	    !json_object_is_type(type, json_type_string) ||
	    strcmp(json_object_get_string(type), "error") != 0)
		return;
	s->error_said = 1;
	if (json_object_object_get_ex(o, "message", &msg) &&
	    json_object_is_type(msg, json_type_string))
		m = json_object_get_string(msg);
	strlcpy(text, m, sizeof(text));
	for (i = 0; text[i] != '\0'; i++)
		if ((unsigned char)text[i] < 0x20 || text[i] == 0x7f)
			text[i] = ' ';
	fprintf(stderr, "agent-sandbox: %s: %s%s", s->process, text,
	    s->tty.raw ? "\r\n" : "\n");
}

/*
 * A text frame: the exit event, checked as .../output's, or an error;
 * others skipped.
 */
static int
on_text(const char *p, size_t n, void *arg)
{
	struct session	*s = arg;
	struct rest_event ev;
	json_object	*o;
	unsigned char	*buf = NULL;
	size_t		 cap = 0;
	char		 text[WS_MAX_TEXT + 1], why[160];

	memcpy(text, p, n);
	text[n] = '\0';
	if ((o = json_tokener_parse(text)) == NULL)
		return 0;
	say_error(s, o);
	if (rest_event_parse(o, 0, &ev, &buf, &cap, why, sizeof(why)) == 0 &&
	    ev.type == REST_EVENT_EXIT && !s->got_exit) {
		s->exit = ev;
		s->exit.obj = NULL;
		s->got_exit = 1;
	}
	json_object_put(o);
	free(buf);
	return 0;
}

static const struct ws_handler	 handler = { on_output, on_text };

/* {"type": "resize", ...} with the window's size, if it has one. */
static void
send_resize(struct session *s)
{
	char	 msg[64];
	int	 cols, rows, n;

	if (!s->tty_process || cli_tty_size(&cols, &rows) == -1)
		return;
	n = snprintf(msg, sizeof(msg), "{\"type\":\"resize\",\"cols\":%d,"
	    "\"rows\":%d}", cols, rows);
	(void)ws_client_send(s->ws, 1, msg, n);
}

/* Ends the session from our side: a close, then its answer, a while. */
static void
detach(struct session *s)
{
	s->detached = 1;
	s->in_open = 0;
	(void)ws_client_close(s->ws);
	clock_gettime(CLOCK_MONOTONIC, &s->close_by);
	s->close_by.tv_sec += CLOSE_WAIT_MS / 1000;
}

/*
 * The end of stdin: on a terminal (hung up) the user has gone; from a
 * pipe or a file, the process gets its end of file too, once the server
 * has written every byte queued before it (which a request of its own,
 * on another connection, could overtake).
 */
static void
stdin_ended(struct session *s)
{
	static const char	 stdin_close[] = "{\"type\":\"stdin_close\"}";

	s->in_open = 0;
	if (s->tty.raw) {
		detach(s);
		return;
	}
	(void)ws_client_send(s->ws, 1, stdin_close, sizeof(stdin_close) - 1);
}

static void
read_stdin(struct session *s)
{
	unsigned char	 buf[STDIN_PIECE], *key;
	ssize_t		 n;

	if ((n = read(STDIN_FILENO, buf, sizeof(buf))) == -1 &&
	    (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		stdin_ended(s);
		return;
	}
	key = s->tty.raw ? memchr(buf, DETACH_KEY, n) : NULL;
	if (key != NULL)
		n = key - buf;
	if (n > 0)
		(void)ws_client_send(s->ws, 0, buf, n);
	if (key != NULL)
		detach(s);
}

/* ppoll's timeout: none, or what is left for the server's close. */
static struct timespec *
close_wait(const struct session *s, struct timespec *left)
{
	struct timespec	 now;

	if (!s->detached)
		return NULL;
	clock_gettime(CLOCK_MONOTONIC, &now);
	left->tv_sec = s->close_by.tv_sec - now.tv_sec;
	left->tv_nsec = s->close_by.tv_nsec - now.tv_nsec;
	if (left->tv_nsec < 0) {
		left->tv_sec--;
		left->tv_nsec += 1000000000;
	}
	if (left->tv_sec < 0)
		left->tv_sec = left->tv_nsec = 0;
	return left;
}

/* 0 when the session is over, -1 when its connection failed. */
static int
session_loop(struct session *s)
{
	struct pollfd	 pfd[2];
	struct timespec	 left, *tmo;
	nfds_t		 n;
	int		 r;

	if (ws_client_io(s->ws, 0) == -1)
		return s->got_exit ? 0 : -1;
	send_resize(s);
	while (cli_signal_ended() == 0 && !s->write_failed) {
		if (cli_signal_resized())
			send_resize(s);
		if ((pfd[0].events = ws_client_events(s->ws)) == 0)
			break;
		pfd[0].fd = ws_client_fd(s->ws);
		pfd[1].fd = STDIN_FILENO;
		pfd[1].events = POLLIN;
		pfd[1].revents = 0;
		n = s->in_open && ws_client_queued(s->ws) < MAX_QUEUED ? 2 : 1;
		tmo = close_wait(s, &left);
		if ((r = ppoll(pfd, n, tmo, &s->wait)) == -1 && errno == EINTR)
			continue;
		if (r == -1 || r == 0)
			break;
		cli_signals_take(&s->wait);
		if (cli_signal_ended() != 0)
			break;
		if (pfd[1].revents != 0)
			read_stdin(s);
		if (ws_client_io(s->ws, pfd[0].revents) == -1)
			return s->got_exit || s->detached ? 0 : -1;
	}
	return 0;
}

/* After the terminal is back: the CLI's status, saying why if odd. */
static int
session_status(struct session *s)
{
	if (s->write_failed == EPIPE)
		return CLI_EXIT_PIPE;
	if (s->write_failed) {
		cli_warn("writing the output: %s", strerror(s->write_failed));
		return CLI_EXIT_FAIL;
	}
	if (s->got_exit)
		return cli_process_status(&s->exit);
	if (cli_signal_ended() != 0)
		return 128 + cli_signal_ended();
	return CLI_EXIT_OK;
}

/* The attachment itself, from the handshake to the CLI's status. */
static int
session_run(struct session *s)
{
	struct rest_error	 err;
	struct rest_ws		 rws;
	char			*path;
	int			 r;

	if ((path = rest_process_path(s->sandbox, s->process,
	    "/attach")) == NULL) {
		cli_warn("out of memory");
		return CLI_EXIT_FAIL;
	}
	r = rest_websocket(&s->cli->rc, path, &rws, &err);
	free(path);
	if (r == -1)
		return cli_api_error(&err);
	if ((s->ws = ws_client_new(&rws, &handler, s)) == NULL) {
		rest_ws_close(&rws);
		cli_warn("out of memory");
		return CLI_EXIT_FAIL;
	}
	if (!s->caught && cli_signals_catch(&s->wait) == -1) {
		cli_warn("cannot catch signals: %s", strerror(errno));
		r = -2;
	} else {
		if (s->in_open && s->tty_process && isatty(STDIN_FILENO))
			(void)cli_tty_raw(&s->tty);
		r = session_loop(s);
		cli_tty_restore(&s->tty);
	}
	if (r == -1 && !s->write_failed)
		cli_warn("%s: %s", s->process, ws_client_error(s->ws));
	ws_client_free(s->ws);
	s->ws = NULL;
	return r < 0 && !s->write_failed ? CLI_EXIT_FAIL : session_status(s);
}

static void
session_init(struct session *s, struct cli *cli, const char *sandbox,
    const char *process)
{
	memset(s, 0, sizeof(*s));
	s->cli = cli;
	s->sandbox = sandbox;
	s->process = process;
}

/* A boolean field of the process: 1, or 0 (false or absent). */
static int
flag(json_object *proc, const char *key)
{
	json_object	*v;

	return json_object_object_get_ex(proc, key, &v) &&
	    json_object_is_type(v, json_type_boolean) &&
	    json_object_get_boolean(v);
}

int
cli_attach(struct cli *cli, int argc, char **argv)
{
	struct rest_error	 err;
	struct cli_attach	 a;
	struct session		 s;
	json_object		*proc;
	int			 ret;

	if (cli_attach_args(argc, argv, &a) == -1)
		return cli_usage(argv[0]);
	/* Whether it has a tty, and a stdin worth writing to. */
	if (rest_process_get(&cli->rc, a.sandbox, a.process, &proc,
	    &err) == -1)
		return cli_api_error(&err);
	session_init(&s, cli, a.sandbox, a.process);
	s.tty_process = flag(proc, "tty");
	s.in_open = !a.no_stdin && flag(proc, "stdin");
	json_object_put(proc);
	ret = session_run(&s);
	if (s.detached && !s.got_exit)
		cli_warn("detached from %s, which keeps running", a.process);
	return ret;
}

/* The terminal the shell runs on is ours: tell it which, unless told. */
static void
shell_term(struct cli_start *st)
{
	const char	*term;

	if ((term = getenv("TERM")) == NULL || *term == '\0' ||
	    json_object_object_get_ex(st->env, "TERM", NULL))
		return;
	if (cli_put(st->env, "TERM", json_object_new_string(term)) == 0)
		st->spec.env = st->env;
}

int
cli_shell(struct cli *cli, int argc, char **argv)
{
	struct rest_error	 err;
	struct cli_start	 st;
	struct session		 s;
	sigset_t		 wait;
	json_object		*proc;
	int			 ret;

	if (cli_shell_args(argc, argv, &st) == -1) {
		cli_start_free(&st);
		return cli_usage(argv[0]);
	}
	(void)cli_tty_size(&st.spec.cols, &st.spec.rows);
	shell_term(&st);
	/*
	 * From its start to its delete, a signal only ends the session:
	 * held until the session waits (the handshake goes on), never the
	 * end of the CLI with the process left behind.
	 */
	if (cli_signals_catch(&wait) == -1) {
		cli_warn("cannot catch signals: %s", strerror(errno));
		cli_start_free(&st);
		return CLI_EXIT_FAIL;
	}
	if (rest_process_start(&cli->rc, st.sandbox, &st.spec, &proc,
	    &err) == -1) {
		cli_start_free(&st);
		return cli_api_error(&err);
	}
	session_init(&s, cli, st.sandbox, cli_str(proc, "id"));
	s.wait = wait;
	s.caught = 1;
	s.tty_process = 1;
	s.in_open = 1;
	ret = session_run(&s);
	/* Like docker exec -it: the shell lives as long as the session. */
	if (rest_process_delete(&cli->rc, st.sandbox, s.process, &err) == -1) {
		cli_api_error(&err);
		if (ret == CLI_EXIT_OK)
			ret = CLI_EXIT_FAIL;
	}
	json_object_put(proc);
	cli_start_free(&st);
	return ret;
}
