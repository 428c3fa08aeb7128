/*
 * The egress proxy's view of one request head from a sandbox (issue 15):
 * CONNECT host:port, or an absolute-form http:// request to forward.
 * Pure (no sockets, no event loop): bytes in as they arrive, a verdict
 * out, so that it can be tested and fuzzed alone.  The client is a
 * hostile sandbox: everything it sends is bounded and checked.
 */
#ifndef AS_EGRESS_REQUEST_H
#define AS_EGRESS_REQUEST_H

#include <sys/socket.h>

#include <stddef.h>
#include <stdint.h>

#include "egress_policy.h"

/*
 * A head, from the request line to its blank line included, is at most
 * EGRESS_HEAD_MAX bytes, and holds at most EGRESS_FIELDS_MAX field lines.
 * Past either the request is refused with 431 as soon as the byte that
 * crosses the bound arrives, without waiting for the rest.
 */
#define EGRESS_HEAD_MAX		(16 * 1024)
#define EGRESS_FIELDS_MAX	100
/* What the upstream head may hold beyond the client's: Host, Connection. */
#define EGRESS_UPSTREAM_EXTRA	(EGRESS_NAME_MAX + 64)

enum egress_request_kind {
	EGRESS_REQUEST_CONNECT = 1,	/* a tunnel to host:port */
	EGRESS_REQUEST_FORWARD = 2,	/* upstream, the head to send */
};

enum egress_host_kind {
	EGRESS_HOST_NAME = 1,		/* to resolve */
	EGRESS_HOST_IPV4 = 2,		/* a literal: addr, not resolved */
	EGRESS_HOST_IPV6 = 3,
};

/* How a forwarded request's body is framed after its head. */
enum egress_body {
	EGRESS_BODY_NONE = 0,
	EGRESS_BODY_LENGTH = 1,		/* content_length bytes */
	EGRESS_BODY_CHUNKED = 2,	/* relayed as is, to its last chunk */
};

struct egress_field {
	size_t		 line_off, line_len;	/* the line, without CRLF */
	size_t		 name_len;		/* name at line_off */
	size_t		 value_off, value_len;	/* without OWS */
};

struct egress_request {
	/* the head as it came */
	char			*head;
	size_t			 len, size;
	size_t			 line_start;	/* where the current line is */
	size_t			 nlines;
	int			 state;		/* 0 reading, 1 done, -1 no */
	/* http-parser's findings */
	size_t			 target_off, target_len;
	struct egress_field	 fields[EGRESS_FIELDS_MAX];
	size_t			 nfields;
	int			 method;	/* enum http_method */
	int			 minor;		/* HTTP/1.minor */
	int			 parsed;	/* http-parser saw its end */
	/* the verdict */
	enum egress_request_kind kind;
	enum egress_host_kind	 host_kind;
	/* lowercase, no trailing dot; an IPv6 literal without brackets */
	char			 host[EGRESS_NAME_MAX + 1];
	unsigned int		 port;			/* 1-65535 */
	struct sockaddr_storage	 addr;	/* a literal's address and port */
	char			*upstream;	/* FORWARD: a NUL-ended head */
	size_t			 upstream_len;
	enum egress_body	 body;
	uint64_t		 content_length;
	int			 status;	/* refused: 400 431 500 501 505 */
	const char		*reason;	/* refused: static, printable */
};

void	egress_request_init(struct egress_request *);
/*
 * Feed the next len bytes from the client.  0: the head is not complete,
 * every byte was taken.  1: it is complete and accepted, *used bytes of
 * this piece were its last; the rest (a body, or tunnel bytes a client
 * sent before the 200) is the caller's.  -1: refused, with r->status and
 * r->reason (and errno ENOMEM, status 500, if memory ran out); *used is
 * then meaningless and the connection is to be closed after the answer.
 * Once it has returned 1 or -1 it returns the same, taking nothing.
 */
int	egress_request_feed(struct egress_request *, const void *, size_t len,
	    size_t *used);
void	egress_request_free(struct egress_request *);

#endif /* AS_EGRESS_REQUEST_H */
