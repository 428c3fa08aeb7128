/*
 * heap_sort(), the store's sort instead of qsort(3): for the env keys of a
 * record (store_json.c) and the record files' names (store.c).
 */
#include <stddef.h>

#include "managerd.h"

static void
swap_bytes(char *a, char *b, size_t size)
{
	char	 t;

	while (size-- > 0) {
		t = *a;
		*a++ = *b;
		*b++ = t;
	}
}

static void
sift_down(char *base, size_t root, size_t n, size_t size,
    int (*cmp)(const void *, const void *))
{
	size_t	 child;

	while ((child = 2 * root + 1) < n) {
		if (child + 1 < n &&
		    cmp(base + child * size, base + (child + 1) * size) < 0)
			child++;
		if (cmp(base + root * size, base + child * size) >= 0)
			return;
		swap_bytes(base + root * size, base + child * size, size);
		root = child;
	}
}

/*
 * qsort(3) with the same arguments.  glibc's qsort calls sysinfo(2) for
 * arrays over 1 KiB, which managerd's seccomp filter kills.
 */
void
heap_sort(void *v, size_t n, size_t size,
    int (*cmp)(const void *, const void *))
{
	char	*base = v;
	size_t	 i;

	if (n < 2)
		return;
	for (i = n / 2; i-- > 0;)
		sift_down(base, i, n, size, cmp);
	for (i = n - 1; i > 0; i--) {
		swap_bytes(base, base + i * size, size);
		sift_down(base, 0, i, size, cmp);
	}
}
