/*
 * Privilege dropping, checked from inside forked children: after the
 * drop the process really is another user in another root, holds no
 * capability, cannot go back, and sees only what Landlock lets it see;
 * dockerd-proxy's jail holds the Docker socket and nothing else.  Most
 * of this needs root (CI runs as root); without it those tests skip.
 */
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <linux/capability.h>
#include <linux/securebits.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "privdrop.h"
#include "proxy.h"

#define CHILD_TIMEOUT	10
#define EXIT_SKIP	77	/* a child's "not available here" */

static uid_t	 nobody_uid;
static gid_t	 nobody_gid;

/* Fork, run fn in the child (its result is the exit status); wait. */
static int
run_child(int (*fn)(void *), void *arg)
{
	pid_t	 pid;
	int	 status;

	fflush(NULL);
	pid = fork();
	assert_true(pid != -1);
	if (pid == 0) {
		alarm(CHILD_TIMEOUT);
		_exit(fn(arg));
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return status;
}

static void
expect_exit_zero(int status, const char *what)
{
	if (WIFSIGNALED(status))
		fail_msg("%s: killed by signal %d", what, WTERMSIG(status));
	if (WEXITSTATUS(status) == EXIT_SKIP)
		skip();
	if (WEXITSTATUS(status) != 0)
		fail_msg("%s: failed at step %d", what, WEXITSTATUS(status));
}

static void
need_root(void)
{
	if (geteuid() != 0)
		skip();
}

/* 1 when the effective, permitted and inheritable sets are all empty. */
static int
caps_empty(void)
{
	struct __user_cap_header_struct	 hdr;
	struct __user_cap_data_struct	 data[2];

	memset(&hdr, 0, sizeof(hdr));
	memset(data, 0xff, sizeof(data));	/* valgrind sees one element */
	hdr.version = _LINUX_CAPABILITY_VERSION_3;
	if (syscall(SYS_capget, &hdr, data) == -1)
		return 0;
	return data[0].effective == 0 && data[0].permitted == 0 &&
	    data[0].inheritable == 0 && data[1].effective == 0 &&
	    data[1].permitted == 0 && data[1].inheritable == 0;
}

/* A root-owned 0755 directory, as a chroot must be. */
static void
make_dir(char *tmpl, mode_t mode)
{
	assert_non_null(mkdtemp(tmpl));
	assert_int_equal(chmod(tmpl, mode), 0);
}

/* user lookup and simple calls */

static void
test_is_root(void **state)
{
	(void)state;
	assert_int_equal(privdrop_is_root(), geteuid() == 0);
}

static void
test_lookup_user(void **state)
{
	char	 err[256], num[32];
	uid_t	 uid;
	gid_t	 gid;

	(void)state;
	assert_int_equal(privdrop_lookup_user("nobody", &uid, &gid, err,
	    sizeof(err)), 0);
	assert_int_equal(uid, nobody_uid);
	assert_int_equal(gid, nobody_gid);
	snprintf(num, sizeof(num), "%u", (unsigned)nobody_uid);
	uid = 0;
	assert_int_equal(privdrop_lookup_user(num, &uid, &gid, err,
	    sizeof(err)), 0);
	assert_int_equal(uid, nobody_uid);
	assert_int_equal(privdrop_lookup_user("no-such-user-here", &uid, &gid,
	    err, sizeof(err)), -1);
	assert_non_null(strstr(err, "no-such-user-here"));
	/* Switching "down" to root would confine nothing. */
	assert_int_equal(privdrop_lookup_user("root", &uid, &gid, err,
	    sizeof(err)), -1);
	assert_int_equal(privdrop_lookup_user("0", &uid, &gid, err,
	    sizeof(err)), -1);
}

static int
nnp_child(void *arg)
{
	(void)arg;
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 0)
		return 2;
	if (privdrop_no_new_privs() != 0)
		return 3;
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		return 4;
	return 0;
}

static void
test_no_new_privs(void **state)
{
	(void)state;
	expect_exit_zero(run_child(nnp_child, NULL), "no_new_privs");
}

/* chroot and user switch */

