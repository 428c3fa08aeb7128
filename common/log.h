/*
 * Logging shared by the three daemons: one line per event on stderr (the
 * systemd journal picks it up), or syslog when asked.  Never log an API key.
 */
#ifndef AS_LOG_H
#define AS_LOG_H

#include <stdarg.h>

#define LOG_TO_STDERR	0
#define LOG_TO_SYSLOG	1

/* Verbosity levels, lowest first. */
#define LOG_LEVEL_WARN	0
#define LOG_LEVEL_INFO	1
#define LOG_LEVEL_DEBUG	2

void	log_init(int destination, int level, const char *procname);
void	log_procname(const char *procname);
void	log_setlevel(int level);
int	log_getlevel(void);
void	log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));
void	vlog(int, const char *, va_list) __attribute__((format(printf, 2, 0)));
void	log_at(int, const char *, ...) __attribute__((format(printf, 2, 3)));
__attribute__((noreturn)) void fatal(const char *, ...)
	    __attribute__((format(printf, 1, 2)));
__attribute__((noreturn)) void fatalx(const char *, ...)
	    __attribute__((format(printf, 1, 2)));

/* Parse AGENT_SANDBOX_LOG_LEVEL-style words: warn, info, debug. */
int	log_level_parse(const char *word);

#endif /* AS_LOG_H */
