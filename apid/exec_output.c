/*
 * The output of a running command as it comes through the exec pipe:
 * Docker-style frames (8-byte header: stream byte, three zero bytes,
 * big-endian payload length; then the payload), the capture buffers of
 * a blocking exec with their combined cap (API.md §5.3), and the NDJSON
 * events of a streaming exec, one per frame, each stream through its own
 * incremental UTF-8 decoder (§3.6).  Pure: no descriptors, no HTTP.
 */
#include <sys/queue.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "apid.h"

void
frame_parser_init(struct frame_parser *fp)
{
	memset(fp, 0, sizeof(*fp));
}

int
frame_parser_feed(struct frame_parser *fp, const void *data, size_t len,
    frame_cb cb, void *arg)
{
	const unsigned char	*p = data;
	size_t			 take;

	while (len > 0) {
		if (fp->left == 0 && fp->hlen < sizeof(fp->hdr)) {
			take = sizeof(fp->hdr) - fp->hlen;
			if (take > len)
				take = len;
			memcpy(fp->hdr + fp->hlen, p, take);
			fp->hlen += take;
			p += take;
			len -= take;
			if (fp->hlen < sizeof(fp->hdr))
				break;
			fp->stream = fp->hdr[0];
			fp->left = (uint32_t)fp->hdr[4] << 24 |
			    (uint32_t)fp->hdr[5] << 16 |
			    (uint32_t)fp->hdr[6] << 8 | fp->hdr[7];
			fp->hlen = 0;
			if (fp->left == 0 &&
			    cb(arg, fp->stream, NULL, 0, 1) == -1)
				return -1;
			continue;
		}
		take = fp->left < len ? fp->left : len;
		fp->left -= (uint32_t)take;
		if (cb(arg, fp->stream, p, take, fp->left == 0) == -1)
			return -1;
		p += take;
		len -= take;
	}
	return 0;
}

void
capture_init(struct capture *c, uint64_t cap)
{
	memset(c, 0, sizeof(*c));
	c->cap = cap;
}

/*
 * API.md §5.3: room = cap - kept (both streams); a chunk longer than the
 * room sets truncated and only its first max(room, 0) bytes are kept.
 * How the bytes are cut into chunks does not change the result.
 */
int
capture_add(struct capture *c, int which, const void *data, size_t len)
{
	struct capture_buf	*b = &c->stream[which];
	uint64_t		 room;
	size_t			 keep, want;
	char			*nbuf;

	room = c->kept < c->cap ? c->cap - c->kept : 0;
	keep = len;
	if ((uint64_t)len > room) {
		c->truncated = 1;
		keep = (size_t)room;
	}
	if (keep == 0)
		return 0;
	if (b->len + keep > b->size) {
		want = b->size ? b->size : 4096;
		while (want < b->len + keep)
			want *= 2;
		/* Never more than the cap can ever need. */
		if ((uint64_t)want > c->cap && c->cap >= b->len + keep)
			want = (size_t)c->cap;
		if ((nbuf = realloc(b->data, want)) == NULL)
			return -1;
		b->data = nbuf;
		b->size = want;
	}
	memcpy(b->data + b->len, data, keep);
	b->len += keep;
	c->kept += keep;
	return 0;
}

void
capture_free(struct capture *c)
{
	free(c->stream[0].data);
	free(c->stream[1].data);
	memset(c, 0, sizeof(*c));
}

/* Decode a whole captured stream; returns a malloc'd buffer. */
char *
capture_decode(const struct capture *c, int which, size_t *outlen)
{
	const struct capture_buf	*b = &c->stream[which];
	struct utf8_decoder		 d;
	char				*out;

	if (b->len > (SIZE_MAX / 3) - 16) {
		errno = ENOMEM;
		return NULL;
	}
	if ((out = malloc(UTF8_DECODE_BOUND(b->len))) == NULL)
		return NULL;
	utf8_decoder_init(&d);
	*outlen = utf8_decode(&d, b->data, b->len, 1, out);
	return out;
}

int
stream_events_init(struct stream_events *se, stream_emit_cb emit, void *arg)
{
	memset(se, 0, sizeof(*se));
	utf8_decoder_init(&se->dec[0]);
	utf8_decoder_init(&se->dec[1]);
	se->emit = emit;
	se->arg = arg;
	if ((se->line = evbuffer_new()) == NULL)
		return -1;
	return 0;
}

void
stream_events_free(struct stream_events *se)
{
	if (se->line != NULL)
		evbuffer_free(se->line);
	se->line = NULL;
}

static const char *
stream_name(int which)
{
	return which == EXEC_STDERR ? "stderr" : "stdout";
}

/*
 * Decode what is gathered and hand its event line to emit, unless it
 * decodes to "" (a character still incomplete, §3.6 rule 2).
 */
static int
stream_events_emit(struct stream_events *se, int which, int final)
{
	/* One event at a time: apid has one thread. */
	static char	 text[UTF8_DECODE_BOUND(STREAM_EVENT_MAX)];
	size_t		 n;

	n = utf8_decode(&se->dec[which], se->buf, se->len, final, text);
	se->len = 0;
	if (n == 0)
		return 0;
	if (jsonout_stream_event(se->line, stream_name(which), text, n) == -1)
		return -1;
	return se->emit(se->arg, se->line);
}

/*
 * Payload of one frame, in pieces; "end" marks its last piece.  A frame
 * longer than STREAM_EVENT_MAX gives several events: the bound on what
 * apid holds for a client matters more than the one-event-per-frame rule
 * for frames Docker never makes that large.
 */
int
stream_events_add(struct stream_events *se, int which, const void *data,
    size_t len, int end)
{
	const char	*p = data;
	size_t		 take;

	/* A frame cut short (EOF mid-frame cannot be followed by more). */
	if (se->len > 0 && se->which != which &&
	    stream_events_emit(se, se->which, 0) == -1)
		return -1;
	se->which = which;
	while (len > 0) {
		take = STREAM_EVENT_MAX - se->len;
		if (take > len)
			take = len;
		memcpy(se->buf + se->len, p, take);
		se->len += take;
		p += take;
		len -= take;
		if (se->len == STREAM_EVENT_MAX &&
		    stream_events_emit(se, which, 0) == -1)
			return -1;
	}
	if (end && se->len > 0)
		return stream_events_emit(se, which, 0);
	return 0;
}

/*
 * The command ended: what one stream's decoder still holds.  Called for
 * stdout, then stderr (§3.6 rule 3).
 */
int
stream_events_flush(struct stream_events *se, int which)
{
	/* The bytes of a frame cut short by EOF go out first. */
	if (se->len > 0 && stream_events_emit(se, se->which, 0) == -1)
		return -1;
	return stream_events_emit(se, which, 1);
}

int
stream_events_exit(struct stream_events *se, int64_t exit_code,
    int timed_out, int64_t duration_ms)
{
	if (jsonout_stream_exit(se->line, exit_code, timed_out,
	    duration_ms) == -1)
		return -1;
	return se->emit(se->arg, se->line);
}
