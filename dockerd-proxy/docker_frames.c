/*
 * Docker's multiplexed exec stream, taken apart and put back together:
 * frames come in split however the socket reads fell, and go out whole
 * (or cut at FRAME_MAX_PAYLOAD), so the output never depends on the
 * splits.  The first stdout line, written by our wrapper before the
 * command runs, is the command's PID; it is taken out of the stream.
 * A tty's stream has no frames: its bytes are all stdout, passed on as
 * they come (cut at FRAME_MAX_PAYLOAD), and its line discipline ends the
 * PID line with "\r\n".  No I/O here: the unit tests feed it bytes.
 */
#include <string.h>

#include "proxy.h"

void
frame_parser_init(struct frame_parser *fp, int want_pid)
{
	memset(fp, 0, sizeof(*fp));
	fp->want_pid = want_pid;
	fp->pid = want_pid ? 0 : -1;
}

void
frame_parser_init_tty(struct frame_parser *fp, int want_pid)
{
	frame_parser_init(fp, want_pid);
	fp->raw = 1;
	fp->stream = FRAME_STDOUT;
}

void
frame_header(unsigned char out[FRAME_HEADER_LEN], int stream, uint32_t len)
{
	out[0] = (unsigned char)stream;
	out[1] = out[2] = out[3] = 0;
	out[4] = (unsigned char)(len >> 24);
	out[5] = (unsigned char)(len >> 16);
	out[6] = (unsigned char)(len >> 8);
	out[7] = (unsigned char)len;
}

static void
flush_buf(struct frame_parser *fp, frame_emit_fn emit, void *arg)
{
	if (fp->buf_len == 0)
		return;
	emit(arg, fp->stream, fp->buf, fp->buf_len);
	fp->buf_len = 0;
}

static void
buf_put(struct frame_parser *fp, const unsigned char *data, size_t len,
    frame_emit_fn emit, void *arg)
{
	size_t	 n;

	while (len > 0) {
		n = FRAME_MAX_PAYLOAD - fp->buf_len;
		if (n > len)
			n = len;
		memcpy(fp->buf + fp->buf_len, data, n);
		fp->buf_len += n;
		data += n;
		len -= n;
		if (fp->buf_len == FRAME_MAX_PAYLOAD)
			flush_buf(fp, emit, arg);
	}
}

/* The first line was not a PID after all: it is output like the rest. */
static void
pid_give_up(struct frame_parser *fp, frame_emit_fn emit, void *arg)
{
	fp->want_pid = 0;
	fp->pid = -1;
	buf_put(fp, (const unsigned char *)fp->pid_text,
	    fp->pid_len + fp->pid_cr, emit, arg);
	fp->pid_len = 0;
	fp->pid_cr = 0;
}

static int
pid_parse(const char *text, size_t len, long long *pid)
{
	long long	 v = 0;
	size_t		 i;

	for (i = 0; i < len; i++) {
		v = v * 10 + (text[i] - '0');
		if (v > FRAME_PID_MAX)
			return -1;
	}
	/* 0 and 1 would make the kill hit our own group or init. */
	if (v < 2)
		return -1;
	*pid = v;
	return 0;
}

/* Stdout bytes while the first line is still being read. */
static size_t
pid_scan(struct frame_parser *fp, const unsigned char *data, size_t len,
    frame_emit_fn emit, void *arg)
{
	size_t	 i;

	for (i = 0; i < len; i++) {
		if (data[i] >= '0' && data[i] <= '9' && !fp->pid_cr &&
		    fp->pid_len < FRAME_PID_DIGITS) {
			fp->pid_text[fp->pid_len++] = (char)data[i];
			continue;
		}
		/* Held after the digits, so that a give-up passes it on. */
		if (data[i] == '\r' && fp->raw && !fp->pid_cr &&
		    fp->pid_len > 0) {
			fp->pid_text[fp->pid_len] = '\r';
			fp->pid_cr = 1;
			continue;
		}
		if (data[i] == '\n' && fp->pid_len > 0 &&
		    pid_parse(fp->pid_text, fp->pid_len, &fp->pid) == 0) {
			fp->want_pid = 0;
			fp->pid_len = 0;
			fp->pid_cr = 0;
			return i + 1;
		}
		pid_give_up(fp, emit, arg);
		return i;
	}
	return len;
}

static void
payload(struct frame_parser *fp, const unsigned char *data, size_t len,
    frame_emit_fn emit, void *arg)
{
	size_t	 n;

	if (fp->want_pid && fp->stream == FRAME_STDOUT) {
		n = pid_scan(fp, data, len, emit, arg);
		data += n;
		len -= n;
	}
	buf_put(fp, data, len, emit, arg);
}

static int
header_done(struct frame_parser *fp)
{
	const unsigned char	*h = fp->head;

	if ((h[0] != FRAME_STDOUT && h[0] != FRAME_STDERR) || h[1] != 0 ||
	    h[2] != 0 || h[3] != 0)
		return -1;
	fp->stream = h[0];
	fp->left = (uint32_t)h[4] << 24 | (uint32_t)h[5] << 16 |
	    (uint32_t)h[6] << 8 | h[7];
	fp->head_len = 0;
	fp->in_frame = 1;
	return 0;
}

int
frame_parser_feed(struct frame_parser *fp, const void *data, size_t len,
    frame_emit_fn emit, void *arg)
{
	const unsigned char	*d = data;
	size_t			 n;

	if (fp->error)
		return -1;
	if (fp->raw) {
		/* No frame to wait for: what came goes out now. */
		payload(fp, d, len, emit, arg);
		flush_buf(fp, emit, arg);
		return 0;
	}
	while (len > 0) {
		if (!fp->in_frame) {
			n = FRAME_HEADER_LEN - fp->head_len;
			if (n > len)
				n = len;
			memcpy(fp->head + fp->head_len, d, n);
			fp->head_len += n;
			d += n;
			len -= n;
			if (fp->head_len < FRAME_HEADER_LEN)
				break;
			if (header_done(fp) == -1) {
				fp->error = 1;
				return -1;
			}
		} else {
			n = len < fp->left ? len : fp->left;
			payload(fp, d, n, emit, arg);
			d += n;
			len -= n;
			fp->left -= (uint32_t)n;
		}
		if (fp->in_frame && fp->left == 0) {
			flush_buf(fp, emit, arg);
			fp->in_frame = 0;
		}
	}
	return 0;
}

int
frame_parser_finish(struct frame_parser *fp, frame_emit_fn emit, void *arg)
{
	int	 truncated = fp->error || fp->in_frame || fp->head_len > 0;

	/* Digits without their newline: output, not a PID; they came first. */
	if (fp->want_pid && fp->pid_len > 0)
		emit(arg, FRAME_STDOUT, (const unsigned char *)fp->pid_text,
		    fp->pid_len + fp->pid_cr);
	fp->want_pid = 0;
	fp->pid_len = 0;
	fp->pid_cr = 0;
	if (fp->pid == 0)
		fp->pid = -1;
	flush_buf(fp, emit, arg);
	fp->in_frame = 0;
	fp->head_len = 0;
	return truncated ? -1 : 0;
}
