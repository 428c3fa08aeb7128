/*
 * Where an upload lands (API.md §4.10 step 7, §16.1): the path's
 * directories are looked at inside the sandbox, from /workspace down,
 * one component at a time (dockerd-proxy's ARCHIVE_HEAD, Docker's stat
 * of a path).  A directory goes on; a symlink is followed to where
 * Docker resolved it, which must lie in /workspace, and the walk starts
 * again there, so that every directory of the physical path is seen;
 * the first missing component and all after it are new directories.
 *
 * What comes out is the upload tar's plan: the name relative to
 * /workspace with the symlinks resolved, and the mode and mtime of every
 * parent directory that exists, so the tar's directory members leave
 * them as they were.  Every parent is a directory member and Docker is
 * asked not to put a directory over a non-directory, so a component the
 * sandbox swaps for a symlink after the walk fails the upload; it never
 * leads it outside /workspace.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "managerd.h"

#define WORKSPACE		"/workspace"
#define WORKSPACE_LEN		(sizeof(WORKSPACE) - 1)
#define WALK_MAX_LINKS		8
#define WALK_MAX_COMPONENTS	FILE_WRITE_MAX_DIRS

static void	walk_next(struct file_walk *);

static void
walk_end(struct file_walk *wk, enum error_kind kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The one callback; the walk is over once it returns. */
static void
walk_end(struct file_walk *wk, enum error_kind kind, const char *fmt, ...)
{
	char	 text[MSG_MAX_STRING + 1];
	va_list	 ap;

	text[0] = '\0';
	if (fmt != NULL) {
		va_start(ap, fmt);
		vsnprintf(text, sizeof(text), fmt, ap);
		va_end(ap);
	}
	wk->done_cb(wk, kind, kind != 0 ? text : NULL);
}

/* The components of phys below /workspace: the file and its parents. */
static size_t
walk_components(const struct file_walk *wk)
{
	const char	*p;
	size_t		 n = 0;

	for (p = wk->phys + WORKSPACE_LEN; *p != '\0'; p++)
		n += *p == '/';
	return n;
}

/*
 * Where phys[0..e) ends in the path the client asked for: the part that
 * a symlink's target stands for maps to the symlink, the rest is the
 * requested path's own tail.
 */
static size_t
walk_requested_end(const struct file_walk *wk, size_t e)
{
	if (e <= wk->target_end)
		return wk->requested_rest;
	return wk->requested_rest + (e - wk->target_end);
}

/* "cannot create <parent>: <component> is not a directory" */
static void
walk_not_a_directory(struct file_walk *wk)
{
	size_t	 parent, component;

	parent = (size_t)(strrchr(wk->requested, '/') - wk->requested);
	component = walk_requested_end(wk, wk->end);
	walk_end(wk, ERR_INVALID_REQUEST, "cannot create %.*s: %.*s is not "
	    "a directory", (int)parent, wk->requested, (int)component,
	    wk->requested);
}

/* From phys (re)set: check its size, then look at its first component. */
static void
walk_restart(struct file_walk *wk)
{
	wk->done = WORKSPACE_LEN;
	wk->ndirs = 0;
	wk->nexisting = 0;
	if (walk_components(wk) > WALK_MAX_COMPONENTS) {
		walk_end(wk, ERR_INVALID_REQUEST, "%s: more than %d path "
		    "components", wk->requested, WALK_MAX_COMPONENTS);
		return;
	}
	walk_next(wk);
}

/* phys becomes to and what came after the link; the walk starts over. */
static void
walk_splice(struct file_walk *wk, const char *to)
{
	size_t	 tlen = strlen(to), rest = strlen(wk->phys + wk->end);

	if (tlen + rest > MSG_MAX_PATH) {
		walk_end(wk, ERR_INVALID_REQUEST, "%s: file name too long",
		    wk->requested);
		return;
	}
	wk->requested_rest = walk_requested_end(wk, wk->end);
	wk->target_end = tlen;
	memmove(wk->phys + tlen, wk->phys + wk->end, rest + 1);
	memcpy(wk->phys, to, tlen);
	walk_restart(wk);
}

/* The component at phys[done..end) is a symlink to target. */
static void
walk_follow(struct file_walk *wk, const char *target)
{
	char	 link[MSG_MAX_PATH + 1], to[MSG_MAX_PATH + 1];

	if (++wk->links > WALK_MAX_LINKS) {
		walk_end(wk, ERR_INVALID_REQUEST, "%s: too many levels of "
		    "symbolic links", wk->requested);
		return;
	}
	memcpy(link, wk->phys, wk->end);
	link[wk->end] = '\0';
	if (path_join_link(link, target, to, sizeof(to)) == -1) {
		walk_end(wk, ERR_INVALID_REQUEST, "%s: file name too long",
		    wk->requested);
		return;
	}
	/* Docker resolved it in the container: /etc is the container's. */
	if (strcmp(to, WORKSPACE) != 0 && !path_in_workspace(to)) {
		walk_end(wk, ERR_INVALID_REQUEST,
		    "writes are limited to files under /workspace");
		return;
	}
	walk_splice(wk, to);
}

