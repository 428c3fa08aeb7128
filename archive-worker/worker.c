/*
 * archive-worker: receives its settings from managerd, gives up every
 * privilege as apid does (chroot into an empty directory, unprivileged
 * user, no filesystem through Landlock, seccomp), reports READY, and
 * then serves the archive jobs apid sends on the channel managerd hands
 * it (zygote.c).  Start-up is common/proc.c's, as for the other
 * children.
 */
#include <stdlib.h>

#include <event2/event.h>

#include "log.h"
#include "proc.h"
#include "worker.h"

static const struct proc_child	worker_proc = {
	"archive-worker", MSG_WORKER_CONFIG, 0, worker_seccomp_load
};

static struct peer	 parent;

int
main(int argc, char *argv[])
{
	struct imsgbuf		 boot;
	struct imsg		 settings;
	struct proc_settings	 s;
	struct msgr		 r;
	struct event_base	*base;
	int			 mode;

	proc_child_init(&worker_proc, argc, &boot, &settings);
	/* The common head is all of WORKER_CONFIG. */
	msgr_init(&r, &settings);
	if (proc_child_settings(&r, &s) == -1 || msgr_end(&r) == -1)
		fatalx("malformed WORKER_CONFIG");
	imsg_free(&settings);
	if ((mode = seccomp_mode_parse(s.seccomp_mode)) == -1)
		fatalx("unknown seccomp mode %s", s.seccomp_mode);

	base = proc_event_base();
	/* SIGCHLD is watched before the filter: that needs sigaction. */
	zygote_init(base, (enum seccomp_mode)mode);
	proc_confine_empty(&worker_proc, &s);
	proc_seccomp(&worker_proc, &s);
	proc_settings_free(&s);

	proc_serve(&worker_proc, &parent, base, &boot,
	    zygote_dispatch_parent, NULL);
	event_base_dispatch(base);
	return 1;
}
