/*
 * managerd: loads the configuration, creates the listener, starts apid and
 * dockerd-proxy, then gives up what it does not need (chroot into the data
 * directory, no capabilities, Landlock, seccomp), reconciles its records
 * with Docker, and only then lets apid serve.
 * A child that dies takes the service down with a non-zero status, so the
 * supervisor (systemd) restarts the whole set.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "log.h"
#include "managerd.h"
#include "privdrop.h"
#include "proc.h"
#include "seccomp.h"
#include "xmalloc.h"

extern char	**environ;

struct managerd	*env;

static void
usage(void)
{
	fprintf(stderr, "usage: managerd [-n]\n"
	    "  Configuration comes from AGENT_SANDBOX_* environment variables;"
	    "\n  -n checks it and exits.\n");
	exit(2);
}

/*
 * The keys must not reach the children's environment or stay readable in
 * /proc/<pid>/environ: wipe the value in place, then drop the variable.
 */
static void
scrub_secret_environment(void)
{
	static const char	 name[] = "AGENT_SANDBOX_API_KEYS=";
	char			**ep;

	for (ep = environ; *ep != NULL; ep++) {
		if (strncmp(*ep, name, sizeof(name) - 1) == 0)
			explicit_bzero(*ep + sizeof(name) - 1,
			    strlen(*ep + sizeof(name) - 1));
	}
	unsetenv("AGENT_SANDBOX_API_KEYS");
}

static void
mkdir_or_die(const char *path)
{
	if (mkdir(path, 0700) == -1 && errno != EEXIST)
		fatal("cannot create %s", path);
}

/*
 * The instance id tells this server's containers and volumes from those of
 * another server on the same Docker daemon.  It is made once per data
 * directory and kept there, so a restart finds its own sandboxes.
 */
static char *
instance_id_load(const char *datadir)
{
	char		 path[PATH_MAX], buf[64];
	unsigned char	 raw[8];
	ssize_t		 n;
	size_t		 i;
	int		 fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/instance-id", datadir) >=
	    sizeof(path))
		fatalx("data directory path too long");
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) != -1) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n >= 16) {
			buf[16] = '\0';
			if (strspn(buf, "0123456789abcdef") == 16)
				return xstrdup(buf);
		}
		fatalx("%s is damaged: remove it only if no sandbox of this "
		    "server is left in Docker", path);
	}
	if (errno != ENOENT)
		fatal("%s", path);
	arc4random_buf(raw, sizeof(raw));
	for (i = 0; i < sizeof(raw); i++)
		snprintf(buf + 2 * i, 3, "%02x", raw[i]);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600))
	    == -1 || write(fd, buf, 16) != 16 || write(fd, "\n", 1) != 1 ||
	    fsync(fd) == -1 || close(fd) == -1)
		fatal("cannot write %s", path);
	return xstrdup(buf);
}

/* Create the data directory layout and return its absolute path. */
static char *
datadir_prepare(const char *dir)
{
	char	 real[PATH_MAX], sub[PATH_MAX];

	mkdir_or_die(dir);
	if (realpath(dir, real) == NULL)
		fatal("data directory %s", dir);
	if ((size_t)snprintf(sub, sizeof(sub), "%s/sandboxes", real) >=
	    sizeof(sub))
		fatalx("data directory path too long");
	mkdir_or_die(sub);
	if ((size_t)snprintf(sub, sizeof(sub), "%s/snapshots", real) >=
	    sizeof(sub))
		fatalx("data directory path too long");
	mkdir_or_die(sub);
	return xstrdup(real);
}

static void	child_closed(struct peer *);

static void
child_start(struct child *c, struct peer *p, const char *binary,
    peer_dispatch_cb dispatch)
{
	char	 path[PATH_MAX];
	int	 pair[2];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", env->conf.libexec_dir,
	    binary) >= sizeof(path))
		fatalx("libexec path too long");
	if (access(path, X_OK) == -1)
		fatal("cannot run %s", path);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0,
	    pair) == -1)
		fatal("socketpair");
	c->name = binary;
	if ((c->pid = proc_exec(path, binary, pair[1])) == -1)
		fatal("fork");
	close(pair[1]);
	peer_init(p, env->base, pair[0], binary, dispatch, child_closed, c);
}

