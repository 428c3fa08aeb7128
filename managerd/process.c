/*
 * Processes that outlive a request: the table, the start and the end
 * (process.h).  A start is checked as an exec is, then handed to
 * dockerd-proxy with one end of a socketpair; once the proxy says it
 * started (its PID known), the record is written and only then does the
 * client hear 201.  A client_id names a start for retries: the same
 * request again gets the same process, even while it is starting, so
 * twenty retries in parallel start it once.
 *
 * A process ends when both its output is all in (the socket's end of
 * file) and the proxy said how (EXEC_EXIT, or the proxy died: lost); its
 * record is then written again with the final status.
 */
#include <sys/socket.h>

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sha2.h>

#include "log.h"
#include "managerd.h"
#include "process.h"


struct processes	all_processes = TAILQ_HEAD_INITIALIZER(all_processes);
static size_t		nprocesses;

size_t
process_count(void)
{
	return nprocesses;
}

static size_t
sandbox_process_count(const char *sandbox_id)
{
	struct process	*p;
	size_t		 n = 0;

	TAILQ_FOREACH(p, &all_processes, entry)
		if (strcmp(p->rec.sandbox_id, sandbox_id) == 0)
			n++;
	return n;
}

struct process *
process_find(const char *sandbox_id, const char *id)
{
	struct process	*p;

	TAILQ_FOREACH(p, &all_processes, entry)
		if (strcmp(p->rec.sandbox_id, sandbox_id) == 0 &&
		    strcmp(p->rec.id, id) == 0)
			return p;
	return NULL;
}

static struct process *
process_find_client(const char *sandbox_id, const char *client_id)
{
	struct process	*p;

	TAILQ_FOREACH(p, &all_processes, entry)
		if (p->rec.client_id != NULL &&
		    strcmp(p->rec.sandbox_id, sandbox_id) == 0 &&
		    strcmp(p->rec.client_id, client_id) == 0)
			return p;
	return NULL;
}

void
process_not_found(uint32_t apid_id, const struct process_ref *ref)
{
	if (sandbox_find_for(apid_id, ref->sandbox_id) == NULL)
		apid_not_found(apid_id, ref->sandbox_id);
	else
		apid_error(apid_id, ERR_NOT_FOUND, "process %s not found",
		    ref->process_id);
}

void
process_hold(struct process *p)
{
	p->refs++;
}

static void
process_free(struct process *p)
{
	ring_free(&p->ring);
	process_record_free(&p->rec);
	free(p);
}

void
process_release(struct process *p)
{
	if (--p->refs == 0 && p->gone)
		process_free(p);
}

/* --- what apid hears ------------------------------------------------------ */

void
process_fill_info(struct process *p, struct process_info *pi)
{
	struct process_record	*r = &p->rec;

	memset(pi, 0, sizeof(*pi));
	pi->id = r->id;
	pi->sandbox_id = r->sandbox_id;
	pi->shell = r->shell;
	pi->argc = r->argc;
	pi->argv = r->argv;
	pi->workdir = r->workdir;
	pi->status = r->status;
	pi->running = r->running;
	pi->has_exit_code = r->has_exit_code;
	pi->exit_code = r->exit_code;
	pi->started_at = r->started_at;
	pi->has_ended_at = r->has_ended_at;
	pi->ended_at = r->ended_at;
	pi->has_timeout = r->has_timeout;
	pi->timeout_seconds = r->timeout_seconds;
	pi->tty = r->tty;
	pi->stdin_open = r->stdin_open;
	pi->cols = r->cols;
	pi->rows = r->rows;
	pi->client_id = r->client_id;
	pi->output_bytes = r->output_bytes > p->ring.total ? r->output_bytes :
	    p->ring.total;
	pi->kept_bytes = p->ring.kept;
	pi->dropped_bytes = pi->output_bytes - pi->kept_bytes;
}

int
process_reply_info(uint32_t apid_id, struct process *p, int existed)
{
	struct process_info	 pi;
	struct msgw		 w;

	process_fill_info(p, &pi);
	pi.existed = existed;
	msgw_init(&w);
	msg_put_process_info(&w, &pi);
	if (w.overflow)
		return apid_error(apid_id, ERR_INTERNAL, "process %s does not "
		    "fit in a message", p->rec.id);
	return apid_reply(apid_id, MSG_PROCESS_INFO, &w);
}

