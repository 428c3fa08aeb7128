/*
 * Giving up privileges on Linux: chroot, user switch, capabilities,
 * no_new_privs and Landlock.  Every step is verified after it is taken,
 * because a privilege drop that silently did nothing looks exactly like
 * one that worked.  No libcap: the raw capget/capset and Landlock system
 * calls are few and stable.
 */
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include <linux/capability.h>
#include <linux/landlock.h>
#include <linux/securebits.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "privdrop.h"

/* Landlock rights newer than the kernel headers we build against. */
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER	(1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE	(1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV	(1ULL << 15)
#endif
#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION	(1U << 0)
#endif

/* Every filesystem right of Landlock ABI 1. */
#define LL_FS_ABI1	((LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1)

/*
 * What managerd may do under its data directory: read, write, create and
 * remove regular files and directories, and rename between directories.
 * Not: execute, device nodes, sockets, fifos, symlinks, device ioctls.
 */
#define LL_FS_DATADIR	(LANDLOCK_ACCESS_FS_READ_FILE | \
	LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_DIR | \
	LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE | \
	LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG | \
	LANDLOCK_ACCESS_FS_REFER | LANDLOCK_ACCESS_FS_TRUNCATE)

/*
 * Landlock ABI 4's network rights, spelt out here: the system's
 * <linux/landlock.h> may be older than the running kernel.
 */
#define LL_NET_ABI		4
#define LL_NET_BIND_TCP		(1ULL << 0)
#define LL_NET_CONNECT_TCP	(1ULL << 1)
#define LL_RULE_NET_PORT	2

struct ll_ruleset_attr_net {
	__u64	 handled_access_fs;
	__u64	 handled_access_net;
};

struct ll_net_port_attr {
	__u64	 allowed_access;
	__u64	 port;
} __attribute__((packed));

/* Beyond every capability any kernel has had; ends the loop for sure. */
#define CAP_LOOP_LIMIT	256

static int
fail(char *err, size_t errlen, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Write the reason (with strerror when errnum != 0) and return -1. */
static int
fail(char *err, size_t errlen, int errnum, const char *fmt, ...)
{
	va_list	 ap;
	size_t	 n;

	if (err == NULL || errlen == 0)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	n = strlen(err);
	if (errnum != 0 && n < errlen)
		snprintf(err + n, errlen - n, ": %s", strerror(errnum));
	errno = errnum != 0 ? errnum : EPERM;
	return -1;
}

int
privdrop_is_root(void)
{
	return geteuid() == 0;
}

static int
caps_get(struct __user_cap_data_struct data[2])
{
	struct __user_cap_header_struct	 hdr;

	memset(&hdr, 0, sizeof(hdr));
	hdr.version = _LINUX_CAPABILITY_VERSION_3;
	memset(data, 0, 2 * sizeof(*data));
	return (int)syscall(SYS_capget, &hdr, data);
}

/* 1 if the effective set holds cap, 0 if not, -1 on error. */
static int
caps_have(int cap)
{
	struct __user_cap_data_struct	 data[2];

	if (caps_get(data) == -1)
		return -1;
	return (data[CAP_TO_INDEX(cap)].effective & CAP_TO_MASK(cap)) != 0;
}

/* Check that the effective, permitted and inheritable sets are empty. */
static int
caps_verify_empty(char *err, size_t errlen)
{
	struct __user_cap_data_struct	 data[2];
	int				 i;

	if (caps_get(data) == -1)
		return fail(err, errlen, errno, "capget");
	for (i = 0; i < 2; i++) {
		if (data[i].effective != 0 || data[i].permitted != 0 ||
		    data[i].inheritable != 0)
			return fail(err, errlen, 0,
			    "capabilities remain after dropping them");
	}
	return 0;
}

/*
 * Empty the bounding set but for the capabilities in keep, and the ambient
 * set.  Needs CAP_SETPCAP.
 */
static int
caps_bound(uint64_t keep, char *err, size_t errlen)
{
	int	 cap;

	/* PR_CAPBSET_READ fails with EINVAL past the kernel's last cap. */
	for (cap = 0; cap < CAP_LOOP_LIMIT; cap++) {
		if (prctl(PR_CAPBSET_READ, (unsigned long)cap, 0, 0, 0) == -1) {
			if (errno == EINVAL)
				break;
			return fail(err, errlen, errno, "PR_CAPBSET_READ %d",
			    cap);
		}
		if (cap < 64 && (keep & (1ULL << cap)) != 0)
			continue;
		if (prctl(PR_CAPBSET_DROP, (unsigned long)cap, 0, 0, 0) == -1)
			return fail(err, errlen, errno, "PR_CAPBSET_DROP %d",
			    cap);
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) == -1 &&
	    errno != EINVAL)
		return fail(err, errlen, errno, "PR_CAP_AMBIENT_CLEAR_ALL");
	return 0;
}

/*
 * The sets a new program would start from: lock root out of regaining
 * capabilities through execve (SECBIT_NOROOT), forbid ambient ones, and
 * empty the bounding set.  Needs CAP_SETPCAP, so it runs while we are
 * still root; without that capability there is nothing left to lock.
 */
static int
caps_drop_inheritance(char *err, size_t errlen)
{
	unsigned long	 bits;
	int		 rc;

	if ((rc = caps_have(CAP_SETPCAP)) == -1)
		return fail(err, errlen, errno, "capget");
	if (rc == 0)
		return 0;
	bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED |
	    SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED |
	    SECBIT_KEEP_CAPS_LOCKED;
	rc = prctl(PR_GET_SECUREBITS, 0, 0, 0, 0);
	if (rc == -1 || prctl(PR_SET_SECUREBITS, (unsigned long)rc | bits,
	    0, 0, 0) == -1)
		return fail(err, errlen, errno, "PR_SET_SECUREBITS");
	return caps_bound(0, err, errlen);
}

int
privdrop_clear_caps(char *err, size_t errlen)
{
	struct __user_cap_header_struct	 hdr;
	struct __user_cap_data_struct	 data[2];

	if (caps_drop_inheritance(err, errlen) == -1)
		return -1;
	memset(&hdr, 0, sizeof(hdr));
	hdr.version = _LINUX_CAPABILITY_VERSION_3;
	memset(data, 0, sizeof(data));
	if (syscall(SYS_capset, &hdr, data) == -1)
		return fail(err, errlen, errno, "capset");
	return caps_verify_empty(err, errlen);
}

/* The set as capset(2) takes it, 32 capabilities per word. */
static void
caps_put(struct __user_cap_data_struct data[2], uint64_t permitted,
    uint64_t effective)
{
	memset(data, 0, 2 * sizeof(*data));
	data[0].permitted = (uint32_t)permitted;
	data[1].permitted = (uint32_t)(permitted >> 32);
	data[0].effective = (uint32_t)effective;
	data[1].effective = (uint32_t)(effective >> 32);
}

int
privdrop_keep_caps(uint64_t bounding, uint64_t effective, char *err,
    size_t errlen)
{
	struct __user_cap_header_struct	 hdr;
	struct __user_cap_data_struct	 want[2], got[2];

	if (caps_bound(bounding, err, errlen) == -1)
		return -1;
	memset(&hdr, 0, sizeof(hdr));
	hdr.version = _LINUX_CAPABILITY_VERSION_3;
	caps_put(want, bounding | effective, effective);
	if (syscall(SYS_capset, &hdr, want) == -1)
		return fail(err, errlen, errno, "capset");
	if (caps_get(got) == -1)
		return fail(err, errlen, errno, "capget");
	if (memcmp(want, got, sizeof(want)) != 0)
		return fail(err, errlen, 0, "capabilities other than those "
		    "kept remain");
	return 0;
}

int
privdrop_setids(uid_t uid, gid_t gid, char *err, size_t errlen)
{
	uid_t	 ruid, euid, suid;
	gid_t	 rgid, egid, sgid, groups[2];

	if (caps_drop_inheritance(err, errlen) == -1)
		return -1;
	if (setgroups(1, &gid) == -1)
		return fail(err, errlen, errno, "setgroups");
	if (setresgid(gid, gid, gid) == -1)
		return fail(err, errlen, errno, "setresgid %u", (unsigned)gid);
	if (setresuid(uid, uid, uid) == -1)
		return fail(err, errlen, errno, "setresuid %u", (unsigned)uid);

	if (getresuid(&ruid, &euid, &suid) == -1 ||
	    getresgid(&rgid, &egid, &sgid) == -1)
		return fail(err, errlen, errno, "getresuid");
	if (ruid != uid || euid != uid || suid != uid ||
	    rgid != gid || egid != gid || sgid != gid)
		return fail(err, errlen, 0, "user switch to %u:%u did not "
		    "take", (unsigned)uid, (unsigned)gid);
	if (getgroups(2, groups) != 1 || groups[0] != gid)
		return fail(err, errlen, 0, "supplementary groups remain");
	if (uid == 0)
		return 0;
	/* Leaving uid 0 emptied the capability sets; make sure. */
	if (setuid(0) != -1 || (gid != 0 && setgid(0) != -1))
		return fail(err, errlen, 0, "could regain root after the "
		    "user switch");
	return caps_verify_empty(err, errlen);
}

/* By name, or by number when no such name exists. */
int
privdrop_lookup_user(const char *user, uid_t *uid, gid_t *gid, char *err,
    size_t errlen)
{
	struct passwd	*pw;
	const char	*errstr;
	long long	 n;

	errno = 0;
	if ((pw = getpwnam(user)) == NULL) {
		n = strtonum(user, 0, UINT_MAX - 1, &errstr);
		if (errstr == NULL)
			pw = getpwuid((uid_t)n);
	}
	if (pw == NULL)
		return fail(err, errlen, 0, "unknown user %s", user);
	if (pw->pw_uid == 0)
		return fail(err, errlen, 0, "user %s is root: it cannot "
		    "confine anything", user);
	*uid = pw->pw_uid;
	*gid = pw->pw_gid;
	return 0;
}

int
privdrop_chroot_user(const char *user, const char *dir, char *err,
    size_t errlen)
{
	struct stat	 st;
	uid_t		 uid;
	gid_t		 gid;
	int		 fd;

	/* The name service needs files we will not see after chroot. */
	if (privdrop_lookup_user(user, &uid, &gid, err, errlen) == -1)
		return -1;
	/* Check the very directory we enter, not its name twice. */
	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return fail(err, errlen, errno, "chroot directory %s", dir);
	if (fstat(fd, &st) == -1) {
		close(fd);
		return fail(err, errlen, errno, "fstat %s", dir);
	}
	if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
		close(fd);
		return fail(err, errlen, 0, "chroot directory %s must be "
		    "owned by root and not writable by group or others", dir);
	}
	if (fchdir(fd) == -1) {
		close(fd);
		return fail(err, errlen, errno, "chdir %s", dir);
	}
	close(fd);
	if (chroot(".") == -1)
		return fail(err, errlen, errno, "chroot %s", dir);
	if (chdir("/") == -1)
		return fail(err, errlen, errno, "chdir /");
	return privdrop_setids(uid, gid, err, errlen);
}

