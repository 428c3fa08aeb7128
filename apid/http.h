/*
 * apid's HTTP/1.1 server: connections on bufferevents, requests, replies
 * and routing.  Part of apid's internal interface (apid.h includes it);
 * a header of its own because the fuzz harnesses and unit tests build
 * the HTTP layer without the rest of apid.
 */
#ifndef AS_APID_HTTP_H
#define AS_APID_HTTP_H

#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <time.h>

#include <stddef.h>
#include <stdint.h>

#include <http_parser.h>

#include "caller.h"

struct bufferevent;
struct event;
struct event_base;
struct evbuffer;

/* http_parse.c: heads and bodies (RFC 9112), pure. */
#define HTTP_HEAD_MAX		(64 * 1024)	/* request line + fields */
#define HTTP_FIELDS_MAX		100
#define HTTP_TARGET_MAX		(16 * 1024)
/* A chunked body's framing beyond its data: this plus the data's size. */
#define HTTP_CHUNK_OVERHEAD_MAX	(64 * 1024)

struct http_field {
	const char	*name;		/* NUL-ended, in the head's buffer */
	const char	*value;		/* without the surrounding blanks */
	size_t		 name_off, name_len;
	size_t		 value_off, value_len;
};

typedef void	(*http_body_cb)(void *arg, const char *, size_t);

/* Where a chunked body's decoder is (http_parse.c). */
enum http_chunk_state {
	CHUNK_SIZE = 0,		/* hex digits */
	CHUNK_EXT,		/* ";name=value" up to CR */
	CHUNK_SIZE_LF,
	CHUNK_DATA,		/* left bytes of data */
	CHUNK_DATA_CR,
	CHUNK_DATA_LF,
	CHUNK_TRAILER,		/* trailer lines, up to an empty one */
	CHUNK_TRAILER_LF
};

struct http_chunker {
	enum http_chunk_state	 state;
	uint64_t		 left;
	int			 digits;
	size_t			 line;
};

struct http_head {
	http_parser		 parser;
	char			*raw;		/* the head, split in place */
	size_t			 rawlen;
	const char		*method;	/* "GET" ... */
	const char		*target;	/* request-target, as sent */
	size_t			 target_off, target_len;
	int			 major, minor;
	struct http_field	 fields[HTTP_FIELDS_MAX];
	size_t			 nfields;
	int			 complete;	/* the parser saw the end */
	int			 chunked;
	int			 has_length;
	uint64_t		 length;	/* Content-Length */
	int			 keep_alive;	/* as the request asks */
	int			 expect_continue;
	int			 upgrade;
	/* http_body_feed() */
	struct http_chunker	 chunker;
	uint64_t		 trailer_bytes;
	int			 body_done;
	uint64_t		 body_bytes;	/* decoded */
	uint64_t		 framing_bytes;	/* chunk sizes, ends, trailers */
	http_body_cb		 body_cb;
	void			*body_arg;
	/* a refused head */
	int			 status;
	const char		*error;
};

int	 http_head_parse(struct http_head *, char *raw, size_t len);
void	 http_head_free(struct http_head *);
const char *http_head_field(const struct http_head *, const char *name);
ssize_t	 http_body_feed(struct http_head *, const char *, size_t,
	    http_body_cb, void *);

/* http_server.c: the listener, the connection cap and the timeouts. */
struct http_request;
struct http_conn;
typedef void	(*http_request_cb)(struct http_request *);

struct http_settings {
	struct timeval	 head_timeout;	/* a whole head, from its first byte */
	struct timeval	 body_timeout;	/* between two reads of a body */
	struct timeval	 idle_timeout;	/* a kept-alive connection, unused */
	struct timeval	 send_timeout;	/* a reply that does not move */
	size_t		 max_connections;
};

