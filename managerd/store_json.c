/*
 * The text of a sandbox record (API.md §9): exactly what Python's
 * json.dumps(record, indent=2, sort_keys=True) writes, and reading it back
 * as strictly as json.loads() does, so the reference and this server can
 * read each other's records.  The files holding them are store.c's.
 *
 * Snapshot records (store_snapshot.c) are written and read with the same
 * pieces: the string encoder, the strict parser and the spec object, so
 * both kinds of record carry a spec byte for byte alike.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "format.h"
#include "keys_file.h"
#include "managerd.h"
#include "utf8.h"

/* One env entry while sorting; pos keeps the sort stable. */
struct env_ent {
	const char	*key;
	const char	*value;
	size_t		 pos;
};

void
sbuf_add(struct sbuf *b, const char *s, size_t n)
{
	size_t	 cap;
	char	*p;

	if (b->failed)
		return;
	if (n > STORE_RECORD_MAX || b->len + n > STORE_RECORD_MAX) {
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

void
sbuf_puts(struct sbuf *b, const char *s)
{
	sbuf_add(b, s, strlen(s));
}

static void
put_u16(struct sbuf *b, uint32_t u)
{
	static const char	 hex[] = "0123456789abcdef";
	char			 esc[6];

	esc[0] = '\\';
	esc[1] = 'u';
	esc[2] = hex[(u >> 12) & 0xf];
	esc[3] = hex[(u >> 8) & 0xf];
	esc[4] = hex[(u >> 4) & 0xf];
	esc[5] = hex[u & 0xf];
	sbuf_add(b, esc, sizeof(esc));
}

/*
 * A JSON string as Python's json.dumps writes it with ensure_ascii:
 * printable ASCII as is, the short escapes, everything else \uXXXX in
 * lower-case hex, astral characters as surrogate pairs.  Bytes that are
 * not UTF-8 come out as the lone surrogates surrogateescape would give.
 */
void
store_json_put_string(struct sbuf *b, const char *str)
{
	const unsigned char	*s = (const unsigned char *)str;
	size_t			 len, i, run;
	uint32_t		 cp;

	len = strlen(str);
	sbuf_add(b, "\"", 1);
	for (i = 0; i < len;) {
		for (run = i; run < len && s[run] >= 0x20 && s[run] < 0x7f &&
		    s[run] != '"' && s[run] != '\\'; run++)
			;
		sbuf_add(b, str + i, run - i);
		if ((i = run) == len)
			break;
		switch (s[i]) {
		case '"':
			sbuf_add(b, "\\\"", 2);
			break;
		case '\\':
			sbuf_add(b, "\\\\", 2);
			break;
		case '\n':
			sbuf_add(b, "\\n", 2);
			break;
		case '\r':
			sbuf_add(b, "\\r", 2);
			break;
		case '\t':
			sbuf_add(b, "\\t", 2);
			break;
		case '\b':
			sbuf_add(b, "\\b", 2);
			break;
		case '\f':
			sbuf_add(b, "\\f", 2);
			break;
		default:
			i += utf8_next_or_escape(s + i, len - i, &cp);
			if (cp >= 0x10000) {
				cp -= 0x10000;
				put_u16(b, 0xd800 | (cp >> 10));
				put_u16(b, 0xdc00 | (cp & 0x3ff));
			} else
				put_u16(b, cp);
			continue;
		}
		i++;
	}
	sbuf_add(b, "\"", 1);
}

static int
put_float(struct sbuf *b, double v)
{
	char	 buf[FORMAT_PYFLOAT_LEN];

	/* Python would write Infinity or NaN, which is not JSON. */
	if (!isfinite(v) || format_pyfloat(v, buf, sizeof(buf)) == NULL)
		return -1;
	sbuf_puts(b, buf);
	return 0;
}

static void
put_int(struct sbuf *b, int64_t v)
{
	char	 buf[32];

	snprintf(buf, sizeof(buf), "%" PRId64, v);
	sbuf_puts(b, buf);
}

static int
env_ent_cmp(const void *a, const void *b)
{
	const struct env_ent	*x = a, *y = b;
	int			 c;

	/* Byte order of UTF-8 is code point order, as sort_keys uses. */
	if ((c = strcmp(x->key, y->key)) != 0)
		return c;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* The env object, keys sorted; of a repeated key the last one counts. */
static int
put_env(struct sbuf *b, const struct env_list *el)
{
	struct env_ent	*ents;
	size_t		 i;
	int		 first = 1;

	if (el->count == 0) {
		sbuf_add(b, "{}", 2);
		return 0;
	}
	if ((ents = reallocarray(NULL, el->count, sizeof(*ents))) == NULL)
		return -1;
	for (i = 0; i < el->count; i++) {
		if (el->keys[i] == NULL || el->values[i] == NULL) {
			free(ents);
			errno = EINVAL;
			return -1;
		}
		ents[i].key = el->keys[i];
		ents[i].value = el->values[i];
		ents[i].pos = i;
	}
	qsort(ents, el->count, sizeof(*ents), env_ent_cmp);
	sbuf_add(b, "{\n", 2);
	for (i = 0; i < el->count; i++) {
		if (i + 1 < el->count &&
		    strcmp(ents[i].key, ents[i + 1].key) == 0)
			continue;
		if (!first)
			sbuf_add(b, ",\n", 2);
		first = 0;
		sbuf_puts(b, "      ");
		store_json_put_string(b, ents[i].key);
		sbuf_add(b, ": ", 2);
		store_json_put_string(b, ents[i].value);
	}
	sbuf_puts(b, "\n    }");
	free(ents);
	return 0;
}

/*
 * "labels" only when there are some: a record without them is byte for
 * byte the reference's, which neither knows nor needs the field.  The
 * list is sorted already, as sort_keys wants.
 */
static void
put_labels(struct sbuf *b, const struct label_list *l)
{
	size_t	 i;

	if (l->count == 0)
		return;
	sbuf_puts(b, ",\n  \"labels\": {\n");
	for (i = 0; i < l->count; i++) {
		if (i > 0)
			sbuf_add(b, ",\n", 2);
		sbuf_puts(b, "    ");
		store_json_put_string(b, l->keys[i]);
		sbuf_add(b, ": ", 2);
		store_json_put_string(b, l->values[i]);
	}
	sbuf_puts(b, "\n  }");
}

int
store_json_put_spec(struct sbuf *b, const struct sandbox_spec *s)
{
	if (s->image == NULL) {
		errno = EINVAL;
		return -1;
	}
	sbuf_puts(b, "{\n    \"cpus\": ");
	if (put_float(b, s->cpus) == -1) {
		errno = EINVAL;
		return -1;
	}
	sbuf_puts(b, ",\n    \"env\": ");
	if (put_env(b, &s->env) == -1)
		return -1;
	sbuf_puts(b, ",\n    \"image\": ");
	store_json_put_string(b, s->image);
	sbuf_puts(b, ",\n    \"memory_mb\": ");
	put_int(b, s->memory_mb);
	sbuf_puts(b, ",\n    \"network\": ");
	sbuf_puts(b, s->network ? "true" : "false");
	sbuf_puts(b, ",\n    \"pids_limit\": ");
	put_int(b, s->pids_limit);
	sbuf_puts(b, ",\n    \"read_only_rootfs\": ");
	sbuf_puts(b, s->read_only_rootfs ? "true" : "false");
	sbuf_puts(b, "\n  }");
	return 0;
}

/* Only a policy other than none is written: other records stay as they were. */
void
store_json_put_egress(struct sbuf *b, const struct egress_policy *p)
{
	json_object	*obj;

	if (p->mode == EGRESS_NONE)
		return;
	if ((obj = egress_policy_to_json(p)) == NULL) {
		b->failed = ENOMEM;
		return;
	}
	sbuf_puts(b, ",\n  \"egress\": ");
	sbuf_puts(b, json_object_to_json_string_ext(obj,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(obj);
}

/* As the writer wrote it, parsed as a client's would be: -1 if not. */
int
store_json_get_egress(struct json_object *o, struct egress_policy *p)
{
	struct json_object	*v;
	char			 err[256];

	memset(p, 0, sizeof(*p));
	if (!json_object_object_get_ex(o, "egress", &v))
		return 0;
	if (!json_object_is_type(v, json_type_object) ||
	    egress_policy_parse(v, NULL, p, err, sizeof(err)) == -1)
		return -1;
	return 0;
}

char *
store_sandbox_to_json(const struct sandbox_record *r)
{
	struct sbuf	 b;

	memset(&b, 0, sizeof(b));
	if (!id_is_sandbox(r->id)) {
		errno = EINVAL;
		return NULL;
	}
	sbuf_puts(&b, "{\n  \"created_at\": ");
	if (put_float(&b, r->created_at) == -1)
		goto invalid;
	store_json_put_egress(&b, &r->egress);
	sbuf_puts(&b, ",\n  \"expires_at\": ");
	if (put_float(&b, r->expires_at) == -1)
		goto invalid;
	sbuf_puts(&b, ",\n  \"id\": ");
	store_json_put_string(&b, r->id);
	put_labels(&b, &r->labels);
	/* Only when set, as labels: other records stay the reference's. */
	if (r->pooled)
		sbuf_puts(&b, ",\n  \"pooled\": true");
	sbuf_puts(&b, ",\n  \"source_snapshot_id\": ");
	if (r->source_snapshot_id == NULL)
		sbuf_puts(&b, "null");
	else
		store_json_put_string(&b, r->source_snapshot_id);
	sbuf_puts(&b, ",\n  \"spec\": ");
	if (store_json_put_spec(&b, &r->spec) == -1)
		goto fail;
	store_json_put_tenant(&b, r->tenant);
	sbuf_puts(&b, "\n}");
	if (b.failed) {
		free(b.p);
		errno = b.failed;
		return NULL;
	}
	return b.p;
invalid:
	errno = EINVAL;
fail:
	free(b.p);
	return NULL;
}

char *
store_json_get_string(struct json_object *o, const char *key, size_t max)
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

void
store_json_put_tenant(struct sbuf *b, const char *tenant)
{
	if (tenant[0] == '\0')
		return;
	sbuf_puts(b, ",\n  \"tenant\": ");
	store_json_put_string(b, tenant);
}

int
store_json_get_tenant(struct json_object *o, char *out)
{
	char	*t;

	out[0] = '\0';
	if (!json_object_object_get_ex(o, "tenant", NULL))
		return 0;
	if ((t = store_json_get_string(o, "tenant", TENANT_MAX)) == NULL)
		return -1;
	if (!key_name_valid(t)) {
		free(t);
		return -1;
	}
	strlcpy(out, t, TENANT_MAX + 1);
	free(t);
	return 0;
}

/* A number (Python wrote a float, or maybe an int). */
int
store_json_get_double(struct json_object *o, const char *key, double *d)
{
	struct json_object	*v;

	if (!json_object_object_get_ex(o, key, &v) ||
	    (!json_object_is_type(v, json_type_double) &&
	    !json_object_is_type(v, json_type_int)))
		return -1;
	*d = json_object_get_double(v);
	return isfinite(*d) ? 0 : -1;
}

int
store_json_get_int(struct json_object *o, const char *key, int64_t *i)
{
	struct json_object	*v;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_int))
		return -1;
	*i = json_object_get_int64(v);
	/* json-c saturates what does not fit; refuse instead. */
	if (*i == INT64_MAX && json_object_get_uint64(v) != INT64_MAX)
		return -1;
	return 0;
}

static int
get_bool(struct json_object *o, const char *key, int *b)
{
	struct json_object	*v;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_boolean))
		return -1;
	*b = json_object_get_boolean(v);
	return 0;
}

static int
get_env(struct json_object *o, struct env_list *el)
{
	struct json_object	*e;
	struct json_object_iterator it, end;
	struct json_object	*v;
	const char		*s;
	size_t			 n, len;

	if (!json_object_object_get_ex(o, "env", &e) ||
	    !json_object_is_type(e, json_type_object))
		return -1;
	if ((n = (size_t)json_object_object_length(e)) == 0)
		return 0;
	if ((el->keys = reallocarray(NULL, n, sizeof(char *))) == NULL ||
	    (el->values = reallocarray(NULL, n, sizeof(char *))) == NULL)
		return -1;
	it = json_object_iter_begin(e);
	end = json_object_iter_end(e);
	for (; !json_object_iter_equal(&it, &end) && el->count < n;
	    json_object_iter_next(&it)) {
		v = json_object_iter_peek_value(&it);
		if (!json_object_is_type(v, json_type_string))
			return -1;
		s = json_object_get_string(v);
		len = (size_t)json_object_get_string_len(v);
		if (memchr(s, '\0', len) != NULL)
			return -1;
		if ((el->keys[el->count] =
		    strdup(json_object_iter_peek_name(&it))) == NULL)
			return -1;
		if ((el->values[el->count] = strdup(s)) == NULL) {
			free(el->keys[el->count]);
			return -1;
		}
		el->count++;
	}
	return 0;
}

int
store_json_get_spec(struct json_object *o, struct sandbox_spec *s)
{
	struct json_object	*so;

	if (!json_object_object_get_ex(o, "spec", &so) ||
	    !json_object_is_type(so, json_type_object))
		return -1;
	if ((s->image = store_json_get_string(so, "image", SIZE_MAX)) == NULL ||
	    store_json_get_double(so, "cpus", &s->cpus) == -1 ||
	    store_json_get_int(so, "memory_mb", &s->memory_mb) == -1 ||
	    store_json_get_int(so, "pids_limit", &s->pids_limit) == -1 ||
	    get_bool(so, "network", &s->network) == -1 ||
	    get_bool(so, "read_only_rootfs", &s->read_only_rootfs) == -1 ||
	    get_env(so, &s->env) == -1)
		return -1;
	return 0;
}

/*
 * Optional (records from before labels have none); when present, held
 * to the rules of labels.h like a message from apid.
 */
static int
get_labels(struct json_object *o, struct label_list *l)
{
	struct json_object_iterator it, end;
	struct json_object	*lo, *v;
	const char		*k;

	if (!json_object_object_get_ex(o, "labels", &lo))
		return 0;
	if (!json_object_is_type(lo, json_type_object) ||
	    json_object_object_length(lo) > LABELS_MAX)
		return -1;
	it = json_object_iter_begin(lo);
	end = json_object_iter_end(lo);
	for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
		k = json_object_iter_peek_name(&it);
		v = json_object_iter_peek_value(&it);
		if (!json_object_is_type(v, json_type_string) ||
		    !label_key_valid(k, strlen(k)) ||
		    !label_value_valid(json_object_get_string(v),
		    (size_t)json_object_get_string_len(v)) ||
		    labels_set(l, k, json_object_get_string(v)) == -1)
			return -1;
	}
	return 0;
}

