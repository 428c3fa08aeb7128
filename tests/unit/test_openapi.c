/*
 * Tests for common/openapi.c: the document is valid JSON laid out as
 * promised, describes every route of API.md §4 with the security schemes
 * of §2, every reference in it resolves, "agent-sandbox openapi" prints
 * it, and docs/openapi.json is exactly what the generator writes (run
 * "make openapi" after changing the tables).
 */
#include <sys/stat.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "openapi.h"

#ifndef OPENAPI_JSON
#error "OPENAPI_JSON must name docs/openapi.json"
#endif

static const struct {
	const char	*path;
	const char	*methods;	/* space-separated */
} routes[] = {
	{ "/healthz", "get" },
	{ "/metrics", "get" },
	{ "/v1/sandboxes", "get post" },
	{ "/v1/sandboxes/{sandbox_id}", "get delete patch" },
	{ "/v1/sandboxes/{sandbox_id}/timeout", "post" },
	{ "/v1/sandboxes/{sandbox_id}/stats", "get" },
	{ "/v1/sandboxes/{sandbox_id}/network", "get put" },
	{ "/v1/sandboxes/{sandbox_id}/network/log", "get" },
	{ "/v1/sandboxes/{sandbox_id}/exec", "post" },
	{ "/v1/sandboxes/{sandbox_id}/exec/stream", "post" },
	{ "/v1/sandboxes/{sandbox_id}/processes", "get post" },
	{ "/v1/sandboxes/{sandbox_id}/processes/{process_id}", "get delete" },
	{ "/v1/sandboxes/{sandbox_id}/processes/{process_id}/output", "get" },
	{ "/v1/sandboxes/{sandbox_id}/processes/{process_id}/stdin", "post" },
	{ "/v1/sandboxes/{sandbox_id}/processes/{process_id}/signal", "post" },
	{ "/v1/sandboxes/{sandbox_id}/processes/{process_id}/resize", "post" },
	{ "/v1/sandboxes/{sandbox_id}/processes/{process_id}/attach", "get" },
	{ "/v1/sandboxes/{sandbox_id}/processes/{process_id}/attach-token",
	    "post" },
	{ "/v1/sandboxes/{sandbox_id}/files", "get put" },
	{ "/v1/sandboxes/{sandbox_id}/files/list", "get" },
	{ "/v1/sandboxes/{sandbox_id}/snapshots", "post" },
	{ "/v1/sandboxes/{sandbox_id}/rollback", "post" },
	{ "/v1/snapshots", "get" },
	{ "/v1/snapshots/{snapshot_id}", "get delete" },
	{ "/v1/snapshots/{snapshot_id}/fork", "post" },
};
#define NROUTES	(sizeof(routes) / sizeof(routes[0]))

static char *
render(size_t *len)
{
	char	*text;

	text = openapi_document(len);
	assert_non_null(text);
	assert_int_equal(strlen(text), *len);
	return text;
}

static json_object *
parse_doc(void)
{
	json_object	*doc;
	char		*text;
	size_t		 len;

	text = render(&len);
	doc = json_tokener_parse(text);
	free(text);
	assert_non_null(doc);
	return doc;
}

static json_object *
get(json_object *o, const char *key)
{
	json_object	*v = NULL;

	if (!json_object_object_get_ex(o, key, &v))
		fail_msg("no \"%s\"", key);
	return v;
}

static const char *
get_str(json_object *o, const char *key)
{
	json_object	*v = get(o, key);

	assert_true(json_object_is_type(v, json_type_string));
	return json_object_get_string(v);
}

static char *
read_file(const char *path, size_t *len)
{
	FILE	*fp;
	char	*buf;
	long	 n;

	if ((fp = fopen(path, "rb")) == NULL)
		fail_msg("cannot open %s", path);
	assert_int_equal(fseek(fp, 0, SEEK_END), 0);
	n = ftell(fp);
	assert_true(n >= 0);
	rewind(fp);
	buf = malloc(n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, n, fp), (size_t)n);
	buf[n] = '\0';
	fclose(fp);
	*len = n;
	return buf;
}

