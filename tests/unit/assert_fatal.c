/*
 * assert_fatal() for the tests of peers that lie (see assert_fatal.h).
 */
#include <sys/wait.h>

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "assert_fatal.h"

/*
 * Run f in a child: a malformed message must be fatal there.  Exit status 1
 * alone proves nothing, for a failed cmocka assertion in the child exits 1
 * as well: the child's last words must be the fatal log line, for a
 * message peer_bad_message()'s "bad TYPE message from PEER: why".
 */
void
assert_fatal(void (*f)(void), const char *fatal)
{
	char	 out[8192], want[256];
	size_t	 got = 0;
	ssize_t	 n;
	pid_t	 pid;
	int	 fds[2], status;

	assert_int_equal(pipe(fds), 0);
	assert_true((pid = fork()) != -1);
	if (pid == 0) {
		/* The child's last words (and cmocka's, if any) go to us. */
		close(fds[0]);
		dup2(fds[1], STDOUT_FILENO);
		dup2(fds[1], STDERR_FILENO);
		close(fds[1]);
		f();
		_exit(0);
	}
	close(fds[1]);
	/* Read to the end, keeping what fits, so that the child may exit. */
	for (;;) {
		if (got < sizeof(out) - 1)
			n = read(fds[0], out + got, sizeof(out) - 1 - got);
		else
			n = read(fds[0], want, sizeof(want));
		if (n == -1 && errno == EINTR)
			continue;
		assert_true(n != -1);
		if (n == 0)
			break;
		if (got < sizeof(out) - 1)
			got += (size_t)n;
	}
	out[got] = '\0';
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	/* log.c's fatalx(), as the log line ends, whoever logs it. */
	(void)snprintf(want, sizeof(want), ": %s\n", fatal);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 1 ||
	    strstr(out, " CRITICAL ") == NULL || strstr(out, want) == NULL)
		fail_msg("expected managerd's \"%s\" and exit status 1; the "
		    "child (wait status %#x) said:\n%s", fatal, status, out);
}

