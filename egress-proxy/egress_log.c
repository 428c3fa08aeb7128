/*
 * A sandbox's recent egress connections (egress_log.h).  Ids are given
 * in order, so the ring holds exactly the ids next_id - count to
 * next_id - 1 and a record is found by arithmetic: an update of a
 * dropped one finds nothing, without a search.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "egress_log.h"
#include "utf8.h"

int
egress_log_init(struct egress_log *log, size_t capacity)
{
	memset(log, 0, sizeof(*log));
	if (capacity == 0 || capacity > EGRESS_LOG_MAX) {
		errno = EINVAL;
		return -1;
	}
	if ((log->ring = calloc(capacity, sizeof(*log->ring))) == NULL)
		return -1;
	log->capacity = capacity;
	log->next_id = 1;
	return 0;
}

void
egress_log_free(struct egress_log *log)
{
	free(log->ring);
	memset(log, 0, sizeof(*log));
}

/* A bounded copy of a text that may hold anything: cut at NUL or size. */
static void
text_copy(char *dst, size_t size, const char *src, size_t len)
{
	const char	*nul;

	if (src == NULL)
		len = 0;
	else if ((nul = memchr(src, '\0', len)) != NULL)
		len = (size_t)(nul - src);
	if (len > size - 1)
		len = size - 1;
	if (len > 0)
		memcpy(dst, src, len);
	dst[len] = '\0';
}

static struct egress_log_entry *
slot_of(const struct egress_log *log, size_t i)
{
	return &log->ring[(log->first + i) % log->capacity];
}

uint64_t
egress_log_add(struct egress_log *log, const struct timespec *when,
    const char *host, size_t hostlen, unsigned int port,
    const char *address, int allowed, const char *reason)
{
	struct egress_log_entry	*e;

	if (log->count == log->capacity) {
		log->first = (log->first + 1) % log->capacity;
		log->count--;
		log->dropped++;
	}
	e = slot_of(log, log->count++);
	memset(e, 0, sizeof(*e));
	e->id = log->next_id++;
	e->time = *when;
	text_copy(e->host, sizeof(e->host), host, hostlen);
	e->port = port;
	text_copy(e->address, sizeof(e->address), address,
	    address != NULL ? strlen(address) : 0);
	e->allowed = allowed != 0;
	text_copy(e->reason, sizeof(e->reason), reason,
	    reason != NULL ? strlen(reason) : 0);
	return e->id;
}

static struct egress_log_entry *
entry_of(const struct egress_log *log, uint64_t id)
{
	uint64_t	 oldest = log->next_id - log->count;

	if (id < oldest || id >= log->next_id)
		return NULL;
	return slot_of(log, (size_t)(id - oldest));
}

const struct egress_log_entry *
egress_log_find(const struct egress_log *log, uint64_t id)
{
	return entry_of(log, id);
}

int
egress_log_update(struct egress_log *log, uint64_t id, uint64_t sent,
    uint64_t received)
{
	struct egress_log_entry	*e;

	if ((e = entry_of(log, id)) == NULL) {
		errno = ENOENT;
		return -1;
	}
	e->bytes_sent = sent;
	e->bytes_received = received;
	return 0;
}

/* RFC 3339, UTC, milliseconds: 2026-12-02T14:14:04.123Z. */
static void
time_format(const struct timespec *ts, char *buf, size_t len)
{
	struct tm	 tm;
	time_t		 t = ts->tv_sec;
	char		 stamp[32];

	if (gmtime_r(&t, &tm) == NULL ||
	    strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm) == 0)
		strlcpy(stamp, "1970-01-01T00:00:00", sizeof(stamp));
	snprintf(buf, len, "%s.%03ldZ", stamp,
	    ts->tv_nsec >= 0 && ts->tv_nsec < 1000000000 ?
	    ts->tv_nsec / 1000000 : 0L);
}

/* A string of what a client may have sent: repaired to UTF-8. */
static int
add_text(json_object *o, const char *key, const char *s, int empty_null)
{
	json_object	*v;
	char		*fixed;
	size_t		 len;

	if (empty_null && s[0] == '\0')
		return json_object_object_add(o, key, NULL);
	if ((fixed = utf8_repair(s, strlen(s), &len)) == NULL)
		return -1;
	v = json_object_new_string_len(fixed, (int)len);
	free(fixed);
	if (v == NULL || json_object_object_add(o, key, v) != 0) {
		json_object_put(v);
		return -1;
	}
	return 0;
}

static int
add_number(json_object *o, const char *key, uint64_t n)
{
	json_object	*v;

	v = json_object_new_int64(n > INT64_MAX ? INT64_MAX : (int64_t)n);
	if (v == NULL || json_object_object_add(o, key, v) != 0) {
		json_object_put(v);
		return -1;
	}
	return 0;
}

static int
add_bool(json_object *o, const char *key, int b)
{
	json_object	*v;

	if ((v = json_object_new_boolean(b)) == NULL ||
	    json_object_object_add(o, key, v) != 0) {
		json_object_put(v);
		return -1;
	}
	return 0;
}

/* address and reason are null when empty: no address, no refusal. */
static json_object *
entry_to_json(const struct egress_log_entry *e)
{
	json_object	*o;
	char		 when[48];

	if ((o = json_object_new_object()) == NULL)
		return NULL;
	time_format(&e->time, when, sizeof(when));
	if (add_text(o, "time", when, 0) == -1 ||
	    add_text(o, "host", e->host, 0) == -1 ||
	    add_number(o, "port", e->port) == -1 ||
	    add_text(o, "address", e->address, 1) == -1 ||
	    add_bool(o, "allowed", e->allowed) == -1 ||
	    add_text(o, "reason", e->allowed ? "" : e->reason, 1) == -1 ||
	    add_number(o, "bytes_sent", e->bytes_sent) == -1 ||
	    add_number(o, "bytes_received", e->bytes_received) == -1) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

json_object *
egress_log_to_json(const struct egress_log *log)
{
	json_object	*o, *entries, *e;
	size_t		 i;

	if ((o = json_object_new_object()) == NULL)
		return NULL;
	if ((entries = json_object_new_array()) == NULL ||
	    json_object_object_add(o, "entries", entries) != 0) {
		json_object_put(entries);
		goto fail;
	}
	for (i = 0; i < log->count; i++) {
		if ((e = entry_to_json(slot_of(log, i))) == NULL)
			goto fail;
		if (json_object_array_add(entries, e) != 0) {
			json_object_put(e);
			goto fail;
		}
	}
	if (add_number(o, "dropped", log->dropped) == -1)
		goto fail;
	return o;
 fail:
	json_object_put(o);
	return NULL;
}
