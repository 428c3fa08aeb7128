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

#endif /* AS_XMALLOC_H */
