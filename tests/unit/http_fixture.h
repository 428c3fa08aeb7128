/*
 * The HTTP layer under test: apid's server (apid/http_*.c) on one end of
 * a socketpair, the test as the client on the other, one event loop
 * driven by the test.  Also detached requests made from a raw head, for
 * route tests with stand-ins for the replies.
 */
#ifndef AS_TEST_HTTP_FIXTURE_H
#define AS_TEST_HTTP_FIXTURE_H

#include <stddef.h>

#include "apid.h"

struct http_fixture {
	struct event_base	*base;
	struct http_server	 srv;
	int			 client;	/* the test's end */
	char			*in;		/* read, not yet parsed */
	size_t			 inlen;
	int			 eof;		/* the server closed */
};

struct http_response {
	int		 status;
	char		 fields[8192];	/* "name: value\n" lines, lower case */
	char		*body;		/* NUL-ended */
	size_t		 body_len;
	int		 chunked;
	int		 keep_alive;	/* as http-parser reads it */
};

/* Short timeouts (tenths of a second) unless settings says otherwise. */
void	 fixture_init(struct http_fixture *, http_request_cb,
	    const struct http_settings *);
void	 fixture_free(struct http_fixture *);
/* Another client on the same server; its end is returned. */
int	 fixture_connect(struct http_fixture *);
void	 fixture_send(struct http_fixture *, const void *, size_t);
void	 fixture_send_str(struct http_fixture *, const char *);
/* Run the loop for at most ms milliseconds (or until idle, ms = 0). */
void	 fixture_run(struct http_fixture *, int ms);
/*
 * Run the loop until one whole response has come (0), the server closed
 * first (-1) or ms passed (-2).  A 100 Continue is a response too.  r
 * must start zeroed; each call frees what the last one left in it.
 */
int	 fixture_response(struct http_fixture *, struct http_response *,
	    int ms);
void	 response_free(struct http_response *);
/* A field of a response ("" if absent); names in lower case. */
const char *response_field(const struct http_response *, const char *);
/* 1 once the server has closed its end (within ms), else 0. */
int	 fixture_closed(struct http_fixture *, int ms);

/* A route's answer: text as a text/plain body with that status. */
void	 fixture_reply_text(struct http_request *, int status, const char *);

/*
 * A request without a connection (its replies only free it), from a raw
 * head (CRLF line ends added) and a body.  Dies on a head that fails.
 */
struct http_request *fixture_request(const char *head, const char *body);
#endif /* AS_TEST_HTTP_FIXTURE_H */
