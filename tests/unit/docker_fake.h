/*
 * A fake Docker for the docker_http tests: it listens on a unix socket in
 * a temporary directory (or on loopback TCP, as a socket proxy would), records what the client sent and answers with a
 * canned response (whole, dribbled, early, or never); and what a request
 * ended with, recorded by the callbacks the tests hand to docker_http.
 */
#ifndef AS_TEST_DOCKER_FAKE_H
#define AS_TEST_DOCKER_FAKE_H

#include <sys/time.h>

#include <stddef.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "docker_http.h"

#define RAW_STREAM	"\001\000\000\000\000\000\000\005hello\002\000\000" \
			"\000\000\000\000\003err"
#define DOCKER_404	"{\"message\":\"No such container: abc\"}\n"

extern const char	 ping_response[];

struct fake {
	struct event_base	*base;
	struct evconnlistener	*listener;
	char			 dir[64];
	char			 path[108];
	const char		*response;
	size_t			 response_len;
	size_t			 dribble;	/* bytes per tick, 0: at once */
	int			 hold;		/* never answer */
	int			 close_early;	/* close once the head is in */
	int			 answer_early;	/* answer once the head is in */
	int			 keep_open;	/* stay open after answering */
	const char		*after_eof;	/* sent on a half-close */
	int			 got_eof;	/* the client half-closed */
	struct bufferevent	*conn;
	struct evbuffer		*request;	/* what the client sent */
	struct event		*tick;
	size_t			 sent;
	int			 answered;
	int			 accepted;
};

struct result {
	struct event_base	*base;
	struct docker_request	*req;
	int			 calls;
	enum docker_http_error	 error;
	int			 status;
	char			*content_type;
	char			*path_stat;
	int			 body_null;
	struct evbuffer		*body;
	int			 sys_errno;
	/* Streaming. */
	struct evbuffer		*streamed;
	int			 body_calls;
	int			 pause_each;
	int			 paused;
	int			 calls_while_paused;
	int			 cancel_at;
	int			 abort_at;
	struct timeval		 resume_after;
	struct event		*resume;
	/* Uploads. */
	const unsigned char	*upload;
	size_t			 upload_len;
	size_t			 upload_sent;
	size_t			 upload_piece;
	int			 upload_ended;
	int			 upload_errno;
	int			 drains;
	size_t			 max_pending;
};

long	 dechunk(const char *, size_t, struct evbuffer *);
void	 fake_start(struct fake *, struct event_base *, const char *response,
	    size_t response_len);
/* The same on loopback TCP (AF_INET or AF_INET6); path is the endpoint. */
void	 fake_start_tcp(struct fake *, struct event_base *, int family,
	    const char *response, size_t response_len);
void	 fake_stop(struct fake *);
int	 fake_request_is(struct fake *, const char *want, size_t len);

void	 result_init(struct result *, struct event_base *);
void	 result_free(struct result *);
void	 done_cb(struct docker_request *, enum docker_http_error,
	    const struct docker_response *, void *arg);
void	 resume_cb(evutil_socket_t, short, void *arg);
int	 body_cb(struct docker_request *, const unsigned char *, size_t,
	    void *arg);
char	*dup_or_null(const char *);

void	 run_loop(struct event_base *);
void	 run_for(struct event_base *, long usec);
int	 setup_base(void **state);
int	 teardown_base(void **state);

#endif
