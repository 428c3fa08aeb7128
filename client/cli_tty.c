/*
 * The local side of attach and shell: the terminal in raw mode (so that
 * every key, Ctrl-C included, goes to the process's tty) and back, the
 * window's size, and the signals that end or resize a session.  Those
 * are blocked and caught into flags, and only let through inside the
 * session's ppoll, so none is lost between looking at the flags and
 * waiting.  They are every signal whose default would end the CLI and
 * that comes from outside it (a key, kill, a timer, a limit): each ends
 * the session with the terminal restored and shell's process deleted.
 * A fault of the CLI's own cannot wait for ppoll: its handler puts the
 * terminal back and the fault's default action follows.
 */
#include <sys/ioctl.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "cli.h"
#include "process_msg.h"

static volatile sig_atomic_t	 ended_by;	/* the first ending signal */
static volatile sig_atomic_t	 resized;
/* The terminal before raw mode, for on_fault(), while it is raw. */
static struct termios		 fault_saved;
static volatile sig_atomic_t	 fault_raw;

static const int	 session_signals[] = {
	SIGWINCH, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2,
	SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU, SIGXFSZ, SIGIO, SIGPWR,
#ifdef SIGSTKFLT
	SIGSTKFLT,
#endif
};
#define NSIGNALS	(sizeof(session_signals) / sizeof(session_signals[0]))

/* What the CPU or abort(3) raises in the CLI itself. */
static const int	 fault_signals[] = {
	SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGABRT
};
#define NFAULTS		(sizeof(fault_signals) / sizeof(fault_signals[0]))

static void
on_signal(int signo)
{
	if (signo == SIGWINCH)
		resized = 1;
	else if (ended_by == 0)
		ended_by = signo;
}

/*
 * Async-signal-safe: tcsetattr and flags.  SA_RESETHAND has made the
 * action the default again, so a fault repeats and ends the CLI (with
 * its core), as abort(3) does once this returns; one sent by kill ends
 * the session as the others do.
 */
static void
on_fault(int signo)
{
	if (fault_raw) {
		(void)tcsetattr(STDIN_FILENO, TCSANOW, &fault_saved);
		fault_raw = 0;
	}
	if (ended_by == 0)
		ended_by = signo;
}

/* The ending signals, the real-time ones included: blocked, caught. */
static int
catch_session(const struct sigaction *sa, sigset_t *wait)
{
	sigset_t	 block;
	size_t		 i;
	int		 signo;

	sigemptyset(&block);
	for (i = 0; i < NSIGNALS; i++)
		sigaddset(&block, session_signals[i]);
	for (signo = SIGRTMIN; signo <= SIGRTMAX; signo++)
		sigaddset(&block, signo);
	if (sigprocmask(SIG_BLOCK, &block, wait) == -1)
		return -1;
	for (i = 0; i < NSIGNALS; i++) {
		if (sigaction(session_signals[i], sa, NULL) == -1)
			return -1;
		sigdelset(wait, session_signals[i]);
	}
	/* One the runtime keeps for itself (valgrind does) stays blocked. */
	for (signo = SIGRTMIN; signo <= SIGRTMAX; signo++) {
		if (sigaction(signo, sa, NULL) == 0)
			sigdelset(wait, signo);
		else if (errno != EINVAL)
			return -1;
	}
	return 0;
}

int
cli_signals_catch(sigset_t *wait)
{
	struct sigaction	 sa;
	size_t			 i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	if (catch_session(&sa, wait) == -1)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_fault;
	sa.sa_flags = SA_RESETHAND | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < NFAULTS; i++)
		if (sigaction(fault_signals[i], &sa, NULL) == -1)
			return -1;
	return 0;
}

void
cli_signals_take(const sigset_t *wait)
{
	struct timespec	 zero = { 0, 0 };

	/* No fd is ready: ppoll looks at the signals, lets them in. */
	(void)ppoll(NULL, 0, &zero, wait);
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
	fault_saved = t->saved;
	fault_raw = 1;
	if (tcsetattr(STDIN_FILENO, TCSANOW, &raw) == -1) {
		fault_raw = 0;
		return -1;
	}
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
	fault_raw = 0;
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
