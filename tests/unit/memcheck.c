/*
 * Test programs that load the real seccomp filters link this file with
 * -Wl,--wrap=seccomp_load, so that they also run under valgrind's
 * memcheck (tests/unit/memcheck.sh): there each filter is built in full,
 * every table line checked by libseccomp, but not loaded.
 *
 * Valgrind runs the program's code on a JIT in the same process and
 * makes system calls of its own around each of the program's:
 * rt_sigprocmask before and after every one, gettid, a read and a write
 * on its scheduler's pipe, and mmap with PROT_EXEC for each block of
 * code it translates.  No filter of ours allows those, so the call
 * after the load killed the process with SIGSYS (strace -f shows
 * prctl(PR_SET_SECCOMP) then rt_sigprocmask, then the kill).  The
 * production programs never link this; the tests whose subject is the
 * kill itself skip under valgrind (SKIP_UNDER_MEMCHECK) and run, filter
 * loaded, in the plain and the sanitizer runs of make check.
 */
#include <stdint.h>

#include <seccomp.h>

#include "memcheck.h"

int	__real_seccomp_load(const scmp_filter_ctx);
int	__wrap_seccomp_load(const scmp_filter_ctx);

int
__wrap_seccomp_load(const scmp_filter_ctx ctx)
{
	if (under_memcheck())
		return 0;
	return __real_seccomp_load(ctx);
}
