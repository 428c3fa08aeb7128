/*
 * JSON request bodies to the structs apid sends managerd, validated the
 * way FastAPI and pydantic (v2, lax mode, extra="forbid") validate the
 * reference's models, with their 422 {"detail": [...]} entries: every
 * error is collected, fields in model order, then unknown keys (API.md
 * §1.3, §1.4, §4.2, §4.6, §4.7).  This file holds what every model
 * shares: the 422 entries, pydantic's lax coercions, the steps up to "an
 * object to validate", and the checks after the schema; the models are
 * body_sandbox.c and body_exec.c.  The parsing is pure (no HTTP layer) so
 * the tests can drive it; body_read_* at the end are the HTTP glue.
 *
 * What apid checks beyond the schema, with 400s, is only what could not
 * travel to managerd: strings holding NUL (the messages carry C strings)
 * and sizes past the message bounds of sandbox_msg.h.  Deviation: these
 * come before managerd's own checks (an unknown sandbox, a bad image...),
 * which upstream would report first.
 */
#include <sys/queue.h>

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "apid.h"
#include "format.h"
#include "log.h"

static json_object *
loc_json(const struct loc *l)
{
	json_object	*a = json_object_new_array();

	json_object_array_add(a, json_object_new_string("body"));
	if (l == NULL)
		return a;
	if (l->field != NULL)
		json_object_array_add(a, json_object_new_string(l->field));
	if (l->sub != NULL)
		json_object_array_add(a, json_object_new_string(l->sub));
	if (l->key != NULL)
		json_object_array_add(a,
		    json_object_new_string_len(l->key, (int)l->keylen));
	if (l->idx >= 0)
		json_object_array_add(a, json_object_new_int64(l->idx));
	return a;
}

void
detail_add(json_object *errors, const char *type, json_object *loc,
    const char *msg, json_object *input, json_object *ctx)
{
	json_object	*e = json_object_new_object();

	json_object_object_add(e, "type", json_object_new_string(type));
	json_object_object_add(e, "loc", loc);
	json_object_object_add(e, "msg", json_object_new_string(msg));
	json_object_object_add(e, "input", input);
	if (ctx != NULL)
		json_object_object_add(e, "ctx", ctx);
	json_object_array_add(errors, e);
}

int
add_error(struct vctx *v, const char *type, const struct loc *l,
    const char *msg, const struct jv *input, json_object *ctx)
{
	detail_add(v->errors, type, loc_json(l), msg, jv_to_json(input),
	    ctx);
	return -1;
}

static json_object *
ctx1(const char *key, json_object *val)
{
	json_object	*c = json_object_new_object();

	json_object_object_add(c, key, val);
	return c;
}

/* Python's str.strip() for the ASCII whitespace pydantic meets here. */
static void
strip(const char **s, size_t *len)
{
	while (*len > 0 && isspace((unsigned char)**s)) {
		(*s)++;
		(*len)--;
	}
	while (*len > 0 && isspace((unsigned char)(*s)[*len - 1]))
		(*len)--;
}

/* pydantic's str -> int: [+-]digits, optionally followed by ".000". */
static int
str_to_int(const char *s, size_t len, int64_t *out)
{
	char	 buf[64];
	size_t	 i = 0, j;
	char	*ep;

	strip(&s, &len);
	if (len > 0 && (s[0] == '+' || s[0] == '-'))
		i++;
	for (j = i; j < len && isdigit((unsigned char)s[j]); j++)
		;
	if (j == i)
		return -1;
	if (j < len) {
		if (s[j] != '.')
			return -1;
		for (i = j + 1; i < len && s[i] == '0'; i++)
			;
		if (i != len)
			return -1;
	}
	if (memchr(s, '\0', len) != NULL)
		return -1;
	/* Saturate: managerd's range check says the same as for any huge. */
	if (j >= sizeof(buf)) {
		*out = s[0] == '-' ? INT64_MIN : INT64_MAX;
		return 0;
	}
	memcpy(buf, s, j);
	buf[j] = '\0';
	errno = 0;
	*out = strtoll(buf, &ep, 10);
	return 0;
}

