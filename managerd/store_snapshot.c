/*
 * Snapshot records in the data directory (API.md §9): snapshots/<id>.tar
 * holds the workspace, snapshots/<id>.json the text Python's
 * json.dumps(record, indent=2, sort_keys=True) gives for
 *
 *	{"created_at", "id", "name", "sandbox_id", "size_bytes", "spec"}
 *
 * A snapshot exists iff both files exist and the record reads back;
 * anything else is no snapshot (and left alone: a listing skips it).  An
 * id reaches the file system only once snapshot_id_valid() accepted it.
 *
 * The spec object is the one a sandbox record holds, written and read by
 * store_json.c, so both kinds of record carry it byte for byte alike.
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
/* Stands in for the sandbox id when the spec goes through store_json.c. */
#define SPEC_HOLDER_ID	"sb_0000000000000000"
#define SPEC_KEY	"\n  \"spec\": "

int
snapshot_id_valid(const char *id)
{
	size_t	 i;

	if (strncmp(id, "snap_", 5) != 0)
		return 0;
	for (i = 5; i < SNAPSHOT_ID_LEN; i++)
		if (!((id[i] >= '0' && id[i] <= '9') ||
		    (id[i] >= 'a' && id[i] <= 'f')))
			return 0;
	return id[SNAPSHOT_ID_LEN] == '\0';
}

