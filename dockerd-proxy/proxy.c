/*
 * dockerd-proxy: receives its settings from managerd, locks itself into a
 * namespace where the Docker socket (or, behind a socket proxy, that TCP
 * port) is the only thing it can reach, loads its seccomp filter, and then
 * serves typed Docker operations.
 */
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "docker_http.h"
#include "log.h"
#include "privdrop.h"
#include "proc.h"
#include "proxy.h"

/*
 * Descriptors: one per Docker request, and at most one from managerd with
 * each (a process's socket, an exec's or an archive's pipe), so two per
 * process (PROXY_PROCESSES_MAX of them fit well within); then the imsg
 * socket, epoll and libevent's own, the log, and descriptors managerd
 * passed that wait in the imsg queue.
 */
#define PROXY_FD_RESERVE	64
#define PROXY_FD_WANT		(2 * DOCKER_HTTP_MAX_LIVE + PROXY_FD_RESERVE)

static struct proxy	 proxy;

static const struct proc_child	proxy_proc = {
	"dockerd-proxy", MSG_PROXY_CONFIG, 0, proxy_seccomp_load
};

static void
proxy_read_settings(struct imsg *imsg, struct proxy_settings *s)
{
	struct msgr	 r;
	const char	*why;

	msgr_init(&r, imsg);
	if (proc_child_settings(&r, &s->proc) == -1)
		fatalx("malformed PROXY_CONFIG");
	s->docker_endpoint = msgr_str(&r, 4096);
	s->instance_id = msgr_str(&r, 64);
	s->policy.uid = msgr_u32(&r);
	s->policy.gid = msgr_u32(&r);
	s->policy.tmp_size_mb = msgr_i64(&r);
	s->policy.runtime = msgr_str(&r, 256);
	s->policy.network_name = msgr_str(&r, 256);
	s->policy.max_cpus = msgr_double(&r);
	s->policy.max_memory_mb = msgr_i64(&r);
	s->policy.max_pids_limit = msgr_i64(&r);
	s->policy.allow_network = msgr_u8(&r);
	s->policy.allow_runtime_env = msgr_u8(&r);
	if (msgr_end(&r) == -1 || s->docker_endpoint == NULL ||
	    s->instance_id == NULL || s->policy.runtime == NULL ||
	    s->policy.network_name == NULL)
		fatalx("malformed PROXY_CONFIG");
	/* It goes into labels and filters: lower-case hex only. */
	if (!valid_instance_id(s->instance_id))
		fatalx("PROXY_CONFIG: bad instance id");
	if ((why = hardening_check_policy(&s->policy)) != NULL)
		fatalx("PROXY_CONFIG: %s", why);
	imsg_free(imsg);
}

/*
 * The soft limit is often 1024, too few for the above: raise it as far as
 * the hard limit lets, while getrlimit and setrlimit are still allowed.
 */
static void
proxy_limit_descriptors(void)
{
	struct rlimit	 rl;
	rlim_t		 want = PROXY_FD_WANT;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
		fatal("getrlimit");
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur >= want)
		return;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want) {
		log_warnx("descriptor limit %llu: fewer than %d processes "
		    "and %d Docker requests may be followed at once",
		    (unsigned long long)rl.rlim_max, PROXY_PROCESSES_MAX,
		    DOCKER_HTTP_MAX_LIVE);
		want = rl.rlim_max;
	}
	rl.rlim_cur = want;
	if (setrlimit(RLIMIT_NOFILE, &rl) == -1)
		fatal("setrlimit");
}