/* pydantic's str -> float (Rust's f64 parser): decimal, inf, nan. */
static int
str_to_float(const char *s, size_t len, double *out)
{
	char	 buf[128];
	char	*ep;
	size_t	 i;

	strip(&s, &len);
	if (len == 0 || len >= sizeof(buf))
		return -1;
	for (i = 0; i < len; i++)
		if (s[i] == '\0' || s[i] == 'x' || s[i] == 'X' ||
		    s[i] == '(' || isspace((unsigned char)s[i]))
			return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	*out = strtod(buf, &ep);
	return *ep == '\0' ? 0 : -1;
}

int
v_string(struct vctx *v, const struct loc *l, const struct jv *in)
{
	if (in->type != JV_STRING)
		return add_error(v, "string_type", l,
		    "Input should be a valid string", in, NULL);
	return 0;
}

static int
v_float(struct vctx *v, const struct loc *l, const struct jv *in,
    double *out)
{
	switch (in->type) {
	case JV_INT:
		*out = in->u.i.big != NULL ? in->u.i.f : (double)in->u.i.v;
		return 0;
	case JV_FLOAT:
		*out = in->u.f;
		return 0;
	case JV_TRUE:
	case JV_FALSE:
		*out = in->type == JV_TRUE;
		return 0;
	case JV_STRING:
		if (str_to_float(in->u.s.s, in->u.s.len, out) == 0)
			return 0;
		return add_error(v, "float_parsing", l,
		    "Input should be a valid number, unable to parse string "
		    "as a number", in, NULL);
	default:
		return add_error(v, "float_type", l,
		    "Input should be a valid number", in, NULL);
	}
}

static int
v_int(struct vctx *v, const struct loc *l, const struct jv *in, int64_t *out)
{
	double	 f;

	switch (in->type) {
	case JV_INT:
		*out = in->u.i.v;
		return 0;
	case JV_FLOAT:
		f = in->u.f;
		if (!isfinite(f))
			return add_error(v, "finite_number", l,
			    "Input should be a finite number", in, NULL);
		if (f != fp_floor(f))
			return add_error(v, "int_from_float", l,
			    "Input should be a valid integer, got a number "
			    "with a fractional part", in, NULL);
		if (f >= 9223372036854775807.0)
			*out = INT64_MAX;
		else if (f <= -9223372036854775807.0)
			*out = INT64_MIN;
		else
			*out = (int64_t)f;
		return 0;
	case JV_TRUE:
	case JV_FALSE:
		*out = in->type == JV_TRUE;
		return 0;
	case JV_STRING:
		if (str_to_int(in->u.s.s, in->u.s.len, out) == 0)
			return 0;
		return add_error(v, "int_parsing", l,
		    "Input should be a valid integer, unable to parse string "
		    "as an integer", in, NULL);
	default:
		return add_error(v, "int_type", l,
		    "Input should be a valid integer", in, NULL);
	}
}

int
v_bool(struct vctx *v, const struct loc *l, const struct jv *in, int *out)
{
	static const char *const yes[] = { "1", "on", "t", "true", "y",
	    "yes" };
	static const char *const no[] = { "0", "off", "f", "false", "n",
	    "no" };
	char	 low[8];
	size_t	 i;

	switch (in->type) {
	case JV_TRUE:
	case JV_FALSE:
		*out = in->type == JV_TRUE;
		return 0;
	case JV_INT:
		if (in->u.i.big == NULL && (in->u.i.v == 0 || in->u.i.v == 1)) {
			*out = (int)in->u.i.v;
			return 0;
		}
		break;
	case JV_FLOAT:
		if (in->u.f == 0.0 || in->u.f == 1.0) {
			*out = in->u.f == 1.0;
			return 0;
		}
		break;
	case JV_STRING:
		if (in->u.s.len >= sizeof(low))
			break;
		for (i = 0; i <= in->u.s.len; i++)
			low[i] = (char)tolower((unsigned char)in->u.s.s[i]);
		if (strlen(low) != in->u.s.len)
			break;
		for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
			if (strcmp(low, yes[i]) == 0) {
				*out = 1;
				return 0;
			}
			if (strcmp(low, no[i]) == 0) {
				*out = 0;
				return 0;
			}
		}
		break;
	default:
		return add_error(v, "bool_type", l,
		    "Input should be a valid boolean", in, NULL);
	}
	return add_error(v, "bool_parsing", l,
	    "Input should be a valid boolean, unable to interpret input", in,
	    NULL);
}

