/*
 * Turning a process's syscall table into a kill-by-default seccomp filter:
 * the base set every process needs because libc needs it, the process's
 * own table on top, and the three ways a forbidden call can end (kill,
 * trap with a message, log).  The policies live in the *_seccomp.c files.
 */
#include <sys/mman.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* Ours, which includes libseccomp's (see the comment there). */
#include <seccomp.h>

#include "log.h"

/* Highest syscall number the trap handler names; others print as "?". */
#define TRAP_NAMES_MAX	1024

/*
 * What every process needs however little it does: glibc's own calls for
 * memory, time, locks and signal return, plus writing log lines and exit.
 * Measured on glibc 2.36 (Debian 12); see PRIVSEP.md 3.1 for why each of
 * the version-sensitive ones is here.
 */
static const struct seccomp_rule base_rules[] = {
	/* malloc; nothing may become executable (no new code, ever). */
	SC_ALLOW(brk),
	SC_ALLOW_ARG(mmap, SC_ARG_MASKED_EQ(2, PROT_EXEC, 0)),
	SC_ALLOW_ARG(mmap2, SC_ARG_MASKED_EQ(2, PROT_EXEC, 0)),
	SC_ALLOW_ARG(mprotect, SC_ARG_MASKED_EQ(2, PROT_EXEC, 0)),
	SC_ALLOW(munmap),
	SC_ALLOW(mremap),
	SC_ALLOW(madvise),
	/* The vDSO falls back to real calls on some clocksources (3.5). */
	SC_ALLOW(clock_gettime),
	SC_ALLOW(clock_gettime64),
	SC_ALLOW(gettimeofday),
	SC_ALLOW(time),
	SC_ALLOW(clock_nanosleep),
	SC_ALLOW(clock_nanosleep_time64),
	SC_ALLOW(nanosleep),
	/* glibc locks (stdio, malloc) and per-thread rseq (glibc 2.35). */
	SC_ALLOW(futex),
	SC_ALLOW(futex_time64),
	SC_ALLOW(rseq),
	/* Returning from a signal handler, restarting an interrupted call. */
	SC_ALLOW(rt_sigreturn),
	SC_ALLOW(sigreturn),
	SC_ALLOW(restart_syscall),
	/* json-c's hash seed and arc4random. */
	SC_ALLOW(getrandom),
	/* glibc's qsort asks for the memory size before a large sort. */
	SC_ALLOW(sysinfo),
	/* fstat is newfstatat(fd, "", AT_EMPTY_PATH) since glibc 2.33. */
	SC_ALLOW(fstat),
	SC_ALLOW(fstat64),
	SC_ALLOW(newfstatat),
	SC_ALLOW(fstatat64),
	/* Log lines on stderr, closing descriptors, leaving. */
	SC_ALLOW(write),
	SC_ALLOW(close),
	SC_ALLOW(getpid),
	SC_ALLOW(exit),
	SC_ALLOW(exit_group),
	/* glibc retries clone only on ENOSYS; clone itself stays forbidden. */
	SC_DENY(clone3, ENOSYS),
};

#ifdef AS_SANITIZERS
/*
 * A --enable-sanitizers build only.  ASan's runtime sets an alternate
 * signal stack for each thread and takes it down when the thread (the
 * process) ends, which under these filters would be the last call.  A
 * report reads /proc/self/maps again, and UBSan's first one starts its
 * runtime (readlink of /proc/self/exe, open of /proc/self/cmdline and
 * environ): the runtimes make those calls with open and readlink, which
 * our programs never do (glibc opens with openat), and do without them,
 * so here they fail instead of killing the process before its report is
 * written.  Added after the process's own tables, whose lines win.
 */
static const struct seccomp_rule sanitizer_rules[] = {
	SC_ALLOW(sigaltstack),
	SC_DENY(open, EACCES),
	SC_DENY(readlink, EACCES),
};

