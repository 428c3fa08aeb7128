/*
 * agent-sandbox-mcp's system call allowlist: the clients' shared table
 * (client_seccomp.c) and nothing more, since every tool is a REST call
 * and MCP messages come and go on stdin and stdout.  As a pledge line,
 * pledge("stdio inet", NULL) with inet only TCP.  Loaded after the
 * arguments and the environment are read and the server's name is
 * resolved, before the first line of stdin.  Measured with strace -f
 * over tests/integration/test_mcp.py.
 */
#include "client_seccomp.h"

int
mcp_seccomp_load(enum seccomp_mode mode)
{
	return client_seccomp_install("agent-sandbox-mcp", NULL, 0, mode);
}
