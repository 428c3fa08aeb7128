/*
 * Files in a sandbox (API.md §4.9-4.11, §6): download, upload and
 * directory listing.  managerd checks the request and the path, tells
 * dockerd-proxy what to fetch or store and apid what to expect; the bytes
 * themselves go through apid's pipe between apid and the proxy and are
 * never read here.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "managerd.h"

#define WORKSPACE		"/workspace"
#define READ_MAX_LOOKUPS	8	/* §6.2: a symlink chain's length */
#define LIST_TIMEOUT_SECONDS	60.0

/*
 * The listing (§6.4) as the sandbox user, $1 = the directory: for each
 * entry "<st_mode hex> <size> <mtime>\n<name>\0" (file_msg.h), names
 * with any bytes.  Exit 3: the path exists but cannot be entered; 2: it
 * does not exist.  An entry that vanishes meanwhile is left out.
 */
static const char list_script[] =
	"cd -- \"$1\" 2>/dev/null || { [ -e \"$1\" ] && exit 3; exit 2; }\n"
	"for f in * .[!.]* ..?*; do\n"
	"\tif [ -e \"$f\" ] || [ -L \"$f\" ]; then\n"
	"\t\tstat -c '%f %s %Y' -- \"$f\" && printf '%s\\0' \"$f\"\n"
	"\tfi\n"
	"done\n"
	"exit 0\n";

enum read_state {
	READ_ASKED,		/* waiting for the stat */
	READ_FOLLOW,		/* a symlink: look again after DONE */
	READ_STREAMING,		/* apid has the size, the body flows */
	READ_ANSWERED		/* refused; waiting for the end */
};

struct file_read_call {
	uint32_t	 apid_id;
	int		 fd;		/* apid's pipe, until the read ends */
	int		 lookups;
	enum read_state	 state;
	char		 id[SANDBOX_ID_LEN + 1];
	char		 requested[MSG_MAX_PATH + 1];	/* for messages */
	char		 path[MSG_MAX_PATH + 1];	/* this lookup's */
};

struct file_write_call {
	uint32_t	 apid_id;
	uint64_t	 size;
	char		 path[MSG_MAX_PATH + 1];
};

/*
 * Normalize a client's path into out (MSG_MAX_PATH + 1 bytes), answering
 * apid if it cannot be.
 */
static int
normalize_or_refuse(uint32_t apid_id, const char *in, char *out)
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

	if ((fd = fcntl(rc->fd, F_DUPFD_CLOEXEC, 0)) == -1) {
		log_warn("file read %u: dup", rc->apid_id);
		apid_error(rc->apid_id, ERR_INTERNAL, "out of descriptors");
		return -1;
	}
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
 * The path a symlink at rc->path points to: posixpath.join(dirname(path),
 * target), normalized; an absolute target replaces the directory.
 */
static int
read_follow(struct file_read_call *rc, const char *target)
{
	char	*joined;
	size_t	 dirlen, tlen;
	int	 r;

	/* dirname() with its trailing slash, which join() would add. */
	dirlen = target[0] == '/' ? 0 : strrchr(rc->path, '/') - rc->path + 1;
	tlen = strlen(target);
	if ((joined = malloc(dirlen + tlen + 1)) == NULL)
		return -1;
	memcpy(joined, rc->path, dirlen);
	memcpy(joined + dirlen, target, tlen + 1);
	r = path_normalize(joined, rc->path, sizeof(rc->path));
	free(joined);
	return r;
}

