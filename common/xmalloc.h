/*
 * Allocation that cannot fail: for daemon start-up and bookkeeping, where
 * running out of memory leaves nothing sensible to do but exit.  Code that
 * parses input returns errors instead.
 */
#ifndef AS_XMALLOC_H
#define AS_XMALLOC_H

#include <stddef.h>

void	*xmalloc(size_t);
void	*xcalloc(size_t, size_t);
void	*xreallocarray(void *, size_t, size_t);
char	*xstrdup(const char *);
int	 xasprintf(char **, const char *, ...)
	    __attribute__((format(printf, 2, 3)));

/*
 * For the processes that move bulk bytes through short-lived buffers
 * (apid, dockerd-proxy): keep up to XMALLOC_KEEP_HEAP of freed heap and
 * serve blocks below it from the heap, instead of glibc's 128 KiB.
 */
#define XMALLOC_KEEP_HEAP	(1024 * 1024)
void	 xmalloc_keep_heap(void);

#endif /* AS_XMALLOC_H */