static void
test_layout(void **state)
{
	char	*text;
	size_t	 len;

	text = render(&len);
	assert_true(len > 1000);
	assert_memory_equal(text, "{\n  \"openapi\": \"3.1.0\",\n", 24);
	assert_int_equal(text[len - 1], '\n');
	assert_int_equal(text[len - 2], '}');
	/* No tabs, no escaped slashes, no "{ }" from json-c's printer. */
	assert_null(strchr(text, '\t'));
	assert_null(strstr(text, "\\/"));
	assert_null(strstr(text, "{\n  }"));
	assert_null(strstr(text, "[\n  ]"));
	/* Rendering is deterministic. */
	{
		char	*again;
		size_t	 len2;

		again = render(&len2);
		assert_int_equal(len, len2);
		assert_memory_equal(text, again, len);
		free(again);
	}
	free(text);
}

static void
test_committed_copy(void **state)
{
	char	*text, *file;
	size_t	 len, flen;

	text = render(&len);
	file = read_file(OPENAPI_JSON, &flen);
	if (flen != len || memcmp(text, file, len) != 0)
		fail_msg("docs/openapi.json is out of date: run make openapi");
	free(file);
	free(text);
}

static void
test_info(void **state)
{
	json_object	*doc, *info, *lic;

	doc = parse_doc();
	assert_string_equal(get_str(doc, "openapi"), "3.1.0");
	info = get(doc, "info");
	assert_string_equal(get_str(info, "title"), "agent-sandbox");
	assert_string_equal(get_str(info, "version"), PACKAGE_VERSION);
	lic = get(info, "license");
	assert_string_equal(get_str(lic, "name"), "Apache-2.0");
	assert_string_equal(get_str(lic, "identifier"), "Apache-2.0");
	json_object_put(doc);
}

static void
test_security_schemes(void **state)
{
	json_object	*doc, *schemes, *s;

	doc = parse_doc();
	schemes = get(get(doc, "components"), "securitySchemes");
	s = get(schemes, "HTTPBearer");
	assert_string_equal(get_str(s, "type"), "http");
	assert_string_equal(get_str(s, "scheme"), "bearer");
	s = get(schemes, "APIKeyHeader");
	assert_string_equal(get_str(s, "type"), "apiKey");
	assert_string_equal(get_str(s, "in"), "header");
	assert_string_equal(get_str(s, "name"), "X-API-Key");
	json_object_put(doc);
}

static void
check_security(json_object *op, int v1)
{
	json_object	*sec = NULL;

	if (!v1) {
		assert_false(json_object_object_get_ex(op, "security", &sec));
		return;
	}
	sec = get(op, "security");
	/* Either scheme alone: two requirement objects. */
	assert_int_equal(json_object_array_length(sec), 2);
	get(json_object_array_get_idx(sec, 0), "HTTPBearer");
	get(json_object_array_get_idx(sec, 1), "APIKeyHeader");
	get(get(op, "responses"), "401");
}

static void
test_routes(void **state)
{
	json_object	*doc, *paths, *item, *op;
	char		 methods[32], *m, *save;
	size_t		 i, nops = 0, nmethods;
	int		 v1;

	doc = parse_doc();
	paths = get(doc, "paths");
	assert_int_equal(json_object_object_length(paths), NROUTES);
	for (i = 0; i < NROUTES; i++) {
		item = get(paths, routes[i].path);
		v1 = strncmp(routes[i].path, "/v1/", 4) == 0;
		strlcpy(methods, routes[i].methods, sizeof(methods));
		nmethods = 0;
		for (m = strtok_r(methods, " ", &save); m != NULL;
		    m = strtok_r(NULL, " ", &save)) {
			nmethods++;
			op = get(item, m);
			get_str(op, "operationId");
			get_str(op, "summary");
			get(op, "responses");
			check_security(op, v1);
			nops++;
		}
		assert_int_equal(json_object_object_length(item), nmethods);
	}
	/*
	 * /healthz, /metrics, the 16 operations under /v1 (API.md
	 * §4.2-§4.17), the 10 of processes, the labels' PATCH, the
	 * stats and the 3 of the network (docs/rest-api.md).
	 */
	assert_int_equal(nops, 33);
	json_object_put(doc);
}

static json_object *
operation(json_object *doc, const char *path, const char *method)
{
	return get(get(get(doc, "paths"), path), method);
}

