/*
 * A directory listing's output (file_msg.h: per entry "<st_mode in hex>
 * <st_size> <mtime>\n<name>\0") to the FileList of API.md §3.7: records
 * that do not fit are skipped, as upstream skips lines it cannot split;
 * entries are sorted by name, byte order (code point order for UTF-8).
 * Pure: no HTTP layer, so the tests drive it.
 */
#include <sys/types.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "apid.h"
#include "format.h"

#define S_TYPE_MASK	0170000
#define S_TYPE_DIR	0040000
#define S_TYPE_REG	0100000
#define S_TYPE_LNK	0120000

void
file_entries_free(struct file_entries *fe)
{
	size_t	 i;

	for (i = 0; i < fe->n; i++)
		free(fe->v[i].name);
	free(fe->v);
	memset(fe, 0, sizeof(*fe));
}

const char *
file_type_name(uint32_t st_mode)
{
	switch (st_mode & S_TYPE_MASK) {
	case S_TYPE_DIR:
		return "directory";
	case S_TYPE_REG:
		return "file";
	case S_TYPE_LNK:
		return "symlink";
	default:
		return "other";
	}
}

/* Unsigned decimal or hex digits only, no sign, no overflow. */
static int
parse_u64(const char *s, size_t len, int base, uint64_t max, uint64_t *out)
{
	uint64_t	 v = 0, d;
	size_t		 i;

	if (len == 0 || len > 64)
		return -1;
	for (i = 0; i < len; i++) {
		if (s[i] >= '0' && s[i] <= '9')
			d = (uint64_t)(s[i] - '0');
		else if (base == 16 && s[i] >= 'a' && s[i] <= 'f')
			d = (uint64_t)(s[i] - 'a' + 10);
		else if (base == 16 && s[i] >= 'A' && s[i] <= 'F')
			d = (uint64_t)(s[i] - 'A' + 10);
		else
			return -1;
		if (v > (max - d) / (uint64_t)base)
			return -1;
		v = v * (uint64_t)base + d;
	}
	*out = v;
	return 0;
}

/* "<hex> <size> <mtime>": three fields, one space apart. */
static int
parse_header(const char *h, size_t len, struct file_entry *e)
{
	const char	*sp1, *sp2, *end = h + len;
	uint64_t	 mode, size, mt;
	int		 neg = 0;

	if ((sp1 = memchr(h, ' ', len)) == NULL ||
	    (sp2 = memchr(sp1 + 1, ' ', (size_t)(end - sp1 - 1))) == NULL)
		return -1;
	if (parse_u64(h, (size_t)(sp1 - h), 16, UINT32_MAX, &mode) == -1 ||
	    parse_u64(sp1 + 1, (size_t)(sp2 - sp1 - 1), 10, INT64_MAX,
	    &size) == -1)
		return -1;
	if (sp2 + 1 < end && sp2[1] == '-') {
		neg = 1;
		sp2++;
	}
	if (parse_u64(sp2 + 1, (size_t)(end - sp2 - 1), 10, INT64_MAX,
	    &mt) == -1)
		return -1;
	e->mode = (uint32_t)mode;
	e->size = size;
	e->mtime = neg ? -(int64_t)mt : (int64_t)mt;
	return 0;
}

static int
name_ok(const char *name, size_t len)
{
	if (len == 0 || memchr(name, '/', len) != NULL)
		return 0;
	if ((len == 1 && name[0] == '.') ||
	    (len == 2 && name[0] == '.' && name[1] == '.'))
		return 0;
	return 1;
}

static int
entry_cmp(const void *a, const void *b)
{
	const struct file_entry	*x = a, *y = b;

	return strcmp(x->name, y->name);	/* compares unsigned bytes */
}

