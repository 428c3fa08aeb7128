/*
 * dockerd-proxy: receives its settings from managerd, locks itself into a
 * namespace where the Docker socket is the only thing it can reach, loads
 * its seccomp filter, and then serves typed Docker operations.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "log.h"
#include "privdrop.h"
#include "proxy.h"
#include "seccomp.h"
#include "xmalloc.h"

#define PARENT_SOCK_FD	3

static struct proxy	 proxy;

static void
proxy_read_settings(struct imsgbuf *ibuf, struct proxy_settings *s)
{
	struct imsg	 imsg;
	struct msgr	 r;

	if (peer_recv_blocking(ibuf, &imsg) != 1)
		fatal("no configuration from managerd");
	if (imsg.hdr.type != MSG_PROXY_CONFIG || imsg.fd != -1)
		fatalx("expected PROXY_CONFIG, got %s",
		    msg_type_name(imsg.hdr.type));
	msgr_init(&r, &imsg);
	s->log_level = msgr_str(&r, 16);
	s->seccomp_mode = msgr_str(&r, 16);
	s->privsep_user = msgr_str(&r, 256);
	s->chroot_dir = msgr_str(&r, 4096);
	s->docker_socket = msgr_str(&r, 4096);
	s->instance_id = msgr_str(&r, 64);
	if (msgr_end(&r) == -1 || s->log_level == NULL ||
	    s->seccomp_mode == NULL || s->privsep_user == NULL ||
	    s->chroot_dir == NULL || s->docker_socket == NULL ||
	    s->instance_id == NULL)
		fatalx("malformed PROXY_CONFIG");
	/* It goes into labels and filters: lower-case hex only. */
	if (!valid_instance_id(s->instance_id))
		fatalx("PROXY_CONFIG: bad instance id");
	imsg_free(&imsg);
}

static void
parent_closed(struct peer *p)
{
	log_info("managerd went away; exiting");
	exit(0);
}

static void
proxy_enter_jail(struct proxy_settings *s)
{
	char	 jailed[4096], err[512];
	int	 rc;

	rc = proxy_jail(s->docker_socket, s->chroot_dir, s->privsep_user,
	    jailed, sizeof(jailed), err, sizeof(err));
	if (rc == -1)
		fatalx("cannot confine dockerd-proxy: %s", err);
	/* When not root, managerd already warned once. */
	if (rc == 1)
		log_debug("not started as root: dockerd-proxy is not confined "
		    "to the Docker socket");
	free(s->docker_socket);
	if ((s->docker_socket = strdup(jailed)) == NULL)
		fatal("strdup");
	if (privdrop_no_new_privs() == -1)
		fatal("no_new_privs");
}

int
main(int argc, char *argv[])
{
	struct imsgbuf		 boot;
	struct event_config	*cfg;
	json_object		*warm;
	int			 level;

	log_init(LOG_TO_STDERR, LOG_LEVEL_INFO, "dockerd-proxy");
	if (argc != 1)
		fatalx("started by hand: dockerd-proxy is run by managerd");
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, SIG_IGN);	/* the terminal's ^C is for managerd */

	TAILQ_INIT(&proxy.execs);
	TAILQ_INIT(&proxy.network_queue);
	imsgbuf_init(&boot, PARENT_SOCK_FD);
	proxy_read_settings(&boot, &proxy.settings);
	if ((level = log_level_parse(proxy.settings.log_level)) != -1)
		log_setlevel(level);

	/* Everything that opens files or seeds randomness, before the jail. */
	warm = json_object_new_object();
	json_object_put(warm);
	/* Pin epoll: the set of system calls must not change under us. */
	if ((cfg = event_config_new()) == NULL)
		fatalx("event_config");
	event_config_avoid_method(cfg, "select");
	event_config_avoid_method(cfg, "poll");
	if ((proxy.base = event_base_new_with_config(cfg)) == NULL)
		fatalx("event_base_new");
	event_config_free(cfg);

	proxy_enter_jail(&proxy.settings);
	if (proxy_seccomp_load(seccomp_mode_parse(proxy.settings.seccomp_mode))
	    == -1)
		fatalx("cannot install the seccomp filter");

	peer_init(&proxy.parent, proxy.base, PARENT_SOCK_FD, "managerd",
	    proxy_dispatch_parent, parent_closed, &proxy);
	/* Anything managerd sent after the settings is already buffered. */
	memcpy(proxy.parent.ibuf.rbuf, boot.rbuf, boot.rlen);
	proxy.parent.ibuf.rlen = boot.rlen;
	peer_compose(&proxy.parent, MSG_READY, 0, -1, NULL, 0);
	log_debug("serving Docker at %s", proxy.settings.docker_socket);
	/* Now, so that what start-up freed has been given back. */
	xmalloc_keep_heap();
	event_base_dispatch(proxy.base);
	return 1;
}
