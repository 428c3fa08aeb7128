/*
 * apid: the HTTP front.  It parses and validates what clients send, checks
 * API keys, and forwards typed requests to managerd.  It holds no
 * privilege: no files, no Docker, no sockets but its listener.
 */
#ifndef AS_APID_H
#define AS_APID_H

#include <sys/queue.h>

#include <event2/http.h>
#include <json-c/json.h>

#include "msg.h"
#include "peer.h"

struct apid_request;
typedef void	(*apid_reply_cb)(struct apid_request *, struct imsg *);

/* An HTTP request waiting for managerd's answer. */
struct apid_request {
	TAILQ_ENTRY(apid_request)	 entry;
	uint32_t			 id;
	/*
	 * Still valid after the client went away: evhttp frees a detached
	 * request when we send its reply, so every request gets one.
	 */
	struct evhttp_request		*req;
	int				 client_gone;
	apid_reply_cb			 reply;
	void				*arg;
};
TAILQ_HEAD(apid_requests, apid_request);

struct apid {
	struct event_base	*base;
	struct evhttp		*http;
	struct peer		 parent;
	struct apid_requests	 pending;
	uint32_t		 next_id;
	int			 insecure_no_auth;
	char			**api_keys;
	size_t			 api_keys_count;
	uint64_t		 max_file_bytes;
	uint64_t		 max_exec_output_bytes;
};

extern struct apid	*apid;

/* http.c */
void	http_setup(struct evhttp *);
struct apid_request *apid_request_send(struct evhttp_request *, uint32_t type,
	    struct msgw *, apid_reply_cb, void *arg);
void	apid_dispatch_parent(struct peer *, struct imsg *);

/* respond.c */
void	respond_json(struct evhttp_request *, int status, json_object *);
void	respond_error(struct evhttp_request *, enum error_kind,
	    const char *message);
void	respond_error_status(struct evhttp_request *, int status,
	    const char *code, const char *message);
int	respond_error_imsg(struct evhttp_request *, struct imsg *);

/* route_health.c */
void	route_health(struct evhttp_request *, char **params);
#endif /* AS_APID_H */