/*
 * The runtimes' defaults in that build, for what the filters forbid:
 * LeakSanitizer's check at exit stops the process with a ptrace tracer,
 * symbolizing a stack opens the binary (openat) or forks
 * llvm-symbolizer, and colour asks the terminal (ioctl).  A report's
 * frames are module+offset then (addr2line -e module offset).
 * ASAN_OPTIONS and UBSAN_OPTIONS override them, but UBSan started under
 * a filter cannot read the environment.
 */
const char	*__asan_default_options(void);
const char	*__ubsan_default_options(void);

const char *
__asan_default_options(void)
{
	return "detect_leaks=0:symbolize=0:color=never";
}

const char *
__ubsan_default_options(void)
{
	return "print_stacktrace=1:symbolize=0:color=never";
}
#endif

/* Filled before the filter is loaded; the SIGSYS handler only reads. */
static char		 trap_procname[32];
static char		*trap_names[TRAP_NAMES_MAX];
static int		 trap_ready;

int
seccomp_mode_parse(const char *word)
{
	if (word == NULL || *word == '\0' || strcasecmp(word, "kill") == 0)
		return SECCOMP_MODE_KILL;
	if (strcasecmp(word, "trap") == 0)
		return SECCOMP_MODE_TRAP;
	if (strcasecmp(word, "log") == 0)
		return SECCOMP_MODE_LOG;
	return -1;
}

static size_t
trap_append(char *buf, size_t len, size_t size, const char *s)
{
	while (*s != '\0' && len < size)
		buf[len++] = *s++;
	return len;
}

static size_t
trap_append_number(char *buf, size_t len, size_t size, unsigned int nr)
{
	char	 digits[16], *p = digits + sizeof(digits);

	*--p = '\0';
	do {
		*--p = '0' + nr % 10;
		nr /= 10;
	} while (nr != 0 && p > digits);
	return trap_append(buf, len, size, p);
}

/* Async-signal-safe: only write(2) and _exit(2), no stdio, no malloc. */
static void
trap_handler(int sig, siginfo_t *si, void *ctx)
{
	char		 buf[256];
	const char	*name = NULL;
	size_t		 len = 0;

	(void)sig;
	(void)ctx;
	if (si->si_syscall >= 0 && si->si_syscall < TRAP_NAMES_MAX)
		name = trap_names[si->si_syscall];
	len = trap_append(buf, len, sizeof(buf), trap_procname);
	len = trap_append(buf, len, sizeof(buf), ": forbidden system call ");
	len = trap_append_number(buf, len, sizeof(buf),
	    (unsigned int)si->si_syscall);
	len = trap_append(buf, len, sizeof(buf), " (");
	len = trap_append(buf, len, sizeof(buf), name != NULL ? name : "?");
	len = trap_append(buf, len, sizeof(buf), ")\n");
	(void)write(STDERR_FILENO, buf, len);
	_exit(128 + SIGSYS);
}

/*
 * Resolve every syscall name now (libseccomp allocates), and install the
 * handler while sigaction is still allowed.
 */
static int
trap_prepare(const char *procname)
{
	struct sigaction	 sa;
	sigset_t		 set;
	int			 nr;

	snprintf(trap_procname, sizeof(trap_procname), "%s", procname);
	/*
	 * A second filter in a forked child (the archive worker's jobs):
	 * the handler and the names are there already, and the first
	 * filter need not allow sigaction.
	 */
	if (trap_ready)
		return 0;
	for (nr = 0; nr < TRAP_NAMES_MAX; nr++) {
		if (trap_names[nr] == NULL)
			trap_names[nr] = seccomp_syscall_resolve_num_arch(
			    SCMP_ARCH_NATIVE, nr);
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = trap_handler;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSYS, &sa, NULL) == -1) {
		log_warn("sigaction SIGSYS");
		return -1;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGSYS);
	if (sigprocmask(SIG_UNBLOCK, &set, NULL) == -1) {
		log_warn("sigprocmask");
		return -1;
	}
	trap_ready = 1;
	return 0;
}

