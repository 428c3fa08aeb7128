/*
 * The audit log: an append-only record of every request that changed
 * state or ran a command, one JSON object per line (docs/security.md,
 * "The audit log").  It says who (the key's name, its tenant, the
 * client's address), what (the route and the ids it touched), how it
 * ended (the HTTP status, the error code) and how long it took; never a
 * key, an environment value, a command line, output or file contents.
 *
 * Destinations (AGENT_SANDBOX_AUDIT_LOG):
 *  - file: <data dir>/audit.log, mode 0600, opened O_APPEND; each line
 *    is one write(2), so lines never interleave and a kill -9 loses at
 *    most the line being written.  A short write (a full disk) is cut
 *    back off the file, so the next line never lands glued to a torn
 *    one.  SIGHUP opens the name again: logrotate renames, then HUPs.
 *  - syslog: a datagram to /dev/log, connected before the chroot (the
 *    chroot has no /dev/log, seccomp allows no socket(2) after it), as
 *    LOG_AUTHPRIV|LOG_INFO with the tag agent-sandbox-audit.  Under
 *    systemd /dev/log belongs to PID 1 (systemd-journald-dev-log.socket),
 *    so journald restarting keeps the connection: datagrams queue until
 *    it reads again.  Only if that socket itself is replaced is the
 *    connection dead; managerd cannot reconnect from its jail, and the
 *    lines are lost (counted, warned) until managerd restarts.  Not
 *    syslog(3): on a failed send glibc's closes and opens a new socket,
 *    a socket(2) the filter would kill managerd for, and it says nothing
 *    of what it lost.
 *  - off.
 *
 * A line that cannot be written never fails the request: it has already
 * done what it did, and refusing service because the log is full would
 * hand an attacker who fills the disk a way to stop the server.  The
 * loss is logged at warn level once per run of failures, and counted.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "audit.h"
#include "log.h"
#include "utf8.h"

#define AUDIT_FILE	"audit.log"
#define AUDIT_SYSLOG	"/dev/log"
#define AUDIT_TAG	"agent-sandbox-audit"
/* LOG_AUTHPRIV | LOG_INFO, as <syslog.h> numbers them. */
#define AUDIT_PRI	((10 << 3) | 6)

enum audit_dest { AUDIT_OFF, AUDIT_TO_FILE, AUDIT_TO_SYSLOG };

static struct {
	enum audit_dest	 dest;
	int		 fd;
	int		 dirfd;
	pid_t		 pid;
	uint64_t	 lost;
	int		 failing;	/* the last write failed: warned */
} au = { AUDIT_OFF, -1, -1, 0, 0, 0 };

/* RFC 3339 in UTC with milliseconds: 2026-12-02T01:02:03.456Z. */
static void
audit_time(double t, char *buf, size_t len)
{
	struct tm	 tm;
	time_t		 secs;
	int		 ms;

	if (!(t >= 0.0) || t > 253402300799.0)
		t = 0.0;
	secs = (time_t)t;
	ms = (int)((t - (double)secs) * 1000.0);
	if (ms > 999)
		ms = 999;
	gmtime_r(&secs, &tm);
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec, ms);
}

/* A string field, repaired into UTF-8 first: json-c copies bytes as is. */
static int
add_str(json_object *o, const char *key, const char *val)
{
	char	*fixed;
	size_t	 len;

	if (val == NULL)
		return 0;
	if ((fixed = utf8_repair(val, strlen(val), &len)) == NULL)
		return -1;
	json_object_object_add(o, key, json_object_new_string_len(fixed,
	    (int)len));
	free(fixed);
	return 0;
}

static int
add_egress(json_object *o, const struct audit_egress *e)
{
	json_object	*eo;

	if ((eo = json_object_new_object()) == NULL)
		return -1;
	json_object_object_add(o, "egress", eo);
	if (add_str(eo, "host", e->host) == -1 ||
	    add_str(eo, "address", e->address) == -1 ||
	    add_str(eo, "reason", e->reason) == -1)
		return -1;
	json_object_object_add(eo, "port", json_object_new_int((int)e->port));
	json_object_object_add(eo, "allowed",
	    json_object_new_boolean(e->allowed));
	json_object_object_add(eo, "bytes_sent",
	    json_object_new_int64((int64_t)e->bytes_sent));
	json_object_object_add(eo, "bytes_received",
	    json_object_new_int64((int64_t)e->bytes_received));
	return 0;
}

static json_object *
audit_object(const struct audit_record *r)
{
	json_object	*o;
	char		 ts[96];
	double		 ms;

	if ((o = json_object_new_object()) == NULL)
		return NULL;
	audit_time(r->time, ts, sizeof(ts));
	json_object_object_add(o, "time", json_object_new_string(ts));
	ms = r->duration > 0.0 ? r->duration * 1000.0 : 0.0;
	if (add_str(o, "key", r->key) == -1 ||
	    add_str(o, "tenant", r->tenant) == -1 ||
	    add_str(o, "client", r->client) == -1 ||
	    add_str(o, "route", r->route) == -1 ||
	    add_str(o, "sandbox_id", r->sandbox_id) == -1 ||
	    add_str(o, "snapshot_id", r->snapshot_id) == -1 ||
	    add_str(o, "process_id", r->process_id) == -1 ||
	    add_str(o, "error", r->error) == -1) {
		json_object_put(o);
		return NULL;
	}
	json_object_object_add(o, "status", json_object_new_int(r->status));
	if (r->egress != NULL && add_egress(o, r->egress) == -1) {
		json_object_put(o);
		return NULL;
	}
	if (r->client_gone)
		json_object_object_add(o, "client_gone",
		    json_object_new_boolean(1));
	json_object_object_add(o, "duration_ms",
	    json_object_new_int64((int64_t)(ms + 0.5)));
	return o;
}

