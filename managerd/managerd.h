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
#include "sandbox_msg.h"

/* A sandbox as managerd keeps it and as its record file stores it. */
struct sandbox_record {
	char			 id[SANDBOX_ID_LEN + 1];
	struct sandbox_spec	 spec;
	double			 created_at;
	double			 expires_at;
	char			*source_snapshot_id;	/* NULL: none */
};

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

/*
 * store.c: records in the data directory (API.md §9), written atomically
 * (temp file, fsync, rename, fsync of the directory) before anyone hears of
 * success.  dirfd is the data directory.
 */
int	store_sandbox_write(int dirfd, const struct sandbox_record *);
int	store_sandbox_remove(int dirfd, const char *id);
/* Calls cb for every parseable record in file-name order; a record that
 * cannot be parsed is deleted.  Returns -1 if the directory is unreadable. */
int	store_sandbox_load_all(int dirfd,
	    void (*cb)(struct sandbox_record *, void *), void *arg);
void	sandbox_record_free(struct sandbox_record *);
/* JSON text of a record (keys sorted, 2-space indent) and back; for tests. */
char	*store_sandbox_to_json(const struct sandbox_record *);
int	store_sandbox_from_json(const char *, struct sandbox_record *);

/* paths.c: API.md §6.1.  0 on success, -1 for an empty path. */
int	path_normalize(const char *in, char *out, size_t outlen);
/* 1 if the normalized path lies strictly below /workspace. */
int	path_in_workspace(const char *normalized);

/* allowlist.c: Python fnmatchcase semantics (API.md §8.6). */
int	glob_match(const char *pattern, const char *string);
int	image_allowed(char *const *patterns, size_t count, const char *image);

/* clock.c: wall and monotonic time in seconds; replaceable by tests. */
extern double	(*clock_wall)(void);
extern double	(*clock_monotonic)(void);

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
