/*
 * Syscall filters.  Each daemon has one allowlist table in its own
 * <process>_seccomp.c; this file has the shared machinery that turns a
 * table into a kill-by-default filter.
 */
#ifndef AS_SECCOMP_H
#define AS_SECCOMP_H

#include <stddef.h>

/*
 * libseccomp's header has the same name as this one.  This file is found
 * through -I common, so include_next reaches the library's; a file in
 * common/ itself must include this one as <seccomp.h>, not "seccomp.h".
 */
#include_next <seccomp.h>

/* What a forbidden system call does (AGENT_SANDBOX_SECCOMP). */
enum seccomp_mode {
	SECCOMP_MODE_KILL = 0,	/* kill the process: the default, used in CI */
	SECCOMP_MODE_TRAP,	/* print the call's name on stderr, then exit */
	SECCOMP_MODE_LOG,	/* allow, but log to the kernel audit log */
};

/* "kill", "trap" or "log"; NULL or "" is kill; -1 if unknown. */
int	seccomp_mode_parse(const char *word);

/* Each process's filter; 0 on success, -1 (logged) on failure. */
int	apid_seccomp_load(enum seccomp_mode);
int	managerd_seccomp_load(enum seccomp_mode);
int	proxy_seccomp_load(enum seccomp_mode);
/* archive-worker: the zygote's, and each job's on top of it. */
int	worker_seccomp_load(enum seccomp_mode);
int	job_seccomp_load(enum seccomp_mode);
int	egress_seccomp_load(enum seccomp_mode);

/*
 * One line of a process's table: a system call that is allowed (errnum 0)
 * or fails with errnum instead of killing, optionally only when up to
 * three argument comparisons all hold.  Several lines for one call are
 * alternatives.  A call this architecture lacks has a negative number
 * from SCMP_SYS() and its line has no effect, so list every form (poll
 * and ppoll, epoll_wait and epoll_pwait).
 */
struct seccomp_rule {
	int			 syscall;	/* SCMP_SYS(name) */
	const char		*name;
	int			 errnum;	/* 0: allow */
	unsigned int		 argc;
	struct scmp_arg_cmp	 args[3];
};

/* Argument comparisons for SC_ALLOW_ARG; n counts from 0. */
#define SC_ARG_EQ(n, v)		{ (n), SCMP_CMP_EQ, (v), 0 }
#define SC_ARG_MASKED_EQ(n, mask, v) \
	{ (n), SCMP_CMP_MASKED_EQ, (mask), (v) }

#define SC_ALLOW(nm) \
	{ SCMP_SYS(nm), #nm, 0, 0, { { 0, 0, 0, 0 } } }
#define SC_ALLOW_ARG(nm, a) \
	{ SCMP_SYS(nm), #nm, 0, 1, { a } }
#define SC_ALLOW_ARG2(nm, a, b) \
	{ SCMP_SYS(nm), #nm, 0, 2, { a, b } }
#define SC_ALLOW_ARG3(nm, a, b, c) \
	{ SCMP_SYS(nm), #nm, 0, 3, { a, b, c } }
#define SC_DENY(nm, err) \
	{ SCMP_SYS(nm), #nm, (err), 0, { { 0, 0, 0, 0 } } }

#define SC_NELEM(t)		(sizeof(t) / sizeof((t)[0]))

/*
 * Build the filter from the shared base set (memory, time, exit, signal
 * return: what libc itself needs) plus the process's table, and load it.
 * Sets no_new_privs.  0 on success; -1 (logged) on failure.
 */
int	seccomp_install(const char *procname, const struct seccomp_rule *,
	    size_t nrules, enum seccomp_mode);

/*
 * The same from several tables, whose lines add up: a call one table
 * allows with an argument check and another without any is allowed.
 */
struct seccomp_table {
	const struct seccomp_rule	*rules;
	size_t				 n;
};
int	seccomp_install_tables(const char *procname,
	    const struct seccomp_table *, size_t ntables, enum seccomp_mode);

/*
 * The children's tables, for the filter of managerd's spawner: a filter
 * outlives fork and exec, so the spawner's must let its children do
 * everything their own filters allow (managerd/spawner_seccomp.c).
 */
struct seccomp_table	apid_seccomp_table(void);
struct seccomp_table	proxy_seccomp_table(void);
/*
 * dockerd-proxy's Docker endpoint family (AF_UNIX by default), set before
 * proxy_seccomp_load: socket(2) is allowed for that one family only.
 */
void	proxy_seccomp_family(int);
/* archive-worker's zygote: each job's own filter is only stricter. */
struct seccomp_table	worker_seccomp_table(void);
/* egress-proxy: inet stream sockets out, UDP to its nameservers. */
struct seccomp_table	egress_seccomp_table(void);
int	spawner_seccomp_load(const struct seccomp_table *children, size_t n,
	    enum seccomp_mode);

#endif /* AS_SECCOMP_H */