struct http_server {
	struct event_base	*base;
	struct http_settings	 settings;
	http_request_cb		 request_cb;
	/* Optional: told of each request as it is freed (the metrics). */
	http_request_cb		 request_done;
	int			 listener;
	struct event		*accept_ev;
	struct event		*accept_resume;
	TAILQ_HEAD(, http_conn)	 conns;		/* every connection */
	TAILQ_HEAD(, http_conn)	 idle;		/* sheddable, oldest first */
	size_t			 nconns;
	size_t			 taken;		/* sockets routes took, open */
	uint64_t		 shed;		/* connections shed, for logs */
	int			 reserve;	/* closed to answer 503 */
	int			 refusing;	/* a client so answered */
	struct event		*refuse_ev;	/* its request is in */
	uint64_t		 refused;	/* answered so, for logs */
	char			 unavailable[256];	/* that answer */
	size_t			 unavailable_len;
};

void	 http_settings_default(struct http_settings *);
int	 http_server_init(struct http_server *, struct event_base *,
	    const struct http_settings *, http_request_cb);
/* Takes the listening socket (non-blocking) and starts accepting. */
int	 http_server_listen(struct http_server *, int fd);
/* Adopt an accepted socket (tests, fuzzing): 0 or -1. */
int	 http_server_adopt(struct http_server *, int fd);
/* The same with the client's address (accept's), NULL for none. */
struct sockaddr;
int	 http_server_adopt_from(struct http_server *, int fd,
	    const struct sockaddr *, socklen_t);
void	 http_server_close(struct http_server *);

/* http_conn.c: a connection, as OpenBSD httpd's struct client. */
enum http_conn_state {
	CONN_WAITING,		/* no byte of the next head yet */
	CONN_HEAD,		/* part of a head came */
	CONN_ACTIVE,		/* a request is being served */
	CONN_CLOSING,		/* the last reply is going out */
	CONN_LINGER,		/* half-closed, reading what still comes */
	CONN_TAKEN		/* a route took the socket (Upgrade) */
};

struct http_conn {
	TAILQ_ENTRY(http_conn)	 entry;
	TAILQ_ENTRY(http_conn)	 idle_entry;
	int			 sheddable;	/* on the idle list */
	struct http_server	*srv;
	struct bufferevent	*bev;
	int			 fd;
	enum http_conn_state	 state;
	struct event		*timer;		/* head, body, idle, linger */
	struct event		*next;		/* the next pipelined head */
	struct http_request	*req;		/* the one being served */
	int			 served;	/* requests so far */
	struct timeval		 linger_end;
	char			 addr[CALLER_MAX_ADDR]; /* client's */
	int			 out_queued;	/* at a write timeout, or -1 */
	/* A body spliced into a pipe (http_splice.c). */
	int			 sink;		/* the pipe, or -1 */
	struct event		*sink_sock;	/* the socket has more */
	struct event		*sink_pipe;	/* the pipe has room */
	/* A reply's bytes spliced from a pipe (http_splice.c). */
	int			 source;	/* the pipe, or -1 */
	uint64_t		 source_left;	/* still to move */
	uint64_t		 source_moved;
	int			 source_queued;	/* in the socket, when it waited */
	struct event		*source_sock;	/* the socket has room */
	struct event		*source_pipe;	/* the pipe has bytes */
	void			(*source_end)(void *, uint64_t moved);
	void			*source_arg;
};

struct http_conn *http_conn_new(struct http_server *, int fd);
void	 http_conn_free(struct http_conn *);
void	 http_conn_shed(struct http_conn *);

/* A request and its reply (http_request.c, http_reply.c, http_body.c). */
enum http_body_state {
	BODY_UNREAD,		/* nothing of it taken */
	BODY_READING,		/* being read for a route */
	BODY_DONE,		/* all of it read */
	BODY_FAILED		/* refused or cut; the connection closes */
};

typedef void	(*http_bytes_cb)(void *arg, const char *, size_t);
/* ok: the whole body came; else the client left or its framing broke. */
typedef void	(*http_end_cb)(void *arg, int ok);
typedef void	(*http_notify_cb)(void *arg);
/* A route that took over the connection (HTTP Upgrade). */
typedef void	(*http_takeover_cb)(struct bufferevent *, void *arg);

