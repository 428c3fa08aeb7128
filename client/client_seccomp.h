/*
 * The clients' system call filters: agent-sandbox-mcp's (mcp_seccomp.c)
 * and the agent-sandbox verbs' (cli_seccomp.c), on a table both share
 * (client_seccomp.c) and built by the daemons' code (common/seccomp.c).
 * Each client resolves the server's name before it loads its filter
 * (rest_client_resolve()).
 */
#ifndef AS_CLIENT_SECCOMP_H
#define AS_CLIENT_SECCOMP_H

#include "seccomp.h"

/* AGENT_SANDBOX_SECCOMP's mode; -1 (said on stderr) if unknown. */
int	client_seccomp_mode(const char *progname);

/* The shared table (REST calls, stdio) plus a program's own rules. */
int	client_seccomp_install(const char *progname,
	    const struct seccomp_rule *, size_t, enum seccomp_mode);

int	mcp_seccomp_load(enum seccomp_mode);
/*
 * The CLI's filter, with what one verb needs on top: open, create,
 * rename and remove local files (cp), or put the terminal in raw mode,
 * read its size and catch signals (attach and shell).
 */
#define CLI_SECCOMP_FILES	0x1
#define CLI_SECCOMP_TTY		0x2
int	cli_seccomp_load(enum seccomp_mode, int what);

#endif /* AS_CLIENT_SECCOMP_H */