static int
chroot_child(void *arg)
{
	const char	*dir = arg;
	char		 err[256], cwd[PATH_MAX];
	gid_t		 groups[4];

	if (privdrop_chroot_user("nobody", dir, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	if (getuid() != nobody_uid || geteuid() != nobody_uid ||
	    getgid() != nobody_gid || getegid() != nobody_gid)
		return 3;
	if (getgroups(4, groups) != 1 || groups[0] != nobody_gid)
		return 4;
	if (getcwd(cwd, sizeof(cwd)) == NULL || strcmp(cwd, "/") != 0)
		return 5;
	if (access("/etc/passwd", F_OK) != -1 || errno != ENOENT)
		return 6;
	if (setuid(0) != -1 || seteuid(0) != -1 || setgid(0) != -1)
		return 7;
	if (!caps_empty())
		return 8;
	return 0;
}

static void
test_chroot_user(void **state)
{
	char	 dir[] = "/tmp/test_privdrop.XXXXXX";

	(void)state;
	need_root();
	make_dir(dir, 0755);
	expect_exit_zero(run_child(chroot_child, dir), "chroot to nobody");
	assert_int_equal(rmdir(dir), 0);
}

/* A refused chroot leaves the process as it was. */
static int
chroot_refused_child(void *arg)
{
	const char	*dir = arg;
	char		 err[256];

	if (privdrop_chroot_user("nobody", dir, err, sizeof(err)) != -1)
		return 2;
	if (strstr(err, "owned by root") == NULL)
		return 3;
	if (getuid() != 0 || access("/etc/passwd", F_OK) != 0)
		return 4;
	return 0;
}

static void
test_chroot_refuses_writable(void **state)
{
	char	 dir[] = "/tmp/test_privdrop.XXXXXX";

	(void)state;
	need_root();
	make_dir(dir, 0777);
	expect_exit_zero(run_child(chroot_refused_child, dir),
	    "chroot into a world-writable dir");
	assert_int_equal(chmod(dir, 0775), 0);
	expect_exit_zero(run_child(chroot_refused_child, dir),
	    "chroot into a group-writable dir");
	assert_int_equal(chmod(dir, 0755), 0);
	assert_int_equal(chown(dir, nobody_uid, 0), 0);
	expect_exit_zero(run_child(chroot_refused_child, dir),
	    "chroot into a dir not owned by root");
	assert_int_equal(rmdir(dir), 0);
}

static int
setids_child(void *arg)
{
	uid_t	 r, e, s;
	gid_t	 rg, eg, sg;
	char	 err[256];

	(void)arg;
	if (privdrop_setids(nobody_uid, nobody_gid, err, sizeof(err)) != 0)
		return 2;
	if (getresuid(&r, &e, &s) == -1 || r != nobody_uid ||
	    e != nobody_uid || s != nobody_uid)
		return 3;
	if (getresgid(&rg, &eg, &sg) == -1 || rg != nobody_gid ||
	    eg != nobody_gid || sg != nobody_gid)
		return 4;
	if (setresuid(0, 0, 0) != -1 || !caps_empty())
		return 5;
	/* The bounding set went too, and root is locked out of execve. */
	if (prctl(PR_CAPBSET_READ, CAP_SYS_ADMIN, 0, 0, 0) != 0)
		return 6;
	if ((prctl(PR_GET_SECUREBITS, 0, 0, 0, 0) & SECBIT_NOROOT) == 0)
		return 7;
	return 0;
}

static void
test_setids(void **state)
{
	(void)state;
	need_root();
	expect_exit_zero(run_child(setids_child, NULL), "setids");
}

static int
setids_unprivileged_child(void *arg)
{
	char	 err[256];

	(void)arg;
	/* Not root any more: switching to another user must fail. */
	if (geteuid() == 0 && setresuid(nobody_uid, nobody_uid,
	    nobody_uid) == -1)
		return 2;
	if (privdrop_setids(0, 0, err, sizeof(err)) != -1)
		return 3;
	if (getuid() == 0)
		return 4;
	return 0;
}

static void
test_setids_unprivileged(void **state)
{
	(void)state;
	expect_exit_zero(run_child(setids_unprivileged_child, NULL),
	    "setids without privilege");
}

/* capabilities */

static int
clear_caps_child(void *arg)
{
	char	 err[256];

	(void)arg;
	if (caps_empty())
		return 2;	/* root with nothing to drop proves nothing */
	if (privdrop_clear_caps(err, sizeof(err)) != 0) {
		fprintf(stderr, "%s\n", err);
		return 3;
	}
	if (!caps_empty())
		return 4;
	if (prctl(PR_CAPBSET_READ, CAP_CHOWN, 0, 0, 0) != 0 ||
	    prctl(PR_CAPBSET_READ, CAP_SYS_ADMIN, 0, 0, 0) != 0)
		return 5;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, CAP_NET_RAW, 0,
	    0) > 0)
		return 6;
	if ((prctl(PR_GET_SECUREBITS, 0, 0, 0, 0) & SECBIT_NOROOT) == 0)
		return 7;
	/* Still uid 0, but what needs a capability fails. */
	if (getuid() != 0)
		return 8;
	if (chroot("/") != -1 || errno != EPERM)
		return 9;
	if (setuid(nobody_uid) != -1)
		return 10;
	return 0;
}

