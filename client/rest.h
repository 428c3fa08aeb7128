/*
 * A small blocking client for the agent-sandbox REST API (API.md §4),
 * shared by the agent-sandbox CLI verbs and agent-sandbox-mcp.  Plain
 * HTTP/1.1 over TCP to AGENT_SANDBOX_URL (http:// only), one connection
 * per call, "Authorization: Bearer <key>" when a key is set.  Every
 * response is bounded; nothing here prints or exits.
 */
#ifndef AS_CLIENT_REST_H
#define AS_CLIENT_REST_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#define REST_DEFAULT_URL	"http://127.0.0.1:8080"
#define REST_MAX_JSON		(64 * 1024 * 1024)	/* a JSON response */
#define REST_TIMEOUT_SECONDS	300			/* as the Python SDK */

struct addrinfo;

struct rest_client {
	char		*host;		/* name or address, without brackets */
	char		*port;		/* "8080" */
	char		*prefix;	/* path prefix of the URL, "" if none */
	char		*key;		/* NULL: send no Authorization */
	int		 timeout;	/* seconds without progress */
	struct addrinfo	*addrs;		/* rest_client_resolve()'s, or NULL */
	int		 resolved;	/* no more lookups, even if that failed */
	int		 gai_error;	/* why it failed (getaddrinfo, errno) */
	int		 gai_errno;
};

/*
 * What went wrong, in the SDK's terms (API.md §1.2): status 0 for a
 * transport failure (code "connection_error"), else the HTTP status with
 * the envelope's code and message, "validation_error" and the JSON of
 * detail for a 422, or "http_error" and the raw text for a non-JSON body.
 */
struct rest_error {
	int	 status;
	char	 code[64];
	char	 message[2048];
};

/* Progress of a long transfer: bytes so far, total or -1 if unknown. */
typedef void	(*rest_progress_cb)(uint64_t done, int64_t total, void *arg);

/*
 * From AGENT_SANDBOX_URL / AGENT_SANDBOX_API_KEY when url / key are NULL.
 * -1 with a message in err for a URL we cannot use.
 */
int	rest_client_init(struct rest_client *, const char *url,
	    const char *key, char *err, size_t errlen);
void	rest_client_free(struct rest_client *);	/* wipes the key */

/*
 * Resolve the host now and use these addresses for every later call,
 * instead of a name lookup per call.  A process that is about to load a
 * seccomp filter calls this first: a lookup may read /etc/hosts and
 * /etc/resolv.conf, load NSS modules, ask nscd over a unix socket and the
 * kernel over netlink, none of which the filter allows.  -1 with err
 * ("connection_error") when the name does not resolve; every later call
 * then fails the same way, without a lookup.
 */
int	rest_client_resolve(struct rest_client *, struct rest_error *);

/*
 * One JSON exchange.  body may be NULL (no body).  Returns the HTTP
 * status for a 2xx (with *out the parsed JSON, or NULL for a 204), or -1
 * with err filled for anything else.  The caller puts *out.
 */
int	rest_json(struct rest_client *, const char *method, const char *path,
	    json_object *body, json_object **out, struct rest_error *err);

/*
 * A 2xx response body streamed into fd (downloads).  max caps the bytes
 * accepted (0: no cap).  Returns the bytes written, or -1 with err.
 */
int64_t	rest_get_to_fd(struct rest_client *, const char *path, int fd,
	    uint64_t max, rest_progress_cb, void *arg, struct rest_error *err);

/*
 * PUT len bytes read from fd as the request body (uploads); *out gets
 * the JSON response.  Returns the HTTP status or -1 with err.
 */
int	rest_put_from_fd(struct rest_client *, const char *path, int fd,
	    uint64_t len, rest_progress_cb, void *arg, json_object **out,
	    struct rest_error *err);

/* The same with the body in memory, and a download into memory. */
int	rest_put_bytes(struct rest_client *, const char *path,
	    const void *data, size_t len, json_object **out,
	    struct rest_error *err);
/*
 * *data is malloc'd and NUL-terminated (not counted in *len); max 0 means
 * REST_MAX_JSON.  A body over max, here or in rest_get_to_fd, is a 413
 * "payload_too_large" error; a local read or write failure is status 0,
 * code "io_error".
 */
int	rest_get_bytes(struct rest_client *, const char *path, uint64_t max,
	    unsigned char **data, size_t *len, struct rest_error *err);

/*
 * POST a JSON body and read an NDJSON response: line() gets each parsed
 * object (blank lines skipped; it is put after line() returns: take a
 * reference to keep it) and returns 0 to go on, -1 to stop.  Returns 0
 * when the stream ended or line() stopped it, -1 with err.
 */
int	rest_ndjson(struct rest_client *, const char *path, json_object *body,
	    int (*line)(json_object *, void *), void *arg,
	    struct rest_error *err);

/*
 * A WebSocket (RFC 6455) on a connection of its own: the opening
 * handshake of GET path, with the key as every call sends it.  On
 * success ws->fd is the connected socket and ws->pre the bytes that
 * came after the 101's head, already the first frames.  Another answer
 * is -1 with the API's error; a 101 that does not complete the
 * handshake is -1 too (status 101, code "http_error").
 */
struct rest_ws {
	int		 fd;
	unsigned char	*pre;
	size_t		 prelen;
};
int	rest_websocket(struct rest_client *, const char *path,
	    struct rest_ws *, struct rest_error *);
void	rest_ws_close(struct rest_ws *);	/* closes fd, frees pre */

/* --- processes (rest_process.c, docs/rest-api.md "Processes") --- */

