/*
 * The local side of attach and shell: the terminal in raw mode (so that
 * every key, Ctrl-C included, goes to the process's tty) and back, the
 * window's size, and the signals that end or resize a session.  Those
 * are blocked and caught into flags, and only let through inside the
 * session's ppoll, so none is lost between looking at the flags and
 * waiting.
 */
#include <sys/ioctl.h>

#include <signal.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "cli.h"
#include "process_msg.h"

static volatile sig_atomic_t	 ended_by;	/* the first ending signal */
static volatile sig_atomic_t	 resized;

static const int	 session_signals[] = {
	SIGINT, SIGTERM, SIGHUP, SIGWINCH
};
#define NSIGNALS	(sizeof(session_signals) / sizeof(session_signals[0]))

static void
on_signal(int signo)
{
	if (signo == SIGWINCH)
		resized = 1;
	else if (ended_by == 0)
		ended_by = signo;
}

int
cli_signals_catch(sigset_t *wait)
{
	struct sigaction	 sa;
	sigset_t		 block;
	size_t			 i;

	sigemptyset(&block);
	for (i = 0; i < NSIGNALS; i++)
		sigaddset(&block, session_signals[i]);
	if (sigprocmask(SIG_BLOCK, &block, wait) == -1)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < NSIGNALS; i++) {
		if (sigaction(session_signals[i], &sa, NULL) == -1)
			return -1;
		sigdelset(wait, session_signals[i]);
	}
	return 0;
}

int
cli_signal_ended(void)
{
	return ended_by;
}

int
cli_signal_resized(void)
{
	int	 r = resized;

	resized = 0;
	return r;
}

int
cli_tty_raw(struct cli_tty *t)
{
	struct termios	 raw;

	t->raw = 0;
	if (tcgetattr(STDIN_FILENO, &t->saved) == -1)
		return -1;
	raw = t->saved;
	/* The process's tty echoes and ends lines: ours does nothing. */
	cfmakeraw(&raw);
	if (tcsetattr(STDIN_FILENO, TCSANOW, &raw) == -1)
		return -1;
	t->raw = 1;
	return 0;
}

void
cli_tty_restore(struct cli_tty *t)
{
	if (!t->raw)
		return;
	/* After what was written to it, which assumed raw mode. */
	(void)tcsetattr(STDIN_FILENO, TCSADRAIN, &t->saved);
	t->raw = 0;
}

int
cli_tty_size(int *cols, int *rows)
{
	struct winsize	 ws;

	if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == -1 &&
	    ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == -1)
		return -1;
	if (ws.ws_col == 0 || ws.ws_row == 0)
		return -1;
	*cols = ws.ws_col > PROCESS_TTY_MAX ? PROCESS_TTY_MAX : ws.ws_col;
	*rows = ws.ws_row > PROCESS_TTY_MAX ? PROCESS_TTY_MAX : ws.ws_row;
	return 0;
}
