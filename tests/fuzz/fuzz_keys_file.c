/*
 * The keys file (common/keys_file.c): whatever an operator's file holds.
 * The parser either refuses it, leaving nothing allocated, or gives a
 * table within the file's own rules (names valid and unique, hashes
 * unique, at most 1,024 keys); that table goes into chunks and comes back
 * out of them byte for byte, as it travels to managerd and apid.
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "keys_file.h"

static void
round_trip(const struct keys_table *t)
{
	struct keys_table	 back;
	struct imsg		 m;
	struct msgw		 w;
	uint32_t		 total;
	size_t			 first = 0;

	memset(&back, 0, sizeof(back));
	do {
		msgw_init(&w);
		msg_put_keys_chunk(&w, t, first);
		CHECK(!w.overflow);
		memset(&m, 0, sizeof(m));
		m.fd = -1;
		m.data = w.buf;
		m.len = w.len;
		CHECK(msg_get_keys_chunk(&m, &back, &total) == 0);
		CHECK(total == t->n);
		first += KEYS_PER_MESSAGE;
	} while (first < t->n);
	CHECK(back.n == t->n);
	CHECK(t->n == 0 || memcmp(back.v, t->v, t->n * sizeof(*t->v)) == 0);
	keys_table_free(&back);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct keys_table	 t;
	char			 err[512];
	size_t			 i, j;

	if (keys_file_parse((const char *)data, len, &t, err,
	    sizeof(err)) == -1) {
		CHECK(t.v == NULL && t.n == 0 && err[0] != '\0');
		return 0;
	}
	CHECK(t.n <= KEYS_FILE_MAX_KEYS);
	for (i = 0; i < t.n; i++) {
		CHECK(key_name_valid(t.v[i].name));
		CHECK(key_name_valid(t.v[i].tenant));
		for (j = 0; j < i; j++)
			CHECK(strcmp(t.v[i].name, t.v[j].name) != 0 &&
			    memcmp(t.v[i].sha256, t.v[j].sha256,
			    KEY_HASH_LEN) != 0);
		CHECK(keys_table_match(&t, t.v[i].sha256) == (long)i);
	}
	round_trip(&t);
	keys_table_free(&t);
	return 0;
}
