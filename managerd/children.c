/*
 * managerd's children: the table that says what each one is, and their
 * lives as managerd sees them.  The spawner (spawner.c) starts and reaps
 * them; managerd asks it for a start (SPAWN_START), gets the child's
 * channel back (SPAWN_STARTED) and hears of every exit (SPAWN_EXIT).
 * The settings builders below run in the spawner, which holds the API
 * keys; everything else runs in managerd.
 *
 * A child that dies is started again at once, at most RESTART_MAX times
 * in RESTART_WINDOW seconds (restart.c); its lost hook first forgets or
 * fails what it had in flight, and its ready hook says what its return
 * means for the others.
 */
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "managerd.h"
#include "notify.h"
#include "proc.h"

/* --- the settings, built in the spawner ------------------------------------ */

/* The listener goes as a copy: the spawner keeps its own for the next apid. */
static int
apid_settings(const struct config *conf, int listener, struct msgw *w,
    int *fd)
{
	size_t	 i;

	proc_settings_put(w, conf->log_level, conf->seccomp_mode,
	    conf->privsep_user, conf->chroot_dir);
	msgw_u8(w, conf->insecure_no_auth ? 1 : 0);
	msgw_u32(w, (uint32_t)conf->api_keys_count);
	for (i = 0; i < conf->api_keys_count; i++)
		msgw_str(w, conf->api_keys[i]);
	msgw_u64(w, (uint64_t)conf->max_file_bytes);
	msgw_u64(w, (uint64_t)conf->max_exec_output_bytes);
	msgw_double(w, conf->http_header_timeout);
	msgw_double(w, conf->http_body_timeout);
	msgw_double(w, conf->http_idle_timeout);
	msgw_double(w, conf->http_send_timeout);
	msgw_u32(w, (uint32_t)conf->http_max_connections);
	msgw_str(w, conf->metrics_key);
	if (w->overflow)
		return -1;
	if (listener != -1 &&
	    (*fd = fcntl(listener, F_DUPFD_CLOEXEC, 0)) == -1)
		return -1;
	return 0;
}

static int
proxy_settings(const struct config *conf, int listener, struct msgw *w,
    int *fd)
{
	proc_settings_put(w, conf->log_level, conf->seccomp_mode,
	    conf->privsep_user, conf->chroot_dir);
	msgw_str(w, conf->docker_endpoint);
	msgw_str(w, conf->instance_id);
	msgw_u32(w, conf->sandbox_uid);
	msgw_u32(w, conf->sandbox_gid);
	msgw_i64(w, conf->tmp_size_mb);
	msgw_str(w, conf->docker_runtime);
	msgw_str(w, conf->network_name);
	msgw_double(w, conf->max_cpus);
	msgw_i64(w, conf->max_memory_mb);
	msgw_i64(w, conf->max_pids_limit);
	msgw_u8(w, conf->allow_network != 0);
	msgw_u8(w, conf->allow_runtime_env != 0);
	return w->overflow ? -1 : 0;
}

/*
 * The netns-helper takes nothing but the common head: it holds no
 * configuration, only its two capabilities.
 */
static int
netns_settings(const struct config *conf, int listener, struct msgw *w,
    int *fd)
{
	proc_settings_put(w, conf->log_level, conf->seccomp_mode,
	    conf->privsep_user, conf->chroot_dir);
	return w->overflow ? -1 : 0;
}

static int
egress_settings(const struct config *conf, int listener, struct msgw *w,
    int *fd)
{
	proc_settings_put(w, conf->log_level, conf->seccomp_mode,
	    conf->privsep_user, conf->chroot_dir);
	msgw_str(w, conf->egress_dns);
	msgw_str(w, conf->egress_public);
	msgw_u32(w, (uint32_t)conf->egress_log_size);
	return w->overflow ? -1 : 0;
}

/* The common head is all the archive worker needs. */
static int
worker_settings(const struct config *conf, int listener, struct msgw *w,
    int *fd)
{
	proc_settings_put(w, conf->log_level, conf->seccomp_mode,
	    conf->privsep_user, conf->chroot_dir);
	return w->overflow ? -1 : 0;
}

/* --- what managerd does when they come and go ------------------------------ */

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
	pool_start();
	children_start(1);
	/* Recovered policy sandboxes: their listeners died with us. */
	egress_reattach_all();
}

/*
 * A proxy that is back only cleans up after the one that died: the
 * records are not reconciled again, no sandbox is destroyed but those
 * whose creation it cut off.
 */
static void
proxy_ready(int again)
{
	if (!again)
		recover_start(recovered);
	else
		create_proxy_ready();
	events_follow();
}

/* Every call it had fails (502); new ones fail at once until it is back. */
static void
proxy_lost(void)
{
	env->proxy_deaths++;
	events_down();
	create_proxy_lost();
	proxy_calls_fail();
}

