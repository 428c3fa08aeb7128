/*
 * JSON text written by hand where json-c's output would differ from what
 * the reference sends (API.md §1.1): exec stream lines in Python
 * json.dumps() default style (", " and ": ", every non-ASCII character
 * as \uXXXX, surrogate pairs above U+FFFF), and the exec result in the
 * compact style with raw UTF-8, written straight into an evbuffer so that
 * megabytes of output are not copied into json-c objects first.  A
 * process's output lines (and an attachment's exit frame) are in the
 * stream's style.
 */
#include <sys/queue.h>

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <event2/buffer.h>

#include "apid.h"

static int
needs_escape(unsigned char c, int ensure_ascii)
{
	if (c == '"' || c == '\\' || c < 0x20)
		return 1;
	return ensure_ascii && c >= 0x7f;
}

int
jsonout_string(struct evbuffer *b, const char *s, size_t len,
    int ensure_ascii)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 i = 0, start, k;
	uint32_t		 cp;
	char			 esc[16];
	int			 rc = 0;

	rc |= evbuffer_add(b, "\"", 1);
	while (i < len) {
		start = i;
		while (i < len && !needs_escape(p[i], ensure_ascii))
			i++;
		if (i > start)
			rc |= evbuffer_add(b, p + start, i - start);
		if (i == len)
			break;
		switch (p[i]) {
		case '"':
			rc |= evbuffer_add(b, "\\\"", 2);
			break;
		case '\\':
			rc |= evbuffer_add(b, "\\\\", 2);
			break;
		case '\n':
			rc |= evbuffer_add(b, "\\n", 2);
			break;
		case '\r':
			rc |= evbuffer_add(b, "\\r", 2);
			break;
		case '\t':
			rc |= evbuffer_add(b, "\\t", 2);
			break;
		case '\b':
			rc |= evbuffer_add(b, "\\b", 2);
			break;
		case '\f':
			rc |= evbuffer_add(b, "\\f", 2);
			break;
		default:
			/*
			 * The text is utf8_decode()'s output; a malformed
			 * byte, which cannot come from there, is U+FFFD.
			 */
			if ((k = utf8_char(p + i, len - i, &cp)) == 0) {
				cp = 0xfffd;
				k = 1;
			}
			if (cp >= 0x10000) {
				cp -= 0x10000;
				snprintf(esc, sizeof(esc), "\\u%04x\\u%04x",
				    0xd800 | (cp >> 10), 0xdc00 | (cp & 0x3ff));
			} else
				snprintf(esc, sizeof(esc), "\\u%04x", cp);
			rc |= evbuffer_add(b, esc, strlen(esc));
			i += k;
			continue;
		}
		i++;
	}
	rc |= evbuffer_add(b, "\"", 1);
	return rc == 0 ? 0 : -1;
}

int
jsonout_stream_event(struct evbuffer *b, const char *type, const char *data,
    size_t len)
{
	int	 rc;

	rc = evbuffer_add_printf(b, "{\"type\": \"%s\", \"data\": ", type) < 0;
	rc |= jsonout_string(b, data, len, 1);
	rc |= evbuffer_add(b, "}\n", 2);
	return rc == 0 ? 0 : -1;
}

int
jsonout_stream_exit(struct evbuffer *b, int64_t exit_code, int timed_out,
    int64_t duration_ms)
{
	if (evbuffer_add_printf(b, "{\"type\": \"exit\", \"exit_code\": %"
	    PRId64 ", \"timed_out\": %s, \"duration_ms\": %" PRId64 "}\n",
	    exit_code, timed_out ? "true" : "false", duration_ms) < 0)
		return -1;
	return 0;
}

int
jsonout_exec_result(struct evbuffer *b, const char *out, size_t outlen,
    const char *err, size_t errlen, int64_t exit_code, int timed_out,
    int truncated, int64_t duration_ms)
{
	int	 rc;

	rc = evbuffer_add(b, "{\"stdout\":", 10);
	rc |= jsonout_string(b, out, outlen, 0);
	rc |= evbuffer_add(b, ",\"stderr\":", 10);
	rc |= jsonout_string(b, err, errlen, 0);
	rc |= evbuffer_add_printf(b, ",\"exit_code\":%" PRId64
	    ",\"timed_out\":%s,\"truncated\":%s,\"duration_ms\":%" PRId64 "}",
	    exit_code, timed_out ? "true" : "false",
	    truncated ? "true" : "false", duration_ms) < 0;
	return rc == 0 ? 0 : -1;
}

/*
 * A process's output events (docs/rest-api.md "Processes"), in the
 * exec stream's style: {"seq": N, "type": "stdout", "data": ...}.
 */
int
jsonout_process_data(struct evbuffer *b, uint64_t seq, const char *type,
    const char *data, size_t len)
{
	int	 rc;

	rc = evbuffer_add_printf(b, "{\"seq\": %" PRIu64 ", \"type\": \"%s\", "
	    "\"data\": ", seq, type) < 0;
	rc |= jsonout_string(b, data, len, 1);
	rc |= evbuffer_add(b, "}\n", 2);
	return rc == 0 ? 0 : -1;
}

int
jsonout_process_gap(struct evbuffer *b, uint64_t dropped)
{
	if (evbuffer_add_printf(b, "{\"type\": \"gap\", \"dropped_bytes\": %"
	    PRIu64 "}\n", dropped) < 0)
		return -1;
	return 0;
}

/*
 * The exit line; ended_at (a time, or NULL for null) and seq only on
 * .../output's, not on an attachment's text frame (no newline either).
 */
int
jsonout_process_exit(struct evbuffer *b, const char *status, int has_code,
    int64_t code, int full, const char *ended_at, uint64_t seq)
{
	int	 rc;

	rc = evbuffer_add_printf(b, "{\"type\": \"exit\", \"status\": \"%s\", "
	    "\"exit_code\": ", status) < 0;
	if (has_code)
		rc |= evbuffer_add_printf(b, "%" PRId64, code) < 0;
	else
		rc |= evbuffer_add(b, "null", 4);
	if (!full)
		return rc == 0 && evbuffer_add(b, "}", 1) == 0 ? 0 : -1;
	rc |= evbuffer_add(b, ", \"ended_at\": ", 14);
	if (ended_at != NULL)
		rc |= evbuffer_add_printf(b, "\"%s\"", ended_at) < 0;
	else
		rc |= evbuffer_add(b, "null", 4);
	rc |= evbuffer_add_printf(b, ", \"seq\": %" PRIu64 "}\n", seq) < 0;
	return rc == 0 ? 0 : -1;
}
