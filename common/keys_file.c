/*
 * The keys file (keys_file.h): a JSON object {"keys": [...]}, each key
 *
 *	{"name": "ci-1", "tenant": "team-a", "sha256": "<64 hex digits>",
 *	 "admin": false, "quotas": {"sandboxes": 10, "cpus": 8,
 *	 "memory_mb": 16384, "snapshot_bytes": 10737418240,
 *	 "requests_per_second": 20, "burst": 40}}
 *
 * Strict: unknown fields are errors (a misspelt quota would otherwise be
 * no quota), names are unique, hashes too.  An unsalted SHA-256 is right
 * here only because the keys are random and long (>= 128 bits, what
 * `agent-sandbox hash-key --generate` makes): nothing can be guessed
 * from the hash of such a key, and a salt would buy nothing.  Errors
 * name the field by its place, never its value.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>
#include <sha2.h>

#include "caller.h"
#include "format.h"
#include "keys_file.h"

#define QUOTA_COUNT_MAX		1000000LL
#define QUOTA_MEMORY_MAX	(1LL << 40)	/* MiB */
#define QUOTA_BYTES_MAX		(1LL << 62)
#define QUOTA_REAL_MAX		1e6

struct kf {
	char	*err;
	size_t	 errlen;
	size_t	 idx;		/* the key being read */
};