static void
proxy_jail_unix(struct proxy_settings *s)
{
	struct stat	 st;
	char		 jailed[4096], err[512];
	int		 rc;

	/* Docker is down or between two lives: managerd tries again. */
	if (privdrop_is_root() && stat(s->docker_endpoint, &st) == -1 &&
	    errno == ENOENT) {
		log_warnx("no Docker socket at %s", s->docker_endpoint);
		exit(PROC_EXIT_DOCKER_GONE);
	}
	rc = proxy_jail(s->docker_endpoint, s->proc.chroot_dir,
	    s->proc.privsep_user, jailed, sizeof(jailed), err, sizeof(err));
	if (rc == -1)
		fatalx("cannot confine dockerd-proxy: %s", err);
	/* When not root, managerd already warned once. */
	if (rc == 1)
		log_debug("not started as root: dockerd-proxy is not confined "
		    "to the Docker socket");
	free(s->docker_endpoint);
	if ((s->docker_endpoint = strdup(jailed)) == NULL)
		fatal("strdup");
	if (privdrop_no_new_privs() == -1)
		fatal("no_new_privs");
	if (rc == 0)
		docker_watch_start(&proxy);
}

/*
 * Behind a socket proxy: the name resolved now, once (the jail has no
 * resolver), then the jail, then Landlock holds connect(2) to the one
 * port.  Refused outright when root and the kernel's Landlock has no
 * network rules: the jail would then let the proxy reach any address.
 */
static void
proxy_jail_inet(struct proxy_settings *s, const struct docker_endpoint *ep)
{
	char	 err[512];
	int	 rc;

	if ((rc = proxy_jail_tcp(s->proc.chroot_dir, s->proc.privsep_user,
	    err, sizeof(err))) == -1)
		fatalx("cannot confine dockerd-proxy: %s", err);
	if (rc == 1)
		log_debug("not started as root: dockerd-proxy keeps the "
		    "invoking user and the host's filesystem view");
	switch (landlock_restrict_tcp(ep->port, err, sizeof(err))) {
	case -1:
		fatalx("landlock: %s", err);
	case 1:
		if (rc == 0)
			fatalx("DOCKER_HOST=tcp:// needs Landlock's network "
			    "rules (Landlock ABI 4, Linux 6.7 or later, with "
			    "Landlock enabled) to hold dockerd-proxy to port "
			    "%u; this kernel has none", ep->port);
		log_debug("no Landlock network rules: dockerd-proxy may "
		    "connect anywhere");
		break;
	}
	if (privdrop_no_new_privs() == -1)
		fatal("no_new_privs");
}

static void
proxy_enter_jail(struct proxy_settings *s)
{
	struct docker_endpoint	 ep;
	char			 numeric[512], err[512];

	if (docker_endpoint_resolve(s->docker_endpoint, numeric,
	    sizeof(numeric), err, sizeof(err)) == -1)
		fatalx("DOCKER_HOST: %s", err);
	if (docker_endpoint_parse(numeric, &ep) == -1)
		fatalx("PROXY_CONFIG: bad Docker endpoint");
	proxy_seccomp_family(ep.family);
	if (ep.family == AF_UNIX) {
		proxy_jail_unix(s);
		return;
	}
	if (strcmp(numeric, s->docker_endpoint) != 0)
		log_info("Docker endpoint %s is %s until dockerd-proxy starts "
		    "again", s->docker_endpoint, numeric);
	free(s->docker_endpoint);
	if ((s->docker_endpoint = strdup(numeric)) == NULL)
		fatal("strdup");
	proxy_jail_inet(s, &ep);
}

int
main(int argc, char *argv[])
{
	struct imsgbuf		 boot;
	struct imsg		 settings;
	json_object		*warm;

	proc_child_init(&proxy_proc, argc, &boot, &settings);
	TAILQ_INIT(&proxy.execs);
	TAILQ_INIT(&proxy.processes);
	TAILQ_INIT(&proxy.network_queue);
	TAILQ_INIT(&proxy.puts);
	proxy_read_settings(&settings, &proxy.settings);

	/* Everything that opens files or seeds randomness, before the jail. */
	warm = json_object_new_object();
	json_object_put(warm);
	proxy.base = proc_event_base();

	proxy_limit_descriptors();
	proxy_metrics_init();
	proxy_enter_jail(&proxy.settings);
	proc_seccomp(&proxy_proc, &proxy.settings.proc);

	proc_serve(&proxy_proc, &proxy.parent, proxy.base, &boot,
	    proxy_dispatch_parent, &proxy);
	log_debug("serving Docker at %s", proxy.settings.docker_endpoint);
	event_base_dispatch(proxy.base);
	return 1;
}
