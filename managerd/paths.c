/*
 * Paths inside a sandbox (API.md §6.1): make a client's path absolute and
 * lexically normal the way Python's posixpath.normpath does, and decide
 * whether a normalized path may be written to.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "managerd.h"

#define WORKSPACE	"/workspace"

/*
 * Normalize buf[0..len) in place.  buf starts with '/', so the result is
 * never longer than the input: every segment kept is preceded by at least
 * one '/' of the input.  Returns the new length.
 */
static size_t
normalize_in_place(char *buf, size_t len)
{
	size_t	 r, w, root, seg;

	/* posixpath keeps exactly two leading slashes, not one or three. */
	root = 1;
	if (len >= 2 && buf[1] == '/' && (len == 2 || buf[2] != '/'))
		root = 2;
	w = root;
	r = 0;
	while (r < len) {
		while (r < len && buf[r] == '/')
			r++;
		seg = r;
		while (r < len && buf[r] != '/')
			r++;
		if (r == seg || (r - seg == 1 && buf[seg] == '.'))
			continue;
		if (r - seg == 2 && buf[seg] == '.' && buf[seg + 1] == '.') {
			/* Pop the last segment; at the root there is none. */
			while (w > root && buf[w - 1] != '/')
				w--;
			if (w > root)
				w--;
			continue;
		}
		if (w > root)
			buf[w++] = '/';
		memmove(buf + w, buf + seg, r - seg);
		w += r - seg;
	}
	return w;
}

int
path_normalize_len(const char *in, size_t inlen, char *out, size_t outlen)
{
	char	*buf;
	size_t	 plen, len;

	if (inlen == 0 || memchr(in, '\0', inlen) != NULL) {
		errno = EINVAL;
		return -1;
	}
	/* posixpath.join("/workspace", p) for a relative p. */
	plen = in[0] == '/' ? 0 : sizeof(WORKSPACE "/") - 1;
	if (inlen > SIZE_MAX - plen - 1) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((buf = malloc(plen + inlen + 1)) == NULL)
		return -1;
	memcpy(buf, WORKSPACE "/", plen);
	memcpy(buf + plen, in, inlen);
	len = normalize_in_place(buf, plen + inlen);
	if (len >= outlen) {
		free(buf);
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(out, buf, len);
	out[len] = '\0';
	free(buf);
	return 0;
}

int
path_normalize(const char *in, char *out, size_t outlen)
{
	return path_normalize_len(in, strlen(in), out, outlen);
}

int
path_in_workspace(const char *normalized)
{
	const char	*p, *seg;
	size_t		 n;

	if (strncmp(normalized, WORKSPACE "/", sizeof(WORKSPACE)) != 0)
		return 0;
	p = normalized + sizeof(WORKSPACE);
	if (*p == '\0')
		return 0;
	/* Not normalized after all: refuse rather than guess. */
	for (;;) {
		seg = p;
		p += strcspn(p, "/");
		n = p - seg;
		if (n == 0 || (n == 1 && seg[0] == '.') ||
		    (n == 2 && seg[0] == '.' && seg[1] == '.'))
			return 0;
		if (*p == '\0')
			return 1;
		p++;
	}
}

int
path_join_link(const char *link, const char *target, char *out, size_t outlen)
{
	const char	*slash;
	char		*joined;
	size_t		 dirlen, tlen;
	int		 r;

	/* dirname() with its trailing slash, which join() would add. */
	if (target[0] == '/' || (slash = strrchr(link, '/')) == NULL)
		dirlen = 0;
	else
		dirlen = (size_t)(slash - link) + 1;
	tlen = strlen(target);
	if (tlen == 0 && dirlen == 0) {
		errno = EINVAL;
		return -1;
	}
	if ((joined = malloc(dirlen + tlen + 1)) == NULL)
		return -1;
	memcpy(joined, link, dirlen);
	memcpy(joined + dirlen, target, tlen + 1);
	r = path_normalize(joined, out, outlen);
	free(joined);
	return r;
}