/* The component does not exist: it and every parent after it are new. */
static void
walk_missing(struct file_walk *wk)
{
	/* A symlink to nothing, or its target went away: mkdir -p fails. */
	if (wk->links > 0 && wk->end <= wk->target_end) {
		walk_not_a_directory(wk);
		return;
	}
	wk->nexisting = wk->ndirs;
	wk->ndirs = (uint32_t)walk_components(wk) - 1;
	walk_end(wk, 0, NULL);
}

static void
walk_stat(struct file_walk *wk, const struct archive_stat *st)
{
	struct file_write_dir	*d;
	int			 last = wk->phys[wk->end] == '\0';

	if (st->kind == ARCHIVE_KIND_DIR && last) {
		walk_end(wk, ERR_INVALID_REQUEST, "%s is a directory",
		    wk->requested);
	} else if (st->kind == ARCHIVE_KIND_DIR) {
		d = &wk->dirs[wk->ndirs++];
		d->mode = st->mode;
		d->mtime = st->mtime;
		d->mtime_nsec = st->mtime_nsec;
		wk->done = wk->end;
		walk_next(wk);
	} else if (last) {
		/* A file, a symlink, a fifo: the upload replaces it. */
		wk->nexisting = wk->ndirs;
		walk_end(wk, 0, NULL);
	} else if (st->kind == ARCHIVE_KIND_SYMLINK &&
	    st->link_target[0] == '\0') {
		/* One Docker could not resolve: a loop. */
		walk_end(wk, ERR_INVALID_REQUEST, "%s: too many levels of "
		    "symbolic links", wk->requested);
	} else if (st->kind == ARCHIVE_KIND_SYMLINK)
		walk_follow(wk, st->link_target);
	else
		walk_not_a_directory(wk);
}

/* The proxy's "<path>: not found", not the sandbox's. */
static int
walk_is_missing(const struct file_walk *wk, const char *text)
{
	static const char	 suffix[] = ": not found";

	return strlen(text) == wk->end + sizeof(suffix) - 1 &&
	    memcmp(text, wk->phys, wk->end) == 0 &&
	    strcmp(text + wk->end, suffix) == 0;
}

static void
walk_reply(struct imsg *reply, void *arg)
{
	struct file_walk	*wk = arg;
	struct archive_stat	 st;
	uint32_t		 kind;
	char			*text;

	if (reply->hdr.type == MSG_DOCKER_ARCHIVE_STAT) {
		if (msg_get_archive_stat(reply, &st) == -1)
			peer_bad_message(&env->proxy_peer, reply,
			    "malformed stat");
		walk_stat(wk, &st);
		archive_stat_free(&st);
		return;
	}
	text = proxy_error_text(reply, &kind);
	if (kind == ERR_NOT_FOUND && walk_is_missing(wk, text))
		walk_missing(wk);
	else
		walk_end(wk, kind, "%s", text);
	free(text);
}

/*
 * Ask about the component after phys[0..done), or end at the file.  The
 * file itself is asked about only on a path a symlink led to: what it
 * is changes nothing (the upload replaces it) but for a directory, and
 * the PUT's NO_REPLACE refuses that in the same words ("<path> is a
 * directory") with the same status, once the body has come.  After a
 * symlink the stat's answer names the path asked for, Docker's the one
 * the link led to, so there the stat stays.  Most uploads, a name in a
 * directory that exists, then cost Docker no stat before the PUT.
 */
static void
walk_next(struct file_walk *wk)
{
	struct archive_head	 ah;
	struct msgw		 w;
	char			 path[MSG_MAX_PATH + 1];

	wk->end = wk->done + 1 + strcspn(wk->phys + wk->done + 1, "/");
	if (wk->phys[wk->end] == '\0' && wk->links == 0) {
		wk->nexisting = wk->ndirs;
		walk_end(wk, 0, NULL);
		return;
	}
	memcpy(path, wk->phys, wk->end);
	path[wk->end] = '\0';
	ah.id = wk->id;
	ah.path = path;
	msgw_init(&w);
	msg_put_archive_head(&w, &ah);
	if (proxy_call(MSG_DOCKER_ARCHIVE_HEAD, -1, &w, 0,
	    MSG_DOCKER_ARCHIVE_STAT, walk_reply, wk) == 0)
		walk_end(wk, ERR_INTERNAL, "cannot reach dockerd-proxy");
}

void
file_walk_start(struct file_walk *wk, const char *sandbox_id,
    const char *path, file_walk_cb done, void *arg)
{
	memset(wk, 0, sizeof(*wk));
	strlcpy(wk->id, sandbox_id, sizeof(wk->id));
	strlcpy(wk->requested, path, sizeof(wk->requested));
	strlcpy(wk->phys, path, sizeof(wk->phys));
	wk->target_end = WORKSPACE_LEN;
	wk->requested_rest = WORKSPACE_LEN;
	wk->done_cb = done;
	wk->arg = arg;
	walk_restart(wk);
}
