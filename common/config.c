/*
 * Configuration from AGENT_SANDBOX_* environment variables (API.md §10).
 * Values are parsed the way the Python reference parses them (str.strip,
 * int(), float()), every variable is read in table order so the first bad
 * one is reported, and the cross-field checks follow in the order of §10.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "format.h"
#include "ids.h"
#include "sandbox_msg.h"

#ifndef LIBEXECDIR
#define LIBEXECDIR	"/usr/local/libexec/agent-sandbox"
#endif

#define API_KEY_MIN_CHARS	16
#define DOCKER_SOCKET_DEFAULT	"/var/run/docker.sock"

/* Bounds of our own: beyond them a setting makes no sense (see below). */
#define INT_SETTING_MAX		INT_MAX
#define BYTES_SETTING_MAX	(1LL << 53)
#define FLOAT_SETTING_MAX	1e6
/*
 * A process's ring: at least two of the largest events, at most what
 * managerd can hold for a few of them; and how many processes at most:
 * dockerd-proxy follows no more than that many at once, each with a
 * Docker request and its socket (PROXY_PROCESSES_MAX, dockerd-proxy/proxy.h).
 */
#define PROCESS_OUTPUT_MIN	(64 * 1024)
#define PROCESS_OUTPUT_MAX	(256LL * 1024 * 1024)
#define PROCESSES_MAX		256
/* A day; and what one process can hold with its descriptor reserve. */
#define HTTP_TIMEOUT_MAX	86400.0
#define HTTP_CONNECTIONS_MAX	65536

struct loader {
	char *const	*envp;
	struct config	*conf;
	char		*err;
	size_t		 errlen;
};

/* Messages that quote the raw value. */
enum rawmsg {
	RAW_BOOL,
	RAW_VALUE,
	RAW_USER,
	RAW_DOCKER_HOST,
	RAW_ABSPATH,
	RAW_LOG_LEVEL,
	RAW_SECCOMP,
	RAW_IMAGE_MATCH,
};

/*
 * UTF-8 encodings of the non-ASCII characters for which Python's
 * str.isspace() is true; str.strip() and int() strip those too.
 */
static const char *const uniwhite[] = {
	"\xc2\x85", "\xc2\xa0", "\xe1\x9a\x80",
	"\xe2\x80\x80", "\xe2\x80\x81", "\xe2\x80\x82", "\xe2\x80\x83",
	"\xe2\x80\x84", "\xe2\x80\x85", "\xe2\x80\x86", "\xe2\x80\x87",
	"\xe2\x80\x88", "\xe2\x80\x89", "\xe2\x80\x8a",
	"\xe2\x80\xa8", "\xe2\x80\xa9", "\xe2\x80\xaf", "\xe2\x81\x9f",
	"\xe3\x80\x80",
};

/*
 * str.strip() also strips U+001C..U+001F; int() and float() strip only
 * C's isspace() set among ASCII (CPython's Py_ISSPACE).
 */
enum white {
	WHITE_STRIP,
	WHITE_NUMBER,
};

static int
ascii_white(unsigned char c, enum white kind)
{
	if (c == ' ' || (c >= 0x09 && c <= 0x0d))
		return 1;
	return kind == WHITE_STRIP && c >= 0x1c && c <= 0x1f;
}

static int
ascii_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

/* Length of the whitespace character that starts s[0..n), or 0. */
static size_t
white_at(const char *s, size_t n, enum white kind)
{
	size_t	 i, k;

	if (n > 0 && ascii_white((unsigned char)s[0], kind))
		return 1;
	for (i = 0; i < sizeof(uniwhite) / sizeof(uniwhite[0]); i++) {
		k = strlen(uniwhite[i]);
		if (n >= k && memcmp(s, uniwhite[i], k) == 0)
			return k;
	}
	return 0;
}

/*
 * Length of the whitespace character that ends s[0..n), or 0.  A complete
 * multi-byte sequence at the end is never part of an earlier character,
 * since lead bytes are never continuation bytes.
 */
static size_t
white_before(const char *s, size_t n, enum white kind)
{
	size_t	 i, k;

	if (n > 0 && ascii_white((unsigned char)s[n - 1], kind))
		return 1;
	for (i = 0; i < sizeof(uniwhite) / sizeof(uniwhite[0]); i++) {
		k = strlen(uniwhite[i]);
		if (n >= k && memcmp(s + n - k, uniwhite[i], k) == 0)
			return k;
	}
	return 0;
}