static void
test_clear_caps(void **state)
{
	(void)state;
	need_root();
	expect_exit_zero(run_child(clear_caps_child, NULL), "clear_caps");
}

/* Landlock */

static int
landlock_none_child(void *arg)
{
	char	 err[256];
	int	 rc;

	(void)arg;
	if ((rc = landlock_restrict(NULL, err, sizeof(err))) == 1)
		return EXIT_SKIP;
	if (rc != 0) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	if (open("/etc/passwd", O_RDONLY) != -1 || errno != EACCES)
		return 3;
	if (open("/tmp", O_RDONLY | O_DIRECTORY) != -1 || errno != EACCES)
		return 4;
	if (mkdir("/tmp/test_privdrop.landlock", 0700) != -1)
		return 5;
	return 0;
}

static void
test_landlock_none(void **state)
{
	(void)state;
	expect_exit_zero(run_child(landlock_none_child, NULL),
	    "landlock without a directory");
}

static int
landlock_dir_child(void *arg)
{
	const char	*dir = arg;
	char		 a[PATH_MAX], b[PATH_MAX], sub[PATH_MAX], err[256];
	int		 fd, rc;

	if ((rc = landlock_restrict(dir, err, sizeof(err))) == 1)
		return EXIT_SKIP;
	if (rc != 0) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	snprintf(a, sizeof(a), "%s/rec.tmp", dir);
	snprintf(b, sizeof(b), "%s/sub/rec.json", dir);
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	if ((fd = open(a, O_WRONLY | O_CREAT | O_EXCL, 0600)) == -1 ||
	    write(fd, "{}", 2) != 2 || ftruncate(fd, 1) == -1 ||
	    close(fd) == -1)
		return 3;
	if (mkdir(sub, 0700) == -1 || rename(a, b) == -1)
		return 4;
	if ((fd = open(b, O_RDONLY)) == -1 || close(fd) == -1)
		return 5;
	if (unlink(b) == -1 || rmdir(sub) == -1)
		return 6;
	/* Outside the directory: nothing. */
	if (open("/etc/passwd", O_RDONLY) != -1 || errno != EACCES)
		return 7;
	/* Inside it, only plain files and directories. */
	if (symlink("/etc/passwd", a) != -1 || errno != EACCES)
		return 8;
	/* managerd's upload spools: unnamed files inside, not outside. */
	if ((fd = open(dir, O_TMPFILE | O_RDWR, 0600)) == -1 ?
	    errno != EOPNOTSUPP : write(fd, "x", 1) != 1 || close(fd) == -1)
		return 9;
	if (open("/tmp", O_TMPFILE | O_RDWR, 0600) != -1 ||
	    (errno != EACCES && errno != EOPNOTSUPP))
		return 10;
	return 0;
}

static void
test_landlock_dir(void **state)
{
	char	 dir[] = "/tmp/test_privdrop.XXXXXX";

	(void)state;
	make_dir(dir, 0700);
	expect_exit_zero(run_child(landlock_dir_child, dir),
	    "landlock on a directory");
	assert_int_equal(rmdir(dir), 0);
}

/* dockerd-proxy's jail */

struct jail_case {
	char	 top[64];		/* scratch directory */
	char	 sock[128];		/* the "Docker" socket */
	char	 link[128];		/* a symlink to it, like /var/run */
	char	 root[128];		/* the chroot dir, not created yet */
	int	 listener;		/* unix, on sock */
	int	 tcp;			/* tcp, on 127.0.0.1 */
	struct sockaddr_in tcp_addr;
	uid_t	 want_uid;
	gid_t	 want_gid;
};

