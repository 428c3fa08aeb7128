/*
 * The sandbox calls that take more than a path: the list with its label
 * filters, the labels' PATCH, and a sandbox's stats (docs/rest-api.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rest.h"
#include "rest_internal.h"

static void
rest_error_oom(struct rest_error *err)
{
	seterr(err, 0, "internal_error", "out of memory");
}

/* "/v1/sandboxes?label=F&label=G", each filter escaped. */
static char *
list_path(const char *const *filters, size_t n)
{
	char	*path, *esc, *p;
	size_t	 i, len;

	len = sizeof("/v1/sandboxes");
	for (i = 0; i < n; i++) {
		if ((esc = rest_escape(filters[i])) == NULL)
			return NULL;
		len += strlen(esc) + sizeof("&label=");
		free(esc);
	}
	if ((path = malloc(len)) == NULL)
		return NULL;
	p = path + strlcpy(path, "/v1/sandboxes", len);
	for (i = 0; i < n; i++) {
		if ((esc = rest_escape(filters[i])) == NULL) {
			free(path);
			return NULL;
		}
		strlcat(p, i == 0 ? "?label=" : "&label=", len - (p - path));
		strlcat(p, esc, len - (p - path));
		free(esc);
	}
	return path;
}

int
rest_sandbox_list(struct rest_client *rc, const char *const *filters,
    size_t n, json_object **out, struct rest_error *err)
{
	char	*path;
	int	 rc_;

	if ((path = list_path(filters, n)) == NULL) {
		rest_error_oom(err);
		return -1;
	}
	rc_ = rest_json(rc, "GET", path, NULL, out, err);
	free(path);
	return rc_;
}

static char *
sandbox_path(const char *id, const char *suffix)
{
	char	*esc, *path;

	if ((esc = rest_escape(id)) == NULL)
		return NULL;
	if (asprintf(&path, "/v1/sandboxes/%s%s", esc, suffix) == -1)
		path = NULL;
	free(esc);
	return path;
}

int
rest_sandbox_patch_labels(struct rest_client *rc, const char *id,
    json_object *labels, json_object **out, struct rest_error *err)
{
	json_object	*body;
	char		*path;
	int		 ret;

	if ((path = sandbox_path(id, "")) == NULL ||
	    (body = json_object_new_object()) == NULL) {
		free(path);
		rest_error_oom(err);
		return -1;
	}
	json_object_object_add(body, "labels", json_object_get(labels));
	ret = rest_json(rc, "PATCH", path, body, out, err);
	json_object_put(body);
	free(path);
	return ret;
}

int
rest_sandbox_stats(struct rest_client *rc, const char *id,
    json_object **out, struct rest_error *err)
{
	char	*path;
	int	 ret;

	if ((path = sandbox_path(id, "/stats")) == NULL) {
		rest_error_oom(err);
		return -1;
	}
	ret = rest_json(rc, "GET", path, NULL, out, err);
	free(path);
	return ret;
}
