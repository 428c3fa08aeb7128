/*
 * Egress policies in request bodies (docs/rest-api.md "Network"): the
 * "network" field of create and fork, a boolean as in the reference or
 * a policy object, and the body of PUT /v1/sandboxes/{id}/network.
 *
 * apid checks only the shape: an object, whose compact JSON text fits
 * in EGRESS_POLICY_TEXT_MAX bytes.  managerd parses the text with
 * egress_policy_parse() and answers what is wrong with the policy: one
 * parser, in the process that keeps the records.  The text is written
 * here from the parsed body, not copied from it, so that what managerd
 * reads is what apid read (duplicate keys already merged, the last one
 * winning, as pyjson.c does) and whitespace costs a client none of the
 * bound.
 *
 * Beyond the shape, as body.c does for strings, apid refuses (400) only
 * what cannot travel: a key holding NUL, at any depth, which managerd's
 * json-c would cut short ({"mode\u0000x": ...} would arrive as "mode").
 * A NUL in a value travels escaped, and managerd judges it.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apid.h"
#include "format.h"

/* The text being written; it stops growing at the bound. */
struct ptext {
	char	 buf[EGRESS_POLICY_TEXT_MAX + 1];
	size_t	 len;
	int	 over;		/* past EGRESS_POLICY_TEXT_MAX */
};

static void
put(struct ptext *t, const void *p, size_t n)
{
	if (t->over || n > EGRESS_POLICY_TEXT_MAX - t->len) {
		t->over = 1;
		return;
	}
	memcpy(t->buf + t->len, p, n);
	t->len += n;
	t->buf[t->len] = '\0';
}

static void
puts_(struct ptext *t, const char *s)
{
	put(t, s, strlen(s));
}

/* A JSON string; pyjson.c gave valid UTF-8, which goes as it is. */
static void
put_string(struct ptext *t, const char *s, size_t len)
{
	char	 esc[8];
	size_t	 i;

	put(t, "\"", 1);
	for (i = 0; i < len && !t->over; i++) {
		unsigned char	 c = (unsigned char)s[i];

		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			put(t, esc, 2);
		} else if (c < 0x20) {
			snprintf(esc, sizeof(esc), "\\u%04x", c);
			put(t, esc, 6);
		} else
			put(t, &s[i], 1);
	}
	put(t, "\"", 1);
}

static void
put_value(struct ptext *t, const struct jv *v)
{
	char	 num[FORMAT_PYFLOAT_LEN];
	size_t	 i;

	switch (v->type) {
	case JV_NULL:
		puts_(t, "null");
		break;
	case JV_TRUE:
		puts_(t, "true");
		break;
	case JV_FALSE:
		puts_(t, "false");
		break;
	case JV_INT:
		if (v->u.i.big != NULL)
			puts_(t, v->u.i.big);
		else {
			snprintf(num, sizeof(num), "%lld",
			    (long long)v->u.i.v);
			puts_(t, num);
		}
		break;
	case JV_FLOAT:
		/* JSON has no NaN or infinity; as jv_to_json, a null. */
		if (!isfinite(v->u.f) ||
		    format_pyfloat(v->u.f, num, sizeof(num)) == NULL)
			puts_(t, "null");
		else
			puts_(t, num);
		break;
	case JV_STRING:
		put_string(t, v->u.s.s, v->u.s.len);
		break;
	case JV_ARRAY:
		put(t, "[", 1);
		for (i = 0; i < v->u.a.n && !t->over; i++) {
			if (i > 0)
				put(t, ",", 1);
			put_value(t, &v->u.a.items[i]);
		}
		put(t, "]", 1);
		break;
	case JV_OBJECT:
		put(t, "{", 1);
		for (i = 0; i < v->u.o.n && !t->over; i++) {
			if (i > 0)
				put(t, ",", 1);
			put_string(t, v->u.o.m[i].key, v->u.o.m[i].klen);
			put(t, ":", 1);
			put_value(t, &v->u.o.m[i].val);
		}
		put(t, "}", 1);
		break;
	}
}

