/*
 * Does /proc/<pid>/cgroup name this container?  Written by hand: it is
 * one line format of the kernel's, and the helper that reads it keeps
 * CAP_SYS_ADMIN and CAP_SYS_PTRACE, so it should link as little as it
 * can (common/ids.c for the id's shape, nothing else).
 */
#include <string.h>

#include "ids.h"
#include "netns_cgroup.h"

#define ID_LEN		CONTAINER_ID_LEN
#define SCOPE_PREFIX	"docker-"
#define SCOPE_SUFFIX	".scope"

/* The last path component, len bytes at name, is the container's. */
static int
component_names(const char *name, size_t len, const char *id)
{
	size_t	pre = strlen(SCOPE_PREFIX), suf = strlen(SCOPE_SUFFIX);

	if (len == ID_LEN)
		return memcmp(name, id, ID_LEN) == 0;
	return len == pre + ID_LEN + suf &&
	    memcmp(name, SCOPE_PREFIX, pre) == 0 &&
	    memcmp(name + pre, id, ID_LEN) == 0 &&
	    memcmp(name + pre + ID_LEN, SCOPE_SUFFIX, suf) == 0;
}

/* One line without its newline: "N:controllers:/.../<component>". */
static int
line_names(const char *line, size_t len, const char *id)
{
	const char	*c1, *c2, *slash;

	if ((c1 = memchr(line, ':', len)) == NULL || c1 == line ||
	    (c2 = memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line))) ==
	    NULL || c2 + 1 == line + len || c2[1] != '/')
		return 0;
	for (slash = line + len - 1; *slash != '/'; slash--)
		;
	return component_names(slash + 1,
	    (size_t)(line + len - slash - 1), id);
}

int
netns_cgroup_names(const char *text, size_t len, const char *id)
{
	const char	*nl, *end = text + len;
	size_t		 lines = 0;

	if (len == 0 || len > NETNS_CGROUP_MAX || !id_is_container(id) ||
	    memchr(text, '\0', len) != NULL || text[len - 1] != '\n')
		return 0;
	for (; text < end; text = nl + 1, lines++) {
		nl = memchr(text, '\n', (size_t)(end - text));
		if (!line_names(text, (size_t)(nl - text), id))
			return 0;
	}
	return lines > 0;
}
