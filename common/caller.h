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
#define CALLER_NAME_MAX		64	/* a key's name, a tenant */
#define CALLER_MAX_NAME		CALLER_NAME_MAX
#define CALLER_MAX_TENANT	CALLER_NAME_MAX
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
 * A keys file's name or tenant: 1-64 of [A-Za-z0-9._-], not "." or "-"
 * first, and not a flat key's name; 1 if so.
 */
int	caller_name_valid(const char *);
/* 1 for a flat key's name: "key-" and digits. */
int	caller_flat_key(const char *);

/*
 * Layout: str key_name, str tenant, u8 admin, str client_addr, str route;
 * no string NULL, each within its bound; exact length.  The name is "",
 * a flat key's or valid, the tenant "" or valid, the address and route
 * printable ASCII: what a record or a log line can hold as it is.
 */
void	msg_put_caller(struct msgw *, const struct caller *);
int	msg_get_caller(const struct imsg *, struct caller *);
/* A copy whose strings are its own (NULLs become ""); -1 ENOMEM. */
int	caller_copy(struct caller *dst, const struct caller *src);
void	caller_free(struct caller *);

#endif /* AS_CALLER_H */