/* What the stat says decides the reply; the call ends with DONE. */
static void
read_stat(struct file_read_call *rc, const struct archive_stat *st)
{
	long long	 max = env->conf.max_file_bytes;
	struct msgw	 w;

	rc->state = READ_ANSWERED;
	if (st->kind == ARCHIVE_KIND_SYMLINK && st->link_target[0] != '\0') {
		if (rc->lookups >= READ_MAX_LOOKUPS)
			apid_error(rc->apid_id, ERR_INVALID_REQUEST,
			    "%s: too many levels of symbolic links",
			    rc->requested);
		else if (read_follow(rc, st->link_target) == -1)
			apid_error(rc->apid_id, ERR_INVALID_REQUEST,
			    "%s: file name too long", rc->requested);
		else
			rc->state = READ_FOLLOW;
		return;
	}
	if (st->kind == ARCHIVE_KIND_DIR) {
		apid_error(rc->apid_id, ERR_INVALID_REQUEST,
		    "%s is a directory", rc->requested);
		return;
	}
	if (st->size > (uint64_t)max) {
		apid_error(rc->apid_id, ERR_PAYLOAD_TOO_LARGE,
		    "%s is larger than %lld bytes", rc->requested, max);
		return;
	}
	if (st->kind != ARCHIVE_KIND_FILE) {
		apid_error(rc->apid_id, ERR_INVALID_REQUEST,
		    "%s is not a regular file", rc->requested);
		return;
	}
	/* The proxy streams the tar into the pipe now. */
	msgw_init(&w);
	msg_put_u64(&w, st->size);
	apid_reply(rc->apid_id, MSG_FILE_READ_STARTED, &w);
	rc->state = READ_STREAMING;
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
		if (rc->state != READ_ASKED ||
		    msg_get_archive_stat(reply, &st) == -1)
			peer_bad_message(&env->proxy_peer, reply,
			    "unexpected stat");
		read_stat(rc, &st);
		archive_stat_free(&st);
		return;
	case MSG_DOCKER_DONE:
		if (rc->state == READ_ASKED || reply->len != 0)
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

	if ((sb = sandbox_find(req->sandbox_id)) == NULL) {
		apid_not_found(apid_id, req->sandbox_id);
		goto fail;
	}
	if (normalize_or_refuse(apid_id, req->path != NULL ? req->path : "",
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

/* --- write ---------------------------------------------------------------- */

static void
write_done(struct imsg *reply, void *arg)
{
	static char		 file[] = "file";
	struct file_write_call	*wc = arg;
	struct file_info	 fi;
	struct msgw		 w;

	if (reply->hdr.type == MSG_DOCKER_DONE) {
		if (reply->len != 0)
			peer_bad_message(&env->proxy_peer, reply,
			    "unexpected payload");
		fi.name = strrchr(wc->path, '/') + 1;
		fi.path = wc->path;
		fi.type = file;
		fi.size = wc->size;
		fi.modified_at = clock_wall();
		msgw_init(&w);
		msg_put_file_info(&w, &fi);
		apid_reply(wc->apid_id, MSG_FILE_INFO, &w);
	} else
		relay_error(reply, wc->apid_id);
	free(wc);
}

/*
 * §4.10 steps 3-6, then the upload: the proxy reads the tar apid writes
 * into fd (the pipe's read end) and extracts it in /workspace, refusing
 * to replace a directory or a symlink to one on the way.
 */
void
file_write(uint32_t apid_id, struct file_write *req, int fd)
{
	struct config		*conf = &env->conf;
	struct sandbox		*sb;
	struct file_write_call	*wc;
	struct file_write_ready	 ready;
	struct archive_put	 ap;
	struct msgw		 w;
	char			 path[MSG_MAX_PATH + 1], *p;
	static char		 workspace[] = WORKSPACE;

	if ((sb = sandbox_find(req->sandbox_id)) == NULL) {
		apid_not_found(apid_id, req->sandbox_id);
		goto fail;
	}
	if (normalize_or_refuse(apid_id, req->path, path) == -1)
		goto fail;
	if (!path_in_workspace(path)) {
		apid_error(apid_id, ERR_INVALID_REQUEST,
		    "writes are limited to files under /workspace");
		goto fail;
	}
	if (req->size > (uint64_t)conf->max_file_bytes) {
		apid_error(apid_id, ERR_PAYLOAD_TOO_LARGE,
		    "file exceeds %lld bytes", conf->max_file_bytes);
		goto fail;
	}
	if (req->mode > 0777) {
		apid_error(apid_id, ERR_INVALID_REQUEST,
		    "mode must be between 0 and 0o777");
		goto fail;
	}
	if ((wc = calloc(1, sizeof(*wc))) == NULL) {
		apid_error(apid_id, ERR_INTERNAL, "out of memory");
		goto fail;
	}
	wc->apid_id = apid_id;
	wc->size = req->size;
	strlcpy(wc->path, path, sizeof(wc->path));
	ap.id = sb->rec.id;
	ap.path = workspace;
	ap.flags = ARCHIVE_PUT_NO_REPLACE;
	ap.length = -1;
	msgw_init(&w);
	msg_put_archive_put(&w, &ap);
	if (proxy_call(MSG_DOCKER_ARCHIVE_PUT, fd, &w, 0, MSG_DOCKER_DONE,
	    write_done, wc) == 0) {
		apid_error(apid_id, ERR_INTERNAL, "cannot reach dockerd-proxy");
		free(wc);
		return;
	}
	ready.name = path + sizeof(WORKSPACE);	/* past "/workspace/" */
	ready.uid = conf->sandbox_uid;
	ready.gid = conf->sandbox_gid;
	ready.mode = req->mode;
	ready.mtime = (int64_t)clock_wall();
	/* Lexically: every parent a new directory, as apid's tar has it. */
	ready.ndirs = 0;
	for (p = ready.name; (p = strchr(p, '/')) != NULL &&
	    ready.ndirs < FILE_WRITE_MAX_DIRS; p++) {
		ready.dirs[ready.ndirs].mode = 0755;
		ready.dirs[ready.ndirs].mtime = ready.mtime;
		ready.dirs[ready.ndirs++].mtime_nsec = 0;
	}
	msgw_init(&w);
	msg_put_file_write_ready(&w, &ready);
	apid_reply(apid_id, MSG_FILE_WRITE_READY, &w);
	return;
fail:
	close(fd);
}

/* --- list ----------------------------------------------------------------- */

/* fd: the write end of an exec output pipe, as for MSG_EXEC_START. */
void
file_list(uint32_t apid_id, struct file_request *req, int fd)
{
	static char		 sh[] = "/bin/sh", dash_c[] = "-c";
	static char		 argv0[] = "sh", root[] = "/";
	struct sandbox		*sb;
	struct docker_exec	 dx;
	char			 dir[MSG_MAX_PATH + 1], user[32];
	char			 script[sizeof(list_script)];
	char			*argv[6];

	if ((sb = sandbox_find(req->sandbox_id)) == NULL) {
		apid_not_found(apid_id, req->sandbox_id);
		goto fail;
	}
	if (req->path == NULL)
		strlcpy(dir, WORKSPACE, sizeof(dir));
	else if (normalize_or_refuse(apid_id, req->path, dir) == -1)
		goto fail;
	memcpy(script, list_script, sizeof(script));
	argv[0] = sh;
	argv[1] = dash_c;
	argv[2] = script;
	argv[3] = argv0;
	argv[4] = dir;
	argv[5] = NULL;
	memset(&dx, 0, sizeof(dx));
	dx.id = sb->rec.id;
	dx.argc = 5;
	dx.argv = argv;
	dx.workdir = root;
	snprintf(user, sizeof(user), "%u:%u", env->conf.sandbox_uid,
	    env->conf.sandbox_gid);
	dx.user = user;
	dx.timeout_seconds = LIST_TIMEOUT_SECONDS;
	exec_run(apid_id, &dx, fd, MSG_FILE_LIST_STARTED, dir);
	return;
fail:
	close(fd);
}