static json_object *
response_schema(json_object *op, const char *status, const char *media)
{
	return get(get(get(get(get(op, "responses"), status), "content"),
	    media), "schema");
}

static void
test_contents(void **state)
{
	json_object	*doc, *op, *s, *params, *p;
	size_t		 i;
	int		 seen_mode = 0;

	doc = parse_doc();
	op = operation(doc, "/v1/sandboxes/{sandbox_id}/exec/stream", "post");
	s = response_schema(op, "200", "application/x-ndjson");
	assert_string_equal(get_str(s, "$ref"),
	    "#/components/schemas/ExecEvent");
	op = operation(doc, "/v1/sandboxes/{sandbox_id}/files", "get");
	s = response_schema(op, "200", "application/octet-stream");
	assert_string_equal(get_str(s, "format"), "binary");
	op = operation(doc, "/v1/sandboxes/{sandbox_id}/files", "put");
	get(get(get(op, "requestBody"), "content"),
	    "application/octet-stream");
	params = get(op, "parameters");
	for (i = 0; i < json_object_array_length(params); i++) {
		p = json_object_array_get_idx(params, i);
		if (strcmp(get_str(p, "name"), "mode") != 0)
			continue;
		assert_string_equal(get_str(p, "in"), "query");
		assert_string_equal(get_str(get(p, "schema"), "pattern"),
		    "^[0-7]{3,4}$");
		seen_mode = 1;
	}
	assert_true(seen_mode);
	op = operation(doc, "/v1/sandboxes", "post");
	s = response_schema(op, "422", "application/json");
	assert_string_equal(get_str(s, "$ref"),
	    "#/components/schemas/HTTPValidationError");
	s = response_schema(op, "403", "application/json");
	assert_string_equal(get_str(s, "$ref"),
	    "#/components/schemas/ErrorResponse");
	get(get(op, "responses"), "201");
	get(get(op, "responses"), "429");
	op = operation(doc, "/v1/sandboxes/{sandbox_id}", "delete");
	assert_false(json_object_object_get_ex(get(get(op, "responses"),
	    "204"), "content", NULL));
	op = operation(doc, "/v1/sandboxes/{sandbox_id}/processes/{process_id}"
	    "/output", "get");
	s = response_schema(op, "200", "application/x-ndjson");
	assert_string_equal(get_str(s, "$ref"),
	    "#/components/schemas/ProcessEvent");
	op = operation(doc, "/v1/sandboxes/{sandbox_id}/processes/{process_id}"
	    "/attach", "get");
	get(get(op, "responses"), "101");
	get(get(op, "responses"), "426");
	json_object_put(doc);
}

static void
test_constraints(void **state)
{
	json_object	*doc, *schemas, *props;

	doc = parse_doc();
	schemas = get(get(doc, "components"), "schemas");
	props = get(get(schemas, "CreateSandboxRequest"), "properties");
	assert_int_equal(json_object_get_int(get(get(props, "cpus"),
	    "exclusiveMinimum")), 0);
	assert_int_equal(json_object_get_int(get(get(props, "memory_mb"),
	    "minimum")), 16);
	assert_int_equal(json_object_get_int(get(get(props, "pids_limit"),
	    "minimum")), 8);
	assert_int_equal(json_object_get_int(get(get(props,
	    "timeout_seconds"), "minimum")), 1);
	assert_false(json_object_get_boolean(get(get(schemas,
	    "CreateSandboxRequest"), "additionalProperties")));
	props = get(get(schemas, "SnapshotRequest"), "properties");
	assert_int_equal(json_object_get_int(get(get(props, "name"),
	    "maxLength")), 128);
	props = get(get(schemas, "ExecRequest"), "properties");
	assert_int_equal(json_object_get_int(get(get(props,
	    "timeout_seconds"), "exclusiveMinimum")), 0);
	props = get(get(schemas, "TimeoutRequest"), "properties");
	assert_int_equal(json_object_get_int(get(get(props,
	    "timeout_seconds"), "minimum")), 1);
	/* The SDK builds ExecResult(**data): exactly six keys. */
	props = get(get(schemas, "ExecResult"), "properties");
	assert_int_equal(json_object_object_length(props), 6);
	props = get(get(schemas, "FileInfo"), "properties");
	assert_int_equal(json_object_object_length(props), 5);
	/* "network": a boolean or a policy; the fork's may be null too. */
	props = get(get(schemas, "CreateSandboxRequest"), "properties");
	assert_int_equal(json_object_array_length(get(get(props, "network"),
	    "oneOf")), 2);
	props = get(get(schemas, "ForkRequest"), "properties");
	assert_int_equal(json_object_array_length(get(get(props, "network"),
	    "oneOf")), 3);
	props = get(get(schemas, "NetworkPolicy"), "properties");
	assert_int_equal(json_object_get_int(get(get(props, "allow"),
	    "maxItems")), 256);
	assert_int_equal(json_object_array_length(get(get(props, "mode"),
	    "enum")), 4);
	/* As egress_log_to_json() writes an entry: eight keys. */
	props = get(get(schemas, "NetworkLogEntry"), "properties");
	assert_int_equal(json_object_object_length(props), 8);
	json_object_put(doc);
}

