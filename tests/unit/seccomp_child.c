/*
 * What the seccomp tests share: a forked child that loads a real filter,
 * the calls no process may make (each must end it with SIGSYS), and the
 * checks on how the child ended.
 */
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include <cmocka.h>

#include "memcheck.h"
#include "seccomp_child.h"

void
call_execve(void)
{
	static char	 arg0[] = "true";
	char		*argv[] = { arg0, NULL }, *envp[] = { NULL };

	syscall(SYS_execve, "/bin/true", argv, envp);
}

void
call_openat(void)
{
	syscall(SYS_openat, AT_FDCWD, "/etc/passwd", O_RDONLY);
}

void
call_socket_unix(void)
{
	syscall(SYS_socket, AF_UNIX, SOCK_STREAM, 0);
}

void
call_socket_netlink(void)
{
	syscall(SYS_socket, AF_NETLINK, SOCK_RAW, 0);
}

void
call_ptrace(void)
{
	syscall(SYS_ptrace, PTRACE_TRACEME, 0, NULL, NULL);
}

void
call_kill(void)
{
	syscall(SYS_kill, 1, 0);
}

/* Every process the caller may signal: what a taken-over daemon wants. */
void
call_kill_all(void)
{
	syscall(SYS_kill, -1, 0);
}

void
call_fork(void)
{
	syscall(SYS_clone, SIGCHLD, 0, NULL, NULL, 0);
}

void
call_mmap_exec(void)
{
	syscall(SYS_mmap, NULL, 4096, PROT_READ | PROT_EXEC,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

void
call_ioctl_tiocsti(void)
{
	char	 c = 'x';

	syscall(SYS_ioctl, 0, TIOCSTI, &c);
}

void
call_fcntl_dupfd(void)
{
	syscall(SYS_fcntl, 0, F_DUPFD, 100);
}

void
call_prctl(void)
{
	syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
}

void
call_setuid(void)
{
	syscall(SYS_setuid, 0);
}

/*
 * Fork, run fn in the child (its return value is the exit status), and
 * return the raw wait status.  Children leave with _exit so that cmocka's
 * buffered output is not flushed twice.
 */
int
run_child(int (*fn)(void *), void *arg)
{
	pid_t	 pid;
	int	 status;

	fflush(NULL);
	pid = fork();
	assert_true(pid != -1);
	if (pid == 0) {
		alarm(CHILD_TIMEOUT);
		_exit(fn(arg));
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return status;
}

struct forbidden_run {
	load_fn			 load;
	const struct forbidden	*call;
};

static int
forbidden_child(void *arg)
{
	struct forbidden_run	*run = arg;

	if (run->load(SECCOMP_MODE_KILL) != 0)
		return 2;
	run->call->call();
	return 0;	/* still alive: the filter let it through */
}

void
expect_killed(load_fn load, const struct forbidden *calls, size_t n)
{
	struct forbidden_run	 run;
	size_t			 i;
	int			 status;

	SKIP_UNDER_MEMCHECK("no filter is loaded there to kill");
	for (i = 0; i < n; i++) {
		run.load = load;
		run.call = &calls[i];
		status = run_child(forbidden_child, &run);
		if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGSYS)
			fail_msg("%s was not killed by SIGSYS (status %#x)",
			    calls[i].what, status);
	}
}

void
expect_exit_zero(int status, const char *what)
{
	if (WIFSIGNALED(status))
		fail_msg("%s: killed by signal %d", what, WTERMSIG(status));
	if (WEXITSTATUS(status) != 0)
		fail_msg("%s: failed at step %d", what, WEXITSTATUS(status));
}