static int
get_record(struct json_object *o, void *arg)
{
	struct sandbox_record	*r = arg;
	struct json_object	*v;
	char			*id;

	if (!json_object_is_type(o, json_type_object))
		return -1;
	if ((id = store_json_get_string(o, "id", SIZE_MAX)) == NULL)
		return -1;
	if (!id_is_sandbox(id)) {
		free(id);
		return -1;
	}
	strlcpy(r->id, id, sizeof(r->id));
	free(id);
	if (store_json_get_double(o, "created_at", &r->created_at) == -1 ||
	    store_json_get_double(o, "expires_at", &r->expires_at) == -1)
		return -1;
	if (json_object_object_get_ex(o, "source_snapshot_id", &v) &&
	    !json_object_is_type(v, json_type_null) &&
	    (r->source_snapshot_id = store_json_get_string(o,
	    "source_snapshot_id", SIZE_MAX)) == NULL)
		return -1;
	if (store_json_get_tenant(o, r->tenant) == -1 ||
	    get_labels(o, &r->labels) == -1)
		return -1;
	if (json_object_object_get_ex(o, "pooled", &v)) {
		if (!json_object_is_type(v, json_type_boolean))
			return -1;
		r->pooled = json_object_get_boolean(v);
	}
	if (store_json_get_egress(o, &r->egress) == -1)
		return -1;
	return store_json_get_spec(o, &r->spec);
}

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
 * Turn every escaped surrogate pair ("\ud83d\ude00") inside a JSON string
 * into the four UTF-8 bytes it stands for, in place.  json-c 0.16 turns
 * the pairs of some characters (U+1D800-U+1DBFF among them) into U+FFFD,
 * and Python escapes every astral character that way.
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
				w += utf8_encode(cp, (unsigned char *)s + w);
				r += 12;
				continue;
			}
			/* Any other escape: keep both characters. */
			s[w++] = s[r++];
			if (s[r] == '\0')
				break;
		}
		s[w++] = s[r++];
	}
	s[w] = '\0';
}

