/*
 * Answers to apid.  Every reply carries the id apid gave its request; a
 * reply that cannot be queued is logged (apid's request then times out
 * with its client), never fatal.
 */
#include <stdarg.h>
#include <stdio.h>

#include "log.h"
#include "managerd.h"

int
apid_reply(uint32_t apid_id, uint32_t type, struct msgw *w)
{
	if (peer_send(&env->apid_peer, type, apid_id, -1, w) == -1) {
		log_warnx("cannot answer apid's request %u", apid_id);
		return -1;
	}
	return 0;
}

int
apid_error(uint32_t apid_id, enum error_kind kind, const char *fmt, ...)
{
	char	 text[MSG_MAX_STRING + 1];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (peer_send_error(&env->apid_peer, apid_id, kind, "%s", text) == -1) {
		log_warnx("cannot answer apid's request %u", apid_id);
		return -1;
	}
	return 0;
}

int
apid_not_found(uint32_t apid_id, const char *sandbox_id)
{
	return apid_error(apid_id, ERR_NOT_FOUND, "sandbox %s not found",
	    sandbox_id);
}

int
apid_reply_info(uint32_t apid_id, struct sandbox *sb, int running)
{
	struct sandbox_info	 info;
	struct msgw		 w;

	info.id = sb->rec.id;
	info.running = running;
	info.image = sb->rec.spec.image;
	info.cpus = sb->rec.spec.cpus;
	info.memory_mb = sb->rec.spec.memory_mb;
	info.pids_limit = sb->rec.spec.pids_limit;
	info.network = sb->rec.spec.network;
	info.read_only_rootfs = sb->rec.spec.read_only_rootfs;
	info.created_at = sb->rec.created_at;
	info.expires_at = sb->rec.expires_at;
	info.source_snapshot_id = sb->rec.source_snapshot_id;
	msgw_init(&w);
	msg_put_sandbox_info(&w, &info);
	return apid_reply(apid_id, MSG_SANDBOX_INFO, &w);
}
