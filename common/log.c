/*
 * Logging: "<time> <LEVEL> <process>: <message>" on stderr, or syslog.
 * tzset() runs in log_init so that formatting times later never opens
 * /etc/localtime from inside a chroot or a seccomp filter.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

static int	 log_destination = LOG_TO_STDERR;
static int	 log_level = LOG_LEVEL_INFO;
static char	 log_name[32] = "agent-sandbox";

void
log_init(int destination, int level, const char *procname)
{
	log_destination = destination;
	log_level = level;
	log_procname(procname);
	tzset();
	if (destination == LOG_TO_SYSLOG)
		openlog(log_name, LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

void
log_procname(const char *procname)
{
	if (procname != NULL)
		snprintf(log_name, sizeof(log_name), "%s", procname);
}

void
log_setlevel(int level)
{
	log_level = level;
}

int
log_getlevel(void)
{
	return log_level;
}

int
log_level_parse(const char *word)
{
	if (word == NULL || *word == '\0')
		return LOG_LEVEL_INFO;
	if (strcasecmp(word, "warn") == 0 || strcasecmp(word, "warning") == 0)
		return LOG_LEVEL_WARN;
	if (strcasecmp(word, "info") == 0)
		return LOG_LEVEL_INFO;
	if (strcasecmp(word, "debug") == 0)
		return LOG_LEVEL_DEBUG;
	return -1;
}

static const char *
level_word(int pri)
{
	switch (pri) {
	case LOG_CRIT:
		return "CRITICAL";
	case LOG_WARNING:
		return "WARNING";
	case LOG_DEBUG:
		return "DEBUG";
	default:
		return "INFO";
	}
}

void
vlog(int pri, const char *fmt, va_list ap)
{
	char		 msg[1024], stamp[32];
	struct timespec	 ts;
	struct tm	 tm;
	int		 saved_errno = errno;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (log_destination == LOG_TO_SYSLOG) {
		syslog(pri, "%s", msg);
		errno = saved_errno;
		return;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	/* One fprintf per line keeps lines from different processes whole. */
	fprintf(stderr, "%s.%03ldZ %s %s: %s\n", stamp, ts.tv_nsec / 1000000,
	    level_word(pri), log_name, msg);
	fflush(stderr);
	errno = saved_errno;
}

static void
log_with_errno(int pri, const char *fmt, va_list ap, int errnum)
{
	char	 buf[1024];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	log_at(pri, "%s: %s", buf, strerror(errnum));
}

void
log_at(int pri, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vlog(pri, fmt, ap);
	va_end(ap);
}

void
log_warn(const char *fmt, ...)
{
	va_list	 ap;
	int	 saved_errno = errno;

	va_start(ap, fmt);
	log_with_errno(LOG_WARNING, fmt, ap, saved_errno);
	va_end(ap);
	errno = saved_errno;
}

void
log_warnx(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vlog(LOG_WARNING, fmt, ap);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list	 ap;

	if (log_level < LOG_LEVEL_INFO)
		return;
	va_start(ap, fmt);
	vlog(LOG_INFO, fmt, ap);
	va_end(ap);
}

void
log_debug(const char *fmt, ...)
{
	va_list	 ap;

	if (log_level < LOG_LEVEL_DEBUG)
		return;
	va_start(ap, fmt);
	vlog(LOG_DEBUG, fmt, ap);
	va_end(ap);
}

void
fatal(const char *fmt, ...)
{
	va_list	 ap;
	int	 saved_errno = errno;

	va_start(ap, fmt);
	log_with_errno(LOG_CRIT, fmt, ap, saved_errno);
	va_end(ap);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vlog(LOG_CRIT, fmt, ap);
	va_end(ap);
	exit(1);
}
