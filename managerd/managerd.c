/*
 * managerd: loads the configuration, creates the listener, forks the
 * spawner (spawner.c), which starts dockerd-proxy for it, then gives up
 * what it does not need (chroot into the data directory, a user of its
 * own, no capabilities, Landlock, seccomp), reconciles its records with Docker, and only then
 * has apid started.  Children that die are started again (children.c).
 * Under systemd it notifies (notify.c) and may take its listener from
 * socket activation (activation.c); SIGHUP reloads (reload_all).
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <fts.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "audit.h"
#include "keys_file.h"
#include "log.h"
#include "managerd.h"
#include "notify.h"
#include "privdrop.h"
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
scrub_variable(const char *var)
{
	size_t	 len = strlen(var);
	char	**ep;

	for (ep = environ; *ep != NULL; ep++) {
		if (strncmp(*ep, var, len) == 0 && (*ep)[len] == '=')
			explicit_bzero(*ep + len + 1, strlen(*ep + len + 1));
	}
	unsetenv(var);
}

static void
scrub_secret_environment(void)
{
	scrub_variable("AGENT_SANDBOX_API_KEYS");
	scrub_variable("AGENT_SANDBOX_METRICS_KEY");
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

/*
 * managerd itself never checks keys: once the spawner has its copy, the
 * keys are wiped here.
 */
static void
forget_api_keys(void)
{
	struct config	*conf = &env->conf;
	size_t		 i;

	for (i = 0; i < conf->api_keys_count; i++)
		explicit_bzero(conf->api_keys[i], strlen(conf->api_keys[i]));
}

/* Waiting for the spawner at shutdown: 300 times 10 ms at most. */
#define SHUTDOWN_WAIT_STEPS	300
#define SHUTDOWN_WAIT_STEP_NS	(10 * 1000 * 1000)

/* 1 if the spawner has just been reaped, its wait status in *status. */
static int
spawner_reaped(int *status)
{
	if (env->spawner_pid <= 0 ||
	    waitpid(env->spawner_pid, status, WNOHANG) != env->spawner_pid)
		return 0;
	env->spawner_pid = 0;
	return 1;
}

/* How the spawner ended, if that was not the end managerd asked for. */
static void
spawner_log_exit(int status)
{
	if (WIFSIGNALED(status))
		log_warnx("the spawner was killed by signal %d%s",
		    WTERMSIG(status), WTERMSIG(status) == SIGSYS ?
		    " (a forbidden system call)" : "");
	else if (WEXITSTATUS(status) != 0)
		log_warnx("the spawner exited with status %d",
		    WEXITSTATUS(status));
}

/*
 * Close every channel and wait a little for the spawner, which stops the
 * children and reaps them before it exits, and leave with status.  A
 * child exits when its channel to managerd closes; the spawner when its
 * channel does.  Waiting matters: apid and the spawner hold the listening
 * socket, and a supervisor that starts the service again at once would
 * otherwise find the port still bound.
 */
__attribute__((noreturn)) void
shutdown_all(int status)
{
	struct timespec	 step = { 0, SHUTDOWN_WAIT_STEP_NS };
	int		 n, st;

	if (!env->stopping)
		notify_stopping();
	env->stopping = 1;
	children_close();
	if (env->spawner_peer.name != NULL) {
		peer_stop(&env->spawner_peer);
		close(env->spawner_peer.ibuf.sock);
		env->spawner_peer.ibuf.sock = -1;
	}
	for (n = 0; n < SHUTDOWN_WAIT_STEPS && env->spawner_pid > 0; n++) {
		if (spawner_reaped(&st)) {
			spawner_log_exit(st);
			break;
		}
		nanosleep(&step, NULL);
	}
	if (env->spawner_pid > 0)
		log_warnx("the spawner is still running; leaving it to its "
		    "end of file");
	exit(status);
}

