/*
 * Reading one variable of the loader's environment into the config:
 * the getters every config_*.c uses, and the error messages that quote
 * a bad value (never one that holds an API key).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "config_internal.h"
#include "format.h"

const char *
cfg_env_get(char *const *envp, const char *name)
{
	size_t	 n;

	if (envp == NULL)
		return NULL;
	n = strlen(name);
	/* The first entry wins, as with getenv() and Python's os.environ. */
	for (; *envp != NULL; envp++)
		if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=')
			return *envp + n + 1;
	return NULL;
}

int
cfg_fail(struct loader *ld, const char *msg)
{
	if (ld->errlen > 0)
		strlcpy(ld->err, msg, ld->errlen);
	return -1;
}

/* A value that contains an API key is not quoted back. */
static int
holds_api_key(struct loader *ld, const char *raw)
{
	char	**k;

	if (ld->conf->api_keys == NULL)
		return 0;
	for (k = ld->conf->api_keys; *k != NULL; k++)
		if (**k != '\0' && strstr(raw, *k) != NULL)
			return 1;
	return 0;
}

int
cfg_fail_raw(struct loader *ld, enum rawmsg kind, const char *var,
    const char *raw)
{
	char	*shown, *msg = NULL;
	int	 r = -1;

	if (holds_api_key(ld, raw))
		shown = strdup("<redacted>");
	else
		shown = format_pyrepr(raw);
	if (shown == NULL)
		return cfg_fail(ld, "out of memory");
	switch (kind) {
	case RAW_BOOL:
		r = asprintf(&msg, "%s must be a boolean, got %s", var, shown);
		break;
	case RAW_VALUE:
		r = asprintf(&msg, "invalid value for %s: %s", var, shown);
		break;
	case RAW_USER:
		r = asprintf(&msg,
		    "%s must be a numeric uid or uid:gid, got %s", var, shown);
		break;
	case RAW_DOCKER_HOST:
		r = asprintf(&msg, "%s must be unix:///PATH or "
		    "tcp://HOST:PORT, got %s", var, shown);
		break;
	case RAW_ABSPATH:
		r = asprintf(&msg, "%s must be an absolute path, got %s", var,
		    shown);
		break;
	case RAW_LOG_LEVEL:
		r = asprintf(&msg,
		    "%s must be one of warn, info, debug, got %s", var, shown);
		break;
	case RAW_SECCOMP:
		r = asprintf(&msg,
		    "%s must be one of kill, trap, log, got %s", var, shown);
		break;
	case RAW_IMAGE_MATCH:
		r = asprintf(&msg,
		    "%s must be one of glob, parts, got %s", var, shown);
		break;
	}
	free(shown);
	if (r == -1)
		return cfg_fail(ld, "out of memory");
	cfg_fail(ld, msg);
	free(msg);
	return -1;
}

int
cfg_get_str(struct loader *ld, const char *var, const char *def, char **out)
{
	const char	*raw;

	if ((raw = cfg_env_get(ld->envp, var)) == NULL)
		raw = def;
	if ((*out = strdup(raw)) == NULL)
		return cfg_fail(ld, "out of memory");
	return 0;
}

int
cfg_get_list(struct loader *ld, const char *var, const char *def, char ***out,
    size_t *count)
{
	const char	*raw;

	if ((raw = cfg_env_get(ld->envp, var)) == NULL)
		raw = def;
	if ((*out = config_parse_list(raw, count)) == NULL)
		return cfg_fail(ld, "out of memory");
	return 0;
}

int
cfg_get_bool(struct loader *ld, const char *var, int def, int *out)
{
	const char	*raw;

	if ((raw = cfg_env_get(ld->envp, var)) == NULL) {
		*out = def;
		return 0;
	}
	if (config_parse_bool(raw, out) == -1)
		return cfg_fail_raw(ld, RAW_BOOL, var, raw);
	return 0;
}

int
cfg_get_llong(struct loader *ld, const char *var, long long def, long long min,
    long long max, long long *out)
{
	const char	*raw;
	long long	 v;

	if ((raw = cfg_env_get(ld->envp, var)) == NULL) {
		*out = def;
		return 0;
	}
	if (config_parse_long(raw, &v) == -1 || v < min || v > max)
		return cfg_fail_raw(ld, RAW_VALUE, var, raw);
	*out = v;
	return 0;
}

int
cfg_get_long(struct loader *ld, const char *var, long def, long min, long max,
    long *out)
{
	long long	 v = 0;

	if (cfg_get_llong(ld, var, def, min, max, &v) == -1)
		return -1;
	*out = (long)v;
	return 0;
}

/* Floats here must be finite and in (0, max]. */
int
cfg_get_double(struct loader *ld, const char *var, double def, double max,
    double *out)
{
	const char	*raw;
	double		 v;

	if ((raw = cfg_env_get(ld->envp, var)) == NULL) {
		*out = def;
		return 0;
	}
	if (config_parse_double(raw, &v) == -1 || !isfinite(v) || v <= 0 ||
	    v > max)
		return cfg_fail_raw(ld, RAW_VALUE, var, raw);
	*out = v;
	return 0;
}

int
cfg_get_abspath(struct loader *ld, const char *var, const char *def, char **out)
{
	if (cfg_get_str(ld, var, def, out) == -1)
		return -1;
	if ((*out)[0] != '/')
		return cfg_fail_raw(ld, RAW_ABSPATH, var, *out);
	return 0;
}

/* One of words (case-insensitive, stored lower-case); "" means def. */
int
cfg_get_word(struct loader *ld, const char *var, const char *const *words,
    const char *def, enum rawmsg kind, char **out)
{
	const char	*raw, *word = NULL;
	size_t		 i;

	if ((raw = cfg_env_get(ld->envp, var)) == NULL || *raw == '\0')
		word = def;
	for (i = 0; word == NULL && words[i] != NULL; i += 2)
		if (strcasecmp(raw, words[i]) == 0)
			word = words[i + 1];
	if (word == NULL)
		return cfg_fail_raw(ld, kind, var, raw);
	if ((*out = strdup(word)) == NULL)
		return cfg_fail(ld, "out of memory");
	return 0;
}