int
privdrop_no_new_privs(void)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		return -1;
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1) {
		errno = EPERM;
		return -1;
	}
	return 0;
}

/* The filesystem rights this kernel's Landlock ABI knows. */
static __u64
landlock_fs_rights(int abi)
{
	__u64	 rights = LL_FS_ABI1;

	if (abi >= 2)
		rights |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		rights |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		rights |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return rights;
}

/* The ABI version; 0 when the kernel has no Landlock; -1 on error. */
static int
landlock_abi(void)
{
	int	 abi;

	abi = (int)syscall(SYS_landlock_create_ruleset, NULL, 0,
	    LANDLOCK_CREATE_RULESET_VERSION);
	/* Not built in (ENOSYS) or not enabled at boot. */
	if (abi == -1 && (errno == ENOSYS || errno == EOPNOTSUPP))
		return 0;
	return abi;
}

static int
landlock_net_ruleset(int abi, unsigned int port, char *err, size_t errlen)
{
	struct ll_ruleset_attr_net	 attr;
	struct ll_net_port_attr		 rule;
	int				 ruleset, saved;

	memset(&attr, 0, sizeof(attr));
	attr.handled_access_fs = landlock_fs_rights(abi);
	attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
	ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr,
	    sizeof(attr), 0);
	if (ruleset == -1)
		return fail(err, errlen, errno, "landlock_create_ruleset");
	memset(&rule, 0, sizeof(rule));
	rule.allowed_access = LL_NET_CONNECT_TCP;
	rule.port = port;
	if (syscall(SYS_landlock_add_rule, ruleset, LL_RULE_NET_PORT, &rule,
	    0) == -1) {
		saved = errno;
		close(ruleset);
		return fail(err, errlen, saved, "landlock_add_rule port %u",
		    port);
	}
	return ruleset;
}

