/*
 * Message type names and the typed payload writer and reader.  Integers are
 * little-endian on the wire whatever the host; strings are a u32 length
 * (UINT32_MAX for NULL) followed by bytes without a terminating NUL.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "msg.h"

#define MSGSTR_NULL	UINT32_MAX

const char *
msg_type_name(uint32_t type)
{
	switch (type) {
	case MSG_APID_CONFIG:
		return "APID_CONFIG";
	case MSG_PROXY_CONFIG:
		return "PROXY_CONFIG";
	case MSG_WORKER_CONFIG:
		return "WORKER_CONFIG";
	case MSG_WORKER_APID_CHANNEL:
		return "WORKER_APID_CHANNEL";
	case MSG_APID_WORKER_CHANNEL:
		return "APID_WORKER_CHANNEL";
	case MSG_CHANNEL_AGAIN:
		return "CHANNEL_AGAIN";
	case MSG_READY:
		return "READY";
	case MSG_SPAWN_START:
		return "SPAWN_START";
	case MSG_SPAWN_KILL:
		return "SPAWN_KILL";
	case MSG_SPAWN_STARTED:
		return "SPAWN_STARTED";
	case MSG_SPAWN_FAILED:
		return "SPAWN_FAILED";
	case MSG_SPAWN_EXIT:
		return "SPAWN_EXIT";
	case MSG_SPAWN_KEYS_RELOAD:
		return "SPAWN_KEYS_RELOAD";
	case MSG_SPAWN_KEYS:
		return "SPAWN_KEYS";
	case MSG_APID_KEYS:
		return "APID_KEYS";
	case MSG_HEALTH_REQUEST:
		return "HEALTH_REQUEST";
	case MSG_SANDBOX_CREATE:
		return "SANDBOX_CREATE";
	case MSG_SANDBOX_LIST:
		return "SANDBOX_LIST";
	case MSG_SANDBOX_GET:
		return "SANDBOX_GET";
	case MSG_SANDBOX_DELETE:
		return "SANDBOX_DELETE";
	case MSG_SANDBOX_TIMEOUT:
		return "SANDBOX_TIMEOUT";
	case MSG_EXEC_START:
		return "EXEC_START";
	case MSG_EXEC_CANCEL:
		return "EXEC_CANCEL";
	case MSG_HEALTH_RESULT:
		return "HEALTH_RESULT";
	case MSG_SANDBOX_INFO:
		return "SANDBOX_INFO";
	case MSG_SANDBOX_LIST_END:
		return "SANDBOX_LIST_END";
	case MSG_OK:
		return "OK";
	case MSG_EXEC_STARTED:
		return "EXEC_STARTED";
	case MSG_EXEC_EXIT:
		return "EXEC_EXIT";
	case MSG_DOCKER_PING:
		return "DOCKER_PING";
	case MSG_DOCKER_CREATE:
		return "DOCKER_CREATE";
	case MSG_DOCKER_DESTROY:
		return "DOCKER_DESTROY";
	case MSG_DOCKER_STATE:
		return "DOCKER_STATE";
	case MSG_DOCKER_LIST:
		return "DOCKER_LIST";
	case MSG_DOCKER_EXEC:
		return "DOCKER_EXEC";
	case MSG_DOCKER_EXEC_CANCEL:
		return "DOCKER_EXEC_CANCEL";
	case MSG_DOCKER_PONG:
		return "DOCKER_PONG";
	case MSG_DOCKER_DONE:
		return "DOCKER_DONE";
	case MSG_DOCKER_STATE_RESULT:
		return "DOCKER_STATE_RESULT";
	case MSG_DOCKER_LIST_ITEM:
		return "DOCKER_LIST_ITEM";
	case MSG_DOCKER_LIST_END:
		return "DOCKER_LIST_END";
	case MSG_DOCKER_EXEC_STARTED:
		return "DOCKER_EXEC_STARTED";
	case MSG_DOCKER_EXEC_EXIT:
		return "DOCKER_EXEC_EXIT";
	case MSG_FILE_READ:
		return "FILE_READ";
	case MSG_FILE_LIST:
		return "FILE_LIST";
	case MSG_SNAPSHOT_CREATE:
		return "SNAPSHOT_CREATE";
	case MSG_SNAPSHOT_LIST:
		return "SNAPSHOT_LIST";
	case MSG_SNAPSHOT_GET:
		return "SNAPSHOT_GET";
	case MSG_SNAPSHOT_DELETE:
		return "SNAPSHOT_DELETE";
	case MSG_SANDBOX_ROLLBACK:
		return "SANDBOX_ROLLBACK";
	case MSG_SNAPSHOT_FORK:
		return "SNAPSHOT_FORK";
	case MSG_SNAPSHOT_WRITTEN:
		return "SNAPSHOT_WRITTEN";
	case MSG_TAR_CHECKED:
		return "TAR_CHECKED";
	case MSG_SNAPSHOT_RETRY:
		return "SNAPSHOT_RETRY";
	case MSG_FILE_WRITE_BEGIN:
		return "FILE_WRITE_BEGIN";
	case MSG_FILE_WRITE_COMMIT:
		return "FILE_WRITE_COMMIT";
	case MSG_FILE_WRITE_ABORT:
		return "FILE_WRITE_ABORT";
	case MSG_FILE_READ_STARTED:
		return "FILE_READ_STARTED";
	case MSG_FILE_WRITE_READY:
		return "FILE_WRITE_READY";
	case MSG_FILE_INFO:
		return "FILE_INFO";
	case MSG_FILE_LIST_STARTED:
		return "FILE_LIST_STARTED";
	case MSG_SNAPSHOT_SINK:
		return "SNAPSHOT_SINK";
	case MSG_SNAPSHOT_INFO:
		return "SNAPSHOT_INFO";
	case MSG_SNAPSHOT_LIST_END:
		return "SNAPSHOT_LIST_END";
	case MSG_TAR_CHECK:
		return "TAR_CHECK";
	case MSG_FILE_SPOOL:
		return "FILE_SPOOL";
	case MSG_DOCKER_ARCHIVE_GET:
		return "DOCKER_ARCHIVE_GET";
	case MSG_DOCKER_ARCHIVE_PUT:
		return "DOCKER_ARCHIVE_PUT";
	case MSG_DOCKER_ARCHIVE_HEAD:
		return "DOCKER_ARCHIVE_HEAD";
	case MSG_DOCKER_ARCHIVE_STAT:
		return "DOCKER_ARCHIVE_STAT";
	case MSG_PROCESS_START:
		return "PROCESS_START";
	case MSG_PROCESS_LIST:
		return "PROCESS_LIST";
	case MSG_PROCESS_GET:
		return "PROCESS_GET";
	case MSG_PROCESS_OUTPUT:
		return "PROCESS_OUTPUT";
	case MSG_PROCESS_STDIN:
		return "PROCESS_STDIN";
	case MSG_PROCESS_SIGNAL:
		return "PROCESS_SIGNAL";
	case MSG_PROCESS_DELETE:
		return "PROCESS_DELETE";
	case MSG_PROCESS_RESIZE:
		return "PROCESS_RESIZE";
	case MSG_CALLER:
		return "CALLER";
	case MSG_SANDBOX_PATCH:
		return "SANDBOX_PATCH";
	case MSG_SANDBOX_STATS:
		return "SANDBOX_STATS";
	case MSG_SANDBOX_STATS_RESULT:
		return "SANDBOX_STATS_RESULT";
	case MSG_DOCKER_STATS:
		return "DOCKER_STATS";
	case MSG_DOCKER_EVENTS_FOLLOW:
		return "DOCKER_EVENTS_FOLLOW";
	case MSG_DOCKER_UPDATE:
		return "DOCKER_UPDATE";
	case MSG_DOCKER_EVENTS_UP:
		return "DOCKER_EVENTS_UP";
	case MSG_DOCKER_EVENTS_DOWN:
		return "DOCKER_EVENTS_DOWN";
	case MSG_DOCKER_EVENT:
		return "DOCKER_EVENT";
	case MSG_DOCKER_STATS_RESULT:
		return "DOCKER_STATS_RESULT";
	case MSG_PROCESS_INFO:
		return "PROCESS_INFO";
	case MSG_PROCESS_LIST_END:
		return "PROCESS_LIST_END";
	case MSG_PROCESS_OUTPUT_STARTED:
		return "PROCESS_OUTPUT_STARTED";
	case MSG_DOCKER_PROCESS_START:
		return "DOCKER_PROCESS_START";
	case MSG_DOCKER_PROCESS_SIGNAL:
		return "DOCKER_PROCESS_SIGNAL";
	case MSG_DOCKER_PROCESS_RESIZE:
		return "DOCKER_PROCESS_RESIZE";
	case MSG_DOCKER_PROCESS_INSPECT:
		return "DOCKER_PROCESS_INSPECT";
	case MSG_DOCKER_ARCHIVE_PUT_GO:
		return "DOCKER_ARCHIVE_PUT_GO";
	case MSG_DOCKER_PROCESS_STARTED:
		return "DOCKER_PROCESS_STARTED";
	case MSG_DOCKER_PROCESS_STATE:
		return "DOCKER_PROCESS_STATE";
	case MSG_ARCHIVE_FD:
		return "ARCHIVE_FD";
	case MSG_ARCHIVE_JOB:
		return "ARCHIVE_JOB";
	case MSG_ARCHIVE_DONE:
		return "ARCHIVE_DONE";
	case MSG_NETNS_CONFIG:
		return "NETNS_CONFIG";
	case MSG_EGRESS_CONFIG:
		return "EGRESS_CONFIG";
	case MSG_NETWORK_GET:
		return "NETWORK_GET";
	case MSG_NETWORK_PUT:
		return "NETWORK_PUT";
	case MSG_NETWORK_LOG:
		return "NETWORK_LOG";
	case MSG_NETWORK_INFO:
		return "NETWORK_INFO";
	case MSG_NETWORK_LOG_TEXT:
		return "NETWORK_LOG_TEXT";
	case MSG_NETWORK_LOG_END:
		return "NETWORK_LOG_END";
	case MSG_NETNS_LISTEN:
		return "NETNS_LISTEN";
	case MSG_EGRESS_LISTEN:
		return "EGRESS_LISTEN";
	case MSG_EGRESS_POLICY:
		return "EGRESS_POLICY";
	case MSG_EGRESS_FORGET:
		return "EGRESS_FORGET";
	case MSG_EGRESS_LOG:
		return "EGRESS_LOG";
	case MSG_NETNS_SOCKET:
		return "NETNS_SOCKET";
	case MSG_EGRESS_DONE:
		return "EGRESS_DONE";
	case MSG_EGRESS_LOG_TEXT:
		return "EGRESS_LOG_TEXT";
	case MSG_EGRESS_LOG_END:
		return "EGRESS_LOG_END";
	case MSG_EGRESS_AUDIT:
		return "EGRESS_AUDIT";
	case MSG_METRICS_REQUEST:
		return "METRICS_REQUEST";
	case MSG_METRICS_TEXT:
		return "METRICS_TEXT";
	case MSG_METRICS_END:
		return "METRICS_END";
	case MSG_DOCKER_METRICS:
		return "DOCKER_METRICS";
	case MSG_DOCKER_METRICS_TEXT:
		return "DOCKER_METRICS_TEXT";
	case MSG_DOCKER_METRICS_END:
		return "DOCKER_METRICS_END";
	case MSG_ERROR:
		return "ERROR";
	default:
		return "UNKNOWN";
	}
}

void
msgw_init(struct msgw *w)
{
	w->len = 0;
	w->overflow = 0;
}

void
msgw_bytes(struct msgw *w, const void *data, size_t len)
{
	if (w->overflow || len > sizeof(w->buf) - w->len) {
		w->overflow = 1;
		return;
	}
	if (len > 0)
		memcpy(w->buf + w->len, data, len);
	w->len += len;
}

static void
msgw_le(struct msgw *w, uint64_t v, size_t width)
{
	unsigned char	 b[8];
	size_t		 i;

	for (i = 0; i < width; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	msgw_bytes(w, b, width);
}

void
msgw_u8(struct msgw *w, uint8_t v)
{
	msgw_le(w, v, 1);
}

void
msgw_u32(struct msgw *w, uint32_t v)
{
	msgw_le(w, v, 4);
}

void
msgw_u64(struct msgw *w, uint64_t v)
{
	msgw_le(w, v, 8);
}

void
msgw_i64(struct msgw *w, int64_t v)
{
	msgw_le(w, (uint64_t)v, 8);
}

void
msgw_double(struct msgw *w, double v)
{
	uint64_t	 bits;

	memcpy(&bits, &v, sizeof(bits));
	msgw_le(w, bits, 8);
}

void
msgw_str(struct msgw *w, const char *s)
{
	size_t	 len;

	if (s == NULL) {
		msgw_u32(w, MSGSTR_NULL);
		return;
	}
	len = strlen(s);
	if (len > MSG_MAX_STRING) {
		w->overflow = 1;
		return;
	}
	msgw_u32(w, (uint32_t)len);
	msgw_bytes(w, s, len);
}

void
msgw_clear(struct msgw *w)
{
	explicit_bzero(w->buf, w->len);
	w->len = 0;
}

void
msgr_init(struct msgr *r, const struct imsg *imsg)
{
	r->p = imsg->data;
	r->len = imsg->len;
	r->off = 0;
	r->error = 0;
}

static uint64_t
msgr_le(struct msgr *r, size_t width)
{
	uint64_t	 v = 0;
	size_t		 i;

	if (r->error || width > r->len - r->off) {
		r->error = 1;
		return 0;
	}
	for (i = 0; i < width; i++)
		v |= (uint64_t)r->p[r->off + i] << (8 * i);
	r->off += width;
	return v;
}

uint8_t
msgr_u8(struct msgr *r)
{
	return (uint8_t)msgr_le(r, 1);
}

uint32_t
msgr_u32(struct msgr *r)
{
	return (uint32_t)msgr_le(r, 4);
}

uint64_t
msgr_u64(struct msgr *r)
{
	return msgr_le(r, 8);
}

int64_t
msgr_i64(struct msgr *r)
{
	return (int64_t)msgr_le(r, 8);
}

double
msgr_double(struct msgr *r)
{
	uint64_t	 bits = msgr_le(r, 8);
	double		 v;

	memcpy(&v, &bits, sizeof(v));
	return v;
}

/* Strings longer than maxlen, or holding a NUL, are malformed. */
char *
msgr_str(struct msgr *r, size_t maxlen)
{
	uint32_t	 len;
	char		*s;

	len = msgr_u32(r);
	if (r->error || len == MSGSTR_NULL)
		return NULL;
	if (len > maxlen || len > r->len - r->off ||
	    memchr(r->p + r->off, '\0', len) != NULL) {
		r->error = 1;
		return NULL;
	}
	if ((s = malloc((size_t)len + 1)) == NULL) {
		r->error = 1;
		return NULL;
	}
	memcpy(s, r->p + r->off, len);
	s[len] = '\0';
	r->off += len;
	return s;
}

