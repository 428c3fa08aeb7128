/*
 * The netns-helper's check of a pid's cgroup file
 * (netns-helper/netns_cgroup.c).  The first byte chooses the id: even,
 * a fixed valid one; odd, the next 64 bytes as they came (mostly
 * invalid).  The rest is the file.
 *
 * Checks: an accepted file is within the bound, has no NUL, ends in a
 * newline, and every line of it is "N:controllers:/..." whose last
 * component is the id or "docker-<id>.scope"; the id was 64 lowercase
 * hex digits; and a file accepted stays accepted with one more such line
 * (while in bound) and is refused with its last newline cut.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "netns_cgroup.h"

#define ID_LEN	64

static const char fixed_id[] =
    "c0abe65f61ece5660c333305eb9c96122aecc8632389aec5105c08f69b21ef71";

static int
ends_in(const char *s, size_t len, const char *tail, size_t tlen)
{
	return len >= tlen && memcmp(s + len - tlen, tail, tlen) == 0;
}

static void
check_line(const char *line, size_t len, const char *id)
{
	char	 a[ID_LEN + 2], b[ID_LEN + 16];
	const char *c1, *c2;

	snprintf(a, sizeof(a), "/%s", id);
	snprintf(b, sizeof(b), "/docker-%s.scope", id);
	c1 = memchr(line, ':', len);
	CHECK(c1 != NULL && c1 > line);
	c2 = memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line));
	CHECK(c2 != NULL && c2 + 1 < line + len && c2[1] == '/');
	CHECK(ends_in(line, len, a, strlen(a)) ||
	    ends_in(line, len, b, strlen(b)));
}

static void
check_accepted(const char *text, size_t len, const char *id)
{
	const char	*nl, *end = text + len;
	size_t		 i;

	CHECK(len > 0 && len <= NETNS_CGROUP_MAX && text[len - 1] == '\n');
	CHECK(memchr(text, '\0', len) == NULL);
	CHECK(strlen(id) == ID_LEN);
	for (i = 0; i < ID_LEN; i++)
		CHECK((id[i] >= '0' && id[i] <= '9') ||
		    (id[i] >= 'a' && id[i] <= 'f'));
	for (; text < end; text = nl + 1) {
		nl = memchr(text, '\n', (size_t)(end - text));
		CHECK(nl != NULL);
		check_line(text, (size_t)(nl - text), id);
	}
}

static void
check_more(const char *text, size_t len, const char *id)
{
	char	*more;
	char	 line[ID_LEN + 16];
	int	 n;

	CHECK(netns_cgroup_names(text, len - 1, id) == 0);
	n = snprintf(line, sizeof(line), "0::/%s\n", id);
	if (len + (size_t)n > NETNS_CGROUP_MAX)
		return;
	if ((more = malloc(len + (size_t)n)) == NULL)
		abort();
	memcpy(more, text, len);
	memcpy(more + len, line, (size_t)n);
	CHECK(netns_cgroup_names(more, len + (size_t)n, id) == 1);
	free(more);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	 id[ID_LEN + 1];

	if (size < 1)
		return 0;
	if (data[0] & 1) {
		if (size < 1 + ID_LEN)
			return 0;
		memcpy(id, data + 1, ID_LEN);
		id[ID_LEN] = '\0';
		data += 1 + ID_LEN;
		size -= 1 + ID_LEN;
	} else {
		memcpy(id, fixed_id, sizeof(id));
		data++;
		size--;
	}
	if (netns_cgroup_names((const char *)data, size, id) == 1) {
		check_accepted((const char *)data, size, id);
		check_more((const char *)data, size, id);
	}
	return 0;
}
