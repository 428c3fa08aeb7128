/*
 * Request bodies parsed the way the reference parses them: Python's
 * json.loads() on the raw bytes (API.md §1.3, §1.4).  It follows CPython's
 * scanner step by step so that a syntax error reports the same message
 * and the same position (in characters, not bytes) that FastAPI puts in
 * its json_invalid entry; it accepts what Python accepts (NaN, Infinity,
 * -Infinity, big integers, duplicate keys with the last one winning in
 * the first one's place).
 *
 * Deviations, for things the server could not carry anyway: the body must
 * be UTF-8 (Python would also try UTF-16/32 on a body starting with a NUL
 * byte), encoded surrogates are invalid UTF-8 (Python's surrogatepass
 * takes them) and a \ud800-style escape without its pair becomes U+FFFD.
 * What Python fails on with something other than a JSONDecodeError
 * (invalid UTF-8, nesting past the recursion limit, integers of more than
 * 4300 digits) is PYJSON_FATAL: FastAPI answers those with 400 "There was
 * an error parsing the body".
 */
#include <sys/queue.h>

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "apid.h"
#include "format.h"

#define PYJSON_MAX_DEPTH	512
/* Python's sys.int_info.default_max_str_digits */
#define PY_INT_MAX_DIGITS	4300

struct jparser {
	const unsigned char	*s;
	size_t			 len;
	int			 depth;
	int			 fatal;
	const char		*msg;
	size_t			 pos;		/* byte offset */
};

static int	scan_once(struct jparser *, size_t, struct jv *, size_t *);

static int
fail(struct jparser *p, const char *msg, size_t pos)
{
	p->msg = msg;
	p->pos = pos;
	return -1;
}

static int
fail_fatal(struct jparser *p, const char *msg)
{
	p->fatal = 1;
	p->msg = msg;
	p->pos = 0;
	return -1;
}

