/*
 * Checks that create and exec share: environment variable names (API.md
 * §4.2 step 6) and blank commands (§4.7), worded as the reference words
 * them.  NUL bytes cannot reach us: the message decoder refuses them.
 */
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "managerd.h"

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

/* Decode one UTF-8 sequence; -1 if it is not valid. */
static long
utf8_next(const unsigned char **sp)
{
	const unsigned char	*s = *sp;
	long			 c;
	int			 n, i;

	if (s[0] < 0x80) {
		*sp = s + 1;
		return s[0];
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 1;
		c = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 2;
		c = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 3;
		c = s[0] & 0x07;
	} else
		return -1;
	for (i = 1; i <= n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return -1;
		c = (c << 6) | (s[i] & 0x3f);
	}
	if ((n == 2 && c < 0x800) || (n == 3 && c < 0x10000))
		return -1;	/* overlong */
	*sp = s + n + 1;
	return c;
}

/* Python's str.isspace() for one code point. */
static int
py_isspace(long c)
{
	return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) ||
	    c == 0x85 || c == 0xa0 || c == 0x1680 ||
	    (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 ||
	    c == 0x202f || c == 0x205f || c == 0x3000;
}

/* 1 if Python's cmd.strip() would be empty. */
int
command_blank(const char *cmd)
{
	const unsigned char	*s = (const unsigned char *)cmd;
	long			 c;

	while (*s != '\0') {
		if ((c = utf8_next(&s)) == -1 || !py_isspace(c))
			return 0;
	}
	return 1;
}
