/*
 * Files in a sandbox (API.md §4.9, §4.11, §6): download and directory
 * listing (uploads are file_write.c's).  managerd checks the request and
 * the path, tells dockerd-proxy what to fetch and apid what to expect;
 * the bytes themselves go through apid's pipe between apid and the proxy
 * and are never read here.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "managerd.h"
#include "utf8.h"

#define WORKSPACE		"/workspace"
#define READ_MAX_LOOKUPS	8	/* §6.2: a symlink chain's length */
#define LIST_TIMEOUT_SECONDS	60.0

/*
 * The listing (§6.4) as the sandbox user; its arguments are the
 * directory, escaped (list_args).  For each entry "<st_mode hex> <size>
 * <mtime>\n<name>\0" (file_msg.h), names with any bytes.  Exit 3: the
 * path exists but cannot be entered; 2: it does not exist.  An entry
 * that vanishes meanwhile is left out.
 */
static const char list_script[] =
	"d=$(printf '%b' \"$@\"; printf x); d=${d%x}\n"
	"cd -- \"$d\" 2>/dev/null || { [ -e \"$d\" ] && exit 3; exit 2; }\n"
	"for f in * .[!.]* ..?*; do\n"
	"\tif [ -e \"$f\" ] || [ -L \"$f\" ]; then\n"
	"\t\tstat -c '%f %s %Y' -- \"$f\" && printf '%s\\0' \"$f\"\n"
	"\tfi\n"
	"done\n"
	"exit 0\n";

/*
 * Docker reads an exec's argv as JSON and turns bytes that are not UTF-8
 * into U+FFFD, so those (and the backslash) go as printf %b's \0ooo and
 * the script puts them back; "$(...)x" keeps a trailing newline.  The
 * escaped text is cut, between escapes, into arguments that fit.
 */
#define LIST_ESCAPED_MAX	(12 * 1024)	/* leaves room in DOCKER_EXEC */
#define LIST_MAX_ARGS		(LIST_ESCAPED_MAX / (MSG_MAX_ARG - 4) + 1)

struct list_args {
	char	 buf[LIST_ESCAPED_MAX + LIST_MAX_ARGS + 1];
	char	*argv[LIST_MAX_ARGS];
	int	 argc;
};

/* -1 if the escaped directory is longer than LIST_ESCAPED_MAX. */
static int
list_args(const char *dir, struct list_args *la)
{
	const unsigned char	*p = (const unsigned char *)dir;
	size_t			 left = strlen(dir), n = 0, arg = 0, total = 0;
	size_t			 len, step;
	uint32_t		 cp;

	la->argc = 0;
	for (; left > 0; p += step, left -= step) {
		step = utf8_next_or_escape(p, left, &cp);
		len = (cp >= 0xdc80 && cp <= 0xdcff) || *p == '\\' ? 5 : step;
		if ((total += len) > LIST_ESCAPED_MAX)
			return -1;
		if (n + len - arg > MSG_MAX_ARG) {
			la->buf[n++] = '\0';
			la->argv[la->argc++] = la->buf + arg;
			arg = n;
		}
		if (len == 5)
			snprintf(la->buf + n, 6, "\\0%03o", *p);
		else
			memcpy(la->buf + n, p, step);
		n += len;
	}
	la->buf[n] = '\0';
	la->argv[la->argc++] = la->buf + arg;
	return 0;
}

enum read_state {
	READ_ASKED,		/* waiting for the stat */
	READ_FOLLOW,		/* a symlink: look again after DONE */
	READ_STREAMING,		/* apid has the size, the body flows */
	READ_ANSWERED,		/* refused; waiting for the end */
	READ_HEAD,		/* a name Docker's file tar leaves out: stat */
	READ_PARENT		/* ... then its directory's tar, streamed */
};

struct file_read_call {
	uint32_t	 apid_id;
	int		 fd;		/* apid's pipe, until the read ends */
	int		 lookups;
	enum read_state	 state;
	char		 id[SANDBOX_ID_LEN + 1];
	char		 requested[MSG_MAX_PATH + 1];	/* for messages */
	char		 path[MSG_MAX_PATH + 1];	/* this lookup's */
	uint64_t	 size;		/* READ_PARENT: the file's */
};

int
file_path(uint32_t apid_id, const char *in, char *out)
{
	if (path_normalize(in, out, MSG_MAX_PATH + 1) == 0)
		return 0;
	if (errno == ENAMETOOLONG)
		apid_error(apid_id, ERR_INVALID_REQUEST, "path is too long");
	else if (errno == ENOMEM)
		apid_error(apid_id, ERR_INTERNAL, "out of memory");
	else
		apid_error(apid_id, ERR_INVALID_REQUEST,
		    "path must be a non-empty string");
	return -1;
}