/*
 * A new apid has its listener and keys from the spawner; it needs its
 * channel to the archive worker (dispatch_worker.c).
 */
static void
apid_ready(int again)
{
	worker_channel_ready(CHILD_APID);
	/* A restarted apid gets the keys file's table in use. */
	keys_send_apid();
}

/* Its clients are gone with it: forget their requests (apid_request.c). */
static void
apid_lost(void)
{
	apid_requests_orphan();
	apid_calls_fail();
	worker_channel_lost();
}

/*
 * The archive worker is up, or back: its channel to apid.  Nothing of
 * managerd's is in flight with it; apid fails the jobs it had.
 */
static void
worker_ready(int again)
{
	worker_channel_ready(CHILD_WORKER);
}

static void
worker_lost(void)
{
	worker_channel_lost();
}

/*
 * A new child is a line here and what the line names: its id in enum
 * child_id (managerd.h), its struct peer in struct managerd, a settings
 * builder (proc_settings_put() at least: the child reads that head with
 * proc_child_settings()), its <name>_seccomp_table() next to its filter
 * (that file linked into managerd too, for the spawner's filter), its
 * dispatch function and its hooks.
 */
const struct child_kind child_kinds[CHILD_MAX] = {
	[CHILD_PROXY] = {
		"dockerd-proxy", MSG_PROXY_CONFIG, proxy_settings,
		proxy_seccomp_table, offsetof(struct managerd, proxy_peer),
		dispatch_proxy, 0, 0, proxy_ready, proxy_lost
	},
	[CHILD_APID] = {
		"apid", MSG_APID_CONFIG, apid_settings,
		apid_seccomp_table, offsetof(struct managerd, apid_peer),
		dispatch_apid, 1, 0, apid_ready, apid_lost
	},
	[CHILD_WORKER] = {
		"archive-worker", MSG_WORKER_CONFIG, worker_settings,
		worker_seccomp_table, offsetof(struct managerd, worker_peer),
		dispatch_worker, 0, 0, worker_ready, worker_lost
	},
	[CHILD_NETNS] = {
		"netns-helper", MSG_NETNS_CONFIG, netns_settings,
		netns_seccomp_table, offsetof(struct managerd, netns_peer),
		dispatch_netns, 0, 1, netns_ready, netns_lost
	},
	[CHILD_EGRESS] = {
		"egress-proxy", MSG_EGRESS_CONFIG, egress_settings,
		egress_seccomp_table, offsetof(struct managerd, egress_peer),
		dispatch_egress, 0, 1, egress_ready, egress_lost
	},
};

/* --- their lives ------------------------------------------------------------ */

static struct child *
child_get(uint32_t n)
{
	return n < CHILD_MAX ? &env->child[n] : NULL;
}

void
children_init(void)
{
	struct child	*c;
	unsigned int	 n;

	worker_channel_init();
	for (n = 0; n < CHILD_MAX; n++) {
		c = &env->child[n];
		memset(c, 0, sizeof(*c));
		c->kind = &child_kinds[n];
		c->peer = (struct peer *)((char *)env +
		    child_kinds[n].peer_offset);
	}
}

void
children_check_settings(const struct config *conf)
{
	struct msgw	 w;
	unsigned int	 n;
	int		 fd = -1;

	for (n = 0; n < CHILD_MAX; n++) {
		msgw_init(&w);
		if (child_kinds[n].settings(conf, -1, &w, &fd) == -1)
			fatalx("the settings of %s (the API keys among them) "
			    "do not fit in one %d-byte message",
			    child_kinds[n].name, IMSG_MAX_PAYLOAD);
		msgw_clear(&w);
	}
}

static void
child_ask(struct child *c, uint32_t type)
{
	struct msgw	 w;

	msgw_init(&w);
	msgw_u32(&w, (uint32_t)(c - env->child));
	if (peer_send(&env->spawner_peer, type, 0, -1, &w) == -1)
		fatalx("cannot reach the spawner");
}

static void
child_start(struct child *c)
{
	c->state = CHILD_STARTING;
	child_ask(c, MSG_SPAWN_START);
}

void
children_start(int after_recovery)
{
	unsigned int	 n;

	for (n = 0; n < CHILD_MAX; n++) {
		if (child_kinds[n].after_recovery == after_recovery &&
		    !child_kinds[n].on_demand)
			child_start(&env->child[n]);
	}
}

void
child_demand(enum child_id id)
{
	struct child	*c = &env->child[id];

	/* Not reaped yet: its exit starts it again (child_died). */
	if (env->stopping || c->state != CHILD_DOWN || c->pid != 0 ||
	    (c->ev_again != NULL && evtimer_pending(c->ev_again, NULL)))
		return;
	child_start(c);
}

