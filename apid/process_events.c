/*
 * A PROCESS_OUTPUT pipe's events (process_msg.h) as the NDJSON lines of
 * .../output (docs/rest-api.md "Processes"): one line per event, each
 * handed to emit as it is made.  Pure, for the fuzzer: the route
 * (route_process_output.c) feeds it what the pipe brings.
 *
 * Each data event is decoded on its own: managerd never splits a
 * character between two events, so a decoder carried over would only
 * hold back bytes that are not UTF-8 anyway (they become U+FFFD here).
 */
#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "apid.h"
#include "format.h"
#include "log.h"
#include "websocket.h"

#define B64_LEN(n)	(4 * (((n) + 2) / 3) + 1)

/* One loop, one event at a time: the conversions share these. */
static char	 decoded[UTF8_DECODE_BOUND(PEV_DATA_MAX)];
static char	 b64[B64_LEN(PEV_DATA_MAX)];

int
process_events_init(struct process_events *pe, int base64,
    stream_emit_cb emit, void *arg)
{
	pev_parser_init(&pe->pev);
	pe->base64 = base64;
	pe->emit = emit;
	pe->arg = arg;
	if ((pe->line = evbuffer_new()) == NULL)
		return -1;
	return 0;
}

void
process_events_free(struct process_events *pe)
{
	if (pe->line != NULL)
		evbuffer_free(pe->line);
	pe->line = NULL;
}

static int
data_line(struct process_events *pe, enum pev_type type, uint64_t seq,
    const unsigned char *data, size_t len)
{
	struct utf8_decoder	 d;
	const char		*name = type == PEV_STDOUT ? "stdout" :
				    "stderr";
	size_t			 n;

	if (pe->base64) {
		n = b64_encode(data, len, b64, sizeof(b64));
		return jsonout_process_data(pe->line, seq, name, b64, n);
	}
	utf8_decoder_init(&d);
	n = utf8_decode(&d, data, len, 1, decoded);
	return jsonout_process_data(pe->line, seq, name, decoded, n);
}

static int
exit_line(struct process_events *pe, uint64_t seq, const struct pev_exit *x)
{
	char	 ts[FORMAT_TIMESTAMP_LEN];

	if (x->ended_at_ms != 0)
		format_timestamp((double)x->ended_at_ms / 1000.0, ts,
		    sizeof(ts));
	return jsonout_process_exit(pe->line,
	    process_status_name(x->status), x->has_exit_code, x->exit_code,
	    1, x->ended_at_ms != 0 ? ts : NULL, seq);
}

static int
process_event(void *arg, enum pev_type type, uint64_t value,
    const unsigned char *data, size_t len, const struct pev_exit *x)
{
	struct process_events	*pe = arg;
	int			 rc;

	switch (type) {
	case PEV_STDOUT:
	case PEV_STDERR:
		rc = data_line(pe, type, value, data, len);
		break;
	case PEV_GAP:
		rc = jsonout_process_gap(pe->line, value);
		break;
	default:
		rc = exit_line(pe, value, x);
		break;
	}
	if (rc == -1) {
		log_warnx("process output: out of memory for a line");
		return -1;
	}
	return pe->emit(pe->arg, pe->line);
}

/* -1: the stream is malformed (or a line could not be made). */
int
process_events_feed(struct process_events *pe, const unsigned char *buf,
    size_t n)
{
	return pev_parser_feed(&pe->pev, buf, n, process_event, pe);
}

/* The pipe ended: 1 if between two events, as a clean end must be. */
int
process_events_clean(const struct process_events *pe)
{
	return pev_parser_clean(&pe->pev);
}

/* 1 once the exit event came: the process has ended. */
int
process_events_ended(const struct process_events *pe)
{
	return pe->pev.ended;
}
