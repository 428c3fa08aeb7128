/*
 * Tool arguments: each tool describes its arguments once, as a table;
 * this file turns the table into the JSON Schema tools/list advertises and
 * checks a call's arguments against the same table, so the two never
 * disagree.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mcp.h"

static const char *
type_name(int type)
{
	switch (type) {
	case ARG_STRING:
		return "string";
	case ARG_BOOL:
		return "boolean";
	case ARG_INTEGER:
		return "integer";
	case ARG_ENV:
		return "object";
	default:
		return "number";
	}
}

/* "a string", "an integer", "an object of strings": for messages. */
static const char *
type_phrase(int type)
{
	switch (type) {
	case ARG_STRING:
		return "a string";
	case ARG_BOOL:
		return "a boolean";
	case ARG_INTEGER:
		return "an integer";
	case ARG_ENV:
		return "an object of strings";
	default:
		return "a number";
	}
}

static json_object *
arg_property(const struct mcp_arg *a)
{
	json_object	*p, *types, *def;

	if ((p = json_object_new_object()) == NULL)
		return NULL;
	if (a->flags & ARG_NULLABLE) {
		if ((types = json_object_new_array()) == NULL)
			goto fail;
		json_object_object_add(p, "type", types);
		if (json_object_array_add(types,
		    json_object_new_string(type_name(a->type))) == -1 ||
		    json_object_array_add(types,
		    json_object_new_string("null")) == -1)
			goto fail;
	} else
		json_object_object_add(p, "type",
		    json_object_new_string(type_name(a->type)));
	if (a->flags & ARG_NONEMPTY)
		json_object_object_add(p, "minLength",
		    json_object_new_int(1));
	if (a->type == ARG_ENV)
		json_object_object_add(p, "additionalProperties",
		    json_tokener_parse("{\"type\": \"string\"}"));
	json_object_object_add(p, "description",
	    json_object_new_string(a->description));
	if (a->defval != NULL) {
		if ((def = json_tokener_parse(a->defval)) == NULL &&
		    strcmp(a->defval, "null") != 0)
			goto fail;
		json_object_object_add(p, "default", def);
	}
	return p;
fail:
	json_object_put(p);
	return NULL;
}

json_object *
args_schema(const struct mcp_arg *args, size_t n)
{
	json_object	*schema, *props, *req, *p;
	size_t		 i;

	if ((schema = json_object_new_object()) == NULL)
		return NULL;
	props = json_object_new_object();
	req = json_object_new_array();
	json_object_object_add(schema, "type",
	    json_object_new_string("object"));
	json_object_object_add(schema, "properties", props);
	json_object_object_add(schema, "required", req);
	json_object_object_add(schema, "additionalProperties",
	    json_object_new_boolean(0));
	if (props == NULL || req == NULL)
		goto fail;
	for (i = 0; i < n; i++) {
		if ((p = arg_property(&args[i])) == NULL)
			goto fail;
		if (json_object_object_add(props, args[i].name, p) == -1) {
			json_object_put(p);
			goto fail;
		}
		if ((args[i].flags & ARG_REQUIRED) &&
		    json_object_array_add(req,
		    json_object_new_string(args[i].name)) == -1)
			goto fail;
	}
	return schema;
fail:
	json_object_put(schema);
	return NULL;
}

static const struct mcp_arg *
arg_find(const struct mcp_arg *args, size_t n, const char *name)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (strcmp(args[i].name, name) == 0)
			return &args[i];
	return NULL;
}

/* Strings without NUL: what a name or a path can hold. */
static int
plain_string(json_object *v)
{
	return json_object_is_type(v, json_type_string) &&
	    memchr(json_object_get_string(v), '\0',
	    json_object_get_string_len(v)) == NULL;
}

/* An environment: an object whose values are plain strings. */
static int
env_ok(json_object *v)
{
	if (!json_object_is_type(v, json_type_object))
		return 0;
	json_object_object_foreach(v, key, val) {
		(void)key;
		if (!plain_string(val))
			return 0;
	}
	return 1;
}

static int
type_ok(const struct mcp_arg *a, json_object *v)
{
	double	 d;

	switch (a->type) {
	case ARG_STRING:
		/* Only content may carry NUL: names and paths end at one. */
		return json_object_is_type(v, json_type_string) &&
		    ((a->flags & ARG_BYTES) || plain_string(v));
	case ARG_BOOL:
		return json_object_is_type(v, json_type_boolean);
	case ARG_ENV:
		return env_ok(v);
	case ARG_INTEGER:
		if (json_object_is_type(v, json_type_int))
			return 1;
		if (!json_object_is_type(v, json_type_double))
			return 0;
		/* 60.0 is an integer to JSON Schema. */
		d = json_object_get_double(v);
		return isfinite(d) && d == trunc(d) && fabs(d) < 9.0e15;
	default:
		return json_object_is_type(v, json_type_int) ||
		    json_object_is_type(v, json_type_double);
	}
}

int
args_check(const struct mcp_arg *args, size_t n, json_object *given,
    char *err, size_t errlen)
{
	const struct mcp_arg	*a;
	json_object		*v;
	size_t			 i;

	if (given != NULL) {
		json_object_object_foreach(given, key, val) {
			(void)val;
			if (arg_find(args, n, key) == NULL) {
				snprintf(err, errlen, "unknown argument '%s'",
				    key);
				return -1;
			}
		}
	}
	for (i = 0; i < n; i++) {
		a = &args[i];
		v = NULL;
		if (given == NULL ||
		    !json_object_object_get_ex(given, a->name, &v)) {
			if (a->flags & ARG_REQUIRED) {
				snprintf(err, errlen,
				    "missing required argument '%s'", a->name);
				return -1;
			}
			continue;
		}
		if (v == NULL) {
			if (a->flags & ARG_NULLABLE)
				continue;
			snprintf(err, errlen, "argument '%s' must be %s, "
			    "not null", a->name, type_phrase(a->type));
			return -1;
		}
		if (!type_ok(a, v)) {
			snprintf(err, errlen, "argument '%s' must be %s%s",
			    a->name, type_phrase(a->type), (a->type ==
			    ARG_STRING && json_object_is_type(v,
			    json_type_string)) || a->type == ARG_ENV ?
			    " without NUL characters" : "");
			return -1;
		}
		if ((a->flags & ARG_NONEMPTY) &&
		    json_object_get_string_len(v) == 0) {
			snprintf(err, errlen, "argument '%s' must not be empty",
			    a->name);
			return -1;
		}
	}
	return 0;
}

json_object *
args_get(json_object *given, const char *name)
{
	json_object	*v;

	if (given == NULL || !json_object_object_get_ex(given, name, &v))
		return NULL;
	return v;
}
