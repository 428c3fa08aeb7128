/*
 * Giving up privileges: chroot, user switch, capabilities, no_new_privs and
 * Landlock.  Callers run these after they opened everything they need and
 * before they read untrusted input.
 */
#ifndef AS_PRIVDROP_H
#define AS_PRIVDROP_H

#include <sys/types.h>

#include <stddef.h>

int	privdrop_is_root(void);

/*
 * Look up user (name or numeric uid), chroot into dir (which must be owned
 * by root and not writable by group or others), chdir("/"), then setgroups,
 * setresgid, setresuid.  On failure writes a reason into err and returns -1.
 */
int	privdrop_chroot_user(const char *user, const char *dir,
	    char *err, size_t errlen);

/* Switch to uid/gid with exactly one group (no chroot). */
int	privdrop_setids(uid_t uid, gid_t gid, char *err, size_t errlen);

/* Empty every capability set, the bounding set included; uid unchanged. */
int	privdrop_clear_caps(char *err, size_t errlen);

int	privdrop_no_new_privs(void);

/*
 * Landlock: with rw_dir NULL, forbid every filesystem access; otherwise
 * allow read/write/create/remove under rw_dir only.  Returns 0 when
 * enforced, 1 when the kernel has no Landlock (caller logs once), -1 on
 * error.
 */
int	landlock_restrict(const char *rw_dir, char *err, size_t errlen);

#endif /* AS_PRIVDROP_H */
