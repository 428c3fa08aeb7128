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

/* A query value or path segment, percent-encoded (malloc'd). */
char	*rest_escape(const char *);

/* "<status> <code>: <message>", as the SDK's exception prints. */
void	rest_error_string(const struct rest_error *, char *, size_t);

#endif /* AS_CLIENT_REST_H */