static void
jail_setup(struct jail_case *jc, gid_t sock_gid, mode_t sock_mode)
{
	struct sockaddr_un	 sun;
	struct timeval		 tv = { CHILD_TIMEOUT, 0 };
	socklen_t		 len = sizeof(jc->tcp_addr);

	memset(jc, 0, sizeof(*jc));
	strlcpy(jc->top, "/tmp/test_privdrop.XXXXXX", sizeof(jc->top));
	make_dir(jc->top, 0755);
	snprintf(jc->sock, sizeof(jc->sock), "%s/docker.sock", jc->top);
	snprintf(jc->link, sizeof(jc->link), "%s/link.sock", jc->top);
	snprintf(jc->root, sizeof(jc->root), "%s/empty", jc->top);

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	strlcpy(sun.sun_path, jc->sock, sizeof(sun.sun_path));
	jc->listener = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(jc->listener != -1);
	assert_int_equal(bind(jc->listener, (struct sockaddr *)&sun,
	    sizeof(sun)), 0);
	assert_int_equal(listen(jc->listener, 4), 0);
	assert_int_equal(setsockopt(jc->listener, SOL_SOCKET, SO_RCVTIMEO,
	    &tv, sizeof(tv)), 0);
	assert_int_equal(chown(jc->sock, 0, sock_gid), 0);
	assert_int_equal(chmod(jc->sock, sock_mode), 0);
	assert_int_equal(symlink(jc->sock, jc->link), 0);

	jc->tcp = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(jc->tcp != -1);
	jc->tcp_addr.sin_family = AF_INET;
	jc->tcp_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(jc->tcp, (struct sockaddr *)&jc->tcp_addr,
	    sizeof(jc->tcp_addr)), 0);
	assert_int_equal(listen(jc->tcp, 4), 0);
	assert_int_equal(getsockname(jc->tcp,
	    (struct sockaddr *)&jc->tcp_addr, &len), 0);
}

static void
jail_teardown(struct jail_case *jc)
{
	close(jc->listener);
	close(jc->tcp);
	unlink(jc->link);
	unlink(jc->sock);
	rmdir(jc->root);
	rmdir(jc->top);
}

/* Only docker.sock in "/". */
static int
root_holds_only_socket(void)
{
	struct dirent	*de;
	DIR		*d;
	int		 others = 0, found = 0;

	if ((d = opendir("/")) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (strcmp(de->d_name, "docker.sock") == 0)
			found++;
		else
			others++;
	}
	closedir(d);
	return found == 1 && others == 0;
}

static int
jail_child(void *arg)
{
	struct jail_case	*jc = arg;
	struct sockaddr_un	 sun;
	char			 jailed[PATH_MAX], err[512];
	int			 fd;

	if (proxy_jail(jc->link, jc->root, "nobody", jailed, sizeof(jailed),
	    err, sizeof(err)) != 0) {
		fprintf(stderr, "proxy_jail: %s\n", err);
		return 2;
	}
	if (strcmp(jailed, "/docker.sock") != 0)
		return 3;
	/* The socket is reachable, and it is the real one. */
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	strlcpy(sun.sun_path, jailed, sizeof(sun.sun_path));
	if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1 ||
	    connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1 ||
	    write(fd, "J", 1) != 1)
		return 4;
	close(fd);
	/* Nothing else is. */
	if (!root_holds_only_socket())
		return 5;
	if (access("/etc/passwd", F_OK) != -1 || errno != ENOENT)
		return 6;
	if ((fd = open("/new", O_WRONLY | O_CREAT, 0600)) != -1)
		return 7;
	if (chmod("/docker.sock", 0666) != -1)
		return 8;
	/* A private network namespace: the host's loopback is gone. */
	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		return 9;
	if (connect(fd, (struct sockaddr *)&jc->tcp_addr,
	    sizeof(jc->tcp_addr)) != -1)
		return 10;
	close(fd);
	/* The expected identity, no capabilities, no way back. */
	if (getuid() != jc->want_uid || geteuid() != jc->want_uid ||
	    getgid() != jc->want_gid)
		return 11;
	if (!caps_empty() || prctl(PR_CAPBSET_READ, CAP_SYS_ADMIN, 0, 0,
	    0) != 0)
		return 12;
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		return 13;
	if (chroot("/") != -1 || umount2("/docker.sock", MNT_DETACH) != -1)
		return 14;
	return 0;
}

