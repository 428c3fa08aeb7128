/*
 * A peer process at the other end of an imsg socketpair, driven by
 * libevent: reads and dispatches whole messages, writes queued output
 * once the callback that queued it is over (every message it queued in
 * one write), and waits for EV_WRITE only when the socket would block.
 */
#ifndef AS_PEER_H
#define AS_PEER_H

#include <event2/event.h>
#include <event2/event_struct.h>

#include "imsg.h"
#include "msg.h"

struct peer;
typedef void	(*peer_dispatch_cb)(struct peer *, struct imsg *);
typedef void	(*peer_closed_cb)(struct peer *);

struct peer {
	struct imsgbuf		 ibuf;
	struct event		 ev;
	struct event		 ev_flush;	/* activated, never polled */
	int			 flushing;	/* ev_flush is active */
	int			 stopped;	/* peer_stop(): nothing goes */
	struct event_base	*base;
	short			 events;
	const char		*name;		/* the process at the other end */
	peer_dispatch_cb	 dispatch;
	peer_closed_cb		 closed;	/* EOF or a read/write error */
	void			*arg;
};

void	peer_init(struct peer *, struct event_base *, int sock,
	    const char *name, peer_dispatch_cb, peer_closed_cb, void *arg);
void	peer_stop(struct peer *);
int	peer_compose(struct peer *, uint32_t type, uint32_t peerid, int fd,
	    const void *data, size_t len);
int	peer_send(struct peer *, uint32_t type, uint32_t peerid, int fd,
	    struct msgw *);
int	peer_send_error(struct peer *, uint32_t peerid, enum error_kind,
	    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
__attribute__((noreturn)) void peer_bad_message(struct peer *,
	    const struct imsg *, const char *why);

/* Blocking receive of exactly one message, for start-up configuration. */
int	peer_recv_blocking(struct imsgbuf *, struct imsg *);

#endif /* AS_PEER_H */
