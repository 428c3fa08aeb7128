/*
 * dockerd-proxy: the only process that talks to the Docker socket.  It
 * takes typed requests from managerd, builds every Docker request itself,
 * and answers with typed results.
 */
#ifndef AS_PROXY_H
#define AS_PROXY_H

#include <stddef.h>

#include "peer.h"

struct proxy_settings {
	char	*log_level;
	char	*seccomp_mode;
	char	*privsep_user;
	char	*chroot_dir;
	char	*docker_socket;		/* path as seen after the jail */
	char	*instance_id;		/* labels this server's objects */
};

struct proxy {
	struct event_base	*base;
	struct peer		 parent;
	struct proxy_settings	 settings;
};

/* proxy_dispatch.c */
void	proxy_dispatch_parent(struct peer *, struct imsg *);

/* docker_ping.c */
void	docker_ping(struct proxy *, uint32_t peerid);

/*
 * proxy_jail.c: when root, enter a private mount (and network) namespace
 * whose root is a read-only tmpfs on chroot_dir holding only the Docker
 * socket, bind-mounted at /docker.sock; then drop to privsep_user with the
 * socket's group, or, if the socket is not group-accessible, keep uid 0
 * with no capabilities.  Writes the socket path to use afterwards into
 * jailed_path.  When not root, changes nothing and returns 1 (the caller
 * warns); 0 on success; -1 with a reason in err.
 */
int	proxy_jail(const char *docker_socket, const char *chroot_dir,
	    const char *privsep_user, char *jailed_path, size_t pathlen,
	    char *err, size_t errlen);

#endif /* AS_PROXY_H */