int
file_list_parse(const char *out, size_t len, struct file_entries *fe)
{
	const char		*p = out, *end = out + len, *nul, *nl;
	struct file_entry	 e, *v;
	char			 ts[FORMAT_TIMESTAMP_LEN];
	size_t			 cap = 0;

	memset(fe, 0, sizeof(*fe));
	for (; p < end; p = nul + 1) {
		/* A record without its NUL is cut short: skipped. */
		if ((nul = memchr(p, '\0', (size_t)(end - p))) == NULL)
			break;
		memset(&e, 0, sizeof(e));
		if ((nl = memchr(p, '\n', (size_t)(nul - p))) == NULL ||
		    parse_header(p, (size_t)(nl - p), &e) == -1 ||
		    !name_ok(nl + 1, (size_t)(nul - nl - 1)) ||
		    format_timestamp((double)e.mtime, ts, sizeof(ts)) == NULL)
			continue;
		if (fe->n == FILE_LIST_MAX_ENTRIES) {
			file_entries_free(fe);
			errno = E2BIG;
			return -1;
		}
		if (fe->n == cap) {
			cap = cap == 0 ? 64 : cap * 2;
			if ((v = reallocarray(fe->v, cap, sizeof(*v))) ==
			    NULL)
				goto fail;
			fe->v = v;
		}
		if ((e.name = strdup(nl + 1)) == NULL)
			goto fail;
		fe->v[fe->n++] = e;
	}
	if (fe->n > 1)
		qsort(fe->v, fe->n, sizeof(*fe->v), entry_cmp);
	return 0;
 fail:
	file_entries_free(fe);
	errno = ENOMEM;
	return -1;
}

/* Bytes from the sandbox as JSON text: invalid UTF-8 becomes U+FFFD. */
static json_object *
json_text(const char *s, size_t len)
{
	json_object	*o;
	char		*buf;
	size_t		 n;
	struct utf8_decoder	 d;

	if (utf8_valid(s, len))
		return json_object_new_string_len(s, (int)len);
	if ((buf = malloc(UTF8_DECODE_BOUND(len))) == NULL)
		return NULL;
	utf8_decoder_init(&d);
	n = utf8_decode(&d, s, len, 1, buf);
	o = json_object_new_string_len(buf, (int)n);
	free(buf);
	return o;
}

json_object *
file_info_json(const char *name, const char *path, const char *type,
    uint64_t size, double modified_at)
{
	json_object	*o;
	char		 ts[FORMAT_TIMESTAMP_LEN];

	if (format_timestamp(modified_at, ts, sizeof(ts)) == NULL ||
	    size > INT64_MAX || (o = json_object_new_object()) == NULL)
		return NULL;
	json_object_object_add(o, "name", json_text(name, strlen(name)));
	json_object_object_add(o, "path", json_text(path, strlen(path)));
	json_object_object_add(o, "type", json_object_new_string(type));
	json_object_object_add(o, "size", json_object_new_int64(
	    (int64_t)size));
	json_object_object_add(o, "modified_at", json_object_new_string(ts));
	return o;
}

json_object *
file_list_json(const char *dir, const struct file_entries *fe)
{
	json_object	*root, *entries, *o;
	char		*path;
	size_t		 i;
	int		 slash;

	if ((root = json_object_new_object()) == NULL)
		return NULL;
	json_object_object_add(root, "path", json_text(dir, strlen(dir)));
	entries = json_object_new_array();
	json_object_object_add(root, "entries", entries);
	/* "/" joins as "/name", like posixpath.join. */
	slash = dir[0] != '\0' && dir[strlen(dir) - 1] == '/';
	for (i = 0; i < fe->n; i++) {
		if (asprintf(&path, "%s%s%s", dir, slash ? "" : "/",
		    fe->v[i].name) == -1)
			goto fail;
		o = file_info_json(fe->v[i].name, path,
		    file_type_name(fe->v[i].mode), fe->v[i].size,
		    (double)fe->v[i].mtime);
		free(path);
		if (o == NULL)
			goto fail;
		json_object_array_add(entries, o);
	}
	return root;
 fail:
	json_object_put(root);
	return NULL;
}
