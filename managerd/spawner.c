/*
 * The spawner: a small privileged process that managerd forks before it
 * confines itself.  Once confined (chroot into the data directory, no
 * capabilities, a filter without execve) managerd could not start a
 * child again, so this process keeps what starting one takes and nothing
 * else: the configuration (the API keys for apid among it), the listening
 * socket, and the capabilities the children's own privilege drops need.
 *
 * Its only input is managerd's messages (SPAWN_START, SPAWN_KILL: a child
 * named by its index in child_kinds[]), exact in length and checked
 * against what runs; anything else is a lie and fatal.  It never reads a
 * byte from a client, a child or a container.  For each start it makes
 * the child's socketpair, writes the child's settings into it itself (so
 * managerd never holds the keys after start-up), fork+execs the child
 * with its end on descriptor 3 and passes the other end to managerd
 * (SPAWN_STARTED).  It reaps its children and reports every exit
 * (SPAWN_EXIT); deciding what to do about one is managerd's job.  When
 * managerd's channel closes it stops its children and exits.
 */
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <linux/capability.h>

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "docker_host.h"
#include "keys_file.h"
#include "log.h"
#include "managerd.h"
#include "privdrop.h"
#include "proc.h"

#define CAP(c)		(1ULL << (c))
/*
 * What the children's start-up needs, and so what an exec from here may
 * start with: chroot and the user switch (apid, dockerd-proxy), dropping
 * their bounding sets, the proxy's namespaces and mounts, and reaching
 * the Docker socket and the chroot directory whatever their modes.
 * CAP_SYS_PTRACE is the netns-helper's alone: entering a sandbox's
 * network namespace through a pidfd is a ptrace access check on another
 * uid's process (docs/architecture.md, "Egress").  Every other child
 * drops its whole bounding set before it reads a byte from anyone.
 */
#define SPAWNER_CHILD_CAPS	(CAP(CAP_SYS_CHROOT) | CAP(CAP_SETUID) | \
	CAP(CAP_SETGID) | CAP(CAP_SETPCAP) | CAP(CAP_SYS_ADMIN) | \
	CAP(CAP_DAC_OVERRIDE) | CAP(CAP_DAC_READ_SEARCH) | \
	CAP(CAP_SYS_PTRACE))
/* The spawner's own: signalling children that run as another user. */
#define SPAWNER_OWN_CAPS	CAP(CAP_KILL)

/* Stopping: SIGTERM, then up to this long before SIGKILL. */
#define SPAWNER_STOP_STEPS	150
#define SPAWNER_STOP_STEP_NS	(10 * 1000 * 1000)

static void
spawner_lie(const struct imsg *imsg, const char *why)
{
	fatalx("bad %s message from managerd: %s",
	    msg_type_name(imsg->hdr.type), why);
}

static void
spawner_send(struct spawner *sp, uint32_t type, int fd, struct msgw *w)
{
	if (imsg_compose(&sp->ibuf, type, 0, fd, w->buf, w->len) == -1)
		fatal("cannot queue %s for managerd", msg_type_name(type));
}

static void
spawner_failed(struct spawner *sp, unsigned int n, int errnum)
{
	struct msgw	 w;

	log_warnx("cannot start %s: %s", child_kinds[n].name,
	    strerror(errnum));
	msgw_init(&w);
	msgw_u32(&w, n);
	msgw_u32(&w, (uint32_t)errnum);
	spawner_send(sp, MSG_SPAWN_FAILED, -1, &w);
}

/*
 * The child's settings go into sock before the child exists: the socket
 * is empty and a settings message fits in its buffer, so this does not
 * wait.  The copy of the message is wiped: it may hold the API keys.
 */