/* --- read ----------------------------------------------------------------- */

static void	read_done(struct imsg *, void *);

static void
read_free(struct file_read_call *rc)
{
	close(rc->fd);
	free(rc);
}

static void	read_head_done(struct imsg *, void *);

/*
 * Docker's tar of one file leaves out a file whose name is not UTF-8
 * (the stat comes, the member does not); the tar of its directory
 * holds it.  Such a file is looked at with a stat alone first.
 */
static int
read_name_is_text(const struct file_read_call *rc)
{
	const char	*base = strrchr(rc->path, '/') + 1;

	return utf8_valid(base, strlen(base));
}

static int
read_head(struct file_read_call *rc)
{
	struct archive_head	 ah;
	struct msgw		 w;

	ah.id = rc->id;
	ah.path = rc->path;
	msgw_init(&w);
	msg_put_archive_head(&w, &ah);
	rc->lookups++;
	rc->state = READ_HEAD;
	if (proxy_call(MSG_DOCKER_ARCHIVE_HEAD, -1, &w, 0,
	    MSG_DOCKER_ARCHIVE_STAT, read_head_done, rc) == 0) {
		apid_error(rc->apid_id, ERR_INTERNAL,
		    "cannot reach dockerd-proxy");
		return -1;
	}
	return 0;
}

/* A copy of apid's pipe for the proxy; a failure answers the request. */
static int
read_dup(struct file_read_call *rc)
{
	int	 fd, saved;

	if ((fd = fcntl(rc->fd, F_DUPFD_CLOEXEC, 0)) == -1) {
		saved = errno;
		log_warn("file read %u: dup", rc->apid_id);
		apid_error(rc->apid_id, descriptor_error(saved, ERR_INTERNAL),
		    "managerd is out of descriptors; try again");
	}
	return fd;
}

/* Docker's tar of the directory that holds rc->path, into apid's pipe. */
static int
read_parent(struct file_read_call *rc)
{
	struct archive_get	 ag;
	struct msgw		 w;
	char			 dir[MSG_MAX_PATH + 1];
	size_t			 len;
	int			 fd;

	len = (size_t)(strrchr(rc->path, '/') - rc->path);
	memcpy(dir, rc->path, len);
	dir[len > 0 ? len : 1] = '\0';
	if (len == 0)
		dir[0] = '/';
	if ((fd = read_dup(rc)) == -1)
		return -1;
	ag.id = rc->id;
	ag.path = dir;
	ag.want = ARCHIVE_WANT_TREE;
	ag.max_bytes = 0;
	msgw_init(&w);
	msg_put_archive_get(&w, &ag);
	rc->state = READ_PARENT;
	if (proxy_call(MSG_DOCKER_ARCHIVE_GET, fd, &w, MSG_DOCKER_ARCHIVE_STAT,
	    MSG_DOCKER_DONE, read_done, rc) == 0) {
		apid_error(rc->apid_id, ERR_INTERNAL,
		    "cannot reach dockerd-proxy");
		return -1;
	}
	return 0;
}

/*
 * Ask the proxy about rc->path with a copy of apid's pipe: the proxy
 * closes the copy it gets, and the pipe must outlive a symlink's lookup.
 */
static int
read_lookup(struct file_read_call *rc)
{
	struct archive_get	 ag;
	struct msgw		 w;
	int			 fd;

	if (!read_name_is_text(rc))
		return read_head(rc);
	if ((fd = read_dup(rc)) == -1)
		return -1;
	ag.id = rc->id;
	ag.path = rc->path;
	ag.want = ARCHIVE_WANT_FILE;
	ag.max_bytes = (uint64_t)env->conf.max_file_bytes;
	msgw_init(&w);
	msg_put_archive_get(&w, &ag);
	rc->lookups++;
	rc->state = READ_ASKED;
	if (proxy_call(MSG_DOCKER_ARCHIVE_GET, fd, &w, MSG_DOCKER_ARCHIVE_STAT,
	    MSG_DOCKER_DONE, read_done, rc) == 0) {
		apid_error(rc->apid_id, ERR_INTERNAL,
		    "cannot reach dockerd-proxy");
		return -1;
	}
	return 0;
}

/*
 * What a stat says: 1 for a regular file that may be read, 0 for a
 * symlink to follow (rc->path is its target now), -1 if answered.
 */
