/*
 * The bodies of the snapshot routes, as the reference's models, validated
 * with body.c's machinery: snapshot create (API.md §4.12, optional
 * {"name": str|null}), rollback (§4.13, required {"snapshot_id": str})
 * and fork (§4.17, optional overrides, all nullable; "network" may be a
 * policy object, body_network.c).  An optional body
 * that is empty or the JSON literal null is no body (§1.4).
 *
 * Beyond the schema, as in body_sandbox.c: a name holding NUL cannot
 * travel to managerd (400), and a snapshot id holding NUL names no
 * snapshot (404, as managerd would answer for any id it cannot hold).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apid.h"

/*
 * body_object() for a body the route may go without: 1 when there is
 * none (empty, or JSON null), 0 with out set, -1 with e set.  body_object
 * reports "missing" for exactly those two.
 */
int
body_optional(const char *ctype, const void *data, size_t len,
    struct jv *out, struct body_error *e)
{
	json_object	*list, *first, *type;

	memset(e, 0, sizeof(*e));
	if (len == 0)
		return 1;
	if (body_object(ctype, data, len, out, e) == 0)
		return 0;
	if (e->status != 422 || e->detail == NULL ||
	    !json_object_object_get_ex(e->detail, "detail", &list) ||
	    json_object_array_length(list) != 1 ||
	    (first = json_object_array_get_idx(list, 0)) == NULL ||
	    !json_object_object_get_ex(first, "type", &type) ||
	    strcmp(json_object_get_string(type), "missing") != 0)
		return -1;
	body_error_free(e);
	return 1;
}

/* Field(max_length=SNAPSHOT_NAME_MAX) on a str. */
static int
v_name(struct vctx *v, const struct loc *l, const struct jv *in)
{
	json_object	*ctx;
	char		 msg[64];

	if (v_string(v, l, in) == -1)
		return -1;
	if (utf8_nchars(in->u.s.s, in->u.s.len) <= SNAPSHOT_NAME_MAX)
		return 0;
	snprintf(msg, sizeof(msg), "String should have at most %d characters",
	    SNAPSHOT_NAME_MAX);
	ctx = json_object_new_object();
	json_object_object_add(ctx, "max_length",
	    json_object_new_int(SNAPSHOT_NAME_MAX));
	return add_error(v, "string_too_long", l, msg, in, ctx);
}

static const char *const create_fields[] = { "name", NULL };

int
body_parse_snapshot_create(const char *ctype, const void *data, size_t len,
    char **name, struct body_error *e)
{
	struct jv	 body;
	struct vctx	 v;
	struct loc	 l = { "name", NULL, NULL, 0, -1 };
	const struct jv	*f, *good = NULL;
	int		 rc;

	*name = NULL;
	if ((rc = body_optional(ctype, data, len, &body, e)) != 0)
		return rc == 1 ? 0 : -1;
	v.errors = json_object_new_array();
	v.body = &body;
	if ((f = member(&body, "name")) != NULL && f->type != JV_NULL &&
	    v_name(&v, &l, f) == 0)
		good = f;
	v_extras(&v, &body, create_fields);
	rc = -1;
	if (json_object_array_length(v.errors) > 0) {
		set_detail(e, v.errors);
		goto out;
	}
	json_object_put(v.errors);
	if (good != NULL) {
		if (has_nul(good)) {
			set_error(e, 400, "invalid_request",
			    "name must not contain NUL characters");
			goto out;
		}
		if ((*name = strdup(good->u.s.s)) == NULL) {
			set_error(e, 500, "internal_error", "out of memory");
			goto out;
		}
	}
	rc = 0;
out:
	jv_free(&body);
	return rc;
}

static const char *const rollback_fields[] = { "snapshot_id", NULL };

int
body_parse_rollback(const char *ctype, const void *data, size_t len,
    char **snapshot_id, struct body_error *e)
{
	struct jv	 body;
	struct vctx	 v;
	struct loc	 l = { "snapshot_id", NULL, NULL, 0, -1 };
	const struct jv	*f, *good = NULL;
	char		*repr;
	int		 rc = -1;

	*snapshot_id = NULL;
	if (body_object(ctype, data, len, &body, e) == -1)
		return -1;
	v.errors = json_object_new_array();
	v.body = &body;
	if ((f = member(&body, "snapshot_id")) == NULL)
		v_missing(&v, "snapshot_id");
	else if (v_string(&v, &l, f) == 0)
		good = f;
	v_extras(&v, &body, rollback_fields);
	if (json_object_array_length(v.errors) > 0) {
		set_detail(e, v.errors);
		goto out;
	}
	json_object_put(v.errors);
	if (has_nul(good)) {
		if ((repr = body_pyrepr(good->u.s.s, good->u.s.len)) == NULL) {
			set_error(e, 500, "internal_error", "out of memory");
			goto out;
		}
		set_error(e, 404, "not_found", "snapshot %s not found", repr);
		free(repr);
		goto out;
	}
	if ((*snapshot_id = strdup(good->u.s.s)) == NULL) {
		set_error(e, 500, "internal_error", "out of memory");
		goto out;
	}
	rc = 0;
out:
	jv_free(&body);
	return rc;
}

static const char *const fork_fields[] = { "timeout_seconds", "network",
    "cpus", "memory_mb", "labels", NULL };

/* The member called name unless it was not sent or is null. */
static const struct jv *
given(const struct jv *obj, const char *name)
{
	const struct jv	*f;

	if ((f = member(obj, name)) == NULL || f->type == JV_NULL)
		return NULL;
	return f;
}

int
body_parse_fork(const char *ctype, const void *data, size_t len,
    struct fork_request *fr, struct body_error *e)
{
	struct jv	 body;
	struct vctx	 v;
	struct loc	 l = { NULL, NULL, NULL, 0, -1 };
	const struct jv	*f, *labels = NULL, *policy = NULL;
	int		 rc;

	memset(fr, 0, sizeof(*fr));
	if ((rc = body_optional(ctype, data, len, &body, e)) != 0)
		return rc == 1 ? 0 : -1;
	v.errors = json_object_new_array();
	v.body = &body;
	if ((f = given(&body, "timeout_seconds")) != NULL) {
		l.field = "timeout_seconds";
		fr->has_timeout_seconds = v_int_ge(&v, &l, f, 1,
		    &fr->timeout_seconds) == 0;
	}
	if ((f = given(&body, "network")) != NULL) {
		l.field = "network";
		fr->has_network = v_network(&v, &l, f, &fr->network,
		    &policy) == 0;
	}
	if ((f = given(&body, "cpus")) != NULL) {
		l.field = "cpus";
		fr->has_cpus = v_float_gt0(&v, &l, f, &fr->cpus) == 0;
	}
	if ((f = given(&body, "memory_mb")) != NULL) {
		l.field = "memory_mb";
		fr->has_memory_mb = v_int_ge(&v, &l, f, 16,
		    &fr->memory_mb) == 0;
	}
	if ((f = given(&body, "labels")) != NULL && v_labels(&v, f, 0) == 0)
		labels = f;
	v_extras(&v, &body, fork_fields);
	rc = 0;
	if (json_object_array_length(v.errors) > 0) {
		set_detail(e, v.errors);
		memset(fr, 0, sizeof(*fr));
		rc = -1;
	} else {
		json_object_put(v.errors);
		if (labels_take(labels, &fr->labels, e) == -1 ||
		    network_take(policy, &fr->network_policy, e) == -1) {
			fork_request_free(fr);
			rc = -1;
		}
	}
	jv_free(&body);
	return rc;
}