static int
spawner_write_settings(struct spawner *sp, unsigned int n, int sock)
{
	const struct child_kind	*k = &child_kinds[n];
	struct imsgbuf		 ib;
	struct msgw		 w;
	int			 fd = -1, rc = -1;

	msgw_init(&w);
	if (k->settings(sp->conf, sp->listener, &w, &fd) == -1 ||
	    w.overflow) {
		errno = EMSGSIZE;
		goto done;
	}
	imsgbuf_init(&ib, sock);
	if (imsg_compose(&ib, k->settings_type, 0, fd, w.buf, w.len) == 0)
		rc = imsgbuf_flush(&ib);
	fd = -1;		/* imsg owns it, sent or not */
	imsgbuf_clear(&ib);
 done:
	if (fd != -1)
		close(fd);
	msgw_clear(&w);
	return rc;
}

static void
spawner_start(struct spawner *sp, unsigned int n)
{
	const struct child_kind	*k = &child_kinds[n];
	struct msgw		 w;
	char			 path[PATH_MAX];
	int			 pair[2], saved;
	pid_t			 pid;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s",
	    sp->conf->libexec_dir, k->name) >= sizeof(path)) {
		spawner_failed(sp, n, ENAMETOOLONG);
		return;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0,
	    pair) == -1) {
		spawner_failed(sp, n, errno);
		return;
	}
	if (spawner_write_settings(sp, n, pair[0]) == -1 ||
	    (pid = proc_exec(path, k->name, pair[1])) == -1) {
		saved = errno;
		close(pair[0]);
		close(pair[1]);
		spawner_failed(sp, n, saved);
		return;
	}
	close(pair[1]);
	sp->pid[n] = pid;
	msgw_init(&w);
	msgw_u32(&w, n);
	msgw_u32(&w, (uint32_t)pid);
	spawner_send(sp, MSG_SPAWN_STARTED, pair[0], &w);
}

/*
 * SIGHUP's keys file, read again for managerd, who cannot (keys.c).  One
 * that does not parse is logged (never a line of it) and answered with
 * nothing: the table in use stays.
 */
static void
spawner_keys(struct spawner *sp, const struct imsg *imsg)
{
	struct keys_table	 t;
	struct msgw		 w;
	char			 err[512];
	size_t			 first = 0;

	if (imsg->len != 0)
		spawner_lie(imsg, "unexpected payload");
	if (sp->conf->keys_file[0] == '\0')
		spawner_lie(imsg, "there is no keys file");
	if (keys_file_read(sp->conf->keys_file, &t, err, sizeof(err)) == -1) {
		log_warnx("the keys file was not reloaded, the keys in use "
		    "stay: %s", err);
		return;
	}
	do {
		msgw_init(&w);
		msg_put_keys_chunk(&w, &t, first);
		spawner_send(sp, MSG_SPAWN_KEYS, -1, &w);
		first += KEYS_PER_MESSAGE;
	} while (first < t.n);
	keys_table_free(&t);
}

/* The child a message names: a u32 index into child_kinds[], nothing more. */
static unsigned int
spawner_child_arg(const struct imsg *imsg)
{
	struct msgr	 r;
	uint32_t	 n;

	msgr_init(&r, imsg);
	n = msgr_u32(&r);
	if (msgr_end(&r) == -1)
		spawner_lie(imsg, "malformed payload");
	if (n >= CHILD_MAX)
		spawner_lie(imsg, "no such child");
	return n;
}

void
spawner_dispatch(struct spawner *sp, struct imsg *imsg)
{
	unsigned int	 n;

	if (imsg->fd != -1)
		spawner_lie(imsg, "unexpected descriptor");
	if (imsg->hdr.peerid != 0)
		spawner_lie(imsg, "unexpected request id");
	switch (imsg->hdr.type) {
	case MSG_SPAWN_START:
		n = spawner_child_arg(imsg);
		if (sp->pid[n] != 0)
			spawner_lie(imsg, "that child runs");
		spawner_start(sp, n);
		break;
	case MSG_SPAWN_KEYS_RELOAD:
		spawner_keys(sp, imsg);
		break;
	case MSG_SPAWN_KILL:
		/* It may have died since: nothing to kill is no lie. */
		n = spawner_child_arg(imsg);
		if (sp->pid[n] != 0 && kill(sp->pid[n], SIGKILL) == -1)
			log_warn("kill %s (pid %d)", child_kinds[n].name,
			    (int)sp->pid[n]);
		break;
	default:
		spawner_lie(imsg, "not a request managerd may make");
	}
}

