/*
 * managerd's system call allowlist.  As a pledge line:
 *
 *	pledge("stdio rpath wpath cpath flock recvfd sendfd proc", NULL)
 *	with the filesystem confined to the data directory by chroot (as
 *	root) and Landlock, not by this filter; proc is only wait4(2), for
 *	the spawner.  No socket(2) (socketpair(2) only for a channel
 *	between two children), no connect(2), no exec, no fork, no kill,
 *	no ptrace; send(2) only on a socket connected before the filter.
 *
 * Measured with strace -f over start-up, GET /healthz, a child's death
 * and shutdown.  The file and pipe lines are the store's and the streams'
 * (temp file, fsync, rename, fsync the directory; reconciliation lists
 * directories), exercised by tests/unit/test_seccomp.c.
 */
#include <sys/socket.h>

#include <fcntl.h>

#include "seccomp.h"

static const struct seccomp_rule managerd_rules[] = {
	/* The event loop, and libevent's signal socketpair (read). */
	SC_ALLOW(epoll_wait),
	SC_ALLOW(epoll_pwait),
	/*
	 * GET /metrics: the resident set from /proc/self/statm, opened
	 * before the jail and read at offset 0 on each scrape.
	 */
	SC_ALLOW(pread64),
	SC_ALLOW(epoll_ctl),
	SC_ALLOW(read),
	/* imsg with its children, descriptors included. */
	SC_ALLOW(sendmsg),
	SC_ALLOW(recvmsg),
	/*
	 * systemd's notifications (notify.c) and the audit log's syslog
	 * lines (audit.c): send(2) is sendto(2) with no address, on the
	 * datagram sockets connected before the chroot.  With an address
	 * (arg 4 not NULL) it stays forbidden: no new destination.
	 */
	SC_ALLOW_ARG(sendto, SC_ARG_EQ(4, 0)),
	/* Streams are pipes whose ends go to the children. */
	SC_ALLOW(pipe2),
	/* bulk_pipe.c: an upload's tar pipe is 1 MiB (file_write.c). */
	SC_ALLOW_ARG(fcntl, SC_ARG_EQ(1, F_SETPIPE_SZ)),
	/*
	 * The channel between apid and the archive worker, new whenever
	 * one of them starts (dispatch_worker.c): a pair of unix sockets
	 * connected to each other only.
	 */
	SC_ALLOW_ARG(socketpair, SC_ARG_EQ(0, AF_UNIX)),
	/*
	 * Processes (process_io.c): libevent writes a reader's events and a
	 * process's stdin with writev; the end of a process's stdin is a
	 * half-close of its socket to dockerd-proxy (SHUT_WR only).
	 */
	SC_ALLOW(writev),
	SC_ALLOW_ARG(shutdown, SC_ARG_EQ(1, SHUT_WR)),
	SC_ALLOW_ARG(fcntl, SC_ARG_EQ(1, F_GETFL)),
	SC_ALLOW_ARG(fcntl, SC_ARG_EQ(1, F_SETFL)),
	/*
	 * Records and snapshots in the data dir: write, sync, rename; upload
	 * spools in uploads/, O_TMPFILE or created and unlinked at once.
	 */
	SC_ALLOW(openat),
	/* fdopendir(3) marks the descriptor close-on-exec. */
	SC_ALLOW_ARG2(fcntl, SC_ARG_EQ(1, F_SETFD), SC_ARG_EQ(2, FD_CLOEXEC)),
	/* files.c: a copy of apid's pipe for each symlink lookup of a read */
	SC_ALLOW_ARG(fcntl, SC_ARG_EQ(1, F_DUPFD_CLOEXEC)),
	SC_ALLOW(lseek),
	SC_ALLOW(ftruncate),
	SC_ALLOW(fsync),
	SC_ALLOW(fdatasync),
	SC_ALLOW(flock),
	SC_ALLOW(getdents64),
	SC_ALLOW(rename),
	SC_ALLOW(renameat),
	SC_ALLOW(renameat2),
	SC_ALLOW(unlink),
	SC_ALLOW(unlinkat),
	SC_ALLOW(mkdir),
	SC_ALLOW(mkdirat),
	SC_ALLOW(rmdir),
	/*
	 * Reaping the spawner, its only child (waitpid is wait4).  No
	 * kill(2): the spawner signals the children, managerd nobody.
	 */
	SC_ALLOW(wait4),
};

int
managerd_seccomp_load(enum seccomp_mode mode)
{
	return seccomp_install("managerd", managerd_rules,
	    SC_NELEM(managerd_rules), mode);
}