int
child_up(enum child_id id)
{
	struct child	*c = &env->child[id];

	return c->state == CHILD_UP && c->ready;
}

static int
children_all_ready(void)
{
	unsigned int	 n;

	for (n = 0; n < CHILD_MAX; n++) {
		if (!env->child[n].ready && !child_kinds[n].on_demand)
			return 0;
	}
	return 1;
}

void
child_ready(enum child_id id, struct imsg *imsg)
{
	struct child	*c = &env->child[id];
	int		 again = c->was_ready;

	if (imsg->len != 0 || imsg->fd != -1)
		peer_bad_message(c->peer, imsg, "unexpected payload");
	if (c->ready)
		peer_bad_message(c->peer, imsg, "a second READY");
	c->ready = c->was_ready = 1;
	c->kind->ready(again);
	if (c->kind->on_demand)
		log_info("%s started (pid %d)", c->kind->name, (int)c->pid);
	else if (again)
		log_info("%s is back (pid %d)", c->kind->name, (int)c->pid);
	else if (children_all_ready()) {
		/* Reconciliation is over (apid starts after it): serving. */
		log_info("agent-sandbox %s ready on %s", PACKAGE_VERSION,
		    listener_where());
		notify_ready(listener_where());
	}
}

static void
child_channel_close(struct child *c)
{
	peer_stop(c->peer);
	close(c->peer->ibuf.sock);
	c->peer->ibuf.sock = -1;
	c->state = CHILD_DOWN;
	c->ready = 0;
}

/* Its channel is gone: nothing more goes to it or comes from it. */
static void
child_lost(struct child *c)
{
	if (c->state != CHILD_UP)
		return;
	child_channel_close(c);
	c->kind->lost();
}

/* It stopped answering (child_call.c): as if it had closed its channel. */
void
child_hung(enum child_id id)
{
	struct child	*c = &env->child[id];

	child_lost(c);
	child_ask(c, MSG_SPAWN_KILL);
}

/* End of file or a write error: it is dying, or of no use any more. */
static void
child_closed(struct peer *p)
{
	struct child	*c = p->arg;

	log_warnx("%s closed its channel", c->kind->name);
	child_lost(c);
	child_ask(c, MSG_SPAWN_KILL);
}

static void
child_log_exit(struct child *c, pid_t pid, int status)
{
	if (WIFSIGNALED(status))
		log_warnx("%s (pid %d) was killed by signal %d%s",
		    c->kind->name, (int)pid, WTERMSIG(status),
		    WTERMSIG(status) == SIGSYS ?
		    " (a forbidden system call)" : "");
	else
		log_warnx("%s (pid %d) exited with status %d", c->kind->name,
		    (int)pid, WEXITSTATUS(status));
}

static void
child_start_again(evutil_socket_t fd, short what, void *arg)
{
	struct child	*c = arg;

	if (!env->stopping && c->state == CHILD_DOWN)
		child_start(c);
}

/* Started again CHILD_AGAIN_SECONDS from now, outside the budget. */
static void
child_start_later(struct child *c)
{
	struct timeval	 tv = { CHILD_AGAIN_SECONDS, 0 };

	if (c->ev_again == NULL && (c->ev_again = evtimer_new(env->base,
	    child_start_again, c)) == NULL)
		fatalx("%s: evtimer_new", __func__);
	evtimer_add(c->ev_again, &tv);
}

/*
 * dockerd-proxy found the Docker socket it was confined with dead for
 * good (PROC_EXIT_DOCKER_GONE): Docker stopped or restarted, which is no
 * fault of the proxy's.  Once it has served, it is started again after a
 * pause, as often as it takes, confined with the socket the path names
 * by then; meanwhile every Docker-bound request answers 502.  Before it
 * ever served, start-up needs Docker and the usual budget applies.
 */
static int
child_docker_gone(struct child *c)
{
	if (c != &env->child[CHILD_PROXY] || !c->was_ready ||
	    c->status == -1 || !WIFEXITED(c->status) ||
	    WEXITSTATUS(c->status) != PROC_EXIT_DOCKER_GONE)
		return 0;
	log_info("waiting for Docker's socket to start %s again",
	    c->kind->name);
	child_start_later(c);
	return 1;
}

/* Killed because managerd could not take its channel: not its fault. */
static int
child_starved(struct child *c)
{
	if (!c->starved)
		return 0;
	c->starved = 0;
	child_start_later(c);
	return 1;
}

/*
 * Started again at once, unless it keeps dying (restart.c): then the
 * service manager is to start everything again, and restart
 * reconciliation keeps every sandbox.
 */