static void
send_apid_config(void)
{
	struct config	*conf = &env->conf;
	struct msgw	 w;
	size_t		 i;

	msgw_init(&w);
	proc_settings_put(&w, conf->log_level, conf->seccomp_mode,
	    conf->privsep_user, conf->chroot_dir);
	msgw_u8(&w, conf->insecure_no_auth ? 1 : 0);
	msgw_u32(&w, (uint32_t)conf->api_keys_count);
	for (i = 0; i < conf->api_keys_count; i++)
		msgw_str(&w, conf->api_keys[i]);
	msgw_u64(&w, (uint64_t)conf->max_file_bytes);
	msgw_u64(&w, (uint64_t)conf->max_exec_output_bytes);
	msgw_double(&w, conf->http_header_timeout);
	msgw_double(&w, conf->http_body_timeout);
	msgw_double(&w, conf->http_idle_timeout);
	msgw_double(&w, conf->http_send_timeout);
	msgw_u32(&w, (uint32_t)conf->http_max_connections);
	if (w.overflow)
		fatalx("the API keys do not fit in one %d-byte message",
		    IMSG_MAX_PAYLOAD);
	if (peer_send(&env->apid_peer, MSG_APID_CONFIG, 0, env->listener,
	    &w) == -1)
		fatalx("cannot send configuration to apid");
	env->listener = -1;	/* apid owns it now */
	msgw_clear(&w);
	/* managerd itself never checks keys: forget them. */
	for (i = 0; i < conf->api_keys_count; i++)
		explicit_bzero(conf->api_keys[i], strlen(conf->api_keys[i]));
}

static void
send_proxy_config(void)
{
	struct config	*conf = &env->conf;
	struct msgw	 w;

	msgw_init(&w);
	proc_settings_put(&w, conf->log_level, conf->seccomp_mode,
	    conf->privsep_user, conf->chroot_dir);
	msgw_str(&w, conf->docker_socket);
	msgw_str(&w, conf->instance_id);
	if (peer_send(&env->proxy_peer, MSG_PROXY_CONFIG, 0, -1, &w) == -1)
		fatalx("cannot send configuration to dockerd-proxy");
}

static void
child_exit_status(struct child *c, int status)
{
	if (WIFSIGNALED(status))
		log_warnx("%s (pid %d) was killed by signal %d%s", c->name,
		    (int)c->pid, WTERMSIG(status),
		    WTERMSIG(status) == SIGSYS ?
		    " (a forbidden system call)" : "");
	else
		log_warnx("%s (pid %d) exited with status %d", c->name,
		    (int)c->pid, WEXITSTATUS(status));
}

/* Waiting for the children at shutdown: 200 times 10 ms at most. */
#define SHUTDOWN_WAIT_STEPS	200
#define SHUTDOWN_WAIT_STEP_NS	(10 * 1000 * 1000)

/* 1 once the child has been reaped (or was never there). */
static int
child_gone(struct child *c)
{
	pid_t	 r;
	int	 status;

	if (c->pid <= 0)
		return 1;
	r = waitpid(c->pid, &status, WNOHANG);
	if (r == c->pid || (r == -1 && errno == ECHILD)) {
		c->pid = 0;
		return 1;
	}
	return 0;
}

static void
channel_close(struct peer *p)
{
	if (p->name == NULL)		/* never started */
		return;
	peer_stop(p);
	if (p->ibuf.sock != -1) {
		close(p->ibuf.sock);
		p->ibuf.sock = -1;
	}
}

/*
 * Stop the surviving children, wait a little for them to be gone, and
 * leave with status.  A child exits when its channel to managerd closes
 * (after dropping privileges managerd may no longer signal it, so the
 * SIGTERM is only a courtesy).  Waiting matters: apid holds the listening
 * socket, and a supervisor that starts the service again at once would
 * otherwise find the port still bound.
 */
static __attribute__((noreturn)) void
shutdown_all(int status)
{
	struct timespec	 step = { 0, SHUTDOWN_WAIT_STEP_NS };
	int		 n;

	channel_close(&env->apid_peer);
	channel_close(&env->proxy_peer);
	if (env->apid.pid > 0)
		kill(env->apid.pid, SIGTERM);
	if (env->proxy.pid > 0)
		kill(env->proxy.pid, SIGTERM);
	for (n = 0; n < SHUTDOWN_WAIT_STEPS; n++) {
		/* Both are asked each time: no short circuit. */
		if (child_gone(&env->apid) + child_gone(&env->proxy) == 2)
			exit(status);
		nanosleep(&step, NULL);
	}
	log_warnx("a child is still running; leaving it to its end of file");
	exit(status);
}

static void
reap_children(void)
{
	struct child	*c;
	pid_t		 pid;
	int		 status;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		if (pid == env->apid.pid)
			c = &env->apid;
		else if (pid == env->proxy.pid)
			c = &env->proxy;
		else
			continue;
		child_exit_status(c, status);
		c->pid = 0;
		log_warnx("a child process died; stopping");
		shutdown_all(1);
	}
}

static void
signal_cb(evutil_socket_t sig, short events, void *arg)
{
	switch (sig) {
	case SIGCHLD:
		reap_children();
		break;
	case SIGTERM:
	case SIGINT:
		log_info("received signal %d, shutting down", (int)sig);
		shutdown_all(0);
	default:
		break;
	}
}

static void
child_closed(struct peer *p)
{
	struct child	*c = p->arg;
	int		 status;
	pid_t		 pid;

	log_warnx("%s closed its channel", c->name);
	/* Give the exit status a moment to show up for a clear log line. */
	pid = waitpid(c->pid, &status, 0);
	if (pid == c->pid) {
		child_exit_status(c, status);
		c->pid = 0;
	}
	shutdown_all(1);
}

