/*
 * What Docker says about an archive request, read without trusting it:
 * the X-Docker-Container-Path-Stat header of GET /containers/<id>/archive
 * (base64 of a small JSON object), and the 500 messages of a PUT with
 * noOverwriteDirNonDir, turned into errors that name the path.  Pure:
 * strings in, values out, so the unit tests can feed anything.
 */
#include <sys/types.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy.h"

/* Go's os.FileMode type bits. */
#define GO_MODE_DIR		(1U << 31)
#define GO_MODE_SYMLINK		(1U << 27)
#define GO_MODE_DEVICE		(1U << 26)
#define GO_MODE_NAMED_PIPE	(1U << 25)
#define GO_MODE_SOCKET		(1U << 24)
#define GO_MODE_CHAR_DEVICE	(1U << 21)
#define GO_MODE_IRREGULAR	(1U << 19)
#define GO_MODE_OTHER		(GO_MODE_DEVICE | GO_MODE_NAMED_PIPE | \
	GO_MODE_SOCKET | GO_MODE_CHAR_DEVICE | GO_MODE_IRREGULAR)

/* The object is flat: {"name", "size", "mode", "mtime", "linkTarget"}. */
#define PATH_STAT_DEPTH		2

static int
b64_value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/*
 * Standard base64 with padding (Go's base64.StdEncoding), strictly: the
 * length a multiple of 4, '=' only as the last one or two characters.
 * Returns the decoded length, or -1.  out holds at least 3/4 of len.
 */
static ssize_t
b64_decode(const char *in, size_t len, unsigned char *out)
{
	size_t	 i, n = 0, pad = 0;
	int	 v[4], k;

	if (len == 0 || len % 4 != 0)
		return -1;
	if (in[len - 1] == '=')
		pad++;
	if (in[len - 2] == '=')
		pad++;
	for (i = 0; i < len; i += 4) {
		for (k = 0; k < 4; k++) {
			if (i + k >= len - pad) {
				v[k] = 0;
				continue;
			}
			if ((v[k] = b64_value((unsigned char)in[i + k])) == -1)
				return -1;
		}
		out[n++] = (unsigned char)(v[0] << 2 | v[1] >> 4);
		out[n++] = (unsigned char)((v[1] & 0xf) << 4 | v[2] >> 2);
		out[n++] = (unsigned char)((v[2] & 0x3) << 6 | v[3]);
	}
	/* The bits that padding drops must be zero, as Go's decoder wants. */
	if ((pad == 1 && (v[2] & 0x3) != 0) || (pad == 2 && (v[1] & 0xf) != 0))
		return -1;
	return (ssize_t)(n - pad);
}

/* A JSON integer member within [0, max]; -1 if absent or out of range. */
static int
get_uint(json_object *obj, const char *key, int64_t max, int64_t *out)
{
	json_object	*v;
	int64_t		 n;

	if (!json_object_object_get_ex(obj, key, &v) ||
	    !json_object_is_type(v, json_type_int))
		return -1;
	/* json-c saturates past INT64_MAX, so INT64_MAX itself is refused. */
	n = json_object_get_int64(v);
	if (n < 0 || n > max || n == INT64_MAX)
		return -1;
	*out = n;
	return 0;
}

static uint8_t
kind_of_mode(uint32_t mode)
{
	if (mode & GO_MODE_DIR)
		return ARCHIVE_KIND_DIR;
	if (mode & GO_MODE_SYMLINK)
		return ARCHIVE_KIND_SYMLINK;
	if (mode & GO_MODE_OTHER)
		return ARCHIVE_KIND_OTHER;
	return ARCHIVE_KIND_FILE;
}

