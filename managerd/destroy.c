/*
 * DELETE /v1/sandboxes/{id} (API.md §4.5) and the reaper's destroy: the
 * same path, under the sandbox's lock.  The record goes first (off the
 * disk, durably), then Docker's container and volume, then the table
 * entry; a Docker error writes the record back.  So a crash at any point
 * leaves no record over a container that is gone or going: a restart
 * finds the record and the container (killed before the destroy), or no
 * record and whatever Docker still holds, an orphan it destroys.  A
 * destroy that waited for another finds the sandbox gone and answers
 * 404, as a second DELETE does.
 *
 * A destroy cut off by dockerd-proxy's death has an unknown outcome: the
 * dead proxy's DELETE may still be carried out by Docker, and a record
 * kept over a container that then goes would point at nothing.  So it
 * is asked again of the next proxy (a teardown of what is gone already
 * succeeds), still under the lock, for up to DESTROY_RETRY_SECONDS.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "log.h"
#include "managerd.h"

#define DESTROY_RETRY_SECONDS	60
#define DESTROY_RETRY_USEC	200000

struct destroy_op {
	uint32_t	 apid_id;
	/* The reaper's: no client, done() instead. */
	void		(*done)(struct sandbox *, int ok);
	struct sandbox	*sb;
	unsigned int	 proxy_deaths;	/* when the destroy was asked */
	double		 since;		/* the first ask, monotonic */
	struct event	*ev_retry;
};

static void	destroy_ask(struct destroy_op *);

static void
destroy_finish(struct destroy_op *op, int ok)
{
	struct sandbox	*sb = op->sb;

	if (op->done != NULL)
		op->done(sb, ok);
	if (op->ev_retry != NULL)
		event_free(op->ev_retry);
	free(op);
	sandbox_unlock(sb);
}

static void
destroy_retry(evutil_socket_t fd, short what, void *arg)
{
	struct destroy_op	*op = arg;
	struct timeval		 tv = { 0, DESTROY_RETRY_USEC };

	if (!child_up(CHILD_PROXY) &&
	    clock_monotonic() - op->since < DESTROY_RETRY_SECONDS) {
		evtimer_add(op->ev_retry, &tv);
		return;
	}
	destroy_ask(op);
}

/* 1 if the failed destroy crossed a proxy's death and is asked again. */
static int
destroy_again(struct destroy_op *op)
{
	struct timeval	 tv = { 0, DESTROY_RETRY_USEC };

	if (op->proxy_deaths == env->proxy_deaths ||
	    clock_monotonic() - op->since >= DESTROY_RETRY_SECONDS)
		return 0;
	if (op->ev_retry == NULL && (op->ev_retry = evtimer_new(env->base,
	    destroy_retry, op)) == NULL)
		return 0;
	log_info("the destroy of sandbox %s was cut off by dockerd-proxy's "
	    "restart; asking again", op->sb->rec.id);
	evtimer_add(op->ev_retry, &tv);
	return 1;
}

static void
destroy_done(struct imsg *reply, void *arg)
{
	struct destroy_op	*op = arg;
	struct sandbox		*sb = op->sb;
	uint32_t		 kind;
	char			*text;

	if (reply->hdr.type == MSG_ERROR && destroy_again(op))
		return;
	metrics_sandbox_destroyed(op->done != NULL,
	    reply->hdr.type != MSG_ERROR);
	if (reply->hdr.type == MSG_ERROR) {
		/* Docker said no, or never heard: the sandbox lives on. */
		if (store_sandbox_write(env->datadir_fd, &sb->rec) == -1)
			log_warn("cannot write the record of sandbox %s back; "
			    "the next start removes the sandbox", sb->rec.id);
		if (op->done == NULL)
			relay_error(reply, op->apid_id);
		else {
			text = proxy_error_text(reply, &kind);
			log_warnx("cannot destroy expired sandbox %s: %s",
			    sb->rec.id, text);
			free(text);
		}
		destroy_finish(op, 0);
		return;
	}
	if (reply->len != 0)
		peer_bad_message(&env->proxy_peer, reply, "unexpected payload");
	log_info("sandbox %s destroyed%s", sb->rec.id,
	    op->done != NULL ? " (expired)" : "");
	sandbox_remove(sb);
	reaper_schedule();
	if (op->done == NULL)
		apid_reply(op->apid_id, MSG_OK, NULL);
	destroy_finish(op, 1);
}

/* The record off the disk, durably; -1: answered, the record kept. */
static int
destroy_unrecord(struct destroy_op *op)
{
	const char	*id = op->sb->rec.id;
	int		 saved;

	if (store_sandbox_remove(env->datadir_fd, id) == 0 &&
	    store_sandbox_sync_dir(env->datadir_fd) == 0)
		return 0;
	saved = errno;
	log_warn("cannot remove the record of sandbox %s", id);
	if (store_sandbox_write(env->datadir_fd, &op->sb->rec) == -1)
		log_warn("cannot write the record of sandbox %s back", id);
	if (op->done == NULL)
		apid_error(op->apid_id, storage_error(saved, ERR_INTERNAL),
		    "cannot update the record of sandbox %s: %s", id,
		    strerror(saved));
	destroy_finish(op, 0);
	return -1;
}

static void
destroy_run(struct sandbox *sb, void *arg)
{
	struct destroy_op	*op = arg;

	op->sb = sb;
	if (sb->gone) {
		if (op->done == NULL)
			apid_not_found(op->apid_id, sb->rec.id);
		destroy_finish(op, 1);
		return;
	}
	/*
	 * A reap that waited for the lock may find the expiry moved by a
	 * timeout that held it: the client was told the sandbox lives on.
	 */
	if (op->done != NULL && sb->rec.expires_at > clock_wall()) {
		destroy_finish(op, 1);
		return;
	}
	if (destroy_unrecord(op) == -1)
		return;
	op->since = clock_monotonic();
	destroy_ask(op);
}

static void
destroy_ask(struct destroy_op *op)
{
	struct sandbox	*sb = op->sb;

	op->proxy_deaths = env->proxy_deaths;
	if (proxy_destroy(sb->rec.id, destroy_done, op) == 0) {
		if (store_sandbox_write(env->datadir_fd, &sb->rec) == -1)
			log_warn("cannot write the record of sandbox %s back",
			    sb->rec.id);
		if (op->done == NULL)
			apid_error(op->apid_id, ERR_INTERNAL,
			    "cannot reach dockerd-proxy");
		else
			log_warnx("cannot ask for the destruction of %s",
			    sb->rec.id);
		destroy_finish(op, 0);
	}
}

void
sandbox_delete(uint32_t apid_id, const char *id)
{
	struct destroy_op	*op;
	struct sandbox		*sb;

	if ((sb = sandbox_find_for(apid_id, id)) == NULL) {
		apid_not_found(apid_id, id);
		return;
	}
	if ((op = calloc(1, sizeof(*op))) == NULL) {
		apid_error(apid_id, ERR_INTERNAL, "out of memory");
		return;
	}
	op->apid_id = apid_id;
	if (sandbox_lock(sb, destroy_run, op) == -1) {
		apid_error(apid_id, ERR_INTERNAL, "out of memory");
		free(op);
	}
}

int
sandbox_destroy(struct sandbox *sb, void (*done)(struct sandbox *, int))
{
	struct destroy_op	*op;

	if ((op = calloc(1, sizeof(*op))) == NULL)
		return -1;
	op->done = done;
	if (sandbox_lock(sb, destroy_run, op) == -1) {
		free(op);
		return -1;
	}
	return 0;
}
