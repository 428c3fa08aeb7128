/*
 * egress-proxy's internal header (issue 15): a host process, managerd's
 * child, that serves HTTP CONNECT and plain-HTTP proxying on listening
 * sockets managerd hands it, one per sandbox, each made in that
 * sandbox's network namespace.  The listener a connection came in on
 * names its sandbox; the proxy resolves names itself, checks every
 * address against the sandbox's policy and the host's own addresses,
 * and connects out from the host's namespace.
 */
#ifndef AS_EGRESS_H
#define AS_EGRESS_H

#include <sys/queue.h>
#include <sys/socket.h>

#include <stddef.h>
#include <stdint.h>

#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "egress_log.h"
#include "egress_policy.h"
#include "egress_request.h"
#include "ids.h"
#include "peer.h"
#include "proc.h"

/* Seconds a sandbox's client has to send its whole request head. */
#define EGRESS_HEAD_TIMEOUT	10
/* Seconds for a name's A and AAAA answers. */
#define EGRESS_RESOLVE_TIMEOUT	15
/* Seconds for one address's connect; the next address is tried after. */
#define EGRESS_CONNECT_TIMEOUT	10
/* Seconds a connection may carry no byte either way before it is cut. */
#define EGRESS_IDLE_TIMEOUT	300
/* Seconds a refusal is given to reach the client before the close. */
#define EGRESS_LINGER_TIMEOUT	5
/*
 * Bytes queued toward one side before the other side is no longer
 * read: a slow reader holds its peer back, never the proxy's memory.
 */
#define EGRESS_RELAY_BUF	(256 * 1024)
/* Resolved addresses kept (and tried in order) for one name. */
#define EGRESS_ADDRS_MAX	8
/* Live connections: one sandbox's, and all of them (2 descriptors each). */
#define EGRESS_SANDBOX_CONNS	256
#define EGRESS_CONNS_MAX	4096
/* Addresses of the host refused as destinations. */
#define EGRESS_HOSTADDR_MAX	1024

/* --- the host's own addresses (egress_hostaddr.c, pure) ------------------- */

struct egress_hostaddr {
	int		 family;	/* AF_INET or AF_INET6 */
	uint8_t		 addr[16];	/* IPv4 in the first 4 bytes */
};

struct egress_hostaddrs {
	size_t			 count;
	struct egress_hostaddr	 a[EGRESS_HOSTADDR_MAX];
};

struct ifaddrs;

/*
 * Add one address (an IPv4-mapped IPv6 address as its IPv4 one): 1
 * added, 0 already there or not an inet address, -1 the list is full.
 */
int	egress_hostaddr_add(struct egress_hostaddrs *, const struct sockaddr *);
/* Every address of a getifaddrs() list: 0, or -1 the list is full. */
int	egress_hostaddr_from_ifaddrs(struct egress_hostaddrs *,
	    const struct ifaddrs *);
/* 1 if addr is one of the host's (a v4-mapped one as its IPv4). */
int	egress_hostaddr_is_host(const struct egress_hostaddrs *,
	    const struct sockaddr_storage *);
/*
 * The addresses of the RTM_NEWADDR messages in len bytes read from a
 * NETLINK_ROUTE socket: how many were new, or -1 if the list is full.
 * Anything else in the buffer, or a malformed message, is skipped.
 */
int	egress_hostaddr_netlink(struct egress_hostaddrs *, const void *,
	    size_t len);

/* --- the process ------------------------------------------------------------ */

struct egress_settings {
	struct proc_settings	 proc;
	char			*dns;
	char			*public;
	uint32_t		 log_size;
};

/* A policy as it was when a connection was accepted: shared, counted. */
struct egress_rules {
	unsigned int		 refs;
	struct egress_policy	 policy;
};

struct egress_conn;
TAILQ_HEAD(egress_conns, egress_conn);

struct egress_sandbox {
	TAILQ_ENTRY(egress_sandbox)	 entry;
	char				 id[SANDBOX_ID_LEN + 1];
	struct evconnlistener		*listener;	/* NULL: none yet */
	int				 paused;	/* listener disabled */
	struct egress_rules		*rules;		/* NULL: refuse all */
	struct egress_log		 log;
	struct egress_conns		 conns;
	size_t				 nconns;
};
TAILQ_HEAD(egress_sandboxes, egress_sandbox);

struct egress {
	struct event_base	*base;
	struct evdns_base	*dns;
	struct peer		 parent;
	struct egress_settings	 settings;
	struct egress_extra	 extra;
	struct egress_hostaddrs	 host;
	struct egress_sandboxes	 sandboxes;
	size_t			 nconns;
	struct event		*retry;		/* paused listeners again */
	struct event		*netlink;
};

extern struct egress	 egress;

/* egress_dispatch.c */
void	egress_dispatch(struct peer *, struct imsg *);

/* egress_sandbox.c */
struct egress_sandbox *egress_sandbox_find(const char *id);
/* The sandbox of id, made if new; NULL ENOMEM. */
struct egress_sandbox *egress_sandbox_get(const char *id);
int	egress_sandbox_listen(struct egress_sandbox *, int fd);
void	egress_sandbox_policy(struct egress_sandbox *, struct egress_rules *);
void	egress_sandbox_forget(struct egress_sandbox *);
/* A connection ended: its sandbox's listener may accept again. */
void	egress_sandbox_conn_gone(struct egress_sandbox *);
void	egress_rules_unref(struct egress_rules *);

/* egress_conn.c */
void	egress_conn_accept(struct egress_sandbox *, int fd);
/* Cut a connection now (its sandbox is forgotten). */
void	egress_conn_cut(struct egress_conn *);

/* egress_netlink.c */
void	egress_netlink_open(void);
void	egress_netlink_start(void);

#endif /* AS_EGRESS_H */
