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
#include <event2/http.h>
#include <json-c/json.h>

#include "apid.h"
#include "log.h"
#include "privdrop.h"
#include "seccomp.h"
#include "xmalloc.h"

#define PARENT_SOCK_FD	3
#define APID_MAX_KEYS	256
/*
 * Each client holds up to 64 KiB of headers and a JSON body in apid;
 * the descriptor limit caps the number of clients (see http_listen()).
 * The reserve is for apid's own descriptors and exec output pipes.
 */
#define APID_MAX_CONNECTIONS	1024
#define APID_FD_RESERVE		64

struct apid_settings {
	char	*log_level;
	char	*seccomp_mode;
	char	*privsep_user;
	char	*chroot_dir;
	int	 listener;
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

static void
limit_connections(void)
{
	struct rlimit	 rl;
	rlim_t		 want = APID_MAX_CONNECTIONS + APID_FD_RESERVE;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
		fatal("getrlimit");
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
		log_warnx("descriptor limit %llu: fewer than %d clients at "
		    "once", (unsigned long long)rl.rlim_cur,
		    APID_MAX_CONNECTIONS);
		return;
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
	if ((apid->http = evhttp_new(apid->base)) == NULL)
		fatalx("evhttp_new");
	http_setup(apid->http);
	http_listen(apid->http, apid->base, s.listener);
	limit_connections();

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
