/*
 * POST /v1/sandboxes/{id}/exec and .../exec/stream (API.md §4.7-4.8,
 * §5.1): the checks in the reference's order, the final argv, then the
 * command goes to dockerd-proxy with apid's output pipe.  Its "started"
 * and exit are relayed back; a client that goes away cancels it.  Exec
 * takes no sandbox lock (§5.4).  Directory listings (files.c) run through
 * the same calls.
 */
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "managerd.h"
#include "metrics.h"


struct exec_call {
	TAILQ_ENTRY(exec_call)	 entry;
	uint32_t		 apid_id;
	uint32_t		 proxy_id;
	uint32_t		 started_type;	/* what apid hears at the start */
	char			*started_str;	/* its payload; NULL: none */
	int			 started;
	int			 cancelled;
	struct timespec		 asked;		/* for the metrics */
};
TAILQ_HEAD(exec_calls, exec_call);

static struct exec_calls	execs = TAILQ_HEAD_INITIALIZER(execs);
static size_t			nexecs;

size_t
exec_count(void)
{
	return nexecs;
}

static void
exec_call_free(struct exec_call *ec)
{
	TAILQ_REMOVE(&execs, ec, entry);
	nexecs--;
	free(ec->started_str);
	free(ec);
}

static void
exec_done(struct imsg *reply, void *arg)
{
	struct exec_call	*ec = arg;
	struct exec_exit	 x;
	struct msgw		 w;

	switch (reply->hdr.type) {
	case MSG_DOCKER_EXEC_STARTED:
		if (ec->started || reply->len != 0)
			peer_bad_message(&env->proxy_peer, reply,
			    "unexpected start");
		ec->started = 1;
		msgw_init(&w);
		if (ec->started_str != NULL)
			msg_put_string(&w, ec->started_str);
		apid_reply(ec->apid_id, ec->started_type, &w);
		return;
	case MSG_DOCKER_EXEC_EXIT:
		if (!ec->started || msg_get_exec_exit(reply, &x) == -1)
			peer_bad_message(&env->proxy_peer, reply,
			    "malformed exit");
		metrics_exec_done(metric_since(&ec->asked), x.timed_out);
		msgw_init(&w);
		msg_put_exec_exit(&w, &x);
		apid_reply(ec->apid_id, MSG_EXEC_EXIT, &w);
		break;
	default:
		/* Before the start: the client hears the error instead. */
		relay_error(reply, ec->apid_id);
		break;
	}
	exec_call_free(ec);
}

/*
 * §4.7's checks after the sandbox's existence, first failure wins
 * (answered here).  Fills the workdir and timeout to use.
 */
static int
exec_check(uint32_t apid_id, const struct exec_request *req, char *workdir,
    size_t len, double *timeout)
{
	struct config	*conf = &env->conf;
	const char	*key;

	if (req->shell && command_blank(req->argv[0])) {
		apid_error(apid_id, ERR_INVALID_REQUEST,
		    "command must not be empty");
		return -1;
	}
	if (!req->shell && req->argc == 0) {
		apid_error(apid_id, ERR_INVALID_REQUEST,
		    "command must be a non-empty string or list of strings");
		return -1;
	}
	*timeout = req->has_timeout ? req->timeout_seconds :
	    (double)conf->default_exec_timeout_seconds;
	if (!(*timeout > 0 &&
	    *timeout <= (double)conf->max_exec_timeout_seconds)) {
		apid_error(apid_id, ERR_INVALID_REQUEST,
		    "timeout_seconds must be in (0, %ld]",
		    conf->max_exec_timeout_seconds);
		return -1;
	}
	if ((key = env_invalid_key(&req->env)) != NULL) {
		reply_bad_env(apid_id, key);
		return -1;
	}
	return workdir_resolve(apid_id, req->workdir, workdir, len);
}

/*
 * Hand a command to dockerd-proxy with apid's output pipe fd (consumed
 * either way); failures are answered here.  At its start apid hears
 * started_type, with started_str as its payload if not NULL; then the
 * exit, relayed as MSG_EXEC_EXIT.  MSG_EXEC_CANCEL with apid_id stops it.
 */
int
exec_run(uint32_t apid_id, const struct docker_exec *dx, int fd,
    uint32_t started_type, const char *started_str)
{
	struct exec_call	*ec;
	struct msgw		 w;

	msgw_init(&w);
	msg_put_docker_exec(&w, dx);
	if (w.overflow) {
		apid_error(apid_id, ERR_INVALID_REQUEST,
		    "the command and its environment are too large");
		close(fd);
		return -1;
	}
	if ((ec = calloc(1, sizeof(*ec))) == NULL ||
	    (started_str != NULL &&
	    (ec->started_str = strdup(started_str)) == NULL)) {
		apid_error(apid_id, ERR_INTERNAL, "out of memory");
		free(ec);
		close(fd);
		return -1;
	}
	ec->apid_id = apid_id;
	ec->started_type = started_type;
	metric_clock(&ec->asked);
	/* proxy_call consumes the descriptor, even when it fails. */
	if ((ec->proxy_id = proxy_call(MSG_DOCKER_EXEC, fd, &w,
	    MSG_DOCKER_EXEC_STARTED, MSG_DOCKER_EXEC_EXIT, exec_done, ec)) ==
	    0) {
		apid_error(apid_id, ERR_INTERNAL, "cannot reach dockerd-proxy");
		free(ec->started_str);
		free(ec);
		return -1;
	}
	TAILQ_INSERT_TAIL(&execs, ec, entry);
	nexecs++;
	return 0;
}

/* fd is apid's output pipe: passed on, or closed on failure. */
void
exec_start(uint32_t apid_id, struct exec_request *req, int fd)
{
	struct sandbox		*sb;
	struct docker_exec	 dx;
	char			 workdir[MSG_MAX_PATH + sizeof(WORKSPACE_DIR)];
	char			*shell_argv[4];
	double			 timeout;

	if ((sb = sandbox_find_for(apid_id, req->sandbox_id)) == NULL) {
		apid_not_found(apid_id, req->sandbox_id);
		goto fail;
	}
	if (exec_check(apid_id, req, workdir, sizeof(workdir), &timeout) == -1)
		goto fail;
	memset(&dx, 0, sizeof(dx));
	dx.id = sb->rec.id;
	command_argv(req->shell, req->argc, req->argv, shell_argv, &dx.argc,
	    &dx.argv);
	if (exec_env(sb, &req->env, &dx.env) == -1) {
		apid_error(apid_id, errno == E2BIG ? ERR_INVALID_REQUEST :
		    ERR_INTERNAL, errno == E2BIG ? "the environment with the "
		    "sandbox's own is too large" : "out of memory");
		goto fail;
	}
	dx.workdir = workdir;
	dx.timeout_seconds = timeout;
	exec_run(apid_id, &dx, fd, MSG_EXEC_STARTED, NULL);
	exec_env_free(sb, &dx.env);
	return;
fail:
	close(fd);
}

/*
 * The client went away.  The command may have ended already (its exit is
 * on its way to apid): then there is nothing to cancel.
 */
void
exec_cancel(uint32_t apid_id)
{
	struct exec_call	*ec;

	TAILQ_FOREACH(ec, &execs, entry) {
		if (ec->apid_id == apid_id)
			break;
	}
	if (ec == NULL || ec->cancelled) {
		log_debug("exec %u: nothing to cancel", apid_id);
		return;
	}
	ec->cancelled = 1;
	if (proxy_send(MSG_DOCKER_EXEC_CANCEL, ec->proxy_id, NULL) == -1)
		log_warnx("cannot cancel exec %u", apid_id);
}
