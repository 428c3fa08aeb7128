/*
 * dockerd-proxy's exec stream parser (dockerd-proxy/docker_frames.c):
 * Docker's frames in, whole frames and the wrapper's PID out.  Input: a
 * byte saying whether a PID line is expected (bit 0), whether the stream
 * is a tty's (bit 1) and how large the pieces may be (the rest), a byte
 * seeding the splits, then the stream.
 *
 * The stream is fed whole and in pieces: what comes out (frames, PID,
 * error, truncation) must not depend on the pieces.  Every frame out must
 * be one the proxy may write to apid's pipe, and each stream's bytes must
 * be exactly the input's (read here by a naive parser), less the PID
 * line when one was taken.  A tty's stream has no frames: its bytes, all
 * stdout, are the input's less the PID line (which may end in "\r\n"),
 * never an error, however it is cut (only the cuts between frames out
 * may differ).
 */
#include <stdlib.h>
#include <string.h>

#include "proxy.h"
#include "harness.h"

struct result {
	struct buf	 out;		/* frames as written to the pipe */
	struct buf	 stream[3];	/* payload by stream number */
	int		 feed_rc;
	int		 finish_rc;
	long long	 pid;
};

static void
emit(void *arg, int stream, const unsigned char *data, size_t len)
{
	struct result	*r = arg;
	unsigned char	 h[FRAME_HEADER_LEN];

	CHECK(stream == FRAME_STDOUT || stream == FRAME_STDERR);
	CHECK(len > 0 && len <= FRAME_MAX_PAYLOAD);
	frame_header(h, stream, (uint32_t)len);
	buf_add(&r->out, h, sizeof(h));
	buf_add(&r->out, data, len);
	buf_add(&r->stream[stream], data, len);
}

static void
run(struct frame_parser *fp, int want_pid, int tty, const uint8_t *data,
    size_t len, struct splitter *sp, struct result *r)
{
	size_t	 n;

	memset(r, 0, sizeof(*r));
	if (tty)
		frame_parser_init_tty(fp, want_pid);
	else
		frame_parser_init(fp, want_pid);
	while (len > 0) {
		n = sp != NULL ? splitter_next(sp, len) : len;
		if ((r->feed_rc = frame_parser_feed(fp, data, n, emit, r)) ==
		    -1)
			break;
		data += n;
		len -= n;
	}
	r->finish_rc = frame_parser_finish(fp, emit, r);
	r->pid = fp->pid;
}

/* Each stream's payload up to the first bad header or the end. */
static void
naive(const uint8_t *d, size_t len, struct buf stream[3])
{
	uint32_t	 n;

	while (len >= FRAME_HEADER_LEN && (d[0] == FRAME_STDOUT ||
	    d[0] == FRAME_STDERR) && d[1] == 0 && d[2] == 0 && d[3] == 0) {
		n = (uint32_t)d[4] << 24 | (uint32_t)d[5] << 16 |
		    (uint32_t)d[6] << 8 | d[7];
		if (n > len - FRAME_HEADER_LEN)
			n = (uint32_t)(len - FRAME_HEADER_LEN);
		buf_add(&stream[d[0]], d + FRAME_HEADER_LEN, n);
		d += FRAME_HEADER_LEN + n;
		len -= FRAME_HEADER_LEN + n;
	}
}

/*
 * The PID line's length if stdout starts with pid's digits and '\n' (for
 * a tty, maybe "\r\n").
 */
static size_t
pid_line(const struct buf *out, long long pid, int tty)
{
	long long	 v = 0;
	size_t		 i, digits;

	for (i = 0; i < out->len && out->p[i] >= '0' && out->p[i] <= '9'; i++)
		v = v * 10 + (out->p[i] - '0');
	digits = i;
	if (tty && i < out->len && out->p[i] == '\r')
		i++;
	CHECK(digits > 0 && digits <= FRAME_PID_DIGITS && i < out->len &&
	    out->p[i] == '\n' && v == pid);
	return i + 1;
}

static int
same(const struct buf *a, const char *p, size_t len)
{
	return a->len == len && (len == 0 || memcmp(a->p, p, len) == 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	static struct frame_parser	 fp;	/* 32 KiB: not on the stack */
	struct result			 whole, split;
	struct buf			 in[3];
	struct splitter			 sp;
	size_t				 skip = 0;
	int				 want_pid, tty, i;

	if (len < 2)
		return 0;
	want_pid = data[0] & 1;
	tty = (data[0] & 2) != 0;
	splitter_init(&sp, data[1], 1 + (data[0] >> 2));
	data += 2;
	len -= 2;
	run(&fp, want_pid, tty, data, len, NULL, &whole);
	run(&fp, want_pid, tty, data, len, &sp, &split);
	if (tty)
		CHECK(buf_equal(&whole.stream[FRAME_STDOUT],
		    &split.stream[FRAME_STDOUT]) &&
		    whole.stream[FRAME_STDERR].len == 0 &&
		    split.stream[FRAME_STDERR].len == 0 &&
		    whole.feed_rc == 0 && whole.finish_rc == 0);
	else
		CHECK(buf_equal(&whole.out, &split.out));
	CHECK(whole.feed_rc == split.feed_rc);
	CHECK(whole.finish_rc == split.finish_rc);
	CHECK(whole.pid == split.pid);
	/* A PID is one that kill(2) can aim at, never 0 or 1. */
	CHECK(whole.pid == -1 || (want_pid && whole.pid >= 2 &&
	    whole.pid <= FRAME_PID_MAX));

	memset(in, 0, sizeof(in));
	for (i = 0; i < 3; i++)
		buf_add(&in[i], "", 0);	/* never a NULL base */
	if (tty)
		buf_add(&in[FRAME_STDOUT], data, len);
	else
		naive(data, len, in);
	if (whole.pid != -1)
		skip = pid_line(&in[FRAME_STDOUT], whole.pid, tty);
	CHECK(same(&whole.stream[FRAME_STDOUT], in[FRAME_STDOUT].p + skip,
	    in[FRAME_STDOUT].len - skip));
	CHECK(same(&whole.stream[FRAME_STDERR], in[FRAME_STDERR].p,
	    in[FRAME_STDERR].len));
	for (i = 0; i < 3; i++) {
		buf_free(&in[i]);
		buf_free(&whole.stream[i]);
		buf_free(&split.stream[i]);
	}
	buf_free(&whole.out);
	buf_free(&split.out);
	return 0;
}
