/*
 * The audit log (audit.c): one JSON line per request that changes state
 * or runs a command, written when the request ends.
 */
#ifndef AS_AUDIT_H
#define AS_AUDIT_H

#include <stddef.h>
#include <stdint.h>

#include "caller.h"
#include "config.h"
#include "imsg.h"

/* What a line says; NULL strings are left out of it. */
struct audit_record {
	double		 time;		/* the request's arrival, epoch */
	double		 duration;	/* seconds, to its last reply */
	const char	*key;		/* the API key's name, never the key */
	const char	*tenant;
	const char	*client;	/* address */
	const char	*route;		/* "POST /v1/sandboxes/{sandbox_id}/exec" */
	const char	*sandbox_id;
	const char	*snapshot_id;
	const char	*process_id;
	int		 status;	/* HTTP; 0: ended without an answer */
	const char	*error;		/* the error code; NULL: success */
	int		 client_gone;	/* apid died before the answer */
	const struct audit_egress *egress;	/* a sandbox's connection */
};

/* One connection of a policy sandbox's (egress-proxy's EGRESS_AUDIT). */
struct audit_egress {
	const char	*host;		/* as the client gave it */
	unsigned int	 port;
	const char	*address;	/* "" if none was reached */
	int		 allowed;
	const char	*reason;	/* "" when allowed */
	uint64_t	 bytes_sent;
	uint64_t	 bytes_received;
};

/*
 * The line for r, '\n' included, as valid JSON whatever bytes the
 * strings hold (invalid UTF-8 becomes U+FFFD); malloc'd, length in *len.
 */
char	*audit_format(const struct audit_record *, size_t *len);

/*
 * Open the destination the setting names: the file in the data
 * directory, or the syslog socket.  Before the chroot.
 */
void	 audit_open(const struct config *, int datadir_fd);
/* SIGHUP: the file again by its name (after logrotate renamed it). */
void	 audit_reopen(void);
void	 audit_write(const struct audit_record *);
/* Lines that could not be written since start-up. */
uint64_t audit_lost(void);
/* A line that could not even be made (no memory): lost and counted. */
void		 audit_lose(const char *why);

/*
 * The pending part of one audited request (audit_request.c), kept by
 * apid_request.c with the request.  audit_begin: NULL if a request of
 * that type is not audited (it changes nothing).
 */
struct audit_pending;
struct audit_pending *audit_begin(const struct imsg *request);
/*
 * 1 if a request of that type is audited or listed as changing nothing:
 * a new request type must be one or the other (test_audit_kinds.c).
 */
int	 audit_decided(uint32_t type);
/*
 * Its last reply: type and payload (a msgw's bytes); caller: who asked
 * (MSG_CALLER, kept with the request by apid_request.c).
 */
void	 audit_end(struct audit_pending *, const struct caller *,
	    uint32_t reply_type, const void *payload, size_t len,
	    int client_gone);
/* Ended without a reply (an upload whose body never came). */
void	 audit_end_unanswered(struct audit_pending *, const struct caller *);

#endif /* AS_AUDIT_H */
