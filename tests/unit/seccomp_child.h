/*
 * What the seccomp tests share: a forked child that loads a real filter,
 * the calls no process may make (each must end it with SIGSYS), and the
 * checks on how the child ended.
 */
#ifndef SECCOMP_CHILD_H
#define SECCOMP_CHILD_H

#include <stddef.h>

#include "seccomp.h"

/* A child that is still running after this long has hung: SIGALRM. */
#define CHILD_TIMEOUT	10

typedef int	(*load_fn)(enum seccomp_mode);

/* One call a process must never make; it runs after the filter load. */
struct forbidden {
	const char	*what;
	void		(*call)(void);
};

void	call_execve(void);
void	call_openat(void);
void	call_socket_unix(void);
void	call_socket_netlink(void);
void	call_ptrace(void);
void	call_kill(void);
void	call_kill_all(void);
void	call_fork(void);
void	call_mmap_exec(void);
void	call_ioctl_tiocsti(void);
void	call_fcntl_dupfd(void);
void	call_prctl(void);
void	call_setuid(void);

int	run_child(int (*)(void *), void *);
void	expect_killed(load_fn, const struct forbidden *, size_t);
void	expect_exit_zero(int, const char *);

#endif /* SECCOMP_CHILD_H */
