/*
 * A stand-in for managerd behind apid's routes: apid_request_send() and
 * apid_request_release() (http.c) record each request, and the test
 * answers it as managerd would, through the route's reply callback and
 * the dispatcher's bookkeeping (apid_dispatch_parent's).  For route
 * tests that run apid's real HTTP layer (http_fixture.h).
 */
#ifndef AS_TEST_APID_STANDIN_H
#define AS_TEST_APID_STANDIN_H

#include "apid.h"

#define STANDIN_CALLS	8

struct standin_call {
	int			 open;		/* no last reply yet */
	uint32_t		 type;
	struct msgw		 w;		/* what apid sent */
	int			 fd;		/* its descriptor, or -1 */
	struct apid_request	 ar;
};

extern struct standin_call	 standin_calls[STANDIN_CALLS];
extern int			 standin_fail;	/* the next send fails */

void	standin_reset(void);
/* The newest open call of type, or NULL. */
struct standin_call *standin_find(uint32_t type);
/* How many calls were made since the reset. */
int	standin_count(void);
/* What apid sent, as managerd would read it. */
struct imsg standin_imsg(struct standin_call *);
/* Answer the call (w may be NULL, fd -1); what the route returned. */
int	standin_reply(struct standin_call *, uint32_t type, struct msgw *,
	    int fd);
int	standin_reply_error(struct standin_call *, enum error_kind,
	    const char *);
/* The descriptor apid sent with the call, now the test's. */
int	standin_take_fd(struct standin_call *);

/*
 * The test's router, in place of http.c's: patterns as there ("*" is a
 * parameter), the body read whole first (at most BODY_MAX_JSON, else a
 * 413), no API keys.  One request is routed at a time.
 */
struct standin_route {
	const char	*method;
	const char	*pattern;
	void		(*handler)(struct http_request *, char **params);
};
void	standin_route(struct http_request *, const struct standin_route *,
	    size_t n);
/* The same for routes that read their own body (ROUTE_BODY_STREAM). */
void	standin_route_stream(struct http_request *,
	    const struct standin_route *, size_t n);

/*
 * n attach tokens for SB's PROC, each from a caller of its own tenant
 * ("fill-0", "fill-1"...): the table fills without any one tenant
 * reaching ATTACH_TOKENS_TENANT.
 */
void	standin_fill_tokens(const char *sandbox_id, const char *process_id,
	    size_t n);

#endif /* AS_TEST_APID_STANDIN_H */
