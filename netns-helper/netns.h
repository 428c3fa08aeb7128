/*
 * The netns-helper (docs/architecture.md "Egress policy"): the one
 * process that keeps CAP_SYS_ADMIN and CAP_SYS_PTRACE, to make a policy
 * sandbox's proxy listener inside that sandbox's network namespace.
 */
#ifndef AS_NETNS_H
#define AS_NETNS_H

#include <stdint.h>

#include "peer.h"

/* How long the child that enters a namespace may take (its alarm). */
#define NETNS_CHILD_S		2
#define NETNS_BACKLOG		128

/* netns_listen.c: /proc, opened before the chroot. */
void	netns_listen_init(int procfd);
/* MSG_NETNS_LISTEN from managerd, answered before it returns. */
void	netns_listen(struct peer *, struct imsg *);

#endif /* AS_NETNS_H */
