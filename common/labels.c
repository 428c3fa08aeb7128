/*
 * Label keys, values, sets and filters (labels.h).  A set is small (at
 * most LABELS_MAX) and kept sorted, so finding is a bsearch, an insert a
 * memmove, and two sets with the same labels are the same arrays: their
 * messages and records come out byte for byte alike.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "labels.h"
#include "utf8.h"

static int
key_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '/' ||
	    c == '-';
}

int
label_key_valid(const char *k, size_t len)
{
	size_t	 i;

	if (len == 0 || len > LABEL_KEY_MAX)
		return 0;
	/* A leading '-' reads as an option in a shell, '/' or '.' as a path. */
	if (!key_char((unsigned char)k[0]) || k[0] == '.' || k[0] == '_' ||
	    k[0] == '/' || k[0] == '-')
		return 0;
	for (i = 1; i < len; i++)
		if (!key_char((unsigned char)k[i]))
			return 0;
	return 1;
}

int
label_value_valid(const char *v, size_t len)
{
	size_t		 i, n;
	uint32_t	 cp;

	if (len > LABEL_VALUE_MAX)
		return 0;
	for (i = 0; i < len; i += n) {
		if ((n = utf8_char(v + i, len - i, &cp)) == 0)
			return 0;
		if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f))
			return 0;
	}
	return 1;
}

void
labels_free(struct label_list *l)
{
	size_t	 i;

	for (i = 0; i < l->count; i++) {
		free(l->keys[i]);
		free(l->values[i]);
	}
	free(l->keys);
	free(l->values);
	memset(l, 0, sizeof(*l));
}

/* The index of key, or where it would go (*found 0). */
static size_t
labels_find(const struct label_list *l, const char *key, int *found)
{
	size_t	 lo = 0, hi = l->count, mid;
	int	 c;

	*found = 0;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if ((c = strcmp(key, l->keys[mid])) == 0) {
			*found = 1;
			return mid;
		}
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

const char *
labels_get(const struct label_list *l, const char *key)
{
	size_t	 i;
	int	 found;

	i = labels_find(l, key, &found);
	return found ? l->values[i] : NULL;
}

static int
labels_grow(struct label_list *l)
{
	char	**k, **v;

	if ((k = reallocarray(l->keys, l->count + 1, sizeof(*k))) == NULL)
		return -1;
	l->keys = k;
	if ((v = reallocarray(l->values, l->count + 1, sizeof(*v))) == NULL)
		return -1;
	l->values = v;
	return 0;
}

int
labels_set(struct label_list *l, const char *key, const char *value)
{
	char	*kc, *vc;
	size_t	 i;
	int	 found;

	if ((vc = strdup(value)) == NULL)
		return -1;
	i = labels_find(l, key, &found);
	if (found) {
		free(l->values[i]);
		l->values[i] = vc;
		return 0;
	}
	if ((kc = strdup(key)) == NULL || labels_grow(l) == -1) {
		free(kc);
		free(vc);
		return -1;
	}
	memmove(l->keys + i + 1, l->keys + i, (l->count - i) * sizeof(char *));
	memmove(l->values + i + 1, l->values + i,
	    (l->count - i) * sizeof(char *));
	l->keys[i] = kc;
	l->values[i] = vc;
	l->count++;
	return 0;
}

void
labels_remove(struct label_list *l, const char *key)
{
	size_t	 i;
	int	 found;

	i = labels_find(l, key, &found);
	if (!found)
		return;
	free(l->keys[i]);
	free(l->values[i]);
	l->count--;
	memmove(l->keys + i, l->keys + i + 1, (l->count - i) * sizeof(char *));
	memmove(l->values + i, l->values + i + 1,
	    (l->count - i) * sizeof(char *));
}

int
labels_copy(struct label_list *dst, const struct label_list *src)
{
	size_t	 i;

	memset(dst, 0, sizeof(*dst));
	for (i = 0; i < src->count; i++)
		if (labels_set(dst, src->keys[i], src->values[i]) == -1) {
			labels_free(dst);
			return -1;
		}
	return 0;
}

int
labels_check(const struct label_list *l)
{
	size_t	 i;

	if (l->count > LABELS_MAX)
		return -1;
	for (i = 0; i < l->count; i++)
		if (!label_key_valid(l->keys[i], strlen(l->keys[i])) ||
		    !label_value_valid(l->values[i], strlen(l->values[i])))
			return -1;
	return 0;
}

void
label_filter_free(struct label_filter *f)
{
	size_t	 i;

	for (i = 0; i < f->count; i++) {
		free(f->keys[i]);
		free(f->values[i]);
	}
	free(f->keys);
	free(f->values);
	memset(f, 0, sizeof(*f));
}

int
label_filter_add(struct label_filter *f, const char *key, const char *value)
{
	char	**k, **v, *kc, *vc = NULL;

	if (f->count >= LABEL_FILTERS_MAX) {
		errno = E2BIG;
		return -1;
	}
	if ((k = reallocarray(f->keys, f->count + 1, sizeof(*k))) == NULL)
		return -1;
	f->keys = k;
	if ((v = reallocarray(f->values, f->count + 1, sizeof(*v))) == NULL)
		return -1;
	f->values = v;
	if ((kc = strdup(key)) == NULL ||
	    (value != NULL && (vc = strdup(value)) == NULL)) {
		free(kc);
		return -1;
	}
	f->keys[f->count] = kc;
	f->values[f->count++] = vc;
	return 0;
}

int
label_filter_match(const struct label_filter *f, const struct label_list *l)
{
	const char	*v;
	size_t		 i;

	for (i = 0; i < f->count; i++) {
		if ((v = labels_get(l, f->keys[i])) == NULL)
			return 0;
		if (f->values[i] != NULL && strcmp(v, f->values[i]) != 0)
			return 0;
	}
	return 1;
}

int
label_filter_parse(struct label_filter *f, const char *s, size_t len,
    const char **why)
{
	const char	*eq;
	char		*key, *value = NULL;
	size_t		 klen;
	int		 rc, saved;

	eq = memchr(s, '=', len);
	klen = eq != NULL ? (size_t)(eq - s) : len;
	*why = NULL;
	if (!label_key_valid(s, klen)) {
		*why = "a label key is 1-63 characters of A-Z a-z 0-9 . _ / - "
		    "starting with a letter or a digit";
		errno = EINVAL;
		return -1;
	}
	if (eq != NULL && !label_value_valid(eq + 1, len - klen - 1)) {
		*why = "a label value is at most 255 bytes of UTF-8 without "
		    "control characters";
		errno = EINVAL;
		return -1;
	}
	if ((key = strndup(s, klen)) == NULL ||
	    (eq != NULL && (value = strndup(eq + 1, len - klen - 1)) == NULL)) {
		free(key);
		return -1;
	}
	rc = label_filter_add(f, key, value);
	saved = errno;
	free(key);
	free(value);
	errno = saved;
	return rc;
}
