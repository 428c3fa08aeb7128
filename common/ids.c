/*
 * Sandbox and snapshot ids: the shape check every process uses and the
 * generator managerd uses (see ids.h).
 */
#include <stdlib.h>
#include <string.h>

#include "ids.h"

static const char	 lower_hex[] = "0123456789abcdef";

/* Not isxdigit(): upper case is another id, and the locale must not matter. */
static int
lower_hex_digit(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/* len lowercase hex digits and the end of the string. */
static int
id_is_hex(const char *id, size_t len)
{
	size_t	 i;

	/* A NUL is no digit, so nothing past the string is read. */
	for (i = 0; i < len; i++)
		if (!lower_hex_digit(id[i]))
			return 0;
	return id[len] == '\0';
}

static int
id_is(const char *id, const char *prefix)
{
	size_t	 n;

	if (id == NULL)
		return 0;
	n = strlen(prefix);
	return strncmp(id, prefix, n) == 0 && id_is_hex(id + n, ID_HEX_LEN);
}

int
id_is_container(const char *id)
{
	return id != NULL && id_is_hex(id, CONTAINER_ID_LEN);
}

int
id_is_sandbox(const char *id)
{
	return id_is(id, SANDBOX_ID_PREFIX);
}

int
id_is_snapshot(const char *id)
{
	return id_is(id, SNAPSHOT_ID_PREFIX);
}

int
id_is_process(const char *id)
{
	return id_is(id, PROCESS_ID_PREFIX);
}

int
id_make(char *buf, size_t len, const char *prefix)
{
	unsigned char	 raw[ID_HEX_LEN / 2];
	size_t		 n, i;

	n = strlen(prefix);
	if (len < n + ID_HEX_LEN + 1)
		return -1;
	arc4random_buf(raw, sizeof(raw));
	memcpy(buf, prefix, n);
	for (i = 0; i < sizeof(raw); i++) {
		buf[n + 2 * i] = lower_hex[raw[i] >> 4];
		buf[n + 2 * i + 1] = lower_hex[raw[i] & 0xf];
	}
	buf[n + ID_HEX_LEN] = '\0';
	return 0;
}

#define DOCKER_NAME_LEN_MAX	128

static int
docker_name_char(char c, int first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') ||
	    (!first && (c == '_' || c == '.' || c == '-'));
}

int
valid_docker_name(const char *name)
{
	size_t	 i;

	if (name == NULL || name[0] == '\0')
		return 0;
	for (i = 0; name[i] != '\0'; i++)
		if (i == DOCKER_NAME_LEN_MAX ||
		    !docker_name_char(name[i], i == 0))
			return 0;
	return 1;
}

int
valid_sandbox_network_name(const char *name)
{
	static const char *const	 docker_own[] = {
		"bridge", "host", "none", "default"
	};
	size_t				 i;

	if (!valid_docker_name(name))
		return 0;
	for (i = 0; i < sizeof(docker_own) / sizeof(docker_own[0]); i++)
		if (strcmp(name, docker_own[i]) == 0)
			return 0;
	return 1;
}