/* Python's stripping: s[*start..*end) is what remains of s[0..n). */
static void
strip_span(const char *s, size_t n, enum white kind, size_t *start,
    size_t *end)
{
	size_t	 a = 0, b = n, k;

	while (a < b && (k = white_at(s + a, b - a, kind)) > 0)
		a += k;
	while (b > a && (k = white_before(s + a, b - a, kind)) > 0)
		b -= k;
	*start = a;
	*end = b;
}

int
config_parse_bool(const char *raw, int *out)
{
	static const char *const truthy[] = { "1", "true", "yes", "on" };
	static const char *const falsy[] = { "0", "false", "no", "off", "" };
	char	 word[8];
	size_t	 a, b, i;

	strip_span(raw, strlen(raw), WHITE_STRIP, &a, &b);
	if (b - a >= sizeof(word))
		return -1;
	for (i = 0; a + i < b; i++) {
		word[i] = raw[a + i];
		if (word[i] >= 'A' && word[i] <= 'Z')
			word[i] += 'a' - 'A';
	}
	word[i] = '\0';
	for (i = 0; i < sizeof(truthy) / sizeof(truthy[0]); i++)
		if (strcmp(word, truthy[i]) == 0) {
			*out = 1;
			return 0;
		}
	for (i = 0; i < sizeof(falsy) / sizeof(falsy[0]); i++)
		if (strcmp(word, falsy[i]) == 0) {
			*out = 0;
			return 0;
		}
	return -1;
}