/* Field(gt=0) on a float. */
int
v_float_gt0(struct vctx *v, const struct loc *l, const struct jv *in,
    double *out)
{
	if (v_float(v, l, in, out) == -1)
		return -1;
	if (*out > 0)
		return 0;
	return add_error(v, "greater_than", l,
	    "Input should be greater than 0", in,
	    ctx1("gt", json_object_new_double_s(0.0, "0.0")));
}

/* Field(ge=min) on an int. */
int
v_int_ge(struct vctx *v, const struct loc *l, const struct jv *in,
    int64_t min, int64_t *out)
{
	char	 msg[80];

	if (v_int(v, l, in, out) == -1)
		return -1;
	if (*out >= min)
		return 0;
	snprintf(msg, sizeof(msg),
	    "Input should be greater than or equal to %lld", (long long)min);
	return add_error(v, "greater_than_equal", l, msg, in,
	    ctx1("ge", json_object_new_int64(min)));
}

/* dict[str, str] */
int
v_env(struct vctx *v, const struct jv *in)
{
	struct loc	 l = { "env", NULL, NULL, 0, -1 };
	size_t		 i;
	int		 rc = 0;

	if (in->type != JV_OBJECT)
		return add_error(v, "dict_type", &l,
		    "Input should be a valid dictionary", in, NULL);
	for (i = 0; i < in->u.o.n; i++) {
		l.key = in->u.o.m[i].key;
		l.keylen = in->u.o.m[i].klen;
		if (v_string(v, &l, &in->u.o.m[i].val) == -1)
			rc = -1;
	}
	return rc;
}

static int
key_is(const struct jv_member *m, const char *name)
{
	return m->klen == strlen(name) && memcmp(m->key, name, m->klen) == 0;
}

/* The member called name, or NULL (it was not sent). */
const struct jv *
member(const struct jv *obj, const char *name)
{
	size_t	 i;

	for (i = 0; i < obj->u.o.n; i++)
		if (key_is(&obj->u.o.m[i], name))
			return &obj->u.o.m[i].val;
	return NULL;
}

void
v_extras(struct vctx *v, const struct jv *obj, const char *const *known)
{
	struct loc	 l = { NULL, NULL, NULL, 0, -1 };
	size_t		 i, k;

	for (i = 0; i < obj->u.o.n; i++) {
		for (k = 0; known[k] != NULL; k++)
			if (key_is(&obj->u.o.m[i], known[k]))
				break;
		if (known[k] != NULL)
			continue;
		l.key = obj->u.o.m[i].key;
		l.keylen = obj->u.o.m[i].klen;
		add_error(v, "extra_forbidden", &l,
		    "Extra inputs are not permitted", &obj->u.o.m[i].val,
		    NULL);
	}
}

void
v_missing(struct vctx *v, const char *field)
{
	struct loc	 l = { field, NULL, NULL, 0, -1 };

	add_error(v, "missing", &l, "Field required", v->body, NULL);
}

void
body_error_free(struct body_error *e)
{
	free(e->message);
	if (e->detail != NULL)
		json_object_put(e->detail);
	memset(e, 0, sizeof(*e));
}

int
set_error(struct body_error *e, int status, const char *code,
    const char *fmt, ...)
{
	va_list	 ap;

	e->status = status;
	e->code = code;
	va_start(ap, fmt);
	if (vasprintf(&e->message, fmt, ap) == -1)
		e->message = NULL;
	va_end(ap);
	return -1;
}

/* A 422 with one entry. */
static int
set_detail1(struct body_error *e, const char *type, json_object *loc,
    const char *msg, json_object *input, json_object *ctx)
{
	json_object	*errors = json_object_new_array();

	detail_add(errors, type, loc, msg, input, ctx);
	e->status = 422;
	e->detail = ctx1("detail", errors);
	return -1;
}

int
set_detail(struct body_error *e, json_object *errors)
{
	e->status = 422;
	e->detail = ctx1("detail", errors);
	return -1;
}

/*
 * FastAPI parses the body as JSON when the Content-Type's main type is
 * "application" and its subtype "json" or "*+json" (email.message rules:
 * parameters ignored, case folded, anything without exactly one '/' is
 * text/plain); with no Content-Type we parse too (API.md §1.4).
 */
