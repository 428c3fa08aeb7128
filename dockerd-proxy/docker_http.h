/*
 * An asynchronous HTTP/1.1 client for the Docker Engine API over a unix
 * socket or TCP (a socket proxy in front of Docker, docs/socket-proxy.md),
 * on libevent bufferevents, and the response parser behind it.
 *
 * One request per connection: every request says "Connection: close" (or
 * asks for an upgrade) and the connection is dropped when the response is
 * complete.  The parser (docker_http_parse.c) is kept apart from the I/O
 * (docker_http.c) so that it can be fed bytes by the unit tests.
 *
 * Ownership: docker_request_start() returns a request owned by this module.
 * Its done callback is called exactly once, from the event loop (never from
 * inside docker_request_start()), unless docker_request_cancel() is called
 * first; once the done callback returns, the request and the response
 * handed to it are freed, so copy out anything to keep.  After cancel no
 * callback runs at all.  The process must ignore SIGPIPE: a write to a
 * daemon that went away is reported as an error, not as a signal.
 */
#ifndef AS_DOCKER_HTTP_H
#define AS_DOCKER_HTTP_H

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <stddef.h>

struct event_base;

/*
 * Where requests go (docker_endpoint.c).  The string form: an absolute
 * unix socket path, or tcp://IPV4:PORT or tcp://[IPV6]:PORT, numeric.
 */
struct docker_endpoint {
	struct sockaddr_storage	 addr;
	socklen_t		 len;
	int			 family;	/* AF_UNIX, AF_INET, AF_INET6 */
	unsigned int		 port;		/* TCP only */
};

/* -1 with errno: EINVAL (not either form, a host name), ENAMETOOLONG. */
int	docker_endpoint_parse(const char *, struct docker_endpoint *);
/*
 * Before the jail: a tcp:// endpoint naming a host becomes the numeric
 * form of the resolver's first IPv4 or IPv6 address; anything else is
 * copied as it is.  -1 with err set when the name does not resolve.
 */
int	docker_endpoint_resolve(const char *in, char *out, size_t outlen,
	    char *err, size_t errlen);

/* Response head limits: status line, header lines and the blank line. */
#define DOCKER_HTTP_MAX_HEAD		16384
#define DOCKER_HTTP_MAX_HEADER_LINES	100
/* A chunk-size line, extensions included. */
#define DOCKER_HTTP_MAX_CHUNK_LINE	1024
/*
 * Request line limit: method plus path.  An archive path of 4096 bytes
 * (MSG_MAX_PATH), each percent-encoded, and the rest of the URL fit.
 */
#define DOCKER_HTTP_MAX_PATH		16384
/* Writing a request may stall this long before the request fails. */
#define DOCKER_HTTP_WRITE_TIMEOUT	60
/*
 * Deadlines (docs/reliability.md): how long Docker may go without sending
 * a byte before a request fails with DOCKER_HTTP_TIMEOUT, which the
 * client sees as 504 backend_timeout.  A hung dockerd (kill -STOP, a
 * stuck storage driver) accepts connections into its backlog and reads
 * nothing, so without a deadline every request would wait for ever.
 */
#define DOCKER_DEADLINE_MS		30000	/* any request */
#define DOCKER_DEADLINE_PING_MS		800	/* /_ping: healthz within 1 s */
/*
 * Once a deadline has passed, until Docker sends a byte again, every new
 * request gets only this long: Docker is hung, and operations queued on
 * a sandbox's lock behind the one that found out should not each wait
 * out a whole deadline of their own.
 */
#define DOCKER_DEADLINE_HUNG_MS		1000
/*
 * Requests out to Docker at once, each one descriptor.  A hung Docker
 * holds every one for its deadline; past this many, a new one fails at
 * once (EAGAIN, DOCKER_HTTP_BUSY: 503 unavailable) instead of queueing.
 */
#define DOCKER_HTTP_MAX_LIVE		512
/*
 * Of those, how many a lasting request (DOCKER_HTTP_LASTING: a process's
 * stream, out for as long as its command runs) never takes, so that the
 * calls that end processes and sandboxes always find one.
 */
#define DOCKER_HTTP_RESERVE		64
/* Uploads: the drain callback fires when queued output falls to this. */
#define DOCKER_HTTP_UPLOAD_LOWAT	(16 * 1024)
/* Uploads: a producer should stop once this much is queued. */
#define DOCKER_HTTP_UPLOAD_HIWAT	(256 * 1024)
/* Most bytes read from Docker per wake-up, in pieces of READ_PIECE. */
#define DOCKER_HTTP_SINGLE_READ		(256 * 1024)
#define DOCKER_HTTP_READ_PIECE		(64 * 1024)

