/*
 * archive-worker: receives its settings from managerd, gives up every
 * privilege as apid does (chroot into an empty directory, unprivileged
 * user, no filesystem through Landlock, seccomp), reports READY, and
 * then serves the archive jobs apid sends on the channel managerd hands
 * it (zygote.c).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "log.h"
#include "privdrop.h"
#include "worker.h"
#include "xmalloc.h"

#define PARENT_SOCK_FD	3

static struct peer	 parent;

static void
read_settings(struct imsgbuf *ibuf, struct worker_config *c)
{
	struct imsg	 imsg;

	if (peer_recv_blocking(ibuf, &imsg) != 1)
		fatal("no configuration from managerd");
	if (imsg.hdr.type != MSG_WORKER_CONFIG || imsg.fd != -1)
		fatalx("expected WORKER_CONFIG, got %s",
		    msg_type_name(imsg.hdr.type));
	if (msg_get_worker_config(&imsg, c) == -1)
		fatalx("malformed WORKER_CONFIG");
	imsg_free(&imsg);
}

static void
parent_closed(struct peer *p)
{
	log_info("managerd went away; exiting");
	exit(0);
}

static void
drop_privileges(const struct worker_config *c, enum seccomp_mode mode)
{
	char	 err[512];

	if (privdrop_is_root()) {
		if (privdrop_chroot_user(c->privsep_user, c->chroot_dir, err,
		    sizeof(err)) == -1)
			fatalx("cannot drop privileges: %s", err);
	} else
		log_debug("not started as root: the archive worker keeps the "
		    "invoking user and Landlock alone limits what it sees");
	if (landlock_restrict(NULL, err, sizeof(err)) == -1)
		fatalx("landlock: %s", err);
	if (privdrop_no_new_privs() == -1)
		fatal("no_new_privs");
	if (worker_seccomp_load(mode) == -1)
		fatalx("cannot install the seccomp filter");
}

static struct event_base *
worker_event_base(void)
{
	struct event_config	*cfg;
	struct event_base	*base;

	/* Pin the backend: the set of system calls must not change. */
	if ((cfg = event_config_new()) == NULL)
		fatalx("event_config_new");
	event_config_avoid_method(cfg, "select");
	event_config_avoid_method(cfg, "poll");
	if ((base = event_base_new_with_config(cfg)) == NULL)
		fatalx("no epoll event backend");
	event_config_free(cfg);
	return base;
}

int
main(int argc, char *argv[])
{
	struct imsgbuf		 boot;
	struct worker_config	 c;
	struct event_base	*base;
	int			 level, mode;

	log_init(LOG_TO_STDERR, LOG_LEVEL_INFO, "archive-worker");
	if (argc != 1)
		fatalx("started by hand: archive-worker is run by managerd");
	/* A reader that went away is EPIPE for the job, not its death. */
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, SIG_IGN);	/* the terminal's ^C is for managerd */

	imsgbuf_init(&boot, PARENT_SOCK_FD);
	read_settings(&boot, &c);
	if ((level = log_level_parse(c.log_level)) != -1)
		log_setlevel(level);
	if ((mode = seccomp_mode_parse(c.seccomp_mode)) == -1)
		fatalx("unknown seccomp mode %s", c.seccomp_mode);

	base = worker_event_base();
	zygote_init(base, (enum seccomp_mode)mode);
	drop_privileges(&c, (enum seccomp_mode)mode);
	worker_config_free(&c);

	peer_init(&parent, base, PARENT_SOCK_FD, "managerd",
	    zygote_dispatch_parent, parent_closed, NULL);
	/* Anything managerd sent after the settings is already buffered. */
	memcpy(parent.ibuf.rbuf, boot.rbuf, boot.rlen);
	parent.ibuf.rlen = boot.rlen;
	memcpy(parent.ibuf.rfds, boot.rfds, sizeof(boot.rfds));
	parent.ibuf.nrfds = boot.nrfds;
	peer_compose(&parent, MSG_READY, 0, -1, NULL, 0);
	/* Now, so that what start-up freed has been given back. */
	xmalloc_keep_heap();
	event_base_dispatch(base);
	return 1;
}