/* The start and every retry that waited for it hear the same. */
static void
process_answer_waiters(struct process *p, struct imsg *error)
{
	struct proc_waiter	*pw;

	while ((pw = TAILQ_FIRST(&p->waiters)) != NULL) {
		TAILQ_REMOVE(&p->waiters, pw, entry);
		if (error != NULL)
			relay_error(error, pw->apid_id);
		else
			process_reply_info(pw->apid_id, p, 1);
		free(pw);
	}
}

/* --- the end ------------------------------------------------------------- */

int
process_write_record(struct process *p)
{
	p->rec.output_bytes = p->ring.total;
	if (store_process_write(env->datadir_fd, &p->rec) == 0)
		return 0;
	log_warn("cannot write the record of process %s", p->rec.id);
	return -1;
}

static enum process_status
end_status(const struct process *p, enum process_end_cause cause)
{
	if (cause == END_LOST)
		return PROCESS_LOST;
	if (p->timed_out)
		return PROCESS_TIMED_OUT;
	if (p->signalled)
		return PROCESS_KILLED;
	return PROCESS_EXITED;
}

void
process_end(struct process *p, enum process_end_cause cause)
{
	if (p->phase == PHASE_ENDED)
		return;
	p->phase = PHASE_ENDED;
	if (ring_flush(&p->ring) == -1)
		log_warnx("process %s: the last bytes of its output are lost",
		    p->rec.id);
	p->rec.status = end_status(p, cause);
	p->rec.running = cause == END_LOST;
	if (cause != END_LOST && p->exit_code >= 0) {
		p->rec.has_exit_code = 1;
		p->rec.exit_code = p->exit_code;
	}
	p->rec.has_ended_at = cause != END_LOST;
	p->rec.ended_at = clock_wall();
	/* A lost one may still run: its timeout still kills it. */
	if (cause != END_LOST)
		evtimer_del(p->ev_timeout);
	log_info("process %s in sandbox %s: %s", p->rec.id, p->rec.sandbox_id,
	    process_status_name(p->rec.status));
	process_stdins_fail(p, "the process ended");
	process_io_close(p);
	(void)process_write_record(p);
	process_readers_kick(p);
	if (cause == END_LOST)
		process_lost_watch();
}

/* Both halves of the end are in: the output and the proxy's word. */
void
process_maybe_ended(struct process *p)
{
	if (p->eof && p->exit_seen)
		process_end(p, END_BY_ITSELF);
}

/* The start fails: it and every retry waiting hear why; the process goes. */
void
process_start_failed(struct process *p, enum error_kind kind,
    const char *text)
{
	struct imsg	 err;
	struct msgw	 w;
	char		 buf[512];

	snprintf(buf, sizeof(buf), "process %s did not start: %s", p->rec.id,
	    text);
	error_imsg(&err, &w, 0, kind, buf);
	if (p->apid_id != 0)
		apid_error(p->apid_id, kind, "%s", buf);
	p->apid_id = 0;
	process_answer_waiters(p, &err);
	process_forget(p);
}

/* What a process holds but its memory: readers, socket, ring, timer. */
static void
process_teardown(struct process *p)
{
	process_readers_cut(p);
	process_io_close(p);
	ring_free(&p->ring);
	if (p->ev_timeout != NULL)
		event_free(p->ev_timeout);
	p->ev_timeout = NULL;
}

/* A start (and its retries) still waiting when its process went. */
static void
process_answer_gone(struct process *p)
{
	struct imsg	 err;
	struct msgw	 w;
	char		 text[128];

	snprintf(text, sizeof(text), "sandbox %s ended before process %s "
	    "started", p->rec.sandbox_id, p->rec.id);
	error_imsg(&err, &w, 0, ERR_CONFLICT, text);
	if (p->apid_id != 0)
		apid_error(p->apid_id, ERR_CONFLICT, "%s", text);
	p->apid_id = 0;
	process_answer_waiters(p, &err);
}

void
process_forget(struct process *p)
{
	if (p->gone)
		return;
	process_answer_gone(p);
	TAILQ_REMOVE(&all_processes, p, entry);
	nprocesses--;
	p->gone = 1;
	if (p->phase != PHASE_ENDED) {
		p->phase = PHASE_ENDED;
		p->rec.status = PROCESS_KILLED;
	}
	process_stdins_fail(p, "the process was removed");
	process_teardown(p);
	if (store_process_remove(env->datadir_fd, p->rec.id) == -1 &&
	    errno != ENOENT)
		log_warn("cannot remove the record of process %s", p->rec.id);
	else if (store_sync_dir(env->datadir_fd, PROCESS_DIR) == -1)
		log_warn("cannot make the removal of process %s durable",
		    p->rec.id);
	process_release(p);		/* the table's */
}

