/*
 * Who made a request: MSG_CALLER's payload (msg.h), which apid sends
 * immediately before every message that opens a request.  managerd keeps
 * it with the request (apid_request_caller()) for the tenant checks and
 * the audit log.  No secret travels here: a key's name, never the key.
 */
#ifndef AS_CALLER_H
#define AS_CALLER_H

#include "msg.h"

/* Bounds the decoder enforces (and the keys file, for names). */
#define CALLER_MAX_NAME		128	/* bytes of a key's name */
#define CALLER_MAX_TENANT	128	/* bytes of a tenant */
#define CALLER_MAX_ADDR		64	/* "[v6 address]:port", and more */
#define CALLER_MAX_ROUTE	128	/* "POST /v1/sandboxes/{id}/exec" */

struct caller {
	char	*key_name;	/* "" without one (no auth) */
	char	*tenant;	/* "": the tenant of the flat keys */
	int	 admin;		/* sees every tenant's */
	char	*client_addr;	/* "ip:port", "[ip6]:port", or "" */
	char	*route;		/* method and route template */
};

/*
 * Layout: str key_name, str tenant, u8 admin, str client_addr, str route;
 * no string NULL, each within its bound; exact length.
 */
void	msg_put_caller(struct msgw *, const struct caller *);
int	msg_get_caller(const struct imsg *, struct caller *);
/* A copy whose strings are its own (NULLs become ""); -1 ENOMEM. */
int	caller_copy(struct caller *dst, const struct caller *src);
void	caller_free(struct caller *);

#endif /* AS_CALLER_H */
