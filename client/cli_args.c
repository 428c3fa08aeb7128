/*
 * Reading the CLI's operands: K=V environment pairs, numbers, IDs, and
 * the request paths built from IDs.  Range checks stay with the server,
 * which knows its limits; here only the syntax is checked.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Adds K=V to env (the last of a repeated K wins); -1 if no K. */
int
cli_parse_env(json_object *env, const char *kv)
{
	const char	*eq;
	json_object	*val;
	char		*key;

	if ((eq = strchr(kv, '=')) == NULL || eq == kv) {
		cli_warn("--env wants KEY=VALUE, not '%s'", kv);
		return -1;
	}
	if ((key = strndup(kv, eq - kv)) == NULL) {
		cli_warn("%s", strerror(errno));
		return -1;
	}
	if ((val = json_object_new_string(eq + 1)) == NULL ||
	    json_object_object_add(env, key, val) != 0) {
		json_object_put(val);
		free(key);
		cli_warn("out of memory");
		return -1;
	}
	free(key);
	return 0;
}

json_object *
cli_command(int argc, char **argv)
{
	json_object	*cmd;
	int		 i;

	if (argc == 1)
		return json_object_new_string(argv[0]);
	if ((cmd = json_object_new_array()) == NULL)
		return NULL;
	for (i = 0; i < argc; i++)
		if (json_object_array_add(cmd,
		    json_object_new_string(argv[i])) != 0) {
			json_object_put(cmd);
			return NULL;
		}
	return cmd;
}

int
cli_parse_int(const char *s, long long min, long long max, long long *out)
{
	const char	*errstr;

	*out = strtonum(s, min, max, &errstr);
	if (errstr != NULL) {
		cli_warn("number '%s' is %s", s, errstr);
		return -1;
	}
	return 0;
}

int
cli_parse_number(const char *s, double *out)
{
	char	*end;

	errno = 0;
	*out = strtod(s, &end);
	if (*s == '\0' || *end != '\0' || errno != 0 || !isfinite(*out)) {
		cli_warn("'%s' is not a number", s);
		return -1;
	}
	return 0;
}

int
cli_id(const char *verb, const char *id)
{
	if (*id == '\0' || strchr(id, '/') != NULL) {
		cli_warn("%s: '%s' is not an ID", verb, id);
		return -1;
	}
	return 0;
}

char *
cli_resource(const char *collection, const char *id, const char *suffix)
{
	char	*esc, *path;

	if ((esc = rest_escape(id)) == NULL) {
		cli_warn("out of memory");
		return NULL;
	}
	if (asprintf(&path, "/v1/%s/%s%s", collection, esc, suffix) == -1) {
		cli_warn("out of memory");
		path = NULL;
	}
	free(esc);
	return path;
}

/*
 * For verbs without options: rejects any (getopt prints which).
 * Returns the index of the first operand, or -1.
 */
int
cli_options(int argc, char **argv)
{
	static const struct option	 none[] = { { NULL, 0, NULL, 0 } };

	if (getopt_long(argc, argv, "", none, NULL) != -1)
		return -1;
	return optind;
}

/* Adds key: val to o (taking val); -1 when out of memory. */
int
cli_put(json_object *o, const char *key, json_object *val)
{
	if (o == NULL || val == NULL ||
	    json_object_object_add(o, key, val) != 0) {
		json_object_put(val);
		cli_warn("out of memory");
		return -1;
	}
	return 0;
}