static int
is_ws(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static size_t
skip_ws(const struct jparser *p, size_t i)
{
	while (i < p->len && is_ws(p->s[i]))
		i++;
	return i;
}

void
jv_free(struct jv *v)
{
	size_t	 i;

	switch (v->type) {
	case JV_INT:
		free(v->u.i.big);
		break;
	case JV_STRING:
		free(v->u.s.s);
		break;
	case JV_ARRAY:
		for (i = 0; i < v->u.a.n; i++)
			jv_free(&v->u.a.items[i]);
		free(v->u.a.items);
		break;
	case JV_OBJECT:
		for (i = 0; i < v->u.o.n; i++) {
			free(v->u.o.m[i].key);
			jv_free(&v->u.o.m[i].val);
		}
		free(v->u.o.m);
		break;
	default:
		break;
	}
	memset(v, 0, sizeof(*v));
	v->type = JV_NULL;
}

/* A growable byte string for string contents. */
struct sbuf {
	char	*p;
	size_t	 len;
	size_t	 size;
};

static int
sbuf_add(struct sbuf *b, const void *data, size_t len)
{
	size_t	 want;
	char	*np;

	if (b->len + len + 1 > b->size) {
		want = b->size ? b->size : 32;
		while (want < b->len + len + 1)
			want *= 2;
		if ((np = realloc(b->p, want)) == NULL)
			return -1;
		b->p = np;
		b->size = want;
	}
	memcpy(b->p + b->len, data, len);
	b->len += len;
	b->p[b->len] = '\0';
	return 0;
}

static int
sbuf_add_cp(struct sbuf *b, uint32_t cp)
{
	unsigned char	 u[4];

	/* A lone surrogate has no UTF-8: it becomes U+FFFD. */
	return sbuf_add(b, u, utf8_encode(cp, u));
}

/* Four hex digits at s[i..i+4); -1 if any is not one. */
static int32_t
hex4(const struct jparser *p, size_t i)
{
	int32_t	 v = 0;
	int	 h, k;

	for (k = 0; k < 4; k++) {
		if ((h = format_hexval(p->s[i + k])) == -1)
			return -1;
		v = v << 4 | h;
	}
	return v;
}

/*
 * CPython's scanstring_unicode(): start is just past the opening quote.
 * Note its exact bounds: "\uXXXX" needs one more character after the
 * digits, and a high surrogate pairs only with a following "\uXXXX".
 */
static int
scan_string(struct jparser *p, size_t start, char **outp, size_t *outlen,
    size_t *next)
{
	struct sbuf	 b = { NULL, 0, 0 };
	size_t		 begin = start - 1, i = start, run;
	int32_t		 c, c2;
	unsigned char	 e;

	if (sbuf_add(&b, "", 0) == -1)
		goto nomem;
	for (;;) {
		run = i;
		while (i < p->len && p->s[i] != '"' && p->s[i] != '\\') {
			if (p->s[i] <= 0x1f) {
				fail(p, "Invalid control character at", i);
				goto bad;
			}
			i++;
		}
		if (i > run && sbuf_add(&b, p->s + run, i - run) == -1)
			goto nomem;
		if (i == p->len) {
			fail(p, "Unterminated string starting at", begin);
			goto bad;
		}
		if (p->s[i] == '"') {
			i++;
			break;
		}
		/* A backslash. */
		if (++i == p->len) {
			fail(p, "Unterminated string starting at", begin);
			goto bad;
		}
		e = p->s[i];
		if (e != 'u') {
			switch (e) {
			case '"': case '\\': case '/':
				break;
			case 'b': e = '\b'; break;
			case 'f': e = '\f'; break;
			case 'n': e = '\n'; break;
			case 'r': e = '\r'; break;
			case 't': e = '\t'; break;
			default:
				fail(p, "Invalid \\escape", i - 1);
				goto bad;
			}
			if (sbuf_add(&b, &e, 1) == -1)
				goto nomem;
			i++;
			continue;
		}
		/* i is at the 'u'. */
		if (i + 5 >= p->len) {
			fail(p, "Invalid \\uXXXX escape", i);
			goto bad;
		}
		if ((c = hex4(p, i + 1)) == -1) {
			fail(p, "Invalid \\uXXXX escape", i);
			goto bad;
		}
		i += 5;
		if (c >= 0xd800 && c <= 0xdbff && i + 6 < p->len &&
		    p->s[i] == '\\' && p->s[i + 1] == 'u') {
			if ((c2 = hex4(p, i + 2)) == -1) {
				fail(p, "Invalid \\uXXXX escape", i + 1);
				goto bad;
			}
			if (c2 >= 0xdc00 && c2 <= 0xdfff) {
				c = 0x10000 + (((c - 0xd800) << 10) |
				    (c2 - 0xdc00));
				i += 6;
			}
		}
		if (sbuf_add_cp(&b, (uint32_t)c) == -1)
			goto nomem;
	}
	*outp = b.p;
	*outlen = b.len;
	*next = i;
	return 0;
nomem:
	fail_fatal(p, "out of memory");
bad:
	free(b.p);
	return -1;
}

static int
is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

/* CPython's _match_number_unicode(); a failure is "Expecting value". */
static int
scan_number(struct jparser *p, size_t start, struct jv *v, size_t *next)
{
	size_t	 i = start, end = p->len - 1, ndigits;
	int	 is_float = 0;
	char	*text, *ep;

	if (p->s[i] == '-') {
		if (++i > end)
			return fail(p, "Expecting value", start);
	}
	if (p->s[i] >= '1' && p->s[i] <= '9') {
		i++;
		while (i <= end && is_digit(p->s[i]))
			i++;
	} else if (p->s[i] == '0')
		i++;
	else
		return fail(p, "Expecting value", start);
	ndigits = i - start - (p->s[start] == '-');
	if (i < end && p->s[i] == '.' && is_digit(p->s[i + 1])) {
		is_float = 1;
		i += 2;
		while (i <= end && is_digit(p->s[i]))
			i++;
	}
	if (i < end && (p->s[i] == 'e' || p->s[i] == 'E')) {
		size_t	 e_start = i++;

		if (i < end && (p->s[i] == '-' || p->s[i] == '+'))
			i++;
		while (i <= end && is_digit(p->s[i]))
			i++;
		if (is_digit(p->s[i - 1]))
			is_float = 1;
		else
			i = e_start;
	}
	if (!is_float && ndigits > PY_INT_MAX_DIGITS)
		return fail_fatal(p, "integer too long");
	if ((text = strndup((const char *)p->s + start, i - start)) == NULL)
		return fail_fatal(p, "out of memory");
	memset(v, 0, sizeof(*v));
	if (is_float) {
		v->type = JV_FLOAT;
		v->u.f = strtod(text, NULL);
		free(text);
	} else {
		v->type = JV_INT;
		errno = 0;
		v->u.i.v = strtoll(text, &ep, 10);
		if (errno == ERANGE) {
			/* Python keeps every digit: say them as written. */
			v->u.i.big = text;
			v->u.i.f = strtod(text, NULL);
		} else {
			v->u.i.f = (double)v->u.i.v;
			if (v->u.i.v == 0)
				v->u.i.v = 0;	/* "-0" is 0 */
			free(text);
		}
	}
	*next = i;
	return 0;
}

static int
literal(const struct jparser *p, size_t i, const char *word)
{
	size_t	 n = strlen(word);

	return n <= p->len - i && memcmp(p->s + i, word, n) == 0;
}

struct kref {
	const char	*key;
	size_t		 klen;
	size_t		 idx;
};

static int
kref_cmp(const void *a, const void *b)
{
	const struct kref	*x = a, *y = b;
	size_t			 n;
	int			 c;

	n = x->klen < y->klen ? x->klen : y->klen;
	if ((c = memcmp(x->key, y->key, n)) != 0)
		return c;
	if (x->klen != y->klen)
		return x->klen < y->klen ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/*
 * dict(pairs): a repeated key keeps the place of its first occurrence and
 * the value of its last.
 */
static int
dedupe_members(struct jv *obj)
{
	struct jv_member	*m = obj->u.o.m;
	struct kref		*r;
	size_t			 n = obj->u.o.n, i, j, k;
	char			*dead;

	if (n < 2)
		return 0;
	if ((r = calloc(n, sizeof(*r))) == NULL)
		return -1;
	if ((dead = calloc(n, 1)) == NULL) {
		free(r);
		return -1;
	}
	for (i = 0; i < n; i++) {
		r[i].key = m[i].key;
		r[i].klen = m[i].klen;
		r[i].idx = i;
	}
	qsort(r, n, sizeof(*r), kref_cmp);
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && r[j].klen == r[i].klen &&
		    memcmp(r[j].key, r[i].key, r[i].klen) == 0; j++)
			;
		if (j - i == 1)
			continue;
		/* r[i] is the first occurrence, r[j - 1] the last. */
		jv_free(&m[r[i].idx].val);
		m[r[i].idx].val = m[r[j - 1].idx].val;
		m[r[j - 1].idx].val.type = JV_NULL;
		for (k = i + 1; k < j; k++)
			dead[r[k].idx] = 1;
	}
	for (i = 0, k = 0; i < n; i++) {
		if (dead[i]) {
			free(m[i].key);
			jv_free(&m[i].val);
			continue;
		}
		m[k++] = m[i];
	}
	obj->u.o.n = k;
	free(dead);
	free(r);
	return 0;
}

