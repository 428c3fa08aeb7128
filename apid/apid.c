/*
 * apid: receives its settings and the listening socket from managerd,
 * warms up everything that would touch the filesystem, gives up every
 * privilege (chroot into an empty directory, unprivileged user, no
 * filesystem through Landlock, seccomp) and only then accepts clients.
 */
#include <sys/queue.h>
#include <sys/resource.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <json-c/json.h>

#include "apid.h"
#include "log.h"
#include "privdrop.h"
#include "seccomp.h"
#include "xmalloc.h"

#define PARENT_SOCK_FD	3
#define APID_MAX_KEYS	256
/*
 * The HTTP server caps the clients itself (http_server.c); descriptors
 * beyond them are the reserve: each request in progress may hold two
 * pipe ends (a download: Docker's tar and the file's bytes), and apid
 * has a few of its own.
 */
#define APID_FDS_PER_CONNECTION	3
#define APID_FD_RESERVE		64

struct apid_settings {
	char	*log_level;
	char	*seccomp_mode;
	char	*privsep_user;
	char	*chroot_dir;
	int	 listener;
	struct http_settings http;
};

static struct apid	 apid_state;
struct apid		*apid = &apid_state;

static void
read_keys(struct msgr *r, const struct imsg *imsg)
{
	uint32_t	 i, n;

	n = msgr_u32(r);
	if (r->error || n > APID_MAX_KEYS)
		fatalx("malformed APID_CONFIG: key count");
	if ((apid->api_keys = calloc(n + 1, sizeof(char *))) == NULL)
		fatal("calloc");
	for (i = 0; i < n; i++) {
		apid->api_keys[i] = msgr_str(r, 4096);
		if (apid->api_keys[i] == NULL)
			fatalx("malformed APID_CONFIG: key %u", i);
	}
	apid->api_keys_count = n;
}

static void
seconds_to_timeval(double secs, struct timeval *tv)
{
	if (!(secs > 0 && secs <= 86400))
		fatalx("malformed APID_CONFIG: a timeout of %g s", secs);
	tv->tv_sec = (time_t)secs;
	tv->tv_usec = (suseconds_t)((secs - (double)tv->tv_sec) * 1e6);
}

static void
read_http_settings(struct msgr *r, struct http_settings *h)
{
	http_settings_default(h);
	seconds_to_timeval(msgr_double(r), &h->head_timeout);
	seconds_to_timeval(msgr_double(r), &h->body_timeout);
	seconds_to_timeval(msgr_double(r), &h->idle_timeout);
	seconds_to_timeval(msgr_double(r), &h->send_timeout);
	h->max_connections = msgr_u32(r);
	if (h->max_connections < 1 || h->max_connections > 65536)
		fatalx("malformed APID_CONFIG: %zu connections",
		    h->max_connections);
}

static void
apid_read_settings(struct imsgbuf *ibuf, struct apid_settings *s)
{
	struct imsg	 imsg;
	struct msgr	 r;

	if (peer_recv_blocking(ibuf, &imsg) != 1)
		fatal("no configuration from managerd");
	if (imsg.hdr.type != MSG_APID_CONFIG || imsg.fd == -1)
		fatalx("expected APID_CONFIG with a listener, got %s",
		    msg_type_name(imsg.hdr.type));
	msgr_init(&r, &imsg);
	s->log_level = msgr_str(&r, 16);
	s->seccomp_mode = msgr_str(&r, 16);
	s->privsep_user = msgr_str(&r, 256);
	s->chroot_dir = msgr_str(&r, 4096);
	apid->insecure_no_auth = msgr_u8(&r) != 0;
	read_keys(&r, &imsg);
	apid->max_file_bytes = msgr_u64(&r);
	apid->max_exec_output_bytes = msgr_u64(&r);
	read_http_settings(&r, &s->http);
	if (msgr_end(&r) == -1 || s->log_level == NULL ||
	    s->seccomp_mode == NULL || s->privsep_user == NULL ||
	    s->chroot_dir == NULL)
		fatalx("malformed APID_CONFIG");
	s->listener = imsg_take_fd(&imsg);
	imsg_free(&imsg);	/* wipes the copy of the keys */
}

