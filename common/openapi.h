/*
 * The OpenAPI 3.1 description of the REST API (API.md §4), built from
 * the tables in openapi.c and openapi_schema.c.  "agent-sandbox openapi"
 * prints it; apid renders it once at start-up and serves the same bytes
 * at GET /openapi.json.
 */
#ifndef AS_OPENAPI_H
#define AS_OPENAPI_H

#include <stddef.h>

#include <json-c/json.h>

/*
 * The document as text: 2-space indent, ": " and "," separators, empty
 * containers as {} and [], raw UTF-8, a trailing newline (the layout of
 * Python's json.dumps(doc, indent=2)).  malloc'd, NUL-terminated; *len
 * (if not NULL) gets its length.  NULL when out of memory.
 */
char	*openapi_document(size_t *len);

/* agent-sandbox openapi [-o FILE | --output FILE]: 0, 1, or 2 (usage). */
int	 openapi_main(int argc, char **argv);

/*
 * openapi_schema.c: one property or parameter of the tables.  type is
 * "string", "integer", "number", "boolean" or "any"; "date-time";
 * "#Name" (a reference to a component); "[T" (an array of T); "{T" (an
 * object whose values are T); "T|U" (any of T and U, as in "string|[string";
 * "T|U|V" is one anyOf of three, until a '[' or '{' takes the rest) and a
 * trailing "?" makes it nullable.
 */
#define OPENAPI_REQUIRED	0x01
#define OPENAPI_MIN		0x02	/* bound is "minimum" */
#define OPENAPI_XMIN		0x04	/* bound is "exclusiveMinimum" */
#define OPENAPI_MAXLEN		0x08	/* bound is "maxLength" */
#define OPENAPI_MAXITEMS	0x10	/* bound is "maxItems" */
#define OPENAPI_ONEOF		0x20	/* "T|U|V" is a oneOf, not an anyOf */
struct openapi_field {
	const char	*name;
	const char	*type;
	int		 flags;
	long long	 bound;
	const char	*pattern;	/* or NULL */
	const char	*enums;		/* space-separated strings, or NULL */
	const char	*def;		/* default, as JSON text, or NULL */
	const char	*desc;
};
/*
 * Building the tree.  A failed allocation anywhere is remembered (the
 * document is built once, at start-up, by one thread) and makes
 * openapi_document() fail: a NULL container or value is accepted and
 * only recorded, so builders need no error path of their own.
 */
void	 openapi_put(json_object *obj, const char *key, json_object *val);
void	 openapi_push(json_object *arr, json_object *val);
json_object *openapi_str(const char *);
/* Whether an allocation failed since the last call; resets. */
int	 openapi_failed(void);
/* The JSON Schema of one field (its name and OPENAPI_REQUIRED aside). */
json_object *openapi_field_schema(const struct openapi_field *);
/* components.schemas. */
json_object *openapi_schemas(void);

#endif /* AS_OPENAPI_H */