static int
grow(void **arr, size_t *cap, size_t n, size_t elem)
{
	void	*np;
	size_t	 want;

	if (n < *cap)
		return 0;
	want = *cap ? *cap * 2 : 4;
	if ((np = reallocarray(*arr, want, elem)) == NULL)
		return -1;
	*arr = np;
	*cap = want;
	return 0;
}

/* CPython's _parse_object_unicode(); i is just past the '{'. */
static int
scan_object(struct jparser *p, size_t i, struct jv *v, size_t *next)
{
	struct jv_member	*m = NULL;
	size_t			 n = 0, cap = 0, j;
	char			*key;
	size_t			 klen;

	v->type = JV_OBJECT;
	i = skip_ws(p, i);
	if (i >= p->len || p->s[i] != '}') {
		for (;;) {
			if (i >= p->len || p->s[i] != '"') {
				fail(p, "Expecting property name enclosed in "
				    "double quotes", i);
				goto bad;
			}
			if (grow((void **)&m, &cap, n, sizeof(*m)) == -1) {
				fail_fatal(p, "out of memory");
				goto bad;
			}
			if (scan_string(p, i + 1, &key, &klen, &i) == -1)
				goto bad;
			m[n].key = key;
			m[n].klen = klen;
			memset(&m[n].val, 0, sizeof(m[n].val));
			n++;
			i = skip_ws(p, i);
			if (i >= p->len || p->s[i] != ':') {
				fail(p, "Expecting ':' delimiter", i);
				goto bad;
			}
			i = skip_ws(p, i + 1);
			if (scan_once(p, i, &m[n - 1].val, &i) == -1)
				goto bad;
			i = skip_ws(p, i);
			if (i < p->len && p->s[i] == '}')
				break;
			if (i >= p->len || p->s[i] != ',') {
				fail(p, "Expecting ',' delimiter", i);
				goto bad;
			}
			i = skip_ws(p, i + 1);
		}
	}
	v->u.o.m = m;
	v->u.o.n = n;
	if (dedupe_members(v) == -1) {
		jv_free(v);
		return fail_fatal(p, "out of memory");
	}
	*next = i + 1;
	return 0;
bad:
	for (j = 0; j < n; j++) {
		free(m[j].key);
		jv_free(&m[j].val);
	}
	free(m);
	v->type = JV_NULL;
	return -1;
}