/* The sandbox went (destroyed, reaped, rolled back): so did its processes. */
void
processes_sandbox_gone(const char *sandbox_id)
{
	struct process	*p, *next;

	TAILQ_FOREACH_SAFE(p, &all_processes, entry, next)
		if (strcmp(p->rec.sandbox_id, sandbox_id) == 0)
			process_forget(p);
}

/* Drop everything, records left on disk (tests). */
void
processes_clear(void)
{
	struct process	*p;

	while ((p = TAILQ_FIRST(&all_processes)) != NULL) {
		TAILQ_REMOVE(&all_processes, p, entry);
		nprocesses--;
		p->gone = 1;
		process_teardown(p);
		process_release(p);
	}
}

/* --- the proxy's replies -------------------------------------------------- */

static void
process_started(struct process *p, struct imsg *reply)
{
	struct docker_process_started	 s;
	int				 saved;

	if (p->phase != PHASE_STARTING ||
	    msg_get_docker_process_started(reply, &s) == -1)
		peer_bad_message(&env->proxy_peer, reply, "unexpected start");
	strlcpy(p->rec.exec_id, s.exec_id, sizeof(p->rec.exec_id));
	p->rec.pid = s.pid;
	free(s.exec_id);
	p->phase = PHASE_RUNNING;
	if (process_write_record(p) == -1) {
		saved = errno;
		process_send_signal(p, SIGKILL, 1, 0);
		process_start_failed(p, storage_error(saved, ERR_INTERNAL),
		    "its record cannot be written");
		return;
	}
	log_info("process %s started in sandbox %s (pid %lld)", p->rec.id,
	    p->rec.sandbox_id, (long long)p->rec.pid);
	process_reply_info(p->apid_id, p, 0);
	p->apid_id = 0;
	process_answer_waiters(p, NULL);
	process_timeout_arm(p);
}

static void
process_exited(struct process *p, struct imsg *reply)
{
	struct exec_exit	 x;

	if (p->phase == PHASE_STARTING || msg_get_exec_exit(reply, &x) == -1)
		peer_bad_message(&env->proxy_peer, reply, "unexpected exit");
	p->exit_seen = 1;
	p->exit_code = x.exit_code;
	process_maybe_ended(p);
}

/* Before its start: the start fails.  After: the stream is cut (lost). */
static void
process_failed(struct process *p, struct imsg *reply)
{
	if (p->phase == PHASE_STARTING) {
		relay_error(reply, p->apid_id);
		p->apid_id = 0;
		process_answer_waiters(p, reply);
		process_forget(p);
		return;
	}
	free(proxy_error_text(reply, &(uint32_t){ 0 }));
	/* What the socket still holds came before the cut. */
	process_io_drain(p);
	process_io_close(p);
	p->exit_seen = 1;
	process_end(p, END_LOST);
}

static void
process_call_done(struct imsg *reply, void *arg)
{
	struct process	*p = arg;

	if (reply->hdr.type == MSG_DOCKER_PROCESS_STARTED) {
		if (!p->gone)
			process_started(p, reply);
		return;
	}
	if (!p->gone) {
		if (reply->hdr.type == MSG_ERROR)
			process_failed(p, reply);
		else
			process_exited(p, reply);
	}
	process_release(p);
}

/* --- the start ------------------------------------------------------------ */

/* exec's checks, with no timeout meaning none; -1 once answered. */
static int
process_check(uint32_t apid_id, const struct process_request *req,
    char *workdir, size_t len)
{
	const struct config	*conf = &env->conf;
	const char		*key;

	if ((req->shell && command_blank(req->argv[0])) ||
	    (!req->shell && req->argc == 0))
		return apid_error(apid_id, ERR_INVALID_REQUEST,
		    "command must not be empty"), -1;
	if (req->has_timeout && !(req->timeout_seconds > 0 &&
	    req->timeout_seconds <= (double)conf->max_exec_timeout_seconds))
		return apid_error(apid_id, ERR_INVALID_REQUEST,
		    "timeout_seconds must be in (0, %ld]",
		    conf->max_exec_timeout_seconds), -1;
	if (!req->tty && (req->cols != 0 || req->rows != 0))
		return apid_error(apid_id, ERR_INVALID_REQUEST,
		    "cols and rows need a tty"), -1;
	if ((key = env_invalid_key(&req->env)) != NULL)
		return reply_bad_env(apid_id, key), -1;
	return workdir_resolve(apid_id, req->workdir, workdir, len);
}