/*
 * The compact text of obj, or NULL if it is past the bound.  One buffer
 * serves every request: apid runs one loop, and each caller is done
 * with the text before it returns.
 */
static const char *
policy_text(const struct jv *obj)
{
	static struct ptext	 t;

	t.len = 0;
	t.over = 0;
	t.buf[0] = '\0';
	put_value(&t, obj);
	return t.over ? NULL : t.buf;
}

/* The 422 entry for a policy whose text is past the bound. */
static int
too_long(struct vctx *v, const struct loc *l, const struct jv *in)
{
	json_object	*ctx;
	char		 msg[96];

	snprintf(msg, sizeof(msg), "Policy should be at most %d bytes of "
	    "compact JSON", EGRESS_POLICY_TEXT_MAX);
	ctx = json_object_new_object();
	json_object_object_add(ctx, "max_length",
	    json_object_new_int(EGRESS_POLICY_TEXT_MAX));
	return add_error(v, "too_long", l, msg, in, ctx);
}

/*
 * "network": an object is a policy (*policy set, *network 0), anything
 * else the boolean it always was, with the same 422s (an array or a
 * string that is no boolean is a bool_type or bool_parsing entry).
 */
int
v_network(struct vctx *v, const struct loc *l, const struct jv *in,
    int *network, const struct jv **policy)
{
	*policy = NULL;
	if (in->type != JV_OBJECT)
		return v_bool(v, l, in, network);
	*network = 0;
	if (policy_text(in) == NULL)
		return too_long(v, l, in);
	*policy = in;
	return 0;
}

/* Does any object in v have a key holding NUL? */
static int
nul_key(const struct jv *v)
{
	size_t	 i;

	if (v->type == JV_ARRAY) {
		for (i = 0; i < v->u.a.n; i++)
			if (nul_key(&v->u.a.items[i]))
				return 1;
	} else if (v->type == JV_OBJECT) {
		for (i = 0; i < v->u.o.n; i++)
			if (memchr(v->u.o.m[i].key, '\0',
			    v->u.o.m[i].klen) != NULL ||
			    nul_key(&v->u.o.m[i].val))
				return 1;
	}
	return 0;
}

/* After the schema held: the policy's text (NULL for none), or -1. */
int
network_take(const struct jv *policy, char **out, struct body_error *e)
{
	const char	*text;

	*out = NULL;
	if (policy == NULL)
		return 0;
	if (nul_key(policy))
		return set_error(e, 400, "invalid_request",
		    "a policy's keys must not contain NUL characters");
	/* v_network() measured it: it fits. */
	if ((text = policy_text(policy)) == NULL ||
	    (*out = strdup(text)) == NULL)
		return set_error(e, 500, "internal_error", "out of memory");
	return 0;
}

/*
 * PUT /v1/sandboxes/{id}/network: the whole body is the policy, a JSON
 * object (body_object()'s 413, 422 and 400 as for every JSON body);
 * its compact text in *policy.
 */
int
body_parse_network(const char *ctype, const void *data, size_t len,
    char **policy, struct body_error *e)
{
	struct jv	 body;
	struct vctx	 v;
	struct loc	 l = { NULL, NULL, NULL, 0, -1 };
	const struct jv	*p;
	int		 dummy, rc = -1;

	*policy = NULL;
	if (body_object(ctype, data, len, &body, e) == -1)
		return -1;
	v.errors = json_object_new_array();
	v.body = &body;
	v_network(&v, &l, &body, &dummy, &p);
	if (json_object_array_length(v.errors) > 0) {
		set_detail(e, v.errors);
		goto out;
	}
	json_object_put(v.errors);
	rc = network_take(p, policy, e);
out:
	jv_free(&body);
	return rc;
}
