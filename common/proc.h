/*
 * Starting a child process and being one, as OpenBSD's proc.c does it.
 * The parent side fork+execs a libexec binary with its end of a
 * socketpair on descriptor 3 and nothing else; the child side reads its
 * settings message there, gives up what it can, loads its seccomp filter
 * and reports MSG_READY before it reads anything untrusted.
 */
#ifndef AS_PROC_H
#define AS_PROC_H

#include <sys/types.h>

#include <stdint.h>

/* Ours, which includes libseccomp's (see the comment there). */
#include <seccomp.h>

#include "peer.h"

/* The child's end of its channel to managerd. */
#define PROC_PARENT_FD	3

/*
 * dockerd-proxy's exit when the Docker socket it was confined with is
 * dead for good (dockerd stopped, killed or restarted: a new dockerd
 * makes a new socket file): managerd starts it again on the socket the
 * path names now, without counting that against its restart budget.
 */
#define PROC_EXIT_DOCKER_GONE	3

/* --- the parent side ------------------------------------------------------ */

/*
 * fork+exec path as argv0 with sock on PROC_PARENT_FD, every other
 * descriptor above stderr closed and libevent's EVENT_* variables
 * removed from the child's environment.  Returns the child's pid, or -1
 * with errno if it could not fork (an exec that fails ends the child
 * with status 127, which its parent reaps like any other exit).
 */
pid_t	proc_exec(const char *path, const char *argv0, int sock);

/* --- settings ------------------------------------------------------------- */

/* What every child's settings message begins with, in this order. */
struct proc_settings {
	char	*log_level;
	char	*seccomp_mode;
	char	*privsep_user;
	char	*chroot_dir;
};

void	proc_settings_put(struct msgw *, const char *log_level,
	    const char *seccomp_mode, const char *privsep_user,
	    const char *chroot_dir);
/* -1 if a field is missing or malformed (see r->error). */
int	proc_settings_get(struct msgr *, struct proc_settings *);
void	proc_settings_free(struct proc_settings *);

/* --- the child side ------------------------------------------------------- */

struct proc_child {
	const char	*name;		/* for the log: "apid" */
	uint32_t	 settings_type;	/* MSG_APID_CONFIG */
	int		 settings_fd;	/* 1: the settings bring a descriptor */
	int		(*seccomp_load)(enum seccomp_mode);
};

/*
 * The first steps of every child: log to stderr, refuse a start by hand,
 * ignore SIGPIPE and the terminal's SIGINT (that is for managerd), and
 * read the settings message from PROC_PARENT_FD into settings (fatal if
 * it is not there or not the expected type, with or without its
 * descriptor).  boot keeps whatever managerd sent after it.
 */
void	proc_child_init(const struct proc_child *, int argc,
	    struct imsgbuf *boot, struct imsg *settings);
/* The settings' common head, and its log level applied; -1: malformed. */
int	proc_child_settings(struct msgr *, struct proc_settings *);
/* libevent pinned to epoll: the set of system calls must not change. */
struct event_base *proc_event_base(void);
/*
 * As root: chroot into the empty chroot_dir as privsep_user.  Always:
 * Landlock with no filesystem access at all, and no_new_privs.
 */
void	proc_confine_empty(const struct proc_child *,
	    const struct proc_settings *);
/* The child's seccomp filter, in the mode its settings name. */
void	proc_seccomp(const struct proc_child *, const struct proc_settings *);
/*
 * Serve managerd on p: what boot holds is handed to it, MSG_READY goes
 * out, and end-of-file from managerd ends the process with status 0.
 */
void	proc_serve(const struct proc_child *, struct peer *,
	    struct event_base *, struct imsgbuf *boot, peer_dispatch_cb,
	    void *arg);

#endif /* AS_PROC_H */
