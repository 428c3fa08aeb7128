/*
 * managerd and systemd: service notifications (notify.c) and the API
 * listener passed by socket activation (activation.c).
 */
#ifndef AS_NOTIFY_H
#define AS_NOTIFY_H

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <stddef.h>
#include <stdint.h>

struct event_base;

/*
 * NOTIFY_SOCKET's value ("/path" or "@abstract") as an address; -1 with
 * the reason in err if it is neither.
 */
int	notify_parse_address(const char *value, struct sockaddr_un *,
	    socklen_t *, char *err, size_t errlen);
/*
 * WATCHDOG_USEC and WATCHDOG_PID (either NULL if unset) for process self:
 * *usec 0 when there is no watchdog for it; -1 with err on a bad value.
 */
int	notify_parse_watchdog(const char *usec, const char *pid, pid_t self,
	    uint64_t *usec_out, char *err, size_t errlen);
/* Read NOTIFY_SOCKET and WATCHDOG_*, and remove them from environ. */
void	notify_setup(void);
/* Open and connect the socket: before the chroot. */
void	notify_open(void);
int	notify_enabled(void);
void	notify_send(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2)));
void	notify_ready(const char *where);
void	notify_stopping(void);
void	notify_reloading(void);
void	notify_reloaded(const char *where);
void	notify_watchdog_start(struct event_base *);

/*
 * Socket activation.  activation_check_env: LISTEN_PID and LISTEN_FDS
 * (NULL if unset) for process self.  0: nothing passed to us; 1: fd 3 is
 * ours; -1 with err: passed, but not as managerd can use (not exactly
 * one descriptor).
 */
int	activation_check_env(const char *listen_pid, const char *listen_fds,
	    pid_t self, char *err, size_t errlen);
/* 0 if fd is a listening TCP or unix stream socket, else -1 with err. */
int	activation_check_fd(int fd, char *err, size_t errlen);
/*
 * The listener systemd passed (fd 3, made close-on-exec and
 * non-blocking), -1 if none; exits on one it cannot use.  Removes the
 * LISTEN_* variables either way.
 */
int	activation_listener(void);
/*
 * Where the API listens, for the log and STATUS=: the configured
 * "host:port", or with activation the passed socket's own address.
 */
const char *listener_where(void);
void	listener_set_where(int fd, const char *host, int port, int activated);

#endif /* AS_NOTIFY_H */