/* CPython's _parse_array_unicode(); i is just past the '['. */
static int
scan_array(struct jparser *p, size_t i, struct jv *v, size_t *next)
{
	struct jv	*items = NULL;
	size_t		 n = 0, cap = 0, j;

	v->type = JV_ARRAY;
	i = skip_ws(p, i);
	if (i >= p->len || p->s[i] != ']') {
		for (;;) {
			if (grow((void **)&items, &cap, n,
			    sizeof(*items)) == -1) {
				fail_fatal(p, "out of memory");
				goto bad;
			}
			memset(&items[n], 0, sizeof(items[n]));
			if (scan_once(p, i, &items[n], &i) == -1)
				goto bad;
			n++;
			i = skip_ws(p, i);
			if (i < p->len && p->s[i] == ']')
				break;
			if (i >= p->len || p->s[i] != ',') {
				fail(p, "Expecting ',' delimiter", i);
				goto bad;
			}
			i = skip_ws(p, i + 1);
		}
	}
	v->u.a.items = items;
	v->u.a.n = n;
	*next = i + 1;
	return 0;
bad:
	for (j = 0; j < n; j++)
		jv_free(&items[j]);
	free(items);
	v->type = JV_NULL;
	return -1;
}

static int
scan_once(struct jparser *p, size_t i, struct jv *v, size_t *next)
{
	int	 rc;

	memset(v, 0, sizeof(*v));
	v->type = JV_NULL;
	if (i >= p->len)
		return fail(p, "Expecting value", i);
	switch (p->s[i]) {
	case '"':
		v->type = JV_STRING;
		rc = scan_string(p, i + 1, &v->u.s.s, &v->u.s.len, next);
		if (rc == -1)
			v->type = JV_NULL;
		return rc;
	case '{':
	case '[':
		if (++p->depth > PYJSON_MAX_DEPTH)
			return fail_fatal(p, "nested too deeply");
		rc = p->s[i] == '{' ? scan_object(p, i + 1, v, next) :
		    scan_array(p, i + 1, v, next);
		p->depth--;
		return rc;
	case 'n':
		if (literal(p, i, "null")) {
			*next = i + 4;
			return 0;
		}
		break;
	case 't':
		if (literal(p, i, "true")) {
			v->type = JV_TRUE;
			*next = i + 4;
			return 0;
		}
		break;
	case 'f':
		if (literal(p, i, "false")) {
			v->type = JV_FALSE;
			*next = i + 5;
			return 0;
		}
		break;
	case 'N':
		if (literal(p, i, "NaN")) {
			v->type = JV_FLOAT;
			v->u.f = NAN;
			*next = i + 3;
			return 0;
		}
		break;
	case 'I':
		if (literal(p, i, "Infinity")) {
			v->type = JV_FLOAT;
			v->u.f = INFINITY;
			*next = i + 8;
			return 0;
		}
		break;
	case '-':
		if (literal(p, i, "-Infinity")) {
			v->type = JV_FLOAT;
			v->u.f = -INFINITY;
			*next = i + 9;
			return 0;
		}
		break;
	}
	return scan_number(p, i, v, next);
}

