/*
 * The archive worker's two system call allowlists.  As pledge lines:
 *
 *	zygote:	pledge("stdio recvfd sendfd proc", NULL): its channels,
 *		fork and wait for its jobs; no filesystem, no socket(2),
 *		no exec, no signals to anyone.
 *	job:	pledge("stdio", NULL) on top of the zygote's: read and
 *		write the descriptors it was given, memory, exit.  No
 *		fork, no socket, no open, no sendmsg or recvmsg.
 *
 * A job parses what a sandbox made, so it is the process most likely to
 * be compromised; its filter is stacked on the zygote's (the kernel runs
 * both, the stricter answer wins).  Measured with strace -f over start-
 * up, every job kind, jobs that fail, die or are killed, apid going
 * away and shutdown; on top of the base set in common/seccomp.c.
 */
#include <sys/prctl.h>

#include <fcntl.h>
#include <sched.h>
#include <signal.h>

#include <linux/seccomp.h>

#include <unistd.h>

#include "seccomp.h"

/* A fork is clone with no sharing and no namespace, SIGCHLD at exit. */
#define CLONE_SHARING	(CLONE_VM | CLONE_FS | CLONE_FILES | \
	    CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM | CLONE_VFORK | \
	    CLONE_PTRACE | CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | \
	    CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | \
	    CLONE_PARENT | CLONE_SETTLS)
#define CLONE_EXIT_SIGNAL	0xff

static const struct seccomp_rule zygote_rules[] = {
	/* The event loop; the backend is pinned to epoll in worker.c. */
	SC_ALLOW(epoll_wait),
	SC_ALLOW(epoll_pwait),
	SC_ALLOW(epoll_ctl),
	/* imsg with managerd and apid, which pass descriptors. */
	SC_ALLOW(recvmsg),
	SC_ALLOW(sendmsg),
	/* libevent's signal pipe (SIGCHLD), and the jobs' result pipes. */
	SC_ALLOW(read),
	SC_ALLOW(pipe2),
	/* One process per job: fork, and reap it. */
	SC_ALLOW_ARG(clone, SC_ARG_MASKED_EQ(0,
	    CLONE_SHARING | CLONE_EXIT_SIGNAL, SIGCHLD)),
	SC_ALLOW(wait4),
	/* In the new process, before its own filter: glibc's fork ... */
	SC_ALLOW(set_robust_list),
	/* ... job.c closing all but the job's descriptors ... */
	SC_ALLOW(close_range),
	/* ... making them blocking ... */
	SC_ALLOW_ARG(fcntl, SC_ARG_EQ(1, F_GETFL)),
	SC_ALLOW_ARG(fcntl, SC_ARG_EQ(1, F_SETFL)),
	/* ... the UPLOAD job's rewind of its spool (its filter says why) ... */
	SC_ALLOW_ARG(lseek, SC_ARG_EQ(2, SEEK_SET)),
	/*
	 * ... the snapshot jobs' splice and writeback, which their filter
	 * allows ...
	 */
	SC_ALLOW(splice),
	SC_ALLOW(sync_file_range),
	/* ... and loading the job filter (libseccomp sets no_new_privs). */
	SC_ALLOW_ARG(prctl, SC_ARG_EQ(0, PR_SET_NO_NEW_PRIVS)),
	SC_ALLOW_ARG(seccomp, SC_ARG_EQ(0, SECCOMP_SET_MODE_FILTER)),
};

static const struct seccomp_rule job_rules[] = {
	/* The job's input; write, close and exit are in the base set. */
	SC_ALLOW(read),
	/*
	 * SNAPSHOT_COPY moves the data of Docker's tar from its pipe into
	 * the snapshot file without reading it (tar_read.c).
	 */
	SC_ALLOW(splice),
	/*
	 * SNAPSHOT_COPY and SNAPSHOT start the kernel's writeback of the
	 * snapshot file as it grows, so that managerd's fsync of it waits
	 * for little (job_error.c, writeback_note).
	 */
	SC_ALLOW(sync_file_range),
	/*
	 * UPLOAD reads the spool from its start: apid's copy of the spool
	 * shares its offset with the one the SPOOL job wrote through, which
	 * that job left at the end.
	 */
	SC_ALLOW_ARG(lseek, SC_ARG_EQ(2, SEEK_SET)),
};

struct seccomp_table
worker_seccomp_table(void)
{
	struct seccomp_table	 t = { zygote_rules, SC_NELEM(zygote_rules) };

	return t;
}

int
worker_seccomp_load(enum seccomp_mode mode)
{
	return seccomp_install("archive-worker", zygote_rules,
	    SC_NELEM(zygote_rules), mode);
}

int
job_seccomp_load(enum seccomp_mode mode)
{
	return seccomp_install("archive-worker job", job_rules,
	    SC_NELEM(job_rules), mode);
}
