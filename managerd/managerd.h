/*
 * managerd: the parent daemon.  It loads the configuration, starts apid and
 * dockerd-proxy, holds the state, and relays between the two.
 */
#ifndef AS_MANAGERD_H
#define AS_MANAGERD_H

#include <sys/types.h>
#include <sys/queue.h>

#include "config.h"
#include "peer.h"

struct child {
	const char	*name;		/* "apid", "dockerd-proxy" */
	pid_t		 pid;
	int		 ready;
};

/*
 * A call managerd made to dockerd-proxy, waiting for its reply.  The reply
 * (or a MSG_ERROR) is handed to done(); the imsg is freed by the caller.
 */
struct proxy_call;
typedef void	(*proxy_done_cb)(struct imsg *, void *arg);

struct proxy_call {
	TAILQ_ENTRY(proxy_call)	 entry;
	uint32_t		 id;
	uint32_t		 reply_type;	/* expected on success */
	proxy_done_cb		 done;
	void			*arg;
};
TAILQ_HEAD(proxy_calls, proxy_call);

struct managerd {
	struct config		 conf;
	struct event_base	*base;
	struct child		 apid;
	struct child		 proxy;
	struct peer		 apid_peer;
	struct peer		 proxy_peer;
	struct proxy_calls	 calls;
	uint32_t		 next_call_id;
	int			 listener;
	int			 datadir_fd;
};

extern struct managerd	*env;

/* managerd.c */
void	child_ready(struct child *);

/* spawn.c */
pid_t	spawn_child(const char *path, const char *argv0, int sock);
int	listener_open(const char *host, int port, char *err, size_t errlen);

/* dispatch_apid.c */
void	dispatch_apid(struct peer *, struct imsg *);

/* dispatch_proxy.c */
void	dispatch_proxy(struct peer *, struct imsg *);
int	proxy_call(uint32_t type, struct msgw *, uint32_t reply_type,
	    proxy_done_cb, void *arg);
void	relay_error(struct imsg *, uint32_t apid_id);

#endif /* AS_MANAGERD_H */