/* Without the spawner no child can start again: stop. */
static void
spawner_closed(struct peer *p)
{
	log_warnx("the spawner closed its channel; stopping");
	shutdown_all(1);
}

/*
 * SIGHUP: every reload in turn, each of its own area (the audit log's
 * file after a rotation, ...).  A reload that fails keeps what it had
 * and says so in the log; the others still run.
 */
static void (*const reloads[])(void) = {
	audit_reopen,
	keys_reload,	/* asks the spawner: the table comes later */
};

static void
reload_all(void)
{
	size_t	 i;

	log_info("received SIGHUP, reloading");
	notify_reloading();
	for (i = 0; i < sizeof(reloads) / sizeof(reloads[0]); i++)
		reloads[i]();
	notify_reloaded(listener_where());
}

static void
signal_cb(evutil_socket_t sig, short events, void *arg)
{
	int	 status;

	switch (sig) {
	case SIGCHLD:
		/* The spawner is managerd's only child. */
		if (spawner_reaped(&status)) {
			log_warnx("the spawner died; stopping");
			spawner_log_exit(status);
			shutdown_all(1);
		}
		break;
	case SIGHUP:
		reload_all();
		break;
	case SIGTERM:
	case SIGINT:
		log_info("received signal %d, shutting down", (int)sig);
		shutdown_all(0);
	default:
		break;
	}
}

/*
 * The keys file, read while managerd still can (later its spawner reads
 * it, keys.c): one that does not parse is a configuration error.
 */
static void
keys_file_load(const struct config *conf)
{
	struct keys_table	 t;
	char			 err[512];

	if (conf->keys_file[0] == '\0')
		return;
	if (keys_file_read(conf->keys_file, &t, err, sizeof(err)) == -1) {
		fprintf(stderr, "configuration error: AGENT_SANDBOX_KEYS_FILE: "
		    "%s\n", err);
		exit(2);
	}
	keys_startup(&t);
}

/* managerd's own user, looked up while the name service still works. */
static uid_t	 own_uid;
static gid_t	 own_gid;

/*
 * As root: AGENT_SANDBOX_MANAGERD_USER must exist and must not be apid's
 * user, which would then own managerd's files.  A configuration error
 * (exit 2), as the service manager must not restart into it.
 */
static void
managerd_user_lookup(const struct config *conf)
{
	uid_t	 apid_uid;
	gid_t	 apid_gid;
	char	 err[256];

	if (privdrop_lookup_user(conf->managerd_user, &own_uid, &own_gid, err,
	    sizeof(err)) == -1) {
		fprintf(stderr, "configuration error: AGENT_SANDBOX_MANAGERD_"
		    "USER: %s (create it, e.g. useradd --system --no-create-"
		    "home --shell /usr/sbin/nologin agent-sandbox, or name "
		    "another)\n", err);
		exit(2);
	}
	if (privdrop_lookup_user(conf->privsep_user, &apid_uid, &apid_gid,
	    err, sizeof(err)) == 0 && apid_uid == own_uid) {
		fprintf(stderr, "configuration error: AGENT_SANDBOX_MANAGERD_"
		    "USER and AGENT_SANDBOX_PRIVSEP_USER must be different "
		    "users\n");
		exit(2);
	}
}

/*
 * The data directory and all in it to managerd's user, before it becomes
 * that user: what was written while it ran as root (its layout, the
 * instance id, everything an older version wrote) stays its own to read,
 * rename and remove.  Symbolic links are changed, never followed, and no
 * other file system is entered.
 */