/* Reap what has ended; report each child's exit if report is set. */
static void
spawner_reap_some(struct spawner *sp, int report)
{
	struct msgw	 w;
	unsigned int	 n;
	pid_t		 pid;
	int		 status;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (n = 0; n < CHILD_MAX; n++) {
			if (sp->pid[n] == pid)
				break;
		}
		if (n == CHILD_MAX)
			continue;
		sp->pid[n] = 0;
		if (!report)
			continue;
		msgw_init(&w);
		msgw_u32(&w, n);
		msgw_u32(&w, (uint32_t)pid);
		msgw_u32(&w, (uint32_t)status);
		spawner_send(sp, MSG_SPAWN_EXIT, -1, &w);
	}
}

void
spawner_reap(struct spawner *sp)
{
	spawner_reap_some(sp, 1);
}

static int
spawner_running(struct spawner *sp)
{
	unsigned int	 n;

	for (n = 0; n < CHILD_MAX; n++) {
		if (sp->pid[n] != 0)
			return 1;
	}
	return 0;
}

static void
spawner_signal_all(struct spawner *sp, int sig)
{
	unsigned int	 n;

	for (n = 0; n < CHILD_MAX; n++) {
		if (sp->pid[n] != 0)
			(void)kill(sp->pid[n], sig);
	}
}

/*
 * managerd is gone or stopping: so are the children.  They exit at the
 * end of file on their own channels too; the signals make sure of it,
 * and the wait is why managerd's exit means the port is free.  The
 * listener goes first: a managerd started again at once binds the port.
 */
static __attribute__((noreturn)) void
spawner_stop(struct spawner *sp)
{
	struct timespec	 step = { 0, SPAWNER_STOP_STEP_NS };
	int		 i;

	close(sp->listener);
	sp->listener = -1;
	spawner_signal_all(sp, SIGTERM);
	for (i = 0; i < SPAWNER_STOP_STEPS; i++) {
		spawner_reap_some(sp, 0);
		if (!spawner_running(sp))
			exit(0);
		nanosleep(&step, NULL);
	}
	spawner_signal_all(sp, SIGKILL);
	while (waitpid(-1, NULL, 0) > 0)
		;
	exit(0);
}

static void
spawner_read(struct spawner *sp)
{
	struct imsg	 imsg;
	ssize_t		 n;
	int		 r;

	n = imsgbuf_read(&sp->ibuf);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n == 0 || (n == -1 && errno == ECONNRESET))
		spawner_stop(sp);
	if (n == -1)
		fatal("read from managerd");
	while ((r = imsg_get(&sp->ibuf, &imsg)) == 1) {
		/* managerd passes us none: a lost one is a lie as well. */
		if (imsg.fd_lost)
			fatalx("%s from managerd: a descriptor",
			    msg_type_name(imsg.hdr.type));
		spawner_dispatch(sp, &imsg);
		imsg_free(&imsg);
	}
	if (r == -1)
		fatal("malformed message from managerd");
}

static void
spawner_write(struct spawner *sp)
{
	if (imsgbuf_write(&sp->ibuf) == -1) {
		if (errno == EPIPE || errno == ECONNRESET)
			spawner_stop(sp);
		fatal("write to managerd");
	}
}

/*
 * SIGCHLD stays blocked but inside ppoll, so that a child's death wakes
 * the loop and is never missed between a reap and the next wait.
 */
