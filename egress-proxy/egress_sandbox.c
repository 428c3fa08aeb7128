/*
 * The sandboxes the egress proxy serves: each with its listener (the
 * socket a connection came in on is what names its sandbox), its
 * policy, its log of recent connections and its live connections, so
 * that forgetting a sandbox cuts them.  A handful to a few hundred
 * entries, looked up by id on managerd's messages only: a list will do.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "egress.h"
#include "log.h"

struct egress_sandbox *
egress_sandbox_find(const char *id)
{
	struct egress_sandbox	*sb;

	TAILQ_FOREACH(sb, &egress.sandboxes, entry)
		if (strcmp(sb->id, id) == 0)
			return sb;
	return NULL;
}

struct egress_sandbox *
egress_sandbox_get(const char *id)
{
	struct egress_sandbox	*sb;

	if ((sb = egress_sandbox_find(id)) != NULL)
		return sb;
	if ((sb = calloc(1, sizeof(*sb))) == NULL)
		return NULL;
	if (egress_log_init(&sb->log, egress.settings.log_size) == -1) {
		free(sb);
		return NULL;
	}
	(void)strlcpy(sb->id, id, sizeof(sb->id));
	TAILQ_INIT(&sb->conns);
	TAILQ_INSERT_TAIL(&egress.sandboxes, sb, entry);
	return sb;
}

void
egress_rules_unref(struct egress_rules *rules)
{
	if (rules == NULL || --rules->refs > 0)
		return;
	egress_policy_free(&rules->policy);
	free(rules);
}

static int
sandbox_full(const struct egress_sandbox *sb)
{
	return sb->nconns >= EGRESS_SANDBOX_CONNS ||
	    egress.nconns >= EGRESS_CONNS_MAX;
}

static void
sandbox_pause(struct egress_sandbox *sb)
{
	if (sb->listener != NULL && !sb->paused &&
	    evconnlistener_disable(sb->listener) == 0)
		sb->paused = 1;
}

static void
sandbox_resume(struct egress_sandbox *sb)
{
	if (sb->listener != NULL && sb->paused && !sandbox_full(sb) &&
	    evconnlistener_enable(sb->listener) == 0)
		sb->paused = 0;
}

/* A second after running out of descriptors, every paused one again. */
static void
retry_listeners(evutil_socket_t fd, short what, void *arg)
{
	struct egress_sandbox	*sb;

	TAILQ_FOREACH(sb, &egress.sandboxes, entry)
		sandbox_resume(sb);
}

static void
accepted(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
    int salen, void *arg)
{
	struct egress_sandbox	*sb = arg;

	egress_conn_accept(sb, fd);
	if (sandbox_full(sb))
		sandbox_pause(sb);
}

/*
 * Out of descriptors (or memory) for an accept: the listener would be
 * readable again at once, so it pauses, and all listeners are tried
 * again a second later.  The client waits in the backlog meanwhile.
 */
static void
accept_failed(struct evconnlistener *l, void *arg)
{
	struct egress_sandbox	*sb = arg;
	struct timeval		 tv = { 1, 0 };
	int			 e = EVUTIL_SOCKET_ERROR();

	log_warnx("accept for %s: %s", sb->id, strerror(e));
	sandbox_pause(sb);
	if (egress.retry == NULL &&
	    (egress.retry = evtimer_new(egress.base, retry_listeners,
	    NULL)) == NULL)
		return;
	(void)evtimer_add(egress.retry, &tv);
}

int
egress_sandbox_listen(struct egress_sandbox *sb, int fd)
{
	struct evconnlistener	*l;

	/* backlog 0: the socket listens already, in the sandbox's netns. */
	l = evconnlistener_new(egress.base, accepted, sb,
	    LEV_OPT_CLOSE_ON_FREE, 0, fd);
	if (l == NULL)
		return -1;
	evconnlistener_set_error_cb(l, accept_failed);
	if (sb->listener != NULL)
		evconnlistener_free(sb->listener);
	sb->listener = l;
	sb->paused = 0;
	if (sandbox_full(sb))
		sandbox_pause(sb);
	log_debug("%s: listening", sb->id);
	return 0;
}

void
egress_sandbox_policy(struct egress_sandbox *sb, struct egress_rules *rules)
{
	egress_rules_unref(sb->rules);
	sb->rules = rules;
}

void
egress_sandbox_conn_gone(struct egress_sandbox *sb)
{
	struct egress_sandbox	*s;

	/* A connection of any sandbox frees room in the total as well. */
	TAILQ_FOREACH(s, &egress.sandboxes, entry)
		sandbox_resume(s);
	(void)sb;
}

void
egress_sandbox_forget(struct egress_sandbox *sb)
{
	struct egress_conn	*c;

	if (sb->listener != NULL)
		evconnlistener_free(sb->listener);
	sb->listener = NULL;
	while ((c = TAILQ_FIRST(&sb->conns)) != NULL)
		egress_conn_cut(c);
	TAILQ_REMOVE(&egress.sandboxes, sb, entry);
	egress_rules_unref(sb->rules);
	egress_log_free(&sb->log);
	log_debug("%s: forgotten", sb->id);
	free(sb);
}