static int __attribute__((format(printf, 2, 3)))
kf_fail(struct kf *k, const char *fmt, ...)
{
	va_list	 ap;

	if (k->errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(k->err, k->errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

int
key_name_valid(const char *s)
{
	return caller_name_valid(s);
}

static int
get_hash(struct kf *k, json_object *v, unsigned char out[KEY_HASH_LEN])
{
	const char	*s;
	size_t		 i;
	int		 hi, lo;

	if (v == NULL || !json_object_is_type(v, json_type_string))
		return kf_fail(k, "keys[%zu].sha256: missing, or not a string",
		    k->idx);
	s = json_object_get_string(v);
	if (json_object_get_string_len(v) != 2 * KEY_HASH_LEN)
		return kf_fail(k, "keys[%zu].sha256: must be 64 hexadecimal "
		    "digits (the SHA-256 of the key)", k->idx);
	for (i = 0; i < KEY_HASH_LEN; i++) {
		if ((hi = format_hexval(s[2 * i])) == -1 ||
		    (lo = format_hexval(s[2 * i + 1])) == -1)
			return kf_fail(k, "keys[%zu].sha256: must be 64 "
			    "hexadecimal digits", k->idx);
		out[i] = (unsigned char)(hi << 4 | lo);
	}
	return 0;
}

static int
get_word(struct kf *k, json_object *v, const char *field, char *out)
{
	if (v == NULL || !json_object_is_type(v, json_type_string))
		return kf_fail(k, "keys[%zu].%s: missing, or not a string",
		    k->idx, field);
	if ((size_t)json_object_get_string_len(v) !=
	    strlen(json_object_get_string(v)) ||
	    !key_name_valid(json_object_get_string(v)))
		return kf_fail(k, "keys[%zu].%s: 1 to %d of A-Z a-z 0-9 . _ - "
		    "(not first . or -, and not key-<number>)", k->idx, field,
		    KEY_NAME_MAX);
	strlcpy(out, json_object_get_string(v), KEY_NAME_MAX + 1);
	return 0;
}

/* A whole number in [min, max]; absent (or null): def. */
static int
get_count(struct kf *k, json_object *q, const char *field, int64_t min,
    int64_t max, int64_t def, int64_t *out)
{
	json_object	*v;

	*out = def;
	if (!json_object_object_get_ex(q, field, &v) || v == NULL)
		return 0;
	errno = 0;
	if (!json_object_is_type(v, json_type_int) ||
	    (*out = json_object_get_int64(v)) < min || *out > max ||
	    errno == EINVAL)
		return kf_fail(k, "keys[%zu].quotas.%s: must be a whole number "
		    "in [%lld, %lld]", k->idx, field, (long long)min,
		    (long long)max);
	return 0;
}

/* A number > 0 (or >= 0 when zero_ok); absent (or null): def. */
static int
get_real(struct kf *k, json_object *q, const char *field, int zero_ok,
    double def, double *out)
{
	json_object	*v;

	*out = def;
	if (!json_object_object_get_ex(q, field, &v) || v == NULL)
		return 0;
	if (!json_object_is_type(v, json_type_int) &&
	    !json_object_is_type(v, json_type_double))
		return kf_fail(k, "keys[%zu].quotas.%s: not a number", k->idx,
		    field);
	*out = json_object_get_double(v);
	if (!isfinite(*out) || *out < 0 || (*out == 0 && !zero_ok) ||
	    *out > QUOTA_REAL_MAX)
		return kf_fail(k, "keys[%zu].quotas.%s: must be a number in "
		    "(0, %g]", k->idx, field, QUOTA_REAL_MAX);
	return 0;
}

/* Every member of o must be one of known: a typo is no quota. */
static int
only_known(struct kf *k, json_object *o, const char *what,
    const char *const *known)
{
	size_t	 i;

	json_object_object_foreach(o, key, val) {
		(void)val;
		for (i = 0; known[i] != NULL; i++)
			if (strcmp(key, known[i]) == 0)
				break;
		if (known[i] == NULL)
			return kf_fail(k, "%s: unknown field (the fields are "
			    "documented in docs/configuration.md)", what);
	}
	return 0;
}

static int
get_quotas(struct kf *k, json_object *q, struct key_quota *out)
{
	static const char *const known[] = { "sandboxes", "cpus",
	    "memory_mb", "snapshot_bytes", "requests_per_second", "burst",
	    NULL };
	char			 what[64];

	out->sandboxes = out->memory_mb = out->snapshot_bytes = KEY_NO_LIMIT;
	out->cpus = -1;
	out->rate = 0;
	out->burst = 0;
	if (q == NULL)
		return 0;
	snprintf(what, sizeof(what), "keys[%zu].quotas", k->idx);
	if (!json_object_is_type(q, json_type_object))
		return kf_fail(k, "%s: not an object", what);
	if (only_known(k, q, what, known) == -1 ||
	    get_count(k, q, "sandboxes", 0, QUOTA_COUNT_MAX, KEY_NO_LIMIT,
	    &out->sandboxes) == -1 ||
	    get_real(k, q, "cpus", 1, -1, &out->cpus) == -1 ||
	    get_count(k, q, "memory_mb", 0, QUOTA_MEMORY_MAX, KEY_NO_LIMIT,
	    &out->memory_mb) == -1 ||
	    get_count(k, q, "snapshot_bytes", 0, QUOTA_BYTES_MAX,
	    KEY_NO_LIMIT, &out->snapshot_bytes) == -1 ||
	    get_real(k, q, "requests_per_second", 0, 0, &out->rate) == -1 ||
	    get_count(k, q, "burst", 1, QUOTA_COUNT_MAX, 0,
	    &out->burst) == -1)
		return -1;
	if (out->burst != 0 && out->rate == 0)
		return kf_fail(k, "%s.burst: needs requests_per_second", what);
	/* A second's worth by default, and never less than one request. */
	if (out->rate > 0 && out->burst == 0)
		out->burst = out->rate < 1 ? 1 : (int64_t)fp_ceil(out->rate);
	return 0;
}

static int
get_key(struct kf *k, json_object *o, struct key_entry *e)
{
	static const char *const known[] = { "name", "tenant", "sha256",
	    "admin", "quotas", NULL };
	json_object		*v;
	char			 what[32];

	memset(e, 0, sizeof(*e));
	snprintf(what, sizeof(what), "keys[%zu]", k->idx);
	if (!json_object_is_type(o, json_type_object))
		return kf_fail(k, "%s: not an object", what);
	if (only_known(k, o, what, known) == -1)
		return -1;
	json_object_object_get_ex(o, "name", &v);
	if (get_word(k, v, "name", e->name) == -1)
		return -1;
	json_object_object_get_ex(o, "tenant", &v);
	if (get_word(k, v, "tenant", e->tenant) == -1)
		return -1;
	json_object_object_get_ex(o, "sha256", &v);
	if (get_hash(k, v, e->sha256) == -1)
		return -1;
	if (json_object_object_get_ex(o, "admin", &v) && v != NULL) {
		if (!json_object_is_type(v, json_type_boolean))
			return kf_fail(k, "%s.admin: not true or false", what);
		e->admin = json_object_get_boolean(v);
	}
	v = NULL;
	json_object_object_get_ex(o, "quotas", &v);
	return get_quotas(k, v, &e->quota);
}

/* Names unique, hashes unique (two names for one key: whose is it?). */
static int
check_unique(struct kf *k, const struct keys_table *t)
{
	size_t	 i, j;

	for (i = 0; i < t->n; i++)
		for (j = 0; j < i; j++) {
			if (strcmp(t->v[i].name, t->v[j].name) == 0)
				return kf_fail(k, "keys[%zu].name: the name of "
				    "keys[%zu] too", i, j);
			if (memcmp(t->v[i].sha256, t->v[j].sha256,
			    KEY_HASH_LEN) == 0)
				return kf_fail(k, "keys[%zu].sha256: the same "
				    "key as keys[%zu]", i, j);
		}
	return 0;
}

static int
get_keys(struct kf *k, json_object *root, struct keys_table *t)
{
	static const char *const known[] = { "keys", NULL };
	json_object		*arr;
	size_t			 n;

	if (!json_object_is_type(root, json_type_object))
		return kf_fail(k, "the file must hold one JSON object");
	if (only_known(k, root, "the top-level object", known) == -1)
		return -1;
	if (!json_object_object_get_ex(root, "keys", &arr) ||
	    !json_object_is_type(arr, json_type_array))
		return kf_fail(k, "\"keys\": missing, or not an array");
	if ((n = json_object_array_length(arr)) > KEYS_FILE_MAX_KEYS)
		return kf_fail(k, "\"keys\": more than %d keys",
		    KEYS_FILE_MAX_KEYS);
	if (n > 0 && (t->v = calloc(n, sizeof(*t->v))) == NULL)
		return kf_fail(k, "out of memory");
	for (k->idx = 0; k->idx < n; k->idx++) {
		if (get_key(k, json_object_array_get_idx(arr, k->idx),
		    &t->v[k->idx]) == -1)
			return -1;
		t->n++;
	}
	return check_unique(k, t);
}

static int
only_space(const char *s, size_t len)
{
	size_t	 i;

	for (i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' &&
		    s[i] != '\n')
			return 0;
	return 1;
}

int
keys_file_parse(const char *buf, size_t len, struct keys_table *t,
    char *err, size_t errlen)
{
	struct kf		 k = { err, errlen, 0 };
	struct json_tokener	*tok;
	json_object		*root;
	int			 rc;

	memset(t, 0, sizeof(*t));
	if (len > KEYS_FILE_MAX_BYTES)
		return kf_fail(&k, "larger than %d bytes", KEYS_FILE_MAX_BYTES);
	if (memchr(buf, '\0', len) != NULL)
		return kf_fail(&k, "not JSON: it holds a NUL byte");
	if ((tok = json_tokener_new_ex(8)) == NULL)
		return kf_fail(&k, "out of memory");
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT |
	    JSON_TOKENER_VALIDATE_UTF8);
	root = json_tokener_parse_ex(tok, buf, (int)len);
	/* Whitespace may follow the object (a file ends with a newline). */
	if (root == NULL || !only_space(buf + tok->char_offset,
	    len - (size_t)tok->char_offset)) {
		rc = kf_fail(&k, "not JSON (or not UTF-8), at byte %zu: %s",
		    (size_t)tok->char_offset, root != NULL ?
		    "text after the object" : json_tokener_get_error(tok) ==
		    json_tokener_continue ? "the file ends inside it" :
		    json_tokener_error_desc(json_tokener_get_error(tok)));
		json_object_put(root);
		json_tokener_free(tok);
		return rc;
	}
	json_tokener_free(tok);
	rc = get_keys(&k, root, t);
	json_object_put(root);
	if (rc == -1)
		keys_table_free(t);
	return rc;
}

int
keys_file_read(const char *path, struct keys_table *t, char *err,
    size_t errlen)
{
	struct kf	 k = { err, errlen, 0 };
	char		*buf;
	size_t		 len = 0;
	ssize_t		 n;
	int		 fd, rc;

	memset(t, 0, sizeof(*t));
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return kf_fail(&k, "%s: %s", path, strerror(errno));
	if ((buf = malloc(KEYS_FILE_MAX_BYTES + 1)) == NULL) {
		close(fd);
		return kf_fail(&k, "out of memory");
	}
	/* One byte more than allowed tells a file that is too large. */
	while (len <= KEYS_FILE_MAX_BYTES && (n = read(fd, buf + len,
	    KEYS_FILE_MAX_BYTES + 1 - len)) != 0) {
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			rc = kf_fail(&k, "%s: %s", path, strerror(errno));
			goto done;
		}
		len += (size_t)n;
	}
	rc = keys_file_parse(buf, len, t, err, errlen);
 done:
	close(fd);
	freezero(buf, KEYS_FILE_MAX_BYTES + 1);
	return rc;
}

void
keys_table_free(struct keys_table *t)
{
	if (t->v != NULL)
		freezero(t->v, t->n * sizeof(*t->v));
	t->v = NULL;
	t->n = 0;
}

const struct key_entry *
keys_table_find(const struct keys_table *t, const char *name)
{
	size_t	 i;

	for (i = 0; i < t->n; i++)
		if (strcmp(t->v[i].name, name) == 0)
			return &t->v[i];
	return NULL;
}

void
key_hash(const char *key, size_t len, unsigned char out[KEY_HASH_LEN])
{
	SHA2_CTX	 ctx;

	SHA256Init(&ctx);
	SHA256Update(&ctx, (const uint8_t *)key, len);
	SHA256Final(out, &ctx);
	explicit_bzero(&ctx, sizeof(ctx));
}

long
keys_table_match(const struct keys_table *t,
    const unsigned char h[KEY_HASH_LEN])
{
	unsigned long	 found = 0, eq;
	size_t		 i;
	int		 match = 0;

	for (i = 0; i < t->n; i++) {
		eq = (unsigned long)format_consttime_equal(h, KEY_HASH_LEN,
		    t->v[i].sha256, KEY_HASH_LEN);
		match |= (int)eq;
		found |= (0UL - eq) & i;
	}
	return match ? (long)found : -1;
}

static void
put_entry(struct msgw *w, const struct key_entry *e)
{
	msgw_str(w, e->name);
	msgw_str(w, e->tenant);
	msgw_u8(w, e->admin ? 1 : 0);
	msgw_bytes(w, e->sha256, KEY_HASH_LEN);
	msgw_i64(w, e->quota.sandboxes);
	msgw_double(w, e->quota.cpus);
	msgw_i64(w, e->quota.memory_mb);
	msgw_i64(w, e->quota.snapshot_bytes);
	msgw_double(w, e->quota.rate);
	msgw_i64(w, e->quota.burst);
}

void
msg_put_keys_chunk(struct msgw *w, const struct keys_table *t, size_t first)
{
	size_t	 i, count;

	count = t->n - first < KEYS_PER_MESSAGE ? t->n - first :
	    KEYS_PER_MESSAGE;
	msgw_u32(w, (uint32_t)t->n);
	msgw_u32(w, (uint32_t)first);
	msgw_u32(w, (uint32_t)count);
	for (i = first; i < first + count; i++)
		put_entry(w, &t->v[i]);
}

/* Within what the file itself would allow: a peer's table is no looser. */
static int
entry_valid(const struct key_entry *e, uint8_t admin)
{
	const struct key_quota	*q = &e->quota;

	return admin <= 1 && key_name_valid(e->name) &&
	    key_name_valid(e->tenant) &&
	    q->sandboxes >= KEY_NO_LIMIT && q->memory_mb >= KEY_NO_LIMIT &&
	    q->snapshot_bytes >= KEY_NO_LIMIT && isfinite(q->cpus) &&
	    isfinite(q->rate) && q->rate >= 0 && q->burst >= 0 &&
	    (q->rate == 0 || q->burst >= 1);
}

static int
get_entry(struct msgr *r, struct key_entry *e)
{
	char	*name, *tenant;
	uint8_t	 admin;
	size_t	 i;

	memset(e, 0, sizeof(*e));
	name = msgr_str(r, KEY_NAME_MAX);
	tenant = msgr_str(r, KEY_NAME_MAX);
	admin = msgr_u8(r);
	for (i = 0; i < KEY_HASH_LEN; i++)
		e->sha256[i] = msgr_u8(r);
	e->quota.sandboxes = msgr_i64(r);
	e->quota.cpus = msgr_double(r);
	e->quota.memory_mb = msgr_i64(r);
	e->quota.snapshot_bytes = msgr_i64(r);
	e->quota.rate = msgr_double(r);
	e->quota.burst = msgr_i64(r);
	if (name != NULL)
		strlcpy(e->name, name, sizeof(e->name));
	if (tenant != NULL)
		strlcpy(e->tenant, tenant, sizeof(e->tenant));
	e->admin = admin;
	free(name);
	free(tenant);
	if (r->error || name == NULL || tenant == NULL ||
	    !entry_valid(e, admin))
		return -1;
	return 0;
}

int
msg_get_keys_chunk(const struct imsg *imsg, struct keys_table *t,
    uint32_t *total)
{
	struct key_entry	*v;
	struct msgr		 r;
	uint32_t		 first, count, i;

	msgr_init(&r, imsg);
	*total = msgr_u32(&r);
	first = msgr_u32(&r);
	count = msgr_u32(&r);
	errno = EBADMSG;
	if (r.error || *total > KEYS_FILE_MAX_KEYS || first != t->n ||
	    first > *total || count > KEYS_PER_MESSAGE ||
	    count > *total - first || (count == 0 && *total != 0))
		return -1;
	if (count > 0 && (v = reallocarray(t->v, t->n + count,
	    sizeof(*v))) == NULL)
		return -1;	/* errno ENOMEM: not the peer's lie */
	else if (count > 0)
		t->v = v;
	errno = EBADMSG;
	for (i = 0; i < count; i++) {
		if (get_entry(&r, &t->v[t->n]) == -1)
			return -1;
		t->n++;
	}
	return msgr_end(&r);
}
