/*
 * The bodies of the sandbox routes, as the reference's models: create
 * (API.md §4.2, with labels added: body_labels.c, and a policy object
 * as "network": body_network.c) and timeout (§4.6),
 * validated with body.c's machinery.
 */
#include <stdint.h>
#include <string.h>

#include "apid.h"

static const char *const create_fields[] = { "image", "cpus", "memory_mb",
    "pids_limit", "network", "read_only_rootfs", "timeout_seconds", "env",
    "labels", NULL };

int
body_parse_create(const char *ctype, const void *data, size_t len,
    struct create_request *c, struct body_error *e)
{
	struct jv	 body;
	struct vctx	 v;
	struct loc	 l = { NULL, NULL, NULL, 0, -1 };
	const struct jv	*f, *image = NULL, *env = NULL, *labels = NULL;
	const struct jv	*policy = NULL;
	int		 rc = -1;

	memset(c, 0, sizeof(*c));
	c->read_only_rootfs = 1;
	if (body_object(ctype, data, len, &body, e) == -1)
		return -1;
	v.errors = json_object_new_array();
	v.body = &body;
	if ((f = member(&body, "image")) != NULL && f->type != JV_NULL) {
		l.field = "image";
		if (v_string(&v, &l, f) == 0)
			image = f;
	}
	if ((f = member(&body, "cpus")) != NULL && f->type != JV_NULL) {
		l.field = "cpus";
		c->has_cpus = v_float_gt0(&v, &l, f, &c->cpus) == 0;
	}
	if ((f = member(&body, "memory_mb")) != NULL && f->type != JV_NULL) {
		l.field = "memory_mb";
		c->has_memory_mb = v_int_ge(&v, &l, f, 16,
		    &c->memory_mb) == 0;
	}
	if ((f = member(&body, "pids_limit")) != NULL && f->type != JV_NULL) {
		l.field = "pids_limit";
		c->has_pids_limit = v_int_ge(&v, &l, f, 8,
		    &c->pids_limit) == 0;
	}
	if ((f = member(&body, "network")) != NULL) {
		l.field = "network";
		v_network(&v, &l, f, &c->network, &policy);
	}
	if ((f = member(&body, "read_only_rootfs")) != NULL) {
		l.field = "read_only_rootfs";
		v_bool(&v, &l, f, &c->read_only_rootfs);
	}
	if ((f = member(&body, "timeout_seconds")) != NULL &&
	    f->type != JV_NULL) {
		l.field = "timeout_seconds";
		c->has_timeout_seconds = v_int_ge(&v, &l, f, 1,
		    &c->timeout_seconds) == 0;
	}
	if ((f = member(&body, "env")) != NULL && v_env(&v, f) == 0)
		env = f;
	if ((f = member(&body, "labels")) != NULL && f->type != JV_NULL &&
	    v_labels(&v, f, 0) == 0)
		labels = f;
	v_extras(&v, &body, create_fields);
	if (json_object_array_length(v.errors) > 0) {
		set_detail(e, v.errors);
		goto out;
	}
	json_object_put(v.errors);
	if (env_take(env, &c->env, e) == -1 ||
	    labels_take(labels, &c->labels, e) == -1 ||
	    network_take(policy, &c->network_policy, e) == -1)
		goto out;
	if (image != NULL) {
		if (has_nul(image)) {
			set_error(e, 400, "invalid_request",
			    "image must not contain NUL characters");
			goto out;
		}
		if (image->u.s.len > MSG_MAX_IMAGE) {
			set_error(e, 400, "invalid_request",
			    "image is longer than %d bytes", MSG_MAX_IMAGE);
			goto out;
		}
		if ((c->image = strdup(image->u.s.s)) == NULL) {
			set_error(e, 500, "internal_error", "out of memory");
			goto out;
		}
	}
	rc = 0;
out:
	if (rc == -1)
		create_request_free(c);
	jv_free(&body);
	return rc;
}

static const char *const timeout_fields[] = { "timeout_seconds", NULL };

int
body_parse_timeout(const char *ctype, const void *data, size_t len,
    int64_t *seconds, struct body_error *e)
{
	struct jv	 body;
	struct vctx	 v;
	struct loc	 l = { "timeout_seconds", NULL, NULL, 0, -1 };
	const struct jv	*f;
	int		 rc = 0;

	*seconds = 0;
	if (body_object(ctype, data, len, &body, e) == -1)
		return -1;
	v.errors = json_object_new_array();
	v.body = &body;
	if ((f = member(&body, "timeout_seconds")) == NULL)
		v_missing(&v, "timeout_seconds");
	else
		v_int_ge(&v, &l, f, 1, seconds);
	v_extras(&v, &body, timeout_fields);
	if (json_object_array_length(v.errors) > 0) {
		set_detail(e, v.errors);
		rc = -1;
	} else
		json_object_put(v.errors);
	jv_free(&body);
	return rc;
}
