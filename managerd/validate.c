/*
 * Checks that create and exec share: environment variable names (API.md
 * §4.2 step 6) and blank commands (§4.7), worded as the reference words
 * them.  NUL bytes cannot reach us: the message decoder refuses them.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "managerd.h"
#include "utf8.h"

/* The first key Docker could not take as a variable name, or NULL. */
const char *
env_invalid_key(const struct env_list *e)
{
	size_t	 i;

	for (i = 0; i < e->count; i++) {
		if (e->keys[i][0] == '\0' || strchr(e->keys[i], '=') != NULL)
			return e->keys[i];
	}
	return NULL;
}

int
reply_bad_env(uint32_t apid_id, const char *key)
{
	char	*repr;
	int	 rc;

	if ((repr = format_pyrepr(key)) == NULL)
		return apid_error(apid_id, ERR_INTERNAL, "out of memory");
	rc = apid_error(apid_id, ERR_INVALID_REQUEST,
	    "invalid environment variable name %s", repr);
	free(repr);
	return rc;
}

/* Python's str.isspace() for one code point. */
static int
py_isspace(uint32_t c)
{
	return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) ||
	    c == 0x85 || c == 0xa0 || c == 0x1680 ||
	    (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 ||
	    c == 0x202f || c == 0x205f || c == 0x3000;
}

/*
 * 1 if Python's cmd.strip() would be empty.  Bytes that are not UTF-8
 * cannot be whitespace.
 */
int
command_blank(const char *cmd)
{
	size_t		 len, i, k;
	uint32_t	 c;

	len = strlen(cmd);
	for (i = 0; i < len; i += k) {
		k = utf8_char(cmd + i, len - i, &c);
		if (k == 0 || !py_isspace(c))
			return 0;
	}
	return 1;
}

int
workdir_resolve(uint32_t apid_id, const char *in, char *out, size_t len)
{
	if (in == NULL || in[0] == '\0') {
		strlcpy(out, WORKSPACE_DIR, len);
		return 0;
	}
	if (path_normalize(in, out, len) == -1) {
		apid_error(apid_id, ERR_INVALID_REQUEST,
		    "path must be a non-empty string");
		return -1;
	}
	return 0;
}

void
command_argv(int shell, size_t argc, char **argv, char *shell_argv[4],
    size_t *argcp, char ***argvp)
{
	static char	 sh[] = "/bin/sh", dash_c[] = "-c";

	if (!shell) {
		*argcp = argc;
		*argvp = argv;
		return;
	}
	/* §5.1: a string runs under the shell, a list as it is. */
	shell_argv[0] = sh;
	shell_argv[1] = dash_c;
	shell_argv[2] = argv[0];
	shell_argv[3] = NULL;
	*argcp = 3;
	*argvp = shell_argv;
}

/*
 * The environment an exec or process of sb runs with.  A pooled
 * sandbox's container was made before its create named an environment,
 * and a running container's cannot change: its own goes first, every key
 * the request does not set, then the request's.  A policy sandbox's
 * commands get the proxy variables (network.c) unless they set them.
 * out borrows the strings; exec_env_free frees what this made.  -1 with
 * E2BIG when the lot is more than a message holds, ENOMEM.
 */
static int
exec_env_made(const struct sandbox *sb)
{
	return (sb->rec.pooled && sb->rec.spec.env.count > 0) ||
	    network_env_count(sb) > 0;
}

int
exec_env(const struct sandbox *sb, const struct env_list *req,
    struct env_list *out)
{
	const struct env_list	*own = &sb->rec.spec.env;
	size_t			 i, n = 0, room;

	if (!exec_env_made(sb)) {
		*out = *req;
		return 0;
	}
	memset(out, 0, sizeof(*out));
	room = (sb->rec.pooled ? own->count : 0) + req->count +
	    network_env_count(sb);
	if (room > MSG_MAX_ENV * 2 + 8 ||
	    (out->keys = calloc(room, sizeof(char *))) == NULL ||
	    (out->values = calloc(room, sizeof(char *))) == NULL) {
		free(out->keys);
		return -1;
	}
	for (i = 0; sb->rec.pooled && i < own->count; i++) {
		if (env_list_has(req, own->keys[i]))
			continue;
		out->keys[n] = own->keys[i];
		out->values[n++] = own->values[i];
	}
	out->count = n;
	network_env_add(sb, req, out);
	for (i = 0; i < req->count; i++) {
		out->keys[out->count] = req->keys[i];
		out->values[out->count++] = req->values[i];
	}
	if (out->count <= MSG_MAX_ENV)
		return 0;
	exec_env_free(sb, out);
	errno = E2BIG;
	return -1;
}

void
exec_env_free(const struct sandbox *sb, struct env_list *out)
{
	if (exec_env_made(sb)) {
		free(out->keys);
		free(out->values);
	}
	memset(out, 0, sizeof(*out));
}
