/*
 * apid's system call allowlist.  As a pledge line:
 *
 *	pledge("stdio recvfd sendfd", NULL) + accept4(2) on the listener
 *	managerd passed; no filesystem, no socket(2), no connect(2), no
 *	exec, no signals to anyone.
 *
 * apid parses everything clients send, so it is the process most likely
 * to be compromised; what it may do is what this table lists, on top of
 * the base set in common/seccomp.c.  It parses no tar (the archive
 * worker does), so it has no threads, no clone and no lseek.  Measured
 * with strace -f over start-up, GET /healthz, bad and half requests,
 * keep-alive, client resets and shutdown, and over file downloads,
 * uploads and listings, snapshots, rollbacks and forks; and over process
 * output, stdin and attachments, as tests/unit/test_apid_process.c and
 * test_apid_ws.c drive them: libwslay, the stdin pipes and the attach
 * tokens' randomness (getrandom, in the base set) need nothing more.
 */
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <fcntl.h>

#include "seccomp.h"

static const struct seccomp_rule apid_rules[] = {
	/* The event loop; the backend is pinned to epoll in apid.c. */
	SC_ALLOW(epoll_wait),
	SC_ALLOW(epoll_pwait),
	SC_ALLOW(epoll_ctl),
	/* Clients: accept on the inherited listener, then bytes. */
	SC_ALLOW(accept4),
	/*
	 * GET /metrics: the resident set from /proc/self/statm, opened
	 * before the jail and read at offset 0 on each scrape.
	 */
	SC_ALLOW(pread64),
	SC_ALLOW(read),
	SC_ALLOW(readv),
	SC_ALLOW(writev),
	/*
	 * An upload of a declared length moves from the client's socket
	 * into the archive worker's pipe by splice, and a download from the
	 * tar job's pipe to the socket (http_splice.c).
	 */
	SC_ALLOW(splice),
	/* The lingering close after a refused body (http_conn.c). */
	SC_ALLOW(shutdown),
	/* Replies and NDJSON lines go out at once; nothing else is set. */
	SC_ALLOW_ARG2(setsockopt, SC_ARG_EQ(1, IPPROTO_TCP),
	    SC_ARG_EQ(2, TCP_NODELAY)),
	/* evbuffer_read asks how much is pending; no other ioctl. */
	SC_ALLOW_ARG(ioctl, SC_ARG_EQ(1, FIONREAD)),
	/*
	 * ... but a reply timed out asks whether the socket's queue went
	 * down meanwhile: a slow reader is not a gone one (http_conn.c,
	 * http_splice.c).
	 */
	SC_ALLOW_ARG(ioctl, SC_ARG_EQ(1, TIOCOUTQ)),
	/*
	 * Exec output: apid makes the pipe, keeps the read end and passes
	 * the write end to managerd (route_exec.c).
	 */
	SC_ALLOW(pipe2),
	/* Making a passed pipe non-blocking. */
	SC_ALLOW_ARG(fcntl, SC_ARG_EQ(1, F_GETFL)),
	SC_ALLOW_ARG(fcntl, SC_ARG_EQ(1, F_SETFL)),
	/* bulk_pipe.c: 1 MiB pipes for tar streams and file contents. */
	SC_ALLOW_ARG(fcntl, SC_ARG_EQ(1, F_SETPIPE_SZ)),
	/*
	 * An upload's spool goes to a SPOOL job that fills it and then to
	 * the UPLOAD job that reads it: apid keeps a copy in between.
	 */
	SC_ALLOW_ARG(fcntl, SC_ARG_EQ(1, F_DUPFD_CLOEXEC)),
	/*
	 * imsg with managerd and the archive worker, which pass
	 * descriptors (SCM_RIGHTS).
	 */
	SC_ALLOW(sendmsg),
	SC_ALLOW(recvmsg),
};

int
apid_seccomp_load(enum seccomp_mode mode)
{
	return seccomp_install("apid", apid_rules, SC_NELEM(apid_rules), mode);
}

/* What the spawner's filter must allow as well (see seccomp.h). */
struct seccomp_table
apid_seccomp_table(void)
{
	struct seccomp_table	 t = { apid_rules, SC_NELEM(apid_rules) };

	return t;
}
