/* Allocation wrappers that exit on failure; see xmalloc.h. */
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "xmalloc.h"

void *
xmalloc(size_t size)
{
	void	*p;

	if (size == 0)
		fatalx("xmalloc: zero size");
	if ((p = malloc(size)) == NULL)
		fatal("xmalloc: allocating %zu bytes", size);
	return p;
}

void *
xcalloc(size_t nmemb, size_t size)
{
	void	*p;

	if (nmemb == 0 || size == 0)
		fatalx("xcalloc: zero size");
	if ((p = calloc(nmemb, size)) == NULL)
		fatal("xcalloc: allocating %zu * %zu bytes", nmemb, size);
	return p;
}

void *
xreallocarray(void *ptr, size_t nmemb, size_t size)
{
	void	*p;

	if (nmemb == 0 || size == 0)
		fatalx("xreallocarray: zero size");
	if ((p = reallocarray(ptr, nmemb, size)) == NULL)
		fatal("xreallocarray: allocating %zu * %zu bytes", nmemb, size);
	return p;
}

char *
xstrdup(const char *s)
{
	char	*p;

	if ((p = strdup(s)) == NULL)
		fatal("xstrdup");
	return p;
}

int
xasprintf(char **ret, const char *fmt, ...)
{
	va_list	 ap;
	int	 n;

	va_start(ap, fmt);
	n = vasprintf(ret, fmt, ap);
	va_end(ap);
	if (n == -1)
		fatal("xasprintf");
	return n;
}

/*
 * glibc gives freed heap back to the kernel as soon as 128 KiB are free at
 * its top, and serves blocks of 128 KiB or more with fresh mappings: a
 * 100 MiB transfer through evbuffer chains then faulted in, and flushed
 * from the TLB, the same few hundred KiB thousands of times, which cost
 * dockerd-proxy more CPU than the copying itself.  What is kept is at
 * most XMALLOC_KEEP_HEAP of resident memory.  (AddressSanitizer ignores
 * mallopt; so does this, then.)
 */
void
xmalloc_keep_heap(void)
{
	(void)mallopt(M_TRIM_THRESHOLD, XMALLOC_KEEP_HEAP);
	(void)mallopt(M_MMAP_THRESHOLD, XMALLOC_KEEP_HEAP);
}
