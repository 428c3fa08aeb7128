/*
 * What the files of the REST client (rest.c, rest_url.c, rest_http.c,
 * rest_process.c, rest_ws.c) share: the connection and request-body
 * state and the functions each calls in another.
 */
#ifndef AS_CLIENT_REST_INTERNAL_H
#define AS_CLIENT_REST_INTERNAL_H

#include <sys/types.h>

#include <stdint.h>

#include "rest.h"

struct addrinfo;

#define REST_BUF	(64 * 1024)		/* the head, and each piece */

enum framing {
	BODY_NONE,	/* 1xx, 204, 304 */
	BODY_LENGTH,	/* Content-Length */
	BODY_CHUNKED,
	BODY_CLOSE	/* until the server closes */
};

struct conn {
	int		 fd;
	int		 timeout;
	const char	*host;
	const char	*port;
	size_t		 off;		/* first unread byte of buf */
	size_t		 len;		/* bytes in buf */
	int		 send_errno;	/* why the request could not be sent */
	int		 status;
	char		 reason[64];
	enum framing	 framing;
	uint64_t	 left;		/* of the body or of this chunk */
	int64_t		 total;		/* Content-Length, or -1 */
	int		 chunk_crlf;	/* a chunk's CRLF is still to come */
	int		 done;		/* the body has been read */
	/*
	 * A WebSocket handshake: its header lines (CRLF-terminated), sent
	 * with "Connection: Upgrade" instead of "close", and a look at
	 * each header of the answer, which is otherwise parsed and lost.
	 */
	const char	*upgrade;
	void		(*on_header)(const char *, const char *, void *);
	void		*header_arg;
	unsigned char	 buf[REST_BUF];
};

/* A request body: in memory, or len bytes read from fd. */
struct body {
	const char		*ctype;
	const unsigned char	*mem;
	int			 fd;
	uint64_t		 len;
	rest_progress_cb	 cb;
	void			*arg;
};

/* An NDJSON line being read. */
struct ndjson {
	char	*buf;
	size_t	 have;
	size_t	 cap;
};

/* rest.c */
void	seterr(struct rest_error *, int, const char *, const char *, ...);
void	clearerr_rest(struct rest_error *);
int	response_error(struct conn *, struct rest_error *);
int	request_2xx(struct rest_client *, struct conn *, const char *,
	    const char *, const struct body *, struct rest_error *);
int	body_call(struct rest_client *, const char *, const char *,
	    const struct body *, json_object **, struct rest_error *);
/*
 * Reads one piece of the body and hands each line it completes to
 * line() (as rest_ndjson does): 0 to go on, 1 at the end of the body
 * or once line() stopped, -1 with err.
 */
int	ndjson_step(struct conn *, struct ndjson *,
	    int (*)(json_object *, void *), void *, struct rest_error *);

/* rest_url.c */
int	wirechars(const char *);
void	resolve_error(const struct rest_client *, int, int,
	    struct rest_error *);
int	rest_lookup(const struct rest_client *, struct addrinfo **, int *);

/* rest_http.c */
void	too_large(struct rest_error *, uint64_t);
ssize_t	body_read(struct conn *, const unsigned char **, size_t,
	    struct rest_error *);
int	body_to_mem(struct conn *, uint64_t, unsigned char **, size_t *,
	    struct rest_error *);
int	io_again(int, short);
int	rest_request(struct rest_client *, struct conn *, const char *,
	    const char *, const struct body *, struct rest_error *);
/* rest_request on a connection already open (c->fd). */
int	rest_exchange(struct rest_client *, struct conn *, const char *,
	    const char *, const struct body *, struct rest_error *);
/* Connects c to the server, with rc's timeout for every wait. */
int	conn_open(struct rest_client *, struct conn *, struct rest_error *);
struct conn	*conn_new(struct rest_error *);
void	conn_free(struct conn *);

/* rest_ws.c: the handshake on c's open connection, as rest_websocket. */
int	ws_upgrade(struct rest_client *, struct conn *, const char *,
	    struct rest_ws *, struct rest_error *);

#endif /* AS_CLIENT_REST_INTERNAL_H */