char *
audit_format(const struct audit_record *r, size_t *lenp)
{
	json_object	*o;
	const char	*text;
	char		*line;
	size_t		 len;

	if ((o = audit_object(r)) == NULL)
		return NULL;
	text = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE, &len);
	if (text == NULL || (line = malloc(len + 2)) == NULL) {
		json_object_put(o);
		return NULL;
	}
	memcpy(line, text, len);
	line[len] = '\n';
	line[len + 1] = '\0';
	json_object_put(o);
	*lenp = len + 1;
	return line;
}

static int
audit_open_file(void)
{
	int	 fd;

	fd = openat(au.dirfd, AUDIT_FILE, O_WRONLY | O_APPEND | O_CREAT |
	    O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd == -1)
		log_warn("audit log %s", AUDIT_FILE);
	return fd;
}

static int
audit_open_syslog(void)
{
	struct sockaddr_un	 sun;
	int			 fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	strlcpy(sun.sun_path, AUDIT_SYSLOG, sizeof(sun.sun_path));
	if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1)
		fatal("audit log: socket");
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		log_warn("audit log: cannot connect to %s (is journald or a "
		    "syslog daemon running?); audit lines are lost",
		    AUDIT_SYSLOG);
		close(fd);
		return -1;
	}
	return fd;
}

void
audit_open(const struct config *conf, int datadir_fd)
{
	au.pid = getpid();
	au.dirfd = datadir_fd;
	if (strcmp(conf->audit_log, "off") == 0) {
		log_info("audit log: off");
		return;
	}
	if (strcmp(conf->audit_log, "syslog") == 0) {
		au.dest = AUDIT_TO_SYSLOG;
		au.fd = audit_open_syslog();
		return;
	}
	au.dest = AUDIT_TO_FILE;
	if ((au.fd = audit_open_file()) == -1)
		fatalx("cannot open the audit log (AGENT_SANDBOX_AUDIT_LOG=off "
		    "turns it off)");
}

/*
 * A file that cannot be opened again keeps the old descriptor: lines
 * still go somewhere (the renamed file) rather than nowhere.
 */
void
audit_reopen(void)
{
	int	 fd;

	if (au.dest != AUDIT_TO_FILE)
		return;
	if ((fd = audit_open_file()) == -1)
		return;
	if (au.fd != -1)
		close(au.fd);
	au.fd = fd;
	log_info("audit log reopened");
}

static void
audit_failed(const char *why)
{
	au.lost++;
	if (!au.failing)
		log_warnx("audit log: a line could not be written (%s); the "
		    "request went on, the line is lost", why);
	au.failing = 1;
}

void
audit_lose(const char *why)
{
	audit_failed(why);
}

static void
audit_succeeded(void)
{
	if (au.failing)
		log_warnx("audit log: writing again; %llu line(s) lost so far",
		    (unsigned long long)au.lost);
	au.failing = 0;
}

/* A torn line is cut off again, so that the file stays all lines. */
static void
audit_write_file(const char *line, size_t len)
{
	ssize_t	 n;
	off_t	 end;

	n = write(au.fd, line, len);
	if (n == (ssize_t)len) {
		audit_succeeded();
		return;
	}
	if (n > 0 && (end = lseek(au.fd, 0, SEEK_CUR)) != -1)
		(void)ftruncate(au.fd, end - n);
	audit_failed(n == -1 ? strerror(errno) : "short write");
}

static void
audit_write_syslog(const char *line, size_t len)
{
	char	 msg[128 + 16384];
	int	 n;

	/* No newline in a syslog message. */
	n = snprintf(msg, sizeof(msg), "<%d>%s[%d]: %.*s", AUDIT_PRI,
	    AUDIT_TAG, (int)au.pid, (int)(len - 1), line);
	if (n < 0 || (size_t)n >= sizeof(msg)) {
		audit_failed("line too long for syslog");
		return;
	}
	if (send(au.fd, msg, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL) == -1)
		audit_failed(strerror(errno));
	else
		audit_succeeded();
}

void
audit_write(const struct audit_record *r)
{
	char	*line;
	size_t	 len;

	if (au.dest == AUDIT_OFF)
		return;
	if (au.fd == -1) {
		audit_failed("no destination");
		return;
	}
	if ((line = audit_format(r, &len)) == NULL) {
		audit_failed("out of memory");
		return;
	}
	if (au.dest == AUDIT_TO_FILE)
		audit_write_file(line, len);
	else
		audit_write_syslog(line, len);
	free(line);
}

uint64_t
audit_lost(void)
{
	return au.lost;
}