static int
add_rules(scmp_filter_ctx ctx, const char *procname,
    const struct seccomp_rule *rules, size_t n)
{
	const struct seccomp_rule	*r;
	uint32_t			 action;
	size_t				 i;
	int				 rc;

	for (i = 0; i < n; i++) {
		r = &rules[i];
		action = r->errnum == 0 ? SCMP_ACT_ALLOW :
		    SCMP_ACT_ERRNO((uint32_t)r->errnum);
		/* A call this architecture lacks is a no-op (rc 0). */
		rc = seccomp_rule_add_array(ctx, action, r->syscall, r->argc,
		    r->args);
		if (rc < 0) {
			log_warnx("%s: seccomp rule for %s: %s", procname,
			    r->name, strerror(-rc));
			return -1;
		}
	}
	return 0;
}

int
seccomp_install(const char *procname, const struct seccomp_rule *rules,
    size_t n, enum seccomp_mode mode)
{
	struct seccomp_table	 t = { rules, n };

	return seccomp_install_tables(procname, &t, 1, mode);
}

int
seccomp_install_tables(const char *procname, const struct seccomp_table *t,
    size_t ntables, enum seccomp_mode mode)
{
	scmp_filter_ctx	 ctx;
	uint32_t	 deny;
	unsigned int	 api;
	size_t		 i;
	int		 rc, ret = -1;

	/* KILL_PROCESS and LOG need API level 3 (Linux 4.14). */
	api = seccomp_api_get();
	switch (mode) {
	case SECCOMP_MODE_KILL:
		deny = api >= 3 ? SCMP_ACT_KILL_PROCESS : SCMP_ACT_KILL;
		break;
	case SECCOMP_MODE_TRAP:
		deny = SCMP_ACT_TRAP;
		break;
	case SECCOMP_MODE_LOG:
		if (api < 3) {
			log_warnx("%s: this kernel cannot log seccomp "
			    "actions", procname);
			return -1;
		}
		deny = SCMP_ACT_LOG;
		break;
	default:
		log_warnx("%s: unknown seccomp mode %d", procname, (int)mode);
		return -1;
	}

	if ((ctx = seccomp_init(deny)) == NULL) {
		log_warnx("%s: seccomp_init failed", procname);
		return -1;
	}
	/* A call through another ABI (int 0x80, x32) kills the process too. */
	if ((rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH,
	    api >= 3 ? SCMP_ACT_KILL_PROCESS : SCMP_ACT_KILL)) < 0) {
		log_warnx("%s: seccomp bad-arch action: %s", procname,
		    strerror(-rc));
		goto done;
	}
	if (add_rules(ctx, procname, base_rules, SC_NELEM(base_rules)) == -1)
		goto done;
	for (i = 0; i < ntables; i++) {
		if (add_rules(ctx, procname, t[i].rules, t[i].n) == -1)
			goto done;
	}
#ifdef AS_SANITIZERS
	/* A call a table names keeps its first action (libseccomp). */
	if (add_rules(ctx, procname, sanitizer_rules,
	    SC_NELEM(sanitizer_rules)) == -1)
		goto done;
#endif
	if (mode == SECCOMP_MODE_TRAP && trap_prepare(procname) == -1)
		goto done;
	/* Said before loading: the filter may forbid what logging does. */
	if (mode != SECCOMP_MODE_KILL)
		log_warnx("seccomp filter in %s mode: never use this in "
		    "production", mode == SECCOMP_MODE_TRAP ? "trap" : "log");
	if ((rc = seccomp_load(ctx)) < 0) {
		log_warnx("%s: seccomp_load: %s", procname, strerror(-rc));
		goto done;
	}
	ret = 0;
 done:
	seccomp_release(ctx);
	return ret;
}
