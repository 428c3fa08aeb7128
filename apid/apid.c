/*
 * apid: receives its settings and the listening socket from managerd,
 * warms up everything that would touch the filesystem, gives up every
 * privilege (chroot into an empty directory, unprivileged user, no
 * filesystem through Landlock, seccomp) and only then accepts clients.
 */
#include <sys/queue.h>
#include <sys/resource.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <json-c/json.h>

#include "apid.h"
#include "log.h"
#include "proc.h"
#include "xmalloc.h"

#define APID_MAX_KEYS	256
/*
 * The HTTP server caps the clients itself (http_server.c); descriptors
 * beyond them are the reserve: each request in progress may hold two
 * pipe ends (a download: Docker's tar and the file's bytes), and apid
 * has a few of its own.  A request that still holds a pipe after its
 * client left counts as a client (http_server_take).
 */
#define APID_FDS_PER_CONNECTION	3
#define APID_FD_RESERVE		64

struct apid_settings {
	struct proc_settings	 proc;
	int			 listener;
	struct http_settings	 http;
};

static const struct proc_child	apid_proc = {
	"apid", MSG_APID_CONFIG, 1, apid_seccomp_load
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
apid_read_settings(struct imsg *imsg, struct apid_settings *s)
{
	struct msgr	 r;

	msgr_init(&r, imsg);
	if (proc_child_settings(&r, &s->proc) == -1)
		fatalx("malformed APID_CONFIG");
	apid->insecure_no_auth = msgr_u8(&r) != 0;
	read_keys(&r, imsg);
	apid->max_file_bytes = msgr_u64(&r);
	apid->max_exec_output_bytes = msgr_u64(&r);
	read_http_settings(&r, &s->http);
	apid->metrics_key = msgr_str(&r, 4096);
	if (msgr_end(&r) == -1 || (apid->metrics_key != NULL &&
	    strlen(apid->metrics_key) < 16))
		fatalx("malformed APID_CONFIG");
	s->listener = imsg_take_fd(imsg);
	imsg_free(imsg);	/* wipes the copy of the keys */
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

int
main(int argc, char *argv[])
{
	struct imsgbuf		 boot;
	struct imsg		 settings;
	struct apid_settings	 s;

	proc_child_init(&apid_proc, argc, &boot, &settings);
	apid_read_settings(&settings, &s);
	TAILQ_INIT(&apid->pending);
	apid->next_id = 1;
	apid->stdin_calls_max = STDIN_CALLS_MAX;
	apid->stdin_bytes_max = STDIN_BYTES_MAX;

	warm_up();
	route_openapi_init();
	route_metrics_init();
	apid->base = proc_event_base();
	if (tar_jobs_init(apid->base) == -1)
		fatal("tar jobs");
	if (http_server_init(&apid->http, apid->base, &s.http, http_route) ==
	    -1 || http_server_listen(&apid->http, s.listener) == -1)
		fatalx("cannot serve on the listener");
	apid->http.request_done = metrics_request_done;
	limit_descriptors(s.http.max_connections);

	proc_confine_empty(&apid_proc, &s.proc);
	proc_seccomp(&apid_proc, &s.proc);
	proc_settings_free(&s.proc);

	proc_serve(&apid_proc, &apid->parent, apid->base, &boot,
	    apid_dispatch_parent, apid);
	event_base_dispatch(apid->base);
	return 1;
}
