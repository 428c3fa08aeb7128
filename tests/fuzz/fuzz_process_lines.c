/*
 * The events of a process's output as the CLI and agent-sandbox-mcp read
 * them (rest_event_parse and rest_event_order in client/rest_output.c):
 * NDJSON lines a server sent, so any bytes.  The first byte's low bit
 * asks for base64, as logs and the MCP tool do, and the other seven are
 * the after the reading starts from; the rest is cut into lines, each
 * parsed by json-c, checked alone and then against those before it.
 *
 * A line is taken (0), skipped as an unknown type (1) or refused with a
 * reason (-1).  What is taken is what the callers rely on: data that is
 * the line's text, or with base64 its exact bytes (encoded again, they
 * decode to the same); a gap's count and a seq that fit int64; an exit
 * status the API has and an ended_at of plain characters, both bounded.
 * In its place, a data event that is kept has bytes and a seq past the
 * last byte accounted, which becomes its seq; with base64 what is kept
 * is the end of its bytes and starts right after that last byte; a gap
 * moves it by its count, an exit leaves it; a refusal leaves it too.
 */
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "harness.h"
#include "process_msg.h"
#include "rest.h"
#include "websocket.h"

static int
known_status(const char *s)
{
	int	 i;

	for (i = PROCESS_RUNNING; i <= PROCESS_STATUS_MAX; i++)
		if (strcmp(s, process_status_name(i)) == 0)
			return 1;
	return 0;
}

/* The bytes, encoded again and decoded, are the same bytes. */
static void
check_base64(const struct rest_event *ev, json_object *data)
{
	char		*b64;
	unsigned char	*back;
	size_t		 n = (ev->len + 2) / 3 * 4 + 1;

	CHECK(ev->len <= (size_t)json_object_get_string_len(data) / 4 * 3);
	b64 = malloc(n);
	back = malloc(ev->len + 1);
	CHECK(b64 != NULL && back != NULL);
	CHECK(b64_encode(ev->data, ev->len, b64, n) == n - 1);
	CHECK(b64_decode(b64, n - 1, back, ev->len + 1) == (long)ev->len);
	CHECK(memcmp(back, ev->data, ev->len) == 0);
	free(b64);
	free(back);
}

static void
check_data(const struct rest_event *ev, int base64)
{
	json_object	*data;

	CHECK(json_object_object_get_ex(ev->obj, "data", &data));
	CHECK(ev->seq <= INT64_MAX);
	if (base64) {
		check_base64(ev, data);
		return;
	}
	CHECK(ev->len == (size_t)json_object_get_string_len(data));
	CHECK(memcmp(ev->data, json_object_get_string(data), ev->len) == 0);
}

static void
check_event(const struct rest_event *ev, int base64)
{
	switch (ev->type) {
	case REST_EVENT_STDOUT:
	case REST_EVENT_STDERR:
		check_data(ev, base64);
		break;
	case REST_EVENT_GAP:
		CHECK(ev->dropped <= INT64_MAX);
		break;
	case REST_EVENT_EXIT:
		CHECK(strlen(ev->status) < sizeof(ev->status));
		CHECK(known_status(ev->status));
		CHECK(strlen(ev->ended_at) < sizeof(ev->ended_at));
		CHECK(strspn(ev->ended_at, "0123456789-+:.TZ") ==
		    strlen(ev->ended_at));
		CHECK(ev->seq <= INT64_MAX);
		break;
	default:
		CHECK(!"an event of no known type was taken");
	}
}

/* The event in its place, after last: what rest_event_order kept. */
static void
check_order(struct rest_event *ev, int base64, uint64_t *last)
{
	const unsigned char	*data = ev->data;
	size_t			 len = ev->len;
	uint64_t		 before = *last;
	char			 why[160];
	volatile unsigned char	 sum = 0;
	size_t			 i;

	why[0] = '\0';
	if (rest_event_order(ev, base64, last, why, sizeof(why)) == -1) {
		CHECK(why[0] != '\0' && strlen(why) < sizeof(why));
		CHECK(*last == before);
		return;
	}
	switch (ev->type) {
	case REST_EVENT_STDOUT:
	case REST_EVENT_STDERR:
		CHECK(ev->len > 0 && ev->seq > before && *last == ev->seq);
		CHECK(ev->data >= data && ev->data + ev->len == data + len);
		if (base64)
			CHECK(ev->seq - ev->len == before);
		else
			CHECK(ev->data == data);
		/* Each byte is there to be read. */
		for (i = 0; i < ev->len; i++)
			sum += ev->data[i];
		(void)sum;
		break;
	case REST_EVENT_GAP:
		CHECK(*last - before == ev->dropped);
		break;
	case REST_EVENT_EXIT:
		CHECK(*last == before);
		CHECK(ev->seq == 0 || ev->seq >= before);
		break;
	}
}

static void
one_line(const char *p, size_t n, int base64, uint64_t *last,
    unsigned char **buf, size_t *cap)
{
	struct rest_event	 ev;
	json_tokener		*tok;
	json_object		*o;
	char			 why[160];
	int			 r;

	if ((tok = json_tokener_new()) == NULL)
		return;
	o = json_tokener_parse_ex(tok, p, (int)n);
	json_tokener_free(tok);
	if (o == NULL)
		return;
	why[0] = '\0';
	r = rest_event_parse(o, base64, &ev, buf, cap, why, sizeof(why));
	CHECK(r >= -1 && r <= 1);
	if (r == -1)
		CHECK(why[0] != '\0' && strlen(why) < sizeof(why));
	if (r == 0) {
		check_event(&ev, base64);
		check_order(&ev, base64, last);
	}
	json_object_put(o);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	const char	*p, *nl, *end;
	unsigned char	*buf = NULL;
	size_t		 cap = 0;
	uint64_t	 last;
	int		 base64;

	if (len == 0 || len > 1024 * 1024)
		return 0;
	base64 = data[0] & 1;
	last = data[0] >> 1;
	p = (const char *)data + 1;
	end = (const char *)data + len;
	for (; p < end; p = nl + 1) {
		if ((nl = memchr(p, '\n', end - p)) == NULL)
			nl = end;
		one_line(p, nl - p, base64, &last, &buf, &cap);
	}
	free(buf);
	return 0;
}
