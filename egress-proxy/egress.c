/*
 * egress-proxy: receives its settings from managerd, takes what it needs
 * from the host before its jail (the nameservers, the host's addresses
 * and a netlink socket that reports new ones), then chroots into an
 * empty directory as the unprivileged user, with Landlock holding no
 * filesystem and a seccomp filter, and serves the sandboxes' listeners
 * that managerd hands it (docs/architecture.md, "Egress").
 */
#include <sys/resource.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event2/dns.h>
#include <event2/util.h>

#include "egress.h"
#include "log.h"

/*
 * Two per connection, one listener per sandbox (as many as managerd
 * has policy sandboxes: a few hundred leaves room), the channel, epoll,
 * the nameservers' sockets and the netlink one.
 */
#define EGRESS_FD_RESERVE	1024
#define EGRESS_FD_WANT		(2 * EGRESS_CONNS_MAX + EGRESS_FD_RESERVE)
/* A list of nameservers, as AGENT_SANDBOX_EGRESS_DNS may give it. */
#define EGRESS_DNS_MAX		1024
#define EGRESS_PUBLIC_MAX	4096

struct egress	 egress;

static const struct proc_child	egress_proc = {
	"egress-proxy", MSG_EGRESS_CONFIG, 0, egress_seccomp_load
};

static void
egress_read_settings(struct imsg *imsg, struct egress_settings *s)
{
	struct msgr	 r;
	char		 err[256];

	msgr_init(&r, imsg);
	if (proc_child_settings(&r, &s->proc) == -1)
		fatalx("malformed EGRESS_CONFIG");
	s->dns = msgr_str(&r, EGRESS_DNS_MAX);
	s->public = msgr_str(&r, EGRESS_PUBLIC_MAX);
	s->log_size = msgr_u32(&r);
	if (msgr_end(&r) == -1 || s->dns == NULL || s->public == NULL)
		fatalx("malformed EGRESS_CONFIG");
	if (s->log_size == 0 || s->log_size > EGRESS_LOG_MAX)
		fatalx("EGRESS_CONFIG: log size %u is not 1-%d", s->log_size,
		    EGRESS_LOG_MAX);
	if (egress_extra_parse(s->public, &egress.extra, err,
	    sizeof(err)) == -1)
		fatalx("EGRESS_CONFIG: public ranges: %s", err);
	imsg_free(imsg);
}

/* The operator's nameservers, "198.51.100.53,[2001:db8::53]:5353". */
static void
egress_dns_list(struct evdns_base *dns, const char *list)
{
	char	*copy, *p, *word;

	if ((copy = strdup(list)) == NULL)
		fatal("strdup");
	p = copy;
	while ((word = strsep(&p, ",")) != NULL) {
		if (*word == '\0')
			fatalx("AGENT_SANDBOX_EGRESS_DNS: an empty nameserver");
		if (evdns_base_nameserver_ip_add(dns, word) != 0)
			fatalx("AGENT_SANDBOX_EGRESS_DNS: bad nameserver %s",
			    word);
	}
	free(copy);
}

/*
 * evdns with no file of its own after this: no hosts file, no search
 * domains (a name is asked as the client gave it), nameservers from the
 * setting or /etc/resolv.conf, read now.
 */
static void
egress_dns_init(const char *list)
{
	struct evdns_base	*dns;
	int			 rc;

	if ((dns = evdns_base_new(egress.base, 0)) == NULL)
		fatalx("evdns_base_new");
	/*
	 * Any failure is fatal: evdns would fall back on 127.0.0.1 when
	 * the file is missing or lists no nameserver, which is no one's
	 * choice.
	 */
	if (*list != '\0')
		egress_dns_list(dns, list);
	else if ((rc = evdns_base_resolv_conf_parse(dns,
	    DNS_OPTION_NAMESERVERS, "/etc/resolv.conf")) != 0)
		fatalx("/etc/resolv.conf: %s (evdns error %d); set "
		    "AGENT_SANDBOX_EGRESS_DNS", rc == 1 ? "cannot be read" :
		    rc == 6 ? "no nameserver" : "not usable", rc);
	if (evdns_base_count_nameservers(dns) == 0)
		fatalx("no nameserver for egress-proxy");
	if (evdns_base_set_option(dns, "timeout:", "3") != 0 ||
	    evdns_base_set_option(dns, "attempts:", "2") != 0)
		fatalx("evdns options");
	egress.dns = dns;
}

/* As dockerd-proxy: raise the soft limit while setrlimit is allowed. */
static void
egress_limit_descriptors(void)
{
	struct rlimit	 rl;
	rlim_t		 want = EGRESS_FD_WANT;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
		fatal("getrlimit");
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur >= want)
		return;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want) {
		log_warnx("descriptor limit %llu: fewer than %d connections "
		    "may be relayed at once", (unsigned long long)rl.rlim_max,
		    EGRESS_CONNS_MAX);
		want = rl.rlim_max;
	}
	rl.rlim_cur = want;
	if (setrlimit(RLIMIT_NOFILE, &rl) == -1)
		fatal("setrlimit");
}

int
main(int argc, char *argv[])
{
	struct imsgbuf	 boot;
	struct imsg	 settings;
	json_object	*warm;

	proc_child_init(&egress_proc, argc, &boot, &settings);
	TAILQ_INIT(&egress.sandboxes);
	egress_read_settings(&settings, &egress.settings);

	/* Everything that opens files or seeds randomness, before the jail. */
	warm = json_object_new_object();
	json_object_put(warm);
	if (evutil_secure_rng_init() == -1)
		fatalx("evutil_secure_rng_init");
	egress.base = proc_event_base();
	egress_dns_init(egress.settings.dns);
	egress_netlink_open();
	egress_limit_descriptors();

	proc_confine_empty(&egress_proc, &egress.settings.proc);
	proc_seccomp(&egress_proc, &egress.settings.proc);

	egress_netlink_start();
	proc_serve(&egress_proc, &egress.parent, egress.base, &boot,
	    egress_dispatch, NULL);
	log_debug("serving with %d nameserver%s",
	    evdns_base_count_nameservers(egress.dns),
	    evdns_base_count_nameservers(egress.dns) == 1 ? "" : "s");
	event_base_dispatch(egress.base);
	return 1;
}
