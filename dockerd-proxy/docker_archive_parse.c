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

/* Go's os.FileMode bits (io/fs), as Docker's stat header has them. */
#define GO_MODE_DIR		(1U << 31)
#define GO_MODE_SYMLINK		(1U << 27)
#define GO_MODE_DEVICE		(1U << 26)
#define GO_MODE_NAMED_PIPE	(1U << 25)
#define GO_MODE_SOCKET		(1U << 24)
#define GO_MODE_SETUID		(1U << 23)
#define GO_MODE_SETGID		(1U << 22)
#define GO_MODE_CHAR_DEVICE	(1U << 21)
#define GO_MODE_STICKY		(1U << 20)
#define GO_MODE_IRREGULAR	(1U << 19)
#define GO_MODE_OTHER		(GO_MODE_DEVICE | GO_MODE_NAMED_PIPE | \
	GO_MODE_SOCKET | GO_MODE_CHAR_DEVICE | GO_MODE_IRREGULAR)
/* Bits Go has no meaning for, and append, exclusive, temporary: Plan 9's. */
#define GO_MODE_UNUSED		(0x7fe00U | (7U << 28))

/* The object is flat: {"name", "size", "mode", "mtime", "linkTarget"}. */
#define PATH_STAT_DEPTH		2
/* "2006-01-02T15:04:05.999999999-07:00" and some room. */
#define MTIME_MAX		64

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

