/*
 * The agent-sandbox verbs' system call allowlist, loaded once the verb
 * and the environment are known and the server's name is resolved
 * (agent-sandbox.c), before the verb parses its options.  Not for serve,
 * which executes managerd, nor openapi, which makes no call.  Every verb
 * has the clients' shared table (client_seccomp.c): "stdio inet".  cp
 * also reads, creates and renames local files: "stdio inet rpath wpath
 * cpath fattr".  seccomp cannot see a path; what cp opens is what its
 * operands name.  attach and shell also drive the terminal they run on
 * and catch the signals that would end them: "stdio inet tty", less
 * TIOCSTI and every other ioctl.  Measured with strace -f over
 * tests/integration/test_cli.py.
 */
#include <sys/ioctl.h>

#include <signal.h>
#include <termios.h>

#include "client_seccomp.h"

static const struct seccomp_rule	cli_file_rules[] = {
	/* The source of an upload, a download's temporary file. */
	SC_ALLOW(open),
	SC_ALLOW(openat),
	SC_ALLOW(lseek),
	SC_ALLOW(_llseek),
	/* "-": the upload reads a duplicate of stdin. */
	SC_ALLOW(dup),
	/* The finished download replaces its target; a failed one goes. */
	SC_ALLOW(rename),
	SC_ALLOW(renameat),
	SC_ALLOW(renameat2),
	SC_ALLOW(unlink),
	SC_ALLOW(unlinkat),
	/* The mode a new file gets: the target's, or 0666 less umask. */
	SC_ALLOW(fchmod),
	SC_ALLOW(umask),
	/* stat(2) before glibc 2.33 (now newfstatat, in the base set). */
	SC_ALLOW(stat),
	SC_ALLOW(lstat),
};

static const struct seccomp_rule	cli_tty_rules[] = {
	/* Raw mode and back (tcsetattr TCSANOW and TCSADRAIN). */
	SC_ALLOW_ARG(ioctl, SC_ARG_EQ(1, TCSETS)),
	SC_ALLOW_ARG(ioctl, SC_ARG_EQ(1, TCSETSW)),
	/* The window's size, for the process's tty. */
	SC_ALLOW_ARG(ioctl, SC_ARG_EQ(1, TIOCGWINSZ)),
	/*
	 * SIGWINCH, and every signal whose default would end the CLI from
	 * outside (cli_tty.c): caught, and blocked outside ppoll, so that
	 * each ends a session with the terminal restored and shell's
	 * process deleted, rather than the CLI with the terminal raw.
	 */
	SC_ALLOW_ARG(rt_sigaction, SC_ARG_EQ(0, SIGWINCH)),
	SC_ALLOW_ARG(rt_sigaction, SC_ARG_EQ(0, SIGINT)),
	SC_ALLOW_ARG(rt_sigaction, SC_ARG_EQ(0, SIGTERM)),
	SC_ALLOW_ARG(rt_sigaction, SC_ARG_EQ(0, SIGHUP)),
	SC_ALLOW_ARG(rt_sigaction, SC_ARG_EQ(0, SIGQUIT)),
	SC_ALLOW_ARG(rt_sigaction, SC_ARG_EQ(0, SIGUSR1)),
	SC_ALLOW_ARG(rt_sigaction, SC_ARG_EQ(0, SIGUSR2)),
	SC_ALLOW_ARG(rt_sigaction, SC_ARG_EQ(0, SIGALRM)),
	SC_ALLOW_ARG(rt_sigaction, SC_ARG_EQ(0, SIGVTALRM)),
	SC_ALLOW_ARG(rt_sigaction, SC_ARG_EQ(0, SIGPROF)),
	SC_ALLOW_ARG(rt_sigaction, SC_ARG_EQ(0, SIGXCPU)),
	SC_ALLOW_ARG(rt_sigaction, SC_ARG_EQ(0, SIGXFSZ)),
	SC_ALLOW_ARG(rt_sigaction, SC_ARG_EQ(0, SIGIO)),
	SC_ALLOW_ARG(rt_sigaction, SC_ARG_EQ(0, SIGPWR)),
#ifdef SIGSTKFLT
	SC_ALLOW_ARG(rt_sigaction, SC_ARG_EQ(0, SIGSTKFLT)),
#endif
	/* The real-time signals: 32 to 63 (libc takes 32 and 33), and 64. */
	SC_ALLOW_ARG(rt_sigaction, SC_ARG_MASKED_EQ(0, 0xffffffe0, 32)),
	SC_ALLOW_ARG(rt_sigaction, SC_ARG_EQ(0, 64)),
	/*
	 * A fault of the CLI's own (or abort): a handler puts the terminal
	 * back before the default action, which kills the CLI all the same.
	 */
	SC_ALLOW_ARG(rt_sigaction, SC_ARG_EQ(0, SIGSEGV)),
	SC_ALLOW_ARG(rt_sigaction, SC_ARG_EQ(0, SIGBUS)),
	SC_ALLOW_ARG(rt_sigaction, SC_ARG_EQ(0, SIGILL)),
	SC_ALLOW_ARG(rt_sigaction, SC_ARG_EQ(0, SIGFPE)),
	SC_ALLOW_ARG(rt_sigaction, SC_ARG_EQ(0, SIGTRAP)),
	SC_ALLOW_ARG(rt_sigaction, SC_ARG_EQ(0, SIGABRT)),
	SC_ALLOW(rt_sigprocmask),
};

int
cli_seccomp_load(enum seccomp_mode mode, int what)
{
	if (what & CLI_SECCOMP_TTY)
		return client_seccomp_install("agent-sandbox", cli_tty_rules,
		    SC_NELEM(cli_tty_rules), mode);
	return client_seccomp_install("agent-sandbox", cli_file_rules,
	    (what & CLI_SECCOMP_FILES) ? SC_NELEM(cli_file_rules) : 0, mode);
}
