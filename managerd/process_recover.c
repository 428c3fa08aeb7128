/*
 * Processes across a restart of managerd (process.h).  Their records say
 * what ran; the streams that carried their output died with the last
 * managerd's dockerd-proxy, so a process recorded as running is lost
 * now: Docker may still run it (the PID in its record still signals its
 * group) but its output is no longer followed.  Every few seconds Docker
 * is asked about each lost process that may still run, until it says it
 * ended, so that `running` and the exit code stay true.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "log.h"
#include "managerd.h"
#include "process.h"

#define LOST_WATCH_SECONDS	5

static struct event	*lost_timer;

static void
inspect_done(struct imsg *reply, void *arg)
{
	struct process			*p = arg;
	struct docker_process_state	 st;

	p->inspecting = 0;
	if (reply->hdr.type == MSG_ERROR)
		free(proxy_error_text(reply, &(uint32_t){ 0 }));
	else if (msg_get_docker_process_state(reply, &st) == -1)
		peer_bad_message(&env->proxy_peer, reply, "malformed state");
	else if (!p->gone && (!st.exists || !st.running)) {
		p->rec.running = 0;
		p->rec.has_exit_code = st.has_exit_code;
		p->rec.exit_code = st.exit_code;
		(void)process_write_record(p);
		log_info("lost process %s has ended", p->rec.id);
	}
	process_release(p);
}

static void
inspect_one(struct process *p)
{
	struct docker_process_exec	 dx;
	struct msgw			 w;

	memset(&dx, 0, sizeof(dx));
	dx.id = p->rec.sandbox_id;
	dx.exec_id = p->rec.exec_id;
	msgw_init(&w);
	msg_put_docker_process_exec(&w, &dx);
	process_hold(p);
	if (proxy_call(MSG_DOCKER_PROCESS_INSPECT, -1, &w, 0,
	    MSG_DOCKER_PROCESS_STATE, inspect_done, p) == 0)
		process_release(p);
	else
		p->inspecting = 1;
}

static void
lost_tick(evutil_socket_t fd, short what, void *arg)
{
	struct process	*p;
	int		 more = 0;

	TAILQ_FOREACH(p, &all_processes, entry) {
		if (p->rec.status != PROCESS_LOST || !p->rec.running)
			continue;
		more = 1;
		/* One at a time: a Docker that does not answer piles none up. */
		if (child_up(CHILD_PROXY) && !p->inspecting)
			inspect_one(p);
	}
	if (more)
		process_lost_watch();
}

void
process_lost_watch(void)
{
	struct timeval	 tv = { LOST_WATCH_SECONDS, 0 };

	if (lost_timer == NULL &&
	    (lost_timer = evtimer_new(env->base, lost_tick, NULL)) == NULL)
		fatalx("%s: out of memory", __func__);
	if (!evtimer_pending(lost_timer, NULL))
		evtimer_add(lost_timer, &tv);
}

struct records {
	struct process_record	**r;
	size_t			 n;
};

static void
collect(struct process_record *rec, void *arg)
{
	struct records		 *rs = arg;
	struct process_record	**nr;

	if ((nr = reallocarray(rs->r, rs->n + 1, sizeof(*nr))) == NULL)
		fatalx("%s: out of memory", __func__);
	rs->r = nr;
	rs->r[rs->n++] = rec;
}

static int
started_cmp(const void *a, const void *b)
{
	const struct process_record	*x = *(struct process_record *const *)a;
	const struct process_record	*y = *(struct process_record *const *)b;

	return x->started_at < y->started_at ? -1 :
	    x->started_at > y->started_at;
}

/*
 * 1 if the sandbox has a record on disk: one the reconciliation could not
 * read for now and left in place, with its container (recover.c).
 */
static int
sandbox_record_left(const char *id)
{
	char	 path[64];

	snprintf(path, sizeof(path), "sandboxes/%s.json", id);
	return faccessat(env->datadir_fd, path, F_OK, 0) == 0 ||
	    errno != ENOENT;
}

/* A record of the last managerd's: in the table as it stands now. */
static void
recover_one(struct process_record *rec)
{
	struct process	*p;

	if (sandbox_find(rec->sandbox_id) == NULL &&
	    sandbox_record_left(rec->sandbox_id)) {
		/* Its sandbox is there but unread: so are its processes. */
		process_record_free(rec);
		free(rec);
		return;
	}
	if (sandbox_find(rec->sandbox_id) == NULL) {
		log_info("process %s: its sandbox %s is gone", rec->id,
		    rec->sandbox_id);
		(void)store_process_remove(env->datadir_fd, rec->id);
		process_record_free(rec);
		free(rec);
		return;
	}
	if ((p = process_adopt(rec)) == NULL)
		fatalx("%s: out of memory", __func__);
	free(rec);
	if (p->rec.status == PROCESS_RUNNING) {
		p->rec.status = PROCESS_LOST;
		p->rec.running = 1;
		(void)process_write_record(p);
		log_info("process %s in sandbox %s is lost: its output was "
		    "cut by the restart", p->rec.id, p->rec.sandbox_id);
	}
	if (p->rec.status == PROCESS_LOST && p->rec.running) {
		process_lost_watch();
		process_timeout_arm(p);
	}
}

/* After the sandboxes' reconciliation, before apid serves: in start order. */
void
processes_recover(void)
{
	static int	 done;
	struct records	 rs = { NULL, 0 };
	size_t		 i;

	if (done++)
		return;		/* once: the table is ours after that */
	if (store_process_load_all(env->datadir_fd, collect, &rs) == -1)
		log_warn("cannot read the process records");
	if (rs.n > 0)
		qsort(rs.r, rs.n, sizeof(*rs.r), started_cmp);
	for (i = 0; i < rs.n; i++)
		recover_one(rs.r[i]);
	free(rs.r);
}
