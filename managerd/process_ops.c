/*
 * What clients do with a process once it runs (process.h): look at it,
 * read its output, write its stdin, signal, resize, delete; and its
 * timeout (process_recover.c has the restart and the lost ones).
 *
 * Signals go through the proxy, which runs a second exec in the sandbox
 * with the PID the first one printed: the PID is the leader of the
 * process's group, so a signal reaches the whole group; DELETE and the
 * timeout kill the whole tree.  A lost process (its stream cut by a
 * restart) keeps its PID in its record, so it can still be signalled.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "log.h"
#include "managerd.h"
#include "process.h"

struct signal_call {
	struct process	*p;
	uint32_t	 apid_id;	/* 0: nobody waits */
	int		 forget;	/* DELETE: the record goes after */
	int		 signalled;	/* p->signalled before: a failure */
};

/* --- lookups ------------------------------------------------------------- */

/*
 * The process a ref names; NULL once answered 404.  One still starting
 * is not there yet: nobody has been told its id.
 */
static struct process *
process_lookup(uint32_t apid_id, const struct process_ref *ref)
{
	struct process	*p;

	/* Another tenant's sandbox's process is as none (tenant.c). */
	if (sandbox_find_for(apid_id, ref->sandbox_id) == NULL ||
	    (p = process_find(ref->sandbox_id, ref->process_id)) == NULL ||
	    p->phase == PHASE_STARTING) {
		process_not_found(apid_id, ref);
		return NULL;
	}
	return p;
}

void
process_get(uint32_t apid_id, const struct process_ref *ref)
{
	struct process	*p;

	if ((p = process_lookup(apid_id, ref)) != NULL)
		process_reply_info(apid_id, p, 0);
}

/* In start order: the table's, since starts append. */
void
process_list(uint32_t apid_id, const char *sandbox_id)
{
	struct process	*p;

	if (sandbox_find_for(apid_id, sandbox_id) == NULL) {
		apid_not_found(apid_id, sandbox_id);
		return;
	}
	TAILQ_FOREACH(p, &all_processes, entry)
		if (strcmp(p->rec.sandbox_id, sandbox_id) == 0 &&
		    p->phase != PHASE_STARTING &&
		    process_reply_info(apid_id, p, 0) == -1)
			return;
	apid_reply(apid_id, MSG_PROCESS_LIST_END, NULL);
}

void
process_output(uint32_t apid_id, const struct process_output *o, int fd)
{
	struct process	*p;

	if ((p = process_lookup(apid_id, &o->ref)) == NULL) {
		close(fd);
		return;
	}
	process_reader_add(apid_id, p, o->after, o->follow, fd);
}

void
process_stdin(uint32_t apid_id, const struct process_stdin *s, int fd)
{
	struct process	*p;

	if ((p = process_lookup(apid_id, &s->ref)) == NULL) {
		close(fd);
		return;
	}
	process_stdin_add(apid_id, p, s->close_at_end, fd);
}

/* --- signals -------------------------------------------------------------- */

/* Docker may run it: started and not known to have ended. */
static int
process_may_run(const struct process *p)
{
	return p->phase == PHASE_RUNNING ||
	    (p->phase == PHASE_ENDED && p->rec.status == PROCESS_LOST &&
	    p->rec.running);
}

static void
signal_done(struct imsg *reply, void *arg)
{
	struct signal_call	*sc = arg;
	struct process		*p = sc->p;

	if (reply->hdr.type == MSG_ERROR) {
		/* Nothing was sent: an exit now is not the signal's doing. */
		p->signalled = sc->signalled;
		if (sc->apid_id != 0)
			relay_error(reply, sc->apid_id);
		else
			free(proxy_error_text(reply, &(uint32_t){ 0 }));
	} else {
		if (reply->len != 0)
			peer_bad_message(&env->proxy_peer, reply,
			    "unexpected payload");
		if (sc->forget)
			process_forget(p);
		if (sc->apid_id != 0)
			apid_reply(sc->apid_id, MSG_OK, NULL);
	}
	process_release(p);
	free(sc);
}

static int
signal_send(struct process *p, int signo, int tree, uint32_t apid_id,
    int forget)
{
	struct docker_process_signal	 ds;
	struct signal_call		*sc;
	struct msgw			 w;

	if ((sc = calloc(1, sizeof(*sc))) == NULL)
		return apid_id ? apid_error(apid_id, ERR_INTERNAL,
		    "out of memory") : -1;
	sc->p = p;
	sc->apid_id = apid_id;
	sc->forget = forget;
	sc->signalled = p->signalled;
	/* Set now: the exit may come before the proxy's answer does. */
	if (!p->timed_out)
		p->signalled = 1;
	ds.id = p->rec.sandbox_id;
	ds.pid = p->rec.pid;
	ds.signo = (uint32_t)signo;
	ds.tree = tree;
	msgw_init(&w);
	msg_put_docker_process_signal(&w, &ds);
	process_hold(p);
	if (proxy_call(MSG_DOCKER_PROCESS_SIGNAL, -1, &w, 0, MSG_DOCKER_DONE,
	    signal_done, sc) == 0) {
		process_release(p);
		free(sc);
		return apid_id ? apid_error(apid_id, ERR_INTERNAL,
		    "cannot reach dockerd-proxy") : -1;
	}
	return 0;
}

