/*
 * The egress proxy's recent connections of one sandbox (issue 15), for
 * GET /v1/sandboxes/{id}/network/log: a ring of a fixed capacity, the
 * oldest record dropped (and counted) for a new one.  Pure: no I/O.
 */
#ifndef AS_EGRESS_LOG_H
#define AS_EGRESS_LOG_H

#include <arpa/inet.h>

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <json-c/json.h>

#include "egress_policy.h"


struct egress_log_entry {
	uint64_t	 id;
	struct timespec	 time;		/* CLOCK_REALTIME, when it was asked */
	/* as the client gave it, bounded: any bytes but NUL */
	char		 host[EGRESS_NAME_MAX + 1];
	unsigned int	 port;
	char		 address[INET6_ADDRSTRLEN];	/* "" if none */
	int		 allowed;
	char		 reason[EGRESS_WHY_MAX];	/* "" when allowed */
	uint64_t	 bytes_sent;		/* the client's, upstream */
	uint64_t	 bytes_received;	/* upstream's, to the client */
};

/*
 * The records are allocated at init, so that logging a connection never
 * fails: a refusal must not depend on memory for its bookkeeping.
 */
struct egress_log {
	struct egress_log_entry	*ring;
	size_t			 capacity;
	size_t			 first;		/* the oldest's slot */
	size_t			 count;
	uint64_t		 next_id;	/* ids start at 1 */
	uint64_t		 dropped;
};

/* 0, or -1 with errno EINVAL (capacity 0 or past the max) or ENOMEM. */
int	egress_log_init(struct egress_log *, size_t capacity);
void	egress_log_free(struct egress_log *);
/*
 * Record a connection (the oldest dropped if the ring is full) and
 * return its id, never 0.  host is hostlen bytes, cut at
 * EGRESS_NAME_MAX and at a NUL; address and reason may be NULL.
 */
uint64_t egress_log_add(struct egress_log *, const struct timespec *,
	    const char *host, size_t hostlen, unsigned int port,
	    const char *address, int allowed, const char *reason);
/*
 * The byte counts of a connection that ended: 0, or -1 (errno ENOENT)
 * if its record was dropped meanwhile (or never was), changing nothing.
 */
int	egress_log_update(struct egress_log *, uint64_t id, uint64_t sent,
	    uint64_t received);
/* The record of id, or NULL if dropped or unknown. */
const struct egress_log_entry *egress_log_find(const struct egress_log *,
	    uint64_t id);
/*
 * {"entries": [...], "dropped": n}, oldest first; texts are valid UTF-8
 * whatever a client sent (ill-formed bytes become U+FFFD).  NULL ENOMEM.
 */
json_object *egress_log_to_json(const struct egress_log *);

#endif /* AS_EGRESS_LOG_H */
