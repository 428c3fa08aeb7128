/*
 * The labels of a request body (docs/rest-api.md "Labels"): the field of
 * create and fork ({"labels": {str: str} | null}) and the PATCH body
 * ({"labels": {str: str | null} | null}, a JSON merge patch, RFC 7396).
 *
 * As for env (body.c): the schema is pydantic's, with its 422 entries (an
 * object of strings; a number, a nested object or, outside a PATCH, a
 * null as a value is a string_type); the rules of labels.h beyond it
 * (count, key syntax, value bytes) are 400 invalid_request, checked once
 * the schema holds.  A key sent twice counts once, with its last value:
 * Python's json.loads does so (pyjson.c), before any rule sees the body.
 */
#include <stdlib.h>
#include <string.h>

#include "apid.h"

/* dict[str, str], or dict[str, str | None] when nulls remove. */
int
v_labels(struct vctx *v, const struct jv *in, int nulls)
{
	struct loc	 l = { "labels", NULL, NULL, 0, -1 };
	const struct jv	*val;
	size_t		 i;
	int		 rc = 0;

	if (in->type != JV_OBJECT)
		return add_error(v, "dict_type", &l,
		    "Input should be a valid dictionary", in, NULL);
	for (i = 0; i < in->u.o.n; i++) {
		l.key = in->u.o.m[i].key;
		l.keylen = in->u.o.m[i].klen;
		val = &in->u.o.m[i].val;
		if (nulls && val->type == JV_NULL)
			continue;
		if (v_string(v, &l, val) == -1)
			rc = -1;
	}
	return rc;
}

/* The 400 for a member whose key or value breaks labels.h's rule. */
static int
bad_member(struct body_error *e, const struct jv_member *m, int value)
{
	char	*repr;

	if ((repr = body_pyrepr(m->key, m->klen)) == NULL)
		return set_error(e, 500, "internal_error", "out of memory");
	if (value)
		set_error(e, 400, "invalid_request", "invalid value of label "
		    "%s: a label value is at most %d bytes of UTF-8 without "
		    "control characters", repr, LABEL_VALUE_MAX);
	else
		set_error(e, 400, "invalid_request", "invalid label key %s: a "
		    "label key is 1-%d characters of A-Z a-z 0-9 . _ / - "
		    "starting with a letter or a digit", repr, LABEL_KEY_MAX);
	free(repr);
	return -1;
}

/* Every member's key (and, unless null, value) against labels.h. */
static int
labels_check_members(const struct jv *in, struct body_error *e)
{
	const struct jv_member	*m;
	size_t			 i;

	for (i = 0; i < in->u.o.n; i++) {
		m = &in->u.o.m[i];
		if (!label_key_valid(m->key, m->klen))
			return bad_member(e, m, 0);
		if (m->val.type == JV_STRING &&
		    !label_value_valid(m->val.u.s.s, m->val.u.s.len))
			return bad_member(e, m, 1);
	}
	return 0;
}

/* After v_labels(in, 0) held: the labels, or -1 with e set. */
int
labels_take(const struct jv *in, struct label_list *out, struct body_error *e)
{
	size_t	 i;

	memset(out, 0, sizeof(*out));
	if (in == NULL)
		return 0;
	if (labels_check_members(in, e) == -1)
		return -1;
	if (in->u.o.n > LABELS_MAX)
		return set_error(e, 400, "invalid_request",
		    "a sandbox has at most %d labels", LABELS_MAX);
	for (i = 0; i < in->u.o.n; i++)
		if (labels_set(out, in->u.o.m[i].key,
		    in->u.o.m[i].val.u.s.s) == -1) {
			labels_free(out);
			return set_error(e, 500, "internal_error",
			    "out of memory");
		}
	return 0;
}

/* After v_labels(in, 1) held: the changes into p. */
static int
patch_take(const struct jv *in, struct label_patch *p, struct body_error *e)
{
	const struct jv_member	*m;
	struct label_list	 rm;
	size_t			 i, nset = 0;

	if (labels_check_members(in, e) == -1)
		return -1;
	for (i = 0; i < in->u.o.n; i++)
		nset += in->u.o.m[i].val.type == JV_STRING;
	if (nset > LABELS_MAX || in->u.o.n - nset > LABELS_MAX)
		return set_error(e, 400, "invalid_request", "a labels patch "
		    "sets at most %d labels and removes at most %d",
		    LABELS_MAX, LABELS_MAX);
	/* A set sorts the removals as the message wants them. */
	memset(&rm, 0, sizeof(rm));
	for (i = 0; i < in->u.o.n; i++) {
		m = &in->u.o.m[i];
		if (labels_set(m->val.type == JV_STRING ? &p->set : &rm, m->key,
		    m->val.type == JV_STRING ? m->val.u.s.s : "") == -1) {
			labels_free(&rm);
			return set_error(e, 500, "internal_error",
			    "out of memory");
		}
	}
	p->remove = rm.keys;
	p->nremove = rm.count;
	for (i = 0; i < rm.count; i++)
		free(rm.values[i]);
	free(rm.values);
	return 0;
}

static const char *const patch_fields[] = { "labels", NULL };

/*
 * PATCH /v1/sandboxes/{id}: {"labels": {...}} with a string to set a
 * label and null to remove it; {"labels": null} removes them all, and
 * {} changes nothing (RFC 7396 on the sandbox's document).  Any other
 * field is a 422 extra_forbidden: labels are all a PATCH may change.
 */
int
body_parse_patch(const char *ctype, const void *data, size_t len,
    struct label_patch *p, struct body_error *e)
{
	struct jv	 body;
	struct vctx	 v;
	const struct jv	*f;
	int		 rc = -1;

	memset(p, 0, sizeof(*p));
	if (body_object(ctype, data, len, &body, e) == -1)
		return -1;
	v.errors = json_object_new_array();
	v.body = &body;
	if ((f = member(&body, "labels")) != NULL && f->type != JV_NULL)
		v_labels(&v, f, 1);
	v_extras(&v, &body, patch_fields);
	if (json_object_array_length(v.errors) > 0) {
		set_detail(e, v.errors);
		goto out;
	}
	json_object_put(v.errors);
	if (f != NULL && f->type == JV_NULL)
		p->clear = 1;
	else if (f != NULL && patch_take(f, p, e) == -1)
		goto out;
	rc = 0;
out:
	if (rc == -1)
		label_patch_free(p);
	jv_free(&body);
	return rc;
}