int
store_json_read(const char *text, int (*get)(struct json_object *, void *),
    void *arg)
{
	struct json_tokener	*tok;
	struct json_object	*o = NULL;
	char			*copy;
	size_t			 len, end;
	int			 ret = -1;

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
	/* Python's json.loads is as strict, and read_text() wants UTF-8. */
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT |
	    JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, copy, (int)len);
	if (o == NULL ||
	    json_tokener_get_error(tok) != json_tokener_success)
		goto done;
	/* Only white space may follow, as json.loads allows. */
	for (end = json_tokener_get_parse_end(tok); end < len; end++)
		if (strchr(" \t\r\n", copy[end]) == NULL)
			goto done;
	ret = get(o, arg);
done:
	json_object_put(o);
	json_tokener_free(tok);
	free(copy);
	if (ret == -1)
		errno = EINVAL;
	return ret;
}

int
store_sandbox_from_json(const char *text, struct sandbox_record *r)
{
	int	 saved;

	memset(r, 0, sizeof(*r));
	if (store_json_read(text, get_record, r) == 0)
		return 0;
	saved = errno;
	sandbox_record_free(r);
	errno = saved;
	return -1;
}

void
sandbox_record_free(struct sandbox_record *r)
{
	sandbox_spec_free(&r->spec);
	free(r->source_snapshot_id);
	labels_free(&r->labels);
	egress_policy_free(&r->egress);
	memset(r, 0, sizeof(*r));
}