struct http_request {
	struct http_conn	*conn;		/* NULL once the client left */
	struct http_server	*srv;
	struct http_head	 head;
	char			*path;		/* percent-decoded */
	const char		*query;		/* raw, or NULL */
	/* the body */
	enum http_body_state	 body_state;
	struct evbuffer		*body;		/* collected (JSON routes) */
	uint64_t		 body_max;
	int			 body_paused;
	int			 continue_sent;
	http_bytes_cb		 body_data;
	http_end_cb		 body_end;
	void			*body_arg;
	int			 sink_broken;	/* a splice's reader left */
	/* the reply */
	struct evbuffer		*out_fields;	/* extra "Name: value\r\n" */
	int			 reply_started;
	int			 chunked;
	int			 until_close;	/* HTTP/1.0 stream */
	int64_t			 length_left;	/* of a Content-Length reply */
	int			 close_after;
	int			 broken;	/* cannot end well: close */
	/* told once, when the client goes away */
	http_notify_cb		 gone;
	void			*gone_arg;
	/* told when the output buffer has drained below its low mark */
	http_notify_cb		 drained;
	void			*drained_arg;
	void			*route_data;	/* the router's, until routed */
	/*
	 * Who asks: client_addr from the connection, route from the
	 * router, the key's name, tenant and admin from auth.c (or an
	 * attach token).  Sent before each of its requests to managerd.
	 */
	struct caller		 caller;
	/* The HTTP layer's, while it calls a route that may free it. */
	int			 holds;
	int			 free_pending;
	/* What request_done hears: the route table's pattern (NULL: none). */
	const char		*route;
	int			 status;	/* of the reply; 0: none sent */
	uint64_t		 out_bytes;	/* body bytes queued for it */
	struct timespec		 started;	/* CLOCK_MONOTONIC, its head in */
};

/* The connection hands a complete head to the router (http_route.c). */
struct http_request *http_request_new(struct http_conn *);
void	 http_request_free(struct http_request *);
const char *http_request_field(const struct http_request *, const char *);
const char *http_request_method(const struct http_request *);
/* The collected body of a JSON route (NULL, 0 when empty). */
const void *http_request_body(struct http_request *, size_t *len);
void	 http_request_on_gone(struct http_request *, http_notify_cb, void *);
void	 http_request_on_drained(struct http_request *, http_notify_cb,
	    void *);
/* Bytes queued for the client and not yet written. */
size_t	 http_request_backlog(const struct http_request *);
#define HTTP_BACKLOG_HIGH	(64 * 1024)

/*
 * The body of a streaming route: data until end; pause and resume push
 * back on the client through TCP.  Sends "100 Continue" if it asked.
 * max: more is a failure (end with ok 0, then answer 413 yourself).
 * The data callback must not reply (more data may follow in the same
 * parse); end may, also when the client has gone.
 */
int	 http_body_stream(struct http_request *, uint64_t max, http_bytes_cb,
	    http_end_cb, void *);
/*
 * An upload's body into fd, a pipe, by splice(2) (http_splice.c) when it
 * has a Content-Length: 0 when started (fd is the connection's now,
 * closed before end is called; after an end with ok 0, sink_broken says
 * whether the pipe's reader went away), 1 when this body cannot be
 * spliced (chunked, or none; fd is still the caller's: stream it), -1
 * when its declared length is over max.
 */
int	 http_body_splice(struct http_request *, uint64_t max, int fd,
	    http_end_cb, void *);
/*
 * The next n bytes of a started Content-Length reply from fd, a
 * non-blocking pipe that stays the caller's, by splice(2): once what is
 * queued is written, they move from the pipe to the socket without
 * passing through this process.  done(arg, moved) says how many did
 * (fewer than n: the pipe ended or failed first).  A client that leaves,
 * or does not take a byte for send_timeout, frees the connection
 * instead, and the route hears of it as gone; done is not called then,
 * nor after http_reply_splice_cancel().  0, or -1 (not started: no
 * memory, no client, or more than the reply has left).
 */