int
snapshot_path(char *buf, size_t len, const char *id, const char *suffix)
{
	if (!snapshot_id_valid(id)) {
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
	memset(r, 0, sizeof(*r));
}

/* --- writing -------------------------------------------------------------- */

/* A growing string; once an append fails it stays failed. */
struct sbuf {
	char	*p;
	size_t	 len;
	size_t	 cap;
	int	 failed;
};

static void
sbuf_add(struct sbuf *b, const char *s, size_t n)
{
	size_t	 cap;
	char	*p;

	if (b->failed)
		return;
	if (b->len + n > STORE_RECORD_MAX) {
		b->failed = EFBIG;
		return;
	}
	if (b->len + n + 1 > b->cap) {
		cap = b->cap < 256 ? 256 : b->cap;
		while (cap < b->len + n + 1)
			cap *= 2;
		if ((p = realloc(b->p, cap)) == NULL) {
			b->failed = ENOMEM;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void
sbuf_puts(struct sbuf *b, const char *s)
{
	sbuf_add(b, s, strlen(s));
}

/*
 * A JSON string as json.dumps writes it (ensure_ascii): printable ASCII
 * as is, the short escapes, the rest \uXXXX, astral characters as
 * surrogate pairs, undecodable bytes as the lone surrogates Python's
 * surrogateescape gives them.
 */
static void
put_string(struct sbuf *b, const char *str)
{
	const unsigned char	*s = (const unsigned char *)str;
	size_t			 len = strlen(str), i = 0;
	uint32_t		 cp, u[2];
	char			 esc[16];
	int			 n, k;

	sbuf_add(b, "\"", 1);
	while (i < len) {
		if (s[i] >= 0x20 && s[i] < 0x7f && s[i] != '"' &&
		    s[i] != '\\') {
			sbuf_add(b, str + i++, 1);
			continue;
		}
		switch (s[i]) {
		case '"':  sbuf_add(b, "\\\"", 2); i++; continue;
		case '\\': sbuf_add(b, "\\\\", 2); i++; continue;
		case '\n': sbuf_add(b, "\\n", 2); i++; continue;
		case '\r': sbuf_add(b, "\\r", 2); i++; continue;
		case '\t': sbuf_add(b, "\\t", 2); i++; continue;
		case '\b': sbuf_add(b, "\\b", 2); i++; continue;
		case '\f': sbuf_add(b, "\\f", 2); i++; continue;
		}
		i += utf8_next_or_escape(s + i, len - i, &cp);
		n = 1;
		u[0] = cp;
		if (cp >= 0x10000) {
			cp -= 0x10000;
			u[0] = 0xd800 | (cp >> 10);
			u[1] = 0xdc00 | (cp & 0x3ff);
			n = 2;
		}
		for (k = 0; k < n; k++) {
			snprintf(esc, sizeof(esc), "\\u%04x", u[k]);
			sbuf_puts(b, esc);
		}
	}
	sbuf_add(b, "\"", 1);
}

/* The spec object as store_json.c writes it into a sandbox record. */
static int
put_spec(struct sbuf *b, const struct sandbox_spec *spec)
{
	struct sandbox_record	 holder;
	char			*text, *p;
	size_t			 n;

	memset(&holder, 0, sizeof(holder));
	strlcpy(holder.id, SPEC_HOLDER_ID, sizeof(holder.id));
	holder.spec = *spec;
	if ((text = store_sandbox_to_json(&holder)) == NULL)
		return -1;
	/* "spec" is the record's last key; strings never hold a newline. */
	if ((p = strstr(text, SPEC_KEY)) == NULL ||
	    (n = strlen(p += sizeof(SPEC_KEY) - 1)) < 2) {
		free(text);
		errno = EINVAL;
		return -1;
	}
	sbuf_add(b, p, n - 2);		/* without the record's "\n}" */
	free(text);
	return 0;
}

char *
store_snapshot_to_json(const struct snapshot_record *r)
{
	struct sbuf	 b;
	char		 num[FORMAT_PYFLOAT_LEN];

	memset(&b, 0, sizeof(b));
	if (!snapshot_id_valid(r->id) || r->sandbox_id == NULL ||
	    !isfinite(r->created_at) ||
	    format_pyfloat(r->created_at, num, sizeof(num)) == NULL) {
		errno = EINVAL;
		return NULL;
	}
	sbuf_puts(&b, "{\n  \"created_at\": ");
	sbuf_puts(&b, num);
	sbuf_puts(&b, ",\n  \"id\": ");
	put_string(&b, r->id);
	sbuf_puts(&b, ",\n  \"name\": ");
	if (r->name == NULL)
		sbuf_puts(&b, "null");
	else
		put_string(&b, r->name);
	sbuf_puts(&b, ",\n  \"sandbox_id\": ");
	put_string(&b, r->sandbox_id);
	snprintf(num, sizeof(num), "%" PRIu64, r->size_bytes);
	sbuf_puts(&b, ",\n  \"size_bytes\": ");
	sbuf_puts(&b, num);
	sbuf_puts(&b, "," SPEC_KEY);
	if (put_spec(&b, &r->spec) == -1) {
		free(b.p);
		return NULL;
	}
	sbuf_puts(&b, "\n}");
	if (b.failed) {
		free(b.p);
		errno = b.failed;
		return NULL;
	}
	return b.p;
}

/* --- reading -------------------------------------------------------------- */

static int
hex4(const char *s, uint32_t *v)
{
	int	 i;

	*v = 0;
	for (i = 0; i < 4; i++) {
		if (s[i] >= '0' && s[i] <= '9')
			*v = *v << 4 | (uint32_t)(s[i] - '0');
		else if (s[i] >= 'a' && s[i] <= 'f')
			*v = *v << 4 | (uint32_t)(s[i] - 'a' + 10);
		else if (s[i] >= 'A' && s[i] <= 'F')
			*v = *v << 4 | (uint32_t)(s[i] - 'A' + 10);
		else
			return -1;
	}
	return 0;
}

/*
 * Every escaped surrogate pair inside a string becomes the UTF-8 of its
 * character, in place: json-c 0.16 turns some of them into U+FFFD, and
 * Python writes every astral character that way (see store_json.c).
 */
static void
decode_surrogate_pairs(char *s)
{
	size_t		 r = 0, w = 0;
	uint32_t	 hi, lo, cp;
	int		 in_string = 0;

	while (s[r] != '\0') {
		if (s[r] == '"')
			in_string = !in_string;
		else if (in_string && s[r] == '\\') {
			if (s[r + 1] == 'u' && hex4(s + r + 2, &hi) == 0 &&
			    hi >= 0xd800 && hi <= 0xdbff &&
			    s[r + 6] == '\\' && s[r + 7] == 'u' &&
			    hex4(s + r + 8, &lo) == 0 &&
			    lo >= 0xdc00 && lo <= 0xdfff) {
				cp = 0x10000 + ((hi - 0xd800) << 10) +
				    (lo - 0xdc00);
				s[w++] = (char)(0xf0 | (cp >> 18));
				s[w++] = (char)(0x80 | ((cp >> 12) & 0x3f));
				s[w++] = (char)(0x80 | ((cp >> 6) & 0x3f));
				s[w++] = (char)(0x80 | (cp & 0x3f));
				r += 12;
				continue;
			}
			s[w++] = s[r++];
			if (s[r] == '\0')
				break;
		}
		s[w++] = s[r++];
	}
	s[w] = '\0';
}

/* A string member of at most max bytes without NUL; NULL if not one. */
static char *
get_string(struct json_object *o, const char *key, size_t max)
{
	struct json_object	*v;
	const char		*s;
	size_t			 len;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	s = json_object_get_string(v);
	len = (size_t)json_object_get_string_len(v);
	if (len > max || memchr(s, '\0', len) != NULL)
		return NULL;
	return strdup(s);
}

/*
 * The spec, through store_json.c's reader: wrapped into a sandbox record
 * of a stand-in id.  json-c writes it out again as plain UTF-8.
 */
static int
get_spec(struct json_object *o, struct sandbox_spec *spec)
{
	struct sandbox_record	 holder;
	struct json_object	*so;
	const struct env_list	*el;
	const char		*text;
	char			*wrapped;
	size_t			 i;

	if (!json_object_object_get_ex(o, "spec", &so) ||
	    !json_object_is_type(so, json_type_object))
		return -1;
	text = json_object_to_json_string_ext(so, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE);
	if (text == NULL || asprintf(&wrapped, "{\"created_at\": 0, "
	    "\"expires_at\": 0, \"id\": \"" SPEC_HOLDER_ID "\", \"spec\": %s}",
	    text) == -1)
		return -1;
	if (store_sandbox_from_json(wrapped, &holder) == -1) {
		free(wrapped);
		return -1;
	}
	free(wrapped);
	*spec = holder.spec;
	memset(&holder.spec, 0, sizeof(holder.spec));
	sandbox_record_free(&holder);
	/* What the messages carrying it allow (a fork sends it on). */
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
get_record(struct json_object *o, struct snapshot_record *r)
{
	struct json_object	*v;
	char			*id;
	int64_t			 size;

	if (!json_object_is_type(o, json_type_object))
		return -1;
	if ((id = get_string(o, "id", SNAPSHOT_ID_LEN)) == NULL)
		return -1;
	if (!snapshot_id_valid(id)) {
		free(id);
		return -1;
	}
	strlcpy(r->id, id, sizeof(r->id));
	free(id);
	if (!json_object_object_get_ex(o, "created_at", &v) ||
	    (!json_object_is_type(v, json_type_double) &&
	    !json_object_is_type(v, json_type_int)))
		return -1;
	r->created_at = json_object_get_double(v);
	if (!isfinite(r->created_at))
		return -1;
	if (!json_object_object_get_ex(o, "name", &v))
		return -1;
	if (!json_object_is_type(v, json_type_null) &&
	    (r->name = get_string(o, "name", MSG_MAX_SNAPSHOT_NAME)) == NULL)
		return -1;
	if ((r->sandbox_id = get_string(o, "sandbox_id", MSG_MAX_ID)) == NULL)
		return -1;
	if (!json_object_object_get_ex(o, "size_bytes", &v) ||
	    !json_object_is_type(v, json_type_int))
		return -1;
	/* json-c saturates what does not fit. */
	if ((size = json_object_get_int64(v)) < 0 || size == INT64_MAX)
		return -1;
	r->size_bytes = (uint64_t)size;
	return get_spec(o, &r->spec);
}

int
store_snapshot_from_json(const char *text, struct snapshot_record *r)
{
	struct json_tokener	*tok;
	struct json_object	*o = NULL;
	char			*copy;
	size_t			 len, end;
	int			 ret = -1;

	memset(r, 0, sizeof(*r));
	if (strlen(text) > STORE_RECORD_MAX) {
		errno = EINVAL;
		return -1;
	}
	if ((copy = strdup(text)) == NULL)
		return -1;
	decode_surrogate_pairs(copy);
	len = strlen(copy);
	if ((tok = json_tokener_new()) == NULL) {
		free(copy);
		return -1;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT |
	    JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, copy, (int)len);
	if (o == NULL || json_tokener_get_error(tok) != json_tokener_success)
		goto done;
	for (end = json_tokener_get_parse_end(tok); end < len; end++)
		if (strchr(" \t\r\n", copy[end]) == NULL)
			goto done;
	ret = get_record(o, r);
done:
	json_object_put(o);
	json_tokener_free(tok);
	free(copy);
	if (ret == -1) {
		snapshot_record_free(r);
		errno = EINVAL;
	}
	return ret;
}

/* --- files ---------------------------------------------------------------- */

static int
write_all(int fd, const char *p, size_t len)
{
	ssize_t	 n;

	while (len > 0) {
		if ((n = write(fd, p, len)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int
store_snapshot_sync_dir(int datafd)
{
	int	 fd, saved;

	if ((fd = openat(datafd, SNAP_DIR,
	    O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return -1;
	if (fsync(fd) == -1) {
		saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	return close(fd);
}

int
store_snapshot_write(int datafd, const struct snapshot_record *r)
{
	char	 tmp[SNAPSHOT_PATH_MAX], dst[SNAPSHOT_PATH_MAX], *text;
	int	 fd = -1, made = 0, saved;

	if (snapshot_path(tmp, sizeof(tmp), r->id, TMP_SUFFIX) == -1 ||
	    snapshot_path(dst, sizeof(dst), r->id, JSON_SUFFIX) == -1) {
		errno = EINVAL;
		return -1;
	}
	if ((text = store_snapshot_to_json(r)) == NULL)
		return -1;
	if ((fd = openat(datafd, tmp, O_WRONLY | O_CREAT | O_TRUNC |
	    O_CLOEXEC | O_NOFOLLOW, 0600)) == -1)
		goto fail;
	made = 1;
	if (write_all(fd, text, strlen(text)) == -1 || fsync(fd) == -1)
		goto fail;
	if (close(fd) == -1) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	if (renameat(datafd, tmp, datafd, dst) == -1)
		goto fail;
	made = 0;
	if (store_snapshot_sync_dir(datafd) == -1)
		goto fail;
	free(text);
	return 0;
fail:
	saved = errno;
	if (fd != -1)
		close(fd);
	if (made)
		(void)unlinkat(datafd, tmp, 0);
	free(text);
	errno = saved;
	return -1;
}

/* A regular file of at most STORE_RECORD_MAX bytes, NUL-terminated. */
static int
read_text(int datafd, const char *path, char **textp)
{
	struct stat	 st;
	char		*buf = NULL;
	size_t		 size, got = 0;
	ssize_t		 n;
	int		 fd, saved;

	*textp = NULL;
	if ((fd = openat(datafd, path,
	    O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)) == -1)
		return -1;
	if (fstat(fd, &st) == -1)
		goto fail;
	if (!S_ISREG(st.st_mode) || st.st_size > STORE_RECORD_MAX) {
		errno = EINVAL;
		goto fail;
	}
	size = (size_t)st.st_size;
	if ((buf = malloc(size + 2)) == NULL)
		goto fail;
	while (got <= size) {
		if ((n = read(fd, buf + got, size + 1 - got)) == -1) {
			if (errno == EINTR)
				continue;
			goto fail;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	if (got != size || memchr(buf, '\0', got) != NULL) {
		errno = EINVAL;
		goto fail;
	}
	buf[got] = '\0';
	close(fd);
	*textp = buf;
	return 0;
fail:
	saved = errno;
	free(buf);
	close(fd);
	errno = saved;
	return -1;
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
	if (read_text(datafd, path, &text) == -1) {
		if (errno == ENOMEM || errno == EMFILE || errno == ENFILE ||
		    errno == EIO)
			return -1;
		errno = ENOENT;
		return -1;
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

int
store_snapshot_remove(int datafd, const char *id)
{
	char	 path[SNAPSHOT_PATH_MAX];

	if (snapshot_path(path, sizeof(path), id, ".tar") == -1)
		return -1;
	if (unlinkat(datafd, path, 0) == -1 && errno != ENOENT)
		return -1;
	(void)snapshot_path(path, sizeof(path), id, JSON_SUFFIX);
	if (unlinkat(datafd, path, 0) == -1 && errno != ENOENT)
		return -1;
	return store_snapshot_sync_dir(datafd);
}

int
store_snapshot_load_all(int datafd, struct snapshot_record **out,
    size_t *countp)
{
	struct snapshot_record	*v = NULL, *nv, r;
	struct dirent		*de;
	DIR			*d;
	char			 id[SNAPSHOT_ID_LEN + 1];
	size_t			 count = 0, len, i;
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
		if ((nv = reallocarray(v, count + 1, sizeof(*v))) == NULL) {
			snapshot_record_free(&r);
			goto fail;
		}
		v = nv;
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
