/*
 * Snapshot records in the data directory (API.md §9): snapshots/<id>.tar
 * holds the workspace, snapshots/<id>.json the text Python's
 * json.dumps(record, indent=2, sort_keys=True) gives for
 *
 *	{"created_at", "id", "name", "sandbox_id", "size_bytes", "spec"}
 *
 * A snapshot exists iff both files exist and the record reads back;
 * anything else is no snapshot (and left alone: a listing skips it).  An
 * id reaches the file system only once id_is_snapshot() accepted it.
 *
 * The JSON is store_json.c's: the same string encoder and strict parser,
 * and the spec object written and read as a sandbox record holds it, so
 * both kinds of record carry it byte for byte alike.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "format.h"
#include "managerd.h"

#define SNAP_DIR	"snapshots"
#define JSON_SUFFIX	".json"
#define TMP_SUFFIX	".json.tmp"

int
snapshot_path(char *buf, size_t len, const char *id, const char *suffix)
{
	if (!id_is_snapshot(id)) {
		errno = ENOENT;
		return -1;
	}
	if ((size_t)snprintf(buf, len, SNAP_DIR "/%s%s", id, suffix) >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

void
snapshot_record_free(struct snapshot_record *r)
{
	free(r->name);
	free(r->sandbox_id);
	sandbox_spec_free(&r->spec);
	egress_policy_free(&r->egress);
	memset(r, 0, sizeof(*r));
}

/* --- writing -------------------------------------------------------------- */

char *
store_snapshot_to_json(const struct snapshot_record *r)
{
	struct sbuf	 b;
	char		 num[FORMAT_PYFLOAT_LEN];

	memset(&b, 0, sizeof(b));
	if (!id_is_snapshot(r->id) || r->sandbox_id == NULL ||
	    !isfinite(r->created_at) ||
	    format_pyfloat(r->created_at, num, sizeof(num)) == NULL) {
		errno = EINVAL;
		return NULL;
	}
	sbuf_puts(&b, "{\n  \"created_at\": ");
	sbuf_puts(&b, num);
	store_json_put_egress(&b, &r->egress);
	sbuf_puts(&b, ",\n  \"id\": ");
	store_json_put_string(&b, r->id);
	sbuf_puts(&b, ",\n  \"name\": ");
	if (r->name == NULL)
		sbuf_puts(&b, "null");
	else
		store_json_put_string(&b, r->name);
	sbuf_puts(&b, ",\n  \"sandbox_id\": ");
	store_json_put_string(&b, r->sandbox_id);
	snprintf(num, sizeof(num), "%" PRIu64, r->size_bytes);
	sbuf_puts(&b, ",\n  \"size_bytes\": ");
	sbuf_puts(&b, num);
	sbuf_puts(&b, ",\n  \"spec\": ");
	if (store_json_put_spec(&b, &r->spec) == -1) {
		free(b.p);
		return NULL;
	}
	store_json_put_tenant(&b, r->tenant);
	sbuf_puts(&b, "\n}");
	if (b.failed) {
		free(b.p);
		errno = b.failed;
		return NULL;
	}
	return b.p;
}

/* --- reading -------------------------------------------------------------- */

/*
 * The spec as a sandbox record holds it, within what the messages
 * carrying it allow (a fork sends it on).
 */
static int
get_spec(struct json_object *o, struct sandbox_spec *spec)
{
	const struct env_list	*el;
	size_t			 i;

	if (store_json_get_spec(o, spec) == -1)
		return -1;
	el = &spec->env;
	if (strlen(spec->image) > MSG_MAX_IMAGE || el->count > MSG_MAX_ENV)
		goto bad;
	for (i = 0; i < el->count; i++)
		if (strlen(el->keys[i]) > MSG_MAX_ENV_KEY ||
		    strlen(el->values[i]) > MSG_MAX_ENV_VALUE)
			goto bad;
	return 0;
bad:
	sandbox_spec_free(spec);
	return -1;
}

static int
get_record(struct json_object *o, void *arg)
{
	struct snapshot_record	*r = arg;
	struct json_object	*v;
	char			*id;
	int64_t			 size;

	if (!json_object_is_type(o, json_type_object))
		return -1;
	if ((id = store_json_get_string(o, "id", SNAPSHOT_ID_LEN)) == NULL)
		return -1;
	if (!id_is_snapshot(id)) {
		free(id);
		return -1;
	}
	strlcpy(r->id, id, sizeof(r->id));
	free(id);
	if (store_json_get_double(o, "created_at", &r->created_at) == -1)
		return -1;
	if (!json_object_object_get_ex(o, "name", &v))
		return -1;
	if (!json_object_is_type(v, json_type_null) &&
	    (r->name = store_json_get_string(o, "name",
	    MSG_MAX_SNAPSHOT_NAME)) == NULL)
		return -1;
	if ((r->sandbox_id = store_json_get_string(o, "sandbox_id",
	    MSG_MAX_ID)) == NULL)
		return -1;
	/* INT64_MAX may be json-c saturating what does not fit. */
	if (store_json_get_int(o, "size_bytes", &size) == -1 || size < 0 ||
	    size == INT64_MAX)
		return -1;
	r->size_bytes = (uint64_t)size;
	if (store_json_get_tenant(o, r->tenant) == -1 ||
	    store_json_get_egress(o, &r->egress) == -1)
		return -1;
	return get_spec(o, &r->spec);
}

