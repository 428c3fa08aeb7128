/*
 * The netns-helper's system call allowlist.  As a pledge line it would be
 *
 *	pledge("stdio rpath sendfd proc inet", NULL)
 *
 * with setns and pidfd_open besides, which pledge has no word for.  It
 * runs as root with CAP_SYS_ADMIN and CAP_SYS_PTRACE, so this filter is
 * what keeps those from being anything but one setns into a network
 * namespace: no mount, no ptrace, no exec, no open for writing, sockets
 * of one kind only.  The child that enters a namespace is a fork of the
 * helper and runs under the same filter.  Measured with strace -f over
 * start-up, listeners made, refused and timed out, and managerd going
 * away; on top of the base set in common/seccomp.c.
 */
#include <sys/socket.h>

#include <fcntl.h>
#include <sched.h>
#include <signal.h>

#include <sys/time.h>

#include "seccomp.h"

/* A fork is clone with no sharing and no namespace, SIGCHLD at exit. */
#define CLONE_SHARING	(CLONE_VM | CLONE_FS | CLONE_FILES | \
	    CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM | CLONE_VFORK | \
	    CLONE_PTRACE | CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | \
	    CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | \
	    CLONE_PARENT | CLONE_SETTLS)
#define CLONE_EXIT_SIGNAL	0xff
/* What an open may ask beyond reading: nothing that writes or creates. */
#define OPEN_WRITES	(O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND | \
	    O_TMPFILE)
/* The type bits of socket(2), without SOCK_CLOEXEC and SOCK_NONBLOCK. */
#define SOCK_TYPE_MASK	0xf

static const struct seccomp_rule netns_rules[] = {
	/* The event loop; the backend is pinned to epoll (proc.c). */
	SC_ALLOW(epoll_wait),
	SC_ALLOW(epoll_pwait),
	SC_ALLOW(epoll_ctl),
	/* imsg with managerd: the socket goes back as SCM_RIGHTS. */
	SC_ALLOW(recvmsg),
	SC_ALLOW(sendmsg),
	/* /proc/<pid>/cgroup through the descriptor opened before chroot. */
	SC_ALLOW_ARG(openat, SC_ARG_MASKED_EQ(2, OPEN_WRITES, 0)),
	SC_ALLOW(read),
	/* The container's process, pinned, and whether it still lives. */
	SC_ALLOW(pidfd_open),
	SC_ALLOW(poll),
	SC_ALLOW(ppoll),
	/*
	 * The child: its answer's socketpair, fork, reap.  No kill(2): as
	 * root the helper could signal any root process; a late child ends
	 * itself with its alarm (alarm is setitimer where there is none).
	 */
	SC_ALLOW_ARG(socketpair, SC_ARG_EQ(0, AF_UNIX)),
	SC_ALLOW_ARG(clone, SC_ARG_MASKED_EQ(0,
	    CLONE_SHARING | CLONE_EXIT_SIGNAL, SIGCHLD)),
	SC_ALLOW(set_robust_list),	/* glibc's fork, in the child */
	SC_ALLOW(wait4),
	SC_ALLOW(alarm),
	SC_ALLOW_ARG(setitimer, SC_ARG_EQ(0, ITIMER_REAL)),
	/* In the child: into the network namespace, and nothing else ... */
	SC_ALLOW_ARG(setns, SC_ARG_EQ(1, CLONE_NEWNET)),
	/* ... a TCP socket on its loopback, listening. */
	SC_ALLOW_ARG2(socket, SC_ARG_EQ(0, AF_INET),
	    SC_ARG_MASKED_EQ(1, SOCK_TYPE_MASK, SOCK_STREAM)),
	SC_ALLOW_ARG2(setsockopt, SC_ARG_EQ(1, SOL_SOCKET),
	    SC_ARG_EQ(2, SO_REUSEADDR)),
	SC_ALLOW(bind),
	SC_ALLOW(listen),
};

struct seccomp_table
netns_seccomp_table(void)
{
	struct seccomp_table	 t = { netns_rules, SC_NELEM(netns_rules) };

	return t;
}

int
netns_seccomp_load(enum seccomp_mode mode)
{
	return seccomp_install("netns-helper", netns_rules,
	    SC_NELEM(netns_rules), mode);
}