static int
is_json_type(const char *ctype)
{
	char	 t[256], *slash;
	size_t	 len, n;

	if (ctype == NULL || *ctype == '\0')
		return 1;
	len = strcspn(ctype, ";");
	while (len > 0 && isspace((unsigned char)*ctype)) {
		ctype++;
		len--;
	}
	while (len > 0 && isspace((unsigned char)ctype[len - 1]))
		len--;
	if (len >= sizeof(t))
		return 0;
	for (n = 0; n < len; n++)
		t[n] = (char)tolower((unsigned char)ctype[n]);
	t[len] = '\0';
	if ((slash = strchr(t, '/')) == NULL || strchr(slash + 1, '/') != NULL)
		return 0;
	*slash = '\0';
	if (strcmp(t, "application") != 0)
		return 0;
	slash++;
	n = strlen(slash);
	return strcmp(slash, "json") == 0 ||
	    (n >= 5 && strcmp(slash + n - 5, "+json") == 0);
}

/*
 * Steps every JSON body shares, up to "an object to validate": size,
 * content type, syntax, missing body, not an object.
 */
int
body_object(const char *ctype, const void *data, size_t len, struct jv *out,
    struct body_error *e)
{
	struct pyjson_error	 perr;
	struct utf8_decoder	 d;
	char			*text;
	size_t			 n;
	int			 rc;

	memset(e, 0, sizeof(*e));
	if (len > BODY_MAX_JSON)
		return set_error(e, 413, "payload_too_large",
		    "request body is larger than %d bytes", BODY_MAX_JSON);
	if (len == 0)
		return set_detail1(e, "missing", loc_json(NULL),
		    "Field required", NULL, NULL);
	if (!is_json_type(ctype)) {
		/* Not parsed: the model sees the raw bytes. */
		if ((text = malloc(UTF8_DECODE_BOUND(len))) == NULL)
			return set_error(e, 500, "internal_error",
			    "out of memory");
		utf8_decoder_init(&d);
		n = utf8_decode(&d, data, len, 1, text);
		set_detail1(e, "model_attributes_type", loc_json(NULL),
		    "Input should be a valid dictionary or object to extract "
		    "fields from", json_object_new_string_len(text, (int)n),
		    NULL);
		free(text);
		return -1;
	}
	rc = pyjson_parse(data, len, out, &perr);
	if (rc == PYJSON_FATAL)
		return set_error(e, 400, "http_error",
		    "There was an error parsing the body");
	if (rc == PYJSON_ERROR) {
		json_object	*loc = loc_json(NULL);

		json_object_array_add(loc,
		    json_object_new_int64((int64_t)perr.pos));
		return set_detail1(e, "json_invalid", loc, "JSON decode error",
		    json_object_new_object(),
		    ctx1("error", json_object_new_string(perr.msg)));
	}
	if (out->type == JV_NULL)
		return set_detail1(e, "missing", loc_json(NULL),
		    "Field required", NULL, NULL);
	if (out->type != JV_OBJECT) {
		set_detail1(e, "model_attributes_type", loc_json(NULL),
		    "Input should be a valid dictionary or object to extract "
		    "fields from", jv_to_json(out), NULL);
		jv_free(out);
		return -1;
	}
	return 0;
}

char *
body_pyrepr(const char *s, size_t len)
{
	const char	*seg;
	char		*segcopy, *r, *out, quote;
	size_t		 i, seglen, olen = 0, n;
	int		 has_sq = 0, has_dq = 0;

	/* Python picks the quote from the whole string. */
	for (i = 0; i < len; i++) {
		has_sq |= s[i] == '\'';
		has_dq |= s[i] == '"';
	}
	quote = has_sq && !has_dq ? '"' : '\'';
	if (len > (SIZE_MAX - 3) / 6 || (out = malloc(len * 6 + 3)) == NULL)
		return NULL;
	out[olen++] = quote;
	for (seg = s; seg <= s + len; seg += seglen + 1) {
		seglen = strnlen(seg, (size_t)(s + len - seg));
		/*
		 * format_pyrepr() on the piece plus a character that makes it
		 * pick the same quote; then drop that character and quotes.
		 */
		if ((segcopy = malloc(seglen + 2)) == NULL)
			goto fail;
		memcpy(segcopy, seg, seglen);
		segcopy[seglen] = quote == '\'' ? '"' : '\'';
		segcopy[seglen + 1] = '\0';
		r = format_pyrepr(segcopy);
		free(segcopy);
		if (r == NULL)
			goto fail;
		n = strlen(r);
		memcpy(out + olen, r + 1, n - 3);
		olen += n - 3;
		free(r);
		if (seg + seglen < s + len) {
			memcpy(out + olen, "\\x00", 4);
			olen += 4;
		}
	}
	out[olen++] = quote;
	out[olen] = '\0';
	return out;
fail:
	free(out);
	return NULL;
}