int
store_snapshot_from_json(const char *text, struct snapshot_record *r)
{
	int	 saved;

	memset(r, 0, sizeof(*r));
	if (store_json_read(text, get_record, r) == 0)
		return 0;
	saved = errno;
	snapshot_record_free(r);
	errno = saved;
	return -1;
}

/* --- files ---------------------------------------------------------------- */

int
store_snapshot_sync_dir(int datafd)
{
	return store_sync_dir(datafd, SNAP_DIR);
}

int
store_snapshot_write(int datafd, const struct snapshot_record *r)
{
	char	 tmp[SNAPSHOT_PATH_MAX], dst[SNAPSHOT_PATH_MAX], *text;
	int	 ret, saved;

	if (snapshot_path(tmp, sizeof(tmp), r->id, TMP_SUFFIX) == -1 ||
	    snapshot_path(dst, sizeof(dst), r->id, JSON_SUFFIX) == -1) {
		errno = EINVAL;
		return -1;
	}
	if ((text = store_snapshot_to_json(r)) == NULL)
		return -1;
	ret = store_write_file(datafd, SNAP_DIR, tmp, dst, text);
	saved = errno;
	free(text);
	errno = saved;
	return ret;
}

/*
 * -1 with ENOENT when there is no such snapshot (a malformed id, a
 * missing or unreadable record or tar, a record of another id); another
 * errno when it could not be looked at.
 */
int
store_snapshot_load(int datafd, const char *id, struct snapshot_record *r)
{
	struct stat	 st;
	char		 path[SNAPSHOT_PATH_MAX], *text;

	memset(r, 0, sizeof(*r));
	if (snapshot_path(path, sizeof(path), id, ".tar") == -1)
		return -1;
	if (fstatat(datafd, path, &st, AT_SYMLINK_NOFOLLOW) == -1) {
		if (errno == ENOTDIR)
			errno = ENOENT;
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		errno = ENOENT;
		return -1;
	}
	(void)snapshot_path(path, sizeof(path), id, JSON_SUFFIX);
	switch (store_read_file(datafd, path, &text)) {
	case STORE_READ_FAILED:
		if (errno == ENOMEM || errno == EMFILE || errno == ENFILE ||
		    errno == EIO)
			return -1;
		/* FALLTHROUGH */
	case STORE_READ_BAD:
		errno = ENOENT;
		return -1;
	case STORE_READ_OK:
		break;
	}
	if (store_snapshot_from_json(text, r) == -1 ||
	    strcmp(r->id, id) != 0) {
		free(text);
		snapshot_record_free(r);
		errno = ENOENT;
		return -1;
	}
	free(text);
	return 0;
}

/*
 * The record first: the snapshot is gone the moment it is, and a crash
 * before the tar follows leaves a tar without a record, which the next
 * start removes (recover.c), never a record without its tar.
 */
int
store_snapshot_remove(int datafd, const char *id)
{
	char	 path[SNAPSHOT_PATH_MAX];

	if (snapshot_path(path, sizeof(path), id, JSON_SUFFIX) == -1)
		return -1;
	if (unlinkat(datafd, path, 0) == -1 && errno != ENOENT)
		return -1;
	(void)snapshot_path(path, sizeof(path), id, ".tar");
	if (unlinkat(datafd, path, 0) == -1 && errno != ENOENT)
		return -1;
	return store_snapshot_sync_dir(datafd);
}

/*
 * What a listing shows of each snapshot of sandbox_id (NULL: all): the
 * spec's environment, which alone may take a megabyte, is not kept.
 */
int
store_snapshot_load_all(int datafd, const char *sandbox_id,
    struct snapshot_record **out, size_t *countp)
{
	struct snapshot_record	*v = NULL, *nv, r;
	struct dirent		*de;
	DIR			*d;
	char			 id[SNAPSHOT_ID_LEN + 1];
	size_t			 count = 0, cap = 0, len, i;
	int			 fd, saved;

	*out = NULL;
	*countp = 0;
	if ((fd = openat(datafd, SNAP_DIR,
	    O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return errno == ENOENT ? 0 : -1;
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
				goto fail;
			break;
		}
		len = strlen(de->d_name);
		if (len != SNAPSHOT_ID_LEN + sizeof(JSON_SUFFIX) - 1 ||
		    strcmp(de->d_name + SNAPSHOT_ID_LEN, JSON_SUFFIX) != 0)
			continue;
		memcpy(id, de->d_name, SNAPSHOT_ID_LEN);
		id[SNAPSHOT_ID_LEN] = '\0';
		if (store_snapshot_load(datafd, id, &r) == -1) {
			if (errno == ENOENT)
				continue;	/* corrupt or partial */
			goto fail;
		}
		if (sandbox_id != NULL && strcmp(r.sandbox_id,
		    sandbox_id) != 0) {
			snapshot_record_free(&r);
			continue;
		}
		env_list_free(&r.spec.env);
		if (count == cap) {
			cap = cap == 0 ? 64 : cap * 2;
			if ((nv = reallocarray(v, cap, sizeof(*v))) == NULL) {
				snapshot_record_free(&r);
				goto fail;
			}
			v = nv;
		}
		v[count++] = r;
	}
	closedir(d);
	*out = v;
	*countp = count;
	return 0;
fail:
	saved = errno;
	closedir(d);
	for (i = 0; i < count; i++)
		snapshot_record_free(&v[i]);
	free(v);
	errno = saved;
	return -1;
}
