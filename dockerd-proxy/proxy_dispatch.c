/*
 * The operations managerd may ask for.  This switch is the whole interface
 * of the process that holds the Docker socket: there is no pass-through.
 * Payloads are decoded with the codecs of sandbox_msg.h (process_msg.h
 * for processes) and checked here; anything malformed means managerd is
 * lying, and is fatal.
 */
#include <sys/stat.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "proxy.h"

static void
check_env(struct peer *p, struct imsg *imsg, const struct env_list *env)
{
	size_t	 i;

	for (i = 0; i < env->count; i++)
		if (!valid_env_key(env->keys[i]))
			peer_bad_message(p, imsg, "bad environment variable");
}

static char *
get_sandbox_id(struct peer *p, struct imsg *imsg)
{
	char	*id;

	if ((id = msg_get_string(imsg, MSG_MAX_ID)) == NULL)
		peer_bad_message(p, imsg, "malformed payload");
	if (!id_is_sandbox(id))
		peer_bad_message(p, imsg, "bad sandbox id");
	return id;
}

static void
dispatch_create(struct proxy *px, struct peer *p, struct imsg *imsg)
{
	struct docker_create	 dc;

	if (msg_get_docker_create(imsg, &dc) == -1)
		peer_bad_message(p, imsg, "malformed payload");
	if (!id_is_sandbox(dc.id))
		peer_bad_message(p, imsg, "bad sandbox id");
	check_env(p, imsg, &dc.spec.env);
	if (imsg->hdr.type == MSG_DOCKER_UPDATE)
		docker_update(px, imsg->hdr.peerid, &dc);
	else
		docker_create(px, imsg->hdr.peerid, &dc);
}

static void
dispatch_exec(struct proxy *px, struct peer *p, struct imsg *imsg)
{
	struct docker_exec	 de;

	if (imsg->fd == -1)
		peer_bad_message(p, imsg, "no output pipe");
	if (msg_get_docker_exec(imsg, &de) == -1)
		peer_bad_message(p, imsg, "malformed payload");
	if (!id_is_sandbox(de.id))
		peer_bad_message(p, imsg, "bad sandbox id");
	check_env(p, imsg, &de.env);
	if (de.workdir[0] != '/')
		peer_bad_message(p, imsg, "relative workdir");
	if (!isfinite(de.timeout_seconds) || de.timeout_seconds <= 0)
		peer_bad_message(p, imsg, "bad timeout");
	docker_exec(px, imsg->hdr.peerid, &de, imsg_take_fd(imsg));
}

static void
dispatch_process_start(struct proxy *px, struct peer *p, struct imsg *imsg)
{
	struct docker_process	 d;

	if (imsg->fd == -1)
		peer_bad_message(p, imsg, "no process socket");
	/* The codec checks the id, the argv, the workdir and the size. */
	if (msg_get_docker_process(imsg, &d) == -1)
		peer_bad_message(p, imsg, "malformed payload");
	check_env(p, imsg, &d.env);
	docker_process_start(px, imsg->hdr.peerid, &d, imsg_take_fd(imsg));
}

static void
dispatch_process_signal(struct proxy *px, struct peer *p, struct imsg *imsg)
{
	struct docker_process_signal	 s;

	/* The codec checks the id, the PID (never 0 or 1) and the signal. */
	if (msg_get_docker_process_signal(imsg, &s) == -1)
		peer_bad_message(p, imsg, "malformed payload");
	docker_process_signal(px, imsg->hdr.peerid, &s);
	free(s.id);
}

/* An inspect names no size; a resize one of 1 to PROCESS_TTY_MAX each. */
static void
dispatch_process_exec(struct proxy *px, struct peer *p, struct imsg *imsg)
{
	struct docker_process_exec	 x;
	int				 resize;

	resize = imsg->hdr.type == MSG_DOCKER_PROCESS_RESIZE;
	if (msg_get_docker_process_exec(imsg, &x) == -1)
		peer_bad_message(p, imsg, "malformed payload");
	if (resize && (x.cols == 0 || x.rows == 0))
		peer_bad_message(p, imsg, "bad tty size");
	if (!resize && (x.cols != 0 || x.rows != 0))
		peer_bad_message(p, imsg, "a size in an inspect");
	if (resize)
		docker_process_resize(px, imsg->hdr.peerid, &x);
	else
		docker_process_inspect(px, imsg->hdr.peerid, &x);
	docker_process_exec_free(&x);
}

static void
dispatch_archive_get(struct proxy *px, struct peer *p, struct imsg *imsg)
{
	struct archive_get	*ag;

	if (imsg->fd == -1)
		peer_bad_message(p, imsg, "no pipe");
	if ((ag = malloc(sizeof(*ag))) == NULL)
		fatal("malloc");
	if (msg_get_archive_get(imsg, ag) == -1)
		peer_bad_message(p, imsg, "malformed payload");
	if (!id_is_sandbox(ag->id))
		peer_bad_message(p, imsg, "bad sandbox id");
	docker_archive_get(px, imsg->hdr.peerid, ag, imsg_take_fd(imsg));
}