static int
process_limits(uint32_t apid_id, const char *sandbox_id)
{
	const struct config	*conf = &env->conf;

	if (sandbox_process_count(sandbox_id) >=
	    (size_t)conf->max_processes_per_sandbox)
		return apid_error(apid_id, ERR_LIMIT_EXCEEDED,
		    "sandbox %s already has %ld processes; delete ended ones",
		    sandbox_id, conf->max_processes_per_sandbox), -1;
	if (nprocesses >= (size_t)conf->max_processes)
		return apid_error(apid_id, ERR_LIMIT_EXCEEDED,
		    "the server already has %ld processes",
		    conf->max_processes), -1;
	return 0;
}

/* A start with a client_id already seen: 1 if answered (or waiting). */
static int
process_retry(uint32_t apid_id, const struct process_request *req,
    const char *digest)
{
	struct process		*p;
	struct proc_waiter	*pw;

	if (req->client_id == NULL ||
	    (p = process_find_client(req->sandbox_id, req->client_id)) == NULL)
		return 0;
	if (strcmp(p->rec.digest, digest) != 0) {
		apid_error(apid_id, ERR_CONFLICT, "client_id %s was used for "
		    "a different request (process %s)", req->client_id,
		    p->rec.id);
		return 1;
	}
	if (p->phase != PHASE_STARTING) {
		process_reply_info(apid_id, p, 1);
		return 1;
	}
	if ((pw = calloc(1, sizeof(*pw))) == NULL) {
		apid_error(apid_id, ERR_INTERNAL, "out of memory");
		return 1;
	}
	pw->apid_id = apid_id;
	TAILQ_INSERT_TAIL(&p->waiters, pw, entry);
	return 1;
}

static int
record_fill(struct process_record *r, struct process_request *req,
    const char *workdir, const char *digest)
{
	memset(r, 0, sizeof(*r));
	id_make(r->id, sizeof(r->id), PROCESS_ID_PREFIX);
	strlcpy(r->sandbox_id, req->sandbox_id, sizeof(r->sandbox_id));
	strlcpy(r->digest, digest, sizeof(r->digest));
	r->shell = req->shell;
	r->argc = req->argc;
	r->argv = req->argv;		/* taken from the request */
	req->argv = NULL;
	req->argc = 0;
	r->client_id = req->client_id;
	req->client_id = NULL;
	if ((r->workdir = strdup(workdir)) == NULL)
		return -1;
	r->started_at = clock_wall();
	r->has_timeout = req->has_timeout;
	r->timeout_seconds = req->timeout_seconds;
	r->tty = req->tty;
	r->stdin_open = req->stdin_open;
	r->cols = req->tty ? (req->cols ? req->cols : 80) : 0;
	r->rows = req->tty ? (req->rows ? req->rows : 24) : 0;
	r->status = PROCESS_RUNNING;
	r->running = 1;
	return 0;
}

/* A new process, empty, not yet in the table. */
static struct process *
process_alloc(enum process_phase phase)
{
	struct process	*p;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	if ((p->ev_timeout = evtimer_new(env->base, process_timeout_fire,
	    p)) == NULL) {
		free(p);
		return NULL;
	}
	p->sock = -1;
	p->phase = phase;
	TAILQ_INIT(&p->waiters);
	TAILQ_INIT(&p->readers);
	TAILQ_INIT(&p->stdins);
	ring_init(&p->ring, (uint64_t)env->conf.process_output_bytes);
	p->refs = 1;			/* the table's */
	return p;
}

static void
process_insert(struct process *p)
{
	TAILQ_INSERT_TAIL(&all_processes, p, entry);
	nprocesses++;
}

static struct process *
process_new(struct process_request *req, const char *workdir,
    const char *digest)
{
	struct process	*p;

	if ((p = process_alloc(PHASE_STARTING)) == NULL)
		return NULL;
	if (record_fill(&p->rec, req, workdir, digest) == -1) {
		process_record_free(&p->rec);
		event_free(p->ev_timeout);
		free(p);
		return NULL;
	}
	process_insert(p);
	return p;
}