enum docker_http_error {
	DOCKER_HTTP_OK = 0,
	DOCKER_HTTP_CONNECT,	/* socket missing, refused, backlog full */
	DOCKER_HTTP_IO,		/* read/write failed, or closed too early */
	DOCKER_HTTP_PROTOCOL,	/* the response is not HTTP we accept */
	DOCKER_HTTP_TOO_LARGE,	/* buffered body longer than max_body */
	DOCKER_HTTP_CANCELLED,	/* the body callback returned -1 */
	DOCKER_HTTP_TIMEOUT,	/* a bufferevent timeout fired */
	DOCKER_HTTP_NOMEM,
	DOCKER_HTTP_BUSY	/* DOCKER_HTTP_MAX_LIVE out, or no descriptor */
};

/*
 * The parsed response.  Strings are NUL-terminated and owned by the request
 * (or parser); they live until the done callback returns.
 */
struct docker_response {
	int		 status;	/* HTTP status, 0 if none */
	char		*content_type;	/* may be NULL */
	char		*path_stat;	/* X-Docker-Container-Path-Stat */
	unsigned char	*body;		/* buffered body, NUL-terminated */
	size_t		 body_len;
};

struct docker_request;

/*
 * Called once when the request ends.  resp is never NULL: on an error it
 * holds what was parsed so far (status 0 if no status line came; the
 * body partial, or NULL).  A status >= 400 is DOCKER_HTTP_OK here: the
 * HTTP exchange worked, and the caller judges the status.
 */
typedef void (*docker_done_cb)(struct docker_request *,
    enum docker_http_error, const struct docker_response *, void *arg);

/*
 * Streaming mode: called with each piece of the body as it arrives,
 * de-chunked; return 0 to go on, -1 to abort (the done callback then gets
 * DOCKER_HTTP_CANCELLED).  It may call docker_request_pause(); the rest of
 * what was read is kept for docker_request_resume().  Only 1xx and 2xx
 * bodies are streamed: the body of an error response (status >= 300) is
 * buffered up to max_body, so the done callback can report Docker's
 * message.  resp->body is NULL for a streamed body.
 */
typedef int (*docker_body_cb)(struct docker_request *,
    const unsigned char *data, size_t len, void *arg);

/*
 * Uploads, and raw writes after an upgrade: what is queued for Docker fell
 * to DOCKER_HTTP_UPLOAD_LOWAT.
 */
typedef void (*docker_drain_cb)(struct docker_request *, void *arg);

/* Flags for struct docker_request_spec. */
#define DOCKER_HTTP_UPGRADE	0x01	/* send Upgrade: tcp, accept a 101 */
#define DOCKER_HTTP_UPLOAD	0x02	/* body from docker_request_write */
#define DOCKER_HTTP_LASTING	0x04	/* not in DOCKER_HTTP_RESERVE */
/*
 * The read deadline holds after a 101 too: an exec of our own that must
 * end soon (a signal's kill, the stats' du), which a sandbox could
 * otherwise hold by stopping it.  Without it the command sets the pace.
 */
#define DOCKER_HTTP_BOUNDED	0x08
/*
 * A streamed 2xx answer's head is announced by one empty piece (data not
 * NULL, len 0) to the body callback before any byte of the body: a
 * stream that may stay silent (Docker's events) is known to be there.
 * That call may not pause; returning -1 aborts as for any piece.
 */
#define DOCKER_HTTP_ANNOUNCE	0x10
/*
 * Asked as HTTP/1.0, so that a 2xx body comes unchunked (Content-Length
 * or until Docker closes): one that docker_request_take() can hand over
 * for splice(2).  Only without a body, an upload or an upgrade.
 */
#define DOCKER_HTTP_RAW		0x20

/*
 * A taken body (docker_request_take): fd, the connection, and what was
 * already read of the body, in rest, are the caller's from this call on
 * (fd to close; rest's bytes to move out before it returns: the request
 * and rest are freed once it has).  left: the body bytes still to come
 * on fd (Content-Length), or -1: until Docker closes it.
 */
struct evbuffer;
typedef void (*docker_take_cb)(struct docker_request *, int fd,
    struct evbuffer *rest, long long left, void *arg);

