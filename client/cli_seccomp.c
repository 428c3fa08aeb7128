/*
 * The agent-sandbox verbs' system call allowlist, loaded once the verb
 * and the environment are known and the server's name is resolved
 * (agent-sandbox.c), before the verb parses its options.  Not for serve,
 * which executes managerd, nor openapi, which makes no call.  Every verb
 * has the clients' shared table (client_seccomp.c): "stdio inet".  cp
 * also reads, creates and renames local files: "stdio inet rpath wpath
 * cpath fattr".  seccomp cannot see a path; what cp opens is what its
 * operands name.  Measured with strace -f over
 * tests/integration/test_cli.py.
 */
#include <sys/ioctl.h>

#include "client_seccomp.h"

static const struct seccomp_rule	cli_file_rules[] = {
	/* The source of an upload, a download's temporary file. */
	SC_ALLOW(open),
	SC_ALLOW(openat),
	SC_ALLOW(lseek),
	SC_ALLOW(_llseek),
	/* "-": the upload reads a duplicate of stdin. */
	SC_ALLOW(dup),
	/* The finished download replaces its target; a failed one goes. */
	SC_ALLOW(rename),
	SC_ALLOW(renameat),
	SC_ALLOW(renameat2),
	SC_ALLOW(unlink),
	SC_ALLOW(unlinkat),
	/* The mode a new file gets: the target's, or 0666 less umask. */
	SC_ALLOW(fchmod),
	SC_ALLOW(umask),
	/* stat(2) before glibc 2.33 (now newfstatat, in the base set). */
	SC_ALLOW(stat),
	SC_ALLOW(lstat),
};

int
cli_seccomp_load(enum seccomp_mode mode, int files)
{
	return client_seccomp_install("agent-sandbox", cli_file_rules,
	    files ? SC_NELEM(cli_file_rules) : 0, mode);
}
