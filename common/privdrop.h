/*
 * Giving up privileges: chroot, user switch, capabilities, no_new_privs and
 * Landlock.  Callers run these after they opened everything they need and
 * before they read untrusted input.
 */
#ifndef AS_PRIVDROP_H
#define AS_PRIVDROP_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

int	privdrop_is_root(void);

/*
 * Look up user (name or numeric uid), chroot into dir (which must be owned
 * by root and not writable by group or others), chdir("/"), then setgroups,
 * setresgid, setresuid.  On failure writes a reason into err and returns -1.
 */
int	privdrop_chroot_user(const char *user, const char *dir,
	    char *err, size_t errlen);

/*
 * Look up user (name or numeric uid) now, while the name service still
 * works; a user whose uid is 0 is refused.
 */
int	privdrop_lookup_user(const char *user, uid_t *uid, gid_t *gid,
	    char *err, size_t errlen);

/*
 * Switch to uid/gid with exactly one group (no chroot).  As root it first
 * empties the bounding set and locks root out of regaining capabilities
 * (SECBIT_NOROOT); it checks that the switch took, cannot be undone, and
 * left no capability.
 */
int	privdrop_setids(uid_t uid, gid_t gid, char *err, size_t errlen);

/*
 * Empty every capability set, the bounding set and ambient set included,
 * and lock root out of regaining them through execve; uid unchanged.
 */
int	privdrop_clear_caps(char *err, size_t errlen);

/*
 * Keep only some capabilities, uid unchanged (root stays root): the
 * bounding set becomes bounding (what a program this process executes
 * can start with), the permitted set bounding and effective, the
 * effective set effective, the inheritable and ambient sets empty.
 * Bit n of a mask is capability n.  Needs CAP_SETPCAP.
 */
int	privdrop_keep_caps(uint64_t bounding, uint64_t effective, char *err,
	    size_t errlen);

int	privdrop_no_new_privs(void);

/*
 * Landlock: with rw_dir NULL, forbid every filesystem access; otherwise
 * allow read/write/create/remove under rw_dir only.  Returns 0 when
 * enforced, 1 when the kernel has no Landlock (caller logs once), -1 on
 * error.  Handles every right the running kernel's ABI knows, and sets
 * no_new_privs (which Landlock requires without CAP_SYS_ADMIN).
 */
int	landlock_restrict(const char *rw_dir, char *err, size_t errlen);
/*
 * Landlock for dockerd-proxy behind a socket proxy: no filesystem access,
 * no TCP bind, and TCP connect to port only (to any address: Landlock's
 * rules are per port).  0 when enforced, 1 when the kernel's Landlock
 * lacks the network rights (ABI < 4, or no Landlock at all), -1 on error.
 */
int	landlock_restrict_tcp(unsigned int port, char *err, size_t errlen);

#endif /* AS_PRIVDROP_H */