int
config_parse_long(const char *raw, long long *out)
{
	unsigned long long	 v = 0, lim;
	size_t			 a, b, i;
	unsigned int		 d;
	int			 neg = 0;

	strip_span(raw, strlen(raw), WHITE_NUMBER, &a, &b);
	i = a;
	if (i < b && (raw[i] == '+' || raw[i] == '-'))
		neg = raw[i++] == '-';
	if (i == b || !ascii_digit(raw[i]))
		return -1;
	lim = neg ? (unsigned long long)LLONG_MAX + 1 : LLONG_MAX;
	for (; i < b; i++) {
		/* One '_' between two digits, as in a Python literal. */
		if (raw[i] == '_' && i + 1 < b && ascii_digit(raw[i + 1]))
			continue;
		if (!ascii_digit(raw[i]))
			return -1;
		d = raw[i] - '0';
		if (v > (lim - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	if (neg)
		*out = v == lim ? LLONG_MIN : -(long long)v;
	else
		*out = (long long)v;
	return 0;
}

/* Digits with single '_' between them; returns how many digits. */
static size_t
scan_digitpart(const char *s, size_t *i, size_t end)
{
	size_t	 n = 0;

	while (*i < end) {
		if (ascii_digit(s[*i])) {
			n++;
			(*i)++;
		} else if (s[*i] == '_' && n > 0 && *i + 1 < end &&
		    ascii_digit(s[*i + 1]))
			(*i)++;
		else
			break;
	}
	return n;
}

static int
word_is(const char *s, size_t n, const char *word)
{
	return strlen(word) == n && strncasecmp(s, word, n) == 0;
}

int
config_parse_double(const char *raw, double *out)
{
	size_t	 a, b, i, o, intd, fracd = 0;
	char	*clean;
	int	 neg = 0;

	strip_span(raw, strlen(raw), WHITE_NUMBER, &a, &b);
	i = a;
	if (i < b && (raw[i] == '+' || raw[i] == '-'))
		neg = raw[i++] == '-';
	if (word_is(raw + i, b - i, "inf") ||
	    word_is(raw + i, b - i, "infinity")) {
		*out = neg ? -INFINITY : INFINITY;
		return 0;
	}
	if (word_is(raw + i, b - i, "nan")) {
		*out = neg ? -NAN : NAN;
		return 0;
	}

	/* Python's float grammar: no hex, no "nan(...)", unlike strtod. */
	intd = scan_digitpart(raw, &i, b);
	if (i < b && raw[i] == '.') {
		i++;
		fracd = scan_digitpart(raw, &i, b);
	}
	if (intd == 0 && fracd == 0)
		return -1;
	if (i < b && (raw[i] == 'e' || raw[i] == 'E')) {
		i++;
		if (i < b && (raw[i] == '+' || raw[i] == '-'))
			i++;
		if (scan_digitpart(raw, &i, b) == 0)
			return -1;
	}
	if (i != b)
		return -1;

	if ((clean = malloc(b - a + 1)) == NULL)
		return -1;
	for (i = a, o = 0; i < b; i++)
		if (raw[i] != '_')
			clean[o++] = raw[i];
	clean[o] = '\0';
	/* Overflow gives inf and underflow 0, as in Python. */
	*out = strtod(clean, NULL);
	free(clean);
	return 0;
}

void
config_list_free(char **list)
{
	size_t	 i;

	if (list == NULL)
		return;
	/* Lists may hold API keys: wipe every item. */
	for (i = 0; list[i] != NULL; i++)
		freezero(list[i], strlen(list[i]));
	free(list);
}

char **
config_parse_list(const char *raw, size_t *count)
{
	char		**list;
	const char	 *item, *comma;
	size_t		  max = 1, n = 0, len, a, b;

	for (item = raw; (item = strchr(item, ',')) != NULL; item++)
		max++;
	if ((list = reallocarray(NULL, max + 1, sizeof(*list))) == NULL)
		return NULL;
	list[0] = NULL;
	for (item = raw;; item = comma + 1) {
		comma = strchr(item, ',');
		len = comma != NULL ? (size_t)(comma - item) : strlen(item);
		strip_span(item, len, WHITE_STRIP, &a, &b);
		if (b > a) {
			if ((list[n] = strndup(item + a, b - a)) == NULL) {
				config_list_free(list);
				return NULL;
			}
			list[++n] = NULL;
		}
		if (comma == NULL)
			break;
	}
	*count = n;
	return list;
}

static const char *
env_get(char *const *envp, const char *name)
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

static int
fail(struct loader *ld, const char *msg)
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

static int
fail_raw(struct loader *ld, enum rawmsg kind, const char *var,
    const char *raw)
{
	char	*shown, *msg = NULL;
	int	 r = -1;

	if (holds_api_key(ld, raw))
		shown = strdup("<redacted>");
	else
		shown = format_pyrepr(raw);
	if (shown == NULL)
		return fail(ld, "out of memory");
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
		r = asprintf(&msg,
		    "%s must be a unix:// socket path, got %s", var, shown);
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
		return fail(ld, "out of memory");
	fail(ld, msg);
	free(msg);
	return -1;
}

static int
get_str(struct loader *ld, const char *var, const char *def, char **out)
{
	const char	*raw;

	if ((raw = env_get(ld->envp, var)) == NULL)
		raw = def;
	if ((*out = strdup(raw)) == NULL)
		return fail(ld, "out of memory");
	return 0;
}

static int
get_list(struct loader *ld, const char *var, const char *def, char ***out,
    size_t *count)
{
	const char	*raw;

	if ((raw = env_get(ld->envp, var)) == NULL)
		raw = def;
	if ((*out = config_parse_list(raw, count)) == NULL)
		return fail(ld, "out of memory");
	return 0;
}

static int
get_bool(struct loader *ld, const char *var, int def, int *out)
{
	const char	*raw;

	if ((raw = env_get(ld->envp, var)) == NULL) {
		*out = def;
		return 0;
	}
	if (config_parse_bool(raw, out) == -1)
		return fail_raw(ld, RAW_BOOL, var, raw);
	return 0;
}

static int
get_llong(struct loader *ld, const char *var, long long def, long long min,
    long long max, long long *out)
{
	const char	*raw;
	long long	 v;

	if ((raw = env_get(ld->envp, var)) == NULL) {
		*out = def;
		return 0;
	}
	if (config_parse_long(raw, &v) == -1 || v < min || v > max)
		return fail_raw(ld, RAW_VALUE, var, raw);
	*out = v;
	return 0;
}

static int
get_long(struct loader *ld, const char *var, long def, long min, long max,
    long *out)
{
	long long	 v = 0;

	if (get_llong(ld, var, def, min, max, &v) == -1)
		return -1;
	*out = (long)v;
	return 0;
}

/* Floats here must be finite and in (0, max]. */
static int
get_double(struct loader *ld, const char *var, double def, double max,
    double *out)
{
	const char	*raw;
	double		 v;

	if ((raw = env_get(ld->envp, var)) == NULL) {
		*out = def;
		return 0;
	}
	if (config_parse_double(raw, &v) == -1 || !isfinite(v) || v <= 0 ||
	    v > max)
		return fail_raw(ld, RAW_VALUE, var, raw);
	*out = v;
	return 0;
}

/* A uid or gid: decimal digits only, below (uid_t)-1. */
static int
parse_id(const char *s, size_t n, unsigned int *out)
{
	unsigned long long	 v = 0;
	size_t			 i;

	if (n == 0 || n > 10)
		return -1;
	for (i = 0; i < n; i++) {
		if (!ascii_digit(s[i]))
			return -1;
		v = v * 10 + (unsigned int)(s[i] - '0');
	}
	if (v >= UINT32_MAX)
		return -1;
	*out = (unsigned int)v;
	return 0;
}

static int
get_sandbox_user(struct loader *ld)
{
	const char	*var = "AGENT_SANDBOX_SANDBOX_USER", *raw, *colon;
	struct config	*conf = ld->conf;

	if (get_str(ld, var, "1000:1000", &conf->sandbox_user) == -1)
		return -1;
	raw = conf->sandbox_user;
	if ((colon = strchr(raw, ':')) == NULL) {
		if (parse_id(raw, strlen(raw), &conf->sandbox_uid) == -1)
			return fail_raw(ld, RAW_USER, var, raw);
		conf->sandbox_gid = conf->sandbox_uid;
		return 0;
	}
	if (parse_id(raw, colon - raw, &conf->sandbox_uid) == -1 ||
	    parse_id(colon + 1, strlen(colon + 1), &conf->sandbox_gid) == -1)
		return fail_raw(ld, RAW_USER, var, raw);
	return 0;
}

/*
 * Not the reference's check: sandboxes never run as root, and dockerd-proxy
 * refuses to start with such a user (a gid of 0 reaches root-group files
 * in an image as surely as a uid of 0 reaches root's).
 */
static int
check_sandbox_user(struct loader *ld)
{
	if (ld->conf->sandbox_uid == 0 || ld->conf->sandbox_gid == 0)
		return fail(ld, "AGENT_SANDBOX_SANDBOX_USER must not be root "
		    "(a uid or gid of 0)");
	return 0;
}

static int
get_docker_socket(struct loader *ld)
{
	struct sockaddr_un	 sun;
	const char		*raw, *path;

	raw = env_get(ld->envp, "DOCKER_HOST");
	if (raw == NULL || *raw == '\0')
		path = DOCKER_SOCKET_DEFAULT;
	else if (strncmp(raw, "unix://", 7) == 0 && raw[7] == '/' &&
	    strlen(raw + 7) < sizeof(sun.sun_path))
		path = raw + 7;
	else
		return fail_raw(ld, RAW_DOCKER_HOST, "DOCKER_HOST", raw);
	if ((ld->conf->docker_socket = strdup(path)) == NULL)
		return fail(ld, "out of memory");
	return 0;
}

static int
get_abspath(struct loader *ld, const char *var, const char *def, char **out)
{
	if (get_str(ld, var, def, out) == -1)
		return -1;
	if ((*out)[0] != '/')
		return fail_raw(ld, RAW_ABSPATH, var, *out);
	return 0;
}

/* One of words (case-insensitive, stored lower-case); "" means def. */
static int
get_word(struct loader *ld, const char *var, const char *const *words,
    const char *def, enum rawmsg kind, char **out)
{
	const char	*raw, *word = NULL;
	size_t		 i;

	if ((raw = env_get(ld->envp, var)) == NULL || *raw == '\0')
		word = def;
	for (i = 0; word == NULL && words[i] != NULL; i += 2)
		if (strcasecmp(raw, words[i]) == 0)
			word = words[i + 1];
	if (word == NULL)
		return fail_raw(ld, kind, var, raw);
	if ((*out = strdup(word)) == NULL)
		return fail(ld, "out of memory");
	return 0;
}

/* Every variable, in the order of the table in API.md §10, then ours. */
static int
load_vars(struct loader *ld)
{
	static const char *const levels[] = { "warn", "warn",
	    "warning", "warn", "info", "info", "debug", "debug", NULL };
	static const char *const modes[] = { "kill", "kill", "trap", "trap",
	    "log", "log", NULL };
	static const char *const matches[] = { "glob", "glob", "parts",
	    "parts", NULL };
	struct config	*c = ld->conf;
	long long	 port;

	if (get_list(ld, "AGENT_SANDBOX_API_KEYS", "", &c->api_keys,
	    &c->api_keys_count) == -1 ||
	    get_bool(ld, "AGENT_SANDBOX_INSECURE_NO_AUTH", 0,
	    &c->insecure_no_auth) == -1 ||
	    get_str(ld, "AGENT_SANDBOX_HOST", "127.0.0.1", &c->host) == -1 ||
	    get_llong(ld, "AGENT_SANDBOX_PORT", 8080, 0, 65535, &port) == -1 ||
	    get_str(ld, "AGENT_SANDBOX_DATA_DIR", "./data",
	    &c->data_dir) == -1 ||
	    get_str(ld, "AGENT_SANDBOX_DEFAULT_IMAGE", "python:3.12-slim",
	    &c->default_image) == -1 ||
	    get_list(ld, "AGENT_SANDBOX_ALLOWED_IMAGES", "*",
	    &c->allowed_images, &c->allowed_images_count) == -1 ||
	    get_sandbox_user(ld) == -1 || check_sandbox_user(ld) == -1 ||
	    get_str(ld, "AGENT_SANDBOX_DOCKER_RUNTIME", "",
	    &c->docker_runtime) == -1 ||
	    get_str(ld, "AGENT_SANDBOX_NETWORK_NAME", "agent-sandbox-net",
	    &c->network_name) == -1 ||
	    get_bool(ld, "AGENT_SANDBOX_ALLOW_NETWORK", 1,
	    &c->allow_network) == -1 ||
	    get_bool(ld, "AGENT_SANDBOX_ALLOW_RUNTIME_ENV", 0,
	    &c->allow_runtime_env) == -1)
		return -1;
	c->port = (int)port;

	/*
	 * The reference takes any integer; we also refuse zero and negative
	 * limits (a 0 MiB limit means "unlimited" to Docker) and values too
	 * large to compute with.  max_sandboxes keeps the reference's own
	 * check and message.
	 */
	if (get_long(ld, "AGENT_SANDBOX_MAX_SANDBOXES", 20, LONG_MIN,
	    INT_SETTING_MAX, &c->max_sandboxes) == -1 ||
	    get_long(ld, "AGENT_SANDBOX_DEFAULT_TIMEOUT_SECONDS", 900, 1,
	    INT_SETTING_MAX, &c->default_timeout_seconds) == -1 ||
	    get_long(ld, "AGENT_SANDBOX_MAX_TIMEOUT_SECONDS", 86400, 1,
	    INT_SETTING_MAX, &c->max_timeout_seconds) == -1 ||
	    get_double(ld, "AGENT_SANDBOX_DEFAULT_CPUS", 1.0,
	    FLOAT_SETTING_MAX, &c->default_cpus) == -1 ||
	    get_double(ld, "AGENT_SANDBOX_MAX_CPUS", 4.0, FLOAT_SETTING_MAX,
	    &c->max_cpus) == -1 ||
	    get_long(ld, "AGENT_SANDBOX_DEFAULT_MEMORY_MB", 512, 1,
	    INT_SETTING_MAX, &c->default_memory_mb) == -1 ||
	    get_long(ld, "AGENT_SANDBOX_MAX_MEMORY_MB", 4096, 1,
	    INT_SETTING_MAX, &c->max_memory_mb) == -1 ||
	    get_long(ld, "AGENT_SANDBOX_DEFAULT_PIDS_LIMIT", 256, 1,
	    INT_SETTING_MAX, &c->default_pids_limit) == -1 ||
	    get_long(ld, "AGENT_SANDBOX_MAX_PIDS_LIMIT", 4096, 1,
	    INT_SETTING_MAX, &c->max_pids_limit) == -1 ||
	    get_long(ld, "AGENT_SANDBOX_TMP_SIZE_MB", 256, 1,
	    CONFIG_TMP_SIZE_MB_MAX, &c->tmp_size_mb) == -1 ||
	    get_long(ld, "AGENT_SANDBOX_DEFAULT_EXEC_TIMEOUT_SECONDS", 60, 1,
	    INT_SETTING_MAX, &c->default_exec_timeout_seconds) == -1 ||
	    get_long(ld, "AGENT_SANDBOX_MAX_EXEC_TIMEOUT_SECONDS", 3600, 1,
	    INT_SETTING_MAX, &c->max_exec_timeout_seconds) == -1 ||
	    get_llong(ld, "AGENT_SANDBOX_MAX_EXEC_OUTPUT_BYTES", 10485760, 1,
	    BYTES_SETTING_MAX, &c->max_exec_output_bytes) == -1 ||
	    get_llong(ld, "AGENT_SANDBOX_MAX_FILE_BYTES", 52428800, 1,
	    BYTES_SETTING_MAX, &c->max_file_bytes) == -1 ||
	    get_llong(ld, "AGENT_SANDBOX_MAX_SNAPSHOT_BYTES", 1073741824, 1,
	    BYTES_SETTING_MAX, &c->max_snapshot_bytes) == -1 ||
	    get_double(ld, "AGENT_SANDBOX_REAP_INTERVAL_SECONDS", 10.0,
	    FLOAT_SETTING_MAX, &c->reap_interval_seconds) == -1)
		return -1;

	if (get_docker_socket(ld) == -1 ||
	    get_str(ld, "AGENT_SANDBOX_PRIVSEP_USER", "nobody",
	    &c->privsep_user) == -1)
		return -1;
	if (c->privsep_user[0] == '\0')
		return fail_raw(ld, RAW_VALUE, "AGENT_SANDBOX_PRIVSEP_USER",
		    "");
	if (get_str(ld, "AGENT_SANDBOX_MANAGERD_USER", "agent-sandbox",
	    &c->managerd_user) == -1)
		return -1;
	if (c->managerd_user[0] == '\0')
		return fail_raw(ld, RAW_VALUE, "AGENT_SANDBOX_MANAGERD_USER",
		    "");
	if (get_abspath(ld, "AGENT_SANDBOX_CHROOT_DIR", "/var/empty",
	    &c->chroot_dir) == -1 ||
	    get_abspath(ld, "AGENT_SANDBOX_LIBEXEC_DIR", LIBEXECDIR,
	    &c->libexec_dir) == -1 ||
	    get_word(ld, "AGENT_SANDBOX_LOG_LEVEL", levels, "info",
	    RAW_LOG_LEVEL, &c->log_level) == -1 ||
	    get_word(ld, "AGENT_SANDBOX_SECCOMP", modes, "kill", RAW_SECCOMP,
	    &c->seccomp_mode) == -1 ||
	    get_word(ld, "AGENT_SANDBOX_ALLOWED_IMAGES_MATCH", matches, "glob",
	    RAW_IMAGE_MATCH, &c->allowed_images_match) == -1)
		return -1;
	return 0;
}

/* Processes: each one's output ring, and how many (docs/configuration.md). */
static int
load_process_vars(struct loader *ld)
{
	struct config	*c = ld->conf;

	return get_llong(ld, "AGENT_SANDBOX_PROCESS_OUTPUT_BYTES", 1048576,
	    PROCESS_OUTPUT_MIN, PROCESS_OUTPUT_MAX,
	    &c->process_output_bytes) == -1 ||
	    get_long(ld, "AGENT_SANDBOX_MAX_PROCESSES_PER_SANDBOX", 16, 1,
	    PROCESSES_MAX, &c->max_processes_per_sandbox) == -1 ||
	    get_long(ld, "AGENT_SANDBOX_MAX_PROCESSES", 256, 1, PROCESSES_MAX,
	    &c->max_processes) == -1 ? -1 : 0;
}

/* apid's HTTP timeouts and connection cap (docs/configuration.md). */
static int
load_http_vars(struct loader *ld)
{
	struct config	*c = ld->conf;

	if (get_double(ld, "AGENT_SANDBOX_HTTP_HEADER_TIMEOUT_SECONDS", 10.0,
	    HTTP_TIMEOUT_MAX, &c->http_header_timeout) == -1 ||
	    get_double(ld, "AGENT_SANDBOX_HTTP_BODY_TIMEOUT_SECONDS", 30.0,
	    HTTP_TIMEOUT_MAX, &c->http_body_timeout) == -1 ||
	    get_double(ld, "AGENT_SANDBOX_HTTP_IDLE_TIMEOUT_SECONDS", 60.0,
	    HTTP_TIMEOUT_MAX, &c->http_idle_timeout) == -1 ||
	    get_double(ld, "AGENT_SANDBOX_HTTP_SEND_TIMEOUT_SECONDS", 60.0,
	    HTTP_TIMEOUT_MAX, &c->http_send_timeout) == -1 ||
	    get_long(ld, "AGENT_SANDBOX_HTTP_MAX_CONNECTIONS", 1024, 16,
	    HTTP_CONNECTIONS_MAX, &c->http_max_connections) == -1)
		return -1;
	return 0;
}

/* The checks between settings, in the order API.md §10 lists them. */
static int
check_vars(struct loader *ld)
{
	struct config	*c = ld->conf;
	size_t		 i;

	if (c->api_keys_count == 0 && !c->insecure_no_auth)
		return fail(ld, "set AGENT_SANDBOX_API_KEYS to one or more "
		    "comma-separated keys, or set "
		    "AGENT_SANDBOX_INSECURE_NO_AUTH=true "
		    "for local development");
	/* Python's len() counts characters, not bytes. */
	for (i = 0; i < c->api_keys_count; i++)
		if (format_pystrlen(c->api_keys[i]) < API_KEY_MIN_CHARS)
			return fail(ld,
			    "API keys must be at least 16 characters long");
	if (c->default_cpus > c->max_cpus)
		return fail(ld, "default_cpus exceeds max_cpus");
	/* Not the reference's: less is no limit at all to Docker. */
	if (c->default_cpus < SANDBOX_CPUS_MIN)
		return fail(ld, "default_cpus must be at least 0.01");
	/*
	 * Not the reference's either: names dockerd-proxy would refuse
	 * (ids.h), so that they stop the start here, not the proxy later.
	 */
	if (!valid_sandbox_network_name(c->network_name))
		return fail_raw(ld, RAW_VALUE, "AGENT_SANDBOX_NETWORK_NAME",
		    c->network_name);
	if (c->docker_runtime[0] != '\0' &&
	    !valid_docker_name(c->docker_runtime))
		return fail_raw(ld, RAW_VALUE, "AGENT_SANDBOX_DOCKER_RUNTIME",
		    c->docker_runtime);
	if (c->default_memory_mb > c->max_memory_mb)
		return fail(ld, "default_memory_mb exceeds max_memory_mb");
	if (c->default_timeout_seconds > c->max_timeout_seconds)
		return fail(ld,
		    "default_timeout_seconds exceeds max_timeout_seconds");
	if (c->default_exec_timeout_seconds > c->max_exec_timeout_seconds)
		return fail(ld, "default_exec_timeout_seconds exceeds "
		    "max_exec_timeout_seconds");
	if (c->default_pids_limit > c->max_pids_limit)
		return fail(ld, "default_pids_limit exceeds max_pids_limit");
	if (c->max_sandboxes < 1)
		return fail(ld, "max_sandboxes must be at least 1");
	return 0;
}

int
config_load(struct config *conf, char *const *envp, char *err, size_t errlen)
{
	struct loader	 ld;

	memset(conf, 0, sizeof(*conf));
	ld.envp = envp;
	ld.conf = conf;
	ld.err = err;
	ld.errlen = err != NULL ? errlen : 0;
	if (ld.errlen > 0)
		err[0] = '\0';
	if (load_vars(&ld) == -1 || load_http_vars(&ld) == -1 ||
	    load_process_vars(&ld) == -1 ||
	    check_vars(&ld) == -1) {
		config_free(conf);
		return -1;
	}
	return 0;
}

void
config_free(struct config *conf)
{
	config_list_free(conf->api_keys);
	config_list_free(conf->allowed_images);
	free(conf->host);
	free(conf->data_dir);
	free(conf->default_image);
	free(conf->sandbox_user);
	free(conf->docker_runtime);
	free(conf->network_name);
	free(conf->docker_socket);
	free(conf->privsep_user);
	free(conf->chroot_dir);
	free(conf->libexec_dir);
	free(conf->log_level);
	free(conf->seccomp_mode);
	free(conf->managerd_user);
	free(conf->allowed_images_match);
	free(conf->instance_id);
	explicit_bzero(conf, sizeof(*conf));
}