static void
parent_closed(struct peer *p)
{
	log_info("managerd went away; exiting");
	exit(0);
}

/*
 * Everything below would open files or resolve names the first time it
 * runs; do it while we still can (see PRIVSEP notes in the docs).
 */
static void
warm_up(void)
{
	json_object	*o;
	struct tm	 tm;
	time_t		 now = time(NULL);

	o = json_object_new_object();
	json_object_object_add(o, "warm", json_object_new_int(1));
	(void)json_object_to_json_string(o);
	json_object_put(o);
	gmtime_r(&now, &tm);
	localtime_r(&now, &tm);
}

/* Descriptors for max clients and the reserve; what the kernel lets us. */
static void
limit_descriptors(size_t max)
{
	struct rlimit	 rl;
	rlim_t		 want = max * APID_FDS_PER_CONNECTION + APID_FD_RESERVE;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
		fatal("getrlimit");
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want) {
		log_warnx("descriptor limit %llu: fewer than %zu clients can "
		    "be served at once", (unsigned long long)rl.rlim_max, max);
		want = rl.rlim_max;
	}
	rl.rlim_cur = want;
	if (setrlimit(RLIMIT_NOFILE, &rl) == -1)
		fatal("setrlimit");
}

static void
apid_drop_privileges(struct apid_settings *s)
{
	char	 err[512];
	int	 rc;

	if (privdrop_is_root()) {
		if (privdrop_chroot_user(s->privsep_user, s->chroot_dir, err,
		    sizeof(err)) == -1)
			fatalx("cannot drop privileges: %s", err);
	} else {
		/* managerd already warned once: keep it to one line. */
		log_debug("not started as root: apid keeps the invoking user "
		    "and its view of the filesystem is limited by Landlock "
		    "only");
	}
	rc = landlock_restrict(NULL, err, sizeof(err));
	if (rc == -1)
		fatalx("landlock: %s", err);
	if (privdrop_no_new_privs() == -1)
		fatal("no_new_privs");
	if (apid_seccomp_load(seccomp_mode_parse(s->seccomp_mode)) == -1)
		fatalx("cannot install the seccomp filter");
}

static struct event_base *
apid_event_base(void)
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
	struct apid_settings	 s;
	int			 level;

	log_init(LOG_TO_STDERR, LOG_LEVEL_INFO, "apid");
	if (argc != 1)
		fatalx("started by hand: apid is run by managerd");
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, SIG_IGN);	/* the terminal's ^C is for managerd */

	imsgbuf_init(&boot, PARENT_SOCK_FD);
	apid_read_settings(&boot, &s);
	if ((level = log_level_parse(s.log_level)) != -1)
		log_setlevel(level);
	TAILQ_INIT(&apid->pending);
	apid->next_id = 1;

	warm_up();
	route_openapi_init();
	apid->base = apid_event_base();
	if (tar_jobs_init(apid->base) == -1)
		fatal("tar jobs");
	if (http_server_init(&apid->http, apid->base, &s.http, http_route) ==
	    -1 || http_server_listen(&apid->http, s.listener) == -1)
		fatalx("cannot serve on the listener");
	limit_descriptors(s.http.max_connections);

	apid_drop_privileges(&s);

	peer_init(&apid->parent, apid->base, PARENT_SOCK_FD, "managerd",
	    apid_dispatch_parent, parent_closed, apid);
	memcpy(apid->parent.ibuf.rbuf, boot.rbuf, boot.rlen);
	apid->parent.ibuf.rlen = boot.rlen;
	peer_compose(&apid->parent, MSG_READY, 0, -1, NULL, 0);
	/* Now, so that what start-up freed has been given back. */
	xmalloc_keep_heap();
	event_base_dispatch(apid->base);
	return 1;
}