/* A record of the last managerd's, in the table, ended (process_recover). */
struct process *
process_adopt(struct process_record *rec)
{
	struct process	*p;

	if ((p = process_alloc(PHASE_ENDED)) == NULL)
		return NULL;
	p->rec = *rec;
	memset(rec, 0, sizeof(*rec));
	/* Its output is gone, but its numbering goes on. */
	p->ring.total = p->rec.output_bytes;
	process_insert(p);
	return p;
}

/* The message for the proxy: the final argv, as exec builds it. */
static int
process_proxy_start(struct process *p, const struct env_list *envl,
    int fd)
{
	char			*shell_argv[4];
	struct docker_process	 dp;
	struct msgw		 w;

	memset(&dp, 0, sizeof(dp));
	dp.id = p->rec.sandbox_id;
	command_argv(p->rec.shell, p->rec.argc, p->rec.argv, shell_argv,
	    &dp.argc, &dp.argv);
	dp.env = *envl;
	dp.workdir = p->rec.workdir;
	dp.tty = p->rec.tty;
	dp.stdin_open = p->rec.stdin_open;
	dp.cols = p->rec.cols;
	dp.rows = p->rec.rows;
	msgw_init(&w);
	msg_put_docker_process(&w, &dp);
	if (w.overflow) {
		close(fd);
		errno = E2BIG;
		return -1;
	}
	process_hold(p);
	if (proxy_call(MSG_DOCKER_PROCESS_START, fd, &w,
	    MSG_DOCKER_PROCESS_STARTED, MSG_DOCKER_EXEC_EXIT,
	    process_call_done, p) == 0) {
		process_release(p);
		errno = EAGAIN;
		return -1;
	}
	return 0;
}

static int
process_launch(uint32_t apid_id, struct process *p,
    const struct env_list *envl)
{
	int	 sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0,
	    sv) == -1)
		return apid_error(apid_id, descriptor_error(errno,
		    ERR_INTERNAL), "cannot make a socket pair: %s",
		    strerror(errno)), -1;
	if (process_io_start(p, sv[0]) == -1) {
		close(sv[1]);
		return apid_error(apid_id, ERR_INTERNAL, "out of memory"), -1;
	}
	if (process_proxy_start(p, envl, sv[1]) == -1)
		return apid_error(apid_id, errno == E2BIG ?
		    ERR_INVALID_REQUEST : ERR_INTERNAL, errno == E2BIG ?
		    "the command and its environment are too large" :
		    "cannot reach dockerd-proxy"), -1;
	p->apid_id = apid_id;
	return 0;
}

void
process_start(uint32_t apid_id, struct process_request *req,
    const void *payload, size_t len)
{
	char		 workdir[MSG_MAX_PATH + sizeof(WORKSPACE_DIR)];
	char		 digest[SHA256_DIGEST_STRING_LENGTH];
	struct env_list	 envl;
	struct sandbox	*sb;
	struct process	*p;

	if ((sb = sandbox_find_for(apid_id, req->sandbox_id)) == NULL) {
		apid_not_found(apid_id, req->sandbox_id);
		return;
	}
	/* Its container is being replaced: a process now would outlive it. */
	if (sb->replacing) {
		apid_error(apid_id, ERR_CONFLICT, "sandbox %s is being rolled "
		    "back; start the process once it is done", sb->rec.id);
		return;
	}
	SHA256Data(payload, len, digest);
	if (process_retry(apid_id, req, digest) ||
	    process_check(apid_id, req, workdir, sizeof(workdir)) == -1 ||
	    process_limits(apid_id, req->sandbox_id) == -1)
		return;
	if ((p = process_new(req, workdir, digest)) == NULL) {
		apid_error(apid_id, ERR_INTERNAL, "out of memory");
		return;
	}
	if (exec_env(sb, &req->env, &envl) == -1) {
		apid_error(apid_id, errno == E2BIG ? ERR_INVALID_REQUEST :
		    ERR_INTERNAL, errno == E2BIG ? "the environment with the "
		    "sandbox's own is too large" : "out of memory");
		process_forget(p);
		return;
	}
	if (process_launch(apid_id, p, &envl) == -1)
		process_forget(p);
	exec_env_free(sb, &envl);
}