/* One request; docker_request_new() copies all of it, body included. */
struct docker_request_spec {
	const char	*method;	/* "GET", "POST", ... */
	const char	*path;		/* formatted: "/v1.41/_ping" */
	const char	*content_type;	/* NULL if no body */
	const void	*body;		/* whole body (not with UPLOAD) */
	size_t		 body_len;
	int		 flags;
	/* With DOCKER_HTTP_UPLOAD: the body length, or -1 to send chunked. */
	long long	 upload_len;
	size_t		 max_body;	/* cap on a buffered body */
	docker_body_cb	 on_body;	/* NULL: buffer the body */
	docker_drain_cb	 on_drain;	/* uploads and upgrades; may be NULL */
	docker_done_cb	 on_done;	/* required */
	void		*arg;
	/*
	 * Milliseconds Docker may stay silent (0: DOCKER_DEADLINE_MS).  It
	 * runs from the start (an upload's, from its end) and restarts with
	 * every read; with DOCKER_HTTP_UPGRADE it ends with the response
	 * head, since a command may then be silent as long as it likes (and
	 * leave its stdin unread as long as it likes: after a 101 writes
	 * have no deadline either), unless DOCKER_HTTP_BOUNDED keeps it.
	 */
	unsigned int	 deadline_ms;
};

/*
 * Start a request to endpoint (the string form above).  NULL with errno
 * on a bad argument (EINVAL: method or path with a space or control
 * character, path not starting with '/', an endpoint of neither form;
 * ENAMETOOLONG: socket path) or a local resource failure (ENOMEM, EMFILE,
 * EAGAIN: DOCKER_HTTP_MAX_LIVE requests are out, or for a lasting one all
 * but DOCKER_HTTP_RESERVE); connect errors come through the done callback
 * as DOCKER_HTTP_CONNECT, over TCP once the connect in progress failed
 * (DOCKER_HTTP_TIMEOUT if it took longer than the request's deadline).
 * TCP connections have TCP_NODELAY: a request head and an exec's stdin
 * go out at once.
 */
struct docker_request	*docker_request_new(struct event_base *,
			    const char *endpoint,
			    const struct docker_request_spec *);
struct docker_request	*docker_request_start(struct event_base *,
			    const char *endpoint, const char *method,
			    const char *path, const char *content_type,
			    const void *body, size_t body_len, size_t max_body,
			    docker_body_cb, docker_done_cb, void *arg);
/*
 * No callback after this; frees everything (at once, or when the body or
 * drain callback it was called from returns).  Ignored in the done
 * callback, after which the request is freed anyway.
 */
void		 docker_request_cancel(struct docker_request *);

/*
 * Streaming flow control: stop and restart reading from Docker, so a slow
 * consumer slows Docker down (its writes block once the socket buffers
 * fill).  Either may be called from any callback or from outside; resume
 * goes on with what was already read from the event loop, never from
 * inside the call.  Like every call here, only on a live request: never
 * after the done callback or docker_request_cancel().
 */
void		 docker_request_pause(struct docker_request *);
void		 docker_request_resume(struct docker_request *);

/*
 * Uploads (DOCKER_HTTP_UPLOAD): queue body bytes, then end the body.
 * Both return -1 with errno: EINVAL when not an upload or already ended,
 * EMSGSIZE when the bytes do not match upload_len, EPIPE when the connect
 * failed or Docker stopped reading (the done callback follows, often with
 * Docker's error response), ENOBUFS past 16 * DOCKER_HTTP_UPLOAD_HIWAT
 * queued, ENOMEM.  A producer stops when docker_request_pending() exceeds
 * DOCKER_HTTP_UPLOAD_HIWAT and goes on from the drain callback (which may
 * also come when it was not waiting).
 */
int		 docker_request_write(struct docker_request *, const void *,
		    size_t);
/*
 * From the announce of a DOCKER_HTTP_RAW request's streamed 2xx (the
 * body callback's empty piece): the body is not parsed here but handed
 * over, once what came with the head is read, to cb, called from the
 * loop; no body or done callback follows.  The request ends there, as
 * far as the observer and DOCKER_HTTP_MAX_LIVE know.  -1 with EINVAL
 * elsewhere, or when Docker chunked the body all the same: the request
 * then goes on as it would have.
 */
int		 docker_request_take(struct docker_request *, docker_take_cb);
int		 docker_request_write_end(struct docker_request *);
size_t		 docker_request_pending(const struct docker_request *);