/*
 * Reconciliation is over: only now may apid serve (API.md §8.5), and the
 * reaper start.  Without Docker the server does not start at all.
 */
static void
recovered(int ok)
{
	if (!ok) {
		log_warnx("Docker is unreachable at start-up; stopping");
		shutdown_all(1);
	}
	reaper_init(env->base);
	send_apid_config();
}

void
child_ready(struct child *c)
{
	if (c->ready)
		return;
	c->ready = 1;
	if (c == &env->proxy)
		recover_start(recovered);
	if (env->apid.ready && env->proxy.ready)
		log_info("agent-sandbox %s ready on %s:%d", PACKAGE_VERSION,
		    env->conf.host, env->conf.port);
}

/* Give up what managerd does not need once its children run. */
static void
managerd_drop_privileges(const char *datadir)
{
	char	 err[256];
	int	 rc;

	if (privdrop_is_root()) {
		if (chroot(datadir) == -1 || chdir("/") == -1)
			fatal("chroot %s", datadir);
		if (privdrop_clear_caps(err, sizeof(err)) == -1)
			fatalx("%s", err);
		datadir = "/";
	}
	rc = landlock_restrict(datadir, err, sizeof(err));
	if (rc == -1)
		fatalx("landlock: %s", err);
	if (rc == 1)
		log_info("Landlock is not available; relying on %s",
		    privdrop_is_root() ? "chroot" : "seccomp alone");
	if (privdrop_no_new_privs() == -1)
		fatal("no_new_privs");
	if (managerd_seccomp_load(seccomp_mode_parse(env->conf.seccomp_mode))
	    == -1)
		fatalx("cannot install the seccomp filter");
}

int
main(int argc, char *argv[])
{
	static struct managerd	 managerd;
	struct event		*ev_sig[4];
	static const int	 sigs[] = { SIGCHLD, SIGTERM, SIGINT, SIGHUP };
	char			 err[512], *datadir;
	int			 ch, checkonly = 0, i;
	json_object		*warm;

	while ((ch = getopt(argc, argv, "n")) != -1) {
		switch (ch) {
		case 'n':
			checkonly = 1;
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();

	env = &managerd;
	TAILQ_INIT(&env->calls);
	env->next_call_id = 1;
	env->listener = -1;
	log_init(LOG_TO_STDERR, LOG_LEVEL_INFO, "managerd");
	if (config_load(&env->conf, environ, err, sizeof(err)) == -1) {
		fprintf(stderr, "configuration error: %s\n", err);
		exit(2);
	}
	scrub_secret_environment();
	log_setlevel(log_level_parse(env->conf.log_level));
	if (checkonly) {
		printf("configuration OK\n");
		exit(0);
	}
	if (env->conf.insecure_no_auth)
		log_warnx("authentication is DISABLED; never expose this server");
	if (!privdrop_is_root())
		log_warnx("not started as root: privilege separation is reduced "
		    "(no chroot and no user switch; seccomp and Landlock still "
		    "apply)");

	datadir = datadir_prepare(env->conf.data_dir);
	/* All file access after the chroot is relative to this. */
	if ((env->datadir_fd = open(datadir, O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) == -1)
		fatal("%s", datadir);
	env->conf.instance_id = instance_id_load(datadir);
	log_info("instance %s, data directory %s", env->conf.instance_id,
	    datadir);
	/* apid is chrooted into this empty directory. */
	if (privdrop_is_root() && mkdir(env->conf.chroot_dir, 0755) == -1 &&
	    errno != EEXIST)
		fatal("cannot create %s", env->conf.chroot_dir);
	if ((env->listener = listener_open(env->conf.host, env->conf.port,
	    err, sizeof(err))) == -1)
		fatalx("%s", err);

	signal(SIGPIPE, SIG_IGN);
	if ((env->base = event_base_new()) == NULL)
		fatalx("event_base_new");
	/* Watch SIGCHLD before there is a child that could die. */
	for (i = 0; i < 4; i++) {
		ev_sig[i] = evsignal_new(env->base, sigs[i], signal_cb, NULL);
		if (ev_sig[i] == NULL || evsignal_add(ev_sig[i], NULL) == -1)
			fatalx("cannot watch signal %d", sigs[i]);
	}
	child_start(&env->apid, &env->apid_peer, "apid", dispatch_apid);
	child_start(&env->proxy, &env->proxy_peer, "dockerd-proxy",
	    dispatch_proxy);
	/* apid gets its listener once reconciliation is over. */
	send_proxy_config();

	/* json-c seeds its hash on first use (getrandom): do it now. */
	warm = json_object_new_object();
	json_object_put(warm);
	managerd_drop_privileges(datadir);
	free(datadir);

	event_base_dispatch(env->base);
	shutdown_all(1);
}