int
process_send_signal(struct process *p, int signo, int tree,
    uint32_t apid_id)
{
	return signal_send(p, signo, tree, apid_id, 0);
}

void
process_signal(uint32_t apid_id, const struct process_signal *s)
{
	struct process	*p;

	if ((p = process_lookup(apid_id, &s->ref)) == NULL)
		return;
	if (!process_may_run(p)) {
		apid_error(apid_id, ERR_CONFLICT, "process %s is not running",
		    p->rec.id);
		return;
	}
	process_send_signal(p, (int)s->signo, 0, apid_id);
}

void
process_delete(uint32_t apid_id, const struct process_ref *ref)
{
	struct process		*p;

	if ((p = process_lookup(apid_id, ref)) == NULL)
		return;
	if (!process_may_run(p)) {
		process_forget(p);
		apid_reply(apid_id, MSG_OK, NULL);
		return;
	}
	/* The record goes once the tree is dead: the answer says so. */
	signal_send(p, SIGKILL, 1, apid_id, 1);
}

/* --- resize --------------------------------------------------------------- */

struct resize_call {
	struct process	*p;
	uint32_t	 apid_id;
	uint32_t	 cols, rows;
};

static void
resize_done(struct imsg *reply, void *arg)
{
	struct resize_call	*rc = arg;

	if (reply->hdr.type == MSG_ERROR)
		relay_error(reply, rc->apid_id);
	else {
		if (reply->len != 0)
			peer_bad_message(&env->proxy_peer, reply,
			    "unexpected payload");
		rc->p->rec.cols = rc->cols;
		rc->p->rec.rows = rc->rows;
		if (!rc->p->gone)
			(void)process_write_record(rc->p);
		apid_reply(rc->apid_id, MSG_OK, NULL);
	}
	process_release(rc->p);
	free(rc);
}

void
process_resize(uint32_t apid_id, const struct process_resize *s)
{
	struct docker_process_exec	 dx;
	struct resize_call		*rc;
	struct process			*p;
	struct msgw			 w;

	if ((p = process_lookup(apid_id, &s->ref)) == NULL)
		return;
	if (!p->rec.tty || !process_may_run(p)) {
		apid_error(apid_id, ERR_CONFLICT, "process %s %s", p->rec.id,
		    !p->rec.tty ? "has no tty" : "is not running");
		return;
	}
	if ((rc = calloc(1, sizeof(*rc))) == NULL) {
		apid_error(apid_id, ERR_INTERNAL, "out of memory");
		return;
	}
	rc->p = p;
	rc->apid_id = apid_id;
	rc->cols = dx.cols = s->cols;
	rc->rows = dx.rows = s->rows;
	dx.id = p->rec.sandbox_id;
	dx.exec_id = p->rec.exec_id;
	msgw_init(&w);
	msg_put_docker_process_exec(&w, &dx);
	process_hold(p);
	if (proxy_call(MSG_DOCKER_PROCESS_RESIZE, -1, &w, 0, MSG_DOCKER_DONE,
	    resize_done, rc) == 0) {
		process_release(p);
		free(rc);
		apid_error(apid_id, ERR_INTERNAL, "cannot reach dockerd-proxy");
	}
}

/* --- the timeout ---------------------------------------------------------- */

void
process_timeout_arm(struct process *p)
{
	struct timeval	 tv;
	double		 left;

	if (!p->rec.has_timeout)
		return;
	left = p->rec.started_at + p->rec.timeout_seconds - clock_wall();
	if (left < 0)
		left = 0;
	tv.tv_sec = (time_t)left;
	tv.tv_usec = (suseconds_t)((left - floor(left)) * 1e6);
	evtimer_add(p->ev_timeout, &tv);
}

void
process_timeout_fire(evutil_socket_t fd, short what, void *arg)
{
	struct process	*p = arg;

	if (!process_may_run(p))
		return;
	log_info("process %s in sandbox %s timed out", p->rec.id,
	    p->rec.sandbox_id);
	p->timed_out = 1;
	if (process_send_signal(p, SIGKILL, 1, 0) == -1)
		log_warnx("cannot kill process %s at its timeout", p->rec.id);
}