static void
datadir_own(const char *datadir)
{
	char	*paths[2];
	FTS	*fts;
	FTSENT	*e;

	paths[0] = xstrdup(datadir);
	paths[1] = NULL;
	if ((fts = fts_open(paths, FTS_PHYSICAL | FTS_XDEV | FTS_NOCHDIR,
	    NULL)) == NULL)
		fatal("%s", datadir);
	errno = 0;
	while ((e = fts_read(fts)) != NULL) {
		if (e->fts_info == FTS_DP)
			continue;
		if (e->fts_info == FTS_DNR || e->fts_info == FTS_ERR ||
		    e->fts_info == FTS_NS)
			fatalx("%s: %s", e->fts_path, strerror(e->fts_errno));
		if (e->fts_statp->st_uid == own_uid &&
		    e->fts_statp->st_gid == own_gid)
			continue;
		if (lchown(e->fts_accpath, own_uid, own_gid) == -1)
			fatal("chown %s", e->fts_path);
	}
	if (errno != 0)
		fatal("%s", datadir);
	fts_close(fts);
	free(paths[0]);
}

/* Give up what managerd does not need once its children run. */
static void
managerd_drop_privileges(const char *datadir)
{
	char	 err[256];
	int	 rc;

	if (privdrop_is_root()) {
		datadir_own(datadir);
		if (chroot(datadir) == -1 || chdir("/") == -1)
			fatal("chroot %s", datadir);
		/* Leaving uid 0 leaves every capability behind. */
		if (privdrop_setids(own_uid, own_gid, err, sizeof(err)) == -1)
			fatalx("cannot become %s: %s", env->conf.managerd_user,
			    err);
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
	int			 ch, checkonly = 0, i, listener, sock;
	int			 activated;
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
	log_init(LOG_TO_STDERR, LOG_LEVEL_INFO, "managerd");
	if (config_load(&env->conf, environ, err, sizeof(err)) == -1) {
		fprintf(stderr, "configuration error: %s\n", err);
		exit(2);
	}
	if (pool_init(err, sizeof(err)) == -1) {
		fprintf(stderr, "configuration error: %s\n", err);
		exit(2);
	}
	scrub_secret_environment();
	log_setlevel(log_level_parse(env->conf.log_level));
	keys_file_load(&env->conf);
	if (checkonly) {
		printf("configuration OK\n");
		exit(0);
	}
	/* systemd's variables are managerd's alone: not the children's. */
	notify_setup();
	listener = activation_listener();
	if (env->conf.insecure_no_auth)
		log_warnx("authentication is DISABLED; never expose this server");
	if (privdrop_is_root())
		managerd_user_lookup(&env->conf);
	else
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
	activated = listener != -1;
	if (!activated && (listener = listener_open(env->conf.host,
	    env->conf.port, err, sizeof(err))) == -1)
		fatalx("%s", err);
	listener_set_where(listener, env->conf.host, env->conf.port,
	    activated);

	/*
	 * The spawner takes the listener and the keys with it, before there
	 * is an event loop to inherit; apid gets both from it once
	 * reconciliation is over.
	 */
	children_check_settings(&env->conf);
	env->spawner_pid = spawner_fork(&env->conf, listener, &sock);
	close(listener);
	forget_api_keys();
	/* After the fork (the spawner needs neither), before the chroot. */
	notify_open();
	notify_send("STATUS=reconciling with Docker");
	audit_open(&env->conf, env->datadir_fd);

	signal(SIGPIPE, SIG_IGN);
	if ((env->base = event_base_new()) == NULL)
		fatalx("event_base_new");
	for (i = 0; i < 4; i++) {
		ev_sig[i] = evsignal_new(env->base, sigs[i], signal_cb, NULL);
		if (ev_sig[i] == NULL || evsignal_add(ev_sig[i], NULL) == -1)
			fatalx("cannot watch signal %d", sigs[i]);
	}
	peer_init(&env->spawner_peer, env->base, sock, "spawner",
	    dispatch_spawner, spawner_closed, NULL);
	children_init();
	metrics_init();
	children_start(0);
	notify_watchdog_start(env->base);

	/* json-c seeds its hash on first use (getrandom): do it now. */
	warm = json_object_new_object();
	json_object_put(warm);
	managerd_drop_privileges(datadir);
	free(datadir);

	event_base_dispatch(env->base);
	shutdown_all(1);
}