int	 http_reply_splice(struct http_request *, int fd, uint64_t n,
	    void (*done)(void *, uint64_t moved), void *arg);
void	 http_reply_splice_cancel(struct http_request *);
void	 http_body_pause(struct http_request *);
void	 http_body_resume(struct http_request *);
/*
 * JSON routes: read the whole body (at most max) into req->body, then
 * call done with the request as its argument.  Either may run before
 * these return (a body already buffered, or none at all).
 */
int	 http_body_collect(struct http_request *, uint64_t max, http_end_cb);

/* Replies.  The last call of a request frees it (also when detached). */
void	 http_add_field(struct http_request *, const char *name,
	    const char *value);
void	 http_reply(struct http_request *, int status,
	    const char *content_type, struct evbuffer *body);
/* length -1: chunked (HTTP/1.1) or until the connection closes (1.0). */
void	 http_reply_start(struct http_request *, int status,
	    const char *content_type, int64_t length);
void	 http_reply_chunk(struct http_request *, struct evbuffer *);
void	 http_reply_end(struct http_request *);
/* A started reply that cannot be completed: the connection closes. */
void	 http_reply_abort(struct http_request *);
/* Send 101 with these fields and hand the socket to cb. */
void	 http_reply_upgrade(struct http_request *, const char *protocol,
	    http_takeover_cb, void *);
const char *http_reason(int status);
/* The error envelope {"error":{"code":...,"message":...}}. */
void	 http_reply_error(struct http_request *, int status,
	    const char *code, const char *message);
/* A parser's refusal, as the error envelope; the connection closes. */
void	 http_reply_refusal(struct http_conn *, int status, const char *why);

/* http_conn.c, for the request and reply code. */
/* The last reply is queued: keep the connection for the next, or close. */
void	 http_conn_request_done(struct http_conn *, int keep);
void	 http_conn_feed_body(struct http_conn *);
/* The body ended (ok: whole); its timer, while it is read. */
void	 http_conn_body_end(struct http_conn *, int ok);
void	 http_conn_body_timer(struct http_conn *);
/* http_splice.c: a body into a pipe, and the end of that (idempotent). */
int	 http_conn_splice(struct http_conn *, int fd);
void	 http_conn_splice_stop(struct http_conn *);
void	 http_conn_source_stop(struct http_conn *);
/* Write what is queued at once, if the socket takes it. */
void	 http_conn_flush(struct http_conn *);
/* One write of the queued output (bufferevent keeps its front frozen). */
int	 http_conn_write_now(struct http_conn *);
/* Close once the output is written (lingering). */
void	 http_conn_close(struct http_conn *);
/* Feed the body again on the loop's next turn (after a resume). */
void	 http_conn_kick(struct http_conn *);
/*
 * Give the socket to a route (Upgrade); the connection is freed, but
 * the socket counts against the cap until http_server_untake().
 */
struct bufferevent *http_conn_take(struct http_conn *);
/* http.c: a request whose head is in, for the routes. */
void	 http_route(struct http_request *);
/* http_server.c: a connection went away; accepting may resume. */
void	 http_server_conn_gone(struct http_server *);
/*
 * A request whose client left keeps a descriptor: it counts against the
 * cap as a taken socket does, until http_server_untake().
 */
void	 http_server_take(struct http_server *);
/* A socket a route took (http_conn_take) is closed, or that descriptor. */
void	 http_server_untake(struct http_server *);
/* http_request.c: the path and query of a parsed head; -1 if malformed. */
int	 http_request_prepare(struct http_request *);
void	 http_conn_write(struct http_conn *, const void *, size_t);
void	 http_conn_write_buffer(struct http_conn *, struct evbuffer *);
#endif /* AS_APID_HTTP_H */