static int
read_check(struct file_read_call *rc, const struct archive_stat *st)
{
	long long	 max = env->conf.max_file_bytes;

	if (st->kind == ARCHIVE_KIND_SYMLINK && st->link_target[0] != '\0') {
		if (rc->lookups >= READ_MAX_LOOKUPS)
			apid_error(rc->apid_id, ERR_INVALID_REQUEST,
			    "%s: too many levels of symbolic links",
			    rc->requested);
		else if (path_join_link(rc->path, st->link_target, rc->path,
		    sizeof(rc->path)) == -1)
			apid_error(rc->apid_id, ERR_INVALID_REQUEST,
			    "%s: file name too long", rc->requested);
		else
			return 0;
		return -1;
	}
	if (st->kind == ARCHIVE_KIND_DIR)
		apid_error(rc->apid_id, ERR_INVALID_REQUEST,
		    "%s is a directory", rc->requested);
	else if (st->size > (uint64_t)max)
		apid_error(rc->apid_id, ERR_PAYLOAD_TOO_LARGE,
		    "%s is larger than %lld bytes", rc->requested, max);
	else if (st->kind != ARCHIVE_KIND_FILE)
		apid_error(rc->apid_id, ERR_INVALID_REQUEST,
		    "%s is not a regular file", rc->requested);
	else
		return 1;
	return -1;
}

/* The file flows now: its size, and the member that holds it. */
static void
read_started(struct file_read_call *rc, uint64_t size, char *member)
{
	struct file_read_started	 rs;
	struct msgw			 w;

	rs.size = size;
	rs.member = member;
	msgw_init(&w);
	msg_put_file_read_started(&w, &rs);
	apid_reply(rc->apid_id, MSG_FILE_READ_STARTED, &w);
	rc->state = READ_STREAMING;
}

/* What the stat says decides the reply; the call ends with DONE. */
static void
read_stat(struct file_read_call *rc, const struct archive_stat *st)
{
	switch (read_check(rc, st)) {
	case 0:
		rc->state = READ_FOLLOW;
		break;
	case 1:
		/* The proxy streams the tar into the pipe now. */
		read_started(rc, st->size, NULL);
		break;
	default:
		rc->state = READ_ANSWERED;
		break;
	}
}

/*
 * The member of the directory's tar that is the file: "<dir's name>/
 * <name>" (Docker names a tar's members after the directory asked for).
 */
static int
read_member(const struct file_read_call *rc, char *out, size_t len)
{
	const char	*slash = strrchr(rc->path, '/'), *dir;
	size_t		 dirlen;

	for (dir = slash; dir > rc->path && dir[-1] != '/'; dir--)
		;
	dirlen = (size_t)(slash - dir);
	if (dirlen == 0)
		return strlcpy(out, slash + 1, len) < len ? 0 : -1;
	if (dirlen + strlen(slash) >= len)
		return -1;
	memcpy(out, dir, dirlen);
	strlcpy(out + dirlen, slash, len - dirlen);
	return 0;
}

/* The directory's tar streams, if it still is one. */
static void
read_parent_stat(struct file_read_call *rc, const struct archive_stat *st)
{
	char	 member[MSG_MAX_PATH + 1];

	if (st->kind != ARCHIVE_KIND_DIR || read_member(rc, member,
	    sizeof(member)) == -1) {
		apid_error(rc->apid_id, ERR_INVALID_REQUEST,
		    "%s is not a regular file", rc->requested);
		rc->state = READ_ANSWERED;
		return;
	}
	read_started(rc, rc->size, member);
}

/* The stat alone, of a name Docker's file tar leaves out. */
static void
read_head_done(struct imsg *reply, void *arg)
{
	struct file_read_call	*rc = arg;
	struct archive_stat	 st;
	int			 rv = -1;

	if (reply->hdr.type != MSG_DOCKER_ARCHIVE_STAT) {
		relay_error(reply, rc->apid_id);
		read_free(rc);
		return;
	}
	if (rc->state != READ_HEAD || msg_get_archive_stat(reply, &st) == -1)
		peer_bad_message(&env->proxy_peer, reply, "unexpected stat");
	switch (read_check(rc, &st)) {
	case 0:
		rv = read_lookup(rc);
		break;
	case 1:
		rc->size = st.size;
		rv = read_parent(rc);
		break;
	}
	archive_stat_free(&st);
	if (rv == -1)
		read_free(rc);
}

