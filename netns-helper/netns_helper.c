/*
 * netns-helper: receives its settings from managerd's spawner, opens
 * /proc, keeps CAP_SYS_ADMIN and CAP_SYS_PTRACE and nothing else, chroots
 * into the empty chroot directory as root, loads its filter, reports
 * READY and answers NETNS_LISTEN (netns_listen.c), one at a time.
 *
 * It stays uid 0 because the two capabilities are what it is for:
 * setns(2) into another process's network namespace needs CAP_SYS_ADMIN,
 * and reaching it through a pidfd is a ptrace access check that another
 * uid's process passes only with CAP_SYS_PTRACE.  It has no Landlock
 * domain: Landlock would refuse the reads of /proc/<pid>/cgroup that the
 * pid check needs.  What root could still do is the filter's to forbid
 * (netns_seccomp.c): no open outside /proc's descriptor, no mount, no
 * ptrace, no exec, sockets of AF_INET stream kind only.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <linux/capability.h>

#include <event2/event.h>

#include "log.h"
#include "netns.h"
#include "privdrop.h"
#include "proc.h"

#define CAP(c)		(1ULL << (c))
#define NETNS_CAPS	(CAP(CAP_SYS_ADMIN) | CAP(CAP_SYS_PTRACE))

static const struct proc_child	netns_proc = {
	"netns-helper", MSG_NETNS_CONFIG, 0, netns_seccomp_load
};

static struct peer	 parent;

static void
netns_dispatch(struct peer *p, struct imsg *imsg)
{
	if (imsg->fd != -1 || imsg->fd_lost)
		peer_bad_message(p, imsg, "unexpected descriptor");
	switch (imsg->hdr.type) {
	case MSG_NETNS_LISTEN:
		netns_listen(p, imsg);
		break;
	default:
		peer_bad_message(p, imsg, "not a request managerd may make");
	}
}

/* As root: into the empty directory, with the two capabilities only. */
static void
netns_confine(const struct proc_settings *s)
{
	char	 err[512];

	if (!privdrop_is_root())
		fatalx("netns-helper must be started as root: it makes "
		    "listeners in the sandboxes' network namespaces");
	if (chroot(s->chroot_dir) == -1 || chdir("/") == -1)
		fatal("chroot %s", s->chroot_dir);
	if (privdrop_keep_caps(NETNS_CAPS, NETNS_CAPS, err,
	    sizeof(err)) == -1)
		fatalx("cannot drop capabilities: %s", err);
	if (privdrop_no_new_privs() == -1)
		fatal("no_new_privs");
}

int
main(int argc, char *argv[])
{
	struct imsgbuf		 boot;
	struct imsg		 settings;
	struct proc_settings	 s;
	struct msgr		 r;
	struct event_base	*base;
	int			 procfd;

	proc_child_init(&netns_proc, argc, &boot, &settings);
	msgr_init(&r, &settings);
	if (proc_child_settings(&r, &s) == -1 || msgr_end(&r) == -1)
		fatalx("malformed NETNS_CONFIG");
	imsg_free(&settings);
	if (seccomp_mode_parse(s.seccomp_mode) == -1)
		fatalx("unknown seccomp mode %s", s.seccomp_mode);
	if ((procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		fatal("/proc");
	netns_listen_init(procfd);
	base = proc_event_base();
	netns_confine(&s);
	proc_seccomp(&netns_proc, &s);
	proc_settings_free(&s);
	proc_serve(&netns_proc, &parent, base, &boot, netns_dispatch, NULL);
	event_base_dispatch(base);
	return 1;
}