int
msgr_end(struct msgr *r)
{
	if (r->error || r->off != r->len) {
		errno = EBADMSG;
		return -1;
	}
	return 0;
}

enum error_kind
storage_error(int errnum, enum error_kind other)
{
	return errnum == ENOSPC || errnum == EDQUOT ?
	    ERR_INSUFFICIENT_STORAGE : descriptor_error(errnum, other);
}

enum error_kind
descriptor_error(int errnum, enum error_kind other)
{
	return errnum == EMFILE || errnum == ENFILE ? ERR_UNAVAILABLE : other;
}

int
msg_fd_may_be_lost(uint32_t type)
{
	switch (type) {
	case MSG_EXEC_START:
	case MSG_FILE_READ:
	case MSG_FILE_LIST:
	case MSG_SNAPSHOT_CREATE:
	case MSG_FILE_WRITE_READY:
	case MSG_SNAPSHOT_SINK:
	case MSG_SNAPSHOT_RETRY:
	case MSG_TAR_CHECK:
	case MSG_FILE_SPOOL:
	case MSG_DOCKER_EXEC:
	case MSG_DOCKER_ARCHIVE_GET:
	case MSG_DOCKER_ARCHIVE_PUT:
	case MSG_ARCHIVE_FD:
	case MSG_APID_WORKER_CHANNEL:
	case MSG_WORKER_APID_CHANNEL:
	case MSG_SPAWN_STARTED:
	case MSG_PROCESS_OUTPUT:
	case MSG_PROCESS_STDIN:
	case MSG_DOCKER_PROCESS_START:
	case MSG_NETNS_SOCKET:
	case MSG_EGRESS_LISTEN:
		return 1;
	default:
		return 0;
	}
}
