/*
 * Syscall filters.  Each daemon has one allowlist table in its own
 * <process>_seccomp.c; this file has the shared machinery that turns a
 * table into a kill-by-default filter.
 */
#ifndef AS_SECCOMP_H
#define AS_SECCOMP_H

/* What a forbidden system call does (AGENT_SANDBOX_SECCOMP). */
enum seccomp_mode {
	SECCOMP_MODE_KILL = 0,	/* kill the process: the default, used in CI */
	SECCOMP_MODE_TRAP,	/* print the call's name on stderr, then exit */
	SECCOMP_MODE_LOG,	/* allow, but log to the kernel audit log */
};

int	seccomp_mode_parse(const char *word);	/* -1 if unknown */

/* Each process's filter; 0 on success, -1 (logged) on failure. */
int	apid_seccomp_load(enum seccomp_mode);
int	managerd_seccomp_load(enum seccomp_mode);
int	proxy_seccomp_load(enum seccomp_mode);

#endif /* AS_SECCOMP_H */
