/*
 * Answers to apid.  Every reply carries the id apid gave its request; a
 * reply that cannot be queued is logged (apid's request then times out
 * with its client), never fatal.
 */
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "log.h"
#include "managerd.h"

/*
 * Every message to apid goes here: apid_request.c says which of apid's
 * ids it answers, and drops it if the apid that asked is gone.
 */
int
apid_reply_fd(uint32_t apid_id, uint32_t type, int fd, struct msgw *w)
{
	uint32_t	 peerid;

	if (apid_request_reply(apid_id, type, w, &peerid) == -1) {
		if (fd != -1)
			close(fd);
		return -1;
	}
	if (peer_send(&env->apid_peer, type, peerid, fd, w) == -1) {
		log_warnx("cannot answer apid's request %u", peerid);
		return -1;
	}
	return 0;
}

int
apid_reply(uint32_t apid_id, uint32_t type, struct msgw *w)
{
	return apid_reply_fd(apid_id, type, -1, w);
}

int
apid_error(uint32_t apid_id, enum error_kind kind, const char *fmt, ...)
{
	struct msgw	 w;
	char		 text[MSG_MAX_STRING + 1];
	va_list		 ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	msgw_init(&w);
	msgw_u32(&w, kind);
	msgw_str(&w, text);
	return apid_reply(apid_id, MSG_ERROR, &w);
}

int
apid_not_found(uint32_t apid_id, const char *sandbox_id)
{
	return apid_error(apid_id, ERR_NOT_FOUND, "sandbox %s not found",
	    sandbox_id);
}

int
apid_reply_info(uint32_t apid_id, struct sandbox *sb, int running,
    int reason)
{
	struct sandbox_info	 info;
	struct msgw		 w;

	info.id = sb->rec.id;
	info.running = running;
	info.reason = running ? SANDBOX_REASON_NONE : reason;
	info.image = sb->rec.spec.image;
	info.cpus = sb->rec.spec.cpus;
	info.memory_mb = sb->rec.spec.memory_mb;
	info.pids_limit = sb->rec.spec.pids_limit;
	/* Something gets out: the bridge, or a policy through the proxy. */
	info.network = sb->rec.spec.network ||
	    sb->rec.egress.mode != EGRESS_NONE;
	info.read_only_rootfs = sb->rec.spec.read_only_rootfs;
	info.created_at = sb->rec.created_at;
	info.expires_at = sb->rec.expires_at;
	info.source_snapshot_id = sb->rec.source_snapshot_id;
	info.labels = sb->rec.labels;	/* borrowed */
	msgw_init(&w);
	msg_put_sandbox_info(&w, &info);
	return apid_reply(apid_id, MSG_SANDBOX_INFO, &w);
}

/* A sandbox's info once the proxy told its state; its error relayed. */
void
apid_reply_state(uint32_t apid_id, struct sandbox *sb, struct imsg *reply)
{
	int	 running, reason;

	if (reply->hdr.type == MSG_ERROR)
		relay_error(reply, apid_id);
	else {
		running = docker_state_running(reply, &reason);
		apid_reply_info(apid_id, sb, running, reason);
	}
}
