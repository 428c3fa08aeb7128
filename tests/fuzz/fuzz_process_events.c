/*
 * A PROCESS_OUTPUT pipe's event stream as .../output's NDJSON lines
 * (apid/process_events.c over common/process_msg.c's reader), as
 * route_process_output.c wires them.  Input: a byte choosing the
 * encoding (bit 0: base64) and the largest piece, a byte seeding the
 * splits, then what managerd writes into the pipe.
 *
 * The same bytes fed whole and in pieces must give the same lines and
 * the same verdict (malformed or not, clean at the end or not).  Every
 * line is one JSON object of ASCII, of one of the four shapes, data
 * lines' seqs rise, nothing follows the exit line; in base64 the data
 * decoded is exactly the payload of the events accepted, in order.
 */
#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "apid.h"
#include "harness.h"
#include "websocket.h"

struct result {
	struct process_events	 pe;
	struct buf		 lines;
	struct buf		 data;		/* base64 data, decoded */
	int			 base64;
	int			 exits;
	int			 ndata;
	uint64_t		 last_seq;
	int			 rc;
	int			 clean;
};

static json_object *
get(json_object *o, const char *key, json_type type)
{
	json_object	*v;

	CHECK(json_object_object_get_ex(o, key, &v));
	CHECK(json_object_is_type(v, type));
	return v;
}

static void
data_line(struct result *r, json_object *o)
{
	static unsigned char	 raw[PEV_DATA_MAX + 3];
	json_object		*v;
	const char		*d;
	uint64_t		 seq;
	long			 n;

	seq = json_object_get_uint64(get(o, "seq", json_type_int));
	CHECK(seq > r->last_seq || r->ndata == 0);
	r->last_seq = seq;
	r->ndata++;
	/* Never empty (the output may hold NULs: a length, not strlen). */
	v = get(o, "data", json_type_string);
	d = json_object_get_string(v);
	CHECK(json_object_get_string_len(v) > 0);
	if (!r->base64)
		return;
	n = b64_decode(d, (size_t)json_object_get_string_len(v), raw,
	    sizeof(raw));
	CHECK(n > 0 && n <= PEV_DATA_MAX);
	buf_add(&r->data, raw, (size_t)n);
}

static void
line(struct result *r, const char *p, size_t len)
{
	json_object	*o;
	const char	*type;
	size_t		 i;

	CHECK(len > 1 && p[len - 1] == '\n');
	CHECK(memchr(p, '\n', len - 1) == NULL);
	for (i = 0; i < len; i++)
		CHECK((unsigned char)p[i] < 0x80);
	CHECK(r->exits == 0);
	CHECK((o = json_tokener_parse(p)) != NULL);
	type = json_object_get_string(get(o, "type", json_type_string));
	if (strcmp(type, "stdout") == 0 || strcmp(type, "stderr") == 0)
		data_line(r, o);
	else if (strcmp(type, "gap") == 0)
		CHECK(json_object_get_uint64(get(o, "dropped_bytes",
		    json_type_int)) != 0);
	else {
		CHECK(strcmp(type, "exit") == 0);
		(void)get(o, "status", json_type_string);
		(void)get(o, "seq", json_type_int);
		CHECK(json_object_object_get_ex(o, "exit_code", NULL));
		CHECK(json_object_object_get_ex(o, "ended_at", NULL));
		r->exits++;
	}
	json_object_put(o);
}

static int
emit(void *arg, struct evbuffer *b)
{
	struct result	*r = arg;
	size_t		 len = evbuffer_get_length(b);
	char		*p;

	CHECK(len <= 6 * PEV_DATA_MAX + 128);
	CHECK((p = malloc(len + 1)) != NULL);
	CHECK(evbuffer_remove(b, p, len) == (int)len);
	p[len] = '\0';
	buf_add(&r->lines, p, len);
	line(r, p, len);
	free(p);
	return 0;
}

static void
run(const uint8_t *data, size_t len, int base64, struct splitter *sp,
    struct result *r)
{
	size_t	 n;

	memset(r, 0, sizeof(*r));
	r->base64 = base64;
	buf_add(&r->lines, "", 0);
	buf_add(&r->data, "", 0);
	CHECK(process_events_init(&r->pe, base64, emit, r) == 0);
	while (len > 0 && r->rc == 0) {
		n = sp != NULL ? splitter_next(sp, len) : len;
		r->rc = process_events_feed(&r->pe, data, n);
		data += n;
		len -= n;
	}
	r->clean = r->rc == 0 && process_events_clean(&r->pe);
	CHECK(r->exits == process_events_ended(&r->pe));
	process_events_free(&r->pe);
}

/* The payloads of the first n data events, walking the headers. */
static void
naive(const uint8_t *d, size_t len, int n, struct buf *out)
{
	uint32_t	 plen;

	buf_add(out, "", 0);
	while (n > 0 && len >= PEV_HEADER_LEN) {
		plen = (uint32_t)d[4] << 24 | (uint32_t)d[5] << 16 |
		    (uint32_t)d[6] << 8 | d[7];
		CHECK(plen <= len - PEV_HEADER_LEN);
		if (d[0] == PEV_STDOUT || d[0] == PEV_STDERR) {
			buf_add(out, d + PEV_HEADER_LEN, plen);
			n--;
		}
		d += PEV_HEADER_LEN + plen;
		len -= PEV_HEADER_LEN + plen;
	}
	CHECK(n == 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct result	 whole, split;
	struct buf	 want = { NULL, 0, 0 };
	struct splitter	 sp;
	int		 base64;

	if (len < 2)
		return 0;
	base64 = data[0] & 1;
	splitter_init(&sp, data[1], 1 + (data[0] >> 1));
	data += 2;
	len -= 2;
	run(data, len, base64, NULL, &whole);
	run(data, len, base64, &sp, &split);
	CHECK(buf_equal(&whole.lines, &split.lines));
	CHECK(whole.rc == split.rc && whole.clean == split.clean);
	if (base64) {
		naive(data, len, whole.ndata, &want);
		CHECK(buf_equal(&want, &whole.data));
		buf_free(&want);
	}
	buf_free(&whole.lines);
	buf_free(&whole.data);
	buf_free(&split.lines);
	buf_free(&split.data);
	return 0;
}
