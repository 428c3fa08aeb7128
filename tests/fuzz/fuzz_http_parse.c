/*
 * apid's request parser (apid/http_parse.c): a head, then a body.
 * Input: the first byte is a split seed; the rest is a head up to its
 * empty line, and then body bytes.
 *
 * A head taken is sound: its fields NUL-ended, its version 1.0 or 1.1,
 * at most one length, never a length with chunked.  A head refused has
 * a status of 400-505 and a reason.  A body decodes to the same bytes
 * and takes the same wire bytes however its wire bytes are split, or is
 * refused at the same byte with the same status.
 */
#include <sys/types.h>

#include <stdlib.h>
#include <string.h>

#include "apid.h"
#include "harness.h"

struct feed {
	struct buf	 out;
	ssize_t		 taken;		/* wire bytes, or -1 */
	int		 status;	/* when refused */
	int		 done;
};

static void
sink(void *arg, const char *data, size_t len)
{
	CHECK(len > 0);
	buf_add(arg, data, len);
}

static void
check_head(const struct http_head *h)
{
	size_t	 i;

	CHECK(h->method != NULL && h->target != NULL);
	CHECK(h->major == 1 && (h->minor == 0 || h->minor == 1));
	CHECK(!(h->chunked && h->has_length));
	for (i = 0; i < h->nfields; i++) {
		CHECK(h->fields[i].name[0] != '\0');
		CHECK(strlen(h->fields[i].name) == h->fields[i].name_len);
		CHECK(strlen(h->fields[i].value) <= h->fields[i].value_len);
	}
}

static int
parse_head(struct http_head *h, const uint8_t *data, size_t len)
{
	char	*raw;

	CHECK((raw = malloc(len + 1)) != NULL);
	memcpy(raw, data, len);
	raw[len] = '\0';
	if (http_head_parse(h, raw, len) == -1) {
		CHECK(h->status >= 400 && h->status <= 505 && h->error != NULL);
		return -1;
	}
	check_head(h);
	return 0;
}

/* The body in pieces of the splitter's choosing. */
static void
feed_body(struct feed *f, const uint8_t *head, size_t hlen,
    const uint8_t *body, size_t blen, struct splitter *sp)
{
	struct http_head	 h;
	size_t			 off = 0, n;
	ssize_t			 r;

	memset(f, 0, sizeof(*f));
	if (parse_head(&h, head, hlen) == -1) {
		f->taken = -2;
		http_head_free(&h);
		return;
	}
	while (off < blen && !h.body_done) {
		n = sp != NULL ? splitter_next(sp, blen - off) : blen - off;
		if ((r = http_body_feed(&h, (const char *)body + off, n, sink,
		    &f->out)) == -1) {
			f->taken = -1;
			f->status = h.status;
			http_head_free(&h);
			return;
		}
		CHECK((size_t)r <= n);
		off += (size_t)r;
		if ((size_t)r < n)
			break;
	}
	f->taken = (ssize_t)off;
	f->done = h.body_done;
	CHECK(f->out.len == h.body_bytes);
	if (h.has_length)
		CHECK(h.body_bytes <= h.length);
	http_head_free(&h);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct feed	 whole, split;
	struct splitter	 sp;
	const uint8_t	*end;
	size_t		 hlen;

	if (len < 2)
		return 0;
	splitter_init(&sp, data[0], 64);
	data++;
	len--;
	if ((end = memmem(data, len, "\r\n\r\n", 4)) == NULL)
		hlen = len;
	else
		hlen = (size_t)(end - data) + 4;
	feed_body(&whole, data, hlen, data + hlen, len - hlen, NULL);
	feed_body(&split, data, hlen, data + hlen, len - hlen, &sp);
	CHECK(whole.taken == split.taken);
	CHECK(whole.status == split.status);
	CHECK(whole.done == split.done);
	CHECK(buf_equal(&whole.out, &split.out));
	buf_free(&whole.out);
	buf_free(&split.out);
	return 0;
}
