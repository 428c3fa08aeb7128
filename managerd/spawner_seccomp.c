/*
 * The spawner's system call allowlist.  As a pledge line it would be
 *
 *	pledge("stdio sendfd proc exec", execpromises)
 *
 * but Linux has no execpromises: a seccomp filter survives fork and
 * execve and cannot be taken off, so every child the spawner starts runs
 * under this filter for its whole life, on top of its own.  The filter is
 * therefore the union of three sets:
 *
 *	- the spawner's own calls (below);
 *	- what a child does between its execve and its own filter: the
 *	  dynamic loader, libc's start, reading its settings, the privilege
 *	  drop and dockerd-proxy's jail (below, "start-up");
 *	- every child's own table, taken from the child's *_seccomp.c
 *	  through child_kinds[] (spawner.c), so that a call added to a
 *	  child's table can never be forgotten here.
 *
 * What it still refuses, to the spawner and to a child alike: ptrace,
 * process_vm_*, bpf, perf_event_open, io_uring, userfaultfd, keyctl,
 * module loading, kexec, reboot, setns into anything but a network
 * namespace (the netns-helper's one call), pivot_root, the clock setters,
 * mknod, chown and chmod, links, swap, quotas, personality, every
 * socket family but AF_UNIX, AF_NETLINK's route sockets and the Internet
 * ones the egress proxy (and dockerd-proxy behind a socket proxy)
 * makes, and everything else not listed.
 *
 * Measured with strace -f over start-up (the spawner, dockerd-proxy and
 * apid up to their own filters), restarts of both after kill -9, and
 * shutdown.
 */
#include <sys/prctl.h>
#include <sys/socket.h>

#include <fcntl.h>
#include <sched.h>

#include "log.h"
#include "managerd.h"

/* A fork: a new process sharing nothing, in no new namespace. */
#define CLONE_FORK_MASK	(CLONE_VM | CLONE_THREAD | CLONE_NEWNS | \
	    CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | \
	    CLONE_NEWPID | CLONE_NEWNET | CLONE_PTRACE)

