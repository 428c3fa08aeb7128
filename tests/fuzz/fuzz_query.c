/*
 * Query strings as apid reads them (query_value in apid/query.c).
 * Input: a key, a newline, then the query string.
 *
 * A value found is valid UTF-8, NUL-ended at its length.  And the last
 * occurrence wins, as in Starlette: appending key=x (the key percent-
 * encoded) must give x, and prepending it must change nothing when the
 * key was there already.
 */
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apid.h"
#include "harness.h"

#define KEY_MAX	32

static char *
encoded(const char *key)
{
	char	*out, *p;

	CHECK((out = malloc(strlen(key) * 3 + 1)) != NULL);
	for (p = out; *key != '\0'; key++, p += 3)
		snprintf(p, 4, "%%%02X", (unsigned char)*key);
	*p = '\0';
	return out;
}

static int
lookup(const char *q, const char *key, char **val, size_t *vlen)
{
	int	 rc;

	rc = query_value(q, key, val, vlen);
	CHECK(rc == 0 || rc == 1);
	if (rc == 0) {
		CHECK(*val == NULL && *vlen == 0);
		return 0;
	}
	CHECK(*val != NULL && (*val)[*vlen] == '\0');
	CHECK(utf8_valid(*val, *vlen));
	return 1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	const uint8_t	*nl;
	char		*key, *q, *ekey, *q2, *v, *v2;
	size_t		 vlen, v2len;
	int		 found;

	if ((nl = memchr(data, '\n', len)) == NULL ||
	    (size_t)(nl - data) > KEY_MAX)
		return 0;
	CHECK((key = strndup((const char *)data, (size_t)(nl - data))) !=
	    NULL);
	CHECK((q = strndup((const char *)nl + 1, len - (size_t)(nl - data) -
	    1)) != NULL);
	found = lookup(q, key, &v, &vlen);
	/* A key that is not UTF-8 can match nothing: names are decoded. */
	if (!utf8_valid(key, strlen(key)))
		CHECK(!found);
	else {
		ekey = encoded(key);
		CHECK(asprintf(&q2, "%s&%s=x%%41+", q, ekey) != -1);
		CHECK(lookup(q2, key, &v2, &v2len) == 1);
		CHECK(v2len == 3 && strcmp(v2, "xA ") == 0);
		free(q2);
		free(v2);
		CHECK(asprintf(&q2, "%s=zz&%s", ekey, q) != -1);
		CHECK(lookup(q2, key, &v2, &v2len) == 1);
		if (found)
			CHECK(v2len == vlen && memcmp(v, v2, vlen) == 0);
		else
			CHECK(strcmp(v2, "zz") == 0);
		free(q2);
		free(v2);
		free(ekey);
	}
	if (found) {
		query_refuse_nul(v, vlen);
		CHECK(v[0] == '\0' || strlen(v) == vlen);
	}
	free(v);
	free(q);
	free(key);
	return 0;
}