static void
run_jail_case(struct jail_case *jc, mode_t sock_mode, const char *what)
{
	struct stat	 st;
	char		 c, inside[192];
	int		 fd, status;

	status = run_child(jail_child, jc);
	/* The child's connection, with its byte, reached our listener. */
	c = 0;
	if ((fd = accept(jc->listener, NULL, NULL)) != -1) {
		if (read(fd, &c, 1) != 1)
			c = 0;
		close(fd);
	}
	expect_exit_zero(status, what);
	assert_int_equal(c, 'J');
	/* None of the jail's mounts leaked into our namespace... */
	snprintf(inside, sizeof(inside), "%s/docker.sock", jc->root);
	assert_int_equal(stat(jc->root, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(stat(inside, &st), -1);
	/* ...and the host's socket kept its mode. */
	assert_int_equal(stat(jc->sock, &st), 0);
	assert_int_equal(st.st_mode & 07777, sock_mode);
}

/* A socket only root can use: stay uid 0 with no capabilities. */
static void
test_proxy_jail_root_socket(void **state)
{
	struct jail_case	 jc;

	(void)state;
	need_root();
	jail_setup(&jc, 0, 0600);
	jc.want_uid = 0;
	jc.want_gid = 0;
	run_jail_case(&jc, 0600, "jail with a root-only socket");
	jail_teardown(&jc);
}

/*
 * Docker's usual root:docker 0660: become nobody in the socket's group
 * (a number no user has as primary group, so that it must come from the
 * socket).
 */
static void
test_proxy_jail_group_socket(void **state)
{
	struct jail_case	 jc;

	(void)state;
	need_root();
	jail_setup(&jc, 4242, 0660);
	jc.want_uid = nobody_uid;
	jc.want_gid = 4242;
	run_jail_case(&jc, 0660, "jail with a group socket");
	jail_teardown(&jc);
}

/* Anyone may connect: nobody with its own group will do. */
static void
test_proxy_jail_world_socket(void **state)
{
	struct jail_case	 jc;

	(void)state;
	need_root();
	jail_setup(&jc, 0, 0666);
	jc.want_uid = nobody_uid;
	jc.want_gid = nobody_gid;
	run_jail_case(&jc, 0666, "jail with a world-accessible socket");
	jail_teardown(&jc);
}

static int
jail_unprivileged_child(void *arg)
{
	struct stat	 before, after;
	char		 jailed[PATH_MAX], err[256];
	uid_t		 uid;

	(void)arg;
	if (geteuid() == 0 && setresuid(nobody_uid, nobody_uid,
	    nobody_uid) == -1)
		return 2;
	uid = getuid();
	if (stat("/", &before) == -1)
		return 3;
	if (proxy_jail("/var/run/docker.sock", "/var/empty", "nobody", jailed,
	    sizeof(jailed), err, sizeof(err)) != 1)
		return 4;
	if (strcmp(jailed, "/var/run/docker.sock") != 0)
		return 5;
	/* Same root as before: nothing was changed. */
	if (stat("/", &after) == -1 || before.st_ino != after.st_ino ||
	    before.st_dev != after.st_dev || getuid() != uid)
		return 6;
	return 0;
}

/* Not root: the jail changes nothing and says so. */
static void
test_proxy_jail_unprivileged(void **state)
{
	(void)state;
	expect_exit_zero(run_child(jail_unprivileged_child, NULL),
	    "jail without root");
}

int
main(void)
{
	const struct CMUnitTest	 tests[] = {
		cmocka_unit_test(test_is_root),
		cmocka_unit_test(test_lookup_user),
		cmocka_unit_test(test_no_new_privs),
		cmocka_unit_test(test_chroot_user),
		cmocka_unit_test(test_chroot_refuses_writable),
		cmocka_unit_test(test_setids),
		cmocka_unit_test(test_setids_unprivileged),
		cmocka_unit_test(test_clear_caps),
		cmocka_unit_test(test_landlock_none),
		cmocka_unit_test(test_landlock_dir),
		cmocka_unit_test(test_proxy_jail_root_socket),
		cmocka_unit_test(test_proxy_jail_group_socket),
		cmocka_unit_test(test_proxy_jail_world_socket),
		cmocka_unit_test(test_proxy_jail_unprivileged),
	};
	struct passwd	*pw;

	if ((pw = getpwnam("nobody")) == NULL) {
		fprintf(stderr, "no user nobody\n");
		return 77;
	}
	nobody_uid = pw->pw_uid;
	nobody_gid = pw->pw_gid;
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