static __attribute__((noreturn)) void
spawner_loop(struct spawner *sp)
{
	struct pollfd	 pfd;
	sigset_t	 waiting;

	sigemptyset(&waiting);
	for (;;) {
		pfd.fd = sp->ibuf.sock;
		pfd.events = POLLIN;
		if (imsgbuf_pending(&sp->ibuf))
			pfd.events |= POLLOUT;
		pfd.revents = 0;
		if (ppoll(&pfd, 1, NULL, &waiting) == -1 && errno != EINTR)
			fatal("ppoll");
		spawner_reap(sp);
		if (pfd.revents & (POLLIN | POLLHUP | POLLERR))
			spawner_read(sp);
		if (imsgbuf_pending(&sp->ibuf))
			spawner_write(sp);
	}
}

static void
spawner_sigchld(int sig)
{
	(void)sig;	/* only to interrupt ppoll */
}

/*
 * Nobody but managerd tells the spawner when to stop: a terminal's ^C or
 * a service manager's SIGTERM to the whole group reaches managerd, which
 * closes the channel.  SIGCHLD needs a handler, not SIG_IGN, or the
 * children would be reaped by the kernel with their status lost.
 */
static void
spawner_signals(void)
{
	struct sigaction	 sa;
	sigset_t		 set;

	signal(SIGTERM, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = spawner_sigchld;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGCHLD, &sa, NULL) == -1)
		fatal("sigaction");
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, NULL) == -1)
		fatal("sigprocmask");
}

/* Keep stdin, stdout, stderr, the channel and the listener; close the rest. */
static void
spawner_close_others(int a, int b)
{
	int	 lo = a < b ? a : b, hi = a < b ? b : a;

	if (lo > STDERR_FILENO + 1)
		close_range(STDERR_FILENO + 1, lo - 1, 0);
	if (hi > lo + 1)
		close_range(lo + 1, hi - 1, 0);
	close_range(hi + 1, ~0U, 0);
}

/*
 * Everything the spawner can give up without taking it from its
 * children: capabilities no child needs (not even through exec, with
 * no_new_privs set), and every system call neither it nor a child makes.
 * No chroot and no Landlock: both would bind the children too, which need
 * the real root to find their binaries, the users and the Docker socket.
 */
static void
spawner_confine(const struct config *conf)
{
	struct seccomp_table	 children[CHILD_MAX];
	char			 err[256];
	size_t			 n;

	if (privdrop_is_root() && privdrop_keep_caps(SPAWNER_CHILD_CAPS,
	    SPAWNER_OWN_CAPS, err, sizeof(err)) == -1)
		fatalx("cannot drop capabilities: %s", err);
	if (privdrop_no_new_privs() == -1)
		fatal("no_new_privs");
	/* dockerd-proxy's sockets: unix, or TCP to a socket proxy. */
	proxy_seccomp_family(docker_host_family(conf->docker_endpoint));
	for (n = 0; n < CHILD_MAX; n++)
		children[n] = child_kinds[n].seccomp_table();
	if (spawner_seccomp_load(children, CHILD_MAX,
	    seccomp_mode_parse(conf->seccomp_mode)) == -1)
		fatalx("cannot install the seccomp filter");
}

static __attribute__((noreturn)) void
spawner_main(const struct config *conf, int listener, int sock)
{
	static struct spawner	 sp;

	log_procname("spawner");
	(void)prctl(PR_SET_NAME, "spawner", 0, 0, 0);
	spawner_close_others(sock, listener);
	spawner_signals();
	spawner_confine(conf);
	imsgbuf_init(&sp.ibuf, sock);
	sp.conf = conf;
	sp.listener = listener;
	spawner_loop(&sp);
}

pid_t
spawner_fork(const struct config *conf, int listener, int *sock)
{
	int	 pair[2];
	pid_t	 pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0,
	    pair) == -1)
		fatal("socketpair");
	if ((pid = fork()) == -1)
		fatal("fork");
	if (pid == 0) {
		close(pair[0]);
		spawner_main(conf, listener, pair[1]);
	}
	close(pair[1]);
	*sock = pair[0];
	return pid;
}