int
landlock_restrict_tcp(unsigned int port, char *err, size_t errlen)
{
	int	 abi, ruleset, saved;

	if ((abi = landlock_abi()) == -1)
		return fail(err, errlen, errno, "landlock ABI version");
	if (abi < LL_NET_ABI)
		return 1;
	if ((ruleset = landlock_net_ruleset(abi, port, err, errlen)) == -1)
		return -1;
	if (privdrop_no_new_privs() == -1 ||
	    syscall(SYS_landlock_restrict_self, ruleset, 0) == -1) {
		saved = errno;
		close(ruleset);
		return fail(err, errlen, saved, "landlock_restrict_self");
	}
	close(ruleset);
	return 0;
}

int
landlock_restrict(const char *rw_dir, char *err, size_t errlen)
{
	struct landlock_ruleset_attr		 attr;
	struct landlock_path_beneath_attr	 beneath;
	int					 abi, ruleset, saved;

	abi = (int)syscall(SYS_landlock_create_ruleset, NULL, 0,
	    LANDLOCK_CREATE_RULESET_VERSION);
	if (abi == -1) {
		/* Not built in (ENOSYS) or not enabled at boot. */
		if (errno == ENOSYS || errno == EOPNOTSUPP)
			return 1;
		return fail(err, errlen, errno, "landlock ABI version");
	}

	/* Handle every right the kernel knows: unhandled means allowed. */
	memset(&attr, 0, sizeof(attr));
	attr.handled_access_fs = landlock_fs_rights(abi);
	ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr,
	    sizeof(attr), 0);
	if (ruleset == -1)
		return fail(err, errlen, errno, "landlock_create_ruleset");

	if (rw_dir != NULL) {
		memset(&beneath, 0, sizeof(beneath));
		beneath.allowed_access = LL_FS_DATADIR &
		    attr.handled_access_fs;
		beneath.parent_fd = open(rw_dir,
		    O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (beneath.parent_fd == -1) {
			saved = errno;
			close(ruleset);
			return fail(err, errlen, saved, "landlock: %s", rw_dir);
		}
		if (syscall(SYS_landlock_add_rule, ruleset,
		    LANDLOCK_RULE_PATH_BENEATH, &beneath, 0) == -1) {
			saved = errno;
			close(beneath.parent_fd);
			close(ruleset);
			return fail(err, errlen, saved, "landlock_add_rule %s",
			    rw_dir);
		}
		close(beneath.parent_fd);
	}

	/* Without CAP_SYS_ADMIN, restrict_self requires no_new_privs. */
	if (privdrop_no_new_privs() == -1 ||
	    syscall(SYS_landlock_restrict_self, ruleset, 0) == -1) {
		saved = errno;
		close(ruleset);
		return fail(err, errlen, saved, "landlock_restrict_self");
	}
	close(ruleset);
	return 0;
}
