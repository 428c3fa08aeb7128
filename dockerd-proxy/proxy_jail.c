/*
 * Locking dockerd-proxy in with the Docker socket and nothing else.
 * seccomp cannot see the path given to connect(2), and Landlock cannot
 * restrict connecting to a pathname socket on the kernels we run on
 * (PRIVSEP.md 2.3, 3.8), so the proxy gets a root directory of its own:
 * a read-only tmpfs in a private mount namespace, holding one file, the
 * real socket bind-mounted at /docker.sock.  A private network namespace
 * also hides every abstract unix socket and every network address.
 *
 * Behind a socket proxy on TCP (DOCKER_HOST=tcp://) the proxy must reach
 * the host's network, so there is no private network namespace: the same
 * empty read-only root, without a socket in it, and the privsep user with
 * no group to borrow.  What holds it to the one endpoint then is Landlock
 * (TCP connect to that port only, no bind: proxy.c) and seccomp (sockets
 * of that address family only, no unix socket: proxy_seccomp.c); see
 * docs/security.md.
 */
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "privdrop.h"
#include "proxy.h"

#define JAIL_SOCKET	"/docker.sock"

/* Enough for one empty file and its directory; nothing else goes there. */
#define JAIL_TMPFS_OPTS	"size=16k,nr_inodes=8,mode=0755"

#define JAIL_RO_FLAGS	(MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)

static int
jail_fail(char *err, size_t errlen, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int
jail_fail(char *err, size_t errlen, int errnum, const char *fmt, ...)
{
	va_list	 ap;
	size_t	 n;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	n = strlen(err);
	if (errnum != 0 && n < errlen)
		snprintf(err + n, errlen - n, ": %s", strerror(errnum));
	return -1;
}

/* The chroot directory is only a mount point; make it if it is missing. */
static int
jail_mountpoint(const char *dir, char *err, size_t errlen)
{
	struct stat	 st;

	if (mkdir(dir, 0755) == -1 && errno != EEXIST)
		return jail_fail(err, errlen, errno, "mkdir %s", dir);
	if (stat(dir, &st) == -1)
		return jail_fail(err, errlen, errno, "%s", dir);
	if (!S_ISDIR(st.st_mode))
		return jail_fail(err, errlen, 0, "%s is not a directory", dir);
	return 0;
}

/*
 * The socket, bind-mounted read-only at JAIL_SOCKET in the new root, so
 * even uid 0 cannot chmod the host's socket from in here.
 */
static int
jail_bind_socket(const char *sock, const char *dir, char *err, size_t errlen)
{
	char	 target[PATH_MAX];
	int	 fd;

	if ((size_t)snprintf(target, sizeof(target), "%s%s", dir,
	    JAIL_SOCKET) >= sizeof(target))
		return jail_fail(err, errlen, 0, "%s: path too long", dir);
	if ((fd = open(target, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    0600)) == -1)
		return jail_fail(err, errlen, errno, "%s", target);
	close(fd);
	if (mount(sock, target, "none", MS_BIND, NULL) == -1)
		return jail_fail(err, errlen, errno, "bind %s", sock);
	if (mount("none", target, "none", MS_REMOUNT | MS_BIND | JAIL_RO_FLAGS,
	    NULL) == -1)
		return jail_fail(err, errlen, errno, "read-only %s", target);
	return 0;
}

/*
 * Build the new root on dir, inside namespaces nobody else shares: with
 * the socket sock in it, or (sock NULL, TCP) empty and on the host's
 * network.
 */
static int
jail_build(const char *sock, const char *dir, char *err, size_t errlen)
{
	int	 ns = sock != NULL ? CLONE_NEWNS | CLONE_NEWNET : CLONE_NEWNS;

	if (unshare(ns) == -1)
		return jail_fail(err, errlen, errno, "unshare");
	/* Nothing we mount may propagate back to the host. */
	if (mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) == -1)
		return jail_fail(err, errlen, errno, "making / private");
	if (mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
	    JAIL_TMPFS_OPTS) == -1)
		return jail_fail(err, errlen, errno, "tmpfs on %s", dir);
	if (sock != NULL && jail_bind_socket(sock, dir, err, errlen) == -1)
		return -1;
	if (mount("none", dir, "none", MS_REMOUNT | JAIL_RO_FLAGS, NULL) == -1)
		return jail_fail(err, errlen, errno, "read-only %s", dir);
	if (chroot(dir) == -1)
		return jail_fail(err, errlen, errno, "chroot %s", dir);
	if (chdir("/") == -1)
		return jail_fail(err, errlen, errno, "chdir /");
	return 0;
}