int
has_nul(const struct jv *v)
{
	return memchr(v->u.s.s, '\0', v->u.s.len) != NULL;
}

/*
 * After the schema: NULs (which managerd would reject with these very
 * words, API.md §4.2 step 6) and the message bounds; then the copy.
 */
int
env_take(const struct jv *in, struct env_list *env, struct body_error *e)
{
	const struct jv_member	*m;
	char			*repr;
	size_t			 i;

	if (in == NULL)
		return 0;
	for (i = 0; i < in->u.o.n; i++) {
		m = &in->u.o.m[i];
		if (memchr(m->key, '\0', m->klen) == NULL &&
		    !has_nul(&m->val))
			continue;
		if ((repr = body_pyrepr(m->key, m->klen)) == NULL)
			return set_error(e, 500, "internal_error",
			    "out of memory");
		set_error(e, 400, "invalid_request",
		    "invalid environment variable name %s", repr);
		free(repr);
		return -1;
	}
	if (in->u.o.n > MSG_MAX_ENV)
		return set_error(e, 400, "invalid_request",
		    "at most %d environment variables are supported",
		    MSG_MAX_ENV);
	for (i = 0; i < in->u.o.n; i++) {
		m = &in->u.o.m[i];
		if (m->klen > MSG_MAX_ENV_KEY || m->val.u.s.len >
		    MSG_MAX_ENV_VALUE)
			return set_error(e, 400, "invalid_request",
			    "environment variable names are limited to %d "
			    "bytes and values to %d bytes", MSG_MAX_ENV_KEY,
			    MSG_MAX_ENV_VALUE);
	}
	for (i = 0; i < in->u.o.n; i++)
		if (env_list_add(env, in->u.o.m[i].key,
		    in->u.o.m[i].val.u.s.s) == -1)
			return set_error(e, 500, "internal_error",
			    "out of memory");
	return 0;
}

/* HTTP glue. */

void
body_respond_error(struct http_request *req, struct body_error *e)
{
	if (e->status == 422)
		respond_json(req, 422, e->detail);
	else
		respond_error_status(req, e->status, e->code,
		    e->message != NULL ? e->message : "out of memory");
	body_error_free(e);
}

const void *
body_bytes(struct http_request *req, size_t *len)
{
	const void	*p = http_request_body(req, len);

	if (*len > BODY_MAX_JSON) {
		*len = 0;
		return NULL;
	}
	return p;
}

const char *
body_ctype(struct http_request *req)
{
	return http_request_field(req, "Content-Type");
}

int
body_read_create(struct http_request *req, struct create_request *c)
{
	struct body_error	 e;
	const void		*data;
	size_t			 len;

	data = body_bytes(req, &len);
	if (body_parse_create(body_ctype(req), data, len, c, &e) == -1) {
		body_respond_error(req, &e);
		return -1;
	}
	return 0;
}

int
body_read_exec(struct http_request *req, struct exec_request *x)
{
	struct body_error	 e;
	const void		*data;
	size_t			 len;

	data = body_bytes(req, &len);
	if (body_parse_exec(body_ctype(req), data, len, x, &e) == -1) {
		body_respond_error(req, &e);
		return -1;
	}
	return 0;
}

int
body_read_timeout(struct http_request *req, int64_t *seconds)
{
	struct body_error	 e;
	const void		*data;
	size_t			 len;

	data = body_bytes(req, &len);
	if (body_parse_timeout(body_ctype(req), data, len, seconds, &e) ==
	    -1) {
		body_respond_error(req, &e);
		return -1;
	}
	return 0;
}

int
body_read_patch(struct http_request *req, struct label_patch *p)
{
	struct body_error	 e;
	const void		*data;
	size_t			 len;

	data = body_bytes(req, &len);
	if (body_parse_patch(body_ctype(req), data, len, p, &e) == -1) {
		body_respond_error(req, &e);
		return -1;
	}
	return 0;
}