int
pyjson_parse(const void *data, size_t len, struct jv *out,
    struct pyjson_error *err)
{
	struct jparser	 p;
	size_t		 i;

	memset(&p, 0, sizeof(p));
	memset(out, 0, sizeof(*out));
	out->type = JV_NULL;
	memset(err, 0, sizeof(*err));
	p.s = data;
	p.len = len;
	/* json.loads(bytes) decodes with utf-8-sig: a BOM is not text. */
	if (len >= 3 && memcmp(p.s, "\xef\xbb\xbf", 3) == 0) {
		p.s += 3;
		p.len -= 3;
	}
	if (!utf8_valid(p.s, p.len)) {
		err->msg = "invalid UTF-8";
		return PYJSON_FATAL;
	}
	i = skip_ws(&p, 0);
	if (scan_once(&p, i, out, &i) == 0) {
		i = skip_ws(&p, i);
		if (i == p.len)
			return PYJSON_OK;
		jv_free(out);
		fail(&p, "Extra data", i);
	}
	err->msg = p.msg;
	if (p.fatal)
		return PYJSON_FATAL;
	/* Python positions count characters, not bytes. */
	err->pos = utf8_nchars(p.s, p.pos);
	return PYJSON_ERROR;
}

json_object *
jv_to_json(const struct jv *v)
{
	json_object	*o;
	char		 buf[FORMAT_PYFLOAT_LEN];
	size_t		 i;

	switch (v->type) {
	case JV_NULL:
		return NULL;
	case JV_TRUE:
	case JV_FALSE:
		return json_object_new_boolean(v->type == JV_TRUE);
	case JV_INT:
		if (v->u.i.big != NULL)
			return json_object_new_double_s(v->u.i.f, v->u.i.big);
		return json_object_new_int64(v->u.i.v);
	case JV_FLOAT:
		/* FastAPI would fail on NaN and infinities; say null. */
		if (!isfinite(v->u.f) ||
		    format_pyfloat(v->u.f, buf, sizeof(buf)) == NULL)
			return NULL;
		return json_object_new_double_s(v->u.f, buf);
	case JV_STRING:
		return json_object_new_string_len(v->u.s.s, (int)v->u.s.len);
	case JV_ARRAY:
		o = json_object_new_array();
		for (i = 0; i < v->u.a.n; i++)
			json_object_array_add(o, jv_to_json(&v->u.a.items[i]));
		return o;
	case JV_OBJECT:
		o = json_object_new_object();
		/* json-c keys end at a NUL; Python's would not. */
		for (i = 0; i < v->u.o.n; i++)
			json_object_object_add(o, v->u.o.m[i].key,
			    jv_to_json(&v->u.o.m[i].val));
		return o;
	}
	return NULL;
}