/* Every "$ref" names a schema of components.schemas. */
static void
check_refs(json_object *o, json_object *schemas, int *count)
{
	struct json_object_iterator	 it, end;
	const char			*prefix = "#/components/schemas/";
	const char			*ref;
	size_t				 i;

	if (json_object_is_type(o, json_type_array)) {
		for (i = 0; i < json_object_array_length(o); i++)
			check_refs(json_object_array_get_idx(o, i), schemas,
			    count);
		return;
	}
	if (!json_object_is_type(o, json_type_object))
		return;
	it = json_object_iter_begin(o);
	end = json_object_iter_end(o);
	for (; !json_object_iter_equal(&it, &end);
	    json_object_iter_next(&it)) {
		if (strcmp(json_object_iter_peek_name(&it), "$ref") == 0) {
			ref = json_object_get_string(
			    json_object_iter_peek_value(&it));
			assert_memory_equal(ref, prefix, strlen(prefix));
			get(schemas, ref + strlen(prefix));
			(*count)++;
		} else
			check_refs(json_object_iter_peek_value(&it), schemas,
			    count);
	}
}

static void
test_refs_resolve(void **state)
{
	json_object	*doc;
	int		 count = 0;

	doc = parse_doc();
	check_refs(doc, get(get(doc, "components"), "schemas"), &count);
	assert_true(count > 50);
	json_object_put(doc);
}

/* openapi_main() with argv[0] "openapi" and up to two arguments. */
static int
run_cli(const char *a1, const char *a2)
{
	char	 w0[] = "openapi", w1[256] = "", w2[256] = "";
	char	*argv[4] = { w0, w1, w2, NULL };
	int	 argc = 1;

	if (a1 != NULL) {
		strlcpy(w1, a1, sizeof(w1));
		argc++;
	}
	if (a2 != NULL) {
		strlcpy(w2, a2, sizeof(w2));
		argc++;
	}
	argv[argc] = NULL;
	return openapi_main(argc, argv);
}

static void
test_cli(void **state)
{
	char	 path[] = "/tmp/test_openapi.XXXXXX";
	char	*text, *file;
	size_t	 len, flen;
	int	 fd;

	assert_true((fd = mkstemp(path)) != -1);
	close(fd);
	text = render(&len);
	assert_int_equal(run_cli("-o", path), 0);
	file = read_file(path, &flen);
	assert_int_equal(flen, len);
	assert_memory_equal(file, text, len);
	free(file);
	assert_int_equal(truncate(path, 0), 0);
	assert_int_equal(run_cli("--output", path), 0);
	file = read_file(path, &flen);
	assert_int_equal(flen, len);
	free(file);
	unlink(path);
	assert_int_equal(run_cli("extra", NULL), 2);
	assert_int_equal(run_cli("--bogus", NULL), 2);
	assert_int_equal(run_cli("-o", ""), 2);
	assert_int_equal(run_cli("-o", NULL), 2);
	free(text);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_committed_copy),
		cmocka_unit_test(test_info),
		cmocka_unit_test(test_security_schemes),
		cmocka_unit_test(test_routes),
		cmocka_unit_test(test_contents),
		cmocka_unit_test(test_constraints),
		cmocka_unit_test(test_refs_resolve),
		cmocka_unit_test(test_cli),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
