/*
 * Query strings the way Starlette reads them (urllib.parse.parse_qsl):
 * '&'-separated pairs, '+' and %XX decoded, the bytes read as UTF-8 with
 * U+FFFD for what is not, a key without '=' has the value "", the last
 * of a repeated key wins.  And FastAPI's 422s for query parameters.
 */
#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>
#include <strings.h>


#include "apid.h"
#include "format.h"

/*
 * urllib.parse.unquote_plus: '+' is a space, %XX a byte (a bad escape
 * stays as it is); as text (utf8) the bytes are read as UTF-8 with
 * U+FFFD for what is not.  NUL-ended; *outlen counts any NULs inside.
 */
static char *
query_decode(const char *s, size_t len, size_t *outlen, int utf8)
{
	struct utf8_decoder	 d;
	char			*raw, *out;
	size_t			 n;

	if ((raw = malloc(len + 1)) == NULL)
		return NULL;
	n = format_percent_decode(s, len, 1, raw);
	if (!utf8) {
		raw[n] = '\0';
		*outlen = n;
		return raw;
	}
	if ((out = malloc(UTF8_DECODE_BOUND(n) + 1)) == NULL) {
		free(raw);
		return NULL;
	}
	utf8_decoder_init(&d);
	*outlen = utf8_decode(&d, raw, n, 1, out);
	out[*outlen] = '\0';
	free(raw);
	return out;
}

/*
 * cb(value, its length, arg) for every pair named key, in the order
 * sent: 1 if there was one, 0 if none, -1 if out of memory or cb
 * returned -1 (it stops there).
 */
int
query_each(const char *q, const char *key, int utf8,
    int (*cb)(char *, size_t, void *), void *arg)
{
	const char	*amp, *eq;
	char		*name, *v;
	size_t		 seg, nlen, n;
	int		 match, any = 0;

	while (q != NULL && *q != '\0') {
		amp = strchr(q, '&');
		seg = amp != NULL ? (size_t)(amp - q) : strlen(q);
		if (seg > 0) {
			eq = memchr(q, '=', seg);
			nlen = eq != NULL ? (size_t)(eq - q) : seg;
			if ((name = query_decode(q, nlen, &n, 1)) == NULL)
				return -1;
			match = n == strlen(key) && memcmp(name, key, n) == 0;
			free(name);
			if (match) {
				if (eq != NULL)
					v = query_decode(eq + 1, seg - nlen - 1,
					    &n, utf8);
				else
					v = query_decode("", 0, &n, utf8);
				/* cb owns v. */
				if (v == NULL || cb(v, n, arg) == -1)
					return -1;
				any = 1;
			}
		}
		q = amp != NULL ? amp + 1 : NULL;
	}
	return any;
}

struct last_value {
	char	*val;
	size_t	 len;
};

static int
keep_last(char *v, size_t len, void *arg)
{
	struct last_value	*lv = arg;

	free(lv->val);
	lv->val = v;
	lv->len = len;
	return 0;
}

static int
query_find(const char *q, const char *key, char **val, size_t *vlen,
    int utf8)
{
	struct last_value	 lv = { NULL, 0 };
	int			 rc;

	rc = query_each(q, key, utf8, keep_last, &lv);
	if (rc == -1) {
		free(lv.val);
		lv.val = NULL;
		lv.len = 0;
	}
	*val = lv.val;
	*vlen = lv.len;
	return rc;
}

int
query_value(const char *q, const char *key, char **val, size_t *vlen)
{
	return query_find(q, key, val, vlen, 1);
}

int
query_get(struct http_request *req, const char *key, char **val,
    size_t *vlen)
{
	return query_find(req->query, key, val, vlen, 1);
}

/*
 * A path: the value as bytes, so that %E9 names the file whose name
 * holds the byte 0xe9 (a Latin-1 name a sandbox made), which read as
 * text would be U+FFFD and name another.
 */
int
query_get_bytes(struct http_request *req, const char *key, char **val,
    size_t *vlen)
{
	return query_find(req->query, key, val, vlen, 0);
}

void
query_refuse_nul(char *value, size_t len)
{
	if (strlen(value) != len)
		value[0] = '\0';
}

void
query_error(json_object *errors, const char *type, const char *field,
    const char *msg, json_object *input, json_object *ctx)
{
	json_object	*loc;

	loc = json_object_new_array();
	json_object_array_add(loc, json_object_new_string("query"));
	json_object_array_add(loc, json_object_new_string(field));
	detail_add(errors, type, loc, msg, input, ctx);
}

void
query_missing(json_object *errors, const char *field)
{
	query_error(errors, "missing", field, "Field required", NULL, NULL);
}

int
query_respond(struct http_request *req, json_object *errors)
{
	json_object	*root;

	if (json_object_array_length(errors) == 0) {
		json_object_put(errors);
		return 0;
	}
	root = json_object_new_object();
	json_object_object_add(root, "detail", errors);
	respond_json(req, 422, root);
	json_object_put(root);
	return 1;
}

/*
 * A boolean parameter as pydantic reads a string ("true", "1", "yes",
 * "on", ... in any case): 0 with *out set, or -1 with its 422 entry.
 */
int
query_bool(json_object *errors, const char *field, const char *val,
    size_t len, int *out)
{
	static const char *const yes[] = { "1", "on", "t", "true", "y",
	    "yes" };
	static const char *const no[] = { "0", "off", "f", "false", "n",
	    "no" };
	size_t	 i;

	/* A value holding a NUL is none of them. */
	for (i = 0; strlen(val) == len && i < sizeof(yes) / sizeof(yes[0]);
	    i++) {
		if (strcasecmp(val, yes[i]) == 0 ||
		    strcasecmp(val, no[i]) == 0) {
			*out = strcasecmp(val, yes[i]) == 0;
			return 0;
		}
	}
	query_error(errors, "bool_parsing", field, "Input should be a valid "
	    "boolean, unable to interpret input",
	    json_object_new_string_len(val, (int)len), NULL);
	return -1;
}

/* An optional boolean: *out keeps its default when the key is absent. */
int
query_get_bool(struct http_request *req, json_object *errors,
    const char *key, int *out)
{
	char	*v;
	size_t	 len;
	int	 rc;

	if ((rc = query_get(req, key, &v, &len)) != 1)
		return rc;
	(void)query_bool(errors, key, v, len, out);
	free(v);
	return 0;
}