/*
 * Docker's socket is usually root:docker 0660: become the privsep user
 * in that group.  If the group cannot connect (or is root's), only uid 0
 * can, so stay uid 0 without a single capability.
 */
static int
jail_drop(uid_t uid, gid_t gid, char *err, size_t errlen)
{
	struct stat	 st;
	char		 why[256];
	const mode_t	 grw = S_IRGRP | S_IWGRP, orw = S_IROTH | S_IWOTH;

	if (stat(JAIL_SOCKET, &st) == -1)
		return jail_fail(err, errlen, errno, "%s", JAIL_SOCKET);
	if (st.st_gid != 0 && (st.st_mode & grw) == grw)
		gid = st.st_gid;
	else if ((st.st_mode & orw) != orw) {
		if (privdrop_clear_caps(why, sizeof(why)) == -1)
			return jail_fail(err, errlen, 0, "%s", why);
		return 0;
	}
	if (privdrop_setids(uid, gid, why, sizeof(why)) == -1)
		return jail_fail(err, errlen, 0, "%s", why);
	return 0;
}

/*
 * A failure after unshare leaves the process half confined; the caller
 * exits (proxy.c calls fatalx), so nothing is undone here.
 */
int
proxy_jail(const char *docker_socket, const char *chroot_dir,
    const char *privsep_user, char *jailed_path, size_t pathlen,
    char *err, size_t errlen)
{
	char		 real[PATH_MAX];
	struct stat	 st;
	uid_t		 uid;
	gid_t		 gid;

	if (!privdrop_is_root()) {
		if (strlcpy(jailed_path, docker_socket, pathlen) >= pathlen)
			return jail_fail(err, errlen, 0, "%s: path too long",
			    docker_socket);
		return 1;
	}
	if (strlcpy(jailed_path, JAIL_SOCKET, pathlen) >= pathlen)
		return jail_fail(err, errlen, 0, "no room for the path");

	/* Everything that needs the host's filesystem comes first. */
	if (realpath(docker_socket, real) == NULL)
		return jail_fail(err, errlen, errno, "%s", docker_socket);
	if (stat(real, &st) == -1)
		return jail_fail(err, errlen, errno, "%s", real);
	if (!S_ISSOCK(st.st_mode))
		return jail_fail(err, errlen, 0, "%s is not a socket", real);
	if (privdrop_lookup_user(privsep_user, &uid, &gid, err, errlen) == -1)
		return -1;
	if (jail_mountpoint(chroot_dir, err, errlen) == -1 ||
	    jail_build(real, chroot_dir, err, errlen) == -1 ||
	    jail_drop(uid, gid, err, errlen) == -1)
		return -1;
	if (privdrop_no_new_privs() == -1)
		return jail_fail(err, errlen, errno, "no_new_privs");
	return 0;
}

/*
 * TCP: the empty root on chroot_dir in a private mount namespace, as
 * privsep_user.  1 when not root (nothing changed), 0, or -1 with err.
 */
int
proxy_jail_tcp(const char *chroot_dir, const char *privsep_user, char *err,
    size_t errlen)
{
	char	 why[256];
	uid_t	 uid;
	gid_t	 gid;

	if (!privdrop_is_root())
		return 1;
	if (privdrop_lookup_user(privsep_user, &uid, &gid, err, errlen) == -1)
		return -1;
	if (jail_mountpoint(chroot_dir, err, errlen) == -1 ||
	    jail_build(NULL, chroot_dir, err, errlen) == -1)
		return -1;
	if (privdrop_setids(uid, gid, why, sizeof(why)) == -1)
		return jail_fail(err, errlen, 0, "%s", why);
	if (privdrop_no_new_privs() == -1)
		return jail_fail(err, errlen, errno, "no_new_privs");
	return 0;
}
