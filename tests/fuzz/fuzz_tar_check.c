/*
 * dockerd-proxy's check on the tars it writes into a sandbox
 * (dockerd-proxy/tar_check.c).  Input: a byte bounding the pieces, a
 * byte seeding the splits, then the archive.
 *
 * The archive is fed whole and in pieces: the verdict, the reason and
 * every byte that went out must not depend on the pieces.  An accepted
 * archive comes out exactly as long as it went in, and checking what
 * came out accepts it again, unchanged (the owners are already the
 * sandbox user's).  A refused one has a reason, and no more went out
 * than came in.
 */
#include <string.h>

#include "proxy.h"
#include "harness.h"

#define UID	1000
#define GID	1000

struct result {
	struct buf	 out;
	int		 rc;
	int		 refused;
	char		 err[sizeof(((struct tar_check *)0)->err)];
};

static int
out(void *arg, const void *p, size_t len)
{
	buf_add(arg, p, len);
	return 0;
}

static void
run(const uint8_t *data, size_t len, struct splitter *sp, struct result *r)
{
	struct tar_check	 tc;
	size_t			 n;

	memset(r, 0, sizeof(*r));
	buf_add(&r->out, "", 0);
	tar_check_init(&tc, UID, GID);
	while (len > 0 && r->rc == 0) {
		n = sp != NULL ? splitter_next(sp, len) : len;
		r->rc = tar_check_feed(&tc, data, n, out, &r->out);
		data += n;
		len -= n;
	}
	if (r->rc == 0)
		r->rc = tar_check_end(&tc);
	r->refused = tc.state == TC_REFUSED;
	memcpy(r->err, tc.err, sizeof(r->err));
	tar_check_free(&tc);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct splitter	 sp;
	struct result	 whole, pieces, again;
	size_t		 max;

	max = (size_t)take_u64(&data, &len, 1) * 8 + 1;
	splitter_init(&sp, take_u64(&data, &len, 1), max);
	run(data, len, NULL, &whole);
	run(data, len, &sp, &pieces);
	CHECK(whole.rc == pieces.rc && whole.refused == pieces.refused);
	CHECK(strcmp(whole.err, pieces.err) == 0);
	CHECK(buf_equal(&whole.out, &pieces.out));
	CHECK(whole.out.len <= len);
	/* Only a refusal fails: the sink never does. */
	CHECK(whole.rc == 0 || (whole.refused && whole.err[0] != '\0'));
	if (whole.rc == 0) {
		CHECK(whole.out.len == len);
		run((const uint8_t *)whole.out.p, whole.out.len, NULL, &again);
		CHECK(again.rc == 0 && buf_equal(&again.out, &whole.out));
		buf_free(&again.out);
	}
	buf_free(&whole.out);
	buf_free(&pieces.out);
	return 0;
}
