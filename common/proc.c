/*
 * Child processes (see proc.h): the parent's fork+exec onto descriptor 3,
 * and the start-up every child shares, in the order that makes it safe:
 * settings, confinement, seccomp, and only then the first message from
 * anyone else.
 */
#include <errno.h>
#include <malloc.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "log.h"
#include "privdrop.h"
#include "proc.h"
#include "xmalloc.h"

extern char	**environ;

/* Longest chroot directory or user name a settings message may carry. */
#define PROC_MAX_PATH	4096
#define PROC_MAX_USER	256
#define PROC_MAX_WORD	16

/* libevent reads these; a child must pick its backend from code, not env. */
static void
proc_clean_environment(void)
{
	static const char *const vars[] = {
		"EVENT_NOEPOLL", "EVENT_NOPOLL", "EVENT_NOSELECT",
		"EVENT_SHOW_METHOD", "EVENT_PRECISE_TIMER",
		"EVENT_EPOLL_USE_CHANGELIST",
	};
	size_t	 i;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
}

/*
 * In the new process, before exec.  dup2 onto the descriptor it already
 * is would keep close-on-exec set, hence the fcntl.  _exit, not exit: the
 * parent's stdio buffers are not ours to flush.
 */
static __attribute__((noreturn)) void
proc_exec_child(const char *path, const char *argv0, int sock)
{
	char	*argv[2], name[64];

	if (sock == PROC_PARENT_FD) {
		if (fcntl(sock, F_SETFD, 0) == -1)
			goto fail;
	} else if (dup2(sock, PROC_PARENT_FD) == -1)
		goto fail;
	closefrom(PROC_PARENT_FD + 1);
	proc_clean_environment();
	strlcpy(name, argv0, sizeof(name));
	argv[0] = name;
	argv[1] = NULL;
	execve(path, argv, environ);
 fail:
	log_warn("exec %s", path);
	_exit(127);
}

pid_t
proc_exec(const char *path, const char *argv0, int sock)
{
	pid_t	 pid;

	if ((pid = fork()) == 0)
		proc_exec_child(path, argv0, sock);
	return pid;
}

void
proc_settings_put(struct msgw *w, const char *log_level,
    const char *seccomp_mode, const char *privsep_user,
    const char *chroot_dir)
{
	msgw_str(w, log_level);
	msgw_str(w, seccomp_mode);
	msgw_str(w, privsep_user);
	msgw_str(w, chroot_dir);
}

int
proc_settings_get(struct msgr *r, struct proc_settings *s)
{
	s->log_level = msgr_str(r, PROC_MAX_WORD);
	s->seccomp_mode = msgr_str(r, PROC_MAX_WORD);
	s->privsep_user = msgr_str(r, PROC_MAX_USER);
	s->chroot_dir = msgr_str(r, PROC_MAX_PATH);
	if (r->error || s->log_level == NULL || s->seccomp_mode == NULL ||
	    s->privsep_user == NULL || s->chroot_dir == NULL)
		return -1;
	return 0;
}

void
proc_settings_free(struct proc_settings *s)
{
	free(s->log_level);
	free(s->seccomp_mode);
	free(s->privsep_user);
	free(s->chroot_dir);
	memset(s, 0, sizeof(*s));
}

void
proc_child_init(const struct proc_child *pc, int argc, struct imsgbuf *boot,
    struct imsg *imsg)
{
	log_init(LOG_TO_STDERR, LOG_LEVEL_INFO, pc->name);
	if (argc != 1)
		fatalx("started by hand: %s is run by managerd", pc->name);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, SIG_IGN);	/* the terminal's ^C is for managerd */

	imsgbuf_init(boot, PROC_PARENT_FD);
	if (peer_recv_blocking(boot, imsg) != 1)
		fatal("no settings from managerd");
	if (imsg->hdr.type != pc->settings_type ||
	    (imsg->fd != -1) != (pc->settings_fd != 0))
		fatalx("expected %s%s, got %s",
		    msg_type_name(pc->settings_type),
		    pc->settings_fd ? " with a descriptor" : "",
		    msg_type_name(imsg->hdr.type));
}

int
proc_child_settings(struct msgr *r, struct proc_settings *s)
{
	int	 level;

	if (proc_settings_get(r, s) == -1)
		return -1;
	if ((level = log_level_parse(s->log_level)) != -1)
		log_setlevel(level);
	return 0;
}

struct event_base *
proc_event_base(void)
{
	struct event_config	*cfg;
	struct event_base	*base;

	if ((cfg = event_config_new()) == NULL)
		fatalx("event_config_new");
	event_config_avoid_method(cfg, "select");
	event_config_avoid_method(cfg, "poll");
	if ((base = event_base_new_with_config(cfg)) == NULL)
		fatalx("no epoll event backend");
	event_config_free(cfg);
	return base;
}

void
proc_confine_empty(const struct proc_child *pc, const struct proc_settings *s)
{
	char	 err[512];

	if (privdrop_is_root()) {
		if (privdrop_chroot_user(s->privsep_user, s->chroot_dir, err,
		    sizeof(err)) == -1)
			fatalx("cannot drop privileges: %s", err);
	} else {
		/* managerd already warned once: keep it to one line. */
		log_debug("not started as root: %s keeps the invoking user "
		    "and its view of the filesystem is limited by Landlock "
		    "only", pc->name);
	}
	if (landlock_restrict(NULL, err, sizeof(err)) == -1)
		fatalx("landlock: %s", err);
	if (privdrop_no_new_privs() == -1)
		fatal("no_new_privs");
}

void
proc_seccomp(const struct proc_child *pc, const struct proc_settings *s)
{
	if (pc->seccomp_load(seccomp_mode_parse(s->seccomp_mode)) == -1)
		fatalx("cannot install the seccomp filter");
}

static void
proc_parent_closed(struct peer *p)
{
	log_info("managerd went away; exiting");
	exit(0);
}

/* What came after the settings (bytes and descriptors) is the peer's. */
static void
proc_take_boot(struct peer *p, struct imsgbuf *boot)
{
	memcpy(p->ibuf.rbuf, boot->rbuf, boot->rlen);
	p->ibuf.rlen = boot->rlen;
	memcpy(p->ibuf.rfds, boot->rfds, boot->nrfds * sizeof(boot->rfds[0]));
	p->ibuf.nrfds = boot->nrfds;
	explicit_bzero(boot->rbuf, boot->rlen);
	boot->rlen = 0;
	boot->nrfds = 0;
}

void
proc_serve(const struct proc_child *pc, struct peer *p,
    struct event_base *base, struct imsgbuf *boot, peer_dispatch_cb dispatch,
    void *arg)
{
	peer_init(p, base, PROC_PARENT_FD, "managerd", dispatch,
	    proc_parent_closed, arg);
	proc_take_boot(p, boot);
	if (peer_compose(p, MSG_READY, 0, -1, NULL, 0) == -1)
		fatalx("%s: cannot report READY", pc->name);
	/*
	 * What start-up freed (the OpenAPI document's tree, the settings)
	 * goes back to the kernel first; only then is freed heap kept.
	 */
	(void)malloc_trim(0);
	xmalloc_keep_heap();
}
