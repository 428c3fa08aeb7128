/*
 * Sandbox records in the data directory (API.md §9): one file
 * sandboxes/<id>.json per sandbox holding the text Python's
 * json.dumps(record, indent=2, sort_keys=True) gives (store_json.c), so
 * the reference and this server can read each other's records.  Files
 * are replaced atomically (store_file.c); loading at start-up deletes what
 * cannot be a record.
 *
 * Only openat, unlinkat, mkdirat, getdents64 and what store_file.c uses
 * are used: managerd is chrooted into the data directory and under
 * seccomp when this runs.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format.h"
#include "log.h"
#include "managerd.h"

#define STORE_DIR	"sandboxes"
#define SUFFIX		".json"
#define TMP_SUFFIX	".json.tmp"
/* "sandboxes/" + id + ".json.tmp" */
#define STORE_PATH_LEN	(sizeof(STORE_DIR "/") + SANDBOX_ID_LEN + \
			    sizeof(TMP_SUFFIX))

int
store_sandbox_write(int datafd, const struct sandbox_record *r)
{
	char	 tmp[STORE_PATH_LEN], dst[STORE_PATH_LEN], *text;
	int	 ret, saved;

	if (!id_is_sandbox(r->id)) {
		errno = EINVAL;
		return -1;
	}
	if ((text = store_sandbox_to_json(r)) == NULL)
		return -1;
	(void)snprintf(tmp, sizeof(tmp), STORE_DIR "/%s" TMP_SUFFIX, r->id);
	(void)snprintf(dst, sizeof(dst), STORE_DIR "/%s" SUFFIX, r->id);
	ret = store_write_file(datafd, STORE_DIR, tmp, dst, text);
	saved = errno;
	free(text);
	errno = saved;
	return ret;
}

int
store_sandbox_remove(int datafd, const char *id)
{
	char	 dst[STORE_PATH_LEN];

	if (!id_is_sandbox(id)) {
		errno = EINVAL;
		return -1;
	}
	(void)snprintf(dst, sizeof(dst), STORE_DIR "/%s" SUFFIX, id);
	if (unlinkat(datafd, dst, 0) == -1 && errno != ENOENT)
		return -1;
	return 0;
}

int
store_sandbox_sync_dir(int datafd)
{
	return store_sync_dir(datafd, STORE_DIR);
}

static int
has_suffix(const char *name, const char *suffix)
{
	size_t	 n = strlen(name), s = strlen(suffix);

	return n >= s && strcmp(name + n - s, suffix) == 0;
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
drop(int dfd, const char *name, const char *why)
{
	char	*q;

	q = format_pyrepr(name);
	log_warnx("removing sandbox record %s: %s", q != NULL ? q : "?", why);
	free(q);
	if (unlinkat(dfd, name, 0) == -1 && errno != ENOENT)
		log_warn("unlink %s", STORE_DIR);
}

/*
 * A record left in place, unread: hand its id to skipped, if the file is
 * named after one, so that nobody takes the sandbox for an orphan.
 */
static void
skip(const char *name, void (*skipped)(const char *, void *), void *arg)
{
	char	 id[SANDBOX_ID_LEN + 1];
	char	*q;
	int	 saved = errno;

	q = format_pyrepr(name);
	errno = saved;
	log_warn("skipping sandbox record %s", q != NULL ? q : "?");
	free(q);
	if (skipped == NULL ||
	    strlen(name) != SANDBOX_ID_LEN + sizeof(SUFFIX) - 1)
		return;
	memcpy(id, name, SANDBOX_ID_LEN);
	id[SANDBOX_ID_LEN] = '\0';
	if (id_is_sandbox(id))
		skipped(id, arg);
}

static void
load_one(int dfd, const char *name,
    void (*cb)(struct sandbox_record *, void *),
    void (*skipped)(const char *, void *), void *arg)
{
	struct sandbox_record	*r;
	char			*text;

	switch (store_read_file(dfd, name, &text)) {
	case STORE_READ_FAILED:
		skip(name, skipped, arg);
		return;
	case STORE_READ_BAD:
		drop(dfd, name, "not a regular file, or too large");
		return;
	case STORE_READ_OK:
		break;
	}
	if ((r = malloc(sizeof(*r))) == NULL) {
		skip(name, skipped, arg);
		free(text);
		return;
	}
	if (store_sandbox_from_json(text, r) == -1) {
		free(text);
		free(r);
		drop(dfd, name, "unparseable");
		return;
	}
	free(text);
	/* The file must be named after the record it holds. */
	if (strlen(name) != SANDBOX_ID_LEN + sizeof(SUFFIX) - 1 ||
	    strncmp(name, r->id, SANDBOX_ID_LEN) != 0) {
		sandbox_record_free(r);
		free(r);
		drop(dfd, name, "id does not match the file name");
		return;
	}
	cb(r, arg);
}

/* The store directory, made if missing. */
static int
open_store_dir(int datafd)
{
	int	 fd;

	fd = openat(datafd, STORE_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd == -1 && errno == ENOENT) {
		if (mkdirat(datafd, STORE_DIR, 0700) == -1 && errno != EEXIST)
			return -1;
		fd = openat(datafd, STORE_DIR,
		    O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	return fd;
}

int
store_sandbox_load_all(int datafd,
    void (*cb)(struct sandbox_record *, void *), void *arg)
{
	return store_sandbox_load(datafd, cb, NULL, arg);
}

int
store_sandbox_load(int datafd, void (*cb)(struct sandbox_record *, void *),
    void (*skipped)(const char *, void *), void *arg)
{
	DIR		*d;
	struct dirent	*de;
	char		**names = NULL, **nn;
	size_t		 count = 0, i;
	int		 fd, saved, ret = -1;

	if ((fd = open_store_dir(datafd)) == -1)
		return -1;
	if ((d = fdopendir(fd)) == NULL) {
		saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	for (;;) {
		errno = 0;
		if ((de = readdir(d)) == NULL) {
			if (errno != 0)
				goto done;
			break;
		}
		if (!has_suffix(de->d_name, SUFFIX) &&
		    !has_suffix(de->d_name, TMP_SUFFIX))
			continue;
		if ((nn = reallocarray(names, count + 1,
		    sizeof(*names))) == NULL)
			goto done;
		names = nn;
		if ((names[count] = strdup(de->d_name)) == NULL)
			goto done;
		count++;
	}
	/* File-name order, as the reference's sorted(glob("*.json")). */
	if (count > 0)
		qsort(names, count, sizeof(*names), name_cmp);
	for (i = 0; i < count; i++) {
		if (has_suffix(names[i], TMP_SUFFIX))
			drop(dirfd(d), names[i], "left over from a write");
		else
			load_one(dirfd(d), names[i], cb, skipped, arg);
	}
	ret = 0;
done:
	saved = errno;
	for (i = 0; i < count; i++)
		free(names[i]);
	free(names);
	closedir(d);
	errno = saved;
	return ret;
}