/* A JSON string member of at most max bytes without NUL, or NULL. */
static const char *
get_string(json_object *obj, const char *key, size_t max)
{
	json_object	*v;
	const char	*s;

	if (!json_object_object_get_ex(obj, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	s = json_object_get_string(v);
	if ((size_t)json_object_get_string_len(v) > max ||
	    strlen(s) != (size_t)json_object_get_string_len(v))
		return NULL;
	return s;
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

/* The permission bits where chmod(2) has them. */
static uint32_t
perm_of_mode(uint32_t mode)
{
	uint32_t	 perm = mode & 0777;

	if (mode & GO_MODE_SETUID)
		perm |= 04000;
	if (mode & GO_MODE_SETGID)
		perm |= 02000;
	if (mode & GO_MODE_STICKY)
		perm |= 01000;
	return perm;
}

/* Exactly n decimal digits. */
static int
get_digits(const char **p, int n, int *out)
{
	int	 v = 0;

	for (; n > 0; n--, (*p)++) {
		if (**p < '0' || **p > '9')
			return -1;
		v = v * 10 + (**p - '0');
	}
	*out = v;
	return 0;
}

/* Days from 1970-01-01 to y-m-d, proleptic Gregorian (H. Hinnant). */
static int64_t
days_from_civil(int64_t y, int m, int d)
{
	int64_t	 era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static int
days_in_month(int y, int m)
{
	static const int	 days[] = { 31, 28, 31, 30, 31, 30, 31, 31,
	    30, 31, 30, 31 };

	if (m == 2 && y % 4 == 0 && (y % 100 != 0 || y % 400 == 0))
		return 29;
	return days[m - 1];
}

/* ".999999999": one to nine digits, as nanoseconds. */
static int
get_fraction(const char **p, uint32_t *nsec)
{
	uint32_t	 v = 0;
	int		 n = 0;

	if (**p != '.')
		return 0;
	for ((*p)++; **p >= '0' && **p <= '9' && n < 9; (*p)++, n++)
		v = v * 10 + (uint32_t)(**p - '0');
	if (n == 0 || (**p >= '0' && **p <= '9'))
		return -1;
	for (; n < 9; n++)
		v *= 10;
	*nsec = v;
	return 0;
}

/* "Z", or "+hh:mm" / "-hh:mm": seconds east of UTC. */
static int
get_zone(const char **p, int *east)
{
	int	 sign, h, m;

	if (**p == 'Z') {
		(*p)++;
		*east = 0;
		return 0;
	}
	if (**p != '+' && **p != '-')
		return -1;
	sign = *(*p)++ == '-' ? -1 : 1;
	if (get_digits(p, 2, &h) == -1 || *(*p)++ != ':' ||
	    get_digits(p, 2, &m) == -1 || h > 23 || m > 59)
		return -1;
	*east = sign * (h * 3600 + m * 60);
	return 0;
}

int
archive_mtime_parse(const char *s, int64_t *sec, uint32_t *nsec)
{
	const char	*p = s;
	int		 y, mo, d, h, mi, se, east;

	*nsec = 0;
	if (get_digits(&p, 4, &y) == -1 || *p++ != '-' ||
	    get_digits(&p, 2, &mo) == -1 || *p++ != '-' ||
	    get_digits(&p, 2, &d) == -1 || *p++ != 'T' ||
	    get_digits(&p, 2, &h) == -1 || *p++ != ':' ||
	    get_digits(&p, 2, &mi) == -1 || *p++ != ':' ||
	    get_digits(&p, 2, &se) == -1 || get_fraction(&p, nsec) == -1 ||
	    get_zone(&p, &east) == -1 || *p != '\0')
		return -1;
	/* Go writes no leap second (60); nor do we take one. */
	if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) ||
	    h > 23 || mi > 59 || se > 59)
		return -1;
	*sec = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se -
	    east;
	return 0;
}

/* The header's JSON object, strictly parsed; NULL with *why. */
static json_object *
stat_json(const char *header, const char **why)
{
	json_tokener	*tok = NULL;
	json_object	*obj = NULL;
	unsigned char	*json;
	size_t		 len;
	ssize_t		 n;

	*why = "path stat header too long";
	if ((len = strnlen(header, ARCHIVE_STAT_HEADER_MAX + 1)) >
	    ARCHIVE_STAT_HEADER_MAX)
		return NULL;
	*why = "path stat header is not base64";
	if ((json = malloc(len / 4 * 3 + 1)) == NULL ||
	    (n = b64_decode(header, len, json)) == -1)
		goto done;
	json[n] = '\0';
	*why = "path stat is not a JSON object";
	if (n == 0 || (size_t)n > ARCHIVE_STAT_JSON_MAX ||
	    strlen((char *)json) != (size_t)n ||
	    (tok = json_tokener_new_ex(PATH_STAT_DEPTH)) == NULL)
		goto done;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	obj = json_tokener_parse_ex(tok, (const char *)json, (int)n);
	if (json_tokener_get_error(tok) != json_tokener_success ||
	    obj == NULL || !json_object_is_type(obj, json_type_object)) {
		json_object_put(obj);
		obj = NULL;
	}
done:
	if (tok != NULL)
		json_tokener_free(tok);
	free(json);
	return obj;
}

/* Every field checked into st (link_target malloc'd); -1 with *why. */
static int
stat_fields(json_object *obj, struct archive_stat *st, const char **why)
{
	const char	*s, *target = "";
	int64_t		 size, mode;

	*why = "path stat lacks a valid size or mode";
	if (get_uint(obj, "size", INT64_MAX, &size) == -1 ||
	    get_uint(obj, "mode", UINT32_MAX, &mode) == -1 ||
	    (mode & GO_MODE_UNUSED) != 0)
		return -1;
	/* Bytes that are not UTF-8 came as U+FFFD: it names nothing. */
	*why = "path stat has a bad name";
	if ((s = get_string(obj, "name", ARCHIVE_STAT_JSON_MAX)) == NULL ||
	    s[0] == '\0')
		return -1;
	*why = "path stat has a bad mtime";
	if ((s = get_string(obj, "mtime", MTIME_MAX)) == NULL ||
	    archive_mtime_parse(s, &st->mtime, &st->mtime_nsec) == -1)
		return -1;
	st->kind = kind_of_mode((uint32_t)mode);
	st->mode = perm_of_mode((uint32_t)mode);
	st->size = (uint64_t)size;
	/* No NUL inside, and short enough for ARCHIVE_STAT. */
	*why = "path stat has a bad link target";
	if (st->kind == ARCHIVE_KIND_SYMLINK && ((target = get_string(obj,
	    "linkTarget", MSG_MAX_LINK_TARGET)) == NULL || target[0] == '\0'))
		return -1;
	*why = "out of memory";
	if ((st->link_target = strdup(target)) == NULL)
		return -1;
	return 0;
}

int
archive_path_stat_parse(const char *header, struct archive_stat *st,
    const char **why)
{
	json_object	*obj;
	int		 rc = -1;

	memset(st, 0, sizeof(*st));
	*why = "no path stat header";
	if (header != NULL && (obj = stat_json(header, why)) != NULL) {
		rc = stat_fields(obj, st, why);
		json_object_put(obj);
	}
	if (rc == -1) {
		free(st->link_target);
		memset(st, 0, sizeof(*st));
	} else
		*why = NULL;
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

enum archive_error
archive_error_class(const char *message)
{
	static const char	 notdir[] = ": not a directory";
	size_t			 len;

	if (message == NULL)
		return ARCHIVE_ERROR_OTHER;
	/* Docker's symlink.FollowSymlinkInScope gives up after 255 links. */
	if (strstr(message, "too many links") != NULL)
		return ARCHIVE_ERROR_LOOP;
	/* lstat(2) of a path below a file; the text names host paths. */
	len = strlen(message);
	if (len > sizeof(notdir) - 1 &&
	    strcmp(message + len - (sizeof(notdir) - 1), notdir) == 0)
		return ARCHIVE_ERROR_NOTDIR;
	return ARCHIVE_ERROR_OTHER;
}