int
archive_path_stat_parse(const char *header, struct archive_stat *st,
    const char **why)
{
	json_tokener	*tok = NULL;
	json_object	*obj = NULL, *v;
	unsigned char	*json = NULL;
	const char	*target = "";
	size_t		 len;
	ssize_t		 n;
	int64_t		 size, mode;
	int		 rc = -1;

	memset(st, 0, sizeof(*st));
	*why = "no path stat header";
	if (header == NULL)
		return -1;
	*why = "path stat header too long";
	if ((len = strnlen(header, ARCHIVE_STAT_HEADER_MAX + 1)) >
	    ARCHIVE_STAT_HEADER_MAX)
		return -1;
	*why = "path stat header is not base64";
	if ((json = malloc(len / 4 * 3 + 1)) == NULL)
		goto done;
	if ((n = b64_decode(header, len, json)) == -1)
		goto done;
	json[n] = '\0';
	*why = "path stat is not a JSON object";
	if (n == 0 || (size_t)n > ARCHIVE_STAT_JSON_MAX ||
	    strlen((char *)json) != (size_t)n)
		goto done;
	if ((tok = json_tokener_new_ex(PATH_STAT_DEPTH)) == NULL)
		goto done;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	obj = json_tokener_parse_ex(tok, (const char *)json, (int)n);
	if (json_tokener_get_error(tok) != json_tokener_success ||
	    obj == NULL || !json_object_is_type(obj, json_type_object))
		goto done;
	*why = "path stat lacks a valid size or mode";
	if (get_uint(obj, "size", INT64_MAX, &size) == -1 ||
	    get_uint(obj, "mode", UINT32_MAX, &mode) == -1)
		goto done;
	*why = "path stat has a bad name";
	if (!json_object_object_get_ex(obj, "name", &v) ||
	    !json_object_is_type(v, json_type_string))
		goto done;
	st->kind = kind_of_mode((uint32_t)mode);
	st->size = (uint64_t)size;
	if (st->kind == ARCHIVE_KIND_SYMLINK) {
		*why = "path stat has a bad link target";
		if (!json_object_object_get_ex(obj, "linkTarget", &v) ||
		    !json_object_is_type(v, json_type_string))
			goto done;
		target = json_object_get_string(v);
		/* No NUL inside, and short enough for ARCHIVE_STAT. */
		if (target[0] == '\0' || strlen(target) > MSG_MAX_LINK_TARGET ||
		    strlen(target) != (size_t)json_object_get_string_len(v))
			goto done;
	}
	*why = "out of memory";
	if ((st->link_target = strdup(target)) == NULL)
		goto done;
	*why = NULL;
	rc = 0;
done:
	if (rc == -1)
		memset(st, 0, sizeof(*st));
	json_object_put(obj);
	if (tok != NULL)
		json_tokener_free(tok);
	free(json);
	return rc;
}

/*
 * The Go-quoted (%q) string that starts at s, unquoted into out, with
 * anything not printable ASCII as '?'.  -1 if it does not end or fit.
 */
static int
unquote_path(const char *s, char *out, size_t outlen)
{
	size_t	 n = 0;

	if (*s++ != '"')
		return -1;
	for (; *s != '"'; s++) {
		if (*s == '\0')
			return -1;
		if (*s == '\\') {
			s++;
			if (*s == '\0')
				return -1;
			/* \" and \\ stand for themselves; keep the others. */
			if (*s != '"' && *s != '\\') {
				if (n + 1 >= outlen)
					return -1;
				out[n++] = '\\';
			}
		}
		if (n + 1 >= outlen)
			return -1;
		out[n++] = (*s >= ' ' && *s < 0x7f) ? *s : '?';
	}
	if (n == 0)
		return -1;
	out[n] = '\0';
	return 0;
}

enum error_kind
archive_put_error(const char *message, char *text, size_t len)
{
	static const char	 nondir[] = "cannot overwrite non-directory ";
	static const char	 dir[] = "cannot overwrite directory ";
	const char		*p;
	char			 path[MSG_MAX_PATH + 1];

	if (message == NULL)
		return 0;
	if ((p = strstr(message, nondir)) != NULL &&
	    unquote_path(p + sizeof(nondir) - 1, path, sizeof(path)) == 0) {
		snprintf(text, len, "writes are limited to files under "
		    WORKSPACE ": %s is a symlink or not a directory", path);
		return ERR_INVALID_REQUEST;
	}
	if ((p = strstr(message, dir)) != NULL &&
	    unquote_path(p + sizeof(dir) - 1, path, sizeof(path)) == 0) {
		snprintf(text, len, "%s is a directory", path);
		return ERR_INVALID_REQUEST;
	}
	return 0;
}