/* What POST .../processes starts; what is 0 or NULL is left out. */
struct rest_process_spec {
	json_object	*command;	/* a /bin/sh -c line, or an argv */
	json_object	*env;		/* an object of strings */
	const char	*workdir;
	int		 has_timeout;
	double		 timeout;	/* seconds */
	int		 tty;
	int		 cols, rows;	/* a tty's size */
	int		 stdin_open;	/* 1: true, -1: false */
	const char	*client_id;
};

/*
 * Each returns 0 (for start, list and get with *out the checked JSON:
 * a Process object with a process ID, or the "processes" array, which
 * the caller puts), or -1 with err.
 */
int	rest_process_start(struct rest_client *, const char *sandbox,
	    const struct rest_process_spec *, json_object **out,
	    struct rest_error *);
int	rest_process_list(struct rest_client *, const char *sandbox,
	    json_object **out, struct rest_error *);
int	rest_process_get(struct rest_client *, const char *sandbox,
	    const char *process, json_object **out, struct rest_error *);
/* signal: "TERM", "INT", "KILL" or "HUP" (a "SIG" prefix and case aside). */
int	rest_process_signal(struct rest_client *, const char *sandbox,
	    const char *process, const char *signal, struct rest_error *);
int	rest_process_resize(struct rest_client *, const char *sandbox,
	    const char *process, int cols, int rows, struct rest_error *);
int	rest_process_stdin(struct rest_client *, const char *sandbox,
	    const char *process, const void *data, size_t len, int close,
	    struct rest_error *);
int	rest_process_delete(struct rest_client *, const char *sandbox,
	    const char *process, struct rest_error *);

/* The name the API takes for a signal ("term", "SIGTERM": "TERM"), or NULL. */
const char *rest_signal_name(const char *);
/* "/v1/sandboxes/<sandbox>/processes[/<process>]<suffix>", malloc'd. */
char	*rest_process_path(const char *sandbox, const char *process,
	    const char *suffix);

enum rest_event_type {
	REST_EVENT_STDOUT,
	REST_EVENT_STDERR,
	REST_EVENT_GAP,
	REST_EVENT_EXIT
};

#define REST_STATUS_LEN	16	/* "timed_out" */
#define REST_TIME_LEN	40	/* "2026-12-01T21:40:02.123456Z" */

/* One checked event of .../output. */
struct rest_event {
	enum rest_event_type	 type;
	uint64_t		 seq;		/* data, exit: bytes so far */
	const unsigned char	*data;		/* stdout, stderr: the bytes */
	size_t			 len;
	uint64_t		 dropped;	/* gap: bytes missed */
	char			 status[REST_STATUS_LEN];	/* exit */
	int			 has_exit_code;
	int			 exit_code;
	char			 ended_at[REST_TIME_LEN];	/* or "" */
	json_object		*obj;		/* the line, borrowed */
};

/*
 * The checks on one line, without those of its place in the stream:
 * 0 with *ev filled (data in *buf, grown as needed, when base64), 1 for
 * a type this client does not know (to be skipped), -1 with why.
 */
int	rest_event_parse(json_object *, int base64, struct rest_event *,
	    unsigned char **buf, size_t *cap, char *why, size_t whylen);

/*
 * A parsed event against those before it; *last is the seq of the last
 * byte accounted (the after, at first).  A data event has bytes and a
 * seq past *last; with base64, where its bytes are counted, it starts
 * at or before *last (later is a hole no gap told of) and the bytes up
 * to *last are cut off, so each byte is given exactly once.  A gap
 * moves *last past what it dropped; an exit's seq does not go back.
 * 0 with *last moved on, -1 with why.
 */
int	rest_event_order(struct rest_event *, int base64, uint64_t *last,
	    char *why, size_t whylen);

/*
 * GET .../output from after.  follow: live output until the process
 * ends, or for at most wait_ms when that is not 0.  base64: the exact
 * bytes rather than text with U+FFFD.  event() gets each event, in
 * order and checked against the ones before (seq only grows, the bytes
 * of one never overlap those of another), and returns 0 to go on, -1 to
 * stop.  Returns 0 when the answer ended (after the exit event when the
 * process has ended) or event() stopped it, 1 when wait_ms ran out, -1
 * with err.
 */
struct rest_output_opts {
	uint64_t	 after;
	int		 follow;
	int		 wait_ms;
	int		 base64;
};
typedef int	(*rest_event_cb)(const struct rest_event *, void *);
int	rest_process_output(struct rest_client *, const char *sandbox,
	    const char *process, const struct rest_output_opts *,
	    rest_event_cb, void *, struct rest_error *);

/*
 * rest_sandbox.c.  The list, with label filters ("k=v" or "k", ANDed;
 * n may be 0); a merge patch of a sandbox's labels (labels: an object of
 * strings and nulls, or a JSON null; not taken); a sandbox's stats.
 * Each 0 with *out the server's JSON, or -1 with err.
 */
int	rest_sandbox_list(struct rest_client *, const char *const *filters,
	    size_t n, json_object **out, struct rest_error *);
int	rest_sandbox_patch_labels(struct rest_client *, const char *id,
	    json_object *labels, json_object **out, struct rest_error *);
int	rest_sandbox_stats(struct rest_client *, const char *id,
	    json_object **out, struct rest_error *);

/* A query value or path segment, percent-encoded (malloc'd). */
char	*rest_escape(const char *);

/* "<status> <code>: <message>", as the SDK's exception prints. */
void	rest_error_string(const struct rest_error *, char *, size_t);

#endif /* AS_CLIENT_REST_H */