static void
child_died(struct child *c)
{
	int	 allowed;

	if (env->stopping)
		return;
	metrics_child_restarted((enum child_id)(c - env->child));
	if (child_docker_gone(c) || child_starved(c))
		return;
	/*
	 * One that starts on demand and keeps dying fails what asked for
	 * it; the rest of the server serves on, and its next use tries again.
	 */
	allowed = restart_allowed(&c->restarts, clock_monotonic());
	if (!allowed && c->kind->on_demand) {
		log_warnx("%s died more than %d times within %.0f seconds; "
		    "it is started again when next needed", c->kind->name,
		    RESTART_MAX, RESTART_WINDOW);
		return;
	}
	if (!allowed) {
		log_warnx("%s died more than %d times within %.0f seconds; "
		    "stopping, for the service manager to start the service "
		    "again", c->kind->name, RESTART_MAX, RESTART_WINDOW);
		shutdown_all(1);
	}
	log_info("starting %s again", c->kind->name);
	child_start(c);
}

void
children_close(void)
{
	unsigned int	 n;

	for (n = 0; n < CHILD_MAX; n++) {
		if (env->child[n].state == CHILD_UP)
			child_channel_close(&env->child[n]);
	}
}

/* --- the spawner's messages -------------------------------------------------- */

static struct child *
spawner_child(struct peer *p, struct imsg *imsg, struct msgr *r)
{
	struct child	*c;

	msgr_init(r, imsg);
	if ((c = child_get(msgr_u32(r))) == NULL)
		peer_bad_message(p, imsg, "no such child");
	return c;
}

static void
spawner_started(struct peer *p, struct imsg *imsg)
{
	struct child	*c;
	struct msgr	 r;
	uint32_t	 pid;

	c = spawner_child(p, imsg, &r);
	pid = msgr_u32(&r);
	if (msgr_end(&r) == -1 || pid == 0 || pid > INT32_MAX ||
	    (imsg->fd == -1 && !imsg->fd_lost))
		peer_bad_message(p, imsg, "malformed start");
	if (c->state != CHILD_STARTING)
		peer_bad_message(p, imsg, "a start nobody asked for");
	c->pid = (pid_t)pid;
	if (imsg->fd_lost) {
		/* No channel to it: it goes, and comes again in a second. */
		log_warnx("%s (pid %d) started, but its channel was dropped: "
		    "managerd is out of descriptors", c->kind->name,
		    (int)c->pid);
		c->state = CHILD_DOWN;
		c->starved = 1;
		child_ask(c, MSG_SPAWN_KILL);
		return;
	}
	c->state = CHILD_UP;
	peer_init(c->peer, env->base, imsg_take_fd(imsg), c->kind->name,
	    c->kind->dispatch, child_closed, c);
	log_debug("%s started (pid %d)", c->kind->name, (int)c->pid);
}

static void
spawner_failed(struct peer *p, struct imsg *imsg)
{
	struct child	*c;
	struct msgr	 r;
	uint32_t	 errnum;

	c = spawner_child(p, imsg, &r);
	errnum = msgr_u32(&r);
	if (msgr_end(&r) == -1)
		peer_bad_message(p, imsg, "malformed failure");
	if (c->state != CHILD_STARTING)
		peer_bad_message(p, imsg, "a failure nobody asked for");
	c->state = CHILD_DOWN;
	c->status = -1;
	log_warnx("cannot start %s: %s", c->kind->name,
	    strerror((int)errnum));
	child_died(c);
}

static void
spawner_exit(struct peer *p, struct imsg *imsg)
{
	struct child	*c;
	struct msgr	 r;
	uint32_t	 pid, status;

	c = spawner_child(p, imsg, &r);
	pid = msgr_u32(&r);
	status = msgr_u32(&r);
	if (msgr_end(&r) == -1)
		peer_bad_message(p, imsg, "malformed exit");
	if (c->pid == 0 || (uint32_t)c->pid != pid)
		peer_bad_message(p, imsg, "an exit of no child of ours");
	child_lost(c);
	c->status = (int)status;
	child_log_exit(c, c->pid, (int)status);
	c->pid = 0;
	child_died(c);
}

void
dispatch_spawner(struct peer *p, struct imsg *imsg)
{
	if (imsg->fd != -1 && imsg->hdr.type != MSG_SPAWN_STARTED)
		peer_bad_message(p, imsg, "unexpected descriptor");
	switch (imsg->hdr.type) {
	case MSG_SPAWN_STARTED:
		spawner_started(p, imsg);
		break;
	case MSG_SPAWN_FAILED:
		spawner_failed(p, imsg);
		break;
	case MSG_SPAWN_EXIT:
		spawner_exit(p, imsg);
		break;
	case MSG_SPAWN_KEYS:
		keys_spawner_chunk(p, imsg);
		break;
	default:
		peer_bad_message(p, imsg, "not a message the spawner sends");
	}
}
