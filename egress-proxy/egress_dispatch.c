/*
 * What managerd may ask of the egress proxy: a sandbox's listener, its
 * policy, forgetting it, and its log.  Every payload is decoded to its
 * exact length; anything malformed means managerd is lying, and is
 * fatal.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sys/socket.h>

#include <fcntl.h>
#include <unistd.h>

#include "egress.h"
#include "log.h"

static struct msgw	 out;

/* The sandbox id every message begins with, checked. */
static char *
get_id(struct peer *p, struct imsg *imsg, struct msgr *r)
{
	char	*id;

	msgr_init(r, imsg);
	if ((id = msgr_str(r, MSG_MAX_STRING)) == NULL)
		peer_bad_message(p, imsg, "malformed payload");
	if (!id_is_sandbox(id))
		peer_bad_message(p, imsg, "not a sandbox id");
	return id;
}

static void
get_end(struct peer *p, struct imsg *imsg, struct msgr *r)
{
	if (msgr_end(r) == -1)
		peer_bad_message(p, imsg, "malformed payload");
}

static void
reply_done(struct peer *p, struct imsg *imsg)
{
	(void)peer_compose(p, MSG_EGRESS_DONE, imsg->hdr.peerid, -1, NULL, 0);
}

static void
reply_oom(struct peer *p, struct imsg *imsg)
{
	(void)peer_send_error(p, imsg->hdr.peerid, ERR_INTERNAL,
	    "out of memory");
}

/* A listening TCP socket, made non-blocking for the accept loop. */
static void
check_listener(struct peer *p, struct imsg *imsg, int fd)
{
	int		 v, fl;
	socklen_t	 len = sizeof(v);

	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &len) == -1 ||
	    v != 1)
		peer_bad_message(p, imsg, "not a listening socket");
	len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &len) == -1 ||
	    (v != AF_INET && v != AF_INET6))
		peer_bad_message(p, imsg, "not an inet socket");
	if ((fl = fcntl(fd, F_GETFL)) == -1 ||
	    fcntl(fd, F_SETFL, fl | O_NONBLOCK) == -1)
		fatal("fcntl");
}

static void
dispatch_listen(struct peer *p, struct imsg *imsg)
{
	struct egress_sandbox	*sb;
	struct msgr		 r;
	char			*id;
	int			 fd;

	id = get_id(p, imsg, &r);
	get_end(p, imsg, &r);
	if (imsg->fd_lost) {
		log_warnx("the listener of %s was dropped: out of "
		    "descriptors", id);
		(void)peer_send_error(p, imsg->hdr.peerid, ERR_UNAVAILABLE,
		    "egress-proxy is out of descriptors; try again");
		free(id);
		return;
	}
	if (imsg->fd == -1)
		peer_bad_message(p, imsg, "no listener");
	check_listener(p, imsg, imsg->fd);
	fd = imsg_take_fd(imsg);
	if ((sb = egress_sandbox_get(id)) == NULL ||
	    egress_sandbox_listen(sb, fd) == -1) {
		close(fd);
		reply_oom(p, imsg);
	} else
		reply_done(p, imsg);
	free(id);
}

static void
dispatch_policy(struct peer *p, struct imsg *imsg)
{
	struct egress_sandbox	*sb;
	struct egress_rules	*rules;
	struct msgr		 r;
	char			*id;

	id = get_id(p, imsg, &r);
	if ((rules = calloc(1, sizeof(*rules))) == NULL) {
		free(id);
		reply_oom(p, imsg);
		return;
	}
	/* The decoder's allocation is the one failure that is no lie. */
	errno = 0;
	if (msg_get_egress_policy(&r, &rules->policy) == -1) {
		if (errno != ENOMEM)
			peer_bad_message(p, imsg, "bad policy");
		free(rules);
		free(id);
		reply_oom(p, imsg);
		return;
	}
	get_end(p, imsg, &r);
	rules->refs = 1;
	if ((sb = egress_sandbox_get(id)) == NULL) {
		egress_rules_unref(rules);
		reply_oom(p, imsg);
	} else {
		egress_sandbox_policy(sb, rules);
		reply_done(p, imsg);
	}
	free(id);
}

static void
dispatch_forget(struct peer *p, struct imsg *imsg)
{
	struct egress_sandbox	*sb;
	struct msgr		 r;
	char			*id;

	id = get_id(p, imsg, &r);
	get_end(p, imsg, &r);
	if ((sb = egress_sandbox_find(id)) != NULL)
		egress_sandbox_forget(sb);
	free(id);
}

/* The JSON text, in pieces of at most EGRESS_LOG_PIECE bytes. */
static void
send_log_text(struct peer *p, uint32_t peerid, const char *text, size_t len)
{
	char	 piece[EGRESS_LOG_PIECE + 1];
	size_t	 off, n;

	for (off = 0; off < len; off += n) {
		n = len - off < EGRESS_LOG_PIECE ? len - off :
		    EGRESS_LOG_PIECE;
		memcpy(piece, text + off, n);
		piece[n] = '\0';
		msgw_init(&out);
		msgw_str(&out, piece);
		(void)peer_send(p, MSG_EGRESS_LOG_TEXT, peerid, -1, &out);
	}
	(void)peer_compose(p, MSG_EGRESS_LOG_END, peerid, -1, NULL, 0);
}

static void
dispatch_log(struct peer *p, struct imsg *imsg)
{
	static const struct egress_log	 empty;
	struct egress_sandbox		*sb;
	struct msgr			 r;
	json_object			*o;
	const char			*text;
	size_t				 len;
	char				*id;

	id = get_id(p, imsg, &r);
	get_end(p, imsg, &r);
	sb = egress_sandbox_find(id);
	free(id);
	if ((o = egress_log_to_json(sb != NULL ? &sb->log : &empty)) ==
	    NULL) {
		reply_oom(p, imsg);
		return;
	}
	if ((text = json_object_to_json_string_length(o,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len)) == NULL)
		reply_oom(p, imsg);
	else
		send_log_text(p, imsg->hdr.peerid, text, len);
	json_object_put(o);
}

void
egress_dispatch(struct peer *p, struct imsg *imsg)
{
	if ((imsg->fd != -1 || imsg->fd_lost) &&
	    imsg->hdr.type != MSG_EGRESS_LISTEN)
		peer_bad_message(p, imsg, "unexpected descriptor");
	switch (imsg->hdr.type) {
	case MSG_EGRESS_LISTEN:
		dispatch_listen(p, imsg);
		break;
	case MSG_EGRESS_POLICY:
		dispatch_policy(p, imsg);
		break;
	case MSG_EGRESS_FORGET:
		dispatch_forget(p, imsg);
		break;
	case MSG_EGRESS_LOG:
		dispatch_log(p, imsg);
		break;
	default:
		peer_bad_message(p, imsg, "not an operation of egress-proxy");
	}
}