/*
 * Upgraded connections (DOCKER_HTTP_UPGRADE), once the 101 came (from the
 * first body callback on): raw bytes to Docker, an exec's stdin, and the
 * half-close that ends them, shutdown(SHUT_WR) once everything queued is
 * out (Docker then closes the command's stdin; reading goes on).  Both
 * return -1 with errno: EINVAL before the 101, after the half-close was
 * asked for, or on a request without DOCKER_HTTP_UPGRADE; EPIPE once
 * Docker stopped reading; ENOBUFS past 16 * DOCKER_HTTP_UPLOAD_HIWAT
 * queued; ENOMEM.  Flow control as for uploads: docker_request_pending()
 * and the drain callback (not called after the half-close).
 */
int		 docker_request_write_raw(struct docker_request *,
		    const void *, size_t);
int		 docker_request_shutdown_write(struct docker_request *);

/* Inside a callback: the response so far, and the errno behind an error. */
const struct docker_response *docker_request_response(
		    const struct docker_request *);
int		 docker_request_errno(const struct docker_request *);

const char	*docker_http_strerror(enum docker_http_error);
/* 1 from a passed deadline until Docker next sends a byte. */
int		 docker_http_hung(void);
/* Called (from inside docker_request_new) when a connect is refused. */
void		 docker_http_on_refused(void (*)(void));
/*
 * Told of every request: start when it is made (its tag, kept with it),
 * end when it is freed, with Docker's status (0: none came), how it
 * ended (DOCKER_HTTP_CANCELLED: the caller cancelled it) and the seconds
 * in between.  NULL: nobody.  The metrics (proxy_metrics.c).
 */
struct docker_http_observer {
	int	(*start)(const char *method, const char *path);
	void	(*end)(int tag, int status, enum docker_http_error,
		    double seconds);
};
void		 docker_http_observe(const struct docker_http_observer *);

/*
 * The request head, appended to an evbuffer: request line, Host,
 * User-Agent, Connection (or Upgrade), and Content-Type plus
 * Content-Length (content_length >= 0) or Transfer-Encoding: chunked
 * (DOCKER_HTTP_CHUNKED) when content_type is set.  -1 with EINVAL on a
 * bad method, path or content type.
 */
#define DOCKER_HTTP_CHUNKED	(-1LL)
#define DOCKER_HTTP_HEAD_1_0	0x40	/* flags: the request as HTTP/1.0 */
int		 docker_http_request_head(struct evbuffer *, const char *method,
		    const char *path, const char *content_type,
		    long long content_length, int flags);

/* docker_http_parse.c */

/*
 * The response parser.  Feed it bytes as they come; it consumes what it
 * can and says whether the response is complete.
 */
#define DOCKER_HTTP_PARSE_HEAD		0x01	/* answer to HEAD: no body */
#define DOCKER_HTTP_PARSE_UPGRADE	0x02	/* 101 allowed, then raw */
#define DOCKER_HTTP_PARSE_ANNOUNCE	0x04	/* DOCKER_HTTP_ANNOUNCE */

enum docker_http_parse_result {
	DOCKER_HTTP_PARSE_MORE,		/* all consumed, want more */
	DOCKER_HTTP_PARSE_DONE,		/* response complete */
	DOCKER_HTTP_PARSE_PAUSED,	/* body function asked to stop */
	DOCKER_HTTP_PARSE_ERROR		/* see docker_http_parser_error() */
};

/*
 * The parser's body function: 0 to go on, 1 to stop after this piece
 * (DOCKER_HTTP_PARSE_PAUSED), -1 to abort (DOCKER_HTTP_CANCELLED).
 */
typedef int (*docker_http_body_fn)(void *arg, const unsigned char *, size_t);

struct docker_http_parser;

struct docker_http_parser *docker_http_parser_new(int flags, size_t max_body,
		    docker_http_body_fn, void *arg);
void		 docker_http_parser_free(struct docker_http_parser *);
/*
 * 1 once the head of a streamed answer without chunks came: *length is
 * its Content-Length, or -1 for a body that ends when the connection
 * does.  0 for anything else (chunked, buffered, upgraded, no head yet).
 */
int		 docker_http_parser_identity(const struct docker_http_parser *,
		    long long *length);
/* *used: bytes consumed; the rest is for the next call (after a pause). */
enum docker_http_parse_result docker_http_parse(struct docker_http_parser *,
		    const void *data, size_t len, size_t *used);
/* The peer closed the connection. */
enum docker_http_parse_result docker_http_parse_eof(
		    struct docker_http_parser *);
enum docker_http_error docker_http_parser_error(
		    const struct docker_http_parser *);
const struct docker_response *docker_http_parser_response(
		    const struct docker_http_parser *);
/* RFC 9110 tchar: the characters of a method or header name. */
int		 docker_http_is_tchar(unsigned char);

#endif /* AS_DOCKER_HTTP_H */