static void
dispatch_archive_put(struct proxy *px, struct peer *p, struct imsg *imsg)
{
	struct archive_put	*ap;
	struct stat		 st;

	if (imsg->fd == -1)
		peer_bad_message(p, imsg, "no tar");
	if ((ap = malloc(sizeof(*ap))) == NULL)
		fatal("malloc");
	if (msg_get_archive_put(imsg, ap) == -1)
		peer_bad_message(p, imsg, "malformed payload");
	if (!id_is_sandbox(ap->id))
		peer_bad_message(p, imsg, "bad sandbox id");
	/* GO names the file it waits for: a pipe would be read at once. */
	if ((ap->flags & ARCHIVE_PUT_WAIT) && (fstat(imsg->fd, &st) == -1 ||
	    !S_ISREG(st.st_mode)))
		peer_bad_message(p, imsg, "a waiting PUT's tar is no file");
	docker_archive_put(px, imsg->hdr.peerid, ap, imsg_take_fd(imsg));
}

static void
dispatch_archive_head(struct proxy *px, struct peer *p, struct imsg *imsg)
{
	struct archive_head	*ah;

	if ((ah = malloc(sizeof(*ah))) == NULL)
		fatal("malloc");
	if (msg_get_archive_head(imsg, ah) == -1)
		peer_bad_message(p, imsg, "malformed payload");
	if (!id_is_sandbox(ah->id))
		peer_bad_message(p, imsg, "bad sandbox id");
	docker_archive_head(px, imsg->hdr.peerid, ah);
}

static void
dispatch_archive_put_go(struct proxy *px, struct peer *p, struct imsg *imsg)
{
	uint64_t	 length;

	if (msg_get_u64(imsg, &length) == -1 || length > INT64_MAX)
		peer_bad_message(p, imsg, "malformed payload");
	if (docker_archive_put_go(px, imsg->hdr.peerid, length) == -1)
		peer_bad_message(p, imsg, "that PUT waits for no GO");
}

void
proxy_dispatch_parent(struct peer *p, struct imsg *imsg)
{
	struct proxy	*px = p->arg;
	char		*id;

	if ((imsg->fd != -1 || imsg->fd_lost) &&
	    imsg->hdr.type != MSG_DOCKER_EXEC &&
	    imsg->hdr.type != MSG_DOCKER_ARCHIVE_GET &&
	    imsg->hdr.type != MSG_DOCKER_ARCHIVE_PUT &&
	    imsg->hdr.type != MSG_DOCKER_PROCESS_START)
		peer_bad_message(p, imsg, "unexpected descriptor");
	/* Dropped on its way in: the call fails, unread, for a moment. */
	if (imsg->fd_lost) {
		log_warnx("%s %u: its descriptor was dropped: out of "
		    "descriptors", msg_type_name(imsg->hdr.type),
		    imsg->hdr.peerid);
		(void)peer_send_error(p, imsg->hdr.peerid, ERR_UNAVAILABLE,
		    "dockerd-proxy is out of descriptors; try again");
		return;
	}
	switch (imsg->hdr.type) {
	case MSG_DOCKER_PING:
		if (imsg->len != 0)
			peer_bad_message(p, imsg, "unexpected payload");
		docker_ping(px, imsg->hdr.peerid);
		break;
	case MSG_DOCKER_CREATE:
	case MSG_DOCKER_UPDATE:
		dispatch_create(px, p, imsg);
		break;
	case MSG_DOCKER_METRICS:
		if (imsg->len != 0)
			peer_bad_message(p, imsg, "unexpected payload");
		proxy_metrics_send(p, imsg->hdr.peerid);
		break;
	case MSG_DOCKER_DESTROY:
		id = get_sandbox_id(p, imsg);
		docker_destroy(px, imsg->hdr.peerid, id);
		free(id);
		break;
	case MSG_DOCKER_STATE:
		id = get_sandbox_id(p, imsg);
		docker_state(px, imsg->hdr.peerid, id);
		free(id);
		break;
	case MSG_DOCKER_STATS:
		id = get_sandbox_id(p, imsg);
		docker_stats(px, imsg->hdr.peerid, id);
		free(id);
		break;
	case MSG_DOCKER_EVENTS_FOLLOW:
		if (imsg->len != 0)
			peer_bad_message(p, imsg, "unexpected payload");
		docker_events_follow(px);
		break;
	case MSG_DOCKER_LIST:
		if (imsg->len != 0)
			peer_bad_message(p, imsg, "unexpected payload");
		docker_list(px, imsg->hdr.peerid);
		break;
	case MSG_DOCKER_EXEC:
		dispatch_exec(px, p, imsg);
		break;
	case MSG_DOCKER_EXEC_CANCEL:
		if (imsg->len != 0)
			peer_bad_message(p, imsg, "unexpected payload");
		docker_exec_cancel(px, imsg->hdr.peerid);
		break;
	case MSG_DOCKER_ARCHIVE_GET:
		dispatch_archive_get(px, p, imsg);
		break;
	case MSG_DOCKER_ARCHIVE_PUT:
		dispatch_archive_put(px, p, imsg);
		break;
	case MSG_DOCKER_ARCHIVE_HEAD:
		dispatch_archive_head(px, p, imsg);
		break;
	case MSG_DOCKER_ARCHIVE_PUT_GO:
		dispatch_archive_put_go(px, p, imsg);
		break;
	case MSG_DOCKER_PROCESS_START:
		dispatch_process_start(px, p, imsg);
		break;
	case MSG_DOCKER_PROCESS_SIGNAL:
		dispatch_process_signal(px, p, imsg);
		break;
	case MSG_DOCKER_PROCESS_RESIZE:
	case MSG_DOCKER_PROCESS_INSPECT:
		dispatch_process_exec(px, p, imsg);
		break;
	default:
		peer_bad_message(p, imsg, "not an operation of dockerd-proxy");
	}
}