static void
read_done(struct imsg *reply, void *arg)
{
	struct file_read_call	*rc = arg;
	struct archive_stat	 st;
	uint32_t		 kind;
	char			*text;

	switch (reply->hdr.type) {
	case MSG_DOCKER_ARCHIVE_STAT:
		if ((rc->state != READ_ASKED && rc->state != READ_PARENT) ||
		    msg_get_archive_stat(reply, &st) == -1)
			peer_bad_message(&env->proxy_peer, reply,
			    "unexpected stat");
		if (rc->state == READ_PARENT)
			read_parent_stat(rc, &st);
		else
			read_stat(rc, &st);
		archive_stat_free(&st);
		return;
	case MSG_DOCKER_DONE:
		if (rc->state == READ_ASKED || rc->state == READ_PARENT ||
		    reply->len != 0)
			peer_bad_message(&env->proxy_peer, reply,
			    "done without a stat");
		if (rc->state == READ_FOLLOW && read_lookup(rc) == 0)
			return;
		if (rc->state == READ_STREAMING)
			apid_reply(rc->apid_id, MSG_OK, NULL);
		break;
	default:
		/* After FILE_READ_STARTED, apid aborts the response. */
		if (rc->state != READ_ANSWERED) {
			relay_error(reply, rc->apid_id);
			break;
		}
		text = proxy_error_text(reply, &kind);
		log_debug("file read %u: %s", rc->apid_id, text);
		free(text);
		break;
	}
	read_free(rc);
}

/* fd: the write end of apid's pipe for Docker's tar of the file. */
void
file_read(uint32_t apid_id, struct file_request *req, int fd)
{
	struct sandbox		*sb;
	struct file_read_call	*rc;
	char			 path[MSG_MAX_PATH + 1];

	if ((sb = sandbox_find_for(apid_id, req->sandbox_id)) == NULL) {
		apid_not_found(apid_id, req->sandbox_id);
		goto fail;
	}
	if (file_path(apid_id, req->path != NULL ? req->path : "",
	    path) == -1)
		goto fail;
	if ((rc = calloc(1, sizeof(*rc))) == NULL) {
		apid_error(apid_id, ERR_INTERNAL, "out of memory");
		goto fail;
	}
	rc->apid_id = apid_id;
	rc->fd = fd;
	strlcpy(rc->id, sb->rec.id, sizeof(rc->id));
	strlcpy(rc->requested, path, sizeof(rc->requested));
	strlcpy(rc->path, path, sizeof(rc->path));
	if (read_lookup(rc) == -1)
		read_free(rc);
	return;
fail:
	close(fd);
}

/* --- list ----------------------------------------------------------------- */

static void
list_exec(uint32_t apid_id, struct sandbox *sb, const char *dir,
    struct list_args *la, int fd)
{
	static char		 sh[] = "/bin/sh", dash_c[] = "-c";
	static char		 argv0[] = "sh", root[] = "/";
	struct docker_exec	 dx;
	char			 script[sizeof(list_script)];
	char			*argv[4 + LIST_MAX_ARGS + 1];
	int			 i;

	memcpy(script, list_script, sizeof(script));
	argv[0] = sh;
	argv[1] = dash_c;
	argv[2] = script;
	argv[3] = argv0;
	for (i = 0; i < la->argc; i++)
		argv[4 + i] = la->argv[i];
	argv[4 + i] = NULL;
	memset(&dx, 0, sizeof(dx));
	dx.id = sb->rec.id;
	dx.argc = 4 + la->argc;
	dx.argv = argv;
	dx.workdir = root;
	dx.timeout_seconds = LIST_TIMEOUT_SECONDS;
	exec_run(apid_id, &dx, fd, MSG_FILE_LIST_STARTED, dir);
}

/* fd: the write end of an exec output pipe, as for MSG_EXEC_START. */
void
file_list(uint32_t apid_id, struct file_request *req, int fd)
{
	struct sandbox		*sb;
	struct list_args	*la = NULL;
	char			 dir[MSG_MAX_PATH + 1];

	if ((sb = sandbox_find_for(apid_id, req->sandbox_id)) == NULL) {
		apid_not_found(apid_id, req->sandbox_id);
		goto fail;
	}
	if (req->path == NULL)
		strlcpy(dir, WORKSPACE, sizeof(dir));
	else if (file_path(apid_id, req->path, dir) == -1)
		goto fail;
	if ((la = malloc(sizeof(*la))) == NULL) {
		apid_error(apid_id, ERR_INTERNAL, "out of memory");
		goto fail;
	}
	if (list_args(dir, la) == -1) {
		apid_error(apid_id, ERR_INVALID_REQUEST, "path is too long");
		goto fail;
	}
	list_exec(apid_id, sb, dir, la, fd);
	free(la);
	return;
fail:
	free(la);
	close(fd);
}