static const struct seccomp_rule spawner_rules[] = {
	/* managerd's messages; SIGCHLD wakes the wait (ppoll, below). */
	SC_ALLOW(recvmsg),
	SC_ALLOW(sendmsg),
	/* A child: its socketpair, the listener's copy, fork, the exec. */
	SC_ALLOW(socketpair),
	SC_ALLOW_ARG(fcntl, SC_ARG_EQ(1, F_DUPFD_CLOEXEC)),
	SC_ALLOW_ARG(clone, SC_ARG_MASKED_EQ(0, CLONE_FORK_MASK, 0)),
	/* glibc's fork registers the new process's robust futex list. */
	SC_ALLOW(set_robust_list),
	/* In the new process: its channel onto descriptor 3, then exec. */
	SC_ALLOW(dup2),
	SC_ALLOW(dup3),		/* dup2 where the architecture has none */
	SC_ALLOW_ARG(fcntl, SC_ARG_EQ(1, F_SETFD)),
	SC_ALLOW(close_range),
	SC_ALLOW(execve),
	/* Reaping, and stopping the children at the end (waitpid is wait4). */
	SC_ALLOW(wait4),
	SC_ALLOW(kill),

	/*
	 * Start-up, in a child, until its own filter is in.  The dynamic
	 * loader maps the libraries executable (what the base set forbids
	 * everyone else), looks for ld.so.preload and reads ld.so.cache and
	 * the libraries; it and privdrop_is_root() ask for the ids; libc
	 * sets up the thread and reads the stack limit, apid sets its
	 * descriptor limit.  Where an architecture has only the *at form
	 * of a call, that form is listed too.
	 */
	SC_ALLOW(mmap),
	SC_ALLOW(mprotect),
	SC_ALLOW(arch_prctl),
	SC_ALLOW(set_tid_address),
	SC_ALLOW(prlimit64),
	SC_ALLOW(access),
	SC_ALLOW(faccessat),
	SC_ALLOW(openat),
	SC_ALLOW(read),
	SC_ALLOW(pread64),
	SC_ALLOW(lseek),
	SC_ALLOW(getuid),
	SC_ALLOW(geteuid),
	SC_ALLOW(getgid),
	SC_ALLOW(getegid),
	/* SIGPIPE and SIGINT ignored; trap mode's SIGSYS, unblocked. */
	SC_ALLOW(rt_sigaction),
	SC_ALLOW(rt_sigprocmask),
	/* Its settings message, read blocking (peer_recv_blocking). */
	SC_ALLOW(poll),
	SC_ALLOW(ppoll),
	/* glibc asks nscd for the privsep user first (getpwnam). */
	SC_ALLOW_ARG2(socket, SC_ARG_EQ(0, AF_UNIX),
	    SC_ARG_MASKED_EQ(1, 0xf, SOCK_STREAM)),
	SC_ALLOW(connect),
	/*
	 * The egress proxy before its jail: the host's addresses, which it
	 * refuses, from getifaddrs and a NETLINK_ROUTE watch of them, and
	 * evdns's UDP sockets to its nameservers (its own table has them
	 * afterwards); it raises its descriptor limit.
	 */
	SC_ALLOW_ARG2(socket, SC_ARG_EQ(0, AF_NETLINK),
	    SC_ARG_MASKED_EQ(1, 0xf, SOCK_RAW)),
	SC_ALLOW_ARG2(socket, SC_ARG_EQ(0, AF_INET),
	    SC_ARG_MASKED_EQ(1, 0xf, SOCK_DGRAM)),
	SC_ALLOW_ARG2(socket, SC_ARG_EQ(0, AF_INET6),
	    SC_ARG_MASKED_EQ(1, 0xf, SOCK_DGRAM)),
	SC_ALLOW(bind),
	SC_ALLOW(sendto),
	SC_ALLOW(recvfrom),
	SC_ALLOW(getsockname),
	SC_ALLOW(setsockopt),
	SC_ALLOW(setrlimit),
	/* libevent's epoll backend and its wake-up pipe. */
	SC_ALLOW(epoll_create1),
	SC_ALLOW(pipe2),
	/* The privilege drop (common/privdrop.c): capabilities, bits. */
	SC_ALLOW(capget),
	SC_ALLOW(capset),
	SC_ALLOW_ARG(prctl, SC_ARG_EQ(0, PR_CAPBSET_READ)),
	SC_ALLOW_ARG(prctl, SC_ARG_EQ(0, PR_CAPBSET_DROP)),
	SC_ALLOW_ARG(prctl, SC_ARG_EQ(0, PR_CAP_AMBIENT)),
	SC_ALLOW_ARG(prctl, SC_ARG_EQ(0, PR_GET_SECUREBITS)),
	SC_ALLOW_ARG(prctl, SC_ARG_EQ(0, PR_SET_SECUREBITS)),
	SC_ALLOW_ARG(prctl, SC_ARG_EQ(0, PR_GET_NO_NEW_PRIVS)),
	SC_ALLOW_ARG(prctl, SC_ARG_EQ(0, PR_SET_NO_NEW_PRIVS)),
	/* ... the chroot and the user switch, checked after it is done ... */
	SC_ALLOW(chroot),
	SC_ALLOW(chdir),
	SC_ALLOW(fchdir),
	SC_ALLOW(setgroups),
	SC_ALLOW(getgroups),
	SC_ALLOW(setresuid),
	SC_ALLOW(setresgid),
	SC_ALLOW(getresuid),
	SC_ALLOW(getresgid),
	SC_ALLOW(setuid),
	SC_ALLOW(setgid),
	/*
	 * ... Landlock with nothing allowed (dockerd-proxy behind a socket
	 * proxy: but TCP connect to its port, one rule), and its own filter.
	 */
	SC_ALLOW(landlock_create_ruleset),
	SC_ALLOW(landlock_add_rule),
	SC_ALLOW(landlock_restrict_self),
	SC_ALLOW(seccomp),
	/*
	 * dockerd-proxy's jail (proxy_jail.c): its namespaces, the mount
	 * point, the tmpfs root and the socket's bind mount, the path of
	 * the socket resolved.
	 */
	SC_ALLOW_ARG(unshare, SC_ARG_EQ(0, CLONE_NEWNS | CLONE_NEWNET)),
	/* Behind a socket proxy on TCP: the host's network, so no NEWNET. */
	SC_ALLOW_ARG(unshare, SC_ARG_EQ(0, CLONE_NEWNS)),
	SC_ALLOW(mkdir),
	SC_ALLOW(mkdirat),
	SC_ALLOW(mount),
	SC_ALLOW(readlink),
	SC_ALLOW(readlinkat),
};

int
spawner_seccomp_load(const struct seccomp_table *children, size_t n,
    enum seccomp_mode mode)
{
	struct seccomp_table	 t[1 + CHILD_MAX];
	size_t			 i;

	if (n > CHILD_MAX) {
		log_warnx("spawner: %zu child tables, at most %d", n,
		    CHILD_MAX);
		return -1;
	}
	t[0].rules = spawner_rules;
	t[0].n = SC_NELEM(spawner_rules);
	for (i = 0; i < n; i++)
		t[1 + i] = children[i];
	return seccomp_install_tables("spawner", t, 1 + n, mode);
}
